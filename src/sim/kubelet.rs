//! The kubelet stand-in: pulls (pretends to), creates and starts containers
//! as local processes, reports their state in the pod status through the
//! store (so watches see every transition), and records Events.
//!
//! Image rules (documented in docs/simulator.md): a name containing `doesnotexist`
//! cannot be pulled (ErrImagePull, then ImagePullBackOff, retried with
//! back-off, never runs); a name that is not a valid reference (upper-case
//! letters, spaces, `@@`) is `InvalidImageName`. A command that is not on
//! PATH ends as Terminated/StartError with exit code 128.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::net::TcpStream;

use super::lock;
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::images::{Image, command_line};
use super::pod_json::{
    PodEvent, container_state, find_container, has_pending_init_containers, identity, pod_event,
    pod_key, pod_user,
};
use super::reference::{full_reference, is_valid_image_reference};
use super::runtime::ContainerProcess;
use super::sandbox::{ContainerSpec, Isolation, Launch, PidChoice, Runtime};
use super::status::ApiError;
use super::store::{Key, Kind, Store};
use super::{node_root, scenario};
use crate::model::ContainerKind;
use crate::term::Size;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ContainerRef {
    pod: Key,
    container: String,
}

pub struct KubeletConfig {
    pub pull_delay: Duration,
    /// First image-pull back-off; doubles up to five minutes, as the kubelet's.
    pub pull_backoff: Duration,
    /// The podbay binary that serves as container shim and workload.
    pub shim: PathBuf,
    /// Whether to try Linux namespaces (else plain processes).
    pub namespaces: bool,
    /// The API server's address, which containers are told.
    pub api: std::net::SocketAddr,
}

pub struct Kubelet {
    store: Arc<Store>,
    config: KubeletConfig,
    processes: Mutex<HashMap<ContainerRef, Arc<ContainerProcess>>>,
    /// Per container, held while its process is started.
    starting: Mutex<HashMap<ContainerRef, Arc<Mutex<()>>>>,
    /// Event name by (pod, fieldPath, reason, message), for the count/lastTimestamp
    /// aggregation the kubelet's event correlator does.
    events: Mutex<HashMap<(Key, String, String, String), Key>>,
    sandbox: PathBuf,
    runtime: Runtime,
    /// Pods whose processes were just killed, for exec'd processes to follow.
    stopped: tokio::sync::broadcast::Sender<Key>,
    /// UIDs of the pods created through the API (not the scenario's).
    created: Mutex<std::collections::HashSet<String>>,
}

impl Kubelet {
    /// A kubelet with a new private scratch directory for its pods.
    pub fn new(store: Arc<Store>, config: KubeletConfig) -> std::io::Result<Arc<Self>> {
        let sandbox = private_scratch_dir()?;
        let isolation = Isolation::detect(&config.shim, config.namespaces);
        let runtime = Runtime::new(isolation, config.shim.clone(), sandbox.clone(), config.api);
        Ok(Arc::new(Kubelet {
            store,
            config,
            processes: Mutex::new(HashMap::new()),
            starting: Mutex::new(HashMap::new()),
            events: Mutex::new(HashMap::new()),
            sandbox,
            runtime,
            stopped: tokio::sync::broadcast::channel(64).0,
            created: Mutex::new(std::collections::HashSet::new()),
        }))
    }

    /// Where the pods' files live (each pod in `NAMESPACE/NAME` below it).
    pub fn sandbox(&self) -> &std::path::Path {
        &self.sandbox
    }

    /// The running process of a container, started on first use for regular
    /// containers of running pods (so 100 000 simulated pods cost no processes
    /// until someone looks at one).
    pub fn process(&self, pod: &Value, container: &str) -> Result<Arc<ContainerProcess>, ApiError> {
        let key = pod_key(pod);
        let cref = ContainerRef {
            pod: key.clone(),
            container: container.to_string(),
        };
        if let Some(p) = lock(&self.processes).get(&cref) {
            if p.exit().is_none() {
                return Ok(p.clone());
            }
            // A container that is never restarted stays ended, even before
            // its status says so (the demo's pods restart on demand).
            let restarts = pod.pointer("/spec/restartPolicy").and_then(Value::as_str);
            let succeeded = p.exit().is_some_and(|e| e.code == 0);
            if restarts == Some("Never") || (restarts == Some("OnFailure") && succeeded) {
                return Err(ApiError::bad_request(format!(
                    "container {container} in pod {} has terminated",
                    key.name
                )));
            }
        }
        let (kind, spec) = find_container(pod, container).ok_or_else(|| {
            ApiError::bad_request(format!(
                "container {container} is not valid for pod {}",
                key.name
            ))
        })?;
        // A pod being deleted has had its processes killed: a kubelet
        // starts nothing in it again, whatever its last status says.
        let deleting = pod
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|t| !t.is_null());
        if deleting {
            return Err(ApiError::bad_request(format!(
                "container {container} in pod {} is terminated: the pod is being deleted",
                key.name
            )));
        }
        let state = container_state(pod, kind, container);
        let running = state.as_ref().is_some_and(|s| s.get("running").is_some());
        if !running {
            return Err(not_running_error(&key.name, container, state.as_ref()));
        }
        if kind == ContainerKind::Ephemeral {
            // Ephemeral processes are started by their lifecycle task only.
            return Err(ApiError::bad_request(format!(
                "container {container} in pod {} is not running",
                key.name
            )));
        }
        // One start at a time: an attach and the pod's own start racing
        // here would each start a process, and the attach's would be lost.
        let gate = lock(&self.starting)
            .entry(cref.clone())
            .or_default()
            .clone();
        let _starting = lock(&gate);
        if let Some(p) = lock(&self.processes).get(&cref)
            && p.exit().is_none()
        {
            return Ok(p.clone());
        }
        let process = self.spawn(pod, container, &spec, false).map_err(|e| {
            let program = command_line(
                &spec,
                &Image::of(spec["image"].as_str().unwrap_or_default()),
            )
            .first()
            .cloned()
            .unwrap_or_default();
            ApiError::internal(start_error(&program, &e))
        })?;
        lock(&self.processes).insert(cref, process.clone());
        Ok(process)
    }

    /// The process whose output a log request reads: the current one, or the
    /// last one of a container that has exited.
    pub fn log_source(
        &self,
        pod: &Value,
        container: &str,
    ) -> Result<Arc<ContainerProcess>, ApiError> {
        let cref = ContainerRef {
            pod: pod_key(pod),
            container: container.to_string(),
        };
        if let Some(p) = lock(&self.processes).get(&cref) {
            return Ok(p.clone());
        }
        self.process(pod, container)
    }

    /// The process of a container's latest run the simulator ran: the one
    /// that ended, or the run that replaced it (a restart the pod's status
    /// does not show yet), whose log the kubelet serves then. None starts.
    pub fn latest_process(&self, pod: &Value, container: &str) -> Option<Arc<ContainerProcess>> {
        let cref = ContainerRef {
            pod: pod_key(pod),
            container: container.to_string(),
        };
        lock(&self.processes).get(&cref).cloned()
    }

    /// A pod's directory: its volumes, its containers' roots, and the
    /// working directory of its processes where there are no namespaces.
    pub fn sandbox_dir(&self, key: &Key) -> PathBuf {
        self.runtime.pod_dir(key)
    }

    /// How isolated containers are on this host.
    pub fn isolation(&self) -> &Isolation {
        self.runtime.isolation()
    }

    /// How to run `command` in a running container (`kubectl exec`): the
    /// outer error refuses the request, the inner one is the runtime's
    /// (the program does not exist in the image).
    pub fn exec_launch(
        &self,
        pod: &Value,
        container: &str,
        command: Vec<String>,
    ) -> Result<std::io::Result<Launch>, ApiError> {
        let process = self.process(pod, container)?;
        let (_, spec) = find_container(pod, container)
            .ok_or_else(|| ApiError::bad_request(format!("container {container} is not valid")))?;
        let key = pod_key(pod);
        let image = Image::of(
            spec.get("image")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
        let mut c = container_spec(&key, container, &spec, &image, command, PidChoice::Own);
        c.pod_user = pod_user(pod);
        place_on_node(&mut c, pod);
        c.identity = identity(pod, &spec);
        Ok(self.runtime.exec(&c, process.namespaces_pid()))
    }

    /// Starts the processes of a running pod's regular containers now.
    pub fn start_pod(&self, pod: &Value) {
        for c in pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = c.get("name").and_then(Value::as_str) {
                let _ = self.process(pod, name);
            }
        }
    }

    /// A connection to `localhost:port` in a running pod's network, as the
    /// CRI's PortForward makes one; the pod's containers start first (here
    /// they start on first use). The error is the kubelet's sentence.
    pub async fn port_forward(
        self: &Arc<Self>,
        pod: &Value,
        port: u16,
    ) -> Result<TcpStream, String> {
        let key = pod_key(pod);
        let sandbox = sandbox_id(pod);
        // The kubelet's words around containerd's.
        let kubelet = |e: &str| format!("error forwarding port {port} to pod {sandbox}, uid : {e}");
        let failed = |e: &str| {
            kubelet(&format!(
                "failed to execute portforward in network namespace \"/var/run/netns/cni-{}\": {e}",
                &sandbox[..32]
            ))
        };
        // A pod being deleted has had its processes killed here at once
        // (a node's would be stopping): its sandbox is gone.
        let current = self.current_pod(&key).ok();
        let gone = current.as_ref().is_none_or(|p| {
            !p.pointer("/metadata/deletionTimestamp")
                .is_none_or(Value::is_null)
        });
        if gone {
            return Err(kubelet(&format!(
                "failed to find sandbox {sandbox:?} in store: not found"
            )));
        }
        if pod.pointer("/status/phase").and_then(Value::as_str) != Some("Running") {
            return Err(kubelet(&format!(
                "rpc error: code = Unknown desc = pod sandbox {sandbox:?} is not running"
            )));
        }
        self.start_pod(pod);
        let youngest = lock(&self.processes)
            .iter()
            .filter(|(c, _)| c.pod == key)
            .map(|(_, p)| p.started)
            .max();
        let kubelet = self.clone();
        let mut tries = 0;
        loop {
            let (kubelet, key) = (kubelet.clone(), key.clone());
            let connected =
                tokio::task::spawn_blocking(move || kubelet.runtime.connect(&key, port))
                    .await
                    .map_err(|e| failed(&e.to_string()))?;
            match connected {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    stream
                        .set_nonblocking(true)
                        .map_err(|e| failed(&e.to_string()))?;
                    return TcpStream::from_std(stream).map_err(|e| failed(&e.to_string()));
                }
                // A program that has just started may not listen yet.
                Err(e)
                    if e.kind() == std::io::ErrorKind::ConnectionRefused
                        && tries < 40
                        && youngest.is_some_and(|t| {
                            Timestamp::now().duration_since(t) < jiff::SignedDuration::from_secs(2)
                        }) =>
                {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => {
                    return Err(failed(&format!(
                        "failed to connect to localhost:{port} inside namespace \"{sandbox}\", {e}"
                    )));
                }
            }
        }
    }

    /// Kills every container process (the simulator is shutting down).
    pub fn shutdown(&self) {
        for (_, p) in lock(&self.processes).drain() {
            p.kill();
        }
        self.runtime.shutdown();
        let _ = std::fs::remove_dir_all(&self.sandbox);
    }

    /// Tells when pods stop: exec'd processes die with their pod.
    pub fn stopped_pods(&self) -> tokio::sync::broadcast::Receiver<Key> {
        self.stopped.subscribe()
    }

    /// Kills every process of a pod (it was deleted).
    pub fn stop_pod(&self, key: &Key) {
        let _ = self.stopped.send(key.clone());
        let mut processes = lock(&self.processes);
        processes.retain(|cref, p| {
            if &cref.pod == key {
                p.kill();
                false
            } else {
                true
            }
        });
        drop(processes);
        self.runtime.stop_pod(key);
    }

    /// The pod's image pull secrets, read from its namespace.
    pub fn pull_secrets(&self, pod: &Value) -> super::images::PullSecrets {
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        super::images::PullSecrets::of(pod, |name| {
            self.store
                .get(Kind::Secret, &Key::new(namespace, name))
                .map(|e| e.value())
        })
    }

    /// Runs the lifecycle of a newly added ephemeral container in the background.
    pub fn ephemeral_container_added(self: &Arc<Self>, key: Key, container: Value) {
        let kubelet = self.clone();
        tokio::spawn(async move {
            if let Err(e) = kubelet.run_ephemeral(&key, &container).await {
                tracing::debug!(pod = %key.name, "ephemeral container lifecycle ended early: {e}");
            }
        });
    }

    async fn run_ephemeral(&self, key: &Key, spec: &Value) -> Result<(), ApiError> {
        let name = spec
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let image = spec
            .get("image")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let field_path = format!("spec.ephemeralContainers{{{name}}}");
        let pod = self.current_pod(key)?;
        let phase = pod
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let on_a_node = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        if !on_a_node {
            // No kubelet has the pod yet: nobody reports any status for it.
            return Ok(());
        }
        let waiting_reason = if has_pending_init_containers(&pod) {
            "PodInitializing"
        } else {
            "ContainerCreating"
        };
        self.set_state(
            key,
            &name,
            &image,
            json!({"waiting": {"reason": waiting_reason}}),
            None,
        )?;
        if phase == "Succeeded" || phase == "Failed" {
            // The kubelet starts nothing in a finished pod. It does start
            // ephemeral containers before init containers finish.
            return Ok(());
        }

        if !is_valid_image_reference(&image) {
            let message = format!(
                "Failed to apply default image tag {image:?}: couldn't parse image name {image:?}: invalid reference format"
            );
            self.event(key, &field_path, "Warning", "InspectFailed", &message);
            self.failed(key, &field_path, "InvalidImageName");
            self.set_waiting(key, &name, &image, "InvalidImageName", &message)?;
            return Ok(());
        }

        let secrets = self.pull_secrets(&pod);
        if let Some(message) = secrets.missing_event() {
            self.event(
                key,
                "",
                "Warning",
                "FailedToRetrieveImagePullSecret",
                &message,
            );
        }
        let mut backoff = self.config.pull_backoff;
        loop {
            self.event(
                key,
                &field_path,
                "Normal",
                "Pulling",
                &format!("Pulling image {image:?}"),
            );
            tokio::time::sleep(self.config.pull_delay).await;
            let reference = full_reference(&image);
            let message = if image.contains("doesnotexist") {
                format!(
                    "failed to pull and unpack image {reference:?}: failed to resolve reference {reference:?}: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed"
                )
            } else if let Some(message) = secrets.refusal(&image) {
                message
            } else {
                break;
            };
            self.event(
                key,
                &field_path,
                "Warning",
                "Failed",
                &format!("Failed to pull image {image:?}: {message}"),
            );
            self.failed(key, &field_path, "ErrImagePull");
            self.set_waiting(key, &name, &image, "ErrImagePull", &message)?;
            tokio::time::sleep(self.config.pull_delay.min(Duration::from_secs(1))).await;
            let message = format!("Back-off pulling image {image:?}");
            self.event(key, &field_path, "Normal", "BackOff", &message);
            self.failed(key, &field_path, "ImagePullBackOff");
            self.set_waiting(key, &name, &image, "ImagePullBackOff", &message)?;
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(300));
        }

        let pulled = self.config.pull_delay.as_secs_f64();
        self.event(
            key,
            &field_path,
            "Normal",
            "Pulled",
            &format!("Successfully pulled image {image:?} in {pulled:.3}s ({pulled:.3}s including waiting). Image size: 2167176 bytes."),
        );
        let pod = self.current_pod(key)?;
        if let Some(message) = super::start_checks::breaks_run_as_non_root(&pod, spec, &image) {
            // generateContainerConfig fails before anything is created; the
            // kubelet retries on every sync with the same result.
            self.failed(key, &field_path, &message);
            self.set_waiting(key, &name, &image, "CreateContainerConfigError", &message)?;
            return Ok(());
        }
        // A target that is not running stops the container's creation; the
        // kubelet tries again at each sync of the pod until it runs.
        let pod = loop {
            let pod = self.current_pod(key)?;
            let Some((reason, message)) = super::start_checks::target_not_running(&pod, spec)
            else {
                break pod;
            };
            self.event(
                key,
                &field_path,
                "Warning",
                "Failed",
                &format!("Error: {message}"),
            );
            self.set_waiting(key, &name, &image, reason, &message)?;
            tokio::time::sleep(super::start_checks::RESYNC).await;
        };
        let container_id = format!("containerd://{}", super::rbac::random_token());
        self.event(
            key,
            &field_path,
            "Normal",
            "Created",
            &format!("Created container: {name}"),
        );
        let process = match self.spawn(&pod, &name, spec, true) {
            Ok(p) => p,
            Err(e) => {
                let program = command_line(spec, &Image::of(&image))
                    .first()
                    .cloned()
                    .unwrap_or_default();
                let message = start_error(&program, &e);
                self.failed(key, &field_path, &message);
                let now = Timestamp::now().to_string();
                let state = json!({"terminated": {
                    "exitCode": 128, "reason": "StartError", "message": message,
                    "startedAt": "1970-01-01T00:00:00Z", "finishedAt": now, "containerID": container_id,
                }});
                self.set_state(key, &name, &image, state, Some(&container_id))?;
                return Ok(());
            }
        };
        lock(&self.processes).insert(
            ContainerRef {
                pod: key.clone(),
                container: name.clone(),
            },
            process.clone(),
        );
        let started = process.started.to_string();
        self.set_state(
            key,
            &name,
            &image,
            json!({"running": {"startedAt": started}}),
            Some(&container_id),
        )?;
        self.event(
            key,
            &field_path,
            "Normal",
            "Started",
            &format!("Started container {name}"),
        );

        let exit = process.wait().await;
        let state = json!({"terminated": {
            "exitCode": exit.code, "reason": exit.reason(), "startedAt": started,
            "finishedAt": exit.finished.to_string(), "containerID": container_id,
        }});
        self.set_state(key, &name, &image, state, Some(&container_id))?;
        Ok(())
    }

    fn current_pod(&self, key: &Key) -> Result<Value, ApiError> {
        self.store
            .get(Kind::Pod, key)
            .map(|e| e.value())
            .ok_or_else(|| ApiError::not_found("pods", &key.name))
    }

    /// Whether the pod of `uid` was created through the API (its exits are
    /// recorded by its own watcher; the demo's pods are restarted in place).
    pub fn was_created(&self, uid: &str) -> bool {
        lock(&self.created).contains(uid)
    }

    /// Every container process that runs now, with its pod and name.
    pub fn running(&self) -> Vec<(Key, String, Arc<ContainerProcess>)> {
        lock(&self.processes)
            .iter()
            .filter(|(_, p)| p.exit().is_none())
            .map(|(c, p)| (c.pod.clone(), c.container.clone(), p.clone()))
            .collect()
    }

    /// The pod was created through the API: its containers run as a
    /// node's would (no terminal unless they ask for one).
    pub fn note_created(&self, uid: &str) {
        lock(&self.created).insert(uid.to_string());
    }

    fn spawn(
        &self,
        pod: &Value,
        name: &str,
        spec: &Value,
        ephemeral: bool,
    ) -> std::io::Result<Arc<ContainerProcess>> {
        let key = pod_key(pod);
        let image = Image::of(
            spec.get("image")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
        // A hostPID pod's processes join its node's PID namespace, which
        // its pause process makes the one its children are born in.
        let shared = pod.pointer("/spec/shareProcessNamespace") == Some(&json!(true))
            || pod.pointer("/spec/hostPID") == Some(&json!(true));
        let target = spec
            .get("targetContainerName")
            .and_then(Value::as_str)
            .filter(|_| ephemeral);
        let pid = match target {
            _ if shared => PidChoice::Pod,
            // A target that cannot run leaves the debug container its own
            // namespace rather than none.
            Some(target) => self
                .process(pod, target)
                .ok()
                .and_then(|p| p.namespaces_pid())
                .map_or(PidChoice::Own, PidChoice::Target),
            None => PidChoice::Own,
        };
        self.prepare_volumes(&key, pod)?;
        let argv = command_line(spec, &image);
        let mut c = container_spec(&key, name, spec, &image, argv, pid);
        c.pod_user = pod_user(pod);
        place_on_node(&mut c, pod);
        c.identity = identity(pod, spec);
        let launch = self.runtime.container(&c)?;
        let flag = |name: &str| spec.get(name).and_then(Value::as_bool) == Some(true);
        // Debug containers get a terminal only when they ask for one, as
        // on a node, and so do the containers of created pods (a node
        // debug pod's, a copy's: without stdin theirs is /dev/null, so a
        // shell ends at once) and those that ask for stdin; the demo's
        // others here always run on one.
        let created = pod
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .is_some_and(|uid| lock(&self.created).contains(uid));
        if (ephemeral || created || flag("stdin")) && !flag("tty") {
            return ContainerProcess::start_piped(launch, flag("stdin"));
        }
        ContainerProcess::start(launch, Size::DEFAULT)
    }

    /// Writes a node's root directory as it is now (see [`node_root`]).
    fn lay_out_node_root(&self, node: &str) -> std::io::Result<()> {
        let on_node = |e: &super::store::Entry| e.field(Kind::Pod, "spec.nodeName") == Some(node);
        let pods: Vec<Value> = self
            .store
            .list(Kind::Pod, None, None, None, &on_node)
            .0
            .iter()
            .map(|e| e.value())
            .collect();
        // Copied out: the files are written without holding the lock.
        let on_node: std::collections::HashSet<Key> = pods.iter().map(pod_key).collect();
        let processes: HashMap<ContainerRef, Arc<ContainerProcess>> = lock(&self.processes)
            .iter()
            .filter(|(c, _)| on_node.contains(&c.pod))
            .map(|(c, p)| (c.clone(), p.clone()))
            .collect();
        node_root::lay_out(
            &self.runtime.node_root(node),
            node,
            &pods,
            |pod, container| {
                let cref = ContainerRef {
                    pod: pod_key(pod),
                    container: container.to_string(),
                };
                processes.get(&cref).map(|p| p.log_since(0).0)
            },
        )
    }

    /// Creates the pod's volume directories on first use, with what the
    /// demo's volumes hold (see [`scenario::seed_volume`]).
    fn prepare_volumes(&self, key: &Key, pod: &Value) -> std::io::Result<()> {
        let volumes = pod.pointer("/spec/volumes").and_then(Value::as_array);
        let node = pod.pointer("/spec/nodeName").and_then(Value::as_str);
        let host_path = volumes
            .into_iter()
            .flatten()
            .any(|v| v.get("hostPath").is_some());
        if let (true, Some(node)) = (host_path, node) {
            self.lay_out_node_root(node)?;
        }
        for volume in volumes.into_iter().flatten() {
            let Some(name) = volume.get("name").and_then(Value::as_str) else {
                continue;
            };
            if volume.get("hostPath").is_some() {
                continue;
            }
            let dir = self.runtime.volume_dir(key, name);
            if dir.exists() {
                continue;
            }
            std::fs::create_dir_all(&dir)?;
            scenario::seed_volume(&key.name, volume, &dir)?;
        }
        Ok(())
    }

    /// The kubelet's `Failed` warning: "Error: " and what went wrong.
    fn failed(&self, key: &Key, field_path: &str, message: &str) {
        let message = format!("Error: {message}");
        self.event(key, field_path, "Warning", "Failed", &message);
    }

    /// The container waits, for `reason` (`ErrImagePull`…), saying `message`.
    fn set_waiting(
        &self,
        key: &Key,
        name: &str,
        image: &str,
        reason: &str,
        message: &str,
    ) -> Result<(), ApiError> {
        let waiting = json!({"waiting": {"reason": reason, "message": message}});
        self.set_state(key, name, image, waiting, None)
    }

    /// Sets one ephemeral container's status entry (creating it if needed).
    fn set_state(
        &self,
        key: &Key,
        name: &str,
        image: &str,
        state: Value,
        container_id: Option<&str>,
    ) -> Result<(), ApiError> {
        let updated = self.store.update(Kind::Pod, key, None, |mut pod| {
            let statuses = pod["status"]
                .as_object_mut()
                .ok_or_else(|| ApiError::internal("pod has no status"))?
                .entry("ephemeralContainerStatuses")
                .or_insert_with(|| json!([]));
            let list = statuses.as_array_mut().ok_or_else(|| ApiError::internal("bad status list"))?;
            let index = match list.iter().position(|s| s["name"] == name) {
                Some(i) => i,
                None => {
                    list.push(json!({"name": name, "image": image, "imageID": "", "ready": false, "restartCount": 0, "lastState": {}}));
                    list.len() - 1
                }
            };
            let entry = &mut list[index];
            entry["state"] = state;
            if let Some(id) = container_id {
                entry["containerID"] = json!(id);
                entry["imageID"] = json!(format!("{}@sha256:{}", full_reference(image).split(':').next().unwrap_or(image), id.get(13..).unwrap_or_default()));
            }
            Ok::<_, ApiError>(pod)
        });
        match updated {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(ApiError::not_found("pods", &key.name)),
        }
    }

    /// Records an Event about a pod, aggregating repeats into `count`.
    pub fn event(
        &self,
        pod_key: &Key,
        field_path: &str,
        event_type: &str,
        reason: &str,
        message: &str,
    ) {
        let Some(pod) = self.store.get(Kind::Pod, pod_key).map(|e| e.value()) else {
            return;
        };
        let dedup = (
            pod_key.clone(),
            field_path.to_string(),
            reason.to_string(),
            message.to_string(),
        );
        let existing = lock(&self.events).get(&dedup).cloned();
        if let Some(event_key) = existing {
            let bumped = self
                .store
                .update::<()>(Kind::Event, &event_key, None, |mut e| {
                    let count = e["count"].as_u64().unwrap_or(1) + 1;
                    e["count"] = json!(count);
                    e["lastTimestamp"] = json!(Timestamp::now().to_string());
                    Ok(e)
                });
            if bumped.is_ok() {
                return;
            }
        }
        let now = Timestamp::now();
        let name = format!("{}.{:x}", pod_key.name, now.as_nanosecond());
        let event = pod_event(
            &pod,
            &name,
            PodEvent {
                field_path,
                warning: event_type == "Warning",
                reason,
                message,
                count: 1,
                first: now,
                last: now,
            },
        );
        let event_key = Key::new(&pod_key.namespace, &name);
        if self
            .store
            .create(Kind::Event, event_key.clone(), event)
            .is_ok()
        {
            lock(&self.events).insert(dedup, event_key);
        }
    }
}

/// A new directory only this user may enter, with an unguessable name
/// (mkdtemp-style), under `$XDG_RUNTIME_DIR` when set: never one that
/// already exists, whose planted files a new shell would run.
/// The id the container runtime gives a pod's sandbox: 64 hex digits,
/// stable for the pod's uid.
pub(crate) fn sandbox_id(pod: &Value) -> String {
    let uid = pod
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    (0..4u64)
        .map(|round| {
            let hash = uid.bytes().fold(0xcbf2_9ce4_8422_2325 ^ round, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            format!("{hash:016x}")
        })
        .collect()
}

fn private_scratch_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    let mut tries = 0;
    loop {
        let name = format!(
            "podbay-sim-{}-{:016x}",
            std::process::id(),
            fastrand::u64(..)
        );
        let dir = base.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 16 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        for p in lock(&self.processes).values() {
            p.kill();
        }
        let _ = std::fs::remove_dir_all(&self.sandbox);
    }
}

fn not_running_error(pod: &str, container: &str, state: Option<&Value>) -> ApiError {
    let waiting = state
        .and_then(|s| s.pointer("/waiting/reason"))
        .and_then(Value::as_str);
    match (waiting, state.and_then(|s| s.get("terminated"))) {
        (Some(reason), _) => ApiError::bad_request(format!(
            "container {container:?} in pod {pod:?} is waiting to start: {reason}"
        )),
        (None, Some(_)) => ApiError::bad_request(format!(
            "container {container:?} in pod {pod:?} is terminated"
        )),
        _ => ApiError::bad_request(format!(
            "container {container:?} in pod {pod:?} is waiting to start: ContainerCreating"
        )),
    }
}

/// containerd's words for a container whose process could not start.
pub fn start_error(program: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        format!(
            "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: {program:?}: executable file not found in $PATH: unknown"
        )
    } else {
        format!("failed to create containerd task: failed to start {program:?}: {e}: unknown")
    }
}

/// The pod's node, the node namespaces it shares, and its hostPath volumes.
fn place_on_node(c: &mut ContainerSpec<'_>, pod: &Value) {
    let flag = |field: &str| pod.pointer(field) == Some(&json!(true));
    c.node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(String::from);
    c.host = super::sandbox::HostNamespaces {
        pid: flag("/spec/hostPID"),
        network: flag("/spec/hostNetwork"),
        ipc: flag("/spec/hostIPC"),
    };
    c.host_paths = pod
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| {
            Some((
                v.get("name")?.as_str()?.to_string(),
                v.pointer("/hostPath/path")?.as_str()?.to_string(),
            ))
        })
        .collect();
}

fn container_spec<'a>(
    key: &'a Key,
    name: &'a str,
    spec: &'a Value,
    image: &'a Image,
    argv: Vec<String>,
    pid: PidChoice,
) -> ContainerSpec<'a> {
    let list = |field: &str| {
        spec.get(field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    };
    let str_of = |v: &Value, field: &str| v.get(field).and_then(Value::as_str).map(String::from);
    ContainerSpec {
        pod: key,
        name,
        image,
        argv,
        env: list("env")
            .filter_map(|var| {
                Some((
                    str_of(var, "name")?,
                    str_of(var, "value").unwrap_or_default(),
                ))
            })
            .collect(),
        workdir: spec
            .get("workingDir")
            .and_then(Value::as_str)
            .filter(|w| !w.is_empty()),
        volume_mounts: list("volumeMounts")
            .filter_map(|m| {
                Some((
                    str_of(m, "name")?,
                    str_of(m, "mountPath")?,
                    m.get("readOnly").and_then(Value::as_bool).unwrap_or(false),
                ))
            })
            .collect(),
        pid,
        node: None,
        host: Default::default(),
        host_paths: Vec::new(),
        pod_user: (0, 0),
        identity: super::sandbox::Identity {
            user: 0,
            group: 0,
            capabilities: Vec::new(),
        },
    }
}

#[cfg(test)]
#[path = "kubelet_tests.rs"]
mod tests;

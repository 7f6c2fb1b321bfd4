//! What the pod view shows: every container with its state, and the pod's
//! events.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, VolumeMount};

pub use super::container_state::ContainerState;
use super::container_state::state_of;
use super::pod::{PodKey, summarize};
use super::text::printable;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerKind {
    Init,
    Regular,
    Ephemeral,
}

impl ContainerKind {
    pub fn label(self) -> &'static str {
        match self {
            ContainerKind::Init => "init",
            ContainerKind::Regular => "",
            ContainerKind::Ephemeral => "debug",
        }
    }
}

/// Whether a container's waiting reason is trouble (`ErrImagePull`,
/// `CrashLoopBackOff`, `InvalidImageName`…) rather than progress
/// (`ContainerCreating`, `PodInitializing`).
pub fn waiting_in_trouble(reason: &str) -> bool {
    classify_waiting(reason, "") != Waiting::ComingUp
}

/// Where a waiting container stands: one classification for `podbay
/// debug` (what to wait for, what exit code) and the TUI (how to show it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Progress: `ContainerCreating`, `PodInitializing`, pulling.
    ComingUp,
    /// Trouble that may still clear by itself (`CrashLoopBackOff`, a pull
    /// error without a reason yet).
    Troubled,
    /// It will not start without a change from the user.
    Hopeless(StartFailure),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartFailure {
    /// The image cannot be had: bad name, not found, no access.
    Image,
    /// The runtime cannot create or start it (a bad config, a missing secret).
    Start,
}

/// Whether a pull error's message is the registry saying no for good.
fn pull_refused(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "not found",
        "manifest unknown",
        "pull access denied",
        "does not exist",
        "unauthorized",
        "forbidden",
        "invalid reference format",
    ]
    .iter()
    .any(|refusal| message.contains(refusal))
}

pub fn classify_waiting(reason: &str, message: &str) -> Waiting {
    match reason {
        "InvalidImageName" | "ErrImageNeverPull" => Waiting::Hopeless(StartFailure::Image),
        // A pull the registry refused (no such image, no access) fails the
        // same way on every retry: say so now rather than after the whole
        // timeout. Others (429, timeouts, "Back-off pulling") may pass.
        "ErrImagePull" | "ImagePullBackOff" if pull_refused(message) => {
            Waiting::Hopeless(StartFailure::Image)
        }
        // A target the kubelet cannot find yet (the pod is still
        // creating it) may come; it retries at each sync.
        "CreateContainerConfigError" if message.starts_with("unable to find target container") => {
            Waiting::Troubled
        }
        "CreateContainerConfigError" | "CreateContainerError" => {
            Waiting::Hopeless(StartFailure::Start)
        }
        r if r.contains("Err") || r.contains("BackOff") || r.contains("Invalid") => {
            Waiting::Troubled
        }
        _ => Waiting::ComingUp,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ContainerInfo {
    pub kind: ContainerKind,
    pub name: String,
    pub image: String,
    pub state: ContainerState,
    pub ready: bool,
    pub restarts: i32,
    /// For ephemeral containers: the container whose processes it shares.
    pub target: Option<String>,
    /// Empty: the image's entrypoint.
    pub command: Vec<String>,
    pub args: Vec<String>,
    /// How the previous run ended (`lastState`, always `Terminated`): what
    /// explains a restart or a CrashLoopBackOff.
    pub previous: Option<ContainerState>,
    /// Its spec's `stdin`, `stdinOnce` and `tty`: how an attach talks to it.
    pub stdio: Stdio,
    /// The pod's volumes it mounts, as (volume, path in the container).
    pub mounts: Vec<(String, String)>,
}

/// A container's `stdin`, `stdinOnce` and `tty`, from its spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stdio {
    /// Its stdin is open to attachers (`-i`).
    pub stdin: bool,
    /// Its stdin closes once the first attacher closes it (`stdinOnce`).
    pub stdin_once: bool,
    /// It has a terminal (`-t`): one output stream, a line discipline and
    /// a size on the container's side.
    pub tty: bool,
}

impl Stdio {
    /// What attaching assumes of a container it knows nothing of.
    pub const TERMINAL: Stdio = Stdio {
        stdin: true,
        stdin_once: false,
        tty: true,
    };
    /// Neither stdin nor a terminal (most containers).
    pub const NONE: Stdio = Stdio {
        stdin: false,
        stdin_once: false,
        tty: false,
    };
}

impl Default for Stdio {
    fn default() -> Self {
        Stdio::NONE
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodDetail {
    pub key: PodKey,
    pub status: String,
    pub phase: String,
    pub node: String,
    pub ip: String,
    pub qos: String,
    /// `spec.os.name` when set (`windows` pods cannot target containers).
    pub os: Option<String>,
    /// Static pods (mirror pods) refuse ephemeral containers.
    pub is_static: bool,
    pub deleting: bool,
    pub containers: Vec<ContainerInfo>,
    /// The pod's volumes as `NAME:PATH`, PATH where its containers mount
    /// it (else `/mnt/NAME`): what a debug container can mount.
    pub volumes: Vec<String>,
    /// The pod as the server sent it, without `managedFields`: what the
    /// describe and YAML views show, and what Pod Security admission
    /// evaluates when a debug container is added.
    pub manifest: Box<Pod>,
}

/// Why a debug container cannot be added to a pod (see
/// [`PodDetail::why_no_debug_container`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoDebugContainer {
    pub kind: NoDebugKind,
    /// The end of a sentence about the pod ("is a static (mirror) pod…").
    pub why: String,
    /// What to do instead, when there is something.
    pub hint: Option<String>,
}

impl NoDebugContainer {
    /// The whole sentence, after the pod's name ("The pod", "Pod ns/name").
    pub fn sentence(&self, pod: &str) -> String {
        match &self.hint {
            Some(hint) => format!("{pod} {}; {hint}.", self.why),
            None => format!("{pod} {}.", self.why),
        }
    }
}

/// What kind of refusal it is (the command line's exit code follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoDebugKind {
    /// The pod cannot take one at all, or not with a target.
    Unsupported,
    /// The target is not a container of the pod.
    NoSuchTarget,
    /// No kubelet would start it: the pod has finished or has no node.
    NotRunning,
}

impl PodDetail {
    /// Why no debug container (targeting `target`) can be added to this
    /// pod, as the end of a sentence about it; `None` when one can. The one
    /// check `podbay debug`, the launcher and the many-pods form make before
    /// sending anything.
    pub fn why_no_debug_container(&self, target: Option<&str>) -> Option<NoDebugContainer> {
        let refused =
            |kind, why: String, hint: Option<String>| Some(NoDebugContainer { kind, why, hint });
        if self.is_static {
            return refused(
                NoDebugKind::Unsupported,
                "is a static (mirror) pod, and static pods do not support ephemeral containers"
                    .into(),
                Some("debug its node instead".into()),
            );
        }
        if let Some(target) = target {
            // The API lets a debug container target init containers too.
            let targets: Vec<&str> = self
                .containers
                .iter()
                .filter(|c| c.kind != ContainerKind::Ephemeral)
                .map(|c| c.name.as_str())
                .collect();
            if !targets.contains(&target) {
                return refused(
                    NoDebugKind::NoSuchTarget,
                    format!("has no container {target:?} to target"),
                    Some(format!("its containers are: {}", targets.join(", "))),
                );
            }
            if self.os.as_deref() == Some("windows") {
                return refused(
                    NoDebugKind::Unsupported,
                    "runs on Windows, where a debug container cannot share a container's processes"
                        .into(),
                    Some("debug it without a target".into()),
                );
            }
            // The runtime joins a target's processes only while it runs: a
            // container that ran and ended (crash-looping, exited) fails
            // the debug container's creation at every try until it runs.
            if let Some(ended) = self.containers.iter().find(|c| {
                c.name == target
                    && c.kind != ContainerKind::Ephemeral
                    && !c.state.is_running()
                    && (matches!(c.state, ContainerState::Terminated { .. })
                        || c.previous.is_some())
            }) {
                let state = match &ended.state {
                    ContainerState::Waiting { reason, .. }
                    | ContainerState::Terminated { reason, .. }
                        if !reason.is_empty() =>
                    {
                        reason.clone()
                    }
                    _ => "not running".to_string(),
                };
                return refused(
                    NoDebugKind::NotRunning,
                    format!(
                        "cannot share the processes of {target:?}, which is not running ({state}): the container runtime creates a debug container that targets it only while it runs"
                    ),
                    Some(
                        "debug it without a target, or debug a copy of the pod that holds it"
                            .into(),
                    ),
                );
            }
        }
        let why = self.why_no_debug_container_starts()?;
        refused(NoDebugKind::NotRunning, why, None)
    }

    /// Why the kubelet would never start a debug container in this pod,
    /// as the end of a sentence about it; `None` when it would. The kubelet
    /// starts ephemeral containers before init containers finish, so a
    /// pending pod that is on a node is fine.
    pub fn why_no_debug_container_starts(&self) -> Option<String> {
        match self.phase.as_str() {
            "Succeeded" | "Failed" => Some(format!(
                "has finished ({}): the kubelet starts no containers in a finished pod",
                self.phase
            )),
            _ if self.node.is_empty() => Some(
                "is not on a node yet: no kubelet can start a debug container until it is scheduled"
                    .to_string(),
            ),
            _ => None,
        }
    }

    /// A running ephemeral container with this image and target, mounting
    /// at least `mounts`, which the user may want to re-attach to instead
    /// of adding another (they can never be removed from the pod).
    pub fn reusable_debugger(
        &self,
        image: &str,
        target: Option<&str>,
        mounts: &[(String, String)],
    ) -> Option<&str> {
        self.reusable_debuggers(image, target, mounts).next()
    }

    /// Every running ephemeral container [`reusable_debugger`] could
    /// give, in the pod's order.
    ///
    /// [`reusable_debugger`]: Self::reusable_debugger
    pub fn reusable_debuggers<'a: 'b, 'b>(
        &'a self,
        image: &'b str,
        target: Option<&'b str>,
        mounts: &'b [(String, String)],
    ) -> impl Iterator<Item = &'a str> + 'b {
        self.containers
            .iter()
            .filter(move |c| {
                c.kind == ContainerKind::Ephemeral
                    && c.image == image
                    && c.target.as_deref() == target
                    && c.state.is_running()
                    && mounts.iter().all(|m| c.mounts.contains(m))
            })
            .map(|c| c.name.as_str())
    }

    pub fn from_pod(pod: &Pod) -> Self {
        // Read in place: the one copy of the pod is the manifest below.
        let (no_spec, no_status) = (Default::default(), Default::default());
        let spec: &k8s_openapi::api::core::v1::PodSpec = pod.spec.as_ref().unwrap_or(&no_spec);
        let status: &k8s_openapi::api::core::v1::PodStatus =
            pod.status.as_ref().unwrap_or(&no_status);
        let find = |list: &Option<Vec<ContainerStatus>>, name: &str| {
            list.iter().flatten().find(|s| s.name == name).cloned()
        };
        let mut containers = Vec::new();
        for c in spec.init_containers.iter().flatten() {
            containers.push(info(
                ContainerKind::Init,
                Spec::of(c),
                find(&status.init_container_statuses, &c.name),
            ));
        }
        for c in &spec.containers {
            containers.push(info(
                ContainerKind::Regular,
                Spec::of(c),
                find(&status.container_statuses, &c.name),
            ));
        }
        for c in spec.ephemeral_containers.iter().flatten() {
            containers.push(info(
                ContainerKind::Ephemeral,
                Spec {
                    name: &c.name,
                    image: c.image.as_deref(),
                    target: c.target_container_name.clone(),
                    command: c.command.clone(),
                    args: c.args.clone(),
                    stdio: Stdio {
                        stdin: c.stdin == Some(true),
                        stdin_once: c.stdin_once == Some(true),
                        tty: c.tty == Some(true),
                    },
                    mounts: mounts_of(c.volume_mounts.as_ref()),
                },
                find(&status.ephemeral_container_statuses, &c.name),
            ));
        }
        let volumes = spec
            .volumes
            .iter()
            .flatten()
            .map(|v| {
                let path = spec
                    .containers
                    .iter()
                    .flat_map(|c| c.volume_mounts.iter().flatten())
                    .find(|m| m.name == v.name)
                    .map_or_else(|| format!("/mnt/{}", v.name), |m| m.mount_path.clone());
                format!("{}:{path}", v.name)
            })
            .collect();
        let node = spec.node_name.clone().unwrap_or_default();
        let os = spec.os.as_ref().map(|o| o.name.clone());
        let mut manifest = Box::new(pod.clone());
        manifest.metadata.managed_fields = None;
        PodDetail {
            volumes,
            manifest,
            key: PodKey::of(pod),
            status: summarize(pod).status,
            phase: status.phase.clone().unwrap_or_default(),
            node: printable(node),
            ip: printable(status.pod_ip.clone().unwrap_or_default()),
            qos: status.qos_class.clone().unwrap_or_default(),
            os,
            is_static: pod
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("kubernetes.io/config.mirror")),
            deleting: pod.metadata.deletion_timestamp.is_some(),
            containers,
        }
    }

    pub fn container(&self, name: &str) -> Option<&ContainerInfo> {
        self.containers.iter().find(|c| c.name == name)
    }

    /// What regular container `name` asks for (a debug container asks for
    /// nothing: it has no resources of its own).
    pub fn asks_of(&self, name: &str) -> Option<super::usage::Asks> {
        let spec = self.manifest.spec.as_ref()?;
        let one = spec.containers.iter().find(|c| c.name == name)?;
        super::pod::asks_of_containers(std::slice::from_ref(one))
    }
}

/// What every kind of container spec has in common, for `info`.
struct Spec<'a> {
    name: &'a str,
    image: Option<&'a str>,
    target: Option<String>,
    command: Option<Vec<String>>,
    args: Option<Vec<String>>,
    stdio: Stdio,
    mounts: Vec<(String, String)>,
}

fn mounts_of(mounts: Option<&Vec<VolumeMount>>) -> Vec<(String, String)> {
    mounts
        .into_iter()
        .flatten()
        .map(|m| (m.name.clone(), m.mount_path.clone()))
        .collect()
}

impl<'a> Spec<'a> {
    fn of(c: &'a Container) -> Self {
        Spec {
            name: &c.name,
            image: c.image.as_deref(),
            target: None,
            command: c.command.clone(),
            args: c.args.clone(),
            stdio: Stdio {
                stdin: c.stdin == Some(true),
                stdin_once: c.stdin_once == Some(true),
                tty: c.tty == Some(true),
            },
            mounts: mounts_of(c.volume_mounts.as_ref()),
        }
    }
}

fn info(kind: ContainerKind, spec: Spec, status: Option<ContainerStatus>) -> ContainerInfo {
    let state = status
        .as_ref()
        .and_then(|s| s.state.as_ref())
        .map_or(ContainerState::Unknown, state_of);
    let previous = status
        .as_ref()
        .and_then(|s| s.last_state.as_ref())
        .filter(|s| s.terminated.is_some())
        .map(state_of);
    ContainerInfo {
        kind,
        name: printable(spec.name.to_string()),
        image: printable(spec.image.unwrap_or_default().to_string()),
        state,
        ready: status.as_ref().is_some_and(|s| s.ready),
        restarts: status.as_ref().map_or(0, |s| s.restart_count),
        target: spec.target,
        command: spec.command.unwrap_or_default(),
        args: spec.args.unwrap_or_default(),
        previous,
        stdio: spec.stdio,
        mounts: spec.mounts,
    }
}

/// One line of the pod view's event list.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventRow {
    pub name: String,
    pub warning: bool,
    pub reason: String,
    pub message: String,
    pub count: i32,
    pub first_seen: Option<Timestamp>,
    pub last_seen: Option<Timestamp>,
    /// `spec.ephemeralContainers{debugger}` and the like.
    pub field_path: String,
    /// Who reported it: `kubelet`, `default-scheduler`.
    pub source: String,
    pub namespace: String,
    /// What it is about, as `kind/name` in lower case (`pod/api-0`).
    pub object: String,
}

impl EventRow {
    /// An Event as an untyped watch gives it: its metadata, and the rest
    /// of its JSON. Nothing here decodes a typed Event (its decoder is
    /// tens of kilobytes of the binary, for a handful of fields).
    pub fn from_parts(
        metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        event: &serde_json::Value,
    ) -> Self {
        let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        let time = |v: &serde_json::Value| v.as_str().and_then(|t| t.parse::<Timestamp>().ok());
        let last_seen = time(&event["lastTimestamp"])
            .or_else(|| time(&event["eventTime"]))
            .or_else(|| metadata.creation_timestamp.as_ref().map(|t| t.0));
        let first_seen = time(&event["firstTimestamp"]).or_else(|| time(&event["eventTime"]));
        let source = match event["source"]["component"].as_str() {
            Some(component) => component.to_string(),
            None => text(&event["reportingComponent"]),
        };
        let object = &event["involvedObject"];
        EventRow {
            name: metadata.name.clone().unwrap_or_default(),
            first_seen,
            source: printable(source),
            namespace: printable(metadata.namespace.clone().unwrap_or_default()),
            object: printable(format!(
                "{}/{}",
                text(&object["kind"]).to_lowercase(),
                text(&object["name"])
            )),
            warning: event["type"] == "Warning",
            reason: printable(text(&event["reason"])),
            message: printable(text(&event["message"])),
            count: event["count"]
                .as_i64()
                .and_then(|c| i32::try_from(c).ok())
                .unwrap_or(1),
            last_seen,
            field_path: text(&object["fieldPath"]),
        }
    }

    /// An Event's JSON (its `metadata` read from there).
    pub fn from_object(event: &serde_json::Value) -> Self {
        let metadata = serde_json::from_value(event["metadata"].clone()).unwrap_or_default();
        EventRow::from_parts(&metadata, event)
    }

    /// The container an event is about, from its field path.
    pub fn container(&self) -> Option<&str> {
        let start = self.field_path.find('{')? + 1;
        let end = self.field_path.rfind('}')?;
        self.field_path.get(start..end)
    }
}

#[cfg(test)]
mod tests {
    /// Only a registry's refusal is hopeless; a rate limit or a timeout
    /// may pass on the kubelet's next try.
    #[test]
    fn only_refused_pulls_are_hopeless() {
        use super::{StartFailure, Waiting, classify_waiting};
        let hopeless = Waiting::Hopeless(StartFailure::Image);
        for refused in [
            "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nope:1\": docker.io/library/nope:1: not found",
            "pull access denied, repository does not exist or may require authorization",
            "failed to resolve reference: unexpected status from HEAD request: 401 Unauthorized",
        ] {
            assert_eq!(
                classify_waiting("ErrImagePull", refused),
                hopeless,
                "{refused}"
            );
        }
        for passing in [
            "failed to copy: httpReadSeeker: failed open: unexpected status code 429 Too Many Requests - toomanyrequests: You have reached your pull rate limit",
            "dial tcp 10.0.0.1:443: i/o timeout",
            "Back-off pulling image \"busybox:1.36\"",
            "",
        ] {
            assert_eq!(
                classify_waiting("ImagePullBackOff", passing),
                Waiting::Troubled,
                "{passing}"
            );
        }
    }
    use super::*;
    use serde_json::json;

    #[test]
    fn containers_of_every_kind_with_their_state() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "n", "annotations": {"kubernetes.io/config.mirror": "x"}},
            "spec": {"os": {"name": "windows"},
                "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [{"name": "app", "image": "app:1", "command": ["/app"], "args": ["--port", "80"]}],
                "ephemeralContainers": [{"name": "dbg", "image": "busybox", "targetContainerName": "app", "command": ["sh"]}]},
            "status": {"phase": "Running",
                "initContainerStatuses": [{"name": "init", "image": "busybox", "imageID": "", "ready": true, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
                "containerStatuses": [{"name": "app", "image": "app:1", "imageID": "", "ready": true, "restartCount": 2, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
                    "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": "2025-12-31T23:59:58Z"}}}],
                "ephemeralContainerStatuses": [{"name": "dbg", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ErrImagePull", "message": "nope"}}}]},
        }))
        .unwrap();
        let d = PodDetail::from_pod(&pod);
        assert!(d.is_static);
        assert_eq!(d.os.as_deref(), Some("windows"));
        let kinds: Vec<_> = d
            .containers
            .iter()
            .map(|c| (c.kind, c.name.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (ContainerKind::Init, "init"),
                (ContainerKind::Regular, "app"),
                (ContainerKind::Ephemeral, "dbg")
            ]
        );
        assert!(matches!(
            d.container("init").unwrap().state,
            ContainerState::Terminated { exit_code: 0, .. }
        ));
        assert!(d.container("app").unwrap().state.is_running());
        let app = d.container("app").unwrap();
        assert_eq!(app.restarts, 2);
        assert_eq!(
            (&app.command[..], &app.args[..]),
            (
                &["/app".to_string()][..],
                &["--port".to_string(), "80".to_string()][..]
            )
        );
        assert_eq!(
            app.previous,
            Some(ContainerState::Terminated {
                exit_code: 137,
                reason: "OOMKilled".into(),
                message: String::new(),
                finished: Some("2025-12-31T23:59:58Z".parse().unwrap()),
            })
        );
        assert_eq!(d.container("init").unwrap().previous, None);
        let dbg = d.container("dbg").unwrap();
        assert_eq!(dbg.target.as_deref(), Some("app"));
        assert_eq!(
            dbg.state,
            ContainerState::Waiting {
                reason: "ErrImagePull".into(),
                message: "nope".into()
            }
        );
    }

    #[test]
    fn stdin_and_tty_come_from_each_containers_spec() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "n"},
            "spec": {"containers": [{"name": "app"}, {"name": "repl", "stdin": true, "stdinOnce": true}],
                "ephemeralContainers": [{"name": "dbg", "stdin": true, "tty": true}, {"name": "pipe", "stdin": true}]},
        }))
        .unwrap();
        let d = PodDetail::from_pod(&pod);
        let stdio = |name| d.container(name).unwrap().stdio;
        assert_eq!(stdio("app"), super::Stdio::NONE);
        assert_eq!(
            stdio("repl"),
            super::Stdio {
                stdin: true,
                stdin_once: true,
                tty: false
            }
        );
        assert_eq!(stdio("dbg"), super::Stdio::TERMINAL);
        assert_eq!(
            stdio("pipe"),
            super::Stdio {
                stdin: true,
                stdin_once: false,
                tty: false
            }
        );
    }

    #[test]
    fn events_name_their_container() {
        let event = json!({
            "metadata": {"name": "p.1", "namespace": "n"},
            "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.ephemeralContainers{debugger-x}"},
            "reason": "Pulling", "message": "Pulling image \"busybox\"", "type": "Normal", "count": 2,
            "lastTimestamp": "2026-01-01T00:00:00Z", "source": {"component": "kubelet"},
        });
        let row = EventRow::from_object(&event);
        assert_eq!(row.container(), Some("debugger-x"));
        assert_eq!((row.count, row.warning), (2, false));
        assert_eq!((&*row.object, &*row.source), ("pod/p", "kubelet"));
        assert!(row.last_seen.is_some() && row.first_seen.is_none());
        // An events.k8s.io-style Event: its eventTime and reporting component.
        let recorded = json!({
            "metadata": {"name": "p.2", "namespace": "n"},
            "involvedObject": {"kind": "Pod", "name": "p"}, "type": "Warning",
            "eventTime": "2026-01-01T00:00:01.000000Z", "reportingComponent": "scheduler",
        });
        let row = EventRow::from_object(&recorded);
        assert_eq!(
            (row.count, row.warning, &*row.source),
            (1, true, "scheduler")
        );
        assert_eq!(row.last_seen, row.first_seen);
        assert!(row.last_seen.is_some());
    }

    /// The one check before a debug container is sent, in the order
    /// `podbay debug`, the launcher and the many-pods form all meet it.
    #[test]
    fn why_no_debug_container_can_be_added() {
        let pod = |extra: serde_json::Value| {
            let mut base = json!({
                "metadata": {"name": "p", "namespace": "n"},
                "spec": {"nodeName": "node-1",
                    "initContainers": [{"name": "init", "image": "busybox"}],
                    "containers": [{"name": "app", "image": "app:1"}],
                    "ephemeralContainers": [{"name": "dbg", "image": "busybox"}]},
                "status": {"phase": "Running"},
            });
            json_patch::merge(&mut base, &extra);
            PodDetail::from_pod(&serde_json::from_value::<Pod>(base).unwrap())
        };
        let why = |d: &PodDetail, target: Option<&str>| {
            d.why_no_debug_container(target)
                .map(|r| (r.kind, r.sentence("Pod n/p")))
        };
        let fine = pod(json!({}));
        assert_eq!(why(&fine, None), None);
        assert_eq!(why(&fine, Some("app")), None);
        assert_eq!(
            why(&fine, Some("init")),
            None,
            "init containers may be targeted"
        );
        assert_eq!(
            why(&fine, Some("dbg")),
            Some((
                NoDebugKind::NoSuchTarget,
                "Pod n/p has no container \"dbg\" to target; its containers are: init, app.".into()
            )),
            "an ephemeral container is no target"
        );
        let mirror =
            pod(json!({"metadata": {"annotations": {"kubernetes.io/config.mirror": "x"}}}));
        assert_eq!(why(&mirror, None).unwrap().0, NoDebugKind::Unsupported);
        let windows = pod(json!({"spec": {"os": {"name": "windows"}}}));
        assert_eq!(why(&windows, None), None, "without a target it can");
        assert!(
            why(&windows, Some("app"))
                .unwrap()
                .1
                .ends_with("debug it without a target.")
        );
        let done = pod(json!({"status": {"phase": "Succeeded"}}));
        assert_eq!(why(&done, None).unwrap().0, NoDebugKind::NotRunning);
        let unscheduled = pod(json!({"spec": {"nodeName": null}}));
        assert!(
            why(&unscheduled, None)
                .unwrap()
                .1
                .contains("not on a node yet")
        );
        // A target that ran and is not running now (crash-looping) fails
        // the debug container's creation: say so before sending it.
        let crashing = pod(
            json!({"status": {"containerStatuses": [{"name": "app", "image": "app:1",
            "imageID": "", "ready": false, "restartCount": 7,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "containerID": "containerd://abc"}}}]}}),
        );
        assert_eq!(
            why(&crashing, Some("app")),
            Some((
                NoDebugKind::NotRunning,
                "Pod n/p cannot share the processes of \"app\", which is not running (CrashLoopBackOff): the container runtime creates a debug container that targets it only while it runs; debug it without a target, or debug a copy of the pod that holds it.".into()
            ))
        );
        assert_eq!(why(&crashing, None), None, "without a target it can");
        let starting = pod(
            json!({"status": {"containerStatuses": [{"name": "app", "image": "app:1",
            "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": "ContainerCreating"}}}]}}),
        );
        assert_eq!(
            why(&starting, Some("app")),
            None,
            "a target being created may come"
        );
    }

    #[test]
    fn a_target_not_created_yet_is_trouble_and_one_that_ended_is_hopeless() {
        assert_eq!(
            classify_waiting(
                "CreateContainerConfigError",
                "unable to find target container app"
            ),
            Waiting::Troubled
        );
        assert_eq!(
            classify_waiting(
                "CreateContainerError",
                "failed to generate container spec: invalid target container: container \"abc\" is not running - in state CONTAINER_EXITED"
            ),
            Waiting::Hopeless(StartFailure::Start)
        );
    }
}

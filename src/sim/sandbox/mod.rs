//! Pods as Linux namespaces. Each pod gets a pause process holding its
//! user (mapped to the invoking user, so no privilege is needed), UTS
//! (hostname = the pod's name) and IPC namespaces; each container its own
//! mount namespace and root directory, and its own PID namespace unless it
//! targets another container (an ephemeral container's
//! `targetContainerName`) or the pod shares one (`shareProcessNamespace`).
//! Each pod has its own network namespace too, with loopback only, where the
//! host allows it (see [`net`]).
//!
//! Where the host forbids namespaces, containers are plain processes in a
//! per-pod directory, as [`Isolation::Processes`] says.

pub mod net;
pub mod shim;

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::images::{HOST_LIBRARY_DIRS, HOST_SYSTEM_DIRS, Image, WORKLOAD_ENV};
use super::lock;
use super::store::Key;
pub use shim::HostNamespaces;
pub use shim::Identity;
use shim::{Mount, PidNamespace, Process, Spec};

/// How far the simulator can isolate its containers on this host.
#[derive(Debug, Clone)]
pub enum Isolation {
    Namespaces {
        /// Ids 0–65535 are mapped (the simulator runs as root), so each
        /// container is its own user with its own capabilities; else the
        /// invoking user is one id per pod, with every capability.
        id_range: bool,
        /// Each pod has its own network namespace (loopback only); else
        /// pods share the host's, and their programs listen on free
        /// loopback ports the runtime maps (see [`net`]).
        network: bool,
    },
    /// Plain processes; the reason is one sentence for the user.
    Processes { reason: String },
}

impl Isolation {
    /// Tries namespaces with `podbay __container probe` unless `allowed` is false.
    pub fn detect(shim: &Path, allowed: bool) -> Isolation {
        if !allowed {
            return Isolation::Processes {
                reason: "namespaces are turned off (--no-namespaces)".into(),
            };
        }
        if !cfg!(target_os = "linux") {
            return Isolation::Processes {
                reason: "Linux namespaces need Linux".into(),
            };
        }
        let probe = std::process::Command::new(shim)
            .arg(shim::ARG)
            .arg(serde_json::to_string(&Spec::Probe).unwrap_or_default())
            .stdin(std::process::Stdio::null())
            .output();
        match probe {
            Ok(out) if String::from_utf8_lossy(&out.stdout).contains(shim::PROBE_OK) => {
                let can = |spec: Spec, ok: &str| {
                    std::process::Command::new(shim)
                        .arg(shim::ARG)
                        .arg(serde_json::to_string(&spec).unwrap_or_default())
                        .stdin(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .output()
                        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains(ok))
                };
                Isolation::Namespaces {
                    id_range: can(Spec::ProbeIdRange, shim::RANGE_OK),
                    network: can(Spec::ProbeNetwork, shim::NETWORK_OK),
                }
            }
            Ok(out) => Isolation::Processes {
                reason: format!(
                    "this host does not allow unprivileged namespaces ({})",
                    String::from_utf8_lossy(&out.stderr)
                        .trim()
                        .trim_start_matches("podbay __container: ")
                ),
            },
            Err(e) => Isolation::Processes {
                reason: format!("cannot run {}: {e}", shim.display()),
            },
        }
    }

    /// One line for the start of `podbay sim` and the demo's status line.
    pub fn describe(&self) -> String {
        match self {
            Isolation::Namespaces { id_range, network } => {
                let network = match network {
                    true => "network: a pod's own, loopback only",
                    false => {
                        "host network: a pod's ports are free loopback ports port-forward maps"
                    }
                };
                let users = match id_range {
                    true => {
                        "user ids 0-65535 as on a node: each container runs as its runAsUser, with its capabilities"
                    }
                    false => {
                        "one user id per pod (not run as root): every container of a pod is its runAsUser, with every capability"
                    }
                };
                format!(
                    "containers: Linux namespaces (own PID, mount, UTS, IPC, user; {network}); {users}"
                )
            }
            Isolation::Processes { reason } => format!(
                "containers: plain host processes, without their own root or PID namespace, on the host network: a pod's ports are free loopback ports port-forward maps ({reason})"
            ),
        }
    }

    /// Whether each pod has a network namespace of its own.
    pub fn own_network(&self) -> bool {
        matches!(self, Isolation::Namespaces { network: true, .. })
    }
}

/// A pipe on which the shim reports a failed start (see [`shim`]).
pub struct StatusPipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl StatusPipe {
    fn new() -> io::Result<Self> {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        Ok(StatusPipe { read, write })
    }

    /// The descriptor to place at fd 3 in the child.
    pub fn child_end(&self) -> RawFd {
        self.write.as_raw_fd()
    }

    /// Waits for the shim to start the program or say why it could not.
    pub fn wait(self) -> io::Result<()> {
        self.wait_for_holder().map(drop)
    }

    /// As [`StatusPipe::wait`], and the pid holding the container's
    /// namespaces when it is not the shim's own (the shim entered a node).
    pub fn wait_for_holder(self) -> io::Result<Option<u32>> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::io::Read as _;
        drop(self.write);
        let mut file = std::fs::File::from(self.read);
        let mut said = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let mut fds = [PollFd::new(
                std::os::fd::AsFd::as_fd(&file),
                PollFlags::POLLIN,
            )];
            let timeout = PollTimeout::try_from(left.as_millis().min(10_000) as i32)
                .unwrap_or(PollTimeout::MAX);
            match poll(&mut fds, timeout) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the container did not start within 10 s",
                    ));
                }
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
            let mut buf = [0u8; 512];
            match file.read(&mut buf)? {
                0 => break,
                n => said.extend_from_slice(&buf[..n]),
            }
        }
        let said = String::from_utf8_lossy(&said);
        let mut holder = None;
        let mut rest = String::new();
        for line in said.lines() {
            match line.strip_prefix(shim::PID_REPORT) {
                Some(pid) => holder = pid.trim().parse().ok(),
                None => rest.push_str(line),
            }
        }
        match rest.trim() {
            "" => Ok(holder),
            "notfound" => Err(io::ErrorKind::NotFound.into()),
            "denied" => Err(io::ErrorKind::PermissionDenied.into()),
            other => Err(io::Error::other(
                other.trim_start_matches("error: ").to_string(),
            )),
        }
    }
}

/// How to start one process of a container.
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub status: Option<StatusPipe>,
}

/// What a container is, for the runtime.
pub struct ContainerSpec<'a> {
    pub pod: &'a Key,
    pub name: &'a str,
    pub image: &'a Image,
    pub argv: Vec<String>,
    /// The container's env beyond the runtime's own (image, then spec).
    pub env: Vec<(String, String)>,
    pub workdir: Option<&'a str>,
    /// (volume name, path in the container, read-only)
    pub volume_mounts: Vec<(String, String, bool)>,
    pub pid: PidChoice,
    /// The pod's user and group ids, inside its user namespace.
    pub pod_user: (u32, u32),
    /// The container's own user, group and capabilities (used where ids
    /// 0–65535 are mapped).
    pub identity: Identity,
    /// The node the pod runs on, and which of its namespaces it shares.
    pub node: Option<String>,
    pub host: HostNamespaces,
    /// The pod's `hostPath` volumes: volume name, path on the node.
    pub host_paths: Vec<(String, String)>,
}

impl ContainerSpec<'_> {
    fn process(&self, env: Vec<(String, String)>, id_range: bool) -> Process {
        Process {
            argv: self.argv.clone(),
            env,
            workdir: self.workdir.unwrap_or("/").to_string(),
            identity: id_range.then(|| self.identity.clone()),
        }
    }
}

/// Whose PID namespace a new container joins.
#[derive(Debug, Clone, Copy)]
pub enum PidChoice {
    Own,
    /// The pod's shared one (`shareProcessNamespace: true`).
    Pod,
    /// A target container's: the shim pid of its main process.
    Target(u32),
}

/// The simulator's container runtime: pause processes and container roots.
pub struct Runtime {
    isolation: Isolation,
    shim: PathBuf,
    scratch: PathBuf,
    /// The Kubernetes service address containers are told about.
    api: std::net::SocketAddr,
    pauses: Mutex<HashMap<Key, Pause>>,
    /// Each simulated node's namespace holder, started on first use.
    nodes: Mutex<HashMap<String, std::process::Child>>,
}

/// A pod's pause process, and the way into its network.
struct Pause {
    child: std::process::Child,
    /// The process holding the pod's namespaces: the pause process, or
    /// its child where it entered a node first.
    holder: u32,
    doorway: Option<std::sync::Arc<net::Doorway>>,
}

impl Pause {
    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Runtime {
    /// The shim, given `spec`, with no input or output but its status pipe.
    fn shim_command(
        &self,
        spec: &shim::Spec,
        status: &StatusPipe,
    ) -> io::Result<std::process::Command> {
        let mut command = std::process::Command::new(&self.shim);
        command
            .arg(shim::ARG)
            .arg(serde_json::to_string(spec)?)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null());
        pass_status_fd(&mut command, status.child_end());
        Ok(command)
    }

    pub fn new(
        isolation: Isolation,
        shim: PathBuf,
        scratch: PathBuf,
        api: std::net::SocketAddr,
    ) -> Self {
        Runtime {
            isolation,
            shim,
            scratch,
            api,
            pauses: Mutex::new(HashMap::new()),
            nodes: Mutex::new(HashMap::new()),
        }
    }

    /// A simulated node's root directory: what `hostPath` volumes of its
    /// pods mount (names starting with a dot are no namespace's).
    pub fn node_root(&self, node: &str) -> PathBuf {
        self.scratch.join(".nodes").join(node)
    }

    /// The process holding a node's namespaces, started on first use.
    fn node(&self, name: &str) -> io::Result<u32> {
        let mut nodes = lock(&self.nodes);
        if let Some(child) = nodes.get_mut(name)
            && child.try_wait()?.is_none()
        {
            return Ok(child.id());
        }
        let status = StatusPipe::new()?;
        let spec = Spec::Node {
            hostname: name.to_string(),
            id_range: matches!(self.isolation, Isolation::Namespaces { id_range: true, .. }),
        };
        let mut child = self.shim_command(&spec, &status)?.spawn()?;
        if let Err(e) = status.wait() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        let pid = child.id();
        nodes.insert(name.to_string(), child);
        Ok(pid)
    }

    pub fn isolation(&self) -> &Isolation {
        &self.isolation
    }

    /// A pod's directory: its volumes and its containers' roots.
    pub fn pod_dir(&self, key: &Key) -> PathBuf {
        self.scratch.join(&*key.namespace).join(&*key.name)
    }

    fn root_of(&self, key: &Key, container: &str) -> PathBuf {
        self.pod_dir(key).join("containers").join(container)
    }

    /// Where a pod's volume lives.
    pub fn volume_dir(&self, key: &Key, volume: &str) -> PathBuf {
        self.pod_dir(key).join("volumes").join(volume)
    }

    /// Where a pod on the host's network records its programs' ports.
    fn ports_dir(&self, key: &Key) -> PathBuf {
        self.pod_dir(key).join("ports")
    }

    /// A socket connected to `localhost:port` inside the pod's network, as
    /// the CRI's port-forward connects. Blocking (microseconds, but it
    /// waits its turn behind the pod's other connects).
    pub fn connect(&self, key: &Key, port: u16) -> io::Result<std::net::TcpStream> {
        if !self.isolation.own_network() {
            return net::connect_recorded(&self.ports_dir(key), port);
        }
        let doorway = lock(&self.pauses)
            .get(key)
            .and_then(|pause| pause.doorway.clone())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "the pod has no sandbox"))?;
        doorway.connect(port)
    }

    /// A container's environment: the kubelet's, then the image's, then
    /// the spec's, each overriding the one before.
    fn env_of(&self, c: &ContainerSpec<'_>) -> Vec<(String, String)> {
        let mut env = self.base_env(c.pod, c.name);
        merge_env(&mut env, c.image.env());
        merge_env(&mut env, c.env.clone());
        env
    }

    /// The environment every container gets from the kubelet.
    fn base_env(&self, key: &Key, container: &str) -> Vec<(String, String)> {
        let mut env = vec![("HOSTNAME".to_string(), key.name.to_string())];
        match self.isolation {
            Isolation::Namespaces { .. } => env.push(("HOME".into(), "/root".into())),
            Isolation::Processes { .. } => {
                env.push(("HOME".into(), self.pod_dir(key).display().to_string()));
            }
        }
        env.extend([
            ("KUBERNETES_SERVICE_HOST".into(), self.api.ip().to_string()),
            (
                "KUBERNETES_SERVICE_PORT".into(),
                self.api.port().to_string(),
            ),
            ("POD_NAMESPACE".into(), key.namespace.to_string()),
            // So a shell's prompt tells containers apart.
            ("PS1".into(), format!("{container}@{}# ", key.name)),
        ]);
        if !self.isolation.own_network() {
            env.push((
                net::PORTS_DIR_ENV.into(),
                self.ports_dir(key).display().to_string(),
            ));
        }
        env
    }

    /// How to start a container's main process.
    pub fn container(&self, c: &ContainerSpec<'_>) -> io::Result<Launch> {
        let env = self.env_of(c);
        let pod_dir = self.pod_dir(c.pod);
        std::fs::create_dir_all(&pod_dir)?;
        for (volume, _, _) in &c.volume_mounts {
            std::fs::create_dir_all(self.volume_dir(c.pod, volume))?;
        }
        match self.isolation {
            Isolation::Processes { .. } => self.plain(c.image, &c.argv, env, &pod_dir),
            Isolation::Namespaces { id_range, .. } => {
                let node = c.node.as_deref().map(|n| self.node(n)).transpose()?;
                let pod = self.pause(c.pod, c.pod_user, node, c.host)?;
                let root = self.root_of(c.pod, c.name);
                let owner = id_range.then_some((c.identity.user, c.identity.group));
                let mut mounts = build_root(&root, c.image, &self.shim, owner)?;
                for (volume, path, read_only) in &c.volume_mounts {
                    let escapes = |p: &str| {
                        Path::new(p)
                            .components()
                            .any(|c| c == std::path::Component::ParentDir)
                    };
                    if escapes(path) || escapes(volume) {
                        return Err(io::Error::other(format!(
                            "mount path {path:?} leaves the container's root"
                        )));
                    }
                    let target = root.join(path.trim_start_matches('/'));
                    std::fs::create_dir_all(&target)?;
                    let on_node = c.host_paths.iter().find(|(name, _)| name == volume);
                    let source = match (on_node, &c.node) {
                        (Some((_, host_path)), Some(node)) => {
                            let dir = self.node_root(node);
                            if escapes(host_path) {
                                return Err(io::Error::other(format!(
                                    "host path {host_path:?} leaves the node's root"
                                )));
                            }
                            dir.join(host_path.trim_start_matches('/'))
                        }
                        _ => self.volume_dir(c.pod, volume),
                    };
                    std::fs::create_dir_all(&source)?;
                    mounts.push(Mount {
                        source,
                        target: path.clone(),
                        read_only: *read_only,
                    });
                    // A node's root has the host's programs, as a node does
                    // (`chroot /host` finds a shell).
                    if let (Some((_, host_path)), Some(node)) = (on_node, &c.node)
                        && host_path.trim_matches('/').is_empty()
                    {
                        let dirs = HOST_SYSTEM_DIRS.iter().filter(|d| **d != "etc");
                        mounts.extend(host_dir_mounts(&self.node_root(node), path, dirs)?);
                    }
                }
                let pid = match c.pid {
                    PidChoice::Own => PidNamespace::Own,
                    PidChoice::Pod => PidNamespace::ChildrenOf(pod),
                    PidChoice::Target(shim) => PidNamespace::ChildrenOf(shim),
                };
                let spec = Spec::Run {
                    pod,
                    node,
                    pid,
                    root,
                    mounts,
                    process: c.process(env, id_range),
                };
                self.shim_launch(&spec)
            }
        }
    }

    /// How to start `argv` inside a running container (`kubectl exec`).
    pub fn exec(&self, c: &ContainerSpec<'_>, container_shim: Option<u32>) -> io::Result<Launch> {
        let mut env = self.env_of(c);
        env.retain(|(k, _)| k != WORKLOAD_ENV);
        match (&self.isolation, container_shim) {
            (Isolation::Namespaces { id_range, .. }, Some(shim)) => {
                let spec = Spec::Exec {
                    container: shim,
                    root: self.root_of(c.pod, c.name),
                    process: c.process(env, *id_range),
                };
                self.shim_launch(&spec)
            }
            _ => {
                let pod_dir = self.pod_dir(c.pod);
                std::fs::create_dir_all(&pod_dir)?;
                self.plain(c.image, &c.argv, env, &pod_dir)
            }
        }
    }

    /// A host process, for hosts without namespaces: the image decides
    /// which programs exist; a distroless program is this binary.
    fn plain(
        &self,
        image: &Image,
        argv: &[String],
        mut env: Vec<(String, String)>,
        pod_dir: &Path,
    ) -> io::Result<Launch> {
        let (program, args) = argv.split_first().ok_or(io::ErrorKind::NotFound)?;
        if !image.provides(program) {
            return Err(io::ErrorKind::NotFound.into());
        }
        let program = if image.program().as_deref() == Some(program.as_str()) {
            self.shim.clone()
        } else {
            PathBuf::from(program)
        };
        // The host's PATH: the image's would not find the host's tools.
        if let Ok(path) = std::env::var("PATH") {
            merge_env(&mut env, vec![("PATH".into(), path)]);
        }
        Ok(Launch {
            program,
            args: args.to_vec(),
            env,
            cwd: Some(pod_dir.to_path_buf()),
            status: None,
        })
    }

    fn shim_launch(&self, spec: &Spec) -> io::Result<Launch> {
        Ok(Launch {
            program: self.shim.clone(),
            args: vec![shim::ARG.to_string(), serde_json::to_string(spec)?],
            env: Vec::new(),
            cwd: None,
            status: Some(StatusPipe::new()?),
        })
    }

    /// The pause process of a pod, started on first use; the pid holding
    /// its namespaces.
    fn pause(
        &self,
        key: &Key,
        (user, group): (u32, u32),
        node: Option<u32>,
        host: HostNamespaces,
    ) -> io::Result<u32> {
        if let Some(pause) = lock(&self.pauses).get_mut(key)
            && pause.child.try_wait()?.is_none()
        {
            return Ok(pause.holder);
        }
        let status = StatusPipe::new()?;
        let doorway = match self.isolation.own_network() && !host.network {
            true => Some(net::doorway_pair()?),
            false => None,
        };
        let spec = Spec::Pause {
            hostname: pod_hostname(&key.name),
            share_pid: true,
            user,
            group,
            id_range: matches!(self.isolation, Isolation::Namespaces { id_range: true, .. }),
            doorway: doorway.as_ref().map(|(_, fd)| fd.as_raw_fd()),
            node,
            host,
        };
        let mut command = self.shim_command(&spec, &status)?;
        if let Some((_, fd)) = &doorway {
            inherit_fd(&mut command, fd.as_raw_fd());
        }
        let child = command.spawn()?;
        let mut pause = Pause {
            holder: child.id(),
            child,
            doorway: doorway.map(|(ours, _)| std::sync::Arc::new(ours)),
        };
        match status.wait_for_holder() {
            Ok(holder) => pause.holder = holder.unwrap_or(pause.holder),
            Err(e) => {
                pause.stop();
                return Err(e);
            }
        }
        // Started without the lock, so one slow start holds up no other
        // pod; if two raced, the first one stays.
        let mut pauses = lock(&self.pauses);
        if let Some(running) = pauses.get_mut(key)
            && running.child.try_wait()?.is_none()
        {
            let pid = running.holder;
            pause.stop();
            return Ok(pid);
        }
        let pid = pause.holder;
        pauses.insert(key.clone(), pause);
        Ok(pid)
    }

    /// Ends a pod's pause process (its containers are already killed).
    pub fn stop_pod(&self, key: &Key) {
        let pause = lock(&self.pauses).remove(key);
        if let Some(pause) = pause {
            pause.stop();
        }
        let _ = std::fs::remove_dir_all(self.ports_dir(key));
    }

    pub fn shutdown(&self) {
        let pauses: Vec<Pause> = lock(&self.pauses).drain().map(|(_, p)| p).collect();
        for pause in pauses {
            pause.stop();
        }
        for (_, mut node) in lock(&self.nodes).drain() {
            let _ = node.kill();
            let _ = node.wait();
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Sets or overrides variables, keeping the first position of each name.
fn merge_env(env: &mut Vec<(String, String)>, more: Vec<(String, String)>) {
    for (k, v) in more {
        match env.iter_mut().find(|(name, _)| *name == k) {
            Some(slot) => slot.1 = v,
            None => env.push((k, v)),
        }
    }
}

/// Puts `fd` at descriptor 3 in the child (where the shim reports). For
/// a tokio command, pass its `as_std_mut()`.
pub fn pass_status_fd(command: &mut std::process::Command, fd: RawFd) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: only dup2/fcntl between fork and exec.
    unsafe {
        command.pre_exec(move || crate::pty::pass_as_fd3(fd));
    }
}

/// Leaves `fd` open, at its number, in the child (it is close-on-exec here).
fn inherit_fd(command: &mut std::process::Command, fd: RawFd) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: only fcntl between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if nix::libc::fcntl(fd, nix::libc::F_SETFD, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Lays out a container's root directory and lists what the shim must
/// mount into it: the host's system directories (tools images) or the one
/// program (distroless), and `/dev`.
fn build_root(
    root: &Path,
    image: &Image,
    shim: &Path,
    owner: Option<(u32, u32)>,
) -> io::Result<Vec<Mount>> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut mounts = Vec::new();
    for dir in ["proc", "dev", "root", "var/tmp"] {
        std::fs::create_dir_all(root.join(dir))?;
    }
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777))?;
    mounts.push(Mount {
        source: "/dev".into(),
        target: "/dev".into(),
        read_only: false,
    });
    let host_dirs: &[&str] = match image {
        Image::Tools | Image::Server { .. } => &HOST_SYSTEM_DIRS,
        // The app's own /etc (its config, its passwd) stays.
        Image::Distroless { debug: true, .. } => &HOST_SYSTEM_DIRS[..HOST_SYSTEM_DIRS.len() - 1],
        Image::Distroless { .. } => &HOST_LIBRARY_DIRS,
    };
    mounts.extend(host_dir_mounts(root, "/", host_dirs.iter())?);
    match image {
        Image::Tools => {}
        Image::Server { .. } | Image::Distroless { .. } => {
            for (path, content) in image.files() {
                let file = root.join(path.trim_start_matches('/'));
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(file, content)?;
            }
            // Where the service writes (its dumps, its log), its own, as
            // an image's Dockerfile makes them for its USER.
            for dir in image.writable_dirs() {
                let dir = root.join(dir.trim_start_matches('/'));
                std::fs::create_dir_all(&dir)?;
                if let Some((user, group)) = owner {
                    std::os::unix::fs::chown(&dir, Some(user), Some(group))?;
                }
            }
            if let Some(program) = image.program() {
                let file = root.join(program.trim_start_matches('/'));
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&file, b"")?;
                mounts.push(Mount {
                    source: shim.to_path_buf(),
                    target: program,
                    read_only: true,
                });
            }
        }
    }
    Ok(mounts)
}

/// Mounts of the host's `dirs` into `root` (a container's, or a node's
/// mounted at `at` inside one); a directory that is a symlink on the host
/// (a merged `/usr`) is the same symlink there.
fn host_dir_mounts<'d>(
    root: &Path,
    at: &str,
    dirs: impl Iterator<Item = &'d &'d str>,
) -> io::Result<Vec<Mount>> {
    let mut mounts = Vec::new();
    for dir in dirs {
        let host = Path::new("/").join(dir);
        let inside = root.join(dir);
        match std::fs::symlink_metadata(&host) {
            Ok(meta)
                if meta.file_type().is_symlink() && std::fs::symlink_metadata(&inside).is_err() =>
            {
                if let Some(parent) = inside.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::os::unix::fs::symlink(std::fs::read_link(&host)?, &inside)?;
            }
            Ok(meta) if meta.is_dir() => {
                std::fs::create_dir_all(&inside)?;
                mounts.push(Mount {
                    source: host,
                    target: format!("{}/{dir}", at.trim_end_matches('/')),
                    read_only: true,
                });
            }
            _ => {}
        }
    }
    Ok(mounts)
}

/// A pod's hostname as the kubelet sets it (truncatePodHostnameIfNeeded):
/// its name, cut to 63 characters (sethostname takes no more), without a
/// `-` or `.` that the cut leaves at its end.
fn pod_hostname(name: &str) -> String {
    const MOST: usize = 63;
    if name.len() <= MOST {
        return name.to_string();
    }
    let mut end = MOST;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].trim_end_matches(['-', '.']).to_string()
}

#[cfg(test)]
mod hostname_tests {
    use super::pod_hostname;

    #[test]
    fn a_long_pod_name_is_cut_to_63_as_the_kubelet_cuts_it() {
        assert_eq!(pod_hostname("web-0"), "web-0");
        let long = format!("{}-{}", "a".repeat(62), "tail");
        assert_eq!(
            pod_hostname(&long),
            "a".repeat(62),
            "the '-' left at the end goes"
        );
        let exact = "b".repeat(63);
        assert_eq!(pod_hostname(&exact), exact);
    }
}

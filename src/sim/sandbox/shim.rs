//! `podbay __container SPEC`: the simulator's container runtime shim.
//!
//! The simulator runs this in a fresh process (namespaces can only be
//! entered by a single-threaded process, and the simulator has many
//! threads). The shim enters or creates the Linux namespaces its spec names,
//! prepares the mounts, forks the container's process, and waits for it,
//! exiting with its code. Whatever goes wrong before the container's program
//! runs is written to file descriptor 3 as one line (`notfound`, `denied` or
//! `error: …`); a clean end of that pipe means the program started.

use std::convert::Infallible;
use std::ffi::CString;
use std::io::Write as _;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::mount::MsFlags;
use nix::sched::CloneFlags;
use nix::sys::signal::{SigHandler, Signal};
use nix::sys::wait::WaitStatus;
use nix::unistd::ForkResult;
use serde::{Deserialize, Serialize};

/// The argument that selects the shim in `podbay`'s `main`.
pub const ARG: &str = "__container";
/// Printed by a probe that could do everything a pod needs.
pub const PROBE_OK: &str = "podbay-namespaces-ok";
/// Printed by the id-range probe when a pod can map ids 0–65535.
pub const RANGE_OK: &str = "podbay-id-range-ok";
/// Printed by the network probe when a pod can have its own network.
pub const NETWORK_OK: &str = "podbay-network-ok";
/// How many ids a pod maps when it can map a range.
const ID_RANGE: u32 = 65536;
/// How a shim that entered a node tells the runtime the pid whose
/// namespaces are the container's (see `enter_node`).
pub const PID_REPORT: &str = "pid ";
/// The descriptor the shim reports start failures on.
const STATUS_FD: i32 = 3;

/// What the shim is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Spec {
    /// Hold a pod's user, UTS and IPC namespaces (and its PID namespace
    /// when the pod shares one), as the pause container does.
    Pause {
        hostname: String,
        share_pid: bool,
        /// The ids the invoking user is inside the pod (`runAsUser`,
        /// `runAsGroup`), where only one id can be mapped.
        user: u32,
        group: u32,
        /// Map ids 0–65535 as they are on the host (the simulator runs as
        /// root), so each container can be its own user.
        id_range: bool,
        /// The descriptor of the pod's doorway (see [`super::net`]), when
        /// the pod has a network namespace of its own.
        #[serde(default)]
        doorway: Option<i32>,
        /// The holder of the pod's node's namespaces (see [`Spec::Node`]).
        #[serde(default)]
        node: Option<u32>,
        /// The node's namespaces the pod shares (`hostPID`, ...).
        #[serde(default)]
        host: HostNamespaces,
    },
    /// Hold a simulated node's user, UTS, IPC and PID namespaces: the PID
    /// namespace every pod of the node nests in, as a node's own is the
    /// parent of its containers'.
    Node { hostname: String, id_range: bool },
    /// Start a container's main process in the pod's namespaces.
    Run {
        /// The pod's pause process.
        pod: u32,
        /// The holder of the node's namespaces, whose PID namespace this
        /// container's nests in.
        #[serde(default)]
        node: Option<u32>,
        pid: PidNamespace,
        root: PathBuf,
        mounts: Vec<Mount>,
        process: Process,
    },
    /// Start a process in a running container (`kubectl exec`).
    Exec {
        /// The shim of the container's main process.
        container: u32,
        root: PathBuf,
        process: Process,
    },
    /// Check that this host lets us do all of the above.
    Probe,
    /// Check whether a user namespace may map ids 0–65535 (prints
    /// [`RANGE_OK`]).
    ProbeIdRange,
    /// Check whether a pod may have a network namespace with loopback up
    /// (prints [`NETWORK_OK`]).
    ProbeNetwork,
}

/// The node's namespaces a pod shares instead of having its own.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct HostNamespaces {
    pub pid: bool,
    pub network: bool,
    pub ipc: bool,
}

impl HostNamespaces {
    fn any(self) -> bool {
        self.pid || self.network || self.ipc
    }
}

/// Which PID namespace a container's processes live in.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PidNamespace {
    /// A new one: the container's program is PID 1.
    Own,
    /// The one the processes of this (shim) process's children live in:
    /// a target container's, or the pod's shared one.
    ChildrenOf(u32),
}

/// A bind mount into the container's root.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mount {
    pub source: PathBuf,
    /// Absolute path inside the container.
    pub target: String,
    pub read_only: bool,
}

/// The program to run, as the runtime's process spec has it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Process {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub workdir: String,
    /// Who it runs as, and the capabilities it may have (their numbers),
    /// where the pod maps a range of ids; `None` where it maps one.
    #[serde(default)]
    pub identity: Option<Identity>,
}

/// A container process's user, group and capability bounding set.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Identity {
    pub user: u32,
    pub group: u32,
    pub capabilities: Vec<u8>,
}

/// Runs the shim for the arguments after [`ARG`]; never returns.
pub fn main(spec_json: Option<&str>) -> ! {
    let spec: Spec = match spec_json.map(serde_json::from_str) {
        Some(Ok(spec)) => spec,
        _ => {
            eprintln!("podbay {ARG}: internal use only (the simulator's container shim)");
            std::process::exit(2);
        }
    };
    // Die with the simulator, whatever happens to it.
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    let result = match spec {
        Spec::Pause {
            hostname,
            share_pid,
            user,
            group,
            id_range,
            doorway,
            node,
            host,
        } => pause(
            &hostname,
            share_pid,
            (user, group),
            id_range,
            doorway,
            node,
            host,
        ),
        Spec::Node { hostname, id_range } => node(&hostname, id_range),
        Spec::Run {
            pod,
            node,
            pid,
            root,
            mounts,
            process,
        } => run(pod, node, pid, &root, &mounts, &process),
        Spec::Exec {
            container,
            root,
            process,
        } => exec(container, &root, &process),
        Spec::Probe => probe(),
        Spec::ProbeIdRange => probe_id_range(),
        Spec::ProbeNetwork => probe_network(),
    };
    let Err(failure) = result;
    report(&failure);
    std::process::exit(1);
}

/// Why the container's program did not start.
#[derive(Debug)]
enum Failure {
    NotFound,
    Denied,
    Step(&'static str, Errno),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotFound => f.write_str("notfound"),
            Failure::Denied => f.write_str("denied"),
            Failure::Step(step, errno) => write!(f, "error: {step}: {}", errno.desc()),
        }
    }
}

fn step<T>(what: &'static str, result: nix::Result<T>) -> Result<T, Failure> {
    result.map_err(|e| Failure::Step(what, e))
}

/// Writes the failure to the status pipe (or stderr when there is none).
fn report(failure: &Failure) {
    if tell_runtime(&failure.to_string()).is_err() {
        eprintln!("podbay {ARG}: {failure}");
    }
}

/// Writes `line` to the status pipe in one `write`. A shim that entered a
/// node and its grandchild both write there; `writeln!` would write each
/// formatted piece apart, and the pieces of the two lines could interleave
/// ("pid notfound" then "25310"), losing the failure.
fn tell_runtime(line: &str) -> std::io::Result<()> {
    // SAFETY: fd 3 is the status pipe the simulator passed, or not open;
    // ManuallyDrop leaves it open.
    let mut status = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(STATUS_FD) });
    // A line under PIPE_BUF (4096) bytes is written whole or not at all.
    status.write_all(format!("{line}\n").as_bytes())
}

/// Marks the status pipe close-on-exec, so the program's start closes it.
fn status_closes_on_exec() {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    // SAFETY: borrowing fd 3 for one fcntl; it may not be open (probe).
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(STATUS_FD) };
    let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
}

fn close_status() {
    // SAFETY: fd 3 is ours (see `report`); closing it tells the simulator
    // this process will not write to it.
    drop(unsafe { OwnedFd::from_raw_fd(STATUS_FD) });
}

fn pause(
    hostname: &str,
    share_pid: bool,
    ids: (u32, u32),
    id_range: bool,
    doorway: Option<i32>,
    node: Option<u32>,
    host: HostNamespaces,
) -> Result<Infallible, Failure> {
    // SAFETY: the runtime passed this descriptor for us alone.
    let doorway = doorway.map(|fd| unsafe { OwnedFd::from_raw_fd(fd) });
    if let Some(node) = node {
        enter_node(node)?;
    }
    name_process("pause");
    // A pod that shares one of its node's namespaces stays in the node's
    // user namespace: from a user namespace of its own it could not join them.
    let own_user = node.is_none() || !host.any();
    if own_user {
        if id_range {
            new_ranged_user_namespace()?;
        } else {
            new_user_namespace(ids)?;
        }
    }
    let mut flags = CloneFlags::empty();
    match (node, host.network) {
        (Some(node), true) => join(node, "uts", CloneFlags::CLONE_NEWUTS)?,
        _ => flags |= CloneFlags::CLONE_NEWUTS,
    }
    match (node, host.ipc) {
        (Some(node), true) => join(node, "ipc", CloneFlags::CLONE_NEWIPC)?,
        _ => flags |= CloneFlags::CLONE_NEWIPC,
    }
    let own_pid = share_pid && !host.pid;
    if own_pid {
        flags |= CloneFlags::CLONE_NEWPID;
    }
    if doorway.is_some() {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    step("unshare", nix::sched::unshare(flags))?;
    if flags.contains(CloneFlags::CLONE_NEWUTS) {
        step("sethostname", nix::unistd::sethostname(hostname))?;
    }
    if doorway.is_some() {
        step("loopback up", super::net::bring_up_loopback())?;
    }
    if own_pid {
        // The pod's PID 1, reaping what the containers orphan.
        // SAFETY: single-threaded process.
        if let ForkResult::Child = step("fork", unsafe { nix::unistd::fork() })? {
            close_status();
            drop(doorway);
            reap_forever();
        }
    }
    close_status();
    if let Some(doorway) = doorway {
        // The pod lives as long as its pause process; the doorway closes
        // when the runtime forgets the pod.
        super::net::serve_doorway(doorway);
    }
    loop {
        nix::unistd::pause();
    }
}

/// A PID namespace's init: dies with its parent, and lets the kernel reap
/// every orphan that lands here.
fn reap_forever() -> ! {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    // SAFETY: ignoring a signal installs no handler.
    let _ = unsafe { nix::sys::signal::signal(Signal::SIGCHLD, SigHandler::SigIgn) };
    loop {
        nix::unistd::pause();
    }
}

/// A simulated node: its own user namespace (root inside, as on a node),
/// UTS (hostname = the node's name), IPC, and the PID namespace its pods'
/// nest in, whose PID 1 this process forks.
fn node(hostname: &str, id_range: bool) -> Result<Infallible, Failure> {
    if id_range {
        new_ranged_user_namespace()?;
    } else {
        new_user_namespace((0, 0))?;
    }
    step(
        "unshare",
        nix::sched::unshare(
            CloneFlags::CLONE_NEWUTS | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWPID,
        ),
    )?;
    step("sethostname", nix::unistd::sethostname(hostname))?;
    // SAFETY: single-threaded process.
    if let ForkResult::Child = step("fork", unsafe { nix::unistd::fork() })? {
        close_status();
        name_process("podbay-node");
        reap_forever();
    }
    close_status();
    loop {
        nix::unistd::pause();
    }
}

/// The name `ps` shows for a process of the runtime's own, in a node's
/// process list (a node shows `pause` and `containerd-shim`, not the
/// simulator's binary).
fn name_process(name: &str) {
    if let Ok(name) = CString::new(name) {
        let _ = nix::sys::prctl::set_name(&name);
    }
}

/// Moves into a node: its user namespace, and its PID namespace for the
/// children, then forks, because a PID namespace nested in the node's can
/// only be made from inside it. This process then only waits for the
/// child and exits as it does, after telling the runtime (on the status
/// pipe) the child's pid, whose namespaces are the container's; the child
/// returns and goes on.
fn enter_node(node: u32) -> Result<(), Failure> {
    join(node, "user", CloneFlags::CLONE_NEWUSER)?;
    join(node, "pid_for_children", CloneFlags::CLONE_NEWPID)?;
    // SAFETY: the shim is single-threaded.
    match step("fork", unsafe { nix::unistd::fork() })? {
        ForkResult::Child => {
            let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
            Ok(())
        }
        ForkResult::Parent { child } => {
            name_process("podbay-shim");
            let _ = tell_runtime(&format!("{PID_REPORT}{child}"));
            close_status();
            exit_as(child)
        }
    }
}

/// A user namespace in which this process is `user`:`group` (root for
/// most pods), mapped to the user that started the simulator (so no
/// privilege is needed). Joining it gives a container's setup every
/// capability in it; a non-root program loses them at exec, as on a node.
fn new_user_namespace((user, group): (u32, u32)) -> Result<(), Failure> {
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    step(
        "unshare user",
        nix::sched::unshare(CloneFlags::CLONE_NEWUSER),
    )?;
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/self/{file}"), text)
            .map_err(|e| Failure::Step("uid map", Errno::from_raw(e.raw_os_error().unwrap_or(0))))
    };
    write("uid_map", format!("{user} {uid} 1"))?;
    write("setgroups", "deny".into())?;
    write("gid_map", format!("{group} {gid} 1"))
}

/// A user namespace whose ids 0–65535 are the host's own, as a node's
/// containers are (without user namespaces): only root may map it, and
/// then each container's process takes its own user and capabilities.
///
/// A range can only be written from outside the new namespace (inside, the
/// process has no capability over the ids of the parent): a helper forked
/// before the unshare writes it, as `newuidmap` would.
fn new_ranged_user_namespace() -> Result<(), Failure> {
    use std::io::{Read as _, Write as _};
    let pipe = || step("pipe", nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC));
    let (go_read, go_write) = pipe()?;
    let (done_read, done_write) = pipe()?;
    // This process's /proc directory, held open: where the pid this
    // process has (in a node's PID namespace) is not the one the host's
    // /proc knows it by.
    let me = std::fs::File::open("/proc/self").map_err(|e| {
        Failure::Step(
            "open /proc/self",
            Errno::from_raw(e.raw_os_error().unwrap_or(0)),
        )
    })?;
    let me = std::os::fd::AsRawFd::as_raw_fd(&me);
    // SAFETY: the shim is single-threaded.
    match step("fork", unsafe { nix::unistd::fork() })? {
        ForkResult::Child => {
            drop((go_write, done_read));
            let mut go = std::fs::File::from(go_read);
            let mut byte = [0u8; 1];
            let errno = match go.read(&mut byte) {
                Ok(1) => ["uid_map", "gid_map"]
                    .iter()
                    .map(|file| {
                        std::fs::write(
                            format!("/proc/self/fd/{me}/{file}"),
                            format!("0 0 {ID_RANGE}"),
                        )
                    })
                    .find_map(Result::err)
                    .map_or(0, |e| e.raw_os_error().unwrap_or(1)),
                _ => nix::libc::EINTR,
            };
            let _ = std::fs::File::from(done_write).write_all(&errno.to_le_bytes());
            // SAFETY: _exit in a forked child, nothing to unwind.
            unsafe { nix::libc::_exit(0) }
        }
        ForkResult::Parent { child } => {
            drop((go_read, done_write));
            let unshared = step(
                "unshare user",
                nix::sched::unshare(CloneFlags::CLONE_NEWUSER),
            );
            // The helper goes on at this byte, or gives up at the pipe's end.
            let mut go = std::fs::File::from(go_write);
            if unshared.is_ok() {
                let _ = go.write_all(b"x");
            }
            drop(go);
            let mut answer = [0u8; 4];
            let read = std::fs::File::from(done_read).read_exact(&mut answer);
            let _ = nix::sys::wait::waitpid(child, None);
            unshared?;
            match (read, i32::from_le_bytes(answer)) {
                (Ok(()), 0) => Ok(()),
                (Ok(()), errno) => Err(Failure::Step("id map", Errno::from_raw(errno))),
                (Err(_), _) => Err(Failure::Step("id map", Errno::EPIPE)),
            }
        }
    }
}

/// Becomes the container's user with its capabilities, just before exec:
/// the bounding set loses what the container may not have (root's exec
/// then gets exactly the rest); a non-root user keeps none, as on a node.
fn become_identity(identity: &Identity) -> Result<(), Failure> {
    let last = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse::<u8>().ok())
        .unwrap_or(40);
    for cap in 0..=last {
        if !identity.capabilities.contains(&cap) {
            // SAFETY: prctl with integer arguments only.
            let dropped = unsafe {
                nix::libc::prctl(
                    nix::libc::PR_CAPBSET_DROP,
                    cap as nix::libc::c_ulong,
                    0,
                    0,
                    0,
                )
            };
            if dropped != 0 && Errno::last() != Errno::EINVAL {
                return Err(Failure::Step("drop capability", Errno::last()));
            }
        }
    }
    step("setgroups", nix::unistd::setgroups(&[]))?;
    step(
        "setgid",
        nix::unistd::setgid(nix::unistd::Gid::from_raw(identity.group)),
    )?;
    step(
        "setuid",
        nix::unistd::setuid(nix::unistd::Uid::from_raw(identity.user)),
    )?;
    // A change of user clears the parent-death signal: set it again, or
    // the process outlives its shim (and the simulator).
    step(
        "parent-death signal",
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL),
    )
}

/// Whether this host lets a user namespace map ids 0–65535 (root only).
fn probe_id_range() -> Result<Infallible, Failure> {
    new_ranged_user_namespace()?;
    println!("{RANGE_OK}");
    std::process::exit(0);
}

/// Whether a pod may have a network namespace of its own, with `lo` up.
fn probe_network() -> Result<Infallible, Failure> {
    new_user_namespace((0, 0))?;
    step(
        "unshare network",
        nix::sched::unshare(CloneFlags::CLONE_NEWNET),
    )?;
    step("loopback up", super::net::bring_up_loopback())?;
    println!("{NETWORK_OK}");
    std::process::exit(0);
}

fn join(pid: u32, namespace: &str, flag: CloneFlags) -> Result<(), Failure> {
    let path = format!("/proc/{pid}/ns/{namespace}");
    let file =
        std::fs::File::open(&path).map_err(|_| Failure::Step("open namespace", Errno::ESRCH))?;
    step("setns", nix::sched::setns(file, flag))
}

/// Joins `pid`'s network namespace unless it is already ours (a pod on
/// the host's network: entering that again would need privilege).
fn join_network(pid: u32) -> Result<(), Failure> {
    join_unless_ours(pid, "net", CloneFlags::CLONE_NEWNET)
}

/// Joins one of `pid`'s namespaces unless this process is in it already
/// (joining one's own user namespace is an error, the host's network one
/// needs privilege).
fn join_unless_ours(pid: u32, namespace: &str, flag: CloneFlags) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt as _;
    let inode = |path: String| std::fs::metadata(path).map(|m| (m.dev(), m.ino()));
    match (
        inode(format!("/proc/{pid}/ns/{namespace}")),
        inode(format!("/proc/self/ns/{namespace}")),
    ) {
        (Ok(theirs), Ok(ours)) if theirs == ours => Ok(()),
        _ => join(pid, namespace, flag),
    }
}

fn run(
    pod: u32,
    node: Option<u32>,
    pid: PidNamespace,
    root: &Path,
    mounts: &[Mount],
    process: &Process,
) -> Result<Infallible, Failure> {
    status_closes_on_exec();
    if let Some(node) = node {
        // The terminal goes before the fork: only this session leader can
        // let it go, for the program to take it (see `spawn_and_wait`).
        release_terminal();
        enter_node(node)?;
    }
    // A pod sharing its node's namespaces is in the node's user namespace,
    // which this process may already be in.
    join_unless_ours(pod, "user", CloneFlags::CLONE_NEWUSER)?;
    join_network(pod)?;
    join(pod, "uts", CloneFlags::CLONE_NEWUTS)?;
    join(pod, "ipc", CloneFlags::CLONE_NEWIPC)?;
    match pid {
        PidNamespace::Own => step("unshare pid", nix::sched::unshare(CloneFlags::CLONE_NEWPID))?,
        PidNamespace::ChildrenOf(other) => {
            join(other, "pid_for_children", CloneFlags::CLONE_NEWPID)?
        }
    }
    step(
        "unshare mount",
        nix::sched::unshare(CloneFlags::CLONE_NEWNS),
    )?;
    make_mounts_private()?;
    for m in mounts {
        bind(root, m)?;
    }
    spawn_and_wait(|| {
        step("mount proc", mount_proc(&root.join("proc")))?;
        enter_root_and_exec(root, process)
    })
}

/// Keeps this mount namespace's mounts from reaching the host's.
fn make_mounts_private() -> Result<(), Failure> {
    step(
        "make mounts private",
        nix::mount::mount(
            None::<&str>,
            "/",
            None::<&str>,
            MsFlags::MS_REC | MsFlags::MS_PRIVATE,
            None::<&str>,
        ),
    )
}

/// A `/proc` of this process's PID namespace at `dir`.
fn mount_proc(dir: &Path) -> nix::Result<()> {
    nix::mount::mount(
        Some("proc"),
        dir,
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
}

fn bind(root: &Path, m: &Mount) -> Result<(), Failure> {
    let target = root.join(m.target.trim_start_matches('/'));
    step(
        "bind mount",
        nix::mount::mount(
            Some(&m.source),
            &target,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        ),
    )?;
    if m.read_only {
        step(
            "read-only mount",
            nix::mount::mount(
                None::<&str>,
                &target,
                None::<&str>,
                MsFlags::MS_BIND
                    | MsFlags::MS_REMOUNT
                    | MsFlags::MS_RDONLY
                    | locked_flags(&m.source),
                None::<&str>,
            ),
        )?;
    }
    Ok(())
}

/// The flags of the mount `path` is on, which a remount inside a user
/// namespace must keep (the kernel locks them), as runc and bwrap do.
fn locked_flags(path: &Path) -> MsFlags {
    use nix::sys::statvfs::FsFlags;
    let Ok(stat) = nix::sys::statvfs::statvfs(path) else {
        return MsFlags::empty();
    };
    let flags = stat.flags();
    [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(st, _)| flags.contains(*st))
    .fold(MsFlags::empty(), |all, (_, ms)| all | ms)
}

fn exec(container: u32, root: &Path, process: &Process) -> Result<Infallible, Failure> {
    status_closes_on_exec();
    join(container, "user", CloneFlags::CLONE_NEWUSER)?;
    join(container, "mnt", CloneFlags::CLONE_NEWNS)?;
    join_network(container)?;
    join(container, "uts", CloneFlags::CLONE_NEWUTS)?;
    join(container, "ipc", CloneFlags::CLONE_NEWIPC)?;
    join(container, "pid_for_children", CloneFlags::CLONE_NEWPID)?;
    spawn_and_wait(|| enter_root_and_exec(root, process))
}

/// Forks; the child runs `child` (which only returns on failure), this
/// process waits for it and exits as it did.
fn spawn_and_wait(
    child: impl FnOnce() -> Result<Infallible, Failure>,
) -> Result<Infallible, Failure> {
    let on_terminal = release_terminal();
    // SAFETY: the shim is single-threaded.
    match step("fork", unsafe { nix::unistd::fork() })? {
        ForkResult::Child => {
            let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
            let Err(failure) = take_terminal(on_terminal).and_then(|()| child());
            report(&failure);
            // 127 as a shell says "not found"; nobody reads it but the shim.
            std::process::exit(127);
        }
        ForkResult::Parent { child } => {
            close_status();
            name_process("podbay-shim");
            exit_as(child)
        }
    }
}

/// Waits for `child` and exits as it did. Keys typed on the container's
/// terminal (and its hangup) are for its program: this process outlives
/// them, or the program would die with it.
fn exit_as(child: nix::unistd::Pid) -> ! {
    for signal in [
        Signal::SIGINT,
        Signal::SIGQUIT,
        Signal::SIGTSTP,
        Signal::SIGHUP,
    ] {
        // SAFETY: ignoring a signal installs no handler.
        let _ = unsafe { nix::sys::signal::signal(signal, SigHandler::SigIgn) };
    }
    loop {
        match nix::sys::wait::waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => std::process::exit(128 + signal as i32),
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => std::process::exit(128),
        }
    }
}

/// The program leads its own session with the terminal, as runc makes a
/// container's process do: a shell's job control must find its process
/// group inside its PID namespace. So this process lets the terminal go
/// (a no-op where it is not the session's leader). Whether stdin is one.
fn release_terminal() -> bool {
    let on_terminal = nix::unistd::isatty(std::io::stdin()).unwrap_or(false);
    if on_terminal {
        // SAFETY: ignoring a signal installs no handler.
        let _ = unsafe { nix::sys::signal::signal(Signal::SIGHUP, SigHandler::SigIgn) };
        // SAFETY: TIOCNOTTY takes no argument.
        unsafe { nix::libc::ioctl(0, nix::libc::TIOCNOTTY as _) };
    }
    on_terminal
}

/// Makes this process a session leader, with the terminal when there is one.
fn take_terminal(on_terminal: bool) -> Result<(), Failure> {
    // SAFETY: restoring the default disposition installs no handler.
    let _ = unsafe { nix::sys::signal::signal(Signal::SIGHUP, SigHandler::SigDfl) };
    step("setsid", nix::unistd::setsid())?;
    // SAFETY: TIOCSCTTY with 0 takes a terminal no session holds.
    if on_terminal && unsafe { nix::libc::ioctl(0, nix::libc::TIOCSCTTY as _, 0) } != 0 {
        return Err(Failure::Step("controlling terminal", Errno::last()));
    }
    Ok(())
}

fn enter_root_and_exec(root: &Path, process: &Process) -> Result<Infallible, Failure> {
    step("chroot", nix::unistd::chroot(root))?;
    step("chdir", nix::unistd::chdir("/"))?;
    if let Some(identity) = &process.identity {
        become_identity(identity)?;
    }
    step("chdir", nix::unistd::chdir(process.workdir.as_str()))?;
    exec_program(process)
}

/// `execvpe` with the container's PATH, reporting `notfound` as containerd
/// does when no directory has the program.
fn exec_program(process: &Process) -> Result<Infallible, Failure> {
    let Some(program) = process.argv.first() else {
        return Err(Failure::NotFound);
    };
    let cstr = |s: &str| CString::new(s).map_err(|_| Failure::Step("argument", Errno::EINVAL));
    let argv = process
        .argv
        .iter()
        .map(|a| cstr(a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut env = process
        .env
        .iter()
        .map(|(k, v)| cstr(&format!("{k}={v}")))
        .collect::<Result<Vec<_>, _>>()?;
    // containerd sets TERM for a process on a terminal.
    let on_terminal = nix::unistd::isatty(std::io::stdin()).unwrap_or(false);
    if on_terminal && !process.env.iter().any(|(k, _)| k == "TERM") {
        env.push(cstr("TERM=xterm")?);
    }
    let candidates: Vec<PathBuf> = if program.contains('/') {
        vec![PathBuf::from(program)]
    } else {
        let path = process
            .env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map_or("/usr/local/bin:/usr/bin:/bin", |(_, v)| v.as_str());
        path.split(':')
            .map(|dir| Path::new(dir).join(program))
            .collect()
    };
    let mut denied = false;
    for candidate in candidates {
        let Ok(path) = CString::new(candidate.as_os_str().as_encoded_bytes()) else {
            continue;
        };
        match nix::unistd::execve(&path, &argv, &env) {
            Err(Errno::EACCES) => denied = true,
            Err(Errno::ENOENT | Errno::ENOTDIR) => {}
            Err(e) => return Err(Failure::Step("exec", e)),
        }
    }
    Err(if denied {
        Failure::Denied
    } else {
        Failure::NotFound
    })
}

/// Does, in a throwaway process, what a pod and its containers need:
/// a user namespace, the others below it, and a fresh `/proc`.
fn probe() -> Result<Infallible, Failure> {
    new_user_namespace((0, 0))?;
    step(
        "unshare",
        nix::sched::unshare(
            CloneFlags::CLONE_NEWUTS
                | CloneFlags::CLONE_NEWIPC
                | CloneFlags::CLONE_NEWPID
                | CloneFlags::CLONE_NEWNS,
        ),
    )?;
    make_mounts_private()?;
    // SAFETY: single-threaded process.
    match step("fork", unsafe { nix::unistd::fork() })? {
        ForkResult::Child => {
            let mounted = mount_proc(Path::new("/proc"));
            std::process::exit(match mounted {
                Ok(()) if std::process::id() == 1 => 0,
                Ok(()) => 3,
                Err(e) => e as i32,
            });
        }
        ForkResult::Parent { child } => match step("wait", nix::sys::wait::waitpid(child, None))? {
            WaitStatus::Exited(_, 0) => {
                println!("{PROBE_OK}");
                std::process::exit(0);
            }
            WaitStatus::Exited(_, 3) => Err(Failure::Step("pid namespace", Errno::EINVAL)),
            WaitStatus::Exited(_, errno) => {
                Err(Failure::Step("mount proc", Errno::from_raw(errno)))
            }
            _ => Err(Failure::Step("mount proc", Errno::EINTR)),
        },
    }
}

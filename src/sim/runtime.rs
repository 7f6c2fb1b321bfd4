//! A running container: one local process, on a PTY when its spec asks
//! for a terminal (`tty: true`) and on pipes otherwise (stdout and stderr
//! apart, as a container runtime keeps them), its log, and the attached
//! streams that share it.
//!
//! Every attacher sees the same output from the moment it attaches (no
//! replay; earlier output is only in the log), any of them may type, and
//! detaching never closes the process's input.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::lock;
use std::time::Duration;

use bytes::Bytes;
use jiff::Timestamp;
use tokio::sync::{mpsc, watch};

use super::sandbox::{Launch, StatusPipe, pass_status_fd};
use crate::pty::{self, PtyMaster};
use crate::term::Size;

/// Starts `launch` on pipes (stdin one only when asked), in its own
/// process group so `kill` ends whatever it started, and waits until the
/// shim says the program runs.
pub fn spawn_piped(
    launch: Launch,
    stdin: bool,
) -> std::io::Result<(tokio::process::Child, Option<u32>)> {
    use std::process::Stdio;
    let mut cmd = tokio::process::Command::new(&launch.program);
    cmd.args(&launch.args)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &launch.cwd {
        cmd.current_dir(cwd);
    }
    if let Some(status) = &launch.status {
        pass_status_fd(cmd.as_std_mut(), status.child_end());
    }
    let mut child = cmd.spawn()?;
    let holder = match launch.status.map(StatusPipe::wait_for_holder) {
        Some(Err(e)) => {
            let _ = child.start_kill();
            return Err(e);
        }
        Some(Ok(holder)) => holder,
        None => None,
    };
    Ok((child, holder))
}

/// Starts `launch` on a new PTY and waits until the shim says the program
/// runs.
pub fn spawn_on_pty(launch: Launch, size: Size) -> std::io::Result<(pty::PtyChild, Option<u32>)> {
    let mut spawned = pty::spawn(&pty::Spawn {
        program: launch.program.as_os_str(),
        args: &launch.args,
        env: &launch.env,
        cwd: launch.cwd.as_deref(),
        size,
        fd3: launch.status.as_ref().map(StatusPipe::child_end),
    })?;
    let holder = match launch.status.map(StatusPipe::wait_for_holder) {
        Some(Err(e)) => {
            let _ = spawned.child.start_kill();
            return Err(e);
        }
        Some(Ok(holder)) => holder,
        None => None,
    };
    Ok((spawned, holder))
}

/// How a container process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub code: i32,
    pub finished: Timestamp,
    /// Killed by the kubelet for going over its memory limit.
    pub out_of_memory: bool,
}

impl Exit {
    /// The `reason` a container status gives this end, as containerd's.
    pub fn reason(&self) -> &'static str {
        match (self.out_of_memory, self.code) {
            (true, _) => "OOMKilled",
            (false, 0) => "Completed",
            (false, _) => "Error",
        }
    }
}

/// Which of the container's output streams bytes came from. On a terminal
/// everything is stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// A chunk of output as an attacher receives it.
#[derive(Debug, Clone)]
pub struct Output {
    pub stream: Stream,
    pub data: Bytes,
}

/// One record of the container log: a line (ending in `\n`) or the partial
/// tail of one, stamped when it was read.
#[derive(Debug, Clone)]
pub struct LogRecord {
    pub seq: u64,
    pub at: Timestamp,
    pub stream: Stream,
    pub data: Bytes,
    /// Whether this record starts a new line (the previous one ended in `\n`).
    pub starts_line: bool,
}

/// What a container's log keeps, as the kubelet's defaults do
/// (`containerLogMaxSize` 10 MiB × `containerLogMaxFiles` 5): a follower
/// that falls further behind than this skips what was rotated away.
const LOG_CAPACITY_BYTES: usize = 50 << 20;
const ATTACH_QUEUE: usize = 256;

#[derive(Default)]
struct Log {
    records: VecDeque<LogRecord>,
    bytes: usize,
    next_seq: u64,
    /// Per stream (stdout, stderr): the last record ended a line.
    at_line_start: [bool; 2],
}

/// How the process's standard streams are connected.
enum Io {
    Pty(PtyMaster),
    Pipes {
        stdin: tokio::sync::Mutex<Option<tokio::process::ChildStdin>>,
    },
}

pub struct ContainerProcess {
    io: Io,
    /// The process the runtime started, until it is reaped (its group is
    /// killed to end it). Once reaped its id may be any other process's,
    /// so it is never signalled again.
    leader: Mutex<Option<u32>>,
    /// The process whose namespaces are the container's: `pid`, or its
    /// child where the shim entered a node first.
    holder: Option<u32>,
    pub started: Timestamp,
    attachers: Mutex<Vec<mpsc::Sender<Output>>>,
    log: Mutex<Log>,
    log_seq: watch::Sender<u64>,
    exit: watch::Sender<Option<Exit>>,
    out_of_memory: AtomicBool,
}

impl ContainerProcess {
    /// Starts a container's process on a PTY and the tasks that pump its
    /// output and wait for its exit.
    pub fn start(launch: Launch, size: Size) -> std::io::Result<Arc<Self>> {
        let (spawned, holder) = spawn_on_pty(launch, size)?;
        let pid = spawned.child.id();
        let process = Self::new(Io::Pty(spawned.master.clone()), pid, holder.or(pid));
        let (eof_tx, eof_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(pump_pty(process.clone(), spawned.master, eof_tx));
        tokio::spawn(wait_for_exit(process.clone(), spawned.child, eof_rx));
        Ok(process)
    }

    /// Starts a container's process without a terminal: stdin a pipe when
    /// `stdin` (else /dev/null), stdout and stderr two pipes.
    pub fn start_piped(launch: Launch, stdin: bool) -> std::io::Result<Arc<Self>> {
        let (mut child, holder) = spawn_piped(launch, stdin)?;
        let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        };
        let io = Io::Pipes {
            stdin: tokio::sync::Mutex::new(child.stdin.take()),
        };
        let pid = child.id();
        let process = Self::new(io, pid, holder.or(pid));
        let (eof_tx, eof_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(pump_pipes(process.clone(), out, err, eof_tx));
        tokio::spawn(wait_for_exit(process.clone(), child, eof_rx));
        Ok(process)
    }

    fn new(io: Io, pid: Option<u32>, holder: Option<u32>) -> Arc<Self> {
        Arc::new(ContainerProcess {
            io,
            leader: Mutex::new(pid),
            holder,
            started: Timestamp::now(),
            attachers: Mutex::new(Vec::new()),
            log: Mutex::new(Log {
                at_line_start: [true; 2],
                ..Log::default()
            }),
            log_seq: watch::channel(0).0,
            exit: watch::channel(None).0,
            out_of_memory: AtomicBool::new(false),
        })
    }

    /// Whether the process runs on a terminal (all output is stdout then).
    pub fn tty(&self) -> bool {
        matches!(self.io, Io::Pty(_))
    }

    /// Adds an attacher: it receives output from now on until the process ends.
    pub fn attach(&self) -> mpsc::Receiver<Output> {
        let (tx, rx) = mpsc::channel(ATTACH_QUEUE);
        if self.exit.borrow().is_none() {
            lock(&self.attachers).push(tx);
        }
        rx
    }

    pub fn attached(&self) -> usize {
        lock(&self.attachers)
            .iter()
            .filter(|tx| !tx.is_closed())
            .count()
    }

    /// Writes to the process's stdin; without one (`stdin: false`) the
    /// bytes go nowhere, as on a node.
    pub async fn write_input(&self, data: &[u8]) -> std::io::Result<()> {
        use tokio::io::AsyncWriteExt;
        match &self.io {
            Io::Pty(master) => master.write_all(data).await,
            Io::Pipes { stdin } => match stdin.lock().await.as_mut() {
                Some(pipe) => pipe.write_all(data).await,
                None => Ok(()),
            },
        }
    }

    /// Closes the process's stdin pipe: it reads end of input. A process
    /// on a terminal keeps its terminal.
    pub async fn close_input(&self) {
        if let Io::Pipes { stdin } = &self.io {
            stdin.lock().await.take();
        }
    }

    /// Resizes the terminal; a process without one has no size to change.
    pub fn resize(&self, size: Size) -> std::io::Result<()> {
        match &self.io {
            Io::Pty(master) => master.resize(size),
            Io::Pipes { .. } => Ok(()),
        }
    }

    pub fn size(&self) -> std::io::Result<Size> {
        match &self.io {
            Io::Pty(master) => master.size(),
            Io::Pipes { .. } => Ok(Size::DEFAULT),
        }
    }

    /// The pid whose namespaces are the container's, for a process that
    /// joins them (`exec`, a debug container targeting this one).
    pub fn namespaces_pid(&self) -> Option<u32> {
        self.holder
    }

    pub fn exit(&self) -> Option<Exit> {
        *self.exit.borrow()
    }

    /// Resolves when the process has ended and its output is drained.
    pub async fn wait(&self) -> Exit {
        let mut rx = self.exit.subscribe();
        loop {
            if let Some(exit) = *rx.borrow_and_update() {
                return exit;
            }
            if rx.changed().await.is_err() {
                return Exit {
                    code: 137,
                    finished: Timestamp::now(),
                    out_of_memory: false,
                };
            }
        }
    }

    /// Kills the whole process group (the process is a session leader),
    /// while its leader is not yet reaped: an unreaped leader holds the
    /// group's id, so the signal cannot reach another's processes.
    pub fn kill(&self) {
        let leader = lock(&self.leader);
        if let Some(pid) = leader.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }

    /// Ends the container as the kernel's OOM killer would: its exit says
    /// `OOMKilled`.
    pub fn kill_out_of_memory(&self) {
        self.out_of_memory.store(true, Ordering::Relaxed);
        self.kill();
    }

    /// The process the runtime started, while it runs: the root of the
    /// container's process tree.
    pub fn leader(&self) -> Option<u32> {
        *lock(&self.leader)
    }

    /// Log records with `seq >= from`, and the sequence number to ask for next.
    pub fn log_since(&self, from: u64) -> (Vec<LogRecord>, u64) {
        let (records, next, _) = self.log_chunk(from, usize::MAX);
        (records, next)
    }

    /// Records from `from` on, about `max_bytes` of them: with the seq to
    /// ask from next, and whether more are already there. Sequence numbers
    /// are contiguous, so the first record is found by subtraction, not a
    /// scan of a log that may hold most of a million records.
    pub fn log_chunk(&self, from: u64, max_bytes: usize) -> (Vec<LogRecord>, u64, bool) {
        let log = lock(&self.log);
        let start = log
            .records
            .front()
            .map_or(0, |first| from.saturating_sub(first.seq) as usize);
        let mut records = Vec::new();
        let mut bytes = 0;
        let mut next = log.next_seq.max(from);
        for record in log.records.range(start.min(log.records.len())..) {
            if bytes >= max_bytes {
                next = record.seq;
                break;
            }
            bytes += record.data.len();
            records.push(record.clone());
        }
        (records, next, next < log.next_seq)
    }

    /// A receiver that changes whenever the log grows.
    pub fn log_updates(&self) -> watch::Receiver<u64> {
        self.log_seq.subscribe()
    }

    pub fn exit_updates(&self) -> watch::Receiver<Option<Exit>> {
        self.exit.subscribe()
    }

    fn record_output(&self, stream: Stream, data: &[u8]) {
        let now = Timestamp::now();
        let mut log = lock(&self.log);
        let at_line_start = &mut log.at_line_start[stream as usize];
        let mut starts = Vec::new();
        for piece in data.split_inclusive(|b| *b == b'\n') {
            starts.push((*at_line_start, piece));
            *at_line_start = piece.ends_with(b"\n");
        }
        for (starts_line, piece) in starts {
            let seq = log.next_seq;
            log.next_seq += 1;
            log.bytes += piece.len();
            log.records.push_back(LogRecord {
                seq,
                at: now,
                stream,
                data: Bytes::copy_from_slice(piece),
                starts_line,
            });
        }
        while log.bytes > LOG_CAPACITY_BYTES {
            match log.records.pop_front() {
                Some(old) => log.bytes -= old.data.len(),
                None => break,
            }
        }
        let next = log.next_seq;
        drop(log);
        self.log_seq.send_replace(next);
    }
}

/// Copies PTY output to the log and every attacher.
async fn pump_pty(
    process: Arc<ContainerProcess>,
    master: PtyMaster,
    eof: tokio::sync::oneshot::Sender<()>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match master.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        process.fan_out(Stream::Stdout, &buf[..n]).await;
    }
    let _ = eof.send(());
}

/// Copies stdout and stderr, each as it comes, to the log and every attacher.
async fn pump_pipes(
    process: Arc<ContainerProcess>,
    stdout: tokio::process::ChildStdout,
    stderr: tokio::process::ChildStderr,
    eof: tokio::sync::oneshot::Sender<()>,
) {
    async fn pump(
        process: &ContainerProcess,
        stream: Stream,
        mut pipe: impl tokio::io::AsyncRead + Unpin,
    ) {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            process.fan_out(stream, &buf[..n]).await;
        }
    }
    tokio::join!(
        pump(&process, Stream::Stdout, stdout),
        pump(&process, Stream::Stderr, stderr)
    );
    let _ = eof.send(());
}

impl ContainerProcess {
    /// Logs a chunk and hands it to every attacher. A slow attacher slows
    /// the process down (as a real terminal would) rather than losing bytes.
    async fn fan_out(&self, stream: Stream, data: &[u8]) {
        let chunk = Bytes::copy_from_slice(data);
        self.record_output(stream, &chunk);
        let senders: Vec<_> = lock(&self.attachers).clone();
        let mut closed = false;
        for tx in &senders {
            let output = Output {
                stream,
                data: chunk.clone(),
            };
            closed |= tx.send(output).await.is_err();
        }
        if closed {
            lock(&self.attachers).retain(|tx| !tx.is_closed());
        }
    }
}

async fn wait_for_exit(
    process: Arc<ContainerProcess>,
    mut child: tokio::process::Child,
    eof: tokio::sync::oneshot::Receiver<()>,
) {
    // The leader is left unreaped until its group is killed: a container's
    // other processes end with it, as in a PID namespace, and the group's
    // id cannot have been given to another process meanwhile.
    let unreaped = match child.id() {
        Some(pid) => exited_unreaped(pid).await.is_ok(),
        None => false,
    };
    if unreaped {
        // Let the pump drain what the process wrote last; a grandchild
        // that keeps the PTY open must not keep the container "running".
        let _ = tokio::time::timeout(Duration::from_millis(300), eof).await;
        process.kill();
    }
    let status = {
        let mut leader = lock(&process.leader);
        let reaped = if unreaped { child.try_wait() } else { Ok(None) };
        if matches!(reaped, Ok(Some(_))) {
            *leader = None;
        }
        reaped
    };
    let status = match status {
        Ok(Some(status)) => Ok(status),
        _ => {
            let status = child.wait().await;
            *lock(&process.leader) = None;
            status
        }
    };
    let code = status.map_or(128, exit_code);
    lock(&process.attachers).clear();
    process.exit.send_replace(Some(Exit {
        code,
        finished: Timestamp::now(),
        out_of_memory: process.out_of_memory.load(Ordering::Relaxed),
    }));
}

/// Resolves once `pid` (a child of this process) has ended, without reaping
/// it: a pidfd where the kernel has them, else `waitid` with `WNOWAIT` on a
/// blocking thread.
async fn exited_unreaped(pid: u32) -> std::io::Result<()> {
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    use std::os::fd::{FromRawFd as _, OwnedFd};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
    // SAFETY: pidfd_open takes a pid and flags and returns a new
    // descriptor or -1; nothing else is touched.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid, 0) };
    if let Ok(fd) = i32::try_from(fd)
        && fd >= 0
    {
        // SAFETY: the descriptor was just returned to us and is owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the AsyncFd owns the descriptor, which nothing replaces
        // or closes while it is registered.
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)?
        };
        let _ready = fd.readable().await?;
        return Ok(());
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).map_err(std::io::Error::other)?);
    tokio::task::spawn_blocking(move || waitid(Id::Pid(pid), flags))
        .await
        .map_err(std::io::Error::other)?
        .map(drop)
        .map_err(std::io::Error::from)
}

/// Exit code as a container runtime reports it: 128 + signal when killed.
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(128)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(args: Vec<String>) -> Launch {
        Launch {
            program: "/bin/sh".into(),
            args,
            env: Vec::new(),
            cwd: None,
            status: None,
        }
    }

    async fn collect_until(rx: &mut mpsc::Receiver<Output>, needle: &str) -> String {
        let mut out = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !String::from_utf8_lossy(&out).contains(needle) {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(chunk)) => out.extend_from_slice(&chunk.data),
                _ => break,
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn attachers_share_one_terminal_without_replay() {
        let args = vec![
            "-c".into(),
            "echo before; read x; echo got-$x; read y".into(),
        ];
        let p = ContainerProcess::start(sh(args), Size::DEFAULT).unwrap();
        // Wait for the early output to land in the log before anyone attaches.
        let mut updates = p.log_updates();
        while !p
            .log_since(0)
            .0
            .iter()
            .any(|r| r.data.starts_with(b"before"))
        {
            updates.changed().await.unwrap();
        }
        let mut a = p.attach();
        let mut b = p.attach();
        assert_eq!(p.attached(), 2);
        p.write_input(b"shared\r").await.unwrap();
        let seen_a = collect_until(&mut a, "got-shared").await;
        let seen_b = collect_until(&mut b, "got-shared").await;
        assert!(seen_a.contains("got-shared") && seen_b.contains("got-shared"));
        assert!(
            !seen_a.contains("before"),
            "attach must not replay: {seen_a:?}"
        );
        drop(a);
        p.write_input(b"bye\r").await.unwrap();
        assert_eq!(p.wait().await.code, 0);
        let log: Vec<u8> = p
            .log_since(0)
            .0
            .iter()
            .flat_map(|r| r.data.to_vec())
            .collect();
        let log = String::from_utf8_lossy(&log);
        assert!(
            log.contains("before") && log.contains("got-shared"),
            "{log:?}"
        );
    }

    #[tokio::test]
    async fn exit_code_and_signals_are_reported_like_a_runtime() {
        let args = vec!["-c".into(), "exit 3".into()];
        let p = ContainerProcess::start(sh(args), Size::DEFAULT).unwrap();
        assert_eq!(p.wait().await.code, 3);

        let args = vec!["-c".into(), "sleep 30".into()];
        let p = ContainerProcess::start(sh(args), Size::DEFAULT).unwrap();
        p.kill();
        assert_eq!(p.wait().await.code, 128 + 9);
    }

    /// When the leader ends, what it left running in its group ends too
    /// (as in a container's PID namespace), and the leader is reaped only
    /// then: a later `kill` has no id left to signal, since the id may be
    /// another process's by then.
    #[tokio::test]
    async fn a_leaders_end_takes_its_group_and_then_nothing_is_signalled() {
        let args = vec!["-c".into(), "sleep 60 & echo $!".into()];
        let p = ContainerProcess::start_piped(sh(args), false).unwrap();
        assert_eq!(p.wait().await.code, 0);
        assert_eq!(*lock(&p.leader), None, "reaped, so forgotten");
        let log: String = p
            .log_since(0)
            .0
            .iter()
            .map(|r| String::from_utf8_lossy(&r.data).into_owned())
            .collect();
        let sleeper: u32 = log.trim().parse().expect("the background pid");
        let ended = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                stat.rsplit(") ").next().is_some_and(|s| s.starts_with('Z'))
            })
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !ended(sleeper) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(ended(sleeper), "the background sleep {sleeper} was killed");
    }

    #[tokio::test]
    async fn log_records_split_at_line_ends() {
        let args = vec!["-c".into(), "printf 'a\\nb\\npartial'".into()];
        let p = ContainerProcess::start(sh(args), Size::DEFAULT).unwrap();
        p.wait().await;
        let (records, next) = p.log_since(0);
        let texts: Vec<_> = records
            .iter()
            .map(|r| String::from_utf8_lossy(&r.data).into_owned())
            .collect();
        let joined = texts.concat();
        assert_eq!(joined, "a\r\nb\r\npartial");
        assert!(records[0].starts_line);
        assert_eq!(next, records.len() as u64);
        assert!(records.iter().filter(|r| r.starts_line).count() >= 3);
    }

    #[tokio::test]
    async fn without_a_terminal_stdout_and_stderr_stay_apart_and_lines_are_not_translated() {
        let args = vec!["-c".into(), "read x; echo out-$x; echo err >&2".into()];
        let p = ContainerProcess::start_piped(sh(args), true).unwrap();
        assert!(!p.tty());
        let mut attached = p.attach();
        p.write_input(b"in\n").await.unwrap();
        assert_eq!(p.wait().await.code, 0);
        let mut seen = Vec::new();
        while let Ok(chunk) = attached.try_recv() {
            seen.push((
                chunk.stream,
                String::from_utf8_lossy(&chunk.data).into_owned(),
            ));
        }
        assert!(
            seen.contains(&(Stream::Stdout, "out-in\n".into())),
            "{seen:?}"
        );
        assert!(seen.contains(&(Stream::Stderr, "err\n".into())), "{seen:?}");
        let (records, _) = p.log_since(0);
        let of = |stream| -> String {
            records
                .iter()
                .filter(|r| r.stream == stream)
                .map(|r| String::from_utf8_lossy(&r.data).into_owned())
                .collect()
        };
        assert_eq!(of(Stream::Stdout), "out-in\n", "no echo, no CRLF");
        assert_eq!(of(Stream::Stderr), "err\n");
    }
}

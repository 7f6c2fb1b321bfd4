//! The attach: what the container wrote before it (from its log), then
//! its stream, podbay's input and resizes into it, the user's terminal
//! restored however it ends, and the container's final state; and
//! `--reuse -- CMD`'s exec.

use super::*;

/// Attaches: first prints what the container wrote before the attach (from
/// its log), then streams, so nothing it printed is lost. With a terminal
/// everything is one stream on `out`; without one, the container's stderr
/// goes to `err`.
pub(in crate::commands) async fn attach(
    client: &kube::Client,
    job: &Job<'_>,
    name: &str,
    stream: Stream,
    sinks: Sinks<'_>,
) -> Result<Option<SessionEnd>, Failure> {
    let args = job.args;
    let Sinks { out, err } = sinks;
    let raw = stream.tty && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let (events_tx, mut events) = mpsc::channel(256);
    let spec = session_spec(job, name, SessionKind::Attach, stream);
    let (input, inputs) = mpsc::unbounded_channel();
    // Connecting and reading what it printed before get --timeout of their
    // own: the container is running, this is a new step.
    let deadline = tokio::time::Instant::now() + args.timeout;
    let session = answered("the attach", args.timeout, deadline, async {
        match session::open(client.clone(), spec, inputs, events_tx).await {
            Ok(s) => Ok(Some(s)),
            // Exited before we could attach: its whole output is in the log.
            Err(kube::Error::Api(status)) if status.code == 400 => Ok(None),
            Err(e) => Err(classify(&e)),
        }
    })
    .await?;
    let at = ContainerRef {
        namespace: &job.namespace,
        pod: &job.pod,
        container: name,
    };
    let first = answered(
        "the read of the debug container's log",
        args.timeout,
        deadline,
        async { Ok(replay(client, at, stream.tty, &mut events).await) },
    )
    .await?;
    // What the container's output leaves on in the user's terminal.
    let mut modes = Modes::default();
    modes.observe(&first.out.log);
    modes.observe(&first.out.after);
    for (sink, stream) in [(&mut *out, &first.out), (&mut *err, &first.err)] {
        let _ = sink.write_all(&stream.log);
        let _ = sink.write_all(&stream.after);
        let _ = sink.flush();
    }
    // Kept until the end: dropping it ends the stream.
    let Some(_session) = session.filter(|_| first.end.is_none()) else {
        return Ok(first.end);
    };

    let raw_guard = if raw { RawMode::enable(modes) } else { None };
    Ok(pump(job, stream, input, events, raw_guard, out, err).await)
}

/// How podbay's stream to a container is opened.
#[derive(Debug, Clone, Copy)]
pub(in crate::commands) struct Stream {
    pub tty: bool,
    pub stdin: bool,
}

impl Stream {
    /// As the command line asks.
    pub fn asked(args: &DebugArgs) -> Stream {
        Stream {
            tty: args.tty,
            stdin: args.interactive,
        }
    }
}

fn session_spec(job: &Job<'_>, name: &str, kind: SessionKind, stream: Stream) -> SessionSpec {
    let size =
        crossterm::terminal::size().map_or(Size::DEFAULT, |(cols, rows)| Size::new(cols, rows));
    SessionSpec {
        namespace: job.namespace.clone(),
        pod: job.pod.clone(),
        container: name.to_string(),
        kind,
        size,
        keepalive: Some(session::DEFAULT_KEEPALIVE),
        tty: stream.tty,
        stdin: stream.stdin,
    }
}

/// Feeds the session podbay's input (and, raw, its resizes) and writes
/// what comes back until it ends.
async fn pump(
    job: &Job<'_>,
    stream: Stream,
    input: mpsc::UnboundedSender<SessionInput>,
    mut events: mpsc::Receiver<SessionEvent>,
    mut raw_guard: Option<RawMode>,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
) -> Option<SessionEnd> {
    if stream.stdin {
        match &job.input {
            // Read once for every pod: given whole, then closed.
            Some(given) => {
                let _ = input.send(SessionInput::Data(given.clone()));
                let _ = input.send(SessionInput::CloseStdin);
            }
            None => {
                tokio::spawn(forward_stdin(input.clone()));
            }
        }
    }
    if raw_guard.is_some() {
        tokio::spawn(forward_resizes(input));
    }
    while let Some(event) = events.recv().await {
        let (sink, chunk): (&mut (dyn Write + Send), _) = match event {
            SessionEvent::Output(chunk) => {
                if let Some(guard) = raw_guard.as_mut() {
                    guard.modes.observe(&chunk);
                }
                (&mut *out, chunk)
            }
            SessionEvent::Stderr(chunk) => (&mut *err, chunk),
            SessionEvent::Ended(end) => return Some(end),
            // The user's own terminal shows what it shows; --timeout and
            // the keepalive end a dead stream.
            SessionEvent::Unanswered(_) => continue,
        };
        let _ = sink.write_all(&chunk);
        let _ = sink.flush();
    }
    None
}

/// `--reuse -- COMMAND`: the command runs in the reused container, as
/// kubectl exec runs it (the shell there is someone's session: never
/// typed into), and its exit code is podbay's.
pub(super) async fn exec_in(
    client: &kube::Client,
    job: &Job<'_>,
    name: &str,
    stream: Stream,
    sinks: Sinks<'_>,
) -> Result<Finished, Failure> {
    let args = job.args;
    let Sinks { out, err } = sinks;
    let raw = stream.tty && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let (events_tx, events) = mpsc::channel(256);
    let spec = session_spec(job, name, SessionKind::Exec(args.command.clone()), stream);
    let (input, inputs) = mpsc::unbounded_channel();
    let deadline = tokio::time::Instant::now() + args.timeout;
    let _session = answered("the exec", args.timeout, deadline, async {
        session::open(client.clone(), spec, inputs, events_tx)
            .await
            .map_err(|e| classify(&e))
    })
    .await?;
    let raw_guard = if raw {
        RawMode::enable(Modes::default())
    } else {
        None
    };
    let end = pump(job, stream, input, events, raw_guard, out, err).await;
    let command = args.command.join(" ");
    match end {
        Some(SessionEnd {
            exit_code: Some(code),
            ..
        }) => Ok(Finished {
            container: name.to_string(),
            exit_code: code,
            status: None,
        }),
        Some(end) if end.disconnected => Err(fail(
            exit::CUT,
            format!(
                "The connection to {command:?} in debug container {name} was cut ({}); it may still run there.",
                end.reason.as_str().trim_start_matches("disconnected: ")
            ),
        )),
        Some(end) => Err(fail(
            exit::STREAM_FAILED,
            format!(
                "{command:?} in debug container {name}: {}.",
                end.reason.as_str()
            ),
        )),
        None => Err(fail(
            exit::CUT,
            format!(
                "The exec of {command:?} in debug container {name} ended without its exit code."
            ),
        )),
    }
}

/// Forwards podbay's stdin; its end closes the container's stdin (which
/// the process sees when its spec has `stdinOnce`, as a piped one's has).
async fn forward_stdin(input: mpsc::UnboundedSender<SessionInput>) {
    let mut stdin = tokio::io::stdin();
    let mut buf = vec![0u8; 4096];
    while let Ok(n) = stdin.read(&mut buf).await {
        if n == 0 {
            let _ = input.send(SessionInput::CloseStdin);
            break;
        }
        if input
            .send(SessionInput::Data(Bytes::copy_from_slice(&buf[..n])))
            .is_err()
        {
            break;
        }
    }
}

async fn forward_resizes(input: mpsc::UnboundedSender<SessionInput>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut winch) = signal(SignalKind::window_change()) else {
        return;
    };
    while winch.recv().await.is_some() {
        if let Ok((cols, rows)) = crossterm::terminal::size()
            && input
                .send(SessionInput::Resize(Size::new(cols, rows)))
                .is_err()
        {
            break;
        }
    }
}

/// Restores the user's terminal when dropped, however the attach ends:
/// the modes the container's output left on (alternate screen, mouse,
/// bracketed paste, hidden cursor, …) are turned off, then cooked mode.
struct RawMode {
    modes: Modes,
}

impl RawMode {
    fn enable(modes: Modes) -> Option<Self> {
        crossterm::terminal::enable_raw_mode()
            .ok()
            .map(|_| RawMode { modes })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let mut out = std::io::stdout();
        let _ = out.write_all(&self.modes.restore());
        let _ = out.flush();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Final state: the container's exit code when it has ended (from the
/// pod, else from the stream's `Failure` status), else 0; exit 75 when the
/// stream was cut while the container runs on.
pub(in crate::commands) async fn final_state(
    pods: &Api<Pod>,
    job: &Job<'_>,
    name: &str,
    end: Option<SessionEnd>,
) -> Result<Finished, Failure> {
    let args = job.args;
    // The attach stream can end a moment before the kubelet reports the exit.
    let mut status = None;
    let deadline = tokio::time::Instant::now() + args.timeout;
    for _ in 0..20 {
        let pod = answered(
            "the read of the pod's final status",
            args.timeout,
            deadline,
            async { Ok(crate::cluster::objects::get(pods, &job.pod).await) },
        )
        .await?
        .map_err(|e| api_failure(&e, &job.pod, &job.namespace))?;
        // A debug container, or a debug pod's (node, copy) own container.
        status = pod.status.and_then(|s| {
            s.ephemeral_container_statuses
                .into_iter()
                .chain(s.container_statuses)
                .flatten()
                .find(|s| s.name == name)
        });
        let running = status
            .as_ref()
            .and_then(|s| s.state.as_ref())
            .is_some_and(|s| s.running.is_some());
        // A copy's container that its pod restarted runs again: the run
        // started has ended.
        let restarted = status.as_ref().is_some_and(|s| s.restart_count > 0);
        if !running || restarted || args.no_attach {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let terminated = status
        .as_ref()
        .and_then(crate::model::container_state::ended_run_exit_code);
    let from_stream = end.as_ref().and_then(|e| e.exit_code).filter(|c| *c != 0);
    if let Some(end) = end
        .as_ref()
        .filter(|e| e.disconnected && terminated.is_none())
        && !args.no_attach
    {
        let (pod, namespace) = (&job.pod, &job.namespace);
        return Err(fail(
            exit::CUT,
            format!(
                "The connection to debug container {name} was cut ({}); it is still running. \
                 Attach again with `kubectl attach -it {pod} -c {name} -n {namespace}`.",
                end.reason.trim_start_matches("disconnected: ")
            ),
        ));
    }
    // A Failure without an exit code is the server's error, not a success.
    if let Some(end) = end
        .as_ref()
        .filter(|e| !e.disconnected && e.exit_code.is_none())
        && terminated.is_none()
        && !args.no_attach
    {
        return Err(fail(
            exit::STREAM_FAILED,
            format!(
                "The attach to debug container {name} ended with an error and no exit code ({}).",
                end.reason.trim_start_matches("failed: ")
            ),
        ));
    }
    Ok(Finished {
        container: name.to_string(),
        exit_code: terminated.or(from_stream).unwrap_or(0),
        status,
    })
}

//! The TUI runtime: owns the terminal and the I/O tasks, feeds `App` one
//! event channel, carries out its effects, and redraws when something
//! changed (bursts coalesced, at most 60 frames a second). Idle, it sleeps.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Event as KubeEvent, Namespace, Pod};
use kube::api::{Api, LogParams};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::app::keymap::Keymap;
use crate::app::{App, AppOptions, Effect, Event, Scope};
use crate::cluster::client::{Connection, PluginTerminal, Target};
use crate::cluster::debug::DebugSpec;
use crate::cluster::feed::{self, Feed};
use crate::cluster::session::{
    self, SessionEnd, SessionEvent, SessionInput, SessionKind, SessionSpec,
};
use crate::model::pod_security::Policy;
use crate::model::text::sanitize;
use crate::model::{ClusterId, EventRow, PodDetail, PodKey, PodRow, TerminalKey};
use crate::term::Size;
use crate::term::record::Recorder;
use crate::terminal::{self, TerminalGuard};
use crate::theme::Theme;
use connect::{connect_and_probe, connect_before_the_screen};

pub struct TuiOptions {
    pub target: Target,
    pub all_namespaces: bool,
    pub namespace: Option<String>,
    pub fallback_namespaces: Vec<String>,
    pub keymap: Keymap,
    pub theme: Theme,
    pub debug_images: Vec<String>,
    pub debug_profile: crate::cluster::debug::Profile,
    /// Where launched images are remembered for the launcher.
    pub image_history: Option<std::path::PathBuf>,
    pub panes: crate::app::PaneOptions,
    /// How often session streams are pinged.
    pub keepalive: Option<Duration>,
    /// Where `:record` writes its files.
    pub recordings: std::path::PathBuf,
    /// A sentence for the status line at start (the demo's fallback).
    pub notice: Option<String>,
}

mod connect;
mod log_pane;
mod outbox;

const FRAME: Duration = Duration::from_millis(16);
/// How long a one-off read (a namespace's labels) may take before podbay
/// goes on without it.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Output parsed per session per loop turn: small enough that a flood
/// cannot delay a keystroke's echo in another pane by more than a few
/// milliseconds, large enough to keep up with a fast producer.
const OUTPUT_BUDGET: usize = 32 * 1024;
/// How long after a key its echo counts as urgent.
const ECHO_WINDOW: Duration = Duration::from_millis(150);

/// Connects, checks the server answers, then runs the TUI until quit.
/// Errors before the TUI starts are one sentence for stderr.
pub async fn run(mut options: TuiOptions) -> anyhow::Result<()> {
    let connection = connect_before_the_screen(&options.target).await?;
    // From here on the screen and the keyboard are the TUI's: also for `:ctx`.
    options.target.plugins = PluginTerminal::Withheld;
    let namespace = options
        .namespace
        .clone()
        .unwrap_or_else(|| connection.namespace.clone());
    let (mut app, effects) = App::new(AppOptions {
        cluster: connection.cluster(),
        context: connection.context.clone(),
        contexts: connection.contexts.clone(),
        namespace,
        all_namespaces: options.all_namespaces,
        fallback_namespaces: options.fallback_namespaces.clone(),
        keymap: options.keymap.clone(),
        now: jiff::Timestamp::now(),
        debug_images: options.debug_images.clone(),
        debug_profile: options.debug_profile,
        panes: options.panes.clone(),
    });
    if let Some(notice) = options.notice.take() {
        app.message = Some(crate::app::warning(notice));
    }

    let guard = TerminalGuard::enter().context("cannot put the terminal in full-screen mode")?;
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))
        .context("cannot draw on this terminal")?;
    if let Ok(size) = terminal.size() {
        app.update(Event::Resize(size.width, size.height));
    }
    let (tx, mut rx) = mpsc::channel::<Tagged>(4096);
    let (connected_tx, mut connected) = mpsc::channel::<Connection>(1);
    let (outboxes, mut ready) = outbox::Outboxes::new();
    let mut tasks = Tasks::new(connection, options.target.clone(), tx.clone(), connected_tx);
    tasks.outboxes = outboxes;
    tasks.image_history = options.image_history.clone();
    tasks.keepalive = options.keepalive;
    tasks.recordings = options.recordings.clone();
    tasks.watch_namespaces();
    for effect in effects {
        tasks.run(effect);
    }

    let mut input = EventStream::new();
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let stop = terminal::termination();
    tokio::pin!(stop);
    let mut dirty = true;
    let mut last_frame = tokio::time::Instant::now() - FRAME;
    let theme = options.theme;
    // When the focused terminal answers a key just typed, its echo is
    // drawn at once instead of at the next frame boundary.
    let mut last_key = tokio::time::Instant::now() - ECHO_WINDOW;
    let mut echo_due = false;
    let panic_key = test_panic_key();
    loop {
        let hush_ends = tasks.outboxes.hush_ends();
        let since_frame = last_frame.elapsed();
        if dirty && (echo_due || since_frame >= FRAME) {
            terminal
                .draw(|f| crate::ui::draw(f, &app, &theme))
                .context("drawing failed")?;
            if echo_due {
                tracing::debug!(target: "podbay::echo", "echo drawn {} µs after the key", last_key.elapsed().as_micros());
            }
            last_frame = tokio::time::Instant::now();
            dirty = false;
            echo_due = false;
        }
        let redraw_in = FRAME.saturating_sub(last_frame.elapsed());
        // Keys first: they must never wait behind output.
        let event = tokio::select! {
            biased;
            _ = &mut stop => break,
            Some(Ok(term)) = input.next() => match term {
                TermEvent::Key(k) if k.kind != KeyEventKind::Release => Some(Event::Key(k)),
                TermEvent::Mouse(m) => Some(Event::Mouse(m)),
                TermEvent::Paste(text) => Some(Event::Paste(text)),
                TermEvent::Resize(w, h) => Some(Event::Resize(w, h)),
                _ => None,
            },
            Some(tagged) = rx.recv() => tasks.current(tagged),
            Some(connection) = connected.recv() => {
                let event = Event::Connected {
                    cluster: connection.cluster(),
                    context: connection.context.clone(),
                    namespace: connection.namespace.clone(),
                    contexts: connection.contexts.clone(),
                };
                tasks.replace_connection(connection);
                Some(event)
            }
            Some(id) = ready.recv() => {
                tasks.outboxes.mark_ready(id);
                None
            }
            _ = ticks.tick() => Some(Event::Tick(jiff::Timestamp::now())),
            () = std::future::ready(()), if tasks.outboxes.has_ready() => None,
            _ = tokio::time::sleep_until(hush_ends.unwrap_or_else(tokio::time::Instant::now)), if hush_ends.is_some() => None,
            _ = tokio::time::sleep(redraw_in), if dirty => None,
        };
        if let Some(Event::Key(key)) = &event
            && panic_key.is_some_and(|c| key.code == crossterm::event::KeyCode::Char(c))
        {
            if std::env::var_os("PODBAY_TEST_PANIC_IN_TASK").is_some() {
                tokio::spawn(async {
                    panic!("test-only panic in a task, asked for by PODBAY_TEST_PANIC_KEY")
                });
            } else {
                panic!("test-only panic, asked for by PODBAY_TEST_PANIC_KEY");
            }
        }
        // A key for a pane: until its echo is back, the other panes wait.
        if matches!(event, Some(Event::Key(_) | Event::Paste(_)))
            && app.focus == crate::app::Focus::Workspace
            && let Some(slot) = app.workspace.focused_slot()
        {
            tasks.outboxes.await_echo(slot.terminal);
        }
        let mut pending: Vec<Event> = event.into_iter().collect();
        // Coalesce a burst (a relist, a flood of events) into one frame.
        while pending.len() < 512 {
            match rx.try_recv() {
                Ok(tagged) => pending.extend(tasks.current(tagged)),
                Err(_) => break,
            }
        }
        while let Ok(id) = ready.try_recv() {
            tasks.outboxes.mark_ready(id);
        }
        pending.extend(tasks.outboxes.take(OUTPUT_BUDGET));
        if pending.is_empty() {
            continue;
        }
        dirty = true;
        if pending
            .iter()
            .any(|e| matches!(e, Event::Key(_) | Event::Paste(_)))
        {
            last_key = tokio::time::Instant::now();
        }
        if last_key.elapsed() < ECHO_WINDOW {
            let focused = app.workspace.focused_slot().map(|p| p.terminal);
            echo_due |= pending
                .iter()
                .any(|e| matches!(e, Event::SessionOutput { id, .. } if Some(*id) == focused));
        }
        for event in pending {
            if let Event::SessionOutput { id, bytes } = &event {
                tasks.record(*id, bytes);
            }
            for effect in app.update(event) {
                match effect {
                    Effect::Copy(text) => {
                        if let Err(e) = copy_to_clipboard(terminal.backend_mut(), &text) {
                            tracing::warn!("cannot write to the terminal: {e}");
                        }
                    }
                    effect => tasks.run(effect),
                }
            }
        }
        if app.quitting {
            break;
        }
    }
    tasks.stop_all();
    drop(terminal);
    drop(guard);
    Ok(())
}

/// Debug builds only: the key on which to panic (in the UI loop, or in a
/// task with `PODBAY_TEST_PANIC_IN_TASK` set), so end-to-end tests can
/// check that a panic restores the user's terminal and ends podbay.
fn test_panic_key() -> Option<char> {
    if !cfg!(debug_assertions) {
        return None;
    }
    std::env::var("PODBAY_TEST_PANIC_KEY").ok()?.chars().next()
}

/// Asks the user's own terminal to put `text` on the clipboard (OSC 52).
/// Only ever done at the user's request, from copy mode.
fn copy_to_clipboard(out: &mut impl std::io::Write, text: &str) -> std::io::Result<()> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}

/// Which watch an update came from. Updates already queued when a watch is
/// replaced (after `:ns`, `:ctx`, or leaving a pod) must not reach the app.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Pods,
    Pod,
    Namespaces,
    Other,
}

struct Tagged {
    source: Source,
    generation: u64,
    event: Event,
}

impl Tagged {
    /// An update that is not tied to a replaceable watch.
    fn untied(event: Event) -> Tagged {
        Tagged {
            source: Source::Other,
            generation: 0,
            event,
        }
    }
}

/// The I/O tasks the app's effects start and stop.
struct Tasks {
    /// The browser's connection: watches and new terminals use it.
    connection: Connection,
    /// Every cluster connected to in this run: a terminal's session, its
    /// pod watch and its re-attaches always use the client of the cluster
    /// it was opened on, whatever the browser shows now.
    clients: std::collections::HashMap<ClusterId, kube::Client>,
    target: Target,
    tx: mpsc::Sender<Tagged>,
    generations: [u64; 3],
    connected: mpsc::Sender<Connection>,
    pods: Vec<JoinHandle<()>>,
    pod: Vec<JoinHandle<()>>,
    namespaces: Option<JoinHandle<()>>,
    connecting: Option<JoinHandle<()>>,
    sessions: std::collections::HashMap<u64, SessionTask>,
    /// Each terminal's own pod watch (detail and events).
    followers: std::collections::HashMap<u64, Vec<JoinHandle<()>>>,
    recorders: std::collections::HashMap<u64, Recorder>,
    outboxes: outbox::Outboxes,
    image_history: Option<std::path::PathBuf>,
    keepalive: Option<Duration>,
    recordings: std::path::PathBuf,
    /// Where each followed log pane got to in each container, for `r`.
    log_resume: std::collections::HashMap<(u64, String), log_pane::Resume>,
}

/// A terminal session's task and the way to talk to it.
struct SessionTask {
    input: mpsc::UnboundedSender<SessionInput>,
    task: JoinHandle<()>,
}

impl Tasks {
    fn new(
        connection: Connection,
        target: Target,
        tx: mpsc::Sender<Tagged>,
        connected: mpsc::Sender<Connection>,
    ) -> Self {
        Tasks {
            clients: std::collections::HashMap::from([(
                connection.cluster(),
                connection.client.clone(),
            )]),
            connection,
            target,
            tx,
            generations: [0; 3],
            connected,
            pods: Vec::new(),
            pod: Vec::new(),
            namespaces: None,
            connecting: None,
            sessions: std::collections::HashMap::new(),
            followers: std::collections::HashMap::new(),
            recorders: std::collections::HashMap::new(),
            outboxes: outbox::Outboxes::new().0,
            image_history: None,
            keepalive: Some(session::DEFAULT_KEEPALIVE),
            recordings: std::env::temp_dir(),
            log_resume: std::collections::HashMap::new(),
        }
    }

    fn slot(source: Source) -> Option<usize> {
        match source {
            Source::Pods => Some(0),
            Source::Pod => Some(1),
            Source::Namespaces => Some(2),
            Source::Other => None,
        }
    }

    /// Starts a new generation of `source`'s watch; older updates become stale.
    fn next_generation(&mut self, source: Source) -> u64 {
        match Self::slot(source) {
            Some(i) => {
                self.generations[i] += 1;
                self.generations[i]
            }
            None => 0,
        }
    }

    /// The event, unless it comes from a watch that has been replaced.
    fn current(&self, tagged: Tagged) -> Option<Event> {
        match Self::slot(tagged.source) {
            Some(i) if self.generations[i] != tagged.generation => None,
            _ => Some(tagged.event),
        }
    }

    fn run(&mut self, effect: Effect) {
        match effect {
            Effect::Quit => {}
            Effect::RememberImage(image) => {
                // A file read and write: off the UI loop.
                if let Some(path) = self.image_history.clone() {
                    tokio::task::spawn_blocking(move || {
                        if let Err(e) = crate::config::remember_image(&path, &image) {
                            tracing::warn!(
                                "cannot record the image history in {}: {e}",
                                path.display()
                            );
                        }
                    });
                }
            }
            Effect::WakeAfter { after, token } => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(after).await;
                    let _ = tx.send(Tagged::untied(Event::Wake(token))).await;
                });
            }
            Effect::WatchPods(scope) => self.watch_pods(scope),
            Effect::WatchPod(key) => self.watch_pod(key),
            Effect::WatchEvents(scope) => self.watch_events(scope),
            Effect::DeletePod { cluster, pod } => self.delete_pod(&cluster, pod),
            Effect::StopWatchingPod => {
                self.next_generation(Source::Pod);
                abort(&mut self.pod);
            }
            Effect::SwitchContext(context) => self.switch_context(context),
            Effect::Launch { id, key, spec } => self.launch(id, key, spec),
            Effect::OpenSession {
                id,
                key,
                kind,
                size,
                replay_log,
            } => self.open_session(id, key, kind, size, replay_log),
            Effect::ShowLog {
                id,
                key,
                containers,
                previous,
                follow,
                options,
                fresh,
            } => {
                let read = log_pane::Read {
                    previous,
                    follow,
                    options,
                };
                self.show_log(id, key, containers, read, fresh)
            }
            Effect::SendInput { id, bytes } => self.send(id, SessionInput::Data(bytes)),
            Effect::ResizeSession { id, cols, rows } => {
                if let Some(recorder) = self.recorders.get_mut(&id)
                    && let Err(e) = recorder.resize(Size { cols, rows })
                {
                    tracing::warn!("recording: {e}");
                }
                self.send(id, SessionInput::Resize { cols, rows })
            }
            Effect::CloseSession { id } => {
                if let Some(s) = self.sessions.remove(&id) {
                    s.task.abort();
                }
                self.outboxes.close(id);
                self.log_resume.retain(|(pane, _), _| *pane != id);
                if let Some(mut handles) = self.followers.remove(&id) {
                    abort(&mut handles);
                }
                self.stop_recording(id);
            }
            Effect::Follow { id, key } => self.follow(id, key),
            Effect::Record {
                id,
                on,
                cols,
                rows,
                title,
            } => {
                let outcome = if on {
                    self.start_recording(id, Size { cols, rows }, &title)
                        .map(Some)
                } else {
                    self.stop_recording(id);
                    Ok(None)
                };
                let event = Tagged::untied(Event::Recording { id, outcome });
                let _ = self.tx.try_send(event);
            }
            // Written to the user's terminal by the loop that owns it.
            Effect::Copy(_) => {}
        }
    }

    /// Tees a terminal's output into its recording, if it has one.
    fn record(&mut self, id: u64, bytes: &[u8]) {
        let Some(recorder) = self.recorders.get_mut(&id) else {
            return;
        };
        if let Err(e) = recorder.output(bytes) {
            tracing::warn!("recording stopped: {e}");
            self.recorders.remove(&id);
            let failed = Event::Recording {
                id,
                outcome: Err(format!("Recording stopped: cannot write the file ({e}).")),
            };
            let _ = self.tx.try_send(Tagged::untied(failed));
        }
    }

    fn start_recording(&mut self, id: u64, size: Size, title: &str) -> Result<PathBuf, String> {
        let stamp = jiff::Zoned::now().strftime("%Y%m%d-%H%M%S");
        let name: String = title
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = self.recordings.join(format!("{stamp}-{name}-{id}.cast"));
        std::fs::create_dir_all(&self.recordings)
            .and_then(|()| Recorder::create(&path, size, "xterm-256color"))
            .map(|recorder| {
                self.recorders.insert(id, recorder);
                path.clone()
            })
            .map_err(|e| {
                format!(
                    "Cannot record to {}: {e}. Check that the state directory is writable.",
                    path.display()
                )
            })
    }

    fn stop_recording(&mut self, id: u64) {
        if let Some(recorder) = self.recorders.remove(&id)
            && let Err(e) = recorder.finish()
        {
            tracing::warn!("recording: {e}");
        }
    }

    /// The client of the cluster terminal `id` was opened on. If the app
    /// names a cluster the runtime never connected to (a bug), nothing is
    /// sent to whichever cluster is current: the terminal ends, saying so.
    fn client_of_terminal(&mut self, id: u64, cluster: &ClusterId) -> Option<kube::Client> {
        if let Some(client) = self.clients.get(cluster) {
            return Some(client.clone());
        }
        tracing::error!("no connection to context {}", cluster.context);
        let end = SessionEnd {
            exit_code: None,
            reason: format!(
                "no connection to context {} any more; open the pod again",
                cluster.context
            ),
            disconnected: false,
        };
        let _ = self
            .tx
            .try_send(Tagged::untied(Event::SessionEnded { id, end }));
        None
    }

    /// Watches the pod a terminal is on, so it can follow its container.
    fn follow(&mut self, id: u64, key: TerminalKey) {
        let Some(client) = self.client_of_terminal(id, &key.cluster) else {
            return;
        };
        let pod = key.pod;
        let by_name = feed::config().fields(&format!("metadata.name={}", pod.name));
        let detail = self.spawn_feed(
            Source::Other,
            0,
            Api::<Pod>::namespaced(client.clone(), &pod.namespace),
            by_name,
            None,
            PodDetail::from_pod,
            move |feed| Event::TerminalPod { id, feed },
        );
        let about = feed::config().fields(&format!(
            "involvedObject.name={},involvedObject.kind=Pod",
            pod.name
        ));
        let events = self.spawn_feed(
            Source::Other,
            0,
            Api::<KubeEvent>::namespaced(client, &pod.namespace),
            about,
            None,
            EventRow::from_event,
            move |feed| Event::TerminalEvents { id, feed },
        );
        if let Some(mut old) = self.followers.insert(id, vec![detail, events]) {
            abort(&mut old);
        }
    }

    fn send(&self, id: u64, input: SessionInput) {
        if let Some(s) = self.sessions.get(&id) {
            let _ = s.input.send(input);
        }
    }

    /// Adds the debug container; the pod view's watch reports how it comes up.
    fn launch(&mut self, id: u64, key: TerminalKey, spec: DebugSpec) {
        let Some(client) = self.client_of_terminal(id, &key.cluster) else {
            return;
        };
        let pod = key.pod;
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let event = match spec.launch(&client, &pod.namespace, &pod.name).await {
                Ok(launched) if launched.warnings.is_empty() => return,
                Ok(launched) => Event::LaunchWarned {
                    id,
                    warnings: launched
                        .warnings
                        .iter()
                        .map(|w| sanitize(w).into_owned())
                        .collect(),
                },
                Err(e) => {
                    let (_, sentence) =
                        crate::cluster::debug::describe_launch_error(&e, &pod.namespace, &pod.name);
                    let refused_by = match &e {
                        kube::Error::Api(status) if status.code == 403 => {
                            Policy::from_refusal(&status.message)
                        }
                        _ => None,
                    };
                    Event::LaunchFailed {
                        id,
                        sentence: sanitize(&sentence).into_owned(),
                        refused_by,
                    }
                }
            };
            let _ = tx.send(Tagged::untied(event)).await;
        });
    }

    fn open_session(
        &mut self,
        id: u64,
        key: TerminalKey,
        kind: SessionKind,
        size: (u16, u16),
        replay_log: bool,
    ) {
        let Some(client) = self.client_of_terminal(id, &key.cluster) else {
            return;
        };
        let TerminalKey { pod, container, .. } = key;
        let outbox = self.outboxes.open(id);
        let keepalive = self.keepalive;
        let (input, mut inputs) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let forward = |event: Event| {
                let outbox = outbox.clone();
                async move { outbox.send(event).await }
            };
            let spec = SessionSpec {
                namespace: pod.namespace.to_string(),
                pod: pod.name.to_string(),
                container: container.clone(),
                kind,
                size,
                keepalive,
                tty: true,
                stdin: true,
            };
            // A few chunks in flight: a flood waits at its source.
            let (events_tx, mut events) = mpsc::channel(4);
            let session = match session::open(client.clone(), spec, events_tx).await {
                Ok(s) => s,
                Err(e) => {
                    let (sentence, _) = crate::cluster::errors::describe(&e);
                    let end = SessionEnd {
                        exit_code: None,
                        reason: format!("could not connect: {}", sentence.trim_end_matches('.')),
                        disconnected: true,
                    };
                    forward(Event::SessionEnded { id, end }).await;
                    return;
                }
            };
            let mut ended = None;
            if replay_log {
                // What the container printed before we attached is only in its log.
                let pods: Api<Pod> = Api::namespaced(client, &pod.namespace);
                let params = LogParams {
                    container: Some(container.clone()),
                    ..Default::default()
                };
                let log = pods.logs(&pod.name, &params).await.unwrap_or_default();
                let mut early = session::drain_early(&mut events);
                early.out.append(&mut early.err);
                let mut first = for_terminal(&log);
                let skip = session::overlap(log.as_bytes(), &early.out);
                first.extend_from_slice(&early.out[skip..]);
                if !forward(Event::SessionOutput {
                    id,
                    bytes: first.into(),
                })
                .await
                {
                    return;
                }
                ended = early.end;
            }
            if !forward(Event::SessionAttached { id }).await {
                return;
            }
            // It ended while its log was read: nothing more will come.
            if let Some(end) = ended {
                forward(Event::SessionEnded { id, end }).await;
                session.detach();
                return;
            }
            loop {
                tokio::select! {
                    event = events.recv() => match event {
                        Some(SessionEvent::Output(bytes) | SessionEvent::Stderr(bytes)) => {
                            if !forward(Event::SessionOutput { id, bytes }).await {
                                break;
                            }
                        }
                        Some(SessionEvent::Ended(end)) => {
                            forward(Event::SessionEnded { id, end }).await;
                            break;
                        }
                        None => break,
                    },
                    input = inputs.recv() => match input {
                        Some(i) => {
                            let _ = session.input.send(i);
                        }
                        None => break,
                    },
                }
            }
            session.detach();
        });
        if let Some(old) = self.sessions.insert(id, SessionTask { input, task }) {
            old.task.abort();
        }
    }

    fn show_log(
        &mut self,
        id: u64,
        key: TerminalKey,
        containers: Vec<String>,
        read: log_pane::Read,
        fresh: bool,
    ) {
        let Some(client) = self.client_of_terminal(id, &key.cluster) else {
            return;
        };
        let TerminalKey { pod, container, .. } = key;
        let pods: Api<Pod> = Api::namespaced(client, &pod.namespace);
        let outbox = self.outboxes.open(id);
        let (input, _) = mpsc::unbounded_channel();
        if fresh {
            self.log_resume.retain(|(pane, _), _| *pane != id);
        }
        // Each container's stream resumes after its own last line; a
        // previous run's log is read whole.
        let mut resume = |container: &str| {
            if read.previous {
                log_pane::Resume::default()
            } else {
                self.log_resume
                    .entry((id, container.to_string()))
                    .or_default()
                    .clone()
            }
        };
        let sources: Vec<log_pane::Source> = if containers.is_empty() {
            vec![log_pane::Source::alone(&container, resume(&container))]
        } else {
            let width = containers
                .iter()
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0);
            containers
                .iter()
                .enumerate()
                .map(|(i, c)| log_pane::Source::prefixed(c, i, width, resume(c)))
                .collect()
        };
        let task = tokio::spawn(log_pane::run_all(
            id,
            pods,
            pod.name.to_string(),
            sources,
            read,
            outbox,
        ));
        if let Some(old) = self.sessions.insert(id, SessionTask { input, task }) {
            old.task.abort();
        }
    }

    /// Runs a feed, forwarding its updates to the app as `wrap(update)`.
    #[allow(clippy::too_many_arguments)]
    fn spawn_feed<K, R>(
        &self,
        source: Source,
        generation: u64,
        api: Api<K>,
        config: kube::runtime::watcher::Config,
        scope: Option<String>,
        project: fn(&K) -> R,
        wrap: impl Fn(Feed<R>) -> Event + Send + Sync + 'static,
    ) -> JoinHandle<()>
    where
        K: kube::Resource
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug
            + Send
            + Sync
            + 'static,
        R: Send + 'static,
    {
        let (feed_tx, mut feed_rx) = feed::channel();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let watcher = feed::run(api, config, scope, project, feed_tx);
            let forward = async {
                while let Some(update) = feed_rx.recv().await {
                    let tagged = Tagged {
                        source,
                        generation,
                        event: wrap(update),
                    };
                    if tx.send(tagged).await.is_err() {
                        break;
                    }
                }
            };
            tokio::join!(watcher, forward);
        })
    }

    fn watch_pods(&mut self, scope: Scope) {
        abort(&mut self.pods);
        let generation = self.next_generation(Source::Pods);
        let client = self.connection.client.clone();
        match scope {
            Scope::All => {
                let handle = self.spawn_feed(
                    Source::Pods,
                    generation,
                    Api::<Pod>::all(client),
                    feed::config(),
                    None,
                    PodRow::from_pod,
                    Event::Pods,
                );
                self.pods.push(handle);
            }
            Scope::Namespaces(list) => {
                for ns in list {
                    let api = Api::<Pod>::namespaced(client.clone(), &ns);
                    let handle = self.spawn_feed(
                        Source::Pods,
                        generation,
                        api,
                        feed::config(),
                        Some(ns),
                        PodRow::from_pod,
                        Event::Pods,
                    );
                    self.pods.push(handle);
                }
            }
        }
    }

    fn watch_pod(&mut self, key: PodKey) {
        abort(&mut self.pod);
        let generation = self.next_generation(Source::Pod);
        let client = self.connection.client.clone();
        let by_name = feed::config().fields(&format!("metadata.name={}", key.name));
        let detail = self.spawn_feed(
            Source::Pod,
            generation,
            Api::<Pod>::namespaced(client.clone(), &key.namespace),
            by_name,
            None,
            PodDetail::from_pod,
            Event::Detail,
        );
        let about = feed::config().fields(&format!(
            "involvedObject.name={},involvedObject.kind=Pod",
            key.name
        ));
        let events = self.spawn_feed(
            Source::Pod,
            generation,
            Api::<KubeEvent>::namespaced(client.clone(), &key.namespace),
            about,
            None,
            EventRow::from_event,
            Event::PodEvents,
        );
        let tx = self.tx.clone();
        let policy = tokio::spawn(async move {
            // Read once: labels rarely change, and a user who may not read
            // namespaces learns the level from a refusal instead.
            let policy =
                crate::cluster::debug::read_policy(&client, &key.namespace, READ_TIMEOUT).await;
            let event = Event::PodSecurity(policy);
            let _ = tx
                .send(Tagged {
                    source: Source::Pod,
                    generation,
                    event,
                })
                .await;
        });
        self.pod = vec![detail, events, policy];
    }

    /// The events view's watch, in the pod view's slot (one or the other shows).
    fn watch_events(&mut self, scope: Scope) {
        abort(&mut self.pod);
        let generation = self.next_generation(Source::Pod);
        let client = self.connection.client.clone();
        self.pod = match scope {
            Scope::All => vec![self.spawn_feed(
                Source::Pod,
                generation,
                Api::<KubeEvent>::all(client),
                feed::config(),
                None,
                EventRow::from_event,
                Event::Events,
            )],
            Scope::Namespaces(list) => list
                .into_iter()
                .map(|ns| {
                    self.spawn_feed(
                        Source::Pod,
                        generation,
                        Api::<KubeEvent>::namespaced(client.clone(), &ns),
                        feed::config(),
                        Some(ns),
                        EventRow::from_event,
                        Event::Events,
                    )
                })
                .collect(),
        };
    }

    fn delete_pod(&mut self, cluster: &ClusterId, key: PodKey) {
        // The cluster the user was asked about, whatever the browser shows now.
        let Some(client) = self.clients.get(cluster).cloned() else {
            return;
        };
        let pods: Api<Pod> = Api::namespaced(client, &key.namespace);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let outcome = match tokio::time::timeout(
                READ_TIMEOUT,
                pods.delete(&key.name, &Default::default()),
            )
            .await
            {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(crate::cluster::errors::describe(&e).0),
                Err(_) => Err(format!(
                    "The API server did not answer the delete of pod {key} within {} s; it may still happen: watch the list.",
                    READ_TIMEOUT.as_secs()
                )),
            };
            let _ = tx
                .send(Tagged::untied(Event::PodDeleted { key, outcome }))
                .await;
        });
    }

    fn watch_namespaces(&mut self) {
        if let Some(old) = self.namespaces.take() {
            old.abort();
        }
        let generation = self.next_generation(Source::Namespaces);
        let api = Api::<Namespace>::all(self.connection.client.clone());
        let name = |ns: &Namespace| ns.metadata.name.clone().unwrap_or_default();
        self.namespaces = Some(self.spawn_feed(
            Source::Namespaces,
            generation,
            api,
            feed::config(),
            None,
            name,
            Event::Namespaces,
        ));
    }

    fn switch_context(&mut self, context: String) {
        if let Some(old) = self.connecting.take() {
            old.abort();
        }
        let target = Target {
            context: Some(context),
            ..self.target.clone()
        };
        let tx = self.tx.clone();
        let connected = self.connected.clone();
        // Connecting reads files and may run exec plugins: keep it off the UI path.
        self.connecting = Some(tokio::spawn(async move {
            match connect_and_probe(&target).await {
                Ok(c) => {
                    let _ = connected.send(c).await;
                }
                Err(unusable) => {
                    let failed = Tagged::untied(Event::ConnectFailed(unusable.sentence));
                    let _ = tx.send(failed).await;
                }
            }
        }));
    }

    /// Switches every watch to a new context's client.
    fn replace_connection(&mut self, connection: Connection) {
        self.next_generation(Source::Pods);
        self.next_generation(Source::Pod);
        abort(&mut self.pods);
        abort(&mut self.pod);
        self.clients
            .insert(connection.cluster(), connection.client.clone());
        self.connection = connection;
        self.watch_namespaces();
    }

    fn stop_all(&mut self) {
        for (_, s) in self.sessions.drain() {
            s.task.abort();
        }
        for (_, mut handles) in self.followers.drain() {
            abort(&mut handles);
        }
        for id in self.recorders.keys().copied().collect::<Vec<_>>() {
            self.stop_recording(id);
        }
        abort(&mut self.pods);
        abort(&mut self.pod);
        if let Some(ns) = self.namespaces.take() {
            ns.abort();
        }
    }
}

fn abort(handles: &mut Vec<JoinHandle<()>>) {
    for h in handles.drain(..) {
        h.abort();
    }
}

/// A log's text as a terminal shows it: every line ending `\r\n`.
fn for_terminal(log: &str) -> Vec<u8> {
    log.replace('\n', "\r\n")
        .replace("\r\r\n", "\r\n")
        .into_bytes()
}

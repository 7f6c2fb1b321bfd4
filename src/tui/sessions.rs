//! The terminals' sessions: an attach or exec streamed into a pane, a log
//! read into one, and the recordings teed from their output.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::log_pane;
use super::outbox::Outboxes;
use super::pacer::Pacer;
use super::session_task::{Flow, PaneFacts, Shown, stream_session};
use crate::app::Event;
use crate::app::TerminalId;
use crate::cluster::session::{self, SessionInput, SessionSpec};
use crate::model::TerminalKey;
use crate::model::session::SessionKind;
use crate::term::Size;
use crate::term::record::Recorder;

/// Standard error's colour without a tty, unless the theme says otherwise:
/// xterm's 256-colour salmon red.
pub(super) const DEFAULT_STDERR_SGR: &str = "38;5;203";

/// Every terminal's session task, its output queue and its recording.
pub(super) struct Sessions {
    running: HashMap<TerminalId, Running>,
    recorders: HashMap<TerminalId, Recording>,
    outboxes: Outboxes,
    pub(super) keepalive: Option<Duration>,
    pub(super) recordings: PathBuf,
    /// Where each followed log pane got to in each container, for `r`.
    log_resume: HashMap<(TerminalId, String), log_pane::Resume>,
    /// A pods' log pane's, per `pod container`.
    pods_resume: HashMap<TerminalId, log_pane::Resumes>,
    /// The SGR parameters standard error is shown in, in a pane without a
    /// tty (the theme's `stderr`).
    pub(super) stderr_sgr: String,
    /// The most lines of scrollback a terminal keeps.
    pub(super) scrollback: usize,
    /// Per terminal with a session: its rows and whether it is recorded.
    panes: HashMap<TerminalId, Arc<PaneFacts>>,
    /// Terminals a session was ever opened for.
    opened: HashSet<TerminalId>,
    /// Every session's floods, paced as one emulator would take them.
    pacer: Arc<Pacer>,
    /// The pacer holds floods for an awaited echo.
    hushed: bool,
}

/// A session's task and the way to send it input.
struct Running {
    input: mpsc::UnboundedSender<SessionInput>,
    task: JoinHandle<()>,
}

impl Sessions {
    pub(super) fn new(outboxes: Outboxes) -> Self {
        Sessions {
            running: HashMap::new(),
            recorders: HashMap::new(),
            outboxes,
            keepalive: Some(session::DEFAULT_KEEPALIVE),
            recordings: std::env::temp_dir(),
            log_resume: HashMap::new(),
            pods_resume: HashMap::new(),
            stderr_sgr: DEFAULT_STDERR_SGR.to_string(),
            scrollback: crate::term::grid::DEFAULT_SCROLLBACK,
            panes: HashMap::new(),
            opened: HashSet::new(),
            pacer: Arc::new(Pacer::default()),
            hushed: false,
        }
    }

    /// A session has output queued for the UI (from the outboxes' ready channel).
    pub(super) fn mark_ready(&mut self, id: TerminalId) {
        self.outboxes.mark_ready(id);
    }

    /// Whether output is queued and not yet taken.
    pub(super) fn has_output(&self) -> bool {
        self.outboxes.has_ready()
    }

    /// A key went to terminal `id`: its echo is taken first.
    pub(super) fn await_echo(&mut self, id: TerminalId) {
        self.outboxes.await_echo(id);
        self.pacer.hush(self.outboxes.hush());
        self.hushed = true;
    }

    /// When the other sessions stop waiting for an awaited echo.
    pub(super) fn hush_ends(&self) -> Option<tokio::time::Instant> {
        self.outboxes.hush_ends()
    }

    /// Queued events from every ready session (only the awaited one during
    /// a hush), up to about `budget` bytes of output each.
    pub(super) fn take_output(&mut self, budget: usize) -> Vec<Event> {
        let taken = self.outboxes.take(budget);
        // The echo came (or the wait is over): the floods go on at once.
        if self.hushed && self.outboxes.hush().is_none() {
            self.pacer.hush(None);
            self.hushed = false;
        }
        taken
    }

    /// Attaches or execs into the container; with `replay_log`, what it
    /// printed before the attach is shown first, from its log.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open(
        &mut self,
        id: TerminalId,
        client: kube::Client,
        key: TerminalKey,
        kind: SessionKind,
        size: Size,
        replay_log: bool,
        stdio: crate::model::Stdio,
    ) {
        let TerminalKey { pod, container, .. } = key;
        let outbox = self.outboxes.open(id);
        let spec = SessionSpec {
            namespace: pod.namespace.to_string(),
            pod: pod.name.to_string(),
            container,
            kind,
            size,
            keepalive: self.keepalive,
            tty: stdio.tty,
            stdin: stdio.stdin,
        };
        // Without a tty the pane shows output as a terminal would.
        let untranslated = (!stdio.tty).then(|| self.stderr_sgr.clone());
        let pane = Arc::new(PaneFacts {
            rows: AtomicU16::new(size.rows),
            recording: AtomicBool::new(self.recorders.contains_key(&id)),
            scrollback: self.scrollback,
            fresh: self.opened.insert(id),
        });
        self.panes.insert(id, pane.clone());
        let (input, inputs) = mpsc::unbounded_channel();
        let flow = Flow {
            outbox,
            pane,
            pacer: self.pacer.clone(),
        };
        let shown = Shown {
            replay_log,
            untranslated,
        };
        let task = tokio::spawn(stream_session(id, client, spec, shown, inputs, flow));
        self.replace(id, Running { input, task });
    }

    /// Reads `containers`' logs (or `key`'s container's alone) into the
    /// pane; with `of_pods`, `containers` names pods of `key`'s namespace,
    /// every container of each.
    pub(super) fn show_log(
        &mut self,
        id: TerminalId,
        client: kube::Client,
        (key, containers, of_pods): (TerminalKey, Vec<String>, bool),
        read: log_pane::Read,
        start: LogStart<'_>,
    ) {
        let TerminalKey { pod, container, .. } = key;
        let pods: Api<Pod> = Api::namespaced(client.clone(), &pod.namespace);
        let outbox = self.outboxes.open(id);
        let seeds = match start {
            LogStart::Over => {
                self.log_resume.retain(|(terminal, _), _| *terminal != id);
                self.pods_resume.remove(&id);
                None
            }
            LogStart::Continue(seeds) => Some(seeds),
        };
        if of_pods {
            let resumes = match read.previous {
                true => log_pane::Resumes::default(),
                false => self.pods_resume.entry(id).or_default().clone(),
            };
            // A restored pane goes on after where it was kept.
            if let Some(seeds) = seeds {
                let mut known = resumes.lock().unwrap_or_else(|p| p.into_inner());
                for (name, at) in seeds {
                    known
                        .entry(name.clone())
                        .or_insert_with(|| std::sync::Arc::new(std::sync::Mutex::new(Some(*at))));
                }
            }
            let sources = log_pane::Sources::Pods {
                client,
                pods: containers,
                resumes,
                within: super::READ_TIMEOUT,
            };
            let task = tokio::spawn(log_pane::run_sources(id, sources, read, outbox));
            let (input, _) = mpsc::unbounded_channel();
            self.replace(id, Running { input, task });
            return;
        }
        // Each container's stream resumes after its own last line; a
        // previous run's log is read whole.
        let mut resume = |container: &str| {
            if read.previous {
                log_pane::Resume::default()
            } else {
                self.log_resume
                    .entry((id, container.to_string()))
                    .or_insert_with(|| {
                        std::sync::Arc::new(std::sync::Mutex::new(
                            seeds.and_then(|s| s.get(container)).copied(),
                        ))
                    })
                    .clone()
            }
        };
        let logs: Vec<log_pane::ContainerLog> = if containers.is_empty() {
            vec![log_pane::ContainerLog::alone(
                (&pods, &pod.name),
                &container,
                resume(&container),
            )]
        } else {
            let width = containers
                .iter()
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0);
            containers
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let resume = resume(c);
                    log_pane::ContainerLog::prefixed((&pods, &pod.name, c), c, (i, width), resume)
                })
                .collect()
        };
        let sources = log_pane::Sources::Containers(logs);
        let task = tokio::spawn(log_pane::run_sources(id, sources, read, outbox));
        // A log takes no input.
        let (input, _) = mpsc::unbounded_channel();
        self.replace(id, Running { input, task });
    }

    fn replace(&mut self, id: TerminalId, running: Running) {
        if let Some(old) = self.running.insert(id, running) {
            old.task.abort();
        }
    }

    pub(super) fn send(&self, id: TerminalId, input: SessionInput) {
        if let Some(s) = self.running.get(&id) {
            let _ = s.input.send(input);
        }
    }

    pub(super) fn resize(&mut self, id: TerminalId, size: Size) {
        if let Some(recorder) = self.recorders.get_mut(&id)
            && let Err(e) = recorder.out.resize(recorder.started.elapsed(), size)
        {
            tracing::warn!("recording: {e}");
        }
        if let Some(pane) = self.panes.get(&id) {
            pane.rows.store(size.rows, Ordering::Relaxed);
        }
        self.send(id, SessionInput::Resize(size));
    }

    /// Per container, the last log line terminal `id` has shown.
    pub(super) fn log_positions(
        &self,
        id: TerminalId,
    ) -> std::collections::BTreeMap<String, jiff::Timestamp> {
        let mut positions: std::collections::BTreeMap<String, jiff::Timestamp> = self
            .log_resume
            .iter()
            .filter(|((terminal, _), _)| *terminal == id)
            .filter_map(|((_, container), at)| {
                let at = *at.lock().unwrap_or_else(|p| p.into_inner());
                Some((container.clone(), at?))
            })
            .collect();
        if let Some(resumes) = self.pods_resume.get(&id) {
            let resumes = resumes.lock().unwrap_or_else(|p| p.into_inner());
            positions.extend(resumes.iter().filter_map(|(name, at)| {
                Some((
                    name.clone(),
                    (*at.lock().unwrap_or_else(|p| p.into_inner()))?,
                ))
            }));
        }
        positions
    }

    pub(super) fn close(&mut self, id: TerminalId) {
        if let Some(s) = self.running.remove(&id) {
            s.task.abort();
        }
        self.outboxes.close(id);
        self.log_resume.retain(|(terminal, _), _| *terminal != id);
        self.pods_resume.remove(&id);
        self.stop_recording(id);
        self.panes.remove(&id);
    }

    /// Tees a terminal's output into its recording, if it has one; a
    /// recording that cannot be written stops, and the event says so.
    pub(super) fn record(&mut self, id: TerminalId, bytes: &[u8]) -> Option<Event> {
        let recorder = self.recorders.get_mut(&id)?;
        let e = recorder
            .out
            .output(recorder.started.elapsed(), bytes)
            .err()?;
        tracing::warn!("recording stopped: {e}");
        self.recorders.remove(&id);
        Some(Event::Recording {
            id,
            outcome: Err(format!("Recording stopped: cannot write the file ({e}).")),
        })
    }

    /// Starts or stops recording terminal `id`; the event tells the app.
    pub(super) fn set_recording(
        &mut self,
        id: TerminalId,
        on: bool,
        size: Size,
        title: &str,
    ) -> Event {
        let outcome = if on {
            self.start_recording(id, size, title).map(Some)
        } else {
            self.stop_recording(id);
            Ok(None)
        };
        Event::Recording { id, outcome }
    }

    fn start_recording(
        &mut self,
        id: TerminalId,
        size: Size,
        title: &str,
    ) -> Result<PathBuf, String> {
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
        crate::local::create_private_dir(&self.recordings)
            .and_then(|()| crate::local::create_private(&path))
            .and_then(|file| {
                let now = jiff::Timestamp::now().as_second();
                Recorder::new(file, size, "xterm-256color", now)
            })
            .map(|out| {
                let started = std::time::Instant::now();
                self.recorders.insert(id, Recording { out, started });
                if let Some(pane) = self.panes.get(&id) {
                    pane.recording.store(true, Ordering::Relaxed);
                }
                path.clone()
            })
            .map_err(|e| {
                format!(
                    "Cannot record to {}: {e}. Check that the state directory is writable.",
                    path.display()
                )
            })
    }

    fn stop_recording(&mut self, id: TerminalId) {
        if let Some(pane) = self.panes.get(&id) {
            pane.recording.store(false, Ordering::Relaxed);
        }
        if let Some(recorder) = self.recorders.remove(&id)
            && let Err(e) = recorder.out.finish(recorder.started.elapsed())
        {
            tracing::warn!("recording: {e}");
        }
    }

    pub(super) fn stop_all(&mut self) {
        for (_, s) in self.running.drain() {
            s.task.abort();
        }
        for id in self.recorders.keys().copied().collect::<Vec<_>>() {
            self.stop_recording(id);
        }
    }
}

/// A pane's recording and when it started.
struct Recording {
    out: Recorder<std::fs::File>,
    started: std::time::Instant,
}

/// Where a log pane's read starts.
#[derive(Debug, Clone, Copy)]
pub(super) enum LogStart<'a> {
    /// From the start, with the pane's options (a toggle, `:since`).
    Over,
    /// After the last line each container's stream showed; for a stream
    /// that showed none yet, after these (a restored pane's places).
    Continue(&'a std::collections::BTreeMap<String, jiff::Timestamp>),
}

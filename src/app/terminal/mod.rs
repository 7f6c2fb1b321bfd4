//! One terminal on one container: a debug container coming up, an attach,
//! an exec'd shell, or a log. Any number of panes can show it; they share
//! its screen, its stream and its size.

use jiff::Timestamp;

use super::follow::PodFollow;
use super::launcher::Launcher;
use crate::app::Effect;
use crate::model::session::SessionKind;
use crate::model::text::Printable;
use crate::model::{ContainerState, EventRow, Stdio, TerminalKey};
use crate::term::grid::Grid;
use crate::term::line::LineEditor;

mod updates;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalKind {
    /// A debug container podbay just launched.
    Debug,
    Attach,
    Shell,
    /// A command the user chose (`:exec CMD…`).
    Exec,
    Log,
    /// Every container's log in one pane, each line prefixed with its
    /// container's name.
    AllLogs,
    /// The log of the container's previous run (`previous=true`).
    PreviousLog,
    /// Every container's log of some pods (a workload's, a Service's),
    /// merged, each line after `pod container`; pods that start later join.
    PodsLogs,
}

impl TerminalKind {
    pub fn label(self) -> &'static str {
        match self {
            TerminalKind::Debug => "debug",
            TerminalKind::Attach => "attach",
            TerminalKind::Shell => "shell",
            TerminalKind::Exec => "exec",
            TerminalKind::Log => "log",
            TerminalKind::AllLogs => "logs",
            TerminalKind::PreviousLog => "previous log",
            TerminalKind::PodsLogs => "logs",
        }
    }

    /// Log panes read the container's log; they have no process to talk to.
    /// An empty grid for a terminal of this kind: a log's lays its lines
    /// out again when its width changes, a program's screen is its own.
    pub fn grid(self, size: crate::term::Size, scrollback: usize) -> Grid {
        if self.is_log() {
            Grid::for_log(size, scrollback)
        } else {
            Grid::new(size, scrollback)
        }
    }

    pub fn is_log(self) -> bool {
        matches!(
            self,
            TerminalKind::Log
                | TerminalKind::PreviousLog
                | TerminalKind::AllLogs
                | TerminalKind::PodsLogs
        )
    }

    /// A followed log: it goes on from where it stopped.
    pub fn follows_log(self) -> bool {
        matches!(
            self,
            TerminalKind::Log | TerminalKind::AllLogs | TerminalKind::PodsLogs
        )
    }

    /// Attaches reach the container's own process, which outlives the stream.
    pub fn resumable(self) -> bool {
        matches!(self, TerminalKind::Debug | TerminalKind::Attach)
    }
}

/// How a log pane reads and shows its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogOptions {
    /// Each line after the kubelet's timestamp (`t` toggles).
    pub timestamps: bool,
    /// Lines cut at the pane's width instead of wrapped (`w` toggles); the
    /// grid cuts them, at each width the pane takes.
    pub cut: bool,
    /// Only the last this many seconds (`:since 10m`).
    pub since_seconds: Option<i64>,
    /// Only the last this many lines (`[logs] tail`); `None`: all of it.
    pub tail: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalState {
    /// The patch is on its way.
    Launching,
    /// The container exists and is waiting (reason, message).
    Waiting {
        reason: String,
        message: String,
    },
    Attaching,
    Attached,
    /// The stream was cut; the container's process is still there.
    Disconnected(Printable),
    /// The session is over: one sentence.
    Ended(Printable),
}

/// The most a terminal keeps of what is typed while it attaches.
pub const TYPED_AHEAD_MOST: usize = 64 * 1024;

/// Names a terminal for as long as podbay runs: its panes, its session,
/// its output and its pod watch carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TerminalId(pub u64);

impl std::fmt::Display for TerminalId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

pub struct Terminal {
    pub id: TerminalId,
    /// The container, on the cluster (and as the user) it was opened with.
    pub key: TerminalKey,
    pub kind: TerminalKind,
    /// What an exec runs (`TerminalKind::Exec`; empty otherwise).
    pub command: Vec<String>,
    /// The containers an all-containers log pane reads, in the pod's order;
    /// the pods a pods' log pane reads.
    pub containers: Vec<String>,
    /// A pods' log pane: whose pods (`deploy/storefront`) and how they
    /// are found in the pod list.
    pub pods_of: Option<(String, crate::app::pods::Narrow)>,
    /// How a log pane reads and shows its log.
    pub log: LogOptions,
    pub state: TerminalState,
    pub since: Timestamp,
    pub grid: Grid,
    /// What launched its debug container, if podbay did.
    pub launched_by: Option<LaunchedBy>,
    /// podbay made its pod (a node debug pod, a copy): deleted when the
    /// last pane on it closes.
    pub owned: Option<OwnedPod>,
    /// The pod, from this terminal's own watch.
    pub pod: PodFollow,
    /// Something the user should know about this terminal, shown on its panes.
    pub notice: Option<String>,
    /// Seconds the stream has left a ping or a key unanswered, once that
    /// is long enough to say.
    pub unanswered: Option<u64>,
    /// When the last byte went either way (for telling idle timeouts from cuts).
    pub last_traffic: Timestamp,
    /// An idle cut was already repaired once since the user last typed.
    pub reattached_after_idle: bool,
    pub recording: Option<std::path::PathBuf>,
    /// How its session was opened: an attach as its container's spec says
    /// (`stdin`, `tty`), an exec with a terminal.
    pub stdio: Stdio,
    /// The line being typed, when the pane is the line discipline (no tty).
    pub line: LineEditor,
    /// `ctrl-d` closed its stdin.
    pub stdin_closed: bool,
    /// Keys typed while it attaches, sent once the stream is up (as a
    /// terminal keeps what is typed before a program reads it).
    pub typed_ahead: Vec<u8>,
    /// Brought back from a kept workspace, until its pod's state is known.
    pub restored: Option<Restored>,
    /// A restored log pane's pod is gone: its controller, and the pod it
    /// runs now once found (enter shows its log here).
    pub replaced: Option<Replaced>,
    /// Per container, the last log line shown before podbay restarted: a
    /// log pane's first read goes on after it.
    pub resume_from: std::collections::BTreeMap<String, Timestamp>,
}

/// What launched a debug container.
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchedBy {
    /// The launcher, reopened with its values when the launch fails.
    Form(Box<Launcher>),
    /// The form for marked pods: a refusal stays on its pane and the
    /// others go on.
    Fleet,
}

/// A pod podbay made for a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnedPod {
    /// Being created: a delete waits for the create.
    Creating,
    Created,
}

/// A gone pod's controller, and the pod it runs now.
#[derive(Debug, Clone, PartialEq)]
pub struct Replaced {
    pub controller: crate::app::saved::SavedController,
    pub by: Option<crate::model::PodKey>,
}

/// What a terminal brought back from a kept workspace still has to check.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// The pod's UID when it was kept: another UID is another pod.
    pub pod_uid: Option<String>,
    /// The server its context named when it was kept.
    pub server: String,
    pub saved_at: Timestamp,
    /// Its context is connected and its pod watched.
    pub started: bool,
    /// The pod's controller when it was kept.
    pub controller: Option<crate::app::saved::SavedController>,
}

/// How keys reach a terminal's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A terminal on the far side: every key as xterm encodes it.
    Raw,
    /// No terminal: the pane echoes and edits, and sends whole lines.
    Lines,
    /// No stdin (or it was closed): nothing can be sent.
    ReadOnly,
}

impl Terminal {
    /// podbay made its pod: it goes with the last pane.
    pub fn owns_pod(&self) -> bool {
        self.owned.is_some()
    }

    /// Writes podbay's own sentence into the pane (`what` in bold red, then
    /// the sentence), for a pane that has nothing else to show.
    pub(crate) fn say_in_pane(&mut self, what: &str, sentence: &str) {
        let sentence = crate::model::text::sanitize(sentence);
        self.grid
            .feed(format!("\x1b[1;31m{what}\x1b[0m: {sentence}\r\n").as_bytes());
    }

    /// The log this terminal shows: a log pane's current run (or every
    /// container's) followed, the previous run's read once, and a finished
    /// debug container's read once; `fresh` starts over.
    pub(crate) fn log_effect(&self, fresh: bool) -> Effect {
        Effect::ShowLog {
            id: self.id,
            key: self.key.clone(),
            containers: self.containers.clone(),
            of_pods: self.kind == TerminalKind::PodsLogs,
            previous: self.kind == TerminalKind::PreviousLog,
            follow: self.kind.follows_log(),
            options: self.log,
            fresh,
            resume_from: if fresh {
                Default::default()
            } else {
                self.resume_from.clone()
            },
        }
    }

    /// (Re-)attaches to the container's own terminal; with `replay_log`,
    /// what it printed before is shown first.
    pub(crate) fn attach(&mut self, replay_log: bool) -> Effect {
        self.state = TerminalState::Attaching;
        self.attach_as_spec_says();
        Effect::OpenSession {
            id: self.id,
            key: self.key.clone(),
            kind: SessionKind::Attach,
            size: self.grid.size(),
            replay_log,
            stdio: self.stdio,
        }
    }

    /// An attach reaches the container's own stdin and terminal, as its
    /// spec has them (a container the app knows nothing of yet is taken
    /// to have both, as before).
    pub(crate) fn attach_as_spec_says(&mut self) {
        let stdio = self
            .pod
            .detail
            .as_ref()
            .and_then(|d| d.container(&self.key.container))
            .map_or(Stdio::TERMINAL, |c| c.stdio);
        let changed = stdio != self.stdio;
        if changed {
            self.line = LineEditor::default();
        }
        self.stdio = stdio;
        // A re-attach opens a new stdin.
        self.stdin_closed = false;
        if !changed && self.notice.is_some() {
            // Already said (or something newer to say: an automatic re-attach).
            return;
        }
        self.notice = match (stdio.stdin, stdio.tty) {
            (false, _) => Some(format!(
                "Read-only: {} has no stdin (its spec has no `stdin: true`); output only.",
                self.key.container
            )),
            (true, false) => Some(
                "No tty: this pane echoes and edits lines; enter sends one, ctrl-d closes stdin."
                    .to_string(),
            ),
            (true, true) => self.notice.take(),
        };
    }

    /// How keys reach its process.
    pub fn input(&self) -> Input {
        match (self.stdio.stdin && !self.stdin_closed, self.stdio.tty) {
            (false, _) => Input::ReadOnly,
            (true, true) => Input::Raw,
            (true, false) => Input::Lines,
        }
    }

    pub fn new(id: TerminalId, key: TerminalKey, kind: TerminalKind, now: Timestamp) -> Self {
        Terminal {
            id,
            key,
            kind,
            command: Vec::new(),
            containers: Vec::new(),
            pods_of: None,
            log: LogOptions::default(),
            state: TerminalState::Attaching,
            since: now,
            grid: kind.grid(
                crate::term::Size::DEFAULT,
                crate::term::grid::DEFAULT_SCROLLBACK,
            ),
            launched_by: None,
            owned: None,
            pod: PodFollow::default(),
            notice: None,
            unanswered: None,
            last_traffic: now,
            reattached_after_idle: false,
            recording: None,
            stdio: Stdio::TERMINAL,
            line: LineEditor::default(),
            stdin_closed: false,
            typed_ahead: Vec::new(),
            restored: None,
            replaced: None,
            resume_from: Default::default(),
        }
    }

    pub fn is_live(&self) -> bool {
        self.state == TerminalState::Attached
    }

    /// Whether keys typed into it are kept until its stream is up: it is
    /// attaching to a terminal (raw keys; a log takes no typing).
    pub fn types_ahead(&self) -> bool {
        self.state == TerminalState::Attaching && !self.kind.is_log() && self.input() == Input::Raw
    }

    /// Keeps keys typed while attaching (at most [`TYPED_AHEAD_MOST`]: a
    /// paste beyond that is cut, and said).
    pub fn type_ahead(&mut self, bytes: &[u8]) {
        let room = TYPED_AHEAD_MOST.saturating_sub(self.typed_ahead.len());
        if bytes.len() > room {
            self.notice = Some(format!(
                "Only the first {} KiB typed while attaching are kept: type the rest once it is attached.",
                TYPED_AHEAD_MOST / 1024
            ));
        }
        self.typed_ahead
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// "shop/web/debugger-x7k2"; a pods' log pane's "shop/deploy/web".
    pub fn label(&self) -> String {
        match &self.pods_of {
            Some((from, _)) => format!("{}/{from}", self.key.pod.namespace),
            None => self.key.to_string(),
        }
    }

    pub fn container(&self) -> &str {
        &self.key.container
    }

    /// The container's state in the latest pod status.
    pub fn container_state(&self) -> Option<&ContainerState> {
        self.pod
            .detail
            .as_ref()
            .and_then(|d| d.container(&self.key.container))
            .map(|c| &c.state)
    }

    /// The newest event about this container, while it comes up.
    pub fn newest_event(&self) -> Option<&EventRow> {
        self.pod
            .events
            .iter()
            .rev()
            .find(|e| e.container() == Some(self.key.container.as_str()))
    }
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal")
            .field("id", &self.id)
            .field("key", &self.key)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

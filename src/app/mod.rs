//! The TUI's state machine: `App::update(Event) -> Vec<Effect>`. No I/O, no
//! async: the runtime feeds it events (keys, watch updates, ticks) and
//! carries out the effects it returns (start/stop watches, switch context,
//! quit). Tests drive it directly.

pub mod command;
pub mod keymap;
pub mod launcher;
pub mod pods;
pub mod terminal;

use bytes::Bytes;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;

use crate::cluster::debug::{DebugSpec, Profile};
use crate::cluster::errors::Denied;
use crate::cluster::feed::Feed;
use crate::cluster::session::{SessionEnd, SessionKind};
use crate::model::{ContainerState, EventRow, PodDetail, PodKey, PodRow};
use crate::term::pane::{DEFAULT_SCROLLBACK, Pane};
use command::CommandLine;
use keymap::{Action, Keymap};
use launcher::{FormOutcome, Launcher};
use pods::PodTable;
use terminal::{TerminalKind, TerminalState, TerminalView};

/// Which pods to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    /// One or more namespaces (more than one only as a fallback for users
    /// who may not list pods cluster-wide).
    Namespaces(Vec<String>),
}

impl Scope {
    pub fn label(&self) -> String {
        match self {
            Scope::All => "all".to_string(),
            Scope::Namespaces(list) => list.join(","),
        }
    }
}

/// Everything that happens to the app.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Key(KeyEvent),
    Paste(String),
    /// Terminal size changed (columns, rows).
    Resize(u16, u16),
    /// Once a second, for ages and the connection indicator.
    Tick(Timestamp),
    Pods(Feed<PodRow>),
    Namespaces(Feed<String>),
    Detail(Feed<PodDetail>),
    PodEvents(Feed<EventRow>),
    /// A new context is connected.
    Connected {
        context: String,
        namespace: String,
        contexts: Vec<String>,
    },
    /// Switching context failed: one sentence.
    ConnectFailed(String),
    /// Adding the debug container failed: one sentence.
    LaunchFailed {
        id: u64,
        sentence: String,
    },
    /// The stream is open (and any earlier output shown): typing goes through.
    SessionAttached {
        id: u64,
    },
    SessionOutput {
        id: u64,
        bytes: Bytes,
    },
    SessionEnded {
        id: u64,
        end: SessionEnd,
    },
}

/// What the runtime should do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    /// Replace the pod watch(es) with this scope.
    WatchPods(Scope),
    /// Watch one pod's detail and events (the pod view).
    WatchPod(PodKey),
    StopWatchingPod,
    SwitchContext(String),
    /// Add this ephemeral container to the pod.
    Launch {
        id: u64,
        pod: PodKey,
        spec: DebugSpec,
    },
    /// Attach or exec. With `replay_log`, first show what the container
    /// printed before the attach (from its log), without duplicates.
    OpenSession {
        id: u64,
        pod: PodKey,
        container: String,
        kind: SessionKind,
        size: (u16, u16),
        replay_log: bool,
    },
    /// Show a container's log (for containers that have exited).
    ShowLog {
        id: u64,
        pod: PodKey,
        container: String,
    },
    SendInput {
        id: u64,
        bytes: Bytes,
    },
    ResizeSession {
        id: u64,
        cols: u16,
        rows: u16,
    },
    CloseSession {
        id: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    Connecting,
    Live,
    Reconnecting,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub level: Level,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Normal,
    /// Typing into the fuzzy filter.
    Filter(String),
    Command(CommandLine),
    Help,
    /// The debug launcher form, over the pod view.
    Launcher(Box<Launcher>),
}

#[derive(Debug)]
pub enum View {
    Pods,
    Pod(Box<PodView>),
    Terminal(Box<TerminalView>),
}

impl std::fmt::Debug for TerminalView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalView")
            .field("id", &self.id)
            .field("pod", &self.pod)
            .field("container", &self.container)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodView {
    pub key: PodKey,
    pub detail: Option<PodDetail>,
    /// Newest last.
    pub events: Vec<EventRow>,
    pub cursor: usize,
    pub gone: bool,
    /// Open the debug launcher as soon as the pod's detail arrives.
    pub launch_when_loaded: bool,
}

pub struct App {
    pub context: String,
    pub contexts: Vec<String>,
    /// The context's own namespace.
    pub home_namespace: String,
    /// Extra namespaces from config, for restricted users.
    pub fallback_namespaces: Vec<String>,
    pub scope: Scope,
    pub connection: Connection,
    pub pods: PodTable,
    pub namespaces: Vec<String>,
    pub mode: Mode,
    pub view: View,
    pub message: Option<Message>,
    pub keymap: Keymap,
    pub now: Timestamp,
    /// Rows the pod table can show (set from the terminal size), for paging.
    pub page: usize,
    /// The size (columns, rows) a terminal pane gets.
    pub body: (u16, u16),
    pub debug_images: Vec<String>,
    pub debug_profile: Profile,
    next_session: u64,
    pub quitting: bool,
}

pub struct AppOptions {
    pub context: String,
    pub contexts: Vec<String>,
    pub namespace: String,
    pub all_namespaces: bool,
    pub fallback_namespaces: Vec<String>,
    pub keymap: Keymap,
    pub now: Timestamp,
    pub debug_images: Vec<String>,
    pub debug_profile: Profile,
}

impl App {
    /// The app and the effects that start it (the first pod watch).
    pub fn new(options: AppOptions) -> (App, Vec<Effect>) {
        let scope = if options.all_namespaces {
            Scope::All
        } else {
            Scope::Namespaces(vec![options.namespace.clone()])
        };
        let app = App {
            context: options.context,
            contexts: options.contexts,
            home_namespace: options.namespace,
            fallback_namespaces: options.fallback_namespaces,
            scope: scope.clone(),
            connection: Connection::Connecting,
            pods: PodTable::default(),
            namespaces: Vec::new(),
            mode: Mode::Normal,
            view: View::Pods,
            message: None,
            keymap: options.keymap,
            now: options.now,
            page: 20,
            body: (80, 20),
            debug_images: options.debug_images,
            debug_profile: options.debug_profile,
            next_session: 0,
            quitting: false,
        };
        (app, vec![Effect::WatchPods(scope)])
    }

    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Key(key) => self.on_key(key),
            Event::Paste(text) => {
                match &mut self.mode {
                    Mode::Filter(query) => {
                        query.push_str(text.lines().next().unwrap_or_default());
                        let q = query.clone();
                        self.pods.set_filter(&q);
                    }
                    Mode::Command(line) => line.insert_str(text.lines().next().unwrap_or_default()),
                    _ => {
                        if let View::Terminal(t) = &self.view
                            && t.is_live()
                        {
                            let bytes =
                                crate::term::keys::encode_paste(&text, t.pane.bracketed_paste());
                            return vec![Effect::SendInput {
                                id: t.id,
                                bytes: Bytes::from(bytes),
                            }];
                        }
                    }
                }
                vec![]
            }
            Event::Resize(cols, rows) => {
                self.page = usize::from(rows.saturating_sub(5)).max(1);
                // Header, terminal status line, and the two footer lines.
                self.body = (cols.max(1), rows.saturating_sub(4).max(1));
                self.resize_terminal()
            }
            Event::Tick(now) => {
                self.now = now;
                vec![]
            }
            Event::Pods(feed) => self.on_pods(feed),
            Event::Namespaces(feed) => {
                match feed {
                    Feed::Listed { rows, .. } => {
                        self.namespaces = rows;
                        self.namespaces.sort();
                    }
                    Feed::Applied(ns) => {
                        if let Err(at) = self.namespaces.binary_search(&ns) {
                            self.namespaces.insert(at, ns);
                        }
                    }
                    Feed::Deleted(ns) => self.namespaces.retain(|n| n != &ns),
                    Feed::Forbidden(_) => {
                        // Completion falls back to what we know; nothing else breaks.
                        let mut known = self.fallback_namespaces.clone();
                        known.push(self.home_namespace.clone());
                        known.sort();
                        known.dedup();
                        self.namespaces = known;
                    }
                    Feed::Listing { .. } | Feed::Reconnecting(_) => {}
                }
                vec![]
            }
            Event::Detail(feed) => {
                let mut notice = None;
                if let Some(view) = self.pod_view_mut() {
                    match feed {
                        Feed::Listed { mut rows, .. } => {
                            view.gone = rows.is_empty();
                            if let Some(d) = rows.pop() {
                                view.detail = Some(d);
                            }
                        }
                        Feed::Applied(d) => {
                            view.gone = false;
                            view.detail = Some(d);
                        }
                        Feed::Deleted(_) => view.gone = true,
                        Feed::Forbidden(denied) => notice = Some(warning(denied.sentence())),
                        Feed::Listing { .. } | Feed::Reconnecting(_) => {}
                    }
                    let len = view.detail.as_ref().map_or(0, |d| d.containers.len());
                    view.cursor = view.cursor.min(len.saturating_sub(1));
                }
                if notice.is_some() {
                    self.message = notice;
                }
                self.after_detail_change()
            }
            Event::PodEvents(feed) => {
                if let Some(view) = self.pod_view_mut() {
                    match feed {
                        Feed::Listed { rows, .. } => view.events = rows,
                        Feed::Applied(e) => match view.events.iter_mut().find(|x| x.name == e.name)
                        {
                            Some(existing) => *existing = e,
                            None => view.events.push(e),
                        },
                        Feed::Deleted(e) => view.events.retain(|x| x.name != e.name),
                        Feed::Forbidden(_) | Feed::Listing { .. } | Feed::Reconnecting(_) => {}
                    }
                    view.events.sort_by_key(|e| e.last_seen);
                }
                vec![]
            }
            Event::Connected {
                context,
                namespace,
                contexts,
            } => {
                self.context = context;
                self.home_namespace = namespace.clone();
                self.contexts = contexts;
                self.pods.replace(None, Vec::new());
                self.namespaces.clear();
                self.connection = Connection::Connecting;
                self.message = Some(info(format!("Switched to context {}.", self.context)));
                self.scope = match self.scope {
                    Scope::All => Scope::All,
                    Scope::Namespaces(_) => Scope::Namespaces(vec![namespace]),
                };
                self.view = View::Pods;
                vec![Effect::WatchPods(self.scope.clone())]
            }
            Event::ConnectFailed(sentence) => {
                self.message = Some(error(sentence));
                vec![]
            }
            Event::LaunchFailed { id, sentence } => self.on_launch_failed(id, sentence),
            Event::SessionAttached { id } => {
                let (cols, rows) = self.body;
                match self.terminal_mut(id) {
                    Some(t) => {
                        t.state = TerminalState::Attached;
                        // The stream opened at the size of the moment; catch up if it changed.
                        let (pc, pr) = t.pane.size();
                        if (pc, pr) != (cols, rows) {
                            t.pane.resize(cols, rows);
                        }
                        vec![Effect::ResizeSession { id, cols, rows }]
                    }
                    None => vec![],
                }
            }
            Event::SessionOutput { id, bytes } => {
                if let Some(t) = self.terminal_mut(id) {
                    t.pane.feed(&bytes);
                }
                vec![]
            }
            Event::SessionEnded { id, end } => {
                if let Some(t) = self.terminal_mut(id) {
                    let resumable = end.disconnected
                        && matches!(t.kind, TerminalKind::Debug | TerminalKind::Attach);
                    t.state = if resumable {
                        TerminalState::Disconnected(end.reason)
                    } else {
                        TerminalState::Ended(end.reason)
                    };
                }
                self.after_detail_change()
            }
        }
    }

    fn on_pods(&mut self, feed: Feed<PodRow>) -> Vec<Effect> {
        match feed {
            Feed::Listing { .. } => {}
            Feed::Listed { scope, rows } => {
                self.pods.replace(scope.as_deref(), rows);
                self.connection = Connection::Live;
            }
            Feed::Applied(row) => {
                self.pods.apply(row);
                self.connection = Connection::Live;
            }
            Feed::Deleted(row) => {
                self.pods.remove(&row.key);
                self.connection = Connection::Live;
            }
            Feed::Reconnecting(sentence) => {
                self.connection = Connection::Reconnecting;
                self.message = Some(warning(sentence));
            }
            Feed::Forbidden(denied) => return self.narrow_after_denial(denied),
        }
        vec![]
    }

    /// Restricted users are the norm: when the cluster-wide list is refused,
    /// fall back to the namespaces we know the user may use, and say which
    /// permission was missing.
    fn narrow_after_denial(&mut self, denied: Denied) -> Vec<Effect> {
        match &self.scope {
            Scope::All => {
                let mut fallback = vec![self.home_namespace.clone()];
                fallback.extend(self.fallback_namespaces.iter().cloned());
                fallback.dedup();
                self.message = Some(warning(format!(
                    "{} Showing namespace {} instead.",
                    denied.sentence(),
                    fallback.join(", ")
                )));
                self.scope = Scope::Namespaces(fallback);
                vec![Effect::WatchPods(self.scope.clone())]
            }
            Scope::Namespaces(_) => {
                self.connection = Connection::Live;
                self.message = Some(warning(denied.sentence()));
                vec![]
            }
        }
    }

    fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let in_terminal = matches!(self.view, View::Terminal(_));
        if key.code == KeyCode::Char('c')
            && key.modifiers.contains(KeyModifiers::CONTROL)
            && !in_terminal
        {
            self.quitting = true;
            return vec![Effect::Quit];
        }
        if matches!(self.view, View::Terminal(_)) && self.mode == Mode::Normal {
            return self.on_terminal_key(key);
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Help => vec![],
            Mode::Filter(query) => self.on_filter_key(query, key),
            Mode::Command(line) => self.on_command_key(line, key),
            Mode::Launcher(form) => self.on_launcher_key(*form, key),
            Mode::Normal => self.on_normal_key(key),
        }
    }

    fn on_filter_key(&mut self, mut query: String, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Esc => self.pods.set_filter(""),
            KeyCode::Enter => {}
            KeyCode::Backspace => {
                query.pop();
                self.pods.set_filter(&query);
                self.mode = Mode::Filter(query);
            }
            KeyCode::Up | KeyCode::Down => {
                self.pods
                    .move_by(if key.code == KeyCode::Up { -1 } else { 1 });
                self.mode = Mode::Filter(query);
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                query.push(c);
                self.pods.set_filter(&query);
                self.mode = Mode::Filter(query);
            }
            _ => self.mode = Mode::Filter(query),
        }
        vec![]
    }

    fn on_command_key(&mut self, mut line: CommandLine, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Esc => vec![],
            KeyCode::Enter => self.run_command(&line.text()),
            KeyCode::Tab => {
                line.complete(&self.namespaces, &self.contexts);
                self.mode = Mode::Command(line);
                vec![]
            }
            KeyCode::Backspace => {
                if !line.backspace() {
                    return vec![];
                }
                self.mode = Mode::Command(line);
                vec![]
            }
            KeyCode::Char(c) => {
                line.insert(c);
                self.mode = Mode::Command(line);
                vec![]
            }
            _ => {
                self.mode = Mode::Command(line);
                vec![]
            }
        }
    }

    fn run_command(&mut self, text: &str) -> Vec<Effect> {
        match command::parse(text) {
            Ok(command::Command::Quit) => {
                self.quitting = true;
                vec![Effect::Quit]
            }
            Ok(command::Command::Namespace(None)) => self.set_scope(Scope::All),
            Ok(command::Command::Namespace(Some(ns))) => {
                self.set_scope(Scope::Namespaces(vec![ns]))
            }
            Ok(command::Command::Context(ctx)) => {
                if !self.contexts.contains(&ctx) {
                    self.message = Some(error(format!(
                        "No context named {ctx:?}; known contexts: {}.",
                        self.contexts.join(", ")
                    )));
                    return vec![];
                }
                self.message = Some(info(format!("Connecting to context {ctx}…")));
                vec![Effect::SwitchContext(ctx)]
            }
            Err(sentence) => {
                self.message = Some(error(sentence));
                vec![]
            }
        }
    }

    fn set_scope(&mut self, scope: Scope) -> Vec<Effect> {
        self.view = View::Pods;
        self.scope = scope.clone();
        self.pods.replace(None, Vec::new());
        self.connection = Connection::Connecting;
        self.message = None;
        vec![Effect::StopWatchingPod, Effect::WatchPods(scope)]
    }

    fn on_normal_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(action) = self.keymap.action(&key) else {
            return vec![];
        };
        let in_pod_view = matches!(self.view, View::Pod(_));
        match action {
            Action::Quit => {
                self.quitting = true;
                vec![Effect::Quit]
            }
            Action::Help => {
                self.mode = Mode::Help;
                vec![]
            }
            Action::Command => {
                self.mode = Mode::Command(CommandLine::default());
                vec![]
            }
            Action::Filter if !in_pod_view => {
                let query = self.pods.query().unwrap_or_default().to_string();
                self.mode = Mode::Filter(query);
                vec![]
            }
            Action::ToggleAllNamespaces => match self.scope {
                Scope::All => self.set_scope(Scope::Namespaces(vec![self.home_namespace.clone()])),
                Scope::Namespaces(_) => self.set_scope(Scope::All),
            },
            Action::Back => {
                if in_pod_view {
                    self.view = View::Pods;
                    vec![Effect::StopWatchingPod]
                } else {
                    self.pods.set_filter("");
                    self.message = None;
                    vec![]
                }
            }
            Action::Open if !in_pod_view => self.open_pod(false),
            Action::Debug if !in_pod_view => self.open_pod(true),
            Action::Debug => self.open_launcher(),
            Action::Attach | Action::Shell | Action::Logs if in_pod_view => {
                self.open_terminal(action)
            }
            movement => {
                self.move_cursor(movement);
                vec![]
            }
        }
    }

    fn open_pod(&mut self, launch: bool) -> Vec<Effect> {
        let Some(key) = self.pods.selected().cloned() else {
            return vec![];
        };
        self.view = View::Pod(Box::new(PodView {
            key: key.clone(),
            detail: None,
            events: Vec::new(),
            cursor: 0,
            gone: false,
            launch_when_loaded: launch,
        }));
        vec![Effect::WatchPod(key)]
    }

    /// The pod view, whether shown or waiting behind a terminal.
    fn pod_view_mut(&mut self) -> Option<&mut PodView> {
        match &mut self.view {
            View::Pod(v) => Some(v),
            View::Terminal(t) => Some(&mut t.back),
            View::Pods => None,
        }
    }

    fn terminal_mut(&mut self, id: u64) -> Option<&mut TerminalView> {
        match &mut self.view {
            View::Terminal(t) if t.id == id => Some(t),
            _ => None,
        }
    }

    fn open_launcher(&mut self) -> Vec<Effect> {
        let images = self.debug_images.clone();
        let profile = self.debug_profile;
        let random = self.now.as_nanosecond() as u64;
        let View::Pod(view) = &mut self.view else {
            return vec![];
        };
        let Some(detail) = &view.detail else {
            view.launch_when_loaded = true;
            return vec![];
        };
        let selected = detail.containers.get(view.cursor).map(|c| c.name.clone());
        let form = Launcher::new(detail, selected.as_deref(), &images, profile, random);
        self.mode = Mode::Launcher(Box::new(form));
        vec![]
    }

    fn on_launcher_key(&mut self, mut form: Launcher, key: KeyEvent) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            return vec![];
        };
        let Some(detail) = view.detail.clone() else {
            return vec![];
        };
        match form.on_key(key, &detail) {
            FormOutcome::Stay => {
                self.mode = Mode::Launcher(Box::new(form));
                vec![]
            }
            FormOutcome::Cancel => vec![],
            FormOutcome::Reattach(name) => {
                self.start_terminal(TerminalKind::Attach, name, TerminalState::Attaching, None)
            }
            FormOutcome::Launch(spec) => {
                // Most recently used first, as the runtime records it.
                self.debug_images.retain(|i| *i != spec.image);
                self.debug_images.insert(0, spec.image.clone());
                let pod = detail.key.clone();
                let name = spec.name.clone();
                let mut effects = self.start_terminal(
                    TerminalKind::Debug,
                    name,
                    TerminalState::Launching,
                    Some(form),
                );
                if let View::Terminal(t) = &self.view {
                    effects.push(Effect::Launch {
                        id: t.id,
                        pod,
                        spec,
                    });
                }
                effects
            }
        }
    }

    /// `a`, `s` or `l` on the selected container of the pod view.
    fn open_terminal(&mut self, action: Action) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            return vec![];
        };
        let Some(container) = view
            .detail
            .as_ref()
            .and_then(|d| d.containers.get(view.cursor))
            .cloned()
        else {
            return vec![];
        };
        let running = container.state.is_running();
        match action {
            Action::Logs => self.start_terminal(
                TerminalKind::Log,
                container.name,
                TerminalState::Attaching,
                None,
            ),
            _ if !running => {
                self.message = Some(warning(format!(
                    "Container {} is not running; press l for its log, or d to launch a debug container.",
                    container.name
                )));
                vec![]
            }
            Action::Shell => self.start_terminal(
                TerminalKind::Shell,
                container.name,
                TerminalState::Attaching,
                None,
            ),
            _ => self.start_terminal(
                TerminalKind::Attach,
                container.name,
                TerminalState::Attaching,
                None,
            ),
        }
    }

    /// Replaces the pod view with a terminal on `container`, keeping the pod
    /// view (and its watch) behind it.
    fn start_terminal(
        &mut self,
        kind: TerminalKind,
        container: String,
        state: TerminalState,
        form: Option<Launcher>,
    ) -> Vec<Effect> {
        let View::Pod(back) = std::mem::replace(&mut self.view, View::Pods) else {
            return vec![];
        };
        self.next_session += 1;
        let id = self.next_session;
        let (cols, rows) = self.body;
        let pod = back.key.clone();
        let mut terminal = TerminalView {
            id,
            pod: pod.clone(),
            container: container.clone(),
            kind,
            state,
            since: self.now,
            pane: Pane::new(cols, rows, DEFAULT_SCROLLBACK),
            back,
            form,
            prefix: false,
        };
        let effects = match kind {
            TerminalKind::Debug => vec![],
            TerminalKind::Log => vec![Effect::ShowLog { id, pod, container }],
            TerminalKind::Attach | TerminalKind::Shell => {
                terminal.state = TerminalState::Attaching;
                let session = if kind == TerminalKind::Shell {
                    SessionKind::Exec(crate::cluster::session::shell_command())
                } else {
                    SessionKind::Attach
                };
                vec![Effect::OpenSession {
                    id,
                    pod,
                    container,
                    kind: session,
                    size: (cols, rows),
                    replay_log: false,
                }]
            }
        };
        self.message = None;
        self.view = View::Terminal(Box::new(terminal));
        effects
    }

    /// A launched debug container is followed through the pod watch: attach
    /// once it runs, show its log if it already ended, show why it waits.
    fn after_detail_change(&mut self) -> Vec<Effect> {
        let launch_now =
            matches!(&self.view, View::Pod(v) if v.launch_when_loaded && v.detail.is_some());
        if launch_now {
            if let View::Pod(v) = &mut self.view {
                v.launch_when_loaded = false;
            }
            return self.open_launcher();
        }
        let (cols, rows) = self.body;
        let View::Terminal(t) = &mut self.view else {
            return vec![];
        };
        if matches!(t.state, TerminalState::Ended(_))
            && matches!(t.kind, TerminalKind::Debug | TerminalKind::Attach)
        {
            // An attach always ends with Success: the container's own exit
            // code is in its status.
            if let Some(ContainerState::Terminated {
                exit_code, reason, ..
            }) = t
                .back
                .detail
                .as_ref()
                .and_then(|d| d.container(&t.container))
                .map(|c| c.state.clone())
            {
                t.state = TerminalState::Ended(format!(
                    "the container exited with code {exit_code} ({reason})"
                ));
            }
            return vec![];
        }
        let waiting_for_start = matches!(
            t.state,
            TerminalState::Launching | TerminalState::Waiting { .. }
        );
        if t.kind != TerminalKind::Debug || !waiting_for_start {
            return vec![];
        }
        let Some(state) = t
            .back
            .detail
            .as_ref()
            .and_then(|d| d.container(&t.container))
            .map(|c| c.state.clone())
        else {
            return vec![];
        };
        match state {
            ContainerState::Running { .. } => {
                t.state = TerminalState::Attaching;
                vec![Effect::OpenSession {
                    id: t.id,
                    pod: t.pod.clone(),
                    container: t.container.clone(),
                    kind: SessionKind::Attach,
                    size: (cols, rows),
                    replay_log: true,
                }]
            }
            ContainerState::Terminated {
                exit_code,
                reason,
                message,
                ..
            } => {
                let detail = if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                };
                t.state = TerminalState::Ended(format!(
                    "exited with code {exit_code} ({reason}){detail}"
                ));
                vec![Effect::ShowLog {
                    id: t.id,
                    pod: t.pod.clone(),
                    container: t.container.clone(),
                }]
            }
            ContainerState::Waiting { reason, message } => {
                t.state = TerminalState::Waiting { reason, message };
                vec![]
            }
            ContainerState::Unknown => vec![],
        }
    }

    fn on_launch_failed(&mut self, id: u64, sentence: String) -> Vec<Effect> {
        let Some(t) = self.terminal_mut(id) else {
            return vec![];
        };
        let form = t.form.take();
        let View::Terminal(t) = std::mem::replace(&mut self.view, View::Pods) else {
            return vec![];
        };
        self.view = View::Pod(t.back);
        if let Some(mut form) = form {
            form.error = Some(sentence);
            self.mode = Mode::Launcher(Box::new(form));
        } else {
            self.message = Some(error(sentence));
        }
        vec![]
    }

    /// Keys in a terminal go to the remote, except after the prefix (Ctrl-b).
    fn on_terminal_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let View::Terminal(t) = &mut self.view else {
            return vec![];
        };
        let ctrl_b =
            key.code == KeyCode::Char('b') && key.modifiers.contains(KeyModifiers::CONTROL);
        if t.prefix {
            t.prefix = false;
            return match key.code {
                KeyCode::Char('d') | KeyCode::Esc => self.leave_terminal(),
                KeyCode::PageUp | KeyCode::Char('[') => {
                    t.pane.scroll(i64::from(t.pane.size().1) as isize / 2);
                    vec![]
                }
                _ if ctrl_b && t.is_live() => vec![Effect::SendInput {
                    id: t.id,
                    bytes: Bytes::from_static(&[0x02]),
                }],
                _ => vec![],
            };
        }
        if ctrl_b {
            t.prefix = true;
            return vec![];
        }
        if key.modifiers.contains(KeyModifiers::SHIFT)
            && matches!(key.code, KeyCode::PageUp | KeyCode::PageDown)
        {
            let half = (t.pane.size().1 / 2).max(1) as isize;
            t.pane.scroll(if key.code == KeyCode::PageUp {
                half
            } else {
                -half
            });
            return vec![];
        }
        if !t.is_live() {
            // Nothing to type into: r re-attaches a cut stream; Esc, q or Enter go back.
            return match key.code {
                KeyCode::Char('r') if matches!(t.state, TerminalState::Disconnected(_)) => {
                    t.state = TerminalState::Attaching;
                    let (cols, rows) = t.pane.size();
                    vec![Effect::OpenSession {
                        id: t.id,
                        pod: t.pod.clone(),
                        container: t.container.clone(),
                        kind: SessionKind::Attach,
                        size: (cols, rows),
                        replay_log: false,
                    }]
                }
                KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => self.leave_terminal(),
                _ => vec![],
            };
        }
        if t.pane.scrolled_back() {
            t.pane.scroll(-(1 << 30));
        }
        match crate::term::keys::encode_key(&key, t.pane.application_cursor()) {
            Some(bytes) => vec![Effect::SendInput {
                id: t.id,
                bytes: Bytes::from(bytes),
            }],
            None => vec![],
        }
    }

    /// Back to the pod view; the session is closed (a container never gets
    /// EOF from a detach, so it keeps running).
    fn leave_terminal(&mut self) -> Vec<Effect> {
        let View::Terminal(t) = std::mem::replace(&mut self.view, View::Pods) else {
            return vec![];
        };
        let id = t.id;
        self.view = View::Pod(t.back);
        vec![Effect::CloseSession { id }]
    }

    fn resize_terminal(&mut self) -> Vec<Effect> {
        let (cols, rows) = self.body;
        let View::Terminal(t) = &mut self.view else {
            return vec![];
        };
        if t.pane.resize(cols, rows) && t.is_live() {
            return vec![Effect::ResizeSession {
                id: t.id,
                cols,
                rows,
            }];
        }
        vec![]
    }

    fn move_cursor(&mut self, action: Action) {
        let page = self.page as isize;
        if let View::Pod(view) = &mut self.view {
            let len = view.detail.as_ref().map_or(0, |d| d.containers.len());
            let last = len.saturating_sub(1);
            view.cursor = match action {
                Action::Up => view.cursor.saturating_sub(1),
                Action::Down => (view.cursor + 1).min(last),
                Action::Top => 0,
                Action::Bottom => last,
                _ => view.cursor,
            };
            return;
        }
        match action {
            Action::Up => self.pods.move_by(-1),
            Action::Down => self.pods.move_by(1),
            Action::PageUp => self.pods.move_by(-page),
            Action::PageDown => self.pods.move_by(page),
            Action::Top => self.pods.select_index(0),
            Action::Bottom => self.pods.select_index(usize::MAX),
            _ => {}
        }
    }
}

fn info(text: String) -> Message {
    Message {
        level: Level::Info,
        text,
    }
}

fn warning(text: String) -> Message {
    Message {
        level: Level::Warning,
        text,
    }
}

fn error(text: String) -> Message {
    Message {
        level: Level::Error,
        text,
    }
}

#[cfg(test)]
pub(crate) mod tests;

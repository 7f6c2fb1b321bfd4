//! The TUI's state machine: `App::update(Event) -> Vec<Effect>`. No I/O, no
//! async: the runtime feeds it events (keys, watch updates, ticks) and
//! carries out the effects it returns (start/stop watches, switch context,
//! quit). Tests drive it directly.

pub(crate) mod command;
pub(crate) mod copy;
mod events_view;
pub(crate) mod follow;
use follow::PodFollow;
pub mod keymap;
pub(crate) mod launcher;
mod link;
mod pages;
mod panes;
pub mod pods;
pub(crate) mod reader;
pub(crate) mod terminal;
pub(crate) mod workspace;

use bytes::Bytes;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent};
use jiff::Timestamp;
use ratatui::layout::Rect;

use crate::model::debug::{DebugSpec, Profile};
use crate::model::feed::Feed;
use crate::model::pod_security::Policy;
use crate::model::problem::Denied;
use crate::model::session::{SessionEnd, SessionKind};
use crate::model::{ClusterId, EventRow, PodDetail, PodKey, PodRow, TerminalKey};
use crate::term::Size;
use crate::term::layout::{Axis, PaneId};
use command::{CommandLine, SortColumn};
pub use events_view::EventsView;
use events_view::apply_events;
use keymap::{Action, KeySpec, Keymap};
use launcher::{FormOutcome, Launcher};
pub use link::Link;
use pods::PodTable;
use reader::Reader;
pub use terminal::TerminalId;
use terminal::TerminalKind;
use workspace::Workspace;

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
    Mouse(MouseEvent),
    Paste(String),
    /// The user's terminal changed size.
    Resize(Size),
    /// Once a second, for ages and the connection indicator.
    Tick(Timestamp),
    Pods(Feed<PodRow>),
    Namespaces(Feed<String>),
    Detail(Feed<PodDetail>),
    PodEvents(Feed<EventRow>),
    /// The events view's watch.
    Events(Feed<EventRow>),
    /// A delete asked for with [`Effect::DeletePod`] was accepted, or not
    /// (one sentence).
    PodDeleted {
        key: PodKey,
        outcome: Result<(), String>,
    },
    /// A new context is connected.
    Connected {
        cluster: ClusterId,
        context: String,
        namespace: String,
        contexts: Vec<String>,
    },
    /// Switching context failed: one sentence.
    ConnectFailed(String),
    /// Adding the debug container failed: one sentence, and the Pod
    /// Security level when that was the refusal.
    LaunchFailed {
        id: TerminalId,
        sentence: String,
        refused_by: Option<Policy>,
    },
    /// The debug container was added with warnings (`Warning` headers).
    LaunchWarned {
        id: TerminalId,
        warnings: Vec<String>,
    },
    /// The pod view's namespace's Pod Security labels; `None` when the user
    /// may not read the namespace.
    PodSecurity(Option<Policy>),
    /// The stream is open (and any earlier output shown): typing goes through.
    SessionAttached {
        id: TerminalId,
    },
    SessionOutput {
        id: TerminalId,
        bytes: Bytes,
    },
    SessionEnded {
        id: TerminalId,
        end: SessionEnd,
    },
    /// The pod a terminal is on, from the terminal's own watch.
    TerminalPod {
        id: TerminalId,
        feed: Feed<PodDetail>,
    },
    TerminalEvents {
        id: TerminalId,
        feed: Feed<EventRow>,
    },
    /// A timer asked for with [`Effect::WakeAfter`] went off.
    Wake(u64),
    /// Recording started (with its file), stopped (`None`), or failed.
    Recording {
        id: TerminalId,
        outcome: Result<Option<std::path::PathBuf>, String>,
    },
}

/// What the runtime should do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    /// Send [`Event::Wake`] with `token` after this long.
    WakeAfter {
        after: std::time::Duration,
        token: u64,
    },
    /// Replace the pod watch(es) with this scope.
    WatchPods(Scope),
    /// Watch one pod's detail and events (the pod view).
    WatchPod(PodKey),
    /// Watch the events of these namespaces (the events view); replaces
    /// the pod view's watch.
    WatchEvents(Scope),
    /// Stop the pod view's or the events view's watch.
    StopWatchingPod,
    /// Delete the pod, on this cluster (the user confirmed).
    DeletePod {
        cluster: ClusterId,
        pod: PodKey,
    },
    SwitchContext(String),
    /// Add this ephemeral container (`key.container`) to the pod, on the
    /// key's cluster.
    Launch {
        id: TerminalId,
        key: TerminalKey,
        spec: DebugSpec,
    },
    /// Attach or exec, on the key's cluster. With `replay_log`, first show
    /// what the container printed before the attach (from its log), without
    /// duplicates.
    OpenSession {
        id: TerminalId,
        key: TerminalKey,
        kind: SessionKind,
        size: Size,
        replay_log: bool,
    },
    /// Show a container's log (for containers that have exited).
    ShowLog {
        id: TerminalId,
        key: TerminalKey,
        /// Each of these containers' logs, each line after the container's
        /// name (the all-containers pane); empty: `key.container`'s alone.
        containers: Vec<String>,
        options: terminal::LogOptions,
        /// Start over (after a toggle or `:since`), not from where the
        /// pane's last stream stopped.
        fresh: bool,
        /// The previous run's log (`previous=true`).
        previous: bool,
        /// Follow the running container's log (`follow=true`), as a log
        /// pane does; else read what there is, as a finished container's
        /// pane does.
        follow: bool,
    },
    SendInput {
        id: TerminalId,
        bytes: Bytes,
    },
    ResizeSession {
        id: TerminalId,
        size: Size,
    },
    /// Ends the session and everything that follows it (its pod watch,
    /// its recording).
    CloseSession {
        id: TerminalId,
    },
    /// Watch the pod a terminal is on (on its cluster), for its container's state.
    Follow {
        id: TerminalId,
        key: TerminalKey,
    },
    /// Put this text on the user's clipboard (OSC 52 to the user's own terminal).
    Copy(String),
    /// Remember an image that ran, first in the launcher's recent list.
    RememberImage(String),
    /// Start or stop recording a terminal (asciicast v2).
    Record {
        id: TerminalId,
        on: bool,
        size: Size,
        title: String,
    },
}

/// How the browser's watch of the cluster stands, as the header shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    Connecting,
    Live,
    Reconnecting,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub level: Severity,
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
    /// Closing a pane whose session is alive: y to confirm.
    ConfirmClose(PaneId),
    /// Quitting while sessions are live: y to confirm.
    ConfirmQuit,
    /// Typing a search in the describe or YAML view, or in an event read
    /// in full.
    Find(String),
    /// Deleting this pod: y to confirm.
    ConfirmDelete(PodKey),
}

/// The browser's screens (the workspace is beside them, see [`Focus`]).
#[derive(Debug)]
pub enum View {
    Pods,
    Pod(Box<PodView>),
    Events(Box<EventsView>),
}

/// What the pod view shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Page {
    Containers,
    /// The pod as `kubectl describe pod` lays it out, live.
    Describe(Reader),
    /// The pod as YAML, live.
    Yaml(Reader),
}

/// Which half has the keyboard: the browser or the workspace of panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Browser,
    Workspace,
}

/// Where the browser and the workspace are drawn; `None` when hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub browser: Option<Rect>,
    pub workspace: Option<Rect>,
}

/// How panes behave (from `[terminal]` in config.toml).
#[derive(Debug, Clone)]
pub struct PaneOptions {
    /// The key that leaves the shell's keyboard for one pane command.
    pub prefix: KeySpec,
    pub scrollback: usize,
    /// Record every new terminal.
    pub record: bool,
    /// A stream cut after this long without traffic is re-attached once,
    /// automatically; `None` never.
    pub reattach_when_idle: Option<std::time::Duration>,
    /// From this many columns on, the browser and the workspace are side by side.
    pub side_by_side_from: u16,
    /// Quitting with live sessions asks first.
    pub confirm_quit: bool,
    /// A log pane starts with the last this many lines (`[logs] tail`);
    /// `None`: the whole log.
    pub log_tail: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodView {
    pub key: PodKey,
    pub pod: PodFollow,
    pub cursor: usize,
    /// Open the debug launcher as soon as the pod's detail arrives.
    pub launch_when_loaded: bool,
    /// The namespace's Pod Security labels, once read (if they may be).
    pub policy: Option<Policy>,
    /// Why the pod's detail is not arriving (the server fails or is
    /// silent), until it does.
    pub trouble: Option<String>,
    pub page: Page,
    /// Opened straight on a page from the list (`D`, `y`): `esc` goes back
    /// to the list.
    pub back_to_list: bool,
    /// Finished debug containers are folded into one row (`f`): they pile
    /// up, one per try.
    pub fold_finished: bool,
}

impl PodView {
    fn new(key: PodKey) -> Self {
        PodView {
            key,
            pod: PodFollow::default(),
            cursor: 0,
            launch_when_loaded: false,
            policy: None,
            trouble: None,
            page: Page::Containers,
            back_to_list: false,
            fold_finished: false,
        }
    }

    /// The containers listed, in the pod's order (finished debug
    /// containers left out when folded).
    pub fn listed(&self) -> Vec<&crate::model::ContainerInfo> {
        let Some(detail) = &self.pod.detail else {
            return Vec::new();
        };
        detail
            .containers
            .iter()
            .filter(|c| !self.fold_finished || !finished_debug(c))
            .collect()
    }

    /// The container under the cursor.
    pub fn selected(&self) -> Option<&crate::model::ContainerInfo> {
        self.listed().get(self.cursor).copied()
    }

    /// How many finished debug containers are folded away.
    pub fn folded(&self) -> usize {
        match &self.pod.detail {
            Some(d) if self.fold_finished => {
                d.containers.iter().filter(|c| finished_debug(c)).count()
            }
            _ => 0,
        }
    }

    /// Writes the describe or YAML page again from the pod as it now is.
    fn refresh_page(&mut self, now: Timestamp) {
        let Some(detail) = &self.pod.detail else {
            return;
        };
        match &mut self.page {
            Page::Containers => {}
            Page::Describe(reader) => reader.replace(crate::model::describe::describe_pod(
                &detail.manifest,
                &self.pod.events,
                now,
            )),
            Page::Yaml(reader) => {
                reader.replace(crate::model::describe::pod_yaml(&detail.manifest))
            }
        }
    }
}

pub struct App {
    /// The cluster the browser shows (and new terminals open on).
    pub cluster: ClusterId,
    /// Every context connected to in this run, oldest first: with more than
    /// one, each pane says which it belongs to.
    pub contexts_used: Vec<String>,
    pub context: String,
    pub contexts: Vec<String>,
    /// The context's own namespace.
    pub home_namespace: String,
    /// Extra namespaces from config, for restricted users.
    pub fallback_namespaces: Vec<String>,
    pub scope: Scope,
    /// The namespaces shown before `0` switched to all of them.
    scope_before_all: Option<Scope>,
    pub connection: Link,
    pub pods: PodTable,
    pub namespaces: Vec<String>,
    pub mode: Mode,
    /// The mode ctrl-c interrupted, restored when the user does not quit.
    mode_before_quit: Option<Mode>,
    pub view: View,
    pub workspace: Workspace,
    pub focus: Focus,
    pub options: PaneOptions,
    /// The prefix was pressed: the next key is a pane command.
    pub prefix_armed: bool,
    /// A pane was just resized: resize keys repeat without the prefix
    /// until the wake-up with this token.
    pub resizing: Option<u64>,
    next_wake: u64,
    /// The axis of the next split, when the user chose one.
    next_split: Option<Axis>,
    pub message: Option<Message>,
    pub keymap: Keymap,
    pub now: Timestamp,
    /// Rows the pod table can show (set from the terminal size), for paging.
    pub rows_per_page: usize,
    /// The user's terminal.
    pub size: Size,
    pub debug_images: Vec<String>,
    pub debug_profile: Profile,
    /// `f` folded finished debug containers: every pod view opens so.
    fold_finished: bool,
    next_terminal: u64,
    pub quitting: bool,
}

pub struct AppOptions {
    pub cluster: ClusterId,
    pub context: String,
    pub contexts: Vec<String>,
    pub namespace: String,
    pub all_namespaces: bool,
    pub fallback_namespaces: Vec<String>,
    pub keymap: Keymap,
    pub now: Timestamp,
    pub debug_images: Vec<String>,
    pub debug_profile: Profile,
    pub panes: PaneOptions,
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
            contexts_used: vec![options.context.clone()],
            cluster: options.cluster,
            context: options.context,
            contexts: options.contexts,
            home_namespace: options.namespace,
            fallback_namespaces: options.fallback_namespaces,
            scope: scope.clone(),
            scope_before_all: None,
            connection: Link::new(),
            pods: PodTable::default(),
            namespaces: Vec::new(),
            mode: Mode::Normal,
            mode_before_quit: None,
            view: View::Pods,
            workspace: Workspace::default(),
            focus: Focus::Browser,
            options: options.panes,
            prefix_armed: false,
            resizing: None,
            next_wake: 0,
            next_split: None,
            message: None,
            keymap: options.keymap,
            now: options.now,
            rows_per_page: 20,
            size: Size::DEFAULT,
            debug_images: options.debug_images,
            debug_profile: options.debug_profile,
            fold_finished: false,
            next_terminal: 0,
            quitting: false,
        };
        (app, vec![Effect::WatchPods(scope)])
    }

    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        let effects = self.handle(event);
        self.fit_reader();
        effects
    }

    fn handle(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Key(key) => self.on_key(key),
            Event::Mouse(mouse) => {
                if self.mode != Mode::Normal {
                    return vec![];
                }
                self.on_mouse(mouse)
            }
            Event::Paste(text) => {
                match &mut self.mode {
                    Mode::Filter(query) => {
                        query.push_str(text.lines().next().unwrap_or_default());
                        let q = query.clone();
                        self.set_filter(&q);
                    }
                    Mode::Command(line) => line.insert_str(text.lines().next().unwrap_or_default()),
                    Mode::Normal if self.focus == Focus::Workspace => {
                        return self.on_workspace_paste(&text);
                    }
                    _ => {}
                }
                vec![]
            }
            Event::Resize(size) => {
                self.rows_per_page = usize::from(size.rows.saturating_sub(5)).max(1);
                self.size = Size::new(size.cols.max(1), size.rows.max(1));
                self.fit_terminals()
            }
            Event::Tick(now) => {
                self.now = now;
                self.connection.tick();
                // Ages in the description move on.
                if let View::Pod(view) = &mut self.view
                    && matches!(view.page, Page::Describe(_))
                {
                    view.refresh_page(now);
                }
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
                    Feed::Listing { .. } | Feed::Cut | Feed::Resumed | Feed::Reconnecting(_) => {}
                }
                vec![]
            }
            Event::Detail(feed) => {
                let now = self.now;
                let mut notice = None;
                if let Some(view) = self.pod_view_mut() {
                    let first = view.pod.detail.is_none();
                    if !matches!(feed, Feed::Reconnecting(_) | Feed::Listing { .. }) {
                        view.trouble = None;
                    }
                    match &feed {
                        Feed::Forbidden(denied) => notice = Some(warning(denied.sentence())),
                        Feed::Reconnecting(sentence) => {
                            let said = warning(sentence.clone());
                            view.trouble = Some(said.text.clone());
                            notice = Some(said);
                        }
                        _ => {}
                    }
                    let changed = view.pod.apply_detail(feed);
                    if first {
                        Self::select_first_regular(view);
                    }
                    let len = view.listed().len();
                    view.cursor = view.cursor.min(len.saturating_sub(1));
                    if changed {
                        view.refresh_page(now);
                    }
                }
                if notice.is_some() {
                    self.message = notice;
                }
                // An open form judges the pod as it now is.
                if let (Mode::Launcher(form), View::Pod(view)) = (&mut self.mode, &self.view)
                    && let Some(detail) = &view.pod.detail
                {
                    form.refresh(detail);
                }
                self.after_detail_change()
            }
            Event::PodEvents(feed) => {
                let now = self.now;
                if let Some(view) = self.pod_view_mut() {
                    // The YAML shows no events: only the description changes.
                    let changed = matches!(view.page, Page::Describe(_))
                        && matches!(
                            feed,
                            Feed::Listed { .. } | Feed::Applied(_) | Feed::Deleted(_)
                        );
                    view.pod.apply_events(feed);
                    if changed {
                        view.refresh_page(now);
                    }
                }
                vec![]
            }
            Event::Events(feed) => {
                self.on_events_feed(feed);
                vec![]
            }
            Event::PodDeleted { key, outcome } => {
                self.message = Some(match outcome {
                    Ok(()) => info(format!(
                        "Pod {key} deleted; it goes once its containers stop."
                    )),
                    Err(sentence) => error(sentence),
                });
                vec![]
            }
            Event::Connected {
                cluster,
                context,
                namespace,
                contexts,
            } => {
                self.cluster = cluster;
                // A question about the other cluster's pod is void.
                if matches!(self.mode, Mode::ConfirmDelete(_)) {
                    self.mode = Mode::Normal;
                }
                if !self.contexts_used.contains(&context) {
                    self.contexts_used.push(context.clone());
                }
                self.context = context;
                self.home_namespace = namespace.clone();
                self.contexts = contexts;
                self.pods.replace(None, Vec::new());
                self.namespaces.clear();
                self.connection.connecting();
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
            Event::LaunchFailed {
                id,
                sentence,
                refused_by,
            } => self.on_launch_failed(id, sentence, refused_by),
            Event::LaunchWarned { id, warnings } => {
                self.on_launch_warned(id, &warnings);
                vec![]
            }
            Event::PodSecurity(policy) => {
                self.on_pod_security(policy);
                vec![]
            }
            Event::SessionAttached { id } => self.on_session_attached(id),
            Event::SessionOutput { id, bytes } => {
                self.on_session_output(id, &bytes);
                vec![]
            }
            Event::SessionEnded { id, mut end } => {
                // Drawn on the pane's border: it may quote the server.
                end.reason = crate::model::text::printable(end.reason);
                self.on_session_ended(id, end)
            }
            Event::TerminalPod { id, feed } => self.on_terminal_detail(id, feed),
            Event::TerminalEvents { id, feed } => {
                self.on_terminal_events(id, feed);
                vec![]
            }
            Event::Wake(token) => {
                self.on_wake(token);
                vec![]
            }
            Event::Recording { id, outcome } => {
                self.on_recording(id, outcome);
                vec![]
            }
        }
    }

    /// Where the browser and the workspace go. Side by side on wide
    /// terminals once there are panes; otherwise whichever has the keyboard.
    pub fn areas(&self) -> Areas {
        self.areas_for(self.size)
    }

    /// [`App::areas`] for a screen of (`cols`, `rows`).
    pub fn areas_for(&self, Size { cols, rows }: Size) -> Areas {
        // The header above, the message and key lines below.
        let body = Rect::new(0, 1, cols, rows.saturating_sub(3));
        if self.workspace.is_empty() {
            return Areas {
                browser: Some(body),
                workspace: None,
            };
        }
        if cols >= self.options.side_by_side_from {
            let left = (cols * 2 / 5).min(110);
            return Areas {
                browser: Some(Rect {
                    width: left,
                    ..body
                }),
                workspace: Some(Rect {
                    x: left,
                    width: cols - left,
                    ..body
                }),
            };
        }
        match self.focus {
            Focus::Browser => Areas {
                browser: Some(body),
                workspace: None,
            },
            Focus::Workspace => Areas {
                browser: None,
                workspace: Some(body),
            },
        }
    }

    fn on_pods(&mut self, feed: Feed<PodRow>) -> Vec<Effect> {
        match feed {
            Feed::Listing { .. } => {}
            Feed::Listed { scope, rows } => {
                self.pods.replace(scope.as_deref(), rows);
                self.link_back();
            }
            Feed::Applied(row) => {
                self.pods.apply(row);
                self.link_back();
            }
            Feed::Deleted(row) => {
                self.pods.remove(&row.key);
                self.link_back();
            }
            Feed::Resumed => self.link_back(),
            Feed::Cut => self.connection.reconnecting(None),
            Feed::Reconnecting(sentence) => {
                self.message = Some(warning(sentence.clone()));
                self.connection.reconnecting(Some(sentence));
            }
            Feed::Forbidden(denied) => return self.narrow_after_denial(denied),
        }
        vec![]
    }

    /// The pod watch runs again: clear its trouble message, if it is still
    /// the one showing.
    fn link_back(&mut self) {
        if let Some(sentence) = self.connection.live()
            && self.message.as_ref().is_some_and(|m| m.text == sentence)
        {
            self.message = None;
        }
    }

    /// Restricted users are the norm: when the cluster-wide list is refused,
    /// fall back to the namespaces we know the user may use, and say which
    /// permission was missing.
    fn narrow_after_denial(&mut self, denied: Denied) -> Vec<Effect> {
        match &self.scope {
            Scope::All => {
                let mut fallback = vec![self.home_namespace.clone()];
                for ns in &self.fallback_namespaces {
                    if !fallback.contains(ns) {
                        fallback.push(ns.clone());
                    }
                }
                self.message = Some(warning(format!(
                    "{} Showing namespace {} instead.",
                    denied.sentence(),
                    fallback.join(", ")
                )));
                self.scope = Scope::Namespaces(fallback);
                vec![Effect::WatchPods(self.scope.clone())]
            }
            Scope::Namespaces(_) => {
                self.link_back();
                self.message = Some(warning(denied.sentence()));
                vec![]
            }
        }
    }

    fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let in_workspace = self.focus == Focus::Workspace;
        // In a pane, ctrl-c belongs to the shell.
        if key.code == KeyCode::Char('c')
            && key.modifiers.contains(KeyModifiers::CONTROL)
            && !in_workspace
            && self.mode != Mode::ConfirmQuit
        {
            // Kept, so that "no" goes back to a half-filled form.
            self.mode_before_quit = Some(std::mem::replace(&mut self.mode, Mode::Normal));
            return self.quit();
        }
        if in_workspace && self.mode == Mode::Normal {
            return self.on_workspace_key(key);
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Help => vec![],
            Mode::Filter(query) => self.on_filter_key(query, key),
            Mode::Command(line) => self.on_command_key(line, key),
            Mode::Launcher(form) => self.on_launcher_key(*form, key),
            Mode::ConfirmClose(pane) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => self.close_pane(pane),
                _ => vec![],
            },
            Mode::ConfirmQuit => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => {
                    self.quitting = true;
                    vec![Effect::Quit]
                }
                _ => {
                    self.message = None;
                    self.mode = self.mode_before_quit.take().unwrap_or(Mode::Normal);
                    vec![]
                }
            },
            Mode::ConfirmDelete(pod) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => {
                    self.message = Some(info(format!("Deleting pod {pod}…")));
                    vec![Effect::DeletePod {
                        cluster: self.cluster.clone(),
                        pod,
                    }]
                }
                _ => {
                    self.message = Some(info(format!("Pod {pod} was not deleted.")));
                    vec![]
                }
            },
            Mode::Find(query) => self.on_find_key(query, key),
            Mode::Normal => self.on_normal_key(key),
        }
    }

    fn on_filter_key(&mut self, mut query: String, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Esc => self.set_filter(""),
            KeyCode::Enter => {}
            KeyCode::Backspace => {
                query.pop();
                self.set_filter(&query);
                self.mode = Mode::Filter(query);
            }
            KeyCode::Up | KeyCode::Down => {
                let action = if key.code == KeyCode::Up {
                    Action::Up
                } else {
                    Action::Down
                };
                self.move_cursor(action);
                self.mode = Mode::Filter(query);
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                query.push(c);
                self.set_filter(&query);
                self.mode = Mode::Filter(query);
            }
            _ => self.mode = Mode::Filter(query),
        }
        vec![]
    }

    /// The filter of the list or of the events view, whichever is shown.
    fn set_filter(&mut self, query: &str) {
        match &mut self.view {
            View::Events(view) => {
                view.filter = query.to_string();
                view.cursor = 0;
            }
            _ => self.pods.set_filter(query),
        }
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
            _ => {
                if line.edit(&key) != command::Edit::LeaveEmpty {
                    self.mode = Mode::Command(line);
                }
                vec![]
            }
        }
    }

    fn run_command(&mut self, text: &str) -> Vec<Effect> {
        match command::parse(text) {
            Ok(command::Command::Quit) => self.quit(),
            Ok(command::Command::Namespace(None)) => self.set_scope(Scope::All),
            Ok(command::Command::Namespace(Some(ns))) => {
                self.set_scope(Scope::Namespaces(vec![ns]))
            }
            Ok(command::Command::Record) => match self.workspace.focused_pane() {
                Some(slot) => {
                    let id = slot.terminal;
                    self.toggle_recording(id)
                }
                None => {
                    self.message = Some(error(
                        "Nothing to record: :record works on the focused pane.".into(),
                    ));
                    vec![]
                }
            },
            Ok(command::Command::Describe) => self.open_page(false),
            Ok(command::Command::Yaml) => self.open_page(true),
            Ok(command::Command::Events { all_namespaces }) => self.open_events(all_namespaces),
            Ok(command::Command::Sort(column)) => {
                self.sort_by(column);
                vec![]
            }
            Ok(command::Command::Exec(command)) => self.exec(command),
            Ok(command::Command::Since(seconds)) => self.log_since(seconds),
            Ok(command::Command::Delete) => {
                self.ask_delete();
                vec![]
            }
            Ok(command::Command::Rename(name)) => {
                self.rename_focused(&name);
                vec![]
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

    /// `q`, `ctrl-c` or `:q`: quits, but asks first while sessions are live
    /// (closing them loses what runs in shells; debug containers run on).
    fn quit(&mut self) -> Vec<Effect> {
        let live = self.workspace.live_sessions();
        if self.options.confirm_quit && !live.is_empty() {
            self.message = Some(warning(format!("{}. Quit? y/n", live_sentence(&live))));
            self.mode = Mode::ConfirmQuit;
            return vec![];
        }
        self.quitting = true;
        vec![Effect::Quit]
    }

    fn set_scope(&mut self, scope: Scope) -> Vec<Effect> {
        self.view = View::Pods;
        self.scope = scope.clone();
        self.pods.replace(None, Vec::new());
        self.connection.connecting();
        self.message = None;
        vec![Effect::StopWatchingPod, Effect::WatchPods(scope)]
    }

    fn on_normal_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if let Some(effects) = self.on_reader_key(&key) {
            return effects;
        }
        let Some(action) = self.keymap.action(&key) else {
            return vec![];
        };
        if let Some(effects) = self.on_events_key(action) {
            return effects;
        }
        let in_pod_view = matches!(self.view, View::Pod(_));
        match action {
            Action::Describe => self.open_page(false),
            Action::Yaml => self.open_page(true),
            Action::Events => self.open_events(false),
            Action::Delete => {
                self.ask_delete();
                vec![]
            }
            Action::Exec if in_pod_view => {
                let mut line = CommandLine::default();
                line.insert_str("exec ");
                self.mode = Mode::Command(line);
                vec![]
            }
            Action::Exec => self.exec(Vec::new()),
            Action::AllLogs if in_pod_view => self.open_all_logs(),
            Action::Fold => {
                if let View::Pod(view) = &mut self.view {
                    // Stay on the same container.
                    let on = view.selected().map(|c| c.name.clone());
                    view.fold_finished = !view.fold_finished;
                    self.fold_finished = view.fold_finished;
                    view.cursor = on
                        .and_then(|name| view.listed().iter().position(|c| c.name == name))
                        .unwrap_or(0);
                }
                vec![]
            }
            Action::SortByName
            | Action::SortByStatus
            | Action::SortByRestarts
            | Action::SortByAge
                if !in_pod_view =>
            {
                self.sort_by(match action {
                    Action::SortByName => SortColumn::Name,
                    Action::SortByStatus => SortColumn::Status,
                    Action::SortByRestarts => SortColumn::Restarts,
                    _ => SortColumn::Age,
                });
                vec![]
            }
            Action::Quit => self.quit(),
            Action::Help => {
                self.mode = Mode::Help;
                vec![]
            }
            Action::Workspace => self.show_workspace(),
            Action::Command => {
                self.mode = Mode::Command(CommandLine::default());
                vec![]
            }
            Action::Filter if !in_pod_view => {
                let query = self.pods.query().unwrap_or_default().to_string();
                self.mode = Mode::Filter(query);
                vec![]
            }
            Action::ToggleAllNamespaces => match &self.scope {
                // Back to where `0` was pressed (`-n shop` stays shop), not
                // the context's own namespace.
                Scope::All => {
                    let back = self
                        .scope_before_all
                        .take()
                        .unwrap_or_else(|| Scope::Namespaces(vec![self.home_namespace.clone()]));
                    self.set_scope(back)
                }
                Scope::Namespaces(_) => {
                    self.scope_before_all = Some(self.scope.clone());
                    self.set_scope(Scope::All)
                }
            },
            Action::Back => {
                if in_pod_view {
                    self.message = None;
                    self.view = View::Pods;
                    vec![Effect::StopWatchingPod]
                } else {
                    self.pods.set_filter("");
                    self.message = None;
                    vec![]
                }
            }
            Action::CopyName => {
                let key = self.selected_pod();
                let Some(key) = key else { return vec![] };
                self.message = Some(info(format!(
                    "Copied {} to the clipboard (through your terminal, OSC 52).",
                    key.name
                )));
                vec![Effect::Copy(key.name.to_string())]
            }
            Action::Open if !in_pod_view => self.open_pod(false),
            Action::Debug if !in_pod_view => self.open_pod(true),
            Action::Debug => self.open_launcher(),
            Action::Attach | Action::Shell | Action::Logs | Action::PreviousLogs if in_pod_view => {
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
        // A notice about the previous screen does not belong on this one.
        self.message = None;
        let mut view = PodView::new(key.clone());
        view.launch_when_loaded = launch;
        view.fold_finished = self.fold_finished;
        self.view = View::Pod(Box::new(view));
        vec![Effect::WatchPod(key)]
    }

    /// The pod the browser points at: the pod view's, or the list's
    /// selected one (none in the events view).
    fn selected_pod(&self) -> Option<PodKey> {
        match &self.view {
            View::Pod(view) => Some(view.key.clone()),
            View::Pods => self.pods.selected().cloned(),
            View::Events(_) => None,
        }
    }

    /// `X` or `:delete`: asks before deleting the selected pod.
    fn ask_delete(&mut self) {
        let key = self.selected_pod();
        let Some(key) = key else {
            return;
        };
        // Short: the choice must fit on an 80-column line.
        self.message = Some(warning(format!(
            "Delete pod {key}? y deletes, any other key keeps it."
        )));
        self.mode = Mode::ConfirmDelete(key);
    }

    /// `:exec CMD…` in the selected container of the pod view.
    fn exec(&mut self, command: Vec<String>) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            self.message = Some(info(
                "Open a pod (enter) and select a container: e or :exec CMD runs a command in it."
                    .into(),
            ));
            return vec![];
        };
        let Some(container) = view.selected() else {
            return vec![];
        };
        if !container.state.is_running() {
            self.message = Some(warning(format!(
                "Container {} is not running: nothing can be run in it; press d to launch a debug container beside it.",
                container.name
            )));
            return vec![];
        }
        let key = TerminalKey::new(self.cluster.clone(), view.key.clone(), &container.name);
        self.open_exec_pane(key, command)
    }

    /// `L`: every container's log (init and debug containers included) in
    /// one pane.
    fn open_all_logs(&mut self) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            return vec![];
        };
        let Some(detail) = &view.pod.detail else {
            return vec![];
        };
        let containers: Vec<String> = detail.containers.iter().map(|c| c.name.clone()).collect();
        let key = TerminalKey::new(self.cluster.clone(), view.key.clone(), ALL_CONTAINERS);
        self.open_all_logs_pane(key, containers)
    }

    /// `N`, `S`, `R`, `A` or `:sort COLUMN`: sorts the list (again: the
    /// other way round).
    fn sort_by(&mut self, column: SortColumn) {
        let sort = self.pods.sort_by(column);
        self.message = Some(info(format!(
            "Sorted by {}, {}; the same key again reverses it.",
            column.name(),
            sort.order_words()
        )));
    }

    /// The pod view's detail, first arrived: as kubectl, select the first
    /// regular container rather than a finished init container.
    fn select_first_regular(view: &mut PodView) {
        if let Some(d) = &view.pod.detail {
            view.cursor = d
                .containers
                .iter()
                .position(|c| c.kind == crate::model::ContainerKind::Regular)
                .unwrap_or(0);
        }
    }

    fn pod_view_mut(&mut self) -> Option<&mut PodView> {
        match &mut self.view {
            View::Pod(v) => Some(v),
            View::Pods | View::Events(_) => None,
        }
    }

    fn open_launcher(&mut self) -> Vec<Effect> {
        let View::Pod(view) = &mut self.view else {
            return vec![];
        };
        if view.pod.detail.is_none() {
            view.launch_when_loaded = true;
            return vec![];
        }
        let selected = view.selected().map(|c| c.name.clone());
        self.show_launcher(selected.as_deref(), None);
        vec![]
    }

    /// Opens the launcher on the pod view's pod (once its detail is in),
    /// aimed at `selected`, saying `why` when there is a reason to.
    /// Returns false when there is no pod view with a detail to launch in.
    fn show_launcher(&mut self, selected: Option<&str>, why: Option<String>) -> bool {
        let View::Pod(view) = &self.view else {
            return false;
        };
        let Some(detail) = &view.pod.detail else {
            return false;
        };
        let random = self.now.as_nanosecond() as u64;
        let mut form = Launcher::new(
            detail,
            selected,
            &self.debug_images,
            self.debug_profile,
            view.policy.as_ref(),
            random,
        );
        form.error = why;
        self.mode = Mode::Launcher(Box::new(form));
        true
    }

    fn on_launcher_key(&mut self, mut form: Launcher, key: KeyEvent) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            return vec![];
        };
        let Some(detail) = view.pod.detail.as_ref() else {
            return vec![];
        };
        let pod = detail.key.clone();
        match form.on_key(key, detail) {
            FormOutcome::Stay => {
                self.mode = Mode::Launcher(Box::new(form));
                vec![]
            }
            FormOutcome::Cancel => vec![],
            FormOutcome::Reattach(name) => {
                let key = TerminalKey::new(self.cluster.clone(), pod, name);
                self.open_terminal_pane(TerminalKind::Attach, key, None).1
            }
            FormOutcome::Launch(spec) => {
                let key = TerminalKey::new(self.cluster.clone(), pod, spec.name.clone());
                let (id, mut effects) =
                    self.open_terminal_pane(TerminalKind::Debug, key.clone(), Some(form));
                effects.insert(0, Effect::Launch { id, key, spec });
                effects
            }
        }
    }

    /// `a`, `s` or `l` on the selected container of the pod view.
    fn open_terminal(&mut self, action: Action) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            return vec![];
        };
        let Some(container) = view.selected().cloned() else {
            return vec![];
        };
        let key = TerminalKey::new(self.cluster.clone(), view.key.clone(), &container.name);
        let running = container.state.is_running();
        let kind = match action {
            Action::Logs => TerminalKind::Log,
            Action::PreviousLogs => TerminalKind::PreviousLog,
            _ if !running => {
                self.message = Some(warning(format!(
                    "Container {} is not running; press l for its last run's log, p for the run before, or d to launch a debug container.",
                    container.name
                )));
                return vec![];
            }
            Action::Shell => TerminalKind::Shell,
            _ => TerminalKind::Attach,
        };
        self.open_terminal_pane(kind, key, None).1
    }

    /// Opens the launcher once a pod view asked for it and its detail arrived.
    fn after_detail_change(&mut self) -> Vec<Effect> {
        let launch_now =
            matches!(&self.view, View::Pod(v) if v.launch_when_loaded && v.pod.detail.is_some());
        if !launch_now {
            return vec![];
        }
        if let View::Pod(v) = &mut self.view {
            v.launch_when_loaded = false;
        }
        self.open_launcher()
    }

    fn move_cursor(&mut self, action: Action) {
        let page = self.rows_per_page as isize;
        if let View::Events(view) = &mut self.view {
            let last = view.visible().len().saturating_sub(1);
            view.cursor = match action {
                Action::Up => view.cursor.saturating_sub(1),
                Action::Down => (view.cursor + 1).min(last),
                Action::PageUp => view.cursor.saturating_sub(self.rows_per_page / 2),
                Action::PageDown => (view.cursor + self.rows_per_page / 2).min(last),
                Action::Top => 0,
                Action::Bottom => last,
                _ => view.cursor,
            };
            return;
        }
        if let View::Pod(view) = &mut self.view {
            let len = view.listed().len();
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

/// A debug container that has exited: it will never run again.
fn finished_debug(c: &crate::model::ContainerInfo) -> bool {
    c.kind == crate::model::ContainerKind::Ephemeral
        && matches!(c.state, crate::model::ContainerState::Terminated { .. })
}

/// The container name of an all-containers log pane's key: no container
/// can be named so.
pub const ALL_CONTAINERS: &str = "*";

/// "3 sessions are live (2 debug, 1 shell)" from the live terminals' kinds.
fn live_sentence(kinds: &[TerminalKind]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for kind in kinds {
        match counts.iter_mut().find(|(label, _)| *label == kind.label()) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind.label(), 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(l, n)| format!("{n} {l}")).collect();
    match kinds.len() {
        1 => format!("1 session is live ({})", parts.join(", ")),
        n => format!("{n} sessions are live ({})", parts.join(", ")),
    }
}

fn info(text: String) -> Message {
    Message {
        level: Severity::Info,
        text: crate::model::text::printable(text),
    }
}

pub fn warning(text: String) -> Message {
    Message {
        level: Severity::Warning,
        text: crate::model::text::printable(text),
    }
}

fn error(text: String) -> Message {
    Message {
        level: Severity::Error,
        text: crate::model::text::printable(text),
    }
}

#[cfg(test)]
pub(crate) mod tests;

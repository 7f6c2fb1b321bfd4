//! The TUI's state machine: `App::update(Event) -> Vec<Effect>`. No I/O, no
//! async: the runtime feeds it events (keys, watch updates, ticks) and
//! carries out the effects it returns (start/stop watches, switch context,
//! quit). Tests drive it directly.

pub mod command;
pub mod keymap;
pub mod pods;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use jiff::Timestamp;

use crate::cluster::errors::Denied;
use crate::cluster::feed::Feed;
use crate::model::{EventRow, PodDetail, PodKey, PodRow};
use command::CommandLine;
use keymap::{Action, Keymap};
use pods::PodTable;

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
}

#[derive(Debug, Clone, PartialEq)]
pub enum View {
    Pods,
    Pod(Box<PodView>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodView {
    pub key: PodKey,
    pub detail: Option<PodDetail>,
    /// Newest last.
    pub events: Vec<EventRow>,
    pub cursor: usize,
    pub gone: bool,
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
                    _ => {}
                }
                vec![]
            }
            Event::Resize(_, rows) => {
                self.page = usize::from(rows.saturating_sub(5)).max(1);
                vec![]
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
                if let View::Pod(view) = &mut self.view {
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
                        Feed::Forbidden(denied) => self.message = Some(warning(denied.sentence())),
                        Feed::Listing { .. } | Feed::Reconnecting(_) => {}
                    }
                    let len = view.detail.as_ref().map_or(0, |d| d.containers.len());
                    view.cursor = view.cursor.min(len.saturating_sub(1));
                }
                vec![]
            }
            Event::PodEvents(feed) => {
                if let View::Pod(view) = &mut self.view {
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
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.quitting = true;
            return vec![Effect::Quit];
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Help => vec![],
            Mode::Filter(query) => self.on_filter_key(query, key),
            Mode::Command(line) => self.on_command_key(line, key),
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
            Action::Open if !in_pod_view => match self.pods.selected().cloned() {
                Some(key) => {
                    self.view = View::Pod(Box::new(PodView {
                        key: key.clone(),
                        detail: None,
                        events: Vec::new(),
                        cursor: 0,
                        gone: false,
                    }));
                    vec![Effect::WatchPod(key)]
                }
                None => vec![],
            },
            movement => {
                self.move_cursor(movement);
                vec![]
            }
        }
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

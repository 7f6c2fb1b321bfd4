//! The TUI's state machine: `App::update(Event) -> Vec<Effect>`. No I/O, no
//! async: the runtime feeds it events (keys, watch updates, ticks) and
//! carries out the effects it returns (start/stop watches, switch context,
//! quit). Tests drive it directly.

pub mod bindings;
pub(crate) mod captures;
pub(crate) mod command;
mod connected;
pub(crate) mod copy;
pub(crate) mod debuggers;
mod event;
mod events_view;
pub(crate) mod files;
pub(crate) mod fleet;
pub(crate) mod follow;
pub mod form;
pub(crate) mod forwards;
mod input;
pub mod keymap;
pub(crate) mod launcher;
pub mod line;
mod link;
mod listing;
mod mark_set;
mod marks;
mod message;
mod mode;
pub(crate) mod nodes;
pub(crate) mod object_page;
pub(crate) mod object_rows;
pub mod other_clusters;
mod pages;
mod panes;
pub(crate) mod pod_copy;
pub mod pods;
mod pods_logs;
pub(crate) mod reader;
pub mod restore;
pub mod saved;
mod score;
pub(crate) mod services;
pub(crate) mod terminal;
mod usage;
#[cfg(test)]
pub(crate) use usage::fixtures as usage_fixtures;
mod view;
pub(crate) mod workloads;
pub(crate) mod workspace;

pub use event::{Effect, Event, Reached};
use message::live_sentence;
pub use message::{Message, Severity, warning};
pub(crate) use message::{error, info};
pub use mode::Mode;
pub use view::{Areas, Focus, Page, PodView, Scope, View};

use jiff::Timestamp;
use ratatui::layout::Rect;

use crate::model::debug::Profile;
use crate::model::feed::{Change, Feed};
use crate::model::problem::Denied;
use crate::model::{ClusterId, PodKey, PodRow, TerminalKey};
use crate::term::Size;
use crate::term::layout::Axis;
use command::{CommandLine, SortColumn};
pub use events_view::EventsView;
use events_view::apply_events;
use keymap::{Action, KeySpec, Keymap};
use launcher::{FormOutcome, Launcher};
pub use link::Link;
use listing::Listing;
use pods::PodTable;
pub use terminal::TerminalId;
use terminal::TerminalKind;
pub use usage::UsageReads;
use workspace::Workspace;

/// The most sentences the messages view keeps (the oldest go first).
const MAX_SAID: usize = 1000;

/// How the browser's watch of the cluster stands, as the header shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    Connecting,
    Live,
    Reconnecting,
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

pub struct App {
    /// The cluster the browser shows (and new terminals open on).
    pub cluster: ClusterId,
    /// The other clusters the pod list shows (`--context a,b`): none when
    /// it shows one.
    pub others: Vec<other_clusters::OtherCluster>,
    /// The context on the browser's cluster's rows, when the list shows
    /// several clusters (then every row says its own).
    first_tag: Option<std::sync::Arc<str>>,
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
    /// The scope is the context's own namespace (no `-n`, no `:ns`): in a
    /// list of several clusters, each lists its own context's namespace.
    scope_is_home: bool,
    /// `-n` chose the namespace: `0` from all namespaces goes back to it
    /// on every cluster, not to each context's own.
    namespace_chosen: bool,
    /// The namespaces shown before `0` switched to all of them, and
    /// whether they were each context's own.
    scope_before_all: Option<(Scope, bool)>,
    /// In a list of several clusters, the namespaces one cluster lists
    /// instead of all of them, after it refused the cluster-wide list.
    scope_fallbacks: std::collections::HashMap<std::sync::Arc<str>, Vec<String>>,
    pub connection: Link,
    pub pods: PodTable,
    /// The CPU and MEM columns' reads.
    pub usage: usage::UsageReads,
    /// The pod list shows only a workload's or a Service's pods.
    pub narrowed: Option<workloads::Narrowed>,
    /// Pods the server sent that do not decode (`namespace/name` → what is
    /// wrong): left out of the table, counted in the header.
    pub unreadable_pods: std::collections::BTreeMap<String, crate::model::text::Printable>,
    /// Namespaces of the scope whose pods the user may not list (by the
    /// tag of their cluster's rows), and the refusal: the table says it
    /// rather than "no pods".
    pub refused: std::collections::BTreeMap<(Option<std::sync::Arc<str>>, String), Denied>,
    /// Every sentence of this run (the status line's), with when: `M`.
    pub said: std::collections::VecDeque<(Timestamp, Message)>,
    /// The status line's sentence last kept in `said`.
    message_kept: Option<Message>,
    /// What each context left showed, for coming back to it with `:ctx`.
    scopes_by_context: std::collections::HashMap<String, (Scope, bool)>,
    pub namespaces: Vec<String>,
    /// `namespaces` is the server's whole list (not a fallback guess).
    namespaces_listed: bool,
    /// Restored terminals not started yet: a few a second, so a workspace
    /// of hundreds of panes does not send its thousand requests at once.
    restore_queue: std::collections::VecDeque<TerminalId>,
    pub mode: Mode,
    /// The pod list's last query, which `↑` brings back in a new one.
    last_filter: String,
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
    /// The team's profiles (`[profiles.NAME]`), after the built-ins.
    pub custom_profiles: Vec<crate::model::debug::CustomProfile>,
    /// The workspaces kept by name (`:load` completes them), sorted.
    pub kept_workspaces: Vec<String>,
    /// Where the file browser's downloads go (`[files] download_dir`).
    pub download_dir: String,
    /// `f` folded finished debug containers: every pod view opens so.
    fold_finished: bool,
    next_terminal: u64,
    /// The port-forwards started in this run, in order.
    pub forwards: Vec<forwards::Forward>,
    next_forward: u64,
    /// The packet captures started in this run, in order.
    pub captures: Vec<captures::Capture>,
    next_capture: u64,
    /// `F` or `C` on the list opened this pod: the form follows its detail.
    form_after_detail: Option<((ClusterId, PodKey), form::AfterDetail)>,
    /// Each context connected in this run, as its cluster: restored panes
    /// start on theirs.
    clusters: std::collections::BTreeMap<String, ClusterId>,
    /// The other contexts `:ctx a,b` named, for the list once `a` connects.
    next_others: Vec<String>,
    /// The marked pods being read for the launcher of many.
    marks_read: Option<marks::MarksRead>,
    /// Pod lists under way, by cluster (its rows' tag) and scope.
    listing: std::collections::HashMap<(Option<std::sync::Arc<str>>, Option<String>), Listing>,
    /// Restored forwards whose context is being connected.
    waiting_forwards: Vec<saved::SavedForward>,
    /// A restore brings the browser's context and namespaces back too
    /// (not when the command line chose them).
    restore_browser: bool,
    pub quitting: bool,
    /// Keys are arriving faster than anyone types ([`Event::Burst`]).
    typing_burst: bool,
}

pub struct AppOptions {
    pub cluster: ClusterId,
    pub context: String,
    /// Other contexts whose pods the list shows beside `context`'s.
    pub others: Vec<String>,
    pub contexts: Vec<String>,
    pub namespace: String,
    /// `namespace` was chosen (`-n`), not the context's own.
    pub namespace_chosen: bool,
    pub all_namespaces: bool,
    pub fallback_namespaces: Vec<String>,
    pub keymap: Keymap,
    pub now: Timestamp,
    pub debug_images: Vec<String>,
    pub debug_profile: Profile,
    pub download_dir: String,
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
        let others: Vec<_> = options
            .others
            .iter()
            .filter(|c| **c != options.context)
            .map(|c| other_clusters::OtherCluster::new(c))
            .collect();
        let first_tag = (!others.is_empty()).then(|| options.context.as_str().into());
        let mut effects = vec![Effect::WatchPods(scope.clone())];
        effects.extend(
            others
                .iter()
                .map(|o| Effect::ConnectContext(o.context.to_string())),
        );
        let app = App {
            others,
            first_tag,
            clusters: [(options.context.clone(), options.cluster.clone())].into(),
            waiting_forwards: Vec::new(),
            marks_read: None,
            next_others: Vec::new(),
            listing: Default::default(),
            restore_browser: true,
            contexts_used: vec![options.context.clone()],
            cluster: options.cluster,
            context: options.context,
            contexts: options.contexts,
            home_namespace: options.namespace,
            fallback_namespaces: options.fallback_namespaces,
            scope: scope.clone(),
            scope_is_home: !options.all_namespaces && !options.namespace_chosen,
            namespace_chosen: options.namespace_chosen,
            scope_before_all: None,
            scope_fallbacks: Default::default(),
            connection: Link::new(),
            pods: PodTable::default(),
            narrowed: None,
            usage: usage::UsageReads::default(),
            unreadable_pods: Default::default(),
            refused: Default::default(),
            scopes_by_context: Default::default(),
            said: Default::default(),
            message_kept: None,
            namespaces: Vec::new(),
            mode: Mode::Normal,
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
            custom_profiles: Vec::new(),
            kept_workspaces: Vec::new(),
            download_dir: options.download_dir,
            fold_finished: false,
            next_terminal: 0,
            forwards: Vec::new(),
            next_forward: 0,
            captures: Vec::new(),
            next_capture: 0,
            form_after_detail: None,
            quitting: false,
            typing_burst: false,
            last_filter: String::new(),
            namespaces_listed: false,
            restore_queue: std::collections::VecDeque::new(),
        };
        (app, effects)
    }

    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        let effects = self.handle(event);
        // A new sentence on the status line is kept for the messages view:
        // compared with the one shown before, not copied before every
        // event (session output is most of them).
        match &self.message {
            Some(message) if self.message_kept.as_ref() != Some(message) => {
                self.message_kept = Some(message.clone());
                self.remember_said(message.clone());
            }
            Some(_) => {}
            None => self.message_kept = None,
        }
        self.fit_reader();
        effects
    }

    fn handle(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Key(key) => self.on_key(key),
            Event::Burst(burst) => {
                self.typing_burst = burst;
                vec![]
            }
            Event::Mouse(mouse) => {
                if self.mode != Mode::Normal {
                    return vec![];
                }
                self.on_mouse(mouse)
            }
            Event::Paste(text) => {
                match &mut self.mode {
                    Mode::Filter(query) => {
                        query.insert_str(text.lines().next().unwrap_or_default());
                        let q = query.to_string();
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
                for other in &mut self.others {
                    other.link.tick();
                }
                // Ages in the description move on.
                if let View::Pod(view) = &mut self.view
                    && matches!(view.page, Page::Describe(_))
                {
                    view.refresh_page(now);
                }
                let mut effects = self.start_queued_restores();
                effects.extend(self.usage_due());
                effects
            }
            Event::Pods(feed) => self.on_pods(self.first_tag.clone(), feed),
            Event::OtherPods { cluster, feed } => self.on_other_pods(cluster, feed),
            Event::Namespaces(Feed::Forbidden(_)) => {
                self.namespaces_listed = false;
                // Completion falls back to what we know; nothing else breaks.
                let mut known = self.fallback_namespaces.clone();
                known.push(self.home_namespace.clone());
                known.sort();
                known.dedup();
                self.namespaces = known;
                vec![]
            }
            Event::Namespaces(feed) => {
                match feed.change() {
                    Some(Change::Listed(rows)) => {
                        self.namespaces = rows;
                        self.namespaces.sort();
                        self.namespaces_listed = true;
                    }
                    Some(Change::Applied(ns)) => {
                        if let Err(at) = self.namespaces.binary_search(&ns) {
                            self.namespaces.insert(at, ns);
                        }
                    }
                    Some(Change::Deleted(ns)) => self.namespaces.retain(|n| n != &ns),
                    None => {}
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
                        Feed::Unreadable(bad) => {
                            if let Some(said) = bad.first().map(|b| warning(b.sentence("pod"))) {
                                view.trouble = Some(said.text.clone());
                                notice = Some(said);
                            }
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
                let mut effects = self.after_detail_change();
                effects.extend(self.form_after_detail_ready());
                effects
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
            Event::Nodes(feed) => {
                self.on_nodes_feed(None, feed);
                vec![]
            }
            Event::OtherNodes { cluster, feed } => {
                self.on_nodes_feed(Some(cluster), feed);
                vec![]
            }
            Event::Services(feed) => {
                self.on_services_feed(None, feed);
                vec![]
            }
            Event::OtherServices { cluster, feed } => {
                self.on_services_feed(Some(cluster), feed);
                vec![]
            }
            Event::Workloads(feed) => {
                self.on_workloads_feed(None, feed);
                vec![]
            }
            Event::OtherWorkloads { cluster, feed } => {
                self.on_workloads_feed(Some(cluster), feed);
                vec![]
            }
            Event::PodCreated { id, cluster, pod } => self.on_pod_created(id, cluster, pod),
            Event::DebuggerStopped(outcome) => {
                self.on_debugger_stopped(outcome);
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
            } => self.on_connected(cluster, context, namespace, contexts),
            Event::Pulse {
                cluster,
                unanswered,
            } => {
                if cluster == self.cluster {
                    self.connection.pulse(unanswered);
                } else if let Some(other) = self
                    .others
                    .iter_mut()
                    .find(|o| o.cluster.as_ref() == Some(&cluster))
                {
                    other.link.pulse(unanswered);
                }
                vec![]
            }
            Event::ConnectFailed(sentence) => {
                self.next_others.clear();
                self.message = Some(error(sentence));
                vec![]
            }
            Event::LaunchFailed {
                id,
                sentence,
                refused_by,
            } => self.on_launch_failed(id, sentence.to_string(), refused_by),
            Event::LaunchWarned { id, warnings } => {
                self.on_launch_warned(id, &warnings);
                vec![]
            }
            Event::PodSecurity(policy) => {
                self.on_pod_security(policy);
                vec![]
            }
            Event::Files(event) => self.on_files_event(event),
            Event::Usage {
                cluster,
                namespaces,
                read,
            } => {
                self.on_usage(&cluster, namespaces, read);
                vec![]
            }
            Event::NodeUsage { cluster, read } => {
                self.on_node_usage(&cluster, read);
                vec![]
            }
            Event::NodePods {
                cluster,
                node,
                pods,
            } => {
                self.on_node_pods(&cluster, &node, pods);
                vec![]
            }
            Event::ObjectRead {
                cluster,
                object,
                read,
            } => {
                self.on_object_read(&cluster, &object, read);
                vec![]
            }
            Event::PodsRead { cluster, pods } => {
                self.on_pods_read(cluster, pods);
                vec![]
            }
            Event::SessionAttached { id } => self.on_session_attached(id),
            Event::SessionOutput { id, bytes } => {
                self.on_session_output(id, &bytes);
                vec![]
            }
            Event::SessionEnded { id, end } => self.on_session_ended(id, end),
            Event::SessionUnanswered { id, unanswered } => {
                if let Some(t) = self.workspace.terminals.get_mut(&id) {
                    t.unanswered = unanswered;
                }
                vec![]
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
            Event::ContextReady { context, outcome } => {
                let mut effects = self.other_connected(&context, &outcome).unwrap_or_default();
                let outcome = outcome.map(|reached| reached.cluster);
                effects.extend(self.on_context_ready(context, outcome));
                effects
            }
            Event::WorkspaceSaved { name, outcome } => {
                self.on_workspace_saved(name, outcome);
                vec![]
            }
            Event::WorkspaceLoaded { outcome, .. } => self.on_workspace_loaded(outcome),
            Event::ReplacementFound { id, pod } => {
                self.on_replacement_found(id, pod);
                vec![]
            }
            Event::Recording { id, outcome } => {
                self.on_recording(id, outcome);
                vec![]
            }
            Event::Forward { id, event } => {
                self.on_forward_event(id, event);
                vec![]
            }
            Event::Capture { id, event } => {
                self.on_capture_event(id, event);
                vec![]
            }
            Event::ForwardTotals {
                id,
                open,
                to_pod,
                from_pod,
            } => {
                self.on_forward_totals(id, open, to_pod, from_pod);
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

    /// `q`, `ctrl-c` or `:q`: quits, but asks first while sessions are live
    /// (closing them loses what runs in shells; debug containers run on).
    fn quit(&mut self) -> Vec<Effect> {
        let live = self.workspace.live_sessions();
        let forwards = self.running_forwards();
        let captures = self.running_captures();
        if self.options.confirm_quit
            && (!live.is_empty() || forwards.is_some() || captures.is_some())
        {
            let mut what: Vec<String> = Vec::new();
            if !live.is_empty() {
                what.push(live_sentence(&live));
            }
            what.extend(forwards);
            what.extend(captures);
            self.message = Some(warning(format!("{}. Quit? y/n", what.join("; "))));
            self.mode = Mode::ConfirmQuit;
            return vec![];
        }
        self.quitting = true;
        vec![Effect::Quit]
    }

    fn set_scope(&mut self, scope: Scope) -> Vec<Effect> {
        self.set_scope_of_home(scope, false)
    }

    /// Shows `scope`, which is each context's own namespace when `home`.
    fn set_scope_of_home(&mut self, scope: Scope, home: bool) -> Vec<Effect> {
        self.forget_narrowing();
        self.view = View::Pods;
        self.scope = scope;
        self.scope_is_home = home;
        self.scope_fallbacks.clear();
        self.refused.clear();
        self.pods.clear();
        self.connection.connecting();
        for other in &mut self.others {
            other.link.connecting();
        }
        self.message = None;
        let mut effects = vec![Effect::StopWatchingPod];
        effects.extend(self.watch_pods());
        effects
    }

    fn open_pod(&mut self, launch: bool) -> Vec<Effect> {
        let Some((cluster, key)) = self.selected_row() else {
            return vec![];
        };
        // A notice about the previous screen does not belong on this one.
        self.message = None;
        let mut view = PodView::new(cluster.clone(), key.clone());
        view.launch_when_loaded = launch;
        view.fold_finished = self.fold_finished;
        self.view = View::Pod(Box::new(view));
        vec![Effect::WatchPod(cluster, key)]
    }

    /// The list's selected pod and its cluster.
    pub(crate) fn selected_row(&self) -> Option<(ClusterId, PodKey)> {
        let key = self.pods.selected()?;
        Some((self.cluster_of(key)?, key.pod.clone()))
    }

    /// The pod the browser points at, and its cluster: the pod view's, or
    /// the list's selected one (none in the events view).
    fn selected_pod(&self) -> Option<(ClusterId, PodKey)> {
        match &self.view {
            View::Pod(view) => Some((view.cluster.clone(), view.key.clone())),
            View::Pods => self.selected_row(),
            View::Files(browser) => Some((browser.key.cluster.clone(), browser.key.pod.clone())),
            View::Events(_)
            | View::Messages(_)
            | View::Forwards(_)
            | View::Captures(_)
            | View::Nodes(_)
            | View::Services(_)
            | View::Workloads(_)
            | View::Debuggers(_) => None,
        }
    }

    /// `X` or `:delete`: asks before deleting the selected pod.
    fn ask_delete(&mut self) {
        let Some((cluster, key)) = self.selected_pod() else {
            return;
        };
        // Short: the choice must fit on an 80-column line.
        let shown = self.pod_label(&cluster, &key);
        self.message = Some(warning(format!(
            "Delete pod {shown}? y deletes, any other key keeps it."
        )));
        self.mode = Mode::ConfirmDelete(cluster, key);
    }

    /// `:exec CMD…` in the selected container of the pod view.
    fn exec(&mut self, command: Vec<String>) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            self.message = Some(info(
                "Open a pod (enter) and select a container: e or :exec CMD runs a command in it.",
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
        let key = TerminalKey::new(view.cluster.clone(), view.key.clone(), &container.name);
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
        let key = TerminalKey::new(view.cluster.clone(), view.key.clone(), ALL_CONTAINERS);
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
            View::Pods
            | View::Events(_)
            | View::Messages(_)
            | View::Files(_)
            | View::Forwards(_)
            | View::Captures(_)
            | View::Nodes(_)
            | View::Services(_)
            | View::Workloads(_)
            | View::Debuggers(_) => None,
        }
    }

    /// A seed for generated names (a debug container's, a copy's, a node
    /// pod's): the time of the event being handled, which the edge gives.
    /// Names need only differ from what exists, and the cluster refuses
    /// one that is taken.
    pub(crate) fn random_seed(&self) -> u64 {
        self.now.as_nanosecond() as u64
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
        let random = self.random_seed();
        let mut form = Launcher::new(
            detail,
            selected,
            &self.debug_images,
            self.debug_profile,
            view.policy.as_ref(),
            random,
        )
        .with_customs(&self.custom_profiles, detail);
        form.error = why;
        self.mode = Mode::Launcher(Box::new(form));
        true
    }

    /// `a`, `s` or `l` on the selected container of the pod view.
    fn open_terminal(&mut self, action: Action) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            return vec![];
        };
        let Some(container) = view.selected().cloned() else {
            return vec![];
        };
        let key = TerminalKey::new(view.cluster.clone(), view.key.clone(), &container.name);
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
}

/// The container name of an all-containers log pane's key: no container
/// can be named so.
pub const ALL_CONTAINERS: &str = "*";

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod no_tty_tests;

//! The workspace kept across runs: what [`App::saved`] keeps, the
//! question at start, `:save`/`:load`, and how each kept pane comes back:
//! a debug container or attach still running is re-attached with what it
//! printed meanwhile, one that ended says how, a replaced pod says so, a
//! shell is a new shell, a log goes on after its last line.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use crossterm::event::{KeyCode, KeyEvent};

use super::forwards::{Forward, ForwardState};
use super::saved::{
    PREVIOUS, SavedBrowser, SavedForward, SavedKind, SavedLogOptions, SavedPane, SavedShape,
    SavedSort, SavedTerminal, SavedWorkspace, VERSION,
};
use super::terminal::{
    LogOptions, OwnedPod, Replaced, Restored, Terminal, TerminalKind, TerminalState,
};
use super::{App, Effect, Focus, Mode, Scope, TerminalId, error, info, warning};
use crate::model::forward::{ForwardRequest, ForwardTarget, PortMapping};
use crate::model::session::SessionKind;
use crate::model::text::Printable;
use crate::model::{ClusterId, ContainerState, PodKey, TerminalKey};
use crate::term::Size;
use crate::term::layout::{Layout, PaneId};

/// Whether to bring the kept workspace back at start (`--restore`,
/// `--no-restore`, `[workspace] restore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RestoreChoice {
    #[default]
    Ask,
    Always,
    Never,
}

/// Restored terminals started at once, then a tick (a second) apart:
/// about 50 requests a second for a workspace of hundreds of panes.
const RESTORED_AT_ONCE: usize = 10;

impl App {
    /// The workspace as it is now, and the terminal each kept terminal
    /// is (the runtime adds where their logs got to).
    pub fn saved(&self) -> (SavedWorkspace, Vec<TerminalId>) {
        let ids: Vec<TerminalId> = self.workspace.terminals.keys().copied().collect();
        let index_of = |id: TerminalId| ids.iter().position(|t| *t == id).unwrap_or(0);
        let order = self.workspace.layout.panes();
        let pane_index = |pane: PaneId| order.iter().position(|p| *p == pane).unwrap_or(0);
        let panes = order
            .iter()
            .filter_map(|id| self.workspace.panes.get(id))
            .map(|pane| SavedPane {
                terminal: index_of(pane.terminal),
                title: pane.title.clone().map(Printable::into_string),
                marked: pane.marked,
            })
            .collect();
        let terminals = ids
            .iter()
            .map(|id| saved_terminal(&self.workspace.terminals[id]))
            .collect();
        // Every forward :pf lists (one that failed is tried again), and
        // those still waiting for their context.
        let forwards = self
            .forwards
            .iter()
            .map(|f| SavedForward {
                context: f.cluster.context.to_string(),
                server: f.cluster.server.to_string(),
                user: f.cluster.user.to_string(),
                namespace: f.namespace.clone(),
                target: f.target.to_string(),
                local: f.local.map(|a| a.port()).or(f.wanted_local),
                remote: f.remote.to_string(),
            })
            .chain(self.waiting_forwards.iter().cloned())
            .collect();
        let saved = SavedWorkspace {
            version: VERSION,
            saved_at: self.now,
            browser: SavedBrowser {
                context: self.context.clone(),
                namespaces: match &self.scope {
                    Scope::All => None,
                    Scope::Namespaces(n) => Some(n.clone()),
                },
                filter: self.pods.query().unwrap_or_default().to_string(),
                sort: self.pods.sort().map(|s| SavedSort {
                    column: s.column.name().to_string(),
                    reversed: s.reversed,
                }),
                others: self.others.iter().map(|o| o.context.to_string()).collect(),
                own_namespaces: self.scope_is_home,
            },
            layout: self
                .workspace
                .layout
                .shape()
                .map(|shape| SavedShape::of(&shape, &pane_index)),
            zoomed: self.workspace.layout.zoomed().map(pane_index),
            focused: self.workspace.focused.map(pane_index),
            in_workspace: self.focus == Focus::Workspace,
            panes,
            terminals,
            forwards,
        };
        (saved, ids)
    }

    /// Whether the runtime may write the workspace now: not while the
    /// question about the kept one is open (it would overwrite it).
    pub fn keeps_workspace(&self) -> bool {
        !matches!(self.mode, Mode::ConfirmRestore(_))
    }

    /// At start: a kept workspace with panes or forwards is offered,
    /// brought back or left as `choice` says. `browser_pinned`: the
    /// command line chose the context or namespaces, which stay.
    pub fn offer_restore(
        &mut self,
        saved: SavedWorkspace,
        choice: RestoreChoice,
        browser_pinned: bool,
    ) -> Vec<Effect> {
        if saved.panes.is_empty() && saved.forwards.is_empty() {
            return vec![];
        }
        self.restore_browser = !browser_pinned;
        match choice {
            RestoreChoice::Never => vec![],
            RestoreChoice::Always => self.restore(saved),
            RestoreChoice::Ask => {
                self.message = Some(warning(self.restore_question(&saved)));
                self.mode = Mode::ConfirmRestore(Box::new(saved));
                vec![]
            }
        }
    }

    fn restore_question(&self, saved: &SavedWorkspace) -> String {
        let mut what = saved.summary(self.now);
        if !saved.forwards.is_empty() {
            let n = saved.forwards.len();
            what.push_str(&format!(
                " and {n} port-forward{}",
                if n == 1 { "" } else { "s" }
            ));
        }
        format!("Restore {what}?")
    }

    /// `y` restores, `n` (or esc) keeps it for `:load`, `d` forgets it. Any
    /// other key, and every key of a burst faster than typing, answers
    /// nothing: the question is there at start, where text meant for a
    /// restored shell may arrive before the user has read it.
    pub(super) fn on_restore_answer(
        &mut self,
        saved: SavedWorkspace,
        key: KeyEvent,
    ) -> Vec<Effect> {
        let unanswered = |app: &mut App, saved: SavedWorkspace, why: &str| {
            let question = app.restore_question(&saved);
            app.message = Some(warning(format!("{why}. {question}")));
            app.mode = Mode::ConfirmRestore(Box::new(saved));
            vec![]
        };
        if self.typing_burst {
            return unanswered(self, saved, "Keys faster than typing answer nothing");
        }
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => self.restore(saved),
            KeyCode::Char('d') | KeyCode::Char('D') => {
                self.message = Some(info("The kept workspace is forgotten."));
                vec![Effect::ForgetWorkspace]
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                self.message = Some(info(format!(
                    "Not restored; :load {PREVIOUS} brings it back."
                )));
                vec![Effect::SaveWorkspace {
                    name: PREVIOUS.into(),
                    workspace: Box::new(saved),
                    terminals: vec![],
                }]
            }
            _ => unanswered(self, saved, "Only y, n or d answers"),
        }
    }

    /// `:save NAME`.
    pub(super) fn save_as(&mut self, name: String) -> Vec<Effect> {
        if let Err(why) = super::saved::check_name(&name) {
            self.message = Some(error(why));
            return vec![];
        }
        let (workspace, terminals) = self.saved();
        vec![Effect::SaveWorkspace {
            name,
            workspace: Box::new(workspace),
            terminals,
        }]
    }

    /// `:load NAME`: only into an empty workspace (the panes open now are
    /// sessions the user may not want to lose).
    pub(super) fn load(&mut self, name: String) -> Vec<Effect> {
        // `:load` alone lists what is kept.
        if !name.is_empty() && !self.workspace.is_empty() {
            self.message = Some(error(format!(
                "Close the panes first (or :save them): :load {name} brings a workspace into an empty one."
            )));
            return vec![];
        }
        vec![Effect::LoadWorkspace(name)]
    }

    pub(super) fn on_workspace_saved(
        &mut self,
        name: String,
        outcome: Result<std::path::PathBuf, String>,
    ) {
        if outcome.is_ok()
            && let Err(at) = self.kept_workspaces.binary_search(&name)
        {
            self.kept_workspaces.insert(at, name.clone());
        }
        match outcome {
            Ok(_) if name == PREVIOUS => {}
            Ok(path) => {
                self.message = Some(info(format!(
                    "Workspace kept as {name} ({}); :load {name} brings it back.",
                    path.display()
                )))
            }
            Err(sentence) => self.message = Some(error(sentence)),
        }
    }

    pub(super) fn on_workspace_loaded(
        &mut self,
        outcome: Result<Box<SavedWorkspace>, String>,
    ) -> Vec<Effect> {
        match outcome {
            Ok(saved) => {
                self.restore_browser = true;
                self.load_into_empty(*saved)
            }
            Err(sentence) => {
                self.message = Some(error(sentence));
                vec![]
            }
        }
    }

    fn load_into_empty(&mut self, saved: SavedWorkspace) -> Vec<Effect> {
        if !self.workspace.is_empty() {
            self.message = Some(error(
                "Close the panes first (or :save them): :load brings a workspace into an empty one.",
            ));
            return vec![];
        }
        self.restore(saved)
    }

    /// Brings a kept workspace back: panes and layout at once, each
    /// terminal starting when its context is connected.
    fn restore(&mut self, saved: SavedWorkspace) -> Vec<Effect> {
        let mut effects = Vec::new();
        if self.restore_browser {
            effects.extend(self.restore_browser_state(&saved.browser));
        }
        let mut ids = Vec::new();
        let mut to_connect = BTreeSet::new();
        for kept in &saved.terminals {
            // Each pane says its context once there are several.
            if !self.contexts_used.contains(&kept.context) {
                self.contexts_used.push(kept.context.clone());
            }
            self.next_terminal += 1;
            let id = TerminalId(self.next_terminal);
            let cluster = self.clusters.get(&kept.context).cloned();
            if cluster.is_none() {
                to_connect.insert(kept.context.clone());
            }
            let terminal = self.kept_terminal(id, kept, cluster, saved.saved_at);
            self.workspace.terminals.insert(id, terminal);
            ids.push(id);
        }
        let panes: Vec<PaneId> = saved
            .panes
            .iter()
            .map(|p| {
                self.workspace.insert_pane(
                    ids[p.terminal],
                    p.title.as_deref().map(Printable::from),
                    p.marked,
                )
            })
            .collect();
        let zoomed = saved.zoomed.and_then(|z| panes.get(z).copied());
        self.workspace.layout = saved
            .layout
            .as_ref()
            .and_then(|shape| Layout::from_shape(shape.to_shape(&panes), zoomed))
            .unwrap_or_else(|| Layout::tiled_of(&panes));
        self.workspace.focused = saved
            .focused
            .and_then(|f| panes.get(f).copied())
            .or_else(|| panes.first().copied());
        // The panes just asked for have the keyboard, wherever it was when
        // they were kept: keys typed for a shell must not act on the list.
        if !panes.is_empty() {
            self.focus = Focus::Workspace;
        }
        effects.extend(self.fit_terminals());
        self.restore_queue.extend(&ids);
        effects.extend(self.start_queued_restores());
        for kept in &saved.forwards {
            match self.clusters.get(&kept.context).cloned() {
                Some(cluster) => effects.extend(self.restart_forward(kept, cluster)),
                None => {
                    to_connect.insert(kept.context.clone());
                    self.waiting_forwards.push(kept.clone());
                }
            }
        }
        effects.extend(to_connect.into_iter().map(Effect::ConnectContext));
        let ago = saved.summary(self.now);
        self.message = Some(info(format!("Restored {ago}.")));
        effects
    }

    /// The browser's namespaces, filter and sort (its context too, when
    /// it is another: switched to, finding the namespaces kept).
    fn restore_browser_state(&mut self, browser: &SavedBrowser) -> Vec<Effect> {
        let scope = match &browser.namespaces {
            None => Scope::All,
            Some(namespaces) if namespaces.is_empty() => Scope::All,
            Some(namespaces) => Scope::Namespaces(namespaces.clone()),
        };
        if let Some(sort) = &browser.sort
            && let Some(column) = super::command::SortColumn::ALL
                .into_iter()
                .find(|c| c.name() == sort.column)
        {
            self.pods.set_sort(column, sort.reversed);
        }
        if !browser.filter.is_empty() {
            self.pods.set_filter(&browser.filter);
        }
        // The clusters the list showed beside it, those still known.
        let others: Vec<String> = browser
            .others
            .iter()
            .filter(|c| self.contexts.contains(c) && **c != browser.context)
            .cloned()
            .collect();
        let shown: Vec<&str> = self.others.iter().map(|o| &*o.context).collect();
        let (home, elsewhere) = (browser.own_namespaces, others != shown);
        if (browser.context != self.context || elsewhere)
            && self.contexts.contains(&browser.context)
        {
            self.scopes_by_context
                .insert(browser.context.clone(), (scope, home));
            self.next_others = others;
            return vec![Effect::SwitchContext(browser.context.clone())];
        }
        if browser.context == self.context && (scope != self.scope || home != self.scope_is_home) {
            self.scope = scope.clone();
            self.scope_is_home = home;
            self.scope_fallbacks.clear();
            self.refused.clear();
            self.pods.clear();
            self.connection.connecting();
            return self.watch_pods();
        }
        vec![]
    }

    fn kept_terminal(
        &mut self,
        id: TerminalId,
        kept: &SavedTerminal,
        cluster: Option<ClusterId>,
        saved_at: jiff::Timestamp,
    ) -> Terminal {
        let cluster =
            cluster.unwrap_or_else(|| ClusterId::new(&kept.context, &kept.server, &kept.user));
        let key = TerminalKey::new(
            cluster,
            PodKey::new(&kept.namespace, &kept.pod),
            &kept.container,
        );
        let kind = match kept.kind {
            SavedKind::Debug => TerminalKind::Debug,
            SavedKind::Attach => TerminalKind::Attach,
            SavedKind::Shell => TerminalKind::Shell,
            SavedKind::Exec => TerminalKind::Exec,
            SavedKind::Log => TerminalKind::Log,
            SavedKind::AllLogs => TerminalKind::AllLogs,
            SavedKind::PodsLogs => TerminalKind::PodsLogs,
            SavedKind::PreviousLog => TerminalKind::PreviousLog,
        };
        let mut t = Terminal::new(id, key, kind, self.now);
        t.grid = kind.grid(Size::new(80, 24), self.options.scrollback);
        t.command = kept.command.clone();
        t.containers = kept.containers.clone();
        let SavedLogOptions {
            timestamps,
            cut_at,
            since_seconds,
            tail,
        } = kept.log;
        t.log = LogOptions {
            timestamps,
            cut: cut_at.is_some(),
            since_seconds,
            tail,
        };
        t.grid.set_cut(t.log.cut);
        t.owned = kept.owned_pod.then_some(OwnedPod::Created);
        if t.kind == TerminalKind::PodsLogs {
            let picks = kept
                .picks
                .iter()
                .map(|pick| super::pods::Pick {
                    context: self.first_tag.clone(),
                    namespace: pick.namespace.clone(),
                    selector: crate::model::selector::Selector::of_label_selector(&pick.selector),
                })
                .collect();
            let narrow = super::pods::Narrow { picks };
            t.pods_of = Some((kept.pod.clone(), narrow));
        }
        if t.kind.follows_log() {
            t.resume_from = kept.last_seen.clone();
        }
        t.restored = Some(Restored {
            pod_uid: kept.pod_uid.clone(),
            server: kept.server.clone(),
            saved_at,
            started: false,
            controller: kept.controller.clone(),
        });
        if !self.clusters.contains_key(&kept.context) {
            t.notice = Some(format!("Connecting to context {}…", kept.context));
        }
        t
    }

    /// Starts the queued restored terminals, [`RESTORED_AT_ONCE`] at a
    /// time, the rest on the next ticks (each costs a few requests: its
    /// pod's watch, its session or log).
    pub(super) fn start_queued_restores(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut started = 0;
        while started < RESTORED_AT_ONCE {
            let Some(id) = self.restore_queue.pop_front() else {
                break;
            };
            let due = self
                .workspace
                .terminals
                .get(&id)
                .and_then(|t| t.restored.as_ref())
                .is_some_and(|r| !r.started);
            if due {
                effects.extend(self.start_restored(id));
                started += 1;
            }
        }
        effects
    }

    /// Starts a restored terminal whose context is connected: its pod is
    /// watched; a log goes on, a shell is opened anew; a debug container
    /// or attach waits for its pod's state.
    fn start_restored(&mut self, id: TerminalId) -> Vec<Effect> {
        let Some(cluster) = self
            .workspace
            .terminals
            .get(&id)
            .and_then(|t| self.clusters.get(&*t.key.cluster.context).cloned())
        else {
            return vec![];
        };
        // A pods' log pane reads its workload's pods as the list has them
        // now, if it has them yet (they may have been replaced meanwhile).
        let pods_now = self.workspace.terminals.get(&id).and_then(|t| {
            let (_, narrow) = t.pods_of.as_ref()?;
            Some(super::pods_logs::started(&self.pods, narrow)).filter(|p| !p.is_empty())
        });
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return vec![];
        };
        let Some(restored) = t.restored.as_mut().filter(|r| !r.started) else {
            return vec![];
        };
        restored.started = true;
        t.notice = None;
        if *cluster.server != *restored.server {
            let sentence = format!(
                "context {} now reaches {}, not {} as when this pane was kept: not restored",
                cluster.context, cluster.server, restored.server
            );
            t.restored = None;
            t.say_in_pane("not restored", &sentence);
            t.state = TerminalState::Ended(sentence.into());
            return vec![];
        }
        t.key.cluster = cluster;
        // A pods' log pane follows the pod list, not one pod.
        let mut effects = match t.kind {
            TerminalKind::PodsLogs => vec![],
            _ => vec![Effect::Follow {
                id,
                key: t.key.clone(),
            }],
        };
        match t.kind {
            TerminalKind::Log | TerminalKind::AllLogs | TerminalKind::PodsLogs => {
                if t.kind == TerminalKind::PodsLogs {
                    // Nothing to settle: the pod list decides, not one pod's state.
                    t.restored = None;
                    if let Some(pods) = pods_now {
                        t.containers = pods;
                    }
                }
                if let Some(last) = t.resume_from.values().max() {
                    let when = last.strftime("%H:%M:%S UTC");
                    t.grid.feed(
                        format!(
                            "\x1b[2m── podbay restarted: the log goes on after {when} ──\x1b[0m\r\n"
                        )
                        .as_bytes(),
                    );
                }
                t.state = TerminalState::Attaching;
                effects.push(t.log_effect(false));
            }
            TerminalKind::PreviousLog => {
                t.state = TerminalState::Attaching;
                effects.push(t.log_effect(false));
            }
            TerminalKind::Shell => {
                t.notice =
                    Some("A new shell: the one before podbay restarted ended with it.".to_string());
                t.state = TerminalState::Attaching;
                effects.push(Effect::OpenSession {
                    id,
                    key: t.key.clone(),
                    kind: SessionKind::Exec(crate::model::session::shell_command()),
                    size: t.grid.size(),
                    replay_log: false,
                    stdio: crate::model::Stdio::TERMINAL,
                });
            }
            TerminalKind::Exec => {
                t.restored = None;
                let sentence = format!(
                    "it ran {} before podbay restarted; a command is not run again by itself (e in the pod view runs one)",
                    match t.command.first() {
                        Some(program) => format!("`{program} …`"),
                        None => "a command".to_string(),
                    }
                );
                t.say_in_pane("not run again", &sentence);
                t.state = TerminalState::Ended(sentence.into());
            }
            // Attached once the pod's state says the container runs.
            TerminalKind::Debug | TerminalKind::Attach => {}
        }
        effects
    }

    /// A restored terminal's pod arrived: a replaced pod says so; a debug
    /// container or attach is re-attached (with what it printed
    /// meanwhile), or says how it ended, or waits.
    pub(super) fn settle_restored(&mut self, id: TerminalId) -> Option<Vec<Effect>> {
        let t = self.workspace.terminals.get_mut(&id)?;
        let restored = t.restored.as_ref().filter(|r| r.started)?;
        if t.pod.gone {
            let controller = restored.controller.clone().filter(|_| t.kind.is_log());
            t.restored = None;
            let sentence = format!(
                "the pod {} no longer exists: it was deleted after podbay last kept this pane",
                t.key.pod
            );
            t.say_in_pane("not restored", &sentence);
            t.state = TerminalState::Ended(sentence.into());
            // A log: the pod its controller runs now may be what the user wants.
            return Some(match controller {
                Some(controller) => {
                    let find = Effect::FindReplacement {
                        id,
                        cluster: t.key.cluster.clone(),
                        namespace: t.key.pod.namespace.to_string(),
                        controller_uid: controller.uid.clone(),
                    };
                    t.replaced = Some(Replaced {
                        controller,
                        by: None,
                    });
                    vec![find]
                }
                None => vec![],
            });
        }
        let detail = t.pod.detail.as_ref()?;
        let uid = detail.manifest.metadata.uid.clone();
        let saved_at = restored.saved_at;
        let replaced = restored.pod_uid.is_some() && uid != restored.pod_uid;
        let state = t.container_state().cloned();
        if t.kind.resumable() && !replaced && state == Some(ContainerState::Unknown) {
            // Asked again at the next change.
            return Some(vec![]);
        }
        t.restored = None;
        if replaced {
            let sentence = format!(
                "the pod {} was replaced after podbay last kept this pane: a new pod of the same name runs now",
                t.key.pod
            );
            // Whatever podbay made was that pod: this one is another's.
            t.owned = None;
            if !t.kind.resumable() {
                t.notice = Some(format!("Note: {sentence}."));
                return Some(vec![]);
            }
            t.say_in_pane("not restored", &sentence);
            t.state = TerminalState::Ended(sentence.into());
            // Its container is another: nothing of it is followed.
            return Some(vec![Effect::CloseSession { id }]);
        }
        if !t.kind.resumable() {
            return Some(vec![]);
        }
        let ago = super::saved::ago(self.now.duration_since(saved_at).as_secs());
        match state {
            Some(ContainerState::Running { .. }) => {
                t.notice = Some(format!(
                    "Re-attached after podbay restarted (kept {ago} ago): what it printed meanwhile is above."
                ));
                Some(vec![t.attach(true)])
            }
            Some(ContainerState::Terminated {
                exit_code,
                reason,
                message,
                ..
            }) => {
                let message = message.trim().trim_end_matches('.');
                let message = if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                };
                t.state = TerminalState::Ended(
                    format!("the container exited with code {exit_code} ({reason}){message}, after podbay last kept this pane").into(),
                );
                Some(vec![t.log_effect(false)])
            }
            Some(ContainerState::Waiting { reason, message }) => {
                t.state = TerminalState::Waiting { reason, message };
                Some(vec![])
            }
            Some(ContainerState::Unknown) => Some(vec![]),
            None => {
                t.state = TerminalState::Ended(
                    format!(
                        "{} is not in the pod {} any more",
                        t.key.container, t.key.pod
                    )
                    .into(),
                );
                Some(vec![])
            }
        }
    }

    /// A context asked for by a restore is connected, or cannot be: its
    /// panes start, or say why.
    pub(super) fn on_context_ready(
        &mut self,
        context: String,
        outcome: Result<ClusterId, String>,
    ) -> Vec<Effect> {
        let waiting: Vec<TerminalId> = self
            .workspace
            .terminals
            .values()
            .filter(|t| {
                *t.key.cluster.context == *context
                    && t.restored.as_ref().is_some_and(|r| !r.started)
            })
            .map(|t| t.id)
            .collect();
        let forwards: Vec<SavedForward> = {
            let (these, others) = std::mem::take(&mut self.waiting_forwards)
                .into_iter()
                .partition(|f| f.context == context);
            self.waiting_forwards = others;
            these
        };
        match outcome {
            Ok(cluster) => {
                self.clusters.insert(context, cluster.clone());
                self.restore_queue.extend(waiting);
                let mut effects = self.start_queued_restores();
                for kept in &forwards {
                    effects.extend(self.restart_forward(kept, cluster.clone()));
                }
                effects
            }
            Err(sentence) => {
                for kept in &forwards {
                    self.failed_forward(
                        kept,
                        format!("context {context} cannot be reached: {sentence}"),
                    );
                }
                for id in waiting {
                    if let Some(t) = self.workspace.terminals.get_mut(&id) {
                        t.restored = None;
                        t.notice = None;
                        let why = format!("context {context} cannot be reached: {sentence}");
                        t.say_in_pane("not restored", &why);
                        t.state = TerminalState::Ended(why.into());
                    }
                }
                self.message = Some(warning(format!(
                    "Context {context}: {sentence} Its panes and forwards say so; the others are restored."
                )));
                vec![]
            }
        }
    }

    /// A kept forward listens again, on its port if it can.
    fn restart_forward(&mut self, kept: &SavedForward, cluster: ClusterId) -> Vec<Effect> {
        let (Ok(target), Ok(mapping)) = (
            ForwardTarget::parse(&kept.target),
            PortMapping::parse(&match kept.local {
                Some(local) => format!("{local}:{}", kept.remote),
                None => kept.remote.clone(),
            }),
        ) else {
            return vec![];
        };
        if *cluster.server != *kept.server {
            self.failed_forward(
                kept,
                format!(
                    "context {} now reaches {}, not {} as when this forward was kept",
                    cluster.context, cluster.server, kept.server
                ),
            );
            return vec![];
        }
        self.next_forward += 1;
        let id = self.next_forward;
        self.forwards.push(Forward::new(
            id,
            cluster.clone(),
            kept.namespace.clone(),
            target.clone(),
            mapping.clone(),
            ForwardState::Starting,
        ));
        vec![Effect::StartForward {
            id,
            cluster,
            request: ForwardRequest {
                namespace: kept.namespace.clone(),
                target,
                ports: vec![mapping],
                addresses: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
            },
        }]
    }

    /// The pod a gone pod's controller runs now: a log pane offers it.
    pub(super) fn on_replacement_found(&mut self, id: TerminalId, pod: Option<String>) {
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return;
        };
        let Some(replaced) = &mut t.replaced else {
            return;
        };
        let owner = format!(
            "its {} {}",
            replaced.controller.kind, replaced.controller.name
        );
        let sentence = match pod {
            Some(name) => {
                let pod = crate::model::PodKey::new(&t.key.pod.namespace, &name);
                let sentence = format!("{owner} runs {pod} now: enter shows its log here.");
                replaced.by = Some(pod);
                sentence
            }
            None => format!("{owner} runs no pod now."),
        };
        t.say_in_pane("replaced", &sentence);
    }

    /// `enter` on a log pane that offers its pod's replacement: the pane
    /// reads the new pod's log.
    pub(super) fn follow_replacement(&mut self) -> Vec<Effect> {
        let Some(t) = self.workspace.focused_terminal_mut() else {
            return vec![];
        };
        let Some(pod) = t.replaced.take().and_then(|r| r.by) else {
            return vec![];
        };
        t.key.pod = pod;
        t.pod = Default::default();
        t.resume_from.clear();
        t.notice = None;
        t.grid = t.grid.renewed(t.grid.size());
        t.state = TerminalState::Attaching;
        vec![
            Effect::Follow {
                id: t.id,
                key: t.key.clone(),
            },
            t.log_effect(true),
        ]
    }

    /// A kept forward that cannot start: listed in :pf, saying why (and
    /// kept, to be tried at the next start).
    fn failed_forward(&mut self, kept: &SavedForward, why: String) {
        let (Ok(target), Ok(mut mapping)) = (
            ForwardTarget::parse(&kept.target),
            PortMapping::parse(&kept.remote),
        ) else {
            return;
        };
        mapping.local = kept.local;
        self.next_forward += 1;
        self.forwards.push(Forward::new(
            self.next_forward,
            ClusterId::new(&kept.context, &kept.server, &kept.user),
            kept.namespace.clone(),
            target,
            mapping,
            ForwardState::Failed(why),
        ));
    }

    /// At a clean quit the pods podbay made are deleted: their panes are
    /// not kept.
    pub fn forget_owned_panes(&mut self) {
        let owned: Vec<TerminalId> = self
            .workspace
            .terminals
            .values()
            .filter(|t| t.owns_pod())
            .map(|t| t.id)
            .collect();
        for id in owned {
            self.workspace.close_terminal(id);
        }
    }
}

/// The controller of a terminal's pod: as kept, while it is restoring;
/// else from the pod as last seen.
fn saved_controller(t: &Terminal) -> Option<super::saved::SavedController> {
    if let Some(r) = &t.restored {
        return r.controller.clone();
    }
    if let Some(r) = &t.replaced {
        return Some(r.controller.clone());
    }
    let owners = t
        .pod
        .detail
        .as_ref()?
        .manifest
        .metadata
        .owner_references
        .as_ref()?;
    let controller = owners.iter().find(|o| o.controller == Some(true))?;
    Some(super::saved::SavedController {
        kind: controller.kind.clone(),
        name: controller.name.clone(),
        uid: controller.uid.clone(),
    })
}

fn saved_terminal(t: &Terminal) -> SavedTerminal {
    let kind = match t.kind {
        TerminalKind::Debug => SavedKind::Debug,
        TerminalKind::Attach => SavedKind::Attach,
        TerminalKind::Shell => SavedKind::Shell,
        TerminalKind::Exec => SavedKind::Exec,
        TerminalKind::Log => SavedKind::Log,
        TerminalKind::AllLogs => SavedKind::AllLogs,
        TerminalKind::PreviousLog => SavedKind::PreviousLog,
        TerminalKind::PodsLogs => SavedKind::PodsLogs,
    };
    // A pane still restoring keeps what it was kept with.
    let pod_uid = match &t.restored {
        Some(r) => r.pod_uid.clone(),
        None => t
            .pod
            .detail
            .as_ref()
            .and_then(|d| d.manifest.metadata.uid.clone()),
    };
    SavedTerminal {
        context: t.key.cluster.context.to_string(),
        server: t.key.cluster.server.to_string(),
        user: t.key.cluster.user.to_string(),
        namespace: t.key.pod.namespace.to_string(),
        pod: t.key.pod.name.to_string(),
        pod_uid,
        container: t.key.container.clone(),
        kind,
        // What a command was, not its arguments: they may hold a password
        // (`mysql -pHunter2`), and it is never run again.
        command: t.command.iter().take(1).cloned().collect(),
        containers: t.containers.clone(),
        log: SavedLogOptions {
            timestamps: t.log.timestamps,
            // The width is kept as it always was; the grid cuts at each
            // width the pane takes.
            cut_at: t.log.cut.then(|| t.grid.size().cols),
            since_seconds: t.log.since_seconds,
            tail: t.log.tail,
        },
        controller: saved_controller(t),
        last_seen: if t.kind.follows_log() {
            t.resume_from.clone()
        } else {
            Default::default()
        },
        owned_pod: t.owns_pod(),
        picks: t
            .pods_of
            .iter()
            .flat_map(|(_, narrow)| &narrow.picks)
            .map(|pick| super::saved::SavedPick {
                namespace: pick.namespace.clone(),
                selector: pick.selector.to_label_selector(),
            })
            .collect(),
    }
}

#[cfg(test)]
#[path = "restore_tests.rs"]
mod tests;

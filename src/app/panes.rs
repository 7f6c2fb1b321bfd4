//! The app's side of the workspace: opening terminals into panes, keys and
//! mouse in panes, the prefix commands, sizes, and following each
//! terminal's container through its own pod watch.

use crate::app::TerminalId;
use crate::model::text::Printable;
use crate::term::Size;
use bytes::Bytes;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::copy::{CopyMode, CopyOutcome};
use super::launcher::Launcher;
use super::terminal::{Input, LaunchedBy, OwnedPod, Terminal, TerminalKind, TerminalState};
use super::workspace::inner;
use super::{App, Effect, Focus, Mode, View, error, info};
use crate::model::TerminalKey;
use crate::model::session::SessionKind;
use crate::term::grid::Grid;
use crate::term::keys::{encode_key, encode_paste};
use crate::term::layout::{Axis, Direction, PaneId};
use crate::term::line::{LineEditor, Signal, Typed};

/// Cells a split divider moves per key press.
const RESIZE_STEP: u16 = 2;

/// How long resize keys repeat without the prefix (tmux's `repeat-time`).
pub const REPEAT_TIME: std::time::Duration = std::time::Duration::from_millis(500);

/// The direction of a resize key: `H J K L`, or an arrow with ctrl, alt or shift.
fn resize_direction(key: &KeyEvent) -> Option<Direction> {
    let modified = key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
    match key.code {
        KeyCode::Char('H') => Some(Direction::Left),
        KeyCode::Char('L') => Some(Direction::Right),
        KeyCode::Char('K') => Some(Direction::Up),
        KeyCode::Char('J') => Some(Direction::Down),
        KeyCode::Left if modified => Some(Direction::Left),
        KeyCode::Right if modified => Some(Direction::Right),
        KeyCode::Up if modified => Some(Direction::Up),
        KeyCode::Down if modified => Some(Direction::Down),
        _ => None,
    }
}

/// What a new pane is given beyond its kind.
pub(super) enum Words {
    None,
    /// The command an exec pane runs.
    Command(Vec<String>),
    /// The containers an all-containers log pane reads.
    Containers(Vec<String>),
}

impl App {
    /// Opens a pane on a pod podbay makes for it (a node debug pod, a held
    /// copy): the executor creates `pod` once the namespace's Pod Security
    /// admits it (else says the refusal and `refused_hint`), the pane
    /// follows it once created, and the pod goes when the pane closes.
    pub(super) fn open_owned_pod_pane(
        &mut self,
        key: TerminalKey,
        pod: k8s_openapi::api::core::v1::Pod,
        refused_hint: &str,
    ) -> Vec<Effect> {
        let (id, effects) = self.open_terminal_pane(TerminalKind::Debug, key.clone(), None);
        if let Some(t) = self.workspace.terminals.get_mut(&id) {
            t.owned = Some(OwnedPod::Creating);
        }
        // The pod does not exist yet: it is followed once it is created.
        let mut effects: Vec<Effect> = effects
            .into_iter()
            .filter(|e| !matches!(e, Effect::Follow { .. } | Effect::Launch { .. }))
            .collect();
        effects.push(Effect::CreatePod {
            id,
            key,
            pod: Box::new(pod),
            refused_hint: refused_hint.into(),
        });
        effects
    }

    /// Opens a terminal on `container` in a new pane (splitting the focused
    /// one) and shows the workspace.
    pub(super) fn open_terminal_pane(
        &mut self,
        kind: TerminalKind,
        key: TerminalKey,
        form: Option<Launcher>,
    ) -> (TerminalId, Vec<Effect>) {
        self.open_pane(kind, key, form, Words::None)
    }

    /// A pane running `command` in the container (`:exec`).
    pub(super) fn open_exec_pane(&mut self, key: TerminalKey, command: Vec<String>) -> Vec<Effect> {
        self.open_pane(TerminalKind::Exec, key, None, Words::Command(command))
            .1
    }

    /// A pane with every one of `containers`' logs (`L`), `key.container`
    /// naming them all.
    pub(super) fn open_all_logs_pane(
        &mut self,
        key: TerminalKey,
        containers: Vec<String>,
    ) -> Vec<Effect> {
        self.open_pane(
            TerminalKind::AllLogs,
            key,
            None,
            Words::Containers(containers),
        )
        .1
    }

    /// Opens a pane of `kind`, with the command of an exec or the
    /// containers of an all-containers log.
    pub(super) fn open_pane(
        &mut self,
        kind: TerminalKind,
        key: TerminalKey,
        form: Option<Launcher>,
        words: Words,
    ) -> (TerminalId, Vec<Effect>) {
        let (command, containers) = match words {
            Words::None => (Vec::new(), Vec::new()),
            Words::Command(command) => (command, Vec::new()),
            Words::Containers(containers) => (Vec::new(), containers),
        };
        if kind == TerminalKind::Attach
            && let Some(shared) = self.attached_terminal(&key)
        {
            return (shared, self.share_terminal(shared));
        }
        self.next_terminal += 1;
        let id = TerminalId(self.next_terminal);
        let mut terminal = Terminal::new(id, key.clone(), kind, self.now);
        terminal.grid = kind.grid(Size::new(80, 24), self.options.scrollback);
        terminal.launched_by = form.map(|form| LaunchedBy::Form(Box::new(form)));
        terminal.command = command.clone();
        if kind == TerminalKind::Debug {
            terminal.state = TerminalState::Launching;
        }
        // Start from what the pod view knows; the terminal's own watch takes over.
        if let View::Pod(view) = &self.view
            && view.key == key.pod
            && key.cluster == view.cluster
        {
            terminal.pod.detail = view.pod.detail.clone();
            terminal.pod.events = view.pod.events.clone();
        }
        self.workspace.terminals.insert(id, terminal);
        self.focus = Focus::Workspace;
        let area = self.areas().workspace.unwrap_or_default();
        let axis = self.next_split.take();
        self.workspace.add_pane(id, axis, area);
        self.message = None;
        // A pods' log pane follows the pod list, not one pod.
        let mut effects = match kind {
            TerminalKind::PodsLogs => vec![],
            _ => vec![Effect::Follow {
                id,
                key: key.clone(),
            }],
        };
        effects.extend(self.fit_terminals());
        let size = self.workspace.terminals[&id].grid.size();
        match kind {
            TerminalKind::Debug => {}
            TerminalKind::Log
            | TerminalKind::PreviousLog
            | TerminalKind::AllLogs
            | TerminalKind::PodsLogs => {
                let t = self.workspace.terminals.get_mut(&id).expect("just added");
                t.log.tail = self.options.log_tail;
                t.containers = containers;
                effects.push(t.log_effect(false));
            }
            TerminalKind::Attach => {
                let t = self.workspace.terminals.get_mut(&id).expect("just added");
                effects.push(t.attach(false));
            }
            TerminalKind::Shell | TerminalKind::Exec => {
                effects.push(Effect::OpenSession {
                    id,
                    key,
                    kind: match kind {
                        TerminalKind::Shell => {
                            SessionKind::Exec(crate::model::session::shell_command())
                        }
                        TerminalKind::Exec => SessionKind::Exec(command),
                        _ => SessionKind::Attach,
                    },
                    size,
                    replay_log: false,
                    // podbay asks for a terminal for what it runs.
                    stdio: crate::model::Stdio::TERMINAL,
                })
            }
        }
        if self.options.record {
            effects.extend(self.toggle_recording(id));
        }
        (id, effects)
    }

    /// A terminal already attached (or attaching) to this container on
    /// this cluster, as this user: a container has one terminal, so panes
    /// share its stream. Never one of another context's.
    fn attached_terminal(&self, key: &TerminalKey) -> Option<TerminalId> {
        self.workspace
            .terminals
            .values()
            .find(|t| {
                t.key == *key && t.kind.resumable() && !matches!(t.state, TerminalState::Ended(_))
            })
            .map(|t| t.id)
    }

    /// One more pane on an existing terminal; it starts from the current screen.
    fn share_terminal(&mut self, id: TerminalId) -> Vec<Effect> {
        self.focus = Focus::Workspace;
        let area = self.areas().workspace.unwrap_or_default();
        let axis = self.next_split.take();
        self.workspace.add_pane(id, axis, area);
        self.message = None;
        let mut effects = self.fit_terminals();
        if matches!(
            self.workspace.terminals.get(&id).map(|t| &t.state),
            Some(TerminalState::Disconnected(_))
        ) {
            effects.extend(self.reattach(id));
        }
        effects
    }

    /// Resizes every shown terminal to its panes (the smallest pane showing
    /// it wins) and tells live sessions.
    pub(super) fn fit_terminals(&mut self) -> Vec<Effect> {
        let Some(area) = self.areas().workspace else {
            return vec![];
        };
        let mut effects = Vec::new();
        for (id, size) in self.workspace.terminal_sizes(area) {
            if let Some(t) = self.workspace.terminals.get_mut(&id)
                && t.grid.resize(size)
                && t.is_live()
            {
                effects.push(Effect::ResizeSession { id, size });
            }
        }
        effects
    }

    pub(super) fn show_browser(&mut self) -> Vec<Effect> {
        self.focus = Focus::Browser;
        self.fit_terminals()
    }

    pub(super) fn show_workspace(&mut self) -> Vec<Effect> {
        if self.workspace.is_empty() {
            self.message = Some(info(
                "No panes yet: open a pod and press a (attach), s (shell), l (log) or d (debug).",
            ));
            return vec![];
        }
        self.focus = Focus::Workspace;
        self.fit_terminals()
    }

    /// A key while the workspace has the keyboard.
    pub(super) fn on_workspace_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        // A resize repeats without the prefix for a moment, as tmux's
        // resize-pane does; any other key ends that and goes on as usual.
        if self.resizing.take().is_some()
            && let Some(dir) = resize_direction(&key)
        {
            return self.resize_focused(dir);
        }
        if std::mem::take(&mut self.prefix_armed) {
            return self.on_pane_command(key);
        }
        if self.options.prefix.matches(&key) {
            self.prefix_armed = true;
            return vec![];
        }
        if matches!(key.code, KeyCode::F(_))
            && self.keymap.action(&key) == Some(super::keymap::Action::Workspace)
        {
            return self.show_browser();
        }
        if let Some(effects) = self.on_copy_key(key) {
            return effects;
        }
        if let Some(effects) = self.on_log_key(&key) {
            return effects;
        }
        let Some(t) = self.workspace.focused_terminal_mut() else {
            return self.show_browser();
        };
        if key.modifiers.contains(KeyModifiers::SHIFT)
            && matches!(key.code, KeyCode::PageUp | KeyCode::PageDown)
        {
            let half = (t.grid.size().rows / 2).max(1) as isize;
            t.grid.scroll(if key.code == KeyCode::PageUp {
                half
            } else {
                -half
            });
            return vec![];
        }
        if !t.is_live() && !t.types_ahead() {
            // Nothing to type into: r re-attaches a cut stream; q or x
            // close the pane (not enter: a stray one would lose it); esc
            // shows the browser.
            let replaced = t.replaced.as_ref().is_some_and(|r| r.by.is_some());
            return match key.code {
                KeyCode::Char('r') => self.reattach_focused(),
                KeyCode::Enter if replaced => self.follow_replacement(),
                KeyCode::Char('q') | KeyCode::Char('x') => self.close_focused(true),
                KeyCode::Esc => self.show_browser(),
                _ => vec![],
            };
        }
        if t.grid.scrolled_back() {
            t.grid.scroll(-(1 << 30));
        }
        self.type_into(
            |pane| encode_key(&key, pane.application_cursor()),
            |line| line.key(&key),
        )
    }

    /// Keys of a log pane, which takes no typing: `t` timestamps, `w`
    /// wrap, `G` or `end` back to the newest line. `None` for other keys
    /// and other panes.
    fn on_log_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        let t = self.workspace.focused_terminal_mut()?;
        if !t.kind.is_log()
            || key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return None;
        }
        let said = match key.code {
            KeyCode::Char('t') => {
                t.log.timestamps = !t.log.timestamps;
                if t.log.timestamps {
                    "Each line after its timestamp; t hides them."
                } else {
                    "Timestamps hidden; t shows them."
                }
            }
            // The grid keeps what it was fed: cut or wrapped again here,
            // with nothing read again.
            KeyCode::Char('w') => {
                t.log.cut = !t.log.cut;
                t.grid.set_cut(t.log.cut);
                self.message = Some(info(if t.log.cut {
                    "Long lines cut at the pane's width; w wraps them again."
                } else {
                    "Long lines wrapped; w cuts them at the pane's width."
                }));
                return Some(vec![]);
            }
            KeyCode::Char('G') | KeyCode::End => {
                t.grid.scroll(-(1 << 30));
                return Some(vec![]);
            }
            // An ended pane's own keys (close, re-attach, follow the pod
            // that replaced it).
            KeyCode::Char('q' | 'x' | 'r') | KeyCode::Enter if !t.is_live() => return None,
            // Typed as if into a shell: said, never taken as a command.
            KeyCode::Char(_) | KeyCode::Enter | KeyCode::Backspace | KeyCode::Tab => {
                self.message = Some(info(
                    "A log pane takes no typing: t timestamps, w wraps, G goes to the newest line (esc: the pod list).",
                ));
                return Some(vec![]);
            }
            _ => return None,
        };
        let id = t.id;
        self.message = Some(info(said.to_string()));
        Some(self.restream_log(id))
    }

    /// Reads a log pane's log again from the start, with its options.
    pub(super) fn restream_log(&mut self, id: TerminalId) -> Vec<Effect> {
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return vec![];
        };
        t.grid = t.grid.renewed(t.grid.size());
        t.state = TerminalState::Attaching;
        vec![t.log_effect(true)]
    }

    /// `:since 10m` (or `:since all`) on the focused log pane.
    pub(super) fn log_since(&mut self, seconds: Option<i64>) -> Vec<Effect> {
        let Some(t) = self
            .workspace
            .focused_terminal_mut()
            .filter(|t| t.kind.is_log())
        else {
            self.message = Some(error(
                ":since works on the focused log pane; open one with l, p or L.",
            ));
            return vec![];
        };
        t.log.since_seconds = seconds;
        // A window bounds the log; `:since all` asks for all of it.
        t.log.tail = None;
        let id = t.id;
        self.restream_log(id)
    }

    pub(super) fn on_workspace_paste(&mut self, text: &str) -> Vec<Effect> {
        self.type_into(
            |pane| Some(encode_paste(text, pane.bracketed_paste())),
            |line| line.paste(text),
        )
    }

    /// Sends input to the focused terminal, or to every marked one while
    /// broadcasting; each is encoded for its own terminal's modes. A
    /// terminal without a tty takes it through its pane's line discipline
    /// (`edit`); one without stdin takes nothing, and says so.
    fn type_into(
        &mut self,
        encode: impl Fn(&Grid) -> Option<Vec<u8>>,
        edit: impl Fn(&mut LineEditor) -> Typed,
    ) -> Vec<Effect> {
        let now = self.now;
        let prefix = self.options.prefix.label();
        let mut effects = Vec::new();
        for id in self.workspace.input_targets() {
            let Some(t) = self.workspace.terminals.get_mut(&id) else {
                continue;
            };
            if !t.is_live() && !t.types_ahead() {
                continue;
            }
            let bytes = match t.input() {
                Input::Raw => encode(&t.grid),
                Input::Lines => {
                    let typed = edit(&mut t.line);
                    t.grid.feed(&typed.echo);
                    match typed.signal {
                        Some(Signal::EndOfInput) => {
                            t.stdin_closed = true;
                            t.notice = Some(stdin_closed_notice(t));
                            effects.push(Effect::CloseStdin { id });
                        }
                        Some(Signal::Interrupt) => {
                            t.notice = Some(format!(
                                "ctrl-c cannot interrupt {}'s process: it has no tty, so no signal reaches it (ctrl-d closes stdin; {prefix} x closes the pane).",
                                t.key.container
                            ));
                        }
                        None if typed.send.is_some() => t.notice = None,
                        None => {}
                    }
                    typed.send
                }
                Input::ReadOnly => {
                    t.notice = Some(if t.stdin_closed {
                        stdin_closed_notice(t)
                    } else {
                        format!(
                            "Read-only: {} has no stdin (its spec has no `stdin: true`); output only.",
                            t.key.container
                        )
                    });
                    None
                }
            };
            let Some(bytes) = bytes else { continue };
            if t.types_ahead() {
                t.type_ahead(&bytes);
            } else {
                t.last_traffic = now;
                t.reattached_after_idle = false;
                if t.input() == Input::Raw {
                    t.notice = None;
                }
                effects.push(Effect::SendInput {
                    id,
                    bytes: Bytes::from(bytes),
                });
            }
        }
        effects
    }

    /// Keys after the prefix: the pane commands.
    fn on_pane_command(&mut self, key: KeyEvent) -> Vec<Effect> {
        if self.options.prefix.matches(&key) {
            return self.type_into(
                |pane| encode_key(&key, pane.application_cursor()),
                |line| line.key(&key),
            );
        }
        let area = self.areas().workspace.unwrap_or_default();
        let focused = self.workspace.focused;
        if let Some(dir) = resize_direction(&key) {
            return self.resize_focused(dir);
        }
        let arrow = match key.code {
            KeyCode::Left => Some(Direction::Left),
            KeyCode::Right => Some(Direction::Right),
            KeyCode::Up => Some(Direction::Up),
            KeyCode::Down => Some(Direction::Down),
            _ => None,
        };
        if let Some(dir) = arrow.or(match key.code {
            KeyCode::Char('h') => Some(Direction::Left),
            KeyCode::Char('l') => Some(Direction::Right),
            KeyCode::Char('k') => Some(Direction::Up),
            KeyCode::Char('j') => Some(Direction::Down),
            _ => None,
        }) {
            self.workspace.focus(dir, area);
            return self.fit_terminals();
        }
        match key.code {
            KeyCode::Char('d') | KeyCode::Esc | KeyCode::Tab | KeyCode::F(_) => self.show_browser(),
            KeyCode::Char('|') | KeyCode::Char('%') => self.split_focused(Axis::Horizontal),
            KeyCode::Char('-') | KeyCode::Char('"') => self.split_focused(Axis::Vertical),
            KeyCode::Char('z') => {
                if let Some(pane) = focused {
                    self.workspace.layout.toggle_zoom(pane);
                }
                self.fit_terminals()
            }
            KeyCode::Char('x') => self.close_focused(false),
            KeyCode::Char('o') => {
                self.workspace.focus_next();
                self.fit_terminals()
            }
            KeyCode::Char('=') => {
                self.workspace.layout.even();
                self.fit_terminals()
            }
            KeyCode::Char(' ') => {
                self.workspace.layout.tiled();
                self.fit_terminals()
            }
            KeyCode::Char('m') => {
                if let Some(slot) = self.workspace.focused_pane_mut() {
                    slot.marked = !slot.marked;
                }
                vec![]
            }
            KeyCode::Char('S') => {
                let all = self.workspace.panes.values().all(|p| p.marked);
                for slot in self.workspace.panes.values_mut() {
                    slot.marked = !all;
                }
                vec![]
            }
            KeyCode::Char('[') | KeyCode::PageUp => {
                let page_up = key.code == KeyCode::PageUp;
                let Some(id) = self.workspace.focused_pane().map(|s| s.terminal) else {
                    return vec![];
                };
                let Some(t) = self.workspace.terminals.get_mut(&id) else {
                    return vec![];
                };
                if page_up {
                    t.grid.scroll((t.grid.size().rows / 2).max(1) as isize);
                }
                let copy = CopyMode::new(&t.grid);
                if let Some(slot) = self.workspace.focused_pane_mut() {
                    slot.copy = Some(copy);
                }
                vec![]
            }
            KeyCode::Char('r') => self.reattach_focused(),
            KeyCode::Char(',') => {
                let mut line = super::command::CommandLine::default();
                line.insert_str("rename ");
                self.mode = Mode::Command(line);
                vec![]
            }
            KeyCode::Char(':') => {
                self.mode = Mode::Command(Default::default());
                vec![]
            }
            KeyCode::Char('?') => {
                self.mode = Mode::Help(0);
                vec![]
            }
            _ => vec![],
        }
    }

    /// Moves the focused pane's divider, and lets the next resize key
    /// follow without the prefix until [`REPEAT_TIME`] passes without one.
    fn resize_focused(&mut self, dir: Direction) -> Vec<Effect> {
        let area = self.areas().workspace.unwrap_or_default();
        if let Some(pane) = self.workspace.focused {
            self.workspace.layout.resize(pane, dir, RESIZE_STEP, area);
        }
        self.next_wake += 1;
        self.resizing = Some(self.next_wake);
        let mut effects = self.fit_terminals();
        effects.push(Effect::WakeAfter {
            after: REPEAT_TIME,
            token: self.next_wake,
        });
        effects
    }

    /// A timer asked for earlier went off: the resize repeat ends unless a
    /// later resize key started a new one.
    pub(super) fn on_wake(&mut self, token: u64) {
        if self.resizing == Some(token) {
            self.resizing = None;
        }
    }

    /// Copy mode keys, if the focused pane is in copy mode.
    fn on_copy_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        let pane_id = self.workspace.focused?;
        let slot = self.workspace.panes.get_mut(&pane_id)?;
        let mut copy = slot.copy.take()?;
        let terminal = slot.terminal;
        let t = self.workspace.terminals.get_mut(&terminal)?;
        let outcome = copy.on_key(key, &mut t.grid);
        let leave = |t: &mut Terminal| t.grid.scroll(-(1 << 30));
        let effects = match outcome {
            CopyOutcome::Stay => {
                self.workspace.panes.get_mut(&pane_id)?.copy = Some(copy);
                vec![]
            }
            CopyOutcome::Leave => {
                leave(t);
                vec![]
            }
            CopyOutcome::Copy(text) => {
                leave(t);
                let lines = text.lines().count();
                self.message = Some(info(format!(
                    "Copied {lines} line{} to the clipboard (through your terminal, OSC 52).",
                    if lines == 1 { "" } else { "s" }
                )));
                vec![Effect::Copy(text)]
            }
        };
        Some(effects)
    }

    /// Splits the focused pane: an exec'd shell gets a second shell in the
    /// same container; an attach or a log is shown again (shared).
    fn split_focused(&mut self, axis: Axis) -> Vec<Effect> {
        let Some(t) = self.workspace.focused_terminal() else {
            return vec![];
        };
        let (id, kind, key) = (t.id, t.kind, t.key.clone());
        self.next_split = Some(axis);
        if kind == TerminalKind::Shell {
            return self.open_terminal_pane(TerminalKind::Shell, key, None).1;
        }
        self.share_terminal(id)
    }

    /// Closes the focused pane; a live session's last pane asks first.
    pub(super) fn close_focused(&mut self, confirmed: bool) -> Vec<Effect> {
        let Some(pane) = self.workspace.focused else {
            return vec![];
        };
        let Some(t) = self.workspace.focused_terminal() else {
            return vec![];
        };
        let last_view = self.workspace.viewers(t.id) == 1;
        if !confirmed && last_view && t.is_live() {
            self.mode = Mode::ConfirmClose(pane);
            return vec![];
        }
        self.close_pane(pane)
    }

    pub(super) fn close_pane(&mut self, pane: PaneId) -> Vec<Effect> {
        let mut effects = Vec::new();
        let owned = self
            .workspace
            .panes
            .get(&pane)
            .and_then(|p| self.workspace.terminals.get(&p.terminal))
            // Still being created: its creation deletes it once made.
            .filter(|t| t.owned == Some(OwnedPod::Created))
            .map(|t| (t.key.cluster.clone(), t.key.pod.clone()));
        if let Some(id) = self.workspace.close_pane(pane) {
            effects.push(Effect::CloseSession { id });
            // The last pane on a pod podbay made: the pod goes too.
            if let Some((cluster, pod)) = owned {
                effects.push(Effect::DeletePod { cluster, pod });
            }
        }
        if self.workspace.is_empty() {
            self.focus = Focus::Browser;
        }
        effects.extend(self.fit_terminals());
        effects
    }

    fn reattach_focused(&mut self) -> Vec<Effect> {
        match self.workspace.focused_terminal() {
            Some(t) if matches!(t.state, TerminalState::Disconnected(_)) => self.reattach(t.id),
            _ => vec![],
        }
    }

    pub(super) fn reattach(&mut self, id: TerminalId) -> Vec<Effect> {
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return vec![];
        };
        if t.kind.is_log() {
            t.state = TerminalState::Attaching;
            return vec![t.log_effect(false)];
        }
        vec![t.attach(false)]
    }

    /// `:record` on the focused pane's terminal: starts or stops.
    pub(super) fn toggle_recording(&mut self, id: TerminalId) -> Vec<Effect> {
        let Some(t) = self.workspace.terminals.get(&id) else {
            return vec![];
        };
        vec![Effect::Record {
            id,
            on: t.recording.is_none(),
            size: t.grid.size(),
            title: t.label(),
        }]
    }

    pub(super) fn on_mouse(&mut self, event: MouseEvent) -> Vec<Effect> {
        let at = Position::new(event.column, event.row);
        let areas = self.areas();
        if let Some(area) = areas.workspace.filter(|a| a.contains(at)) {
            return self.on_workspace_mouse(event, area, at);
        }
        if areas.browser.is_some_and(|a| a.contains(at)) {
            // The wheel scrolls a text being read, else moves the cursor.
            let wheel = match event.kind {
                MouseEventKind::ScrollUp => Some(super::reader::Scroll::Up),
                MouseEventKind::ScrollDown => Some(super::reader::Scroll::Down),
                _ => None,
            };
            if let (Some(scroll), Some(reader)) = (wheel, self.reader_mut()) {
                reader.scroll(scroll);
                return vec![];
            }
            match event.kind {
                MouseEventKind::ScrollUp => self.move_cursor(super::keymap::Action::Up),
                MouseEventKind::ScrollDown => self.move_cursor(super::keymap::Action::Down),
                MouseEventKind::Down(_) => return self.show_browser(),
                _ => {}
            }
        }
        vec![]
    }

    fn on_workspace_mouse(&mut self, event: MouseEvent, area: Rect, at: Position) -> Vec<Effect> {
        let Some((pane, rect)) = self
            .workspace
            .geometry(area)
            .into_iter()
            .find(|(_, r)| r.contains(at))
        else {
            return vec![];
        };
        let focused = self.focus == Focus::Workspace && self.workspace.focused == Some(pane);
        let Some(slot) = self.workspace.panes.get(&pane) else {
            return vec![];
        };
        let in_copy = slot.copy.is_some();
        let Some(t) = self.workspace.terminals.get_mut(&slot.terminal) else {
            return vec![];
        };
        let body = inner(rect);
        // The remote asked for the mouse: it gets it, in the focused pane.
        if focused
            && !in_copy
            && t.is_live()
            && body.contains(at)
            && let Some((mode, encoding)) = t.grid.mouse_reporting()
        {
            let (col, row) = (at.x - body.x, at.y - body.y);
            return match crate::term::mouse::encode_mouse(&event, col, row, mode, encoding) {
                Some(bytes) => vec![Effect::SendInput {
                    id: t.id,
                    bytes: Bytes::from(bytes),
                }],
                None => vec![],
            };
        }
        match event.kind {
            MouseEventKind::ScrollUp => t.grid.scroll(3),
            MouseEventKind::ScrollDown => t.grid.scroll(-3),
            MouseEventKind::Down(MouseButton::Left) => {
                self.workspace.focused = Some(pane);
                self.focus = Focus::Workspace;
                return self.fit_terminals();
            }
            _ => {}
        }
        vec![]
    }

    /// `:rename NAME` (empty: back to pod/container).
    pub(super) fn rename_focused(&mut self, name: &str) {
        if let Some(slot) = self.workspace.focused_pane_mut() {
            let name = name.trim();
            slot.title = (!name.is_empty()).then(|| Printable::from(name));
        }
    }
}

/// What `ctrl-d` on an empty line did to a terminal without a tty.
fn stdin_closed_notice(t: &Terminal) -> String {
    let c = &t.key.container;
    if t.stdio.stdin_once {
        format!(
            "stdin closed: {c} has stdinOnce, so its process reads end of input (r re-attaches; its stdin stays closed)."
        )
    } else {
        format!(
            "stdin closed for this pane: {c} has no stdinOnce, so its process keeps its stdin open and reads no end of input (r re-attaches with a new one)."
        )
    }
}

#[cfg(test)]
#[path = "panes_tests.rs"]
mod tests;

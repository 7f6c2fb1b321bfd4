//! Key dispatch: which mode or view a key goes to, the filter and command
//! lines, and the browser's keys.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::line::{Edit, LineEdit};
use super::*;

/// How far the help may be scrolled: more than any help box has lines
/// (the drawing stops at its last line).
const MAX_HELP_SCROLL: usize = 200;

impl App {
    pub(super) fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let in_workspace = self.focus == Focus::Workspace;
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        // In a form, the filter or a question, ctrl-c cancels it as esc
        // does (as in a shell); only then does it quit.
        if ctrl_c && !in_workspace && !matches!(self.mode, Mode::Normal | Mode::ConfirmQuit) {
            return self.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        }
        // In a pane, ctrl-c belongs to the shell.
        if ctrl_c && !in_workspace && self.mode == Mode::Normal {
            return self.quit();
        }
        if in_workspace && self.mode == Mode::Normal {
            return self.on_workspace_key(key);
        }
        if self.typing_burst
            && let Some(what) = self.acts_on_cluster(&key)
        {
            self.message = Some(warning(format!(
                "{what} came amid keys faster than typing (pasted text?), so nothing was done; press it again to go on."
            )));
            return vec![];
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            // A help taller than the screen scrolls; any other key closes it.
            Mode::Help(top) => {
                let lines = usize::from(self.size.rows.saturating_sub(4)).max(1);
                self.mode = match key.code {
                    KeyCode::Char('j') | KeyCode::Down => Mode::Help(top + 1),
                    KeyCode::Char('k') | KeyCode::Up => Mode::Help(top.saturating_sub(1)),
                    KeyCode::Char(' ') | KeyCode::PageDown => Mode::Help(top + lines),
                    KeyCode::PageUp => Mode::Help(top.saturating_sub(lines)),
                    KeyCode::Char('g') | KeyCode::Home => Mode::Help(0),
                    _ => Mode::Normal,
                };
                if let Mode::Help(top) = &mut self.mode {
                    *top = (*top).min(MAX_HELP_SCROLL);
                }
                vec![]
            }
            Mode::Filter(query) => self.on_filter_key(query, key),
            Mode::Command(line) => self.on_command_key(line, key),
            Mode::Launcher(form) => self.on_launcher_key(*form, key),
            Mode::Fleet(form) => self.on_fleet_key(*form, key),
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
                    self.mode = Mode::Normal;
                    vec![]
                }
            },
            Mode::ConfirmStopDebugger(debugger) => self.on_stop_debugger_answer(*debugger, &key),
            Mode::ConfirmDelete(cluster, pod) => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => {
                    self.message = Some(info(format!("Deleting pod {pod}…")));
                    vec![Effect::DeletePod { cluster, pod }]
                }
                _ => {
                    self.message = Some(info(format!("Pod {pod} was not deleted.")));
                    vec![]
                }
            },
            Mode::Find(query) => self.on_find_key(query, key),
            Mode::Forward(form) => self.on_forward_form_key(*form, key),
            Mode::Capture(form) => self.on_capture_form_key(*form, key),
            Mode::NodeDebug(form) => self.on_node_debug_key(*form, key),
            Mode::CopyPod(form) => self.on_copy_form_key(*form, key),
            Mode::ConfirmRestore(saved) => self.on_restore_answer(*saved, key),
            Mode::Normal => self.on_normal_key(key),
        }
    }

    /// The key's name when, in the mode shown, it would create or delete
    /// something in the cluster: a form's enter, a question's y.
    fn acts_on_cluster(&self, key: &KeyEvent) -> Option<&'static str> {
        let enter = key.code == KeyCode::Enter;
        let yes = matches!(key.code, KeyCode::Char('y' | 'Y'));
        match &self.mode {
            Mode::Launcher(_) | Mode::Fleet(_) | Mode::NodeDebug(_) | Mode::CopyPod(_) if enter => {
                Some("Enter")
            }
            Mode::ConfirmClose(_) if enter => Some("Enter"),
            Mode::ConfirmDelete(..) | Mode::ConfirmStopDebugger(_) | Mode::ConfirmClose(_)
                if yes =>
            {
                Some("y")
            }
            _ => None,
        }
    }

    fn on_filter_key(&mut self, mut query: LineEdit, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Esc => self.set_filter(""),
            KeyCode::Enter => {}
            KeyCode::Up if query.is_empty() && !self.last_filter.is_empty() => {
                query = self.last_filter.as_str().into();
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
            // The one line editor; backspace on an empty query stays.
            _ => {
                if query.edit(&key) == Edit::Edited {
                    self.set_filter(&query);
                }
                self.mode = Mode::Filter(query);
            }
        }
        vec![]
    }

    /// The filter of the list, the events view or the debuggers view,
    /// whichever is shown.
    pub(super) fn set_filter(&mut self, query: &str) {
        match &mut self.view {
            View::Events(view) => {
                view.filter = query.to_string();
                view.cursor = 0;
            }
            View::Debuggers(view) => {
                view.filter = query.to_string();
                view.cursor = 0;
            }
            View::Nodes(view) => view.list.set_filter(query),
            View::Services(view) => view.list.set_filter(query),
            View::Workloads(view) => view.list.set_filter(query),
            _ => self.pods.set_filter(query),
        }
    }

    fn on_command_key(&mut self, mut line: CommandLine, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Esc => vec![],
            KeyCode::Enter => self.run_command(&line.text()),
            KeyCode::Tab => {
                line.complete(&command::Candidates {
                    namespaces: &self.namespaces,
                    contexts: &self.contexts,
                    workspaces: &self.kept_workspaces,
                });
                self.mode = Mode::Command(line);
                vec![]
            }
            _ => {
                if line.edit(&key) != Edit::LeaveEmpty {
                    self.mode = Mode::Command(line);
                }
                vec![]
            }
        }
    }

    pub(super) fn run_command(&mut self, text: &str) -> Vec<Effect> {
        match command::parse(text) {
            Ok(command::Command::Quit) => self.quit(),
            Ok(command::Command::Messages) => self.open_messages(),
            Ok(command::Command::Files(path)) => self.open_files(path),
            Ok(command::Command::Forwards) => self.open_forwards(),
            Ok(command::Command::Captures) => self.open_captures(),
            Ok(command::Command::Nodes) => self.open_nodes(),
            Ok(command::Command::Services) => self.open_services(),
            Ok(command::Command::Workloads(kind)) => self.open_workloads(kind),
            Ok(command::Command::Debuggers) => self.open_debuggers(),
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
                        "Nothing to record: :record works on the focused pane.",
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
            Ok(command::Command::Save(name)) => self.save_as(name),
            Ok(command::Command::Load(name)) => self.load(name),
            Ok(command::Command::Rename(name)) => {
                self.rename_focused(&name);
                vec![]
            }
            Ok(command::Command::Context(ctx)) => {
                // `:ctx a,b`: one list of both clusters' pods.
                let mut named: Vec<String> = Vec::new();
                for one in ctx.split(',').map(str::trim).filter(|c| !c.is_empty()) {
                    if !named.iter().any(|n| n == one) {
                        named.push(one.to_string());
                    }
                }
                if let Some(unknown) = named.iter().find(|c| !self.contexts.contains(c)) {
                    self.message = Some(error(format!(
                        "No context named {unknown:?}; known contexts: {}.",
                        self.contexts.join(", ")
                    )));
                    return vec![];
                }
                if named.is_empty() {
                    return vec![];
                }
                let first = named.remove(0);
                self.message = Some(info(match named.is_empty() {
                    true => format!("Connecting to context {first}…"),
                    false => format!("Connecting to contexts {first}, {}…", named.join(", ")),
                }));
                self.next_others = named;
                vec![Effect::SwitchContext(first)]
            }
            Err(sentence) => {
                self.message = Some(error(sentence));
                vec![]
            }
        }
    }

    fn on_normal_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if let Some(effects) = self.on_reader_key(&key) {
            return effects;
        }
        if let Some(effects) = self.on_files_key(&key) {
            return effects;
        }
        if let Some(effects) = self.on_forwards_key(&key) {
            return effects;
        }
        if let Some(effects) = self.on_captures_key(&key) {
            return effects;
        }
        if let Some(effects) = self.on_debuggers_fixed_key(&key) {
            return effects;
        }
        let Some(action) = self.keymap.action(&key) else {
            return vec![];
        };
        // A key the shown view does not take does nothing: it never acts
        // on the pod list or a pod hidden behind the view.
        if !bindings::takes(self, action) {
            return vec![];
        }
        if let Some(effects) = self.on_events_key(action) {
            return effects;
        }
        if self.list_takes_key(action) {
            return vec![];
        }
        if let Some(effects) = self.on_nodes_key(action) {
            return effects;
        }
        if let Some(effects) = self.on_services_key(action) {
            return effects;
        }
        if let Some(effects) = self.on_workloads_key(action) {
            return effects;
        }
        if let Some(effects) = self.on_debuggers_key(action) {
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
            Action::Files => self.open_files(None),
            Action::Forward => self.open_forward_form(),
            Action::Capture => self.open_capture_form(),
            Action::Messages => self.open_messages(),
            Action::Nodes => self.open_nodes(),
            Action::CopyPod => self.open_copy_form(),
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
                self.mode = Mode::Help(0);
                vec![]
            }
            Action::Workspace => self.show_workspace(),
            Action::Command => {
                self.mode = Mode::Command(CommandLine::default());
                vec![]
            }
            // A new query each time, as a shell's prompt; the last one is
            // `↑` away.
            Action::Filter if !in_pod_view => {
                if let Some(query) = self.pods.query().filter(|q| !q.is_empty()) {
                    self.last_filter = query.to_string();
                }
                self.set_filter("");
                self.mode = Mode::Filter(LineEdit::default());
                vec![]
            }
            Action::ToggleAllNamespaces => match &self.scope {
                // Back to where `0` was pressed (`-n shop` stays shop), not
                // the context's own namespace.
                Scope::All => {
                    let (back, home) = self.scope_before_all.take().unwrap_or_else(|| {
                        let home = Scope::Namespaces(vec![self.home_namespace.clone()]);
                        (home, !self.namespace_chosen)
                    });
                    self.set_scope_of_home(back, home)
                }
                Scope::Namespaces(_) => {
                    self.scope_before_all = Some((self.scope.clone(), self.scope_is_home));
                    self.set_scope(Scope::All)
                }
            },
            Action::Back => {
                if in_pod_view {
                    self.message = None;
                    self.view = View::Pods;
                    vec![Effect::StopWatchingPod]
                } else if self.pods.query().is_none() && self.narrowed.is_some() {
                    self.leave_narrowing()
                } else {
                    self.pods.set_filter("");
                    self.message = None;
                    vec![]
                }
            }
            Action::CopyName => {
                let Some((_, key)) = self.selected_pod() else {
                    return vec![];
                };
                self.message = Some(info(format!(
                    "Copied {} to the clipboard (through your terminal, OSC 52).",
                    key.name
                )));
                vec![Effect::Copy(key.name.to_string())]
            }
            Action::Open if !in_pod_view => self.open_pod(false),
            Action::Debug if !in_pod_view && !self.pods.marks().is_empty() => self.read_marked(),
            Action::Debug if !in_pod_view => self.open_pod(true),
            Action::Mark if !in_pod_view => {
                self.toggle_mark();
                vec![]
            }
            Action::MarkShown if !in_pod_view => {
                self.mark_shown();
                vec![]
            }
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

    pub(super) fn on_launcher_key(&mut self, mut form: Launcher, key: KeyEvent) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            return vec![];
        };
        let Some(detail) = view.pod.detail.as_ref() else {
            return vec![];
        };
        let (cluster, pod) = (view.cluster.clone(), detail.key.clone());
        match form.on_key(key, detail) {
            FormOutcome::Stay => {
                self.mode = Mode::Launcher(Box::new(form));
                vec![]
            }
            FormOutcome::Cancel => vec![],
            FormOutcome::Reattach(name) => {
                let key = TerminalKey::new(cluster, pod, name);
                self.open_terminal_pane(TerminalKind::Attach, key, None).1
            }
            FormOutcome::Launch(spec) => {
                let key = TerminalKey::new(cluster, pod, spec.name.clone());
                let (id, mut effects) =
                    self.open_terminal_pane(TerminalKind::Debug, key.clone(), Some(form));
                effects.insert(
                    0,
                    Effect::Launch {
                        id,
                        key,
                        spec: *spec,
                    },
                );
                effects
            }
        }
    }

    pub(super) fn move_cursor(&mut self, action: Action) {
        let page = self.rows_per_page;
        let moved = match &mut self.view {
            View::Events(view) => {
                let len = view.visible().len();
                super::keymap::move_cursor(&mut view.cursor, len, page, action)
            }
            View::Debuggers(view) => {
                let len = view.shown(self.pods.rows()).len();
                super::keymap::move_cursor(&mut view.cursor, len, page, action)
            }
            // The lists of other kinds (while their filter is typed).
            View::Nodes(view) => view.list.move_cursor(action, page),
            View::Services(view) => view.list.move_cursor(action, page),
            View::Workloads(view) => view.list.move_cursor(action, page),
            _ => false,
        };
        if moved {
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
            Action::PageUp => self.pods.move_by(-(page as isize)),
            Action::PageDown => self.pods.move_by(page as isize),
            Action::Top => self.pods.select_index(0),
            Action::Bottom => self.pods.select_index(usize::MAX),
            _ => {}
        }
    }
}

/// `/` and `esc` on a list filtered by `filter`: `/` types the filter
/// again, `esc` clears it (the cursor back on the first row); whether the
/// key was taken (`esc` with no filter is not: it leaves the view).
pub(super) fn filter_key(
    filter: &mut String,
    cursor: &mut usize,
    mode: &mut Mode,
    action: Action,
) -> bool {
    match action {
        Action::Filter => *mode = Mode::Filter(filter.as_str().into()),
        Action::Back if !filter.is_empty() => {
            filter.clear();
            *cursor = 0;
        }
        _ => return false,
    }
    true
}

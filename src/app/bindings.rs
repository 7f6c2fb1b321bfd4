//! Which keys each browser view takes: one table per view, from which the
//! key dispatch (a key the shown view does not take does nothing), the
//! footer's hints and the help are all derived, so they cannot disagree.

use std::borrow::Cow;

use super::keymap::{Action, KeySpec, Keymap};
use super::{App, Page, View};

/// A key a view takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A key of the keymap (`[keys]` in config can rebind it).
    Action(Action),
    /// A key fixed in its view: the keys as config writes them, and how the
    /// footer and the help show them.
    Fixed {
        keys: &'static [&'static str],
        label: &'static str,
    },
}

/// One key of a view: what it is, the footer's words for it (`None`: it
/// is in the help only) and the help's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub key: Key,
    /// Borrowed but for a count ("debug the 3 marked"): the footer reads
    /// the table every frame.
    pub hint: Option<Cow<'static, str>>,
    /// `None`: the action's own description.
    help: Option<&'static str>,
}

impl Binding {
    fn action(action: Action) -> Binding {
        Binding {
            key: Key::Action(action),
            hint: None,
            help: None,
        }
    }

    fn hinted(action: Action, hint: impl Into<Cow<'static, str>>) -> Binding {
        Binding {
            hint: Some(hint.into()),
            ..Binding::action(action)
        }
    }

    fn fixed(
        keys: &'static [&'static str],
        label: &'static str,
        hint: Option<&'static str>,
        help: &'static str,
    ) -> Binding {
        Binding {
            key: Key::Fixed { keys, label },
            hint: hint.map(Cow::Borrowed),
            help: Some(help),
        }
    }

    /// What it does in this view, where that is not the action's own
    /// description (`enter` in the nodes view lists a node's pods).
    fn saying(self, help: &'static str) -> Binding {
        Binding {
            help: Some(help),
            ..self
        }
    }

    /// The help's line for it.
    pub fn help(&self) -> &'static str {
        match (self.help, self.key) {
            (Some(help), _) => help,
            (None, Key::Action(action)) => action.description(),
            (None, Key::Fixed { label, .. }) => label,
        }
    }

    /// Its keys as the help lists them ("q, ctrl-c"), from the live keymap.
    pub fn keys_label(&self, keymap: &Keymap) -> String {
        match self.key {
            Key::Action(action) => keymap.keys_for(action),
            Key::Fixed { label, .. } => label.to_string(),
        }
    }

    /// The one key the footer shows for it.
    pub fn footer_key(&self, keymap: &Keymap) -> String {
        match self.key {
            Key::Action(action) => keymap
                .keys_for(action)
                .split(", ")
                .next()
                .unwrap_or_default()
                .to_string(),
            // "enter →" is "enter" there.
            Key::Fixed { label, .. } => label.split(' ').next().unwrap_or(label).to_string(),
        }
    }

    /// The keys it is pressed with.
    pub fn specs(&self, keymap: &Keymap) -> Vec<KeySpec> {
        match self.key {
            Key::Action(action) => keymap.specs_for(action).to_vec(),
            Key::Fixed { keys, .. } => keys.iter().filter_map(|k| KeySpec::parse(k).ok()).collect(),
        }
    }
}

/// Taken in every view: the command line, the run's messages, the nodes,
/// the panes, the help and quitting.
const EVERYWHERE: [Action; 6] = [
    Action::Command,
    Action::Messages,
    Action::Nodes,
    Action::Workspace,
    Action::Help,
    Action::Quit,
];

/// The movement keys of a list.
const MOVES: [Action; 6] = [
    Action::Up,
    Action::Down,
    Action::PageUp,
    Action::PageDown,
    Action::Top,
    Action::Bottom,
];

/// The keys the browser's view takes now: those the footer shows first,
/// most important first (help and quit it always shows last), then the
/// rest in the help's order.
pub fn browser(app: &App) -> Vec<Binding> {
    let mut table = match &app.view {
        View::Pod(view) if !matches!(view.page, Page::Containers) => {
            let mut table = reading();
            table.insert(3, Binding::hinted(Action::Describe, "describe"));
            table.insert(4, Binding::hinted(Action::Yaml, "yaml"));
            // The pod's keys still act, with the reading's hints alone.
            table.extend(pod().into_iter().map(|b| Binding { hint: None, ..b }));
            table
        }
        View::Events(view) if view.reading.is_some() => reading(),
        View::Files(browser) if browser.reading.is_some() => reading(),
        View::Nodes(view) if view.reading.is_some() => reading(),
        View::Services(view) if view.reading.is_some() || view.page.is_some() => reading(),
        View::Workloads(view) if view.reading.is_some() => reading(),
        View::Messages(_) => reading(),
        View::Pods => {
            let mut table = pods(app.pods.marks().len());
            if let Some(narrowed) = &app.narrowed {
                let back = format!("back to {}", narrowed.from.split('/').next().unwrap_or(""));
                table.insert(0, Binding::hinted(Action::Back, back));
            }
            table
        }
        View::Pod(_) => pod(),
        View::Events(_) => events(),
        View::Nodes(_) => nodes(),
        View::Services(view) => marking(services(), view.list.marks_len()),
        View::Workloads(view) => marking(workloads(), view.list.marks_len()),
        View::Debuggers(_) => debuggers(),
        View::Files(_) => files(),
        View::Forwards(_) => forwards(),
        View::Captures(_) => captures(),
    };
    if !app.workspace.is_empty() {
        table.insert(0, Binding::hinted(Action::Workspace, "panes"));
    }
    table.extend(EVERYWHERE.map(|action| match action {
        Action::Help => Binding::hinted(action, "help"),
        Action::Quit => Binding::hinted(action, "quit"),
        _ => Binding::action(action),
    }));
    // A key listed twice keeps its first place.
    let mut seen = Vec::new();
    table.retain(|b| {
        let new = !seen.contains(&b.key);
        seen.push(b.key);
        new
    });
    table
}

/// Whether the browser's view takes `action` (else the key does nothing
/// there: it never acts on a view that is not shown).
pub fn takes(app: &App, action: Action) -> bool {
    browser(app).iter().any(|b| b.key == Key::Action(action))
}

fn pods(marked: usize) -> Vec<Binding> {
    let mut table = Vec::new();
    if marked > 0 {
        // What the marks are for comes first, at any width.
        table.push(Binding::hinted(
            Action::Debug,
            format!("debug the {marked} marked"),
        ));
        table.push(Binding::hinted(Action::Mark, "unmark"));
        table.push(Binding::hinted(Action::MarkShown, "all shown"));
    }
    table.extend([
        Binding::hinted(Action::Filter, "filter"),
        Binding::hinted(Action::Open, "open"),
        Binding::hinted(Action::Command, "cmd"),
        Binding::hinted(Action::Describe, "describe"),
        Binding::hinted(Action::Events, "events"),
        Binding::hinted(Action::ToggleAllNamespaces, "all/ns"),
        Binding::hinted(Action::Mark, "mark (debug many)"),
    ]);
    table.extend(MOVES.map(Binding::action));
    table.extend(
        [
            Action::Debug,
            Action::Forward,
            Action::Capture,
            Action::MarkShown,
            Action::Back,
            Action::Yaml,
            Action::SortByName,
            Action::SortByStatus,
            Action::SortByRestarts,
            Action::SortByAge,
            Action::Delete,
            Action::CopyName,
            Action::CopyPod,
        ]
        .map(Binding::action),
    );
    table
}

fn pod() -> Vec<Binding> {
    let mut table = vec![
        Binding::hinted(Action::Back, "back").saying("back to the list"),
        Binding::hinted(Action::Debug, "debug"),
        Binding::hinted(Action::Attach, "attach"),
        Binding::hinted(Action::Shell, "shell"),
        Binding::hinted(Action::Logs, "logs"),
        Binding::hinted(Action::PreviousLogs, "previous"),
        Binding::hinted(Action::Files, "files"),
        Binding::hinted(Action::Forward, "forward"),
        Binding::hinted(Action::Describe, "describe"),
        Binding::action(Action::Capture),
    ];
    table.extend(
        [
            Action::Up,
            Action::Down,
            Action::Top,
            Action::Bottom,
            Action::AllLogs,
            Action::Fold,
            Action::Exec,
            Action::Yaml,
            Action::Events,
            Action::Delete,
            Action::CopyName,
            Action::CopyPod,
        ]
        .map(Binding::action),
    );
    table
}

/// A text being read: a description, YAML, an event or a node's pods in
/// full, the run's messages.
fn reading() -> Vec<Binding> {
    let mut table = vec![
        Binding::hinted(Action::Back, "back").saying("back to where it was opened from"),
        Binding::hinted(Action::Filter, "search").saying("search the text"),
        Binding::fixed(
            &["n", "N"],
            "n/N",
            Some("next/prev"),
            "the next / previous match of the search",
        ),
    ];
    table.extend(MOVES.map(Binding::action));
    table
}

fn events() -> Vec<Binding> {
    let mut table = vec![
        Binding::hinted(Action::Back, "back").saying("clear the filter, else back"),
        Binding::hinted(Action::Filter, "filter").saying("fuzzy filter over the events"),
        Binding::hinted(Action::Open, "read in full").saying("read the event in full"),
        Binding::hinted(Action::ToggleAllNamespaces, "all/ns"),
    ];
    table.extend(MOVES.map(Binding::action));
    table
}

fn nodes() -> Vec<Binding> {
    let mut table = vec![
        Binding::hinted(Action::Back, "back").saying("clear the filter, else back to the pods"),
        Binding::hinted(Action::Open, "its pods")
            .saying("the node's taints and its pods of every namespace"),
        Binding::hinted(Action::Debug, "debug the node").saying(
            "a shell on the node (a pod with its namespaces and root, deleted when its pane closes)",
        ),
        Binding::hinted(Action::Filter, "filter").saying("fuzzy filter over the nodes' names"),
        Binding::action(Action::Events).saying("the events about the node (esc comes back)"),
        Binding::action(Action::SortByName),
        Binding::action(Action::SortByAge),
    ];
    table.extend(MOVES.map(Binding::action));
    table
}

fn services() -> Vec<Binding> {
    let mut table = vec![
        Binding::hinted(Action::Back, "back").saying("clear the filter, else back to the pods"),
        Binding::hinted(Action::Open, "its pods")
            .saying("the pod list narrowed to the pods the Service selects (esc comes back)"),
        Binding::hinted(Action::Describe, "where it sends").saying(
            "where the Service's ports lead, and which of its pods take traffic and why not",
        ),
        Binding::hinted(Action::Debug, "debug its pods")
            .saying("the pods it selects, marked, in the many-pods debug form"),
        Binding::hinted(Action::Logs, "logs").saying(
            "the logs of the pods it selects in one pane, merged, each line after its pod and container",
        ),
        Binding::hinted(Action::Forward, "forward")
            .saying("a port-forward that follows its pods as they are replaced"),
        Binding::hinted(Action::Filter, "filter").saying("fuzzy filter over namespace/name"),
        Binding::action(Action::Yaml).saying("the Service as YAML (read once)"),
        Binding::action(Action::Mark)
            .saying("mark it: enter and d then take the pods of every one marked"),
        Binding::action(Action::MarkShown).saying("mark every one shown (again: unmark them)"),
        Binding::action(Action::Events)
            .saying("the events of its namespace filtered by its name (esc comes back)"),
        Binding::action(Action::SortByName),
        Binding::action(Action::SortByAge),
    ];
    table.extend(MOVES.map(Binding::action));
    table
}

fn workloads() -> Vec<Binding> {
    let mut table = vec![
        Binding::hinted(Action::Back, "back").saying("clear the filter, else back to the pods"),
        Binding::hinted(Action::Open, "its pods")
            .saying("the pod list narrowed to the workload's pods (esc comes back)"),
        Binding::hinted(Action::Debug, "debug its pods")
            .saying("the workload's pods, marked, in the many-pods debug form"),
        Binding::hinted(Action::Logs, "logs").saying(
            "its pods' logs in one pane, merged, each line after its pod and container; pods that start later join",
        ),
        Binding::hinted(Action::Forward, "forward")
            .saying("a port-forward that follows its pods as they are replaced"),
        Binding::hinted(Action::Filter, "filter").saying("fuzzy filter over namespace/name"),
        Binding::hinted(Action::Describe, "describe").saying(
            "the workload as kubectl describe lays it out, with its pods and events (read once)",
        ),
        Binding::hinted(Action::Yaml, "yaml").saying("the workload as YAML (read once)"),
        Binding::action(Action::Mark)
            .saying("mark it: enter and d then take the pods of every one marked"),
        Binding::action(Action::MarkShown).saying("mark every one shown (again: unmark them)"),
        Binding::action(Action::Events).saying(
            "the events of it, its ReplicaSets and its pods: its namespace's, filtered by its name (esc comes back)",
        ),
        Binding::action(Action::SortByName),
        Binding::action(Action::SortByStatus)
            .saying("sort by standing: failed, then short of replicas, first (again: reverse)"),
        Binding::action(Action::SortByAge),
    ];
    table.extend(MOVES.map(Binding::action));
    table
}

/// A view's table while some of its rows are marked: what the marks are
/// for comes first.
fn marking(mut table: Vec<Binding>, marked: usize) -> Vec<Binding> {
    if marked > 0 {
        table.splice(
            0..0,
            [
                Binding::hinted(Action::Open, format!("pods of the {marked} marked")),
                Binding::hinted(Action::Debug, "debug their pods"),
                Binding::hinted(Action::Mark, "unmark"),
            ],
        );
    }
    table
}

fn debuggers() -> Vec<Binding> {
    let mut table = vec![
        Binding::hinted(Action::Back, "back").saying("clear the filter, else back to the pods"),
        Binding::fixed(
            &["x", "delete"],
            "x",
            Some("stop"),
            "stop the debugger: end its own process, never the target's (asks first)",
        ),
        Binding::hinted(Action::Attach, "attach")
            .saying("attach a pane to the debugger (if it runs)"),
        Binding::hinted(Action::Filter, "filter")
            .saying("fuzzy filter over pod, name, image, state and who added it"),
        Binding::hinted(Action::Open, "its pod").saying("open the debugger's pod"),
        Binding::hinted(Action::ToggleAllNamespaces, "all/ns"),
        Binding::action(Action::SortByName).saying("sort by pod"),
        Binding::action(Action::SortByStatus).saying("sort by state, running first"),
        Binding::action(Action::SortByAge).saying("sort by age, oldest first"),
    ];
    table.extend(MOVES.map(Binding::action));
    table
}

fn files() -> Vec<Binding> {
    vec![
        Binding::fixed(&["esc"], "esc", Some("back"), "back to the pod"),
        Binding::fixed(
            &["enter", "right"],
            "enter →",
            Some("open"),
            "open a directory (or a link to one); read a file",
        ),
        Binding::fixed(
            &["-", "left", "backspace"],
            "- ← backspace",
            Some("up"),
            "the directory above",
        ),
        Binding::fixed(
            &["v"],
            "v",
            Some("read"),
            "read the file (text, or a hex dump), its first 256 KiB",
        ),
        Binding::fixed(
            &["g"],
            "g",
            Some("download"),
            "download the selection into [files] download_dir",
        ),
        Binding::fixed(
            &["u"],
            "u",
            Some("upload"),
            "upload a local path into this directory",
        ),
        Binding::fixed(
            &["D"],
            "D",
            Some("remove"),
            "remove the selection (asks first)",
        ),
        Binding::fixed(&["/"], "/", Some("filter"), "filter the names (esc clears)"),
        Binding::fixed(
            &[
                "j", "k", "down", "up", "pageup", "pagedown", "home", "end", "G",
            ],
            "↑/↓ j/k pgup/pgdn",
            None,
            "move",
        ),
        Binding::fixed(&["x"], "x", None, "cancel the last copy running"),
        Binding::fixed(&["r"], "r", None, "list again"),
    ]
}

fn forwards() -> Vec<Binding> {
    vec![
        Binding::fixed(
            &["esc"],
            "esc",
            Some("back"),
            "back to the pods (forwards keep running)",
        ),
        Binding::fixed(
            &["x", "delete"],
            "x",
            Some("stop"),
            "stop the selected forward",
        ),
        Binding::fixed(&["j", "k", "down", "up"], "j/k", Some("move"), "move"),
    ]
}

fn captures() -> Vec<Binding> {
    vec![
        Binding::fixed(
            &["esc"],
            "esc",
            Some("back"),
            "back to the pods (captures keep running)",
        ),
        Binding::fixed(
            &["x", "delete"],
            "x",
            Some("stop"),
            "stop the selected capture: each tcpdump ends, the file is complete",
        ),
        Binding::fixed(
            &["o"],
            "o",
            Some("open cmd"),
            "copy the command that opens the selected capture's file in Wireshark",
        ),
        Binding::fixed(&["j", "k", "down", "up"], "j/k", Some("move"), "move"),
    ]
}

#[cfg(test)]
#[path = "bindings_tests.rs"]
mod tests;

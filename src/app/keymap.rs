//! Keys → actions, with defaults and overrides from `config.toml`.

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key can do in the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Up,
    Down,
    Top,
    Bottom,
    PageUp,
    PageDown,
    Open,
    Back,
    Filter,
    Command,
    Help,
    ToggleAllNamespaces,
    Debug,
    Attach,
    Shell,
    Logs,
    PreviousLogs,
    CopyName,
    Workspace,
    Describe,
    Yaml,
    Events,
    Exec,
    Delete,
    SortByName,
    SortByStatus,
    SortByRestarts,
    SortByAge,
    AllLogs,
    Fold,
    Messages,
    Mark,
    MarkShown,
    Files,
    Forward,
    Nodes,
    CopyPod,
    Capture,
}

impl Action {
    pub const ALL: [Action; 39] = [
        Action::Quit,
        Action::Up,
        Action::Down,
        Action::Top,
        Action::Bottom,
        Action::PageUp,
        Action::PageDown,
        Action::Open,
        Action::Back,
        Action::Filter,
        Action::Command,
        Action::Help,
        Action::ToggleAllNamespaces,
        Action::Debug,
        Action::Attach,
        Action::Shell,
        Action::Logs,
        Action::PreviousLogs,
        Action::CopyName,
        Action::Workspace,
        Action::Describe,
        Action::Yaml,
        Action::Events,
        Action::Exec,
        Action::Delete,
        Action::SortByName,
        Action::SortByStatus,
        Action::SortByRestarts,
        Action::SortByAge,
        Action::AllLogs,
        Action::Fold,
        Action::Messages,
        Action::Mark,
        Action::MarkShown,
        Action::Files,
        Action::Forward,
        Action::Nodes,
        Action::CopyPod,
        Action::Capture,
    ];

    /// The name used in config.toml's `[keys]`.
    pub fn name(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Up => "up",
            Action::Down => "down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::PageUp => "page_up",
            Action::PageDown => "page_down",
            Action::Open => "open",
            Action::Back => "back",
            Action::Filter => "filter",
            Action::Command => "command",
            Action::Help => "help",
            Action::ToggleAllNamespaces => "toggle_all_namespaces",
            Action::Debug => "debug",
            Action::Attach => "attach",
            Action::Shell => "shell",
            Action::Logs => "logs",
            Action::PreviousLogs => "previous_logs",
            Action::CopyName => "copy_name",
            Action::Workspace => "workspace",
            Action::Describe => "describe",
            Action::Yaml => "yaml",
            Action::Events => "events",
            Action::Exec => "exec",
            Action::Delete => "delete",
            Action::SortByName => "sort_name",
            Action::SortByStatus => "sort_status",
            Action::SortByRestarts => "sort_restarts",
            Action::SortByAge => "sort_age",
            Action::AllLogs => "all_logs",
            Action::Fold => "fold",
            Action::Messages => "messages",
            Action::Mark => "mark",
            Action::MarkShown => "mark_shown",
            Action::Files => "files",
            Action::Forward => "forward",
            Action::Nodes => "nodes",
            Action::CopyPod => "copy-pod",
            Action::Capture => "capture",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Action::Quit => "quit podbay",
            Action::Up => "move up",
            Action::Down => "move down",
            Action::Top => "first row",
            Action::Bottom => "last row",
            Action::PageUp => "page up",
            Action::PageDown => "page down",
            Action::Open => "open the pod",
            Action::Back => "back / clear the filter",
            Action::Filter => "fuzzy filter",
            Action::Command => "command line (:ns, :ctx, :q)",
            Action::Help => "this help",
            Action::ToggleAllNamespaces => "all namespaces ↔ the context's",
            Action::Debug => "launch a debug container",
            Action::Attach => "attach to the selected container",
            Action::Shell => "open a shell (exec) in the selected container",
            Action::Logs => "the selected container's log (its last run's, if it is not running)",
            Action::PreviousLogs => "the log of the run before (what a crash loop died of)",
            Action::CopyName => "copy the pod's name to the clipboard",
            Action::Workspace => "the panes ↔ the browser (in panes: f-keys only)",
            Action::Describe => "the pod as kubectl describe lays it out (live)",
            Action::Yaml => "the pod as YAML (live)",
            Action::Events => "the namespace's events, newest first (live)",
            Action::Exec => "run a command in the selected container (:exec CMD…)",
            Action::Delete => "delete the pod (asks first)",
            Action::SortByName => "sort by name (again: reverse)",
            Action::SortByStatus => "sort by status (again: reverse)",
            Action::SortByRestarts => "sort by restarts, most first (again: reverse)",
            Action::SortByAge => "sort by age, youngest first (again: reverse)",
            Action::AllLogs => "every container's log in one pane, init containers included",
            Action::Fold => "show or fold the finished debug containers",
            Action::Messages => "every sentence of this run, time-stamped (:messages)",
            Action::Mark => "mark the pod (d then debugs every marked pod at once)",
            Action::MarkShown => "mark every pod shown (the filter's matches); again: unmark",
            Action::Files => {
                "browse the selected container's files (distroless too): read, download, upload"
            }
            Action::Forward => {
                "forward one of the pod's ports to this machine; it follows the pod's owner when the pod is replaced (:pf lists them)"
            }
            Action::Capture => {
                "capture the pod's packets (the marked pods' together) into a pcap file, with tcpdump in a debug container (:captures lists them)"
            }
            Action::CopyPod => {
                "a copy of the pod whose chosen container runs a shell instead of its program (hold a crash loop), deleted when its pane closes"
            }
            Action::Nodes => {
                "the cluster's nodes: enter lists a node's pods, d opens a shell on it (a pod with its namespaces and root, deleted when its pane closes)"
            }
        }
    }

    fn defaults(self) -> &'static [&'static str] {
        match self {
            Action::Quit => &["q", "ctrl-c"],
            Action::Up => &["k", "up"],
            Action::Down => &["j", "down"],
            Action::Top => &["g", "home"],
            Action::Bottom => &["G", "end"],
            Action::PageUp => &["pageup", "ctrl-u"],
            Action::PageDown => &["pagedown", "ctrl-d"],
            Action::Open => &["enter"],
            Action::Back => &["esc"],
            Action::Filter => &["/"],
            Action::Command => &[":"],
            Action::Help => &["?"],
            Action::ToggleAllNamespaces => &["0"],
            Action::Debug => &["d"],
            Action::Attach => &["a"],
            Action::Shell => &["s"],
            Action::Logs => &["l"],
            Action::PreviousLogs => &["p"],
            Action::CopyName => &["c"],
            Action::Workspace => &["tab", "f12"],
            Action::Describe => &["D"],
            Action::Yaml => &["y"],
            Action::Events => &["E"],
            Action::Exec => &["e"],
            Action::Delete => &["X"],
            Action::SortByName => &["N"],
            Action::SortByStatus => &["S"],
            Action::SortByRestarts => &["R"],
            Action::SortByAge => &["A"],
            Action::AllLogs => &["L"],
            Action::Fold => &["f"],
            Action::Messages => &["M"],
            Action::Mark => &["space"],
            Action::MarkShown => &["*"],
            Action::Files => &["b"],
            Action::Forward => &["F"],
            Action::Nodes => &["O"],
            Action::CopyPod => &["C"],
            Action::Capture => &["P"],
        }
    }
}

/// A key as written in config: `q`, `G`, `enter`, `ctrl-c`, `alt-x`, `f5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySpec {
    code: KeyCode,
    ctrl: bool,
    alt: bool,
}

impl KeySpec {
    pub fn parse(text: &str) -> Result<KeySpec, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = text;
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-") {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-") {
                alt = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = match rest {
            "enter" => KeyCode::Enter,
            "esc" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backspace" => KeyCode::Backspace,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "delete" => KeyCode::Delete,
            "end" => KeyCode::End,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "space" => KeyCode::Char(' '),
            f if f.len() > 1
                && f.starts_with('f')
                && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) =>
            {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            c if c.chars().count() == 1 => KeyCode::Char(c.chars().next().unwrap_or(' ')),
            _ => return Err(format!("unknown key {text:?}")),
        };
        Ok(KeySpec { code, ctrl, alt })
    }

    /// The key event this key is.
    pub fn event(&self) -> KeyEvent {
        let mut modifiers = KeyModifiers::NONE;
        modifiers.set(KeyModifiers::CONTROL, self.ctrl);
        modifiers.set(KeyModifiers::ALT, self.alt);
        KeyEvent::new(self.code, modifiers)
    }

    /// Whether `event` is this key.
    pub fn matches(&self, event: &KeyEvent) -> bool {
        KeySpec::of(event) == *self
    }

    fn of(event: &KeyEvent) -> KeySpec {
        let code = match event.code {
            // Shifted letters arrive as upper case; normalise so "G" matches.
            KeyCode::Char(c) if event.modifiers.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            other => other,
        };
        KeySpec {
            code,
            ctrl: event.modifiers.contains(KeyModifiers::CONTROL),
            alt: event.modifiers.contains(KeyModifiers::ALT),
        }
    }

    pub fn label(&self) -> String {
        let key = match self.code {
            KeyCode::Char(' ') => "space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Enter => "enter".into(),
            KeyCode::Esc => "esc".into(),
            KeyCode::Tab => "tab".into(),
            KeyCode::Backspace => "backspace".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Home => "home".into(),
            KeyCode::End => "end".into(),
            KeyCode::PageUp => "pgup".into(),
            KeyCode::PageDown => "pgdn".into(),
            KeyCode::Delete => "delete".into(),
            KeyCode::F(n) => format!("f{n}"),
            other => format!("{other:?}"),
        };
        match (self.ctrl, self.alt) {
            (true, _) => format!("ctrl-{key}"),
            (_, true) => format!("alt-{key}"),
            _ => key,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: HashMap<KeySpec, Action>,
    keys: HashMap<Action, Vec<KeySpec>>,
}

/// A `[keys]` setting that cannot be used, with the action it is about
/// (so the sentence can point at its line in the config file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", .action.map(|a| format!("{a}: ")).unwrap_or_default())]
pub struct KeymapError {
    pub action: Option<&'static str>,
    pub message: String,
}

/// An action's keys in `[keys]`: one, or a list.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum Keys {
    One(String),
    Many(Vec<String>),
}

impl Keys {
    pub fn list(&self) -> Vec<&str> {
        match self {
            Keys::One(k) => vec![k.as_str()],
            Keys::Many(ks) => ks.iter().map(String::as_str).collect(),
        }
    }
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::from_config(&Default::default()).unwrap_or_else(|_| Keymap {
            bindings: HashMap::new(),
            keys: HashMap::new(),
        })
    }
}

impl Keymap {
    /// The default bindings with `[keys]` overrides applied; an override
    /// replaces all of an action's default keys.
    pub fn from_config(
        overrides: &std::collections::BTreeMap<String, Keys>,
    ) -> Result<Keymap, KeymapError> {
        for name in overrides.keys() {
            if !Action::ALL.iter().any(|a| a.name() == name) {
                let known: Vec<_> = Action::ALL.iter().map(|a| a.name()).collect();
                return Err(KeymapError {
                    action: None,
                    message: format!(
                        "unknown action {name:?} in [keys]; actions are: {}",
                        known.join(", ")
                    ),
                });
            }
        }
        let mut keymap = Keymap {
            bindings: HashMap::new(),
            keys: HashMap::new(),
        };
        for action in Action::ALL {
            let texts: Vec<&str> = match overrides.get(action.name()) {
                Some(keys) => keys.list(),
                None => action.defaults().to_vec(),
            };
            for text in texts {
                let spec = KeySpec::parse(text).map_err(|message| KeymapError {
                    action: Some(action.name()),
                    message,
                })?;
                if let Some(other) = keymap.bindings.insert(spec, action)
                    && other != action
                {
                    // Name the action the user set first: that is the line to fix.
                    let (mine, theirs) = if overrides.contains_key(other.name())
                        && !overrides.contains_key(action.name())
                    {
                        (other, action)
                    } else {
                        (action, other)
                    };
                    return Err(KeymapError {
                        action: Some(mine.name()),
                        message: format!(
                            "{text:?} is also the key of {}; give each action its own keys",
                            theirs.name()
                        ),
                    });
                }
                keymap.keys.entry(action).or_default().push(spec);
            }
        }
        Ok(keymap)
    }

    pub fn action(&self, event: &KeyEvent) -> Option<Action> {
        self.bindings.get(&KeySpec::of(event)).copied()
    }

    /// The keys `action` is pressed with.
    pub fn specs_for(&self, action: Action) -> &[KeySpec] {
        self.keys.get(&action).map_or(&[], Vec::as_slice)
    }

    /// "q, ctrl-c" for the help screen and hints.
    pub fn keys_for(&self, action: Action) -> String {
        self.keys
            .get(&action)
            .map(|ks| ks.iter().map(KeySpec::label).collect::<Vec<_>>().join(", "))
            .unwrap_or_default()
    }
}

/// Moves a list's `cursor` (of `len` rows, `page` of them shown) as a
/// movement key says: a row, half a page, or to either end; false for any
/// other key.
pub(super) fn move_cursor(cursor: &mut usize, len: usize, page: usize, action: Action) -> bool {
    let last = len.saturating_sub(1);
    let half = (page / 2).max(1);
    *cursor = match action {
        Action::Up => cursor.saturating_sub(1),
        Action::PageUp => cursor.saturating_sub(half),
        Action::Top => 0,
        Action::Down => (*cursor + 1).min(last),
        Action::PageDown => (*cursor + half).min(last),
        Action::Bottom => last,
        _ => return false,
    };
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn defaults_cover_vim_and_arrow_keys() {
        let km = Keymap::default();
        assert_eq!(
            km.action(&key(KeyCode::Char('j'), KeyModifiers::NONE)),
            Some(Action::Down)
        );
        assert_eq!(
            km.action(&key(KeyCode::Down, KeyModifiers::NONE)),
            Some(Action::Down)
        );
        assert_eq!(
            km.action(&key(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Action::Bottom)
        );
        assert_eq!(
            km.action(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action(&key(KeyCode::Char('x'), KeyModifiers::NONE)),
            None
        );
        assert_eq!(km.keys_for(Action::Quit), "q, ctrl-c");
    }

    #[test]
    fn overrides_replace_an_actions_keys() {
        let mut o = std::collections::BTreeMap::new();
        o.insert("quit".to_string(), Keys::One("x".into()));
        let km = Keymap::from_config(&o).unwrap();
        assert_eq!(
            km.action(&key(KeyCode::Char('x'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action(&key(KeyCode::Char('q'), KeyModifiers::NONE)),
            None
        );
        o.insert("fly".to_string(), Keys::One("f".into()));
        assert!(
            Keymap::from_config(&o)
                .unwrap_err()
                .to_string()
                .starts_with("unknown action \"fly\"")
        );
    }

    #[test]
    fn key_specs() {
        assert!(KeySpec::parse("ctrl-alt-x").is_ok());
        assert!(KeySpec::parse("f12").is_ok());
        assert!(KeySpec::parse("f13").is_err());
        assert!(KeySpec::parse("hyper-x").is_err());
        assert_eq!(KeySpec::parse("pagedown").unwrap().label(), "pgdn");
    }

    #[test]
    fn clashes_and_bad_keys_name_the_action() {
        let with = |action: &str, key: &str| {
            let overrides = std::collections::BTreeMap::from([(
                action.to_string(),
                Keys::Many(vec![key.to_string()]),
            )]);
            Keymap::from_config(&overrides)
        };
        assert!(
            Keymap::from_config(&Default::default()).is_ok(),
            "the defaults do not clash"
        );
        let clash = with("quit", "j").unwrap_err().to_string();
        assert_eq!(
            clash,
            "quit: \"j\" is also the key of down; give each action its own keys"
        );
        assert_eq!(
            with("quit", "qq").unwrap_err().to_string(),
            "quit: unknown key \"qq\""
        );
    }
}

#[cfg(test)]
mod cursor_tests {
    use super::{Action, move_cursor};

    #[test]
    fn every_list_moves_a_row_half_a_page_or_to_an_end() {
        let mut cursor = 0;
        assert!(move_cursor(&mut cursor, 100, 20, Action::PageDown));
        assert_eq!(cursor, 10, "half of the 20 rows shown");
        move_cursor(&mut cursor, 100, 20, Action::Up);
        assert_eq!(cursor, 9);
        move_cursor(&mut cursor, 100, 20, Action::Bottom);
        assert_eq!(cursor, 99);
        move_cursor(&mut cursor, 100, 20, Action::Down);
        assert_eq!(cursor, 99, "stays on the last");
        move_cursor(&mut cursor, 100, 1, Action::PageUp);
        assert_eq!(cursor, 98, "at least a row");
        assert!(!move_cursor(&mut cursor, 100, 20, Action::Open));
        move_cursor(&mut cursor, 0, 20, Action::Bottom);
        assert_eq!(cursor, 0, "an empty list");
    }
}

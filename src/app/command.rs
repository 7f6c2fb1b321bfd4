//! The `:` command line: `:ns NAME`, `:ns` (all namespaces), `:ctx NAME`,
//! `:describe`, `:yaml`, `:events [-A]`, `:sort COLUMN`, `:exec CMD…`,
//! `:delete`, `:q`, with Tab completion of commands, namespaces and contexts.

pub use super::line::{Edit, LineEdit};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `None`: all namespaces.
    Namespace(Option<String>),
    Context(String),
    /// Start or stop recording the focused pane.
    Record,
    /// Name the focused pane (empty: back to pod/container).
    Rename(String),
    Describe,
    Yaml,
    /// The events of the namespace(s) shown, or of all namespaces.
    Events {
        all_namespaces: bool,
    },
    Sort(SortColumn),
    /// Run this command line in the selected container.
    Exec(Vec<String>),
    Delete,
    /// The focused log pane from this many seconds ago (`None`: all of it).
    Since(Option<i64>),
    /// Every sentence of this run.
    Messages,
    /// Browse the selected container's files, at this path.
    Files(Option<String>),
    /// The port-forwards.
    Forwards,
    Captures,
    /// `:nodes`: the nodes view.
    Nodes,
    /// `:svc`: the Services of the namespaces shown.
    Services,
    /// `:deploy`, `:sts`, …: one kind of workload in the namespaces shown.
    Workloads(crate::model::workload::WorkloadKind),
    /// `:debuggers`: every debug container of the pods listed.
    Debuggers,
    /// Keep the workspace under this name.
    Save(String),
    /// Bring back the workspace kept under this name.
    Load(String),
    Quit,
}

/// The columns the pod list sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    Name,
    Namespace,
    Status,
    Restarts,
    Age,
    Node,
    Cpu,
    Memory,
}

impl SortColumn {
    pub const ALL: [SortColumn; 8] = [
        SortColumn::Name,
        SortColumn::Namespace,
        SortColumn::Status,
        SortColumn::Restarts,
        SortColumn::Age,
        SortColumn::Node,
        SortColumn::Cpu,
        SortColumn::Memory,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SortColumn::Name => "name",
            SortColumn::Namespace => "namespace",
            SortColumn::Status => "status",
            SortColumn::Restarts => "restarts",
            SortColumn::Age => "age",
            SortColumn::Node => "node",
            SortColumn::Cpu => "cpu",
            SortColumn::Memory => "memory",
        }
    }
}

const COMMANDS: [&str; 26] = [
    "ns",
    "ctx",
    "describe",
    "yaml",
    "events",
    "sort",
    "exec",
    "delete",
    "since",
    "record",
    "rename",
    "files",
    "pf",
    "forwards",
    "debuggers",
    "svc",
    "deploy",
    "sts",
    "ds",
    "rs",
    "job",
    "cj",
    "save",
    "load",
    "q",
    "quit",
];

pub fn parse(text: &str) -> Result<Command, String> {
    if let Some(name) = text.trim_start().strip_prefix("rename")
        && (name.is_empty() || name.starts_with(' '))
    {
        return Ok(Command::Rename(name.trim().to_string()));
    }
    let mut words = text.split_whitespace();
    let verb = words.next().unwrap_or_default();
    if verb == "exec" {
        let command: Vec<String> = words.map(str::to_string).collect();
        if command.is_empty() {
            return Err("Name the command to run: :exec CMD [ARG…], e.g. :exec ps -ef.".into());
        }
        return Ok(Command::Exec(command));
    }
    let arg = words.next().map(str::to_string);
    if words.next().is_some() {
        return Err(format!(
            "Too many words in :{text}; try :ns NAME, :ctx NAME or :q."
        ));
    }
    match (verb, arg) {
        ("q" | "quit", None) => Ok(Command::Quit),
        ("record", None) => Ok(Command::Record),
        ("describe", None) => Ok(Command::Describe),
        ("yaml", None) => Ok(Command::Yaml),
        ("delete", None) => Ok(Command::Delete),
        ("messages" | "msgs", None) => Ok(Command::Messages),
        ("pf" | "forwards" | "port-forward", None) => Ok(Command::Forwards),
        ("captures" | "capture" | "cap", None) => Ok(Command::Captures),
        ("nodes" | "node" | "no", None) => Ok(Command::Nodes),
        ("svc" | "services" | "service", None) => Ok(Command::Services),
        (word, None) if crate::model::workload::WorkloadKind::from_word(word).is_some() => Ok(
            Command::Workloads(crate::model::workload::WorkloadKind::from_word(word).unwrap()),
        ),
        ("debuggers" | "debugger" | "dbg", None) => Ok(Command::Debuggers),
        ("save", Some(name)) => Ok(Command::Save(name)),
        ("save", None) => Err("Name the workspace: :save NAME (:load NAME brings it back).".into()),
        ("load", Some(name)) => Ok(Command::Load(name)),
        ("load", None) => Ok(Command::Load(String::new())),
        ("files", path) if path.as_deref().is_none_or(|p| p.starts_with('/')) => {
            Ok(Command::Files(path))
        }
        ("files", Some(path)) => Err(format!(
            "Give :files an absolute path (/var/log), not {path:?}."
        )),
        ("events" | "ev", None) => Ok(Command::Events {
            all_namespaces: false,
        }),
        ("events" | "ev", Some(flag)) if flag == "-A" || flag == "all" => Ok(Command::Events {
            all_namespaces: true,
        }),
        ("sort", Some(column)) => SortColumn::ALL
            .into_iter()
            .find(|c| c.name() == column || (column.len() >= 2 && c.name().starts_with(&column)))
            .map(Command::Sort)
            .ok_or_else(|| format!("Cannot sort by {column:?}; try :sort {}.", sort_names())),
        ("sort", None) => Err(format!("Name a column: :sort {}.", sort_names())),
        ("since", Some(span)) if span == "all" || span == "0" => Ok(Command::Since(None)),
        ("since", Some(span)) => seconds_in(&span).map(|s| Command::Since(Some(s))).ok_or_else(|| {
            format!("Cannot read {span:?} as a time span; try :since 10m, :since 1h30m or :since all.")
        }),
        ("since", None) => Err("Say how far back: :since 10m, :since 2h or :since all.".into()),
        ("ns" | "namespace", ns) => Ok(Command::Namespace(ns.filter(|n| n != "all" && n != "-A"))),
        ("ctx" | "context", Some(ctx)) => Ok(Command::Context(ctx)),
        ("ctx" | "context", None) => Err("Name a context: :ctx NAME (Tab completes).".to_string()),
        ("", _) => Err("Type a command: :ns NAME, :ns, :ctx NAME or :q.".to_string()),
        (other, _) => Err(format!(
            "Unknown command :{other}; try :ns NAME, :ctx NAME or :q."
        )),
    }
}

/// `90s`, `10m`, `1h30m`, `2d` in seconds; `None` when it is not a span.
fn seconds_in(span: &str) -> Option<i64> {
    let mut total: i64 = 0;
    let mut number = String::new();
    for c in span.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return None,
        };
        let n: i64 = std::mem::take(&mut number).parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    (number.is_empty() && total > 0).then_some(total)
}

fn sort_names() -> String {
    SortColumn::ALL.map(SortColumn::name).join("|")
}

/// The text being typed after `:` (the one line editor, [`LineEdit`]),
/// and what Tab could complete it to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandLine {
    line: LineEdit,
    /// What Tab could complete to, when more than one thing.
    pub candidates: Vec<String>,
}

impl CommandLine {
    pub fn text(&self) -> String {
        self.line.to_string()
    }

    /// The text before and after the cursor, for drawing it.
    pub fn split_at_cursor(&self) -> (&str, &str) {
        self.line.split_at_cursor()
    }

    pub fn insert(&mut self, c: char) {
        self.line.insert(c);
        self.candidates.clear();
    }

    pub fn insert_str(&mut self, s: &str) {
        self.line.insert_str(s);
        self.candidates.clear();
    }

    /// Applies a line-editing key (see [`LineEdit::edit`]).
    pub fn edit(&mut self, key: &crossterm::event::KeyEvent) -> Edit {
        let edit = self.line.edit(key);
        if edit == Edit::Edited {
            self.candidates.clear();
        }
        edit
    }

    /// Completes the word being typed to the longest common prefix of the
    /// candidates (commands, then namespaces, contexts or workspaces).
    pub fn complete(&mut self, known: &Candidates) {
        let text = self.line.to_string();
        let ends_with_space = text.ends_with(' ');
        let words: Vec<&str> = text.split_whitespace().collect();
        let (prefix_words, partial) = match (words.len(), ends_with_space) {
            (0, _) => (Vec::new(), ""),
            (1, false) => (Vec::new(), words[0]),
            (_, true) => (words.clone(), ""),
            (_, false) => (words[..words.len() - 1].to_vec(), words[words.len() - 1]),
        };
        // `:ctx a,b`: the name after the last comma is the one completed.
        let (named, partial) = match prefix_words.first().copied() {
            Some("ctx" | "context") => match partial.rsplit_once(',') {
                Some((named, last)) => (format!("{named},"), last),
                None => (String::new(), partial),
            },
            _ => (String::new(), partial),
        };
        let candidates: Vec<&str> = match prefix_words.first().copied() {
            None => COMMANDS.to_vec(),
            Some("ns" | "namespace") => known.namespaces.iter().map(String::as_str).collect(),
            Some("ctx" | "context") => known.contexts.iter().map(String::as_str).collect(),
            Some("load" | "save") => known.workspaces.iter().map(String::as_str).collect(),
            Some("sort") => SortColumn::ALL.map(SortColumn::name).to_vec(),
            Some("events" | "ev") => vec!["-A"],
            Some(_) => return,
        };
        let matching: Vec<&str> = candidates
            .into_iter()
            .filter(|c| c.starts_with(partial))
            .collect();
        let Some(first) = matching.first() else {
            self.candidates.clear();
            return;
        };
        let common = matching.iter().fold(first.to_string(), |acc, c| {
            acc.chars()
                .zip(c.chars())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect()
        });
        let mut completed = prefix_words.join(" ");
        if !completed.is_empty() {
            completed.push(' ');
        }
        completed.push_str(&named);
        completed.push_str(&common);
        if matching.len() == 1 {
            completed.push(' ');
        }
        self.line = LineEdit::from(completed);
        self.candidates = if matching.len() > 1 {
            matching.iter().map(|c| c.to_string()).collect()
        } else {
            Vec::new()
        };
    }
}

/// What the command line's words complete to beyond its commands.
pub struct Candidates<'a> {
    pub namespaces: &'a [String],
    pub contexts: &'a [String],
    pub workspaces: &'a [String],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    #[test]
    fn parses_the_commands() {
        assert_eq!(
            parse("ns shop"),
            Ok(Command::Namespace(Some("shop".into())))
        );
        assert_eq!(parse("ns"), Ok(Command::Namespace(None)));
        assert_eq!(parse("ns all"), Ok(Command::Namespace(None)));
        assert_eq!(parse("ctx prod"), Ok(Command::Context("prod".into())));
        assert_eq!(parse(" q "), Ok(Command::Quit));
        assert!(parse("ctx").unwrap_err().contains(":ctx NAME"));
        assert!(
            parse("frobnicate")
                .unwrap_err()
                .starts_with("Unknown command :frobnicate")
        );
        assert!(parse("ns a b").is_err());
        assert_eq!(
            parse("sort restarts"),
            Ok(Command::Sort(SortColumn::Restarts))
        );
        assert_eq!(parse("sort re"), Ok(Command::Sort(SortColumn::Restarts)));
        assert!(
            parse("sort r")
                .unwrap_err()
                .contains("name|namespace|status")
        );
        assert_eq!(
            parse("events -A"),
            Ok(Command::Events {
                all_namespaces: true
            })
        );
        assert_eq!(
            parse("exec ps -ef"),
            Ok(Command::Exec(vec!["ps".into(), "-ef".into()]))
        );
        assert!(parse("exec").unwrap_err().contains(":exec CMD"));
        assert_eq!(parse("since 1h30m"), Ok(Command::Since(Some(5400))));
        assert_eq!(parse("since all"), Ok(Command::Since(None)));
        assert!(parse("since 10").is_err());
        assert!(parse("since 10x").is_err());
    }

    #[test]
    fn tab_completes_commands_namespaces_contexts_and_workspaces() {
        let ns = vec![
            "payments".to_string(),
            "platform".to_string(),
            "shop".to_string(),
        ];
        let ctx = vec!["prod-eu".to_string(), "prod-us".to_string()];
        let kept = vec!["incident-42".to_string(), "previous".to_string()];
        let known = Candidates {
            namespaces: &ns,
            contexts: &ctx,
            workspaces: &kept,
        };
        let mut line = CommandLine::default();
        line.insert_str("n");
        line.complete(&known);
        assert_eq!(line.text(), "ns ");
        line.insert_str("p");
        line.complete(&known);
        assert_eq!(line.text(), "ns p", "ambiguous: common prefix only");
        line.insert_str("a");
        line.complete(&known);
        assert_eq!(line.text(), "ns payments ");
        let mut c = CommandLine::default();
        c.insert_str("ctx pr");
        c.complete(&known);
        assert_eq!(c.text(), "ctx prod-");
        assert_eq!(c.candidates, ["prod-eu", "prod-us"], "shown to choose from");
        c.insert('u');
        assert!(c.candidates.is_empty());
        let mut several = CommandLine::default();
        several.insert_str("ctx prod-eu,prod-u");
        several.complete(&known);
        assert_eq!(
            several.text(),
            "ctx prod-eu,prod-us ",
            "the name after the comma"
        );
        let mut w = CommandLine::default();
        w.insert_str("load i");
        w.complete(&known);
        assert_eq!(w.text(), "load incident-42 ");
    }

    fn press(line: &mut CommandLine, code: KeyCode, modifiers: KeyModifiers) -> Edit {
        line.edit(&KeyEvent::new(code, modifiers))
    }

    #[test]
    fn edits_like_a_shell_line() {
        let ctrl = KeyModifiers::CONTROL;
        let alt = KeyModifiers::ALT;
        let mut line = CommandLine::default();
        line.insert_str("ctx prod-eu");
        press(&mut line, KeyCode::Char('w'), ctrl);
        assert_eq!(
            line.text(),
            "ctx ",
            "ctrl-w deletes the word before the cursor"
        );
        line.insert_str("staging");
        press(&mut line, KeyCode::Char('a'), ctrl);
        line.insert('x');
        assert_eq!(
            line.split_at_cursor(),
            ("x", "ctx staging"),
            "ctrl-a goes to the start"
        );
        press(&mut line, KeyCode::Char('f'), alt);
        assert_eq!(
            line.split_at_cursor(),
            ("xctx", " staging"),
            "alt-f: end of the word"
        );
        press(&mut line, KeyCode::Char('f'), alt);
        press(&mut line, KeyCode::Char('b'), alt);
        assert_eq!(
            line.split_at_cursor(),
            ("xctx ", "staging"),
            "alt-b: start of the word"
        );
        press(&mut line, KeyCode::Char('e'), ctrl);
        assert_eq!(
            line.split_at_cursor(),
            ("xctx staging", ""),
            "ctrl-e: the end"
        );
        press(&mut line, KeyCode::Left, KeyModifiers::NONE);
        press(&mut line, KeyCode::Char('u'), ctrl);
        assert_eq!(
            line.split_at_cursor(),
            ("", "g"),
            "ctrl-u clears to the start"
        );
        press(&mut line, KeyCode::Char('e'), ctrl);
        assert_eq!(
            press(&mut line, KeyCode::Backspace, KeyModifiers::NONE),
            Edit::Edited
        );
        assert_eq!(
            press(&mut line, KeyCode::Backspace, KeyModifiers::NONE),
            Edit::LeaveEmpty
        );
        assert_eq!(
            press(&mut line, KeyCode::Tab, KeyModifiers::NONE),
            Edit::Ignored
        );
        let mut wide = CommandLine::default();
        wide.insert_str("ns über straße");
        press(&mut wide, KeyCode::Char('w'), ctrl);
        press(&mut wide, KeyCode::Left, KeyModifiers::NONE);
        press(&mut wide, KeyCode::Backspace, KeyModifiers::NONE);
        assert_eq!(wide.text(), "ns übe ", "multi-byte characters stay whole");
    }
}

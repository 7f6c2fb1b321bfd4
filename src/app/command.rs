//! The `:` command line: `:ns NAME`, `:ns` (all namespaces), `:ctx NAME`,
//! `:q`, with Tab completion of commands, namespaces and contexts.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `None`: all namespaces.
    Namespace(Option<String>),
    Context(String),
    /// Start or stop recording the focused pane.
    Record,
    /// Name the focused pane (empty: back to pod/container).
    Rename(String),
    Quit,
}

const COMMANDS: [&str; 6] = ["ns", "ctx", "record", "rename", "q", "quit"];

pub fn parse(text: &str) -> Result<Command, String> {
    if let Some(name) = text.trim_start().strip_prefix("rename")
        && (name.is_empty() || name.starts_with(' '))
    {
        return Ok(Command::Rename(name.trim().to_string()));
    }
    let mut words = text.split_whitespace();
    let verb = words.next().unwrap_or_default();
    let arg = words.next().map(str::to_string);
    if words.next().is_some() {
        return Err(format!(
            "Too many words in :{text}; try :ns NAME, :ctx NAME or :q."
        ));
    }
    match (verb, arg) {
        ("q" | "quit", None) => Ok(Command::Quit),
        ("record", None) => Ok(Command::Record),
        ("ns" | "namespace", ns) => Ok(Command::Namespace(ns.filter(|n| n != "all" && n != "-A"))),
        ("ctx" | "context", Some(ctx)) => Ok(Command::Context(ctx)),
        ("ctx" | "context", None) => Err("Name a context: :ctx NAME (Tab completes).".to_string()),
        ("", _) => Err("Type a command: :ns NAME, :ns, :ctx NAME or :q.".to_string()),
        (other, _) => Err(format!(
            "Unknown command :{other}; try :ns NAME, :ctx NAME or :q."
        )),
    }
}

/// The text being typed after `:`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandLine {
    text: String,
}

impl CommandLine {
    pub fn text(&self) -> String {
        self.text.clone()
    }

    pub fn insert(&mut self, c: char) {
        self.text.push(c);
    }

    pub fn insert_str(&mut self, s: &str) {
        self.text.push_str(s);
    }

    /// Deletes the last character; false when the line was already empty
    /// (backspace on an empty line leaves command mode, as in vim).
    pub fn backspace(&mut self) -> bool {
        self.text.pop().is_some()
    }

    /// Completes the word being typed to the longest common prefix of the
    /// candidates (commands, then namespaces or contexts).
    pub fn complete(&mut self, namespaces: &[String], contexts: &[String]) {
        let ends_with_space = self.text.ends_with(' ');
        let words: Vec<&str> = self.text.split_whitespace().collect();
        let (prefix_words, partial) = match (words.len(), ends_with_space) {
            (0, _) => (Vec::new(), ""),
            (1, false) => (Vec::new(), words[0]),
            (_, true) => (words.clone(), ""),
            (_, false) => (words[..words.len() - 1].to_vec(), words[words.len() - 1]),
        };
        let candidates: Vec<&str> = match prefix_words.first().copied() {
            None => COMMANDS.to_vec(),
            Some("ns" | "namespace") => namespaces.iter().map(String::as_str).collect(),
            Some("ctx" | "context") => contexts.iter().map(String::as_str).collect(),
            Some(_) => return,
        };
        let matching: Vec<&str> = candidates
            .into_iter()
            .filter(|c| c.starts_with(partial))
            .collect();
        let Some(first) = matching.first() else {
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
        completed.push_str(&common);
        if matching.len() == 1 {
            completed.push(' ');
        }
        self.text = completed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn tab_completes_commands_namespaces_and_contexts() {
        let ns = vec![
            "payments".to_string(),
            "platform".to_string(),
            "shop".to_string(),
        ];
        let ctx = vec!["prod-eu".to_string(), "prod-us".to_string()];
        let mut line = CommandLine::default();
        line.insert_str("n");
        line.complete(&ns, &ctx);
        assert_eq!(line.text(), "ns ");
        line.insert_str("p");
        line.complete(&ns, &ctx);
        assert_eq!(line.text(), "ns p", "ambiguous: common prefix only");
        line.insert_str("a");
        line.complete(&ns, &ctx);
        assert_eq!(line.text(), "ns payments ");
        let mut c = CommandLine::default();
        c.insert_str("ctx pr");
        c.complete(&ns, &ctx);
        assert_eq!(c.text(), "ctx prod-");
    }
}

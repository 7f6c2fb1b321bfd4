//! Text from the cluster or a container, made safe to print: a message can
//! hold escape sequences (`ESC ] 52` writes the clipboard, `ESC [ 2J`
//! clears the screen), 8-bit C1 controls, bidi overrides that reorder what
//! follows them, and zero-width characters that hide text.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Combining marks kept on one character: more only stack (a "Zalgo"
/// text of 10 000 marks wrapped into hundreds of blank rows).
pub const MAX_MARKS: usize = 8;

/// `text` with every control character shown escaped (`\e`, `\n`, `\x9b`)
/// and bidi overrides and zero-width characters shown as `\u{202e}`:
/// what is printed is exactly what was sent, and nothing acts on the
/// terminal. Combining marks past [`MAX_MARKS`] on one character are
/// dropped.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if is_clean(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut marks = 0;
    for c in text.chars() {
        if is_mark(c) {
            marks += 1;
            if marks > MAX_MARKS {
                continue;
            }
        } else {
            marks = 0;
        }
        match c {
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_invisible_format(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`sanitize`] for an owned string, kept as is when it is clean.
pub fn printable(text: String) -> String {
    match sanitize(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(safe) => safe,
    }
}

/// Text that is safe to print: it can only be made by sanitizing, so a
/// sentence, a message or a session's end that holds one cannot carry a
/// byte that acts on the terminal.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Printable(String);

impl Printable {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl From<String> for Printable {
    fn from(text: String) -> Self {
        Printable(printable(text))
    }
}

impl From<&str> for Printable {
    fn from(text: &str) -> Self {
        Printable(sanitize(text).into_owned())
    }
}

impl From<&Cow<'_, str>> for Printable {
    fn from(text: &Cow<'_, str>) -> Self {
        Printable(sanitize(text).into_owned())
    }
}

impl From<&String> for Printable {
    fn from(text: &String) -> Self {
        Printable(sanitize(text).into_owned())
    }
}

impl Printable {
    /// Printable lines, one after the other (a table, a summary): the only
    /// line breaks are those between them.
    pub fn lines(lines: impl IntoIterator<Item = Printable>) -> Printable {
        let mut text = String::new();
        for (i, line) in lines.into_iter().enumerate() {
            if i > 0 {
                text.push('\n');
            }
            text.push_str(&line.0);
        }
        Printable(text)
    }

    /// Rows as aligned columns, three spaces apart, as kubectl prints a
    /// table: each cell sanitized first, so the columns line up as shown.
    pub fn table(rows: &[Vec<String>]) -> Printable {
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|row| row.iter().map(|cell| Printable::from(cell).0).collect())
            .collect();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|i| {
                rows.iter()
                    .filter_map(|r| r.get(i))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Printable::lines(rows.iter().map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect();
            Printable(cells.join("   ").trim_end().to_string())
        }))
    }

    /// `value` as pretty JSON whose strings hold nothing that acts on a
    /// terminal: serde_json escapes C0 controls, and C1 controls, bidi
    /// overrides and zero-width characters (raw UTF-8 there) become
    /// `\uXXXX` escapes, which a JSON reader decodes to the same text.
    pub fn json(value: &serde_json::Value) -> Printable {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        if !text.chars().any(needs_escape_in_json) {
            return Printable(text);
        }
        let mut out = String::with_capacity(text.len() + 16);
        for c in text.chars() {
            if needs_escape_in_json(c) {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            } else {
                out.push(c);
            }
        }
        Printable(out)
    }
}

/// What JSON text may carry raw that a terminal acts on or hides (C0 is
/// escaped by serde_json, and a pretty document's own line breaks stay).
fn needs_escape_in_json(c: char) -> bool {
    c != '\n' && needs_escape(c)
}

impl std::ops::Deref for Printable {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Printable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for Printable {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<String> for Printable {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl From<Printable> for String {
    fn from(text: Printable) -> String {
        text.0
    }
}

impl PartialEq<&str> for Printable {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// A character drawn on the one before it (a combining mark).
fn is_mark(c: char) -> bool {
    !c.is_control()
        && !is_invisible_format(c)
        && unicode_width::UnicodeWidthChar::width(c) == Some(0)
}

/// Nothing to escape and no pile of marks, in one pass (ASCII, most of
/// what a cluster sends, in a quicker one): every row field of every pod
/// goes through here.
fn is_clean(text: &str) -> bool {
    if text.is_ascii() {
        return !text.bytes().any(|b| b < 0x20 || b == 0x7f);
    }
    let mut marks = 0;
    text.chars().all(|c| {
        marks = if is_mark(c) { marks + 1 } else { 0 };
        !needs_escape(c) && marks <= MAX_MARKS
    })
}

fn needs_escape(c: char) -> bool {
    c.is_control() || is_invisible_format(c)
}

/// Bidi embeddings, overrides and isolates, and zero-width characters.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{061c}'
        | '\u{feff}')
}

/// `bytes` as text, or the line (from 1) where they stop being UTF-8 and
/// a sentence saying so: a file saved as Latin-1 is found where it is.
pub fn text_of(bytes: &[u8]) -> Result<&str, (usize, String)> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = good
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let column = good.len() - line_start + 1;
        (
            line,
            format!("byte {column} of the line is not UTF-8 (TOML files are UTF-8 text)"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{MAX_MARKS, Printable, needs_escape, sanitize};

    #[test]
    fn combining_marks_are_capped_per_character() {
        let zalgo = format!("e{}x", "\u{301}".repeat(10_000));
        let safe = sanitize(&zalgo);
        assert_eq!(safe.chars().count(), 2 + MAX_MARKS, "{safe}");
        assert!(safe.starts_with('e') && safe.ends_with('x'));
        // Accents as languages use them stay as they are.
        assert_eq!(
            sanitize("Ti\u{1ebf}ng Vi\u{1ec7}t e\u{301}\u{323}"),
            "Ti\u{1ebf}ng Vi\u{1ec7}t e\u{301}\u{323}"
        );
    }

    #[test]
    fn escape_sequences_are_shown_not_run() {
        let hostile = "denied\x1b]52;c;SGVsbG8=\x07\x1b]0;pwned\x07\x1b[2J";
        assert_eq!(
            sanitize(hostile),
            "denied\\e]52;c;SGVsbG8=\\x07\\e]0;pwned\\x07\\e[2J"
        );
    }

    #[test]
    fn c1_controls_and_del_are_escaped() {
        assert_eq!(sanitize("a\u{9b}2Jb\u{9d}c\x7f"), "a\\x9b2Jb\\x9dc\\x7f");
    }

    #[test]
    fn bidi_overrides_and_zero_width_characters_are_neutralised() {
        assert_eq!(
            sanitize("pod\u{202e}txt.exe\u{200b}\u{2066}"),
            "pod\\u{202e}txt.exe\\u{200b}\\u{2066}"
        );
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "pods \"redis-0\" is forbidden: naïve ✓ 日本";
        assert!(matches!(sanitize(text), std::borrow::Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn line_breaks_stay_on_one_line() {
        assert_eq!(sanitize("one\r\ntwo\tthree"), "one\\r\\ntwo\\tthree");
    }

    #[test]
    fn json_keeps_its_text_and_shows_nothing_that_acts_on_a_terminal() {
        let hostile = "a\u{9b}2Jb\u{202e}c\u{200b}d\x1b]52;c;x\x07\u{7f}é";
        let value = serde_json::json!({ "pod": hostile, "n": 1 });
        let printed = Printable::json(&value);
        assert!(
            !printed.chars().any(|c| c != '\n' && needs_escape(c)),
            "{printed}"
        );
        let back: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(back, value, "a JSON reader gets the same text");
        assert!(
            printed.contains("\\u009b") && printed.contains("\\u202e"),
            "{printed}"
        );
        assert_eq!(printed.lines().count(), 4, "pretty, one field a line");
    }

    #[test]
    fn lines_break_only_between_lines() {
        let text = Printable::lines(["a\nb".into(), Printable::from("c")]);
        assert_eq!(text.as_str(), "a\\nb\nc");
    }
}

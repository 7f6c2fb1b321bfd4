//! Lines of many pods on one terminal, each after its pod's name: coloured
//! (stern-style) where the stream is a terminal, `pod: line` where it is
//! not, so scripts can split them. A line is written whole, under the
//! stream's lock, so pods running at once never cut each other's lines.

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;

use crate::model::text::Printable;

/// Colours that read on dark and light backgrounds, in turn.
const PALETTE: [u8; 10] = [32, 33, 34, 35, 36, 92, 93, 94, 95, 96];

/// A line that never ends is cut here (a container can print without a
/// newline for ever; podbay's memory must not grow with it).
pub const LONGEST_LINE: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => io::stdout().is_terminal(),
            Stream::Stderr => io::stderr().is_terminal(),
        }
    }

    fn write_line(self, prefix: &[u8], line: &[u8]) {
        fn whole(mut to: impl Write, prefix: &[u8], line: &[u8]) {
            let _ = to.write_all(prefix);
            let _ = to.write_all(line);
            let _ = to.write_all(b"\n");
            let _ = to.flush();
        }
        match self {
            Stream::Stdout => whole(io::stdout().lock(), prefix, line),
            Stream::Stderr => whole(io::stderr().lock(), prefix, line),
        }
    }
}

/// How one pod's lines begin, on stdout and on stderr.
#[derive(Debug, Clone)]
pub struct Prefix {
    stdout: Arc<[u8]>,
    stderr: Arc<[u8]>,
}

impl Prefix {
    /// The prefix of the `index`-th pod, named `name`, padded to `width`
    /// columns on a terminal (where the eye reads columns; scripts get
    /// `name: ` exactly).
    pub fn new(name: &Printable, index: usize, width: usize) -> Prefix {
        let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let render = |stream: Stream| -> Arc<[u8]> {
            Self::render(name, index, width, stream.is_terminal(), colour).into()
        };
        Prefix {
            stdout: render(Stream::Stdout),
            stderr: render(Stream::Stderr),
        }
    }

    fn render(name: &str, index: usize, width: usize, terminal: bool, colour: bool) -> Vec<u8> {
        if !terminal {
            return format!("{name}: ").into_bytes();
        }
        let pad = width.saturating_sub(name.chars().count());
        let code = PALETTE[index % PALETTE.len()];
        if colour {
            format!("\x1b[{code}m{name}\x1b[0m{:pad$} │ ", "").into_bytes()
        } else {
            format!("{name}{:pad$} │ ", "").into_bytes()
        }
    }

    fn of(&self, stream: Stream) -> &[u8] {
        match stream {
            Stream::Stdout => &self.stdout,
            Stream::Stderr => &self.stderr,
        }
    }

    /// podbay's own line about this pod.
    pub fn line_to_stderr(&self, line: &Printable) {
        Stream::Stderr.write_line(&self.stderr, line.as_bytes());
    }

    /// A writer that puts this prefix before each line written to it.
    pub fn lines(&self, stream: Stream) -> PrefixedLines {
        PrefixedLines {
            prefix: self.clone(),
            stream,
            partial: Vec::new(),
        }
    }
}

/// Writes each complete line after its prefix; an unfinished line waits
/// for its end (or for [`LONGEST_LINE`], or for the writer to be dropped).
pub struct PrefixedLines {
    prefix: Prefix,
    stream: Stream,
    partial: Vec<u8>,
}

impl PrefixedLines {
    fn emit(&self, line: &[u8]) {
        self.stream.write_line(self.prefix.of(self.stream), line);
    }
}

impl Write for PrefixedLines {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut partial = std::mem::take(&mut self.partial);
        split_lines(&mut partial, buf, |line| self.emit(line));
        self.partial = partial;
        Ok(buf.len())
    }

    /// Complete lines are written as they come; an unfinished one is not a
    /// line yet.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for PrefixedLines {
    fn drop(&mut self) {
        if !self.partial.is_empty() {
            self.emit(&self.partial);
        }
    }
}

/// Appends `buf` to `partial` and hands each complete line (without its
/// newline) to `emit`; of a line longer than [`LONGEST_LINE`] that goes
/// on, its first [`LONGEST_LINE`] bytes (less, to end on a whole UTF-8
/// character). What is left is the start of the next line.
fn split_lines(partial: &mut Vec<u8>, buf: &[u8], mut emit: impl FnMut(&[u8])) {
    partial.extend_from_slice(buf);
    let mut start = 0;
    while let Some(at) = partial[start..].iter().position(|&b| b == b'\n') {
        let end = start + at;
        emit(&partial[start..end]);
        start = end + 1;
    }
    while partial.len() - start > LONGEST_LINE {
        let mut cut = start + LONGEST_LINE;
        // Back to the start of a character (continuation bytes are 10xxxxxx);
        // bytes that are not UTF-8 at all are cut where they are.
        while cut > start + LONGEST_LINE - 4 && (partial[cut] & 0xC0) == 0x80 {
            cut -= 1;
        }
        if (partial[cut] & 0xC0) == 0x80 {
            cut = start + LONGEST_LINE;
        }
        emit(&partial[start..cut]);
        start = cut;
    }
    partial.drain(..start);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_whole_however_the_bytes_arrive() {
        let mut partial = Vec::new();
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for chunk in [&b"one\ntw"[..], b"o", b"\n\nthr", b"ee"] {
            split_lines(&mut partial, chunk, |l| lines.push(l.to_vec()));
        }
        assert_eq!(lines, [&b"one"[..], b"two", b""]);
        assert_eq!(partial, b"three", "the unfinished line waits");
    }

    #[test]
    fn a_line_that_never_ends_is_cut_not_kept() {
        let mut partial = Vec::new();
        let mut lengths = Vec::new();
        let endless = vec![b'x'; LONGEST_LINE * 2 + 10];
        split_lines(&mut partial, &endless, |l| lengths.push(l.len()));
        assert_eq!(lengths, [LONGEST_LINE, LONGEST_LINE]);
        assert_eq!(partial.len(), 10);
    }

    #[test]
    fn a_line_of_exactly_the_limit_waits_for_its_newline() {
        let mut partial = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        split_lines(&mut partial, &vec![b'x'; LONGEST_LINE], |l| {
            lines.push(l.len())
        });
        assert!(lines.is_empty(), "not cut: it may still end");
        split_lines(&mut partial, b"\n", |l| lines.push(l.len()));
        assert_eq!(lines, [LONGEST_LINE], "one line, no empty one after it");
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let mut partial = Vec::new();
        let mut cuts: Vec<Vec<u8>> = Vec::new();
        // 'é' is two bytes: the limit falls inside one of them.
        let mut text = vec![b'x'; LONGEST_LINE - 1];
        text.extend("éé".as_bytes());
        split_lines(&mut partial, &text, |l| cuts.push(l.to_vec()));
        assert_eq!(cuts.len(), 1);
        assert!(std::str::from_utf8(&cuts[0]).is_ok(), "whole characters");
        assert_eq!(cuts[0].len(), LONGEST_LINE - 1);
        assert_eq!(partial, "éé".as_bytes());
    }

    #[test]
    fn scripts_get_name_colon_and_terminals_a_coloured_padded_column() {
        assert_eq!(Prefix::render("web-1", 0, 12, false, true), b"web-1: ");
        assert_eq!(
            String::from_utf8(Prefix::render("web-1", 1, 8, true, true)).unwrap(),
            "\x1b[33mweb-1\x1b[0m    │ "
        );
        assert_eq!(
            String::from_utf8(Prefix::render("web-1", 1, 8, true, false)).unwrap(),
            "web-1    │ ",
            "NO_COLOR keeps the column, without colour"
        );
        assert_ne!(
            Prefix::render("a", 0, 1, true, true),
            Prefix::render("a", 1, 1, true, true),
            "neighbours differ"
        );
    }
}

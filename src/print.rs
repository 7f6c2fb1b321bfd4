//! The one way podbay's command line puts its own text on stdout and
//! stderr: only [`Printable`] text, which is sanitized when it is made, so
//! a name, a message or a reason from a server, a container or a local file
//! cannot reach the user's terminal raw (an OSC 52 writing the clipboard, a
//! `CSI 2J`, a bidi override). What a container itself prints (the output
//! of `podbay debug`, `podbay cp -`) is its own data and goes as it is.

use std::io::Write as _;

use crate::model::text::Printable;

/// `podbay: LINE` on stderr: what podbay says of its work.
pub fn say(line: &Printable) {
    to_stderr(&format!("podbay: {line}\n"));
}

/// `LINE` on stderr, as it is (a server's warning, a summary table).
pub fn stderr(text: &Printable) {
    to_stderr(&format!("{text}\n"));
}

/// `TEXT` on stdout (a name, a JSON document, a table).
pub fn stdout(text: &Printable) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// A line that redraws itself in place on a terminal's stderr (progress,
/// a wait): [`clear_status`] takes it away.
pub fn status(line: &Printable) {
    to_stderr(&format!("\r\x1b[K{line}"));
}

pub fn clear_status() {
    to_stderr("\r\x1b[K");
}

fn to_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

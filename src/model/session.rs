//! A terminal's session on a container, as the app sees it: what it runs
//! and how it ended. `cluster::session` runs it.

use super::text::Printable;

/// What a terminal runs on its container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKind {
    Attach,
    Exec(Vec<String>),
}

/// The command podbay runs for "open a shell": the best shell the image has.
pub fn shell_command() -> Vec<String> {
    [
        "sh",
        "-c",
        "command -v bash >/dev/null 2>&1 && exec bash || exec sh",
    ]
    .map(String::from)
    .to_vec()
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEnd {
    /// The remote process's exit code when the server reported one.
    pub exit_code: Option<i32>,
    /// One sentence: "exited with code 3", "disconnected: …".
    pub reason: Printable,
    /// True when the stream was cut rather than ended by the process.
    pub disconnected: bool,
}

//! A terminal's session on a container, as the app sees it: what it runs
//! and how it ended. `cluster::session` runs it.

use super::text::Printable;

/// The channels of the Kubernetes remote-command protocol
/// (`v4.channel.k8s.io`, `v5.channel.k8s.io`): each WebSocket frame starts
/// with one. podbay's sessions and pipes speak it; the simulator serves it.
pub mod channel {
    pub const STDIN: u8 = 0;
    pub const STDOUT: u8 = 1;
    pub const STDERR: u8 = 2;
    /// The `Status` the command ended with.
    pub const ERROR: u8 = 3;
    pub const RESIZE: u8 = 4;
    /// v5 only: `[255, channel]` closes that channel.
    pub const CLOSE: u8 = 255;
}

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

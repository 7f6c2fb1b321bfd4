//! Terminal emulation for panes; knows nothing of Kubernetes: remote output
//! into cells (`pane`), user input into xterm bytes (`keys`, `mouse`), a
//! split tree of panes (`layout`) and asciicast v2 recording (`record`).

pub mod keys;
pub(crate) mod layout;
pub(crate) mod mouse;
pub mod pane;
pub(crate) mod record;

pub use crate::pty::Size;

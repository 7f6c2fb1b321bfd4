//! A full-screen terminal on one container: a debug container coming up,
//! an attach, an exec'd shell, or a log.

use jiff::Timestamp;

use super::PodView;
use super::launcher::Launcher;
use crate::model::PodKey;
use crate::term::pane::Pane;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalKind {
    /// A debug container podbay just launched.
    Debug,
    Attach,
    Shell,
    Log,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalState {
    /// The patch is on its way.
    Launching,
    /// The container exists and is waiting (reason, message).
    Waiting {
        reason: String,
        message: String,
    },
    Attaching,
    Attached,
    /// The stream was cut; the container's process is still there.
    Disconnected(String),
    /// The session is over: one sentence.
    Ended(String),
}

pub struct TerminalView {
    pub id: u64,
    pub pod: PodKey,
    pub container: String,
    pub kind: TerminalKind,
    pub state: TerminalState,
    pub since: Timestamp,
    pub pane: Pane,
    /// The pod view to return to (its watch keeps it live meanwhile).
    pub back: Box<PodView>,
    /// The form that launched it, to reopen with its values on failure.
    pub form: Option<Launcher>,
    /// Ctrl-b was pressed: the next key is a podbay command.
    pub prefix: bool,
}

impl TerminalView {
    pub fn is_live(&self) -> bool {
        self.state == TerminalState::Attached
    }
}

//! Terminal emulation for panes; knows nothing of Kubernetes: remote output
//! into cells (`grid`), user input into xterm bytes (`keys`, `mouse`), the
//! line discipline of a container without a terminal (`line`), a log read
//! as text (`log_text`) and its lines cut at a width (`line_cut`), the
//! modes a program leaves on the user's terminal (`modes`), a split tree of
//! panes (`layout`), asciicast v2 recording (`record`), and the output read
//! ahead of a pane (`backlog`) with the lines of a flood no one can see
//! (`unseen`).

pub mod backlog;
pub mod grid;
pub mod keys;
pub(crate) mod layout;
pub mod line;
pub(crate) mod line_cut;
pub mod log_text;
pub mod modes;
pub(crate) mod mouse;
pub(crate) mod record;
pub mod unseen;

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub cols: u16,
    pub rows: u16,
}

impl Size {
    pub const DEFAULT: Size = Size { cols: 80, rows: 24 };

    pub fn new(cols: u16, rows: u16) -> Self {
        Size { cols, rows }
    }
}

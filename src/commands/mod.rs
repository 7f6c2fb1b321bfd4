//! Subcommands that run without the TUI.

pub mod cp;
pub mod debug;
pub mod debug_pod;
pub mod debuggers;
pub mod fleet;
pub mod man;
pub mod port_forward;
pub mod prefix;

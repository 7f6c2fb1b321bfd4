//! Subcommands that run without the TUI.

pub mod debug;
pub mod fleet;
pub mod man;
pub mod prefix;

//! Subcommands that run without the TUI.

pub mod debug;
pub mod man;

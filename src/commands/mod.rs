//! Subcommands that run without the TUI.

pub mod debug;

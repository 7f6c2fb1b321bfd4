//! The engines: one per action, below the command line and the TUI, so
//! both reach an action the same way. An engine talks to the cluster
//! through `cluster`, decides with `model`, writes local files through
//! `local`, and returns a typed outcome; printing and exit codes are the
//! front ends' (`commands`), panes and messages the TUI's.

pub mod capture;
pub mod debuggers;
pub mod helper;
pub mod outcome;
pub mod transfer;

//! What an action ends with when it fails: one sentence for the user and
//! the exit code the command line maps it to (the TUI shows the sentence).

use crate::cluster::errors;
use crate::model::text::Printable;

/// Exit codes of podbay's own failures (the container's exit code is passed
/// through otherwise). Documented in docs/debug.md.
pub mod exit {
    /// The attach ended with the server's error and no exit code (as
    /// kubectl, which exits 1 there).
    pub const STREAM_FAILED: i32 = 1;
    /// A command line that cannot be right (as clap's own errors).
    pub const USAGE: i32 = 2;
    /// The container's exit code, as the server reported it, is outside
    /// the 0–255 an exit status holds.
    pub const OUT_OF_RANGE: i32 = 125;
    pub const INVALID: i32 = 65;
    pub const NOT_FOUND: i32 = 66;
    pub const UNSUPPORTED: i32 = 69;
    pub const NOT_RUNNING: i32 = 70;
    pub const IMAGE: i32 = 71;
    pub const START_FAILED: i32 = 72;
    /// EX_CANTCREAT: a local file cannot be written.
    pub const CANT_CREATE: i32 = 73;
    pub const UNREACHABLE: i32 = 74;
    /// EX_TEMPFAIL: the stream was cut while the container runs on.
    pub const CUT: i32 = 75;
    pub const CONFIG: i32 = 78;
    pub const FORBIDDEN: i32 = 77;
    pub const TIMEOUT: i32 = 124;
}

/// A failure: one sentence for stderr and its exit code.
#[derive(Debug, Clone)]
pub struct Failure {
    pub code: i32,
    pub sentence: Printable,
}

pub fn fail(code: i32, sentence: impl Into<Printable>) -> Failure {
    Failure {
        code,
        sentence: sentence.into(),
    }
}

/// A request's error as one sentence and the exit code of its kind.
pub fn classify(error: &kube::Error) -> Failure {
    let crate::model::problem::Problem {
        sentence, denied, ..
    } = errors::describe(error);
    let code = match error {
        _ if denied.is_some() => exit::FORBIDDEN,
        _ if errors::credentials_problem(error).is_some() => exit::CONFIG,
        kube::Error::Api(status) if status.code == 401 => exit::FORBIDDEN,
        kube::Error::Api(status) if status.code == 403 => exit::FORBIDDEN,
        kube::Error::Api(_) => exit::INVALID,
        _ => exit::UNREACHABLE,
    };
    fail(code, sentence)
}

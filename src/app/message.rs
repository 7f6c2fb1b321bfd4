//! The status line's sentences and how serious each is.

use super::terminal::TerminalKind;
use crate::model::text::Printable;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub level: Severity,
    pub text: Printable,
}

/// "3 sessions are live (2 debug, 1 shell)" from the live terminals' kinds.
pub(super) fn live_sentence(kinds: &[TerminalKind]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for kind in kinds {
        match counts.iter_mut().find(|(label, _)| *label == kind.label()) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind.label(), 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(l, n)| format!("{n} {l}")).collect();
    match kinds.len() {
        1 => format!("1 session is live ({})", parts.join(", ")),
        n => format!("{n} sessions are live ({})", parts.join(", ")),
    }
}

pub(crate) fn info(text: impl Into<Printable>) -> Message {
    Message {
        level: Severity::Info,
        text: text.into(),
    }
}

pub fn warning(text: impl Into<Printable>) -> Message {
    Message {
        level: Severity::Warning,
        text: text.into(),
    }
}

pub(crate) fn error(text: impl Into<Printable>) -> Message {
    Message {
        level: Severity::Error,
        text: text.into(),
    }
}

//! A container's state as the API reports it, its strings made printable.

use jiff::Timestamp;

use super::text::printable;

#[derive(Debug, Clone, PartialEq)]
pub enum ContainerState {
    /// No status reported yet.
    Unknown,
    Waiting {
        reason: String,
        message: String,
    },
    Running {
        since: Option<Timestamp>,
    },
    Terminated {
        exit_code: i32,
        reason: String,
        message: String,
        finished: Option<Timestamp>,
    },
}

impl ContainerState {
    pub fn is_running(&self) -> bool {
        matches!(self, ContainerState::Running { .. })
    }

    /// Terminated: its process is gone and, a debug container, never runs again.
    pub fn has_ended(&self) -> bool {
        matches!(self, ContainerState::Terminated { .. })
    }

    /// "Running", "Waiting ErrImagePull", "Terminated Completed (exit 0)".
    pub fn summary(&self) -> String {
        match self {
            ContainerState::Unknown => "Unknown".into(),
            ContainerState::Waiting { reason, .. } => format!("Waiting {reason}"),
            ContainerState::Running { .. } => "Running".into(),
            ContainerState::Terminated {
                exit_code, reason, ..
            } => format!("Terminated {reason} (exit {exit_code})"),
        }
    }
}

/// The state the API reports, as podbay reads it.
pub(crate) fn state_of(s: &k8s_openapi::api::core::v1::ContainerState) -> ContainerState {
    if let Some(r) = &s.running {
        ContainerState::Running {
            since: r.started_at.as_ref().map(|t| t.0),
        }
    } else if let Some(t) = &s.terminated {
        ContainerState::Terminated {
            exit_code: t.exit_code,
            reason: printable(t.reason.clone().unwrap_or_default()),
            message: printable(t.message.clone().unwrap_or_default()),
            finished: t.finished_at.as_ref().map(|t| t.0),
        }
    } else if let Some(w) = &s.waiting {
        ContainerState::Waiting {
            reason: printable(w.reason.clone().unwrap_or_default()),
            message: printable(w.message.clone().unwrap_or_default()),
        }
    } else {
        ContainerState::Unknown
    }
}

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

/// The exit code of the run a container status reports as ended: its
/// state's, while terminated; else, for a container its pod restarted
/// (restartPolicy Always or OnFailure) and that runs or waits again, the
/// last state's: the run started is over, another took its place.
pub fn ended_run_exit_code(status: &k8s_openapi::api::core::v1::ContainerStatus) -> Option<i32> {
    let code = |state: Option<&k8s_openapi::api::core::v1::ContainerState>| {
        Some(state?.terminated.as_ref()?.exit_code)
    };
    code(status.state.as_ref())
        .or_else(|| code(status.last_state.as_ref()).filter(|_| status.restart_count > 0))
}

#[cfg(test)]
mod ended_run_tests {
    use super::ended_run_exit_code;

    fn status(json: serde_json::Value) -> k8s_openapi::api::core::v1::ContainerStatus {
        let mut whole = serde_json::json!({"name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 0});
        if let (Some(whole), Some(given)) = (whole.as_object_mut(), json.as_object()) {
            whole.extend(given.clone());
        }
        serde_json::from_value(whole).unwrap()
    }

    #[test]
    fn a_restarted_container_s_ended_run_is_its_last_state() {
        let terminated = |code| serde_json::json!({"terminated": {"exitCode": code}});
        assert_eq!(
            ended_run_exit_code(&status(serde_json::json!({"state": terminated(4)}))),
            Some(4)
        );
        let restarted = status(serde_json::json!({
            "restartCount": 1,
            "state": {"running": {}},
            "lastState": terminated(4),
        }));
        assert_eq!(ended_run_exit_code(&restarted), Some(4));
        let backing_off = status(serde_json::json!({
            "restartCount": 2,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": terminated(4),
        }));
        assert_eq!(ended_run_exit_code(&backing_off), Some(4));
        let running = status(serde_json::json!({"state": {"running": {}}}));
        assert_eq!(ended_run_exit_code(&running), None, "still the first run");
        let stale =
            status(serde_json::json!({"state": {"running": {}}, "lastState": terminated(1)}));
        assert_eq!(
            ended_run_exit_code(&stale),
            None,
            "no restart: not a run of ours"
        );
    }
}

//! How terminals follow what happens to them: their session opened, wrote
//! or ended, their pod or its events changed, their debug container was
//! refused or warned about, their recording started or failed.

use super::{LaunchedBy, TerminalId, TerminalKind, TerminalState};
use crate::app::{App, Effect, Mode, View, error, info, warning};
use crate::model::feed::Feed;
use crate::model::pod_security::Policy;
use crate::model::session::SessionEnd;
use crate::model::text::Printable;
use crate::model::{ContainerState, EventRow, PodDetail};

impl App {
    pub(crate) fn on_session_attached(&mut self, id: TerminalId) -> Vec<Effect> {
        let now = self.now;
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return vec![];
        };
        t.state = TerminalState::Attached;
        t.last_traffic = now;
        // The stream opened at the size of the moment; say the current one.
        let mut effects = vec![Effect::ResizeSession {
            id,
            size: t.grid.size(),
        }];
        if !t.typed_ahead.is_empty() {
            let bytes = std::mem::take(&mut t.typed_ahead);
            effects.push(Effect::SendInput {
                id,
                bytes: bytes.into(),
            });
        }
        effects
    }

    pub(crate) fn on_session_output(&mut self, id: TerminalId, bytes: &[u8]) {
        let now = self.now;
        if let Some(t) = self.workspace.terminals.get_mut(&id) {
            t.grid.feed(bytes);
            t.last_traffic = now;
        }
    }

    pub(crate) fn on_session_ended(&mut self, id: TerminalId, end: SessionEnd) -> Vec<Effect> {
        // A pane's border may cut it: the messages view has it whole.
        if let Some(t) = self.workspace.terminals.get_mut(&id) {
            // Typed ahead of an attach that never came up: nothing reads it.
            t.typed_ahead.clear();
            let said = info(format!("{}: {}", t.label(), end.reason));
            self.remember_said(said);
        }
        let pods_of = self
            .workspace
            .terminals
            .get(&id)
            .and_then(|t| t.pods_of.clone());
        if let Some((from, narrow)) = pods_of {
            // Its pods' streams all ended: cut while one still runs (`r`
            // picks up after the last lines), else over until one starts.
            // The pod list is the browser's cluster's: a pane of another
            // context cannot tell whether its pods run.
            let here =
                self.workspace.terminals.get(&id).map(|t| &t.key.cluster) == Some(&self.cluster);
            let running = here.then(|| self.pods_logs_running(&narrow));
            if let Some(t) = self.workspace.terminals.get_mut(&id) {
                t.state = match (running, end.disconnected) {
                    (Some(true) | None, true) => TerminalState::Disconnected(end.reason),
                    (Some(true) | None, false) => TerminalState::Ended(end.reason),
                    (Some(false), _) => TerminalState::Ended(
                        format!("no pod of {from} is running; one that starts joins this pane")
                            .into(),
                    ),
                };
            }
            return vec![];
        }
        let now = self.now;
        let idle_limit = self.options.reattach_when_idle;
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return vec![];
        };
        if t.pod.gone {
            t.state = TerminalState::Ended(format!("the pod {} was deleted", t.key.pod).into());
            return vec![];
        }
        if end.disconnected && matches!(t.kind, TerminalKind::Log | TerminalKind::AllLogs) {
            // A followed log ends when its container stops (all of them,
            // for an all-containers pane); otherwise the stream was cut and
            // `r` picks up after the last line.
            let running = |state: Option<&ContainerState>| {
                matches!(
                    state,
                    Some(ContainerState::Running { .. } | ContainerState::Unknown) | None
                )
            };
            let stopped = if t.kind == TerminalKind::AllLogs {
                !t.pod
                    .detail
                    .as_ref()
                    .is_some_and(|d| d.containers.iter().any(|c| running(Some(&c.state))))
            } else {
                !running(t.container_state())
            };
            t.state = if stopped {
                TerminalState::Ended(
                    format!(
                        "end of {}'s log: the container is not running",
                        t.key.container
                    )
                    .into(),
                )
            } else {
                // The pane adds "r to reattach": r asks again after the last line.
                TerminalState::Disconnected(end.reason)
            };
            return vec![];
        }
        if end.disconnected && t.kind.resumable() {
            let idle = idle_limit.is_some_and(|limit| {
                now.duration_since(t.last_traffic).as_secs() >= limit.as_secs() as i64
            });
            let still_running =
                !matches!(t.container_state(), Some(ContainerState::Terminated { .. }));
            // An idle stream cut by a load balancer or the kubelet lost nothing:
            // the process is still there. Re-attach once, and say so.
            if idle && still_running && t.is_live() && !t.reattached_after_idle {
                t.reattached_after_idle = true;
                t.notice = Some("The idle stream was cut; re-attached automatically.".into());
                return self.reattach(id);
            }
            t.state = TerminalState::Disconnected(end.reason);
            return vec![];
        }
        if t.kind == TerminalKind::Shell
            && let Some(cause) = missing_program(&end.reason)
        {
            let sentence = format!(
                "{} has no shell ({cause}): a debug container that targets it sees its processes and files.",
                t.key.container
            );
            return self.offer_debug_instead(id, sentence);
        }
        t.state = TerminalState::Ended(end.reason);
        self.after_terminal_change(id)
    }

    /// `s` found no shell (a distroless image): the pane goes, and the
    /// launcher comes aimed at that container, saying why.
    fn offer_debug_instead(&mut self, id: TerminalId, sentence: String) -> Vec<Effect> {
        let Some(key) = self.workspace.terminals.get(&id).map(|t| t.key.clone()) else {
            return vec![];
        };
        self.workspace.close_terminal(id);
        let mut effects = vec![Effect::CloseSession { id }];
        effects.extend(self.show_browser());
        let showing_its_pod = matches!(&self.view,
            View::Pod(view) if view.key == key.pod && key.cluster == view.cluster);
        if !(showing_its_pod && self.show_launcher(Some(&key.container), Some(sentence.clone()))) {
            self.message = Some(warning(sentence));
        }
        effects
    }

    pub(crate) fn on_terminal_detail(
        &mut self,
        id: TerminalId,
        feed: Feed<PodDetail>,
    ) -> Vec<Effect> {
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return vec![];
        };
        t.pod.apply_detail(feed);
        self.after_terminal_change(id)
    }

    pub(crate) fn on_terminal_events(&mut self, id: TerminalId, feed: Feed<EventRow>) {
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return;
        };
        t.pod.apply_events(feed);
    }

    /// A terminal follows its container through the pod watch: attach once
    /// a launched container runs, show its log if it already ended, show
    /// why it waits, and read exit codes (an attach always ends "Success").
    fn after_terminal_change(&mut self, id: TerminalId) -> Vec<Effect> {
        if let Some(effects) = self.settle_restored(id) {
            return effects;
        }
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return vec![];
        };
        // A deleted pod is the reason whatever else the stream said.
        if t.pod.gone && !t.is_live() {
            t.state = TerminalState::Ended(format!("the pod {} was deleted", t.key.pod).into());
            return vec![];
        }
        let state = t.container_state().cloned();
        if let TerminalState::Ended(_) = t.state {
            if t.kind.resumable()
                && let Some(ContainerState::Terminated {
                    exit_code,
                    reason,
                    message,
                    ..
                }) = state
            {
                t.state = TerminalState::Ended(
                    format!(
                        "the container exited with code {exit_code} ({reason}){}",
                        colon_message(&message)
                    )
                    .into(),
                );
            }
            return vec![];
        }
        let waiting_for_start = matches!(
            t.state,
            TerminalState::Launching | TerminalState::Waiting { .. }
        );
        // (An attach waits only when restored onto a container that waits.)
        if !t.kind.resumable() || !waiting_for_start {
            return vec![];
        }
        match state {
            Some(ContainerState::Running { .. }) => {
                let mut effects = vec![t.attach(true)];
                // Only images that were pulled and ran go first in the
                // launcher's recent list; a failed pull is not a favourite.
                if let Some(LaunchedBy::Form(form)) = &t.launched_by {
                    let image = form.image.trim().to_string();
                    self.debug_images.retain(|i| *i != image);
                    self.debug_images.insert(0, image.clone());
                    effects.push(Effect::RememberImage(image));
                }
                effects
            }
            Some(ContainerState::Terminated {
                exit_code,
                reason,
                message,
                ..
            }) => {
                t.state = TerminalState::Ended(
                    format!(
                        "exited with code {exit_code} ({reason}){}",
                        colon_message(&message)
                    )
                    .into(),
                );
                // Read once: the container is gone, there is nothing to follow.
                vec![t.log_effect(false)]
            }
            Some(ContainerState::Waiting { reason, message }) => {
                t.state = TerminalState::Waiting { reason, message };
                vec![]
            }
            Some(ContainerState::Unknown) | None => vec![],
        }
    }

    /// The launch was refused: the pane goes, the form comes back with its
    /// values and the reason.
    pub(crate) fn on_launch_failed(
        &mut self,
        id: TerminalId,
        sentence: String,
        refused_by: Option<Policy>,
    ) -> Vec<Effect> {
        if let Some(t) = self
            .workspace
            .terminals
            .get_mut(&id)
            .filter(|t| t.launched_by == Some(LaunchedBy::Fleet))
        {
            t.state = TerminalState::Ended("not launched".into());
            t.say_in_pane("not launched", &sentence);
            self.message = Some(error(format!("{}: {sentence}", t.key.pod)));
            for pane in self.workspace.panes.values_mut() {
                if pane.terminal == id {
                    pane.marked = false;
                }
            }
            // Typing goes on to the others: the focus moves to one of them.
            let focused_here = self.workspace.focused_pane().map(|p| p.terminal) == Some(id);
            if focused_here
                && let Some(next) = self
                    .workspace
                    .panes
                    .iter()
                    .find(|(_, p)| p.marked)
                    .map(|(pane, _)| *pane)
            {
                self.workspace.focused = Some(next);
            }
            return vec![Effect::CloseSession { id }];
        }
        let form = self
            .workspace
            .terminals
            .get_mut(&id)
            .and_then(|t| match t.launched_by.take() {
                Some(LaunchedBy::Form(form)) => Some(*form),
                _ => None,
            });
        self.workspace.close_terminal(id);
        let mut effects = vec![Effect::CloseSession { id }];
        effects.extend(self.show_browser());
        match (form, &self.view) {
            (Some(mut form), View::Pod(view)) => {
                // A Pod Security refusal names the level: the form comes
                // back on a profile that passes it.
                if let (Some(policy), Some(detail)) = (refused_by, &view.pod.detail) {
                    form.profile_chosen = false;
                    form.apply_policy(Some(policy), detail);
                }
                form.error = Some(sentence);
                self.mode = Mode::Launcher(Box::new(form));
            }
            _ => self.message = Some(error(sentence)),
        }
        effects
    }

    /// Admission let the debug container in with a warning: the pane and
    /// the status line say it, as sent.
    pub(crate) fn on_launch_warned(&mut self, id: TerminalId, warnings: &[Printable]) {
        let text = warnings
            .iter()
            .map(|w| w.as_str())
            .collect::<Vec<_>>()
            .join(" · ");
        if let Some(t) = self.workspace.terminals.get_mut(&id) {
            t.notice = Some(format!("⚠ {text}"));
        }
        self.message = Some(warning(format!("The cluster warned: {text}")));
    }

    /// The pod view's namespace labels arrived: an open launcher adopts them.
    pub(crate) fn on_pod_security(&mut self, policy: Option<Policy>) {
        let View::Pod(view) = &mut self.view else {
            return;
        };
        view.policy = policy.clone();
        if let (Mode::Launcher(form), Some(detail)) = (&mut self.mode, &view.pod.detail) {
            form.apply_policy(policy, detail);
        }
    }

    pub(crate) fn on_recording(
        &mut self,
        id: TerminalId,
        outcome: Result<Option<std::path::PathBuf>, String>,
    ) {
        let Some(t) = self.workspace.terminals.get_mut(&id) else {
            return;
        };
        match outcome {
            Ok(Some(path)) => {
                self.message = Some(info(format!(
                    "Recording {} to {}.",
                    t.label(),
                    path.display()
                )));
                t.recording = Some(path);
            }
            Ok(None) => {
                if let Some(path) = t.recording.take() {
                    self.message = Some(info(format!("Recording saved: {}.", path.display())));
                }
            }
            Err(sentence) => {
                t.recording = None;
                self.message = Some(warning(sentence));
            }
        }
    }
}

/// ": the runtime's message" (`exec: "nosuchcmd": executable file not
/// found in $PATH`), or nothing when it gave none.
fn colon_message(message: &str) -> String {
    let message = message.trim().trim_end_matches('.');
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// The runtime's "no such program" cause in a failed exec's sentence:
/// `exec: "sh": executable file not found in $PATH`.
fn missing_program(reason: &str) -> Option<&str> {
    const NOT_FOUND: &str = "executable file not found in $PATH";
    let end = reason.find(NOT_FOUND)? + NOT_FOUND.len();
    let start = reason[..end].rfind("exec: \"").unwrap_or(0);
    Some(&reason[start..end])
}

#[cfg(test)]
mod no_shell_tests {
    use super::missing_program;

    #[test]
    fn the_runtimes_cause_is_found_in_the_kubelets_sentence() {
        let reason = "failed: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec \"ab12\": OCI runtime exec failed: exec failed: unable to start container process: exec: \"sh\": executable file not found in $PATH: unknown";
        assert_eq!(
            missing_program(reason),
            Some("exec: \"sh\": executable file not found in $PATH")
        );
        assert_eq!(missing_program("exited with code 127"), None);
    }
}

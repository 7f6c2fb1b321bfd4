//! A pods' log pane (`l` on a workload or a Service): every container's
//! log of its pods in one pane, merged by time, each line after `pod
//! container`, as stern shows them. It follows the pod list, not one pod:
//! a pod that starts later joins it (its streams start again, each after
//! its last line), one that goes ends its own streams, and the pane ends
//! when none of its pods runs.

use super::message::{info, warning};
use super::panes::Words;
use super::pods::{Narrow, PodTable};
use super::terminal::{TerminalKind, TerminalState};
use super::{App, Effect};
use crate::model::{PodKey, PodRow, TerminalKey};

/// The most pods one pane follows: each of their containers is a log
/// stream of its own on the API server (stern stops at 50 streams).
const MOST_PODS: usize = 20;

impl App {
    /// `l` in a workload or Service view: a pane on the logs of the pods
    /// `narrow` picks (`from` names whose: `deploy/web`, `svc/web +1`).
    pub(super) fn open_pods_logs(&mut self, from: String, narrow: Narrow) -> Vec<Effect> {
        let pods = started(&self.pods, &narrow);
        if pods.is_empty() {
            self.message = Some(info(format!(
                "No pod of {from} has started in the pod list: no log to follow yet."
            )));
            return vec![];
        }
        if pods.len() > MOST_PODS {
            self.message = Some(warning(format!(
                "{from} has {} pods running, and one pane follows at most {MOST_PODS} (each container is a stream of its own): enter lists them, and L in a pod's view follows one.",
                pods.len()
            )));
            return vec![];
        }
        // One pane streams from one cluster.
        let Some(cluster) = narrow
            .one_context()
            .and_then(|tag| self.cluster_of_tag(tag))
        else {
            self.message = Some(warning(format!(
                "{from} is on several clusters, and one pane follows the logs of one: mark those of one cluster."
            )));
            return vec![];
        };
        let namespace = narrow
            .picks
            .first()
            .map(|p| p.namespace.clone())
            .unwrap_or_default();
        let key = TerminalKey::new(cluster, PodKey::new(&namespace, &from), "");
        let (id, effects) =
            self.open_pane(TerminalKind::PodsLogs, key, None, Words::Containers(pods));
        if let Some(t) = self.workspace.terminals.get_mut(&id) {
            t.pods_of = Some((from, narrow));
        }
        effects
    }

    /// The pod list changed (`changed`: one row; `None`: a list): each
    /// pods' log pane takes in the pods of its own that have started since
    /// it opened, or since it last looked.
    pub(super) fn follow_pods_logs(&mut self, changed: Option<&PodRow>) -> Vec<Effect> {
        // The panes of the rows of their own cluster (while the list
        // shows it) that `changed` may concern.
        let concerned: Vec<super::TerminalId> = self
            .workspace
            .terminals
            .values()
            .filter(|t| {
                t.pods_of.as_ref().is_some_and(|(_, narrow)| {
                    self.row_tag(&t.key.cluster).as_ref() == narrow.one_context()
                        && changed.is_none_or(|row| narrow.admits(row))
                })
            })
            .map(|t| t.id)
            .collect();
        let mut effects = Vec::new();
        for id in concerned {
            let Some(t) = self.workspace.terminals.get_mut(&id) else {
                continue;
            };
            let Some((_, narrow)) = &t.pods_of else {
                continue;
            };
            let mut now = started(&self.pods, narrow);
            // A scale-up past the limit: the first by name stay followed,
            // and the pane says so.
            t.notice = (now.len() > MOST_PODS).then(|| {
                format!(
                    "Following {MOST_PODS} of its {} pods (the first by name): one pane follows at most {MOST_PODS}.",
                    now.len()
                )
            });
            now.truncate(MOST_PODS);
            if now.iter().all(|pod| t.containers.contains(pod)) {
                continue;
            }
            t.containers = now;
            t.state = TerminalState::Attaching;
            effects.push(t.log_effect(false));
        }
        effects
    }

    /// Whether any pod of a pods' log pane still runs: its streams were
    /// cut (`r` picks up after the last lines), rather than ended.
    pub(super) fn pods_logs_running(&self, narrow: &Narrow) -> bool {
        self.pods
            .rows()
            .any(|row| narrow.admits(row) && &*row.status == "Running")
    }
}

/// The pods `narrow` picks that have a log to read (`namespace/name`, in
/// the list's order): those that have started a container, not those
/// still pending or pulling.
pub(super) fn started(pods: &PodTable, narrow: &Narrow) -> Vec<String> {
    pods.rows()
        .filter(|row| narrow.admits(row) && has_started(row))
        .map(|row| format!("{}/{}", row.key.namespace, row.key.name))
        .collect()
}

fn has_started(row: &PodRow) -> bool {
    row.ready > 0
        || row.restarts > 0
        || matches!(
            &*row.status,
            "Running" | "Completed" | "Error" | "CrashLoopBackOff" | "OOMKilled" | "Terminating"
        )
}

#[cfg(test)]
#[path = "pods_logs_tests.rs"]
mod tests;

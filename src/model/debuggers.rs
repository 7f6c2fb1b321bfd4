//! Every debug (ephemeral) container of some pods, as one listing: what
//! `podbay debuggers` prints across namespaces and `podbay debug POD
//! --list` prints for one pod. Ephemeral containers can never be removed
//! from a pod, so this is where forgotten ones are found: their state, how
//! long they have been there, whether one holds a shell, and who added it
//! (the field manager of its entry; podbay's own is `podbay`).

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerStatus, EphemeralContainer, Pod};
use serde_json::{Value, json};

use super::age::human_duration;
use super::container_state::{ContainerState, state_of};
use super::text::printable;

/// The field manager podbay patches ephemeral containers as.
pub const PODBAY_MANAGER: &str = "podbay";

/// One debug container of one pod.
#[derive(Debug, Clone, PartialEq)]
pub struct Debugger {
    pub namespace: String,
    pub pod: String,
    pub name: String,
    pub image: String,
    pub target: Option<String>,
    pub state: ContainerState,
    /// When it started running, if it has.
    pub started: Option<Timestamp>,
    /// It takes input on a terminal or a pipe: an interactive session (a
    /// shell, as a rule) someone may have left open.
    pub shell: bool,
    /// The field manager that added it, from the pod's `managedFields`.
    pub added_by: Option<String>,
}

impl Debugger {
    pub fn by_podbay(&self) -> bool {
        self.added_by.as_deref() == Some(PODBAY_MANAGER)
    }

    /// The STATE cell, as kubectl's STATUS words it: "Running",
    /// "ErrImagePull", "Error (exit 137)", "Completed (exit 0)".
    pub fn state_text(&self) -> String {
        match &self.state {
            ContainerState::Waiting { reason, .. } if !reason.is_empty() => reason.clone(),
            ContainerState::Terminated {
                exit_code, reason, ..
            } if !reason.is_empty() => format!("{reason} (exit {exit_code})"),
            ContainerState::Terminated { exit_code, .. } => {
                format!("Terminated (exit {exit_code})")
            }
            ContainerState::Waiting { .. } => "Waiting".into(),
            ContainerState::Running { .. } => "Running".into(),
            ContainerState::Unknown => "Unknown".into(),
        }
    }

    /// How long since it started (`-` if it never ran).
    pub fn age_text(&self, now: Timestamp) -> String {
        self.started.map_or_else(
            || "-".to_string(),
            |t| human_duration(now.duration_since(t)),
        )
    }
}

/// The debug containers of `pod`, in its spec's order.
pub fn of_pod(pod: &Pod) -> Vec<Debugger> {
    let specs: &[EphemeralContainer] = pod
        .spec
        .as_ref()
        .and_then(|s| s.ephemeral_containers.as_deref())
        .unwrap_or_default();
    if specs.is_empty() {
        return Vec::new();
    }
    let statuses: &[ContainerStatus] = pod
        .status
        .as_ref()
        .and_then(|s| s.ephemeral_container_statuses.as_deref())
        .unwrap_or_default();
    let namespace = printable(pod.metadata.namespace.clone().unwrap_or_default());
    let pod_name = printable(pod.metadata.name.clone().unwrap_or_default());
    specs
        .iter()
        .map(|spec| {
            let api_state = statuses
                .iter()
                .find(|s| s.name == spec.name)
                .and_then(|s| s.state.as_ref());
            let state = api_state.map_or(ContainerState::Unknown, state_of);
            let started = match &state {
                ContainerState::Running { since } => *since,
                _ => api_state
                    .and_then(|s| s.terminated.as_ref())
                    .and_then(|t| t.started_at.as_ref())
                    .map(|t| t.0),
            };
            Debugger {
                namespace: namespace.clone(),
                pod: pod_name.clone(),
                name: printable(spec.name.clone()),
                image: printable(spec.image.clone().unwrap_or_default()),
                target: spec.target_container_name.clone().map(printable),
                state,
                started,
                shell: spec.stdin == Some(true) || spec.tty == Some(true),
                added_by: added_by(pod, &spec.name).map(printable),
            }
        })
        .collect()
}

/// The debug containers of every pod, by namespace, pod and name.
pub fn of_pods<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<Debugger> {
    let mut all: Vec<Debugger> = pods.into_iter().flat_map(of_pod).collect();
    all.sort_by(|a, b| (&a.namespace, &a.pod, &a.name).cmp(&(&b.namespace, &b.pod, &b.name)));
    all
}

/// The manager whose `managedFields` entry owns the container's key in
/// `spec.ephemeralContainers` (`k:{"name":"…"}`).
fn added_by(pod: &Pod, name: &str) -> Option<String> {
    let key = format!("k:{}", json!({ "name": name }));
    pod.metadata
        .managed_fields
        .as_deref()?
        .iter()
        .find(|entry| {
            entry
                .fields_v1
                .as_ref()
                .and_then(|f| f.0.pointer("/f:spec/f:ephemeralContainers"))
                .and_then(Value::as_object)
                .is_some_and(|owned| owned.contains_key(&key))
        })
        .and_then(|entry| entry.manager.clone())
}

/// What a listing spans, which decides its leading columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    OnePod,
    OneNamespace,
    AllNamespaces,
}

/// The listing as a table: a header and a row of cells per debugger; POD
/// unless it is one pod's, NAMESPACE when it spans namespaces.
pub fn table(debuggers: &[Debugger], now: Timestamp, scope: Scope) -> Vec<Vec<String>> {
    let leading = match scope {
        Scope::OnePod => 0,
        Scope::OneNamespace => 1,
        Scope::AllNamespaces => 2,
    };
    let header = [
        "NAMESPACE",
        "POD",
        "NAME",
        "STATE",
        "IMAGE",
        "TARGET",
        "AGE",
        "SHELL",
        "ADDED BY",
    ];
    let mut rows: Vec<Vec<String>> = vec![
        header[2 - leading..]
            .iter()
            .map(|h| h.to_string())
            .collect(),
    ];
    for d in debuggers {
        let row = [
            d.namespace.clone(),
            d.pod.clone(),
            d.name.clone(),
            d.state_text(),
            d.image.clone(),
            d.target.clone().unwrap_or_else(|| "-".into()),
            d.age_text(now),
            if d.shell { "yes" } else { "no" }.to_string(),
            d.added_by.clone().unwrap_or_else(|| "-".into()),
        ];
        rows.push(row[2 - leading..].to_vec());
    }
    rows
}

/// The listing as JSON, one object per debugger; `state` is the
/// container's state as the API words it.
pub fn json(debuggers: &[Debugger], pods: &[&Pod]) -> Value {
    let api_state = |d: &Debugger| -> Value {
        pods.iter()
            .find(|p| {
                p.metadata.namespace.as_deref() == Some(&d.namespace)
                    && p.metadata.name.as_deref() == Some(&d.pod)
            })
            .and_then(|p| p.status.as_ref()?.ephemeral_container_statuses.as_ref())
            .and_then(|statuses| statuses.iter().find(|s| s.name == d.name))
            .and_then(|s| serde_json::to_value(&s.state).ok())
            .unwrap_or(Value::Null)
    };
    Value::Array(
        debuggers
            .iter()
            .map(|d| {
                json!({
                    "namespace": d.namespace,
                    "pod": d.pod,
                    "name": d.name,
                    "image": d.image,
                    "target": d.target,
                    "state": api_state(d),
                    "summary": d.state.summary(),
                    "startedAt": d.started.map(|t| t.to_string()),
                    "shell": d.shell,
                    "addedBy": d.added_by,
                    "byPodbay": d.by_podbay(),
                })
            })
            .collect(),
    )
}

/// What a debug container added to `pod` (targeting `target`) will share
/// and cost, for the launcher to say before it is sent: the pod's memory
/// limits it counts against, the debuggers already running there, a
/// sidecar target, the pod's own user namespace.
pub fn launch_facts(pod: &Pod, target: Option<&str>) -> Vec<String> {
    let mut facts = Vec::new();
    let Some(spec) = &pod.spec else {
        return facts;
    };
    let limits: Vec<String> = spec
        .containers
        .iter()
        .filter_map(|c| {
            let limit = c.resources.as_ref()?.limits.as_ref()?.get("memory")?;
            Some(format!("{} {}", c.name, limit.0))
        })
        .collect();
    if !limits.is_empty() {
        facts.push(format!(
            "A debug container takes no resources of its own: its memory counts against the pod's limits ({}), and going over them OOM-kills processes in the pod.",
            limits.join(", ")
        ));
    }
    // From the statuses alone: the launcher draws this every frame.
    let running = pod
        .status
        .as_ref()
        .and_then(|s| s.ephemeral_container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter(|s| s.state.as_ref().is_some_and(|st| st.running.is_some()))
        .count();
    if running > 0 {
        let them = if running == 1 {
            "One debug container runs"
        } else {
            "debug containers run"
        };
        let count = if running == 1 {
            String::new()
        } else {
            format!("{running} ")
        };
        facts.push(format!(
            "{count}{them} in this pod already (:debuggers lists and stops them; they can never be removed)."
        ));
    }
    if let Some(target) = target
        && spec
            .init_containers
            .iter()
            .flatten()
            .any(|c| c.name == target && c.restart_policy.as_deref() == Some("Always"))
    {
        facts.push(format!(
            "{target} is a sidecar (an init container that keeps running): a valid target."
        ));
    }
    if spec.host_users == Some(false) {
        facts.push(
            "The pod runs in a user namespace of its own (hostUsers: false); the debug container shares it, so its root is not the node's root.".to_string(),
        );
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "shop", "managedFields": [
                {"manager": "kubectl-debug", "operation": "Update", "subresource": "ephemeralcontainers",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:ephemeralContainers": {
                    "k:{\"name\":\"debugger-a\"}": {".": {}}}}}},
                {"manager": "podbay", "operation": "Update", "subresource": "ephemeralcontainers",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:ephemeralContainers": {
                    "k:{\"name\":\"debugger-b\"}": {".": {}}}}}},
            ]},
            "spec": {"containers": [{"name": "app", "image": "app:1"}],
                "ephemeralContainers": [
                    {"name": "debugger-a", "image": "busybox:1.36", "stdin": true, "tty": true, "targetContainerName": "app"},
                    {"name": "debugger-b", "image": "busybox:1.36", "command": ["sleep", "3600"]},
                    {"name": "debugger-c", "image": "registry.example/tools:1"},
                ]},
            "status": {"phase": "Running", "ephemeralContainerStatuses": [
                {"name": "debugger-a", "image": "busybox:1.36", "imageID": "", "ready": false, "restartCount": 0,
                 "state": {"running": {"startedAt": "2026-11-28T10:00:00Z"}}},
                {"name": "debugger-b", "image": "busybox:1.36", "imageID": "", "ready": false, "restartCount": 0,
                 "state": {"terminated": {"exitCode": 137, "reason": "Error",
                    "startedAt": "2026-11-28T09:00:00Z", "finishedAt": "2026-11-28T11:00:00Z"}}},
                {"name": "debugger-c", "image": "registry.example/tools:1", "imageID": "", "ready": false, "restartCount": 0,
                 "state": {"waiting": {"reason": "ImagePullBackOff"}}},
            ]},
        }))
        .unwrap()
    }

    #[test]
    fn the_launcher_is_told_what_a_debugger_shares_and_costs() {
        let bare: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
            "spec": {"containers": [{"name": "app", "image": "x"}]}}))
        .unwrap();
        assert!(launch_facts(&bare, Some("app")).is_empty());
        let facts = launch_facts(&pod(), Some("app"));
        assert_eq!(
            facts,
            [
                "One debug container runs in this pod already (:debuggers lists and stops them; they can never be removed)."
            ]
        );
        let limited: Pod = serde_json::from_value(json!({"metadata": {"name": "p"},
            "spec": {"hostUsers": false,
                "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
                "containers": [{"name": "app", "image": "x", "resources": {"limits": {"memory": "512Mi"}}},
                               {"name": "side", "image": "y"}]}}))
        .unwrap();
        let facts = launch_facts(&limited, Some("proxy"));
        assert_eq!(facts.len(), 3, "{facts:?}");
        assert!(facts[0].contains("the pod's limits (app 512Mi)"));
        assert!(facts[1].starts_with("proxy is a sidecar"));
        assert!(facts[2].contains("hostUsers: false"));
    }

    #[test]
    fn each_debugger_says_its_state_age_shell_and_who_added_it() {
        let pod = pod();
        let found = of_pods([&pod]);
        let now: Timestamp = "2026-11-28T12:00:00Z".parse().unwrap();
        let rows = table(&found, now, Scope::AllNamespaces);
        assert_eq!(
            rows,
            [
                vec![
                    "NAMESPACE",
                    "POD",
                    "NAME",
                    "STATE",
                    "IMAGE",
                    "TARGET",
                    "AGE",
                    "SHELL",
                    "ADDED BY"
                ],
                vec![
                    "shop",
                    "web-1",
                    "debugger-a",
                    "Running",
                    "busybox:1.36",
                    "app",
                    "120m",
                    "yes",
                    "kubectl-debug"
                ],
                vec![
                    "shop",
                    "web-1",
                    "debugger-b",
                    "Error (exit 137)",
                    "busybox:1.36",
                    "-",
                    "3h",
                    "no",
                    "podbay"
                ],
                vec![
                    "shop",
                    "web-1",
                    "debugger-c",
                    "ImagePullBackOff",
                    "registry.example/tools:1",
                    "-",
                    "-",
                    "no",
                    "-"
                ],
            ]
            .map(|row| row.into_iter().map(String::from).collect::<Vec<_>>())
        );
        assert!(found[1].by_podbay() && !found[0].by_podbay());
        let document = json(&found, &[&pod]);
        assert_eq!(
            document[0]["state"]["running"]["startedAt"],
            "2026-11-28T10:00:00Z"
        );
        assert_eq!(document[1]["addedBy"], "podbay");
        assert_eq!(document[1]["byPodbay"], true);
        assert_eq!(document[2]["addedBy"], Value::Null);
        // One namespace's listing leaves the namespace out, one pod's the pod too.
        assert_eq!(table(&found, now, Scope::OneNamespace)[1][0], "web-1");
        assert_eq!(table(&found, now, Scope::OnePod)[1][0], "debugger-a");
    }
}

//! A node as the nodes view shows it: `kubectl get nodes`' columns, its
//! taints, and the pods on it (counted from the pod list).

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeRow {
    /// The context of its cluster, when the list shows several.
    pub context: Option<std::sync::Arc<str>>,
    pub name: String,
    /// `Ready`, `NotReady`, `Unknown`, with `,SchedulingDisabled` when cordoned.
    pub status: String,
    pub ready: bool,
    /// `control-plane`, or `<none>`.
    pub roles: String,
    pub version: String,
    pub created: Option<Timestamp>,
    /// `key=value:Effect` each.
    pub taints: Vec<String>,
    pub os: String,
    /// What the scheduler may give pods (`status.allocatable`):
    /// millicores and bytes, 0 when not said.
    pub allocatable_cpu_m: u32,
    pub allocatable_memory: u64,
}

impl NodeRow {
    /// A Node as an untyped read gives it: its metadata, and the rest of
    /// its JSON (`spec`, `status`). Nothing here decodes a typed Node,
    /// whose decoder (its status above all) is ~80 KB of the binary.
    pub fn from_parts(meta: &ObjectMeta, node: &Value) -> NodeRow {
        let spec = &node["spec"];
        let status = &node["status"];
        let ready_condition = ready_condition(node);
        let ready = ready_condition.is_some_and(|c| c["status"] == "True");
        let mut status_text = match ready_condition.and_then(|c| c["status"].as_str()) {
            Some("True") => "Ready".to_string(),
            Some("False") | Some("Unknown") => "NotReady".to_string(),
            _ => "Unknown".to_string(),
        };
        if spec["unschedulable"] == Value::Bool(true) {
            status_text.push_str(",SchedulingDisabled");
        }
        let labels = meta.labels.clone().unwrap_or_default();
        let roles: Vec<&str> = labels
            .keys()
            .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
            .collect();
        // Free text from the cluster: shown, never obeyed.
        let clean = |s: &str| super::text::sanitize(s).into_owned();
        let text = |v: &Value| clean(v.as_str().unwrap_or_default());
        let taints = spec["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let (key, effect) = (text(&t["key"]), text(&t["effect"]));
                match t["value"].as_str() {
                    Some(v) if !v.is_empty() => format!("{key}={}:{effect}", clean(v)),
                    _ => format!("{key}:{effect}"),
                }
            })
            .collect();
        let info = &status["nodeInfo"];
        NodeRow {
            context: None,
            name: clean(meta.name.as_deref().unwrap_or_default()),
            status: status_text,
            ready,
            roles: if roles.is_empty() {
                "<none>".into()
            } else {
                clean(&roles.join(","))
            },
            version: text(&info["kubeletVersion"]),
            created: meta.creation_timestamp.as_ref().map(|t| t.0),
            taints,
            os: text(&info["operatingSystem"]),
            allocatable_cpu_m: amount(&status["allocatable"]["cpu"], 1000.0) as u32,
            allocatable_memory: amount(&status["allocatable"]["memory"], 1.0) as u64,
        }
    }
}

/// A quantity of the node's status times `scale` (0 when absent or bad).
fn amount(value: &Value, scale: f64) -> f64 {
    value
        .as_str()
        .and_then(super::quantity::parse)
        .map_or(0.0, |v| (v * scale).clamp(0.0, u64::MAX as f64))
}

/// The node's `Ready` condition, if it reports one.
fn ready_condition(node: &Value) -> Option<&Value> {
    node["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
}

/// Why a node is not Ready (its condition's message, else its status);
/// `None` when it is, or says nothing.
pub fn not_ready(node: &Value) -> Option<String> {
    let ready = ready_condition(node)?;
    let status = ready["status"].as_str().unwrap_or_default();
    (status != "True").then(|| match ready["message"].as_str() {
        Some(message) => message.to_string(),
        None => format!("Ready is {status}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cordoned_tainted_control_plane_reads_as_kubectl_shows_it() {
        let node = serde_json::json!({
            "metadata": {"name": "cp-1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true, "taints": [
                {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
                {"key": "dedicated", "value": "gpu", "effect": "NoExecute"},
            ]},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}],
                       "nodeInfo": {"kubeletVersion": "v1.33.1", "operatingSystem": "linux",
                                    "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "",
                                    "osImage": "", "containerRuntimeVersion": "", "kubeProxyVersion": "",
                                    "architecture": "amd64"}},
        });
        let meta: ObjectMeta = serde_json::from_value(node["metadata"].clone()).unwrap();
        let row = NodeRow::from_parts(&meta, &node);
        assert_eq!(not_ready(&node).as_deref(), Some("Ready is Unknown"));
        assert_eq!(row.status, "NotReady,SchedulingDisabled");
        assert!(!row.ready);
        assert_eq!(row.roles, "control-plane");
        assert_eq!(row.version, "v1.33.1");
        assert_eq!(
            row.taints,
            [
                "node-role.kubernetes.io/control-plane:NoSchedule",
                "dedicated=gpu:NoExecute"
            ]
        );
    }
}

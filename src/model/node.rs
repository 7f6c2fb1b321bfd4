//! A node as the nodes view shows it: `kubectl get nodes`' columns, its
//! taints, and the pods on it (counted from the pod list).

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
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
}

impl NodeRow {
    pub fn from_node(node: &Node) -> NodeRow {
        let meta = &node.metadata;
        let spec = node.spec.as_ref();
        let status = node.status.as_ref();
        let ready_condition = status
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
        let ready = ready_condition.is_some_and(|c| c.status == "True");
        let mut status_text = match ready_condition.map(|c| c.status.as_str()) {
            Some("True") => "Ready".to_string(),
            Some("False") | Some("Unknown") => "NotReady".to_string(),
            _ => "Unknown".to_string(),
        };
        if spec.and_then(|s| s.unschedulable) == Some(true) {
            status_text.push_str(",SchedulingDisabled");
        }
        let labels = meta.labels.clone().unwrap_or_default();
        let roles: Vec<&str> = labels
            .keys()
            .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
            .collect();
        let taints: Vec<String> = spec
            .and_then(|s| s.taints.as_ref())
            .into_iter()
            .flatten()
            .map(|t| match t.value.as_deref() {
                Some(v) if !v.is_empty() => format!("{}={v}:{}", t.key, t.effect),
                _ => format!("{}:{}", t.key, t.effect),
            })
            .collect();
        let info = status.and_then(|s| s.node_info.as_ref());
        // Free text from the cluster: shown, never obeyed.
        let clean = |s: &str| super::text::sanitize(s).into_owned();
        let taints = taints.iter().map(|t: &String| clean(t)).collect();
        NodeRow {
            name: clean(meta.name.as_deref().unwrap_or_default()),
            status: status_text,
            ready,
            roles: if roles.is_empty() {
                "<none>".into()
            } else {
                clean(&roles.join(","))
            },
            version: clean(info.map_or("", |i| i.kubelet_version.as_str())),
            created: meta.creation_timestamp.as_ref().map(|t| t.0),
            taints,
            os: clean(info.map_or("", |i| i.operating_system.as_str())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cordoned_tainted_control_plane_reads_as_kubectl_shows_it() {
        let node: Node = serde_json::from_value(serde_json::json!({
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
        }))
        .unwrap();
        let row = NodeRow::from_node(&node);
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

//! The simulated cluster's nodes, as the kubelet registers them: labels,
//! taints, capacity, conditions and node info. `node-a1` is the control
//! plane (it runs the static kube-apiserver pod and is tainted
//! `NoSchedule`), `node-b2` is cordoned, and `node-win1`, a Windows node,
//! stopped posting its status (NotReady).

use jiff::Timestamp;
use serde_json::{Value, json};

/// The kubelet version every simulated node reports.
pub const KUBELET_VERSION: &str = "v1.33.1";

/// The demo's nodes and the Linux nodes generated pods spread over.
pub const LINUX: [&str; 4] = ["node-a1", "node-a2", "node-b1", "node-b2"];
pub const WINDOWS: &str = "node-win1";

/// Every node of the demo.
pub fn names() -> impl Iterator<Item = &'static str> {
    LINUX.into_iter().chain([WINDOWS])
}

/// Whether a node's kubelet is up: a pod bound to a NotReady node stays
/// Pending, as nobody starts it.
pub fn ready(name: &str) -> bool {
    name != WINDOWS
}

/// The node's InternalIP, which its pods report as `status.hostIP`.
pub fn internal_ip(name: &str) -> String {
    let index = names().position(|n| n == name).unwrap_or(0);
    format!("10.0.{}.{}", index / 2, 10 + index)
}

/// The Node object of `name`, registered at `created`.
pub fn object(name: &str, created: Timestamp, now: Timestamp) -> Value {
    let windows = name == WINDOWS;
    let control_plane = name == "node-a1";
    let cordoned = name == "node-b2";
    let os = if windows { "windows" } else { "linux" };
    let zone = if name.starts_with("node-b") {
        "zone-b"
    } else {
        "zone-a"
    };
    let mut labels = json!({
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": os,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": os,
        "topology.kubernetes.io/zone": zone,
    });
    let mut taints = Vec::new();
    if control_plane {
        labels["node-role.kubernetes.io/control-plane"] = json!("");
        taints
            .push(json!({"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}));
    }
    if cordoned {
        taints.push(json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": now.to_string()}));
    }
    let heartbeat = now.to_string();
    let since = created.to_string();
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({
            "type": kind, "status": status, "reason": reason, "message": message,
            "lastHeartbeatTime": heartbeat, "lastTransitionTime": since,
        })
    };
    let conditions = if ready(name) {
        vec![
            condition(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            condition(
                "DiskPressure",
                "False",
                "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure",
            ),
            condition(
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            condition(
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status",
            ),
        ]
    } else {
        // What the node lifecycle controller writes when the kubelet goes quiet.
        let unknown = |kind: &str| {
            condition(
                kind,
                "Unknown",
                "NodeStatusUnknown",
                "Kubelet stopped posting node status.",
            )
        };
        for effect in ["NoSchedule", "NoExecute"] {
            taints.push(json!({"key": "node.kubernetes.io/unreachable", "effect": effect, "timeAdded": since}));
        }
        ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
            .into_iter()
            .map(unknown)
            .collect()
    };
    let (kernel, image, runtime) = if windows {
        (
            "10.0.20348.2849",
            "Windows Server 2022 Datacenter",
            "containerd://1.7.24",
        )
    } else {
        (
            "6.1.0-28-cloud-amd64",
            "Debian GNU/Linux 12 (bookworm)",
            "containerd://1.7.24",
        )
    };
    let uid = super::ids::uid(name, 4);
    let mut node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid,
            "creationTimestamp": since,
            "labels": labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": pod_cidr(name),
            "podCIDRs": [pod_cidr(name)],
            "providerID": format!("podbay-sim://{name}"),
        },
        "status": {
            "capacity": {"cpu": "4", "ephemeral-storage": "101430960Ki", "hugepages-2Mi": "0", "memory": "16374584Ki", "pods": "110"},
            "allocatable": {"cpu": "3920m", "ephemeral-storage": "93478772582", "hugepages-2Mi": "0", "memory": "15223608Ki", "pods": "110"},
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": internal_ip(name)},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": &uid[..8],
                "systemUUID": uid,
                "bootID": super::ids::uid(name, 9),
                "kernelVersion": kernel,
                "osImage": image,
                "containerRuntimeVersion": runtime,
                "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": KUBELET_VERSION,
                "operatingSystem": os,
                "architecture": "amd64",
            },
        },
    });
    if !taints.is_empty() {
        node["spec"]["taints"] = json!(taints);
    }
    if cordoned {
        node["spec"]["unschedulable"] = json!(true);
    }
    node
}

fn pod_cidr(name: &str) -> String {
    let index = names().position(|n| n == name).unwrap_or(0);
    format!("10.244.{index}.0/24")
}

/// Whether a pod tolerates every taint of `node` with effect NoSchedule
/// or NoExecute (what binding to it by `nodeName` skips, but a scheduled
/// pod needs).
pub fn tolerates(pod: &Value, node: &Value) -> bool {
    let tolerations = pod
        .pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    node.pointer("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|taint| {
            tolerations.iter().any(|t| {
                let key_matches = match t.get("key").and_then(Value::as_str) {
                    None | Some("") => t.get("operator").and_then(Value::as_str) == Some("Exists"),
                    Some(key) => Some(key) == taint.get("key").and_then(Value::as_str),
                };
                let value_matches = t.get("operator").and_then(Value::as_str) == Some("Exists")
                    || t.get("value") == taint.get("value")
                    || (t.get("value").is_none_or(|v| v == "") && taint.get("value").is_none());
                let effect_matches = t.get("effect").and_then(Value::as_str).is_none_or(|e| {
                    e.is_empty() || Some(e) == taint.get("effect").and_then(Value::as_str)
                });
                key_matches && value_matches && effect_matches
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-26T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn the_control_plane_is_tainted_and_the_windows_node_is_not_ready() {
        let a1 = object("node-a1", now(), now());
        assert_eq!(
            a1["spec"]["taints"][0]["key"],
            "node-role.kubernetes.io/control-plane"
        );
        assert_eq!(
            a1["metadata"]["labels"]["node-role.kubernetes.io/control-plane"],
            ""
        );
        let win = object(WINDOWS, now(), now());
        let ready = win["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap();
        assert_eq!(ready["status"], "Unknown");
        assert_eq!(
            object("node-b2", now(), now())["spec"]["unschedulable"],
            true
        );
        assert!(
            object("node-a2", now(), now())["spec"]
                .get("taints")
                .is_none()
        );
    }

    #[test]
    fn tolerating_everything_tolerates_every_taint_and_nothing_tolerates_none() {
        let a1 = object("node-a1", now(), now());
        let everything = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        assert!(tolerates(&everything, &a1));
        assert!(!tolerates(&json!({"spec": {}}), &a1));
        let by_key = json!({"spec": {"tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]}});
        assert!(tolerates(&by_key, &a1));
        assert!(tolerates(
            &json!({"spec": {}}),
            &object("node-a2", now(), now())
        ));
    }
}

//! Reading and writing a pod as the simulator stores it (JSON): where each
//! kind of container is, its state, the pod's user, the events written
//! about it, and new object UIDs.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::store::Key;
use crate::model::ContainerKind;

/// What an Event says about a pod (or one of its containers).
pub(super) struct PodEvent<'a> {
    /// `spec.containers{name}`, or empty for the pod itself.
    pub field_path: &'a str,
    pub warning: bool,
    pub reason: &'a str,
    pub message: &'a str,
    pub count: u64,
    pub first: Timestamp,
    pub last: Timestamp,
}

/// The pod spec list a kind of container is in.
pub(super) fn spec_field(kind: ContainerKind) -> &'static str {
    match kind {
        ContainerKind::Init => "initContainers",
        ContainerKind::Regular => "containers",
        ContainerKind::Ephemeral => "ephemeralContainers",
    }
}

/// The pod status list that reports a kind of container.
pub(super) fn status_field(kind: ContainerKind) -> &'static str {
    match kind {
        ContainerKind::Init => "initContainerStatuses",
        ContainerKind::Regular => "containerStatuses",
        ContainerKind::Ephemeral => "ephemeralContainerStatuses",
    }
}

/// A core/v1 Event about `pod`, reported by the kubelet on its node, or by
/// the scheduler for `FailedScheduling`.
pub(super) fn pod_event(pod: &Value, name: &str, event: PodEvent) -> Value {
    let namespace = pod
        .pointer("/metadata/namespace")
        .cloned()
        .unwrap_or(Value::Null);
    let (component, host) = if event.reason == "FailedScheduling" {
        ("default-scheduler", "")
    } else {
        let node = pod.pointer("/spec/nodeName").and_then(Value::as_str);
        ("kubelet", node.unwrap_or_default())
    };
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uuid_like(),
            "creationTimestamp": event.first.to_string(),
        },
        "involvedObject": {
            "kind": "Pod", "namespace": namespace,
            "name": pod.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
            "uid": pod.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
            "apiVersion": "v1",
            "resourceVersion": pod.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null),
            "fieldPath": event.field_path,
        },
        "reason": event.reason,
        "message": event.message,
        "source": {"component": component, "host": host},
        "firstTimestamp": event.first.to_string(),
        "lastTimestamp": event.last.to_string(),
        "count": event.count.max(1),
        "type": if event.warning { "Warning" } else { "Normal" },
        "eventTime": null,
        "reportingComponent": component,
        "reportingInstance": host,
    })
}

pub(super) fn pod_key(pod: &Value) -> Key {
    Key::new(
        pod.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        pod.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    )
}

/// The container spec of `name` in any of the pod's container lists.
pub fn find_container(pod: &Value, name: &str) -> Option<(ContainerKind, Value)> {
    [
        ContainerKind::Regular,
        ContainerKind::Init,
        ContainerKind::Ephemeral,
    ]
    .into_iter()
    .find_map(|kind| {
        pod.pointer(&format!("/spec/{}", spec_field(kind)))?
            .as_array()?
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| (kind, c.clone()))
    })
}

/// The `state` object of a container's status, if the kubelet reported one.
pub fn container_state(pod: &Value, kind: ContainerKind, name: &str) -> Option<Value> {
    pod.pointer(&format!("/status/{}", status_field(kind)))?
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)?
        .get("state")
        .cloned()
}

pub(super) fn has_pending_init_containers(pod: &Value) -> bool {
    let inits = pod
        .pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let done = pod
        .pointer("/status/initContainerStatuses")
        .and_then(Value::as_array)
        .map_or(0, |s| {
            s.iter()
                .filter(|s| s.pointer("/state/terminated/exitCode") == Some(&json!(0)))
                .count()
        });
    done < inits
}

/// The pod's `runAsUser` and `runAsGroup` (root when unset): who its
/// processes are. One pod, one user: the sandbox maps a single id.
pub(super) fn pod_user(pod: &Value) -> (u32, u32) {
    let id = |field: &str| {
        pod.pointer(&format!("/spec/securityContext/{field}"))
            .and_then(Value::as_u64)
            .and_then(|id| u32::try_from(id).ok())
            .unwrap_or(0)
    };
    (id("runAsUser"), id("runAsGroup"))
}

/// A random RFC 4122-shaped id for object UIDs.
pub fn uuid_like() -> String {
    let hex = super::rbac::random_token();
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_init_containers_are_detected() {
        let pod = json!({"spec": {"initContainers": [{"name": "i"}]}, "status": {"initContainerStatuses": [{"name": "i", "state": {"running": {}}}]}});
        assert!(has_pending_init_containers(&pod));
        let pod = json!({"spec": {"initContainers": [{"name": "i"}]}, "status": {"initContainerStatuses": [{"name": "i", "state": {"terminated": {"exitCode": 0}}}]}});
        assert!(!has_pending_init_containers(&pod));
    }
}

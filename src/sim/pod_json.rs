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
    let (component, host) = if matches!(event.reason, "FailedScheduling" | "Scheduled") {
        ("default-scheduler", "")
    } else {
        let node = pod.pointer("/spec/nodeName").and_then(Value::as_str);
        ("kubelet", node.unwrap_or_default())
    };
    let mut object = json!({
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
    });
    // An event about the whole pod has no fieldPath (omitted when empty).
    if let Some(involved) = object["involvedObject"].as_object_mut()
        && involved["fieldPath"] == ""
    {
        involved.remove("fieldPath");
    }
    object
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
/// Whether the pod's Ready condition is True.
pub fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Whether the pod is on its way out (deleted, its grace period running).
pub fn is_terminating(pod: &Value) -> bool {
    pod["metadata"]["deletionTimestamp"].is_string()
}

/// The pods of `namespace` that carry every label of `selector` (a
/// `matchLabels` map, or a Service's selector); none for an empty one.
pub fn selected(
    store: &super::store::Store,
    namespace: &str,
    selector: &serde_json::Map<String, Value>,
) -> Vec<Value> {
    if selector.is_empty() {
        return Vec::new();
    }
    let selects =
        |entry: &super::store::Entry| selector.iter().all(|(k, v)| entry.label(k) == v.as_str());
    let (pods, _, _) = store.list(
        super::store::Kind::Pod,
        Some(namespace),
        None,
        None,
        &selects,
    );
    pods.iter().map(|p| p.value()).collect()
}

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

/// Linux capability numbers by Kubernetes' names (`SYS_PTRACE` or
/// `CAP_SYS_PTRACE`), in the kernel's order.
const CAPABILITIES: [&str; 41] = [
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
    "SETPCAP",
    "LINUX_IMMUTABLE",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_ADMIN",
    "NET_RAW",
    "IPC_LOCK",
    "IPC_OWNER",
    "SYS_MODULE",
    "SYS_RAWIO",
    "SYS_CHROOT",
    "SYS_PTRACE",
    "SYS_PACCT",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_NICE",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "MKNOD",
    "LEASE",
    "AUDIT_WRITE",
    "AUDIT_CONTROL",
    "SETFCAP",
    "MAC_OVERRIDE",
    "MAC_ADMIN",
    "SYSLOG",
    "WAKE_ALARM",
    "BLOCK_SUSPEND",
    "AUDIT_READ",
    "PERFMON",
    "BPF",
    "CHECKPOINT_RESTORE",
];

/// What containerd gives a container unless its securityContext says
/// otherwise (no SYS_PTRACE, no NET_ADMIN, no SYS_ADMIN).
const DEFAULT_CAPABILITIES: [&str; 14] = [
    "CHOWN",
    "DAC_OVERRIDE",
    "FSETID",
    "FOWNER",
    "MKNOD",
    "NET_RAW",
    "SETGID",
    "SETUID",
    "SETFCAP",
    "SETPCAP",
    "NET_BIND_SERVICE",
    "SYS_CHROOT",
    "KILL",
    "AUDIT_WRITE",
];

fn capability(name: &str) -> Option<u8> {
    let name = name.trim_start_matches("CAP_");
    CAPABILITIES
        .iter()
        .position(|c| c.eq_ignore_ascii_case(name))
        .and_then(|n| u8::try_from(n).ok())
}

/// Who a container's processes are, as the kubelet and containerd decide
/// it: `runAsUser`/`runAsGroup` (the container's over the pod's, else the
/// image's user), and the default capabilities with the securityContext's
/// `add` and `drop` (`ALL` too), or all of them when privileged.
pub(super) fn identity(pod: &Value, container: &Value) -> super::sandbox::Identity {
    let effective = |field: &str| {
        container
            .pointer(&format!("/securityContext/{field}"))
            .filter(|v| !v.is_null())
            .or_else(|| pod.pointer(&format!("/spec/securityContext/{field}")))
            .and_then(Value::as_u64)
            .and_then(|id| u32::try_from(id).ok())
    };
    let image = container
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let image_user = u32::try_from(super::images::user_of(image)).unwrap_or(0);
    let user = effective("runAsUser").unwrap_or(image_user);
    let group = effective("runAsGroup").unwrap_or(image_user);
    let context = container.get("securityContext");
    let privileged = context
        .and_then(|c| c.get("privileged"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let names = |list: &str| -> Vec<String> {
        context
            .and_then(|c| c.pointer(&format!("/capabilities/{list}")))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let capabilities = if privileged {
        (0..CAPABILITIES.len() as u8).collect()
    } else {
        let drop = names("drop");
        let dropped_all = drop.iter().any(|d| d.eq_ignore_ascii_case("ALL"));
        let mut kept: Vec<u8> = DEFAULT_CAPABILITIES
            .iter()
            .filter(|_| !dropped_all)
            .filter_map(|c| capability(c))
            .filter(|c| !drop.iter().any(|d| capability(d) == Some(*c)))
            .collect();
        kept.extend(names("add").iter().filter_map(|a| capability(a)));
        kept.sort_unstable();
        kept.dedup();
        kept
    };
    super::sandbox::Identity {
        user,
        group,
        capabilities,
    }
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

/// A string field of a JSON object; `""` when absent or not a string.
pub(super) fn str_field<'a>(fields: &'a serde_json::Map<String, Value>, field: &str) -> &'a str {
    fields
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
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

    #[test]
    fn a_containers_identity_is_its_user_and_containerds_capabilities_as_its_context_says() {
        let pod = json!({"spec": {"securityContext": {"runAsUser": 1000, "runAsGroup": 3000}}});
        let plain = identity(&pod, &json!({"image": "busybox:1.36"}));
        assert_eq!((plain.user, plain.group), (1000, 3000));
        let ptrace = capability("SYS_PTRACE").unwrap();
        assert_eq!(ptrace, 19);
        assert!(!plain.capabilities.contains(&ptrace), "not by default");
        assert!(plain.capabilities.contains(&capability("CHOWN").unwrap()));
        assert_eq!(plain.capabilities.len(), 14);

        let general = identity(
            &json!({}),
            &json!({"image": "gcr.io/distroless/static:nonroot",
                    "securityContext": {"capabilities": {"add": ["SYS_PTRACE"]}}}),
        );
        assert_eq!(
            (general.user, general.group),
            (65532, 65532),
            "the image's user"
        );
        assert!(general.capabilities.contains(&ptrace));

        let restricted = identity(
            &pod,
            &json!({"securityContext": {"runAsUser": 7, "capabilities": {"drop": ["ALL"], "add": ["CAP_NET_BIND_SERVICE"]}}}),
        );
        assert_eq!((restricted.user, restricted.group), (7, 3000));
        assert_eq!(restricted.capabilities, [10]);

        let privileged = identity(&pod, &json!({"securityContext": {"privileged": true}}));
        assert_eq!(privileged.capabilities.len(), CAPABILITIES.len());
    }
}

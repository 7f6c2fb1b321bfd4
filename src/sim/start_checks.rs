//! What the kubelet checks before it creates a container, each failure
//! worded as the kubelet and containerd word it: the user an image runs as
//! against `runAsNonRoot`, and an ephemeral container's target.

use serde_json::Value;

use crate::model::ContainerKind;

/// How often the kubelet syncs a pod whose container it could not create.
pub const RESYNC: std::time::Duration = std::time::Duration::from_secs(10);

/// The kubelet's `verifyRunAsNonRoot`: with `runAsNonRoot` (the container's,
/// else the pod's), the user must be known not to be root.
pub fn breaks_run_as_non_root(pod: &Value, container: &Value, image: &str) -> Option<String> {
    let effective = |field: &str| {
        container
            .pointer(&format!("/securityContext/{field}"))
            .filter(|v| !v.is_null())
            .or_else(|| pod.pointer(&format!("/spec/securityContext/{field}")))
            .filter(|v| !v.is_null())
    };
    if effective("runAsNonRoot").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let meta = |field: &str| {
        pod.pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let who = format!(
        "pod: \"{}_{}({})\", container: {}",
        meta("name"),
        meta("namespace"),
        meta("uid"),
        container
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    );
    match effective("runAsUser").and_then(Value::as_i64) {
        Some(0) => Some(format!(
            "container's runAsUser breaks non-root policy ({who})"
        )),
        Some(_) => None,
        None if super::images::user_of(image) == 0 => Some(format!(
            "container has runAsNonRoot and image will run as root ({who})"
        )),
        None => None,
    }
}

/// Why an ephemeral container that targets another cannot be created now:
/// `(reason, message)`. As `kuberuntime`'s `getTargetID`, a target that
/// was never created is a config error; as containerd's
/// `validateTargetContainer`, one that was and is not running fails the
/// create. `None` when it runs, or no target is named.
pub fn target_not_running(pod: &Value, container: &Value) -> Option<(&'static str, String)> {
    let target = container
        .get("targetContainerName")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())?;
    let status = [ContainerKind::Regular, ContainerKind::Init]
        .into_iter()
        .find_map(|kind| status_of(pod, kind, target));
    let Some(status) = status else {
        return Some((
            "CreateContainerConfigError",
            format!("unable to find target container {target}"),
        ));
    };
    if status.pointer("/state/running").is_some() {
        return None;
    }
    let id = [
        "/state/terminated/containerID",
        "/lastState/terminated/containerID",
    ]
    .iter()
    .find_map(|p| status.pointer(p).and_then(Value::as_str))
    .map(|id| id.rsplit("://").next().unwrap_or(id).to_string());
    match id {
        Some(id) => Some((
            "CreateContainerError",
            format!(
                "failed to generate container spec: invalid target container: container {id:?} is not running - in state CONTAINER_EXITED"
            ),
        )),
        None => Some((
            "CreateContainerConfigError",
            format!("unable to find target container {target}"),
        )),
    }
}

fn status_of(pod: &Value, kind: ContainerKind, name: &str) -> Option<Value> {
    let field = match kind {
        ContainerKind::Init => "initContainerStatuses",
        _ => "containerStatuses",
    };
    pod.pointer(&format!("/status/{field}"))?
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(status: Value) -> Value {
        json!({"spec": {"containers": [{"name": "worker"}]}, "status": {"containerStatuses": [status]}})
    }

    const DEBUGGER: &str = r#"{"name": "dbg", "targetContainerName": "worker"}"#;

    #[test]
    fn a_target_must_run_when_the_debugger_is_created() {
        let debugger: Value = serde_json::from_str(DEBUGGER).unwrap();
        let running = pod(json!({"name": "worker", "state": {"running": {}}}));
        assert_eq!(target_not_running(&running, &debugger), None);
        let crashed = pod(
            json!({"name": "worker", "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "containerID": "containerd://abc123"}}}),
        );
        assert_eq!(
            target_not_running(&crashed, &debugger),
            Some((
                "CreateContainerError",
                r#"failed to generate container spec: invalid target container: container "abc123" is not running - in state CONTAINER_EXITED"#.to_string()
            ))
        );
        let never =
            pod(json!({"name": "worker", "state": {"waiting": {"reason": "ContainerCreating"}}}));
        assert_eq!(
            target_not_running(&never, &debugger),
            Some((
                "CreateContainerConfigError",
                "unable to find target container worker".to_string()
            ))
        );
        let untargeted = json!({"name": "dbg"});
        assert_eq!(target_not_running(&never, &untargeted), None);
    }
}

//! The Events a demo pod in trouble would have gathered before the
//! simulator started: a crash loop's back-offs, an image that never pulls,
//! a pod no node can take. Derived from the pod itself, so they always
//! agree with its status.

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::kubelet::{PodEvent, pod_event};

/// The pod's past Events, oldest first (empty for a healthy pod).
pub fn events(pod: &Value, now: Timestamp) -> Vec<Value> {
    let created = pod
        .pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| t.parse().ok())
        .unwrap_or(now);
    let ago = |secs: i64| now - SignedDuration::from_secs(secs);
    let mut out = Vec::new();
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let mut event = |field_path: String, warning, reason, message: String, count: i64, last| {
        let first = created.min(last);
        let event_name = format!(
            "{name}.{:x}",
            first.as_nanosecond() as u64 + out.len() as u64
        );
        let facts = PodEvent {
            field_path: &field_path,
            warning,
            reason,
            message: &message,
            count: count.max(1) as u64,
            first,
            last,
        };
        out.push(pod_event(pod, &event_name, facts));
    };
    let statuses = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for status in statuses {
        let name = status["name"].as_str().unwrap_or_default();
        let image = status["image"].as_str().unwrap_or_default();
        let field_path = format!("spec.containers{{{name}}}");
        let restarts = status["restartCount"].as_i64().unwrap_or(0);
        match status
            .pointer("/state/waiting/reason")
            .and_then(Value::as_str)
        {
            Some("CrashLoopBackOff") => {
                event(
                    field_path.clone(),
                    false,
                    "Pulled",
                    format!("Container image {image:?} already present on machine"),
                    restarts,
                    ago(150),
                );
                event(
                    field_path,
                    true,
                    "BackOff",
                    format!(
                        "Back-off restarting failed container {name} in pod {}",
                        pod_ref(pod)
                    ),
                    restarts * 4,
                    ago(20),
                );
            }
            Some("ImagePullBackOff") => {
                let pulls = 9;
                event(
                    field_path.clone(),
                    false,
                    "Pulling",
                    format!("Pulling image {image:?}"),
                    pulls,
                    ago(200),
                );
                event(
                    field_path.clone(),
                    true,
                    "Failed",
                    format!(
                        "Failed to pull image {image:?}: rpc error: code = NotFound desc = failed to pull and unpack image {:?}: not found",
                        super::kubelet::full_reference(image)
                    ),
                    pulls,
                    ago(199),
                );
                event(
                    field_path,
                    false,
                    "BackOff",
                    format!("Back-off pulling image {image:?}"),
                    pulls * 4,
                    ago(30),
                );
            }
            _ => {}
        }
    }
    let unscheduled = pod["status"]["phase"] == "Pending"
        && pod.pointer("/spec/nodeName").is_none()
        && pod
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
    if unscheduled {
        event(
            String::new(),
            true,
            "FailedScheduling",
            "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.".into(),
            1,
            ago(60),
        );
    }
    out
}

/// `NAME_NAMESPACE(UID)`, as the kubelet names a pod in its messages.
fn pod_ref(pod: &Value) -> String {
    format!(
        "{}_{}({})",
        pod["metadata"]["name"].as_str().unwrap_or_default(),
        pod["metadata"]["namespace"].as_str().unwrap_or_default(),
        pod["metadata"]["uid"].as_str().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_in_trouble_have_the_events_that_explain_it() {
        let now = Timestamp::now();
        let pods = super::super::scenario::demo(now);
        let reasons = |name: &str| -> Vec<(String, String)> {
            let pod = pods
                .iter()
                .find(|p| p["metadata"]["name"].as_str().unwrap().starts_with(name))
                .unwrap();
            events(pod, now)
                .iter()
                .map(|e| {
                    (
                        e["type"].as_str().unwrap().to_string(),
                        e["reason"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        let pair = |t: &str, r: &str| (t.to_string(), r.to_string());
        assert!(reasons("ledger-worker").contains(&pair("Warning", "BackOff")));
        assert!(reasons("thumbnailer").contains(&pair("Warning", "Failed")));
        assert_eq!(reasons("search-gpu"), [pair("Warning", "FailedScheduling")]);
        assert!(reasons("redis-0").is_empty());
        // Every one parses as a Kubernetes Event and names its pod.
        for pod in &pods {
            for e in events(pod, now) {
                let parsed: k8s_openapi::api::core::v1::Event =
                    serde_json::from_value(e).expect("an Event");
                assert_eq!(
                    parsed.involved_object.name,
                    pod["metadata"]["name"].as_str().map(String::from)
                );
                assert!(parsed.first_timestamp <= parsed.last_timestamp);
            }
        }
    }
}

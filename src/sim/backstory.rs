//! The Events a demo pod in trouble would have gathered before the
//! simulator started: a crash loop's back-offs, an image that never pulls,
//! a pod no node can take. Derived from the pod itself, so they always
//! agree with its status.

use bytes::Bytes;
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::runtime::{LogRecord, Stream};

use super::pod_json::{PodEvent, pod_event};

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
                        super::reference::full_reference(image)
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

/// What a run that ended before the simulator started wrote, as log
/// records between its `startedAt` and `finishedAt`: the report a
/// completed job printed, the error a crashed service died of, the
/// requests an OOM-killed one was serving. A run that never started
/// (`StartError`) wrote nothing.
pub fn run_log(pod: &Value, container: &str, terminated: &Value) -> Vec<LogRecord> {
    let time = |field: &str| {
        terminated[field]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
    };
    let finished = time("finishedAt").unwrap_or_else(Timestamp::now);
    let started = time("startedAt")
        .filter(|s| *s < finished)
        .unwrap_or(finished - SignedDuration::from_secs(60));
    let app = pod
        .pointer("/metadata/labels/app.kubernetes.io~1name")
        .and_then(Value::as_str)
        .unwrap_or(container);
    let code = terminated["exitCode"].as_i64().unwrap_or(0);
    let init = pod
        .pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|c| c["name"] == container));
    let lines: Vec<String> = match terminated["reason"].as_str().unwrap_or_default() {
        "StartError" | "ContainerCannotRun" => Vec::new(),
        "Completed" if init => vec![
            format!("INFO {container}: rendering the configuration for {app}"),
            format!("INFO {container}: wrote /etc/{app}/{app}.conf"),
            format!("INFO {container}: done"),
        ],
        "Completed" => vec![
            format!("INFO {app}: starting {container}"),
            format!("INFO {app}: reading orders for the previous day"),
            format!("INFO {app}: 18442 orders, 37 refunds, 0 disputes"),
            format!("INFO {app}: wrote s3://reports/nightly/{app}.csv (412 KiB)"),
            format!("INFO {app}: done"),
        ],
        "OOMKilled" => (0..4)
            .map(|i| {
                format!(
                    "INFO {app}/{container}: handled request id={:x} status=200",
                    0x51f0 + i
                )
            })
            .collect(),
        _ => vec![
            format!("INFO {app}: starting {container}"),
            format!("INFO {app}: connecting to postgres at ledger-db.payments.svc:5432"),
            format!(
                "ERROR {app}: dial tcp 10.96.14.2:5432: connect: connection refused (attempt 3 of 3)"
            ),
            format!("FATAL {app}: cannot reach the database; exiting with code {code}"),
        ],
    };
    let span = finished.duration_since(started).as_millis().max(1);
    let count = lines.len().max(1) as i128;
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let at = started + SignedDuration::from_millis((span * i as i128 / count) as i64);
            LogRecord {
                seq: i as u64,
                at,
                stream: if line.starts_with("INFO") {
                    Stream::Stdout
                } else {
                    Stream::Stderr
                },
                data: Bytes::from(format!("{} {line}\n", at.strftime("%Y-%m-%dT%H:%M:%SZ"))),
                starts_line: true,
            }
        })
        .collect()
}

#[cfg(test)]
mod run_log_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_finished_run_says_why_it_ended_between_its_start_and_finish() {
        let pod = json!({"metadata": {"labels": {"app.kubernetes.io/name": "ledger-worker"}}});
        let crash = json!({"exitCode": 1, "reason": "Error",
            "startedAt": "2026-11-23T10:00:00Z", "finishedAt": "2026-11-23T10:01:00Z"});
        let records = run_log(&pod, "worker", &crash);
        let text: String = records
            .iter()
            .map(|r| String::from_utf8_lossy(&r.data).into_owned())
            .collect();
        assert!(
            text.starts_with("2026-11-23T10:00:00Z INFO ledger-worker: starting worker\n"),
            "{text}"
        );
        assert!(
            text.contains("FATAL ledger-worker: cannot reach the database; exiting with code 1"),
            "{text}"
        );
        assert!(
            records
                .iter()
                .all(|r| r.at < "2026-11-23T10:01:00Z".parse::<Timestamp>().unwrap())
        );
        assert_eq!(records.last().map(|r| r.stream), Some(Stream::Stderr));
        let never_ran = json!({"exitCode": 128, "reason": "StartError"});
        assert!(run_log(&pod, "worker", &never_ran).is_empty());
    }
}

//! Whatever JSON a cluster sends, turning it into pod rows, pod details and
//! event rows does not panic: arbitrary JSON, and real pods (the
//! simulator's scenario) and events with parts replaced, removed,
//! duplicated or pushed to extremes.

use crate::support::json;

use json::{any_json, mutate, mutation};
use k8s_openapi::api::core::v1::Pod;
use podbay::model::{EventRow, PodDetail, PodRow};
use proptest::prelude::*;
use serde_json::{Value, json};

fn scenario() -> Vec<Value> {
    let now = jiff::Timestamp::now();
    let mut pods = podbay::sim::scenario::demo(now);
    pods.extend(podbay::sim::scenario::generated(30, now));
    pods
}

fn event() -> Value {
    json!({
        "metadata": {"name": "redis-0.1", "namespace": "shop", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "involvedObject": {"kind": "Pod", "name": "redis-0", "namespace": "shop",
            "fieldPath": "spec.ephemeralContainers{debugger}"},
        "reason": "Pulling", "message": "Pulling image \"busybox\"", "type": "Warning",
        "count": 3, "lastTimestamp": "2026-01-01T00:00:00Z",
        "eventTime": "2026-01-01T00:00:00.000000Z",
    })
}

/// Every conversion podbay applies to a pod, used as the UI uses it.
fn convert_pod(pod: &Pod) {
    let row = PodRow::from_pod(pod);
    let now = jiff::Timestamp::now();
    let _ = (row.restarts_text(now), row.age_text(now));
    let detail = PodDetail::from_pod(pod);
    for c in &detail.containers {
        let _ = (
            detail.container(&c.name),
            c.kind.label(),
            c.state.is_running(),
        );
    }
}

/// An Event is read from its JSON as a watch gives it, whatever its shape.
fn convert_event(event: &serde_json::Value) {
    let row = EventRow::from_object(event);
    let _ = row.container();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_json_never_panics(value in any_json()) {
        convert_event(&value);
    }

    /// Pods of any shape the API allows (containers of every kind, states,
    /// counts and times at their edges, statuses for containers the spec
    /// lacks, names in any script): every one converts, and the row is
    /// the pod's.
    #[test]
    fn generated_pods_convert(pod in pod_shaped()) {
        let pod: Pod = serde_json::from_value(pod).expect("a pod-shaped object decodes");
        convert_pod(&pod);
        let row = PodRow::from_pod(&pod);
        prop_assert_eq!(&*row.key.name, pod.metadata.name.as_deref().unwrap_or_default());
        // kubectl's READY denominator: the spec's containers (no init
        // container here is a restartable sidecar).
        let containers = pod.spec.as_ref().map_or(0, |s| s.containers.len());
        prop_assert_eq!(row.total as usize, containers);
    }

    #[test]
    fn arbitrary_json_under_known_fields_never_panics(
        spec in any_json(),
        status in any_json(),
        metadata in any_json(),
    ) {
        let value = json!({"metadata": metadata, "spec": spec, "status": status});
        if let Ok(pod) = serde_json::from_value::<Pod>(value) {
            convert_pod(&pod);
        }
    }

    #[test]
    fn mutated_scenario_pods_never_panic(
        index in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..8),
    ) {
        let pods = scenario();
        let mut pod = pods[index % pods.len()].clone();
        mutate(&mut pod, &mutations);
        if let Ok(pod) = serde_json::from_value::<Pod>(pod) {
            convert_pod(&pod);
        }
    }

    #[test]
    fn mutated_events_never_panic(mutations in proptest::collection::vec(mutation(), 1..6)) {
        let mut value = event();
        mutate(&mut value, &mutations);
        convert_event(&value);
    }
}

/// Counts at their limits: many containers restarting `i32::MAX` times.
#[test]
fn extreme_restart_counts_saturate_instead_of_overflowing() {
    let status = |name: &str| {
        json!({"name": name, "image": "i", "imageID": "", "ready": true, "started": true, "restartCount": i32::MAX,
            "state": {"running": {}}})
    };
    let names = ["a", "b", "c", "d"];
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "n"},
        "spec": {
            "containers": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>(),
            "initContainers": names.iter().map(|n| json!({"name": n, "restartPolicy": "Always"})).collect::<Vec<_>>(),
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Initialized", "status": "True"}],
            "containerStatuses": names.iter().map(|n| status(n)).collect::<Vec<_>>(),
            "initContainerStatuses": names.iter().map(|n| status(n)).collect::<Vec<_>>(),
        },
    }))
    .unwrap();
    let row = PodRow::from_pod(&pod);
    assert_eq!(row.restarts, u32::MAX);
    assert_eq!((row.ready, row.total), (8, 8));
}

/// A container's state, as a status reports it: waiting, running or
/// terminated, with reasons, codes and times anywhere in their range.
fn state() -> impl Strategy<Value = Value> {
    let text = "[a-zA-Z \\u{301}\\u{202e}日本]{0,12}";
    prop_oneof![
        Just(json!({})),
        (text, text).prop_map(
            |(reason, message)| json!({"waiting": {"reason": reason, "message": message}})
        ),
        prop_oneof![
            Just(json!({})),
            Just(json!({"startedAt": "2026-01-01T00:00:00Z"}))
        ]
        .prop_map(|running| json!({"running": running})),
        (any::<i32>(), text, any::<i64>()).prop_map(|(code, reason, at)| {
            let at = jiff::Timestamp::from_second(at.rem_euclid(253_402_207_200) - 62_135_596_800)
                .map_or_else(|_| "1970-01-01T00:00:00Z".to_string(), |t| t.to_string());
            json!({"terminated": {"exitCode": code, "reason": reason, "finishedAt": at}})
        }),
    ]
}

/// A pod-shaped object: what the API server could send.
fn pod_shaped() -> impl Strategy<Value = Value> {
    let name = "[a-z0-9][a-z0-9\\-]{0,20}|[日本\\u{202e}a-z]{1,8}";
    let container = (name, any::<bool>(), any::<bool>()).prop_map(|(name, stdin, tty)| {
        json!({"name": name, "image": "busybox:1.36", "stdin": stdin, "tty": tty})
    });
    let status = || {
        (name, any::<bool>(), any::<i32>(), state(), state()).prop_map(
            |(name, ready, restarts, state, last)| {
                json!({"name": name, "image": "i", "imageID": "", "ready": ready,
                    "restartCount": restarts, "state": state, "lastState": last})
            },
        )
    };
    (
        name,
        proptest::collection::vec(container.clone(), 0..4),
        proptest::collection::vec(container.clone(), 0..3),
        proptest::collection::vec(container, 0..3),
        proptest::collection::vec(status(), 0..5),
        proptest::collection::vec(status(), 0..3),
        prop_oneof!["Pending", "Running", "Succeeded", "Failed", "Unknown", ""],
        proptest::option::of("node-[a-z0-9]{1,5}"),
        any::<bool>(),
    )
        .prop_map(
            |(
                name,
                containers,
                init,
                ephemeral,
                statuses,
                init_statuses,
                phase,
                node,
                deleting,
            )| {
                let mut pod = json!({
                    "metadata": {"name": name, "namespace": "shop",
                        "creationTimestamp": "2026-01-01T00:00:00Z"},
                    "spec": {"containers": containers, "initContainers": init,
                        "ephemeralContainers": ephemeral, "nodeName": node},
                    "status": {"phase": phase, "containerStatuses": statuses,
                        "initContainerStatuses": init_statuses},
                });
                if deleting {
                    pod["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:01:00Z");
                }
                pod
            },
        )
}

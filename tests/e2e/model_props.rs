//! Whatever JSON a cluster sends, turning it into pod rows, pod details and
//! event rows does not panic: arbitrary JSON, and real pods (the
//! simulator's scenario) and events with parts replaced, removed,
//! duplicated or pushed to extremes.

use crate::support::json;

use json::{any_json, mutate, mutation};
use k8s_openapi::api::core::v1::{Event, Pod};
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

fn convert_event(event: &Event) {
    let row = EventRow::from_event(event);
    let _ = row.container();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_json_never_panics(value in any_json()) {
        if let Ok(pod) = serde_json::from_value::<Pod>(value.clone()) {
            convert_pod(&pod);
        }
        if let Ok(event) = serde_json::from_value::<Event>(value) {
            convert_event(&event);
        }
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
        if let Ok(event) = serde_json::from_value::<Event>(value) {
            convert_event(&event);
        }
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

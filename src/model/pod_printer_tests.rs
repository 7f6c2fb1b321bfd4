//! kubectl's pod columns (READY, STATUS, RESTARTS, AGE) for the cases of
//! kubernetes' `pkg/printers/internalversion/printers_test.go`
//! (`TestPrintPod`, `…WithRestartableInitContainer`, `…Conditions`,
//! `…NonTerminatedPod`, `TestTranslateTimestampSince`), written here as
//! facts: what the simulator's table and podbay's list both print.

use super::*;
use serde_json::{Value, json};

/// A fixed "now" for the restart and age texts.
fn now() -> Timestamp {
    "2026-11-28T12:00:00Z".parse().unwrap()
}

fn ago(seconds: i64) -> String {
    (now() - jiff::SignedDuration::from_secs(seconds)).to_string()
}

/// A ready, running container status.
fn ready(restarts: u32) -> Value {
    json!({"name": "", "image": "", "imageID": "", "ready": true, "restartCount": restarts, "state": {"running": {}}})
}

/// A status with no state, not ready.
fn idle(restarts: u32) -> Value {
    json!({"name": "", "image": "", "imageID": "", "ready": false, "restartCount": restarts})
}

fn with(mut status: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        status[k] = v.clone();
    }
    status
}

fn last_terminated(seconds_ago: i64) -> Value {
    json!({"lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(seconds_ago)}}})
}

/// `n` unnamed containers.
fn containers(n: usize) -> Value {
    Value::Array((0..n).map(|_| json!({"name": ""})).collect())
}

fn row(pod: Value) -> (String, String, String) {
    let pod: Pod = serde_json::from_value(pod).unwrap();
    let row = PodRow::from_pod(&pod);
    (
        format!("{}/{}", row.ready, row.total),
        row.status.to_string(),
        row.restarts_text(now()),
    )
}

fn case(pod: Value, expected: (&str, &str, &str), what: &str) {
    let (ready, status, restarts) = row(pod);
    assert_eq!(
        (ready.as_str(), status.as_str(), restarts.as_str()),
        expected,
        "{what}"
    );
}

fn pod(spec: Value, status: Value) -> Value {
    json!({"metadata": {"name": "test1", "namespace": "n"}, "spec": spec, "status": status})
}

#[test]
fn container_states_choose_the_status() {
    let two = json!({"containers": containers(2)});
    case(
        pod(
            two.clone(),
            json!({"phase": "podPhase", "containerStatuses": [ready(3), idle(3)]}),
        ),
        ("1/2", "podPhase", "6"),
        "the phase when nothing waits",
    );
    case(
        pod(
            two.clone(),
            json!({"phase": "podPhase", "containerStatuses": [ready(3),
            with(idle(3), json!({"state": {"waiting": {"reason": "ContainerWaitingReason"}}}))]}),
        ),
        ("1/2", "ContainerWaitingReason", "6"),
        "a waiting reason",
    );
    case(
        pod(
            two.clone(),
            json!({"phase": "podPhase", "containerStatuses": [
            with(idle(3), json!({"state": {"waiting": {"reason": "ContainerWaitingReason"}}})),
            with(idle(3), json!({"state": {"terminated": {"reason": "ContainerTerminatedReason", "exitCode": 1}}}))]}),
        ),
        ("0/2", "ContainerWaitingReason", "6"),
        "the lower index wins",
    );
    case(
        pod(
            two.clone(),
            json!({"phase": "podPhase", "containerStatuses": [ready(3),
            with(idle(3), json!({"ready": true}))]}),
        ),
        ("1/2", "podPhase", "6"),
        "ready without running does not count",
    );
    case(
        pod(
            two.clone(),
            json!({"phase": "podPhase", "reason": "podReason", "containerStatuses": [ready(3),
            with(idle(3), json!({"ready": true}))]}),
        ),
        ("1/2", "podReason", "6"),
        "the pod's reason over its phase",
    );
    let completed_and_running = json!([
        with(
            ready(3),
            json!({"state": {"terminated": {"reason": "Completed", "exitCode": 0}}})
        ),
        ready(3)
    ]);
    case(
        pod(
            two.clone(),
            json!({"phase": "Running", "containerStatuses": completed_and_running}),
        ),
        ("1/2", "NotReady", "6"),
        "completed beside running, not Ready",
    );
    case(
        pod(
            two,
            json!({"phase": "Running", "containerStatuses": completed_and_running,
            "conditions": [{"type": "Ready", "status": "True"}]}),
        ),
        ("1/2", "Running", "6"),
        "completed beside running, Ready",
    );
}

#[test]
fn init_containers_count_and_their_restarts_show_when_they_are_last() {
    let spec =
        |inits: usize| json!({"initContainers": containers(inits), "containers": containers(1)});
    let waiting = json!([with(idle(0), json!({"state": {"waiting": {}}}))]);
    let running_init = |restarts: u32, seconds: i64| {
        with(
            with(idle(restarts), json!({"state": {"running": {}}})),
            last_terminated(seconds),
        )
    };
    case(
        pod(
            spec(1),
            json!({"phase": "podPhase", "initContainerStatuses": [running_init(3, 10)],
            "containerStatuses": waiting}),
        ),
        ("0/1", "Init:0/1", "3 (10s ago)"),
        "one init running",
    );
    case(
        pod(
            spec(2),
            json!({"phase": "podPhase", "initContainerStatuses": [running_init(3, 10),
            with(idle(0), json!({"state": {"waiting": {}}}))], "containerStatuses": waiting}),
        ),
        ("0/1", "Init:0/2", "3 (10s ago)"),
        "the first of two running",
    );
    let done = |restarts: u32, last: Option<i64>| {
        let mut s = with(
            idle(restarts),
            json!({"state": {"terminated": {"exitCode": 0}}}),
        );
        if let Some(seconds) = last {
            s = with(s, last_terminated(seconds));
        }
        s
    };
    case(
        pod(
            spec(2),
            json!({"phase": "podPhase", "initContainerStatuses": [done(0, None), running_init(3, 10)],
            "containerStatuses": waiting}),
        ),
        ("0/1", "Init:1/2", "3 (10s ago)"),
        "the second of two running",
    );
    case(
        pod(
            spec(2),
            json!({"phase": "podPhase", "initContainerStatuses": [done(2, Some(120)), running_init(3, 10)],
            "containerStatuses": waiting}),
        ),
        ("0/1", "Init:1/2", "5 (10s ago)"),
        "restarts add up over init containers, the latest date shows",
    );
    case(
        pod(
            spec(1),
            json!({"phase": "Running", "initContainerStatuses": [done(2, Some(120))],
            "containerStatuses": [with(with(idle(4), json!({"state": {"running": {}}})), last_terminated(20))]}),
        ),
        ("0/1", "Running", "4 (20s ago)"),
        "init restarts are dropped once the containers run",
    );
}

#[test]
fn restarts_show_the_latest_termination() {
    let spec = |n: usize| json!({"containers": containers(n)});
    case(
        pod(
            spec(1),
            json!({"phase": "Running", "containerStatuses": [with(ready(3), last_terminated(5 * 86400))]}),
        ),
        ("1/1", "Running", "3 (5d ago)"),
        "five days",
    );
    case(
        pod(
            spec(2),
            json!({"phase": "Running", "containerStatuses": [ready(0), with(ready(3), last_terminated(10 * 86400))]}),
        ),
        ("2/2", "Running", "3 (10d ago)"),
        "ten days",
    );
    case(
        pod(
            spec(2),
            json!({"phase": "Running", "containerStatuses": [
            with(ready(6), last_terminated(5 * 86400)), with(ready(3), last_terminated(20 * 86400))]}),
        ),
        ("2/2", "Running", "9 (5d ago)"),
        "the latest date wins",
    );
}

#[test]
fn gates_endings_and_deletion() {
    case(
        pod(
            json!({"containers": containers(2)}),
            json!({"phase": "podPhase",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
        ),
        ("0/2", "SchedulingGated", "0"),
        "scheduling gates",
    );
    let one = json!({"containers": containers(1)});
    let completed = json!([with(
        idle(0),
        json!({"state": {"terminated": {"reason": "Completed", "exitCode": 0}}})
    )]);
    case(
        pod(
            one.clone(),
            json!({"phase": "Succeeded", "containerStatuses": completed}),
        ),
        ("0/1", "Completed", "0"),
        "succeeded",
    );
    case(
        pod(
            one.clone(),
            json!({"phase": "Failed", "containerStatuses": [
            with(idle(0), json!({"state": {"terminated": {"reason": "Error", "exitCode": 1}}}))]}),
        ),
        ("0/1", "Error", "0"),
        "failed",
    );
    let deleting = |phase: &str, statuses: Value, reason: Option<&str>| {
        let mut p = pod(
            one.clone(),
            json!({"phase": phase, "containerStatuses": statuses}),
        );
        p["metadata"]["deletionTimestamp"] = json!(ago(0));
        if let Some(reason) = reason {
            p["status"]["reason"] = json!(reason);
        }
        p
    };
    case(
        deleting("Succeeded", completed, None),
        ("0/1", "Completed", "0"),
        "an ended pod being deleted is not Terminating",
    );
    case(
        deleting(
            "Running",
            json!([with(idle(0), json!({"state": {"running": {}}}))]),
            None,
        ),
        ("0/1", "Terminating", "0"),
        "a running pod being deleted",
    );
    case(
        deleting("Pending", json!([]), None),
        ("0/1", "Terminating", "0"),
        "a pending pod being deleted",
    );
    case(
        deleting("Running", json!([ready(0)]), Some("NodeLost")),
        ("1/1", "Unknown", "0"),
        "a lost node",
    );
}

#[test]
fn signals_and_exit_codes_without_a_reason() {
    let spec = json!({"initContainers": containers(1), "containers": containers(1)});
    let terminated = |state: Value| with(idle(0), json!({"state": {"terminated": state}}));
    case(
        pod(
            spec.clone(),
            json!({"phase": "Pending", "initContainerStatuses": [terminated(json!({"exitCode": 137, "signal": 9}))]}),
        ),
        ("0/1", "Init:Signal:9", "0"),
        "an init container killed",
    );
    case(
        pod(
            spec,
            json!({"phase": "Pending", "initContainerStatuses": [terminated(json!({"exitCode": 3}))]}),
        ),
        ("0/1", "Init:ExitCode:3", "0"),
        "an init container failed",
    );
    let one = json!({"containers": containers(1)});
    case(
        pod(
            one.clone(),
            json!({"phase": "Running", "containerStatuses": [terminated(json!({"exitCode": 137, "signal": 9}))]}),
        ),
        ("0/1", "Signal:9", "0"),
        "a container killed",
    );
    case(
        pod(
            one,
            json!({"phase": "Running", "containerStatuses": [terminated(json!({"exitCode": 2}))]}),
        ),
        ("0/1", "ExitCode:2", "0"),
        "a container failed",
    );
}

#[test]
fn sidecars_count_towards_ready_and_restarts() {
    let sidecar = |name: &str| json!({"name": name, "restartPolicy": "Always"});
    let spec =
        json!({"initContainers": [sidecar("ri1"), sidecar("ri2")], "containers": containers(1)});
    let waiting = json!([with(idle(0), json!({"state": {"waiting": {}}}))]);
    let running = |name: &str, started: bool, restarts: u32| {
        with(
            idle(restarts),
            json!({"name": name, "started": started, "state": {"running": {}}}),
        )
    };
    case(
        pod(
            spec.clone(),
            json!({"phase": "Pending",
            "initContainerStatuses": [with(running("ri1", false, 3), last_terminated(10)),
                with(idle(0), json!({"name": "ri2", "started": false, "state": {"waiting": {}}}))],
            "containerStatuses": waiting, "conditions": [{"type": "Initialized", "status": "False"}]}),
        ),
        ("0/3", "Init:0/2", "3 (10s ago)"),
        "the first sidecar not started",
    );
    case(
        pod(
            spec.clone(),
            json!({"phase": "Pending",
            "initContainerStatuses": [with(running("ri1", true, 3), last_terminated(10)), running("ri2", false, 0)],
            "containerStatuses": waiting, "conditions": [{"type": "Initialized", "status": "False"}]}),
        ),
        ("0/3", "Init:1/2", "3 (10s ago)"),
        "the first sidecar started",
    );
    case(
        pod(
            spec,
            json!({"phase": "Running",
            "initContainerStatuses": [with(running("ri1", true, 3), last_terminated(10)), running("ri2", true, 0)],
            "containerStatuses": [with(ready(4), last_terminated(20))],
            "conditions": [{"type": "Initialized", "status": "True"}]}),
        ),
        ("1/3", "Running", "7 (10s ago)"),
        "sidecars running, not ready; their restarts stay",
    );
}

#[test]
fn ages_read_as_kubectls() {
    let at = |offset: jiff::SignedDuration| human_duration(offset);
    let secs = jiff::SignedDuration::from_secs;
    assert_eq!(at(jiff::SignedDuration::from_millis(-2100)), "<invalid>");
    assert_eq!(at(jiff::SignedDuration::from_millis(-1900)), "0s");
    assert_eq!(at(secs(0)), "0s");
    assert_eq!(at(secs(30)), "30s");
    assert_eq!(at(secs(5 * 60)), "5m");
    assert_eq!(at(secs(100 * 60)), "100m");
    assert_eq!(at(secs(2 * 86400)), "2d");
    assert_eq!(at(secs(90 * 86400)), "90d");
    assert_eq!(at(secs(3650 * 86400)), "10y");
}

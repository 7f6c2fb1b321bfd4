//! kubectl's columns for each kind, in the cases its printer's tests
//! (`TestPrintDeployment`, `TestPrintJob`, `TestPrintCronJob`, …) cover.

use super::*;
use serde_json::json;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn row(kind: WorkloadKind, object: Value) -> WorkloadRow {
    let mut object = object;
    object["metadata"] =
        json!({"name": "w", "namespace": "shop", "creationTimestamp": "2026-11-01T00:00:00Z"});
    WorkloadRow::from_object(kind, &object)
}

#[test]
fn a_deployment_is_ready_of_its_replicas_defaulted_to_one() {
    let deployment = row(
        WorkloadKind::Deployment,
        json!({"spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}},
               "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}),
    );
    let now = at("2026-11-02T00:00:00Z");
    assert_eq!(deployment.texts(now), ["2/3", "3", "2"]);
    assert_eq!(deployment.standing, Standing::Short);
    assert_eq!(deployment.selector.to_string(), "app=web");
    // No replicas written (the apiserver's default) and nothing reported yet.
    let fresh = row(WorkloadKind::Deployment, json!({"spec": {}}));
    assert_eq!(fresh.texts(now), ["0/1", "0", "0"]);
    let sts = row(
        WorkloadKind::StatefulSet,
        json!({"spec": {"replicas": 1}, "status": {"readyReplicas": 1}}),
    );
    assert_eq!(
        (sts.texts(now), sts.standing),
        (vec!["1/1".to_string()], Standing::Fine)
    );
    let rs = row(
        WorkloadKind::ReplicaSet,
        json!({"spec": {"replicas": 5}, "status": {"replicas": 5, "readyReplicas": 4}}),
    );
    assert_eq!(rs.texts(now), ["5", "5", "4"]);
}

#[test]
fn a_daemon_set_counts_nodes_and_prints_its_node_selector_sorted() {
    let ds = row(
        WorkloadKind::DaemonSet,
        json!({"spec": {"template": {"spec": {"nodeSelector": {"zone": "b", "kubernetes.io/os": "linux"},
                    "containers": [{"name": "shipper", "image": "fluent/fluent-bit:3.1"}]}}},
               "status": {"desiredNumberScheduled": 4, "currentNumberScheduled": 4, "numberReady": 3,
                          "updatedNumberScheduled": 4, "numberAvailable": 3}}),
    );
    assert_eq!(
        ds.texts(at("2026-11-02T00:00:00Z")),
        ["4", "4", "3", "4", "3", "kubernetes.io/os=linux,zone=b"]
    );
    assert_eq!(
        (ds.containers.as_str(), ds.images.as_str()),
        ("shipper", "fluent/fluent-bit:3.1")
    );
    let none = row(
        WorkloadKind::DaemonSet,
        json!({"spec": {"template": {"spec": {}}}}),
    );
    assert_eq!(none.texts(at("2026-11-02T00:00:00Z"))[5], "<none>");
}

/// printJob: the first condition that holds names it; completions of the
/// spec's, or of one (and of the parallelism when more than one run);
/// the duration to completion, or so far.
#[test]
fn a_job_reads_as_print_job_prints_it() {
    let now = at("2026-11-02T00:10:00Z");
    let done = row(
        WorkloadKind::Job,
        json!({"spec": {"completions": 1},
               "status": {"succeeded": 1, "startTime": "2026-11-02T00:00:00Z", "completionTime": "2026-11-02T00:03:20Z",
                          "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}}),
    );
    assert_eq!(done.texts(now), ["Complete", "1/1", "3m20s"]);
    let failed = row(
        WorkloadKind::Job,
        json!({"spec": {"parallelism": 2},
               "status": {"failed": 7, "startTime": "2026-11-02T00:00:00Z",
                          "conditions": [{"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}]}}),
    );
    assert_eq!(failed.texts(now), ["Failed", "0/1 of 2", "10m"]);
    assert_eq!(failed.standing, Standing::Failed);
    let running = row(WorkloadKind::Job, json!({"spec": {}, "status": {}}));
    assert_eq!(running.texts(now), ["Running", "0/1", ""]);
    let suspended = row(
        WorkloadKind::Job,
        json!({"spec": {"completions": 3}, "status": {"succeeded": 1,
               "conditions": [{"type": "Suspended", "status": "True"}, {"type": "Complete", "status": "False"}]}}),
    );
    assert_eq!(suspended.texts(now)[..2], ["Suspended", "1/3"]);
}

#[test]
fn a_cron_job_reads_as_print_cron_job_prints_it() {
    let now = at("2026-11-02T06:00:00Z");
    let cron = row(
        WorkloadKind::CronJob,
        json!({"spec": {"schedule": "0 2 * * *", "suspend": false,
                        "jobTemplate": {"spec": {"template": {"metadata": {"labels": {"app": "report"}}}}}},
               "status": {"active": [{"name": "a"}], "lastScheduleTime": "2026-11-02T02:00:00Z"}}),
    );
    assert_eq!(cron.texts(now), ["0 2 * * *", "<none>", "False", "1", "4h"]);
    assert_eq!(cron.selector.to_string(), "app=report");
    let unset = row(
        WorkloadKind::CronJob,
        json!({"spec": {"schedule": "*/5 * * * *", "timeZone": "Etc/UTC"}}),
    );
    assert_eq!(
        unset.texts(now),
        ["*/5 * * * *", "Etc/UTC", "<unset>", "0", "<none>"]
    );
}

#[test]
fn kubectls_words_name_the_kinds() {
    for kind in WorkloadKind::ALL {
        for word in [kind.short(), kind.plural(), &kind.kind().to_lowercase()] {
            assert_eq!(WorkloadKind::from_word(word), Some(kind), "{word}");
        }
    }
    assert_eq!(WorkloadKind::from_word("svc"), None);
}

/// A name or a cell from the cluster is shown, never obeyed.
#[test]
fn server_text_is_sanitized() {
    let cron = row(
        WorkloadKind::CronJob,
        json!({"spec": {"schedule": "0 2 * * *\u{1b}[2J", "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "r\u{7}", "image": "x"}]}}}}}}),
    );
    assert!(!cron.texts(at("2026-11-02T06:00:00Z"))[0].contains('\u{1b}'));
    assert!(!cron.containers.contains('\u{7}'));
}

use serde_json::json;

use super::*;

fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

fn line<'a>(lines: &'a [String], key: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.trim_start().starts_with(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key}: in {lines:#?}"))
}

fn value<'a>(lines: &'a [String], key: &str) -> &'a str {
    line(lines, key)
        .trim_start()
        .trim_start_matches(&format!("{key}:"))
        .trim()
}

fn storefront() -> Value {
    json!({
        "metadata": {"name": "storefront", "namespace": "shop",
            "creationTimestamp": "2026-11-29T11:00:00Z",
            "labels": {"app.kubernetes.io/name": "storefront"},
            "annotations": {"deployment.kubernetes.io/revision": "2",
                "kubectl.kubernetes.io/last-applied-configuration": "{\"huge\": true}"}},
        "spec": {"replicas": 3,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "storefront"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "template": {"metadata": {"labels": {"app.kubernetes.io/name": "storefront"}},
                "spec": {"containers": [{"name": "web", "image": "registry.example/storefront:2.4",
                    "ports": [{"containerPort": 8080, "name": "http"}]}]}}},
        "status": {"replicas": 3, "updatedReplicas": 3, "availableReplicas": 2,
            "unavailableReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}
    })
}

#[test]
fn a_deployment_reads_as_kubectl_describes_it() {
    let pods = [
        PodRow {
            node: "node-1".into(),
            ..PodRow::new("shop", "storefront-7d9-a")
        },
        PodRow {
            ready: 0,
            status: "CrashLoopBackOff".into(),
            restarts: 4,
            ..PodRow::new("shop", "storefront-7d9-b")
        },
    ];
    let pods: Vec<&PodRow> = pods.iter().collect();
    let events = [EventRow {
        reason: "ScalingReplicaSet".into(),
        message: "Scaled up replica set storefront-7d9 to 3".into(),
        source: "deployment-controller".into(),
        last_seen: Some("2026-11-29T11:58:00Z".parse().unwrap()),
        count: 1,
        ..EventRow::default()
    }];
    let lines = describe_workload(
        WorkloadKind::Deployment,
        &storefront(),
        &pods,
        &events,
        now(),
    );
    assert_eq!(value(&lines, "Name"), "storefront");
    assert_eq!(
        value(&lines, "CreationTimestamp"),
        "Sun, 29 Nov 2026 11:00:00 +0000"
    );
    assert_eq!(
        value(&lines, "Selector"),
        "app.kubernetes.io/name=storefront"
    );
    assert_eq!(
        value(&lines, "Replicas"),
        "3 desired | 3 updated | 3 total | 2 available | 1 unavailable"
    );
    assert_eq!(
        value(&lines, "RollingUpdateStrategy"),
        "25% max unavailable, 1 max surge",
        "a number as a number, an unset field as the default"
    );
    assert_eq!(
        value(&lines, "Annotations"),
        "deployment.kubernetes.io/revision: 2"
    );
    assert!(!lines.iter().any(|l| l.contains("huge")), "{lines:#?}");
    // The template's container: what it runs, no state of its own.
    assert_eq!(value(&lines, "Image"), "registry.example/storefront:2.4");
    assert_eq!(value(&lines, "Port"), "8080/TCP");
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("State:") || l.contains("Restart Count")),
        "{lines:#?}"
    );
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle} in {lines:#?}"))
    };
    assert!(at("Pod Template:") < at("Conditions:"));
    assert!(
        lines[at("Available")].contains("True")
            && lines[at("Available")].contains("MinimumReplicasAvailable")
    );
    assert!(at("Conditions:") < at("Pods:") && at("Pods:") < at("Events:"));
    assert!(lines[at("storefront-7d9-b")].contains("0/1"));
    assert!(lines[at("storefront-7d9-b")].contains("CrashLoopBackOff"));
    assert!(lines[at("Scaled up replica set")].contains("ScalingReplicaSet"));
    assert!(lines[at("Scaled up replica set")].contains("2m"));
}

#[test]
fn a_job_counts_its_pods_and_its_duration() {
    let job = json!({
        "metadata": {"name": "reindex-orders", "namespace": "shop",
            "ownerReferences": [{"kind": "CronJob", "name": "nightly", "controller": true}]},
        "spec": {"completions": 1, "backoffLimit": 2,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}},
            "template": {"spec": {"containers": [{"name": "reindex", "image": "busybox"}]}}},
        "status": {"startTime": "2026-11-29T11:50:00Z", "failed": 3, "active": 0,
            "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}
    });
    let lines = describe_workload(WorkloadKind::Job, &job, &[], &[], now());
    assert_eq!(value(&lines, "Controlled By"), "CronJob/nightly");
    assert_eq!(value(&lines, "Parallelism"), "1");
    assert_eq!(value(&lines, "Completions"), "1");
    assert_eq!(value(&lines, "Backoff Limit"), "2");
    assert_eq!(value(&lines, "Duration"), "10m", "running until now");
    assert_eq!(
        value(&lines, "Pods Statuses"),
        "0 Active (0 Ready) / 0 Succeeded / 3 Failed"
    );
    assert_eq!(value(&lines, "Pods"), "none in the pod list");
    assert!(lines.iter().any(|l| l.contains("BackoffLimitExceeded")));
    assert_eq!(value(&lines, "Events"), "<none>");
}

#[test]
fn a_cron_job_shows_its_schedule_and_its_jobs_template() {
    let cron = json!({
        "metadata": {"name": "nightly-report", "namespace": "shop"},
        "spec": {"schedule": "0 3 * * *", "suspend": true,
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [
                {"name": "report", "image": "registry.example/report:1"}]}}}}},
        "status": {"lastScheduleTime": "2026-11-29T03:00:00Z",
            "active": [{"name": "nightly-report-29400"}]}
    });
    let lines = describe_workload(WorkloadKind::CronJob, &cron, &[], &[], now());
    assert_eq!(value(&lines, "Schedule"), "0 3 * * *");
    assert_eq!(value(&lines, "Concurrency Policy"), "Allow");
    assert_eq!(value(&lines, "Suspend"), "True");
    assert_eq!(value(&lines, "Successful Job History Limit"), "3");
    assert_eq!(
        value(&lines, "Last Schedule Time"),
        "Sun, 29 Nov 2026 03:00:00 +0000"
    );
    assert_eq!(value(&lines, "Active Jobs"), "nightly-report-29400");
    assert_eq!(value(&lines, "Image"), "registry.example/report:1");
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("Selector:") || l.starts_with("Pods:")),
        "a CronJob has neither: {lines:#?}"
    );
}

#[test]
fn server_text_cannot_reach_the_terminal() {
    let mut object = storefront();
    object["metadata"]["labels"]["evil"] = json!("\u{1b}]52;c;AAAA\u{7}x");
    object["status"]["conditions"][0]["reason"] = json!("\u{1b}[2J");
    let lines = describe_workload(WorkloadKind::Deployment, &object, &[], &[], now());
    assert!(
        lines
            .iter()
            .all(|l| !l.contains('\u{1b}') && !l.contains('\u{7}')),
        "{lines:#?}"
    );
}

//! The workload views and the pod list narrowed to a workload's pods.

use super::*;
use crate::model::workload::{WorkloadKind, WorkloadRow};

fn command(a: &mut App, text: &str) {
    a.update(key(':'));
    for c in text.chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
}

/// `kind`'s view over every namespace, with `objects` (their JSON, less
/// their metadata's age).
fn on(kind: WorkloadKind, objects: Vec<serde_json::Value>) -> App {
    let (mut a, _) = app(true);
    a.update(listed(vec![
        crate::model::PodRow {
            labels: "app=storefront".into(),
            ..row("shop", "storefront-1", "Running")
        },
        crate::model::PodRow {
            labels: "app=storefront".into(),
            ..row("shop", "storefront-2", "Running")
        },
        row("shop", "cart-1", "Running"),
    ]));
    command(&mut a, kind.short());
    let created = a
        .now
        .checked_sub(jiff::SignedDuration::from_hours(41 * 24))
        .unwrap();
    let rows = objects
        .into_iter()
        .map(|mut object| {
            object["metadata"]["creationTimestamp"] = created.to_string().into();
            WorkloadRow::from_object(kind, &object)
        })
        .collect();
    a.update(Event::Workloads(Feed::Listed { scope: None, rows }));
    a
}

/// Deployments: READY, UP-TO-DATE, AVAILABLE; one short of its replicas.
/// Enter narrows the pod list to its pods, the header naming it.
#[test]
fn deployments_view() {
    let deployment = |ns: &str, name: &str, replicas: i64, ready: i64| {
        serde_json::json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}},
            "status": {"readyReplicas": ready, "updatedReplicas": replicas, "availableReplicas": ready},
        })
    };
    let mut a = on(
        WorkloadKind::Deployment,
        vec![
            deployment("shop", "storefront", 2, 2),
            deployment("shop", "cart", 2, 1),
            deployment("payments", "payments-api", 2, 2),
        ],
    );
    assert_snapshot("deployments_view_80x24", &render(&a, 80, 24));
    assert_snapshot("deployments_view_250x60", &render(&a, 250, 60));
    // `D` on cart (the second row): loading, then kubectl's describe.
    a.update(code(KeyCode::Down));
    let effects = a.update(key('D'));
    let [crate::app::Effect::ReadObject { cluster, object }] = effects.as_slice() else {
        panic!("one read: {effects:?}")
    };
    assert_snapshot("deployment_describe_loading_80x24", &render(&a, 80, 24));
    let mut cart = deployment("shop", "cart", 2, 1);
    cart["spec"]["template"] = serde_json::json!({
        "metadata": {"labels": {"app": "cart"}},
        "spec": {"containers": [{"name": "cart", "image": "ghcr.io/podbay/cart:1.8.0",
            "ports": [{"containerPort": 8080, "name": "http"}]}]}});
    cart["status"]["conditions"] = serde_json::json!([
        {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"}]);
    a.update(Event::ObjectRead {
        cluster: cluster.clone(),
        object: object.clone(),
        read: Ok(crate::app::object_page::ObjectRead {
            object: cart,
            events: vec![],
        }),
    });
    assert_snapshot("deployment_describe_80x24", &render(&a, 80, 24));
    a.update(code(KeyCode::Esc));
    a.update(code(KeyCode::Up));
    for _ in 0..2 {
        a.update(code(KeyCode::Down));
    }
    a.update(code(KeyCode::Enter));
    assert_snapshot("deployment_pods_80x24", &render(&a, 80, 24));
}

/// DaemonSets at 80 columns: NODE SELECTOR and UP-TO-DATE give way.
#[test]
fn daemon_sets_view() {
    let a = on(
        WorkloadKind::DaemonSet,
        vec![serde_json::json!({
            "metadata": {"name": "log-shipper", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"app": "log-shipper"}},
                     "template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}}}},
            "status": {"desiredNumberScheduled": 4, "currentNumberScheduled": 4, "numberReady": 3,
                       "updatedNumberScheduled": 4, "numberAvailable": 3},
        })],
    );
    assert_snapshot("daemon_sets_view_80x24", &render(&a, 80, 24));
    assert_snapshot("daemon_sets_view_250x60", &render(&a, 250, 60));
}

/// Jobs: a complete one, a failed one (red), one running; and CronJobs.
#[test]
fn jobs_and_cron_jobs_views() {
    let start = "2026-01-01T00:00:00Z";
    let job = |name: &str, condition: Option<&str>, end: Option<&str>| {
        let mut job = serde_json::json!({
            "metadata": {"name": name, "namespace": "batch"},
            "spec": {"completions": 1, "selector": {"matchLabels": {"job-name": name}}},
            "status": {"startTime": start, "succeeded": i64::from(condition == Some("Complete"))},
        });
        if let Some(condition) = condition {
            job["status"]["conditions"] =
                serde_json::json!([{"type": condition, "status": "True"}]);
        }
        if let Some(end) = end {
            job["status"]["completionTime"] = end.into();
        }
        job
    };
    let jobs = on(
        WorkloadKind::Job,
        vec![
            job(
                "nightly-report-29121440",
                Some("Complete"),
                Some("2026-01-01T00:04:04Z"),
            ),
            job("reindex-orders", Some("Failed"), None),
            job("search-migrate", None, None),
        ],
    );
    assert_snapshot("jobs_view_80x24", &render(&jobs, 80, 24));
    let cron_jobs = on(
        WorkloadKind::CronJob,
        vec![serde_json::json!({
            "metadata": {"name": "nightly-report", "namespace": "batch"},
            "spec": {"schedule": "0 22 * * *", "suspend": false},
            "status": {"lastScheduleTime": start},
        })],
    );
    assert_snapshot("cron_jobs_view_80x24", &render(&cron_jobs, 80, 24));
    assert_snapshot("cron_jobs_view_250x60", &render(&cron_jobs, 250, 60));
}

/// A kind the user may not list: the refusal, whole at 80 columns.
#[test]
fn a_refused_workload_view_says_why_whole() {
    let (mut a, _) = app(false);
    command(&mut a, "deploy");
    a.update(Event::Workloads(Feed::Forbidden(
        crate::model::problem::Denied {
            verb: "list".into(),
            resource: "deployments".into(),
            namespace: Some("shop".into()),
        },
    )));
    assert_snapshot("deployments_refused_80x24", &render(&a, 80, 24));
}

/// Thousands of rows: only the window on screen is written out, and the
/// columns stay where they are as the list scrolls (the widest name of
/// all rows sets NAME's width, wherever it is).
#[test]
fn a_long_view_scrolls_with_its_columns_in_place() {
    let objects = (0..3000)
        .map(|i| {
            let name = match i {
                2999 => "a-deployment-with-a-long-name-at-the-end".to_string(),
                i => format!("svc-{i:04}"),
            };
            serde_json::json!({"metadata": {"name": name, "namespace": "shop"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}}})
        })
        .collect();
    let mut a = on(WorkloadKind::Deployment, objects);
    let header = |a: &App| {
        let text = render(a, 120, 30);
        let line = text.lines().nth(2).unwrap_or_default().to_string();
        (line.find("READY"), text)
    };
    let (top, _) = header(&a);
    a.update(key('G'));
    let (bottom, text) = header(&a);
    assert!(top.is_some() && top == bottom, "{top:?} {bottom:?}\n{text}");
    // Sorted by name: the long one is not last; the last is svc-2998.
    assert!(
        text.contains("svc-2998") && !text.contains("svc-0000"),
        "{text}"
    );
}

//! A workload as `kubectl describe` lays it out: its metadata, the counts
//! its kind's controller keeps, its pod template, conditions and events,
//! and the pods of it in the pod list with their state. Plain lines, every
//! one safe to print.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::PodRow;
use super::describe::{Described, Sheet, rfc1123};
use super::detail::EventRow;
use super::owner::spec_selector;
use super::workload::WorkloadKind;

/// The lines of `kubectl describe KIND`, with `events` oldest first and
/// `pods` those of the pod list its selector matches.
pub fn describe_workload(
    kind: WorkloadKind,
    object: &Value,
    pods: &[&PodRow],
    events: &[EventRow],
    now: Timestamp,
) -> Vec<String> {
    let mut out = Sheet::default();
    let meta = at(object, "metadata");
    let (spec, status) = (at(object, "spec"), at(object, "status"));
    out.pair(0, "Name", text(at(meta, "name")));
    out.pair(0, "Namespace", text(at(meta, "namespace")));
    if let Some(created) = at(meta, "creationTimestamp")
        .as_str()
        .and_then(|t| t.parse().ok())
    {
        out.pair(0, "CreationTimestamp", &rfc1123(created));
    }
    let labels = strings(at(meta, "labels"));
    out.map(0, "Labels", labels.iter().map(|(k, v)| (k, v)), "=");
    let annotations = strings(at(meta, "annotations"));
    let shown = annotations
        .iter()
        .filter(|(k, _)| k != "kubectl.kubernetes.io/last-applied-configuration")
        .map(|(k, v)| (k, v));
    out.map(0, "Annotations", shown, ": ");
    if kind != WorkloadKind::CronJob {
        let selector = spec_selector(object).unwrap_or_else(|| "<none>".into());
        out.pair(0, "Selector", &selector);
    }
    if let Some(owner) = at(meta, "ownerReferences")
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| at(o, "controller").as_bool() == Some(true))
    {
        let by = format!("{}/{}", text(at(owner, "kind")), text(at(owner, "name")));
        out.pair(0, "Controlled By", &by);
    }
    let count = |v: &Value| v.as_i64().unwrap_or(0);
    let desired = at(spec, "replicas").as_i64().unwrap_or(1);
    match kind {
        WorkloadKind::Deployment => {
            out.pair(
                0,
                "Replicas",
                &format!(
                    "{desired} desired | {} updated | {} total | {} available | {} unavailable",
                    count(at(status, "updatedReplicas")),
                    count(at(status, "replicas")),
                    count(at(status, "availableReplicas")),
                    count(at(status, "unavailableReplicas")),
                ),
            );
            let strategy = at(spec, "strategy");
            let strategy_type = at(strategy, "type").as_str().unwrap_or("RollingUpdate");
            out.pair(0, "StrategyType", strategy_type);
            out.pair(
                0,
                "MinReadySeconds",
                &count(at(spec, "minReadySeconds")).to_string(),
            );
            if strategy_type == "RollingUpdate" {
                let rolling = at(strategy, "rollingUpdate");
                out.pair(
                    0,
                    "RollingUpdateStrategy",
                    &format!(
                        "{} max unavailable, {} max surge",
                        int_or_string(at(rolling, "maxUnavailable"), "25%"),
                        int_or_string(at(rolling, "maxSurge"), "25%")
                    ),
                );
            }
        }
        WorkloadKind::StatefulSet => {
            out.pair(
                0,
                "Replicas",
                &format!(
                    "{desired} desired | {} total",
                    count(at(status, "replicas"))
                ),
            );
            let strategy = at(at(spec, "updateStrategy"), "type")
                .as_str()
                .unwrap_or("RollingUpdate");
            out.pair(0, "Update Strategy", strategy);
            if strategy == "RollingUpdate" {
                let partition = count(at(
                    at(at(spec, "updateStrategy"), "rollingUpdate"),
                    "partition",
                ));
                out.pair(2, "Partition", &partition.to_string());
            }
            out.pair(
                0,
                "Ready Replicas",
                &count(at(status, "readyReplicas")).to_string(),
            );
        }
        WorkloadKind::DaemonSet => {
            let node_selector = strings(at(at(at(spec, "template"), "spec"), "nodeSelector"));
            out.map(
                0,
                "Node-Selector",
                node_selector.iter().map(|(k, v)| (k, v)),
                "=",
            );
            for (key, field) in [
                (
                    "Desired Number of Nodes Scheduled",
                    "desiredNumberScheduled",
                ),
                (
                    "Current Number of Nodes Scheduled",
                    "currentNumberScheduled",
                ),
                (
                    "Number of Nodes Scheduled with Up-to-date Pods",
                    "updatedNumberScheduled",
                ),
                (
                    "Number of Nodes Scheduled with Available Pods",
                    "numberAvailable",
                ),
                ("Number of Nodes Misscheduled", "numberMisscheduled"),
            ] {
                out.pair(0, key, &count(at(status, field)).to_string());
            }
        }
        WorkloadKind::ReplicaSet => {
            out.pair(
                0,
                "Replicas",
                &format!(
                    "{} current / {desired} desired",
                    count(at(status, "replicas"))
                ),
            );
        }
        WorkloadKind::Job => job(&mut out, spec, status, now),
        WorkloadKind::CronJob => {
            out.pair(0, "Schedule", text(at(spec, "schedule")));
            if let Some(zone) = at(spec, "timeZone").as_str() {
                out.pair(0, "Time Zone", zone);
            }
            let policy = at(spec, "concurrencyPolicy").as_str().unwrap_or("Allow");
            out.pair(0, "Concurrency Policy", policy);
            let suspend = at(spec, "suspend").as_bool().unwrap_or(false);
            out.pair(0, "Suspend", if suspend { "True" } else { "False" });
            for (key, field, default) in [
                (
                    "Successful Job History Limit",
                    "successfulJobsHistoryLimit",
                    "3",
                ),
                ("Failed Job History Limit", "failedJobsHistoryLimit", "1"),
                (
                    "Starting Deadline Seconds",
                    "startingDeadlineSeconds",
                    "<unset>",
                ),
            ] {
                let value = at(spec, field).as_i64().map(|n| n.to_string());
                out.pair(0, key, value.as_deref().unwrap_or(default));
            }
            let last = at(status, "lastScheduleTime")
                .as_str()
                .and_then(|t| t.parse().ok())
                .map_or_else(|| "<unset>".to_string(), rfc1123);
            out.pair(0, "Last Schedule Time", &last);
            let active: Vec<String> = at(status, "active")
                .as_array()
                .into_iter()
                .flatten()
                .map(|j| text(at(j, "name")).to_string())
                .collect();
            out.pair(
                0,
                "Active Jobs",
                &if active.is_empty() {
                    "<none>".to_string()
                } else {
                    active.join(", ")
                },
            );
        }
    }
    let template = match kind {
        WorkloadKind::CronJob => at(at(at(spec, "jobTemplate"), "spec"), "template"),
        _ => at(spec, "template"),
    };
    pod_template(&mut out, template);
    let conditions = at(status, "conditions").as_array().into_iter().flatten();
    let mut rows = vec![
        ["Type", "Status", "Reason"].map(String::from).to_vec(),
        ["----", "------", "------"].map(String::from).to_vec(),
    ];
    rows.extend(conditions.map(|c| {
        vec![
            text(at(c, "type")).to_string(),
            text(at(c, "status")).to_string(),
            text(at(c, "reason")).to_string(),
        ]
    }));
    if rows.len() > 2 {
        out.heading(0, "Conditions");
        out.table(2, rows);
    }
    if kind != WorkloadKind::CronJob {
        pod_rows(&mut out, pods);
    }
    out.events(events, now);
    out.finish()
}

/// A Job's counts and times, as kubectl's `describeJob`.
fn job(out: &mut Sheet, spec: &Value, status: &Value, now: Timestamp) {
    let count = |v: &Value| v.as_i64().unwrap_or(0);
    let number =
        |v: &Value, default: &str| v.as_i64().map_or(default.to_string(), |n| n.to_string());
    out.pair(0, "Parallelism", &number(at(spec, "parallelism"), "1"));
    out.pair(
        0,
        "Completions",
        &number(at(spec, "completions"), "<unset>"),
    );
    let mode = at(spec, "completionMode").as_str().unwrap_or("NonIndexed");
    out.pair(0, "Completion Mode", mode);
    let suspend = at(spec, "suspend").as_bool().unwrap_or(false);
    out.pair(0, "Suspend", if suspend { "true" } else { "false" });
    out.pair(0, "Backoff Limit", &number(at(spec, "backoffLimit"), "6"));
    let time = |v: &Value| v.as_str().and_then(|t| t.parse::<Timestamp>().ok());
    let started = time(at(status, "startTime"));
    if let Some(started) = started {
        out.pair(0, "Start Time", &rfc1123(started));
    }
    let completed = time(at(status, "completionTime"));
    if let Some(completed) = completed {
        out.pair(0, "Completed At", &rfc1123(completed));
    }
    if let Some(started) = started {
        let until = completed.unwrap_or(now);
        out.pair(
            0,
            "Duration",
            &super::age::human_duration(until.duration_since(started)),
        );
    }
    if let Some(deadline) = at(spec, "activeDeadlineSeconds").as_i64() {
        out.pair(0, "Active Deadline Seconds", &format!("{deadline}s"));
    }
    out.pair(
        0,
        "Pods Statuses",
        &format!(
            "{} Active ({} Ready) / {} Succeeded / {} Failed",
            count(at(status, "active")),
            count(at(status, "ready")),
            count(at(status, "succeeded")),
            count(at(status, "failed"))
        ),
    );
}

/// `Pod Template:`, its labels, containers and volumes.
fn pod_template(out: &mut Sheet, template: &Value) {
    // Read as a pod, from bytes: the pod decoder every pod list already
    // uses (a template's own decoder, or one from a `Value`, would be
    // another copy of the whole PodSpec decoder in the binary).
    let as_pod =
        serde_json::json!({"metadata": at(template, "metadata"), "spec": at(template, "spec")});
    let template: Pod = serde_json::to_vec(&as_pod)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    out.heading(0, "Pod Template");
    let meta = template.metadata;
    out.map(2, "Labels", meta.labels.iter().flatten(), "=");
    let spec = template.spec.unwrap_or_default();
    if let Some(account) = spec.service_account_name.as_deref() {
        out.pair(2, "Service Account", account);
    }
    if let Some(inits) = spec.init_containers.as_ref().filter(|c| !c.is_empty()) {
        out.heading(2, "Init Containers");
        for c in inits {
            out.template_container(&Described::of(c));
        }
    }
    out.heading(2, "Containers");
    for c in &spec.containers {
        out.template_container(&Described::of(c));
    }
    match spec.volumes.as_ref().filter(|v| !v.is_empty()) {
        None => out.pair(2, "Volumes", "<none>"),
        Some(volumes) => {
            out.heading(2, "Volumes");
            for v in volumes {
                out.volume(v);
            }
        }
    }
}

/// The workload's pods as the pod list has them: what an SRE looks at next.
fn pod_rows(out: &mut Sheet, pods: &[&PodRow]) {
    if pods.is_empty() {
        out.pair(0, "Pods", "none in the pod list");
        return;
    }
    out.heading(0, "Pods");
    let mut rows = vec![
        ["Name", "Ready", "Status", "Restarts", "Node"]
            .map(String::from)
            .to_vec(),
        ["----", "-----", "------", "--------", "----"]
            .map(String::from)
            .to_vec(),
    ];
    rows.extend(pods.iter().map(|pod| {
        vec![
            pod.key.name.to_string(),
            format!("{}/{}", pod.ready, pod.total),
            pod.status.to_string(),
            pod.restarts.to_string(),
            pod.node.to_string(),
        ]
    }));
    out.table(2, rows);
}

/// `v[key]`, or null: one copy of the lookup for every field read here
/// (indexing inlines it at each of dozens of places).
#[inline(never)]
fn at<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&Value::Null)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// A map of strings, in key order.
fn strings(v: &Value) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = v
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), text(v).to_string()))
        .collect();
    pairs.sort();
    pairs
}

/// `maxSurge`-like fields: a number or a percentage, else the default.
fn int_or_string(v: &Value, default: &str) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => default.to_string(),
    }
}

#[cfg(test)]
#[path = "describe_workload_tests.rs"]
mod tests;

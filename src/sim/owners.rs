//! The workloads behind the scenario's pods, as read-only `apps/v1` and
//! `batch/v1` objects: a ReplicaSet, StatefulSet, DaemonSet or Job for each
//! pod owner; the Deployment above a ReplicaSet named
//! `<deployment>-<pod-template-hash>`, as the Deployment controller names
//! them, and the CronJob above a Job named `<cronjob>-<minutes>`, as the
//! CronJob controller names them. Their selectors are what
//! kubectl resolves `deploy/NAME` through. What their controllers do when a
//! pod goes is `controllers`.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// Gathers the owners of pods as they are loaded.
#[derive(Default)]
pub struct Owners {
    /// (namespace, ReplicaSet name) → what its pods say of it.
    replica_sets: BTreeMap<(String, String), Seen>,
    /// The same for StatefulSets, DaemonSets and Jobs.
    stateful_sets: BTreeMap<(String, String), Seen>,
    daemon_sets: BTreeMap<(String, String), Seen>,
    jobs: BTreeMap<(String, String), Seen>,
}

struct Seen {
    uid: String,
    labels: Map<String, Value>,
    template: Value,
    pods: u32,
    ready: u32,
    /// Pods that ran to their end, well or not (a Job's).
    succeeded: u32,
    failed: u32,
    /// The earliest a pod started, the latest one ended.
    started: Option<String>,
    finished: Option<String>,
}

impl Owners {
    /// Notes `pod`'s ReplicaSet, if it has one.
    pub fn observe(&mut self, pod: &Value) {
        let Some(owner) = pod["metadata"]["ownerReferences"]
            .as_array()
            .and_then(|o| o.iter().find(|r| r["controller"] == true))
        else {
            return;
        };
        let sets = match owner["kind"].as_str() {
            Some("ReplicaSet") => &mut self.replica_sets,
            Some("StatefulSet") => &mut self.stateful_sets,
            Some("DaemonSet") => &mut self.daemon_sets,
            Some("Job") => &mut self.jobs,
            _ => return,
        };
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = owner["name"].as_str().unwrap_or_default();
        let ready = super::pod_json::is_ready(pod);
        let seen = sets
            .entry((namespace.to_string(), name.to_string()))
            .or_insert_with(|| Seen {
                uid: owner["uid"].as_str().unwrap_or_default().to_string(),
                labels: pod["metadata"]["labels"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                template: json!({
                    "metadata": {"labels": pod["metadata"]["labels"]},
                    "spec": template_spec(pod),
                }),
                pods: 0,
                ready: 0,
                succeeded: 0,
                failed: 0,
                started: None,
                finished: None,
            });
        seen.pods += 1;
        seen.ready += u32::from(ready);
        let phase = pod["status"]["phase"].as_str();
        seen.succeeded += u32::from(phase == Some("Succeeded"));
        seen.failed += u32::from(phase == Some("Failed"));
        if let Some(start) = pod["status"]["startTime"].as_str()
            && seen.started.as_deref().is_none_or(|s| start < s)
        {
            seen.started = Some(start.to_string());
        }
        let ends = pod["status"]["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["state"]["terminated"]["finishedAt"].as_str());
        for end in ends {
            if seen.finished.as_deref().is_none_or(|f| end > f) {
                seen.finished = Some(end.to_string());
            }
        }
    }

    /// The ReplicaSets and Deployments, as stored objects (kind, object).
    pub fn objects(&self, created: Timestamp) -> Vec<(super::store::Kind, Value)> {
        use super::store::Kind;
        let mut objects = Vec::new();
        for ((namespace, name), seen) in &self.replica_sets {
            let hash = seen.labels.get("pod-template-hash").and_then(Value::as_str);
            let deployment = hash.and_then(|h| name.strip_suffix(&format!("-{h}")));
            let status = json!({
                "replicas": seen.pods, "updatedReplicas": seen.pods, "readyReplicas": seen.ready,
                "availableReplicas": seen.ready, "observedGeneration": 1,
            });
            let mut replica_set = json!({
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": name, "namespace": namespace, "uid": seen.uid,
                    "generation": 1, "creationTimestamp": created.to_string(),
                    "labels": seen.labels,
                },
                "spec": {
                    "replicas": seen.pods,
                    "selector": {"matchLabels": seen.labels},
                    "template": seen.template,
                },
                "status": status,
            });
            if let Some(deployment) = deployment {
                let uid = super::scenario::uid(&format!("{namespace}/{deployment}"), 5);
                replica_set["metadata"]["ownerReferences"] = json!([{
                    "apiVersion": "apps/v1", "kind": "Deployment", "name": deployment,
                    "uid": uid, "controller": true, "blockOwnerDeletion": true,
                }]);
                let mut labels = seen.labels.clone();
                labels.remove("pod-template-hash");
                let mut template = seen.template.clone();
                template["metadata"]["labels"] = json!(labels);
                let mut object = json!({
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {
                        "name": deployment, "namespace": namespace, "uid": uid,
                        "generation": 1, "creationTimestamp": created.to_string(),
                        "labels": labels,
                    },
                    "spec": {
                        "replicas": seen.pods,
                        "selector": {"matchLabels": labels},
                        "template": template,
                        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                    },
                    "status": status,
                });
                super::workload_status::deployment_conditions(&mut object, name, created);
                objects.push((Kind::Deployment, object));
            }
            objects.push((Kind::ReplicaSet, replica_set));
        }
        for ((namespace, name), seen) in &self.stateful_sets {
            // Its pods' labels, less the ones naming each pod and revision.
            let mut selector = seen.labels.clone();
            selector.retain(|k, _| {
                !k.starts_with("statefulset.kubernetes.io/")
                    && !k.starts_with("apps.kubernetes.io/")
                    && k != "controller-revision-hash"
            });
            let revision = seen
                .labels
                .get("controller-revision-hash")
                .cloned()
                .unwrap_or_default();
            let mut template = seen.template.clone();
            template["metadata"]["labels"] = json!(selector);
            objects.push((
                Kind::StatefulSet,
                json!({
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "metadata": {
                        "name": name, "namespace": namespace, "uid": seen.uid,
                        "generation": 1, "creationTimestamp": created.to_string(),
                        "labels": selector,
                    },
                    "spec": {
                        "replicas": seen.pods,
                        "selector": {"matchLabels": selector},
                        "serviceName": name,
                        "template": template,
                        "podManagementPolicy": "OrderedReady",
                        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                    },
                    "status": {
                        "replicas": seen.pods, "readyReplicas": seen.ready, "currentReplicas": seen.pods,
                        "updatedReplicas": seen.pods, "availableReplicas": seen.ready,
                        "currentRevision": revision, "updateRevision": revision, "observedGeneration": 1,
                    },
                }),
            ));
        }
        for ((namespace, name), seen) in &self.daemon_sets {
            objects.push((Kind::DaemonSet, daemon_set(namespace, name, seen, created)));
        }
        for ((namespace, name), seen) in &self.jobs {
            let job = job(namespace, name, seen, created);
            if let Some(cron_job) = cron_job_of(&job) {
                objects.push((Kind::CronJob, cron_job));
            }
            objects.push((Kind::Job, job));
        }
        objects
    }
}

/// The pod template's spec, from a pod: its containers, and the node
/// selector a DaemonSet's pods carry.
fn template_spec(pod: &Value) -> Value {
    let mut spec = json!({"containers": pod["spec"]["containers"]});
    if pod["spec"]["nodeSelector"].is_object() {
        spec["nodeSelector"] = pod["spec"]["nodeSelector"].clone();
    }
    spec
}

/// A DaemonSet whose pods run on the nodes they were found on.
fn daemon_set(namespace: &str, name: &str, seen: &Seen, created: Timestamp) -> Value {
    let mut selector = seen.labels.clone();
    selector.retain(|k, _| k != "controller-revision-hash" && k != "pod-template-generation");
    let mut template = seen.template.clone();
    template["metadata"]["labels"] = json!(selector);
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name, "namespace": namespace, "uid": seen.uid,
            "generation": 1, "creationTimestamp": created.to_string(), "labels": selector,
        },
        "spec": {
            "selector": {"matchLabels": selector},
            "template": template,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            "revisionHistoryLimit": 10,
        },
        "status": {
            "desiredNumberScheduled": seen.pods, "currentNumberScheduled": seen.pods,
            "numberReady": seen.ready, "updatedNumberScheduled": seen.pods,
            "numberAvailable": seen.ready, "numberMisscheduled": 0, "observedGeneration": 1,
        },
    })
}

/// A Job of one pod, as the Job controller reports it: complete when its
/// pod succeeded, failed (its backoff limit of 0 reached) when it failed,
/// else active.
fn job(namespace: &str, name: &str, seen: &Seen, created: Timestamp) -> Value {
    let selector = json!({"batch.kubernetes.io/controller-uid": seen.uid});
    let at = seen.finished.clone().unwrap_or_else(|| created.to_string());
    let condition = |kind: &str, reason: &str, message: &str| {
        json!({"type": kind, "status": "True", "reason": reason, "message": message,
               "lastProbeTime": at, "lastTransitionTime": at})
    };
    let mut status = json!({"startTime": seen.started, "ready": seen.ready,
                            "terminating": 0, "uncountedTerminatedPods": {}});
    if seen.succeeded > 0 {
        status["succeeded"] = json!(seen.succeeded);
        status["completionTime"] = json!(at);
        status["conditions"] = json!([
            condition(
                "SuccessCriteriaMet",
                "CompletionsReached",
                "Reached expected number of succeeded pods"
            ),
            condition(
                "Complete",
                "CompletionsReached",
                "Reached expected number of succeeded pods"
            ),
        ]);
    } else if seen.failed > 0 {
        status["failed"] = json!(seen.failed);
        status["conditions"] = json!([
            condition(
                "FailureTarget",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit"
            ),
            condition(
                "Failed",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit"
            ),
        ]);
    } else {
        status["active"] = json!(seen.pods);
    }
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name, "namespace": namespace, "uid": seen.uid,
            "generation": 1, "creationTimestamp": seen.started.clone().unwrap_or_else(|| created.to_string()),
            "labels": seen.labels,
        },
        "spec": {
            "parallelism": 1, "completions": 1, "backoffLimit": if seen.failed > 0 { 0 } else { 6 },
            "completionMode": "NonIndexed", "suspend": false, "manualSelector": false,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": selector},
            "template": seen.template,
        },
        "status": status,
    });
    if let Some(cron_job) = cron_job_name(name) {
        job["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "batch/v1", "kind": "CronJob", "name": cron_job,
            "uid": super::scenario::uid(&format!("{namespace}/{cron_job}"), 9),
            "controller": true, "blockOwnerDeletion": true,
        }]);
    }
    job
}

/// `nightly-report-29121440`: the CronJob `nightly-report` (its controller
/// names a Job by the minutes since the epoch it was scheduled at; the
/// demo's Job keeps its fixed name, so when it ran is its creation).
fn cron_job_name(job: &str) -> Option<&str> {
    let (cron_job, minutes) = job.rsplit_once('-')?;
    (minutes.len() >= 8 && minutes.bytes().all(|b| b.is_ascii_digit())).then_some(cron_job)
}

/// The CronJob that made `job`, if its name says one did: nightly at the
/// hour it last ran.
fn cron_job_of(job: &Value) -> Option<Value> {
    let name = job["metadata"]["name"].as_str()?;
    let cron_job = cron_job_name(name)?;
    let scheduled: Timestamp = job["metadata"]["creationTimestamp"]
        .as_str()?
        .parse()
        .ok()?;
    let owner = &job["metadata"]["ownerReferences"][0];
    let hour = scheduled.to_zoned(jiff::tz::TimeZone::UTC).hour();
    // Its template is the Job's less what the Job controller adds.
    let mut template = job["spec"]["template"].clone();
    if let Some(labels) = template["metadata"]["labels"].as_object_mut() {
        labels.retain(|k, _| !k.ends_with("controller-uid") && !k.ends_with("job-name"));
    }
    let mut status = json!({"lastScheduleTime": scheduled.to_string()});
    if job["status"]["succeeded"].as_i64().unwrap_or_default() > 0 {
        status["lastSuccessfulTime"] = job["status"]["completionTime"].clone();
    }
    Some(json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": cron_job, "namespace": job["metadata"]["namespace"], "uid": owner["uid"],
            "generation": 1, "creationTimestamp": job["metadata"]["creationTimestamp"],
        },
        "spec": {
            "schedule": format!("0 {hour} * * *"), "suspend": false, "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
            "jobTemplate": {"spec": {"backoffLimit": 6, "template": template}},
        },
        "status": status,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::store::Kind;

    #[test]
    fn a_deployments_selector_leaves_out_the_template_hash() {
        let mut owners = Owners::default();
        for pod in crate::sim::scenario::demo(Timestamp::now()) {
            owners.observe(&pod);
        }
        let objects = owners.objects(Timestamp::now());
        let storefront = objects
            .iter()
            .find(|(k, o)| *k == Kind::Deployment && o["metadata"]["name"] == "storefront")
            .map(|(_, o)| o)
            .expect("the storefront deployment");
        assert_eq!(
            storefront["spec"]["selector"]["matchLabels"],
            json!({"app.kubernetes.io/name": "storefront"})
        );
        assert_eq!(storefront["spec"]["replicas"], 3);
        let replica_set = objects
            .iter()
            .find(|(k, o)| {
                *k == Kind::ReplicaSet && o["metadata"]["name"] == "storefront-7d9c8b6f4"
            })
            .map(|(_, o)| o)
            .expect("its replica set");
        assert_eq!(
            replica_set["spec"]["selector"]["matchLabels"]["pod-template-hash"],
            "7d9c8b6f4"
        );
        assert_eq!(
            replica_set["metadata"]["ownerReferences"][0]["name"],
            "storefront"
        );
        assert_eq!(
            replica_set["metadata"]["ownerReferences"][0]["uid"],
            storefront["metadata"]["uid"]
        );
        // Every pod names its ReplicaSet by the same uid (kubectl describe
        // counts a ReplicaSet's pods by it).
        let uids: std::collections::BTreeSet<String> = crate::sim::scenario::demo(Timestamp::now())
            .iter()
            .filter(|p| p["metadata"]["labels"]["app.kubernetes.io/name"] == "storefront")
            .map(|p| {
                p["metadata"]["ownerReferences"][0]["uid"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(uids.len(), 1);
        assert_eq!(
            uids.first().map(String::as_str),
            replica_set["metadata"]["uid"].as_str()
        );
    }
}

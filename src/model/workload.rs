//! A workload as its view shows it: kubectl's columns for each kind (the
//! apiserver's table printer, `printDeployment` and its siblings), and the
//! selector its pods are found by in the pod list. Read from the object's
//! JSON: one untyped feed serves every kind, and the simulator prints its
//! tables from the same rows, so the two agree by construction.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::human_duration;
use super::selector::Selector;
use super::text::sanitize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    Job,
    CronJob,
}

impl WorkloadKind {
    pub const ALL: [WorkloadKind; 6] = [
        WorkloadKind::Deployment,
        WorkloadKind::StatefulSet,
        WorkloadKind::DaemonSet,
        WorkloadKind::ReplicaSet,
        WorkloadKind::Job,
        WorkloadKind::CronJob,
    ];

    /// kubectl's names for the kind: short, singular and plural.
    pub fn from_word(word: &str) -> Option<WorkloadKind> {
        WorkloadKind::ALL.into_iter().find(|kind| {
            let word = word.to_ascii_lowercase();
            word == kind.short() || word == kind.plural() || word == kind.kind().to_lowercase()
        })
    }

    pub fn kind(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
            WorkloadKind::ReplicaSet => "ReplicaSet",
            WorkloadKind::Job => "Job",
            WorkloadKind::CronJob => "CronJob",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "deployments",
            WorkloadKind::StatefulSet => "statefulsets",
            WorkloadKind::DaemonSet => "daemonsets",
            WorkloadKind::ReplicaSet => "replicasets",
            WorkloadKind::Job => "jobs",
            WorkloadKind::CronJob => "cronjobs",
        }
    }

    /// kubectl's short name, which `:` takes (`:deploy`).
    pub fn short(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "deploy",
            WorkloadKind::StatefulSet => "sts",
            WorkloadKind::DaemonSet => "ds",
            WorkloadKind::ReplicaSet => "rs",
            WorkloadKind::Job => "job",
            WorkloadKind::CronJob => "cj",
        }
    }

    /// The owner a forward follows the pods of; none for a CronJob, whose
    /// pods come and go with its Jobs.
    pub fn owner(self) -> Option<super::owner::OwnerKind> {
        use super::owner::OwnerKind;
        Some(match self {
            WorkloadKind::Deployment => OwnerKind::Deployment,
            WorkloadKind::StatefulSet => OwnerKind::StatefulSet,
            WorkloadKind::DaemonSet => OwnerKind::DaemonSet,
            WorkloadKind::ReplicaSet => OwnerKind::ReplicaSet,
            WorkloadKind::Job => OwnerKind::Job,
            WorkloadKind::CronJob => return None,
        })
    }

    pub fn group(self) -> &'static str {
        match self {
            WorkloadKind::Job | WorkloadKind::CronJob => "batch",
            _ => "apps",
        }
    }

    /// The columns between NAME and AGE, as kubectl titles them.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            WorkloadKind::Deployment => &["READY", "UP-TO-DATE", "AVAILABLE"],
            WorkloadKind::StatefulSet => &["READY"],
            WorkloadKind::DaemonSet => &[
                "DESIRED",
                "CURRENT",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "NODE SELECTOR",
            ],
            WorkloadKind::ReplicaSet => &["DESIRED", "CURRENT", "READY"],
            WorkloadKind::Job => &["STATUS", "COMPLETIONS", "DURATION"],
            WorkloadKind::CronJob => {
                &["SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE"]
            }
        }
    }
}

/// A cell that may depend on the time it is drawn at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    Text(String),
    Count(i64),
    /// How long since then (a running Job's duration, a last schedule).
    Since(Timestamp),
}

/// How a row is coloured: as it should be, short of it, or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Fine,
    Short,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadRow {
    /// The context of its cluster, when the list shows several.
    pub context: Option<std::sync::Arc<str>>,
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    /// The kind's columns (see [`WorkloadKind::columns`]).
    pub cells: Vec<Cell>,
    pub standing: Standing,
    /// What finds its pods; for a CronJob, its Jobs' pod template labels.
    pub selector: Selector,
    /// The pod template's containers and images (kubectl's wide columns).
    pub containers: String,
    pub images: String,
    /// The ports the pod template's containers declare (what `F` offers).
    pub ports: Vec<super::forward::DeclaredPort>,
    pub created: Option<Timestamp>,
}

impl WorkloadRow {
    /// A workload's JSON (its `metadata` read from there).
    pub fn from_object(kind: WorkloadKind, object: &Value) -> WorkloadRow {
        let metadata = serde_json::from_value(object["metadata"].clone()).unwrap_or_default();
        WorkloadRow::from_parts(kind, &metadata, object)
    }

    /// A workload as an untyped watch gives it: its metadata, and the rest
    /// of its JSON.
    pub fn from_parts(kind: WorkloadKind, metadata: &ObjectMeta, object: &Value) -> WorkloadRow {
        let spec = &object["spec"];
        let status = &object["status"];
        let count = |v: &Value| v.as_i64().unwrap_or_default();
        // The apiserver defaults `replicas` to 1.
        let desired = spec["replicas"].as_i64().unwrap_or(1);
        let template = match kind {
            WorkloadKind::CronJob => &spec["jobTemplate"]["spec"]["template"],
            _ => &spec["template"],
        };
        let (cells, standing) = match kind {
            WorkloadKind::Deployment => {
                let available = count(&status["availableReplicas"]);
                (
                    vec![
                        ready(count(&status["readyReplicas"]), desired),
                        Cell::Count(count(&status["updatedReplicas"])),
                        Cell::Count(available),
                    ],
                    short_of(available, desired),
                )
            }
            WorkloadKind::StatefulSet => {
                let ready_now = count(&status["readyReplicas"]);
                (
                    vec![ready(ready_now, desired)],
                    short_of(ready_now, desired),
                )
            }
            WorkloadKind::ReplicaSet => {
                let ready_now = count(&status["readyReplicas"]);
                let cells = [desired, count(&status["replicas"]), ready_now];
                (
                    cells.map(Cell::Count).to_vec(),
                    short_of(ready_now, desired),
                )
            }
            WorkloadKind::DaemonSet => {
                let wanted = count(&status["desiredNumberScheduled"]);
                let available = count(&status["numberAvailable"]);
                let mut cells: Vec<Cell> = [
                    wanted,
                    count(&status["currentNumberScheduled"]),
                    count(&status["numberReady"]),
                    count(&status["updatedNumberScheduled"]),
                    available,
                ]
                .map(Cell::Count)
                .to_vec();
                cells.push(Cell::Text(node_selector(&template["spec"]["nodeSelector"])));
                (cells, short_of(available, wanted))
            }
            WorkloadKind::Job => job_cells(object),
            WorkloadKind::CronJob => cron_job_cells(object),
        };
        let selector = match kind {
            WorkloadKind::CronJob => {
                let labels: Vec<(String, String)> = template["metadata"]["labels"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| {
                        let v = sanitize(v.as_str().unwrap_or_default()).into_owned();
                        (sanitize(k).into_owned(), v)
                    })
                    .collect();
                Selector::of_labels(&labels)
            }
            _ => Selector::of_label_selector(&spec["selector"]),
        };
        let (containers, images) = containers(&template["spec"]);
        let ports = template["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| {
                let container = sanitize(c["name"].as_str().unwrap_or_default()).into_owned();
                c["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(move |p| {
                        Some(super::forward::DeclaredPort {
                            container: container.clone(),
                            name: p["name"].as_str().map(|n| sanitize(n).into_owned()),
                            number: u16::try_from(p["containerPort"].as_u64()?).ok()?,
                            protocol: sanitize(p["protocol"].as_str().unwrap_or("TCP"))
                                .into_owned(),
                        })
                    })
            })
            .collect();
        let clean =
            |text: &Option<String>| sanitize(text.as_deref().unwrap_or_default()).into_owned();
        WorkloadRow {
            context: None,
            kind,
            namespace: clean(&metadata.namespace),
            name: clean(&metadata.name),
            cells,
            standing,
            selector,
            containers,
            images,
            ports,
            created: metadata.creation_timestamp.as_ref().map(|t| t.0),
        }
    }

    /// The cells as kubectl prints them at `now`.
    pub fn texts(&self, now: Timestamp) -> Vec<String> {
        self.cells
            .iter()
            .map(|cell| match cell {
                Cell::Text(text) => text.clone(),
                Cell::Count(n) => n.to_string(),
                Cell::Since(then) => human_duration(now.duration_since(*then)),
            })
            .collect()
    }

    /// `deploy/storefront`.
    pub fn reference(&self) -> String {
        format!("{}/{}", self.kind.short(), self.name)
    }
}

fn ready(ready: i64, desired: i64) -> Cell {
    Cell::Text(format!("{ready}/{desired}"))
}

fn short_of(have: i64, want: i64) -> Standing {
    match have < want {
        true => Standing::Short,
        false => Standing::Fine,
    }
}

/// `printJob`: what it came to, how much of it is done, and how long it
/// took or has taken.
fn job_cells(job: &Value) -> (Vec<Cell>, Standing) {
    let (spec, status) = (&job["spec"], &job["status"]);
    let holds = |kind: &str| {
        status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == kind && c["status"] == "True")
    };
    let state = if holds("Complete") {
        "Complete"
    } else if holds("Failed") {
        "Failed"
    } else if job["metadata"]["deletionTimestamp"].is_string() {
        "Terminating"
    } else if holds("Suspended") {
        "Suspended"
    } else if holds("FailureTarget") {
        "FailureTarget"
    } else if holds("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let succeeded = status["succeeded"].as_i64().unwrap_or_default();
    let parallelism = spec["parallelism"].as_i64().unwrap_or_default();
    let done = match spec["completions"].as_i64() {
        Some(completions) => format!("{succeeded}/{completions}"),
        None if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
        None => format!("{succeeded}/1"),
    };
    let time = |field: &str| {
        status[field]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
    };
    let took = match (time("startTime"), time("completionTime")) {
        (None, _) => Cell::Text(String::new()),
        (Some(start), None) => Cell::Since(start),
        (Some(start), Some(end)) => Cell::Text(human_duration(end.duration_since(start))),
    };
    let standing = match state {
        "Failed" | "FailureTarget" => Standing::Failed,
        _ => Standing::Fine,
    };
    (
        vec![Cell::Text(state.into()), Cell::Text(done), took],
        standing,
    )
}

/// `printCronJob`: its schedule, whether it is suspended, how many of its
/// Jobs run, and when it last made one.
fn cron_job_cells(cron_job: &Value) -> (Vec<Cell>, Standing) {
    let (spec, status) = (&cron_job["spec"], &cron_job["status"]);
    let text = |v: &Value, none: &str| match v.as_str() {
        Some(s) => sanitize(s).into_owned(),
        None => none.to_string(),
    };
    let suspend = match spec["suspend"].as_bool() {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let last = match status["lastScheduleTime"]
        .as_str()
        .and_then(|t| t.parse::<Timestamp>().ok())
    {
        Some(at) => Cell::Since(at),
        None => Cell::Text("<none>".into()),
    };
    let active = status["active"].as_array().map_or(0, Vec::len) as i64;
    let cells = vec![
        Cell::Text(text(&spec["schedule"], "")),
        Cell::Text(text(&spec["timeZone"], "<none>")),
        Cell::Text(suspend.into()),
        Cell::Count(active),
        last,
    ];
    (cells, Standing::Fine)
}

/// A DaemonSet's pod template's node selector as kubectl prints it:
/// `k=v` sorted by key, `<none>` without one.
fn node_selector(selector: &Value) -> String {
    let mut terms: Vec<String> = selector
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| sanitize(&format!("{k}={}", v.as_str().unwrap_or_default())).into_owned())
        .collect();
    terms.sort();
    match terms.is_empty() {
        true => "<none>".into(),
        false => terms.join(","),
    }
}

/// A pod template's containers' names and images, comma-joined.
fn containers(pod_spec: &Value) -> (String, String) {
    let list = pod_spec["containers"].as_array();
    let join = |field: &str| {
        list.into_iter()
            .flatten()
            .map(|c| sanitize(c[field].as_str().unwrap_or_default()).into_owned())
            .collect::<Vec<_>>()
            .join(",")
    };
    (join("name"), join("image"))
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;

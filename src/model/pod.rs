//! The pod list's row: what `kubectl get pods -o wide` shows, computed the
//! way kubectl's `printPod` computes it, in well under a kilobyte.

use std::sync::Arc;

use jiff::Timestamp;

use super::age::human_duration;
use super::debuggers::Debugger;
use super::intern::Strings;
use super::text::{printable, sanitize};
use super::usage::{Asks, Use};
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};

/// Namespace and name: how podbay identifies a pod. Reference-counted, so
/// the table, the filter results and the selection share one copy.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodKey {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
}

impl PodKey {
    pub fn new(namespace: &str, name: &str) -> Self {
        PodKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The pod's key, as sent: it is what the pod is asked for by. A real
    /// apiserver only accepts DNS names, but a hostile one could send
    /// anything, so the key is sanitized where it is shown (its `Display`,
    /// [`PodKey::shown`]), never here.
    pub fn of(pod: &Pod) -> Self {
        PodKey::new(
            pod.metadata.namespace.as_deref().unwrap_or_default(),
            pod.metadata.name.as_deref().unwrap_or_default(),
        )
    }

    /// (namespace, name) as they may be drawn.
    pub fn shown(&self) -> (std::borrow::Cow<'_, str>, std::borrow::Cow<'_, str>) {
        (sanitize(&self.namespace), sanitize(&self.name))
    }
}

impl std::fmt::Display for PodKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (namespace, name) = self.shown();
        write!(f, "{namespace}/{name}")
    }
}

/// A row of the pod list: its pod, and the context it was listed from
/// when the list shows several clusters (`None` when it shows one). Two
/// clusters' pods of one namespace and name are two rows, and whatever a
/// row is acted on by goes to its own cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey {
    pub context: Option<Arc<str>>,
    pub pod: PodKey,
}

impl RowKey {
    /// A row of the one cluster a single-cluster list shows.
    pub fn here(pod: PodKey) -> Self {
        RowKey { context: None, pod }
    }
}

impl std::fmt::Display for RowKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.context {
            Some(context) => write!(f, "{}/{}", sanitize(context), self.pod),
            None => self.pod.fmt(f),
        }
    }
}

/// What a pod's regular containers ask for (see [`Asks::of`]).
pub fn asks_of(pod: &Pod) -> Option<Asks> {
    asks_of_containers(
        pod.spec
            .as_ref()
            .map(|s| s.containers.as_slice())
            .unwrap_or_default(),
    )
}

/// What `containers` ask for, summed.
pub fn asks_of_containers(containers: &[Container]) -> Option<Asks> {
    Asks::of(containers.iter().map(|c| {
        let resources = c.resources.as_ref();
        let requests = resources.and_then(|r| r.requests.as_ref());
        let limits = resources.and_then(|r| r.limits.as_ref());
        (
            quantity_of(requests, "cpu"),
            quantity_of(limits, "cpu"),
            quantity_of(requests, "memory"),
            quantity_of(limits, "memory"),
        )
    }))
}

type Quantities =
    std::collections::BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>;

fn quantity_of<'a>(map: Option<&'a Quantities>, name: &str) -> Option<&'a str> {
    map.and_then(|m| m.get(name)).map(|q| q.0.as_str())
}

/// A coarse health class, for colouring rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Good,
    Pending,
    Failing,
    Done,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodRow {
    pub key: PodKey,
    /// The context it was listed from, when the list shows several
    /// clusters (see [`RowKey`]).
    pub context: Option<Arc<str>>,
    pub ready: u16,
    pub total: u16,
    /// Namespaces, statuses, nodes and labels are shared between rows
    /// ([`Strings`]): 100 000 pods repeat a few hundred of them.
    pub status: Arc<str>,
    pub restarts: u32,
    pub last_restart: Option<Timestamp>,
    pub created: Option<Timestamp>,
    pub node: Arc<str>,
    pub ip: Box<str>,
    /// `k=v` pairs joined by spaces, for the filter.
    pub labels: Arc<str>,
    /// The pod's debug (ephemeral) containers, if it has any: the DEBUG
    /// mark and the debuggers view read them. Shared: rows are cloned.
    pub debuggers: Option<Arc<[Debugger]>>,
    pub health: Health,
    /// What its containers ask for, when any asks for anything.
    pub asks: Option<Box<Asks>>,
    /// What it used when metrics-server last measured it, if it did.
    pub usage: Option<Use>,
}

impl PodRow {
    /// The row's identity in the pod list.
    pub fn row_key(&self) -> RowKey {
        RowKey {
            context: self.context.clone(),
            pod: self.key.clone(),
        }
    }

    /// Whether this row is `key`'s, without building a key.
    pub fn is(&self, key: &RowKey) -> bool {
        self.context == key.context && self.key == key.pod
    }

    /// (context, pod): the table's order, as a tuple to compare.
    pub fn order(&self) -> (Option<&str>, &PodKey) {
        (self.context.as_deref(), &self.key)
    }

    /// A healthy pod, as tests and benchmarks write one out: `Running`,
    /// 1/1 ready, no restarts, no node, IP, labels or creation time.
    /// Set what differs with struct update syntax,
    /// `PodRow { node: "node-1".into(), ..PodRow::new("shop", "web") }`.
    pub fn new(namespace: &str, name: &str) -> Self {
        PodRow {
            key: PodKey::new(namespace, name),
            context: None,
            ready: 1,
            total: 1,
            status: "Running".into(),
            restarts: 0,
            last_restart: None,
            created: None,
            node: "".into(),
            ip: "".into(),
            labels: "".into(),
            debuggers: None,
            health: Health::Good,
            asks: None,
            usage: None,
        }
    }

    pub fn from_pod(pod: &Pod) -> Self {
        let mut strings = Strings::default();
        PodRow::from_pod_sharing(pod, &mut |text| strings.get(text))
    }

    /// [`PodRow::from_pod`], its repeated strings taken from `share` (a
    /// [`Strings`] set, behind whatever lock the caller holds only for
    /// the lookup).
    pub fn from_pod_sharing(pod: &Pod, share: &mut dyn FnMut(&str) -> Arc<str>) -> Self {
        let summary = summarize(pod);
        let labels = pod
            .metadata
            .labels
            .iter()
            .flatten()
            .map(|(k, v)| printable(format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(" ");
        let health = health(&summary.status);
        let key = PodKey {
            namespace: share(pod.metadata.namespace.as_deref().unwrap_or_default()),
            name: pod.metadata.name.as_deref().unwrap_or_default().into(),
        };
        PodRow {
            key,
            context: None,
            ready: summary.ready,
            total: summary.total,
            status: share(&summary.status),
            restarts: summary.restarts,
            last_restart: summary.last_restart,
            created: pod.metadata.creation_timestamp.as_ref().map(|t| t.0),
            node: share(&sanitize(
                pod.spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_deref())
                    .unwrap_or_default(),
            )),
            // kubectl prints the first of `podIPs`, which the apiserver
            // keeps equal to `podIP` when both are set.
            ip: sanitize(
                pod.status
                    .as_ref()
                    .and_then(|s| {
                        s.pod_ips
                            .as_ref()
                            .and_then(|ips| ips.first())
                            .map(|ip| ip.ip.as_str())
                            .or(s.pod_ip.as_deref())
                    })
                    .unwrap_or_default(),
            )
            .into(),
            labels: share(&labels),
            debuggers: {
                let debuggers = super::debuggers::of_pod(pod);
                (!debuggers.is_empty()).then(|| debuggers.into())
            },
            health,
            asks: asks_of(pod).map(Box::new),
            usage: None,
        }
    }

    /// How many debug containers the pod has.
    pub fn ephemeral(&self) -> usize {
        self.debuggers.as_deref().map_or(0, <[Debugger]>::len)
    }

    /// How many of its debug containers have not ended: running (each holds
    /// memory against the pod's limits, perhaps a shell) or still to start
    /// (a kubelet keeps pulling a refused image, and starts it when it can).
    pub fn debuggers_live(&self) -> usize {
        self.debuggers
            .iter()
            .flat_map(|d| d.iter())
            .filter(|d| !d.state.has_ended())
            .count()
    }

    /// The DEBUG column: `◆N` for the debug containers that have not ended,
    /// `◇N` when there are some and all have ended, else nothing.
    pub fn debug_mark(&self) -> String {
        match (self.debuggers_live(), self.ephemeral()) {
            (0, 0) => String::new(),
            (0, ended) => format!("◇{ended}"),
            (running, _) => format!("◆{running}"),
        }
    }

    /// RESTARTS as kubectl prints it: `5 (2m ago)`.
    pub fn restarts_text(&self, now: Timestamp) -> String {
        match (self.restarts, self.last_restart) {
            (0, _) | (_, None) => self.restarts.to_string(),
            (n, Some(at)) => format!("{n} ({} ago)", human_duration(now.duration_since(at))),
        }
    }

    pub fn age_text(&self, now: Timestamp) -> String {
        self.created.map_or_else(
            || "<unknown>".to_string(),
            |c| human_duration(now.duration_since(c)),
        )
    }
}

/// READY, STATUS and RESTARTS of a pod.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub ready: u16,
    pub total: u16,
    pub status: String,
    pub restarts: u32,
    pub last_restart: Option<Timestamp>,
}

fn is_restartable_init(container: Option<&Container>) -> bool {
    container.and_then(|c| c.restart_policy.as_deref()) == Some("Always")
}

fn last_terminated(status: &ContainerStatus) -> Option<Timestamp> {
    status
        .last_state
        .as_ref()?
        .terminated
        .as_ref()?
        .finished_at
        .as_ref()
        .map(|t| t.0)
}

fn later(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// kubectl's `printPod` (pkg/printers/internalversion/printers.go), step by step.
pub fn summarize(pod: &Pod) -> Summary {
    // Borrowed, not cloned: this runs for every pod on every watch event.
    let no_containers = Vec::new();
    let spec = pod.spec.as_ref();
    let status = pod.status.as_ref();
    let init_specs = spec
        .and_then(|s| s.init_containers.as_ref())
        .unwrap_or(&no_containers);
    let find_init = |name: &str| init_specs.iter().find(|c| c.name == name);

    let mut restarts: u32 = 0;
    let mut restartable_init_restarts: u32 = 0;
    // Counts saturate: a hostile or broken object must not overflow them.
    let mut total = count16(spec.map_or(0, |s| s.containers.len()));
    let mut ready: u16 = 0;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_restartable_init_restart: Option<Timestamp> = None;

    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or_default();
    let status_reason = status.and_then(|s| s.reason.as_deref());
    let mut reason = status_reason
        .filter(|r| !r.is_empty())
        .unwrap_or(phase)
        .to_string();
    let conditions = status
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    if conditions
        .iter()
        .any(|c| c.type_ == "PodScheduled" && c.reason.as_deref() == Some("SchedulingGated"))
    {
        reason = "SchedulingGated".to_string();
    }
    total = total.saturating_add(count16(
        init_specs
            .iter()
            .filter(|c| is_restartable_init(Some(c)))
            .count(),
    ));

    let mut initializing = false;
    let init_statuses = status
        .and_then(|s| s.init_container_statuses.as_deref())
        .unwrap_or_default();
    for (i, container) in init_statuses.iter().enumerate() {
        restarts = restarts.saturating_add(container.restart_count.max(0) as u32);
        last_restart = later(last_restart, last_terminated(container));
        let restartable = is_restartable_init(find_init(&container.name));
        if restartable {
            restartable_init_restarts =
                restartable_init_restarts.saturating_add(container.restart_count.max(0) as u32);
            last_restartable_init_restart =
                later(last_restartable_init_restart, last_terminated(container));
        }
        let state = container.state.as_ref();
        let terminated = state.and_then(|s| s.terminated.as_ref());
        if terminated.is_some_and(|t| t.exit_code == 0) {
            continue;
        }
        if restartable && container.started == Some(true) {
            if container.ready {
                ready = ready.saturating_add(1);
            }
            continue;
        }
        if let Some(t) = terminated {
            reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                Some(r) => format!("Init:{r}"),
                None if t.signal.unwrap_or(0) != 0 => {
                    format!("Init:Signal:{}", t.signal.unwrap_or(0))
                }
                None => format!("Init:ExitCode:{}", t.exit_code),
            };
        } else if let Some(w) = state
            .and_then(|s| s.waiting.as_ref())
            .and_then(|w| w.reason.as_deref())
            .filter(|r| !r.is_empty() && *r != "PodInitializing")
        {
            reason = format!("Init:{w}");
        } else {
            reason = format!("Init:{i}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }

    // The first Initialized condition decides, as kubectl reads it.
    let initialized = conditions
        .iter()
        .find(|c| c.type_ == "Initialized")
        .is_some_and(|c| c.status == "True");
    if !initializing || initialized {
        restarts = restartable_init_restarts;
        last_restart = last_restartable_init_restart;
        let mut has_running = false;
        let statuses = status
            .and_then(|s| s.container_statuses.as_deref())
            .unwrap_or_default();
        for container in statuses.iter().rev() {
            restarts = restarts.saturating_add(container.restart_count.max(0) as u32);
            last_restart = later(last_restart, last_terminated(container));
            let state = container.state.as_ref();
            let terminated = state.and_then(|s| s.terminated.as_ref());
            let waiting = state
                .and_then(|s| s.waiting.as_ref())
                .and_then(|w| w.reason.as_deref())
                .filter(|r| !r.is_empty());
            let terminated_reason = terminated
                .and_then(|t| t.reason.as_deref())
                .filter(|r| !r.is_empty());
            if let Some(w) = waiting {
                reason = w.to_string();
            } else if let Some(t) = terminated_reason {
                reason = t.to_string();
            } else if let Some(t) = terminated {
                reason = match t.signal.unwrap_or(0) {
                    0 => format!("ExitCode:{}", t.exit_code),
                    s => format!("Signal:{s}"),
                };
            } else if container.ready && state.is_some_and(|s| s.running.is_some()) {
                has_running = true;
                ready = ready.saturating_add(1);
            }
        }
        if reason == "Completed" && has_running {
            let ready_condition = conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            reason = if ready_condition {
                "Running"
            } else {
                "NotReady"
            }
            .to_string();
        }
    }

    if pod.metadata.deletion_timestamp.is_some() {
        if status_reason == Some("NodeLost") {
            reason = "Unknown".to_string();
        } else if phase != "Succeeded" && phase != "Failed" {
            reason = "Terminating".to_string();
        }
    }

    Summary {
        ready,
        total,
        status: printable(reason),
        restarts,
        last_restart,
    }
}

fn count16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn health(status: &str) -> Health {
    match status {
        "Running" => Health::Good,
        "Completed" | "Succeeded" => Health::Done,
        "Pending" | "ContainerCreating" | "PodInitializing" | "Terminating" | "SchedulingGated" => {
            Health::Pending
        }
        s if s.starts_with("Init:") && s[5..].contains('/') => Health::Pending,
        _ => Health::Failing,
    }
}

#[cfg(test)]
#[path = "pod_printer_tests.rs"]
mod printer_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).unwrap()
    }

    fn status_of(value: serde_json::Value) -> String {
        summarize(&pod(value)).status
    }

    fn running(name: &str, ready: bool) -> serde_json::Value {
        json!({"name": name, "image": "i", "imageID": "", "ready": ready, "restartCount": 0, "state": {"running": {}}})
    }

    /// kubectl reads the first Initialized condition only (printers_test's
    /// cases keep one; a pod with two is judged by the first).
    #[test]
    fn the_first_initialized_condition_decides() {
        let p = pod(json!({
            "metadata": {"name": "p", "namespace": "n"},
            "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Pending",
                "conditions": [{"type": "Initialized", "status": "False"}, {"type": "Initialized", "status": "True"}],
                "initContainerStatuses": [running("i", false)],
                "containerStatuses": [running("a", true)]},
        }));
        let s = summarize(&p);
        assert_eq!((s.ready, s.total, s.status.as_str()), (0, 1, "Init:0/1"));
    }

    /// ◆ counts the debuggers that have not ended, a pull still refused
    /// among them (the kubelet starts it once the image comes); ◇ is for a
    /// pod whose debuggers have all ended.
    #[test]
    fn the_debug_mark_tells_debuggers_not_ended_from_ended_ones() {
        let mark = |states: &[serde_json::Value]| {
            let names: Vec<String> = (0..states.len()).map(|i| format!("d{i}")).collect();
            PodRow::from_pod(&pod(json!({
                "metadata": {"name": "p", "namespace": "n"},
                "spec": {"containers": [{"name": "a"}],
                    "ephemeralContainers": names.iter().map(|n| json!({"name": n, "image": "busybox"})).collect::<Vec<_>>()},
                "status": {"phase": "Running", "ephemeralContainerStatuses": names.iter().zip(states).map(|(n, state)|
                    json!({"name": n, "image": "busybox", "imageID": "", "ready": false, "restartCount": 0, "state": state})).collect::<Vec<_>>()},
            })))
            .debug_mark()
        };
        let ended = json!({"terminated": {"exitCode": 0, "reason": "Completed"}});
        let pulling = json!({"waiting": {"reason": "ImagePullBackOff"}});
        let running = json!({"running": {}});
        assert_eq!(mark(&[]), "");
        assert_eq!(mark(&[ended.clone(), ended.clone()]), "◇2");
        assert_eq!(mark(&[ended.clone(), pulling.clone()]), "◆1");
        assert_eq!(mark(&[pulling, running, ended]), "◆2");
    }

    /// The IP column is the first of `podIPs`.
    #[test]
    fn the_ip_is_the_first_of_pod_ips() {
        let p = pod(json!({
            "metadata": {"name": "p", "namespace": "n"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "podIPs": [{"ip": "1.1.1.1"}, {"ip": "2001:db8::1"}]},
        }));
        assert_eq!(&*PodRow::from_pod(&p).ip, "1.1.1.1");
    }

    #[test]
    fn running_and_ready_counts() {
        let p = pod(json!({
            "metadata": {"name": "p", "namespace": "n"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [running("a", true), running("b", false)]},
        }));
        let s = summarize(&p);
        assert_eq!((s.ready, s.total, s.status.as_str()), (1, 2, "Running"));
    }

    #[test]
    fn waiting_and_terminated_reasons_win_over_the_phase() {
        let crash = json!({
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "a", "image": "i", "imageID": "", "ready": false, "restartCount": 7,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T00:00:00Z"}}}]},
        });
        let s = summarize(&pod(crash));
        assert_eq!(s.status, "CrashLoopBackOff");
        assert_eq!(s.restarts, 7);
        assert_eq!(
            s.last_restart,
            Some("2026-01-01T00:00:00Z".parse().unwrap())
        );
        let exit = json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Failed", "containerStatuses": [
            {"name": "a", "image": "i", "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 2}}}]}});
        assert_eq!(status_of(exit), "ExitCode:2");
        let signal = json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Failed", "containerStatuses": [
            {"name": "a", "image": "i", "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 137, "signal": 9}}}]}});
        assert_eq!(status_of(signal), "Signal:9");
        let done = json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Succeeded", "containerStatuses": [
            {"name": "a", "image": "i", "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}});
        assert_eq!(status_of(done), "Completed");
    }

    #[test]
    fn init_containers() {
        let base = |init_state: serde_json::Value| {
            json!({
                "spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}]},
                "status": {"phase": "Pending", "initContainerStatuses": [
                    {"name": "i1", "image": "x", "imageID": "", "ready": true, "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
                    {"name": "i2", "image": "x", "imageID": "", "ready": false, "restartCount": 0, "state": init_state},
                ], "containerStatuses": [{"name": "a", "image": "x", "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}]},
            })
        };
        assert_eq!(status_of(base(json!({"running": {}}))), "Init:1/2");
        assert_eq!(
            status_of(base(json!({"waiting": {"reason": "CrashLoopBackOff"}}))),
            "Init:CrashLoopBackOff"
        );
        assert_eq!(
            status_of(base(json!({"terminated": {"exitCode": 3}}))),
            "Init:ExitCode:3"
        );
        assert_eq!(
            status_of(base(
                json!({"terminated": {"exitCode": 1, "reason": "Error"}})
            )),
            "Init:Error"
        );
    }

    #[test]
    fn sidecar_init_containers_count_towards_ready() {
        let p = json!({
            "spec": {"initContainers": [{"name": "proxy", "restartPolicy": "Always"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Running",
                "conditions": [{"type": "Initialized", "status": "True"}],
                "initContainerStatuses": [{"name": "proxy", "image": "x", "imageID": "", "ready": true, "started": true, "restartCount": 2, "state": {"running": {}}}],
                "containerStatuses": [running("a", true)]},
        });
        let s = summarize(&pod(p));
        assert_eq!(
            (s.ready, s.total, s.status.as_str(), s.restarts),
            (2, 2, "Running", 2)
        );
    }

    #[test]
    fn terminating_unknown_and_gated() {
        let terminating = json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "containerStatuses": [running("a", true)]}});
        assert_eq!(status_of(terminating), "Terminating");
        let lost = json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "reason": "NodeLost"}});
        assert_eq!(status_of(lost), "Unknown");
        let gated = json!({"spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}});
        assert_eq!(status_of(gated), "SchedulingGated");
        let evicted = json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Failed", "reason": "Evicted"}});
        assert_eq!(status_of(evicted), "Evicted");
    }

    #[test]
    fn completed_with_a_running_container_is_running_or_not_ready() {
        let p = |ready: &str| {
            json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": ready}], "containerStatuses": [
                running("a", true),
                {"name": "b", "image": "i", "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            ]}})
        };
        assert_eq!(status_of(p("True")), "Running");
        assert_eq!(status_of(p("False")), "NotReady");
    }

    #[test]
    fn rows_stay_small_and_show_restarts_like_kubectl() {
        let now: Timestamp = "2026-01-01T00:10:00Z".parse().unwrap();
        let p = pod(json!({
            "metadata": {"name": "web-1", "namespace": "shop", "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": "web"}},
            "spec": {"nodeName": "n1", "containers": [{"name": "a"}], "ephemeralContainers": [{"name": "d"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "containerStatuses": [{"name": "a", "image": "i", "imageID": "", "ready": true,
                "restartCount": 3, "state": {"running": {}}, "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T00:08:00Z"}}}]},
        }));
        let row = PodRow::from_pod(&p);
        assert_eq!(row.restarts_text(now), "3 (2m ago)");
        assert_eq!(row.age_text(now), "10m");
        assert_eq!(
            (row.ephemeral(), &*row.node, &*row.labels),
            (1, "n1", "app=web")
        );
        assert_eq!(row.health, Health::Good);
        assert_eq!(row.key.to_string(), "shop/web-1");
        assert!(std::mem::size_of::<PodRow>() < 256);
    }
}

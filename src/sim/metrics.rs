//! `metrics.k8s.io/v1beta1` as metrics-server serves it, and the kubelet's
//! side of resource use: every running container's CPU (a rate over the
//! last window) and working set, measured from its real processes in
//! `/proc`, sampled every [`RESOLUTION`]; a container over its memory
//! limit is killed `OOMKilled`, as the kernel's OOM killer would in its
//! cgroup.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use serde_json::{Value, json};

use super::SimState;
use super::filter::Filter;
use super::lock;
use super::pod_json::find_container;
use super::procfs::{Measured, measure};
use super::runtime::ContainerProcess;
use super::status::ApiError;
use super::store::{Key, Kind};
use crate::model::quantity;

/// How often containers are measured: metrics-server's
/// `--metric-resolution`, shorter than its 15 s default so a demo and its
/// tests see use soon.
pub const RESOLUTION: Duration = Duration::from_secs(5);

pub use super::http::{METRICS_GROUP as GROUP, METRICS_VERSION as VERSION};

/// What a container used over the last window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub nanocores: u64,
    pub memory: u64,
}

/// A container's cumulative CPU at one sample.
struct Sample {
    at: Instant,
    cpu_ns: u64,
    started: Timestamp,
}

#[derive(Default)]
struct Readings {
    samples: HashMap<(Key, String), Sample>,
    usage: HashMap<(Key, String), Usage>,
    /// When the last sample was taken, and the window it closed.
    taken: Option<(Timestamp, Duration)>,
    /// When the sampler last ran.
    last_tick: Option<Instant>,
}

/// The last measurements, as metrics-server keeps them.
#[derive(Default)]
pub struct Meter {
    readings: Mutex<Readings>,
    /// The running containers with a CPU limit, for the throttle.
    limited: Mutex<Vec<super::throttle::Limited>>,
}

impl Meter {
    fn set_limited(&self, limited: Vec<super::throttle::Limited>) {
        *lock(&self.limited) = limited;
    }

    pub(super) fn limited(&self) -> Vec<super::throttle::Limited> {
        lock(&self.limited).clone()
    }

    fn record(&self, measured: Vec<((Key, String), Timestamp, Option<Measured>)>) {
        let now = Instant::now();
        let mut readings = lock(&self.readings);
        let mut samples = HashMap::with_capacity(measured.len());
        let mut usage = HashMap::with_capacity(measured.len());
        let mut window = None;
        for (container, started, measured) in measured {
            let Some(measured) = measured else { continue };
            if let Some(before) = readings.samples.get(&container)
                && before.started == started
            {
                let elapsed = now.duration_since(before.at);
                let used = measured.cpu_ns.saturating_sub(before.cpu_ns);
                let nanocores = (used as f64 / elapsed.as_secs_f64().max(1e-3)) as u64;
                usage.insert(
                    container.clone(),
                    Usage {
                        nanocores,
                        memory: measured.rss,
                    },
                );
                window = Some(elapsed);
            }
            samples.insert(
                container,
                Sample {
                    at: now,
                    cpu_ns: measured.cpu_ns,
                    started,
                },
            );
        }
        readings.samples = samples;
        readings.usage = usage;
        // One sample is no rate yet, as metrics-server after its first
        // scrape; from the second on, every running pod has figures (0 for
        // a container with no process).
        let since_last = readings.last_tick.map(|at| now.duration_since(at));
        readings.last_tick = Some(now);
        if let Some(window) = window.or(since_last) {
            readings.taken = Some((Timestamp::now(), window));
        }
    }

    fn usage(&self, pod: &Key, container: &str) -> Usage {
        lock(&self.readings)
            .usage
            .get(&(pod.clone(), container.to_string()))
            .copied()
            .unwrap_or_default()
    }

    fn taken(&self) -> Option<(Timestamp, Duration)> {
        lock(&self.readings).taken
    }
}

/// Measures every running container each [`RESOLUTION`], and kills those
/// over their memory limit, until the simulator is gone.
pub async fn run(state: Weak<SimState>) {
    let mut ticker = tokio::time::interval(RESOLUTION);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(state) = state.upgrade() else {
            return;
        };
        let running = state.kubelet.running();
        let roots: Vec<u32> = running
            .iter()
            .map(|(.., p)| p.leader().unwrap_or(0))
            .collect();
        let Ok(measured) = tokio::task::spawn_blocking(move || measure(&roots)).await else {
            continue;
        };
        let mut over = Vec::new();
        let mut limited = Vec::new();
        let rows = running
            .into_iter()
            .zip(measured)
            .map(|((pod, container, process), measured)| {
                let limits = limits_of(&state, &pod, &container);
                if let Some(m) = &measured
                    && limits.memory.is_some_and(|limit| m.rss > limit)
                {
                    over.push((pod.clone(), container.clone(), process.clone()));
                }
                if let (Some(cores), Some(leader)) = (limits.cpu, process.leader()) {
                    limited.push(super::throttle::Limited {
                        container: (pod.clone(), container.clone()),
                        leader,
                        cores,
                    });
                }
                ((pod, container), process.started, measured)
            })
            .collect();
        state.metrics.record(rows);
        state.metrics.set_limited(limited);
        for (pod, container, process) in over {
            out_of_memory(&state, pod, container, process);
        }
    }
}

/// A container's limits: cores, bytes.
#[derive(Default)]
struct Limits {
    cpu: Option<f64>,
    memory: Option<u64>,
}

fn limits_of(state: &SimState, pod: &Key, container: &str) -> Limits {
    let Some(pod) = state.store.get(Kind::Pod, pod).map(|e| e.value()) else {
        return Limits::default();
    };
    let Some((_, spec)) = find_container(&pod, container) else {
        return Limits::default();
    };
    let limit = |name: &str| {
        spec.pointer(&format!("/resources/limits/{name}"))
            .and_then(Value::as_str)
            .and_then(quantity::parse)
            .filter(|l| *l > 0.0)
    };
    Limits {
        cpu: limit("cpu"),
        memory: limit("memory").map(|l| l as u64),
    }
}

/// Kills a container over its limit. A pod created through the API has
/// its end recorded by its watcher; a demo pod's container is restarted
/// in place, as a kubelet restarts one under `restartPolicy: Always`.
fn out_of_memory(
    state: &Arc<SimState>,
    pod: Key,
    container: String,
    process: Arc<ContainerProcess>,
) {
    process.kill_out_of_memory();
    let Some(entry) = state.store.get(Kind::Pod, &pod) else {
        return;
    };
    let value = entry.value();
    let uid = value.pointer("/metadata/uid").and_then(Value::as_str);
    let regular = value["spec"]["containers"]
        .as_array()
        .is_some_and(|list| list.iter().any(|c| c["name"] == container.as_str()));
    if !regular || uid.is_some_and(|uid| state.kubelet.was_created(uid)) {
        return;
    }
    let state = state.clone();
    tokio::spawn(async move {
        let exit = process.wait().await;
        let now = Timestamp::now().to_string();
        let restarted = state.store.update::<()>(Kind::Pod, &pod, None, |mut value| {
            if !value
                .pointer("/metadata/deletionTimestamp")
                .is_none_or(Value::is_null)
            {
                return Err(());
            }
            let statuses = value["status"]["containerStatuses"].as_array_mut().ok_or(())?;
            let status = statuses
                .iter_mut()
                .find(|s| s["name"] == container.as_str())
                .ok_or(())?;
            let started = status
                .pointer("/state/running/startedAt")
                .cloned()
                .unwrap_or_else(|| json!(now));
            let restarts = status["restartCount"].as_u64().unwrap_or(0);
            status["restartCount"] = json!(restarts + 1);
            status["lastState"] = json!({"terminated": {
                "exitCode": exit.code, "reason": exit.reason(), "startedAt": started,
                "finishedAt": exit.finished.to_string(), "containerID": status["containerID"].clone(),
            }});
            status["state"] = json!({"running": {"startedAt": now}});
            Ok(value)
        });
        if let Ok(Ok(entry)) = restarted {
            let _ = state.kubelet.process(&entry.value(), &container);
        }
    });
}

/// A running pod's metrics: each running container's use (zero for one the
/// simulator runs no process for), or `None` for a pod that is not running.
fn pod_metrics(meter: &Meter, pod: &Value, taken: (Timestamp, Duration)) -> Option<Value> {
    let (key, used) = running_use(meter, pod)?;
    let containers: Vec<Value> = used
        .into_iter()
        .map(|(name, usage)| json!({"name": name, "usage": usage_json(usage)}))
        .collect();
    let mut metadata = json!({
        "name": key.name.to_string(), "namespace": key.namespace.to_string(),
        "creationTimestamp": Timestamp::now().to_string(),
    });
    if let Some(labels) = pod.pointer("/metadata/labels") {
        metadata["labels"] = labels.clone();
    }
    Some(json!({
        "kind": "PodMetrics", "apiVersion": format!("{GROUP}/{VERSION}"),
        "metadata": metadata, "timestamp": taken.0.to_string(),
        "window": window_text(taken.1), "containers": containers,
    }))
}

/// A running pod's key and each of its running containers' use; `None`
/// for a pod that is not running.
fn running_use<'a>(meter: &Meter, pod: &'a Value) -> Option<(Key, Vec<(&'a str, Usage)>)> {
    if pod.pointer("/status/phase").and_then(Value::as_str) != Some("Running") {
        return None;
    }
    let key = Key::new(
        pod["metadata"]["namespace"].as_str().unwrap_or_default(),
        pod["metadata"]["name"].as_str().unwrap_or_default(),
    );
    let used = ["containerStatuses", "ephemeralContainerStatuses"]
        .iter()
        .flat_map(|field| pod["status"][field].as_array().into_iter().flatten())
        .filter(|status| status.pointer("/state/running").is_some())
        .filter_map(|status| {
            let name = status["name"].as_str()?;
            Some((name, meter.usage(&key, name)))
        })
        .collect();
    Some((key, used))
}

fn usage_json(usage: Usage) -> Value {
    json!({
        "cpu": quantity::cpu_text(usage.nanocores),
        "memory": quantity::memory_text(usage.memory),
    })
}

/// A window as a Go duration prints (`5.002s`).
fn window_text(window: Duration) -> String {
    format!("{}s", (window.as_millis() as f64) / 1000.0)
}

/// A list of `items`, which (as in the apiserver's lists) do not repeat
/// their kind and apiVersion.
fn list_json(kind: &str, mut items: Vec<Value>) -> Value {
    for item in &mut items {
        if let Some(item) = item.as_object_mut() {
            item.remove("kind");
            item.remove("apiVersion");
        }
    }
    json!({
        "kind": kind, "apiVersion": format!("{GROUP}/{VERSION}"),
        "metadata": {}, "items": items,
    })
}

/// `GET …/pods` (a namespace's or all) and `…/pods/NAME`.
pub fn pods(state: &SimState, filter: &Filter, name: Option<&str>) -> Result<Value, ApiError> {
    let taken = state.metrics.taken();
    if let Some(name) = name {
        let namespace = filter.namespace.as_deref().unwrap_or_default();
        let key = Key::new(namespace, name);
        let shown = format!("{namespace}/{name}");
        let metrics = state
            .store
            .get(Kind::Pod, &key)
            .zip(taken)
            .and_then(|(entry, taken)| pod_metrics(&state.metrics, &entry.value(), taken));
        return metrics.ok_or_else(|| {
            ApiError::new(
                404,
                "NotFound",
                format!("podmetrics.{GROUP} \"{shown}\" not found"),
            )
            .with_details(json!({"name": shown, "group": GROUP, "kind": "pods"}))
        });
    }
    let Some(taken) = taken else {
        return Ok(list_json("PodMetricsList", Vec::new()));
    };
    let (entries, ..) =
        state
            .store
            .list(Kind::Pod, filter.namespace.as_deref(), None, None, &|e| {
                filter.matches(e)
            });
    let items = entries
        .iter()
        .filter_map(|e| pod_metrics(&state.metrics, &e.value(), taken))
        .collect();
    Ok(list_json("PodMetricsList", items))
}

/// `GET …/nodes` and `…/nodes/NAME`: each node's use is its running pods'.
pub fn nodes(state: &SimState, filter: &Filter, name: Option<&str>) -> Result<Value, ApiError> {
    let not_found = |name: &str| {
        ApiError::new(
            404,
            "NotFound",
            format!("nodemetrics.{GROUP} \"{name}\" not found"),
        )
        .with_details(json!({"name": name, "group": GROUP, "kind": "nodes"}))
    };
    let Some(taken) = state.metrics.taken() else {
        return match name {
            Some(name) => Err(not_found(name)),
            None => Ok(list_json("NodeMetricsList", Vec::new())),
        };
    };
    let (nodes, ..) = state.store.list(Kind::Node, None, None, None, &|e| {
        filter.matches(e) && name.is_none_or(|n| &*e.key.name == n)
    });
    let mut used: HashMap<String, Usage> = HashMap::new();
    let (pods, ..) = state.store.list(Kind::Pod, None, None, None, &|_| true);
    for pod in pods {
        let pod = pod.value();
        let (Some(node), Some((_, containers))) = (
            pod.pointer("/spec/nodeName").and_then(Value::as_str),
            running_use(&state.metrics, &pod),
        ) else {
            continue;
        };
        let total = used.entry(node.to_string()).or_default();
        for (_, usage) in containers {
            total.nanocores += usage.nanocores;
            total.memory += usage.memory;
        }
    }
    let items: Vec<Value> = nodes
        .iter()
        .map(|node| {
            let node = node.value();
            let name = node["metadata"]["name"].as_str().unwrap_or_default();
            let mut metadata =
                json!({"name": name, "creationTimestamp": Timestamp::now().to_string()});
            if let Some(labels) = node.pointer("/metadata/labels") {
                metadata["labels"] = labels.clone();
            }
            json!({
                "kind": "NodeMetrics", "apiVersion": format!("{GROUP}/{VERSION}"),
                "metadata": metadata, "timestamp": taken.0.to_string(),
                "window": window_text(taken.1),
                "usage": usage_json(used.get(name).copied().unwrap_or_default()),
            })
        })
        .collect();
    match name {
        Some(name) => items.into_iter().next().ok_or_else(|| not_found(name)),
        None => Ok(list_json("NodeMetricsList", items)),
    }
}

/// `/apis/metrics.k8s.io/v1beta1`.
pub fn resources() -> Value {
    let resource = |name: &str, kind: &str, namespaced: bool| json!({"name": name, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": ["get", "list"]});
    json!({
        "kind": "APIResourceList", "apiVersion": "v1",
        "groupVersion": format!("{GROUP}/{VERSION}"),
        "resources": [resource("nodes", "NodeMetrics", false), resource("pods", "PodMetrics", true)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_needs_two_samples_of_the_same_run() {
        let meter = Meter::default();
        let key = (Key::new("shop", "web"), "web".to_string());
        let started = Timestamp::now();
        let sample = |cpu_ns| {
            vec![(
                key.clone(),
                started,
                Some(Measured {
                    cpu_ns,
                    rss: 5 << 20,
                }),
            )]
        };
        meter.record(sample(1_000_000_000));
        assert_eq!(meter.taken(), None, "one sample is no rate");
        assert_eq!(meter.usage(&key.0, "web"), Usage::default());
        std::thread::sleep(Duration::from_millis(20));
        meter.record(sample(1_010_000_000));
        let usage = meter.usage(&key.0, "web");
        assert_eq!(usage.memory, 5 << 20);
        assert!(
            usage.nanocores > 0 && usage.nanocores <= 500_000_000,
            "{usage:?}"
        );
        // A restart starts over: its counter is not compared with the last run's.
        meter.record(vec![(
            key.clone(),
            Timestamp::now(),
            Some(Measured::default()),
        )]);
        assert_eq!(meter.usage(&key.0, "web"), Usage::default());
    }
}

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
}

/// The last measurements, as metrics-server keeps them.
#[derive(Default)]
pub struct Meter {
    readings: Mutex<Readings>,
}

impl Meter {
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
        // One sample is no rate yet, as metrics-server after its first scrape.
        if let Some(window) = window {
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

/// A process tree's CPU time and resident memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Measured {
    cpu_ns: u64,
    rss: u64,
}

/// One process as `/proc/PID/stat` tells it.
#[derive(Debug, Clone, Copy)]
struct Proc {
    ppid: u32,
    /// Its own CPU ticks and those of the children it has reaped.
    ticks: u64,
    rss_pages: u64,
    /// The runtime's own process (a shim), which a node does not count in
    /// the container's cgroup: only what is below it.
    shim: bool,
}

/// What the runtime's processes call themselves (see `sandbox::shim`).
const SHIM_NAME: &str = "podbay-shim";

/// `/proc/PID/stat`: `pid (comm) state ppid …`; after the command name,
/// utime is field 11, stime, cutime, cstime 14, …, rss 21.
fn parse_stat(stat: &str) -> Option<Proc> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let fields: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let number = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(Proc {
        ppid: u32::try_from(number(1)?).ok()?,
        ticks: number(11)? + number(12)? + number(13)? + number(14)?,
        rss_pages: number(21)?,
        shim: comm == SHIM_NAME,
    })
}

fn read_procs() -> HashMap<u32, Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    dir.filter_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Some((pid, parse_stat(&stat)?))
    })
    .collect()
}

/// The CPU time and memory of each root's tree: the root, every process
/// below it, and the children they reaped (a cgroup's totals, near enough).
fn measure_trees(procs: &HashMap<u32, Proc>, roots: &[u32]) -> Vec<Option<Measured>> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, proc) in procs {
        children.entry(proc.ppid).or_default().push(*pid);
    }
    let tick_ns = 1_000_000_000 / clock_ticks();
    let page = page_size();
    roots
        .iter()
        .map(|root| {
            procs.get(root)?;
            let mut total = Measured::default();
            let mut stack = vec![*root];
            while let Some(pid) = stack.pop() {
                if let Some(proc) = procs.get(&pid).filter(|p| !p.shim) {
                    total.cpu_ns += proc.ticks * tick_ns;
                    total.rss += proc.rss_pages * page;
                }
                stack.extend(children.get(&pid).into_iter().flatten());
            }
            Some(total)
        })
        .collect()
}

fn clock_ticks() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|t| *t > 0)
        .unwrap_or(100)
}

fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .unwrap_or(4096)
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
        let Ok(measured) =
            tokio::task::spawn_blocking(move || measure_trees(&read_procs(), &roots)).await
        else {
            continue;
        };
        let mut over = Vec::new();
        let rows = running
            .into_iter()
            .zip(measured)
            .map(|((pod, container, process), measured)| {
                if let Some(m) = measured
                    && memory_limit(&state, &pod, &container).is_some_and(|limit| m.rss > limit)
                {
                    over.push((pod.clone(), container.clone(), process.clone()));
                }
                ((pod, container), process.started, measured)
            })
            .collect();
        state.metrics.record(rows);
        for (pod, container, process) in over {
            out_of_memory(&state, pod, container, process);
        }
    }
}

fn memory_limit(state: &SimState, pod: &Key, container: &str) -> Option<u64> {
    let pod = state.store.get(Kind::Pod, pod)?.value();
    let (_, spec) = find_container(&pod, container)?;
    let limit = quantity::parse(spec.pointer("/resources/limits/memory")?.as_str()?)?;
    Some(limit as u64).filter(|l| *l > 0)
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
    if pod.pointer("/status/phase").and_then(Value::as_str) != Some("Running") {
        return None;
    }
    let key = Key::new(
        pod["metadata"]["namespace"].as_str().unwrap_or_default(),
        pod["metadata"]["name"].as_str().unwrap_or_default(),
    );
    let containers: Vec<Value> = ["containerStatuses", "ephemeralContainerStatuses"]
        .iter()
        .flat_map(|field| pod["status"][field].as_array().into_iter().flatten())
        .filter(|status| status.pointer("/state/running").is_some())
        .filter_map(|status| {
            let name = status["name"].as_str()?;
            let usage = meter.usage(&key, name);
            Some(json!({"name": name, "usage": usage_json(usage)}))
        })
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

fn list_json(kind: &str, items: Vec<Value>) -> Value {
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
        let (Some(node), Some(metrics)) = (
            pod.pointer("/spec/nodeName").and_then(Value::as_str),
            pod_metrics(&state.metrics, &pod, taken),
        ) else {
            continue;
        };
        let total = used.entry(node.to_string()).or_default();
        for container in metrics["containers"].as_array().into_iter().flatten() {
            let usage = &container["usage"];
            let read = |field: &str| {
                usage[field]
                    .as_str()
                    .and_then(quantity::parse)
                    .unwrap_or(0.0)
            };
            total.nanocores += (read("cpu") * 1e9).round() as u64;
            total.memory += read("memory") as u64;
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
    fn stat_fields_are_read_after_the_command_name() {
        // A command name with spaces and parentheses, as a process may set.
        let stat = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 \
                    100 10000000 2048 18446744073709551615";
        let proc = parse_stat(stat).expect("a stat line");
        assert_eq!(proc.ppid, 17);
        assert_eq!(proc.ticks, 250 + 50 + 7 + 3);
        assert_eq!(proc.rss_pages, 2048);
        assert!(!proc.shim);
        assert!(parse_stat("4242 (cut").is_none());
        let shim = "7 (podbay-shim) S 1 7 7 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1 1000 300 0";
        assert!(parse_stat(shim).is_some_and(|p| p.shim));
    }

    /// pid 10 is a shim: the tree below it counts, not the shim itself.
    #[test]
    fn a_tree_counts_its_descendants_and_nothing_else() {
        let procs: HashMap<u32, Proc> = [
            (10, 1, 100, 10),
            (11, 10, 50, 5),
            (12, 11, 25, 1),
            (20, 1, 1000, 100),
        ]
        .into_iter()
        .map(|(pid, ppid, ticks, rss_pages)| {
            let shim = pid == 10;
            (
                pid,
                Proc {
                    ppid,
                    ticks,
                    rss_pages,
                    shim,
                },
            )
        })
        .collect();
        let tick_ns = 1_000_000_000 / clock_ticks();
        let measured = measure_trees(&procs, &[10, 20, 99]);
        assert_eq!(
            measured[0],
            Some(Measured {
                cpu_ns: 75 * tick_ns,
                rss: 6 * page_size()
            })
        );
        assert_eq!(measured[1].map(|m| m.cpu_ns), Some(1000 * tick_ns));
        assert_eq!(measured[2], None, "a process that is gone");
    }

    #[test]
    fn this_process_is_measured_from_proc() {
        let me = std::process::id();
        let measured = measure_trees(&read_procs(), &[me]);
        let mine = measured[0].expect("this test's own process");
        assert!(mine.rss > 1 << 20, "{mine:?}");
    }

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

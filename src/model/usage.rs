//! What pods use, from `metrics.k8s.io` (what `kubectl top` reads), and
//! what they ask for: the CPU and MEM columns and `podbay top`.

use serde::Deserialize;

use super::PodKey;
use super::quantity;

/// CPU and memory in use, compact enough to sit in every pod row:
/// microcores (4 294 cores at most) and KiB (4 TiB).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Use {
    pub microcores: u32,
    pub memory_kib: u32,
}

impl Use {
    fn of(cpu: &str, memory: &str) -> Self {
        let clamp = |value: f64| value.clamp(0.0, f64::from(u32::MAX)) as u32;
        Use {
            microcores: clamp(quantity::parse(cpu).unwrap_or(0.0) * 1e6),
            memory_kib: clamp(quantity::parse(memory).unwrap_or(0.0) / 1024.0),
        }
    }

    fn plus(self, other: Use) -> Use {
        Use {
            microcores: self.microcores.saturating_add(other.microcores),
            memory_kib: self.memory_kib.saturating_add(other.memory_kib),
        }
    }

    /// Millicores as kubectl top prints them (`12m`), rounded up as
    /// `Quantity.MilliValue` rounds.
    pub fn cpu_text(self) -> String {
        format!("{}m", self.microcores.div_ceil(1000))
    }

    /// MiB as kubectl top prints them (`45Mi`), rounded down.
    pub fn memory_text(self) -> String {
        format!("{}Mi", self.memory_kib / 1024)
    }

    pub fn memory_bytes(self) -> u64 {
        u64::from(self.memory_kib) * 1024
    }
}

impl PodUse {
    /// Drops the per-container figures (the list keeps only the total of
    /// pods nobody looks at closely: 100 000 pods' container names are
    /// megabytes).
    pub fn totals_only(mut self) -> Self {
        self.containers = Vec::new();
        self
    }
}

/// One pod's use: in all, and per container.
#[derive(Debug, Clone, PartialEq)]
pub struct PodUse {
    pub key: PodKey,
    pub total: Use,
    pub containers: Vec<(String, Use)>,
}

/// What a pod's containers ask for and may use, summed over its regular
/// containers: millicores and bytes, 0 where not set. A limit counts only
/// when every container has one (else the pod has none in all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asks {
    pub cpu_request_m: u32,
    pub cpu_limit_m: u32,
    pub memory_request: u64,
    pub memory_limit: u64,
}

impl Asks {
    /// From each container's `resources` (`requests`/`limits` maps of
    /// quantities); `None` when no container asks for anything.
    pub fn of<'a>(
        containers: impl Iterator<
            Item = (
                Option<&'a str>,
                Option<&'a str>,
                Option<&'a str>,
                Option<&'a str>,
            ),
        >,
    ) -> Option<Asks> {
        let mut asks = Asks::default();
        let (mut cpu_limited, mut memory_limited, mut any) = (true, true, false);
        let milli = |q: Option<&str>| {
            q.and_then(quantity::parse)
                .map(|v| (v * 1000.0).ceil() as u32)
        };
        let bytes = |q: Option<&str>| q.and_then(quantity::parse).map(|v| v as u64);
        for (cpu_request, cpu_limit, memory_request, memory_limit) in containers {
            any |= [cpu_request, cpu_limit, memory_request, memory_limit]
                .iter()
                .any(Option::is_some);
            // A request left out defaults to the limit, as the apiserver sets it.
            let cpu_limit = milli(cpu_limit);
            let memory_limit = bytes(memory_limit);
            asks.cpu_request_m += milli(cpu_request).or(cpu_limit).unwrap_or(0);
            asks.memory_request += bytes(memory_request).or(memory_limit).unwrap_or(0);
            match cpu_limit {
                Some(l) => asks.cpu_limit_m += l,
                None => cpu_limited = false,
            }
            match memory_limit {
                Some(l) => asks.memory_limit += l,
                None => memory_limited = false,
            }
        }
        if !cpu_limited {
            asks.cpu_limit_m = 0;
        }
        if !memory_limited {
            asks.memory_limit = 0;
        }
        any.then_some(asks)
    }
}

/// Memory as a person reads it: `96Mi`, `1536Ki`, `2Gi` (the largest
/// binary unit with a whole number).
pub fn bytes_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{}Gi", b >> 30),
        b if b >= 1 << 20 => format!("{}Mi", b >> 20),
        b if b >= 1 << 10 => format!("{}Ki", b >> 10),
        b => b.to_string(),
    }
}

/// `values` as a one-line chart of eighth blocks, each to the scale of
/// `top` (the limit, when there is one, so a full block is at it) or else
/// of the largest value.
pub fn sparkline(values: &[u64], top: Option<u64>) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let top = top
        .filter(|t| *t > 0)
        .unwrap_or_else(|| values.iter().copied().max().unwrap_or(0))
        .max(1);
    values
        .iter()
        .map(|v| BLOCKS[((v.min(&top) * 7 + top / 2) / top) as usize])
        .collect()
}

/// `used` as a whole percentage of `of`, rounded down as kubectl top node
/// prints it (`None` when there is nothing to compare with).
pub fn percent(used: u64, of: u64) -> Option<u64> {
    (of > 0).then(|| used.saturating_mul(100) / of)
}

/// %CPU/R: CPU in use against the pod's requests.
pub fn cpu_of_request(used: Use, asks: Option<&Asks>) -> Option<u64> {
    percent(
        u64::from(used.microcores),
        u64::from(asks?.cpu_request_m) * 1000,
    )
}

/// %MEM/L: memory in use against the pod's limits.
pub fn memory_of_limit(used: Use, asks: Option<&Asks>) -> Option<u64> {
    percent(used.memory_bytes(), asks?.memory_limit)
}

/// How close a pod is to a limit: memory against its limit (the OOM
/// killer), CPU against its limit (throttling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pressure {
    Easy,
    Near,
    AtLimit,
}

fn pressure_at(percent: Option<u64>) -> Pressure {
    match percent.unwrap_or(0) {
        90.. => Pressure::AtLimit,
        75.. => Pressure::Near,
        _ => Pressure::Easy,
    }
}

/// Memory against the pod's memory limit.
pub fn memory_pressure(used: Use, asks: Option<&Asks>) -> Pressure {
    pressure_at(memory_of_limit(used, asks))
}

/// CPU against the pod's CPU limit.
pub fn cpu_pressure(used: Use, asks: Option<&Asks>) -> Pressure {
    pressure_at(
        asks.and_then(|a| percent(u64::from(used.microcores), u64::from(a.cpu_limit_m) * 1000)),
    )
}

/// Why there are no figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsageError {
    /// The cluster serves no metrics API (no metrics-server): nothing to
    /// retry soon.
    NoApi,
    /// The user may not read pod metrics there: the server's sentence.
    Forbidden(String),
    /// It failed this time (a stall, a 503 while metrics-server restarts).
    Failed(String),
    /// The answer was over the size podbay reads (every namespace of a
    /// big cluster at once).
    TooLarge,
}

impl UsageError {
    /// One sentence: what happened and what to do.
    pub fn sentence(&self) -> String {
        match self {
            UsageError::NoApi => "This cluster serves no metrics API (metrics.k8s.io), so CPU and memory are not shown; metrics-server provides it.".into(),
            UsageError::Forbidden(why) => format!("{why} CPU and memory are not shown."),
            UsageError::Failed(why) => format!("CPU and memory could not be read: {why}"),
            UsageError::TooLarge => "CPU and memory could not be read: the metrics API's answer was over podbay's 16 MiB limit; narrow the namespaces (:ns).".into(),
        }
    }

    /// Whether reading again later may work.
    pub fn passing(&self) -> bool {
        matches!(self, UsageError::Failed(_) | UsageError::TooLarge)
    }
}

/// A `PodMetricsList` or `NodeMetricsList`: one decoder for both (each
/// decoder is kilobytes of the binary). An item is a pod (metadata,
/// containers, window), a node (metadata, usage) or a container (name,
/// usage).
#[derive(Deserialize)]
struct MetricsList {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    items: Vec<Item>,
}

impl MetricsList {
    /// The list, if it says it is a `kind` (a server that answers the
    /// metrics API with a PodList is not believed).
    fn of_kind(self, kind: &str) -> serde_json::Result<Self> {
        match self.kind.as_deref() {
            Some(said) if said != kind => Err(<serde_json::Error as serde::de::Error>::custom(
                format!("it is a {said}"),
            )),
            _ => Ok(self),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Item {
    metadata: Meta,
    name: String,
    usage: UsageFields,
    containers: Vec<Item>,
    window: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Meta {
    name: String,
    namespace: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct UsageFields {
    cpu: String,
    memory: String,
}

/// A `PodMetricsList`'s pods, and the window metrics-server measured over
/// (how often it has something new). A quantity that does not parse
/// counts as zero.
pub fn parse_pod_metrics(
    body: &[u8],
) -> serde_json::Result<(Vec<PodUse>, Option<std::time::Duration>)> {
    let list = serde_json::from_slice::<MetricsList>(body)?.of_kind("PodMetricsList")?;
    let window = list
        .items
        .iter()
        .find_map(|item| item.window.as_deref().and_then(go_seconds));
    // A namespace's pods come together: one copy of its name for them all.
    let mut namespace: std::sync::Arc<str> = "".into();
    let pods = list
        .items
        .into_iter()
        .map(|item| {
            let containers: Vec<(String, Use)> = item
                .containers
                .into_iter()
                .map(|c| (c.name, Use::of(&c.usage.cpu, &c.usage.memory)))
                .collect();
            if *namespace != *item.metadata.namespace {
                namespace = item.metadata.namespace.as_str().into();
            }
            PodUse {
                key: PodKey {
                    namespace: namespace.clone(),
                    name: item.metadata.name.as_str().into(),
                },
                total: containers
                    .iter()
                    .fold(Use::default(), |sum, (_, u)| sum.plus(*u)),
                containers,
            }
        })
        .collect();
    Ok((pods, window))
}

/// A `NodeMetricsList`'s nodes and what each uses.
pub fn parse_node_metrics(body: &[u8]) -> serde_json::Result<Vec<(String, Use)>> {
    let list = serde_json::from_slice::<MetricsList>(body)?.of_kind("NodeMetricsList")?;
    Ok(list
        .items
        .into_iter()
        .map(|n| (n.metadata.name, Use::of(&n.usage.cpu, &n.usage.memory)))
        .collect())
}

/// A Go duration of seconds only (`15s`, `10.5s`), as metrics-server
/// writes its window.
fn go_seconds(text: &str) -> Option<std::time::Duration> {
    let seconds: f64 = text.strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| std::time::Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metrics_list_reads_as_kubectl_top_prints_it() {
        let body = br#"{"kind":"PodMetricsList","items":[
            {"metadata":{"name":"web-1","namespace":"shop"},"window":"10.5s","containers":[
                {"name":"web","usage":{"cpu":"329087452n","memory":"2748180Ki"}},
                {"name":"envoy","usage":{"cpu":"1m","memory":"10Mi"}}]},
            {"metadata":{"name":"odd","namespace":"shop"},"containers":[
                {"name":"x","usage":{"cpu":"lots","memory":"-5"}}]}]}"#;
        let (pods, window) = parse_pod_metrics(body).expect("a list");
        assert_eq!(window, Some(std::time::Duration::from_millis(10_500)));
        assert_eq!(pods[0].key, PodKey::new("shop", "web-1"));
        assert_eq!(pods[0].containers.len(), 2);
        assert_eq!(pods[0].total.cpu_text(), "331m");
        assert_eq!(pods[0].total.memory_text(), "2693Mi");
        assert_eq!(pods[1].total, Use::default(), "what does not parse is zero");
        assert!(parse_pod_metrics(br#"{"items": 5}"#).is_err());
        assert!(
            parse_pod_metrics(br#"{"kind": "PodList", "items": []}"#).is_err(),
            "a pod list is not the pods' metrics"
        );
        assert!(parse_pod_metrics(b"not json").is_err());
    }

    #[test]
    fn a_node_metrics_list_reads_each_nodes_use() {
        let body = br#"{"kind":"NodeMetricsList","items":[
            {"metadata":{"name":"node-a1"},"usage":{"cpu":"329087452n","memory":"2748180Ki"}}]}"#;
        let nodes = parse_node_metrics(body).expect("a list");
        assert_eq!(nodes.len(), 1);
        assert_eq!(
            (nodes[0].0.as_str(), nodes[0].1.cpu_text()),
            ("node-a1", "330m".into())
        );
    }

    #[test]
    fn asks_sum_the_containers_and_a_limit_needs_every_container() {
        let asks = Asks::of(
            [
                (Some("100m"), Some("500m"), Some("64Mi"), Some("96Mi")),
                (None, None, Some("32Mi"), None),
            ]
            .into_iter(),
        )
        .expect("asks");
        assert_eq!(asks.cpu_request_m, 100);
        assert_eq!(asks.cpu_limit_m, 0, "one container has no CPU limit");
        assert_eq!(asks.memory_request, 96 << 20);
        assert_eq!(asks.memory_limit, 0);
        let limited = Asks::of([(None, Some("1"), None, Some("256Mi"))].into_iter()).unwrap();
        assert_eq!(
            (limited.cpu_request_m, limited.memory_request),
            (1000, 256 << 20),
            "a request defaults to its limit"
        );
        assert_eq!(Asks::of([(None, None, None, None)].into_iter()), None);
    }

    #[test]
    fn a_sparkline_is_to_the_limits_scale() {
        assert_eq!(sparkline(&[0, 48, 96], Some(96)), "▁▅█");
        assert_eq!(
            sparkline(&[10, 20], None),
            "▅█",
            "to the largest without a limit"
        );
        assert_eq!(sparkline(&[200], Some(96)), "█", "over the limit is full");
        assert_eq!(sparkline(&[0, 0], None), "▁▁");
        assert_eq!(bytes_text(96 << 20), "96Mi");
        assert_eq!(bytes_text(2 << 30), "2Gi");
        assert_eq!(bytes_text(1536 << 10), "1Mi");
        assert_eq!(bytes_text(700), "700");
    }

    #[test]
    fn percentages_and_pressure_follow_requests_and_limits() {
        let asks = Asks {
            cpu_request_m: 100,
            cpu_limit_m: 500,
            memory_request: 64 << 20,
            memory_limit: 96 << 20,
        };
        let used = Use {
            microcores: 150_000,
            memory_kib: 48 * 1024,
        };
        assert_eq!(cpu_of_request(used, Some(&asks)), Some(150));
        assert_eq!(memory_of_limit(used, Some(&asks)), Some(50));
        assert_eq!(memory_of_limit(used, None), None);
        assert_eq!(memory_pressure(used, Some(&asks)), Pressure::Easy);
        assert_eq!(cpu_pressure(used, Some(&asks)), Pressure::Easy);
        let near = Use {
            memory_kib: 80 * 1024,
            ..used
        };
        assert_eq!(memory_pressure(near, Some(&asks)), Pressure::Near);
        assert_eq!(
            memory_pressure(near, None),
            Pressure::Easy,
            "no limit, no pressure"
        );
        let throttled = Use {
            microcores: 495_000,
            ..used
        };
        assert_eq!(cpu_pressure(throttled, Some(&asks)), Pressure::AtLimit);
        assert_eq!(memory_pressure(throttled, Some(&asks)), Pressure::Easy);
    }
}

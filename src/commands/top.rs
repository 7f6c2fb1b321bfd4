//! `podbay top`: the pods' CPU and memory in use, as `kubectl top pod`
//! prints them, from the same read as the pod list's columns.

use serde_json::json;

use super::debug::{Failure, exit, fail};
use crate::cli::TopArgs;
use crate::cluster::metrics::pod_usage;
use crate::model::PodKey;
use crate::model::text::Printable;
use crate::model::usage::{Asks, PodUse, UsageError};

pub async fn run(args: TopArgs) -> Result<i32, Failure> {
    let connection = super::connect(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
    let namespace =
        (!args.all_namespaces).then(|| args.namespace.clone().unwrap_or(connection.namespace));
    let client = connection.client;
    let (mut pods, _) = pod_usage(
        client.clone(),
        namespace.as_deref(),
        args.selector.as_deref(),
    )
    .await
    .map_err(|error| {
        let code = match error {
            UsageError::NoApi => exit::UNSUPPORTED,
            UsageError::Forbidden(_) => exit::FORBIDDEN,
            UsageError::Failed(_) | UsageError::TooLarge => exit::UNREACHABLE,
        };
        fail(code, error.sentence())
    })?;
    sort(&mut pods, args.sort.as_deref());
    if args.output.as_deref() == Some("json") {
        let asks = asks_of(client, namespace.as_deref(), args.selector.as_deref()).await?;
        crate::print::stdout(&Printable::json(&as_json(&pods, &asks)));
        return Ok(0);
    }
    if pods.is_empty() {
        let place = match &namespace {
            Some(ns) => format!("namespace {ns}"),
            None => "any namespace".to_string(),
        };
        crate::print::say(
            &format!("No pod metrics in {place} (a pod is measured shortly after it starts).")
                .into(),
        );
        return Ok(0);
    }
    crate::print::stdout(&Printable::table(&table(&pods, namespace.is_none())));
    Ok(0)
}

/// Most first by `cpu` or `memory`, ties (and no sort) by namespace/name.
fn sort(pods: &mut [PodUse], by: Option<&str>) {
    pods.sort_unstable_by(|a, b| {
        let most_first = match by {
            Some("cpu") => b.total.microcores.cmp(&a.total.microcores),
            Some("memory") => b.total.memory_kib.cmp(&a.total.memory_kib),
            _ => std::cmp::Ordering::Equal,
        };
        most_first.then_with(|| a.key.cmp(&b.key))
    });
}

/// kubectl top pod's columns.
fn table(pods: &[PodUse], all_namespaces: bool) -> Vec<Vec<String>> {
    let header = ["NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)"];
    let skip = usize::from(!all_namespaces);
    std::iter::once(header.iter().skip(skip).map(|h| h.to_string()).collect())
        .chain(pods.iter().map(|pod| {
            let (namespace, name) = pod.key.shown();
            [
                namespace.into_owned(),
                name.into_owned(),
                pod.total.cpu_text(),
                pod.total.memory_text(),
            ]
            .into_iter()
            .skip(skip)
            .collect()
        }))
        .collect()
}

/// Each pod's requests and limits, read from the pods themselves.
async fn asks_of(
    client: kube::Client,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> Result<std::collections::HashMap<PodKey, Asks>, Failure> {
    let pods = super::list_pods(client, namespace, selector).await?;
    Ok(pods
        .iter()
        .filter_map(|pod| Some((PodKey::of(pod), crate::model::pod::asks_of(pod)?)))
        .collect())
}

fn as_json(pods: &[PodUse], asks: &std::collections::HashMap<PodKey, Asks>) -> serde_json::Value {
    let items: Vec<serde_json::Value> = pods
        .iter()
        .map(|pod| {
            let asks = asks.get(&pod.key).copied().unwrap_or_default();
            json!({
                "namespace": &*pod.key.namespace,
                "pod": &*pod.key.name,
                "cpuMillicores": pod.total.microcores.div_ceil(1000),
                "memoryBytes": pod.total.memory_bytes(),
                "containers": pod.containers.iter().map(|(name, used)| json!({
                    "name": name,
                    "cpuMillicores": used.microcores.div_ceil(1000),
                    "memoryBytes": used.memory_bytes(),
                })).collect::<Vec<_>>(),
                "requests": {"cpuMillicores": asks.cpu_request_m, "memoryBytes": asks.memory_request},
                "limits": {"cpuMillicores": asks.cpu_limit_m, "memoryBytes": asks.memory_limit},
            })
        })
        .collect();
    json!({ "pods": items })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::usage::Use;

    fn pod(ns: &str, name: &str, millicores: u32, mib: u32) -> PodUse {
        let total = Use {
            microcores: millicores * 1000,
            memory_kib: mib * 1024,
        };
        PodUse {
            key: PodKey::new(ns, name),
            total,
            containers: vec![("app".into(), total)],
        }
    }

    #[test]
    fn sorted_most_first_and_printed_as_kubectl_top() {
        let mut pods = vec![
            pod("shop", "b", 5, 300),
            pod("shop", "a", 120, 20),
            pod("search", "c", 5, 90),
        ];
        sort(&mut pods, Some("memory"));
        let names: Vec<&str> = pods.iter().map(|p| &*p.key.name).collect();
        assert_eq!(names, ["b", "c", "a"]);
        sort(&mut pods, Some("cpu"));
        assert_eq!(&*pods[0].key.name, "a");
        assert_eq!(&*pods[1].key.name, "c", "ties by namespace, then name");
        let rows = table(&pods, false);
        assert_eq!(rows[0], ["NAME", "CPU(cores)", "MEMORY(bytes)"]);
        assert_eq!(rows[1], ["a", "120m", "20Mi"]);
        assert_eq!(table(&pods, true)[1][0], "shop");
    }

    #[test]
    fn json_carries_containers_requests_and_limits() {
        let pods = vec![pod("shop", "a", 120, 20)];
        let asks = [(
            PodKey::new("shop", "a"),
            Asks {
                cpu_request_m: 100,
                cpu_limit_m: 0,
                memory_request: 64 << 20,
                memory_limit: 96 << 20,
            },
        )]
        .into_iter()
        .collect();
        let value = as_json(&pods, &asks);
        let first = &value["pods"][0];
        assert_eq!(first["cpuMillicores"], 120);
        assert_eq!(first["memoryBytes"], 20 << 20);
        assert_eq!(first["containers"][0]["name"], "app");
        assert_eq!(first["limits"]["memoryBytes"], 96 << 20);
        assert_eq!(first["requests"]["cpuMillicores"], 100);
    }
}

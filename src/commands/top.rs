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
    let contexts = crate::cli::contexts(args.clusters.context.as_deref());
    let json = args.output.as_deref() == Some("json");
    let across = contexts.len() > 1;
    let read = super::clusters::in_each(
        args.clusters.kubeconfig.as_deref(),
        &contexts,
        super::LIST_WITHIN,
        "Reading what the pods use",
        |_, connection| read(&args, connection, json),
    )
    .await;
    let mut first_failure: Option<Failure> = None;
    let mut rows: Vec<(String, PodUse)> = Vec::new();
    let mut asks = std::collections::HashMap::new();
    let mut namespace = None;
    for (context, read) in contexts.iter().zip(read) {
        let context = context.clone().unwrap_or_default();
        match read {
            Ok(cluster) => {
                namespace = cluster.namespace;
                asks.extend(
                    cluster
                        .asks
                        .into_iter()
                        .map(|(k, a)| ((context.clone(), k), a)),
                );
                rows.extend(cluster.pods.into_iter().map(|pod| (context.clone(), pod)));
            }
            Err(missed) if !across => return Err(missed.failure),
            Err(missed) => {
                crate::print::say(&missed.sentence().into());
                first_failure.get_or_insert(missed.failure);
            }
        }
    }
    sort(&mut rows, args.sort.as_deref());
    let status = first_failure.map_or(0, |failure| failure.code);
    if json {
        crate::print::stdout(&Printable::json(&as_json(&rows, &asks, across)));
        return Ok(status);
    }
    if rows.is_empty() {
        if status == 0 {
            let place = match (&namespace, across) {
                (_, true) => "those clusters".to_string(),
                (Some(ns), false) => format!("namespace {ns}"),
                (None, false) => "any namespace".to_string(),
            };
            crate::print::say(
                &format!("No pod metrics in {place} (a pod is measured shortly after it starts).")
                    .into(),
            );
        }
        return Ok(status);
    }
    let columns = Columns {
        context: across,
        // Each cluster has its own default namespace.
        namespace: across || args.all_namespaces,
    };
    crate::print::stdout(&Printable::table(&table(&rows, columns)));
    Ok(status)
}

/// One cluster's pods in use, and with `-o json` their requests and limits.
struct ClusterUse {
    /// The namespace read (`None`: all).
    namespace: Option<String>,
    pods: Vec<PodUse>,
    asks: std::collections::HashMap<PodKey, Asks>,
}

async fn read(
    args: &TopArgs,
    connection: crate::cluster::client::Connection,
    with_asks: bool,
) -> Result<ClusterUse, Failure> {
    let namespace =
        (!args.all_namespaces).then(|| args.namespace.clone().unwrap_or(connection.namespace));
    let client = connection.client;
    let (pods, _) = pod_usage(
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
    let asks = if with_asks {
        asks_of(client, namespace.as_deref(), args.selector.as_deref()).await?
    } else {
        Default::default()
    };
    Ok(ClusterUse {
        namespace,
        pods,
        asks,
    })
}

/// Which leading columns the table has.
#[derive(Clone, Copy)]
struct Columns {
    context: bool,
    namespace: bool,
}

/// Most first by `cpu` or `memory`, ties (and no sort) by context, then
/// namespace/name.
fn sort(pods: &mut [(String, PodUse)], by: Option<&str>) {
    pods.sort_unstable_by(|(a_context, a), (b_context, b)| {
        let most_first = match by {
            Some("cpu") => b.total.microcores.cmp(&a.total.microcores),
            Some("memory") => b.total.memory_kib.cmp(&a.total.memory_kib),
            _ => std::cmp::Ordering::Equal,
        };
        most_first
            .then_with(|| a_context.cmp(b_context))
            .then_with(|| a.key.cmp(&b.key))
    });
}

/// kubectl top pod's columns, CONTEXT first across clusters.
fn table(pods: &[(String, PodUse)], columns: Columns) -> Vec<Vec<String>> {
    let header = [
        "CONTEXT",
        "NAMESPACE",
        "NAME",
        "CPU(cores)",
        "MEMORY(bytes)",
    ];
    let shown = [columns.context, columns.namespace, true, true, true];
    let keep = |cells: [String; 5]| -> Vec<String> {
        cells
            .into_iter()
            .zip(shown)
            .filter_map(|(cell, on)| on.then_some(cell))
            .collect()
    };
    std::iter::once(keep(header.map(String::from)))
        .chain(pods.iter().map(|(context, pod)| {
            let (namespace, name) = pod.key.shown();
            keep([
                context.clone(),
                namespace.into_owned(),
                name.into_owned(),
                pod.total.cpu_text(),
                pod.total.memory_text(),
            ])
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

fn as_json(
    pods: &[(String, PodUse)],
    asks: &std::collections::HashMap<(String, PodKey), Asks>,
    across: bool,
) -> serde_json::Value {
    let items: Vec<serde_json::Value> = pods
        .iter()
        .map(|(context, pod)| {
            let asks = asks
                .get(&(context.clone(), pod.key.clone()))
                .copied()
                .unwrap_or_default();
            let mut item = json!({
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
            });
            if across {
                item["context"] = context.as_str().into();
            }
            item
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

    const ONE: Columns = Columns {
        context: false,
        namespace: false,
    };

    #[test]
    fn sorted_most_first_and_printed_as_kubectl_top() {
        let mut pods = vec![
            (String::new(), pod("shop", "b", 5, 300)),
            (String::new(), pod("shop", "a", 120, 20)),
            (String::new(), pod("search", "c", 5, 90)),
        ];
        sort(&mut pods, Some("memory"));
        let names: Vec<&str> = pods.iter().map(|(_, p)| &*p.key.name).collect();
        assert_eq!(names, ["b", "c", "a"]);
        sort(&mut pods, Some("cpu"));
        assert_eq!(&*pods[0].1.key.name, "a");
        assert_eq!(&*pods[1].1.key.name, "c", "ties by namespace, then name");
        let rows = table(&pods, ONE);
        assert_eq!(rows[0], ["NAME", "CPU(cores)", "MEMORY(bytes)"]);
        assert_eq!(rows[1], ["a", "120m", "20Mi"]);
        let all = Columns {
            namespace: true,
            ..ONE
        };
        assert_eq!(table(&pods, all)[1][0], "shop");
    }

    #[test]
    fn across_clusters_the_sort_is_one_and_each_row_names_its_context() {
        let mut pods = vec![
            ("sim-a".to_string(), pod("shop", "web", 5, 300)),
            ("sim-b".to_string(), pod("shop", "web", 5, 900)),
            ("sim-a".to_string(), pod("shop", "cart", 5, 300)),
        ];
        sort(&mut pods, Some("memory"));
        let order: Vec<(&str, &str)> = pods
            .iter()
            .map(|(c, p)| (c.as_str(), &*p.key.name))
            .collect();
        assert_eq!(
            order,
            [("sim-b", "web"), ("sim-a", "cart"), ("sim-a", "web")],
            "the most first over both clusters; ties by context, then name"
        );
        let columns = Columns {
            context: true,
            namespace: true,
        };
        let rows = table(&pods, columns);
        assert_eq!(
            rows[0],
            [
                "CONTEXT",
                "NAMESPACE",
                "NAME",
                "CPU(cores)",
                "MEMORY(bytes)"
            ]
        );
        assert_eq!(rows[1], ["sim-b", "shop", "web", "5m", "900Mi"]);
        let value = as_json(&pods, &Default::default(), true);
        assert_eq!(value["pods"][0]["context"], "sim-b");
        assert!(
            as_json(&pods, &Default::default(), false)["pods"][0]
                .get("context")
                .is_none()
        );
    }

    #[test]
    fn json_carries_containers_requests_and_limits() {
        let pods = vec![(String::new(), pod("shop", "a", 120, 20))];
        let asks = [(
            (String::new(), PodKey::new("shop", "a")),
            Asks {
                cpu_request_m: 100,
                cpu_limit_m: 0,
                memory_request: 64 << 20,
                memory_limit: 96 << 20,
            },
        )]
        .into_iter()
        .collect();
        let value = as_json(&pods, &asks, false);
        let first = &value["pods"][0];
        assert_eq!(first["cpuMillicores"], 120);
        assert_eq!(first["memoryBytes"], 20 << 20);
        assert_eq!(first["containers"][0]["name"], "app");
        assert_eq!(first["limits"]["memoryBytes"], 96 << 20);
        assert_eq!(first["requests"]["cpuMillicores"], 100);
    }
}

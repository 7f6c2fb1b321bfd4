//! The metrics API's reads: the pods' CPU and memory for the list, and
//! the nodes' for the nodes view.

use super::*;

impl Tasks {
    /// The pods' CPU and memory: one read for all namespaces, or one per
    /// namespace (what some may read is kept when others refuse).
    pub(super) fn read_usage(
        &mut self,
        cluster: ClusterId,
        namespaces: Option<Vec<String>>,
        detailed: Vec<PodKey>,
    ) {
        let Some(client) = self.clients.get(&cluster).cloned() else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            // Each answer keeps its containers' figures only for the pods
            // looked at closely, before the next is read.
            let pod_usage = |client, ns: Option<String>| {
                let detailed = &detailed;
                async move {
                    let (pods, window) =
                        crate::cluster::metrics::pod_usage(client, ns.as_deref(), None).await?;
                    let pods = pods
                        .into_iter()
                        .map(|p| match detailed.contains(&p.key) {
                            true => p,
                            false => p.totals_only(),
                        })
                        .collect::<Vec<_>>();
                    Ok::<_, crate::model::usage::UsageError>((pods, window))
                }
            };
            let read = match &namespaces {
                None => pod_usage(client, None).await,
                Some(list) => {
                    // A few at once: a cluster of 200 namespaces is read
                    // in seconds, and the server sees no burst.
                    use futures::StreamExt as _;
                    let mut reads = futures::stream::iter(list.clone())
                        .map(|ns| {
                            let client = client.clone();
                            pod_usage(client, Some(ns))
                        })
                        .buffer_unordered(4);
                    let mut pods = Vec::new();
                    let mut window = None;
                    let mut failure = None;
                    let mut read_any = false;
                    while let Some(read) = reads.next().await {
                        match read {
                            Ok((some, w)) => {
                                read_any = true;
                                pods.extend(some);
                                window = window.or(w);
                            }
                            Err(error) => {
                                failure.get_or_insert(error);
                            }
                        }
                    }
                    match failure {
                        Some(error) if !read_any => Err(error),
                        _ => Ok((pods, window)),
                    }
                }
            };
            let event = Event::Usage {
                cluster,
                namespaces,
                read,
            };
            let _ = tx.send(Tagged::untied(event)).await;
        });
    }

    /// What each node uses.
    pub(super) fn read_node_usage(&mut self, cluster: ClusterId) {
        let Some(client) = self.clients.get(&cluster).cloned() else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let read = crate::cluster::metrics::node_usage(client).await;
            let _ = tx
                .send(Tagged::untied(Event::NodeUsage { cluster, read }))
                .await;
        });
    }
}

//! The metrics API's reads: the pods' CPU and memory for the list, and
//! the nodes' for the nodes view.

use super::*;

impl Tasks {
    /// The pods' CPU and memory: one read for all namespaces, or one per
    /// namespace shown (what some may read is kept when others refuse).
    pub(super) fn read_usage(&mut self, cluster: ClusterId, namespaces: Option<Vec<String>>) {
        let Some(client) = self.clients.get(&cluster).cloned() else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            use crate::cluster::metrics::pod_usage;
            let read = match &namespaces {
                None => pod_usage(client, None, None).await,
                Some(list) => {
                    let mut pods = Vec::new();
                    let mut window = None;
                    let mut failure = None;
                    let mut read_any = false;
                    for ns in list {
                        match pod_usage(client.clone(), Some(ns), None).await {
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

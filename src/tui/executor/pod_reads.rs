//! The pod list's watches (the browser's cluster's and the others'), and
//! the one-off reads of pods: a node's, and the marked ones for the form.

use super::*;

impl Tasks {
    pub(super) fn watch_pods(&mut self, scope: Scope) {
        abort(&mut self.pods);
        self.others.clear();
        let tagged = (FeedOrigin::Pods, self.next_generation(FeedOrigin::Pods));
        let client = self.connection.client.clone();
        let rows = pod_rows();
        self.pods = self.spawn_scoped(client, tagged, scope, rows, Event::Pods, Pages::AsTheyCome);
    }

    /// The pod watch of one cluster of a list of several, replacing that
    /// cluster's alone (ended with the others by the next
    /// [`Self::watch_pods`]); another cluster's probe with it.
    pub(super) fn watch_pods_of(&mut self, cluster: ClusterId, scope: Scope) {
        let Some(client) = self.clients.get(&cluster).cloned() else {
            return;
        };
        // The browser's pod watch's generation: replaced with it.
        let tagged = (FeedOrigin::Pods, self.generations[0]);
        let of = cluster.clone();
        let wrap = move |feed| Event::OtherPods {
            cluster: of.clone(),
            feed,
        };
        let pods = self.spawn_scoped(
            client.clone(),
            tagged,
            scope,
            pod_rows(),
            wrap,
            Pages::AsTheyCome,
        );
        if cluster == self.connection.cluster() {
            // The browser's own probe runs already.
            abort(&mut self.pods);
            self.pods = pods;
            return;
        }
        let pulse = tokio::spawn(super::super::pulse::run(
            client,
            cluster.clone(),
            self.tx.clone(),
            Tagged::untied,
        ));
        // The watch replaced, if any, ends as it drops.
        self.others.insert(cluster, OtherWatch { pods, pulse });
    }

    /// The pods on `node` in every namespace, one list by field selector
    /// (`kubectl get pods -A --field-selector spec.nodeName=NODE`), within
    /// [`READ_TIMEOUT`].
    pub(super) fn read_node_pods(&mut self, cluster: ClusterId, node: String) {
        let Some(client) = self.clients.get(&cluster).cloned() else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let pods: Api<Pod> = Api::all(client);
            let params = kube::api::ListParams::default().fields(&format!("spec.nodeName={node}"));
            let listed = crate::cluster::objects::list(&pods, &params);
            let deadline = crate::cluster::deadline::Deadline::none().within(Some(READ_TIMEOUT));
            let pods = match deadline.bound(listed).await {
                Ok(Ok(items)) => Ok(items.iter().map(PodRow::from_pod).collect()),
                Ok(Err(e)) => Err(crate::cluster::errors::describe(&e).sentence.into_string()),
                Err(why) => Err(format!("the API server did not answer: {why}")),
            };
            let event = Event::NodePods {
                cluster,
                node,
                pods,
            };
            let _ = tx.send(Tagged::untied(event)).await;
        });
    }

    /// The marked pods, each read once (all at once, each within
    /// [`READ_TIMEOUT`]), with their namespaces' Pod Security labels.
    pub(super) fn read_pods(&mut self, cluster: ClusterId, keys: Vec<PodKey>) {
        let Some(client) = self.clients.get(&cluster).cloned() else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let namespaces: std::collections::BTreeSet<&str> =
                keys.iter().map(|k| &*k.namespace).collect();
            let policies = futures::future::join_all(namespaces.into_iter().map(|ns| {
                let client = client.clone();
                async move {
                    let policy =
                        crate::cluster::debug::read_policy(&client, ns, READ_TIMEOUT).await;
                    (ns.to_string(), policy)
                }
            }))
            .await;
            let reads = keys.iter().map(|key| {
                let pods: Api<Pod> = Api::namespaced(client.clone(), &key.namespace);
                async move {
                    let read = crate::cluster::objects::get(&pods, &key.name);
                    match tokio::time::timeout(READ_TIMEOUT, read).await {
                        Ok(Ok(pod)) => Ok(PodDetail::from_pod(&pod)),
                        Ok(Err(e)) => {
                            Err(crate::cluster::errors::describe(&e).sentence.into_string())
                        }
                        Err(_) => Err(format!(
                            "could not be read: the API server did not answer within {} s",
                            READ_TIMEOUT.as_secs()
                        )),
                    }
                }
            });
            let details = futures::future::join_all(reads).await;
            let pods = keys
                .into_iter()
                .zip(details)
                .map(|(key, detail)| {
                    let policy = policies
                        .iter()
                        .find(|(ns, _)| **ns == *key.namespace)
                        .and_then(|(_, p)| p.clone());
                    FleetPod {
                        cluster: cluster.clone(),
                        key,
                        detail,
                        policy,
                    }
                })
                .collect();
            let _ = tx
                .send(Tagged::untied(Event::PodsRead { cluster, pods }))
                .await;
        });
    }
}

/// A pod list's projection of each pod into its row, one set of shared
/// strings for all the scope's feeds and their relists, so rows of one
/// namespace share its name and nodes.
fn pod_rows() -> impl Fn(&ListedPod) -> PodRow + Clone + Send + Sync + 'static {
    let strings = Arc::new(std::sync::Mutex::new(Strings::default()));
    move |pod: &ListedPod| {
        PodRow::from_pod_sharing(&pod.0, &mut |text| {
            strings.lock().unwrap_or_else(|e| e.into_inner()).get(text)
        })
    }
}

/// Another cluster's pod watch and probe: both end as it drops.
pub(super) struct OtherWatch {
    pods: Vec<JoinHandle<()>>,
    pulse: JoinHandle<()>,
}

impl Drop for OtherWatch {
    fn drop(&mut self) {
        abort(&mut self.pods);
        self.pulse.abort();
    }
}

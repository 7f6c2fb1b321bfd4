//! The pods podbay makes for a pane (a node debug pod, a held copy):
//! created once the namespace's Pod Security admits them, deleted when
//! their pane closes, and every one of them before podbay exits.

use super::*;

impl Tasks {
    /// Creates a terminal's pod (a node debug pod) once the namespace's
    /// Pod Security admits it.
    pub(super) fn create_pod(
        &mut self,
        id: TerminalId,
        client: kube::Client,
        key: TerminalKey,
        pod: Pod,
        refused_hint: String,
    ) {
        let tx = self.tx.clone();
        let limit = self.launch_timeout;
        let created = self.created.clone();
        self.creates.retain(|task| !task.is_finished());
        self.creates.push(tokio::spawn(async move {
            let namespace = key.pod.namespace.to_string();
            let policy = crate::cluster::debug::read_policy(&client, &namespace, limit).await;
            let refusal = policy.and_then(|p| p.pod_refusal(&namespace, "pod", &pod));
            let event = if let Some(refusal) = refusal {
                Event::LaunchFailed {
                    id,
                    sentence: format!("{refusal} {refused_hint}").into(),
                    refused_by: None,
                }
            } else {
                let created_now = tokio::time::timeout(
                    limit,
                    crate::cluster::debug_pod::create(&client, &namespace, &pod),
                )
                .await;
                match created_now {
                    Ok(Ok(_)) => {
                        if let Ok(mut list) = created.lock() {
                            list.push((key.cluster.clone(), key.pod.clone()));
                        }
                        Event::PodCreated {
                            id,
                            cluster: key.cluster.clone(),
                            pod: key.pod.clone(),
                        }
                    }
                    Ok(Err(e)) => Event::LaunchFailed {
                        id,
                        sentence: crate::cluster::errors::describe(&e).sentence,
                        refused_by: None,
                    },
                    Err(_) => {
                        // The create may still land: it goes too.
                        let name = key.pod.name.to_string();
                        let client = client.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                            let delete = crate::cluster::debug_pod::delete(&client, &namespace, &name);
                            let _ = crate::cluster::deadline::clean_up(delete).await;
                        });
                        Event::LaunchFailed {
                            id,
                            sentence: format!(
                                "The API server did not answer the request to create pod {} within {} s; podbay deletes it if it was made.",
                                key.pod,
                                limit.as_secs()
                            )
                            .into(),
                            refused_by: None,
                        }
                    }
                }
            };
            let _ = tx.send(Tagged::untied(event)).await;
        }));
    }

    /// Deletes these pods, and every pod created this run, before podbay
    /// exits (each within [`READ_TIMEOUT`]).
    pub(in crate::tui) async fn delete_now(&mut self, mut pods: Vec<(ClusterId, PodKey)>) {
        // A create under way may land after its pane went: wait for it.
        let creates = futures::future::join_all(self.creates.drain(..));
        let _ = tokio::time::timeout(READ_TIMEOUT, creates).await;
        if let Ok(created) = self.created.lock() {
            pods.extend(created.iter().cloned());
        }
        pods.sort();
        pods.dedup();
        let deletes = pods.into_iter().filter_map(|(cluster, key)| {
            let client = self.clients.get(&cluster).cloned()?;
            Some(async move {
                let delete = crate::cluster::debug_pod::delete(&client, &key.namespace, &key.name);
                let _ = tokio::time::timeout(READ_TIMEOUT, delete).await;
            })
        });
        futures::future::join_all(deletes).await;
    }

    pub(super) fn delete_pod(&mut self, cluster: &ClusterId, key: PodKey) {
        // The cluster the user was asked about, whatever the browser shows now.
        let Some(client) = self.clients.get(cluster).cloned() else {
            return;
        };
        let pods: Api<Pod> = Api::namespaced(client, &key.namespace);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let outcome = match tokio::time::timeout(
                READ_TIMEOUT,
                crate::cluster::objects::delete(&pods, &key.name, &Default::default()),
            )
            .await
            {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(crate::cluster::errors::describe(&e).sentence.into_string()),
                Err(_) => Err(format!(
                    "The API server did not answer the delete of pod {key} within {} s; it may still happen: watch the list.",
                    READ_TIMEOUT.as_secs()
                )),
            };
            let _ = tx
                .send(Tagged::untied(Event::PodDeleted { key, outcome }))
                .await;
        });
    }
}

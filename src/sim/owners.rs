//! The workloads behind the scenario's pods, as read-only `apps/v1`
//! objects: a ReplicaSet or a StatefulSet for each pod owner, and the
//! Deployment above a ReplicaSet named `<deployment>-<pod-template-hash>`,
//! as the Deployment controller names them. Their selectors are what
//! kubectl resolves `deploy/NAME` through. What their controllers do when a
//! pod goes is `controllers`.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// Gathers the owners of pods as they are loaded.
#[derive(Default)]
pub struct Owners {
    /// (namespace, ReplicaSet name) → what its pods say of it.
    replica_sets: BTreeMap<(String, String), Seen>,
    /// The same for StatefulSets.
    stateful_sets: BTreeMap<(String, String), Seen>,
}

struct Seen {
    uid: String,
    labels: Map<String, Value>,
    template: Value,
    pods: u32,
    ready: u32,
}

impl Owners {
    /// Notes `pod`'s ReplicaSet, if it has one.
    pub fn observe(&mut self, pod: &Value) {
        let Some(owner) = pod["metadata"]["ownerReferences"]
            .as_array()
            .and_then(|o| o.iter().find(|r| r["controller"] == true))
        else {
            return;
        };
        let sets = match owner["kind"].as_str() {
            Some("ReplicaSet") => &mut self.replica_sets,
            Some("StatefulSet") => &mut self.stateful_sets,
            _ => return,
        };
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = owner["name"].as_str().unwrap_or_default();
        let ready = pod["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        });
        let seen = sets
            .entry((namespace.to_string(), name.to_string()))
            .or_insert_with(|| Seen {
                uid: owner["uid"].as_str().unwrap_or_default().to_string(),
                labels: pod["metadata"]["labels"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                template: json!({
                    "metadata": {"labels": pod["metadata"]["labels"]},
                    "spec": {"containers": pod["spec"]["containers"]},
                }),
                pods: 0,
                ready: 0,
            });
        seen.pods += 1;
        seen.ready += u32::from(ready);
    }

    /// The ReplicaSets and Deployments, as stored objects (kind, object).
    pub fn objects(&self, created: Timestamp) -> Vec<(super::store::Kind, Value)> {
        use super::store::Kind;
        let mut objects = Vec::new();
        for ((namespace, name), seen) in &self.replica_sets {
            let hash = seen.labels.get("pod-template-hash").and_then(Value::as_str);
            let deployment = hash.and_then(|h| name.strip_suffix(&format!("-{h}")));
            let status = json!({
                "replicas": seen.pods, "updatedReplicas": seen.pods, "readyReplicas": seen.ready,
                "availableReplicas": seen.ready, "observedGeneration": 1,
            });
            let mut replica_set = json!({
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": name, "namespace": namespace, "uid": seen.uid,
                    "generation": 1, "creationTimestamp": created.to_string(),
                    "labels": seen.labels,
                },
                "spec": {
                    "replicas": seen.pods,
                    "selector": {"matchLabels": seen.labels},
                    "template": seen.template,
                },
                "status": status,
            });
            if let Some(deployment) = deployment {
                let uid = super::scenario::uid(&format!("{namespace}/{deployment}"), 5);
                replica_set["metadata"]["ownerReferences"] = json!([{
                    "apiVersion": "apps/v1", "kind": "Deployment", "name": deployment,
                    "uid": uid, "controller": true, "blockOwnerDeletion": true,
                }]);
                let mut labels = seen.labels.clone();
                labels.remove("pod-template-hash");
                let mut template = seen.template.clone();
                template["metadata"]["labels"] = json!(labels);
                objects.push((
                    Kind::Deployment,
                    json!({
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "metadata": {
                            "name": deployment, "namespace": namespace, "uid": uid,
                            "generation": 1, "creationTimestamp": created.to_string(),
                            "labels": labels,
                        },
                        "spec": {
                            "replicas": seen.pods,
                            "selector": {"matchLabels": labels},
                            "template": template,
                            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                        },
                        "status": status,
                    }),
                ));
            }
            objects.push((Kind::ReplicaSet, replica_set));
        }
        for ((namespace, name), seen) in &self.stateful_sets {
            // Its pods' labels, less the ones naming each pod and revision.
            let mut selector = seen.labels.clone();
            selector.retain(|k, _| {
                !k.starts_with("statefulset.kubernetes.io/")
                    && !k.starts_with("apps.kubernetes.io/")
                    && k != "controller-revision-hash"
            });
            let revision = seen
                .labels
                .get("controller-revision-hash")
                .cloned()
                .unwrap_or_default();
            let mut template = seen.template.clone();
            template["metadata"]["labels"] = json!(selector);
            objects.push((
                Kind::StatefulSet,
                json!({
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "metadata": {
                        "name": name, "namespace": namespace, "uid": seen.uid,
                        "generation": 1, "creationTimestamp": created.to_string(),
                        "labels": selector,
                    },
                    "spec": {
                        "replicas": seen.pods,
                        "selector": {"matchLabels": selector},
                        "serviceName": name,
                        "template": template,
                        "podManagementPolicy": "OrderedReady",
                        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                    },
                    "status": {
                        "replicas": seen.pods, "readyReplicas": seen.ready, "currentReplicas": seen.pods,
                        "updatedReplicas": seen.pods, "availableReplicas": seen.ready,
                        "currentRevision": revision, "updateRevision": revision, "observedGeneration": 1,
                    },
                }),
            ));
        }
        objects
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::store::Kind;

    #[test]
    fn a_deployments_selector_leaves_out_the_template_hash() {
        let mut owners = Owners::default();
        for pod in crate::sim::scenario::demo(Timestamp::now()) {
            owners.observe(&pod);
        }
        let objects = owners.objects(Timestamp::now());
        let storefront = objects
            .iter()
            .find(|(k, o)| *k == Kind::Deployment && o["metadata"]["name"] == "storefront")
            .map(|(_, o)| o)
            .expect("the storefront deployment");
        assert_eq!(
            storefront["spec"]["selector"]["matchLabels"],
            json!({"app.kubernetes.io/name": "storefront"})
        );
        assert_eq!(storefront["spec"]["replicas"], 3);
        let replica_set = objects
            .iter()
            .find(|(k, o)| {
                *k == Kind::ReplicaSet && o["metadata"]["name"] == "storefront-7d9c8b6f4"
            })
            .map(|(_, o)| o)
            .expect("its replica set");
        assert_eq!(
            replica_set["spec"]["selector"]["matchLabels"]["pod-template-hash"],
            "7d9c8b6f4"
        );
        assert_eq!(
            replica_set["metadata"]["ownerReferences"][0]["name"],
            "storefront"
        );
        assert_eq!(
            replica_set["metadata"]["ownerReferences"][0]["uid"],
            storefront["metadata"]["uid"]
        );
        // Every pod names its ReplicaSet by the same uid (kubectl describe
        // counts a ReplicaSet's pods by it).
        let uids: std::collections::BTreeSet<String> = crate::sim::scenario::demo(Timestamp::now())
            .iter()
            .filter(|p| p["metadata"]["labels"]["app.kubernetes.io/name"] == "storefront")
            .map(|p| {
                p["metadata"]["ownerReferences"][0]["uid"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(uids.len(), 1);
        assert_eq!(
            uids.first().map(String::as_str),
            replica_set["metadata"]["uid"].as_str()
        );
    }
}

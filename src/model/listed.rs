//! A pod as the pod list reads it: a [`Pod`] holding only what a
//! [`PodRow`](super::PodRow) is made of. The list and its watch decode
//! 100 000 of them; decoding each whole (every container's image, env,
//! ports and mounts, the tolerations, the managed fields) allocated
//! thousands of strings only to drop them, half of a list's CPU.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, EphemeralContainer, Pod, PodCondition, PodSpec,
    PodStatus, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldsV1, ManagedFieldsEntry, ObjectMeta, Time,
};
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};

/// A [`Pod`] with its metadata's name, namespace, uid, resourceVersion,
/// labels, timestamps and the managed-fields entries that added debug
/// containers; its spec's node, init containers (name and restart policy),
/// the number of its containers (nameless defaults stand in for them) and
/// its debug containers whole; its status's phase, reason, IP, conditions
/// (type, status, reason), container statuses (name, readiness, restarts,
/// state and reasons, the last exit's time) and debug container statuses
/// whole.
/// Boxed: a page of them is a vector of pointers, not of ~1.5 KB structs
/// grown by copying.
#[derive(Debug, Clone, Default)]
pub struct ListedPod(pub Box<Pod>);

impl k8s_openapi::Resource for ListedPod {
    const API_VERSION: &'static str = Pod::API_VERSION;
    const GROUP: &'static str = Pod::GROUP;
    const KIND: &'static str = Pod::KIND;
    const VERSION: &'static str = Pod::VERSION;
    const URL_PATH_SEGMENT: &'static str = Pod::URL_PATH_SEGMENT;
    type Scope = <Pod as k8s_openapi::Resource>::Scope;
}

impl k8s_openapi::Metadata for ListedPod {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.0.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0.metadata
    }
}

// Every field is optional here, as in k8s-openapi's decoders (missing or
// null reads as its default): a pod the full decoder reads, this reads.
#[derive(Deserialize)]
struct Lean {
    metadata: Option<LeanMeta>,
    spec: Option<LeanSpec>,
    status: Option<LeanStatus>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LeanMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    labels: Option<BTreeMap<String, String>>,
    managed_fields: Option<DebuggerEntries>,
}

/// The `managedFields` entries that added debug containers, read without
/// keeping (or allocating for) the others: every pod has a few, few pods
/// have debug containers.
#[derive(Default)]
struct DebuggerEntries(Vec<ManagedFieldsEntry>);

impl<'de> Deserialize<'de> for DebuggerEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = DebuggerEntries;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of managed fields entries")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<DebuggerEntries, A::Error> {
                let mut kept = Vec::new();
                while let Some(entry) = seq.next_element::<LeanManaged<'de>>()? {
                    kept.extend(entry.of_debuggers());
                }
                Ok(DebuggerEntries(kept))
            }
        }
        deserializer.deserialize_seq(Entries)
    }
}

/// A `managedFields` entry, read only for which debug containers its
/// manager added (`f:spec` → `f:ephemeralContainers` → `k:{"name":…}`).
/// The manager's name is borrowed from the answer where it can be.
#[derive(Deserialize)]
struct LeanManaged<'a> {
    #[serde(borrow)]
    manager: Option<std::borrow::Cow<'a, str>>,
    #[serde(rename = "fieldsV1")]
    fields: Option<LeanFields>,
}

#[derive(Deserialize)]
struct LeanFields {
    #[serde(rename = "f:spec")]
    spec: Option<LeanFieldsSpec>,
}

#[derive(Deserialize)]
struct LeanFieldsSpec {
    #[serde(rename = "f:ephemeralContainers")]
    ephemeral_containers: Option<BTreeMap<String, IgnoredAny>>,
}

impl LeanManaged<'_> {
    /// The entry with only its debug containers' keys; `None` if it owns
    /// none (most entries: the kubelet's, the controller's).
    fn of_debuggers(self) -> Option<ManagedFieldsEntry> {
        let owned = self.fields?.spec?.ephemeral_containers?;
        let keys: serde_json::Map<String, serde_json::Value> = owned
            .into_keys()
            .filter(|k| k.starts_with("k:"))
            .map(|k| (k, serde_json::json!({})))
            .collect();
        (!keys.is_empty()).then(|| ManagedFieldsEntry {
            manager: self.manager.map(std::borrow::Cow::into_owned),
            fields_v1: Some(FieldsV1(serde_json::json!({
                "f:spec": {"f:ephemeralContainers": keys}
            }))),
            ..ManagedFieldsEntry::default()
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeanSpec {
    containers: Option<Vec<LeanContainer>>,
    init_containers: Option<Vec<InitContainer>>,
    /// Whole: few pods have debug containers, and their listing reads
    /// every field a person would ask about.
    ephemeral_containers: Option<Vec<EphemeralContainer>>,
    node_name: Option<String>,
}

/// A container, for what it asks for (the CPU and MEM columns compare
/// use with it); nothing else of it is kept.
#[derive(Deserialize)]
struct LeanContainer {
    resources: Option<ResourceRequirements>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeanStatus {
    phase: Option<String>,
    reason: Option<String>,
    #[serde(rename = "podIP")]
    pod_ip: Option<String>,
    conditions: Option<Vec<LeanCondition>>,
    init_container_statuses: Option<Vec<LeanContainerStatus>>,
    container_statuses: Option<Vec<LeanContainerStatus>>,
    ephemeral_container_statuses: Option<Vec<ContainerStatus>>,
}

#[derive(Deserialize)]
struct LeanCondition {
    #[serde(rename = "type")]
    type_: Option<String>,
    status: Option<String>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeanContainerStatus {
    name: Option<String>,
    ready: Option<bool>,
    restart_count: Option<i32>,
    started: Option<bool>,
    state: Option<LeanState>,
    last_state: Option<LeanState>,
}

#[derive(Deserialize)]
struct LeanState {
    waiting: Option<LeanWaiting>,
    running: Option<IgnoredAny>,
    terminated: Option<LeanTerminated>,
}

#[derive(Deserialize)]
struct LeanWaiting {
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeanTerminated {
    exit_code: Option<i32>,
    signal: Option<i32>,
    reason: Option<String>,
    finished_at: Option<Time>,
}

impl LeanStatus {
    fn into_status(self) -> PodStatus {
        let statuses = |list: Option<Vec<LeanContainerStatus>>| {
            list.map(|list| {
                list.into_iter()
                    .map(LeanContainerStatus::into_status)
                    .collect()
            })
        };
        PodStatus {
            phase: self.phase,
            reason: self.reason,
            pod_ip: self.pod_ip,
            conditions: self.conditions.map(|conditions| {
                conditions
                    .into_iter()
                    .map(|c| PodCondition {
                        type_: c.type_.unwrap_or_default(),
                        status: c.status.unwrap_or_default(),
                        reason: c.reason,
                        ..PodCondition::default()
                    })
                    .collect()
            }),
            init_container_statuses: statuses(self.init_container_statuses),
            container_statuses: statuses(self.container_statuses),
            ephemeral_container_statuses: self.ephemeral_container_statuses,
            ..PodStatus::default()
        }
    }
}

impl LeanContainerStatus {
    fn into_status(self) -> ContainerStatus {
        ContainerStatus {
            name: self.name.unwrap_or_default(),
            ready: self.ready.unwrap_or_default(),
            restart_count: self.restart_count.unwrap_or_default(),
            started: self.started,
            state: self.state.map(LeanState::into_state),
            last_state: self.last_state.map(LeanState::into_state),
            ..ContainerStatus::default()
        }
    }
}

impl LeanState {
    fn into_state(self) -> ContainerState {
        ContainerState {
            waiting: self.waiting.map(|w| ContainerStateWaiting {
                reason: w.reason,
                ..ContainerStateWaiting::default()
            }),
            running: self.running.map(|_| ContainerStateRunning::default()),
            terminated: self.terminated.map(|t| ContainerStateTerminated {
                exit_code: t.exit_code.unwrap_or_default(),
                signal: t.signal,
                reason: t.reason,
                finished_at: t.finished_at,
                ..ContainerStateTerminated::default()
            }),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitContainer {
    name: Option<String>,
    restart_policy: Option<String>,
}

impl<'de> Deserialize<'de> for ListedPod {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Lean {
            metadata,
            spec,
            status,
        } = Lean::deserialize(deserializer)?;
        let metadata = metadata.unwrap_or_default();
        let spec = spec.map(|spec| PodSpec {
            containers: spec
                .containers
                .into_iter()
                .flatten()
                .map(|c| Container {
                    resources: c
                        .resources
                        .filter(|r| r.requests.is_some() || r.limits.is_some()),
                    ..Container::default()
                })
                .collect(),
            init_containers: spec.init_containers.map(|inits| {
                inits
                    .into_iter()
                    .map(|init| Container {
                        name: init.name.unwrap_or_default(),
                        restart_policy: init.restart_policy,
                        ..Container::default()
                    })
                    .collect()
            }),
            ephemeral_containers: spec.ephemeral_containers,
            node_name: spec.node_name,
            ..PodSpec::default()
        });
        Ok(ListedPod(Box::new(Pod {
            metadata: ObjectMeta {
                name: metadata.name,
                namespace: metadata.namespace,
                uid: metadata.uid,
                resource_version: metadata.resource_version,
                creation_timestamp: metadata.creation_timestamp,
                deletion_timestamp: metadata.deletion_timestamp,
                labels: metadata.labels,
                managed_fields: metadata
                    .managed_fields
                    .map(|entries| entries.0)
                    .filter(|kept| !kept.is_empty()),
                ..ObjectMeta::default()
            },
            spec,
            status: status.map(LeanStatus::into_status),
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PodRow;

    /// A pod as an apiserver sends it, with everything a row does not read.
    fn full() -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
                "creationTimestamp": "2026-11-27T01:00:00Z",
                "labels": {"app": "web", "tier": "front"},
                "annotations": {"big": "x".repeat(4000)},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "web-abc", "uid": "r-1", "controller": true}],
                "managedFields": [
                    {"manager": "kubelet", "operation": "Update",
                     "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}},
                    {"manager": "podbay", "operation": "Update", "subresource": "ephemeralcontainers",
                     "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:ephemeralContainers": {
                        ".": {}, "k:{\"name\":\"debugger\"}": {".": {}, "f:image": {}}}}}}
                ]
            },
            "spec": {
                "nodeName": "node-2",
                "initContainers": [
                    {"name": "setup", "image": "busybox"},
                    {"name": "proxy", "image": "envoy", "restartPolicy": "Always"}
                ],
                "containers": [
                    {"name": "app", "image": "web:1", "env": [{"name": "A", "value": "1"}],
                     "ports": [{"containerPort": 80}],
                     "resources": {"requests": {"cpu": "100m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}}},
                    {"name": "side", "image": "side:2", "resources": {"limits": {"memory": "16Mi"}}}
                ],
                "ephemeralContainers": [{"name": "debugger", "image": "busybox", "stdin": true,
                                         "tty": true, "targetContainerName": "app"},
                                        {"name": "old", "image": "busybox"}],
                "tolerations": [{"key": "k", "operator": "Exists"}]
            },
            "status": {
                "phase": "Running", "podIP": "10.0.0.7",
                "conditions": [{"type": "Ready", "status": "True"},
                               {"type": "Initialized", "status": "True"}],
                "initContainerStatuses": [
                    {"name": "setup", "image": "busybox", "imageID": "", "ready": false,
                     "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                    {"name": "proxy", "image": "envoy", "imageID": "", "ready": true, "started": true,
                     "restartCount": 1, "state": {"running": {}}}
                ],
                "containerStatuses": [
                    {"name": "app", "image": "web:1", "imageID": "", "ready": true,
                     "restartCount": 3, "state": {"running": {"startedAt": "2026-11-27T01:05:00Z"}},
                     "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-11-27T01:04:00Z"}}},
                    {"name": "side", "image": "side:2", "imageID": "", "ready": false,
                     "restartCount": 0, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
                ],
                "ephemeralContainerStatuses": [
                    {"name": "debugger", "image": "busybox", "imageID": "", "ready": false,
                     "restartCount": 0, "state": {"running": {"startedAt": "2026-11-27T01:06:00Z"}}},
                    {"name": "old", "image": "busybox", "imageID": "", "ready": false,
                     "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}
                ]
            }
        })
    }

    #[test]
    fn the_row_of_a_listed_pod_is_the_row_of_the_whole_pod() {
        let json = serde_json::to_vec(&full()).unwrap();
        let whole: Pod = serde_json::from_slice(&json).unwrap();
        let listed: ListedPod = serde_json::from_slice(&json).unwrap();
        let row = PodRow::from_pod(&listed.0);
        assert_eq!(row, PodRow::from_pod(&whole));
        let asks = row.asks.as_deref().expect("what its containers ask for");
        assert_eq!((asks.cpu_request_m, asks.memory_limit), (100, 80 << 20));
        // What the row shows, so the comparison is not of two empty rows.
        assert_eq!(
            (&*row.status, row.ready, row.total, row.restarts),
            ("CrashLoopBackOff", 2, 3, 4)
        );
        assert_eq!(
            (&*row.node, &*row.ip, row.ephemeral(), row.debuggers_live()),
            ("node-2", "10.0.0.7", 2, 1)
        );
        assert_eq!(&*row.labels, "app=web tier=front");
        let debugger = &row.debuggers.as_deref().expect("debuggers")[0];
        assert_eq!(
            (
                debugger.target.as_deref(),
                debugger.shell,
                debugger.added_by.as_deref(),
                debugger.started.map(|t| t.to_string())
            ),
            (
                Some("app"),
                true,
                Some("podbay"),
                Some("2026-11-27T01:06:00Z".into())
            )
        );
        // What the watch keeps: the version it resumes from.
        assert_eq!(
            kube::ResourceExt::resource_version(&listed).as_deref(),
            Some("42")
        );
        assert!(listed.0.metadata.annotations.is_none(), "not decoded");
    }

    #[test]
    fn missing_and_null_fields_read_as_the_whole_decoder_reads_them() {
        let sparse = serde_json::json!({
            "metadata": {"name": "sparse", "namespace": "shop"},
            "spec": {"containers": null, "initContainers": [{"restartPolicy": "Always"}]},
            "status": {
                "conditions": [{"type": "Ready"}],
                "containerStatuses": [{"name": null, "state": {"terminated": {"reason": "Error"}}}]
            }
        });
        let json = serde_json::to_vec(&sparse).unwrap();
        let whole: Pod = serde_json::from_slice(&json).expect("the whole decoder reads it");
        let listed: ListedPod = serde_json::from_slice(&json).expect("so does the lean one");
        assert_eq!(PodRow::from_pod(&listed.0), PodRow::from_pod(&whole));
        let null_metadata = br#"{"metadata": null}"#;
        assert!(serde_json::from_slice::<Pod>(null_metadata).is_ok());
        assert!(serde_json::from_slice::<ListedPod>(null_metadata).is_ok());
    }

    #[test]
    fn a_terminating_pod_and_a_pod_without_spec_or_status_read_as_whole_ones() {
        let mut terminating = full();
        terminating["metadata"]["deletionTimestamp"] = "2026-11-27T02:00:00Z".into();
        let bare = serde_json::json!({"metadata": {"name": "bare", "namespace": "shop"}});
        for pod in [terminating, bare] {
            let json = serde_json::to_vec(&pod).unwrap();
            let listed: ListedPod = serde_json::from_slice(&json).unwrap();
            let whole: Pod = serde_json::from_slice(&json).unwrap();
            assert_eq!(PodRow::from_pod(&listed.0), PodRow::from_pod(&whole));
        }
    }
}

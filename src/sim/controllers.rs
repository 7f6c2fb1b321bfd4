//! What the ReplicaSet and StatefulSet controllers do when one of their
//! pods is deleted: create its replacement (and, as every pod changes,
//! what the workload controllers report: see `workload_status`). A ReplicaSet's comes with a new
//! generated name (`<rs>-<5 chars>`), a StatefulSet's with the same name
//! once the old one is gone. The new pod is scheduled to the same node,
//! Pending while its containers are created, then Running and Ready, with
//! the events the controller, the scheduler and the kubelet record.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Value, json};

use super::SimState;
use super::pod_json::{pod_key, uuid_like};
use super::store::{ChangeType, Key, Kind, WatchStart};

/// How long a replacement's containers take to be created.
const CREATING: Duration = Duration::from_millis(800);

/// Replaces deleted pods until the simulator is dropped. A controller that
/// falls behind the live changes reads what it missed from the store's
/// history, as an informer relists, so no deletion in a burst goes
/// unreplaced.
pub async fn run(state: Weak<SimState>) {
    let (mut changes, mut seen) = {
        let Some(state) = state.upgrade() else { return };
        let from = state.store.resource_version();
        (state.store.watch(Kind::Pod, Some(from)).1, from)
    };
    loop {
        let missed = match changes.recv().await {
            Ok(change) => vec![change],
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                let Some(state) = state.upgrade() else { return };
                let (start, receiver, _) = state.store.watch(Kind::Pod, Some(seen));
                changes = receiver;
                match start {
                    WatchStart::History(missed) => missed,
                    WatchStart::Expired { requested, oldest } => {
                        tracing::warn!(
                            "controllers: deletions between resourceVersion {requested} and {oldest} were compacted before they were read"
                        );
                        seen = oldest;
                        Vec::new()
                    }
                    WatchStart::State(_) => Vec::new(),
                }
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        for change in missed {
            // A change read from history may come again live.
            if change.resource_version() <= seen {
                continue;
            }
            seen = change.resource_version();
            if change.kind != Kind::Pod {
                continue;
            }
            let Some(state) = state.upgrade() else { return };
            let pod = change.entry.value();
            super::workload_status::refresh(&state, &pod);
            super::endpoints::refresh(&state, &pod);
            if change.change_type != ChangeType::Deleted {
                continue;
            }
            let gone = pod;
            if let Some(replacement) = replacement(&state, &gone) {
                tokio::spawn(bring_up(state, replacement));
            }
        }
    }
}

/// The pod that takes `gone`'s place, created Pending; `None` when no
/// controller of the simulator owns it.
fn replacement(state: &SimState, gone: &Value) -> Option<Key> {
    let owner = gone
        .pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)?
        .clone();
    let namespace = gone.pointer("/metadata/namespace")?.as_str()?;
    let owner_name = owner["name"].as_str()?;
    let (kind, controller) = match owner["kind"].as_str()? {
        "ReplicaSet" => (Kind::ReplicaSet, "replicaset-controller"),
        "StatefulSet" => (Kind::StatefulSet, "statefulset-controller"),
        _ => return None,
    };
    let owner_object = state
        .store
        .get(kind, &Key::new(namespace, owner_name))?
        .value();
    let name = match kind {
        Kind::StatefulSet => gone.pointer("/metadata/name")?.as_str()?.to_string(),
        _ => format!("{owner_name}-{}", generated_suffix()),
    };
    let pod = fresh(gone, &name);
    let key = Key::new(namespace, &name);
    state.store.create(Kind::Pod, key.clone(), pod).ok()?;
    let message = match kind {
        Kind::StatefulSet => {
            format!("create Pod {name} in StatefulSet {owner_name} successful")
        }
        _ => format!("Created pod: {name}"),
    };
    record(
        state,
        &owner_object,
        "SuccessfulCreate",
        &message,
        controller,
    );
    let node = gone
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    state.kubelet.event(
        &key,
        "",
        "Normal",
        "Scheduled",
        &format!("Successfully assigned {namespace}/{name} to {node}"),
    );
    Some(key)
}

/// 5 characters from the alphabet Kubernetes generates names with.
pub(crate) fn generated_suffix() -> String {
    crate::model::debug::name_suffix(fastrand::u64(..))
}

/// `gone`'s spec for a new pod named `name`: new identity, no debug
/// containers, its containers being created.
fn fresh(gone: &Value, name: &str) -> Value {
    let now = jiff::Timestamp::now().to_string();
    let mut pod = gone.clone();
    if let Some(meta) = pod["metadata"].as_object_mut() {
        for field in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "generation",
        ] {
            meta.remove(field);
        }
        meta.insert("name".into(), json!(name));
        meta.insert("uid".into(), json!(uuid_like()));
        meta.insert("creationTimestamp".into(), json!(now));
    }
    if let Some(labels) = pod["metadata"]["labels"].as_object_mut()
        && labels.contains_key("statefulset.kubernetes.io/pod-name")
    {
        labels.insert("statefulset.kubernetes.io/pod-name".into(), json!(name));
    }
    if let Some(spec) = pod["spec"].as_object_mut() {
        spec.remove("ephemeralContainers");
    }
    pod["status"] = starting_status(&pod, gone, &now);
    // Its sandbox has its own address, as a new pod's does (on the host's
    // network, the node's).
    let ip = match pod["spec"]["hostNetwork"] == json!(true) {
        true => pod["status"]["hostIP"].clone(),
        false => json!(format!(
            "10.244.{}.{}",
            fastrand::u8(0..250),
            fastrand::u8(2..250)
        )),
    };
    if ip.is_string() {
        pod["status"]["podIP"] = ip.clone();
        pod["status"]["podIPs"] = json!([{"ip": ip}]);
    }
    pod
}

/// The status of a pod bound to a node whose containers are being created:
/// Pending, init containers done, `ContainerCreating`. `earlier` is the pod
/// it replaces (its QoS class and host IP carry over), else the pod itself.
pub(crate) fn starting_status(pod: &Value, earlier: &Value, now: &str) -> Value {
    let waiting = |c: &Value| {
        json!({
            "name": c["name"], "image": c["image"], "imageID": "", "ready": false,
            "started": false, "restartCount": 0, "lastState": {},
            "state": {"waiting": {"reason": "ContainerCreating"}},
        })
    };
    let statuses: Vec<Value> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(waiting)
        .collect();
    let init_done: Vec<Value> = pod["spec"]["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            json!({
                "name": c["name"], "image": c["image"], "imageID": "", "ready": true,
                "started": false, "restartCount": 0, "lastState": {},
                "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}},
            })
        })
        .collect();
    let condition = |kind: &str, status: &str| json!({"type": kind, "status": status, "lastTransitionTime": now});
    let mut status = json!({
        "phase": "Pending",
        "conditions": [
            condition("PodScheduled", "True"),
            condition("Initialized", "True"),
            condition("ContainersReady", "False"),
            condition("Ready", "False"),
        ],
        "qosClass": earlier.pointer("/status/qosClass").cloned().unwrap_or(json!("BestEffort")),
        "startTime": now,
        "containerStatuses": statuses,
    });
    if !init_done.is_empty() {
        status["initContainerStatuses"] = json!(init_done);
    }
    if let Some(host) = earlier.pointer("/status/hostIP") {
        status["hostIP"] = host.clone();
    }
    status
}

/// After its containers are created: each one's process started, then
/// Running and Ready, or (its program not in its image) Terminated with
/// containerd's StartError, as the kubelet reports a container only once
/// the runtime has started it.
pub(crate) async fn bring_up(state: Arc<SimState>, key: Key) {
    tokio::time::sleep(CREATING).await;
    let now = jiff::Timestamp::now().to_string();
    let Some(mut planned) = state.store.get(Kind::Pod, &key).map(|e| e.value()) else {
        return;
    };
    // Deleted while its containers were being created: nothing starts.
    if !planned
        .pointer("/metadata/deletionTimestamp")
        .is_none_or(Value::is_null)
    {
        return;
    }
    for status in planned["status"]["containerStatuses"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        status["state"] = json!({"running": {"startedAt": now}});
    }
    // Images the pod may not pull (a private registry's, without its
    // credentials among the pod's pull secrets) wait; nothing of them runs.
    let secrets = state.kubelet.pull_secrets(&planned);
    if let Some(message) = secrets.missing_event() {
        state.kubelet.event(
            &key,
            "",
            "Warning",
            "FailedToRetrieveImagePullSecret",
            &message,
        );
    }
    let unpulled: Vec<(String, String)> = planned["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let refusal = secrets.refusal(c["image"].as_str()?)?;
            Some((c["name"].as_str()?.to_string(), refusal))
        })
        .collect();
    let failed: Vec<(String, String)> = planned["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let name = c["name"].as_str()?;
            if unpulled.iter().any(|(n, _)| n == name) {
                return None;
            }
            let error = state.kubelet.process(&planned, name).err()?;
            let message = error
                .message
                .trim_start_matches("Internal error occurred: ");
            Some((name.to_string(), message.to_string()))
        })
        .collect();
    let Ok(Ok(entry)) = state.store.update::<()>(Kind::Pod, &key, None, |mut pod| {
        if !pod
            .pointer("/metadata/deletionTimestamp")
            .is_none_or(Value::is_null)
        {
            return Err(());
        }
        for status in pod["status"]["containerStatuses"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            if let Some((_, message)) = unpulled.iter().find(|(name, _)| status["name"] == *name) {
                status["state"] =
                    json!({"waiting": {"reason": "ErrImagePull", "message": message}});
                continue;
            }
            let failure = failed.iter().find(|(name, _)| status["name"] == *name);
            if let Some((_, message)) = failure {
                status["state"] = json!({"terminated": {
                    "exitCode": 128, "reason": "StartError", "message": message,
                    "startedAt": "1970-01-01T00:00:00Z", "finishedAt": now,
                }});
                continue;
            }
            status["state"] = json!({"running": {"startedAt": now}});
            // The runtime's id of what runs: a log of this run is readable
            // after it ends (the kubelet reports none for a start that failed).
            status["containerID"] = json!(format!("containerd://{}", super::rbac::random_token()));
            status["ready"] = json!(true);
            status["started"] = json!(true);
        }
        let all_up = failed.is_empty() && unpulled.is_empty();
        for condition in pod["status"]["conditions"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            let readiness = matches!(
                condition["type"].as_str(),
                Some("Ready" | "ContainersReady")
            );
            if all_up || !readiness {
                condition["status"] = json!("True");
                condition["lastTransitionTime"] = json!(now);
            }
        }
        // A container never started keeps the pod Pending (the kubelet's
        // getPhase: any waiting container).
        pod["status"]["phase"] = json!(if unpulled.is_empty() {
            "Running"
        } else {
            "Pending"
        });
        Ok(pod)
    }) else {
        // Deleted meanwhile: what was started goes, as the kubelet's
        // sync of a terminating pod stops it.
        state.kubelet.stop_pod(&key);
        return;
    };
    let pod = entry.value();
    for c in pod["spec"]["containers"].as_array().into_iter().flatten() {
        let (name, image) = (
            c["name"].as_str().unwrap_or_default(),
            c["image"].as_str().unwrap_or_default(),
        );
        let field = format!("spec.containers{{{name}}}");
        let kubelet = &state.kubelet;
        let key = pod_key(&pod);
        if let Some((_, message)) = unpulled.iter().find(|(n, _)| n == name) {
            let pulling = format!("Pulling image {image:?}");
            kubelet.event(&key, &field, "Normal", "Pulling", &pulling);
            let failed = format!("Failed to pull image {image:?}: {message}");
            kubelet.event(&key, &field, "Warning", "Failed", &failed);
            kubelet.event(&key, &field, "Warning", "Failed", "Error: ErrImagePull");
            continue;
        }
        kubelet.event(
            &key,
            &field,
            "Normal",
            "Pulled",
            &format!("Container image {image:?} already present on machine"),
        );
        kubelet.event(
            &key,
            &field,
            "Normal",
            "Created",
            &format!("Created container: {name}"),
        );
        match failed.iter().find(|(failed, _)| failed == name) {
            Some((_, message)) => {
                kubelet.event(
                    &key,
                    &field,
                    "Warning",
                    "Failed",
                    &format!("Error: {message}"),
                );
            }
            None => kubelet.event(
                &key,
                &field,
                "Normal",
                "Started",
                &format!("Started container {name}"),
            ),
        }
    }
}

/// An Event about a workload, from its controller.
fn record(state: &SimState, involved: &Value, reason: &str, message: &str, component: &str) {
    let now = jiff::Timestamp::now();
    let namespace = involved["metadata"]["namespace"].clone();
    let object_name = involved["metadata"]["name"].as_str().unwrap_or_default();
    let name = format!("{object_name}.{:x}", now.as_nanosecond());
    let event = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name, "namespace": namespace, "uid": uuid_like(),
            "creationTimestamp": now.to_string(),
        },
        "involvedObject": {
            "kind": involved["kind"], "namespace": namespace, "name": object_name,
            "uid": involved["metadata"]["uid"], "apiVersion": involved["apiVersion"],
            "resourceVersion": involved["metadata"]["resourceVersion"],
        },
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": now.to_string(),
        "lastTimestamp": now.to_string(),
        "count": 1,
        "type": "Normal",
        "eventTime": null,
        "reportingComponent": component,
        "reportingInstance": "",
    });
    let key = Key::new(namespace.as_str().unwrap_or_default(), &name);
    let _ = state.store.create(Kind::Event, key, event);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replacement_is_a_new_pod_with_the_same_spec_and_no_debug_containers() {
        let gone = json!({
            "metadata": {
                "name": "redis-0", "namespace": "shop", "uid": "old", "resourceVersion": "7",
                "deletionTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"statefulset.kubernetes.io/pod-name": "redis-0"},
            },
            "spec": {
                "containers": [{"name": "redis", "image": "redis:7.4"}],
                "ephemeralContainers": [{"name": "debugger", "image": "busybox"}],
                "nodeName": "node-b1",
            },
            "status": {"phase": "Running", "ephemeralContainerStatuses": []},
        });
        let pod = fresh(&gone, "redis-0");
        assert_ne!(pod["metadata"]["uid"], "old");
        assert!(pod["metadata"].get("deletionTimestamp").is_none());
        assert!(pod["metadata"].get("resourceVersion").is_none());
        assert!(pod["spec"].get("ephemeralContainers").is_none());
        assert!(pod["status"].get("ephemeralContainerStatuses").is_none());
        assert_eq!(pod["status"]["phase"], "Pending");
        assert_eq!(
            pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ContainerCreating"
        );
        assert_eq!(pod["spec"]["nodeName"], "node-b1");
        let suffix = generated_suffix();
        assert_eq!(suffix.len(), 5);
        assert!(
            suffix
                .bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
    }

    /// More changes than the live channel holds arrive between a deletion
    /// and the controller's next read: it reads the deletion from history
    /// and replaces the pod all the same.
    #[tokio::test(flavor = "current_thread")]
    async fn a_deletion_the_controller_fell_behind_on_is_still_replaced() {
        use super::super::store::Store;
        use std::net::SocketAddr;
        let store = Arc::new(Store::new());
        let kubelet = super::super::kubelet::Kubelet::new(
            store.clone(),
            super::super::kubelet::KubeletConfig {
                pull_delay: Duration::from_secs(3600),
                pull_backoff: Duration::from_secs(3600),
                shim: "/bin/false".into(),
                namespaces: false,
                api: SocketAddr::from(([127, 0, 0, 1], 0)),
            },
        )
        .unwrap();
        let state = Arc::new(SimState {
            store: store.clone(),
            kubelet,
            users: super::super::rbac::Users::generate(),
            faults: Default::default(),
            options: Default::default(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            ca_pem: String::new(),
            metrics: Default::default(),
        });
        store
            .create(
                Kind::ReplicaSet,
                Key::new("shop", "web-5d4c"),
                json!({"metadata": {"name": "web-5d4c", "namespace": "shop"}}),
            )
            .unwrap();
        let owned = json!({
            "metadata": {"name": "web-5d4c-abcde", "namespace": "shop", "uid": "u1",
                "ownerReferences": [{"kind": "ReplicaSet", "name": "web-5d4c", "controller": true}]},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}], "nodeName": "node-a2"},
            "status": {"phase": "Running"},
        });
        let key = Key::new("shop", "web-5d4c-abcde");
        store.create(Kind::Pod, key.clone(), owned).unwrap();
        tokio::spawn(run(Arc::downgrade(&state)));
        tokio::task::yield_now().await;
        store.delete(Kind::Pod, &key).unwrap();
        // Without a yield, the controller reads none of these live.
        for i in 0..70_000 {
            store
                .create(
                    Kind::Event,
                    Key::new("shop", &format!("e{i}")),
                    json!({"metadata": {}}),
                )
                .unwrap();
        }
        let replaced = || {
            store
                .list(Kind::Pod, Some("shop"), None, None, &|_| true)
                .0
                .iter()
                .any(|e| e.key.name.starts_with("web-5d4c-") && *e.key.name != *"web-5d4c-abcde")
        };
        for _ in 0..50 {
            if replaced() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the deleted pod was never replaced");
    }
}

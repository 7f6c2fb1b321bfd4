//! What the workload controllers report as their pods change: a
//! ReplicaSet's, StatefulSet's or DaemonSet's `status` counts its pods and
//! their readiness again, and a Deployment's sums its ReplicaSets', so
//! `kubectl get deploy -w` and podbay's views follow a pod that goes, is
//! replaced, or becomes ready.

use serde_json::{Value, json};

use super::SimState;
use super::pod_json::{is_ready, is_terminating};
use super::store::{Key, Kind};

/// Brings the status of `pod`'s controller (and a Deployment above it)
/// up to date with the pods it owns now.
pub fn refresh(state: &SimState, pod: &Value) {
    let Some(owner) = pod["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|o| o.iter().find(|r| r["controller"] == true))
    else {
        return;
    };
    let kind = match owner["kind"].as_str() {
        Some("ReplicaSet") => Kind::ReplicaSet,
        Some("StatefulSet") => Kind::StatefulSet,
        Some("DaemonSet") => Kind::DaemonSet,
        _ => return,
    };
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let key = Key::new(namespace, owner["name"].as_str().unwrap_or_default());
    let Some(workload) = state.store.get(kind, &key).map(|e| e.value()) else {
        return;
    };
    let (pods, ready) = count(
        state,
        namespace,
        &workload["spec"]["selector"]["matchLabels"],
    );
    let _ = state.store.update(kind, &key, None, |mut object| {
        let status = &mut object["status"];
        match kind {
            Kind::DaemonSet => {
                status["currentNumberScheduled"] = json!(pods);
                status["updatedNumberScheduled"] = json!(pods);
                status["numberReady"] = json!(ready);
                status["numberAvailable"] = json!(ready);
            }
            _ => {
                for field in ["replicas", "updatedReplicas", "currentReplicas"] {
                    if field != "currentReplicas" || kind == Kind::StatefulSet {
                        status[field] = json!(pods);
                    }
                }
                status["readyReplicas"] = json!(ready);
                status["availableReplicas"] = json!(ready);
            }
        }
        Ok::<_, ()>(object)
    });
    if let Some(deployment) = workload["metadata"]["ownerReferences"][0]["name"].as_str()
        && kind == Kind::ReplicaSet
    {
        let key = Key::new(namespace, deployment);
        let _ = state
            .store
            .update(Kind::Deployment, &key, None, |mut object| {
                let status = &mut object["status"];
                status["replicas"] = json!(pods);
                status["updatedReplicas"] = json!(pods);
                status["readyReplicas"] = json!(ready);
                status["availableReplicas"] = json!(ready);
                Ok::<_, ()>(object)
            });
    }
}

/// How many pods of `namespace` carry every label of `selector`, and how
/// many of those are Ready; a pod on its way out counts as neither, as
/// the controllers count it.
fn count(state: &SimState, namespace: &str, selector: &Value) -> (u64, u64) {
    let Some(selector) = selector.as_object() else {
        return (0, 0);
    };
    let pods = super::pod_json::selected(&state.store, namespace, selector);
    let live = pods.iter().filter(|pod| !is_terminating(pod));
    live.fold((0, 0), |(all, ready), pod| {
        (all + 1, ready + u64::from(is_ready(pod)))
    })
}

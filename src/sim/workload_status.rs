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
        let replica_set = key.name.to_string();
        let key = Key::new(namespace, deployment);
        let now = jiff::Timestamp::now();
        let _ = state
            .store
            .update(Kind::Deployment, &key, None, |mut object| {
                let status = &mut object["status"];
                status["replicas"] = json!(pods);
                status["updatedReplicas"] = json!(pods);
                status["readyReplicas"] = json!(ready);
                status["availableReplicas"] = json!(ready);
                deployment_conditions(&mut object, &replica_set, now);
                Ok::<_, ()>(object)
            });
    }
}

/// What the deployment controller adds to a Deployment's status from its
/// counts: `unavailableReplicas`, and the `Available` and `Progressing`
/// conditions (a condition's transition time moves only when its status
/// does). Available: at least `replicas - maxUnavailable` pods available,
/// maxUnavailable scaled down from a percentage and 1 when it and
/// maxSurge both come to 0, as upstream resolves them.
pub fn deployment_conditions(deployment: &mut Value, replica_set: &str, now: jiff::Timestamp) {
    let desired = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let available = deployment["status"]["availableReplicas"]
        .as_i64()
        .unwrap_or(0);
    let rolling = &deployment["spec"]["strategy"]["rollingUpdate"];
    let scaled = |v: &Value, default: &str, round_up: bool| -> i64 {
        let text = match v {
            Value::Number(n) => return n.as_i64().unwrap_or(0),
            Value::String(s) => s.as_str(),
            _ => default,
        };
        let percent = text.trim_end_matches('%').parse::<i64>().unwrap_or(0);
        let scaled = percent * desired;
        if round_up {
            (scaled + 99) / 100
        } else {
            scaled / 100
        }
    };
    let surge = scaled(&rolling["maxSurge"], "25%", true);
    let mut max_unavailable = scaled(&rolling["maxUnavailable"], "25%", false);
    if surge == 0 && max_unavailable == 0 {
        max_unavailable = 1;
    }
    let minimum = (desired - max_unavailable).max(0);
    let status = &mut deployment["status"];
    status["unavailableReplicas"] = json!((desired - available).max(0));
    let (ok, reason, message) = if available >= minimum {
        (
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".to_string(),
        )
    } else {
        (
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".to_string(),
        )
    };
    let progressed = format!("ReplicaSet \"{replica_set}\" has successfully progressed.");
    let wanted = [
        ("Available", ok, reason, message),
        ("Progressing", "True", "NewReplicaSetAvailable", progressed),
    ];
    let before = status["conditions"].as_array().cloned().unwrap_or_default();
    let now = now.to_string();
    let conditions: Vec<Value> = wanted
        .into_iter()
        .map(|(kind, ok, reason, message)| {
            let old = before.iter().find(|c| c["type"] == kind);
            let transition = match old {
                Some(old) if old["status"] == ok => old["lastTransitionTime"].clone(),
                _ => json!(now),
            };
            json!({"type": kind, "status": ok, "reason": reason, "message": message,
                "lastUpdateTime": now, "lastTransitionTime": transition})
        })
        .collect();
    status["conditions"] = json!(conditions);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(replicas: i64, available: i64, rolling: Value) -> Value {
        json!({"spec": {"replicas": replicas, "strategy": {"rollingUpdate": rolling}},
            "status": {"availableReplicas": available}})
    }

    fn condition<'a>(d: &'a Value, kind: &str) -> &'a Value {
        d["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == kind))
            .expect("the condition")
    }

    /// Upstream's rounding: maxUnavailable 25% of 3 is 0 (down), so all 3
    /// must be available; of 4 it is 1. Both 0 makes maxUnavailable 1.
    #[test]
    fn available_is_judged_against_max_unavailable_as_upstream_scales_it() {
        let t0: jiff::Timestamp = "2026-11-29T10:00:00Z".parse().unwrap();
        let t1: jiff::Timestamp = "2026-11-29T10:05:00Z".parse().unwrap();
        let percent = json!({"maxUnavailable": "25%", "maxSurge": "25%"});
        let mut d = deployment(3, 2, percent.clone());
        deployment_conditions(&mut d, "web-1", t0);
        let available = condition(&d, "Available");
        assert_eq!(available["status"], "False");
        assert_eq!(available["reason"], "MinimumReplicasUnavailable");
        assert_eq!(d["status"]["unavailableReplicas"], 1);
        assert_eq!(
            condition(&d, "Progressing")["message"],
            "ReplicaSet \"web-1\" has successfully progressed."
        );
        let mut d = deployment(4, 3, percent);
        deployment_conditions(&mut d, "web-1", t0);
        assert_eq!(condition(&d, "Available")["status"], "True");
        let mut d = deployment(2, 1, json!({"maxUnavailable": 0, "maxSurge": 0}));
        deployment_conditions(&mut d, "web-1", t0);
        assert_eq!(
            condition(&d, "Available")["status"],
            "True",
            "1 may be unavailable"
        );
        // Counted again with the same outcome: the transition time stays,
        // the update time moves.
        deployment_conditions(&mut d, "web-1", t1);
        let available = condition(&d, "Available");
        assert_eq!(available["lastTransitionTime"], t0.to_string());
        assert_eq!(available["lastUpdateTime"], t1.to_string());
        d["status"]["availableReplicas"] = json!(0);
        deployment_conditions(&mut d, "web-1", t1);
        assert_eq!(
            condition(&d, "Available")["lastTransitionTime"],
            t1.to_string()
        );
    }
}

//! Steady churn for soak runs and livelier demos: every tick, the next pod
//! in turn restarts its first container (restartCount + 1, lastState
//! terminated), which watchers see as one MODIFIED event.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::store::{Key, Kind, Store};

/// Deletes, every `every`, the next pod (in turn) that a ReplicaSet or a
/// StatefulSet owns, as `kubectl delete pod` would (with its grace period):
/// its owner's controller replaces it.
pub async fn replace(state: std::sync::Weak<super::SimState>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    let mut after: Option<Key> = None;
    loop {
        ticks.tick().await;
        let Some(state) = state.upgrade() else { return };
        let owned = |entry: &super::store::Entry| {
            let pod = entry.value();
            let running = pod["status"]["phase"] == "Running"
                && pod.pointer("/metadata/deletionTimestamp").is_none();
            running
                && pod["metadata"]["ownerReferences"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|o| {
                        o["controller"] == true
                            && matches!(o["kind"].as_str(), Some("ReplicaSet" | "StatefulSet"))
                    })
        };
        let next = |after: Option<&Key>| {
            state
                .store
                .list(Kind::Pod, None, after, Some(1), &|e| owned(e))
                .0
                .into_iter()
                .next()
        };
        let Some(entry) = next(after.as_ref()).or_else(|| next(None)) else {
            continue;
        };
        let key = entry.key.clone();
        let _ = super::api::delete_pod(&state, &key, &Default::default(), &[]);
        after = Some(key);
    }
}

/// Restarts one pod's container `per_second` times a second until the
/// store is dropped by everyone else.
pub async fn run(store: std::sync::Weak<Store>, per_second: f64) {
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / per_second.max(0.001)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut after: Option<Key> = None;
    loop {
        ticks.tick().await;
        let Some(store) = store.upgrade() else { return };
        after = restart_next(&store, after.as_ref());
    }
}

/// Restarts the pod after `after` (wrapping around); returns its key.
pub fn restart_next(store: &Arc<Store>, after: Option<&Key>) -> Option<Key> {
    let next = |after: Option<&Key>| {
        store
            .list(Kind::Pod, None, after, Some(1), &|_| true)
            .0
            .into_iter()
            .next()
    };
    let entry = next(after).or_else(|| next(None))?;
    let key = entry.key.clone();
    let now = jiff::Timestamp::now().to_string();
    let _ = store.update::<()>(Kind::Pod, &key, None, |mut pod| {
        restart_first_container(&mut pod, &now);
        Ok(pod)
    });
    Some(key)
}

fn restart_first_container(pod: &mut Value, now: &str) {
    let Some(status) = pod
        .pointer_mut("/status/containerStatuses/0")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let restarts = status
        .get("restartCount")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let started = status
        .get("state")
        .and_then(|state| state.pointer("/running/startedAt"))
        .cloned()
        .unwrap_or_else(|| json!(now));
    status.insert("restartCount".into(), json!(restarts.saturating_add(1)));
    status.insert(
        "lastState".into(),
        json!({"terminated": {
            "exitCode": 137, "reason": "OOMKilled",
            "startedAt": started, "finishedAt": now,
        }}),
    );
    status.insert("state".into(), json!({"running": {"startedAt": now}}));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, restarts: u64) -> Value {
        json!({
            "metadata": {"namespace": "ns", "name": name},
            "status": {"containerStatuses": [{
                "name": "app", "restartCount": restarts,
                "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
            }]},
        })
    }

    #[test]
    fn restarts_each_pod_in_turn_and_wraps_around() {
        let store = Arc::new(Store::new());
        for (name, restarts) in [("a", 0), ("b", 5)] {
            store
                .create(Kind::Pod, Key::new("ns", name), pod(name, restarts))
                .unwrap();
        }
        let first = restart_next(&store, None).unwrap();
        let second = restart_next(&store, Some(&first)).unwrap();
        let third = restart_next(&store, Some(&second)).unwrap();
        assert_eq!([&*first.name, &*second.name, &*third.name], ["a", "b", "a"]);
        let a = store.get(Kind::Pod, &Key::new("ns", "a")).unwrap().value();
        assert_eq!(a["status"]["containerStatuses"][0]["restartCount"], 2);
        let b = store.get(Kind::Pod, &Key::new("ns", "b")).unwrap().value();
        let status = &b["status"]["containerStatuses"][0];
        assert_eq!(status["restartCount"], 6);
        assert_eq!(status["lastState"]["terminated"]["reason"], "OOMKilled");
        assert_eq!(
            status["lastState"]["terminated"]["startedAt"],
            "2026-01-01T00:00:00Z"
        );
    }

    #[test]
    fn an_empty_store_has_nothing_to_restart() {
        assert_eq!(restart_next(&Arc::new(Store::new()), None), None);
    }
}

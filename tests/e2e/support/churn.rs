//! Pods changing under a test: churn through the API, and the server's
//! truth to compare a view against.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use podbay::model::PodRow;
use serde_json::json;

/// What the server says, as the list shows it: (namespace, name) →
/// (status, the DEBUG column's mark).
pub type Rows = BTreeMap<(String, String), (String, String)>;

pub async fn server_truth(kube: &kube::Client) -> Rows {
    Api::<Pod>::all(kube.clone())
        .list(&ListParams::default())
        .await
        .expect("the server lists pods")
        .items
        .iter()
        .map(PodRow::from_pod)
        .map(|r| {
            (
                (r.key.namespace.to_string(), r.key.name.to_string()),
                (r.status.to_string(), r.debug_mark()),
            )
        })
        .collect()
}

/// Adds debug containers to running pods and deletes a few, one change
/// every 600 ms, until `until`.
pub async fn churn(kube: kube::Client, until: Instant) -> usize {
    let running: Vec<(String, String)> = Api::<Pod>::all(kube.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .map(|p| (p.metadata.namespace.unwrap(), p.metadata.name.unwrap()))
        .collect();
    let mut changes = 0;
    let mut deleted = 0;
    while Instant::now() < until {
        let (ns, name) = &running[changes % running.len()];
        let api: Api<Pod> = Api::namespaced(kube.clone(), ns);
        if changes % 7 == 3 && deleted < 3 && changes < running.len() {
            let gone = DeleteParams {
                grace_period_seconds: Some(0),
                ..Default::default()
            };
            if api.delete(name, &gone).await.is_ok() {
                deleted += 1;
            }
        } else {
            let patch = json!({"spec": {"ephemeralContainers": [
                {"name": format!("churn-{changes}"), "image": "busybox", "stdin": true, "tty": true}
            ]}});
            let _ = api
                .patch_ephemeral_containers(name, &PatchParams::default(), &Patch::Strategic(patch))
                .await;
        }
        changes += 1;
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    changes
}

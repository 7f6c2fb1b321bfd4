//! The cluster layer's live feeds against the simulator.

mod support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use podbay::cluster::feed::{self, Feed};
use serde_json::json;
use support::{client, start_sim};

fn name(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.clone().unwrap_or_default(),
        pod.metadata.name.clone().unwrap_or_default()
    )
}

async fn next<R: std::fmt::Debug>(rx: &mut tokio::sync::mpsc::Receiver<Feed<R>>) -> Feed<R> {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a feed update in time")
        .expect("feed open")
}

#[tokio::test]
async fn pod_feed_lists_then_streams_changes() {
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let (tx, mut rx) = feed::channel();
    tokio::spawn(feed::run(
        Api::<Pod>::all(kube.clone()),
        feed::config(),
        None,
        name,
        tx,
    ));
    assert_eq!(next(&mut rx).await, Feed::Listing { scope: None });
    let Feed::Listed { scope: None, rows } = next(&mut rx).await else {
        panic!("expected the full list")
    };
    assert_eq!(rows.len(), sim.store().len(podbay::sim::store::Kind::Pod));
    assert!(rows.contains(&"shop/redis-0".to_string()));

    let patch = json!({"spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox", "stdin": true, "tty": true}]}});
    Api::<Pod>::namespaced(kube, "shop")
        .patch_ephemeral_containers("redis-0", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap();
    assert_eq!(
        next(&mut rx).await,
        Feed::Applied("shop/redis-0".to_string())
    );
}

#[tokio::test]
async fn restricted_user_gets_forbidden_naming_the_permission() {
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim-dev").await;
    let (tx, mut rx) = feed::channel();
    tokio::spawn(feed::run(
        Api::<Pod>::all(kube.clone()),
        feed::config(),
        None,
        name,
        tx,
    ));
    assert_eq!(next(&mut rx).await, Feed::Listing { scope: None });
    let Feed::Forbidden(denied) = next(&mut rx).await else {
        panic!("expected Forbidden")
    };
    assert_eq!(
        (
            denied.verb.as_str(),
            denied.resource.as_str(),
            denied.namespace.as_deref()
        ),
        ("list", "pods", None)
    );

    // The namespace it may use still works.
    let (tx, mut rx) = feed::channel();
    tokio::spawn(feed::run(
        Api::<Pod>::namespaced(kube, "shop"),
        feed::config(),
        Some("shop".into()),
        name,
        tx,
    ));
    next(&mut rx).await;
    let Feed::Listed { scope, rows } = next(&mut rx).await else {
        panic!("expected a list")
    };
    assert_eq!(scope.as_deref(), Some("shop"));
    assert!(rows.iter().all(|r| r.starts_with("shop/")) && !rows.is_empty());
}

#[tokio::test]
async fn dropped_watches_reconnect_and_keep_streaming() {
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let (tx, mut rx) = feed::channel();
    tokio::spawn(feed::run(
        Api::<Pod>::namespaced(kube.clone(), "shop"),
        feed::config(),
        Some("shop".into()),
        name,
        tx,
    ));
    next(&mut rx).await;
    next(&mut rx).await;
    sim.drop_watches();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let patch = json!({"spec": {"ephemeralContainers": [{"name": "after-drop", "image": "busybox", "stdin": true, "tty": true}]}});
    Api::<Pod>::namespaced(kube, "shop")
        .patch_ephemeral_containers(
            "cart-5f6d7c9b8-h2j4k",
            &PatchParams::default(),
            &Patch::Strategic(patch),
        )
        .await
        .unwrap();
    loop {
        match next(&mut rx).await {
            Feed::Applied(n) if n == "shop/cart-5f6d7c9b8-h2j4k" => break,
            Feed::Applied(_)
            | Feed::Reconnecting(_)
            | Feed::Listing { .. }
            | Feed::Listed { .. } => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

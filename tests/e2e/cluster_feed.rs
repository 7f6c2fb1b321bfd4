//! The cluster layer's live feeds against the simulator.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use podbay::cluster::feed;
use podbay::model::feed::Feed;
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

/// A paged feed reports a small first page at once, with the server's
/// count of what is left, while the later pages are held back; then the
/// rest, each row once.
#[tokio::test]
async fn a_paged_feed_reports_the_first_page_before_the_list_is_whole() {
    let sim = support::start_sim_with_pods(1500).await;
    sim.hold_list_pages(true);
    let kube = client(&sim, "sim").await;
    let (tx, mut rx) = feed::channel();
    tokio::spawn(feed::run_with(
        Api::<Pod>::all(kube),
        feed::config(),
        None,
        name,
        tx,
        feed::Pages::AsTheyCome,
    ));
    assert_eq!(next(&mut rx).await, Feed::Listing { scope: None });
    let Feed::Page {
        rows: first,
        loaded: 100,
        expected: Some(1500),
        ..
    } = next(&mut rx).await
    else {
        panic!("expected a first page of 100 of about 1500")
    };
    assert_eq!(first.len(), 100);
    assert!(
        tokio::time::timeout(Duration::from_millis(700), rx.recv())
            .await
            .is_err(),
        "nothing more while the later pages are held"
    );
    sim.hold_list_pages(false);
    let mut all = first;
    loop {
        match next(&mut rx).await {
            Feed::Page { rows, loaded, .. } => {
                all.extend(rows);
                assert_eq!(loaded, all.len());
            }
            Feed::Listed { rows, .. } => {
                all.extend(rows);
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(all.len(), 1500);
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 1500, "each row once");
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

fn cart_patch(container: &str) -> Patch<serde_json::Value> {
    Patch::Strategic(json!({"spec": {"ephemeralContainers": [
        {"name": container, "image": "busybox", "stdin": true, "tty": true}
    ]}}))
}

const CART: &str = "cart-5f6d7c9b8-h2j4k";

async fn shop_feed(sim: &podbay::sim::SimHandle) -> tokio::sync::mpsc::Receiver<Feed<String>> {
    let kube = client(sim, "sim").await;
    let (tx, mut rx) = feed::channel();
    tokio::spawn(feed::run(
        Api::<Pod>::namespaced(kube, "shop"),
        feed::config(),
        Some("shop".into()),
        name,
        tx,
    ));
    assert!(matches!(next(&mut rx).await, Feed::Listing { .. }));
    assert!(matches!(next(&mut rx).await, Feed::Listed { .. }));
    // Listed is sent before the watch request; let it reach the server and
    // run past a second (a watch cut sooner without an event is a failure,
    // backed off, as in client-go's reflector).
    tokio::time::sleep(Duration::from_millis(1300)).await;
    rx
}

/// The next update that is not a change to a pod.
async fn next_beyond_changes(rx: &mut tokio::sync::mpsc::Receiver<Feed<String>>) -> Feed<String> {
    loop {
        match next(rx).await {
            Feed::Applied(_) | Feed::Deleted(_) => continue,
            other => return other,
        }
    }
}

#[tokio::test]
async fn a_cut_watch_is_reported_and_resumed_without_a_relist() {
    let sim = start_sim(0).await;
    let mut rx = shop_feed(&sim).await;
    sim.drop_watches();
    assert_eq!(next(&mut rx).await, Feed::Cut);
    assert_eq!(next(&mut rx).await, Feed::Resumed);
    Api::<Pod>::namespaced(client(&sim, "sim").await, "shop")
        .patch_ephemeral_containers(CART, &PatchParams::default(), &cart_patch("after-drop"))
        .await
        .unwrap();
    assert_eq!(next(&mut rx).await, Feed::Applied(format!("shop/{CART}")));
}

#[tokio::test]
async fn compacted_history_makes_the_feed_list_again() {
    let sim = start_sim(0).await;
    let mut rx = shop_feed(&sim).await;
    // A change the watch sees, then history compacted past it.
    Api::<Pod>::namespaced(client(&sim, "sim").await, "shop")
        .patch_ephemeral_containers(CART, &PatchParams::default(), &cart_patch("one"))
        .await
        .unwrap();
    assert_eq!(next(&mut rx).await, Feed::Applied(format!("shop/{CART}")));
    sim.expire_resource_versions();
    Api::<Pod>::namespaced(client(&sim, "sim").await, "shop")
        .patch_ephemeral_containers(CART, &PatchParams::default(), &cart_patch("two"))
        .await
        .unwrap();
    assert_eq!(next(&mut rx).await, Feed::Applied(format!("shop/{CART}")));
    // The kubelet's own updates (the debug containers coming up) must be
    // over before the last compaction: one landing between it and the cut
    // gives the feed a resourceVersion past it, and no 410 would come.
    let pods = Api::<Pod>::namespaced(client(&sim, "sim").await, "shop");
    support::debug_containers_running(&pods, CART, 2, 15).await;
    while let Ok(Some(update)) = tokio::time::timeout(Duration::from_millis(500), rx.recv()).await {
        assert!(matches!(update, Feed::Applied(_)), "{update:?}");
    }
    sim.expire_resource_versions();
    sim.drop_watches();
    assert_eq!(next_beyond_changes(&mut rx).await, Feed::Cut);
    // The new watch starts (Resumed), then its first event is ERROR 410.
    assert_eq!(next(&mut rx).await, Feed::Resumed);
    let relist = next(&mut rx).await;
    assert!(
        matches!(relist, Feed::Listing { .. }),
        "410 → list, got {relist:?}"
    );
    let Feed::Listed { rows, .. } = next(&mut rx).await else {
        panic!("expected the new list")
    };
    assert!(rows.contains(&format!("shop/{CART}")));
}

#[tokio::test]
async fn a_stopped_server_is_reported_then_the_feed_resumes_when_it_returns() {
    let sim = start_sim(0).await;
    let mut rx = shop_feed(&sim).await;
    sim.stop_server();
    // The open watch is reset (or, on some timing, ends first: a cut).
    let sentence = match next(&mut rx).await {
        Feed::Cut => next(&mut rx).await,
        other => other,
    };
    let Feed::Reconnecting(sentence) = sentence else {
        panic!("expected the reason, got {sentence:?}")
    };
    assert!(
        sentence.starts_with("Cannot reach the API server"),
        "{sentence}"
    );
    sim.restart_server().await.unwrap();
    loop {
        match next(&mut rx).await {
            Feed::Reconnecting(_) => continue,
            Feed::Resumed => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    Api::<Pod>::namespaced(client(&sim, "sim").await, "shop")
        .patch_ephemeral_containers(CART, &PatchParams::default(), &cart_patch("after-restart"))
        .await
        .unwrap();
    assert_eq!(next(&mut rx).await, Feed::Applied(format!("shop/{CART}")));
}

//! Faults from the simulator's knobs while the pod list is live.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use podbay::app::keymap::Keymap;
use podbay::app::{App, AppOptions, Event};
use podbay::cluster::feed;
use podbay::model::PodRow;
use podbay::model::debug::Profile;
use support::churn::{Rows, churn, server_truth};
use support::{client, start_sim};

/// What the browser shows, as (namespace, name) → (status, DEBUG mark).
fn shown(app: &App) -> Rows {
    (0..app.pods.visible_len())
        .filter_map(|i| app.pods.visible(i))
        .map(|(r, _)| {
            (
                (r.key.namespace.to_string(), r.key.name.to_string()),
                (r.status.to_string(), r.debug_mark()),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_matches_the_server_after_dropped_watches_and_compaction() {
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let (mut app, _) = App::new(AppOptions {
        cluster: podbay::model::ClusterId::new("sim", &sim.addr().to_string(), "admin"),
        context: "sim".into(),
        others: Vec::new(),
        contexts: vec!["sim".into()],
        namespace: "default".into(),
        namespace_chosen: false,
        all_namespaces: true,
        fallback_namespaces: vec![],
        keymap: Keymap::default(),
        now: jiff::Timestamp::now(),
        debug_images: vec![],
        debug_profile: Profile::General,
        download_dir: ".".into(),
        panes: Default::default(),
    });
    let (tx, mut rx) = feed::channel();
    tokio::spawn(feed::run(
        Api::<Pod>::all(kube.clone()),
        feed::config(),
        None,
        PodRow::from_pod,
        tx,
    ));

    // Churn for ten seconds (debug containers added, a few pods deleted)
    // while every watch is cut twice a second and the history is compacted
    // every two seconds (forcing 410 and a relist).
    let churn = tokio::spawn(churn(
        kube.clone(),
        std::time::Instant::now() + Duration::from_secs(10),
    ));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut tick = 0;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        sim.drop_watches();
        tick += 1;
        if tick % 4 == 0 {
            sim.expire_resource_versions();
        }
        while let Ok(update) = rx.try_recv() {
            app.update(Event::Pods(update));
        }
    }
    churn.await.unwrap();

    // Let the watch settle, then compare with the server's truth.
    let truth = server_truth(&kube).await;
    let settle = tokio::time::Instant::now() + Duration::from_secs(10);
    while shown(&app) != truth && tokio::time::Instant::now() < settle {
        if let Ok(Some(update)) = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await
        {
            app.update(Event::Pods(update));
        }
    }
    assert_eq!(shown(&app), truth, "no stale, missing or duplicate rows");
    assert_eq!(app.pods.total(), truth.len());
    assert!(
        truth.values().any(|(_, debug)| debug.starts_with('◆')),
        "the churn happened"
    );
}

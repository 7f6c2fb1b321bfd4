//! Faults from the simulator's knobs while the pod list is live.

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use podbay::app::keymap::Keymap;
use podbay::app::{App, AppOptions, Event};
use podbay::cluster::debug::Profile;
use podbay::cluster::feed;
use podbay::model::PodRow;
use serde_json::json;
use support::{client, start_sim};

/// What the browser shows: name → (status, debug containers).
fn shown(app: &App) -> BTreeMap<String, (String, u16)> {
    (0..app.pods.visible_len())
        .filter_map(|i| app.pods.visible(i))
        .map(|(r, _)| (r.key.to_string(), (r.status.to_string(), r.ephemeral)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_matches_the_server_after_dropped_watches_and_compaction() {
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let (mut app, _) = App::new(AppOptions {
        context: "sim".into(),
        contexts: vec!["sim".into()],
        namespace: "default".into(),
        all_namespaces: true,
        fallback_namespaces: vec![],
        keymap: Keymap::default(),
        now: jiff::Timestamp::now(),
        debug_images: vec![],
        debug_profile: Profile::General,
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

    // Churn for ten seconds: debug containers added (MODIFIED) and pods
    // deleted (DELETED), while every watch is cut twice a second and the
    // history is compacted every two seconds (forcing 410 and a relist).
    let churn = {
        let kube = kube.clone();
        tokio::spawn(async move {
            let all: Api<Pod> = Api::all(kube.clone());
            let pods = all.list(&ListParams::default()).await.unwrap().items;
            for (i, pod) in pods.iter().enumerate().filter(|(_, p)| {
                p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
            }) {
                let ns = pod.metadata.namespace.clone().unwrap();
                let name = pod.metadata.name.clone().unwrap();
                let api: Api<Pod> = Api::namespaced(kube.clone(), &ns);
                if i % 4 == 0 {
                    let _ = api
                        .delete(
                            &name,
                            &DeleteParams {
                                grace_period_seconds: Some(0),
                                ..Default::default()
                            },
                        )
                        .await;
                } else {
                    let patch = json!({"spec": {"ephemeralContainers": [{"name": format!("churn-{i}"), "image": "busybox", "stdin": true, "tty": true}]}});
                    let _ = api
                        .patch_ephemeral_containers(
                            &name,
                            &PatchParams::default(),
                            &Patch::Strategic(patch),
                        )
                        .await;
                }
                tokio::time::sleep(Duration::from_millis(600)).await;
            }
        })
    };
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
    let truth: BTreeMap<String, (String, u16)> = {
        let all: Api<Pod> = Api::all(kube.clone());
        all.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .iter()
            .map(PodRow::from_pod)
            .map(|r| (r.key.to_string(), (r.status.to_string(), r.ephemeral)))
            .collect()
    };
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
        truth.values().any(|(_, debug)| *debug > 0),
        "the churn happened"
    );
}

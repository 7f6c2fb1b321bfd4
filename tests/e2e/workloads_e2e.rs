//! Starting from what was paged, at 250×60 over every namespace: a Job
//! that failed leads to its failed pod, a DaemonSet to its pod on each
//! node, a Deployment to the many-pods form on its pods, and to its
//! events; esc comes back.
//! READY follows a pod deleted and replaced.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams};

use crate::support::{self, PodbayScreen, args, kubeconfig};

/// The row of `name` in the screen's text, its cells one space apart.
fn row(text: &str, name: &str) -> String {
    text.lines()
        .find(|l| l.contains(&format!(" {name} ")))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_leads_to_its_pods_and_back() {
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "workloads");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 250, 60);
    screen
        .wait_for("the list", |t| {
            t.contains("storefront-") && t.contains("● live")
        })
        .await;
    screen.keys(":job\r").await;
    screen
        .wait_for("the Jobs, in printJob's columns", |t| {
            row(t, "reindex-orders").starts_with("│ batch reindex-orders Failed 0/1")
                && row(t, "nightly-report-29121440").contains("Complete 1/1 4m4s")
                && row(t, "search-migrate").contains("Running 0/1")
        })
        .await;
    // Sorted by namespace: batch's two Jobs, then search's.
    screen.keys("j\r").await;
    screen
        .wait_for("the failed Job's one pod", |t| {
            t.contains("pods of job/reindex-orders")
                && t.contains("reindex-orders-q7t2m")
                && t.contains("Error")
                && !t.contains("nightly-report-")
        })
        .await;
    screen.keys("\x1b").await;
    screen
        .wait_for("the Jobs again", |t| t.contains("jobs (3)"))
        .await;
    screen.keys(":ds\r").await;
    screen
        .wait_for("the log shipper on every Linux node", |t| {
            row(t, "log-shipper").contains("4 4 4 4 4 kubernetes.io/os=linux")
        })
        .await;
    screen.keys("\r").await;
    screen
        .wait_for("its four pods alone", |t| {
            t.contains("pods of ds/log-shipper")
                && t.matches("log-shipper-").count() == 4
                && !t.contains("coredns-")
        })
        .await;
    screen.keys("\x1b:deploy\r").await;
    screen
        .wait_for("the Deployments", |t| {
            row(t, "storefront").contains("3/3 3 3")
        })
        .await;
    // A storefront pod deleted: READY counts it gone, then its
    // replacement once ready, with no key pressed (the controllers report
    // their pods, as kube-controller-manager's do).
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "shop");
    pods.delete("storefront-7d9c8b6f4-x2k9p", &DeleteParams::default())
        .await
        .expect("deleted");
    screen
        .wait_for("READY follows the pods", |t| {
            !row(t, "storefront").contains("3/3 ")
        })
        .await;
    screen
        .wait_for("back to three once it is replaced", |t| {
            row(t, "storefront").contains("3/3 3 3")
        })
        .await;
    // storefront is the last row (shop sorts last).
    screen.keys("Gd").await;
    screen
        .wait_for("the many-pods form on its three pods", |t| {
            t.contains("Debug container in 3 pods") && t.contains("pods of deploy/storefront")
        })
        .await;
    screen.keys("\x1b").await;
    // Back on the Deployments: D describes storefront as kubectl does,
    // its pods from the list; y shows its YAML as the server has it.
    screen.keys("\x1b").await;
    screen
        .wait_for("the Deployments again", |t| t.contains("deployments ("))
        .await;
    screen.keys("GD").await;
    screen
        .wait_for("storefront described", |t| {
            t.contains("describe shop/deploy/storefront")
                && t.contains("3 desired | 3 updated | 3 total | 3 available | 0 unavailable")
                && t.contains("RollingUpdateStrategy:")
                && t.matches("  storefront-7d9c8b6f4-").count() == 3
        })
        .await;
    screen.keys("\x1by").await;
    screen
        .wait_for("its YAML", |t| {
            t.contains("yaml shop/deploy/storefront")
                && t.contains("apiVersion: apps/v1")
                && t.contains("kind: Deployment")
                && !t.contains("managedFields")
        })
        .await;
    screen.keys("\x1b").await;
    screen
        .wait_for("the list once more", |t| t.contains("deployments ("))
        .await;
    // E: the events of storefront's namespace, filtered by its name: the
    // ReplicaSet replacing the pod deleted above, and that pod's own.
    screen.keys("E").await;
    screen
        .wait_for("storefront's events", |t| {
            t.contains("events in shop")
                && t.contains("filter storefront")
                && t.contains("SuccessfulCreate")
                && t.contains("replicaset/storefront-7d9c8b6f4")
                && t.contains("Scheduled")
        })
        .await;
    screen.keys("\x1b").await;
    screen
        .wait_for("the filter cleared", |t| {
            t.contains("events in shop") && !t.contains("filter storefront")
        })
        .await;
    screen.keys("\x1b").await;
    screen
        .wait_for("back on the Deployments", |t| {
            row(t, "storefront").contains("3/3 3 3")
        })
        .await;
    // l: its three pods' logs in one pane, each line after its pod and
    // container; a pod deleted is replaced, and the new one joins.
    let names = |list: &[Pod]| -> Vec<String> {
        list.iter()
            .filter_map(|p| p.metadata.name.clone())
            .filter(|n| n.starts_with("storefront-"))
            .collect()
    };
    let before = names(&pods.list(&Default::default()).await.expect("listed").items);
    assert_eq!(before.len(), 3, "{before:?}");
    screen.keys("l").await;
    screen
        .wait_for("every pod's web and envoy lines", |t| {
            t.contains("logs shop/deploy/storefront")
                && before.iter().all(|pod| {
                    t.contains(&format!("{pod} web   │")) && t.contains(&format!("{pod} envoy │"))
                })
        })
        .await;
    let gone = before[0].clone();
    pods.delete(&gone, &DeleteParams::default())
        .await
        .expect("deleted");
    let mut joined = None;
    for _ in 0..200 {
        let now = names(&pods.list(&Default::default()).await.expect("listed").items);
        joined = now.into_iter().find(|n| !before.contains(n));
        if joined.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let joined = joined.expect("a replacement");
    screen
        .wait_for("the replacement's lines in the same pane", |t| {
            t.contains(&format!("{joined} web   │"))
        })
        .await;
    // The pod deleted was not started again to be read: one start at most
    // on screen.
    let text = screen.text();
    let started = format!("{gone} web   │");
    let restarts = text
        .lines()
        .filter(|l| l.contains(&started) && l.contains("listening on :8080"))
        .count();
    assert!(restarts <= 1, "{gone} started again: {text}");
    // Back to the browser (ctrl-b d), then quit.
    screen.raw(b"\x02d").await;
    screen.quit().await;
    support::exits_cleanly(&mut screen).await;
}

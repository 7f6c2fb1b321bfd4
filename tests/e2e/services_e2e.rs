//! Services in the TUI at 80×24, as a person paged about a Service starts:
//! `:svc` lists shop's with their ready endpoints counted from the pod
//! list, live; `D` says where a Service's ports lead and which pods take
//! traffic (one whose selector matches nothing says so); enter shows its
//! pods alone; `F` forwards to it.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams};

use crate::support::{self, PodbayScreen, args, kubeconfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_services_view_counts_endpoints_live_and_tells_a_services_truth() {
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "services");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 80, 24);
    screen
        .wait_for("the list", |t| {
            t.contains("storefront-") && t.contains("● live")
        })
        .await;
    screen.keys(":svc\r").await;
    let row = |t: &str, name: &str| {
        t.lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    screen
        .wait_for("shop's Services, with their endpoints", |t| {
            row(t, "storefront").contains("ClusterIP 10.96.14.20 <none> 80/TCP 3/3")
                && row(t, "redis").contains("None <none> 6379/TCP 1/1")
                && row(t, "checkout").contains("80/TCP 0/0")
        })
        .await;
    // A storefront pod deleted: its row counts it gone, then its
    // replacement, without a key pressed.
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "shop");
    pods.delete("storefront-7d9c8b6f4-m4q7z", &DeleteParams::default())
        .await
        .expect("deleted");
    screen
        .wait_for("the endpoints follow the pods", |t| {
            !row(t, "storefront").contains(" 3/3 ")
        })
        .await;
    screen
        .wait_for("back to three once it is replaced", |t| {
            row(t, "storefront").contains(" 3/3 ")
        })
        .await;
    // checkout is the first row (sorted): no pod matches it.
    screen.keys("D").await;
    screen
        .wait_for("checkout's truth", |t| {
            t.contains("Service shop/checkout") && t.contains("No pod of shop matches its selector")
        })
        .await;
    screen.keys("\x1b").await;
    screen.keys("jjD").await;
    screen
        .wait_for("storefront's ports and pods", |t| {
            t.contains("80/TCP (http) → each pod's port named http")
                && t.contains("Pods it selects: 3 of 3 take traffic")
        })
        .await;
    // Enter leads to its pods, and only those; esc comes back.
    screen.keys("\x1b\r").await;
    screen
        .wait_for("storefront's pods alone", |t| {
            t.contains("pods of svc/storefront")
                && t.contains("3/6 pods")
                && t.matches("storefront-7d9c8b6f4-").count() == 3
                && !t.contains("cart-")
        })
        .await;
    screen.keys("\x1b").await;
    screen
        .wait_for("the Services again", |t| t.contains("services (3)"))
        .await;
    // F: a forward to the Service (any free local port), answered by one
    // of its pods.
    screen.keys("F").await;
    screen
        .wait_for("the form, with the Service's port", |t| {
            t.contains("Forward a port of svc/storefront in shop") && t.contains("http")
        })
        .await;
    screen.keys("\t\x7f\x7f0\r").await;
    let port = |t: &str| {
        let at = t.find("Forwarding 127.0.0.1:")? + "Forwarding 127.0.0.1:".len();
        t[at..].split(' ').next()?.parse::<u16>().ok()
    };
    screen
        .wait_for("the forward listening", |t| port(t).is_some())
        .await;
    let local = port(&screen.text()).expect("its port");
    crate::forwards_e2e::healthy(local)
        .await
        .expect("a storefront pod answers");
    screen.keys("\x1b").await;
    screen
        .wait_for("back to the pods", |t| {
            t.contains("storefront-") && !t.contains("services (")
        })
        .await;
    screen.quit().await;
    support::exits_cleanly(&mut screen).await;
}

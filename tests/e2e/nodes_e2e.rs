//! Nodes in the TUI, at 80×24 as a person would use them: `:nodes`, `d`
//! on node-a1, a shell that sees that node's processes and root (and not
//! node-b1's), and the node debug pod gone once its pane closes.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use crate::support::{self, PodbayScreen, args, kubeconfig};

/// The node debug pods of `default` not being deleted.
async fn node_debug_pods(pods: &Api<Pod>) -> Vec<String> {
    pods.list(&Default::default())
        .await
        .expect("listed")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.metadata.name)
        .filter(|n| n.starts_with("node-debugger-"))
        .collect()
}

/// podbay at 80×24 on `-n default`, its list live, then `:nodes`.
async fn nodes_view(config: &std::path::Path) -> PodbayScreen {
    let screen = PodbayScreen::spawn(&args(config, &["-n", "default"]), 80, 24);
    screen
        .wait_for("the list", |t| t.contains("hello-") && t.contains("● live"))
        .await;
    screen.keys(":nodes\r").await;
    screen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_on_a_node_from_the_nodes_view_sees_that_node_and_goes_with_its_pane() {
    if !support::namespaces_or_skip("a node's processes are its PID namespace's") {
        return;
    }
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "nodes");
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "default");
    let screen = nodes_view(&config).await;
    screen
        .wait_for("the nodes, the cordoned and the NotReady ones said", |t| {
            t.contains("node-a1")
                && t.contains("control-plane")
                && t.contains("Ready,SchedulingDisabled")
                && t.contains("NotReady")
        })
        .await;
    // node-a1 is the first row.
    screen.keys("d").await;
    screen
        .wait_for("the form, saying what each profile gives", |t| {
            t.contains("A shell on node node-a1") && t.contains("every capability and device")
        })
        .await;
    screen.keys("\r").await;
    screen
        .wait_for_within(30, "the node shell's prompt", |t| {
            t.contains("debug default/node-debugger-node-a1-")
                && t.contains("debugger@node-debugger")
        })
        .await;
    assert_eq!(node_debug_pods(&pods).await.len(), 1, "one pod made");
    // payments-api's qv8lm replica and the apiserver run on node-a1; redis
    // and a storefront replica on node-b1.
    screen
        .keys("ps -e -o comm | grep -E 'payments-api|kube-apiserver|redis-server' | sort -u | tr '\\n' ' '; echo END\r")
        .await;
    screen
        // The command itself wraps at 80 columns, its `echo END` included:
        // the answer is a line that ends so without being the command.
        .wait_for("ps's answer", |t| {
            t.lines()
                .any(|l| l.trim_matches(['│', ' ']).ends_with("END") && !l.contains("echo"))
        })
        .await;
    let text = screen.text();
    let answer = text
        .lines()
        .find(|l| l.contains("END") && !l.contains("echo"))
        .unwrap_or_default()
        .to_string();
    assert!(answer.contains("payments-api"), "node-a1's pods: {text}");
    assert!(!answer.contains("redis-server"), "not node-b1's: {text}");
    screen
        .keys("clear; ls /host/var/log/pods | cut -d_ -f2 | grep -c payments-api\r")
        .await;
    screen
        .wait_for("its pods' log directories", |t| {
            t.lines().any(|l| l.trim_matches(['│', ' ']) == "1")
        })
        .await;
    // Closing the pane (ctrl-b x, y) deletes the pod.
    screen.raw(b"\x02x").await;
    screen
        .wait_for("the question naming the pod's deletion", |t| {
            t.contains("the pod podbay made is deleted")
        })
        .await;
    screen.keys("y").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !node_debug_pods(&pods).await.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the node debug pod is still there"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `C` on the crash-looping ledger-worker: a copy whose worker runs a
/// shell from the app's debug image instead of the app, in a pane; the
/// shell sees the app's files, the copy has no labels, and it goes with
/// its pane.
/// podbay at this size on `-n payments`, `C` pressed on the crash-looping
/// ledger worker: the copy form on it, its own image in the image field.
async fn copy_form(config: &std::path::Path, cols: u16, rows: u16) -> PodbayScreen {
    let screen = PodbayScreen::spawn(&args(config, &["-n", "payments"]), cols, rows);
    screen
        .wait_for("the list", |t| {
            t.contains("ledger-worker-") && t.contains("● live")
        })
        .await;
    screen.keys("/ledger\r").await;
    screen.keys("C").await;
    screen
        .wait_for("the copy form on the crashing worker", |t| {
            t.contains("Copy payments/ledger-worker-7f9c6d8b5-w9x8v")
                && t.lines()
                    .any(|l| l.contains("container ") && l.contains(" worker "))
                && t.contains("ghcr.io/podbay/ledger:1.0.4")
        })
        .await;
    screen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_made_with_c_holds_a_crash_loop_and_goes_with_its_pane() {
    if !support::namespaces_or_skip("the app's files are in its container's own root") {
        return;
    }
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "copies");
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "payments");
    let screen = copy_form(&config, 80, 24).await;
    screen.raw(&[0x7f; 32]).await;
    screen.keys("ghcr.io/podbay/ledger:1.0.4-debug\r").await;
    screen
        .wait_for_within(30, "the held worker's shell", |t| {
            t.contains("worker@ledger-worker-7f9c6d8b5-w9x8v-copy-")
        })
        .await;
    let copies = |list: Vec<Pod>| -> Vec<Pod> {
        list.into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter(|p| {
                p.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.contains("-copy-"))
            })
            .collect()
    };
    let made = copies(pods.list(&Default::default()).await.unwrap().items);
    assert_eq!(made.len(), 1);
    assert!(
        made[0]
            .metadata
            .labels
            .as_ref()
            .is_none_or(|l| l.is_empty()),
        "no label a Service selects: {:?}",
        made[0].metadata.labels
    );
    screen
        .keys("head -1 /etc/ledger/config.yaml; ls /app\r")
        .await;
    screen
        .wait_for("the app's files", |t| {
            t.contains("service: ledger")
                && t.lines().any(|l| l.trim_matches(['│', ' ']) == "ledger")
        })
        .await;
    screen.raw(b"\x02x").await;
    screen
        .wait_for("the question", |t| t.contains("is deleted)?"))
        .await;
    screen.keys("y").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !copies(pods.list(&Default::default()).await.unwrap().items).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the copy is still there"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// At 80×24 the nodes view counts taints it cannot show whole (it cut
/// them to `node-`), and enter on node-a1 lists its taints and its pods
/// of every namespace, not only the one shown (`-n default` showed none
/// of kube-system's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nodes_taints_and_pods_of_every_namespace_are_read_whole_at_80_columns() {
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "node-pods");
    let screen = nodes_view(&config).await;
    screen
        .wait_for("taints counted, not cut", |t| {
            t.contains("node-a1") && t.contains("1 taint") && !t.contains(" node-role")
        })
        .await;
    // node-a1 is the first row.
    screen.keys("\r").await;
    screen
        .wait_for("its taint, and kube-system's pod on it", |t| {
            t.contains("node-role.kubernetes.io/control-plane")
                && t.contains("every namespace")
                && t.contains("kube-system/kube-apiserver-node-a1")
        })
        .await;
    screen.raw(b"\x1b").await;
    screen.quit().await;
}

/// At 250×60, the copy form open: text that arrives as one burst (pasted
/// without bracketed paste, meant for a shell) types into the form but its
/// Enter creates nothing; an Enter typed as a person types it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_keys_ending_in_enter_creates_no_copy() {
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "burst");
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "payments");
    let copies = || async {
        pods.list(&Default::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter_map(|p| p.metadata.name)
            .filter(|n| n.contains("-copy-"))
            .count()
    };
    let screen = copy_form(&config, 250, 60).await;
    let mut burst = vec![0x7f; 32];
    burst.extend_from_slice(b"ghcr.io/podbay/ledger:1.0.4-debug\r");
    screen.raw(&burst).await;
    screen
        .wait_for("the burst typed in, its Enter refused", |t| {
            t.contains("ghcr.io/podbay/ledger:1.0.4-debug")
                && t.contains("Enter came amid keys faster than typing")
                && t.contains("Copy payments/ledger-worker-7f9c6d8b5-w9x8v")
        })
        .await;
    assert_eq!(copies().await, 0, "nothing created");
    screen.keys("\r").await;
    screen
        .wait_for_within(30, "the copy, from a typed Enter", |t| {
            t.contains("ledger-worker-7f9c6d8b5-w9x8v-copy-")
        })
        .await;
    assert_eq!(copies().await, 1);
}

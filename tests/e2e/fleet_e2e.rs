//! Many pods from the TUI: the real `podbay` in a PTY against the
//! simulator. Mark pods, launch in all of them, type once, read each
//! pane's own answer.

use crate::support;

use support::{PodbayScreen, args, exits_cleanly, kubeconfig, start_sim};

const STOREFRONT: [&str; 3] = [
    "storefront-7d9c8b6f4-m4q7z",
    "storefront-7d9c8b6f4-t8w3n",
    "storefront-7d9c8b6f4-x2k9p",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn marked_pods_get_a_pane_each_and_one_typed_line_runs_in_all() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "fleet");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 150, 40);
    screen
        .wait_for("shop pods", |t| STOREFRONT.iter().all(|p| t.contains(p)))
        .await;
    screen.keys("/storefront\r").await;
    screen.keys("   ").await;
    screen
        .wait_for("three marked", |t| {
            t.contains("3 marked") && t.matches("● storefront-").count() == 3
        })
        .await;
    screen.keys("d").await;
    screen
        .wait_for("one form for the three", |t| {
            t.contains("Debug container in 3 pods")
                && t.contains("3 launch, 0 attach")
                && t.contains("each pod's first container")
        })
        .await;
    screen.raw(b"\r").await;
    screen
        .wait_for("three attached panes, typing to all", |t| {
            t.matches("● attached").count() == 3 && t.contains("BROADCAST to 3 panes")
        })
        .await;

    screen.keys("hostname\r").await;
    let sandboxed = support::namespaces_or_skip("fleet panes' hostnames");
    if sandboxed {
        // Each pane's own pod answers, on a line of its own at the pane's
        // left edge (the title and the prompt name the pod too, elsewhere).
        screen
            .wait_for("each pane's own hostname", |t| {
                STOREFRONT.iter().all(|p| t.contains(&format!("│{p} ")))
            })
            .await;
    } else {
        let host = nix::unistd::gethostname().expect("hostname");
        let host = host.to_string_lossy().to_string();
        screen
            .wait_for("an answer in each pane", |t| {
                t.matches(&format!("│{host} ")).count() == 3
            })
            .await;
    }

    screen.raw(b"\x02").await;
    screen.keys("d").await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

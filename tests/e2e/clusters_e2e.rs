//! One pod list across two clusters: two simulators with the same pods,
//! merged into one kubeconfig as `sim-a` and `sim-b`, listed together by
//! `podbay --context sim-a,sim-b`. Each row's actions go to its own
//! cluster, and a cluster that stops answering is said on its own.

use crate::support;

use podbay::sim::SimHandle;
use support::{
    PodbayScreen, api_port_after, exits_cleanly, merged_kubeconfig, merged_kubeconfig_from,
    start_sim,
};

/// From the browser: `context`'s redis-0 (the `nth` of the two rows the
/// filter shows, sim-a's first), a debug container launched with the
/// launcher's defaults, attached.
async fn debug_redis_on(screen: &PodbayScreen, nth: usize, context: &str) {
    screen.raw(b"\x1b").await;
    screen.keys("/redis-0\r").await;
    screen
        .wait_for("the two redis-0 rows", |t| t.contains("2/12 pods"))
        .await;
    screen.keys(&"j".repeat(nth)).await;
    screen.keys("d").await;
    let title = format!("Debug container for {context}/shop/redis-0");
    screen
        .wait_for(&format!("the launcher for {context}'s redis-0"), |t| {
            t.contains(&title)
        })
        .await;
    screen.raw(b"\r").await;
    let pane = format!("{context} ▸ debug shop/redis-0/");
    screen
        .wait_for(&format!("a pane on {context}, attached"), |t| {
            t.lines()
                .any(|l| l.contains(&pane) && l.contains("● attached"))
        })
        .await;
    // Its shell's prompt, before typing: a shell setting up its line
    // editor may drop what was typed before (busybox sh does).
    let text = screen.text();
    let name: String = text
        .split(&pane)
        .nth(1)
        .map(|rest| rest.chars().take_while(|c| !c.is_whitespace()).collect())
        .unwrap_or_default();
    let prompt = format!("{name}@redis-0#");
    screen
        .wait_for(&format!("{context}'s shell prompt"), |t| {
            t.contains(&prompt)
        })
        .await;
}

/// Two simulators with the same pods, merged into one kubeconfig as
/// sim-a and sim-b, and podbay's arguments: that kubeconfig, then `extra`.
async fn two_simulators(
    tag: &str,
    extra: &[&str],
) -> (SimHandle, SimHandle, std::path::PathBuf, Vec<String>) {
    let sim_a = start_sim(0).await;
    let sim_b = start_sim(0).await;
    let config = merged_kubeconfig(&[(&sim_a, "sim-a"), (&sim_b, "sim-b")], tag);
    let mut args = vec!["--kubeconfig".to_string(), config.display().to_string()];
    args.extend(extra.iter().map(|a| a.to_string()));
    (sim_a, sim_b, config, args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_list_of_two_clusters_debugs_each_redis_on_its_own_and_says_which_stalls() {
    let (sim_a, sim_b, config, args) =
        two_simulators("one-list", &["--context", "sim-a,sim-b", "-n", "shop"]).await;
    let mut screen = PodbayScreen::spawn(&args, 120, 36);
    screen
        .wait_for("both clusters live, each row with its context", |t| {
            let row_of = |context: &str| {
                t.lines()
                    .any(|l| l.starts_with(context) && l.contains("redis-0"))
            };
            t.contains("sim-a ● live · sim-b ● live")
                && t.contains("12 pods")
                && row_of("sim-a ")
                && row_of("sim-b ")
        })
        .await;

    debug_redis_on(&screen, 1, "sim-b").await;
    let port_b = api_port_after(&screen, "B=").await;
    assert_eq!(
        port_b,
        format!("{}/", sim_b.addr().port()),
        "sim-b's row was debugged on sim-b"
    );
    screen.raw(b"\x02d").await;
    debug_redis_on(&screen, 0, "sim-a").await;
    let port_a = api_port_after(&screen, "A=").await;
    assert_eq!(
        port_a,
        format!("{}/", sim_a.addr().port()),
        "sim-a's row was debugged on sim-a (sim-b's is {port_b})"
    );

    // sim-b stops answering: it is said for sim-b, and sim-a stays live.
    screen.raw(b"\x02d").await;
    screen.raw(b"\x1b").await;
    screen
        .wait_for("the list again", |t| t.contains("CONTEXT"))
        .await;
    sim_b.stop_server();
    screen
        .wait_for_within(30, "sim-b not live beside a live sim-a", |t| {
            t.contains("sim-a ● live · sim-b ◍")
        })
        .await;
    let text = screen.text();
    assert!(
        text.lines()
            .any(|l| l.starts_with("◍ sim-b") && l.contains("redis-0")),
        "sim-b's rows say so:\n{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("sim-a ") && !l.contains('◍') && l.contains("redis-0")),
        "sim-a's rows do not:\n{text}"
    );

    screen.keys("q").await;
    screen
        .wait_for("the quit question", |t| t.contains("Quit? y/n"))
        .await;
    screen.keys("y").await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// `--all-contexts` lists every cluster of the kubeconfig; `:ctx a` goes
/// back to one, `:ctx a,b` to both again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_contexts_and_ctx_with_two_names_list_both_clusters() {
    let (_sim_a, _sim_b, config, args) =
        two_simulators("all-contexts", &["--all-contexts", "-n", "shop"]).await;
    let mut screen = PodbayScreen::spawn(&args, 80, 24);
    let both = |t: &str| t.contains("sim-a ● live · sim-b ● live") && t.contains("12 pods");
    screen.wait_for("both clusters at 80 columns", both).await;
    screen.keys(":ctx sim-b\r").await;
    screen
        .wait_for("sim-b alone", |t| {
            t.contains("ctx sim-b") && t.contains("6 pods") && !t.contains("sim-a ●")
        })
        .await;
    screen.keys(":ctx sim-a,sim-b\r").await;
    screen.wait_for("both again", both).await;
    screen.keys("q").await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// The first context named cannot be reached at start: podbay starts on
/// the next one and says the first as unreachable, instead of exiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_context_that_cannot_be_reached_holds_the_others_back_no_longer_than_its_try() {
    let (sim_a, _sim_b, config, args) =
        two_simulators("first-down", &["--context", "sim-a,sim-b", "-n", "shop"]).await;
    sim_a.stop_server();
    let mut screen = PodbayScreen::spawn(&args, 120, 30);
    screen
        .wait_for_within(40, "sim-b listed, sim-a said unreachable", |t| {
            t.contains("sim-b ● live · sim-a ⊘ unreachable")
                && t.lines()
                    .any(|l| l.starts_with("sim-b ") && l.contains("redis-0"))
                && !t.lines().any(|l| l.starts_with("sim-a "))
        })
        .await;
    screen.keys("q").await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// The namespaces of the rows of `context` on the screen (the column after
/// CONTEXT).
fn namespaces_of_rows(text: &str, context: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{context} ")))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

/// An admin's context beside a developer's who may list pods in `shop`
/// alone: with `-A` the admin's cluster lists every namespace and the
/// developer's, refused that, its own namespace, without narrowing the
/// other; `0` then lists each context's own namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restricted_context_falls_back_to_its_own_namespace_and_alone() {
    let sim_a = start_sim(0).await;
    let sim_b = start_sim(0).await;
    let config = merged_kubeconfig_from(
        &[(&sim_a, "sim-a", "sim"), (&sim_b, "sim-b-dev", "sim-dev")],
        "restricted",
    );
    let config_arg = config.display().to_string();
    let args = [
        "--kubeconfig",
        &config_arg,
        "--context",
        "sim-a,sim-b-dev",
        "-A",
    ]
    .map(str::to_string);
    let mut screen = PodbayScreen::spawn(&args, 120, 36);
    screen
        .wait_for("sim-b-dev on its own namespace, sim-a on all", |t| {
            t.contains("sim-a ● live · sim-b-dev/shop ● live")
                && t.contains("ns all")
                && namespaces_of_rows(t, "sim-a").iter().any(|ns| ns != "shop")
        })
        .await;
    screen.keys("/ctx:sim-b-dev\r").await;
    screen
        .wait_for("sim-b-dev's rows, all of shop", |t| {
            let namespaces = namespaces_of_rows(t, "sim-b-dev");
            t.contains("6/") && namespaces.len() == 6 && namespaces.iter().all(|ns| ns == "shop")
        })
        .await;
    assert!(!screen.text().contains('⊘'), "{}", screen.text());
    // Each context's own namespace: sim-a's default, sim-b-dev's shop.
    screen.raw(b"\x1b").await;
    screen.keys("0").await;
    screen
        .wait_for("each context's own namespace", |t| {
            let a = namespaces_of_rows(t, "sim-a");
            let b = namespaces_of_rows(t, "sim-b-dev");
            t.contains("sim-b-dev/shop ● live")
                && t.contains("ns default")
                && !a.is_empty()
                && a.iter().all(|ns| ns == "default")
                && b.len() == 6
                && b.iter().all(|ns| ns == "shop")
        })
        .await;
    screen.keys("q").await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// `:deploy` over two clusters lists each one's storefront after its
/// context; enter on sim-b's shows sim-b's three pods, not sim-a's; and
/// `:nodes` lists each cluster's nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_view_of_two_clusters_leads_to_its_own_clusters_pods() {
    let (_sim_a, _sim_b, config, args) =
        two_simulators("deployments", &["--context", "sim-a,sim-b", "-n", "shop"]).await;
    let mut screen = PodbayScreen::spawn(&args, 120, 36);
    screen
        .wait_for("both clusters listed", |t| t.contains("12 pods"))
        .await;
    screen.keys(":deploy\r").await;
    let row_of = |t: &str, context: &str| {
        t.lines()
            .any(|l| l.starts_with(&format!("│ {context} ")) && l.contains("storefront"))
    };
    screen
        .wait_for("each cluster's storefront", |t| {
            row_of(t, "sim-a") && row_of(t, "sim-b")
        })
        .await;
    // sim-b's storefront: the filter keeps the two, sim-a's first.
    screen.keys("/storefront\r").await;
    screen.keys("j").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("sim-b's storefront pods alone", |t| {
            let pods: Vec<&str> = t.lines().filter(|l| l.contains("storefront-")).collect();
            t.contains("pods of deploy/storefront")
                && pods.len() == 3
                && pods.iter().all(|l| l.starts_with("sim-b "))
        })
        .await;
    // Each cluster's nodes, each counting its own cluster's pods.
    screen.keys(":nodes\r").await;
    screen
        .wait_for("each cluster's nodes", |t| {
            let nodes = |context: &str| {
                t.lines()
                    .filter(|l| l.starts_with(&format!("│ {context} ")) && l.contains("node-"))
                    .count()
            };
            nodes("sim-a") > 0 && nodes("sim-a") == nodes("sim-b")
        })
        .await;
    screen.keys("q").await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

//! Resource use, end to end: the simulator's metrics API measured from its
//! containers' real processes, the kubelet's OOM kill, `podbay top`, and
//! the pod list's CPU and MEM columns in a PTY.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};

use crate::support;

use support::{DebugFixture as Fixture, PodbayScreen, args, exits_cleanly, kubeconfig, start_sim};

/// `podbay top ARGS…`, piped; its output.
async fn top(f: &Fixture, args: &[&str]) -> std::process::Output {
    let home = support::tempdir::temp_home("top");
    let run = support::podbay_command("top", &f.kubeconfig, args, home.path()).output();
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("podbay top finished in time")
        .expect("podbay runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The MiB of `pod`'s row in kubectl top's table, if it has one.
fn mebibytes(table: &str, pod: &str) -> Option<u64> {
    let line = table.lines().find(|l| l.contains(pod))?;
    line.split_whitespace()
        .last()?
        .strip_suffix("Mi")?
        .parse()
        .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_prints_what_the_processes_use_sorted_and_as_json() {
    let f = Fixture::new(0).await;
    // metrics-server has a figure after its second measurement.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let table = loop {
        let out = top(&f, &["-n", "search"]).await;
        let table = text(&out.stdout);
        if out.status.success() && mebibytes(&table, "search-indexer-").is_some_and(|m| m > 0) {
            break table;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no figure for the indexer: {table}{}",
            text(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(table.starts_with("NAME "), "kubectl top's columns: {table}");
    assert!(
        table
            .lines()
            .next()
            .is_some_and(|h| h.contains("CPU(cores)") && h.contains("MEMORY(bytes)"))
    );
    assert!(
        !table.contains("search-gpu"),
        "a pending pod has no metrics: {table}"
    );

    let json = top(&f, &["-A", "--sort", "memory", "-o", "json"]).await;
    assert_eq!(json.status.code(), Some(0), "{}", text(&json.stderr));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let pods = value["pods"].as_array().expect("pods");
    assert!(pods.len() >= 15, "{value}");
    let bytes: Vec<u64> = pods
        .iter()
        .map(|p| p["memoryBytes"].as_u64().unwrap_or(0))
        .collect();
    assert!(
        bytes.windows(2).all(|w| w[0] >= w[1]),
        "most memory first: {bytes:?}"
    );
    let indexer = pods
        .iter()
        .find(|p| {
            p["pod"]
                .as_str()
                .is_some_and(|n| n.starts_with("search-indexer-"))
        })
        .expect("the indexer");
    assert_eq!(indexer["limits"]["memoryBytes"], 96 << 20, "{indexer}");
    assert_eq!(indexer["containers"][0]["name"], "indexer");

    // The restricted user: its namespace, not every one.
    let refused = top(&f, &["--context", "sim-dev", "-A"]).await;
    assert_eq!(refused.status.code(), Some(77), "{}", text(&refused.stderr));
    let said = text(&refused.stderr);
    assert_eq!(said.lines().count(), 1, "one sentence: {said}");
    assert!(
        said.contains("pods.metrics.k8s.io") && said.contains("at cluster scope"),
        "{said}"
    );
    let own = top(&f, &["--context", "sim-dev", "-n", "shop"]).await;
    assert_eq!(own.status.code(), Some(0), "{}", text(&own.stderr));
    assert!(text(&own.stdout).contains("redis-0"));
}

/// A container over its memory limit is killed by the kubelet: the kernel's
/// verdict in its status, `OOMKilled` and 137.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_over_its_memory_limit_ends_oom_killed() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "default");
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "leaky"},
        "spec": {"restartPolicy": "Never", "containers": [{
            "name": "indexer", "image": "ghcr.io/podbay/indexer:0.9.3",
            "resources": {"limits": {"memory": "12Mi"}},
        }]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("created");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(40);
    let terminated = loop {
        let now = pods.get("leaky").await.expect("read");
        let terminated = now
            .status
            .and_then(|s| s.container_statuses)
            .and_then(|s| s.into_iter().next())
            .and_then(|s| s.state)
            .and_then(|s| s.terminated);
        if let Some(terminated) = terminated {
            break terminated;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still running past its limit"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!(
        (terminated.reason.as_deref(), terminated.exit_code),
        (Some("OOMKilled"), 137)
    );
}

/// In the list: the columns come, `:sort memory` puts the climbing indexer
/// first, and at 80 columns the figures stay beside READY and STATUS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_sorted_by_memory_shows_the_climbing_container_first() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "usage");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 250, 60);
    screen
        .wait_for_within(30, "the CPU and MEM columns", |t| {
            t.contains("MEM") && t.contains("%MEM/L") && t.contains("● live")
        })
        .await;
    screen.keys(":sort memory\r").await;
    screen
        .wait_for_within(60, "the indexer first", |t| {
            support::table_rows(t)
                .first()
                .is_some_and(|r| r.contains("search-indexer-"))
        })
        .await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// The demo's prometheus spins flat out; its 50m CPU limit holds it there,
/// as CFS bandwidth control holds a container on a node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_container_is_held_at_its_cpu_limit() {
    let f = Fixture::new(0).await;
    let prometheus = |out: &std::process::Output| {
        let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        value["pods"][0]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["name"] == "prometheus")
            .and_then(|c| c["cpuMillicores"].as_u64())
    };
    let started = tokio::time::Instant::now();
    let first = loop {
        let out = top(&f, &["-n", "monitoring", "-o", "json"]).await;
        if let Some(m) = prometheus(&out).filter(|m| *m > 0) {
            break m;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no figure for prometheus: {}",
            text(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    // Two windows later: the burst before the first period is past.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let later = prometheus(&top(&f, &["-n", "monitoring", "-o", "json"]).await);
    assert!(
        later.is_some_and(|m| (10..=80).contains(&m)),
        "held at its 50m limit: first {first}m, then {later:?}"
    );
}

//! `podbay debug --context a,b`: one run over the pods of several
//! clusters, each line after `ctx/ns/pod`, one summary, one status; a
//! cluster that cannot be reached is said and does not hold the others.

use crate::support;

const STOREFRONT: [&str; 3] = [
    "storefront-7d9c8b6f4-m4q7z",
    "storefront-7d9c8b6f4-t8w3n",
    "storefront-7d9c8b6f4-x2k9p",
];

const SELECTOR: &str = "app.kubernetes.io/name=storefront";

/// `--context CONTEXTS -n shop -l SELECTOR --target web` with busybox,
/// then `rest` (more flags, `--` and the command).
fn storefront_args<'a>(contexts: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--context",
        contexts,
        "-n",
        "shop",
        "-l",
        SELECTOR,
        "--target",
        "web",
        "--image",
        "busybox:1.36",
    ];
    args.extend_from_slice(rest);
    args
}

/// `podbay debug` with [`storefront_args`].
async fn debug_storefronts(
    config: &std::path::Path,
    contexts: &str,
    rest: &[&str],
) -> std::process::Output {
    support::podbay_debug(config, &storefront_args(contexts, rest)).await
}

/// `podbay debuggers ARGS…` with this kubeconfig, in a scratch home.
async fn debuggers(config: &std::path::Path, args: &[&str]) -> std::process::Output {
    let home = support::tempdir::temp_home("debuggers-contexts");
    support::podbay_command("debuggers", config, args, home.path())
        .output()
        .await
        .expect("podbay debuggers runs")
}

/// Lines of `stdout` after `prefix: `.
fn after<'a>(stdout: &'a str, prefix: &str) -> Vec<&'a str> {
    let prefix = format!("{prefix}: ");
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_cluster_s_pods_run_on_their_own_cluster_each_line_after_ctx_ns_pod() {
    let sim_a = support::start_sim(0).await;
    let sim_b = support::start_sim(0).await;
    let config =
        support::merged_kubeconfig(&[(&sim_a, "sim-a"), (&sim_b, "sim-b")], "fleet-contexts");
    let out = debug_storefronts(
        &config,
        "sim-a,sim-b",
        &["--", "sh", "-c", "echo port=$KUBERNETES_SERVICE_PORT"],
    )
    .await;
    let (stdout, stderr) = (support::stdout(&out), support::stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for context in ["sim-a", "sim-b"] {
        assert!(
            stderr.contains(&format!("{context}: debugging 3 pods")),
            "{stderr}"
        );
    }
    for (sim, context) in [(&sim_a, "sim-a"), (&sim_b, "sim-b")] {
        for pod in STOREFRONT {
            let label = format!("{context}/shop/{pod}");
            // The debug container's own API address: its cluster's.
            assert_eq!(
                after(&stdout, &label),
                [format!("port={}", sim.addr().port())],
                "{label} ran on {context}:\n{stdout}"
            );
            let summary = &stderr[stderr.find("POD ").expect("a summary table")..];
            let row = summary
                .lines()
                .find(|l| l.starts_with(&label))
                .unwrap_or_else(|| panic!("a summary row for {label}:\n{stderr}"));
            assert!(row.contains("exited 0"), "{row}");
        }
    }
    assert_eq!(stdout.lines().count(), 6, "3 + 3 lines:\n{stdout}");
    assert!(stderr.contains("podbay: 6 of 6 pods exited 0"), "{stderr}");

    // Every debugger left, in both clusters, in one listing.
    let listed = debuggers(&config, &["--context", "sim-a,sim-b", "-n", "shop"]).await;
    let table = support::stdout(&listed);
    assert_eq!(
        listed.status.code(),
        Some(0),
        "{}",
        support::stderr(&listed)
    );
    assert!(table.starts_with("CONTEXT"), "{table}");
    for context in ["sim-a", "sim-b"] {
        for pod in STOREFRONT {
            assert!(
                table
                    .lines()
                    .any(|l| l.starts_with(context) && l.contains(pod) && l.contains("busybox")),
                "{context}'s {pod} has its row:\n{table}"
            );
        }
    }
    // `-o json`: each entry's context, in the order the clusters are named.
    let contexts_listed = |args: &'static [&'static str]| {
        let config = config.clone();
        async move {
            let listed = debuggers(&config, args).await;
            let doc: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
            doc.as_array()
                .expect("an array")
                .iter()
                .map(|d| {
                    d["context"]
                        .as_str()
                        .expect("each has its context")
                        .to_string()
                })
                .collect::<Vec<_>>()
        }
    };
    let three_each = |first: &str, second: &str| {
        [first; 3]
            .into_iter()
            .chain([second; 3])
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        contexts_listed(&["--context", "sim-b,sim-a", "-n", "shop", "-o", "json"]).await,
        three_each("sim-b", "sim-a")
    );
    // --all-contexts: the kubeconfig's contexts, in its order.
    assert_eq!(
        contexts_listed(&["--all-contexts", "-n", "shop", "-o", "json"]).await,
        three_each("sim-a", "sim-b")
    );
    let both = debuggers(&config, &["--all-contexts", "--context", "sim-a"]).await;
    assert_eq!(both.status.code(), Some(2), "{}", support::stderr(&both));
    let _ = std::fs::remove_file(&config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_is_down_is_said_and_the_others_still_run() {
    let sim_a = support::start_sim(0).await;
    let sim_b = support::start_sim(0).await;
    let config = support::merged_kubeconfig(&[(&sim_a, "sim-a"), (&sim_b, "sim-b")], "fleet-down");
    sim_b.stop_server();
    let started = std::time::Instant::now();
    let out = debug_storefronts(&config, "sim-b,sim-a", &["-o", "json", "--", "true"]).await;
    let stderr = support::stderr(&out);
    assert_eq!(out.status.code(), Some(123), "some failed: {stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "a refused connection is not waited on: {:?}",
        started.elapsed()
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["total"], 3, "{doc}");
    assert_eq!(doc["succeeded"], 3, "{doc}");
    for pod in doc["pods"].as_array().expect("pods") {
        assert_eq!(pod["context"], "sim-a", "{pod}");
        assert_eq!(pod["result"], "exited", "{pod}");
    }
    let down = &doc["unreachedClusters"][0];
    assert_eq!(down["context"], "sim-b", "{doc}");
    assert_eq!(down["result"], "unreachable", "{doc}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("sim-b/*") && l.contains("unreachable")),
        "the summary names the cluster: {stderr}"
    );

    // The listing of debuggers: sim-a's rows, sim-b said, its failure's status.
    let listed = debuggers(&config, &["--context", "sim-a,sim-b", "-n", "shop"]).await;
    let _ = std::fs::remove_file(&config);
    let (table, said) = (support::stdout(&listed), support::stderr(&listed));
    assert_eq!(listed.status.code(), Some(74), "unreachable: {said}");
    assert!(said.starts_with("podbay: sim-b: Cannot reach"), "{said}");
    assert_eq!(
        table.lines().filter(|l| l.starts_with("sim-a")).count(),
        3,
        "{table}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_contexts_refuse_a_node_and_a_copy_before_anything_is_sent() {
    let sim = support::start_sim(0).await;
    let config = support::merged_kubeconfig(&[(&sim, "sim-a")], "fleet-one-node");
    for extra in [
        &["node/node-a1", "--", "true"][..],
        &["redis-0", "--copy-to", "redis-copy", "--", "true"][..],
    ] {
        let mut args = vec!["--context", "sim-a,sim-b"];
        args.extend_from_slice(extra);
        let out = support::podbay_debug(&config, &args).await;
        support::exits(&out, 2, "name one context");
    }
    let _ = std::fs::remove_file(&config);
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(support::client(&sim, "sim").await, "shop");
    assert!(
        pods.get_opt("redis-copy").await.expect("get").is_none(),
        "no copy was made"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_across_clusters_is_one_table_and_a_cluster_gone_is_said() {
    let sim_a = support::start_sim(0).await;
    let sim_b = support::start_sim(0).await;
    let config =
        support::merged_kubeconfig(&[(&sim_a, "sim-a"), (&sim_b, "sim-b")], "top-contexts");
    let home = support::tempdir::temp_home("top-contexts");
    let top = || async {
        support::podbay_command(
            "top",
            &config,
            // Every context of the kubeconfig: sim-a and sim-b.
            &["--all-contexts", "-n", "search", "--sort", "memory"],
            home.path(),
        )
        .output()
        .await
        .expect("podbay top runs")
    };
    // metrics-server has a figure after its second measurement, per cluster.
    let measured = |table: &str, context: &str| {
        table
            .lines()
            .any(|l| l.starts_with(context) && l.contains("search-indexer-"))
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(40);
    let table = loop {
        let out = top().await;
        let table = support::stdout(&out);
        if out.status.success() && measured(&table, "sim-a") && measured(&table, "sim-b") {
            break table;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no figures from both clusters: {table}{}",
            support::stderr(&out)
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "CONTEXT",
            "NAMESPACE",
            "NAME",
            "CPU(cores)",
            "MEMORY(bytes)"
        ]
    );
    let mebibytes: Vec<u64> = table
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.split_whitespace()
                .last()?
                .strip_suffix("Mi")?
                .parse()
                .ok()
        })
        .collect();
    assert!(
        mebibytes.windows(2).all(|w| w[0] >= w[1]),
        "one sort over both clusters, most memory first:\n{table}"
    );

    sim_b.stop_server();
    let out = top().await;
    let _ = std::fs::remove_file(&config);
    let (table, said) = (support::stdout(&out), support::stderr(&out));
    assert_eq!(out.status.code(), Some(74), "unreachable: {said}");
    assert!(said.starts_with("podbay: sim-b: "), "{said}");
    assert!(
        measured(&table, "sim-a") && !table.contains("sim-b"),
        "{table}"
    );
}

/// `podbay debug --context sim-a,sim-b … ARGS -- echo ran` with sim-b
/// answering nothing for a minute, piped: the running podbay, and sim-a's
/// 3 lines with when each came. The simulators and the kubeconfig live as
/// long as the returned guard.
struct StalledRun {
    child: tokio::process::Child,
    first_lines: Vec<(String, std::time::Duration)>,
    started: std::time::Instant,
    _sims: (podbay::sim::SimHandle, podbay::sim::SimHandle),
    _home: support::tempdir::TempHome,
    config: std::path::PathBuf,
}

impl StalledRun {
    /// Its stderr to the end, and its status.
    async fn finish(&mut self) -> (String, std::process::ExitStatus) {
        use tokio::io::AsyncReadExt;
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .await
            .expect("stderr reads");
        let status = tokio::time::timeout(std::time::Duration::from_secs(60), self.child.wait())
            .await
            .expect("podbay ends")
            .expect("status");
        (stderr, status)
    }
}

impl Drop for StalledRun {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.config);
    }
}

async fn with_sim_b_stalled(tag: &str, extra: &[&str]) -> StalledRun {
    use tokio::io::AsyncBufReadExt;
    let sim_a = support::start_sim(0).await;
    let sim_b = support::start_sim(0).await;
    let config = support::merged_kubeconfig(&[(&sim_a, "sim-a"), (&sim_b, "sim-b")], tag);
    sim_b.set_latency(std::time::Duration::from_secs(60));
    let home = support::tempdir::temp_home(tag);
    let mut rest = extra.to_vec();
    rest.extend_from_slice(&["--", "echo", "ran"]);
    let args = storefront_args("sim-a,sim-b", &rest);
    let started = std::time::Instant::now();
    let mut child = support::podbay_debug_spawned(&config, &args, home.path());
    drop(child.stdin.take());
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut first_lines = Vec::new();
    while first_lines.len() < 3 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), stdout.next_line())
            .await
            .expect("a line within a minute")
            .expect("stdout reads")
            .expect("3 lines before stdout ends");
        assert!(line.starts_with("sim-a/shop/"), "{line}");
        first_lines.push((line, started.elapsed()));
    }
    StalledRun {
        child,
        first_lines,
        started,
        _sims: (sim_a, sim_b),
        _home: home,
        config,
    }
}

/// The summary on a finished run's stderr has sim-a's 3 pods exited 0 and
/// a `sim-b/*` row saying `why`.
fn assert_sim_a_ran_and_sim_b_is(stderr: &str, why: &str) {
    let summary = &stderr[stderr.find("POD ").expect("a summary table")..];
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("sim-b/*") && l.contains(why)),
        "{summary}"
    );
    assert_eq!(
        summary.lines().filter(|l| l.contains("exited 0")).count(),
        3,
        "sim-a's pods ran: {summary}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_stalls_holds_back_none_of_the_others_and_is_given_up_at_the_timeout() {
    let mut run = with_sim_b_stalled("fleet-stalled", &["--timeout", "12s"]).await;
    // sim-a's pods ran while sim-b was still being waited for.
    for (line, at) in &run.first_lines {
        assert!(
            *at < std::time::Duration::from_secs(11),
            "{line} came {at:?} after the start, not before sim-b's 12 s timeout"
        );
    }
    let (stderr, status) = run.finish().await;
    assert!(
        run.started.elapsed() < std::time::Duration::from_secs(40),
        "the stalled cluster is not waited for past --timeout: {:?}",
        run.started.elapsed()
    );
    assert_eq!(status.code(), Some(123), "{stderr}");
    assert_sim_a_ran_and_sim_b_is(&stderr, "timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_while_a_cluster_stalls_ends_the_run_with_that_cluster_said() {
    let mut run = with_sim_b_stalled("fleet-ctrl-c", &[]).await;
    let interrupted = std::time::Instant::now();
    let pid = nix::unistd::Pid::from_raw(run.child.id().expect("running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("signalled");
    let (stderr, status) = run.finish().await;
    assert!(
        interrupted.elapsed() < std::time::Duration::from_secs(10),
        "ctrl-c does not wait for the stalled cluster: {:?}",
        interrupted.elapsed()
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_sim_a_ran_and_sim_b_is(&stderr, "interrupted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_contexts_asks_each_api_server_once_through_the_current_context() {
    // The simulator's kubeconfig: sim (current), sim-viewer and sim-dev,
    // three users of one API server.
    let f = support::DebugFixture::new(0).await;
    let out = debuggers(&f.kubeconfig, &["--all-contexts", "-A"]).await;
    let (table, said) = (support::stdout(&out), support::stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{said}");
    for other in ["sim-viewer", "sim-dev"] {
        assert!(
            said.contains(&format!(
                "--all-contexts: {other} reaches the same API server as sim, which is asked instead."
            )),
            "{said}"
        );
        assert!(!table.contains(other), "{table}");
    }
    // One cluster: listed as `--context sim` lists it, each debugger once.
    assert!(table.starts_with("NAMESPACE"), "{table}");
    assert_eq!(table.matches("debugger-p2n6v").count(), 1, "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_contexts_of_one_api_server_are_refused_before_anything_is_sent() {
    let f = support::DebugFixture::new(0).await;
    let out = debug_storefronts(&f.kubeconfig, "sim,sim-viewer", &["--", "true"]).await;
    let said = support::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--context names sim and sim-viewer, which reach the same API server"),
        "{said}"
    );
    let client = support::client(&f.sim, "sim").await;
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::namespaced(client, "shop");
    let params = kube::api::ListParams::default().labels(SELECTOR);
    let storefronts = pods.list(&params).await.expect("the storefront pods").items;
    assert_eq!(storefronts.len(), STOREFRONT.len());
    for pod in storefronts {
        assert!(
            pod.spec.and_then(|s| s.ephemeral_containers).is_none(),
            "nothing was added"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_a_cluster_stalls_still_prints_the_summary() {
    let mut run = with_sim_b_stalled("fleet-sigterm", &[]).await;
    let signalled = std::time::Instant::now();
    let pid = nix::unistd::Pid::from_raw(run.child.id().expect("running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("signalled");
    let (stderr, status) = run.finish().await;
    assert!(
        signalled.elapsed() < std::time::Duration::from_secs(10),
        "SIGTERM does not wait for the stalled cluster: {:?}",
        signalled.elapsed()
    );
    assert_eq!(status.code(), Some(143), "{stderr}");
    let summary = &stderr[stderr.find("POD ").expect("a summary table")..];
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("sim-b/*") && l.contains("interrupted: Stopped (SIGTERM)")),
        "{summary}"
    );
    // sim-a's pods each have their row, ended or left running.
    assert_eq!(
        summary
            .lines()
            .filter(|l| l.starts_with("sim-a/shop/"))
            .count(),
        3,
        "{summary}"
    );
}

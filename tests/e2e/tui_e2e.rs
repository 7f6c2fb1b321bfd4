//! The real `podbay` binary in a PTY against the simulator: type keys, read
//! the screen, as a person would.

use crate::support;

use support::{
    PodbayScreen, args, exits_cleanly, kubeconfig, launch_on_redis, shell_pid, start_sim,
    table_rows,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browse_filter_open_switch_namespace_and_quit() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "browse");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 140, 40);

    screen
        .wait_for("pods to appear", |t| {
            t.contains("redis-0")
                && t.contains("storefront-7d9c8b6f4-x2k9p")
                && t.contains("● live")
        })
        .await;
    let text = screen.text();
    assert!(
        text.contains("CrashLoopBackOff") && text.contains("17 ("),
        "kubectl-style STATUS and RESTARTS:\n{text}"
    );
    assert!(text.contains("ns all"));

    // Filter: only matching rows remain.
    screen.keys("/redis").await;
    screen
        .wait_for("the filter to apply", |t| t.contains("filter redis"))
        .await;
    let rows = table_rows(&screen.text());
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.contains("redis")),
        "only matches remain: {rows:#?}"
    );
    screen.raw(b"\r").await;

    // Open the pod: its containers and the live state.
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| {
            t.contains("containers") && t.contains("init-config") && t.contains("redis:7.4")
        })
        .await;
    assert!(screen.text().contains("shop/redis-0"));
    screen.raw(b"\x1b").await;
    screen
        .wait_for("the list again", |t| t.contains("NAMESPACE"))
        .await;
    screen.raw(b"\x1b").await;
    screen
        .wait_for("the filter cleared", |t| {
            !t.contains("filter redis") && t.contains("storefront")
        })
        .await;

    // :ns shop switches namespace; only shop pods remain.
    screen.keys(":ns shop\r").await;
    screen
        .wait_for("namespace shop", |t| {
            t.contains("ns shop") && t.contains("cart-5f6d7c9b8-h2j4k") && t.contains("● live")
        })
        .await;
    let text = screen.text();
    assert!(
        !text.contains("payments-api") && !text.contains("NAMESPACE"),
        "only shop, no namespace column:\n{text}"
    );

    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// What an SRE opens a crash-looping pod for: how its last run ended, and
/// the Events that say what the kubelet is doing about it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_looping_pod_shows_how_its_last_run_ended_and_its_back_offs() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "crashloop");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "payments"]), 140, 40);
    screen
        .wait_for("the payments pods", |t| {
            t.contains("ledger-worker") && t.contains("● live")
        })
        .await;
    screen.keys("/ledger\r").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view with the worker in full", |t| {
            t.contains("last run  Terminated Error (exit 1)")
                && t.contains(
                    "state     CrashLoopBackOff: back-off 5m0s restarting failed container=worker",
                )
                && t.contains("Back-off restarting failed container worker in pod")
        })
        .await;
    let text = screen.text();
    // The event's message wraps in full; its count ends it.
    let mut rows = text.lines().skip_while(|l| !l.contains("Warning BackOff"));
    let first = rows.next().unwrap_or_default();
    // Its continuation rows start under the message column.
    let rest = rows.take_while(|l| l.starts_with("          ") && !l.trim().is_empty());
    let backoff: String = std::iter::once(first)
        .chain(rest)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        backoff.trim_end().ends_with("×68")
            && backoff.contains("ledger-worker-7f9c6d8b5-w9x8v_payments"),
        "the whole message and its count show:\n{text}"
    );
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_changes_appear_without_a_keypress() {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, Patch, PatchParams};
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "live");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 30);
    screen
        .wait_for("shop pods", |t| t.contains("redis-0"))
        .await;
    assert!(!screen.text().contains('◆'));
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "shop");
    let patch = serde_json::json!({"spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox", "stdin": true, "tty": true}]}});
    pods.patch_ephemeral_containers("redis-0", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap();
    screen
        .wait_for("the debug-container marker", |t| {
            t.lines().any(|l| l.contains("redis-0") && l.contains("◆1"))
        })
        .await;
    pods.delete(
        "cart-5f6d7c9b8-h2j4k",
        &kube::api::DeleteParams {
            grace_period_seconds: Some(0),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    screen
        .wait_for("the deleted pod to go", |t| {
            !t.contains("cart-5f6d7c9b8-h2j4k")
        })
        .await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restricted_user_sees_its_namespace_and_the_missing_permission() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "restricted");
    let mut screen = PodbayScreen::spawn(&args(&config, &["--context", "sim-dev", "-A"]), 160, 30);
    screen
        .wait_for("the fallback", |t| {
            t.contains("redis-0") && t.contains("You may not list pods at cluster scope")
        })
        .await;
    let text = screen.text();
    assert!(!text.contains("payments-api"), "{text}");
    assert!(text.contains("ns shop"));
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_setup_gives_one_sentence_and_a_nonzero_exit() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "bad");
    let run_with_config_home = |extra: Vec<String>, home: &'static str| async move {
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_podbay"))
            .args(extra)
            .env("XDG_CONFIG_HOME", std::env::temp_dir().join(home))
            .output()
            .await
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        )
    };
    let run = |extra: Vec<String>| run_with_config_home(extra, "podbay-e2e-noconfig");
    let (code, err) = run(args(&config, &["--context", "nope"])).await;
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        "podbay: The kubeconfig has no context named \"nope\". Known contexts: sim, sim-viewer, sim-dev."
    );

    let (code, err) = run(args(std::path::Path::new("/nonexistent/kubeconfig"), &[])).await;
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("podbay: Cannot read the kubeconfig /nonexistent/kubeconfig"),
        "{err}"
    );

    // A malformed kubeconfig.
    let garbled = config.with_extension("garbled");
    std::fs::write(&garbled, "apiVersion: v1\nclusters: [unclosed\n").unwrap();
    let (code, err) = run(args(&garbled, &[])).await;
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("podbay: Cannot read the kubeconfig") && err.lines().count() == 1,
        "{err}"
    );

    // An expired (here: unknown) token: the server answers 401.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    for user in doc["users"].as_array_mut().unwrap() {
        user["user"]["token"] = "expired-token".into();
    }
    let expired = config.with_extension("expired");
    std::fs::write(&expired, doc.to_string()).unwrap();
    let (code, err) = run(args(&expired, &[])).await;
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("podbay: The cluster rejected your credentials (401 Unauthorized)"),
        "{err}"
    );
    assert!(!err.contains("expired-token"), "no token in errors: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    // A config file with a mistake names the file and the line.
    let home = std::env::temp_dir().join("podbay-e2e-badconfig");
    std::fs::create_dir_all(home.join("podbay")).unwrap();
    std::fs::write(
        home.join("podbay").join("config.toml"),
        "[terminal]\nscrollback = \"lots\"\n",
    )
    .unwrap();
    let (code, err) = run_with_config_home(args(&config, &[]), "podbay-e2e-badconfig").await;
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("podbay: Config file ") && err.contains("line 2"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    sim.stop_server();
    let (code, err) = run(args(&config, &[])).await;
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("podbay: Cannot reach the API server"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let (code, err) = run(args(&config, &["--theme", "solarized"])).await;
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("podbay: No theme named \"solarized\""),
        "{err}"
    );
    for file in [config, garbled, expired] {
        let _ = std::fs::remove_file(file);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_a_debug_container_work_in_it_leave_and_reattach() {
    let sim = start_sim(300).await;
    let config = kubeconfig(&sim, "debug");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 36);
    screen
        .wait_for("shop pods", |t| t.contains("redis-0"))
        .await;
    screen.keys("/redis-0\r").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| {
            t.contains("init-config") && t.contains("redis:7.4")
        })
        .await;

    // The launcher targets the selected container; give it a command that
    // prints before anyone can attach, then becomes a shell.
    screen.keys("jd").await;
    screen
        .wait_for("the launcher", |t| {
            t.contains("Debug container for shop/redis-0")
                && t.contains("\"targetContainerName\":\"redis\"")
        })
        .await;
    screen.keys("\t\t").await;
    screen
        .keys("sh -c 'echo printed-before-attach; exec sh'")
        .await;
    screen
        .wait_for("the preview to follow the form", |t| {
            t.contains("printed-before-attach")
        })
        .await;
    screen.raw(b"\r").await;

    // Live status, then a prompt; what it printed early is shown first.
    screen
        .wait_for("the live status", |t| {
            t.contains("ContainerCreating") || t.contains("attached")
        })
        .await;
    screen
        .wait_for("an attached shell", |t| {
            t.contains("● attached") && t.contains("printed-before-attach")
        })
        .await;
    screen.keys("echo e2e-$((6*7)) $(stty size)\r").await;
    screen
        .wait_for("the command's output at the pane's size", |t| {
            t.contains("e2e-42 31 118")
        })
        .await;

    // Leave: back to the pod view, where the debug container shows running.
    screen.raw(b"\x02").await;
    screen.keys("d").await;
    screen
        .wait_for("the pod view with the debug container", |t| {
            t.contains("debug ") && t.contains("Running") && t.contains("debugger-")
        })
        .await;

    // Attach again: the container already has a terminal in the workspace,
    // so a second pane shares it. End the shell: the exit code is shown.
    screen.keys("Ga").await;
    screen
        .wait_for("the shared pane", |t| {
            // Two 60-column panes: the titles keep their flags and drop the
            // namespace before cutting the name.
            t.matches("debug redis-0/debugger-").count() == 2 && t.contains("shared ×2")
        })
        .await;
    screen.keys("echo still-here-$$\r").await;
    screen
        .wait_for("the same shell", |t| t.contains("still-here-"))
        .await;
    screen.keys("exit 3\r").await;
    screen
        .wait_for("the exit code", |t| {
            t.contains("the container exited with code 3 (Error)")
        })
        .await;
    screen.raw(b"\x1b").await;
    screen
        .wait_for("the pod view", |t| t.contains("Terminated Error (exit 3)"))
        .await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_gets_the_permission_sentence_and_keeps_the_form() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "viewer");
    let mut screen = PodbayScreen::spawn(
        &args(&config, &["--context", "sim-viewer", "-n", "shop"]),
        140,
        36,
    );
    launch_on_redis(&screen).await;
    screen
        .wait_for("the 403 sentence in the form", |t| {
            t.contains("You may not patch pods/ephemeralcontainers in namespace shop")
                && t.contains("Debug container for shop/redis-0")
        })
        .await;
    screen.raw(b"\x1b").await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_sighup_and_sigquit_restore_the_terminal_and_exit_128_plus_the_signal() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "signals");
    for signal in [
        nix::sys::signal::Signal::SIGTERM,
        nix::sys::signal::Signal::SIGHUP,
        nix::sys::signal::Signal::SIGQUIT,
    ] {
        let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 100, 30);
        screen.wait_for("the list", |t| t.contains("redis-0")).await;
        screen.with_screen(|s| {
            assert!(
                s.alternate_screen() && s.hide_cursor(),
                "full-screen while running"
            )
        });
        assert!(!screen.master.is_cooked().unwrap(), "raw while running");
        let pid = nix::unistd::Pid::from_raw(screen.child.id().unwrap() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        let status = tokio::time::timeout(std::time::Duration::from_secs(10), screen.child.wait())
            .await
            .expect("podbay exits on the signal")
            .unwrap();
        assert_eq!(status.code(), Some(128 + signal as i32), "{signal}");
        screen.output_ended().await;
        support::assert_terminal_restored(&screen);
    }
    let _ = std::fs::remove_file(config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_stream_shows_the_disconnect_and_r_reattaches_to_the_same_process() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "cut");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 36);
    launch_on_redis(&screen).await;
    screen
        .wait_for("an attached shell", |t| t.contains("● attached"))
        .await;
    let first = shell_pid(&screen, "first-").await;

    sim.kill_streams();
    screen
        .wait_for("the disconnect line", |t| {
            t.contains("disconnected: the stream was cut — r to reattach")
        })
        .await;
    screen.keys("r").await;
    screen
        .wait_for("attached again", |t| t.contains("● attached"))
        .await;
    assert_eq!(
        shell_pid(&screen, "second-").await,
        first,
        "the same shell process answered"
    );

    screen.raw(b"\x02").await;
    screen.keys("d").await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// The pod table's (NAME, STATUS) cells, read after READY (`n/m`).
fn names_and_statuses(text: &str) -> Vec<(String, String)> {
    table_rows(text)
        .iter()
        .filter_map(|row| {
            let words: Vec<&str> = row.split_whitespace().collect();
            let ready = words.iter().position(|w| {
                w.split_once('/')
                    .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
            })?;
            Some((
                words[ready - 1].to_string(),
                words.get(ready + 1)?.to_string(),
            ))
        })
        .collect()
}

/// At 80×24 STATUS is never cut and a cut NAME still names one pod: every
/// row says what the same pod's row says at 250×60, where nothing is cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_80x24_statuses_stay_whole_and_cut_names_still_name_one_pod() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "narrow");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 80, 24);
    // The first page (shop's pods are further down).
    screen
        .wait_for("pods to appear", |t| {
            t.contains("coredns-") && t.contains("● live")
        })
        .await;
    let narrow = names_and_statuses(&screen.text());
    screen.resize(250, 60);
    // The whole wide frame: its header can be on screen before its rows.
    screen
        .wait_for("the wide table", |t| {
            t.contains("NODE") && names_and_statuses(t).len() >= narrow.len()
        })
        .await;
    let wide = names_and_statuses(&screen.text());
    assert!(narrow.len() >= 10, "a page of rows at 80×24: {narrow:#?}");
    for (name, status) in &narrow {
        let matches: Vec<&(String, String)> = wide
            .iter()
            .filter(|(full, _)| match name.split_once('…') {
                Some((head, tail)) => full.starts_with(head) && full.ends_with(tail),
                None => full == name,
            })
            .collect();
        assert_eq!(
            matches.len(),
            1,
            "{name:?} names exactly one pod of {wide:#?}"
        );
        assert_eq!(
            &matches[0].1, status,
            "{name}'s STATUS at 80×24 is the whole STATUS"
        );
    }
    assert!(
        narrow.iter().any(|(_, s)| s == "CrashLoopBackOff"),
        "the long statuses are on the first page: {narrow:#?}"
    );
    screen.quit().await;
    exits_cleanly(&mut screen).await;
}

/// The crash loop's reason is one key away: `l` shows the last crash,
/// `p` the run before; a completed job's `l` shows its output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_loops_last_run_and_a_completed_jobs_output_are_readable() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "runs");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 120, 36);
    screen
        .wait_for("the list", |t| t.contains("ledger-worker"))
        .await;
    screen.keys("/ledger-worker\r").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| t.contains("CrashLoopBackOff"))
        .await;
    screen.keys("p").await;
    screen
        .wait_for("the previous run's crash", |t| {
            t.contains("previous log payments/ledger-worker")
                && t.contains("FATAL ledger-worker: cannot reach the database")
                && t.contains("end of worker's previous run's log")
        })
        .await;
    screen.raw(b"\x02d").await;
    screen.raw(b"\x1b").await;
    screen.raw(b"\x1b").await;
    screen.keys("/nightly-report\r").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the completed pod's view", |t| t.contains("Completed"))
        .await;
    screen.keys("l").await;
    screen
        .wait_for("the job's output", |t| {
            t.contains("INFO nightly-report: done") && t.contains("end of report's log")
        })
        .await;
    screen.raw(b"\x02d").await;
    screen.keys("q").await;
    let _ = screen.child.wait().await;
    let _ = std::fs::remove_file(config);
}

/// A log pane follows: a line the container writes after the pane opened
/// appears in it, and nothing is shown twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_pane_follows_its_container() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "follow");
    let screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 36);
    screen.wait_for("the list", |t| t.contains("redis-0")).await;
    screen.keys("/redis-0\r").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| t.contains("init-config"))
        .await;
    screen.keys("jl").await;
    let lines = |t: &str| t.matches("redis/redis handled request").count();
    screen
        .wait_for("the first line", |t| {
            t.contains("log shop/redis-0/redis") && lines(t) >= 1
        })
        .await;
    let first = lines(&screen.text());
    // The demo's containers write a line every five seconds.
    screen
        .wait_for("a line written after the pane opened", |t| lines(t) > first)
        .await;
    let text = screen.text();
    let mut ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split("id=").nth(1))
        .map(|rest| rest.split_whitespace().next().unwrap_or_default())
        .collect();
    let all = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all, "no line twice:\n{text}");
    assert!(
        !text.contains("end of redis's log"),
        "still following:\n{text}"
    );
}

/// `/status:crash` keeps the pods whose STATUS matches, and only those.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_filter_keeps_the_pods_in_trouble() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "status");
    let screen = PodbayScreen::spawn(&args(&config, &["-A"]), 120, 36);
    screen
        .wait_for("the list", |t| t.contains("ledger-worker"))
        .await;
    screen.keys("/status:crash").await;
    screen
        .wait_for("only the crash loop", |t| {
            let rows = support::table_rows(t);
            rows.len() == 1
                && rows[0].contains("ledger-worker")
                && rows[0].contains("CrashLoopBackOff")
        })
        .await;
    screen.raw(b"\x1b").await;
    screen.keys("/status:pending").await;
    screen
        .wait_for("the pending pods", |t| {
            let rows = support::table_rows(t);
            !rows.is_empty()
                && rows
                    .iter()
                    .all(|r| r.contains("Pending") || r.contains("Init:"))
        })
        .await;
}

/// `D` describes the crash-looping pod as kubectl does, its container
/// section found with `/`; `y` shows it as YAML. At 80×24, where users
/// live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_and_yaml_read_the_crash_looping_pod_at_80x24() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "describe");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 80, 24);
    screen.wait_for("the list", |t| t.contains("w9x8v")).await;
    screen.keys("/ledger-worker\r").await;
    screen.keys("D").await;
    screen
        .wait_for("the description's top", |t| {
            t.contains("describe pod payments/ledger-worker")
                && t.contains("Namespace:        payments")
                && t.contains("Controlled By:")
        })
        .await;
    screen.keys("/Last State\r").await;
    screen
        .wait_for("the container section", |t| {
            t.contains("Last State:     Terminated")
                && t.contains("Exit Code:    1")
                && t.contains("Restart Count:  17")
        })
        .await;
    screen.keys("y").await;
    screen
        .wait_for("the YAML's top", |t| {
            t.contains("yaml pod payments/ledger-worker")
                && t.contains("apiVersion: v1")
                && t.contains("kind: Pod")
        })
        .await;
    screen.keys("/restartCount\r").await;
    screen
        .wait_for("the status in YAML", |t| t.contains("restartCount: 17"))
        .await;
    // esc: back to the list the view was opened from.
    screen.raw(b"\x1b").await;
    screen
        .wait_for("the list again", |t| {
            t.contains("READY") && t.contains("RESTARTS")
        })
        .await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// `E`: every namespace's events, newest first; a scheduling message
/// longer than the 80-column screen is on it in full, and `enter` reads
/// the selected event whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_events_view_shows_long_messages_in_full_at_80x24() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "events");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 80, 24);
    screen
        .wait_for("the list", |t| t.contains("search-gpu"))
        .await;
    screen.keys("E").await;
    screen
        .wait_for("the events", |t| {
            t.contains("events in all") && t.contains("FailedScheduling")
        })
        .await;
    screen.keys("/gpu").await;
    screen.raw(b"\r").await;
    let message = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.";
    assert!(message.len() > 80);
    screen
        .wait_for("the whole message, wrapped", |t| {
            let joined: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
            joined.contains(message)
        })
        .await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the event read in full", |t| {
            t.contains("Reason:     FailedScheduling")
                && t.contains("Object:     search/pod/search-gpu")
        })
        .await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// `R` sorts the list by restarts, most first; `R` again, fewest first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_sorts_by_restarts_both_ways() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "sort");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 120, 36);
    screen
        .wait_for("the list", |t| t.contains("ledger-worker"))
        .await;
    let restarts = |text: &str| -> Vec<u32> {
        let header = text
            .lines()
            .find(|l| l.contains("RESTARTS"))
            .unwrap_or_default();
        let at = header
            .chars()
            .collect::<Vec<_>>()
            .windows(8)
            .position(|w| w.iter().collect::<String>() == "RESTARTS")
            .unwrap_or(0);
        table_rows(text)
            .iter()
            .filter_map(|row| {
                let cell: String = row
                    .chars()
                    .skip(at)
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                cell.parse().ok()
            })
            .collect()
    };
    screen.keys("R").await;
    screen
        .wait_for("sorted, most restarts first", |t| {
            let column = restarts(t);
            t.contains("RESTARTS▼")
                && column.len() > 5
                && column[0] >= 17
                && column.windows(2).all(|w| w[0] >= w[1])
        })
        .await;
    screen.keys("R").await;
    screen
        .wait_for("sorted, fewest first", |t| {
            let column = restarts(t);
            t.contains("RESTARTS▲")
                && column.len() > 5
                && column.windows(2).all(|w| w[0] <= w[1])
                && column.first() < column.last()
        })
        .await;
    screen.quit().await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

/// A refusal is not an empty namespace: the table says what is missing and
/// the header says the list is unavailable, not `0 pods`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_the_user_may_not_list_is_said_refused_not_empty() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "refused-ns");
    let screen = PodbayScreen::spawn(&args(&config, &["--context", "sim-dev"]), 100, 24);
    screen
        .wait_for("its namespace", |t| t.contains("redis-0"))
        .await;
    screen.keys(":ns payments\r").await;
    screen
        .wait_for("the refusal", |t| {
            t.contains("pods unavailable") && t.contains("You may not list pods in namespace")
        })
        .await;
    let text = screen.text();
    assert!(!text.contains("No pods in namespace payments"), "{text}");
    assert!(!text.contains("0 pods"), "{text}");
    screen.quit().await;
    let _ = std::fs::remove_file(config);
}

/// With a list's later pages held back, its first rows are on screen, the
/// header says how far the list is, and a pod can be found and opened;
/// once the pages come, the list is whole. (No timing: the simulator
/// holds the pages.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_rows_can_be_filtered_and_opened_before_the_list_is_whole() {
    let sim = support::start_sim_with_pods(1500).await;
    sim.hold_list_pages(true);
    let config = kubeconfig(&sim, "paged");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-A"]), 120, 30);
    screen
        .wait_for("the first page and how far the list is", |t| {
            t.contains("loading 100 / ~1 500 pods") && t.contains("svc-000-")
        })
        .await;
    screen.keys("/svc-004").await;
    screen
        .wait_for("the filter over the first page", |t| {
            // Fuzzy: the best matches first.
            t.contains("filter svc-004")
                && support::table_rows(t)
                    .first()
                    .is_some_and(|r| r.contains("svc-004-"))
        })
        .await;
    screen.raw(b"\r").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod opened", |t| {
            t.contains(" containers ") && t.contains("ghcr.io/podbay/app:1.0")
        })
        .await;
    assert!(screen.text().contains("loading 100 / ~1 500"), "still held");
    sim.hold_list_pages(false);
    screen.raw(b"\x1b").await;
    screen
        .wait_for("the whole list", |t| {
            t.contains("/1500 pods") && !t.contains("loading")
        })
        .await;
    screen.quit().await;
    support::exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

//! `podbay debuggers` (the real binary against the simulator): every debug
//! container left in the pods, with its state and who added it — podbay's
//! own (field manager `podbay`) beside kubectl's — and kubectl reading the
//! same states.

use std::time::Duration;

use crate::support;

use support::DebugFixture as Fixture;

/// `podbay debuggers ARGS…`, piped; its output.
async fn debuggers(f: &Fixture, args: &[&str]) -> std::process::Output {
    let home = support::tempdir::temp_home("debuggers");
    let run = support::podbay_command("debuggers", &f.kubeconfig, args, home.path()).output();
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("podbay debuggers finished in time")
        .expect("podbay runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_debugger_is_listed_with_its_state_and_who_added_it() {
    let f = Fixture::new(0).await;
    let none = debuggers(&f, &["-n", "shop"]).await;
    assert_eq!(none.status.code(), Some(0), "{}", text(&none.stderr));
    assert_eq!(
        text(&none.stderr),
        "podbay: No debug containers in namespace shop.\n"
    );

    // podbay's: a command that ends (Terminated Completed).
    let ran = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target",
            "redis",
            "--",
            "true",
        ])
        .await;
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    // kubectl's: a shell left waiting for input, still running.
    let kubeconfig = f.kubeconfig.to_str().unwrap();
    let kubectl = tokio::process::Command::new("kubectl")
        .args([
            "--kubeconfig",
            kubeconfig,
            "debug",
            "-n",
            "shop",
            "redis-0",
            "--image=busybox:1.36",
            "--target=redis",
            "--container=left-behind",
            "-i",
            "--attach=false",
            "--",
            "sh",
        ])
        .output()
        .await
        .expect("kubectl runs");
    assert!(kubectl.status.success(), "{}", text(&kubectl.stderr));

    let listed = support::eventually(20, "both debuggers listed, kubectl's running", || {
        let f = &f;
        async move {
            let out = debuggers(f, &["-n", "shop", "-o", "json"]).await;
            let list: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
            let items = list.as_array()?.clone();
            let running = items
                .iter()
                .any(|d| d["name"] == "left-behind" && d["summary"] == "Running");
            (items.len() == 2 && running).then_some(items)
        }
    })
    .await;
    let ours = listed.iter().find(|d| d["name"] != "left-behind").unwrap();
    assert_eq!(ours["namespace"], "shop");
    assert_eq!(ours["pod"], "redis-0");
    assert_eq!(ours["target"], "redis");
    assert_eq!(ours["addedBy"], "podbay");
    assert_eq!(ours["byPodbay"], true);
    assert_eq!(ours["state"]["terminated"]["exitCode"], 0);
    let theirs = listed.iter().find(|d| d["name"] == "left-behind").unwrap();
    assert!(
        theirs["addedBy"]
            .as_str()
            .is_some_and(|m| m.starts_with("kubectl")),
        "{theirs}"
    );
    assert_eq!(theirs["shell"], true);
    assert!(theirs["state"]["running"]["startedAt"].is_string());

    // The table, across namespaces: NAMESPACE first; the demo's hello
    // carries three old ones and a forgotten shell.
    let table = debuggers(&f, &["-A"]).await;
    let out = text(&table.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("NAMESPACE   POD "), "{out}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("hello-6c8f9d7b5-k3l9m"))
            .count(),
        4,
        "{out}"
    );
    assert!(lines[0].ends_with("SHELL   ADDED BY"), "{out}");
    let kubectl_row = lines.iter().find(|l| l.contains("left-behind")).unwrap();
    assert!(
        kubectl_row.contains("Running") && kubectl_row.contains(" yes "),
        "{out}"
    );

    // kubectl reads the same states.
    let states = tokio::process::Command::new("kubectl")
        .args([
            "--kubeconfig",
            kubeconfig,
            "get",
            "pod",
            "-n",
            "shop",
            "redis-0",
            "-o",
            "jsonpath={range .status.ephemeralContainerStatuses[*]}{.name}={.state}{\"\\n\"}{end}",
        ])
        .output()
        .await
        .expect("kubectl runs");
    let states = text(&states.stdout);
    assert!(states.contains("left-behind={\"running\""), "{states}");

    // One pod's, through `podbay debug --list`: the same listing.
    let one = f.podbay(&["redis-0", "-n", "shop", "--list"]).await;
    let out = text(&one.stdout);
    assert!(out.starts_with("NAME ") && !out.contains("POD"), "{out}");
    assert_eq!(out.lines().count(), 3, "{out}");
}

/// `podbay debuggers stop ARGS…` in the demo's shop namespace; its output.
async fn stop(f: &Fixture, args: &[&str]) -> std::process::Output {
    let mut all = vec!["stop"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-n", "shop"]);
    debuggers(f, &all).await
}

/// The debugger's state summary and redis's restart count, as listed.
async fn states(f: &Fixture) -> (serde_json::Value, i64) {
    use k8s_openapi::api::core::v1::Pod;
    let out = debuggers(f, &["-n", "shop", "-o", "json"]).await;
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let pods: kube::Api<Pod> = kube::Api::namespaced(support::client(&f.sim, "sim").await, "shop");
    let redis = pods.get("redis-0").await.unwrap();
    let status = redis.status.unwrap();
    let restarts = status
        .container_statuses
        .unwrap_or_default()
        .iter()
        .find(|s| s.name == "redis")
        .map(|s| i64::from(s.restart_count))
        .unwrap_or(-1);
    (list, restarts)
}

fn summary(list: &serde_json::Value, name: &str) -> String {
    list.as_array()
        .into_iter()
        .flatten()
        .find(|d| d["name"] == name)
        .map(|d| d["summary"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_ends_the_debuggers_own_process_and_never_the_target() {
    if !support::namespaces_or_skip("stopping a debugger that shares a target's processes") {
        return;
    }
    let f = Fixture::new(0).await;
    for (name, command) in [("sleeper", "sleep 600"), ("shell", "sh")] {
        let mut args = vec![
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target",
            "redis",
            "--name",
            name,
            "--no-attach",
        ];
        if name == "shell" {
            args.push("-i");
        }
        args.push("--");
        args.extend(command.split(' '));
        let out = f.podbay(&args).await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    // One without a target: the first process of its own PID namespace.
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--name",
            "alone",
            "--no-attach",
            "--",
            "sleep",
            "600",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (before, restarts) = support::eventually(20, "three running debuggers", || {
        let f = &f;
        async move {
            let (list, restarts) = states(f).await;
            ["sleeper", "shell", "alone"]
                .iter()
                .all(|n| summary(&list, n) == "Running")
                .then_some((list, restarts))
        }
    })
    .await;
    assert!(restarts >= 0, "{before}");

    let stopped = stop(&f, &["redis-0", "-c", "sleeper,shell"]).await;
    assert_eq!(stopped.status.code(), Some(0), "{}", text(&stopped.stderr));
    let said = text(&stopped.stderr);
    assert!(
        said.contains("stopped debug container sleeper in pod shop/redis-0: its process"),
        "{said}"
    );
    assert!(
        said.contains("stopped debug container shell in pod shop/redis-0"),
        "{said}"
    );
    let (after, restarts_after) = states(&f).await;
    assert!(
        summary(&after, "sleeper").starts_with("Terminated"),
        "{after}"
    );
    assert!(
        summary(&after, "shell").starts_with("Terminated"),
        "{after}"
    );
    assert_eq!(summary(&after, "alone"), "Running");
    assert_eq!(restarts_after, restarts, "the target was not restarted");
    let exec = tokio::process::Command::new("kubectl")
        .args([
            "--kubeconfig",
            f.kubeconfig.to_str().unwrap(),
            "exec",
            "-n",
            "shop",
            "redis-0",
            "-c",
            "redis",
            "--",
            "sh",
            "-c",
            "echo still-here",
        ])
        .output()
        .await
        .expect("kubectl runs");
    assert_eq!(text(&exec.stdout), "still-here\n", "{}", text(&exec.stderr));

    // A sleep alone in its PID namespace takes no signal from inside: said.
    let refused = stop(&f, &["redis-0", "-c", "alone"]).await;
    assert_eq!(refused.status.code(), Some(69), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr)
            .contains("cannot be stopped: it is the first process of a PID namespace of its own"),
        "{}",
        text(&refused.stderr)
    );
    // A shell alone in its PID namespace is told to exit through its input.
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--name",
            "lone-shell",
            "--no-attach",
            "-i",
            "--",
            "sh",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    support::eventually(20, "the lone shell running", || {
        let f = &f;
        async move { (summary(&states(f).await.0, "lone-shell") == "Running").then_some(()) }
    })
    .await;
    let told = stop(&f, &["redis-0", "-c", "lone-shell"]).await;
    assert_eq!(told.status.code(), Some(0), "{}", text(&told.stderr));
    assert!(
        text(&told.stderr).contains("its shell was told to exit"),
        "{}",
        text(&told.stderr)
    );
    assert_eq!(
        summary(&states(&f).await.0, "lone-shell"),
        "Terminated Completed (exit 0)"
    );

    // Stopping one that has ended says so; an unknown name is named.
    let again = stop(&f, &["redis-0", "-c", "sleeper"]).await;
    assert_eq!(again.status.code(), Some(0));
    assert!(text(&again.stderr).contains("had ended already"));
    let unknown = stop(&f, &["redis-0", "-c", "nope"]).await;
    assert_eq!(unknown.status.code(), Some(66), "{}", text(&unknown.stderr));
    assert!(text(&unknown.stderr).contains("its debug containers are: "));
}

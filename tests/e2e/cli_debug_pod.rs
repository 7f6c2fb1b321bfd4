//! `podbay debug node/NAME` and `podbay debug POD --copy-to NAME` (the real
//! binary, piped, without -t) against the simulator: the pod podbay
//! creates, what it sees, and that it is gone afterwards.

use crate::support;

use std::process::Output;

use k8s_openapi::api::core::v1::Pod;
use support::DebugFixture as Fixture;
use support::client;

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs podbay debug with `script` as its piped standard input.
async fn piped(f: &Fixture, args: &[&str], script: &str) -> Output {
    support::podbay_debug_piped(&f.kubeconfig, args, script).await
}

async fn pods(f: &Fixture, namespace: &str) -> Vec<Pod> {
    let api: kube::Api<Pod> = kube::Api::namespaced(client(&f.sim, "sim").await, namespace);
    api.list(&Default::default()).await.expect("listed").items
}

/// The pods of `namespace` not being deleted (a deleted pod may linger
/// through its grace period).
async fn live_names(f: &Fixture, namespace: &str) -> Vec<String> {
    pods(f, namespace)
        .await
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.metadata.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_shell_sees_that_nodes_processes_and_root_and_is_deleted_after() {
    let f = Fixture::new(0).await;
    // redis runs on node-b1, payments-api's qv8lm replica on node-a1.
    // No `exit`: the piped input's end is the shell's (stdinOnce), and it
    // exits with its last command's code.
    let script = "ps -e -o comm | grep -c redis-server; ps -e -o comm | grep -c payments-api; ls /host/var/log/pods; chroot /host cat /etc/hostname; sh -c 'exit 7'\n";
    let out = piped(
        &f,
        &[
            "node/node-b1",
            "-i",
            "--profile",
            "sysadmin",
            "--image",
            "busybox:1.36",
            "--",
            "sh",
        ],
        script,
    )
    .await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(7), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"1"),
        "node-b1's redis is there: {stdout}"
    );
    assert_eq!(
        lines.get(1),
        Some(&"0"),
        "node-a1's payments-api is not: {stdout}"
    );
    assert!(stdout.contains("shop_redis-0_"), "{stdout}");
    assert!(!stdout.contains("kube-apiserver"), "{stdout}");
    assert!(stdout.contains("node-b1\n"), "{stdout}");
    let pod = stderr
        .split_whitespace()
        .find_map(|w| w.strip_prefix("default/node-debugger-node-b1-"))
        .map(|suffix| format!("node-debugger-node-b1-{}", suffix.trim_end_matches(';')))
        .unwrap_or_else(|| panic!("the pod is named: {stderr}"));
    assert!(
        stderr.contains(&format!("deleted node debug pod default/{pod}")),
        "{stderr}"
    );
    assert!(
        !live_names(&f, "default").await.contains(&pod),
        "{pod} is gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_debugging_refusals_are_one_sentence_each() {
    let f = Fixture::new(0).await;
    let out = piped(&f, &["node/node-zz", "--", "true"], "").await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(66), "{stderr}");
    assert!(stderr.contains("Node node-zz not found"), "{stderr}");

    let out = piped(&f, &["node/node-a1", "-n", "payments", "--", "true"], "").await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(77), "{stderr}");
    assert!(
        stderr.contains("pod-security.kubernetes.io/enforce=baseline")
            && stderr.contains("host namespaces"),
        "{stderr}"
    );
    assert!(
        !live_names(&f, "payments")
            .await
            .iter()
            .any(|n| n.starts_with("node-debugger")),
        "nothing was created"
    );

    let out = piped(&f, &["nodes/", "--", "true"], "").await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a usage error: {:?}",
        text(&out)
    );
    assert!(text(&out).1.contains("node/NAME"), "{:?}", text(&out));

    // A flag that does nothing for a node is a usage error, not ignored.
    let out = piped(&f, &["node/node-b1", "--list"], "").await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--list is for a pod's debug containers")
            && stderr.contains("remove --list"),
        "{stderr}"
    );

    // No -i and no terminal: the shell has no input and ends at once, as
    // on a kubelet (it hung here on a prompt nobody saw); said, and the
    // pod deleted.
    let out = piped(&f, &["node/node-b1", "--image", "busybox:1.36"], "").await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("no -i: the container gets no input"),
        "{stderr}"
    );
    assert!(
        stderr.contains("deleted node debug pod default/node-debugger-node-b1-"),
        "{stderr}"
    );
}

/// The crash-looping ledger-worker, held: its worker runs a shell instead
/// of the app (from the app's debug image, as distroless needs), which sees
/// the app's files; the copy has no labels a Service would select, and is
/// gone after. The same with the distroless image itself says why it fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_copy_of_a_crash_looping_pod_sees_its_files_and_goes_away() {
    let f = Fixture::new(0).await;
    let ledger = "ledger-worker-7f9c6d8b5-w9x8v";
    let labels = std::sync::Arc::new(std::sync::Mutex::new(None));
    let watcher = {
        let (labels, client) = (labels.clone(), client(&f.sim, "sim").await);
        tokio::spawn(async move {
            let api: kube::Api<Pod> = kube::Api::namespaced(client, "payments");
            loop {
                if let Ok(pod) = api.get("ledger-hold").await {
                    *labels.lock().unwrap() = Some(pod.metadata.labels.unwrap_or_default());
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        })
    };
    let out = piped(
        &f,
        &[
            ledger,
            "-n",
            "payments",
            "--copy-to",
            "ledger-hold",
            "-c",
            "worker",
            "--set-image",
            "worker=ghcr.io/podbay/ledger:1.0.4-debug",
            "-i",
            "--",
            "sh",
        ],
        // No `exit`: the shell exits at the end of the piped input.
        "cat /etc/ledger/config.yaml | head -1; ls /app\n",
    )
    .await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // No --profile: the one payments admits is taken and said, as for a
    // debug container (it exited 77).
    assert!(
        stderr.contains(r#"payments enforces Pod Security "baseline": using --profile=baseline instead of general"#),
        "{stderr}"
    );
    assert!(
        stdout.contains("service: ledger") && stdout.contains("ledger\n"),
        "{stdout}"
    );
    watcher.await.expect("the copy was seen");
    let seen = labels.lock().unwrap().clone().expect("labels read");
    assert!(seen.is_empty(), "no label a Service selects: {seen:?}");
    assert!(
        !live_names(&f, "payments")
            .await
            .contains(&"ledger-hold".to_string())
    );
    assert!(
        live_names(&f, "payments")
            .await
            .contains(&ledger.to_string()),
        "the original stays"
    );

    let out = piped(
        &f,
        &[
            ledger,
            "-n",
            "payments",
            "--copy-to",
            "ledger-hold2",
            "-c",
            "worker",
            "--profile",
            "baseline",
            "--",
            "sleep",
            "infinity",
        ],
        "",
    )
    .await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(72), "{stderr}");
    assert!(
        stderr.contains(r#"exec: "sleep": executable file not found"#),
        "{stderr}"
    );
    assert!(
        !live_names(&f, "payments")
            .await
            .contains(&"ledger-hold2".to_string())
    );
}

/// `--custom FILE` (YAML or JSON): kubectl's partial container merged onto
/// the debug container (its env reaches the shell, its capability is sent), and the
/// same profile refused by a baseline namespace before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_profile_is_merged_and_meets_pod_security_first() {
    let f = Fixture::new(0).await;
    let home = support::tempdir::temp_home("cli-custom");
    // In YAML, as kubectl 1.33 takes it (JSON below).
    let file = home.path().join("team.yaml");
    std::fs::write(
        &file,
        "env:\n  - name: TEAM\n    value: sre\nsecurityContext:\n  capabilities:\n    add: [NET_ADMIN]\n",
    )
    .unwrap();
    let custom = file.to_str().unwrap();
    let out = piped(
        &f,
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--profile",
            "baseline",
            "--custom",
            custom,
            "-c",
            "dbg-team",
            "--",
            "sh",
            "-c",
            "echo team=$TEAM",
        ],
        "",
    )
    .await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "team=sre", "{stderr}");
    let pod: Pod = kube::Api::namespaced(client(&f.sim, "sim").await, "shop")
        .get("redis-0")
        .await
        .unwrap();
    let sent = pod
        .spec
        .and_then(|s| s.ephemeral_containers)
        .into_iter()
        .flatten()
        .find(|c| c.name == "dbg-team")
        .expect("the debug container");
    let caps = sent
        .security_context
        .and_then(|s| s.capabilities)
        .and_then(|c| c.add);
    assert_eq!(caps, Some(vec!["NET_ADMIN".to_string()]), "sent as merged");

    let out = piped(
        &f,
        &[
            "payments-api-66b8f7d5c9-qv8lm",
            "-n",
            "payments",
            "--image",
            "busybox:1.36",
            "--custom",
            custom,
            "--",
            "true",
        ],
        "",
    )
    .await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(77), "{stderr}");
    assert!(
        stderr.contains("refuses the team (on general) profile") && stderr.contains("NET_ADMIN"),
        "{stderr}"
    );
    assert!(stderr.contains("Nothing was sent"), "{stderr}");

    std::fs::write(&file, r#"{"image": "evil"}"#).unwrap();
    let out = piped(
        &f,
        &["redis-0", "-n", "shop", "--custom", custom, "--", "true"],
        "",
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a usage error: {:?}",
        text(&out)
    );
    assert!(
        text(&out).1.contains("not modifiable via custom profile"),
        "{:?}",
        text(&out)
    );
}

/// A copy whose added container prints and ends before podbay can attach:
/// its output comes from the log, once, and its exit code is podbay's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_that_ends_before_the_attach_is_read_from_its_log() {
    let f = Fixture::new(0).await;
    for i in 0..3 {
        let name = format!("redis-quick-{i}");
        let out = piped(
            &f,
            &[
                "redis-0",
                "-n",
                "shop",
                "--copy-to",
                &name,
                "--image",
                "busybox:1.36",
                "-i",
                "--",
                "sh",
                "-c",
                "echo copy-ok; exit 4",
            ],
            "",
        )
        .await;
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
        assert_eq!(stdout, "copy-ok\n", "{stderr}");
    }
}

/// `timeout 60 podbay debug node/…`: SIGTERM deletes the node debug pod
/// too, and podbay ends as a shell reports the signal (128 + 15).
/// Reads podbay's stderr up to its "created node debug pod" line: the pod.
async fn created_pod(
    stderr: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>,
) -> String {
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.expect("stderr read") {
            if let Some(rest) = line.split("default/").nth(1)
                && line.contains("created node debug pod")
            {
                return rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
            }
        }
        panic!("podbay ended before creating the pod")
    })
    .await
    .expect("the pod is created")
}

/// `podbay debug node/node-b1 -i -- sh` running, its input left open (the
/// shell waits on it) and its stderr read line by line.
fn node_shell(
    f: &Fixture,
    home: &tempfile::TempDir,
) -> (
    tokio::process::Child,
    Option<tokio::process::ChildStdin>,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>,
) {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = support::podbay_debug_spawned(
        &f.kubeconfig,
        &["node/node-b1", "-i", "--image", "busybox:1.36", "--", "sh"],
        home.path(),
    );
    let stdin = child.stdin.take();
    let stderr = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    (child, stdin, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_deletes_the_node_debug_pod_and_exits_143() {
    let f = Fixture::new(0).await;
    let home = support::tempdir::temp_home("cli-debug-sigterm");
    let (mut child, _stdin, mut stderr) = node_shell(&f, &home);
    let pod = created_pod(&mut stderr).await;
    assert!(live_names(&f, "default").await.contains(&pod), "{pod}");
    let pid = nix::unistd::Pid::from_raw(child.id().expect("running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let mut said = Vec::new();
    while let Ok(Some(line)) = stderr.next_line().await {
        said.push(line);
    }
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
        .await
        .expect("podbay ends")
        .expect("status");
    assert_eq!(status.code(), Some(143), "{said:?}");
    assert!(
        said.iter()
            .any(|l| l.contains(&format!("deleted node debug pod default/{pod}"))),
        "{said:?}"
    );
    assert!(
        !live_names(&f, "default").await.contains(&pod),
        "{pod} is gone"
    );
}

/// A DELETE the server never answers: podbay gives it its own 10 s and
/// ends saying the pod may be left (it waited for ever, and ignored two
/// SIGTERMs); a second signal during that wait ends podbay at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mute_delete_neither_hangs_podbay_nor_swallows_a_second_signal() {
    use tokio::time::{Duration, Instant};
    let f = Fixture::new(0).await;
    f.sim.mute_deletes(true);
    let home = support::tempdir::temp_home("cli-debug-mute-delete");
    let (mut child, _stdin, mut stderr) = node_shell(&f, &home);
    created_pod(&mut stderr).await;
    let pid = nix::unistd::Pid::from_raw(child.id().expect("running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    // The first signal's clean-up is under way (its DELETE unanswered).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let second = Instant::now();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .expect("a second SIGTERM ends podbay at once")
        .expect("status");
    let mut said = Vec::new();
    while let Ok(Some(line)) = stderr.next_line().await {
        said.push(line);
    }
    assert!(second.elapsed() < Duration::from_secs(5));
    {
        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(
            status.code(),
            Some(143),
            "{said:?} signal {:?}",
            status.signal()
        );
    }
    assert!(
        said.iter()
            .any(|l| l.contains("may be left: podbay was stopped again")
                && l.contains("kubectl delete pod -n default node-debugger-node-b1-")),
        "{said:?}"
    );

    let started = Instant::now();
    let out = piped(
        &f,
        &["node/node-b1", "--image", "busybox:1.36", "--", "true"],
        "",
    )
    .await;
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("may be left: the server did not answer its deletion within 10 s"),
        "{stderr}"
    );
    // What this guards against is a wait without end: the clean-up's 10 s
    // is its only wait once the shell has ended, but starting the pod on a
    // loaded two-core CI machine has taken over 30 s.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(90), "took {took:?}: {stderr}");
}

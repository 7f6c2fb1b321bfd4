//! `podbay debug` across many pods (the real binary against the
//! simulator): selectors, owners and several names; each pod's lines after
//! its name, a summary on stderr, and an exit status that says whether
//! every pod's command exited 0.

use crate::support;

use support::DebugFixture as Fixture;

const STOREFRONT: [&str; 3] = [
    "storefront-7d9c8b6f4-m4q7z",
    "storefront-7d9c8b6f4-t8w3n",
    "storefront-7d9c8b6f4-x2k9p",
];

/// A simulator whose image pulls take no time.
async fn fixture() -> Fixture {
    Fixture::new(0).await
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The summary's row of `pod` (stderr).
fn summary_row<'a>(stderr: &'a str, pod: &str) -> &'a str {
    let table = &stderr[stderr.find("POD ").expect("a summary table")..];
    table
        .lines()
        .find(|l| l.starts_with(pod))
        .unwrap_or_else(|| panic!("no summary row for {pod}:\n{stderr}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selector_runs_in_every_replica_each_line_after_its_pod() {
    let f = fixture().await;
    let out = f
        .podbay(&[
            "-l",
            "app.kubernetes.io/name=storefront",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target-all",
            "--",
            "sh",
            "-c",
            "hostname; ls /proc/1/root; echo to-stderr >&2",
        ])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let sandboxed = support::namespaces_or_skip("fleet hostname");
    for pod in STOREFRONT {
        let own: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("{pod}: ")))
            .collect();
        assert!(own.len() >= 2, "{pod} has its block: {stdout}");
        if sandboxed {
            assert_eq!(own[0], pod, "each pod's own hostname, in its own block");
        }
        assert!(
            stderr.contains(&format!("{pod}: to-stderr")),
            "its stderr is prefixed on stderr: {stderr}"
        );
        assert!(summary_row(&stderr, pod).contains("exited 0"), "{stderr}");
    }
    assert!(
        stdout
            .lines()
            .all(|l| STOREFRONT.iter().any(|p| l.starts_with(&format!("{p}: ")))),
        "every line of stdout is a pod's: {stdout}"
    );
    assert!(stderr.contains("podbay: 3 of 3 pods exited 0"), "{stderr}");
    // --target-all: each debug container targets its pod's first container.
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(support::client(&f.sim, "sim").await, "shop");
    for pod in STOREFRONT {
        let spec = pods.get(pod).await.unwrap().spec.unwrap();
        let targets: Vec<Option<String>> = spec
            .ephemeral_containers
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.target_container_name)
            .collect();
        assert_eq!(targets, [Some("web".to_string())], "{pod}");
    }

    // One pod takes --target-all too.
    let one = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target-all",
            "--",
            "true",
        ])
        .await;
    assert_eq!(one.status.code(), Some(0), "{}", text(&one.stderr));
    let redis = pods.get("redis-0").await.unwrap().spec.unwrap();
    assert_eq!(
        redis.ephemeral_containers.unwrap()[0]
            .target_container_name
            .as_deref(),
        Some("redis")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_that_cannot_run_is_named_in_the_summary_and_the_status_says_some_failed() {
    let f = fixture().await;
    let out = f
        .podbay(&[
            STOREFRONT[0],
            "cart-5f6d7c9b8-h2j4k",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target",
            "web",
            "--",
            "sh",
            "-c",
            "echo ran-here",
        ])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(123), "some failed: {stderr}");
    assert!(
        stdout.contains(&format!("{}: ran-here", STOREFRONT[0])),
        "{stdout}"
    );
    assert!(!stdout.contains("cart-5f6d7c9b8-h2j4k: "), "{stdout}");
    let cart = summary_row(&stderr, "cart-5f6d7c9b8-h2j4k");
    assert!(
        cart.contains("invalid") && cart.contains("no container \"web\""),
        "the reason, in one row: {cart}"
    );
    assert!(summary_row(&stderr, STOREFRONT[0]).contains("exited 0"));
    assert!(
        stderr.contains("podbay: 1 of 2 pods exited 0; 1 did not"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_resolves_through_its_selector_and_json_is_one_document() {
    let f = fixture().await;
    let out = f
        .podbay(&[
            "deploy/storefront",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--parallel",
            "2",
            "-o",
            "json",
            "--",
            "sh",
            "-c",
            "exit 4",
        ])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(123), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["total"], 3);
    assert_eq!(doc["failed"], 3);
    let pods: Vec<&str> = doc["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pod"].as_str().unwrap())
        .collect();
    assert_eq!(pods, STOREFRONT, "the deployment's pods, in name order");
    for pod in doc["pods"].as_array().unwrap() {
        assert_eq!(pod["exitCode"], 4, "{pod}");
        assert_eq!(pod["result"], "exited");
        assert!(pod["container"].as_str().unwrap().starts_with("debugger-"));
    }

    // A Service's pods, by its selector (the same three).
    let out = f
        .podbay(&[
            "svc/storefront",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "-o",
            "json",
            "--",
            "true",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let through_service: Vec<&str> = doc["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pod"].as_str().unwrap())
        .collect();
    assert_eq!(through_service, STOREFRONT);
    let nobody = f
        .podbay(&["svc/checkout", "-n", "shop", "--image", "busybox:1.36"])
        .await;
    assert_eq!(nobody.status.code(), Some(66));
    assert!(
        text(&nobody.stderr).contains(
            "svc/checkout in namespace shop has no pods (its selector is app.kubernetes.io/name=checkout)."
        ),
        "{}",
        text(&nobody.stderr)
    );

    let missing = f
        .podbay(&["deploy/nothing", "-n", "shop", "--image", "busybox:1.36"])
        .await;
    assert_eq!(missing.status.code(), Some(66));
    assert!(
        text(&missing.stderr).contains("deploy/nothing not found in namespace shop"),
        "{}",
        text(&missing.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_work_for_many_pods_is_said_before_anything_is_sent() {
    let f = fixture().await;
    let tty = f
        .podbay(&[STOREFRONT[0], STOREFRONT[1], "-n", "shop", "-it"])
        .await;
    assert_eq!(tty.status.code(), Some(2));
    assert!(text(&tty.stderr).contains("-t gives one pod your terminal"));

    let none = f
        .podbay(&[
            "-l",
            "app=nothing-like-this",
            "-n",
            "shop",
            "--image",
            "busybox",
        ])
        .await;
    assert_eq!(none.status.code(), Some(66));
    assert!(
        text(&none.stderr).contains("No pods in namespace shop match -l app=nothing-like-this."),
        "{}",
        text(&none.stderr)
    );

    let everything = f.podbay(&["-l", "", "-A", "--image", "busybox"]).await;
    assert_eq!(
        everything.status.code(),
        Some(2),
        "an empty selector is every pod"
    );
    assert!(
        text(&everything.stderr).contains("matches every pod"),
        "{}",
        text(&everything.stderr)
    );

    let mixed = f.podbay(&[STOREFRONT[0], "-l", "app=x"]).await;
    assert_eq!(mixed.status.code(), Some(2), "names and a selector: usage");
    let kind = f.podbay(&["cm/storefront"]).await;
    assert_eq!(kind.status.code(), Some(2));
    assert!(
        text(&kind.stderr).contains("deploy/, rs/, sts/, ds/, job/"),
        "{}",
        text(&kind.stderr)
    );
}

/// `podbay debug` for these pods, run in the background, its stderr read
/// as it comes.
fn spawn_debug(f: &Fixture, args: &[&str], home: &std::path::Path) -> tokio::process::Child {
    support::podbay_debug_command(&f.kubeconfig, args, home)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("podbay runs")
}

/// The storefront pods, one at a time, each running `command`: `signal`
/// once the first pod's container is added. podbay's status, its stderr
/// and its stdout, and how long it took to end after the signal.
async fn signalled_after_the_first_launch(
    command: &[&str],
    signal: nix::sys::signal::Signal,
) -> (Option<i32>, String, String, std::time::Duration) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let f = fixture().await;
    let home = tempfile::tempdir().unwrap();
    let mut args = vec![
        "-l",
        "app.kubernetes.io/name=storefront",
        "-n",
        "shop",
        "--image",
        "busybox:1.36",
        "--parallel",
        "1",
        "--",
    ];
    args.extend_from_slice(command);
    let mut child = spawn_debug(&f, &args, home.path());
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while !seen.contains("added debug container") {
            let mut line = String::new();
            if stderr.read_line(&mut line).await.unwrap() == 0 {
                break;
            }
            seen.push_str(&line);
        }
    })
    .await
    .expect("the first launch is said");
    let signalled = std::time::Instant::now();
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).await.unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
        .await
        .expect("podbay ends")
        .unwrap();
    let took = signalled.elapsed();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .await
        .unwrap();
    (status.code(), seen + &rest, stdout, took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_launching_lets_the_running_one_finish_and_says_which_ran() {
    let (code, stderr, stdout, _) = signalled_after_the_first_launch(
        &["sh", "-c", "sleep 2; echo finished"],
        nix::sys::signal::Signal::SIGINT,
    )
    .await;
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("stopping: no more pods are started"),
        "{stderr}"
    );
    assert!(
        stdout.contains(&format!("{}: finished", STOREFRONT[0])),
        "the running one went on to its end: {stdout}"
    );
    assert!(summary_row(&stderr, STOREFRONT[0]).contains("exited 0"));
    for pod in &STOREFRONT[1..] {
        assert!(
            summary_row(&stderr, pod).contains("not started"),
            "{stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_leaves_the_running_pod_running_and_still_says_which_ran() {
    let (code, stderr, _, took) =
        signalled_after_the_first_launch(&["sleep", "30"], nix::sys::signal::Signal::SIGTERM).await;
    assert!(
        took < std::time::Duration::from_secs(10),
        "the running pod's 30 s are not waited for: {took:?}"
    );
    assert_eq!(code, Some(143), "as a shell reports SIGTERM: {stderr}");
    assert!(stderr.contains("stopping (SIGTERM)"), "{stderr}");
    assert!(
        summary_row(&stderr, STOREFRONT[0]).contains("left running"),
        "{stderr}"
    );
    for pod in &STOREFRONT[1..] {
        assert!(
            summary_row(&stderr, pod).contains("not started"),
            "{stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_while_dash_i_waits_for_standard_input_ends_podbay() {
    use tokio::io::AsyncBufReadExt;
    let f = fixture().await;
    let home = tempfile::tempdir().unwrap();
    // Standard input stays open and says nothing: -i waits for its end.
    let mut child = support::podbay_debug_command(
        &f.kubeconfig,
        &[
            "-l",
            "app.kubernetes.io/name=storefront",
            "-n",
            "shop",
            "-i",
            "--",
            "cat",
        ],
        home.path(),
    )
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("podbay runs");
    let _open = child.stdin.take().expect("stdin");
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    // The pods are found (the default image is said then): -i reads from
    // now on.
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains("using image") {
                return;
            }
        }
    })
    .await
    .expect("the pods are found");
    // A ctrl-c before the read begins is held for it: the listener is older.
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .expect("ctrl-c ends podbay while it reads standard input")
        .unwrap();
    let mut rest = String::new();
    while let Ok(Some(line)) = stderr.next_line().await {
        rest.push_str(&line);
        rest.push('\n');
    }
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(rest.contains("nothing was run"), "{rest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_i_gives_standard_input_to_every_pod() {
    use tokio::io::AsyncWriteExt;
    let f = fixture().await;
    let home = tempfile::tempdir().unwrap();
    let mut command = support::podbay_debug_command(
        &f.kubeconfig,
        &[
            "deploy/cart",
            "-n",
            "shop",
            "-i",
            "--image",
            "busybox:1.36",
            "--",
            "sh",
            "-c",
            "wc -l",
        ],
        home.path(),
    );
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"one\ntwo\nthree\n").await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("podbay ends")
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for pod in ["cart-5f6d7c9b8-h2j4k", "cart-5f6d7c9b8-p9r2s"] {
        assert!(
            stdout.contains(&format!("{pod}: 3")),
            "each pod read all three lines, then the end: {stdout}\n{stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_namespaces_each_line_names_its_namespace_and_a_restricted_user_is_told_why() {
    let f = fixture().await;
    let out = f
        .podbay(&[
            "-A",
            "-l",
            "app.kubernetes.io/name in (redis,payments-api)",
            "--image",
            "busybox:1.36",
            "--",
            "echo",
            "here",
        ])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("shop/redis-0: here"), "{stdout}");
    assert!(
        stdout
            .lines()
            .filter(|l| l.starts_with("payments/payments-api-"))
            .count()
            >= 2,
        "{stdout}"
    );

    let restricted = f
        .podbay(&[
            "--context",
            "sim-dev",
            "-A",
            "-l",
            "app.kubernetes.io/name=redis",
            "--image",
            "busybox:1.36",
        ])
        .await;
    let stderr = text(&restricted.stderr);
    assert_eq!(restricted.status.code(), Some(77), "{stderr}");
    assert!(
        stderr.contains("list") && stderr.contains("pods"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one sentence: {stderr}");

    // An owner outside the user's namespace: the apps group's refusal.
    let owner = f
        .podbay(&[
            "--context",
            "sim-dev",
            "deploy/payments-api",
            "-n",
            "payments",
            "--image",
            "busybox:1.36",
        ])
        .await;
    let stderr = text(&owner.stderr);
    assert_eq!(owner.status.code(), Some(77), "{stderr}");
    assert!(stderr.contains("deployments"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_attach_leaves_each_running_and_says_so() {
    let f = fixture().await;
    let out = f
        .podbay(&[
            "deploy/cart",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--no-attach",
            "--",
            "sleep",
            "60",
        ])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("podbay: 2 of 2 pods run"), "{stderr}");
    for pod in ["cart-5f6d7c9b8-h2j4k", "cart-5f6d7c9b8-p9r2s"] {
        let row = summary_row(&stderr, pod);
        assert!(
            row.contains("debugger-") && row.contains("running (--no-attach)"),
            "{row}"
        );
    }
}

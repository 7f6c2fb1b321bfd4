//! Pods as Linux namespaces: what the demo and `podbay sim` show a user,
//! read off the real binary's screen and output, with the fallback for
//! hosts without namespaces.

use crate::support;

use std::time::Duration;

use podbay::cluster::session::{self, SessionEvent, SessionSpec};
use podbay::model::session::{SessionEnd, SessionKind};
use support::{PodbayScreen, client, namespaces_or_skip, pane_text, start_sim};
use tokio::sync::mpsc;

/// Runs `argv` in a container without a terminal; its output and its end.
async fn exec(
    kube: kube::Client,
    (namespace, pod, container): (&str, &str, &str),
    argv: &[&str],
) -> (String, SessionEnd) {
    let (tx, mut rx) = mpsc::channel(64);
    let spec = SessionSpec {
        namespace: namespace.into(),
        pod: pod.into(),
        container: container.into(),
        kind: SessionKind::Exec(argv.iter().map(|a| a.to_string()).collect()),
        size: podbay::term::Size::new(100, 30),
        keepalive: None,
        tty: false,
        stdin: false,
    };
    let (_input, inputs) = tokio::sync::mpsc::unbounded_channel();
    let _session = session::open(kube, spec, inputs, tx)
        .await
        .expect("exec opens");
    let mut output = String::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(20), rx.recv()).await {
            Ok(Some(SessionEvent::Output(b) | SessionEvent::Stderr(b))) => {
                output.push_str(&String::from_utf8_lossy(&b))
            }
            Ok(Some(SessionEvent::Ended(end))) => return (output, end),
            other => panic!("exec {argv:?} did not end: {other:?}; saw {output:?}"),
        }
    }
}

/// `podbay demo` at `cols`×`rows`, in the pod view of the pod matching
/// `filter` once `loaded` is on screen.
async fn demo_pod_view(filter: &str, loaded: &str, cols: u16, rows: u16) -> PodbayScreen {
    let screen = PodbayScreen::spawn(&["demo".to_string()], cols, rows);
    screen
        .wait_for("the demo's pods", |t| t.contains(filter))
        .await;
    screen.keys(&format!("/{filter}\r")).await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| t.contains(loaded))
        .await;
    screen
}

/// The demo, as docs/simulator.md shows it: a debug container targeting `redis`
/// reads the target's file through /proc/1/root, lists the target's
/// processes with its own, and is on a host named after the pod.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_demo_a_debug_container_sees_its_targets_files_processes_and_pod_name() {
    if !namespaces_or_skip("the demo's debug container") {
        return;
    }
    let screen = demo_pod_view("redis-0", "init-config", 120, 40).await;
    screen.keys("d").await;
    screen
        .wait_for("the launcher aimed at redis", |t| {
            t.contains("target   redis")
        })
        .await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the debug container's shell", |t| {
            t.contains("● attached") && t.lines().any(|l| pane_text(l).ends_with("@redis-0#"))
        })
        .await;
    screen
        .keys("ls /proc/1/root/data; cat /proc/1/root/data/dump.rdb; ps aux; hostname\r")
        .await;
    screen
        .wait_for("the target's file, processes and the pod's name", |t| {
            let lines: Vec<&str> = t.lines().map(pane_text).collect();
            lines.iter().any(|l| l.starts_with("REDIS0011 redis-ver 7.4.1"))
                && lines.iter().any(|l| l.trim() == "dump.rdb")
                && lines.iter().any(|l| l.trim() == "redis-0")
                // PID 1 is the target's main process, not the debug shell.
                && lines.iter().any(|l| {
                    let cols: Vec<&str> = l.split_whitespace().collect();
                    cols.get(1) == Some(&"1") && l.contains("/app/redis-server")
                })
        })
        .await;
    let text = screen.text();
    assert!(
        !text.contains("podbay demo") && !text.contains("cargo"),
        "the host's processes are not in the pod's PID namespace:\n{text}"
    );
}

/// `s` on a distroless container: the runtime's error, and the launcher
/// aimed at that container instead of a dead pane.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_in_a_distroless_container_turns_into_the_debug_launcher() {
    if !namespaces_or_skip("a shell in a distroless container") {
        return;
    }
    // api is the first container.
    let screen = demo_pod_view("payments-api", "log-shipper", 80, 24).await;
    screen.keys("s").await;
    screen
        .wait_for("the exec error and the launcher offer", |t| {
            let flat: String = t
                .lines()
                .map(|l| pane_text(l).trim())
                .collect::<Vec<_>>()
                .join(" ");
            flat.contains("api has no shell")
                && flat.contains(r#"exec: "sh": executable file not found in $PATH"#)
                && flat.contains("target   api")
        })
        .await;
    screen.raw(b"\x1b").await;
    screen
        .wait_for("the pod view again, with no dead pane", |t| {
            t.contains("log-shipper") && !t.contains("shell payments/")
        })
        .await;
}

/// `kubectl exec` into a distroless container fails as containerd makes it
/// fail; its workload logs; the pod's volume reaches a debug container
/// through `--mount`, including what the target just wrote to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distroless_exec_fails_like_a_node_and_volumes_reach_debug_containers() {
    if !namespaces_or_skip("distroless exec and volumes") {
        return;
    }
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let (_, end) = exec(
        kube.clone(),
        ("payments", "payments-api-66b8f7d5c9-qv8lm", "api"),
        &["sh"],
    )
    .await;
    assert!(
        end.reason
            .contains(r#"exec: "sh": executable file not found in $PATH: unknown"#)
            && end.exit_code.is_none(),
        "{end:?}"
    );
    let (written, end) = exec(
        kube.clone(),
        ("shop", "redis-0", "redis"),
        &[
            "sh",
            "-c",
            "echo written-by-redis > /data/fresh.txt; hostname",
        ],
    )
    .await;
    assert_eq!((written.trim(), end.exit_code), ("redis-0", Some(0)));

    let kubeconfig = support::kubeconfig(&sim, "sandbox-mount");
    let debug = support::podbay_debug(
        &kubeconfig,
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--mount",
            "data:/data",
            "--workdir",
            "/data",
            "--pull-policy",
            "IfNotPresent",
            "--",
            "sh",
            "-c",
            "pwd; cat dump.rdb fresh.txt",
        ],
    )
    .await;
    let out = String::from_utf8_lossy(&debug.stdout);
    assert_eq!(
        debug.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&debug.stderr)
    );
    assert!(
        out.starts_with("/data\n") && out.contains("REDIS0011") && out.contains("written-by-redis"),
        "{out}"
    );

    // readOnly: the remount keeps the flags the host's mount locks.
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(kube.clone(), "shop");
    let patch = serde_json::json!({"spec": {"ephemeralContainers": [{
        "name": "read-only", "image": "busybox:1.36",
        "command": ["sh", "-c", "cat /data/fresh.txt; touch /data/more 2>&1; true"],
        "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": true}],
    }]}});
    pods.patch_subresource(
        "ephemeralcontainers",
        "redis-0",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Strategic(patch),
    )
    .await
    .expect("the read-only debug container is added");
    let log = support::eventually(20, "the read-only container's log", || {
        let pods = pods.clone();
        async move {
            let params = kube::api::LogParams {
                container: Some("read-only".into()),
                ..Default::default()
            };
            let log = pods.logs("redis-0", &params).await.ok()?;
            log.contains("Read-only file system").then_some(log)
        }
    })
    .await;
    assert!(log.starts_with("written-by-redis"), "{log}");

    let refused = support::podbay_debug(
        &kubeconfig,
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--mount",
            "nope:/x",
            "--",
            "true",
        ],
    )
    .await;
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_ne!(refused.status.code(), Some(0));
    assert!(
        err.contains(r#"volumeMounts[0].name: Not found: "nope""#),
        "{err}"
    );
}

/// Without namespaces (`--no-namespaces`, as on a host that forbids them)
/// `podbay sim` says so at once, containers are host processes, and
/// images still decide which programs exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_namespaces_the_simulator_says_so_and_keeps_working() {
    use tokio::io::AsyncBufReadExt;
    let kubeconfig =
        std::env::temp_dir().join(format!("podbay-plain-{}.kubeconfig", std::process::id()));
    let mut sim = tokio::process::Command::new(env!("CARGO_BIN_EXE_podbay"))
        .args(["sim", "--no-namespaces", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("podbay sim starts");
    let mut lines = tokio::io::BufReader::new(sim.stdout.take().expect("stdout")).lines();
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("a first line in time")
        .expect("stdout readable")
        .unwrap_or_default();
    assert_eq!(
        first,
        "containers: plain host processes, without their own root or PID namespace, on the host network: a pod's ports are free loopback ports port-forward maps (namespaces are turned off (--no-namespaces))"
    );
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await
    {
        if line.starts_with("try:") {
            break;
        }
    }
    let config = kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig written");
    let config = kube::Config::from_custom_kubeconfig(config, &Default::default())
        .await
        .expect("kubeconfig loads");
    let kube = kube::Client::try_from(config).expect("client");

    let (hostname, end) = exec(kube.clone(), ("shop", "redis-0", "redis"), &["hostname"]).await;
    let host = nix::unistd::gethostname().expect("hostname");
    assert_eq!(end.exit_code, Some(0), "{end:?}");
    assert_eq!(hostname.trim(), host.to_string_lossy(), "a host process");
    let (_, end) = exec(
        kube.clone(),
        ("payments", "payments-api-66b8f7d5c9-zr4kd", "api"),
        &["sh"],
    )
    .await;
    assert!(
        end.reason.contains("executable file not found in $PATH"),
        "a distroless image has no shell here either: {end:?}"
    );
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::namespaced(kube, "payments");
    let logs = support::eventually(15, "the distroless workload's log", || {
        let pods = pods.clone();
        async move {
            let params = kube::api::LogParams {
                container: Some("api".into()),
                ..Default::default()
            };
            let log = pods
                .logs("payments-api-66b8f7d5c9-zr4kd", &params)
                .await
                .ok()?;
            log.contains("handled POST /v1/charges").then_some(log)
        }
    })
    .await;
    assert!(logs.contains("payments-api: listening"), "{logs}");
    let _ = sim.kill().await;
    let _ = std::fs::remove_file(&kubeconfig);
}

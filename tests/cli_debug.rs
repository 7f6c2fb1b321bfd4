//! `podbay debug` (the real binary) against the simulator.

mod support;

use std::path::PathBuf;
use std::process::Output;

use bytes::Bytes;
use podbay::cluster::session::{self, SessionEvent, SessionInput, SessionKind, SessionSpec};
use support::{client, start_sim};
use tokio::sync::mpsc;

struct Fixture {
    sim: podbay::sim::SimHandle,
    kubeconfig: PathBuf,
}

impl Fixture {
    async fn new(pull_delay_ms: u64) -> Self {
        let sim = start_sim(pull_delay_ms).await;
        let kubeconfig = std::env::temp_dir().join(format!(
            "podbay-cli-{}-{}.kubeconfig",
            std::process::id(),
            sim.addr().port()
        ));
        sim.write_kubeconfig(&kubeconfig).unwrap();
        Fixture { sim, kubeconfig }
    }

    async fn podbay(&self, args: &[&str]) -> Output {
        let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_podbay"))
            .arg("debug")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        tokio::time::timeout(std::time::Duration::from_secs(60), run)
            .await
            .expect("podbay debug finished in time")
            .expect("podbay runs")
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.kubeconfig);
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_a_command_prints_its_output_and_exits_with_its_code() {
    let f = Fixture::new(50).await;
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--target",
            "redis",
            "--image",
            "busybox:1.36",
            "--",
            "sh",
            "-c",
            "echo hi; exit 3",
        ])
        .await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "hi",
        "printed once, nothing lost: {:?}",
        stdout(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_before_and_after_attach_is_all_shown_once() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "--",
            "sh",
            "-c",
            "echo one; sleep 1; echo two; sleep 1; echo three",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out).replace('\r', "");
    assert_eq!(text, "one\ntwo\nthree\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_attach_returns_once_running_and_the_shell_can_be_reattached() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "--no-attach",
            "--",
            "sh",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let name = stdout(&out).trim().to_string();
    assert!(name.starts_with("debugger-"), "{name}");

    // Attach twice: the same shell process answers both times.
    let mut pids = Vec::new();
    for _ in 0..2 {
        let (tx, mut rx) = mpsc::channel(64);
        let spec = SessionSpec {
            namespace: "shop".into(),
            pod: "redis-0".into(),
            container: name.clone(),
            kind: SessionKind::Attach,
            size: (100, 30),
            keepalive: Some(session::DEFAULT_KEEPALIVE),
        };
        let s = session::open(client(&f.sim, "sim").await, spec, tx)
            .await
            .unwrap();
        // Like a person: wait for a prompt before typing. (kube-rs queues
        // stdin and resize separately, so keys sent in the same instant as
        // the attach may reach the shell before the size does.)
        s.input
            .send(SessionInput::Data(Bytes::from_static(b"\n")))
            .unwrap();
        match tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv()).await {
            Ok(Some(SessionEvent::Output(_))) => {}
            other => panic!("no prompt from the shell: {other:?}"),
        }
        s.input
            .send(SessionInput::Data(Bytes::from_static(
                b"echo pid=$$ size=$(stty size)\n",
            )))
            .unwrap();
        let mut seen = String::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while !seen.contains("size=30 100") {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(SessionEvent::Output(b))) => seen.push_str(&String::from_utf8_lossy(&b)),
                other => panic!("no answer from the shell: {other:?}; saw {seen:?}"),
            }
        }
        let pid = seen
            .split("pid=")
            .last()
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        pids.push(pid);
        s.detach();
    }
    assert_eq!(pids[0], pids[1], "re-attach reaches the same process");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unpullable_image_reports_the_reason_and_times_out_cleanly() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "registry.example/doesnotexist:1",
            "--timeout",
            "2s",
        ])
        .await;
    assert_eq!(out.status.code(), Some(71));
    let err = stderr(&out);
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("podbay: Timed out after 2s waiting for the image: "),
        "{err}"
    );
    assert!(
        last.contains("ImagePullBackOff") || last.contains("ErrImagePull"),
        "{err}"
    );
    assert!(
        last.ends_with("Check the image name and the pod's image pull secrets."),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_gets_the_permission_sentence() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "--context",
            "sim-viewer",
        ])
        .await;
    assert_eq!(out.status.code(), Some(77));
    assert_eq!(
        stderr(&out).trim(),
        "podbay: You may not patch pods/ephemeralcontainers in namespace shop: ask your cluster admin for `patch` on `pods/ephemeralcontainers`."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_one_sentence_each() {
    let f = Fixture::new(0).await;
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &[
                "redis-0", "-n", "shop", "--image", "busybox", "--name", "redis",
            ],
            65,
            "already has a container named \"redis\"",
        ),
        (
            &["ghost", "-n", "shop", "--image", "busybox"],
            66,
            "Pod ghost not found in namespace shop.",
        ),
        (
            &[
                "kube-apiserver-node-a1",
                "-n",
                "kube-system",
                "--image",
                "busybox",
            ],
            69,
            "static pods do not support ephemeral containers",
        ),
        (
            &[
                "search-gpu-5c7d9f8b6-l2m3n",
                "-n",
                "search",
                "--image",
                "busybox",
            ],
            70,
            "is Pending, not Running",
        ),
        (
            &[
                "redis-0", "-n", "shop", "--image", "busybox", "--target", "nope",
            ],
            65,
            "has no container \"nope\" to target",
        ),
    ];
    for (args, code, sentence) in cases {
        let out = f.podbay(args).await;
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "one sentence: {err}");
        assert!(err.contains(sentence), "{args:?}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_reports_the_final_status() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "redis-0", "-n", "shop", "--image", "busybox", "-o", "json", "--", "sh", "-c", "exit 4",
        ])
        .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let text = stdout(&out);
    let json_start = text.find('{').expect("json printed");
    let value: serde_json::Value = serde_json::from_str(&text[json_start..]).unwrap();
    assert_eq!(value["pod"], "redis-0");
    assert_eq!(value["status"]["state"]["terminated"]["exitCode"], 4);
    assert_eq!(value["status"]["state"]["terminated"]["reason"], "Error");
}

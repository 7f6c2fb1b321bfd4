//! `podbay debug` (the real binary) against the simulator.

use crate::support;

use bytes::Bytes;
use podbay::cluster::session::{self, SessionEvent, SessionInput, SessionSpec};
use podbay::model::session::SessionKind;
use support::{client, stderr, stdout};
use tokio::sync::mpsc;

use support::DebugFixture as Fixture;

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
            "-it",
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
            size: podbay::term::Size::new(100, 30),
            keepalive: Some(session::DEFAULT_KEEPALIVE),
            tty: true,
            stdin: true,
        };
        let (input, inputs) = tokio::sync::mpsc::unbounded_channel();
        let session = session::open(client(&f.sim, "sim").await, spec, inputs, tx)
            .await
            .unwrap();
        // Like a person: wait for a prompt before typing. (kube-rs queues
        // stdin and resize separately, so keys sent in the same instant as
        // the attach may reach the shell before the size does.)
        input
            .send(SessionInput::Data(Bytes::from_static(b"\n")))
            .unwrap();
        match tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv()).await {
            Ok(Some(SessionEvent::Output(_))) => {}
            other => panic!("no prompt from the shell: {other:?}"),
        }
        input
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
        session.detach();
    }
    assert_eq!(pids[0], pids[1], "re-attach reaches the same process");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unpullable_image_fails_fast_with_the_registrys_reason() {
    let f = Fixture::new(0).await;
    let started = std::time::Instant::now();
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "registry.example/doesnotexist:1",
            "--timeout",
            "60s",
        ])
        .await;
    assert_eq!(out.status.code(), Some(71), "{}", stderr(&out));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "did not wait out the timeout: {:?}",
        started.elapsed()
    );
    let err = stderr(&out);
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "podbay: The debug container's image cannot be pulled: ErrImagePull: failed to pull"
        ),
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
            "is not on a node yet",
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
    // The fields of a pod's entry in the many-pods document, at the top.
    assert_eq!(value["namespace"], "shop");
    assert_eq!(value["result"], "exited");
    assert_eq!(value["exitCode"], 4);
    assert_eq!(value["container"], value["status"]["name"]);
}

/// How many ephemeral containers `pod` has, read through the API.
async fn debug_containers(f: &Fixture, pod: &str) -> usize {
    use k8s_openapi::api::core::v1::Pod;
    let pods: kube::Api<Pod> = kube::Api::namespaced(client(&f.sim, "sim").await, "shop");
    let pod = pods.get(pod).await.expect("the pod");
    pod.spec
        .and_then(|s| s.ephemeral_containers)
        .map_or(0, |l| l.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_t_stdout_and_stderr_stay_apart_and_nothing_is_translated() {
    let f = Fixture::new(0).await;
    // Written while attached…
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
            "sleep 2; echo a; echo b >&2",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "a\n", "stdout only, no CRLF");
    assert!(stderr(&out).ends_with("b\n"), "{}", stderr(&out));
    // …and before the attach, taken from the log (stream=Stdout/Stderr).
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
            "echo early-out; echo early-err >&2",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "early-out\n");
    assert!(stderr(&out).contains("early-err\n"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_i_and_no_t_piped_stdin_reaches_the_process_without_echo() {
    use tokio::io::AsyncWriteExt;
    let f = Fixture::new(0).await;
    let home = support::tempdir::temp_home("cli-stdin");
    let mut child = support::podbay_debug_spawned(
        &f.kubeconfig,
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "-i",
            "--",
            "sh",
            "-c",
            "read x; echo got-$x",
        ],
        home.path(),
    );
    // Written before the container is there to read it, and left open
    // (no EOF): the line waits in the pipe and reaches the process.
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(b"piped\n")
        .await
        .expect("the pipe takes it");
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("finished")
        .expect("output");
    drop(stdin);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "got-piped\n", "no echo of the input");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_input_ends_in_the_container_too_so_the_shell_exits() {
    // `echo … | podbay debug -i … -- sh`: the shell runs what was piped,
    // reads EOF and exits, and podbay with it (kubectl 1.33 waits on).
    let f = Fixture::new(0).await;
    let out = support::podbay_debug_piped(
        &f.kubeconfig,
        &[
            "redis-0", "-n", "shop", "--image", "busybox", "-i", "--", "sh",
        ],
        "echo from-the-pipe\nsh -c 'exit 3'\n",
    )
    .await;
    assert_eq!(stdout(&out), "from-the-pipe\n", "{}", stderr(&out));
    // At the end of its input, the shell exits with its last command's code.
    assert_eq!(out.status.code(), Some(3), "the shell's own exit code");

    // Input that ends before the shell is asked anything: EOF at once.
    let home = support::tempdir::temp_home("cli-stdin-end");
    let out = support::podbay_debug_command(
        &f.kubeconfig,
        &[
            "redis-0", "-n", "shop", "--image", "busybox", "-i", "--", "cat",
        ],
        home.path(),
    )
    .stdin(std::process::Stdio::null())
    .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), out)
        .await
        .expect("podbay ends: cat read EOF")
        .expect("output");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impossible_timeouts_and_images_are_usage_errors_before_anything_is_created() {
    let f = Fixture::new(0).await;
    for args in [
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "--timeout",
            "0",
        ][..],
        &["redis-0", "-n", "shop", "--image", "Bad Image:1"],
    ] {
        let out = f.podbay(args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    assert!(stderr(&f.podbay(&["redis-0", "--timeout", "0"]).await).contains("leaves no time"));
    assert_eq!(
        debug_containers(&f, "redis-0").await,
        0,
        "nothing was created"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_cluster_is_retried_up_to_the_timeout_as_the_sentence_says() {
    let f = Fixture::new(0).await;
    f.sim.stop_server();
    let started = std::time::Instant::now();
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "--timeout",
            "3s",
        ])
        .await;
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("retrying for up to 3s"), "{err}");
    assert!(
        err.lines()
            .last()
            .is_some_and(|l| l.contains("Gave up after 3s") && !l.contains("keeps retrying")),
        "{err}"
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "it did retry"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reuse_attaches_to_the_running_one_and_list_shows_them() {
    let f = Fixture::new(0).await;
    let first = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target",
            "redis",
            "--no-attach",
            "--",
            "sh",
            "-c",
            "sleep 60",
        ])
        .await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let name = stdout(&first).trim().to_string();
    let again = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target",
            "redis",
            "--reuse",
            "--no-attach",
        ])
        .await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again).trim(), name, "the same container");
    assert!(stderr(&again).contains(&format!("reusing debug container {name}")));
    assert_eq!(debug_containers(&f, "redis-0").await, 1, "no pile-up");

    let table = stdout(&f.podbay(&["redis-0", "-n", "shop", "--list"]).await);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("TARGET"),
        "{table}"
    );
    assert!(
        lines[1].starts_with(&name)
            && lines[1].contains("Running")
            && lines[1].contains("busybox:1.36")
            && lines[1].contains(" redis "),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(
        &f.podbay(&["redis-0", "-n", "shop", "--list", "-o", "json"])
            .await,
    ))
    .expect("json");
    assert_eq!(json[0]["name"], name.as_str());
    assert_eq!(json[0]["target"], "redis");
    assert!(json[0]["state"]["running"].is_object(), "{json}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_defaults_to_the_configs_first_and_says_so() {
    let f = Fixture::new(0).await;
    let (_config, env) = config_home("[debug]\nimages = [\"alpine:3.20\", \"busybox:1.36\"]\n");
    let out = support::podbay_debug_with(
        &f.kubeconfig,
        &["redis-0", "-n", "shop", "--", "sh", "-c", "echo ok"],
        env,
    )
    .await;
    support::exits(&out, 0, "using image alpine:3.20");
    assert_eq!(stdout(&out), "ok\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_still_initializing_can_be_debugged_and_init_containers_targeted() {
    let f = Fixture::new(0).await;
    // search-migrate waits in its init container (Init:0/1) on a node.
    let out = f
        .podbay(&[
            "search-migrate-2b8x4",
            "-n",
            "search",
            "--image",
            "busybox",
            "--target",
            "wait-for-db",
            "--",
            "sh",
            "-c",
            "echo while-init-runs",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "while-init-runs\n");
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "--target",
            "init-config",
            "--",
            "sh",
            "-c",
            "echo init-target",
        ])
        .await;
    // An init container that has completed runs no more: the runtime would
    // refuse to create a debugger in its processes, so nothing is sent.
    support::exits(
        &out,
        70,
        r#"cannot share the processes of "init-config", which is not running (Completed)"#,
    );
    assert!(stdout(&out).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_given_up_on_at_the_timeout() {
    let f = Fixture::new(0).await;
    f.sim.set_latency(std::time::Duration::from_secs(30));
    let started = std::time::Instant::now();
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "--timeout",
            "2s",
        ])
        .await;
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "gave up at the timeout, not kube's own: {:?}",
        started.elapsed()
    );
    assert!(
        stderr(&out).contains("did not answer within 2s"),
        "{}",
        stderr(&out)
    );
}

/// `podbay debug -it` passes the container's output through to the user's
/// terminal, as `kubectl attach -t` does; the modes a program there left on
/// (killed before it could reset them) are turned off when podbay exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tty_session_leaves_the_users_terminal_as_it_found_it() {
    let f = Fixture::new(0).await;
    let script = r"printf '\033[?1049h\033[?1000h\033[?1006h\033[?2004h\033[?25lin the alternate screen'; sleep 1";
    let args = tty_session_args(&f, script);
    let mut screen = support::PodbayScreen::spawn(&args, 100, 30);
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), screen.child.wait())
        .await
        .expect("podbay debug exits")
        .expect("exit status");
    screen.output_ended().await;
    assert_eq!(status.code(), Some(0));
    let written = screen.written();
    let size = |n: u16| std::num::NonZeroU16::new(n).expect("a size");
    let mut terminal = vt100::Parser::new(size(30), size(100), 0);
    terminal.process(&written);
    let after = terminal.screen();
    let text = String::from_utf8_lossy(&written);
    assert!(text.contains("in the alternate screen"), "{text:?}");
    assert!(
        !after.alternate_screen(),
        "left the alternate screen: {text:?}"
    );
    assert_eq!(
        after.mouse_protocol_mode(),
        vt100::MouseProtocolMode::None,
        "mouse reporting off"
    );
    assert!(!after.bracketed_paste(), "bracketed paste off");
    assert!(!after.hide_cursor(), "the cursor shows");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_is_one_document_with_the_containers_output_on_stderr() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "-o",
            "json",
            "--",
            "sh",
            "-c",
            "echo to-stdout; echo to-stderr >&2",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let document: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(document["pod"], "redis-0");
    let err = stderr(&out);
    assert!(
        err.contains("to-stdout") && err.contains("to-stderr"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectls_type_slash_name_and_dash_c_are_understood() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "pod/redis-0",
            "-n",
            "shop",
            "--image",
            "busybox",
            "-c",
            "probe-1",
            "--",
            "true",
        ])
        .await;
    support::exits(&out, 0, "added debug container probe-1");

    // node/NAME is a node (cli_debug_pod.rs runs it); a node with no
    // name is a usage error naming the kinds.
    let node = f.podbay(&["node/", "--image", "busybox"]).await;
    assert_eq!(node.status.code(), Some(2), "a usage error");
    assert!(stderr(&node).contains("node/NAME"), "{}", stderr(&node));

    let other = f.podbay(&["cm/web", "--image", "busybox"]).await;
    assert_eq!(other.status.code(), Some(2));
    assert!(
        stderr(&other).contains("give NAME, pod/NAME, node/NAME, svc/NAME, or one of deploy/"),
        "{}",
        stderr(&other)
    );
    // An owner is a workload's pods, found through its selector.
    let owner = f
        .podbay(&["deploy/web", "-n", "shop", "--image", "busybox"])
        .await;
    support::exits(&owner, 66, "deploy/web not found in namespace shop");

    // A usage error's synopsis shows every flag as optional.
    let usage = f.podbay(&["-n", "shop"]).await;
    assert!(
        stderr(&usage).contains("debug [OPTIONS] <POD>"),
        "{}",
        stderr(&usage)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_that_cannot_be_pulled_is_said_once() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "registry.example/doesnotexist:1",
        ])
        .await;
    assert_eq!(out.status.code(), Some(71), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("ErrImagePull").count(), 1, "{err}");
}

#[test]
fn a_reader_that_stops_early_ends_podbay_quietly() {
    for what in [&["man"][..], &["completions", "bash"][..]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_podbay"))
            .args(what)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("podbay runs");
        // The reader goes away before podbay writes: as `podbay man | head`.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("podbay ends");
        assert_eq!(out.status.code(), Some(0), "{what:?}: {out:?}");
        assert!(out.stderr.is_empty(), "{what:?}: {}", stderr(&out));
    }
}

/// `--reuse -- COMMAND` runs the command in the running debugger (exec, as
/// kubectl exec) and exits with its code; `--reuse -it` on a debugger made
/// without a terminal attaches without one, says so, and takes typed lines
/// (before: the old shell's scrollback and a wait forever; a silent screen).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reuse_runs_a_command_in_the_running_one_and_attaches_it_as_it_was_made() {
    let f = Fixture::new(0).await;
    let same = [
        "redis-0",
        "-n",
        "shop",
        "--image",
        "busybox:1.36",
        "--target",
        "redis",
    ];
    let made = f
        .podbay(&[&same[..], &["-i", "--no-attach"]].concat())
        .await;
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let name = stdout(&made).trim().to_string();

    let ran = f
        .podbay(
            &[
                &same[..],
                &["--reuse", "--", "sh", "-c", "echo ran-$((6*7)); exit 3"],
            ]
            .concat(),
        )
        .await;
    assert_eq!(ran.status.code(), Some(3), "{}", stderr(&ran));
    assert_eq!(stdout(&ran), "ran-42\n");
    assert!(stderr(&ran).contains(&format!("reusing debug container {name}")));
    assert_eq!(debug_containers(&f, "redis-0").await, 1, "no pile-up");

    let args: Vec<String> = [
        &["debug", "--kubeconfig", &f.kubeconfig.display().to_string()][..],
        &same[..],
        &["--reuse", "-it"],
    ]
    .concat()
    .into_iter()
    .map(String::from)
    .collect();
    let mut screen = support::PodbayScreen::spawn(&args, 100, 30);
    screen
        .wait_for("the sentence on the missing terminal", |t| {
            t.contains(&format!("{name} has no terminal (it was made without -t)"))
        })
        .await;
    screen.keys("echo typed-$((2*21))\r").await;
    screen
        .wait_for("the shell's answer", |t| t.contains("typed-42"))
        .await;
    let _ = screen.child.start_kill();
    let _ = screen.child.wait().await;
}

/// SIGTERM while `podbay debug -it` holds the terminal (raw mode, and the
/// container's alternate screen, mouse reporting and hidden cursor on):
/// podbay restores it all, then exits 143 (it died of the signal, leaving
/// them all on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_tty_session_leaves_the_terminal_as_it_found_it() {
    let f = Fixture::new(0).await;
    let script =
        r"printf '\033[?1049h\033[?1000h\033[?1006h\033[?25lheld by the container'; sleep 60";
    let args = tty_session_args(&f, script);
    let mut screen = support::PodbayScreen::spawn(&args, 100, 30);
    screen
        .wait_for("the container's screen", |t| {
            t.contains("held by the container")
        })
        .await;
    let pid = nix::unistd::Pid::from_raw(screen.child.id().expect("running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(20), screen.child.wait())
        .await
        .expect("podbay ends on SIGTERM")
        .expect("exit status");
    screen.output_ended().await;
    assert_eq!(status.code(), Some(143));
    support::assert_terminal_restored(&screen);
    let text = screen.text();
    assert!(
        text.contains("Interrupted; a debug container already added runs on"),
        "{text}"
    );
}

/// `podbay debug redis-0 -it -- sh -c SCRIPT` against `f`, for a PTY.
fn tty_session_args(f: &Fixture, script: &str) -> Vec<String> {
    [
        "debug",
        "--kubeconfig",
        &f.kubeconfig.display().to_string(),
        "redis-0",
        "-n",
        "shop",
        "--image",
        "busybox",
        "-it",
        "--",
        "sh",
        "-c",
        script,
    ]
    .map(String::from)
    .to_vec()
}

/// `--profile NAME` takes a team profile of config.toml's [profiles.NAME]
/// as the TUI's launcher does (it was "unknown profile" on the command
/// line), and an unknown name is one sentence naming both kinds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_profile_is_taken_by_name_on_the_command_line() {
    let f = Fixture::new(0).await;
    let (_config, env) = config_home(
        "[profiles.team]\nbase = \"baseline\"\nenv = [{ name = \"TEAM\", value = \"sre\" }]\n",
    );
    let env = || env.clone();
    let out = support::podbay_debug_with(
        &f.kubeconfig,
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--profile",
            "team",
            "--",
            "sh",
            "-c",
            "echo team=$TEAM",
        ],
        env(),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "team=sre\n");

    let out = support::podbay_debug_with(
        &f.kubeconfig,
        &["redis-0", "-n", "shop", "--profile", "tem", "--", "true"],
        env(),
    )
    .await;
    support::exits(
        &out,
        2,
        "Unknown profile \"tem\": the built-in ones are general, baseline, restricted, netadmin, sysadmin; the team's: team.",
    );
}

/// A config directory holding `config.toml` (gone with the returned dir),
/// and the environment that points podbay at it.
fn config_home(config: &str) -> (tempfile::TempDir, Vec<(String, String)>) {
    let scratch = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(scratch.path().join("podbay")).unwrap();
    std::fs::write(scratch.path().join("podbay/config.toml"), config).unwrap();
    let env = vec![(
        "XDG_CONFIG_HOME".into(),
        scratch.path().display().to_string(),
    )];
    (scratch, env)
}

/// A debug image from a registry that wants credentials: the kubelet pulls
/// it with the pod's image pull secrets, which redis-0 has none of. The
/// sentence names the registry, the secrets, and the ways out (exit 71).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_debug_image_names_the_registry_and_the_pods_pull_secrets() {
    let f = Fixture::new(0).await;
    let out = f
        .podbay(&[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "registry.internal.example/tools/netshoot:1",
            "--target",
            "redis",
            "--",
            "true",
        ])
        .await;
    support::exits(
        &out,
        71,
        "The registry registry.internal.example wants credentials for registry.internal.example/tools/netshoot:1, and a debug container pulls with its pod's image pull secrets (it has none). Debug a copy that carries one: podbay debug redis-0 -n shop --copy-to redis-0-debug --pull-secret regcred --image registry.internal.example/tools/netshoot:1 (regcred holds credentials for registry.internal.example)",
    );

    // The way out it names: a copy that carries the secret pulls and runs.
    let copy = |name: &'static str, secret: Option<&'static str>| {
        let mut args = vec![
            "redis-0",
            "-n",
            "shop",
            "--copy-to",
            name,
            "--image",
            "registry.internal.example/tools/netshoot:1",
        ];
        args.extend(secret.map(|s| ["--pull-secret", s]).into_iter().flatten());
        args.extend(["--", "sh", "-c", "echo pulled-$((6*7))"]);
        args
    };
    let out = f.podbay(&copy("redis-0-debug", Some("regcred"))).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "pulled-42");
    // Without it, the copy's own sentence says which to add.
    let out = f.podbay(&copy("redis-0-nosecret", None)).await;
    support::exits(
        &out,
        71,
        "the copy pulls with its image pull secrets (it has none). Add one with --pull-secret regcred (regcred holds credentials for registry.internal.example).",
    );
    // The kubelet's refusal is said once, in the sentence, not also as a
    // wait going on before it.
    assert!(
        !stderr(&out).contains("is waiting: ErrImagePull"),
        "{}",
        stderr(&out)
    );
}

/// A pod that names `regcred` lends it to its debug containers: the
/// private image pulls, with no warning. A debug image from a registry none
/// of the pod's secrets covers is warned of before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pods_own_pull_secret_serves_its_debugger_and_a_registry_it_misses_is_warned_of() {
    use k8s_openapi::api::core::v1::Pod;
    let f = Fixture::new(0).await;
    let pods: kube::Api<Pod> = kube::Api::namespaced(support::client(&f.sim, "sim").await, "shop");
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "private-app"},
        "spec": {
            "imagePullSecrets": [{"name": "regcred"}],
            "containers": [{"name": "app", "image": "registry.internal.example/shop/app:2",
                "command": ["sleep", "3600"]}],
        },
    }))
    .unwrap();
    pods.create(&Default::default(), &pod)
        .await
        .expect("created");
    support::eventually(20, "private-app running", || {
        let pods = pods.clone();
        async move {
            let phase = pods.get("private-app").await.ok()?.status?.phase?;
            (phase == "Running").then_some(())
        }
    })
    .await;
    let debug = |image: &'static str| {
        [
            "private-app",
            "-n",
            "shop",
            "--image",
            image,
            "--target",
            "app",
            "--",
            "sh",
            "-c",
            "echo in-$((6*7))",
        ]
    };
    let out = f
        .podbay(&debug("registry.internal.example/tools/netshoot:1"))
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "in-42");
    assert!(
        !stderr(&out).contains("holds credentials"),
        "{}",
        stderr(&out)
    );

    let out = f.podbay(&debug("ghcr.io/podbay/tools:1")).await;
    assert!(
        stderr(&out).contains(
            "podbay: none of the pod's image pull secrets (regcred) holds credentials for ghcr.io; if it is private, ghcr.io/podbay/tools:1 will not pull"
        ),
        "{}",
        stderr(&out)
    );
}

//! Panes show what happened: a log pane is a record that no container can
//! wipe, and a container without a terminal gets a line discipline from
//! its pane. The real `podbay` in a PTY against the simulator.

use crate::support;

use std::time::Duration;

use support::{PodbayScreen, args, kubeconfig, podbay_debug, start_sim};

/// A debug container that clears the screen (and the scrollback) and
/// rewrites its line with a carriage return, every second: in the `L` pane
/// the other containers' lines stay, and so does its own prefix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_that_clears_the_screen_cannot_wipe_the_others_logs() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "log-record");
    let out = podbay_debug(
        &config,
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--no-attach",
            "--",
            "sh",
            "-c",
            "while :; do printf '\\033[H\\033[2J\\033[3J\\rXX'; echo wiped; sleep 1; done",
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 40);
    support::open_pod(&screen, "redis-0").await;
    screen.keys("L").await;
    screen
        .wait_for("the debug container's lines in the L pane", |t| {
            t.contains("│ XXwiped")
        })
        .await;
    // Two more clears go by.
    screen
        .wait_for("a second line after a clear", |t| {
            t.matches("│ XXwiped").count() >= 2
        })
        .await;
    let text = screen.text();
    assert!(
        text.contains("rendering the configuration for redis"),
        "init-config's log survives the clears:\n{text}"
    );
    assert!(
        text.matches("│ XXwiped").count() >= 2,
        "every line stays, with its prefix:\n{text}"
    );
    screen.raw(b"\x02d").await;
    screen.quit().await;
    let _ = screen.child.wait().await;
    let _ = std::fs::remove_file(config);
}

/// `podbay debug -i` without `-t` (as `kubectl debug -i`): the container's
/// shell reads a pipe. Attached with `a`, the pane echoes and sends lines
/// with LF, shows each output line at the left, and shows standard error,
/// in its own colour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_without_a_tty_gets_lines_and_shows_stderr() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "no-tty");
    let out = podbay_debug(
        &config,
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "-i",
            "--no-attach",
            "--",
            "sh",
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 40);
    support::open_pod(&screen, "redis-0").await;
    screen
        .wait_for("the debug container in the pod view", |t| t.contains(&name))
        .await;
    // init-config, redis, then the debug container.
    screen.keys("jj").await;
    screen.keys("a").await;
    screen
        .wait_for("the attach", |t| {
            t.contains(&format!("attach shop/redis-0/{name}")) && t.contains("● attached")
        })
        .await;
    let line_is = |t: &str, want: &str| t.lines().any(|l| support::pane_text(l) == want);
    screen.keys("echo hi\r").await;
    screen
        .wait_for("the echo, then hi on its own line", |t| {
            line_is(t, "echo hi") && line_is(t, "hi")
        })
        .await;
    screen.keys("echo oops-$((6*7)) >&2\r").await;
    let message = "oops-42";
    screen
        .wait_for("the error, from stderr", |t| line_is(t, message))
        .await;
    let coloured = screen.with_screen(|s| {
        let (rows, cols) = s.size();
        let (rows, cols) = (rows.get(), cols.get());
        (0..rows).any(|row| {
            let line = s.contents_between(row, 0, row, cols);
            support::pane_text(&line) == message
                && (0..cols).any(|col| {
                    s.cell(row, col).is_some_and(|c| {
                        c.contents() == "o" && c.fgcolor() != vt100::Color::Default
                    })
                })
        })
    });
    assert!(
        coloured,
        "stderr is shown in its colour:\n{}",
        screen.text()
    );
    screen.raw(b"\x02d").await;
    screen.quit().await;
    let _ = screen.child.wait().await;
    let _ = std::fs::remove_file(config);
}

/// Starts a debug container on redis-0 that runs `script` without a
/// terminal; its name.
async fn debug_container(config: &std::path::Path, script: &str) -> String {
    let out = podbay_debug(
        config,
        &[
            "redis-0",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--no-attach",
            "--",
            "sh",
            "-c",
            script,
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Two containers that logged at the same time: the `L` pane shows what
/// they logged before it opened by time, interleaved, not one container's
/// lines after the other's; after `t` re-reads it, still both, by time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_all_containers_backlog_is_merged_by_time() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "log-merge");
    let script =
        |tag: &str| format!("for i in 1 2 3 4 5 6; do echo {tag}-$i; sleep 1; done; sleep 3600");
    debug_container(&config, &script("first")).await;
    debug_container(&config, &script("second")).await;
    // Both have logged all six lines.
    support::logged(&sim, "shop", "redis-0", "first-6").await;
    support::logged(&sim, "shop", "redis-0", "second-6").await;
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 40);
    support::open_pod(&screen, "redis-0").await;
    screen.keys("L").await;
    let row_of = |t: &str, needle: &str| {
        t.lines()
            .position(|l| l.ends_with(needle) || l.contains(&format!("{needle} ")))
    };
    let interleaved = |t: &str| match (row_of(t, "│ second-1"), row_of(t, "│ first-6")) {
        (Some(second), Some(first)) => second < first,
        _ => false,
    };
    screen
        .wait_for("both containers' lines, interleaved by time", |t| {
            t.contains("│ first-1") && t.contains("│ second-6") && interleaved(t)
        })
        .await;
    screen.keys("t").await;
    screen
        .wait_for("after t: both again, by time, with timestamps", |t| {
            t.contains("Z first-1") && t.contains("Z second-6") && {
                let second = t.lines().position(|l| l.contains("Z second-1"));
                let first = t.lines().position(|l| l.contains("Z first-6"));
                matches!((second, first), (Some(s), Some(f)) if s < f)
            }
        })
        .await;
    screen.raw(b"\x02d").await;
    screen.quit().await;
    let _ = screen.child.wait().await;
    let _ = std::fs::remove_file(config);
}

/// What ctrl-d does in a no-tty pane, on the protocol: the close frame
/// (`v5.channel.k8s.io`) ends a `stdinOnce` container's input, so its
/// shell exits and the attach ends; a container without `stdinOnce` keeps
/// its stdin open, as containerd does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_stdin_ends_a_stdin_once_shell_only() {
    use bytes::Bytes;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, Patch, PatchParams};
    use podbay::cluster::session::{self, SessionEvent, SessionInput, SessionSpec};
    use podbay::model::session::SessionKind;

    let sim = start_sim(0).await;
    let kube = support::client(&sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(kube.clone(), "shop");
    for (name, once) in [("once", true), ("kept", false)] {
        let patch = serde_json::json!({"spec": {"ephemeralContainers": [{
            "name": name, "image": "busybox:1.36", "command": ["sh"],
            "stdin": true, "stdinOnce": once, "tty": false
        }]}});
        pods.patch_ephemeral_containers(
            "redis-0",
            &PatchParams::default(),
            &Patch::Strategic(patch),
        )
        .await
        .unwrap();
    }
    support::debug_containers_running(&pods, "redis-0", 2, 30).await;
    for (name, once) in [("once", true), ("kept", false)] {
        let spec = SessionSpec {
            namespace: "shop".into(),
            pod: "redis-0".into(),
            container: name.into(),
            kind: SessionKind::Attach,
            size: podbay::term::Size::new(80, 24),
            keepalive: None,
            tty: false,
            stdin: true,
        };
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        let (input, inputs) = tokio::sync::mpsc::unbounded_channel();
        let _session = session::open(kube.clone(), spec, inputs, tx).await.unwrap();
        input
            .send(SessionInput::Data(Bytes::from_static(
                b"echo up-$((6*7))\n",
            )))
            .unwrap();
        let mut out = Vec::new();
        while !String::from_utf8_lossy(&out).contains("up-42") {
            match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
                Ok(Some(SessionEvent::Output(bytes))) => out.extend_from_slice(&bytes),
                other => panic!("{name}: the shell answers: {other:?}"),
            }
        }
        input.send(SessionInput::CloseStdin).unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(3), async {
            loop {
                match rx.recv().await {
                    Some(SessionEvent::Ended(end)) => return Some(end),
                    Some(_) => {}
                    None => return None,
                }
            }
        })
        .await;
        if once {
            let end = ended.expect("the stdinOnce shell read end of input and exited");
            assert_eq!(end.map(|e| e.exit_code), Some(Some(0)), "{name}");
        } else {
            assert!(
                ended.is_err(),
                "{name}: stdin stays open, the shell runs on"
            );
        }
    }
}

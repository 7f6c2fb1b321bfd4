//! The file browser: the real `podbay` in a PTY at 80×24 against the
//! simulator. Browse payments-api's distroless container, download its heap
//! dump (the same bytes as in the pod), upload a file and read it back
//! through the target's own root.

use crate::support;

use support::{PodbayScreen, args, exits_cleanly, kubeconfig, start_sim};

const POD: &str = "payments-api-66b8f7d5c9-qv8lm";

/// What a one-shot debug container that targets `api` prints for `script`.
async fn in_pod(config: &std::path::Path, script: &str) -> String {
    let out = support::podbay_debug(
        config,
        &[
            POD,
            "-n",
            "payments",
            "--target",
            "api",
            "--image",
            "busybox:1.36",
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
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heap_dump_is_browsed_to_and_downloaded_and_an_upload_reads_back() {
    if !support::namespaces_or_skip("file browser") {
        return;
    }
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "files");
    let downloads = tempfile::tempdir().unwrap();
    let settings = format!(
        "[files]\ndownload_dir = {:?}\n",
        downloads.path().display().to_string()
    );
    let mut screen =
        PodbayScreen::spawn_with_config(&args(&config, &["-n", "payments"]), 80, 24, &settings);
    screen.wait_for("payments pods", |t| t.contains(POD)).await;
    screen.keys("/qv8lm\r\r").await;
    screen
        .wait_for("the pod view", |t| t.contains("log-shipper"))
        .await;
    screen.keys("b").await;
    screen
        .wait_for("the root, through a debug container", |t| {
            t.contains("via debug container debugger-") && t.contains("var/")
        })
        .await;
    // Into /var, then dump/, by filtering to each name.
    screen.keys("/var\r\r").await;
    screen
        .wait_for("/var", |t| t.contains(" /var · ") && t.contains("dump/"))
        .await;
    screen.keys("/dump\r\r").await;
    // The service writes its dump as it starts: list again until it is there.
    let mut there = false;
    for _ in 0..40 {
        if screen.text().contains("heap.hprof") {
            there = true;
            break;
        }
        screen.keys("r").await;
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert!(there, "the heap dump is listed:\n{}", screen.text());
    screen.keys("g").await;
    screen
        .wait_for("the download done", |t| t.contains("↓ heap.hprof done"))
        .await;
    let local = downloads.path().join("heap.hprof");
    let sum = std::process::Command::new("sha256sum")
        .arg(&local)
        .output()
        .unwrap();
    let sum = String::from_utf8_lossy(&sum.stdout);
    let inside = in_pod(&config, "sha256sum /proc/1/root/var/dump/heap.hprof").await;
    assert_eq!(
        sum.split_whitespace().next(),
        inside.split_whitespace().next(),
        "the same bytes as in the pod"
    );
    // Again: the first download is kept, the second gets a name of its
    // own, and the sentence gives its whole path (it overwrote the first).
    std::fs::write(&local, "kept\n").unwrap();
    screen.keys("g").await;
    screen
        .wait_for("the second download done", |t| {
            t.matches("↓ heap.hprof done").count() == 2
        })
        .await;
    assert_eq!(std::fs::read_to_string(&local).unwrap(), "kept\n");
    let second = downloads.path().join("heap (1).hprof");
    let sum = std::process::Command::new("sha256sum")
        .arg(&second)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&sum.stdout)
            .split_whitespace()
            .next(),
        inside.split_whitespace().next(),
        "the second download, whole"
    );

    let upload = downloads.path().join("upload-me.txt");
    std::fs::write(&upload, "taken in by the file browser\n").unwrap();
    screen.keys("u").await;
    screen.keys(&upload.display().to_string()).await;
    screen.keys("\r").await;
    screen
        .wait_for("the upload listed", |t| {
            t.lines()
                .any(|l| l.starts_with(" -rw") && l.trim_end().ends_with(" upload-me.txt"))
        })
        .await;
    let read_back = in_pod(&config, "cat /proc/1/root/var/dump/upload-me.txt").await;
    assert_eq!(read_back, "taken in by the file browser\n");

    screen.keys("q").await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(&config);
}

//! Port-forwards in the TUI, at 80×24 as a person would run them: `F` on a
//! pod of the list, the form, the Forwards view (`:pf`) following the pod
//! as it is deleted twice while requests keep succeeding, the question on
//! quitting, and `x`.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::support::{self, PodbayScreen, args, kubeconfig};

/// `GET /healthz` through the forward: whether it answered 200 ok.
pub(crate) async fn healthy(port: u16) -> Result<(), String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .map_err(|e| e.to_string())?;
        let mut reply = Vec::new();
        stream
            .read_to_end(&mut reply)
            .await
            .map_err(|e| e.to_string())?;
        let reply = String::from_utf8_lossy(&reply).into_owned();
        match reply.starts_with("HTTP/1.1 200 OK") && reply.ends_with("\r\n\r\nok\n") {
            true => Ok(()),
            false => Err(format!("answered {reply:?}")),
        }
    };
    tokio::time::timeout(Duration::from_secs(40), exchange)
        .await
        .map_err(|_| "no answer in 40 s".to_string())?
}

/// The Forwards view's row for `local`: (pod now, state).
fn row(text: &str, local: &str) -> Option<(String, String)> {
    text.lines().find_map(|l| {
        let cells: Vec<&str> = l.trim_matches(['│', ' ']).split_whitespace().collect();
        (cells.first() == Some(&local)).then(|| {
            (
                cells.get(1).unwrap_or(&"").to_string(),
                cells.get(2).unwrap_or(&"").to_string(),
            )
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_started_with_f_follows_its_deployment_in_the_forwards_view() {
    if !support::namespaces_or_skip("a forward reaches into a pod's network namespace") {
        return;
    }
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "forwards");
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "payments");
    let mut screen = PodbayScreen::spawn(&args(&config, &["-n", "payments"]), 80, 24);
    screen
        .wait_for("the list", |t| {
            t.contains("payments-api-66b8f7d5c9-qv8lm") && t.contains("● live")
        })
        .await;
    screen.keys("/qv8lm\r").await;
    screen.keys("F").await;
    screen
        .wait_for("the form with the api container's port", |t| {
            t.contains("Forward a port of payments/payments-api-66b8f7d5c9-qv8lm")
                && t.contains("http")
                && t.contains("8080/TCP")
                && t.contains("container api")
        })
        .await;
    // A free local port: tab to it, clear it, 0.
    screen.keys("\t").await;
    screen.raw(b"\x7f\x7f\x7f\x7f").await;
    screen.keys("0\r").await;
    screen
        .wait_for("the forward in the header", |t| t.contains("⇄ 1 forward"))
        .await;
    screen.raw(b"\x1b").await;
    screen.keys(":pf\r").await;
    screen
        .wait_for("the forward listening", |t| {
            t.contains("forwards (1)") && t.contains("listening") && t.contains("127.0.0.1:")
        })
        .await;
    let text = screen.text();
    let local = text
        .split_whitespace()
        .map(|w| w.trim_matches('│'))
        .find(|w| w.starts_with("127.0.0.1:"))
        .expect("the local address")
        .to_string();
    let port: u16 = local["127.0.0.1:".len()..].parse().unwrap();
    healthy(port).await.expect("a first request");
    let mut reached = row(&text, &local).map(|(pod, _)| pod).unwrap_or_default();
    assert_eq!(reached, "payments-api-66b8f7d5c9-qv8lm", "{text}");

    for round in 1..=2 {
        let requests = tokio::spawn(async move {
            let mut results = Vec::new();
            for _ in 0..25 {
                results.push(healthy(port).await);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            results
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        pods.delete(&reached, &DeleteParams::default())
            .await
            .unwrap();
        let before = reached.clone();
        screen
            .wait_for_within(20, &format!("switch {round}"), |t| {
                row(t, &local).is_some_and(|(pod, state)| {
                    pod != before
                        && pod.starts_with("payments-api-66b8f7d5c9-")
                        && state == "listening"
                })
            })
            .await;
        reached = row(&screen.text(), &local).unwrap().0;
        let failed: Vec<_> = requests
            .await
            .unwrap()
            .into_iter()
            .filter(Result::is_err)
            .collect();
        assert!(failed.is_empty(), "round {round}: {failed:?}");
        let pod = pods
            .get(&reached)
            .await
            .expect("the pod reached now exists");
        assert!(pod.metadata.deletion_timestamp.is_none());
    }
    assert!(
        ![
            "payments-api-66b8f7d5c9-qv8lm",
            "payments-api-66b8f7d5c9-zr4kd"
        ]
        .contains(&reached.as_str()),
        "the second switch reached the pod the ReplicaSet made: {reached}"
    );

    // Quitting asks while the forward runs; no keeps it.
    screen.keys("q").await;
    screen
        .wait_for("the question", |t| {
            t.contains("a forward is open") && t.contains("Quit? y/n")
        })
        .await;
    screen.keys("n").await;
    // x stops it: the row goes, the header forgets it, the port closes.
    screen.keys("x").await;
    screen
        .wait_for("the forward stopped", |t| {
            t.contains("forwards (0)") && !t.contains("⇄ 1 forward")
        })
        .await;
    support::eventually(10, "the local port closed", || async move {
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
            .then_some(())
    })
    .await;
    screen.keys("q").await;
    support::exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(&config);
}

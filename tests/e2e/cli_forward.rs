//! `podbay port-forward` (the real binary against the simulator): a forward
//! to a Deployment that keeps its local port while its pods are deleted, the
//! lines it prints, half-closes and many connections at once, and one
//! sentence for each way it cannot forward.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::process::Child;

use crate::support;

use support::DebugFixture as Fixture;

/// A running `podbay port-forward`, its stdout read line by line.
struct Forward {
    child: Child,
    lines: tokio::sync::mpsc::UnboundedReceiver<String>,
    seen: Vec<String>,
    _home: support::tempdir::TempHome,
}

impl Forward {
    fn start(f: &Fixture, args: &[&str]) -> Forward {
        let home = support::tempdir::temp_home("forward");
        let mut child = support::podbay_command("port-forward", &f.kubeconfig, args, home.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("podbay runs");
        let (tx, lines) = tokio::sync::mpsc::unbounded_channel();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        for stream in [
            Box::new(stdout) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
            Box::new(stderr),
        ] {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stream).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let _ = tx.send(line);
                }
            });
        }
        Forward {
            child,
            lines,
            seen: Vec::new(),
            _home: home,
        }
    }

    /// The first line (from now on, or already seen) that `matches`.
    async fn line(&mut self, what: &str, matches: impl Fn(&str) -> bool) -> String {
        if let Some(line) = self.seen.iter().find(|l| matches(l)) {
            return line.clone();
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                _ => panic!("no line {what} in {:#?}", self.seen),
            }
        }
    }

    /// Lines printed so far, without waiting.
    fn drain(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
    }

    /// The local port of `Forwarding from 127.0.0.1:PORT -> remote`.
    async fn local_port(&mut self, remote: u16) -> u16 {
        let suffix = format!(" -> {remote}");
        let line = self
            .line("Forwarding from", |l| {
                l.starts_with("Forwarding from 127.0.0.1:") && l.ends_with(&suffix)
            })
            .await;
        line["Forwarding from 127.0.0.1:".len()..line.len() - suffix.len()]
            .parse()
            .unwrap()
    }
}

/// One HTTP request through the forward; the status code and body.
async fn get(port: u16, path: &str) -> Result<(u16, Vec<u8>), String> {
    let exchange = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .write_all(
                format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
            )
            .await
            .map_err(|e| e.to_string())?;
        let mut reply = Vec::new();
        stream
            .read_to_end(&mut reply)
            .await
            .map_err(|e| e.to_string())?;
        parse_reply(&reply)
    };
    tokio::time::timeout(Duration::from_secs(40), exchange)
        .await
        .map_err(|_| "no answer in 40 s".to_string())?
}

fn parse_reply(reply: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let head_end = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("not HTTP: {:?}", String::from_utf8_lossy(reply)))?;
    let head = String::from_utf8_lossy(&reply[..head_end]);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("no status")?;
    Ok((status, reply[head_end + 4..].to_vec()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_forward_keeps_its_port_while_its_pods_are_deleted_twice() {
    if !support::namespaces_or_skip("a forward reaches into a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let pods: Api<Pod> = Api::namespaced(support::client(&f.sim, "sim").await, "payments");
    let mut forward = Forward::start(&f, &["-n", "payments", "deploy/payments-api", "0:8080"]);
    let port = forward.local_port(8080).await;
    let first = forward
        .line("forwarding to", |l| {
            l.starts_with("forwarding to payments/")
        })
        .await;
    let mut current = first["forwarding to payments/".len()..].to_string();
    let (status, metrics) = get(port, "/metrics").await.expect("a first request");
    assert_eq!(status, 200);
    assert!(
        String::from_utf8_lossy(&metrics).contains("# TYPE http_requests_total counter"),
        "{}",
        String::from_utf8_lossy(&metrics)
    );
    let mut reached = vec![current.clone()];
    for round in 1..=2 {
        // Requests keep coming while the pod is deleted.
        let requests = tokio::spawn(async move {
            let mut results = Vec::new();
            for _ in 0..30 {
                let sent = Instant::now();
                results.push((sent, get(port, "/healthz").await));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            results
        });
        tokio::time::sleep(Duration::from_millis(400)).await;
        let deleted_at = Instant::now();
        pods.delete(&current, &DeleteParams::default())
            .await
            .expect("the pod is deleted");
        let switched = forward
            .line(&format!("switch {round}"), |l| {
                l.starts_with("now forwarding to payments/")
                    && !reached.iter().any(|r| l.ends_with(r.as_str()))
            })
            .await;
        let switch_took = deleted_at.elapsed();
        let next = switched["now forwarding to payments/".len()..].to_string();
        let pod = pods.get(&next).await.expect("the pod switched to exists");
        assert!(
            next.starts_with("payments-api-66b8f7d5c9-")
                && pod.metadata.deletion_timestamp.is_none(),
            "{next}"
        );
        assert!(switch_took < Duration::from_secs(10), "{switch_took:?}");
        let results = requests.await.unwrap();
        let failed: Vec<_> = results
            .iter()
            .filter(|(_, r)| !matches!(r, Ok((200, body)) if body == b"ok\n"))
            .collect();
        assert!(
            failed.is_empty(),
            "round {round}: every request succeeds through the switch ({} of {}): {failed:?}; lines {:#?}",
            failed.len(),
            results.len(),
            forward.seen
        );
        reached.push(next.clone());
        current = next;
    }
    // The second switch reached a pod the ReplicaSet made after the first
    // deletion: a new name.
    let all: Vec<String> = pods
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert!(
        ![
            "payments-api-66b8f7d5c9-qv8lm",
            "payments-api-66b8f7d5c9-zr4kd"
        ]
        .contains(&current.as_str()),
        "reached a replacement: {current} among {all:?}"
    );
    forward.drain();
    assert!(
        forward.child.try_wait().unwrap().is_none(),
        "still forwarding: {:#?}",
        forward.seen
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_closes_large_answers_and_many_connections_at_once_go_through() {
    if !support::namespaces_or_skip("a forward reaches into a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let mut forward = Forward::start(
        &f,
        &[
            "-n",
            "payments",
            "pod/payments-api-66b8f7d5c9-zr4kd",
            "0:http",
        ],
    );
    let port = forward.local_port(8080).await;
    // The pod named is the one reached, not its owner's longest-running.
    forward
        .line("the pod named", |l| {
            l == "forwarding to payments/payments-api-66b8f7d5c9-zr4kd"
        })
        .await;
    // A client that says it is done sending still gets its answer.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(b"GET /slow?ms=300 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    stream.shutdown().await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut reply))
        .await
        .expect("the answer comes after a half-close")
        .unwrap();
    assert_eq!(
        parse_reply(&reply).unwrap(),
        (200, b"slept 300ms\n".to_vec())
    );
    // 30 at once, as a browser opens them, each 1 MiB.
    let many: Vec<_> = (0..30)
        .map(|_| tokio::spawn(async move { get(port, "/bytes/1048576").await }))
        .collect();
    for (i, one) in many.into_iter().enumerate() {
        let (status, body) = one
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("connection {i}: {e}"));
        assert_eq!((status, body.len()), (200, 1 << 20), "connection {i}");
    }
    // 64 MiB through one connection arrive whole.
    let (status, body) = get(port, "/bytes/67108864").await.unwrap();
    assert_eq!((status, body.len()), (200, 64 << 20));
}

/// `svc/NAME` as kubectl resolves it: the Service's port 80 is its pods'
/// port named http (8080), the local port the Service's unless given; a
/// headless Service's port is its pods' as it is; a Service whose selector
/// matches no pod says so while a connection waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_forward_reaches_its_pods_through_the_services_ports() {
    if !support::namespaces_or_skip("a forward reaches into a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let mut web = Forward::start(&f, &["-n", "shop", "svc/storefront", "0:80"]);
    let port = web.local_port(8080).await;
    let reached = web
        .line("the pod reached", |l| {
            l.starts_with("forwarding to shop/storefront-")
        })
        .await;
    let (status, body) = get(port, "/healthz").await.expect("an answer");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));

    // The pod reached is deleted while requests keep coming: the forward
    // moves to another of the Service's pods, at most one request lost.
    let first = reached["forwarding to shop/".len()..].to_string();
    let requests = tokio::spawn(async move {
        let mut results = Vec::new();
        for _ in 0..30 {
            results.push(get(port, "/healthz").await);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        results
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let pods: Api<Pod> = Api::namespaced(support::client(&f.sim, "sim").await, "shop");
    pods.delete(&first, &DeleteParams::default())
        .await
        .expect("the pod is deleted");
    let switched = web
        .line("the switch", |l| {
            l.starts_with("now forwarding to shop/storefront-") && !l.ends_with(first.as_str())
        })
        .await;
    let results = requests.await.unwrap();
    let failed = results
        .iter()
        .filter(|r| !matches!(r, Ok((200, body)) if body == b"ok\n"))
        .count();
    assert!(
        failed <= 1,
        "{failed} of {} requests failed through the switch ({switched}): {results:?}",
        results.len()
    );

    // By the Service port's name; headless redis answers on its own port.
    let mut redis = Forward::start(&f, &["-n", "shop", "svc/redis", "0:redis"]);
    let port = redis.local_port(6379).await;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(b"PING\r\n").await.unwrap();
    let mut answer = [0u8; 7];
    tokio::time::timeout(Duration::from_secs(30), stream.read_exact(&mut answer))
        .await
        .expect("redis answers")
        .unwrap();
    assert_eq!(&answer, b"+PONG\r\n");

    // checkout selects no pod: said, while the port stays open.
    let mut checkout = Forward::start(&f, &["-n", "shop", "svc/checkout", "0:80"]);
    checkout.local_port(8080).await;
    checkout
        .line("no pod matches", |l| {
            l.contains("none in shop matches app.kubernetes.io/name=checkout")
        })
        .await;
    assert!(checkout.child.try_wait().unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_forwarded_is_one_sentence() {
    let f = Fixture::new(0).await;
    let home = support::tempdir::temp_home("forward-usage");
    let run = |args: &[&str]| {
        let command =
            support::podbay_command("port-forward", &f.kubeconfig, args, home.path()).output();
        async move {
            let out = tokio::time::timeout(Duration::from_secs(60), command)
                .await
                .expect("podbay ends")
                .unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
    };
    let (code, stderr) = run(&["-n", "shop", "redis-0", "6379", "--address", "0.0.0.0"]).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("give --address 0.0.0.0 twice"), "{stderr}");
    let (code, stderr) = run(&["-n", "shop", "redis-9", "6379"]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("pod redis-9 not found in namespace shop"),
        "{stderr}"
    );
    let (code, stderr) = run(&["-n", "shop", "redis-0", "0:metrics"]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("declares no port named metrics (it has redis (6379))"),
        "{stderr}"
    );
    // A Service's port it does not declare, by number and by name; one
    // that does not exist.
    let (code, stderr) = run(&["-n", "shop", "svc/storefront", "8080"]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr
            .contains("service storefront has no port 8080 (it has 80 (http)); give one of those"),
        "{stderr}"
    );
    let (code, stderr) = run(&["-n", "shop", "svc/storefront", "grpc"]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("has no port grpc"), "{stderr}");
    // A local port taken: the hint is in the Service's port, as given.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port();
    let mapping = format!("{busy}:80");
    let (code, stderr) = run(&["-n", "shop", "svc/storefront", &mapping]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("something else listens there")
            && stderr.contains(&format!(
                "({}:80), or 0:80 for a free one",
                busy.saturating_add(1).max(1024)
            )),
        "{stderr}"
    );
    let (code, stderr) = run(&["-n", "shop", "svc/nope", "80"]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("svc/nope not found in namespace shop"),
        "{stderr}"
    );

    if !support::namespaces_or_skip("a forward reaches into a pod's network namespace") {
        return;
    }
    // Nothing listens on the port: the connection closes at once (not
    // after the 30 s a connection waits for a pod), the sentence says why,
    // the forward goes on.
    let mut forward = Forward::start(&f, &["-n", "shop", "redis-0", "0:7777"]);
    let port = forward.local_port(7777).await;
    for _ in 0..2 {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(b"hello").await.unwrap();
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest))
            .await
            .expect("a refused port closes the connection at once")
            .unwrap_or_default();
        assert!(rest.is_empty());
    }
    forward
        .line("the refusal", |l| {
            l.contains("nothing accepts connections on port 7777 in the pod (connection refused)")
        })
        .await;
    assert!(forward.child.try_wait().unwrap().is_none());

    // A pod with no owner to bring it back (as `kubectl run` makes one)
    // ends the forward.
    use podbay::sim::store::{Key, Kind};
    let store = f.sim.store();
    let mut lone = store
        .get(Kind::Pod, &Key::new("shop", "redis-0"))
        .unwrap()
        .value();
    lone["metadata"]["name"] = "scratch".into();
    lone["metadata"]["uid"] = "5f0c3b1e-0000-4000-8000-00000000beef".into();
    lone["metadata"]["ownerReferences"] = serde_json::json!([]);
    store
        .create(Kind::Pod, Key::new("shop", "scratch"), lone)
        .unwrap();
    let mut alone = Forward::start(&f, &["-n", "shop", "scratch", "0:6379"]);
    alone.local_port(6379).await;
    let pods: Api<Pod> = Api::namespaced(support::client(&f.sim, "sim").await, "shop");
    pods.delete("scratch", &DeleteParams::default())
        .await
        .unwrap();
    alone
        .line("the end", |l| l.contains("has no owner to replace it"))
        .await;
    let status = tokio::time::timeout(Duration::from_secs(20), alone.child.wait())
        .await
        .expect("the forward ends")
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

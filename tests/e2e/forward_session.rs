//! A forward's session to a pod (SPDY in a WebSocket, as kubectl since
//! 1.31): many connections in one, a client's half-close reaching the pod,
//! the kubelet's error said, a refusal answered; and where a server does
//! not take the protocol, each connection a WebSocket of its own.

use std::time::Duration;

use podbay::cluster::tunnel::{self, Connect, Tunnel};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::support::{self, hostile, hostile::Hostile, hostile::Reply};

/// `request` to `port` through `tunnel`, then the client's end: all the
/// pod answered before it ended its side, and the kubelet's error.
async fn exchange(tunnel: &Tunnel, port: u16, request: &[u8]) -> (Vec<u8>, Option<String>) {
    let mut stream = tunnel
        .open(port)
        .await
        .expect("the session takes a connection");
    stream.io.write_all(request).await.unwrap();
    stream.io.shutdown().await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.io.read_to_end(&mut answer))
        .await
        .expect("the pod ends its side once the client has ended its own")
        .unwrap();
    let error = tokio::time::timeout(Duration::from_secs(20), stream.error)
        .await
        .expect("the kubelet closes the error stream")
        .unwrap_or_default();
    (answer, error)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_carries_many_connections_each_ended_by_its_client() {
    if !support::namespaces_or_skip("a forward reaches into a pod's network namespace") {
        return;
    }
    let sim = support::start_sim(0).await;
    let client = support::client(&sim, "sim").await;
    let Connect::Open(tunnel) = tunnel::connect(&client, "shop", "redis-0").await.unwrap() else {
        panic!("the simulator serves SPDY in a WebSocket");
    };
    // redis answers each command and ends only when its client has: the
    // answer ends because the half-close reached it.
    let asked = (0..20).map(|_| exchange(&tunnel, 6379, b"PING\r\n"));
    for (answer, error) in futures::future::join_all(asked).await {
        assert_eq!(String::from_utf8_lossy(&answer), "+PONG\r\n");
        assert_eq!(error, None, "nothing went wrong");
    }
    // A port nothing listens on: no bytes, and the kubelet's words.
    let (answer, error) = exchange(&tunnel, 6380, b"PING\r\n").await;
    assert!(answer.is_empty(), "{answer:?}");
    let error = error.expect("the kubelet says why");
    assert!(
        error.contains("failed to connect to localhost:6380"),
        "{error}"
    );
    // Still one session: the next connection goes through it.
    let (answer, _) = exchange(&tunnel, 6379, b"PING\r\n").await;
    assert_eq!(answer, b"+PONG\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_to_a_pod_one_may_not_forward_to_is_refused_with_the_servers_words() {
    let server = Hostile::start(|r| match r.path.as_str() {
        "/version" => hostile::version(),
        p if p.ends_with("/portforward") => Reply::failure(
            403,
            "Forbidden",
            "pods \"web-1\" is forbidden: User \"dev\" cannot create resource \"pods/portforward\" in API group \"\" in the namespace \"shop\"",
        ),
        _ => Reply::failure(404, "NotFound", "not here"),
    })
    .await;
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(server.kubeconfig("session-refused")).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    match tunnel::connect(&client, "shop", "web-1").await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403);
            assert!(
                status.message.contains("cannot create resource"),
                "{status:?}"
            );
        }
        Err(e) => panic!("the server's refusal, not {e}"),
        Ok(_) => panic!("refused"),
    }
}

/// A server that does not take SPDY in a WebSocket (an API server before
/// 1.31) refuses the upgrade: each connection goes in a WebSocket of its
/// own (the channel protocol), and the session is not asked for again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_the_server_refuses_the_session_each_connection_has_its_own_websocket() {
    let ready = || {
        let mut pod = hostile::pod("web-1");
        pod["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        pod
    };
    let server = Hostile::start(move |r| match r.path.as_str() {
        "/version" => hostile::version(),
        p if p.ends_with("/portforward") => {
            let offered = r.header("sec-websocket-protocol").unwrap_or_default();
            if offered.contains(tunnel::PROTOCOL) {
                Reply::failure(
                    400,
                    "BadRequest",
                    "unable to upgrade: requested protocol(s) are not supported",
                )
            } else {
                // The channel protocol: each channel's port first (8080,
                // little-endian), then the pod's bytes.
                Reply::websocket(vec![
                    vec![0, 0x90, 0x1f],
                    vec![1, 0x90, 0x1f],
                    [&[0u8][..], b"hello from the pod"].concat(),
                ])
            }
        }
        p if p.ends_with("/pods/web-1") => Reply::json(200, &ready()),
        _ if r.is_watch() => Reply::raw(200, "application/json", Vec::new()).then_stall(),
        _ if r.is_list_of("pods") => hostile::list("PodList", vec![ready()]),
        _ => Reply::failure(404, "NotFound", "not here"),
    })
    .await;
    let (mut child, port) = hostile::forward_web_1(&server, "session-unsupported").await;
    for _ in 0..2 {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        stream.write_all(b"GET / HTTP/1.0\r\n\r\n").await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer))
            .await
            .expect("the connection ends")
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&answer), "hello from the pod");
    }
    let asked = |spdy: bool| {
        server.count(|r| {
            r.path.ends_with("/portforward")
                && r.header("sec-websocket-protocol")
                    .unwrap_or_default()
                    .contains(tunnel::PROTOCOL)
                    == spdy
        })
    };
    assert_eq!(asked(true), 1, "the session was asked for once");
    assert_eq!(asked(false), 2, "a WebSocket per connection");
    let _ = child.kill().await;
}

/// A session whose server sends what is no SPDY frame (a control frame of
/// version 2): the connection in it is told the session broke, and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_breaks_on_a_bad_frame_says_why_to_its_connections() {
    let server = Hostile::start(|r| match r.path.as_str() {
        "/version" => hostile::version(),
        p if p.ends_with("/portforward") => {
            Reply::websocket(vec![vec![0x80, 0x02, 0x00, 0x06, 0, 0, 0, 4, 0, 0, 0, 1]])
                .answering()
                .then_stall()
        }
        _ => Reply::failure(404, "NotFound", "not here"),
    })
    .await;
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(server.kubeconfig("session-garbage")).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let Connect::Open(tunnel) = tunnel::connect(&client, "shop", "web-1").await.unwrap() else {
        panic!("the server agreed to the protocol");
    };
    let (answer, error) = exchange(&tunnel, 8080, b"GET / HTTP/1.0\r\n\r\n").await;
    assert!(answer.is_empty());
    assert_eq!(
        error.as_deref(),
        Some("the session broke (unsupported SPDY version 2)")
    );
}

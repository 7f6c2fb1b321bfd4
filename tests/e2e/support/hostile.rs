//! A hostile Kubernetes API server for tests: plain HTTP on loopback, one
//! request per connection, each answered by the test's own function, which
//! may lie, stall, flood or redirect. Every request is logged with its time.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: String,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn is_watch(&self) -> bool {
        self.query
            .split('&')
            .any(|p| p == "watch=true" || p == "watch=1")
    }

    /// `GET` of a collection of `plural` (list or watch).
    /// A list of the core or a workload group's `plural` (not the
    /// metrics API's pods and nodes, which a hostile server here does not
    /// serve).
    pub fn is_list_of(&self, plural: &str) -> bool {
        self.method == "GET"
            && self.path.ends_with(&format!("/{plural}"))
            && !self.path.starts_with("/apis/metrics.k8s.io/")
    }
}

/// What to send after the head.
pub enum Body {
    Bytes(Vec<u8>),
    /// `chunk`, `times` times: a flood without holding it in memory.
    Repeat {
        chunk: Vec<u8>,
        times: usize,
    },
}

/// What happens once the body is sent.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Then {
    Close,
    /// Keep the connection open and send nothing more.
    Stall,
    /// A websocket: keep it open, sending a ping and an empty stdout frame
    /// this often, and never a byte of payload.
    Keepalive(std::time::Duration),
}

pub struct Reply {
    /// `None`: send nothing at all, not even a head (a server that hangs).
    status: Option<u16>,
    /// Upgrade to a websocket (the first protocol offered) and send these
    /// binary messages, each a channel byte and its payload, then close.
    websocket: Option<Vec<Vec<u8>>>,
    /// A websocket's messages wait for the client's first one.
    answers: bool,
    headers: Vec<(String, String)>,
    body: Body,
    then: Then,
}

impl Reply {
    pub fn json(status: u16, value: &Value) -> Reply {
        Reply::raw(status, "application/json", value.to_string().into_bytes())
    }

    pub fn raw(status: u16, content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status: Some(status),
            headers: vec![("Content-Type".into(), content_type.into())],
            body: Body::Bytes(body),
            then: Then::Close,
            websocket: None,
            answers: false,
        }
    }

    /// A remote-command stream that sends `messages` and closes.
    pub fn websocket(messages: Vec<Vec<u8>>) -> Reply {
        Reply {
            websocket: Some(messages),
            ..Reply::raw(101, "", Vec::new())
        }
    }

    /// A `Status` failure as the apiserver sends it.
    pub fn failure(code: u16, reason: &str, message: &str) -> Reply {
        Reply::json(
            code,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": message, "reason": reason, "code": code}),
        )
    }

    pub fn flood(status: u16, chunk: Vec<u8>, times: usize) -> Reply {
        Reply {
            body: Body::Repeat { chunk, times },
            ..Reply::raw(status, "application/json", Vec::new())
        }
    }

    /// Accept the connection, then never answer.
    pub fn hang() -> Reply {
        Reply {
            status: None,
            then: Then::Stall,
            ..Reply::raw(200, "", Vec::new())
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A websocket whose messages go once the client has sent one (a
    /// server that answers what it is asked).
    pub fn answering(mut self) -> Reply {
        self.answers = true;
        self
    }

    pub fn then_stall(mut self) -> Reply {
        self.then = Then::Stall;
        self
    }

    pub fn then_keepalive(mut self, every: std::time::Duration) -> Reply {
        self.then = Then::Keepalive(every);
        self
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

pub struct Hostile {
    pub addr: std::net::SocketAddr,
    log: Arc<Mutex<Vec<(Instant, Request)>>>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl Hostile {
    pub async fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let handler: Arc<Handler> = Arc::new(handler);
        let server_log = log.clone();
        tokio::spawn(async move {
            let mut stopped_accepting = stopped.clone();
            loop {
                let socket = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((socket, _)) => socket,
                        Err(_) => continue,
                    },
                    _ = stopped_accepting.changed() => return,
                };
                let (handler, log) = (handler.clone(), server_log.clone());
                let mut stopped = stopped.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = serve(socket, &*handler, &log) => {}
                        _ = stopped.changed() => {}
                    }
                });
            }
        });
        Hostile { addr, log, stop }
    }

    /// How many requests so far satisfy `matches`.
    pub fn count(&self, matches: impl Fn(&Request) -> bool) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, r)| matches(r))
            .count()
    }

    /// Every request so far, as `METHOD path?query`.
    pub fn requests(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|(_, r)| format!("{} {}?{}", r.method, r.path, r.query))
            .collect()
    }

    /// A kubeconfig whose one context, `hostile`, points here (namespace
    /// `shop`, a bearer token).
    pub fn kubeconfig(&self, tag: &str) -> std::path::PathBuf {
        let config = json!({
            "apiVersion": "v1", "kind": "Config", "current-context": "hostile",
            "clusters": [{"name": "hostile", "cluster": {"server": format!("http://{}", self.addr)}}],
            "users": [{"name": "someone", "user": {"token": "t0ken"}}],
            "contexts": [{"name": "hostile", "context": {"cluster": "hostile", "user": "someone", "namespace": "shop"}}],
        });
        let path = std::env::temp_dir().join(format!(
            "podbay-hostile-{tag}-{}-{}.kubeconfig",
            std::process::id(),
            self.addr.port()
        ));
        std::fs::write(&path, config.to_string()).expect("kubeconfig");
        path
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

async fn serve(mut socket: TcpStream, handler: &Handler, log: &Mutex<Vec<(Instant, Request)>>) {
    let _ = socket.set_nodelay(true);
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    log.lock().unwrap().push((Instant::now(), request.clone()));
    let reply = handler(&request);
    if let Some(messages) = reply.websocket {
        return websocket(socket, &request, (messages, reply.answers), reply.then).await;
    }
    if let Some(status) = reply.status {
        let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
        for (name, value) in &reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("Connection: close\r\n\r\n");
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let sent = match &reply.body {
            Body::Bytes(bytes) => socket.write_all(bytes).await,
            Body::Repeat { chunk, times } => {
                let mut result = Ok(());
                for _ in 0..*times {
                    result = socket.write_all(chunk).await;
                    if result.is_err() {
                        break;
                    }
                }
                result
            }
        };
        if sent.is_err() {
            return;
        }
    }
    match reply.then {
        Then::Close => {
            let _ = socket.shutdown().await;
        }
        Then::Stall | Then::Keepalive(_) => std::future::pending::<()>().await,
    }
}

async fn websocket(
    mut socket: TcpStream,
    request: &Request,
    (messages, answers): (Vec<Vec<u8>>, bool),
    then: Then,
) {
    use futures::SinkExt as _;
    use tokio_tungstenite::tungstenite::{Message, handshake::derive_accept_key, protocol::Role};
    let key = request.header("sec-websocket-key").unwrap_or_default();
    let protocol = request
        .header("sec-websocket-protocol")
        .and_then(|p| p.split(',').next())
        .unwrap_or_default()
        .trim()
        .to_string();
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n",
        derive_accept_key(key.as_bytes())
    );
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let mut stream =
        tokio_tungstenite::WebSocketStream::from_raw_socket(socket, Role::Server, None).await;
    if answers {
        use futures::StreamExt as _;
        let _ = stream.next().await;
    }
    for message in messages {
        if stream.send(Message::Binary(message.into())).await.is_err() {
            return;
        }
    }
    match then {
        Then::Close => {
            let _ = stream.close(None).await;
        }
        Then::Stall => std::future::pending::<()>().await,
        Then::Keepalive(every) => loop {
            tokio::time::sleep(every).await;
            let ping = stream.send(Message::Ping(Vec::new().into())).await;
            let empty = stream.send(Message::Binary(vec![1u8].into())).await;
            if ping.is_err() || empty.is_err() {
                return;
            }
        },
    }
}

/// The request line and headers; a body (PATCH) is read by Content-Length.
async fn read_request(socket: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = buf[end..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let mut words = head.lines().next()?.split_whitespace();
    let method = words.next()?.to_string();
    let target = words.next()?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(Request {
        method,
        path: path.to_string(),
        query: query.to_string(),
        headers,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        302 => "Found",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Whatever",
    }
}

/// `GET /version` as a 1.35 apiserver answers.
pub fn version() -> Reply {
    Reply::json(
        200,
        &json!({"major": "1", "minor": "35", "gitVersion": "v1.35.0", "platform": "linux/amd64"}),
    )
}

/// A list of `kind` (`PodList`, `EventList`) with these items.
pub fn list(kind: &str, items: Vec<Value>) -> Reply {
    Reply::json(
        200,
        &json!({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "7"}, "items": items}),
    )
}

/// A running one-container pod in `shop`, with `name` as its name.
pub fn pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{}", name.len()),
            "resourceVersion": "7", "creationTimestamp": "2026-11-01T00:00:00Z"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "shop/app:1"}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "app", "ready": true,
            "restartCount": 0, "image": "shop/app:1", "imageID": "", "containerID": "containerd://1",
            "state": {"running": {"startedAt": "2026-11-01T00:00:00Z"}}}]}
    })
}

/// `podbay port-forward -n shop web-1 0:8080` against `server`, its stdout
/// and stderr piped: the forwarder, once it says the local port it
/// listens on (within 30 s), and that port.
pub async fn forward_web_1(server: &Hostile, tag: &str) -> (tokio::process::Child, u16) {
    use tokio::io::{AsyncBufReadExt as _, BufReader};
    let config = server.kubeconfig(tag);
    let home = super::tempdir::temp_home(tag);
    let mut child = super::podbay_command(
        "port-forward",
        &config,
        &["-n", "shop", "web-1", "0:8080"],
        home.path(),
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let port = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let line = stdout.next_line().await.unwrap().expect("a line");
            if let Some(rest) = line.strip_prefix("Forwarding from 127.0.0.1:") {
                return rest.split(' ').next().unwrap().parse().unwrap();
            }
        }
    })
    .await
    .expect("the forward listens");
    // Its later lines are read and let go (a full pipe would stop it).
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    (child, port)
}

//! One SPDY/3.1 session to a pod's `portforward`, carried in a WebSocket
//! (`SPDY/3.1+portforward.k8s.io`, as kubectl speaks it since 1.31), over
//! which every connection a forward sends to that pod is a pair of streams,
//! as the kubelet's `httpstream` serves them: one for its bytes, one for
//! the kubelet's error. Any number of connections share one TLS connection
//! and one WebSocket, and a client's half-close reaches the pod (a FIN on
//! its data stream), which the channel protocol cannot say.

use std::collections::HashMap;

use bytes::Bytes;
use futures::{SinkExt as _, StreamExt as _};
use http::header::{
    CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL,
    SEC_WEBSOCKET_VERSION, UPGRADE,
};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::{client::generate_key, derive_accept_key};
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::spdy::{self, Decoder, Encoder, Frame};

/// The WebSocket subprotocol: SPDY's bytes in binary messages.
pub const PROTOCOL: &str = "SPDY/3.1+portforward.k8s.io";
/// What a connection's bytes wait in, each way, between its socket and
/// the session.
const BUFFER: usize = 64 << 10;
/// The largest DATA frame sent (kubectl's).
const MAX_DATA: usize = 32 << 10;
/// A connection's error when the session ended before the kubelet took
/// it (its streams were never sent, or come after the last one the
/// kubelet's GOAWAY says it took): nothing reached the pod, so what its
/// client sent may go to another.
pub const NOT_TAKEN: &str = "the session ended before the kubelet took the connection";

/// A session to one pod. Dropped (every clone), it ends once its streams
/// have.
#[derive(Clone)]
pub struct Tunnel {
    opens: mpsc::Sender<Open>,
}

/// A connection for the session to open: its port, the session's side of
/// its bytes, and where the kubelet's error goes.
struct Open {
    port: u16,
    io: DuplexStream,
    error: oneshot::Sender<Option<String>>,
}

/// One connection through a session.
pub struct Stream {
    /// The pod's port: what is written reaches it, its answer is read;
    /// shutting down the write side tells the pod the client is done.
    pub io: DuplexStream,
    /// What the kubelet wrote on the error stream by the time it closed
    /// it (`None`: nothing, the connection went well), or why the session
    /// ended first.
    pub error: oneshot::Receiver<Option<String>>,
}

/// What the server made of the request for a session.
pub enum Connect {
    Open(Tunnel),
    /// It does not speak the protocol (an API server before 1.31, a proxy
    /// that does not pass it): a connection a WebSocket is the way there.
    Unsupported,
}

/// Opens a session to `pod`. A refusal of who asks or of the pod (401,
/// 403, 404) is the server's answer; any other refusal of the upgrade
/// means it does not take the protocol.
pub async fn connect(
    client: &kube::Client,
    namespace: &str,
    pod: &str,
) -> Result<Connect, kube::Error> {
    let key = generate_key();
    let request = http::Request::get(format!(
        "/api/v1/namespaces/{namespace}/pods/{pod}/portforward"
    ))
    .header(CONNECTION, "Upgrade")
    .header(UPGRADE, "websocket")
    .header(SEC_WEBSOCKET_VERSION, "13")
    .header(SEC_WEBSOCKET_KEY, &key)
    .header(SEC_WEBSOCKET_PROTOCOL, PROTOCOL)
    .body(kube::client::Body::empty())
    .map_err(kube::Error::HttpError)?;
    let response = client.send(request).await?;
    let code = response.status().as_u16();
    if code != 101 {
        if matches!(code, 401 | 403 | 404) {
            use http_body_util::BodyExt as _;
            // The body is capped under kube, as every answer is.
            let body = response.into_body().collect().await?.to_bytes();
            return Err(super::errors::api_error(code, &body));
        }
        return Ok(Connect::Unsupported);
    }
    let agreed = {
        let said = |name| response.headers().get(name).and_then(|v| v.to_str().ok());
        said(SEC_WEBSOCKET_PROTOCOL) == Some(PROTOCOL)
            && said(SEC_WEBSOCKET_ACCEPT) == Some(derive_accept_key(key.as_bytes()).as_str())
    };
    if !agreed {
        return Ok(Connect::Unsupported);
    }
    let upgraded = hyper::upgrade::on(response).await.map_err(|e| {
        kube::Error::UpgradeConnection(kube::client::UpgradeConnectionError::GetPendingUpgrade(e))
    })?;
    let socket = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Client, None).await;
    let (opens, requests) = mpsc::channel(64);
    tokio::spawn(session(socket, requests));
    Ok(Connect::Open(Tunnel { opens }))
}

impl Tunnel {
    /// A connection to `port`, which the session opens next (there is no
    /// round trip to wait for: the client's first bytes follow its
    /// streams); `None` once the session has ended.
    pub async fn open(&self, port: u16) -> Option<Stream> {
        let (ours, theirs) = tokio::io::duplex(BUFFER);
        let (error, said) = oneshot::channel();
        let open = Open {
            port,
            io: ours,
            error,
        };
        self.opens.send(open).await.ok()?;
        Some(Stream {
            io: theirs,
            error: said,
        })
    }
}

struct ErrorStream {
    text: Vec<u8>,
    reply: oneshot::Sender<Option<String>>,
    /// Its connection's data stream.
    data: u32,
}

async fn session<S>(socket: WebSocketStream<S>, mut opens: mpsc::Receiver<Open>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut incoming) = socket.split();
    // The session's own frames (streams opened, pings answered) never wait
    // behind the connections' bytes, and never hold up its reading: a new
    // connection's first byte is not late behind a bulk transfer, and two
    // ends both writing cannot each wait for the other to read.
    let (control, mut control_out) = mpsc::unbounded_channel::<Vec<u8>>();
    let (frames, mut frames_out) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(async move {
        loop {
            let frame = tokio::select! {
                biased;
                Some(frame) = control_out.recv() => frame,
                Some(frame) = frames_out.recv() => frame,
                else => break,
            };
            if sink.send(Message::Binary(frame.into())).await.is_err() {
                return;
            }
        }
        let _ = sink.close().await;
    });
    let mut encoder = Encoder::new();
    let mut decoder = Decoder::new();
    let mut next_stream = 1u32;
    let mut next_request = 0u64;
    // Each connection's data stream, and where the pod's bytes go (let go
    // at the pod's FIN).
    let mut connections: HashMap<u32, mpsc::Sender<Bytes>> = HashMap::new();
    let mut errors: HashMap<u32, ErrorStream> = HashMap::new();
    let mut wanted = true;
    let send = |frame: Vec<u8>| control.send(frame).is_ok();
    let ended: String = 'session: loop {
        if !wanted && connections.is_empty() && errors.is_empty() {
            break String::new();
        }
        tokio::select! {
            biased;
            open = opens.recv(), if wanted => {
                let Some(Open { port, io, error: error_reply }) = open else {
                    wanted = false;
                    continue;
                };
                // Client streams are odd: the error stream, then the data.
                let (error, data) = (next_stream, next_stream + 2);
                next_stream += 4;
                let request = next_request.to_string();
                next_request += 1;
                let port = port.to_string();
                let headers = |kind| [("streamType", kind), ("port", port.as_str()), ("requestID", request.as_str())];
                let error_open = encoder.syn_stream(error, &headers("error"), false);
                let data_open = encoder.syn_stream(data, &headers("data"), false);
                // kubectl closes its side of the error stream at once: only
                // the kubelet writes there.
                if !(send(error_open) && send(spdy::data(error, true, &[])) && send(data_open)) {
                    let _ = error_reply.send(Some("the session could not be written to".to_string()));
                    break "the session could not be written to".to_string();
                }
                let (from_client, to_socket) = tokio::io::split(io);
                let (to_client, from_pod) = mpsc::channel(16);
                tokio::spawn(client_to_pod(from_client, data, frames.clone()));
                tokio::spawn(pod_to_client(from_pod, to_socket));
                connections.insert(data, to_client);
                errors.insert(error, ErrorStream { text: Vec::new(), reply: error_reply, data });
            }
            message = incoming.next() => {
                let bytes = match message {
                    Some(Ok(Message::Binary(bytes))) => bytes,
                    Some(Ok(Message::Close(_))) | None => break "the API server closed the session".to_string(),
                    Some(Err(e)) => break format!("the session broke ({e})"),
                    Some(Ok(_)) => continue,
                };
                decoder.push(&bytes);
                loop {
                    let frame = match decoder.next_frame() {
                        Ok(Some(frame)) => frame,
                        Ok(None) => break,
                        Err(e) => break 'session format!("the session broke ({e})"),
                    };
                    match frame {
                        Frame::Data { stream_id, fin, data } => {
                            if let Some(to_client) = connections.get(&stream_id) {
                                if !data.is_empty() {
                                    // A client gone lets its bytes go.
                                    let _ = to_client.send(data).await;
                                }
                                if fin {
                                    connections.remove(&stream_id);
                                }
                            } else if let Some(error) = errors.get_mut(&stream_id) {
                                error.text.extend_from_slice(&data);
                                if fin {
                                    close_error(&mut errors, stream_id, None);
                                }
                            }
                        }
                        Frame::RstStream { stream_id, .. } if connections.remove(&stream_id).is_some() => {}
                        Frame::RstStream { stream_id, status } => {
                            close_error(&mut errors, stream_id, (status != spdy::CANCEL).then(|| {
                                format!("the kubelet reset the stream (status {status})")
                            }));
                        }
                        // The server's pings are even; each is answered.
                        Frame::Ping { id } if id % 2 == 0 => {
                            send(spdy::ping(id));
                        }
                        Frame::SynStream { stream_id, .. } => {
                            send(spdy::rst_stream(stream_id, spdy::REFUSED_STREAM));
                        }
                        Frame::GoAway { last_good, .. } => {
                            let untaken: Vec<u32> = errors
                                .iter()
                                .filter(|(_, e)| e.data > last_good)
                                .map(|(id, _)| *id)
                                .collect();
                            for id in untaken {
                                close_error(&mut errors, id, Some(NOT_TAKEN.to_string()));
                            }
                            break 'session "the kubelet ended the session".to_string();
                        }
                        _ => {}
                    }
                }
            }
        }
    };
    // Whatever is still open ends with the session, and says why.
    let why = (!ended.is_empty()).then_some(ended);
    connections.clear();
    let open: Vec<u32> = errors.keys().copied().collect();
    for id in open {
        close_error(&mut errors, id, why.clone());
    }
    // Connections asked for but never sent: their clients are told.
    opens.close();
    while let Ok(open) = opens.try_recv() {
        let _ = open.error.send(Some(NOT_TAKEN.to_string()));
    }
    // The writer ends once the connections still reading their clients
    // have let their senders go.
    drop(writer);
}

/// The kubelet closed an error stream: what it wrote (or `why` the stream
/// went without) is the connection's error.
fn close_error(errors: &mut HashMap<u32, ErrorStream>, stream: u32, why: Option<String>) {
    if let Some(error) = errors.remove(&stream) {
        let text = String::from_utf8_lossy(&error.text).trim().to_string();
        let said = if text.is_empty() { why } else { Some(text) };
        let _ = error.reply.send(said);
    }
}

/// The client's bytes into DATA frames on `stream`; its end into a FIN.
async fn client_to_pod(
    mut from_client: ReadHalf<DuplexStream>,
    stream: u32,
    frames: mpsc::Sender<Vec<u8>>,
) {
    let mut buf = vec![0u8; MAX_DATA];
    loop {
        match from_client.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if frames
                    .send(spdy::data(stream, false, &buf[..n]))
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
    }
    let _ = frames.send(spdy::data(stream, true, &[])).await;
}

/// The pod's bytes to the client; the pod's FIN into the client's end.
async fn pod_to_client(
    mut from_pod: mpsc::Receiver<Bytes>,
    mut to_client: WriteHalf<DuplexStream>,
) {
    while let Some(bytes) = from_pod.recv().await {
        if to_client.write_all(&bytes).await.is_err() {
            return;
        }
    }
    let _ = to_client.shutdown().await;
}

/// A forward's session to the pod it reaches now, opened with its first
/// connection there and again after it ends; or none, once the server has
/// said it does not take the protocol.
pub struct Sessions {
    client: kube::Client,
    namespace: String,
    state: tokio::sync::Mutex<State>,
}

enum State {
    Unopened,
    To { pod: String, tunnel: Tunnel },
    Unsupported,
}

impl Sessions {
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        Sessions {
            client,
            namespace: namespace.to_string(),
            state: tokio::sync::Mutex::new(State::Unopened),
        }
    }

    /// A connection to `port` on `pod` through the session to it; `None`
    /// where the server does not take the protocol (or a new session ended
    /// at once): a WebSocket of its own is the way there.
    pub async fn open(&self, pod: &str, port: u16) -> Result<Option<Stream>, kube::Error> {
        let tunnel = {
            // Connections wait for the one session being opened, not each
            // open another.
            let mut state = self.state.lock().await;
            match &*state {
                State::Unsupported => return Ok(None),
                State::To { pod: to, tunnel } if to == pod && !tunnel.opens.is_closed() => {
                    tunnel.clone()
                }
                State::To { .. } | State::Unopened => {
                    *state = match connect(&self.client, &self.namespace, pod).await? {
                        Connect::Open(tunnel) => State::To {
                            pod: pod.to_string(),
                            tunnel,
                        },
                        Connect::Unsupported => State::Unsupported,
                    };
                    match &*state {
                        State::To { tunnel, .. } => tunnel.clone(),
                        State::Unsupported | State::Unopened => return Ok(None),
                    }
                }
            }
        };
        Ok(tunnel.open(port).await)
    }
}

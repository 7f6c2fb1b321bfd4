//! `pods/portforward`, as the apiserver proxies it to the kubelet and the
//! kubelet's streaming server serves it. Three ways in:
//!
//! - a WebSocket with `v4.channel.k8s.io` (or its base64 twin, or none):
//!   the channel protocol of kube-rs and the Python client ([`channels`]);
//! - a WebSocket with `SPDY/3.1+portforward.k8s.io`: SPDY tunnelled in
//!   binary messages, what kubectl 1.31+ tries first (KEP-4006);
//! - `POST` with `Upgrade: SPDY/3.1`: kubectl's older way, and its fallback.
//!
//! Either SPDY way runs one session ([`session`]). Each forwarded
//! connection is a TCP connection the kubelet makes inside the pod's network
//! namespace ([`super::kubelet::Kubelet::port_forward`]).

mod channels;
mod session;

use std::sync::Arc;

use bytes::Bytes;
use futures::{SinkExt as _, StreamExt as _};
use hyper::body::Incoming;
use hyper::header::{
    CONNECTION, HeaderValue, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL,
    UPGRADE,
};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::SimState;
use super::http::{Body, Query, full};
use super::kubelet::Kubelet;
use super::status::ApiError;
use super::store::{Key, Kind};

/// The WebSocket subprotocols of the channel protocol, as the kubelet's
/// `portforward/websocket.go` accepts them (v5 is exec/attach only).
const V4_BINARY: &str = "v4.channel.k8s.io";
const V4_BASE64: &str = "v4.base64.channel.k8s.io";
/// kubectl's SPDY-in-WebSocket subprotocol.
const SPDY_TUNNEL: &str = "SPDY/3.1+portforward.k8s.io";
/// The SPDY stream protocol, in `X-Stream-Protocol-Version`.
const SPDY_PROTOCOL: &str = "portforward.k8s.io";
const STREAM_PROTOCOL_HEADER: hyper::header::HeaderName =
    hyper::header::HeaderName::from_static("x-stream-protocol-version");

/// Validates a port-forward request and answers `101 Switching Protocols`;
/// the forwarding runs on the upgraded connection.
pub fn upgrade(
    state: &Arc<SimState>,
    key: &Key,
    query: &Query,
    mut request: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let pod = state
        .store
        .get(Kind::Pod, key)
        .ok_or_else(|| ApiError::not_found("pods", &key.name))?
        .value();
    let headers = request.headers();
    let header = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let upgrade = header(UPGRADE);
    let kubelet = state.kubelet.clone();
    let key = key.clone();
    if upgrade.eq_ignore_ascii_case("websocket") {
        let ws_key = header(SEC_WEBSOCKET_KEY);
        let offered = super::streams::offered_protocols(headers);
        // The client's order decides, as the kubelet's negotiation does.
        let chosen = if offered.is_empty() {
            Some("")
        } else {
            offered
                .iter()
                .map(String::as_str)
                .find(|p| [V4_BINARY, V4_BASE64, SPDY_TUNNEL].contains(p))
        };
        let Some(protocol) = chosen else {
            return Err(ApiError::bad_request(format!(
                "unable to upgrade: requested protocol(s) are not supported: {offered:?}; supports [{V4_BINARY} {V4_BASE64} {SPDY_TUNNEL}]"
            )));
        };
        let protocol = protocol.to_string();
        let channels = if protocol == SPDY_TUNNEL {
            None
        } else {
            Some(channels::ports(query)?)
        };
        let on_upgrade = hyper::upgrade::on(&mut request);
        let base64 = protocol == V4_BASE64;
        tokio::spawn(async move {
            let Ok(upgraded) = on_upgrade.await else {
                return;
            };
            let ws =
                WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
            match channels {
                Some(ports) => channels::run(ws, kubelet, pod, ports, base64).await,
                None => {
                    // The tunnel is a byte stream cut into binary messages
                    // anywhere, empty ones included.
                    let (sink, stream) = ws.split();
                    let incoming = stream
                        .take_while(|m| std::future::ready(m.is_ok()))
                        .filter_map(|m| {
                            std::future::ready(match m {
                                Ok(Message::Binary(data)) => Some(data),
                                _ => None,
                            })
                        });
                    let outgoing = sink.with(|frame: Bytes| {
                        std::future::ready(Ok::<_, tokio_tungstenite::tungstenite::Error>(
                            Message::Binary(frame),
                        ))
                    });
                    let stopped = pod_stopped(&kubelet, key);
                    session::run(incoming, outgoing, kubelet, pod, stopped).await;
                }
            }
        });
        let mut response = switching(HeaderValue::from_static("websocket"));
        let h = response.headers_mut();
        if !protocol.is_empty()
            && let Ok(value) = HeaderValue::from_str(&protocol)
        {
            h.insert(SEC_WEBSOCKET_PROTOCOL, value);
        }
        if let Ok(accept) = HeaderValue::from_str(&derive_accept_key(ws_key.as_bytes())) {
            h.insert(SEC_WEBSOCKET_ACCEPT, accept);
        }
        return Ok(response);
    }
    if upgrade.eq_ignore_ascii_case("SPDY/3.1") {
        let offered = header(STREAM_PROTOCOL_HEADER);
        if !offered.split(',').any(|p| p.trim() == SPDY_PROTOCOL) {
            return Err(ApiError::new(
                403,
                "Forbidden",
                format!(
                    "unable to upgrade: unable to negotiate protocol: client supports [{offered}], server accepts [{SPDY_PROTOCOL}]"
                ),
            ));
        }
        let on_upgrade = hyper::upgrade::on(&mut request);
        tokio::spawn(async move {
            let Ok(upgraded) = on_upgrade.await else {
                return;
            };
            let (reader, writer) = tokio::io::split(TokioIo::new(upgraded));
            let incoming = futures::stream::unfold(reader, |mut reader| async move {
                let mut buf = vec![0u8; READ_CHUNK + 64];
                match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => None,
                    Ok(n) => {
                        buf.truncate(n);
                        Some((Bytes::from(buf), reader))
                    }
                }
            });
            let outgoing = futures::sink::unfold(writer, |mut writer, frame: Bytes| async move {
                writer.write_all(&frame).await?;
                writer.flush().await?;
                Ok::<_, std::io::Error>(writer)
            });
            let stopped = pod_stopped(&kubelet, key);
            session::run(
                Box::pin(incoming),
                Box::pin(outgoing),
                kubelet,
                pod,
                stopped,
            )
            .await;
        });
        let mut response = switching(HeaderValue::from_static("SPDY/3.1"));
        response.headers_mut().insert(
            STREAM_PROTOCOL_HEADER,
            HeaderValue::from_static(SPDY_PROTOCOL),
        );
        return Ok(response);
    }
    Err(ApiError::bad_request("Upgrade request required"))
}

fn switching(upgrade: HeaderValue) -> Response<Body> {
    let mut response = Response::new(full(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = response.headers_mut();
    h.insert(UPGRADE, upgrade);
    // Exactly `Upgrade`: kube-rs compares, not searches.
    h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    response
}

/// Resolves when the pod's processes are killed (it was deleted).
fn pod_stopped(kubelet: &Kubelet, key: Key) -> tokio::sync::oneshot::Receiver<()> {
    let mut stopped = kubelet.stopped_pods();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        loop {
            match stopped.recv().await {
                Ok(k) if k == key => break,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
        let _ = tx.send(());
    });
    rx
}

/// How much of a forwarded connection's output one frame carries.
const READ_CHUNK: usize = 32 << 10;

/// Copies one forwarded connection both ways: what arrives on `inbound`
/// goes to the pod, what the pod sends goes to `outbound` (until it says
/// no more). Ends when the pod's side ends; a closed `inbound` is the
/// client's half-close.
async fn pump<F, Fut>(stream: TcpStream, mut inbound: mpsc::Receiver<Bytes>, mut outbound: F)
where
    F: FnMut(Bytes) -> Fut,
    Fut: Future<Output = bool>,
{
    let (mut read, mut write) = stream.into_split();
    let to_pod = async move {
        while let Some(data) = inbound.recv().await {
            if write.write_all(&data).await.is_err() {
                return;
            }
        }
        let _ = write.shutdown().await;
        // Keep the write half (and so the connection) until the read ends.
        std::future::pending::<()>().await;
    };
    let from_pod = async move {
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            match read.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if !outbound(Bytes::copy_from_slice(&buf[..n])).await {
                        return;
                    }
                }
            }
        }
    };
    tokio::select! {
        () = to_pod => {}
        () = from_pod => {}
    }
}

/// The pod as the request found it, for the kubelet.
type Pod = Value;

//! One SPDY/3.1 port-forward session, as the kubelet's
//! `portforward/httpstream.go` serves it. Per forwarded connection the
//! client opens an error stream and a data stream with the same
//! `requestID` header; once both exist the kubelet connects to `port` in
//! the pod and copies bytes on the data stream. A failure is written on the
//! error stream, then both streams are reset; success ends with a FIN on
//! each. One session carries any number of connections.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::{Sink, SinkExt as _, Stream, StreamExt as _};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::{Pod, pump};
use crate::sim::kubelet::Kubelet;
use crate::spdy::{self, Decoder, Encoder, Frame};

/// A connection's two streams, as they arrive.
struct Pair {
    error: Option<u32>,
    data: Option<u32>,
    port: u16,
    /// When its first stream came: the kubelet waits
    /// [`STREAM_CREATION_TIMEOUT`] for the second.
    opened: tokio::time::Instant,
}

/// How long the kubelet waits for a connection's second stream
/// (`DefaultStreamCreationTimeout`).
const STREAM_CREATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A data stream being forwarded.
struct Forwarding {
    /// What the client sends goes here; dropped at its FIN (a half-close).
    to_pod: Option<mpsc::Sender<Bytes>>,
    error: u32,
    port: u16,
    task: JoinHandle<()>,
}

/// Connections whose second stream has not come yet, at most (a client
/// that never pairs them is not given memory for ever).
const MAX_UNPAIRED: usize = 1024;

pub async fn run<I, O>(
    mut incoming: I,
    outgoing: O,
    kubelet: Arc<Kubelet>,
    pod: Pod,
    mut stopped: oneshot::Receiver<()>,
) where
    I: Stream<Item = Bytes> + Unpin,
    O: Sink<Bytes> + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::channel::<Bytes>(32);
    let writer = tokio::spawn(async move {
        let mut outgoing = outgoing;
        while let Some(frame) = out_rx.recv().await {
            if outgoing.send(frame).await.is_err() {
                return;
            }
        }
        let _ = outgoing.close().await;
    });
    let mut decoder = Decoder::new();
    let mut encoder = Encoder::new();
    let mut pairs: HashMap<String, Pair> = HashMap::new();
    let mut forwarding: HashMap<u32, Forwarding> = HashMap::new();
    let mut last_stream = 0u32;
    let send = |frame: Vec<u8>| {
        let out = out_tx.clone();
        async move { out.send(Bytes::from(frame)).await.is_ok() }
    };
    'session: loop {
        tokio::select! {
            bytes = incoming.next() => {
                let Some(bytes) = bytes else { break };
                decoder.push(&bytes);
                loop {
                    let frame = match decoder.next_frame() {
                        Ok(Some(frame)) => frame,
                        Ok(None) => break,
                        Err(e) => {
                            tracing::debug!("port-forward: bad SPDY from the client: {e}");
                            let _ = send(spdy::goaway(last_stream, spdy::GOAWAY_PROTOCOL_ERROR)).await;
                            break 'session;
                        }
                    };
                    match frame {
                        Frame::SynStream { stream_id, headers, .. } => {
                            if stream_id <= last_stream {
                                send(spdy::rst_stream(stream_id, spdy::PROTOCOL_ERROR)).await;
                                continue;
                            }
                            last_stream = stream_id;
                            let Some((kind, port, request)) = stream_headers(&headers, stream_id) else {
                                send(spdy::rst_stream(stream_id, spdy::CANCEL)).await;
                                continue;
                            };
                            if pairs.len() >= MAX_UNPAIRED && !pairs.contains_key(&request) {
                                send(spdy::rst_stream(stream_id, spdy::REFUSED_STREAM)).await;
                                continue;
                            }
                            send(encoder.syn_reply(stream_id, &[], false)).await;
                            let pair = pairs.entry(request.clone()).or_insert_with(|| Pair {
                                error: None,
                                data: None,
                                port: 0,
                                opened: tokio::time::Instant::now(),
                            });
                            let slot = match kind {
                                StreamKind::Error => &mut pair.error,
                                StreamKind::Data => &mut pair.data,
                            };
                            if slot.is_some() {
                                send(spdy::rst_stream(stream_id, spdy::CANCEL)).await;
                                continue;
                            }
                            *slot = Some(stream_id);
                            if kind == StreamKind::Data {
                                pair.port = port;
                            }
                            if let (Some(error), Some(data)) = (pair.error, pair.data) {
                                let port = pair.port;
                                pairs.remove(&request);
                                let (to_pod, from_client) = mpsc::channel(16);
                                let task = tokio::spawn(forward(
                                    kubelet.clone(),
                                    pod.clone(),
                                    port,
                                    (error, data),
                                    from_client,
                                    out_tx.clone(),
                                ));
                                forwarding.insert(data, Forwarding { to_pod: Some(to_pod), error, port, task });
                            }
                        }
                        Frame::Data { stream_id, fin, data } => {
                            if let Some(f) = forwarding.get_mut(&stream_id) {
                                if !data.is_empty()
                                    && let Some(tx) = &f.to_pod
                                {
                                    let _ = tx.send(data).await;
                                }
                                if fin {
                                    f.to_pod = None;
                                }
                            }
                        }
                        Frame::RstStream { stream_id, .. } => {
                            // The kubelet's forwarding ends and closes the
                            // error stream, which the client waits for.
                            if let Some(f) = forwarding.remove(&stream_id) {
                                f.task.abort();
                                send(spdy::data(f.error, true, &[])).await;
                            }
                        }
                        Frame::Ping { id } => {
                            send(spdy::ping(id)).await;
                        }
                        Frame::GoAway { .. } => break 'session,
                        _ => {}
                    }
                }
            }
            // A connection whose second stream never comes is given up as
            // the kubelet gives it up: the reason on its error stream.
            () = pairing_deadline(&pairs) => {
                let now = tokio::time::Instant::now();
                let late: Vec<String> = pairs
                    .iter()
                    .filter(|(_, p)| p.opened + STREAM_CREATION_TIMEOUT <= now)
                    .map(|(request, _)| request.clone())
                    .collect();
                for request in late {
                    let Some(pair) = pairs.remove(&request) else { continue };
                    if let Some(error) = pair.error {
                        let text = format!("(conn=&{{}}, request={request}) timed out waiting for streams");
                        send(spdy::data(error, false, text.as_bytes())).await;
                        send(spdy::data(error, true, &[])).await;
                    }
                    if let Some(data) = pair.data {
                        send(spdy::rst_stream(data, spdy::CANCEL)).await;
                    }
                }
            }
            _ = &mut stopped => {
                // As containerd says of a sandbox that is gone; then the
                // session ends, so a client knows at once.
                for (data, f) in forwarding.drain() {
                    f.task.abort();
                    let sandbox = kubelet_sandbox(&pod);
                    let text = format!(
                        "error forwarding port {} to pod {sandbox}, uid : failed to find sandbox {sandbox:?} in store: not found",
                        f.port
                    );
                    send(spdy::data(f.error, false, text.as_bytes())).await;
                    send(spdy::rst_stream(data, spdy::CANCEL)).await;
                    send(spdy::rst_stream(f.error, spdy::CANCEL)).await;
                }
                send(spdy::goaway(last_stream, spdy::GOAWAY_OK)).await;
                break;
            }
        }
        forwarding.retain(|_, f| !f.task.is_finished());
    }
    for (_, f) in forwarding.drain() {
        f.task.abort();
    }
    drop(out_tx);
    let _ = writer.await;
}

/// Resolves when the oldest unpaired connection has waited too long;
/// never while none waits.
async fn pairing_deadline(pairs: &HashMap<String, Pair>) {
    match pairs.values().map(|p| p.opened).min() {
        Some(opened) => tokio::time::sleep_until(opened + STREAM_CREATION_TIMEOUT).await,
        None => std::future::pending().await,
    }
}

fn kubelet_sandbox(pod: &Pod) -> String {
    crate::sim::kubelet::sandbox_id(pod)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StreamKind {
    Error,
    Data,
}

/// A stream's type, port and request id; `None` for a stream the kubelet
/// resets (no or a bad `port`, an unknown `streamType`). A client without
/// `requestID` pairs a data stream with the error stream two ids before.
fn stream_headers(
    headers: &[(String, String)],
    stream_id: u32,
) -> Option<(StreamKind, u16, String)> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let kind = match header("streamtype")? {
        "error" => StreamKind::Error,
        "data" => StreamKind::Data,
        _ => return None,
    };
    let port: u16 = header("port")?.parse().ok().filter(|p| *p > 0)?;
    let request = match header("requestid") {
        Some(id) => id.to_string(),
        None if kind == StreamKind::Error => stream_id.to_string(),
        None => stream_id.saturating_sub(2).to_string(),
    };
    Some((kind, port, request))
}

/// Forwards one connection: connects in the pod, then copies.
async fn forward(
    kubelet: Arc<Kubelet>,
    pod: Pod,
    port: u16,
    (error, data): (u32, u32),
    from_client: mpsc::Receiver<Bytes>,
    out: mpsc::Sender<Bytes>,
) {
    let frame = |f: Vec<u8>| Bytes::from(f);
    match kubelet.port_forward(&pod, port).await {
        Ok(stream) => {
            pump(stream, from_client, |bytes| {
                let out = out.clone();
                async move {
                    out.send(frame(spdy::data(data, false, &bytes)))
                        .await
                        .is_ok()
                }
            })
            .await;
            let _ = out.send(frame(spdy::data(error, true, &[]))).await;
            let _ = out.send(frame(spdy::data(data, true, &[]))).await;
        }
        Err(text) => {
            let _ = out
                .send(frame(spdy::data(error, false, text.as_bytes())))
                .await;
            let _ = out.send(frame(spdy::rst_stream(data, spdy::CANCEL))).await;
            let _ = out.send(frame(spdy::rst_stream(error, spdy::CANCEL))).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that opens a connection's error stream and never its data
    /// stream hears, after the kubelet's 30 s, why, and the error stream
    /// ends; the session goes on.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn an_unpaired_stream_is_given_up_after_the_kubelets_timeout() {
        let (to_server, incoming) = mpsc::channel::<Bytes>(8);
        let (outgoing, mut from_server) = futures::channel::mpsc::channel::<Bytes>(64);
        let store = Arc::new(crate::sim::store::Store::new());
        let kubelet = Kubelet::new(
            store,
            crate::sim::kubelet::KubeletConfig {
                pull_delay: std::time::Duration::from_secs(3600),
                pull_backoff: std::time::Duration::from_secs(3600),
                shim: "/bin/false".into(),
                namespaces: false,
                api: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            },
        )
        .unwrap();
        let (_stop, stopped) = oneshot::channel();
        let pod = serde_json::json!({"metadata": {"name": "p", "namespace": "n", "uid": "u"}});
        let incoming = tokio_stream_of(incoming);
        tokio::spawn(run(incoming, outgoing, kubelet, pod, stopped));
        let mut encoder = Encoder::new();
        let syn = encoder.syn_stream(
            1,
            &[
                ("streamType", "error"),
                ("port", "8080"),
                ("requestID", "0"),
            ],
            false,
        );
        to_server.send(Bytes::from(syn)).await.unwrap();
        let mut decoder = Decoder::new();
        let mut frames = Vec::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(31);
        while frames.len() < 3 {
            let bytes = tokio::time::timeout_at(deadline, from_server.next())
                .await
                .expect("the kubelet gives up within its timeout")
                .expect("the session writes");
            decoder.push(&bytes);
            while let Some(frame) = decoder.next_frame().unwrap() {
                frames.push(frame);
            }
        }
        assert!(matches!(frames[0], Frame::SynReply { stream_id: 1, .. }));
        match &frames[1] {
            Frame::Data {
                stream_id: 1,
                fin: false,
                data,
            } => assert!(
                String::from_utf8_lossy(data).ends_with("request=0) timed out waiting for streams"),
                "{data:?}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            frames[2],
            Frame::Data {
                stream_id: 1,
                fin: true,
                ..
            }
        ));
    }

    fn tokio_stream_of(mut rx: mpsc::Receiver<Bytes>) -> impl Stream<Item = Bytes> + Unpin {
        Box::pin(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }
}

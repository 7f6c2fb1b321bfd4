//! The WebSocket channel protocol of port-forward (the kubelet's
//! `portforward/websocket.go`): port `i` of the request's `ports` has data
//! channel `2i` and error channel `2i+1`; each channel's first frame is the
//! port, 2 bytes little-endian. Binary frames are `[channel] ++ payload`;
//! the base64 protocol sends text frames `'0'+channel ++ base64(payload)`.
//! When every port's connection has ended, the server closes (1000).

use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use futures::{SinkExt as _, StreamExt as _};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::{Pod, pump};
use crate::sim::http::Query;
use crate::sim::kubelet::Kubelet;
use crate::sim::status::ApiError;

type Ws = tokio_tungstenite::WebSocketStream<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>;

/// The request's ports, with the kubelet's sentences for bad ones.
pub fn ports(query: &Query) -> Result<Vec<u16>, ApiError> {
    let values = query.all("ports");
    if values.is_empty() {
        return Err(ApiError::bad_request(
            r#"query parameter "ports" is required"#,
        ));
    }
    let mut ports = Vec::new();
    for part in values.iter().flat_map(|v| v.split(',')) {
        if part.is_empty() {
            return Err(ApiError::bad_request(
                r#"query parameter "ports" cannot be empty"#,
            ));
        }
        let port: u16 = part.parse().map_err(|e| {
            ApiError::bad_request(format!("unable to parse {part:?} as a port: {e}"))
        })?;
        if port == 0 {
            return Err(ApiError::bad_request(format!("port {part:?} must be > 0")));
        }
        ports.push(port);
    }
    // Two channels a port, numbered by a byte.
    if ports.len() > 127 {
        return Err(ApiError::bad_request(format!(
            "{} ports asked for; at most 127 fit in one connection",
            ports.len()
        )));
    }
    Ok(ports)
}

/// One frame on `channel`, in the negotiated framing.
fn frame(base64: bool, channel: u8, payload: &[u8]) -> Message {
    if base64 {
        let mut text = String::with_capacity(1 + payload.len().div_ceil(3) * 4);
        text.push(char::from(b'0' + channel));
        base64::engine::general_purpose::STANDARD.encode_string(payload, &mut text);
        Message::Text(text.into())
    } else {
        let mut bytes = Vec::with_capacity(payload.len() + 1);
        bytes.push(channel);
        bytes.extend_from_slice(payload);
        Message::Binary(bytes.into())
    }
}

/// A client frame as (channel, payload); `None` for frames to skip.
fn unframe(base64: bool, message: Message) -> Option<(u8, Bytes)> {
    match message {
        Message::Binary(data) if !base64 => {
            let channel = *data.first()?;
            Some((channel, data.slice(1..)))
        }
        Message::Text(text) if base64 => {
            let channel = text.as_bytes().first()?.checked_sub(b'0')?;
            let payload = base64::engine::general_purpose::STANDARD
                .decode(&text.as_bytes()[1..])
                .ok()?;
            Some((channel, Bytes::from(payload)))
        }
        _ => None,
    }
}

pub async fn run(ws: Ws, kubelet: Arc<Kubelet>, pod: Pod, ports: Vec<u16>, base64: bool) {
    let (mut sink, mut stream) = ws.split();
    for (i, port) in ports.iter().enumerate() {
        for channel in [2 * i as u8, 2 * i as u8 + 1] {
            if sink
                .send(frame(base64, channel, &port.to_le_bytes()))
                .await
                .is_err()
            {
                return;
            }
        }
    }
    // The writer drains on its own, so a port whose pod does not read
    // never holds up another port's answer (nor the reading of frames).
    let (out_tx, mut out_rx) = mpsc::channel::<Message>(16);
    let writer = tokio::spawn(async move {
        while let Some(message) = out_rx.recv().await {
            if sink.send(message).await.is_err() {
                return;
            }
        }
        let _ = sink
            .send(Message::Close(Some(CloseFrame {
                code: CloseCode::Normal,
                reason: "".into(),
            })))
            .await;
    });
    let mut ports_done = tokio::task::JoinSet::new();
    let mut to_pod = Vec::new();
    for (i, &port) in ports.iter().enumerate() {
        let (in_tx, in_rx) = mpsc::channel::<Bytes>(16);
        to_pod.push(in_tx);
        let (kubelet, pod, out) = (kubelet.clone(), pod.clone(), out_tx.clone());
        let data = 2 * i as u8;
        ports_done.spawn(async move {
            match kubelet.port_forward(&pod, port).await {
                Ok(stream) => {
                    pump(stream, in_rx, |bytes| {
                        let out = out.clone();
                        async move { out.send(frame(base64, data, &bytes)).await.is_ok() }
                    })
                    .await;
                }
                Err(text) => {
                    let _ = out.send(frame(base64, data + 1, text.as_bytes())).await;
                }
            }
        });
    }
    // When every port's connection has ended, the writer closes (1000).
    drop(out_tx);
    loop {
        tokio::select! {
            message = stream.next() => {
                let Some(Ok(message)) = message else { break };
                if let Some((channel, payload)) = unframe(base64, message)
                    && channel % 2 == 0
                    && !payload.is_empty()
                    && let Some(tx) = to_pod.get(usize::from(channel / 2))
                {
                    // A port whose connection has ended drops what comes;
                    // one whose pod is slow to read holds the client back.
                    let _ = tx.send(payload).await;
                }
            }
            done = ports_done.join_next() => {
                if done.is_none() {
                    break;
                }
            }
        }
    }
    // The client went away: its ports' connections end with it.
    ports_done.abort_all();
    drop(to_pod);
    let _ = writer.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_read_as_the_kubelet_reads_them() {
        let parse = |q: &str| ports(&Query::parse(Some(q)));
        assert_eq!(parse("&ports=80%2C1234").unwrap(), [80, 1234]);
        assert_eq!(parse("ports=8080&ports=9090").unwrap(), [8080, 9090]);
        let message = |q: &str| parse(q).unwrap_err().message.to_string();
        assert_eq!(message(""), r#"query parameter "ports" is required"#);
        assert!(message("ports=http").starts_with(r#"unable to parse "http" as a port"#));
        assert_eq!(message("ports=0"), r#"port "0" must be > 0"#);
        assert_eq!(
            message("ports=80,"),
            r#"query parameter "ports" cannot be empty"#
        );
    }

    #[test]
    fn base64_frames_carry_the_channel_as_a_digit() {
        let Message::Text(text) = frame(true, 1, b"hi") else {
            panic!("a text frame")
        };
        assert_eq!(text.as_str(), "1aGk=");
        assert_eq!(
            unframe(true, Message::Text("0aGk=".into())),
            Some((0, Bytes::from_static(b"hi")))
        );
        assert_eq!(
            unframe(false, frame(false, 2, b"x")),
            Some((2, Bytes::from_static(b"x")))
        );
    }
}

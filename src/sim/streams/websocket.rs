//! The WebSocket wire of attach and exec: every binary message starts with
//! a channel byte (0 stdin, 1 stdout, 2 stderr, 3 the final Status, 4
//! resize; v5 adds 255, `[255, id]`, to close a channel).

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::{CLOSE, ERROR, Inbound, RESIZE, STDERR, STDIN, STDOUT, Wire, parse_resize};

type Ws = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

pub(super) struct WsWire {
    ws: Ws,
}

impl WsWire {
    /// Starts the session as the apiserver does: an empty message on the
    /// lowest output channel the client asked for.
    pub(super) async fn hello(
        mut ws: Ws,
        stdout: bool,
        stderr: bool,
    ) -> Result<Self, tokio_tungstenite::tungstenite::Error> {
        let first = if stdout {
            STDOUT
        } else if stderr {
            STDERR
        } else {
            ERROR
        };
        ws.send(frame(first, &[])).await?;
        Ok(Self { ws })
    }
}

impl Wire for WsWire {
    async fn send(&mut self, channel: u8, data: &[u8]) -> anyhow::Result<()> {
        Ok(self.ws.send(frame(channel, data)).await?)
    }

    async fn next(&mut self) -> Inbound {
        decode(self.ws.next().await)
    }

    async fn finish(&mut self, status: Value) {
        use tokio_tungstenite::tungstenite::protocol::{CloseFrame, frame::coding::CloseCode};
        let status = serde_json::to_vec(&status).unwrap_or_default();
        let _ = self.ws.send(frame(ERROR, &status)).await;
        let _ = self
            .ws
            .close(Some(CloseFrame {
                code: CloseCode::Normal,
                reason: "".into(),
            }))
            .await;
    }
}

fn decode(message: Option<Result<Message, tokio_tungstenite::tungstenite::Error>>) -> Inbound {
    let data = match message {
        Some(Ok(Message::Binary(data))) => data,
        Some(Ok(Message::Text(text))) => Bytes::from(text.as_bytes().to_vec()),
        Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return Inbound::Closed,
        Some(Ok(_)) => return Inbound::Ignored,
    };
    match data.first() {
        Some(&STDIN) => Inbound::Stdin(data.slice(1..)),
        Some(&RESIZE) => parse_resize(&data[1..]).map_or(Inbound::Ignored, Inbound::Resize),
        Some(&CLOSE) if data.get(1) == Some(&STDIN) => Inbound::CloseStdin,
        _ => Inbound::Ignored,
    }
}

fn frame(channel: u8, data: &[u8]) -> Message {
    let mut bytes = Vec::with_capacity(data.len() + 1);
    bytes.push(channel);
    bytes.extend_from_slice(data);
    Message::Binary(bytes.into())
}

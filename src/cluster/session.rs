//! Terminal sessions on a container: attach (to the container's own
//! terminal, shared with every other attacher) or exec (a new process).
//! Bytes in, bytes out, resize, and how it ended.

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::AttachParams;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use crate::model::session::{SessionEnd, SessionKind};
use crate::term::Size;

/// What to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSpec {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub kind: SessionKind,
    /// Initial terminal size (columns, rows), sent as soon as the stream opens
    /// so the remote shell never starts at 80×24.
    pub size: Size,
    /// How often to ping the server so idle streams are not cut by load
    /// balancers; `None` never pings.
    pub keepalive: Option<Duration>,
    /// A terminal: one output stream, and resizes. Without one, stdout and
    /// stderr arrive apart and nothing is translated.
    pub tty: bool,
    /// Send input (an attach without it only watches).
    pub stdin: bool,
}

/// Pings every 30 s unless configured otherwise: well inside the common
/// 60 s load-balancer idle timeouts.
pub const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(30);

/// What a session reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEvent {
    /// Standard output (all output, on a terminal).
    Output(Bytes),
    /// Standard error, without a terminal.
    Stderr(Bytes),
    /// The server has not answered a ping (or typed keys) for this many
    /// seconds; `None`: it answers again.
    Unanswered(Option<u64>),
    Ended(SessionEnd),
}

/// How long a ping (or a key) may go unanswered before the session says so.
const UNANSWERED_AFTER: Duration = Duration::from_secs(8);

/// What the user sends to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionInput {
    Data(Bytes),
    Resize(Size),
    /// Closes stdin alone, as a pipe's end of input (v5.channel.k8s.io's
    /// close frame, `[255, 0]`); the output goes on. The v4 protocol has no
    /// way to say it: the session says so on its output instead.
    CloseStdin,
}

/// A running session: its input and events are the channels given to [`open`].
pub struct Session {
    task: tokio::task::JoinHandle<()>,
}

impl Session {
    /// Leaves the session. For attach this never ends the container's process.
    pub fn detach(self) {
        self.task.abort();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.task.abort();
    }
}

use crate::model::session::channel::{CLOSE, ERROR, RESIZE, STDERR, STDIN, STDOUT};

/// Opens the stream and starts pumping it: what arrives on `input` is
/// sent, output and the end arrive on `events`.
///
/// podbay speaks the channel protocol itself over kube's authenticated
/// websocket rather than through `AttachedProcess`, so that: the initial
/// size always reaches the server before the first key (they share one
/// ordered queue); a cut connection ends the session at once; and pings go
/// out as often as `keepalive` says.
pub async fn open(
    client: kube::Client,
    spec: SessionSpec,
    input: mpsc::UnboundedReceiver<SessionInput>,
    events: mpsc::Sender<SessionEvent>,
) -> Result<Session, kube::Error> {
    let pumping = connect(client, spec, input, events).await?;
    Ok(Session {
        task: tokio::spawn(pumping),
    })
}

/// As [`open`], for a caller that drives the stream in its own task: the
/// returned future pumps it until it ends (dropping it closes the stream).
pub async fn connect(
    client: kube::Client,
    spec: SessionSpec,
    input: mpsc::UnboundedReceiver<SessionInput>,
    events: mpsc::Sender<SessionEvent>,
) -> Result<impl std::future::Future<Output = ()> + Send + 'static, kube::Error> {
    let pods = kube::core::Request::new(format!("/api/v1/namespaces/{}/pods", spec.namespace));
    let params = if spec.tty {
        AttachParams::interactive_tty().stdin(spec.stdin)
    } else {
        AttachParams::default()
            .stdin(spec.stdin)
            .stdout(true)
            .stderr(true)
    }
    .container(spec.container.clone());
    let request = match &spec.kind {
        SessionKind::Attach => pods.attach(&spec.pod, &params),
        SessionKind::Exec(command) => pods.exec(&spec.pod, command.clone(), &params),
    }
    .map_err(kube::Error::BuildRequest)?;
    let connection = client.connect(request).await?;
    let can_close = connection.supports_stream_close();
    let stream = connection.into_stream();
    let size = spec.tty.then_some(spec.size);
    Ok(pump(stream, size, can_close, spec.keepalive, input, events))
}

pub(super) fn framed(channel: u8, payload: &[u8]) -> Message {
    let mut frame = BytesMut::with_capacity(payload.len() + 1);
    frame.put_u8(channel);
    frame.put_slice(payload);
    Message::Binary(frame.freeze())
}

fn resize_frame(Size { cols, rows }: Size) -> Message {
    framed(
        RESIZE,
        format!("{{\"Width\":{cols},\"Height\":{rows}}}").as_bytes(),
    )
}

async fn pump<S>(
    stream: tokio_tungstenite::WebSocketStream<S>,
    size: Option<Size>,
    can_close: bool,
    keepalive: Option<Duration>,
    mut input: mpsc::UnboundedReceiver<SessionInput>,
    events: mpsc::Sender<SessionEvent>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut outgoing, mut incoming) = stream.split();
    let mut ping = keepalive.map(|every| {
        let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval
    });
    // A terminal's size goes first, before any key, or the remote shell
    // starts at 80×24.
    let size_known = size.is_some();
    let mut end = match size {
        Some(size) => outgoing
            .send(resize_frame(size))
            .await
            .err()
            .map(|e| cut(&e)),
        None => None,
    };
    let mut input_open = true;
    // Since when a ping waits for its pong, and whether that was said.
    let mut awaiting: Option<tokio::time::Instant> = None;
    let mut said = false;
    let mut last_heard = tokio::time::Instant::now();
    let mut clock = tokio::time::interval(Duration::from_secs(1));
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while end.is_none() {
        tokio::select! {
            message = incoming.next() => {
                // Anything the server sends is an answer.
                if matches!(message, Some(Ok(_))) {
                    last_heard = tokio::time::Instant::now();
                    awaiting = None;
                    if std::mem::take(&mut said)
                        && events.send(SessionEvent::Unanswered(None)).await.is_err()
                    {
                        return;
                    }
                }
                match message {
                Some(Ok(Message::Binary(frame))) => match frame.first() {
                    Some(&channel @ (STDOUT | STDERR)) if frame.len() > 1 => {
                        let data = frame.slice(1..);
                        let output = if channel == STDERR {
                            SessionEvent::Stderr(data)
                        } else {
                            SessionEvent::Output(data)
                        };
                        if events.send(output).await.is_err() {
                            return;
                        }
                    }
                    Some(&ERROR) => {
                        end = Some(match serde_json::from_slice::<Status>(&frame[1..]) {
                            Ok(status) => describe_end(Some(&status), None),
                            Err(_) => unreadable_status(&frame[1..]),
                        });
                    }
                    _ => {}
                },
                Some(Ok(Message::Close(frame))) => {
                    let why = frame
                        .map(|f| f.reason.to_string())
                        .filter(|r| !r.is_empty())
                        .unwrap_or_else(|| "the server closed the stream".to_string());
                    end = Some(describe_end(None, Some(format!("disconnected: {why}"))));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => end = Some(cut(&e)),
                None => end = Some(describe_end(None, None)),
            }},
            () = next_tick(&mut ping) => {
                awaiting.get_or_insert_with(tokio::time::Instant::now);
                if let Err(e) = outgoing.send(Message::Ping(Bytes::new())).await {
                    end = Some(cut(&e));
                }
            }
            _ = clock.tick(), if awaiting.is_some() => {
                let waited = awaiting.map_or(Duration::ZERO, |since| since.elapsed());
                if waited >= UNANSWERED_AFTER {
                    said = true;
                    let seconds = Some(waited.as_secs());
                    if events.send(SessionEvent::Unanswered(seconds)).await.is_err() {
                        return;
                    }
                }
            }
            message = input.recv(), if input_open => {
                let frame = match message {
                    Some(SessionInput::Data(data)) => framed(STDIN, &data),
                    Some(SessionInput::Resize(size)) if size_known => resize_frame(size),
                    // Without a terminal there is no size to tell.
                    Some(SessionInput::Resize(_)) => continue,
                    Some(SessionInput::CloseStdin) if can_close => framed(CLOSE, &[STDIN]),
                    Some(SessionInput::CloseStdin) => {
                        let said = Bytes::from_static(
                            b"\r\n\x1b[2m[podbay] this server speaks v4.channel.k8s.io, which cannot close stdin alone: the process gets no end of input\x1b[22m\r\n",
                        );
                        if events.send(SessionEvent::Output(said)).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    None => {
                        input_open = false;
                        continue;
                    }
                };
                if let Err(e) = outgoing.send(frame).await {
                    end = Some(cut(&e));
                }
                // A key into a quiet stream: a ping tells whether anyone
                // is there, before the user wonders where the echo went.
                if awaiting.is_none() && last_heard.elapsed() > Duration::from_secs(2) {
                    awaiting = Some(tokio::time::Instant::now());
                    if let Err(e) = outgoing.send(Message::Ping(Bytes::new())).await {
                        end = Some(cut(&e));
                    }
                }
            }
        }
    }
    if let Some(end) = end {
        let _ = events.send(SessionEvent::Ended(end)).await;
    }
}

async fn next_tick(ping: &mut Option<tokio::time::Interval>) {
    match ping {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

fn cut(error: &tokio_tungstenite::tungstenite::Error) -> SessionEnd {
    use tokio_tungstenite::tungstenite::Error;
    let why = match error {
        // A load balancer or a dying node drops the connection without a
        // closing handshake: the stream was cut.
        Error::ConnectionClosed | Error::AlreadyClosed | Error::Protocol(_) => {
            "the stream was cut".to_string()
        }
        Error::Io(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::BrokenPipe
            ) =>
        {
            "the stream was cut".to_string()
        }
        Error::Io(e) => format!("the connection failed ({})", e.kind()),
        other => other.to_string(),
    };
    describe_end(None, Some(format!("disconnected: {why}")))
}

/// The end a status channel says when it is not a Status (older protocols
/// send the error as text): the process's end is unknown, and the text is
/// the server's word for it.
fn unreadable_status(payload: &[u8]) -> SessionEnd {
    let text = String::from_utf8_lossy(payload);
    let text: String = text.trim().chars().take(200).collect();
    SessionEnd {
        exit_code: None,
        reason: format!(
            "failed: the server ended the stream with a message that is not a Status: {text:?}"
        )
        .into(),
        disconnected: false,
    }
}

/// How a session ended, from the Status the server sent on channel 3.
pub fn describe_end(status: Option<&Status>, local_reason: Option<String>) -> SessionEnd {
    if let Some(reason) = local_reason {
        return SessionEnd {
            exit_code: None,
            reason: reason.into(),
            disconnected: true,
        };
    }
    let Some(status) = status else {
        return SessionEnd {
            exit_code: None,
            reason: "disconnected: the stream was cut".into(),
            disconnected: true,
        };
    };
    if status.status.as_deref() == Some("Success") {
        return SessionEnd {
            exit_code: Some(0),
            reason: "exited with code 0".into(),
            disconnected: false,
        };
    }
    let exit_code = status
        .details
        .as_ref()
        .and_then(|d| d.causes.as_ref())
        .and_then(|causes| {
            causes
                .iter()
                .find(|c| c.reason.as_deref() == Some("ExitCode"))
        })
        .and_then(|c| c.message.as_deref()?.parse::<i32>().ok());
    match exit_code {
        Some(code) => SessionEnd {
            exit_code: Some(code),
            reason: format!("exited with code {code}").into(),
            disconnected: false,
        },
        None => SessionEnd {
            exit_code: None,
            reason: format!(
                "failed: {}",
                status
                    .message
                    .as_deref()
                    .unwrap_or("unknown error")
                    .trim_end_matches('.')
            )
            .into(),
            disconnected: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_come_from_the_status_causes() {
        let ok: Status = serde_json::from_value(serde_json::json!({"status": "Success"})).unwrap();
        assert_eq!(describe_end(Some(&ok), None).exit_code, Some(0));
        let failed: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "reason": "NonZeroExitCode", "message": "command terminated with non-zero exit code",
            "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}
        }))
        .unwrap();
        let end = describe_end(Some(&failed), None);
        assert_eq!(end.exit_code, Some(3));
        assert_eq!(end.reason, "exited with code 3");
        assert!(!end.disconnected);
        let cut = describe_end(None, None);
        assert!(cut.disconnected && cut.exit_code.is_none());
    }
}

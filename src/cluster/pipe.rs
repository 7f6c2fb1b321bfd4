//! A command in a container used as a pipe (`podbay cp`): stdin fed from a
//! bounded channel, stdout delivered byte for byte into another, each side
//! waiting for the other (a 256 MiB copy holds a few chunks, not the file),
//! stderr kept for the failure sentence, and how the command ended.

use bytes::{BufMut, Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::AttachParams;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use super::deadline::{Deadline, Expired};
use super::session::{describe_end, framed};
use crate::model::session::SessionEnd;

use crate::model::session::channel::{CLOSE, ERROR, STDERR, STDIN, STDOUT};

/// How much of stderr is kept: enough for tar's complaint.
const STDERR_KEPT: usize = 16 * 1024;

/// The command's input, written straight into the frame that will carry
/// it (the stdin channel's byte first), so a chunk is not copied again to
/// be sent: each copy of a 256 MiB upload costs more than the rest of
/// podbay's work on it.
pub struct Input {
    frame: BytesMut,
}

/// A chunk of input, framed: what [`Input::take`] hands over.
pub struct InputChunk(Bytes);

impl Input {
    pub fn with_capacity(bytes: usize) -> Self {
        let mut frame = BytesMut::with_capacity(bytes + 1);
        frame.put_u8(STDIN);
        Input { frame }
    }

    /// Bytes of input held.
    pub fn len(&self) -> usize {
        self.frame.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn extend(&mut self, data: &[u8]) {
        self.frame.extend_from_slice(data);
    }

    /// What is held, as one chunk; the next starts empty.
    pub fn take(&mut self) -> InputChunk {
        let capacity = self.frame.capacity();
        let chunk = self.frame.split().freeze();
        self.frame.reserve(capacity);
        self.frame.put_u8(STDIN);
        InputChunk(chunk)
    }
}

/// Which command, where.
pub struct PipeSpec {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub command: Vec<String>,
    /// When the pipe is given up: with no payload either way for a while
    /// (pings and empty frames are not progress), or past a total.
    pub deadline: Deadline,
}

/// How the command ended.
#[derive(Debug)]
pub struct PipeEnd {
    pub end: SessionEnd,
    /// The start of its stderr.
    pub stderr: String,
    /// The server could not be told where stdin ends (v4 protocol).
    pub stdin_left_open: bool,
    /// Ended here: the reader of stdout went away first.
    pub stopped_here: bool,
}

impl PipeEnd {
    pub fn succeeded(&self) -> bool {
        self.end.exit_code == Some(0)
    }

    /// The runtime could not start the program: it is not in the image.
    pub fn not_found(&self) -> bool {
        self.end.reason.contains("executable file not found")
            || self.end.reason.contains("no such file or directory")
    }
}

/// Runs `spec.command`; what arrives on `stdin` is its input (its end is
/// the input's end), its stdout goes into `stdout`. A dropped `stdout`
/// receiver ends the command early.
pub async fn exec(
    client: &kube::Client,
    spec: &PipeSpec,
    stdin: Option<mpsc::Receiver<InputChunk>>,
    stdout: mpsc::Sender<Bytes>,
) -> Result<PipeEnd, kube::Error> {
    let pods = kube::core::Request::new(format!("/api/v1/namespaces/{}/pods", spec.namespace));
    let params = AttachParams::default()
        .stdin(stdin.is_some())
        .stdout(true)
        .stderr(true)
        .container(spec.container.clone());
    let request = pods
        .exec(&spec.pod, spec.command.clone(), &params)
        .map_err(kube::Error::BuildRequest)?;
    let connection = client.connect(request).await?;
    let can_close = connection.supports_stream_close();
    let (mut outgoing, mut incoming) = connection.into_stream().split();
    let mut stdin = stdin;
    let mut stderr = Vec::new();
    let mut stdin_left_open = false;
    let mut stopped_here = false;
    // Payload either way is progress (an upload hears nothing back);
    // pings, empty frames and other channels are not.
    let mut deadline = spec.deadline;
    deadline.progressed();
    let end = loop {
        tokio::select! {
            why = deadline.passed() => break expired(why),
            message = incoming.next() => {
                match message {
                    Some(Ok(Message::Binary(frame))) => match frame.first() {
                        Some(&STDOUT) if frame.len() > 1 => {
                            deadline.progressed();
                            let delivered = stdout.send(frame.slice(1..)).await;
                            if delivered.is_err() {
                                stopped_here = true;
                                break describe_end(None, Some("the copy was stopped".into()));
                            }
                        }
                        Some(&STDERR) => {
                            if frame.len() > 1 {
                                deadline.progressed();
                            }
                            let room = STDERR_KEPT.saturating_sub(stderr.len());
                            stderr.extend_from_slice(&frame[1..][..room.min(frame.len() - 1)]);
                        }
                        Some(&ERROR) => {
                            break match serde_json::from_slice::<Status>(&frame[1..]) {
                                Ok(status) => describe_end(Some(&status), None),
                                Err(_) => describe_end(None, Some(format!(
                                    "failed: {}",
                                    String::from_utf8_lossy(&frame[1..]).trim()
                                ))),
                            };
                        }
                        _ => {}
                    },
                    Some(Ok(Message::Close(_))) | None => break describe_end(None, None),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break describe_end(None, Some(format!("disconnected: {e}"))),
                }
            }
            chunk = next_input(&mut stdin) => {
                let frame = match chunk {
                    Some(InputChunk(frame)) => Message::Binary(frame),
                    None => {
                        stdin = None;
                        if !can_close {
                            stdin_left_open = true;
                            continue;
                        }
                        framed(CLOSE, &[STDIN])
                    }
                };
                match deadline.bound(outgoing.send(frame)).await {
                    Ok(Ok(())) => deadline.progressed(),
                    Ok(Err(e)) => break describe_end(None, Some(format!("disconnected: {e}"))),
                    Err(why) => break expired(why),
                }
            }
        }
    };
    let _ = outgoing.close().await;
    Ok(PipeEnd {
        end,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        stdin_left_open,
        stopped_here,
    })
}

async fn next_input(stdin: &mut Option<mpsc::Receiver<InputChunk>>) -> Option<InputChunk> {
    match stdin {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

fn expired(why: Expired) -> SessionEnd {
    describe_end(None, Some(format!("disconnected: {why}")))
}

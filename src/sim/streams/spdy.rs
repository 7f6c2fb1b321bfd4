//! The SPDY/3.1 wire of attach and exec (`v4.channel.k8s.io` after a plain
//! `Upgrade: SPDY/3.1`): what kubectl before 1.30 speaks, and every kubelet
//! still serves. As the kubelet's `remotecommand/httpstream.go`: the client
//! opens one stream per channel (`streamType` error, stdin, stdout, stderr,
//! resize), each answered at once; the session starts when all it asked for
//! exist. The final Status goes on the error stream, then every stream ends.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadHalf};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{Inbound, STDERR, STDOUT, Wire, parse_resize};
use crate::spdy::{self, Decoder, Encoder, Frame};

/// The stream protocol this wire speaks, in `X-Stream-Protocol-Version`.
pub(super) const PROTOCOL: &str = "v4.channel.k8s.io";
/// How long the kubelet waits for the client's streams
/// (`--streaming-connection-idle-timeout` aside, its stream creation
/// timeout).
const STREAM_CREATION_TIMEOUT: Duration = Duration::from_secs(30);

type Upgraded = TokioIo<hyper::upgrade::Upgraded>;

/// Which streams the session needs, from the request's query.
#[derive(Clone, Copy)]
pub(super) struct Wanted {
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
    pub resize: bool,
}

#[derive(Default)]
struct Streams {
    error: Option<u32>,
    stdin: Option<u32>,
    stdout: Option<u32>,
    stderr: Option<u32>,
    resize: Option<u32>,
}

impl Streams {
    fn complete(&self, wanted: Wanted) -> bool {
        self.error.is_some()
            && (!wanted.stdin || self.stdin.is_some())
            && (!wanted.stdout || self.stdout.is_some())
            && (!wanted.stderr || self.stderr.is_some())
            && (!wanted.resize || self.resize.is_some())
    }
}

/// The wire over an upgraded connection (any byte stream, for tests).
pub(super) struct SpdyWire<IO = Upgraded> {
    reader: ReadHalf<IO>,
    buffer: Vec<u8>,
    decoder: Decoder,
    encoder: Encoder,
    out: mpsc::Sender<Bytes>,
    writer: Option<JoinHandle<()>>,
    streams: Streams,
    pending: VecDeque<Inbound>,
    last_stream: u32,
}

impl<IO: AsyncRead + AsyncWrite + Send + 'static> SpdyWire<IO> {
    /// Answers the client's streams until the session has all it asked
    /// for; `None` when the client goes or does not open them in time (the
    /// kubelet then closes the connection).
    pub(super) async fn accept(upgraded: IO, wanted: Wanted) -> Option<Self> {
        let (reader, mut write) = tokio::io::split(upgraded);
        let (out, mut frames) = mpsc::channel::<Bytes>(64);
        let writer = tokio::spawn(async move {
            while let Some(frame) = frames.recv().await {
                if write.write_all(&frame).await.is_err() || write.flush().await.is_err() {
                    return;
                }
            }
            let _ = write.shutdown().await;
        });
        let mut wire = Self {
            reader,
            buffer: vec![0; 32 << 10],
            decoder: Decoder::new(),
            encoder: Encoder::new(),
            out,
            writer: Some(writer),
            streams: Streams::default(),
            pending: VecDeque::new(),
            last_stream: 0,
        };
        let opened = async {
            while !wire.streams.complete(wanted) {
                if !wire.read_frames().await {
                    return false;
                }
            }
            true
        };
        match tokio::time::timeout(STREAM_CREATION_TIMEOUT, opened).await {
            Ok(true) => Some(wire),
            Ok(false) | Err(_) => {
                tracing::debug!("exec/attach over SPDY: the client's streams did not all come");
                wire.close().await;
                None
            }
        }
    }

    /// Reads once from the connection and takes every whole frame; false
    /// when the connection is gone or speaks no SPDY.
    async fn read_frames(&mut self) -> bool {
        match self.reader.read(&mut self.buffer).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => self.decoder.push(&self.buffer[..n]),
        }
        loop {
            match self.decoder.next_frame() {
                Ok(Some(frame)) => {
                    if !self.take(frame) {
                        return false;
                    }
                }
                Ok(None) => return true,
                Err(e) => {
                    tracing::debug!("exec/attach: bad SPDY from the client: {e}");
                    self.queue(spdy::goaway(self.last_stream, spdy::GOAWAY_PROTOCOL_ERROR));
                    return false;
                }
            }
        }
    }

    /// Takes one frame; false when the client ends the session.
    fn take(&mut self, frame: Frame) -> bool {
        match frame {
            Frame::SynStream {
                stream_id, headers, ..
            } => {
                if stream_id <= self.last_stream {
                    self.queue(spdy::rst_stream(stream_id, spdy::PROTOCOL_ERROR));
                    return true;
                }
                self.last_stream = stream_id;
                let reply = self.encoder.syn_reply(stream_id, &[], false);
                self.queue(reply);
                let slot = match spdy::header(&headers, "streamtype") {
                    Some("error") => &mut self.streams.error,
                    Some("stdin") => &mut self.streams.stdin,
                    Some("stdout") => &mut self.streams.stdout,
                    Some("stderr") => &mut self.streams.stderr,
                    Some("resize") => &mut self.streams.resize,
                    other => {
                        tracing::debug!("exec/attach: unexpected stream type {other:?}");
                        return true;
                    }
                };
                slot.get_or_insert(stream_id);
            }
            Frame::Data {
                stream_id,
                fin,
                data,
            } => {
                if Some(stream_id) == self.streams.stdin {
                    if !data.is_empty() {
                        self.pending.push_back(Inbound::Stdin(data));
                    }
                    if fin {
                        self.pending.push_back(Inbound::CloseStdin);
                    }
                } else if Some(stream_id) == self.streams.resize
                    && let Some(size) = parse_resize(&data)
                {
                    self.pending.push_back(Inbound::Resize(size));
                }
            }
            Frame::Ping { id } => self.queue(spdy::ping(id)),
            Frame::GoAway { .. } => return false,
            _ => {}
        }
        true
    }

    /// Sends a frame without waiting: what does not fit behind a stalled
    /// client is dropped, as only pings and replies go this way.
    fn queue(&self, frame: Vec<u8>) {
        let _ = self.out.try_send(Bytes::from(frame));
    }

    async fn close(&mut self) {
        let (closed, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.out, closed));
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Send + 'static> Wire for SpdyWire<IO> {
    async fn send(&mut self, channel: u8, data: &[u8]) -> anyhow::Result<()> {
        let stream = match channel {
            STDOUT => self.streams.stdout,
            STDERR => self.streams.stderr,
            _ => None,
        };
        let Some(stream) = stream else {
            return Ok(());
        };
        for chunk in data.chunks(spdy::MAX_DATA_LEN) {
            self.out
                .send(Bytes::from(spdy::data(stream, false, chunk)))
                .await
                .map_err(|_| anyhow::anyhow!("the client is gone"))?;
        }
        Ok(())
    }

    async fn next(&mut self) -> Inbound {
        loop {
            if let Some(inbound) = self.pending.pop_front() {
                return inbound;
            }
            if !self.read_frames().await {
                return Inbound::Closed;
            }
        }
    }

    async fn finish(&mut self, status: Value) {
        let status = serde_json::to_vec(&status).unwrap_or_default();
        let mut frames = Vec::new();
        if let Some(error) = self.streams.error {
            frames.push(spdy::data(error, false, &status));
            frames.push(spdy::data(error, true, &[]));
        }
        for stream in [self.streams.stdout, self.streams.stderr]
            .into_iter()
            .flatten()
        {
            frames.push(spdy::data(stream, true, &[]));
        }
        frames.push(spdy::goaway(self.last_stream, spdy::GOAWAY_OK));
        for frame in frames {
            if self.out.send(Bytes::from(frame)).await.is_err() {
                break;
            }
        }
        self.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that opens the error stream and never the stdout it asked
    /// for is given up after the kubelet's 30 s: the connection closes, and
    /// no session starts.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn streams_that_do_not_all_come_are_given_up_after_the_kubelets_timeout() {
        let (client, server) = tokio::io::duplex(64 << 10);
        let wanted = Wanted {
            stdin: false,
            stdout: true,
            stderr: false,
            resize: false,
        };
        let started = tokio::time::Instant::now();
        let accepted = tokio::spawn(SpdyWire::accept(server, wanted));
        let (mut read, mut write) = tokio::io::split(client);
        let syn = Encoder::new().syn_stream(1, &[("streamType", "error")], false);
        write.write_all(&syn).await.unwrap();
        // The error stream is answered at once; then nothing until the end.
        let mut answered = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            match read.read(&mut buffer).await.unwrap() {
                0 => break,
                n => answered.extend_from_slice(&buffer[..n]),
            }
        }
        let waited = started.elapsed();
        assert!(
            (STREAM_CREATION_TIMEOUT..STREAM_CREATION_TIMEOUT + Duration::from_secs(1))
                .contains(&waited),
            "{waited:?}"
        );
        assert!(accepted.await.unwrap().is_none(), "a session started");
        let mut decoder = Decoder::new();
        decoder.push(&answered);
        assert!(matches!(
            decoder.next_frame().unwrap(),
            Some(Frame::SynReply { stream_id: 1, .. })
        ));
    }
}

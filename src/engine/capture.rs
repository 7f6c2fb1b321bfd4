//! Packet capture: tcpdump run in a pod's debug container, its pcap
//! stream brought out as it comes, and written to one local file (or
//! stdout) by one writer: tcpdump's own bytes for one pod, pcapng with an
//! interface per pod for several. The bytes pass through bounded channels
//! (a slow disk slows the pods' streams, never grows podbay), and each
//! pod's packets and bytes are counted as they are written, for the
//! summary and the live view.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::cluster::deadline::Deadline;
use crate::cluster::pipe::{self, InputChunk, PipeSpec};
use crate::model::capture::{self, Counts, Options};
use crate::model::pcap::{Merge, Packet, Splitter, pcapng};
use crate::model::session::SessionEnd;

/// How long tcpdump has to print its counts and end once stopped.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Chunks in flight from the pods to the writer.
const IN_FLIGHT: usize = 64;

/// Where a pod's capture runs.
#[derive(Debug, Clone)]
pub struct Where {
    pub namespace: String,
    pub pod: String,
    /// The debug container tcpdump is exec'd in.
    pub container: String,
    /// podbay added that container for this capture: it ends with it.
    pub lease: bool,
}

/// How one pod's tcpdump ended.
#[derive(Debug)]
pub struct Ended {
    pub end: SessionEnd,
    pub counts: Counts,
    /// The start of what tcpdump said (its failure, when it failed).
    pub stderr: String,
}

impl Ended {
    /// tcpdump ran and ended well (stopped, or its count reached).
    pub fn captured(&self) -> bool {
        self.end.exit_code == Some(0)
    }

    /// Why it did not, in one clause: the cause when known, else its words.
    pub fn failure(&self) -> String {
        let said = self
            .stderr
            .lines()
            .filter(|l| !l.starts_with("tcpdump: listening on") && !l.contains("data link type"))
            .collect::<Vec<_>>()
            .join("; ");
        match capture::failure_hint(&self.stderr) {
            Some(hint) => format!("{hint} (tcpdump: {})", said.trim()),
            None if said.trim().is_empty() => self.end.reason.to_string(),
            None => format!("{} ({})", self.end.reason, said.trim()),
        }
    }
}

/// Runs the capture in `at` until `stop` resolves or tcpdump ends by
/// itself; its stdout goes to `out` tagged with `stream`. On `stop`,
/// tcpdump's stdin is closed, which ends it, and it is given
/// [`STOP_GRACE`] to say its counts.
pub async fn run(
    client: &kube::Client,
    at: &Where,
    options: &Options,
    stream: usize,
    out: mpsc::Sender<Chunk>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<Ended, kube::Error> {
    let spec = PipeSpec {
        namespace: at.namespace.clone(),
        pod: at.pod.clone(),
        container: at.container.clone(),
        command: capture::command(options, at.lease),
        deadline: Deadline::none(),
    };
    let (stdout, mut bytes) = mpsc::channel::<Bytes>(4);
    let forward = async move {
        while let Some(chunk) = bytes.recv().await {
            if out.send(Chunk::Data(stream, chunk)).await.is_err() {
                break;
            }
        }
        let _ = out.send(Chunk::End(stream)).await;
    };
    let (stdin, stdin_rx) = mpsc::channel::<InputChunk>(1);
    let mut exec = Box::pin(pipe::exec(client, &spec, Some(stdin_rx), stdout));
    let forwarded = tokio::spawn(forward);
    let end = tokio::select! {
        end = &mut exec => end,
        () = stop => {
            drop(stdin);
            match tokio::time::timeout(STOP_GRACE, &mut exec).await {
                Ok(end) => end,
                Err(_) => Ok(pipe::PipeEnd {
                    end: SessionEnd {
                        exit_code: None,
                        reason: "tcpdump did not end when stopped; its connection was closed, which ends it".into(),
                        disconnected: true,
                    },
                    stderr: String::new(),
                    stdin_left_open: true,
                    stopped_here: true,
                }),
            }
        }
    };
    // Its stdout's sender goes with it: the forward then ends.
    drop(exec);
    let _ = forwarded.await;
    let end = end?;
    Ok(Ended {
        counts: Counts::read(&end.stderr),
        stderr: end.stderr,
        end: end.end,
    })
}

/// What reaches the writer.
#[derive(Debug)]
pub enum Chunk {
    /// Bytes of pod `n`'s pcap stream.
    Data(usize, Bytes),
    /// Pod `n`'s stream has ended.
    End(usize),
}

/// Each pod's packets and bytes written so far (read live by the view
/// and the summary), and the total the capture stops at.
#[derive(Debug, Default)]
pub struct Tally {
    pub packets: AtomicU64,
    pub bytes: AtomicU64,
}

/// The channel the pods' streams go into, and its writer's end.
pub fn channel() -> (mpsc::Sender<Chunk>, mpsc::Receiver<Chunk>) {
    mpsc::channel(IN_FLIGHT)
}

/// What the writer tells the capture as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Pod `n`'s tcpdump is listening: its stream's header is here.
    Listening(usize),
    /// Pod `n`'s stream ended before tcpdump listened (it failed).
    Silent(usize),
    /// `--count` packets are written: the capture should stop.
    LimitReached,
}

/// How the written file ended.
#[derive(Debug, Default)]
pub struct Written {
    /// A pod whose stream was not pcap: its name and why.
    pub corrupt: Vec<(usize, String)>,
    /// `--count` was reached (the capture should stop).
    pub limit_reached: bool,
}

/// Writes what arrives on `chunks` into `into` until every stream has
/// ended: tcpdump's bytes as they are for one pod, pcapng for several
/// (`names`, one interface each, packets merged in time order). Each pod
/// listening is told to `events`, and so is reaching `limit` packets,
/// past which none is written. Flushed whenever nothing more is waiting, so the file is
/// readable as the capture runs. Runs on a thread of its own (`runtime`
/// times its waits): `into` may be a pipe that a reader drains slowly.
pub fn write(
    into: &mut dyn Write,
    names: &[String],
    mut chunks: mpsc::Receiver<Chunk>,
    tallies: &[Tally],
    limit: Option<u64>,
    events: &dyn Fn(Event),
    runtime: &tokio::runtime::Handle,
) -> io::Result<Written> {
    let several = names.len() > 1;
    let mut splitters: Vec<Splitter> = names.iter().map(|_| Splitter::new()).collect();
    let mut broken = vec![false; names.len()];
    let mut interfaces: Vec<Option<u32>> = vec![None; names.len()];
    let mut next_interface = 0;
    let mut merge = Merge::new(names.len());
    let mut open = names.len();
    let mut written = Written::default();
    let mut total = 0u64;
    let started = Instant::now();
    let mut out = Vec::with_capacity(64 * 1024);
    if several {
        pcapng::section_header(&mut out);
    }
    let mut ended = false;
    while !ended {
        let chunk = match chunks.try_recv() {
            Ok(chunk) => Some(chunk),
            Err(mpsc::error::TryRecvError::Empty) if open > 0 => {
                into.write_all(&out)?;
                into.flush()?;
                out.clear();
                wait_for(&mut chunks, several, runtime)
            }
            Err(_) => {
                ended = true;
                None
            }
        };
        let mut packets = Vec::new();
        match chunk {
            Some(Chunk::Data(stream, _)) if broken[stream] => {}
            Some(Chunk::Data(stream, data)) => {
                let known = splitters[stream].format().is_some();
                let fed = splitters[stream].feed(&data, |p| packets.push((stream, p)));
                if !known && splitters[stream].format().is_some() {
                    events(Event::Listening(stream));
                }
                match fed {
                    Err(why) => {
                        written.corrupt.push((stream, why));
                        broken[stream] = true;
                        merge.close(stream);
                        packets.clear();
                    }
                    Ok(()) if !several => out.extend_from_slice(&data),
                    // Each pod's interface as soon as its header is here:
                    // a pod that sends nothing is still in the file.
                    Ok(()) => {
                        if let (None, Some(format)) =
                            (interfaces[stream], splitters[stream].format())
                        {
                            pcapng::interface(&mut out, &format, &names[stream]);
                            interfaces[stream] = Some(next_interface);
                            next_interface += 1;
                        }
                    }
                }
            }
            Some(Chunk::End(stream)) => {
                if splitters[stream].format().is_none() {
                    events(Event::Silent(stream));
                }
                merge.close(stream);
                open = open.saturating_sub(1);
            }
            None => {}
        }
        let limited = |total: u64| limit.is_some_and(|most| total >= most);
        if several {
            let now = started.elapsed();
            for (stream, packet) in packets.drain(..) {
                merge.push(stream, packet, now);
            }
            packets = merge.ready(now, ended || open == 0);
        }
        for (stream, packet) in packets {
            if limited(total) {
                break;
            }
            if let (true, Some(interface)) = (several, interfaces[stream]) {
                pcapng::packet(&mut out, interface, &packet);
            }
            count(&tallies[stream], &packet);
            total += 1;
        }
        if limited(total) && !written.limit_reached {
            written.limit_reached = true;
            events(Event::LimitReached);
        }
        if out.len() >= 64 * 1024 {
            into.write_all(&out)?;
            out.clear();
        }
    }
    into.write_all(&out)?;
    into.flush()?;
    Ok(written)
}

fn count(tally: &Tally, packet: &Packet) {
    tally.packets.fetch_add(1, Ordering::Relaxed);
    tally
        .bytes
        .fetch_add(packet.data.len() as u64, Ordering::Relaxed);
}

/// The next chunk; with several pods, `None` after a short wait too, so
/// packets held for a quiet pod go out in time.
fn wait_for(
    chunks: &mut mpsc::Receiver<Chunk>,
    several: bool,
    runtime: &tokio::runtime::Handle,
) -> Option<Chunk> {
    if !several {
        return chunks.blocking_recv();
    }
    let tick = Merge::HOLD / 5;
    runtime.block_on(async { tokio::time::timeout(tick, chunks.recv()).await.ok()? })
}

/// The tallies of `pods` pods.
pub fn tallies(pods: usize) -> Arc<[Tally]> {
    (0..pods).map(|_| Tally::default()).collect()
}

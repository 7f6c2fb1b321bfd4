//! Packet capture: tcpdump run in a pod's debug container, its pcap
//! stream brought out as it comes, and written to one local file (or
//! stdout) by one writer: tcpdump's own bytes for one pod, pcapng with an
//! interface per pod for several. The bytes pass through bounded channels
//! (a slow disk slows the pods' streams, never grows podbay), and each
//! pod's packets and bytes are counted as they are written, for the
//! summary and the live view.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

mod prepare;
mod session;
mod write;

pub use prepare::prepare;
pub use session::{PodEnd, Report, Request, StoppedEarly, capture};
pub use write::{Event, Written, write};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::cluster::deadline::Deadline;
use crate::cluster::pipe::{self, InputChunk, PipeSpec};
use crate::model::capture::{self, Counts, Options};
use crate::model::session::SessionEnd;

/// How long tcpdump has to print its counts and end once stopped.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long tcpdump goes on reading once a stop is asked: on SIGINT it
/// leaves what is still in its ring.
const STOP_LINGER: Duration = Duration::from_millis(300);

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
    let exec = async move {
        let mut exec = Box::pin(pipe::exec(client, &spec, Some(stdin_rx), stdout));
        tokio::select! {
            end = &mut exec => end,
            () = stop => {
                // What reached the pod just before the stop is still in
                // the kernel's ring: tcpdump reads it first.
                tokio::time::sleep(STOP_LINGER).await;
                drop(stdin);
                match Deadline::none().within(Some(STOP_GRACE)).bound(&mut exec).await {
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
        }
        // The exec, and its stdout's sender, go here: the forward ends.
    };
    let (end, ()) = tokio::join!(exec, forward);
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

/// The tallies of `pods` pods.
pub fn tallies(pods: usize) -> Arc<[Tally]> {
    (0..pods).map(|_| Tally::default()).collect()
}

//! A whole capture, for `podbay capture` and the TUI alike: every pod
//! readied at once, tcpdump run in each, one writer, the stop (asked,
//! `duration` after every pod listens, or `count` packets), and what each
//! pod gave.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use tokio::sync::watch;

use super::{Ended, Tally, Where};
use crate::cluster::deadline::Deadline;
use crate::engine::outcome::{Failure, classify, exit, fail};
pub use crate::model::capture::Request;

/// How long the debug containers podbay added are watched ending.
const LEASE_END_WAIT: Duration = Duration::from_secs(5);

/// What the capture says as it goes.
#[derive(Debug, Clone)]
pub enum Report {
    /// A line about pod `n` (readying it, a warning).
    Said(usize, String),
    /// Every pod's tcpdump listens (or has failed): what is sent from now
    /// on is captured.
    Capturing,
}

/// How a pod's capture ended.
#[derive(Debug)]
pub enum PodEnd {
    /// It was captured: packets and bytes written, and tcpdump's end.
    Captured {
        packets: u64,
        bytes: u64,
        ended: Ended,
        /// The debug container podbay added, and whether it has ended.
        lease: Option<(String, bool)>,
    },
    NotCaptured(Failure),
}

impl PodEnd {
    /// What it gave, a line each: packets and bytes written and tcpdump's
    /// counts, then whether the debug container podbay added has ended;
    /// or why it was not captured.
    pub fn lines(&self) -> Vec<String> {
        match self {
            PodEnd::Captured {
                packets,
                bytes,
                ended,
                lease,
            } => {
                let mut line = format!(
                    "{packets} packet{} ({}) written",
                    if *packets == 1 { "" } else { "s" },
                    crate::model::transfer::size(*bytes)
                );
                if let Some(captured) = ended.counts.captured {
                    line.push_str(&format!("; tcpdump captured {captured}"));
                }
                if let Some(dropped) = ended.counts.dropped {
                    line.push_str(&format!(", {dropped} dropped by the kernel"));
                }
                let mut lines = vec![line];
                lines.extend(lease.as_ref().map(|(name, ended)| match ended {
                    true => format!("debug container {name} has ended"),
                    false => format!(
                        "debug container {name} has not ended yet; it ends by itself once no tcpdump runs in it (podbay debuggers shows it)"
                    ),
                }));
                lines
            }
            PodEnd::NotCaptured(failure) => vec![format!("not captured: {}", failure.sentence)],
        }
    }
}

/// The capture stopped before any pod was ready.
#[derive(Debug)]
pub struct StoppedEarly;

/// Runs the capture into `into` until `stop` turns true, its duration or
/// count is reached, or every pod's tcpdump has ended; `tallies` (one per
/// pod, [`super::tallies`]) count what is written, live.
pub async fn capture(
    client: &kube::Client,
    request: &Request,
    mut into: Box<dyn Write + Send>,
    tallies: Arc<[Tally]>,
    mut stop: watch::Receiver<bool>,
    report: &(dyn Fn(Report) + Send + Sync),
) -> Result<Vec<PodEnd>, StoppedEarly> {
    let each = request
        .pods
        .iter()
        .enumerate()
        .map(|(index, (namespace, pod))| {
            let say = move |line: String| report(Report::Said(index, line));
            async move {
                super::prepare(
                    client,
                    namespace,
                    pod,
                    &request.image,
                    request.timeout,
                    &say,
                )
                .await
            }
        });
    let prepared = tokio::select! {
        prepared = futures::future::join_all(each) => prepared,
        () = stopped(&mut stop) => return Err(StoppedEarly),
    };
    let ready: Vec<(usize, Where)> = prepared
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.as_ref().ok().map(|at| (i, at.clone())))
        .collect();
    let mut ends: Vec<Option<PodEnd>> = prepared
        .into_iter()
        .map(|p| p.err().map(PodEnd::NotCaptured))
        .collect();
    if ready.is_empty() {
        return Ok(ends.into_iter().flatten().collect());
    }

    let names: Vec<String> = ready
        .iter()
        .map(|(_, at)| format!("{}/{}", at.namespace, at.pod))
        .collect();
    let (stop_tx, stop_rx) = watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    let (chunks_tx, chunks_rx) = super::channel();
    let (listening_tx, mut listening) = tokio::sync::mpsc::unbounded_channel();
    let writer = {
        let tallies = tallies.clone();
        let stop = stop_tx.clone();
        let names = names.clone();
        let runtime = tokio::runtime::Handle::current();
        let limit = request.options.count;
        tokio::task::spawn_blocking(move || {
            let events = |event| match event {
                super::Event::Listening(stream) | super::Event::Silent(stream) => {
                    let _ = listening_tx.send(stream);
                }
                super::Event::LimitReached => {
                    stop.send_replace(true);
                }
            };
            super::write(
                &mut *into, &names, chunks_rx, &tallies, limit, &events, &runtime,
            )
        })
    };
    let runs = ready.iter().enumerate().map(|(stream, (_, at))| {
        let chunks = chunks_tx.clone();
        let mut stop = stop_rx.clone();
        async move {
            let stopped = async move {
                let _ = stop.wait_for(|stopped| *stopped).await;
            };
            super::run(client, at, &request.options, stream, chunks, stopped).await
        }
    });
    let runs = futures::future::join_all(runs);
    drop(chunks_tx);
    tokio::pin!(runs);
    // --duration counts from when every pod's tcpdump listens.
    let mut duration = Box::pin(tokio::time::sleep(Duration::MAX / 4));
    let mut waiting_for = names.len();
    let ended = loop {
        tokio::select! {
            ended = &mut runs => break ended,
            Some(_) = listening.recv(), if waiting_for > 0 => {
                waiting_for -= 1;
                if waiting_for == 0 {
                    report(Report::Capturing);
                    if let Some(d) = request.duration {
                        duration.as_mut().reset(tokio::time::Instant::now() + d);
                    }
                }
            }
            () = stopped(&mut stop) => {
                stop_tx.send_replace(true);
                break (&mut runs).await;
            }
            () = &mut duration => {
                stop_tx.send_replace(true);
                break (&mut runs).await;
            }
        }
    };
    let written = writer.await.map_err(std::io::Error::other).and_then(|w| w);
    for (stream, ((index, at), ended)) in ready.iter().zip(ended).enumerate() {
        let tally = &tallies[stream];
        let (packets, bytes) = (
            tally.packets.load(std::sync::atomic::Ordering::Relaxed),
            tally.bytes.load(std::sync::atomic::Ordering::Relaxed),
        );
        let corrupt = written
            .as_ref()
            .ok()
            .and_then(|w| w.corrupt.iter().find(|(s, _)| *s == stream));
        let end = match (ended, corrupt, &written) {
            (_, _, Err(e)) => PodEnd::NotCaptured(fail(
                exit::CANT_CREATE,
                format!("the capture could not be written: {e}"),
            )),
            (_, Some((_, why)), _) => PodEnd::NotCaptured(fail(
                exit::STREAM_FAILED,
                format!("its stream is not a pcap stream ({why}); what came before is in the file"),
            )),
            (Ok(ended), None, _) if ended.captured() || packets > 0 => PodEnd::Captured {
                packets,
                bytes,
                ended,
                lease: None,
            },
            (Ok(ended), None, _) => PodEnd::NotCaptured(fail(exit::STREAM_FAILED, ended.failure())),
            (Err(e), None, _) => PodEnd::NotCaptured(classify(&e)),
        };
        let end = match (end, at.lease) {
            (
                PodEnd::Captured {
                    packets,
                    bytes,
                    ended,
                    ..
                },
                true,
            ) => PodEnd::Captured {
                packets,
                bytes,
                ended,
                lease: Some((at.container.clone(), lease_ended(client, at).await)),
            },
            (end, _) => end,
        };
        ends[*index] = Some(end);
    }
    Ok(ends.into_iter().flatten().collect())
}

/// Resolves once `stop` is true (its guard not held past it).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// Whether the debug container podbay added has ended, as it does once
/// its capture has.
async fn lease_ended(client: &kube::Client, at: &Where) -> bool {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &at.namespace);
    let waited = tokio::time::Instant::now() + LEASE_END_WAIT;
    let each_read = Deadline::none().within(Some(LEASE_END_WAIT));
    loop {
        let read = each_read
            .bound(crate::cluster::objects::get(&pods, &at.pod))
            .await;
        let state = read.ok().and_then(Result::ok).and_then(|pod| {
            pod.status?
                .ephemeral_container_statuses?
                .into_iter()
                .find(|s| s.name == at.container)?
                .state
        });
        if state.as_ref().is_some_and(|s| s.terminated.is_some()) {
            return true;
        }
        if tokio::time::Instant::now() >= waited {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

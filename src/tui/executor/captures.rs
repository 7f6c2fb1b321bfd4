//! A capture for the TUI: the capture engine's run (as `podbay capture`'s),
//! its lines and live counts sent to the app as it goes, stopped when the
//! app says so.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::Tagged;
use crate::app::Event;
use crate::engine::capture::{self as engine, PodEnd, Report};
use crate::model::capture::{CaptureEvent, Request};

/// How often the live counts are sent while they change.
const TOTALS_EVERY: Duration = Duration::from_millis(500);

/// Starts the capture; the sender stops it.
pub(super) fn start(
    id: u64,
    client: kube::Client,
    request: Request,
    file: String,
    tx: mpsc::Sender<Tagged>,
) -> watch::Sender<bool> {
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(run(id, client, request, file, tx, stopped));
    stop
}

async fn run(
    id: u64,
    client: kube::Client,
    request: Request,
    file: String,
    tx: mpsc::Sender<Tagged>,
    stopped: watch::Receiver<bool>,
) {
    let send = |event: CaptureEvent| {
        let tx = tx.clone();
        async move {
            tx.send(Tagged::untied(Event::Capture { id, event }))
                .await
                .is_ok()
        }
    };
    // A name taken gets a free one beside it: a capture never writes over
    // a file, nor through a link planted in its place.
    let path = PathBuf::from(&file);
    let path = std::path::absolute(&path).unwrap_or(path);
    let path = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => crate::local::free_name(dir, &name.to_string_lossy()),
        _ => path,
    };
    let shown = path.display().to_string();
    let into = match crate::local::create_stream_file(&path) {
        Ok(into) => into,
        Err(e) => {
            let line = format!("Cannot write the capture to {shown}: {e}.");
            send(CaptureEvent::Ended {
                lines: vec![line],
                captured: false,
            })
            .await;
            return;
        }
    };
    let labels: Vec<String> = request
        .pods
        .iter()
        .map(|(namespace, pod)| format!("{namespace}/{pod}"))
        .collect();
    let tallies = engine::tallies(labels.len());
    let (reports_tx, mut reports) = mpsc::unbounded_channel();
    let report = move |report: Report| {
        let _ = reports_tx.send(report);
    };
    let capture = engine::capture(
        &client,
        &request,
        Box::new(into),
        tallies.clone(),
        stopped,
        &report,
    );
    tokio::pin!(capture);
    let mut ticks = tokio::time::interval(TOTALS_EVERY);
    let mut last = (0, 0);
    let totals = || {
        tallies.iter().fold((0, 0), |(p, b), t| {
            (
                p + t.packets.load(Ordering::Relaxed),
                b + t.bytes.load(Ordering::Relaxed),
            )
        })
    };
    loop {
        tokio::select! {
            ends = &mut capture => {
                let (packets, bytes) = totals();
                send(CaptureEvent::Totals { packets, bytes }).await;
                let ends = ends.unwrap_or_default();
                let captured = ends.iter().any(|end| matches!(end, PodEnd::Captured { .. }));
                let lines = labels
                    .iter()
                    .zip(&ends)
                    .flat_map(|(label, end)| end.lines().into_iter().map(move |l| format!("{label}: {l}")))
                    .collect();
                if !captured {
                    crate::local::remove_if_empty(&path);
                }
                send(CaptureEvent::Ended { lines, captured }).await;
                return;
            }
            Some(report) = reports.recv() => {
                let event = match report {
                    Report::Said(pod, line) => CaptureEvent::Said(format!("{}: {line}", labels[pod])),
                    Report::Capturing => CaptureEvent::Capturing { file: shown.clone() },
                };
                if !send(event).await {
                    return;
                }
            }
            _ = ticks.tick() => {
                let now = totals();
                if now != last {
                    last = now;
                    if !send(CaptureEvent::Totals { packets: now.0, bytes: now.1 }).await {
                        return;
                    }
                }
            }
        }
    }
}

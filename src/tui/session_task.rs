//! One terminal session's task: it connects, shows what the container
//! printed before (a replayed log), and hands the stream's output to the
//! pane through its outbox. A flood is held back from the pane a moment,
//! the lines in it that would leave the scrollback unseen are left out
//! ([`Backlog`]), and what it reads is paced as if it were all parsed
//! ([`Pacer`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

use tokio::sync::mpsc;
use tokio::time::{Duration, Instant};

use super::log_pane;
use super::outbox::Outbox;
use super::pacer::Pacer;
use crate::app::Event;
use crate::app::TerminalId;
use crate::cluster::replay::{self, ContainerRef};
use crate::cluster::session::{self, SessionEvent, SessionInput, SessionSpec};
use crate::model::session::SessionEnd;
use crate::term::backlog::Backlog;
use crate::term::line;
use crate::term::unseen::Limits;

/// At most this much output goes to the pane as one event.
const CHUNK: usize = 16 * 1024;

/// At most this much output is read ahead of a terminal's pane: in a
/// flood, room for a scrollback's worth of lines and a skip.
const READ_AHEAD: usize = 4 << 20;

/// What a session's forwarding knows of its pane, to leave out of a flood
/// the lines that would scroll out of the scrollback unseen.
pub(super) struct PaneFacts {
    pub(super) rows: AtomicU16,
    /// A recording keeps every byte.
    pub(super) recording: AtomicBool,
    /// The most lines of scrollback a terminal keeps.
    pub(super) scrollback: usize,
    /// No session fed the terminal before this one.
    pub(super) fresh: bool,
}

impl PaneFacts {
    /// What the pane keeps, unless it is recorded (a recording keeps all).
    fn limits(&self) -> Option<Limits> {
        (!self.recording.load(Ordering::Relaxed)).then(|| Limits {
            rows: self.rows.load(Ordering::Relaxed),
            scrollback: self.scrollback,
        })
    }
}

/// Where a session's output goes, and what paces it.
pub(super) struct Flow {
    pub(super) outbox: Outbox,
    pub(super) pane: Arc<PaneFacts>,
    pub(super) pacer: Arc<Pacer>,
}

/// What a session shows and how.
pub(super) struct Shown {
    /// Whether the container's log before the attach is shown first.
    pub(super) replay_log: bool,
    /// No tty: the SGR standard error is shown in.
    pub(super) untranslated: Option<String>,
}

/// One session, from connecting to its end, its output into its outbox:
/// the stream is pumped and its output forwarded in this one task.
pub(super) async fn stream_session(
    id: TerminalId,
    client: kube::Client,
    spec: SessionSpec,
    shown: Shown,
    inputs: mpsc::UnboundedReceiver<SessionInput>,
    flow: Flow,
) {
    let replay = shown.replay_log.then(|| LogOf {
        client: client.clone(),
        namespace: spec.namespace.clone(),
        pod: spec.pod.clone(),
        container: spec.container.clone(),
        tty: spec.tty,
    });
    // A few chunks in flight: a flood waits at its source.
    let (events_tx, events) = mpsc::channel(4);
    let pumping = match session::connect(client, spec, inputs, events_tx).await {
        Ok(pumping) => pumping,
        Err(e) => {
            let sentence = crate::cluster::errors::describe(&e).sentence;
            let end = SessionEnd {
                exit_code: None,
                reason: format!("could not connect: {}", sentence.trim_end_matches('.')).into(),
                disconnected: true,
            };
            flow.outbox.send(Event::SessionEnded { id, end }).await;
            return;
        }
    };
    let forwarding = forward(id, replay, shown.untranslated.as_deref(), events, &flow);
    // Once the pump ends its events run dry and forwarding ends too; once
    // forwarding ends (the pane closed) the stream is dropped, closing it.
    tokio::select! {
        () = forwarding => {}
        () = async {
            pumping.await;
            std::future::pending::<()>().await
        } => {}
    }
}

/// Where a container's log is read from.
struct LogOf {
    client: kube::Client,
    namespace: String,
    pod: String,
    container: String,
    tty: bool,
}

/// Forwards a session's events to its pane; with `replay`, what the
/// container printed before the attach comes first, from its log. With
/// `untranslated` (no tty: the SGR standard error is shown in), output is
/// shown as a terminal would (LF as a new line) and standard error in its
/// colour, never dropped.
async fn forward(
    id: TerminalId,
    replay: Option<LogOf>,
    untranslated: Option<&str>,
    mut events: mpsc::Receiver<SessionEvent>,
    flow: &Flow,
) {
    let outbox = &flow.outbox;
    let mut backlog = Backlog::new(flow.pane.fresh);
    if let Some(LogOf {
        client,
        namespace,
        pod,
        container,
        tty,
    }) = replay
    {
        let at = ContainerRef {
            namespace: &namespace,
            pod: &pod,
            container: &container,
        };
        let first = replay::replay(&client, at, tty, &mut events).await;
        let mut bytes = Vec::new();
        for (stream, stderr) in [(&first.out, false), (&first.err, true)] {
            let log = log_pane::for_terminal(&String::from_utf8_lossy(&stream.log));
            match untranslated {
                Some(sgr) => {
                    let sgr = stderr.then_some(sgr);
                    bytes.extend(line::untranslated(&log, sgr));
                    bytes.extend(line::untranslated(&stream.after, sgr));
                }
                None => {
                    bytes.extend(log);
                    bytes.extend_from_slice(&stream.after);
                }
            }
        }
        backlog.passed(&bytes);
        let bytes = bytes.into();
        if !outbox.send(Event::SessionOutput { id, bytes }).await {
            return;
        }
        if !outbox.send(Event::SessionAttached { id }).await {
            return;
        }
        // It ended while its log was read: nothing more will come.
        if let Some(end) = first.end {
            outbox.send(Event::SessionEnded { id, end }).await;
            return;
        }
    } else if !outbox.send(Event::SessionAttached { id }).await {
        return;
    }
    match untranslated {
        None => forward_terminal(id, events, flow, backlog).await,
        Some(sgr) => forward_untranslated(id, events, outbox, sgr).await,
    }
}

/// A terminal's output, handed on to its pane in chunks. In a flood it is
/// held back (for [`HOLD`] at most, or until the flood pauses for
/// [`QUIET`]) and read ahead of the pane, the lines that would leave the
/// scrollback unseen are left out as it comes (unless the pane is
/// recorded: a recording keeps all), and it is read no faster than the
/// pacer lets every flood go together.
async fn forward_terminal(
    id: TerminalId,
    mut events: mpsc::Receiver<SessionEvent>,
    flow: &Flow,
    mut backlog: Backlog,
) {
    let outbox = &flow.outbox;
    let mut hold: Option<Hold> = None;
    // Bytes of an ended hold still to hand on before the next may begin.
    let mut releasing = 0;
    loop {
        let limits = flow.pane.limits();
        let room = read_ahead_room(&backlog, limits);
        let hand_on = !backlog.is_empty() && (hold.is_none() || releasing > 0 || !room);
        let paced_until = hold.as_ref().and(flow.pacer.ready_at(id));
        let hold_ends = hold.as_ref().map(|hold| hold.ends(paced_until));
        tokio::select! {
            biased;
            () = sleep_until_some(hold_ends), if hold_ends.is_some() => {
                if let Some(ended) = hold.take() {
                    ended.log(id, backlog.skipped());
                }
                releasing = backlog.len();
            }
            event = paced(&mut events, hold.is_some().then_some((&*flow.pacer, id))), if room => match event {
                Some(SessionEvent::Output(bytes) | SessionEvent::Stderr(bytes)) => {
                    let lines = backlog.push(&bytes);
                    let Some(limits) = limits else { continue };
                    // More piles up than a chunk, or a hold is still being
                    // handed on: a flood.
                    if hold.is_none() && (releasing > 0 || backlog.len() >= CHUNK) {
                        hold = Some(Hold::new(backlog.skipped()));
                    }
                    if let Some(hold) = &mut hold {
                        hold.last_read = Instant::now();
                        flow.pacer.charge(bytes.len(), lines);
                        backlog.skip_unseen(limits);
                    }
                }
                other => {
                    // What was read goes first.
                    while !backlog.is_empty() {
                        let bytes = backlog.next_chunk(CHUNK);
                        if !outbox.send(Event::SessionOutput { id, bytes }).await {
                            return;
                        }
                    }
                    if let Some(ended) = hold.take() {
                        ended.log(id, backlog.skipped());
                    }
                    match other {
                        Some(SessionEvent::Unanswered(unanswered)) => {
                            if !outbox.send(Event::SessionUnanswered { id, unanswered }).await {
                                return;
                            }
                        }
                        Some(SessionEvent::Ended(end)) => {
                            outbox.send(Event::SessionEnded { id, end }).await;
                            return;
                        }
                        _ => return,
                    }
                }
            },
            slot = outbox.reserve(), if hand_on => {
                let Some(slot) = slot else { return };
                let bytes = backlog.next_chunk(CHUNK);
                releasing = releasing.saturating_sub(bytes.len());
                slot.send(Event::SessionOutput { id, bytes });
            }
        }
    }
}

/// A flood held back from its pane.
struct Hold {
    began: Instant,
    last_read: Instant,
    /// Lines the backlog had left out before.
    skipped_before: u64,
}

impl Hold {
    fn new(skipped_before: u64) -> Hold {
        let now = Instant::now();
        Hold {
            began: now,
            last_read: now,
            skipped_before,
        }
    }

    fn log(&self, id: TerminalId, skipped: u64) {
        let left_out = skipped - self.skipped_before;
        if left_out > 0 {
            tracing::debug!(
                "terminal {id:?}: a flood held {:?}, {left_out} lines left out unseen ({skipped} in all)",
                self.began.elapsed()
            );
        }
    }

    /// At most [`HOLD`] after it began; earlier if the flood pauses for
    /// [`QUIET`] (a wait for the pacer, until `paced_until`, is no pause).
    fn ends(&self, paced_until: Option<Instant>) -> Instant {
        let paced = paced_until.map_or(self.last_read, ahead_by_slack);
        let quiet = self.last_read.max(paced) + QUIET;
        quiet.min(self.began + HOLD)
    }
}

/// The longest a flood is held back from its pane: its lines are drawn at
/// least this often.
const HOLD: Duration = Duration::from_millis(100);

/// A held flood that pauses this long is handed on at once (the end of a
/// `cat`, a command's output larger than a chunk).
const QUIET: Duration = Duration::from_millis(3);

/// Whether more output may be read ahead of the pane: a skip needs a
/// scrollback's worth of lines and more behind what it leaves out; with
/// nothing to skip (a recorded pane), a chunk is enough, so that a flood
/// waits at its source.
fn read_ahead_room(backlog: &Backlog, limits: Option<Limits>) -> bool {
    match limits {
        Some(limits) => backlog.len() < READ_AHEAD && backlog.lines() < 2 * limits.lines_to_skip(),
        None => backlog.len() < CHUNK,
    }
}

/// The next event; for a held flood, once the pacer's clock is at most
/// [`SLACK`] ahead of now (a timer's tick is a millisecond: a wait for
/// each read's few microseconds would hold a flood to a read a tick).
async fn paced(
    events: &mut mpsc::Receiver<SessionEvent>,
    pacer: Option<(&Pacer, TerminalId)>,
) -> Option<SessionEvent> {
    if let Some((pacer, id)) = pacer {
        // The clock may move on while this waits (an echo awaited).
        while let Some(until) = pacer.ready_at(id).map(ahead_by_slack)
            && until > Instant::now()
        {
            tokio::time::sleep_until(until).await;
        }
    }
    events.recv().await
}

/// How far a flood may read ahead of the pacer's clock.
const SLACK: Duration = Duration::from_millis(5);

/// When a read charged up to `until` may go on.
fn ahead_by_slack(until: Instant) -> Instant {
    until.checked_sub(SLACK).unwrap_or(until)
}

async fn sleep_until_some(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// Output without a terminal: shown as a terminal would (LF as a new line),
/// standard error in its colour.
async fn forward_untranslated(
    id: TerminalId,
    mut events: mpsc::Receiver<SessionEvent>,
    outbox: &Outbox,
    stderr_sgr: &str,
) {
    while let Some(event) = events.recv().await {
        let forwarded = match event {
            SessionEvent::Output(out) => {
                let bytes = line::untranslated(&out, None).into();
                outbox.send(Event::SessionOutput { id, bytes }).await
            }
            SessionEvent::Stderr(err) => {
                let bytes = line::untranslated(&err, Some(stderr_sgr)).into();
                outbox.send(Event::SessionOutput { id, bytes }).await
            }
            SessionEvent::Unanswered(unanswered) => {
                outbox
                    .send(Event::SessionUnanswered { id, unanswered })
                    .await
            }
            SessionEvent::Ended(end) => {
                outbox.send(Event::SessionEnded { id, end }).await;
                false
            }
        };
        if !forwarded {
            break;
        }
    }
}

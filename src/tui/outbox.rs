//! Session events reach the UI loop through one small bounded queue per
//! session, taken from fairly with a byte budget per frame. A terminal
//! flooding output (`yes`, `cat` of a big file) then holds at most a few
//! chunks in flight: the flood is slowed at its source (backpressure down
//! the websocket), and a keystroke's echo in another pane waits for one
//! budget's worth of parsing, not for megabytes queued ahead of it.
//!
//! After a key typed into a pane, only that pane's session is taken from
//! until its echo arrives (for [`ECHO_HUSH`] at most): the round trip
//! through the server and the remote shell then has the machine to itself
//! instead of sharing it with floods, which back up to their source.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;
use tokio::time::{Duration, Instant};

use crate::app::Event;
use crate::app::TerminalId;

/// Chunks a session may have queued for the UI.
const DEPTH: usize = 4;

/// The longest the other sessions wait for an awaited echo.
const ECHO_HUSH: Duration = Duration::from_millis(25);

/// The sending end, in a session's task.
#[derive(Clone)]
pub struct Outbox {
    id: TerminalId,
    tx: mpsc::Sender<Event>,
    /// Set while the UI loop knows this session has something queued.
    flagged: Arc<AtomicBool>,
    ready: mpsc::UnboundedSender<TerminalId>,
}

impl Outbox {
    /// Queues an event (waiting while the queue is full). False once the
    /// UI is gone or the session was closed.
    pub async fn send(&self, event: Event) -> bool {
        if self.tx.send(event).await.is_err() {
            return false;
        }
        self.announce();
        true
    }

    /// Waits for room in the queue, without an event yet (so that waiting
    /// can be given up for other work). None once the UI is gone.
    pub async fn reserve(&self) -> Option<Slot<'_>> {
        let permit = self.tx.reserve().await.ok()?;
        Some(Slot {
            permit,
            outbox: self,
        })
    }

    fn announce(&self) {
        if !self.flagged.swap(true, Ordering::SeqCst) {
            let _ = self.ready.send(self.id);
        }
    }
}

/// Room for one event in a session's queue.
pub struct Slot<'a> {
    permit: mpsc::Permit<'a, Event>,
    outbox: &'a Outbox,
}

impl Slot<'_> {
    pub fn send(self, event: Event) {
        self.permit.send(event);
        self.outbox.announce();
    }
}

struct Inbox {
    rx: mpsc::Receiver<Event>,
    flagged: Arc<AtomicBool>,
}

/// The receiving ends, in the UI loop.
pub struct Outboxes {
    ready_tx: mpsc::UnboundedSender<TerminalId>,
    inboxes: HashMap<TerminalId, Inbox>,
    ready: BTreeSet<TerminalId>,
    /// The session whose echo is awaited, and until when the others wait.
    hush: Option<(TerminalId, Instant)>,
    /// The session a turn took from last: the next turn starts after it.
    last_taken: Option<TerminalId>,
}

impl Outboxes {
    /// Also returns where sessions announce they have something queued;
    /// pass what arrives there to [`Outboxes::mark_ready`].
    pub fn new() -> (Outboxes, mpsc::UnboundedReceiver<TerminalId>) {
        let (ready_tx, ready_rx) = mpsc::unbounded_channel();
        let outboxes = Outboxes {
            ready_tx,
            inboxes: HashMap::new(),
            ready: BTreeSet::new(),
            hush: None,
            last_taken: None,
        };
        (outboxes, ready_rx)
    }

    /// A fresh queue for session `id`, replacing any earlier one.
    pub fn open(&mut self, id: TerminalId) -> Outbox {
        let (tx, rx) = mpsc::channel(DEPTH);
        let flagged = Arc::new(AtomicBool::new(false));
        self.inboxes.insert(
            id,
            Inbox {
                rx,
                flagged: flagged.clone(),
            },
        );
        self.ready.remove(&id);
        Outbox {
            id,
            tx,
            flagged,
            ready: self.ready_tx.clone(),
        }
    }

    pub fn close(&mut self, id: TerminalId) {
        self.inboxes.remove(&id);
        self.ready.remove(&id);
    }

    pub fn mark_ready(&mut self, id: TerminalId) {
        if self.inboxes.contains_key(&id) {
            self.ready.insert(id);
        }
    }

    /// A key was typed into session `id`: until its output arrives, the
    /// other sessions wait (for [`ECHO_HUSH`] at most).
    pub fn await_echo(&mut self, id: TerminalId) {
        self.hush = Some((id, Instant::now() + ECHO_HUSH));
    }

    /// The session whose echo is awaited, and until when the others wait.
    pub fn hush(&self) -> Option<(TerminalId, Instant)> {
        self.live_hush()
    }

    /// When the others may be taken from again, while an echo is awaited.
    pub fn hush_ends(&self) -> Option<Instant> {
        self.live_hush().map(|(_, until)| until)
    }

    /// The session whose echo is awaited, if the wait is not over.
    fn awaited(&self) -> Option<TerminalId> {
        self.live_hush().map(|(id, _)| id)
    }

    fn live_hush(&self) -> Option<(TerminalId, Instant)> {
        self.hush.filter(|(_, until)| Instant::now() < *until)
    }

    /// Whether a session that may be taken from has something queued.
    pub fn has_ready(&self) -> bool {
        match self.awaited() {
            Some(id) => self.ready.contains(&id),
            None => !self.ready.is_empty(),
        }
    }

    /// Takes queued events from the ready sessions (only the awaited one
    /// during a hush), up to about `budget` bytes of output in all: each
    /// turn starts after the session the last one took from, so that every
    /// session is taken from in turn, and a turn is short (a key typed
    /// meanwhile waits for it).
    pub fn take(&mut self, budget: usize) -> Vec<Event> {
        let mut out = Vec::new();
        let ids: Vec<TerminalId> = match self.awaited() {
            Some(id) => {
                let echoed = self.ready.contains(&id);
                if echoed {
                    if let Some((_, until)) = self.hush {
                        let waited = ECHO_HUSH.saturating_sub(until - Instant::now());
                        tracing::debug!(target: "podbay::echo", "echo queued {} µs after the key", waited.as_micros());
                    }
                    self.hush = None;
                }
                echoed.then_some(id).into_iter().collect()
            }
            None => {
                let mut ids: Vec<TerminalId> = self.ready.iter().copied().collect();
                if let Some(last) = self.last_taken {
                    let after = ids.partition_point(|id| *id <= last);
                    ids.rotate_left(after);
                }
                ids
            }
        };
        let mut taken = 0;
        for id in ids {
            if taken >= budget {
                break;
            }
            self.last_taken = Some(id);
            let Some(inbox) = self.inboxes.get_mut(&id) else {
                self.ready.remove(&id);
                continue;
            };
            while taken < budget {
                match inbox.rx.try_recv() {
                    Ok(event) => {
                        if let Event::SessionOutput { bytes, .. } = &event {
                            taken += bytes.len();
                        }
                        out.push(event);
                    }
                    Err(_) => {
                        // Empty: unflag, then look once more, since the task
                        // may have queued something after seeing the flag set.
                        inbox.flagged.store(false, Ordering::SeqCst);
                        match inbox.rx.try_recv() {
                            Ok(event) => {
                                inbox.flagged.store(true, Ordering::SeqCst);
                                out.push(event);
                            }
                            Err(_) => {
                                self.ready.remove(&id);
                            }
                        }
                        break;
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn output(id: u64, n: usize) -> Event {
        Event::SessionOutput {
            id: TerminalId(id),
            bytes: Bytes::from(vec![b'y'; n]),
        }
    }

    #[tokio::test]
    async fn a_flooding_session_cannot_starve_a_quiet_one() {
        let (mut boxes, mut ready) = Outboxes::new();
        let flood = boxes.open(TerminalId(1));
        let quiet = boxes.open(TerminalId(2));
        for _ in 0..DEPTH {
            assert!(flood.send(output(1, 1000)).await);
        }
        assert!(quiet.send(output(2, 1)).await);
        while let Ok(id) = ready.try_recv() {
            boxes.mark_ready(id);
        }
        let ids = |taken: Vec<Event>| -> Vec<u64> {
            taken
                .iter()
                .map(|e| match e {
                    Event::SessionOutput { id, .. } => id.0,
                    _ => 0,
                })
                .collect()
        };
        assert_eq!(
            ids(boxes.take(1500)),
            [1, 1],
            "two flood chunks: the budget"
        );
        assert!(boxes.has_ready(), "the flood still has chunks queued");
        assert_eq!(
            ids(boxes.take(1500)),
            [2, 1, 1],
            "the next turn starts with the quiet one"
        );
        assert!(boxes.take(1500).is_empty());
        assert!(!boxes.has_ready());
        // Queuing again announces the session again.
        assert!(quiet.send(output(2, 1)).await);
        assert_eq!(ready.try_recv().ok(), Some(TerminalId(2)));
    }

    #[tokio::test]
    async fn while_an_echo_is_awaited_only_its_session_is_taken_from() {
        let (mut boxes, mut ready) = Outboxes::new();
        let flood = boxes.open(TerminalId(1));
        let typed = boxes.open(TerminalId(2));
        assert!(flood.send(output(1, 1000)).await);
        while let Ok(id) = ready.try_recv() {
            boxes.mark_ready(id);
        }
        boxes.await_echo(TerminalId(2));
        assert!(!boxes.has_ready(), "the flood waits");
        assert!(boxes.take(1500).is_empty());
        assert!(boxes.hush_ends().is_some());
        assert!(typed.send(output(2, 1)).await);
        while let Ok(id) = ready.try_recv() {
            boxes.mark_ready(id);
        }
        assert!(boxes.has_ready());
        assert_eq!(boxes.take(1500).len(), 1, "the echo alone");
        assert_eq!(boxes.hush_ends(), None, "the echo ends the wait");
        assert_eq!(boxes.take(1500).len(), 1, "then the flood");
    }
}

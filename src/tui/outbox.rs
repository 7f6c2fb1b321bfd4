//! Session events reach the UI loop through one small bounded queue per
//! session, taken from fairly with a byte budget per frame. A terminal
//! flooding output (`yes`, `cat` of a big file) then holds at most a few
//! chunks in flight: the flood is slowed at its source (backpressure down
//! the websocket), and a keystroke's echo in another pane waits for one
//! budget's worth of parsing, not for megabytes queued ahead of it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;

use crate::app::Event;

/// Chunks a session may have queued for the UI.
const DEPTH: usize = 4;

/// The sending end, in a session's task.
#[derive(Clone)]
pub struct Outbox {
    id: u64,
    tx: mpsc::Sender<Event>,
    /// Set while the UI loop knows this session has something queued.
    flagged: Arc<AtomicBool>,
    ready: mpsc::UnboundedSender<u64>,
}

impl Outbox {
    /// Queues an event (waiting while the queue is full). False once the
    /// UI is gone or the session was closed.
    pub async fn send(&self, event: Event) -> bool {
        if self.tx.send(event).await.is_err() {
            return false;
        }
        if !self.flagged.swap(true, Ordering::SeqCst) {
            let _ = self.ready.send(self.id);
        }
        true
    }
}

struct Inbox {
    rx: mpsc::Receiver<Event>,
    flagged: Arc<AtomicBool>,
}

/// The receiving ends, in the UI loop.
pub struct Outboxes {
    ready_tx: mpsc::UnboundedSender<u64>,
    inboxes: HashMap<u64, Inbox>,
    ready: BTreeSet<u64>,
}

impl Outboxes {
    /// Also returns where sessions announce they have something queued;
    /// pass what arrives there to [`Outboxes::mark_ready`].
    pub fn new() -> (Outboxes, mpsc::UnboundedReceiver<u64>) {
        let (ready_tx, ready_rx) = mpsc::unbounded_channel();
        let outboxes = Outboxes {
            ready_tx,
            inboxes: HashMap::new(),
            ready: BTreeSet::new(),
        };
        (outboxes, ready_rx)
    }

    /// A fresh queue for session `id`, replacing any earlier one.
    pub fn open(&mut self, id: u64) -> Outbox {
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

    pub fn close(&mut self, id: u64) {
        self.inboxes.remove(&id);
        self.ready.remove(&id);
    }

    pub fn mark_ready(&mut self, id: u64) {
        if self.inboxes.contains_key(&id) {
            self.ready.insert(id);
        }
    }

    /// Whether a session (only `only`, when given) has something queued.
    pub fn has_ready(&self, only: Option<u64>) -> bool {
        match only {
            Some(id) => self.ready.contains(&id),
            None => !self.ready.is_empty(),
        }
    }

    /// Takes queued events from every ready session (only from `only`, when
    /// given), up to about `budget` bytes of output each.
    pub fn take(&mut self, budget: usize, only: Option<u64>) -> Vec<Event> {
        let mut out = Vec::new();
        let ids: Vec<u64> = match only {
            Some(id) => self.ready.get(&id).into_iter().copied().collect(),
            None => self.ready.iter().copied().collect(),
        };
        for id in ids {
            let Some(inbox) = self.inboxes.get_mut(&id) else {
                self.ready.remove(&id);
                continue;
            };
            let mut taken = 0;
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
            id,
            bytes: Bytes::from(vec![b'y'; n]),
        }
    }

    #[tokio::test]
    async fn a_flooding_session_cannot_starve_a_quiet_one() {
        let (mut boxes, mut ready) = Outboxes::new();
        let flood = boxes.open(1);
        let quiet = boxes.open(2);
        for _ in 0..DEPTH {
            assert!(flood.send(output(1, 1000)).await);
        }
        assert!(quiet.send(output(2, 1)).await);
        while let Ok(id) = ready.try_recv() {
            boxes.mark_ready(id);
        }
        assert!(boxes.has_ready(Some(2)));
        let taken = boxes.take(1500, None);
        let ids: Vec<u64> = taken
            .iter()
            .map(|e| match e {
                Event::SessionOutput { id, .. } => *id,
                _ => 0,
            })
            .collect();
        assert_eq!(
            ids,
            [1, 1, 2],
            "two flood chunks (the budget), then the echo"
        );
        assert!(boxes.has_ready(None), "the flood still has chunks queued");
        assert!(!boxes.has_ready(Some(2)), "the echo was taken");
        assert!(boxes.take(1500, Some(2)).is_empty(), "only the quiet one");
        assert_eq!(boxes.take(1500, None).len(), 2);
        assert!(boxes.take(1500, None).is_empty());
        assert!(!boxes.has_ready(None));
        // Queuing again announces the session again.
        assert!(quiet.send(output(2, 1)).await);
        assert_eq!(ready.try_recv().ok(), Some(2));
    }
}

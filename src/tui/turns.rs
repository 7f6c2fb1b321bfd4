//! What a slow turn of the UI loop did, for `PODBAY_LOG=podbay::turns=debug`:
//! a key typed meanwhile waits for the turn to end, so a late echo starts
//! here.

use tokio::time::{Duration, Instant};

use crate::app::Event;

/// Turns longer than this are logged.
const SLOW: Duration = Duration::from_millis(4);

/// A turn's events, counted before they are applied.
pub(super) struct Turn {
    started: Instant,
    output_bytes: usize,
    outputs: usize,
    others: usize,
}

impl Turn {
    /// A turn applying `pending` begins, if slow turns are logged.
    pub(super) fn begin(pending: &[Event]) -> Option<Turn> {
        if !tracing::enabled!(target: "podbay::turns", tracing::Level::DEBUG) {
            return None;
        }
        let mut turn = Turn {
            started: Instant::now(),
            output_bytes: 0,
            outputs: 0,
            others: 0,
        };
        for event in pending {
            match event {
                Event::SessionOutput { bytes, .. } => {
                    turn.outputs += 1;
                    turn.output_bytes += bytes.len();
                }
                _ => turn.others += 1,
            }
        }
        Some(turn)
    }

    /// The turn applied its events.
    pub(super) fn end(self) {
        let took = self.started.elapsed();
        if took < SLOW {
            return;
        }
        tracing::debug!(
            target: "podbay::turns",
            "a turn took {} µs: {} outputs of {} bytes, {} other events",
            took.as_micros(),
            self.outputs,
            self.output_bytes,
            self.others,
        );
    }
}

/// A frame drawn in `took`, logged if slow.
pub(super) fn drawn(took: Duration) {
    if took >= SLOW {
        tracing::debug!(target: "podbay::turns", "a frame took {} µs to draw", took.as_micros());
    }
}

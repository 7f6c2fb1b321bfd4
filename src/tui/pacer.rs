//! How fast a flood is read while it is held back from its pane. Parsing
//! every line is what held a flood back before: its writer waited while
//! the emulator worked. Held back, most of a flood's lines are left out
//! unparsed (they would leave the scrollback unseen), so without a pace an
//! endless flood (`yes`) would be pulled through the cluster, TLS and
//! podbay as fast as the machine goes, and take the cores a keystroke's
//! echo needs. The pacer charges what a held flood reads the time the
//! emulator would have spent on it, on one clock shared by every session
//! as one emulator thread would be: floods go about as fast as they went
//! with every byte parsed, and podbay spends its CPU only on what can be
//! seen.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::app::TerminalId;

/// What vt100 spends on a line that scrolls (a row made, one trimmed into
/// the scrollback, the oldest freed) and on a byte, on the benchmark's
/// 2-core machine: 1.7 µs a line and 20–26 ns a byte there, charged a
/// little below so that a flood ends no later than it did.
const PER_LINE: Duration = Duration::from_nanos(1_500);
const PER_BYTE: Duration = Duration::from_nanos(20);

/// The shared clock.
#[derive(Default)]
pub(super) struct Pacer {
    clock: Mutex<Clock>,
}

#[derive(Default)]
struct Clock {
    /// Until when the emulator would still be busy with what floods read.
    busy_until: Option<Instant>,
    /// While a key's echo is awaited from one terminal, the others' floods
    /// wait too (their writers then back up to their source).
    hush: Option<(TerminalId, Instant)>,
}

impl Pacer {
    /// Output a held flood read (`bytes` holding `lines` line feeds): its
    /// cost goes on the clock.
    pub(super) fn charge(&self, bytes: usize, lines: usize) {
        let cost = PER_LINE * u32::try_from(lines).unwrap_or(u32::MAX)
            + PER_BYTE * u32::try_from(bytes).unwrap_or(u32::MAX);
        let now = Instant::now();
        let mut clock = self.clock();
        clock.busy_until = Some(clock.busy_until.map_or(now, |busy| busy.max(now)) + cost);
    }

    /// When terminal `id`'s flood may read again.
    pub(super) fn ready_at(&self, id: TerminalId) -> Option<Instant> {
        let clock = self.clock();
        let hush = clock
            .hush
            .filter(|(awaited, _)| *awaited != id)
            .map(|(_, until)| until);
        clock.busy_until.max(hush)
    }

    /// An echo is awaited from a terminal until then, or no longer.
    pub(super) fn hush(&self, hush: Option<(TerminalId, Instant)>) {
        self.clock().hush = hush;
    }

    fn clock(&self) -> std::sync::MutexGuard<'_, Clock> {
        self.clock.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn what_floods_read_is_paid_for_on_one_clock() {
        let pacer = Pacer::default();
        let flood = TerminalId(1);
        assert_eq!(pacer.ready_at(flood), None, "nothing read yet");
        let start = Instant::now();
        pacer.charge(20_000, 10_000);
        let first = pacer.ready_at(flood).unwrap();
        assert_eq!(first - start, PER_LINE * 10_000 + PER_BYTE * 20_000);
        // A second flood's read waits behind the first: one emulator.
        pacer.charge(20_000, 10_000);
        let second = pacer.ready_at(TerminalId(2)).unwrap();
        assert_eq!(second - first, first - start);
        // Once the clock has run out, a charge starts from now.
        tokio::time::sleep_until(second + Duration::from_secs(1)).await;
        let now = Instant::now();
        pacer.charge(1, 1);
        assert_eq!(pacer.ready_at(flood).unwrap() - now, PER_LINE + PER_BYTE);
    }

    #[tokio::test(start_paused = true)]
    async fn while_an_echo_is_awaited_every_other_flood_waits() {
        let pacer = Pacer::default();
        let (typed_into, flood) = (TerminalId(1), TerminalId(2));
        let until = Instant::now() + Duration::from_millis(25);
        pacer.hush(Some((typed_into, until)));
        assert_eq!(pacer.ready_at(flood), Some(until));
        assert_eq!(
            pacer.ready_at(typed_into),
            None,
            "its own output is awaited"
        );
        pacer.hush(None);
        assert_eq!(pacer.ready_at(flood), None, "the echo came: on at once");
    }
}

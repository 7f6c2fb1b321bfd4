//! How long an operation may take: a total deadline (the user's `--timeout`
//! or `--max-time`), and a bound on how long its payload may stall. Only
//! payload counts as progress: a server that sends pings or empty frames
//! every few seconds, or a byte a second, does not hold an operation open
//! past either. Clean-up (deleting what podbay made) has its own short
//! deadline and gives way to a second signal.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// How long clean-up (a DELETE of the pod podbay made) may take.
pub const CLEAN_UP: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    total: Option<(Instant, Duration)>,
    stall: Option<Duration>,
    last_progress: Instant,
}

/// Which bound an operation passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expired {
    /// The whole operation took longer than this.
    Total(Duration),
    /// No payload came or went for this long.
    Stalled(Duration),
}

impl std::fmt::Display for Expired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expired::Total(d) => write!(f, "it took longer than {}", words(*d)),
            Expired::Stalled(d) => write!(f, "nothing was sent or received for {}", words(*d)),
        }
    }
}

fn words(d: Duration) -> String {
    match d.as_secs() {
        s if s >= 120 && s % 60 == 0 => format!("{} min", s / 60),
        s if s >= 1 => format!("{s} s"),
        _ => format!("{} ms", d.as_millis()),
    }
}

impl Deadline {
    /// No bound at all (yet).
    pub fn none() -> Deadline {
        Deadline {
            total: None,
            stall: None,
            last_progress: Instant::now(),
        }
    }

    /// Over `after` from now, however much progress is made.
    pub fn within(self, after: Option<Duration>) -> Deadline {
        Deadline {
            total: after.map(|d| (Instant::now() + d, d)),
            ..self
        }
    }

    /// Over once the payload is silent for `after`.
    pub fn stalling_after(self, after: Duration) -> Deadline {
        Deadline {
            stall: Some(after),
            last_progress: Instant::now(),
            ..self
        }
    }

    /// Payload went one way or the other (not a ping, not an empty frame).
    pub fn progressed(&mut self) {
        self.last_progress = Instant::now();
    }

    /// The bound that comes first, and when.
    fn next(&self) -> Option<(Instant, Expired)> {
        let total = self.total.map(|(at, d)| (at, Expired::Total(d)));
        let stall = self
            .stall
            .map(|d| (self.last_progress + d, Expired::Stalled(d)));
        match (total, stall) {
            (Some(t), Some(s)) => Some(if t.0 <= s.0 { t } else { s }),
            (t, s) => t.or(s),
        }
    }

    /// Resolves when the first bound is passed (never, with none).
    pub async fn passed(&self) -> Expired {
        match self.next() {
            Some((at, why)) => {
                tokio::time::sleep_until(at).await;
                why
            }
            None => std::future::pending().await,
        }
    }

    /// `work`, unless a bound is passed first.
    pub async fn bound<T>(&self, work: impl Future<Output = T>) -> Result<T, Expired> {
        tokio::select! {
            done = work => Ok(done),
            why = self.passed() => Err(why),
        }
    }
}

/// Why clean-up did not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanUpCut {
    /// Past [`CLEAN_UP`] without an answer.
    Unanswered,
    /// A second signal asked podbay to stop now.
    Signalled,
}

/// `work` (a DELETE of what podbay made) within [`CLEAN_UP`], given up at
/// once on a second signal: a server that never answers cannot keep
/// podbay from ending, and neither can it make podbay ignore the user.
pub async fn clean_up<T>(work: impl Future<Output = T>) -> Result<T, CleanUpCut> {
    let stop = crate::tty::next_termination();
    tokio::select! {
        done = tokio::time::timeout(CLEAN_UP, work) => done.map_err(|_| CleanUpCut::Unanswered),
        () = stop => Err(CleanUpCut::Signalled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn pings_do_not_hold_a_stalled_operation_open() {
        let mut deadline = Deadline::none().stalling_after(Duration::from_secs(60));
        let start = Instant::now();
        // Payload for a while: the bound moves.
        tokio::time::sleep(Duration::from_secs(50)).await;
        deadline.progressed();
        // Then only pings, which are not progress: over 60 s after the last byte.
        let why = deadline
            .bound(std::future::pending::<()>())
            .await
            .unwrap_err();
        assert_eq!(why, Expired::Stalled(Duration::from_secs(60)));
        assert_eq!(start.elapsed(), Duration::from_secs(110));
        assert_eq!(why.to_string(), "nothing was sent or received for 60 s");
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_meets_the_total_deadline() {
        let mut deadline = Deadline::none()
            .within(Some(Duration::from_secs(600)))
            .stalling_after(Duration::from_secs(60));
        let start = Instant::now();
        // A byte a second never stalls; the total ends it.
        let why = loop {
            tokio::select! {
                why = deadline.passed() => break why,
                () = tokio::time::sleep(Duration::from_secs(1)) => deadline.progressed(),
            }
        };
        assert_eq!(why, Expired::Total(Duration::from_secs(600)));
        assert_eq!(start.elapsed(), Duration::from_secs(600));
        assert_eq!(why.to_string(), "it took longer than 10 min");
    }

    #[tokio::test(start_paused = true)]
    async fn no_bound_waits_for_the_work() {
        let done = Deadline::none()
            .bound(tokio::time::sleep(Duration::from_secs(3600)))
            .await;
        assert!(done.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn clean_up_gives_up_after_its_own_short_deadline() {
        let start = Instant::now();
        let cut = clean_up(std::future::pending::<()>()).await;
        assert_eq!(cut, Err(CleanUpCut::Unanswered));
        assert_eq!(start.elapsed(), CLEAN_UP);
    }
}

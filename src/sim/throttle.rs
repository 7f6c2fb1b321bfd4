//! CPU limits, enforced as CFS bandwidth control does in effect: a
//! container may use its limit's share of each 100 ms period; one that
//! used more is stopped (`SIGSTOP`) until the time it overspent is paid
//! back, then continued. So a busy container uses its limit and no more, in
//! `kubectl top` as on a node. (A node's kernel never stops the tasks; it
//! only does not schedule them. Here `ps` inside shows them `T` meanwhile.)

use std::collections::HashMap;
use std::sync::Weak;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::SimState;
use super::store::Key;

/// CFS's default `cpu.cfs_period_us`.
pub const PERIOD: Duration = Duration::from_millis(100);

/// A running container with a CPU limit, as the last sample found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Limited {
    pub container: (Key, String),
    /// The root of its process tree.
    pub leader: u32,
    /// Its `limits.cpu`, in cores.
    pub cores: f64,
}

/// One container's account.
struct Bucket {
    pids: Vec<u32>,
    /// CPU time it may still use (negative: overspent), in ns.
    credit_ns: f64,
    last_ns: Option<u64>,
    stopped: bool,
}

impl Bucket {
    fn set_stopped(&mut self, stop: bool) {
        if stop != self.stopped {
            let signal = if stop {
                Signal::SIGSTOP
            } else {
                Signal::SIGCONT
            };
            for pid in &self.pids {
                if let Ok(pid) = i32::try_from(*pid) {
                    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
                }
            }
            self.stopped = stop;
        }
    }

    /// One period's account: credit earned at the limit's rate (never more
    /// than a period's worth: no bursts saved up), time used taken off.
    fn settle(&mut self, cores: f64, used_ns: u64) -> bool {
        let spent = self.last_ns.map_or(0, |last| used_ns.saturating_sub(last));
        self.last_ns = Some(used_ns);
        let quota = cores * PERIOD.as_nanos() as f64;
        self.credit_ns = (self.credit_ns + quota - spent as f64).min(quota);
        self.credit_ns < 0.0
    }
}

/// Holds every limited container to its limit, each period, until the
/// simulator is gone; nothing is left stopped.
pub async fn run(state: Weak<SimState>) {
    let mut buckets: HashMap<(Key, String), Bucket> = HashMap::new();
    let mut ticker = tokio::time::interval(PERIOD);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(state) = state.upgrade() else {
            for bucket in buckets.values_mut() {
                bucket.set_stopped(false);
            }
            return;
        };
        let limited = state.metrics.limited();
        buckets.retain(|container, bucket| {
            let keep = limited.iter().any(|l| &l.container == container);
            if !keep {
                bucket.set_stopped(false);
            }
            keep
        });
        for l in limited {
            let pids = super::procfs::tree_of(l.leader);
            let bucket = buckets.entry(l.container.clone()).or_insert(Bucket {
                pids: pids.clone(),
                credit_ns: 0.0,
                last_ns: None,
                stopped: false,
            });
            // Another set of processes (a restart, a fork): a new account.
            if bucket.pids != pids {
                bucket.set_stopped(false);
                bucket.pids = pids;
                bucket.last_ns = None;
            }
            let over = bucket.settle(l.cores, super::procfs::cpu_ns_of(&bucket.pids));
            bucket.set_stopped(over);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket() -> Bucket {
        Bucket {
            pids: Vec::new(),
            credit_ns: 0.0,
            last_ns: None,
            stopped: false,
        }
    }

    #[test]
    fn a_busy_container_runs_its_limits_share_of_the_periods() {
        // Half a core's limit; while it runs it uses a whole period.
        let mut b = bucket();
        let mut used = 0u64;
        let mut ran = 0;
        assert!(
            !b.settle(0.5, used),
            "the first period only starts the account"
        );
        for _ in 0..100 {
            let stopped = b.stopped;
            if !stopped {
                used += PERIOD.as_nanos() as u64;
                ran += 1;
            }
            b.stopped = b.settle(0.5, used);
        }
        assert!((45..=55).contains(&ran), "ran {ran} of 100 periods");
    }

    #[test]
    fn an_idle_container_saves_no_more_than_one_period() {
        let mut b = bucket();
        b.settle(0.2, 0);
        for _ in 0..50 {
            b.settle(0.2, 0);
        }
        let quota = 0.2 * PERIOD.as_nanos() as f64;
        assert!((b.credit_ns - quota).abs() < 1.0, "{}", b.credit_ns);
        let burst = 3 * PERIOD.as_nanos() as u64;
        assert!(
            b.settle(0.2, burst),
            "a burst past its saved credit is held"
        );
    }
}

//! The pod list's CPU and MEM columns: when to read the metrics API again
//! (as often as metrics-server measures, one read for the namespaces
//! shown), and what a read came to.

use std::time::Duration;

use jiff::Timestamp;

use super::event::Effect;
use super::message::{info, warning};
use super::{App, LinkState, Scope};
use crate::model::ClusterId;
use crate::model::usage::{PodUse, UsageError};

/// Reads no closer together than this, whatever the server's window.
const FASTEST: Duration = Duration::from_secs(5);
/// Nor further apart than this.
const SLOWEST: Duration = Duration::from_secs(60);
/// Until the server says its window: metrics-server's default resolution.
const FIRST_PERIOD: Duration = Duration::from_secs(15);

/// Where the reads stand, for one cluster and scope.
#[derive(Debug, Clone, Default)]
pub struct UsageReads {
    /// The cluster and scope the figures are of; another starts over.
    of: Option<(ClusterId, Scope)>,
    /// When to read next; `None` while a read is out, or when there is
    /// nothing to read (no metrics API, not allowed).
    next: Option<Timestamp>,
    out: bool,
    period: Option<Duration>,
    /// Whether the columns are shown: the last read worked.
    shown: bool,
    /// What was last said about a failure, so it is said once.
    said: Option<String>,
}

impl UsageReads {
    pub fn shown(&self) -> bool {
        self.shown
    }
}

impl App {
    /// On a tick: the read that is due, if one is.
    pub(super) fn usage_due(&mut self) -> Option<Effect> {
        if self.connection.state() != LinkState::Live || self.pods.total() == 0 {
            return None;
        }
        let here = (self.cluster.clone(), self.scope.clone());
        let reads = &mut self.usage;
        if reads.of.as_ref() != Some(&here) {
            *reads = UsageReads {
                of: Some(here),
                next: Some(self.now),
                ..UsageReads::default()
            };
            self.pods.clear_usage();
        }
        let reads = &mut self.usage;
        if reads.out || reads.next.is_none_or(|at| self.now < at) {
            return None;
        }
        reads.out = true;
        reads.next = None;
        let namespaces = match &self.scope {
            Scope::All => None,
            Scope::Namespaces(list) => Some(list.clone()),
        };
        Some(Effect::ReadUsage {
            cluster: self.cluster.clone(),
            namespaces,
        })
    }

    /// A read came back: its figures go into the rows, or the columns go
    /// and why is said once.
    pub(super) fn on_usage(
        &mut self,
        cluster: &ClusterId,
        namespaces: Option<Vec<String>>,
        read: Result<(Vec<PodUse>, Option<Duration>), UsageError>,
    ) {
        let scope = match namespaces {
            None => Scope::All,
            Some(list) => Scope::Namespaces(list),
        };
        let reads = &mut self.usage;
        if reads.of.as_ref() != Some(&(cluster.clone(), scope)) {
            return;
        }
        reads.out = false;
        match read {
            Ok((pods, window)) => {
                let period = window.unwrap_or(FIRST_PERIOD).clamp(FASTEST, SLOWEST);
                reads.period = Some(period);
                reads.next = Some(self.now + period);
                reads.shown = true;
                if reads.said.take().is_some() {
                    self.message = Some(info("CPU and memory are read again.".to_string()));
                }
                self.pods.set_usage(pods);
            }
            Err(error) => {
                let sentence = error.sentence();
                // A passing failure keeps the last figures and tries again.
                reads.next = error
                    .passing()
                    .then(|| self.now + reads.period.unwrap_or(FIRST_PERIOD));
                if !error.passing() {
                    reads.shown = false;
                    self.pods.clear_usage();
                }
                if reads.said.as_deref() != Some(sentence.as_str()) {
                    reads.said = Some(sentence.clone());
                    self.message = Some(warning(sentence));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;

/// Figures as a read brings them, for tests of other layers.
#[cfg(test)]
pub(crate) mod fixtures {
    pub(crate) use super::tests::{measured, used};
}

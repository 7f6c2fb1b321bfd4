//! The pod list's CPU and MEM columns: when to read the metrics API again
//! (as often as metrics-server measures, one read for the namespaces
//! shown), and what a read came to.

use std::time::Duration;

use jiff::Timestamp;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::event::Effect;
use super::message::{info, warning};
use super::{App, LinkState, Scope, View};
use crate::model::usage::{PodUse, UsageError, Use};
use crate::model::{ClusterId, PodKey};

/// Reads no closer together than this, whatever the server's window.
const FASTEST: Duration = Duration::from_secs(5);
/// A big cluster's (over [`BIG`] pods) no closer than metrics-server's
/// default resolution: each read is seconds of work for the server.
const FASTEST_BIG: Duration = Duration::from_secs(15);
/// Pods past which every namespace's figures are read namespace by
/// namespace (one answer for all would be tens of MB).
const BIG: usize = 20_000;
/// Nor further apart than this.
const SLOWEST: Duration = Duration::from_secs(60);
/// Until the server says its window: metrics-server's default resolution.
const FIRST_PERIOD: Duration = Duration::from_secs(15);
/// The samples kept of a pod watched closely: 10 minutes at metrics-server's
/// default resolution.
const HISTORY: usize = 40;

/// One read's figures of a pod's containers.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub at: Timestamp,
    pub containers: Vec<(String, Use)>,
}

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
    /// When the last read went out, and the namespaces it asked for.
    last_read: Option<Timestamp>,
    asked: Option<Option<Vec<String>>>,
    /// Every namespace's figures are too many for one answer: they are
    /// read namespace by namespace.
    split: bool,
    /// The last figures of the pods watched closely (the pod view's, the
    /// panes'), oldest first: the pod view's sparklines.
    history: BTreeMap<PodKey, VecDeque<Sample>>,
    /// What each node used at the last read, while the nodes view is open.
    nodes: BTreeMap<String, Use>,
}

impl UsageReads {
    pub fn shown(&self) -> bool {
        self.shown
    }

    /// What `node` used at the last read, if the nodes view has read it.
    pub fn node(&self, node: &str) -> Option<Use> {
        self.nodes.get(node).copied().filter(|_| self.shown)
    }

    /// The samples kept of `pod`, oldest first.
    pub fn history(&self, pod: &PodKey) -> Option<&VecDeque<Sample>> {
        self.history.get(pod)
    }
}

impl App {
    /// On a tick: the reads that are due, if any: the pods', and the
    /// nodes' while the nodes view is open.
    pub(super) fn usage_due(&mut self) -> Vec<Effect> {
        let Some(pods) = self.pod_usage_due() else {
            return Vec::new();
        };
        let nodes = matches!(self.view, View::Nodes(_)).then(|| Effect::ReadNodeUsage {
            cluster: self.cluster.clone(),
        });
        std::iter::once(pods).chain(nodes).collect()
    }

    fn pod_usage_due(&mut self) -> Option<Effect> {
        // Not while a list is under way: its pages come first.
        if self.connection.state() != LinkState::Live
            || self.pods.total() == 0
            || !self.listing.is_empty()
        {
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
        let watched = self.closely_watched();
        let fastest = self.fastest_read();
        let reads = &mut self.usage;
        // A pod just opened gets its containers' figures soon, not a
        // window later.
        let opened = reads.shown
            && watched.iter().any(|k| !reads.history.contains_key(k))
            && reads
                .last_read
                .is_none_or(|at| self.now.duration_since(at).unsigned_abs() >= fastest);
        if reads.out || (!opened && reads.next.is_none_or(|at| self.now < at)) {
            return None;
        }
        reads.out = true;
        reads.next = None;
        reads.last_read = Some(self.now);
        let big = self.pods.total() > BIG;
        let namespaces = match &self.scope {
            Scope::All if (reads.split || big) && !self.namespaces.is_empty() => {
                Some(self.namespaces.clone())
            }
            Scope::All => None,
            Scope::Namespaces(list) => Some(list.clone()),
        };
        reads.asked = Some(namespaces.clone());
        Some(Effect::ReadUsage {
            cluster: self.cluster.clone(),
            namespaces,
            detailed: watched.into_iter().collect(),
        })
    }

    /// The nodes' figures came back: kept for the nodes view, or dropped
    /// (a failure is the pods' read's to say).
    pub(super) fn on_node_usage(
        &mut self,
        cluster: &ClusterId,
        read: Result<Vec<(String, Use)>, UsageError>,
    ) {
        if self.usage.of.as_ref().is_some_and(|(c, _)| c == cluster) {
            self.usage.nodes = read
                .map(|nodes| nodes.into_iter().collect())
                .unwrap_or_default();
        }
    }

    /// A read came back: its figures go into the rows, or the columns go
    /// and why is said once.
    pub(super) fn on_usage(
        &mut self,
        cluster: &ClusterId,
        namespaces: Option<Vec<String>>,
        read: Result<(Vec<PodUse>, Option<Duration>), UsageError>,
    ) {
        let fastest = self.fastest_read();
        let reads = &mut self.usage;
        let ours = reads.of.as_ref().is_some_and(|(c, _)| c == cluster)
            && reads.asked.as_ref() == Some(&namespaces);
        if !ours {
            return;
        }
        reads.out = false;
        match read {
            // Every namespace at once is more than one answer may be: one
            // read a namespace from now on, at once.
            Err(UsageError::TooLarge) if namespaces.is_none() => {
                reads.split = true;
                reads.next = Some(self.now);
            }
            Ok((pods, window)) => {
                let period = window.unwrap_or(FIRST_PERIOD).clamp(fastest, SLOWEST);
                reads.period = Some(period);
                reads.next = Some(self.now + period);
                reads.shown = true;
                if reads.said.take().is_some() {
                    self.message = Some(info("CPU and memory are read again.".to_string()));
                }
                self.keep_history(&pods);
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
                    reads.history.clear();
                    self.pods.clear_usage();
                }
                // Said once, and never over another sentence: the columns
                // are a convenience, what the status line says may not be.
                // A passing failure before any figure is not worth a word.
                let worth_saying = reads.shown || !error.passing();
                if worth_saying && reads.said.as_deref() != Some(sentence.as_str()) {
                    reads.said = Some(sentence.clone());
                    if self.message.is_none() {
                        self.message = Some(warning(sentence));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;

impl App {
    /// The pods whose containers' figures are kept: the pod view's, and
    /// those with a pane on this cluster.
    fn closely_watched(&self) -> BTreeSet<PodKey> {
        let mut pods: BTreeSet<PodKey> = self
            .workspace
            .terminals
            .values()
            .filter(|t| t.key.cluster == self.cluster)
            .map(|t| t.key.pod.clone())
            .collect();
        if let View::Pod(view) = &self.view {
            pods.insert(view.key.clone());
        }
        pods
    }

    /// How close together reads may be: a big cluster's are further apart.
    fn fastest_read(&self) -> Duration {
        if self.pods.total() > BIG {
            FASTEST_BIG
        } else {
            FASTEST
        }
    }

    fn keep_history(&mut self, measured: &[PodUse]) {
        let watched = self.closely_watched();
        let history = &mut self.usage.history;
        history.retain(|pod, _| watched.contains(pod));
        // A pod not measured (not running) is not read for again at once.
        for pod in &watched {
            history.entry(pod.clone()).or_default();
        }
        for pod in measured.iter().filter(|p| watched.contains(&p.key)) {
            let samples = history.entry(pod.key.clone()).or_default();
            if samples.len() == HISTORY {
                samples.pop_front();
            }
            samples.push_back(Sample {
                at: self.now,
                containers: pod.containers.clone(),
            });
        }
    }
}

/// Figures as a read brings them, for tests of other layers.
#[cfg(test)]
pub(crate) mod fixtures {
    pub(crate) use super::tests::{measured, used};
}

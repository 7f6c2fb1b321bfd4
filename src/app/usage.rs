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
    /// The reads of `cluster`'s figures, if the list shows it.
    pub fn usage_of(&self, cluster: &ClusterId) -> Option<&UsageReads> {
        if *cluster == self.cluster {
            return Some(&self.usage);
        }
        self.others
            .iter()
            .find(|o| o.cluster.as_ref() == Some(cluster))
            .map(|o| &o.usage)
    }

    /// Whether the list's CPU and MEM columns are shown: some cluster's
    /// figures are read.
    pub fn usage_shown(&self) -> bool {
        self.usage.shown() || self.others.iter().any(|o| o.usage.shown())
    }

    fn usage_of_mut(&mut self, cluster: &ClusterId) -> Option<&mut UsageReads> {
        if *cluster == self.cluster {
            return Some(&mut self.usage);
        }
        self.others
            .iter_mut()
            .find(|o| o.cluster.as_ref() == Some(cluster))
            .map(|o| &mut o.usage)
    }

    /// On a tick: the reads that are due, if any: each cluster's pods',
    /// and the nodes' while the nodes view is open.
    pub(super) fn usage_due(&mut self) -> Vec<Effect> {
        let clusters = self.clusters_shown();
        let mut effects: Vec<Effect> = clusters
            .iter()
            .filter_map(|cluster| self.pod_usage_due(cluster))
            .collect();
        // The nodes view's figures, with each cluster's pods'.
        if matches!(self.view, View::Nodes(_)) {
            let nodes: Vec<Effect> = effects
                .iter()
                .filter_map(|e| match e {
                    Effect::ReadUsage { cluster, .. } => Some(Effect::ReadNodeUsage {
                        cluster: cluster.clone(),
                    }),
                    _ => None,
                })
                .collect();
            effects.extend(nodes);
        }
        effects
    }

    fn pod_usage_due(&mut self, cluster: &ClusterId) -> Option<Effect> {
        let tag = self.row_tag(cluster)?;
        let live = match &tag {
            Some(context) if Some(context) != self.first_tag.as_ref() => self
                .others
                .iter()
                .find(|o| o.context == *context)
                .is_some_and(|o| o.link.state() == LinkState::Live),
            _ => self.connection.state() == LinkState::Live,
        };
        // Not while a list is under way: its pages come first.
        if !live || self.pods.total() == 0 || self.listing.keys().any(|(t, _)| *t == tag) {
            return None;
        }
        let scope = self.scope_of(&tag);
        let here = (cluster.clone(), scope.clone());
        let now = self.now;
        let reads = self.usage_of_mut(cluster)?;
        if reads.of.as_ref() != Some(&here) {
            *reads = UsageReads {
                of: Some(here),
                next: Some(now),
                ..UsageReads::default()
            };
            self.pods.set_usage(tag.as_deref(), Vec::new());
        }
        let watched = self.closely_watched(cluster);
        let fastest = self.fastest_read();
        let big = self.pods.total() > BIG;
        let reads = self.usage_of_mut(cluster)?;
        // A pod just opened gets its containers' figures soon, not a
        // window later.
        let opened = reads.shown
            && watched.iter().any(|k| !reads.history.contains_key(k))
            && reads
                .last_read
                .is_none_or(|at| now.duration_since(at).unsigned_abs() >= fastest);
        if reads.out || (!opened && reads.next.is_none_or(|at| now < at)) {
            return None;
        }
        reads.out = true;
        reads.next = None;
        reads.last_read = Some(now);
        let split = reads.split || big;
        // Only now, when a read is due: another cluster's namespaces are
        // gathered from its rows, a pass over the whole list.
        let namespaces = match scope {
            Scope::All if split => Some(self.namespaces_of(&tag)).filter(|n| !n.is_empty()),
            Scope::All => None,
            Scope::Namespaces(list) => Some(list),
        };
        self.usage_of_mut(cluster)?.asked = Some(namespaces.clone());
        Some(Effect::ReadUsage {
            cluster: cluster.clone(),
            namespaces,
            detailed: watched.into_iter().collect(),
        })
    }

    /// The namespaces of the cluster whose rows carry `tag`: the browser's
    /// as listed; another's, those its rows are in.
    fn namespaces_of(&self, tag: &Option<std::sync::Arc<str>>) -> Vec<String> {
        if *tag == self.first_tag {
            return self.namespaces.clone();
        }
        let seen: BTreeSet<&str> = self
            .pods
            .rows()
            .filter(|r| r.context == *tag)
            .map(|r| &*r.key.namespace)
            .collect();
        seen.into_iter().map(str::to_string).collect()
    }

    /// The nodes' figures came back: kept for the nodes view, or dropped
    /// (a failure is the pods' read's to say).
    pub(super) fn on_node_usage(
        &mut self,
        cluster: &ClusterId,
        read: Result<Vec<(String, Use)>, UsageError>,
    ) {
        if let Some(reads) = self.usage_of_mut(cluster)
            && reads.of.as_ref().is_some_and(|(c, _)| c == cluster)
        {
            reads.nodes = read
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
        let Some(tag) = self.row_tag(cluster) else {
            return;
        };
        let watched = self.closely_watched(cluster);
        let now = self.now;
        let Some(reads) = self.usage_of_mut(cluster) else {
            return;
        };
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
                reads.next = Some(now);
            }
            Ok((pods, window)) => {
                let period = window.unwrap_or(FIRST_PERIOD).clamp(fastest, SLOWEST);
                reads.period = Some(period);
                reads.next = Some(now + period);
                reads.shown = true;
                let again = reads.said.take().is_some();
                keep_history(reads, &watched, &pods, now);
                if again {
                    self.message = Some(info("CPU and memory are read again.".to_string()));
                }
                self.pods.set_usage(tag.as_deref(), pods);
            }
            Err(error) => {
                let sentence = error.sentence();
                // A passing failure keeps the last figures and tries again.
                reads.next = error
                    .passing()
                    .then(|| now + reads.period.unwrap_or(FIRST_PERIOD));
                if !error.passing() {
                    reads.shown = false;
                    reads.history.clear();
                }
                // Said once, and never over another sentence: the columns
                // are a convenience, what the status line says may not be.
                // A passing failure before any figure is not worth a word.
                let worth_saying = reads.shown || !error.passing();
                let say = worth_saying && reads.said.as_deref() != Some(sentence.as_str());
                if say {
                    reads.said = Some(sentence.clone());
                }
                if !error.passing() {
                    self.pods.set_usage(tag.as_deref(), Vec::new());
                }
                if say && self.message.is_none() {
                    let prefix = tag
                        .as_ref()
                        .map(|c| format!("{}: ", crate::model::text::sanitize(c)))
                        .unwrap_or_default();
                    self.message = Some(warning(format!("{prefix}{sentence}")));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;

impl App {
    /// The pods of `cluster` whose containers' figures are kept: the pod
    /// view's, and those with a pane.
    fn closely_watched(&self, cluster: &ClusterId) -> BTreeSet<PodKey> {
        let mut pods: BTreeSet<PodKey> = self
            .workspace
            .terminals
            .values()
            .filter(|t| t.key.cluster == *cluster)
            .map(|t| t.key.pod.clone())
            .collect();
        if let View::Pod(view) = &self.view
            && view.cluster == *cluster
        {
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
}

/// The samples of the pods `watched`, with this read's.
fn keep_history(
    reads: &mut UsageReads,
    watched: &BTreeSet<PodKey>,
    measured: &[PodUse],
    now: Timestamp,
) {
    let history = &mut reads.history;
    history.retain(|pod, _| watched.contains(pod));
    // A pod not measured (not running) is not read for again at once.
    for pod in watched {
        history.entry(pod.clone()).or_default();
    }
    for pod in measured.iter().filter(|p| watched.contains(&p.key)) {
        let samples = history.entry(pod.key.clone()).or_default();
        if samples.len() == HISTORY {
            samples.pop_front();
        }
        samples.push_back(Sample {
            at: now,
            containers: pod.containers.clone(),
        });
    }
}

/// Figures as a read brings them, for tests of other layers.
#[cfg(test)]
pub(crate) mod fixtures {
    pub(crate) use super::tests::{measured, used};
}

//! The pod list across clusters (`podbay --context a,b`): the browser's
//! cluster first, the others beside it, each connected, watched and said
//! on its own, so one that is slow, stalled or refused holds none of the
//! others back. Every row carries its context ([`RowKey`]), and whatever
//! acts on a row asks [`App::cluster_of`] where to go.

use std::sync::Arc;

use super::link::Link;
use super::{App, Effect, LinkState, Reached, Scope, warning};
use crate::model::feed::Feed;
use crate::model::{ClusterId, PodRow, RowKey};

/// A cluster the pod list shows beside the browser's.
#[derive(Debug, Clone)]
pub struct OtherCluster {
    pub context: Arc<str>,
    /// Once connected.
    pub cluster: Option<ClusterId>,
    /// Its context's own namespace, once connected.
    pub home: Option<String>,
    pub link: Link,
    /// Why it cannot be connected, when it cannot.
    pub unreachable: Option<String>,
    /// Its pods' CPU and memory.
    pub usage: super::usage::UsageReads,
}

impl OtherCluster {
    pub(super) fn new(context: &str) -> Self {
        OtherCluster {
            context: context.into(),
            cluster: None,
            home: None,
            link: Link::new(),
            unreachable: None,
            usage: Default::default(),
        }
    }
}

/// How one cluster of the list stands, for the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterState<'a> {
    pub context: &'a str,
    pub state: LinkState,
    /// Seconds its API server has not answered.
    pub unanswered: Option<u64>,
    /// Refused or unreachable: one word or two.
    pub failed: Option<&'static str>,
    /// The namespaces it lists, when they are not the scope the header
    /// shows (its context's own, or its fallback after a refusal).
    pub namespaces: Option<String>,
}

impl App {
    /// The list shows several clusters' pods.
    pub fn shows_several(&self) -> bool {
        !self.others.is_empty()
    }

    /// Whether rows of `clusters` (forwards, captures) say whose each is:
    /// the list shows several, or they are not all of one.
    pub fn names_clusters<'a>(&self, clusters: impl IntoIterator<Item = &'a ClusterId>) -> bool {
        let mut clusters = clusters.into_iter();
        self.shows_several()
            || clusters
                .next()
                .is_some_and(|first| clusters.any(|c| c != first))
    }

    /// The tag of the rows from `cluster` (`None` in a list of one), or
    /// nothing when the list does not show it (a watch of a cluster left).
    pub(super) fn row_tag(&self, cluster: &ClusterId) -> Option<Option<Arc<str>>> {
        if *cluster == self.cluster {
            return Some(self.first_tag.clone());
        }
        self.others
            .iter()
            .find(|o| o.cluster.as_ref() == Some(cluster))
            .map(|o| Some(o.context.clone()))
    }

    /// The cluster of a row of the list: where anything done to it goes.
    /// `None` for a row of a cluster the list no longer shows.
    pub fn cluster_of(&self, key: &RowKey) -> Option<ClusterId> {
        self.cluster_of_tag(&key.context)
    }

    /// The cluster of the list whose rows carry `tag`, once connected.
    pub fn cluster_of_tag(&self, tag: &Option<Arc<str>>) -> Option<ClusterId> {
        match tag {
            None => Some(self.cluster.clone()),
            Some(context) if Some(context) == self.first_tag.as_ref() => Some(self.cluster.clone()),
            Some(context) => self
                .others
                .iter()
                .find(|o| o.context == *context)
                .and_then(|o| o.cluster.clone()),
        }
    }

    /// `pod` as podbay says it: after its context when the list shows
    /// several clusters (the same name may be on each), else `ns/name`.
    pub fn pod_label(&self, cluster: &ClusterId, pod: &crate::model::PodKey) -> String {
        match self.shows_several() {
            true => format!("{}/{pod}", crate::model::text::sanitize(&cluster.context)),
            false => pod.to_string(),
        }
    }

    /// The list's rows of the browser's cluster: what the views of other
    /// kinds (nodes, Services, workloads), which show that cluster, count.
    pub fn browser_rows(&self) -> impl Iterator<Item = &PodRow> {
        self.pods.rows().filter(|r| r.context == self.first_tag)
    }

    /// The list's row of `pod` on `cluster`, if the list shows that cluster.
    pub fn row_of(&self, cluster: &ClusterId, pod: &crate::model::PodKey) -> Option<&PodRow> {
        let key = RowKey {
            context: self.row_tag(cluster)?,
            pod: pod.clone(),
        };
        self.pods.get(&key)
    }

    /// The pod watches of every cluster shown, each of its own scope.
    pub(super) fn watch_pods(&self) -> Vec<Effect> {
        let mut effects = vec![Effect::WatchPods(self.scope_of(&self.first_tag))];
        effects.extend(self.others.iter().filter_map(|o| {
            o.cluster.clone().map(|cluster| Effect::WatchPodsOf {
                cluster,
                scope: self.scope_of(&Some(o.context.clone())),
            })
        }));
        effects
    }

    /// Which pods the cluster whose rows carry `tag` is asked for: the
    /// scope shown, but in a list of several, each cluster's own
    /// namespace while the scope is the context's own, and its fallback
    /// once it refused the cluster-wide list.
    pub(super) fn scope_of(&self, tag: &Option<Arc<str>>) -> Scope {
        let Some(context) = tag else {
            return self.scope.clone();
        };
        if let Some(namespaces) = self.scope_fallbacks.get(context) {
            return Scope::Namespaces(namespaces.clone());
        }
        match self.home_of(context) {
            Some(home) if self.scope_is_home => Scope::Namespaces(vec![home.to_string()]),
            _ => self.scope.clone(),
        }
    }

    /// The namespaces the list shows, as a view's title says them: the
    /// scope, and each other cluster's own where it differs
    /// (`default, staging/shop`).
    pub fn namespaces_label(&self) -> String {
        let first = self.scope_of(&self.first_tag).label();
        let mut label = first.clone();
        for other in self.others.iter().filter(|o| o.cluster.is_some()) {
            let own = self.scope_of(&Some(other.context.clone())).label();
            if own != first {
                let context = crate::model::text::sanitize(&other.context);
                label.push_str(&format!(", {context}/{own}"));
            }
        }
        label
    }

    /// The list's rows are all of one namespace: its tables need no
    /// NAMESPACE column.
    pub fn shows_one_namespace(&self) -> bool {
        let one = |scope: Scope| match scope {
            Scope::Namespaces(mut list) if list.len() == 1 => list.pop(),
            _ => None,
        };
        let Some(first) = one(self.scope_of(&self.first_tag)) else {
            return false;
        };
        self.shown_tags()
            .iter()
            .skip(1)
            .all(|tag| one(self.scope_of(tag)).as_ref() == Some(&first))
    }

    /// The namespace of the context of the list named `context`, once
    /// known.
    pub(super) fn home_of(&self, context: &str) -> Option<&str> {
        if *context == *self.context {
            return Some(&self.home_namespace);
        }
        let other = self.others.iter().find(|o| *o.context == *context)?;
        other.home.as_deref()
    }

    /// The pod watch of the one cluster whose rows carry `tag`, the
    /// others' left running.
    pub(super) fn watch_pods_of(&self, tag: &Option<Arc<str>>) -> Vec<Effect> {
        match (tag, self.cluster_of_tag(tag)) {
            (Some(_), Some(cluster)) => vec![Effect::WatchPodsOf {
                cluster,
                scope: self.scope_of(tag),
            }],
            (None, _) => self.watch_pods(),
            (Some(_), None) => vec![],
        }
    }

    /// Each connected cluster of the list and the namespaces to watch
    /// there, the browser's first: what the views of other kinds watch.
    pub(super) fn cluster_scopes(&self) -> Vec<(ClusterId, Scope)> {
        self.shown()
            .map(|(tag, cluster)| (cluster.clone(), self.scope_of(&tag)))
            .collect()
    }

    /// Each connected cluster of the list, the browser's first.
    pub(super) fn clusters_shown(&self) -> Vec<ClusterId> {
        self.shown().map(|(_, cluster)| cluster.clone()).collect()
    }

    /// The tag of the rows of a view's feed from the browser's cluster
    /// (`None`) or another; `None` for one the list left.
    pub(super) fn tag_of_feed(&self, cluster: Option<ClusterId>) -> Option<Option<Arc<str>>> {
        match cluster {
            None => Some(self.first_tag.clone()),
            Some(cluster) => self.row_tag(&cluster),
        }
    }

    /// The link of the cluster whose rows carry `tag`.
    pub(super) fn link_mut(&mut self, tag: &Option<Arc<str>>) -> &mut Link {
        match tag {
            Some(context) if Some(context) != self.first_tag.as_ref() => {
                match self.others.iter_mut().find(|o| o.context == *context) {
                    Some(other) => &mut other.link,
                    None => &mut self.connection,
                }
            }
            _ => &mut self.connection,
        }
    }

    pub(super) fn on_other_pods(&mut self, cluster: ClusterId, feed: Feed<PodRow>) -> Vec<Effect> {
        match self.row_tag(&cluster) {
            Some(tag) => self.on_pods(tag, feed),
            None => vec![],
        }
    }

    /// A context connected (or not) for the list: its pods are watched,
    /// or its trouble said. False when `context` is none of the list's
    /// others waiting for their connection.
    pub(super) fn other_connected(
        &mut self,
        context: &str,
        outcome: &Result<Reached, String>,
    ) -> Option<Vec<Effect>> {
        let other = self
            .others
            .iter_mut()
            .find(|o| &*o.context == context && o.cluster.is_none())?;
        match outcome {
            Ok(reached) => {
                other.cluster = Some(reached.cluster.clone());
                other.home = Some(reached.namespace.clone());
                other.unreachable = None;
                let tag = Some(other.context.clone());
                // Its panes say which cluster they are on.
                if !self.contexts_used.iter().any(|c| c == context) {
                    self.contexts_used.push(context.to_string());
                }
                let mut effects = self.watch_pods_of(&tag);
                // A view of nodes, workloads or Services shows its own too.
                if matches!(
                    self.view,
                    super::View::Workloads(_) | super::View::Services(_) | super::View::Nodes(_)
                ) {
                    effects.extend(self.watch_shown_view());
                }
                Some(effects)
            }
            Err(sentence) => {
                other.unreachable = Some(sentence.clone());
                self.message = Some(warning(format!(
                    "Context {context}: {sentence} Its pods are not listed; the other contexts' are."
                )));
                Some(vec![])
            }
        }
    }

    /// Each cluster of the list and how it stands, the browser's first.
    pub fn cluster_states(&self) -> Vec<ClusterState<'_>> {
        let state = |tag: Option<Arc<str>>, context, link: &Link, unreachable: bool| {
            let scope = self.scope_of(&tag);
            let refused_everywhere = match &scope {
                Scope::Namespaces(list) => {
                    !list.is_empty()
                        && list
                            .iter()
                            .all(|ns| self.refused.contains_key(&(tag.clone(), ns.clone())))
                }
                Scope::All => false,
            };
            ClusterState {
                context,
                state: link.state(),
                unanswered: link.unanswered(),
                failed: match unreachable {
                    true => Some("unreachable"),
                    false => refused_everywhere.then_some("forbidden"),
                },
                namespaces: (scope != self.scope).then(|| scope.label()),
            }
        };
        let mut states = vec![state(
            self.first_tag.clone(),
            &self.context,
            &self.connection,
            false,
        )];
        states.extend(self.others.iter().map(|o| {
            state(
                Some(o.context.clone()),
                &o.context,
                &o.link,
                o.unreachable.is_some(),
            )
        }));
        states
    }

    /// The tags of the clusters shown and connected, the browser's first.
    pub(super) fn shown_tags(&self) -> Vec<Option<Arc<str>>> {
        self.shown().map(|(tag, _)| tag).collect()
    }

    /// Each connected cluster of the list, with the tag of its rows, the
    /// browser's first: the one list of them the others are read from.
    fn shown(&self) -> impl Iterator<Item = (Option<Arc<str>>, &ClusterId)> {
        let others = self.others.iter().filter_map(|o| {
            let cluster = o.cluster.as_ref()?;
            Some((Some(o.context.clone()), cluster))
        });
        std::iter::once((self.first_tag.clone(), &self.cluster)).chain(others)
    }
}

#[cfg(test)]
#[path = "other_clusters_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "cluster_scopes_tests.rs"]
mod scope_tests;

#[cfg(test)]
#[path = "plural_views_tests.rs"]
mod plural_views_tests;

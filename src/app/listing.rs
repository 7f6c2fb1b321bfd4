//! The pod list's feed: a list under way (paged, or gathered while a
//! shown one is replaced), the rows it brings, a refused namespace and
//! the close names of a missing one.

use std::sync::Arc;

use super::*;

impl App {
    /// An update of the pod watch of the cluster whose rows carry `tag`.
    pub(super) fn on_pods(&mut self, tag: Option<Arc<str>>, feed: Feed<PodRow>) -> Vec<Effect> {
        let feed = match &tag {
            Some(context) => feed.filter_map(|mut row| {
                row.context = Some(context.clone());
                Some(row)
            }),
            None => feed,
        };
        // `ctx/` before an unreadable pod's name, when there are several.
        let prefix = tag
            .as_ref()
            .map(|c| format!("{}/", crate::model::text::sanitize(c)))
            .unwrap_or_default();
        match feed {
            Feed::Listing { scope } => self.pods_listing((tag, scope)),
            Feed::Page {
                scope,
                rows,
                loaded,
                expected,
            } => self.pods_page((tag, scope), rows, loaded, expected),
            Feed::Listed { scope, rows } => {
                if let Some(ns) = &scope {
                    self.refused.remove(&(tag.clone(), ns.clone()));
                }
                let gone = format!(
                    "{prefix}{}",
                    scope
                        .as_deref()
                        .map(|ns| format!("{ns}/"))
                        .unwrap_or_default()
                );
                self.unreadable_pods
                    .retain(|name, _| !name.starts_with(&gone));
                self.pods_listed((tag.clone(), scope), rows);
                self.link_back(&tag);
                return self.follow_pods_logs(None);
            }
            Feed::Applied(row) => {
                self.unreadable_pods.remove(&row.row_key().to_string());
                let followed = self
                    .workspace
                    .terminals
                    .values()
                    .any(|t| t.pods_of.is_some());
                let changed = followed.then(|| row.clone());
                self.pods.apply(row);
                self.link_back(&tag);
                return self.follow_pods_logs(changed.as_ref());
            }
            Feed::Unreadable(bad) => {
                if let Some(first) = bad.first() {
                    self.message = Some(warning(self.said_of(&tag, &first.sentence("pod"))));
                }
                for pod in bad {
                    self.unreadable_pods
                        .insert(format!("{prefix}{}", pod.name), pod.why);
                }
            }
            Feed::Deleted(row) => {
                self.pods.remove(&row.row_key());
                self.link_back(&tag);
            }
            Feed::Resumed => self.link_back(&tag),
            Feed::Cut => self.link_mut(&tag).reconnecting(None),
            Feed::Reconnecting(sentence) => {
                // Said once, and again only when it changes: a feed that
                // keeps retrying sends it with each try.
                let trouble = self.said_of(&tag, &sentence);
                if self.link_mut(&tag).trouble() != Some(trouble.as_str()) {
                    self.message = Some(warning(trouble.clone()));
                }
                self.link_mut(&tag).reconnecting(Some(trouble));
            }
            Feed::Forbidden(denied) => return self.narrow_after_denial(tag, denied),
        }
        vec![]
    }

    /// A sentence about the cluster whose rows carry `tag`: after its
    /// context when the list shows several.
    pub(super) fn said_of(&self, tag: &Option<Arc<str>>, sentence: &str) -> String {
        match tag {
            Some(context) => format!("{}: {sentence}", crate::model::text::sanitize(context)),
            None => sentence.to_string(),
        }
    }

    /// The pod watch runs again: clear its trouble message, if it is still
    /// the one showing.
    pub(super) fn link_back(&mut self, tag: &Option<Arc<str>>) {
        if let Some(sentence) = self.link_mut(tag).live()
            && self.message.as_ref().is_some_and(|m| m.text == sentence)
        {
            self.message = None;
        }
    }

    /// A list of `scope` starts (again): a first one is shown as its pages
    /// come; a list of pods already shown (after a 410) is gathered and
    /// replaces them once whole, so rows do not vanish and come back.
    pub(super) fn pods_listing(&mut self, scope: ListScope) {
        let (tag, namespace) = &scope;
        let shown = self.pods.rows().any(|r| {
            r.context == *tag && namespace.as_ref().is_none_or(|ns| &*r.key.namespace == ns)
        });
        let direct = match self.listing.get(&scope) {
            // Started over: the pages shown are void.
            Some(listing) if listing.direct => {
                self.pods
                    .replace(tag.as_deref(), namespace.as_deref(), Vec::new());
                true
            }
            _ => !shown,
        };
        self.listing.insert(
            scope,
            Listing {
                direct,
                gathered: Vec::new(),
                loaded: 0,
                expected: None,
            },
        );
    }

    pub(super) fn pods_page(
        &mut self,
        scope: ListScope,
        rows: Vec<PodRow>,
        loaded: usize,
        expected: Option<usize>,
    ) {
        let tag = scope.0.clone();
        let listing = self.listing.entry(scope).or_insert_with(|| Listing {
            direct: false,
            gathered: Vec::new(),
            loaded: 0,
            expected: None,
        });
        listing.loaded = loaded;
        listing.expected = expected;
        if listing.direct {
            self.pods.extend(rows);
            // The server answers; the message of its trouble stays until
            // the list is whole (a server whose list never ends sends
            // pages too).
            self.link_mut(&tag).answers();
        } else {
            listing.gathered.extend(rows);
        }
    }

    pub(super) fn pods_listed(&mut self, scope: ListScope, rows: Vec<PodRow>) {
        let (tag, namespace) = (scope.0.as_deref(), scope.1.as_deref());
        match self.listing.remove(&scope) {
            Some(listing) if listing.direct => self.pods.extend(rows),
            Some(mut listing) => {
                listing.gathered.extend(rows);
                self.pods.replace(tag, namespace, listing.gathered);
            }
            None => self.pods.replace(tag, namespace, rows),
        }
    }

    /// A first list under way: rows so far, and about how many in all
    /// (when the server says).
    pub fn pods_loading(&self) -> Option<(usize, Option<usize>)> {
        let mut any = false;
        let (mut loaded, mut expected) = (0, Some(0));
        for listing in self.listing.values().filter(|l| l.direct) {
            any = true;
            loaded += listing.loaded;
            expected = expected.zip(listing.expected).map(|(a, b)| a + b);
        }
        any.then_some((loaded, expected))
    }

    /// Restricted users are the norm: when the cluster-wide list is refused,
    /// fall back to the namespaces we know the user may use, and say which
    /// permission was missing.
    pub(super) fn narrow_after_denial(
        &mut self,
        tag: Option<Arc<str>>,
        denied: Denied,
    ) -> Vec<Effect> {
        let prefix = self.said_of(&tag, "");
        // A refused feed stops: its list is not under way any more.
        match self.scope_of(&tag) {
            Scope::All => {
                self.listing.remove(&(tag.clone(), None));
                // Each cluster of several falls back from its own
                // context's namespace, and alone: the others may list all.
                let home = tag.as_deref().and_then(|c| self.home_of(c));
                let mut fallback = vec![home.unwrap_or(&self.home_namespace).to_string()];
                for ns in &self.fallback_namespaces {
                    if !fallback.contains(ns) {
                        fallback.push(ns.clone());
                    }
                }
                self.message = Some(warning(format!(
                    "{prefix}{} Showing namespace {} instead.",
                    denied.sentence(),
                    fallback.join(", ")
                )));
                match &tag {
                    Some(context) => {
                        self.scope_fallbacks.insert(context.clone(), fallback);
                        self.pods.replace(Some(context), None, Vec::new());
                        self.watch_pods_of(&tag)
                    }
                    None => {
                        self.scope = Scope::Namespaces(fallback);
                        self.pods.clear();
                        self.watch_pods()
                    }
                }
            }
            Scope::Namespaces(namespaces) => {
                let refused = match &denied.namespace {
                    Some(ns) => vec![ns.clone()],
                    None => namespaces,
                };
                for ns in refused {
                    self.listing.remove(&(tag.clone(), Some(ns.clone())));
                    self.refused.insert((tag.clone(), ns), denied.clone());
                }
                self.link_back(&tag);
                self.message = Some(warning(format!("{prefix}{}", denied.sentence())));
                vec![]
            }
        }
    }

    /// The namespace shown, when the cluster has none of that name (a typo
    /// in `-n` or `:ns`), and the names close to it; known only once the
    /// user may list namespaces.
    pub fn missing_namespace(&self) -> Option<(&str, Vec<&str>)> {
        let Scope::Namespaces(shown) = &self.scope else {
            return None;
        };
        let [name] = shown.as_slice() else {
            return None;
        };
        if !self.namespaces_listed || self.namespaces.contains(name) || self.pods.total() > 0 {
            return None;
        }
        let close = self
            .namespaces
            .iter()
            .filter(|known| edit_distance(known, name) <= 2 || known.starts_with(name.as_str()))
            .map(String::as_str)
            .collect();
        Some((name, close))
    }

    /// Keeps a sentence for the messages view (the oldest go first).
    pub(crate) fn remember_said(&mut self, message: Message) {
        if self.said.len() == MAX_SAID {
            self.said.pop_front();
        }
        self.said.push_back((self.now, message));
    }

    /// The refusal, when the user may list pods in none of the scope's
    /// namespaces: the list is unavailable, not empty.
    pub fn refused_scope(&self) -> Option<&Denied> {
        let mut first = None;
        for tag in self.shown_tags() {
            let Scope::Namespaces(namespaces) = self.scope_of(&tag) else {
                return None;
            };
            for ns in namespaces {
                let refusal = self.refused.get(&(tag.clone(), ns))?;
                first.get_or_insert(refusal);
            }
        }
        first
    }
}

/// Which list: the cluster (its rows' tag) and the namespace (`None`: all).
pub(super) type ListScope = (Option<Arc<str>>, Option<String>);

/// A pod list under way.
pub(super) struct Listing {
    /// A first list: rows go to the table as pages come.
    direct: bool,
    /// A list of pods already shown: rows wait until it is whole.
    gathered: Vec<PodRow>,
    loaded: usize,
    expected: Option<usize>,
}

/// Levenshtein distance, for names close to a mistyped one.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

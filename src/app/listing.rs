//! The pod list's feed: a list under way (paged, or gathered while a
//! shown one is replaced), the rows it brings, a refused namespace and
//! the close names of a missing one.

use super::*;

impl App {
    pub(super) fn on_pods(&mut self, feed: Feed<PodRow>) -> Vec<Effect> {
        match feed {
            Feed::Listing { scope } => self.pods_listing(scope),
            Feed::Page {
                scope,
                rows,
                loaded,
                expected,
            } => self.pods_page(scope, rows, loaded, expected),
            Feed::Listed { scope, rows } => {
                match &scope {
                    Some(ns) => self.refused.remove(ns.as_str()),
                    None => None,
                };
                match &scope {
                    Some(ns) => self
                        .unreadable_pods
                        .retain(|name, _| !name.starts_with(&format!("{ns}/"))),
                    None => self.unreadable_pods.clear(),
                }
                self.pods_listed(scope, rows);
                self.link_back();
                return self.follow_pods_logs(None);
            }
            Feed::Applied(row) => {
                self.unreadable_pods.remove(&row.key.to_string());
                let followed = self
                    .workspace
                    .terminals
                    .values()
                    .any(|t| t.pods_of.is_some());
                let changed = followed.then(|| row.clone());
                self.pods.apply(row);
                self.link_back();
                return self.follow_pods_logs(changed.as_ref());
            }
            Feed::Unreadable(bad) => {
                if let Some(first) = bad.first() {
                    self.message = Some(warning(first.sentence("pod")));
                }
                for pod in bad {
                    self.unreadable_pods.insert(pod.name.to_string(), pod.why);
                }
            }
            Feed::Deleted(row) => {
                self.pods.remove(&row.key);
                self.link_back();
            }
            Feed::Resumed => self.link_back(),
            Feed::Cut => self.connection.reconnecting(None),
            Feed::Reconnecting(sentence) => {
                // Said once, and again only when it changes: a feed that
                // keeps retrying sends it with each try.
                if self.connection.trouble() != Some(sentence.as_str()) {
                    self.message = Some(warning(sentence.clone()));
                }
                self.connection.reconnecting(Some(sentence.to_string()));
            }
            Feed::Forbidden(denied) => return self.narrow_after_denial(denied),
        }
        vec![]
    }

    /// The pod watch runs again: clear its trouble message, if it is still
    /// the one showing.
    pub(super) fn link_back(&mut self) {
        if let Some(sentence) = self.connection.live()
            && self.message.as_ref().is_some_and(|m| m.text == sentence)
        {
            self.message = None;
        }
    }

    /// A list of `scope` starts (again): a first one is shown as its pages
    /// come; a list of pods already shown (after a 410) is gathered and
    /// replaces them once whole, so rows do not vanish and come back.
    pub(super) fn pods_listing(&mut self, scope: Option<String>) {
        let shown = match &scope {
            None => self.pods.total() > 0,
            Some(ns) => self.pods.rows().any(|r| &*r.key.namespace == ns),
        };
        let direct = match self.listing.get(&scope) {
            // Started over: the pages shown are void.
            Some(listing) if listing.direct => {
                self.pods.replace(scope.as_deref(), Vec::new());
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
        scope: Option<String>,
        rows: Vec<PodRow>,
        loaded: usize,
        expected: Option<usize>,
    ) {
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
            self.connection.answers();
        } else {
            listing.gathered.extend(rows);
        }
    }

    pub(super) fn pods_listed(&mut self, scope: Option<String>, rows: Vec<PodRow>) {
        match self.listing.remove(&scope) {
            Some(listing) if listing.direct => self.pods.extend(rows),
            Some(mut listing) => {
                listing.gathered.extend(rows);
                self.pods.replace(scope.as_deref(), listing.gathered);
            }
            None => self.pods.replace(scope.as_deref(), rows),
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
    pub(super) fn narrow_after_denial(&mut self, denied: Denied) -> Vec<Effect> {
        // A refused feed stops: its list is not under way any more.
        match &self.scope {
            Scope::All => {
                self.listing.remove(&None);
                let mut fallback = vec![self.home_namespace.clone()];
                for ns in &self.fallback_namespaces {
                    if !fallback.contains(ns) {
                        fallback.push(ns.clone());
                    }
                }
                self.message = Some(warning(format!(
                    "{} Showing namespace {} instead.",
                    denied.sentence(),
                    fallback.join(", ")
                )));
                self.scope = Scope::Namespaces(fallback);
                vec![Effect::WatchPods(self.scope.clone())]
            }
            Scope::Namespaces(namespaces) => {
                let refused = match &denied.namespace {
                    Some(ns) => vec![ns.clone()],
                    None => namespaces.clone(),
                };
                for ns in refused {
                    self.listing.remove(&Some(ns.clone()));
                    self.refused.insert(ns, denied.clone());
                }
                self.link_back();
                self.message = Some(warning(denied.sentence()));
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
        match &self.scope {
            Scope::Namespaces(namespaces)
                if namespaces.iter().all(|ns| self.refused.contains_key(ns)) =>
            {
                namespaces.first().and_then(|ns| self.refused.get(ns))
            }
            _ => None,
        }
    }
}

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

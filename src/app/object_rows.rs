//! The rows of a view of another kind than pods (nodes, Services,
//! workloads), as its watch keeps them: one way to apply a feed, so the
//! views cannot differ in how a relist, a change or a refusal lands.

use std::cmp::Ordering;

use jiff::Timestamp;

use super::command::SortColumn;
use super::keymap::Action;
use crate::model::feed::Feed;
use crate::model::text::Printable;

/// An object a view lists: who it is.
pub trait Object {
    /// Its namespace (empty for a cluster-scoped kind) and name.
    fn identity(&self) -> (&str, &str);
    fn created(&self) -> Option<Timestamp>;
    /// How badly it stands, for sorting the worst first; `None` for a kind
    /// without a standing.
    fn trouble(&self) -> Option<u8> {
        None
    }
}

/// A view's order other than namespace/name: a column in its natural
/// direction (A to Z, youngest first, most trouble first) or reversed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub column: SortColumn,
    pub reversed: bool,
}

/// What a row is sorted by: one type for every kind, so the sort is
/// compiled once for all the views.
struct SortKey<'a> {
    identity: (&'a str, &'a str),
    created: Option<Timestamp>,
    trouble: Option<u8>,
}

impl Order {
    fn cmp(self, a: &SortKey, b: &SortKey) -> Ordering {
        let natural = match self.column {
            SortColumn::Age => b.created.cmp(&a.created),
            SortColumn::Status => b.trouble.cmp(&a.trouble),
            _ => a.identity.1.cmp(b.identity.1),
        };
        let natural = if self.reversed {
            natural.reverse()
        } else {
            natural
        };
        natural.then_with(|| a.identity.cmp(&b.identity))
    }

    /// Orders `shown` (indexes into `keys`); ties never remain, so the
    /// sort need not be stable.
    fn sort(self, shown: &mut [usize], keys: &[SortKey]) {
        shown.sort_unstable_by(|&a, &b| self.cmp(&keys[a], &keys[b]));
    }

    /// "youngest first", "worst first", "A to Z".
    fn words(self) -> &'static str {
        match (self.column, self.reversed) {
            (SortColumn::Age, false) => "youngest first",
            (SortColumn::Age, true) => "oldest first",
            (SortColumn::Status, false) => "the worst first",
            (SortColumn::Status, true) => "the worst last",
            (_, false) => "A to Z",
            (_, true) => "Z to A",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ObjectRows<R> {
    /// By namespace, then name.
    pub rows: Vec<R>,
    pub cursor: usize,
    /// The watch's trouble (refused, failing), until it lists.
    pub trouble: Option<Printable>,
    pub listed: bool,
    /// What `/` typed: rows whose `namespace/name` it matches, fuzzily.
    pub filter: String,
    /// `None`: by namespace, then name.
    pub order: Option<Order>,
    /// The indexes of the rows the filter keeps, in order; kept with the
    /// rows, as a view may hold thousands and is drawn every frame.
    shown: Vec<usize>,
}

impl<R> Default for ObjectRows<R> {
    fn default() -> Self {
        ObjectRows {
            rows: Vec::new(),
            cursor: 0,
            trouble: None,
            listed: false,
            filter: String::new(),
            order: None,
            shown: Vec::new(),
        }
    }
}

impl<R: Object> ObjectRows<R> {
    /// The row under the cursor, of those shown.
    pub fn selected(&self) -> Option<&R> {
        self.rows.get(*self.shown.get(self.cursor)?)
    }

    /// The rows the filter keeps, in order.
    pub fn shown(&self) -> impl Iterator<Item = (usize, &R)> {
        self.shown.iter().map(|&i| (i, &self.rows[i]))
    }

    pub fn shown_len(&self) -> usize {
        self.shown.len()
    }

    /// Shows the rows `query` matches (all for an empty one), the cursor
    /// on the first.
    pub fn set_filter(&mut self, query: &str) {
        self.filter = query.to_string();
        self.cursor = 0;
        self.refilter();
    }

    fn refilter(&mut self) {
        use fuzzy_matcher::FuzzyMatcher;
        let query = self.filter.trim();
        let matcher = fuzzy_matcher::skim::SkimMatcherV2::default().ignore_case();
        self.shown = (0..self.rows.len())
            .filter(|&i| {
                let (namespace, name) = self.rows[i].identity();
                query.is_empty()
                    || matcher
                        .fuzzy_match(&format!("{namespace}/{name}"), query)
                        .is_some()
            })
            .collect();
        if let Some(order) = self.order {
            let keys: Vec<SortKey> = self
                .rows
                .iter()
                .map(|r| SortKey {
                    identity: r.identity(),
                    created: r.created(),
                    trouble: r.trouble(),
                })
                .collect();
            order.sort(&mut self.shown, &keys);
        }
        self.cursor = self.cursor.min(self.shown.len().saturating_sub(1));
    }

    /// Sorts by `column` (the same column again reverses it); the sentence
    /// that says how the rows are now ordered.
    pub fn sort_by(&mut self, column: SortColumn) -> String {
        let reversed = self
            .order
            .is_some_and(|o| o.column == column && !o.reversed);
        let order = Order { column, reversed };
        self.order = Some(order);
        self.cursor = 0;
        self.refilter();
        format!(
            "Sorted by {}, {}; the same key again reverses it.",
            column.name(),
            order.words()
        )
    }

    /// Applies what the watch says; `noun` names one object in a sentence
    /// about one that does not decode (`a Service`).
    pub fn apply(&mut self, feed: Feed<R>, noun: &str) {
        match feed {
            Feed::Listed { rows, scope, .. } => {
                // One feed a namespace: a relist replaces its own rows.
                match scope {
                    Some(namespace) => {
                        self.rows.retain(|r| r.identity().0 != namespace);
                        self.rows.extend(rows);
                    }
                    None => self.rows = rows,
                }
                self.rows.sort_by(|a, b| a.identity().cmp(&b.identity()));
                self.listed = true;
                self.trouble = None;
            }
            // In place, the rows kept in order: a watch's change is one
            // row of what may be thousands.
            Feed::Applied(row) => {
                match self.position(&row) {
                    Ok(at) => self.rows[at] = row,
                    Err(at) => self.rows.insert(at, row),
                }
                self.trouble = None;
            }
            Feed::Deleted(row) => {
                if let Ok(at) = self.position(&row) {
                    self.rows.remove(at);
                }
            }
            Feed::Forbidden(denied) => self.trouble = Some(denied.sentence().into()),
            Feed::Reconnecting(sentence) => self.trouble = Some(sentence),
            Feed::Unreadable(bad) => {
                self.trouble = bad.first().map(|b| b.sentence(noun).into());
            }
            // Not a paged feed: no pages come.
            Feed::Resumed | Feed::Listing { .. } | Feed::Page { .. } | Feed::Cut => {}
        }
        self.refilter();
    }

    fn position(&self, row: &R) -> Result<usize, usize> {
        self.rows
            .binary_search_by(|r| r.identity().cmp(&row.identity()))
    }

    /// Moves the cursor for a movement key; whether it was one.
    pub fn move_cursor(&mut self, action: super::keymap::Action) -> bool {
        super::keymap::move_cursor(&mut self.cursor, self.shown.len(), action)
    }

    /// The keys every such list takes the same way: moves, `/` (which opens
    /// `mode`'s filter on the list's query), `esc` while filtered, and a
    /// row's action with no row, which acts on nothing (never on the pod
    /// list behind the view). Whether `action` was one of those.
    pub fn take_key(
        &mut self,
        mode: &mut super::Mode,
        message: &mut Option<super::Message>,
        action: Action,
    ) -> bool {
        let column = match action {
            Action::SortByName => Some(SortColumn::Name),
            Action::SortByAge => Some(SortColumn::Age),
            Action::SortByStatus => Some(SortColumn::Status),
            _ => None,
        };
        if let Some(column) = column {
            *message = Some(super::info(self.sort_by(column)));
            return true;
        }
        match action {
            Action::Open | Action::Debug | Action::Describe | Action::Forward | Action::Yaml => {
                self.selected().is_none()
            }
            Action::Filter => {
                *mode = super::Mode::Filter(self.filter.as_str().into());
                true
            }
            Action::Back if !self.filter.is_empty() => {
                self.set_filter("");
                true
            }
            _ => self.move_cursor(action),
        }
    }
}

impl Object for crate::model::node::NodeRow {
    fn identity(&self) -> (&str, &str) {
        ("", &self.name)
    }

    fn created(&self) -> Option<Timestamp> {
        self.created
    }
}

impl Object for crate::model::service::ServiceRow {
    fn identity(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }

    fn created(&self) -> Option<Timestamp> {
        self.created
    }
}

impl Object for crate::model::workload::WorkloadRow {
    fn identity(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }

    fn created(&self) -> Option<Timestamp> {
        self.created
    }

    fn trouble(&self) -> Option<u8> {
        use crate::model::workload::Standing;
        Some(match self.standing {
            Standing::Fine => 0,
            Standing::Short => 1,
            Standing::Failed => 2,
        })
    }
}

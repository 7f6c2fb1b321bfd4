//! The rows of a view of another kind than pods (nodes, Services,
//! workloads), as its watch keeps them: one way to apply a feed, so the
//! views cannot differ in how a relist, a change or a refusal lands.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use jiff::Timestamp;

use super::command::SortColumn;
use super::keymap::Action;
use super::score::{Pattern, Scratch};
use crate::model::feed::Feed;
use crate::model::text::Printable;

/// `text`'s width on screen.
fn columns(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        unicode_width::UnicodeWidthStr::width(text)
    }
}

/// Candidate sets at least this big are scored on two threads.
const PARALLEL_FROM: usize = 8192;

/// An object a view lists: who it is.
pub trait Object: Sync {
    /// Its namespace (empty for a cluster-scoped kind) and name.
    fn identity(&self) -> (&str, &str);
    /// The context of its cluster in a list of several (empty in one).
    fn context(&self) -> &str {
        ""
    }
    fn created(&self) -> Option<Timestamp>;
    /// How badly it stands, for sorting the worst first; `None` for a kind
    /// without a standing.
    fn trouble(&self) -> Option<u8> {
        None
    }
}

/// Who a row is, in a list of several clusters too: its context,
/// namespace and name. Rows are kept in this order.
fn id<R: Object>(row: &R) -> Id<'_> {
    let (namespace, name) = row.identity();
    (row.context(), namespace, name)
}

type Id<'a> = (&'a str, &'a str, &'a str);

/// A marked row, kept by its [`Id`] through the watch's changes.
type MarkKey = (String, String, String);

fn mark_key(row: &impl Object) -> MarkKey {
    let (context, namespace, name) = id(row);
    (context.into(), namespace.into(), name.into())
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
    identity: Id<'a>,
    created: Option<Timestamp>,
    trouble: Option<u8>,
}

impl Order {
    fn cmp(self, a: &SortKey, b: &SortKey) -> Ordering {
        let natural = match self.column {
            SortColumn::Age => b.created.cmp(&a.created),
            SortColumn::Status => b.trouble.cmp(&a.trouble),
            _ => a.identity.2.cmp(b.identity.2),
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
    /// The query `shown` holds the matches of, while the rows are
    /// unchanged since.
    matched: Option<String>,
    /// The widest namespace and name shown, in columns: measured once per
    /// change, not per frame.
    widest: (usize, usize),
    /// The marked rows: kept through the watch's changes, a filter and a
    /// sort.
    marks: BTreeSet<MarkKey>,
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
            matched: None,
            widest: (0, 0),
            marks: BTreeSet::new(),
        }
    }
}

/// A row that says which cluster of a list of several it is from.
pub trait OfCluster {
    fn set_context(&mut self, context: Option<std::sync::Arc<str>>);
}

impl<R: Object + OfCluster> ObjectRows<R> {
    /// Applies the feed of the cluster whose rows carry `tag` (`None` in a
    /// list of one), each row tagged with it. With several clusters, the
    /// feed's trouble is given back, to be said for that cluster alone.
    pub fn apply_tagged(
        &mut self,
        tag: &Option<std::sync::Arc<str>>,
        feed: Feed<R>,
        noun: &str,
    ) -> Option<String> {
        let feed = feed.filter_map(|mut row| {
            row.set_context(tag.clone());
            Some(row)
        });
        match tag {
            None => {
                self.apply(feed, noun);
                None
            }
            Some(context) => self.apply_of(context, feed, noun),
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

    /// Shows the rows the filter matches, in order. A query that only
    /// grew scores the rows it showed before, not every row: a keystroke
    /// in a view of 20 000 rows reads a few hundred.
    fn refilter(&mut self) {
        let query = self.filter.trim();
        let narrowing = !query.is_empty()
            && self
                .matched
                .as_deref()
                .is_some_and(|was| query.starts_with(was));
        let candidates: Vec<usize> = if narrowing {
            std::mem::take(&mut self.shown)
        } else {
            (0..self.rows.len()).collect()
        };
        self.shown = if query.is_empty() {
            candidates
        } else {
            let pattern = Pattern::new(query);
            let keep = |part: &[usize]| self.matching(&pattern, part);
            if candidates.len() < PARALLEL_FROM {
                keep(&candidates)
            } else {
                crate::parallel::in_halves(&candidates, keep)
            }
        };
        self.matched = (!query.is_empty()).then(|| query.to_string());
        if let Some(order) = self.order {
            let keys: Vec<SortKey> = self
                .rows
                .iter()
                .map(|r| SortKey {
                    identity: id(r),
                    created: r.created(),
                    trouble: r.trouble(),
                })
                .collect();
            order.sort(&mut self.shown, &keys);
        }
        self.widest = self.shown.iter().fold((0, 0), |(ns, n), &i| {
            let (namespace, name) = self.rows[i].identity();
            (ns.max(columns(namespace)), n.max(columns(name)))
        });
        self.cursor = self.cursor.min(self.shown.len().saturating_sub(1));
    }

    /// Marks the selected row, or unmarks it; whether it is now marked.
    pub fn toggle_mark(&mut self) -> Option<bool> {
        let key = mark_key(self.selected()?);
        Some(super::mark_set::toggle_one(&mut self.marks, key))
    }

    /// Marks every row shown or, when each is marked already, unmarks them;
    /// whether they are now marked.
    pub fn mark_shown(&mut self) -> bool {
        let shown: Vec<MarkKey> = self.shown().map(|(_, r)| mark_key(r)).collect();
        super::mark_set::toggle_all(&mut self.marks, shown)
    }

    pub fn is_marked(&self, row: &R) -> bool {
        !self.marks.is_empty() && self.marks.contains(&mark_key(row))
    }

    /// The marked rows still listed, in namespace/name order.
    pub fn marked(&self) -> Vec<&R> {
        self.rows.iter().filter(|r| self.is_marked(r)).collect()
    }

    /// What a row's action acts on: the marked rows, else the selected
    /// one; `None` when neither.
    pub fn picked(&self) -> Option<Vec<&R>> {
        match self.marked() {
            marked if !marked.is_empty() => Some(marked),
            _ => Some(vec![self.selected()?]),
        }
    }

    /// How many rows are marked.
    pub fn marks_len(&self) -> usize {
        self.marks.len()
    }

    pub fn clear_marks(&mut self) {
        self.marks.clear();
    }

    /// The widest namespace and name of the rows shown, in columns.
    pub fn widest(&self) -> (usize, usize) {
        self.widest
    }

    /// The rows of `candidates` whose `context/namespace/name` (each part
    /// there is) `pattern` matches.
    fn matching(&self, pattern: &Pattern, candidates: &[usize]) -> Vec<usize> {
        let mut scratch = Scratch::default();
        let mut haystack = String::new();
        candidates
            .iter()
            .copied()
            .filter(|&i| {
                let (context, namespace, name) = id(&self.rows[i]);
                haystack.clear();
                if !context.is_empty() {
                    haystack.push_str(context);
                    haystack.push('/');
                }
                if !namespace.is_empty() {
                    haystack.push_str(namespace);
                    haystack.push('/');
                }
                haystack.push_str(name);
                pattern.score(&haystack, &mut scratch).is_some()
            })
            .collect()
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
        if let Some(trouble) = self.apply_of("", feed, noun) {
            self.trouble = Some(trouble.into());
        }
    }

    /// Applies what the watch of one cluster of several (`context`; empty
    /// for the list of one) says. Its trouble is given back, to be said
    /// for that cluster alone: the others' rows stay shown.
    pub fn apply_of(&mut self, context: &str, feed: Feed<R>, noun: &str) -> Option<String> {
        let mut trouble = None;
        match feed {
            Feed::Listed { rows, scope, .. } => {
                // One feed a namespace of a cluster: a relist replaces its
                // own rows.
                self.rows.retain(|r| {
                    r.context() != context
                        || scope.as_deref().is_some_and(|ns| r.identity().0 != ns)
                });
                self.rows.extend(rows);
                self.rows.sort_by(|a, b| id(a).cmp(&id(b)));
                if !self.marks.is_empty() {
                    let rows = &self.rows;
                    self.marks.retain(|(context, namespace, name)| {
                        let key = (context.as_str(), namespace.as_str(), name.as_str());
                        rows.binary_search_by(|r| id(r).cmp(&key)).is_ok()
                    });
                }
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
                self.marks.remove(&mark_key(&row));
            }
            Feed::Forbidden(denied) => trouble = Some(denied.sentence()),
            Feed::Reconnecting(sentence) => trouble = Some(sentence.as_str().to_string()),
            Feed::Unreadable(bad) => trouble = bad.first().map(|b| b.sentence(noun)),
            // Not a paged feed: no pages come.
            Feed::Resumed | Feed::Listing { .. } | Feed::Page { .. } | Feed::Cut => {}
        }
        // The indexes shown may name other rows now.
        self.matched = None;
        self.refilter();
        trouble
    }

    fn position(&self, row: &R) -> Result<usize, usize> {
        self.rows.binary_search_by(|r| id(r).cmp(&id(row)))
    }

    /// Moves the cursor for a movement key; whether it was one.
    pub fn move_cursor(&mut self, action: super::keymap::Action, page: usize) -> bool {
        super::keymap::move_cursor(&mut self.cursor, self.shown.len(), page, action)
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
        page: usize,
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
            Action::Mark => {
                self.toggle_mark();
                true
            }
            Action::MarkShown => {
                self.mark_shown();
                true
            }
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
            _ => self.move_cursor(action, page),
        }
    }
}

impl OfCluster for crate::model::node::NodeRow {
    fn set_context(&mut self, context: Option<std::sync::Arc<str>>) {
        self.context = context;
    }
}

impl Object for crate::model::node::NodeRow {
    fn identity(&self) -> (&str, &str) {
        ("", &self.name)
    }

    fn context(&self) -> &str {
        self.context.as_deref().unwrap_or_default()
    }

    fn created(&self) -> Option<Timestamp> {
        self.created
    }
}

impl OfCluster for crate::model::service::ServiceRow {
    fn set_context(&mut self, context: Option<std::sync::Arc<str>>) {
        self.context = context;
    }
}

impl Object for crate::model::service::ServiceRow {
    fn identity(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }

    fn context(&self) -> &str {
        self.context.as_deref().unwrap_or_default()
    }

    fn created(&self) -> Option<Timestamp> {
        self.created
    }
}

impl OfCluster for crate::model::workload::WorkloadRow {
    fn set_context(&mut self, context: Option<std::sync::Arc<str>>) {
        self.context = context;
    }
}

impl Object for crate::model::workload::WorkloadRow {
    fn identity(&self) -> (&str, &str) {
        (&self.namespace, &self.name)
    }

    fn context(&self) -> &str {
        self.context.as_deref().unwrap_or_default()
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

impl super::App {
    /// The keys every object list takes ([`ObjectRows::take_key`]), for
    /// the view shown, unless a page is read over it.
    pub(super) fn list_takes_key(&mut self, action: Action) -> bool {
        use super::View;
        let (mode, message, page) = (&mut self.mode, &mut self.message, self.rows_per_page);
        match &mut self.view {
            View::Nodes(view) if view.reading.is_none() => {
                view.list.take_key(mode, message, action, page)
            }
            View::Services(view) if view.reading.is_none() && view.page.is_none() => {
                view.list.take_key(mode, message, action, page)
            }
            View::Workloads(view) if view.reading.is_none() => {
                view.list.take_key(mode, message, action, page)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Named(String, String);

    impl Object for Named {
        fn identity(&self) -> (&str, &str) {
            (&self.0, &self.1)
        }

        fn created(&self) -> Option<Timestamp> {
            None
        }
    }

    fn named(namespace: &str, name: &str) -> Named {
        Named(namespace.into(), name.into())
    }

    fn shown(rows: &ObjectRows<Named>) -> Vec<String> {
        rows.shown()
            .map(|(_, r)| format!("{}/{}", r.0, r.1))
            .collect()
    }

    /// What skim itself keeps for `query`, in row order.
    fn skim_keeps(rows: &ObjectRows<Named>, query: &str) -> Vec<String> {
        use fuzzy_matcher::FuzzyMatcher;
        let skim = fuzzy_matcher::skim::SkimMatcherV2::default().ignore_case();
        rows.rows
            .iter()
            .map(|r| format!("{}/{}", r.0, r.1))
            .filter(|text| skim.fuzzy_match(text, query).is_some())
            .collect()
    }

    #[test]
    fn a_growing_query_and_a_change_between_keystrokes_keep_exactly_skims_matches() {
        let mut rows = ObjectRows::default();
        rows.apply(
            Feed::Listed {
                scope: None,
                rows: vec![
                    named("shop", "storefront"),
                    named("shop", "stock"),
                    named("payments", "ledger"),
                    named("shop", "redis"),
                ],
            },
            "a Deployment",
        );
        for query in ["s", "st", "sto", "stor"] {
            rows.set_filter(query);
            assert_eq!(shown(&rows), skim_keeps(&rows, query), "{query}");
        }
        assert_eq!(shown(&rows), ["shop/storefront"]);

        // A row comes before the others while filtered: the indexes
        // shown before would now name other rows.
        rows.apply(Feed::Applied(named("audit", "store-audit")), "a Deployment");
        assert_eq!(shown(&rows), ["audit/store-audit", "shop/storefront"]);
        rows.set_filter("storef");
        assert_eq!(shown(&rows), ["shop/storefront"]);

        // Shorter again: every row is read, not only the last matches.
        rows.set_filter("st");
        assert_eq!(shown(&rows), skim_keeps(&rows, "st"));
        assert_eq!(shown(&rows).len(), 3);
    }
}

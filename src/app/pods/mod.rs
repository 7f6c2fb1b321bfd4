//! The live pod table: rows in namespace/name order, an optional fuzzy
//! filter, and a selection that stays on the same pod while rows come and
//! go. Single-row changes cost O(log n) plus a memmove of pointers (and a
//! pass over the matches when filtered), not a re-sort or a re-filter of
//! everything.
//!
//! A keystroke in the filter scores only the rows that can still match
//! (when the query grows, only the previous matches), with a port of skim's
//! scorer that does not allocate per row (see [`score`]), on two threads for
//! big tables, and ranks the matches with a counting sort on the score.

mod query;
mod texts;

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

use std::cmp::Ordering;
use std::sync::Arc;

use super::command::SortColumn;
use std::collections::BTreeSet;

use super::score::Scratch;
use crate::model::{PodRow, RowKey};
use query::{OneField, Query};
use texts::SearchTexts;

pub struct PodTable {
    /// Every row, in key (namespace/name) order; boxed so that inserting a
    /// row into 100 000 moves pointers, not ~160-byte rows.
    #[allow(clippy::vec_box)]
    rows: Vec<Box<PodRow>>,
    /// Each row's `namespace/name`, in row order.
    texts: SearchTexts,
    /// The rows shown and their order, when filtered or sorted (a sort
    /// without a query is a filter that keeps every row).
    filter: Option<Filter>,
    sort: Option<Sort>,
    selected: Option<RowKey>,
    cursor: usize,
    /// Only for the highlight positions of drawn rows.
    matcher: SkimMatcherV2,
    /// The scorer's buffers for rows scored one at a time (watch events
    /// while filtered), kept from one to the next.
    scratch: Scratch,
    widths: WidthTracker,
    /// Pods marked for a launch in many at once (`space`, `*`).
    marks: BTreeSet<RowKey>,
    /// Only a workload's or a Service's pods are shown (`enter` on one).
    narrow: Option<Narrow>,
}

/// The pods some objects pick: a workload's or a Service's, or those of
/// several marked in their view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrow {
    pub picks: Vec<Pick>,
}

/// The pods of one namespace that a selector picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pick {
    /// The tag of the rows it picks from: the object is one cluster's,
    /// and another cluster's pods with the same labels are not its.
    pub context: Option<Arc<str>>,
    pub namespace: String,
    pub selector: crate::model::selector::Selector,
}

impl Pick {
    pub fn admits(&self, row: &PodRow) -> bool {
        row.context == self.context
            && *row.key.namespace == *self.namespace
            && self.selector.matches(&row.labels)
    }
}

impl Narrow {
    pub fn admits(&self, row: &PodRow) -> bool {
        self.picks.iter().any(|pick| pick.admits(row))
    }

    /// The tag of the one cluster its picks are all of, if they are.
    pub fn one_context(&self) -> Option<&Option<Arc<str>>> {
        let first = &self.picks.first()?.context;
        self.picks
            .iter()
            .all(|p| p.context == *first)
            .then_some(first)
    }
}

/// The widest namespace, name, status and node of all rows, in characters:
/// what the table's columns are sized to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextWidths {
    pub namespace: usize,
    pub name: usize,
    pub status: usize,
    pub node: usize,
}

/// [`TextWidths`] kept as rows come and go, so that neither a frame nor a
/// watch event measures 100 000 rows: each column counts the rows at its
/// widest, and all rows are measured again only when the last of them goes.
#[derive(Debug, Default)]
struct WidthTracker {
    columns: [Widest; 4],
}

#[derive(Debug, Default, Clone, Copy)]
struct Widest {
    width: usize,
    rows: usize,
}

impl WidthTracker {
    fn of(row: &PodRow) -> [usize; 4] {
        let (namespace, name) = row.key.shown();
        [
            namespace.chars().count(),
            name.chars().count(),
            row.status.chars().count(),
            row.node.chars().count(),
        ]
    }

    fn add(&mut self, row: &PodRow) {
        for (column, width) in self.columns.iter_mut().zip(Self::of(row)) {
            if width > column.width {
                *column = Widest { width, rows: 1 };
            } else if width == column.width {
                column.rows += 1;
            }
        }
    }

    /// Takes `row` out; false when a column lost its last widest row (the
    /// rows must then be measured again).
    fn remove(&mut self, row: &PodRow) -> bool {
        let mut still_known = true;
        for (column, width) in self.columns.iter_mut().zip(Self::of(row)) {
            if width == column.width {
                column.rows = column.rows.saturating_sub(1);
                still_known &= column.rows > 0 || column.width == 0;
            }
        }
        still_known
    }

    fn widths(&self) -> TextWidths {
        let [namespace, name, status, node] = self.columns.map(|c| c.width);
        TextWidths {
            namespace,
            name,
            status,
            node,
        }
    }
}

struct Filter {
    pattern: Query,
    /// The rows that match, in the sort's order, else best score first;
    /// ties in key order.
    hits: Vec<Hit>,
}

/// The list sorted by a column, in the column's natural direction (most
/// restarts first, youngest first, A to Z) or reversed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub column: SortColumn,
    pub reversed: bool,
}

impl Sort {
    /// Orders two rows by the column, ties by namespace/name.
    fn cmp(&self, a: &PodRow, b: &PodRow) -> Ordering {
        let natural = match self.column {
            SortColumn::Name => a.key.name.cmp(&b.key.name),
            SortColumn::Namespace => a.key.namespace.cmp(&b.key.namespace),
            SortColumn::Status => a.status.cmp(&b.status),
            SortColumn::Restarts => b.restarts.cmp(&a.restarts),
            SortColumn::Age => b.created.cmp(&a.created),
            SortColumn::Node => a.node.cmp(&b.node),
            // Most first; a pod not measured after every measured one.
            SortColumn::Cpu => b
                .usage
                .map(|u| u.microcores)
                .cmp(&a.usage.map(|u| u.microcores)),
            SortColumn::Memory => b
                .usage
                .map(|u| u.memory_kib)
                .cmp(&a.usage.map(|u| u.memory_kib)),
        };
        let by_column = if self.reversed {
            natural.reverse()
        } else {
            natural
        };
        by_column.then_with(|| a.order().cmp(&b.order()))
    }

    /// "most first", "oldest first", "A to Z".
    pub fn order_words(&self) -> &'static str {
        match (self.column, self.reversed) {
            (SortColumn::Restarts, false) => "most first",
            (SortColumn::Restarts, true) => "fewest first",
            (SortColumn::Age, false) => "youngest first",
            (SortColumn::Age, true) => "oldest first",
            (SortColumn::Cpu | SortColumn::Memory, false) => "most first",
            (SortColumn::Cpu | SortColumn::Memory, true) => "least first",
            (_, false) => "A to Z",
            (_, true) => "Z to A",
        }
    }
}

/// A matching row: its index in `rows` and its score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hit {
    row: u32,
    score: i32,
}

impl Hit {
    /// Whether `self` is ranked before `other`.
    fn before(&self, other: &Hit) -> bool {
        self.score > other.score || (self.score == other.score && self.row < other.row)
    }
}

impl Default for PodTable {
    fn default() -> Self {
        PodTable {
            rows: Vec::new(),
            texts: SearchTexts::default(),
            filter: None,
            sort: None,
            selected: None,
            cursor: 0,
            matcher: SkimMatcherV2::default().ignore_case(),
            scratch: Scratch::default(),
            marks: BTreeSet::new(),
            widths: WidthTracker::default(),
            narrow: None,
        }
    }
}

impl PodTable {
    pub fn total(&self) -> usize {
        self.rows.len()
    }

    /// Every row of the namespaces shown, whatever the filter.
    pub fn rows(&self) -> impl Iterator<Item = &PodRow> {
        self.rows.iter().map(|r| &**r)
    }

    /// Rows currently shown (after the filter).
    pub fn visible_len(&self) -> usize {
        match &self.filter {
            Some(f) => f.hits.len(),
            None => self.rows.len(),
        }
    }

    pub fn widths(&self) -> TextWidths {
        self.widths.widths()
    }

    pub fn query(&self) -> Option<&str> {
        self.filter
            .as_ref()
            .map(|f| f.pattern.as_str())
            .filter(|q| !q.is_empty())
    }

    pub fn sort(&self) -> Option<Sort> {
        self.sort
    }

    pub fn narrow(&self) -> Option<&Narrow> {
        self.narrow.as_ref()
    }

    /// Shows only the pods `narrow` admits (all pods for `None`), the
    /// filter and sort kept; the cursor starts at the top.
    pub fn set_narrow(&mut self, narrow: Option<Narrow>) {
        self.narrow = narrow;
        let query = self.query().unwrap_or_default().to_string();
        self.filter = None;
        self.rebuild(&query);
        self.select_index(0);
    }

    /// Sorts by `column`, this way round (a restored workspace's sort).
    pub fn set_sort(&mut self, column: SortColumn, reversed: bool) {
        self.sort = Some(Sort { column, reversed });
        let query = self.query().unwrap_or_default().to_string();
        self.filter = None;
        self.rebuild(&query);
        self.resync_cursor();
    }

    /// Sorts by `column`; by the same column again, the other way round.
    /// The selected pod stays selected.
    pub fn sort_by(&mut self, column: SortColumn) -> Sort {
        let sort = match self.sort {
            Some(s) if s.column == column => Sort {
                column,
                reversed: !s.reversed,
            },
            _ => Sort {
                column,
                reversed: false,
            },
        };
        self.sort = Some(sort);
        let query = self.query().unwrap_or_default().to_string();
        self.filter = None;
        self.rebuild(&query);
        self.resync_cursor();
        sort
    }

    pub fn get(&self, key: &RowKey) -> Option<&PodRow> {
        self.position(key).ok().map(|i| &*self.rows[i])
    }

    /// The visible row at `index`, with the positions of `namespace/name`
    /// that match the filter (for highlighting).
    pub fn visible(&self, index: usize) -> Option<(&PodRow, Vec<usize>)> {
        match &self.filter {
            Some(f) => {
                let at = f.hits.get(index)?.row as usize;
                let row = self.rows.get(at)?;
                let positions = self
                    .matcher
                    .fuzzy_indices(self.texts.get(at), f.pattern.highlight())
                    .map(|(_, p)| p)
                    .unwrap_or_default();
                Some((row, positions))
            }
            None => self.rows.get(index).map(|r| (&**r, Vec::new())),
        }
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn selected(&self) -> Option<&RowKey> {
        self.selected.as_ref()
    }

    /// No rows at all (another scope, another set of clusters).
    pub fn clear(&mut self) {
        self.rows.clear();
        self.texts = SearchTexts::default();
        self.measure();
        self.marks.clear();
        self.rank_again();
        self.resync_cursor();
    }

    /// Replaces every row of `context`'s `namespace` (all its rows when
    /// `None`) with `rows`. Of rows with the same key, the last one given
    /// wins.
    pub fn replace(&mut self, context: Option<&str>, namespace: Option<&str>, rows: Vec<PodRow>) {
        self.rows.retain(|r| {
            r.context.as_deref() != context || namespace.is_some_and(|ns| &*r.key.namespace != ns)
        });
        self.rows.extend(rows.into_iter().map(Box::new));
        sort_keeping_the_last(&mut self.rows);
        self.texts = SearchTexts::of(self.rows.iter().map(|r| &r.key));
        self.measure();
        let rows = &self.rows;
        self.marks.retain(|k| {
            rows.binary_search_by(|r| r.order().cmp(&(k.context.as_deref(), &k.pod)))
                .is_ok()
        });
        self.rank_again();
        self.resync_cursor();
    }

    /// The filter's matches ranked anew over every row.
    fn rank_again(&mut self) {
        if let Some(f) = self.filter.take() {
            let hits = self.rank(&f.pattern, None);
            self.filter = Some(Filter {
                pattern: f.pattern,
                hits,
            });
        }
    }

    /// Adds a batch of rows (a page of a list under way), keeping the
    /// selection; of rows with the same key, the one given wins.
    pub fn extend(&mut self, rows: Vec<PodRow>) {
        if rows.is_empty() {
            return;
        }
        for row in &rows {
            self.widths.add(row);
        }
        let mut page: Vec<Box<PodRow>> = rows.into_iter().map(Box::new).collect();
        page.sort_by(|a, b| a.order().cmp(&b.order()));
        // A list's pages come in key order: each lands after the last row,
        // and only its own rows need scoring. (etcd orders `ns/name` as
        // bytes, so `prod`'s pods come after `prod-eu`'s: those pages take
        // the sort below.)
        let after_the_last = page.windows(2).all(|w| w[0].order() < w[1].order())
            && self
                .rows
                .last()
                .is_none_or(|last| last.order() < page[0].order());
        let first_new = self.rows.len() as u32;
        if after_the_last {
            for row in &page {
                self.texts.push(&row.key);
            }
        }
        self.rows.append(&mut page);
        if after_the_last {
            if let Some(f) = self.filter.take() {
                let new: Vec<u32> = (first_new..self.rows.len() as u32).collect();
                let mut hits = f.hits;
                hits.extend(self.score(&f.pattern, &new));
                let hits = self.order(hits);
                self.filter = Some(Filter {
                    pattern: f.pattern,
                    hits,
                });
            }
        } else {
            // Two sorted runs (the rows, then the page): the stable sort
            // merges them in one pass.
            let before = self.rows.len();
            sort_keeping_the_last(&mut self.rows);
            self.texts = SearchTexts::of(self.rows.iter().map(|r| &r.key));
            if self.rows.len() != before {
                self.measure();
            }
            self.rank_again();
        }
        self.resync_cursor();
    }

    /// Adds or updates one row.
    pub fn apply(&mut self, row: PodRow) {
        self.widths.add(&row);
        let mut remeasure = false;
        let at = match self.position(&row.row_key()) {
            Ok(at) => {
                remeasure = !self.widths.remove(&self.rows[at]);
                // Its use stays until metrics-server measures it again.
                let usage = self.rows[at].usage;
                *self.rows[at] = PodRow { usage, ..row };
                at
            }
            Err(at) => {
                self.texts.insert(at, &row.key);
                self.rows.insert(at, Box::new(row));
                if let Some(f) = &mut self.filter {
                    for hit in &mut f.hits {
                        if hit.row as usize >= at {
                            hit.row += 1;
                        }
                    }
                }
                at
            }
        };
        if remeasure {
            self.measure();
        }
        self.refilter_one(at);
        self.resync_cursor();
    }

    /// Each pod of `context`'s rows, its use as metrics-server last
    /// measured it (none for a pod it did not measure); a sort by CPU or
    /// memory is applied anew.
    pub fn set_usage(&mut self, context: Option<&str>, measured: Vec<crate::model::usage::PodUse>) {
        for row in &mut self.rows {
            if row.context.as_deref() == context {
                row.usage = None;
            }
        }
        for pod in measured {
            let key = RowKey {
                context: context.map(Arc::from),
                pod: pod.key,
            };
            if let Ok(at) = self.position(&key) {
                self.rows[at].usage = Some(pod.total);
            }
        }
        self.resort_by_usage();
    }

    /// No figures (the metrics API is gone, or another scope is shown).
    pub fn clear_usage(&mut self) {
        if self.rows.iter().any(|r| r.usage.is_some()) {
            for row in &mut self.rows {
                row.usage = None;
            }
            self.resort_by_usage();
        }
    }

    fn resort_by_usage(&mut self) {
        if self
            .sort
            .is_some_and(|s| matches!(s.column, SortColumn::Cpu | SortColumn::Memory))
        {
            let query = self.query().unwrap_or_default().to_string();
            self.filter = None;
            self.rebuild(&query);
            self.resync_cursor();
        }
    }

    pub fn remove(&mut self, key: &RowKey) {
        let Ok(at) = self.position(key) else {
            return;
        };
        let gone = self.rows.remove(at);
        self.texts.remove(at);
        self.marks.remove(key);
        if !self.widths.remove(&gone) {
            self.measure();
        }
        if let Some(f) = &mut self.filter {
            let at = at as u32;
            f.hits.retain(|hit| hit.row != at);
            for hit in &mut f.hits {
                if hit.row > at {
                    hit.row -= 1;
                }
            }
        }
        self.resync_cursor();
    }

    /// Marks the selected pod, or unmarks it; `Some(true)` when it is now
    /// marked, `None` when nothing is selected.
    pub fn toggle_mark(&mut self) -> Option<bool> {
        let key = self.selected.clone()?;
        Some(super::mark_set::toggle_one(&mut self.marks, key))
    }

    /// Marks every pod shown (the filter's matches), or, when each of them
    /// is marked already, unmarks them. True when they are now marked.
    pub fn mark_shown(&mut self) -> bool {
        let shown: Vec<RowKey> = (0..self.visible_len())
            .filter_map(|i| self.visible_key(i))
            .collect();
        super::mark_set::toggle_all(&mut self.marks, shown)
    }

    /// The marked pods, in key order.
    pub fn marks(&self) -> &BTreeSet<RowKey> {
        &self.marks
    }

    pub fn is_marked(&self, key: &RowKey) -> bool {
        self.marks.contains(key)
    }

    pub fn clear_marks(&mut self) {
        self.marks.clear();
    }

    /// The key of the `index`-th row shown, without the filter's highlight.
    fn visible_key(&self, index: usize) -> Option<RowKey> {
        let row = match &self.filter {
            Some(f) => self.rows.get(f.hits.get(index)?.row as usize)?,
            None => self.rows.get(index)?,
        };
        Some(row.row_key())
    }

    /// Sets the filter; an empty query clears it.
    pub fn set_filter(&mut self, query: &str) {
        self.rebuild(query);
        // A new filter starts at the best match.
        self.cursor = 0;
        self.selected = self.key_at(0);
    }

    /// The rows shown for `query` and the sort.
    fn rebuild(&mut self, query: &str) {
        if query.is_empty() && self.sort.is_none() && self.narrow.is_none() {
            self.filter = None;
        } else {
            let pattern = Query::new(query);
            // Whatever matches the longer query matches the shorter one:
            // only the rows matching now can still match.
            let narrow = self
                .filter
                .take()
                .filter(|f| pattern.extends(&f.pattern))
                .map(|f| f.hits);
            let hits = self.rank(&pattern, narrow.as_deref());
            self.filter = Some(Filter { pattern, hits });
        }
    }

    pub fn move_by(&mut self, delta: isize) {
        let len = self.visible_len();
        if len == 0 {
            return;
        }
        let next = (self.cursor as isize + delta).clamp(0, len as isize - 1) as usize;
        self.select_index(next);
    }

    pub fn select_index(&mut self, index: usize) {
        let len = self.visible_len();
        if len == 0 {
            self.cursor = 0;
            self.selected = None;
            return;
        }
        self.cursor = index.min(len - 1);
        self.selected = self.key_at(self.cursor);
    }

    /// Measures every row again: after a relist, or when the last of a
    /// column's widest rows changed or went.
    fn measure(&mut self) {
        self.widths = WidthTracker::default();
        for row in &self.rows {
            self.widths.add(row);
        }
    }

    fn position(&self, key: &RowKey) -> Result<usize, usize> {
        let wanted = (key.context.as_deref(), &key.pod);
        self.rows.binary_search_by(|r| r.order().cmp(&wanted))
    }

    fn key_at(&self, index: usize) -> Option<RowKey> {
        self.visible_key(index)
    }

    /// Puts the cursor back on the selected pod after rows moved; if that
    /// pod is gone, the row now at the cursor's place is selected.
    fn resync_cursor(&mut self) {
        let found = self.selected.as_ref().and_then(|key| {
            let row = self.position(key).ok()?;
            match &self.filter {
                Some(f) => f.hits.iter().position(|h| h.row as usize == row),
                None => Some(row),
            }
        });
        match found {
            Some(i) => self.cursor = i,
            None => self.select_index(self.cursor),
        }
    }

    /// The rows matching `pattern`, ranked: all rows, or only those among
    /// `candidates` (hits of a query that `pattern` extends).
    fn rank(&self, pattern: &Query, candidates: Option<&[Hit]>) -> Vec<Hit> {
        let rows = &self.rows;
        let indices: Vec<u32> = match candidates {
            None => (0..rows.len() as u32).collect(),
            // Every row matched the shorter query.
            Some(hits) if hits.len() == rows.len() => (0..rows.len() as u32).collect(),
            Some(hits) => {
                let mut keep = vec![false; rows.len()];
                for hit in hits {
                    keep[hit.row as usize] = true;
                }
                (0..rows.len() as u32)
                    .filter(|&i| keep[i as usize])
                    .collect()
            }
        };
        let hits = self.score(pattern, &indices);
        self.order(hits)
    }

    /// The rows of `indices` (in row order) that match `pattern`, scored.
    fn score(&self, pattern: &Query, indices: &[u32]) -> Vec<Hit> {
        let score_all = |part: &[u32]| self.score_part(pattern, part);
        if indices.len() < PARALLEL_FROM {
            score_all(indices)
        } else {
            // Big tables: score both halves at once.
            crate::parallel::in_halves(indices, score_all)
        }
    }

    /// [`Self::score`] on one thread. Names are read in one pass over the
    /// texts, which lie in row order; the rows whose name does not match
    /// are then read for their other fields, each fetched a few rows
    /// ahead: they are 100 000 allocations far apart, and waiting on each
    /// in turn made a keystroke up to twice as long.
    fn score_part(&self, query: &Query, part: &[u32]) -> Vec<Hit> {
        let admitted: Vec<u32>;
        let part = match &self.narrow {
            Some(narrow) => {
                admitted = part
                    .iter()
                    .copied()
                    .filter(|&i| narrow.admits(&self.rows[i as usize]))
                    .collect();
                &admitted[..]
            }
            None => part,
        };
        let mut scratch = Scratch::default();
        let mut by_name = Vec::with_capacity(part.len());
        let mut others = Vec::new();
        if query.only.is_some() {
            others.extend_from_slice(part);
        } else {
            for &i in part {
                match query
                    .pattern
                    .score(self.texts.get(i as usize), &mut scratch)
                {
                    Some(score) => by_name.push(Hit { row: i, score }),
                    None => others.push(i),
                }
            }
        }
        let mut by_other = Vec::new();
        let mut known = KnownScores::for_rows(others.len());
        for (k, &i) in others.iter().enumerate() {
            if let Some(&ahead) = others.get(k + PREFETCH_ROWS) {
                let row = &*self.rows[ahead as usize];
                prefetch(&row.node);
                prefetch(&row.labels);
                prefetch(&row.status);
            }
            let row = &self.rows[i as usize];
            if let Some(score) = score_other_fields(query, row, &mut scratch, &mut known) {
                by_other.push(Hit { row: i, score });
            }
        }
        if by_other.is_empty() {
            return by_name;
        }
        merge_by_row(by_name, by_other)
    }

    /// Hits in the order shown: by the sort, else best score first (ties
    /// in the order given, which is row order).
    fn order(&self, hits: Vec<Hit>) -> Vec<Hit> {
        let rows = &self.rows;
        match self.sort {
            Some(sort) => {
                let mut hits = hits;
                hits.sort_unstable_by(|a, b| {
                    sort.cmp(&rows[a.row as usize], &rows[b.row as usize])
                });
                hits
            }
            None => rank_hits(hits),
        }
    }

    fn refilter_one(&mut self, at: usize) {
        let Some(filter) = self.filter.as_mut() else {
            return;
        };
        let rows = &self.rows;
        let row = at as u32;
        filter.hits.retain(|h| h.row != row);
        if self.narrow.as_ref().is_some_and(|n| !n.admits(&rows[at])) {
            return;
        }
        let scored = score_row(
            &filter.pattern,
            self.texts.get(at),
            &rows[at],
            &mut self.scratch,
        );
        if let Some(score) = scored {
            let hit = Hit { row, score };
            let place = match self.sort {
                Some(sort) => filter.hits.partition_point(|x| {
                    sort.cmp(&rows[x.row as usize], &rows[at]) == Ordering::Less
                }),
                None => filter.hits.partition_point(|x| x.before(&hit)),
            };
            filter.hits.insert(place, hit);
        }
    }
}

/// Tables (or candidate sets) at least this big are scored on two threads.
const PARALLEL_FROM: usize = 20_000;

/// How many rows ahead of the one scored its row is fetched into the cache.
const PREFETCH_ROWS: usize = 8;

/// Asks the CPU to bring `at`'s cache line in; only a hint.
#[inline(always)]
fn prefetch<T: ?Sized>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes nothing observable,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Scores one row: namespace/name (`search`) first, then its other fields
/// (what [`PodTable::score_part`] does in two passes for many rows).
fn score_row(query: &Query, search: &str, row: &PodRow, scratch: &mut Scratch) -> Option<i32> {
    let by_name = match query.only {
        Some(_) => None,
        None => query.pattern.score(search, scratch),
    };
    by_name.or_else(|| score_other_fields(query, row, scratch, &mut KnownScores::for_rows(1)))
}

/// Scores a row whose namespace/name (what the filter tries first) does
/// not match: node, then each label, then status — the first field that
/// matches counts, so a query cannot match with letters scattered across
/// fields (or labels). Its score is below every name match's ([`OTHER_FIELD`] less):
/// names first. A `status:` query looks at STATUS only, a `ctx:` query at
/// the context only (no row matches it in a list of one cluster).
fn score_other_fields(
    query: &Query,
    row: &PodRow,
    scratch: &mut Scratch,
    known: &mut KnownScores,
) -> Option<i32> {
    // A field's score; labels each alone: a Job's pod carries long uid
    // labels, where letters scattered across them matched anything.
    let mut score = |field: &Arc<str>, by_word: bool| {
        known.score(field, |text| match by_word {
            true => text
                .split(' ')
                .filter_map(|label| query.pattern.score(label, scratch))
                .max(),
            false => query.pattern.score(text, scratch),
        })
    };
    let found = match query.only {
        Some(OneField::Status) => score(&row.status, false),
        Some(OneField::Context) => row.context.as_ref().and_then(|c| score(c, false)),
        None => score(&row.node, false)
            .or_else(|| score(&row.labels, true))
            .or_else(|| score(&row.status, false))
            .or_else(|| row.context.as_ref().and_then(|c| score(c, false))),
    };
    found.map(|s| s - OTHER_FIELD)
}

/// The scores of the texts scored so far for one query: nodes, label
/// sets and statuses are shared between rows (a few hundred of them for
/// 100 000 rows), so most are scored once, not once per row. A small
/// direct-mapped table: a text whose slot another took is scored again.
struct KnownScores {
    slots: Vec<(*const u8, Option<i32>)>,
}

impl KnownScores {
    /// Enough for the label sets of a cluster's ReplicaSets.
    const MOST_SLOTS: usize = 16384;

    /// A table for scoring the other fields of `rows` rows.
    fn for_rows(rows: usize) -> Self {
        let slots = rows.clamp(1, Self::MOST_SLOTS).next_power_of_two();
        KnownScores {
            slots: vec![(std::ptr::null(), None); slots],
        }
    }

    fn score(&mut self, text: &Arc<str>, score: impl FnOnce(&str) -> Option<i32>) -> Option<i32> {
        // A shared text is known by where it lives (which outlives the
        // table: the rows hold it); the slot is the top bits of a
        // multiplicative hash of that.
        let at = text.as_ptr();
        let bits = self.slots.len().trailing_zeros();
        let hash = (at as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = &mut self.slots[hash.checked_shr(64 - bits).unwrap_or(0) as usize];
        if slot.0 != at {
            *slot = (at, score(text));
        }
        slot.1
    }
}

/// Two lists of hits in row order, as one.
fn merge_by_row(a: Vec<Hit>, b: Vec<Hit>) -> Vec<Hit> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.row <= y.row => a.next(),
            (Some(_), Some(_)) | (None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => return merged,
        };
        merged.extend(next);
    }
}

/// Sorts rows by key, keeping of equal keys the one that came last (the
/// stable sort keeps their order; the later one wins the dedup).
#[allow(clippy::vec_box)]
fn sort_keeping_the_last(rows: &mut Vec<Box<PodRow>>) {
    rows.sort_by(|a, b| a.order().cmp(&b.order()));
    rows.dedup_by(|later, earlier| {
        let same = later.order() == earlier.order();
        if same {
            std::mem::swap(later, earlier);
        }
        same
    });
}

/// Orders hits that arrive in row (key) order: best score first, ties in
/// row order. Scores span a few hundred values, so a counting sort does it
/// in two passes.
fn rank_hits(hits: Vec<Hit>) -> Vec<Hit> {
    // Two tiers, names then other fields (see [`OTHER_FIELD`]), each best
    // score first: one counting sort, each tier's scores in buckets of
    // their own, when their spans are small.
    let names = |h: &&Hit| h.score > -OTHER_FIELD / 2;
    let span = |tier: &mut dyn Iterator<Item = i32>| {
        tier.fold(None, |acc: Option<(i32, i32)>, s| {
            Some(acc.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s))))
        })
    };
    let name_span = span(&mut hits.iter().filter(names).map(|h| h.score));
    let other_span = span(&mut hits.iter().filter(|h| !names(h)).map(|h| h.score));
    let width =
        |span: Option<(i32, i32)>| span.map_or(0, |(lo, hi)| (hi as i64 - lo as i64) as usize + 1);
    let (name_width, other_width) = (width(name_span), width(other_span));
    if name_width + other_width > 1 << 16 {
        let mut hits = hits;
        hits.sort_by_key(|h| std::cmp::Reverse(h.score));
        return hits;
    }
    let bucket = |h: &Hit| match (names(&h), name_span, other_span) {
        (true, Some((_, high)), _) => (high - h.score) as usize,
        (false, _, Some((_, high))) => name_width + (high - h.score) as usize,
        _ => 0,
    };
    let mut starts = vec![0usize; name_width + other_width + 1];
    for h in &hits {
        starts[bucket(h) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut ranked = vec![Hit { row: 0, score: 0 }; hits.len()];
    for h in hits {
        let slot = &mut starts[bucket(&h)];
        ranked[*slot] = h;
        *slot += 1;
    }
    ranked
}

/// Taken from the score of a match in a field other than the name: more
/// than any fuzzy score of a name (at most 253 characters) can reach.
const OTHER_FIELD: i32 = 1 << 24;

#[cfg(test)]
mod tests;

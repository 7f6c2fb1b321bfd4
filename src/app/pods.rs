//! The live pod table: rows by key, kept in namespace/name order, an
//! optional fuzzy filter, and a selection that stays on the same pod while
//! rows come and go. Single-row changes cost O(log n) (plus a memmove), not
//! a re-sort or a re-filter of everything.

use std::collections::HashMap;

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

use crate::model::{PodKey, PodRow};

/// One row that passes the filter. Highlight positions are computed only
/// for the rows actually drawn (see [`PodTable::visible`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub key: PodKey,
    pub score: i64,
}

pub struct PodTable {
    rows: HashMap<PodKey, PodRow>,
    order: Vec<PodKey>,
    filter: Option<Filter>,
    selected: Option<PodKey>,
    cursor: usize,
    matcher: SkimMatcherV2,
}

struct Filter {
    query: String,
    matches: Vec<Match>,
}

impl Default for PodTable {
    fn default() -> Self {
        PodTable {
            rows: HashMap::new(),
            order: Vec::new(),
            filter: None,
            selected: None,
            cursor: 0,
            matcher: SkimMatcherV2::default().ignore_case(),
        }
    }
}

impl PodTable {
    pub fn total(&self) -> usize {
        self.rows.len()
    }

    /// Rows currently shown (after the filter).
    pub fn visible_len(&self) -> usize {
        match &self.filter {
            Some(f) => f.matches.len(),
            None => self.order.len(),
        }
    }

    pub fn query(&self) -> Option<&str> {
        self.filter.as_ref().map(|f| f.query.as_str())
    }

    pub fn get(&self, key: &PodKey) -> Option<&PodRow> {
        self.rows.get(key)
    }

    /// The visible row at `index`, with the positions of `namespace/name`
    /// that match the filter (for highlighting).
    pub fn visible(&self, index: usize) -> Option<(&PodRow, Vec<usize>)> {
        match &self.filter {
            Some(f) => {
                let row = self.rows.get(&f.matches.get(index)?.key)?;
                let positions = self
                    .matcher
                    .fuzzy_indices(&row.search, &f.query)
                    .map(|(_, p)| p)
                    .unwrap_or_default();
                Some((row, positions))
            }
            None => self
                .order
                .get(index)
                .and_then(|k| Some((self.rows.get(k)?, Vec::new()))),
        }
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn selected(&self) -> Option<&PodKey> {
        self.selected.as_ref()
    }

    /// Replaces every row of `namespace` (all rows when `None`) with `rows`.
    pub fn replace(&mut self, namespace: Option<&str>, rows: Vec<PodRow>) {
        match namespace {
            None => self.rows.clear(),
            Some(ns) => self.rows.retain(|k, _| &*k.namespace != ns),
        }
        for row in rows {
            self.rows.insert(row.key.clone(), row);
        }
        self.order = self.rows.keys().cloned().collect();
        self.order.sort_unstable();
        if let Some(query) = self.filter.as_ref().map(|f| f.query.clone()) {
            self.filter = Some(self.compute_filter(&query));
        }
        self.resync_cursor();
    }

    /// Adds or updates one row.
    pub fn apply(&mut self, row: PodRow) {
        let key = row.key.clone();
        let is_new = self.rows.insert(key.clone(), row).is_none();
        if is_new && let Err(at) = self.order.binary_search(&key) {
            self.order.insert(at, key.clone());
        }
        self.refilter_one(&key);
        self.resync_cursor();
    }

    pub fn remove(&mut self, key: &PodKey) {
        if self.rows.remove(key).is_none() {
            return;
        }
        if let Ok(at) = self.order.binary_search(key) {
            self.order.remove(at);
        }
        if let Some(f) = &mut self.filter {
            f.matches.retain(|m| &m.key != key);
        }
        self.resync_cursor();
    }

    /// Sets the filter; an empty query clears it.
    pub fn set_filter(&mut self, query: &str) {
        if query.is_empty() {
            self.filter = None;
        } else {
            self.filter = Some(self.compute_filter(query));
        }
        // A new filter starts at the best match.
        self.cursor = 0;
        self.selected = self.key_at(0);
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

    fn key_at(&self, index: usize) -> Option<PodKey> {
        match &self.filter {
            Some(f) => f.matches.get(index).map(|m| m.key.clone()),
            None => self.order.get(index).cloned(),
        }
    }

    /// Puts the cursor back on the selected pod after rows moved; if that
    /// pod is gone, the row now at the cursor's place is selected.
    fn resync_cursor(&mut self) {
        let found = self.selected.as_ref().and_then(|key| match &self.filter {
            Some(f) => f.matches.iter().position(|m| &m.key == key),
            None => self.order.binary_search(key).ok(),
        });
        match found {
            Some(i) => self.cursor = i,
            None => self.select_index(self.cursor),
        }
    }

    /// Scores one row (see [`score_row`]).
    fn score(&self, row: &PodRow, query: &str) -> Option<Match> {
        score_row(&self.matcher, row, query)
    }

    fn compute_filter(&self, query: &str) -> Filter {
        let rows: Vec<&PodRow> = self.order.iter().filter_map(|k| self.rows.get(k)).collect();
        let mut matches = if rows.len() < PARALLEL_FROM {
            rows.iter()
                .filter_map(|row| score_row(&self.matcher, row, query))
                .collect()
        } else {
            // Big tables: score both halves at once (the skim matcher is Sync).
            let (left, right) = rows.split_at(rows.len() / 2);
            let matcher = &self.matcher;
            std::thread::scope(|scope| {
                let other = scope.spawn(move || {
                    right
                        .iter()
                        .filter_map(|row| score_row(matcher, row, query))
                        .collect::<Vec<_>>()
                });
                let mut mine: Vec<Match> = left
                    .iter()
                    .filter_map(|row| score_row(matcher, row, query))
                    .collect();
                mine.extend(other.join().unwrap_or_default());
                mine
            })
        };
        // Candidates arrive in key order, so a stable sort on the score alone
        // breaks ties by key without comparing strings.
        matches.sort_by_key(|m| std::cmp::Reverse(m.score));
        Filter {
            query: query.to_string(),
            matches,
        }
    }

    fn refilter_one(&mut self, key: &PodKey) {
        let Some(query) = self.filter.as_ref().map(|f| f.query.clone()) else {
            return;
        };
        let scored = self.rows.get(key).and_then(|row| self.score(row, &query));
        let Some(filter) = self.filter.as_mut() else {
            return;
        };
        filter.matches.retain(|m| &m.key != key);
        if let Some(m) = scored {
            let at = filter
                .matches
                .partition_point(|x| x.score > m.score || (x.score == m.score && x.key < m.key));
            filter.matches.insert(at, m);
        }
    }
}

/// Tables at least this big are filtered on two threads.
const PARALLEL_FROM: usize = 20_000;

/// Scores a row: namespace/name first, then node, then labels — the first
/// field that matches counts, so a query cannot match with letters
/// scattered across fields and a name match outranks a label match. A cheap
/// in-order check rules out most fields before the skim scorer runs.
fn score_row(matcher: &SkimMatcherV2, row: &PodRow, query: &str) -> Option<Match> {
    let score = [&*row.search, &*row.node, &*row.labels]
        .into_iter()
        .filter(|field| contains_in_order(field, query))
        .find_map(|field| matcher.fuzzy_match(field, query))?;
    Some(Match {
        key: row.key.clone(),
        score,
    })
}

/// Whether the query's characters appear in `field` in order, ignoring
/// ASCII case: a necessary condition for any fuzzy match.
fn contains_in_order(field: &str, query: &str) -> bool {
    let mut wanted = query.chars().map(|c| c.to_ascii_lowercase()).peekable();
    for c in field.chars() {
        match wanted.peek() {
            Some(w) if *w == c.to_ascii_lowercase() => {
                wanted.next();
            }
            Some(_) => {}
            None => return true,
        }
    }
    wanted.peek().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Health;

    fn row(ns: &str, name: &str) -> PodRow {
        PodRow {
            key: PodKey::new(ns, name),
            ready: 1,
            total: 1,
            status: "Running".into(),
            restarts: 0,
            last_restart: None,
            created: None,
            node: "node-1".into(),
            ip: "".into(),
            labels: format!("app={name}").into(),
            search: format!("{ns}/{name}").into(),
            ephemeral: 0,
            health: Health::Good,
        }
    }

    fn names(t: &PodTable) -> Vec<String> {
        (0..t.visible_len())
            .map(|i| t.visible(i).unwrap().0.key.name.to_string())
            .collect()
    }

    #[test]
    fn rows_are_ordered_and_selection_sticks_to_its_pod() {
        let mut t = PodTable::default();
        t.replace(None, vec![row("b", "web"), row("a", "db"), row("a", "api")]);
        assert_eq!(names(&t), ["api", "db", "web"]);
        t.select_index(1);
        assert_eq!(t.selected().unwrap().name.as_ref(), "db");
        t.apply(row("a", "aaa"));
        assert_eq!(
            t.selected().unwrap().name.as_ref(),
            "db",
            "insert above keeps the pod"
        );
        assert_eq!(t.cursor(), 2);
        t.remove(&PodKey::new("a", "aaa"));
        assert_eq!(t.cursor(), 1);
        t.remove(&PodKey::new("a", "db"));
        assert_eq!(
            t.selected().unwrap().name.as_ref(),
            "web",
            "the next row takes over"
        );
        t.remove(&PodKey::new("b", "web"));
        t.remove(&PodKey::new("a", "api"));
        assert_eq!(t.selected(), None);
        t.move_by(1);
    }

    #[test]
    fn replacing_one_namespace_keeps_the_others() {
        let mut t = PodTable::default();
        t.replace(Some("a"), vec![row("a", "x")]);
        t.replace(Some("b"), vec![row("b", "y")]);
        t.replace(Some("a"), vec![row("a", "z")]);
        assert_eq!(names(&t), ["z", "y"]);
    }

    #[test]
    fn fuzzy_filter_ranks_highlights_and_follows_live_changes() {
        let mut t = PodTable::default();
        t.replace(
            None,
            vec![
                row("shop", "storefront-1"),
                row("shop", "cart-1"),
                row("pay", "ledger"),
            ],
        );
        t.set_filter("stfr");
        assert_eq!(names(&t), ["storefront-1"]);
        t.set_filter("cartnode");
        assert_eq!(
            t.visible_len(),
            0,
            "letters may not be scattered across name and node"
        );
        t.set_filter("stfr");
        let (_, positions) = t.visible(0).unwrap();
        assert!(contains_in_order("shop/storefront-1", "SFR") && !contains_in_order("cart", "tc"));
        assert!(!positions.is_empty() && positions.iter().all(|p| *p < "shop/storefront-1".len()));
        t.set_filter("stfro");
        assert_eq!(
            names(&t),
            ["storefront-1"],
            "a longer query keeps the match"
        );
        t.apply(row("shop", "storefront-2"));
        assert_eq!(t.visible_len(), 2);
        t.apply(row("shop", "cart-2"));
        assert_eq!(t.visible_len(), 2, "non-matching rows stay out");
        t.set_filter("");
        assert_eq!(t.visible_len(), 5);
        t.set_filter("node-1");
        assert_eq!(t.visible_len(), 5, "node names match too");
        t.set_filter("app=ledger");
        assert_eq!(names(&t), ["ledger"], "labels match too");
    }
}

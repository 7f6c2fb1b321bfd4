//! The pod list's filter against a plain model of what the user should see:
//! the rows where namespace/name, node, a label or status fuzzy-match the query (the
//! first of those fields that matches gives the score, as skim scores it;
//! of the labels, the best),
//! the rows whose namespace/name matches first, each group best score
//! first, ties in namespace/name order — however the table got
//! there: typed keystroke by keystroke, typed at once, or with pods coming,
//! changing and going while the filter is on.

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use podbay::app::pods::PodTable;
use podbay::model::{PodKey, PodRow};
use proptest::prelude::*;

fn row(ns: &str, name: &str, node: &str, labels: &str) -> PodRow {
    PodRow {
        node: node.into(),
        labels: labels.into(),
        ..PodRow::new(ns, name)
    }
}

/// What the filter should show, computed the slow and obvious way: skim
/// with a fresh matcher for every field (skim's matcher carries state from
/// one call to the next; see `src/app/pods/score.rs`), then a stable sort.
fn expected(rows: &[PodRow], query: &str) -> Vec<PodKey> {
    let mut sorted: Vec<&PodRow> = rows.iter().collect();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    sorted.dedup_by(|a, b| a.key == b.key);
    if query.is_empty() {
        return sorted.into_iter().map(|r| r.key.clone()).collect();
    }
    let mut scored: Vec<(bool, i64, PodKey)> = sorted
        .into_iter()
        .filter_map(|r| {
            let search = r.key.to_string();
            let skim = |text: &str| {
                SkimMatcherV2::default()
                    .ignore_case()
                    .fuzzy_match(text, query)
            };
            // Each label alone, the best of them.
            let label = || r.labels.split(' ').filter_map(skim).max();
            skim(&search)
                .map(|score| (true, score))
                .or_else(|| {
                    skim(&r.node)
                        .or_else(label)
                        .or_else(|| skim(&r.status))
                        .map(|s| (false, s))
                })
                .map(|(by_name, score)| (by_name, score, r.key.clone()))
        })
        .collect();
    // Names first, then best score first; stable, so ties keep key order.
    scored.sort_by_key(|(by_name, score, _)| {
        (std::cmp::Reverse(*by_name), std::cmp::Reverse(*score))
    });
    scored.into_iter().map(|(_, _, key)| key).collect()
}

fn shown(table: &PodTable) -> Vec<PodKey> {
    (0..table.visible_len())
        .map(|i| table.visible(i).expect("visible row").0.key.clone())
        .collect()
}

/// Later rows with the same key replace earlier ones, as in the table.
fn last_wins(rows: &[PodRow]) -> Vec<PodRow> {
    let mut out: Vec<PodRow> = Vec::new();
    for r in rows {
        out.retain(|o| o.key != r.key);
        out.push(r.clone());
    }
    out
}

fn arb_row() -> impl Strategy<Value = PodRow> {
    (
        prop_oneof!["shop", "pay", "kube-system", "Team-01"],
        "[a-cA-C0-2\\-]{1,10}",
        prop_oneof!["node-a1", "node-b2", "worker-0", ""],
        "(app=[a-c0-2\\-]{1,6}( tier=[a-c]{1,3})?)?",
        prop_oneof!["Running", "CrashLoopBackOff", "Pending", "Init:0/1"],
    )
        .prop_map(|(ns, name, node, labels, status)| {
            let mut r = row(&ns, &name, &node, &labels);
            r.status = status.into();
            r
        })
}

#[derive(Debug, Clone)]
enum Change {
    Apply(PodRow),
    Remove(usize),
    Type(char),
    Backspace,
}

fn arb_change() -> impl Strategy<Value = Change> {
    prop_oneof![
        arb_row().prop_map(Change::Apply),
        any::<usize>().prop_map(Change::Remove),
        proptest::sample::select(vec!['a', 'b', 'C', '1', '-', '/', 'n', 'p'])
            .prop_map(Change::Type),
        Just(Change::Backspace),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn typing_a_query_key_by_key_shows_what_typing_it_at_once_shows(
        rows in proptest::collection::vec(arb_row(), 0..40),
        query in "[a-cA-C0-2\\-/ =]{1,6}",
    ) {
        let mut typed = PodTable::default();
        typed.replace(None, None, rows.clone());
        let mut q = String::new();
        for c in query.chars() {
            q.push(c);
            typed.set_filter(&q);
            prop_assert_eq!(shown(&typed), expected(&last_wins(&rows), &q), "after typing {:?}", q);
        }
        let mut at_once = PodTable::default();
        at_once.replace(None, None, rows.clone());
        at_once.set_filter(&query);
        let at_once = shown(&at_once);
        prop_assert_eq!(&shown(&typed), &at_once);
        prop_assert_eq!(typed.selected().map(|k| &k.pod), at_once.first());
    }

    #[test]
    fn live_changes_while_filtering_match_filtering_from_scratch(
        rows in proptest::collection::vec(arb_row(), 0..30),
        changes in proptest::collection::vec(arb_change(), 1..30),
    ) {
        let mut table = PodTable::default();
        table.replace(None, None, rows.clone());
        let mut model = last_wins(&rows);
        let mut query = String::new();
        for change in changes {
            match change {
                Change::Apply(r) => {
                    table.apply(r.clone());
                    model.retain(|m| m.key != r.key);
                    model.push(r);
                }
                Change::Remove(i) => {
                    if !model.is_empty() {
                        let gone = model.remove(i % model.len());
                        table.remove(&gone.row_key());
                    }
                }
                Change::Type(c) => {
                    query.push(c);
                    table.set_filter(&query);
                }
                Change::Backspace => {
                    query.pop();
                    table.set_filter(&query);
                }
            }
            let want = expected(&model, &query);
            prop_assert_eq!(shown(&table), want.clone(), "query {:?}", query);
            prop_assert_eq!(table.total(), model.len());
            // The selection is always on a shown row, and the cursor on it.
            if let Some(selected) = table.selected() {
                prop_assert_eq!(want.get(table.cursor()), Some(&selected.pod));
            } else {
                prop_assert!(want.is_empty());
            }
        }
    }
}

/// Big tables are scored on two threads; the result is the same.
#[test]
fn a_large_table_ranks_like_the_model() {
    let rows: Vec<PodRow> = (0..25_000)
        .map(|i| {
            let ns = format!("team-{:02}", i % 50);
            let name = format!("svc-{:03}-{:05x}", (i / 50) % 97, i * 7919 % 0xfffff);
            let labels = format!("app=svc-{:03}", (i / 50) % 97);
            row(&ns, &name, ["node-a1", "node-b2"][i % 2], &labels)
        })
        .collect();
    let mut table = PodTable::default();
    // Given out of order and twice: the table sorts and keeps the last copy.
    let mut given = rows.clone();
    given.reverse();
    given.extend(rows.iter().cloned());
    table.replace(None, None, given);
    assert_eq!(table.total(), rows.len());
    let mut q = String::new();
    for c in "svc-04a".chars() {
        q.push(c);
        table.set_filter(&q);
        assert_eq!(shown(&table), expected(&rows, &q), "query {q:?}");
    }
    table.set_filter("node-b2");
    assert_eq!(table.visible_len(), rows.len() / 2, "node names match");
    table.set_filter("");
    assert_eq!(shown(&table), expected(&rows, ""));
}

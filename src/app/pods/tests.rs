use super::*;
use crate::app::score::Pattern;
use crate::model::PodKey;

#[test]
fn a_shared_text_is_scored_once_and_each_text_as_itself() {
    let shared: Arc<str> = "app=web".into();
    let other: Arc<str> = "app=db".into();
    for rows in [1, 2, 1000, 100_000] {
        let mut known = KnownScores::for_rows(rows);
        let mut calls = 0;
        let mut score = |text: &Arc<str>| {
            known.score(text, |t| {
                calls += 1;
                Some(t.len() as i32)
            })
        };
        assert_eq!(score(&shared), Some(7));
        assert_eq!(score(&shared), Some(7));
        assert_eq!(score(&other), Some(6));
        // Whether `other` took its slot or not.
        assert_eq!(score(&shared), Some(7), "for {rows} rows");
        assert!((2..=3).contains(&calls), "{calls} calls for {rows} rows");
    }
}

fn row(ns: &str, name: &str) -> PodRow {
    PodRow {
        node: "node-1".into(),
        labels: format!("app={name}").into(),
        ..PodRow::new(ns, name)
    }
}

#[test]
fn pages_merge_into_the_table_keeping_the_selection_and_the_filter() {
    let mut t = PodTable::default();
    t.extend(vec![row("b", "web-2"), row("a", "web-9"), row("b", "db-1")]);
    assert_eq!(names(&t), ["web-9", "db-1", "web-2"], "in key order");
    t.select_index(2);
    t.set_filter("web");
    assert_eq!(names(&t), ["web-9", "web-2"]);
    let selected = t.selected().cloned();
    // A page that lands before and after the selection, and repeats a row.
    t.extend(vec![
        row("a", "web-1"),
        row("c", "web-3"),
        row("b", "web-2"),
    ]);
    assert_eq!(t.total(), 5, "the repeated row is one row");
    assert_eq!(
        t.selected().cloned(),
        selected,
        "the selection stays on its pod"
    );
    let mut shown = names(&t);
    shown.sort();
    assert_eq!(
        shown,
        ["web-1", "web-2", "web-3", "web-9"],
        "new rows are filtered too"
    );
    t.set_filter("");
    assert_eq!(names(&t), ["web-1", "web-9", "db-1", "web-2", "web-3"]);
}

#[test]
fn pages_in_key_order_rank_as_the_whole_list_would() {
    let rows: Vec<PodRow> = (0..60)
        .map(|i| {
            row(
                &format!("team-{}", i / 20),
                &format!("svc-{:03}-web", i * 7 % 60),
            )
        })
        .collect();
    let mut sorted = rows.clone();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    for sort in [None, Some(SortColumn::Name)] {
        let mut whole = PodTable::default();
        let mut paged = PodTable::default();
        if let Some(column) = sort {
            whole.set_sort(column, true);
            paged.set_sort(column, true);
        }
        whole.replace(None, None, sorted.clone());
        whole.set_filter("s0w");
        // The filter is typed while the first page is shown; the
        // later pages land after the last row.
        paged.extend(sorted[..10].to_vec());
        paged.set_filter("s0w");
        for page in sorted[10..].chunks(15) {
            paged.extend(page.to_vec());
        }
        assert!(whole.visible_len() > 3, "the query matches some rows");
        assert_eq!(names(&paged), names(&whole), "sort {sort:?}");
    }
}

#[test]
fn a_sort_by_restarts_holds_as_rows_change_and_combines_with_the_filter() {
    let with_restarts = |name: &str, restarts: u32| PodRow {
        restarts,
        ..row("shop", name)
    };
    let mut t = PodTable::default();
    t.replace(
        None,
        None,
        vec![
            with_restarts("a", 1),
            with_restarts("b", 7),
            with_restarts("c", 0),
            with_restarts("web-d", 3),
        ],
    );
    t.select_index(0);
    assert_eq!(t.selected().unwrap().pod.name.as_ref(), "a");
    let sort = t.sort_by(SortColumn::Restarts);
    assert_eq!(sort.order_words(), "most first");
    assert_eq!(names(&t), ["b", "web-d", "a", "c"]);
    // The selection stays on its pod, wherever it moved.
    assert_eq!(t.selected().unwrap().pod.name.as_ref(), "a");
    assert_eq!(t.cursor(), 2);
    // A row that changes moves to its new place; a new one is placed.
    t.apply(with_restarts("c", 9));
    t.apply(with_restarts("web-e", 2));
    assert_eq!(names(&t), ["c", "b", "web-d", "web-e", "a"]);
    // Filtered rows keep the sort's order, not the score's.
    t.set_filter("web");
    assert_eq!(names(&t), ["web-d", "web-e"]);
    t.set_filter("");
    // Again: the other way round.
    assert_eq!(
        t.sort_by(SortColumn::Restarts).order_words(),
        "fewest first"
    );
    assert_eq!(names(&t), ["a", "web-e", "web-d", "b", "c"]);
    assert_eq!(t.query(), None);
}

#[test]
fn the_filter_matches_status_and_a_status_prefix_matches_only_status() {
    let mut t = PodTable::default();
    let mut crashing = row("shop", "cart-1");
    crashing.status = "CrashLoopBackOff".into();
    let mut pulling = row("shop", "crashreporter-2");
    pulling.status = "ImagePullBackOff".into();
    t.replace(None, None, vec![row("shop", "web-1"), crashing, pulling]);
    t.set_filter("crashloop");
    assert_eq!(names(&t), ["cart-1"], "STATUS is matched too");
    t.set_filter("status:crash");
    assert_eq!(
        names(&t),
        ["cart-1"],
        "the name crashreporter is not a status"
    );
    t.set_filter("status:backoff");
    assert_eq!(names(&t), ["cart-1", "crashreporter-2"]);
    t.set_filter("status:");
    assert_eq!(t.visible_len(), 3, "an empty status query keeps every row");
    t.set_filter("status:run");
    assert_eq!(names(&t), ["web-1"]);
}

fn names(t: &PodTable) -> Vec<String> {
    (0..t.visible_len())
        .map(|i| t.visible(i).unwrap().0.key.name.to_string())
        .collect()
}

#[test]
fn column_widths_follow_the_widest_row_as_rows_come_and_go() {
    let mut t = PodTable::default();
    t.replace(None, None, vec![row("a", "short"), row("kube-system", "x")]);
    assert_eq!((t.widths().namespace, t.widths().name), (11, 5));
    t.apply(row("b", "a-much-longer-name"));
    assert_eq!(t.widths().name, 18);
    let mut renamed_status = row("b", "a-much-longer-name");
    renamed_status.status = "CrashLoopBackOff".into();
    t.apply(renamed_status);
    assert_eq!((t.widths().name, t.widths().status), (18, 16));
    t.remove(&RowKey::here(PodKey::new("b", "a-much-longer-name")));
    assert_eq!((t.widths().name, t.widths().status), (5, 7));
    t.remove(&RowKey::here(PodKey::new("kube-system", "x")));
    assert_eq!(t.widths().namespace, 1);
}

/// Rows of equal width are the rule (one namespace, node names of one
/// pattern): the widest stays known while any of them is left.
#[test]
fn ties_at_the_widest_are_counted() {
    let mut t = PodTable::default();
    t.replace(
        None,
        None,
        vec![row("team-0001", "aaaa"), row("team-0002", "bbbb")],
    );
    t.apply(row("x", "cc"));
    t.remove(&RowKey::here(PodKey::new("team-0001", "aaaa")));
    assert_eq!((t.widths().namespace, t.widths().name), (9, 4));
    let mut shorter = row("team-0002", "bbbb");
    shorter.node = "n".into();
    t.apply(shorter);
    assert_eq!((t.widths().namespace, t.widths().node), (9, 6));
    t.remove(&RowKey::here(PodKey::new("team-0002", "bbbb")));
    assert_eq!(
        t.widths(),
        TextWidths {
            namespace: 1,
            name: 2,
            status: 7,
            node: 6
        }
    );
}

#[test]
fn rows_are_ordered_and_selection_sticks_to_its_pod() {
    let mut t = PodTable::default();
    t.replace(
        None,
        None,
        vec![row("b", "web"), row("a", "db"), row("a", "api")],
    );
    assert_eq!(names(&t), ["api", "db", "web"]);
    t.select_index(1);
    assert_eq!(t.selected().unwrap().pod.name.as_ref(), "db");
    t.apply(row("a", "aaa"));
    assert_eq!(
        t.selected().unwrap().pod.name.as_ref(),
        "db",
        "insert above keeps the pod"
    );
    assert_eq!(t.cursor(), 2);
    t.remove(&RowKey::here(PodKey::new("a", "aaa")));
    assert_eq!(t.cursor(), 1);
    t.remove(&RowKey::here(PodKey::new("a", "db")));
    assert_eq!(
        t.selected().unwrap().pod.name.as_ref(),
        "web",
        "the next row takes over"
    );
    t.remove(&RowKey::here(PodKey::new("b", "web")));
    t.remove(&RowKey::here(PodKey::new("a", "api")));
    assert_eq!(t.selected(), None);
    t.move_by(1);
}

#[test]
fn replacing_one_namespace_keeps_the_others() {
    let mut t = PodTable::default();
    t.replace(None, Some("a"), vec![row("a", "x")]);
    t.replace(None, Some("b"), vec![row("b", "y")]);
    t.replace(None, Some("a"), vec![row("a", "z")]);
    assert_eq!(names(&t), ["z", "y"]);
}

#[test]
fn fuzzy_filter_ranks_highlights_and_follows_live_changes() {
    let mut t = PodTable::default();
    t.replace(
        None,
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
    let mut scratch = Scratch::default();
    assert!(
        Pattern::new("SFR")
            .score("shop/storefront-1", &mut scratch)
            .is_some()
    );
    assert!(Pattern::new("tc").score("cart", &mut scratch).is_none());
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

/// Names first: a pod matched by a label (redis-0, `app=cart`) ranks below
/// every pod whose name matches, even a scattered match, whose score is
/// lower than the label's exact one.
#[test]
fn a_label_match_ranks_below_every_name_match() {
    let mut t = PodTable::default();
    let mut redis = row("shop", "redis-0");
    redis.labels = "app=cart".into();
    t.replace(
        None,
        None,
        vec![
            redis,
            row("shop", "c-a-r-t-scattered"),
            row("shop", "cart-5f6d"),
            row("shop", "web-1"),
        ],
    );
    t.set_filter("cart");
    assert_eq!(names(&t), ["cart-5f6d", "c-a-r-t-scattered", "redis-0"]);
}

/// A query matches within one label: a Job's pod, whose labels hold its
/// Job's uid twice, matched `redis` by letters taken from several of them.
#[test]
fn a_query_matches_within_one_label_not_across_them() {
    let mut t = PodTable::default();
    let mut job = row("batch", "reindex-orders-q7t2m");
    job.labels = "app.kubernetes.io/name=reindex-orders batch.kubernetes.io/controller-uid=dae071e6-9b75 batch.kubernetes.io/job-name=reindex-orders".into();
    t.replace(None, None, vec![job, row("shop", "redis-0")]);
    t.set_filter("redis");
    assert_eq!(names(&t), ["redis-0"]);
    t.set_filter("job-name=reindex");
    assert_eq!(
        names(&t),
        ["reindex-orders-q7t2m"],
        "one label still matches"
    );
}

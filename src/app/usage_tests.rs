use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::app::Event;
use crate::app::tests::{app, key, listed, row, sim_cluster};
use crate::model::PodKey;
use crate::model::usage::{Asks, Use};

fn tick(app: &mut App, after_secs: i64) -> Vec<Effect> {
    let now: Timestamp = app.now + SignedDuration::from_secs(after_secs);
    app.update(Event::Tick(now))
}

fn reads(effects: &[Effect]) -> Vec<&Option<Vec<String>>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::ReadUsage { namespaces, .. } => Some(namespaces),
            _ => None,
        })
        .collect()
}

pub(crate) fn used(ns: &str, name: &str, millicores: u32, mib: u32) -> PodUse {
    let total = Use {
        microcores: millicores * 1000,
        memory_kib: mib * 1024,
    };
    PodUse {
        key: PodKey::new(ns, name),
        total,
        containers: vec![("app".into(), total)],
    }
}

pub(crate) fn measured(pods: Vec<PodUse>) -> Event {
    Event::Usage {
        cluster: sim_cluster(),
        namespaces: None,
        read: Ok((pods, Some(Duration::from_secs(10)))),
    }
}

/// Every namespace listed, and live: the first tick reads.
fn listed_app() -> App {
    let (mut a, _) = app(true);
    let mut indexer = row("search", "search-indexer-84d6b9c7f-a7b2c", "Running");
    indexer.asks = Some(Box::new(Asks {
        cpu_request_m: 100,
        cpu_limit_m: 500,
        memory_request: 64 << 20,
        memory_limit: 96 << 20,
    }));
    a.update(listed(vec![
        row("shop", "storefront-7d9c8b6f4-x2k9p", "Running"),
        row("shop", "redis-0", "Running"),
        indexer,
    ]));
    a
}

#[test]
fn reads_once_per_window_for_the_scope_shown_and_never_two_at_once() {
    let mut a = listed_app();
    assert!(!a.usage.shown(), "no columns before a read");
    assert_eq!(reads(&tick(&mut a, 1)), [&None]);
    assert!(reads(&tick(&mut a, 2)).is_empty(), "one read out at a time");
    a.update(measured(vec![used(
        "search",
        "search-indexer-84d6b9c7f-a7b2c",
        120,
        80,
    )]));
    assert!(a.usage.shown());
    let indexer = a
        .pods
        .get(&crate::model::RowKey::here(PodKey::new(
            "search",
            "search-indexer-84d6b9c7f-a7b2c",
        )))
        .and_then(|r| r.usage);
    assert_eq!(indexer.map(|u| u.cpu_text()), Some("120m".into()));
    assert_eq!(
        a.pods
            .get(&crate::model::RowKey::here(PodKey::new("shop", "redis-0")))
            .and_then(|r| r.usage),
        None,
        "a pod not measured has no figures"
    );
    assert!(reads(&tick(&mut a, 5)).is_empty(), "not before the window");
    assert_eq!(reads(&tick(&mut a, 11)).len(), 1, "again after the window");
}

#[test]
fn a_watch_change_keeps_a_pods_figures_until_the_next_read() {
    let mut a = listed_app();
    tick(&mut a, 1);
    a.update(measured(vec![used("shop", "redis-0", 3, 12)]));
    let mut changed = row("shop", "redis-0", "Running");
    changed.restarts = 1;
    a.update(Event::Pods(crate::model::feed::Feed::Applied(changed)));
    let redis = a
        .pods
        .get(&crate::model::RowKey::here(PodKey::new("shop", "redis-0")))
        .expect("redis");
    assert_eq!(
        (redis.restarts, redis.usage.map(|u| u.memory_text())),
        (1, Some("12Mi".into()))
    );
}

#[test]
fn sorted_by_memory_the_biggest_comes_first_and_stays_first_as_figures_change() {
    let mut a = listed_app();
    tick(&mut a, 1);
    a.update(measured(vec![
        used("shop", "redis-0", 3, 12),
        used("search", "search-indexer-84d6b9c7f-a7b2c", 2, 40),
        used("shop", "storefront-7d9c8b6f4-x2k9p", 9, 20),
    ]));
    for c in ":sort memory".chars() {
        a.update(key(c));
    }
    a.update(crate::app::tests::code(crossterm::event::KeyCode::Enter));
    let first = |a: &App| a.pods.visible(0).map(|(r, _)| r.key.name.to_string());
    assert_eq!(first(&a).as_deref(), Some("search-indexer-84d6b9c7f-a7b2c"));
    tick(&mut a, 11);
    a.update(measured(vec![
        used("shop", "redis-0", 3, 90),
        used("search", "search-indexer-84d6b9c7f-a7b2c", 2, 40),
    ]));
    assert_eq!(
        first(&a).as_deref(),
        Some("redis-0"),
        "the new figures sort anew"
    );
    assert_eq!(
        a.pods
            .visible(2)
            .map(|(r, _)| r.key.name.to_string())
            .as_deref(),
        Some("storefront-7d9c8b6f4-x2k9p"),
        "a pod not measured comes last"
    );
}

#[test]
fn no_metrics_api_hides_the_columns_says_so_once_and_stops_reading() {
    let mut a = listed_app();
    tick(&mut a, 1);
    a.update(measured(vec![used("shop", "redis-0", 3, 12)]));
    tick(&mut a, 11);
    a.update(Event::Usage {
        cluster: sim_cluster(),
        namespaces: None,
        read: Err(UsageError::NoApi),
    });
    assert!(!a.usage.shown());
    assert_eq!(
        a.pods
            .get(&crate::model::RowKey::here(PodKey::new("shop", "redis-0")))
            .and_then(|r| r.usage),
        None
    );
    let said = a
        .message
        .as_ref()
        .map(|m| m.text.to_string())
        .unwrap_or_default();
    assert!(said.contains("no metrics API"), "{said}");
    assert!(reads(&tick(&mut a, 60)).is_empty(), "nothing to read there");
    // Another scope is another question.
    a.update(key('0'));
    a.update(listed(vec![row("shop", "redis-0", "Running")]));
    let asked: Vec<Effect> = (61..64).flat_map(|s| tick(&mut a, s)).collect();
    assert_eq!(reads(&asked).len(), 1, "{asked:?}");
}

#[test]
fn a_passing_failure_keeps_the_figures_and_tries_again() {
    let mut a = listed_app();
    tick(&mut a, 1);
    a.update(measured(vec![used("shop", "redis-0", 3, 12)]));
    tick(&mut a, 11);
    let failed = || Event::Usage {
        cluster: sim_cluster(),
        namespaces: None,
        read: Err(UsageError::Failed(
            "the API server did not answer (10 s).".into(),
        )),
    };
    a.update(failed());
    assert!(a.usage.shown(), "the last figures stay");
    assert!(a.message.is_some());
    a.message = None;
    assert_eq!(
        reads(&tick(&mut a, 22)).len(),
        1,
        "tried again a window later"
    );
    a.update(failed());
    assert!(a.message.is_none(), "the same failure is said once");
}

#[test]
fn a_failure_never_takes_the_status_line_from_another_sentence() {
    let mut a = listed_app();
    tick(&mut a, 1);
    a.message = Some(warning("2 pods cannot be read."));
    a.update(Event::Usage {
        cluster: sim_cluster(),
        namespaces: None,
        read: Err(UsageError::NoApi),
    });
    let said = a
        .message
        .as_ref()
        .map(|m| m.text.to_string())
        .unwrap_or_default();
    assert_eq!(said, "2 pods cannot be read.");
    // A passing failure before any figure says nothing at all.
    let mut b = listed_app();
    tick(&mut b, 1);
    b.update(Event::Usage {
        cluster: sim_cluster(),
        namespaces: None,
        read: Err(UsageError::Failed(
            "the API server did not answer (10 s).".into(),
        )),
    });
    assert!(b.message.is_none(), "{:?}", b.message);
}

#[test]
fn an_answer_for_another_cluster_or_scope_is_ignored() {
    let mut a = listed_app();
    tick(&mut a, 1);
    a.update(Event::Usage {
        cluster: sim_cluster(),
        namespaces: Some(vec!["shop".into()]),
        read: Ok((vec![used("shop", "redis-0", 3, 12)], None)),
    });
    assert!(!a.usage.shown());
    a.update(Event::Usage {
        cluster: crate::model::ClusterId::new("other", "https://10.0.0.1", "me"),
        namespaces: None,
        read: Ok((vec![used("shop", "redis-0", 3, 12)], None)),
    });
    assert!(!a.usage.shown());
}

#[test]
fn every_namespace_too_big_for_one_answer_is_read_namespace_by_namespace() {
    let mut a = listed_app();
    a.update(Event::Namespaces(crate::model::feed::Feed::Listed {
        scope: None,
        rows: vec!["search".into(), "shop".into()],
    }));
    assert_eq!(reads(&tick(&mut a, 1)), [&None]);
    a.update(Event::Usage {
        cluster: sim_cluster(),
        namespaces: None,
        read: Err(UsageError::TooLarge),
    });
    assert!(
        a.message.is_none(),
        "nothing to say: it is read another way"
    );
    let effects = tick(&mut a, 2);
    let split = reads(&effects);
    assert_eq!(split.len(), 1, "at once, not a window later");
    let asked = split[0].clone().expect("namespaces named");
    assert!(
        asked.contains(&"search".to_string()) && asked.contains(&"shop".to_string()),
        "{asked:?}"
    );
    a.update(Event::Usage {
        cluster: sim_cluster(),
        namespaces: Some(asked),
        read: Ok((vec![used("shop", "redis-0", 3, 12)], None)),
    });
    assert!(a.usage.shown(), "the answer to the split read is taken");
}

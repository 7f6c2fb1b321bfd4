//! The pod list across two clusters, through `App::update`: each row on
//! its own cluster, and everything done to a row sent there.

use crossterm::event::KeyCode;

use super::super::fleet::FleetPod;
use super::super::tests::{code, key, pod_detail, row, sim_cluster};
use super::super::{App, AppOptions, Effect, Event, Mode, PaneOptions, Scope, View};
use crate::model::debug::Profile;
use crate::model::feed::Feed;
use crate::model::{ClusterId, PodDetail, PodKey, PodRow, RowKey};

pub(crate) fn cluster_b() -> ClusterId {
    ClusterId::new("sim-b", "https://127.0.0.2:6443", "admin")
}

/// `podbay --context sim,sim-b` in sim's namespace `default`.
pub(crate) fn sim_and_sim_b() -> AppOptions {
    AppOptions {
        cluster: sim_cluster(),
        context: "sim".into(),
        others: vec!["sim-b".into()],
        contexts: vec!["sim".into(), "sim-b".into()],
        namespace: "default".into(),
        namespace_chosen: false,
        all_namespaces: false,
        fallback_namespaces: vec![],
        keymap: Default::default(),
        now: "2026-01-01T01:00:00Z".parse().unwrap(),
        debug_images: vec!["busybox:1.36".into()],
        debug_profile: Profile::General,
        download_dir: ".".into(),
        panes: PaneOptions::default(),
    }
}

/// An app on `sim` whose list shows `sim-b` too, both connected, each
/// listing `web` and `api` of namespace shop.
pub(crate) fn two_clusters() -> App {
    let (mut a, effects) = App::new(AppOptions {
        namespace: "shop".into(),
        namespace_chosen: true,
        ..sim_and_sim_b()
    });
    let shop = Scope::Namespaces(vec!["shop".into()]);
    assert_eq!(
        effects,
        [
            Effect::WatchPods(shop.clone()),
            Effect::ConnectContext("sim-b".into())
        ],
        "the other context is connected beside the browser's"
    );
    a.update(Event::Resize(crate::term::Size::new(120, 40)));
    let effects = a.update(Event::ContextReady {
        context: "sim-b".into(),
        outcome: Ok(crate::app::Reached {
            cluster: cluster_b(),
            namespace: "default".into(),
        }),
    });
    assert_eq!(
        effects,
        [Effect::WatchPodsOf {
            cluster: cluster_b(),
            scope: shop
        }]
    );
    let rows = || vec![row("shop", "api", "Running"), row("shop", "web", "Running")];
    a.update(Event::Pods(Feed::Listed {
        scope: Some("shop".into()),
        rows: rows(),
    }));
    a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: Feed::Listed {
            scope: Some("shop".into()),
            rows: rows(),
        },
    });
    a
}

/// The contexts and names of the rows shown, in order.
fn shown(a: &App) -> Vec<String> {
    (0..a.pods.visible_len())
        .filter_map(|i| a.pods.visible(i))
        .map(|(r, _)| format!("{}:{}", r.context.as_deref().unwrap_or("-"), r.key.name))
        .collect()
}

/// Selects `context`'s row of pod `name`.
fn select(a: &mut App, context: &str, name: &str) {
    let at = (0..a.pods.visible_len())
        .find(|i| {
            a.pods
                .visible(*i)
                .is_some_and(|(r, _)| r.context.as_deref() == Some(context) && &*r.key.name == name)
        })
        .expect("the row is shown");
    a.pods.select_index(at);
}

#[test]
fn each_row_says_its_context_and_the_same_name_on_two_clusters_is_two_rows() {
    let a = two_clusters();
    assert_eq!(shown(&a), ["sim:api", "sim:web", "sim-b:api", "sim-b:web"]);
    assert!(a.shows_several());
    let states = a.cluster_states();
    let names: Vec<&str> = states.iter().map(|s| s.context).collect();
    assert_eq!(names, ["sim", "sim-b"]);
    // The views of other kinds count the browser's cluster's pods alone.
    let browser: Vec<&str> = a.browser_rows().map(|r| &*r.key.name).collect();
    assert_eq!(browser, ["api", "web"]);
    assert!(
        a.browser_rows()
            .all(|r| r.context.as_deref() == Some("sim"))
    );
}

#[test]
fn a_row_of_the_other_cluster_opens_watches_and_deletes_there() {
    let mut a = two_clusters();
    select(&mut a, "sim-b", "web");
    let effects = a.update(code(KeyCode::Enter));
    assert_eq!(
        effects,
        [Effect::WatchPod(cluster_b(), PodKey::new("shop", "web"))]
    );
    let View::Pod(view) = &a.view else {
        panic!("the pod view")
    };
    assert_eq!(view.cluster, cluster_b());
    a.update(key('X'));
    let asked = a
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(asked.contains("sim-b/shop/web"), "{asked}");
    let effects = a.update(key('y'));
    assert_eq!(
        effects,
        [Effect::DeletePod {
            cluster: cluster_b(),
            pod: PodKey::new("shop", "web")
        }]
    );
}

#[test]
fn a_debug_container_launched_from_the_other_clusters_row_goes_there() {
    let mut a = two_clusters();
    select(&mut a, "sim-b", "web");
    a.update(code(KeyCode::Enter));
    a.update(Event::Detail(Feed::Listed {
        scope: None,
        rows: vec![pod_detail(None)],
    }));
    a.update(key('d'));
    assert!(matches!(a.mode, Mode::Launcher(_)), "{:?}", a.mode);
    let effects = a.update(code(KeyCode::Enter));
    let launched: Vec<&ClusterId> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Launch { key, .. } => Some(&key.cluster),
            _ => None,
        })
        .collect();
    assert_eq!(launched, [&cluster_b()], "{effects:?}");
}

#[test]
fn marks_on_two_clusters_read_each_and_launch_each_pane_on_its_own() {
    let mut a = two_clusters();
    select(&mut a, "sim", "web");
    a.update(key(' '));
    select(&mut a, "sim-b", "web");
    a.update(key(' '));
    let effects = a.update(key('d'));
    let reads: Vec<&ClusterId> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::ReadPods { cluster, .. } => Some(cluster),
            _ => None,
        })
        .collect();
    assert_eq!(reads, [&sim_cluster(), &cluster_b()]);
    let fleet_pod = |cluster: ClusterId| FleetPod {
        cluster,
        key: PodKey::new("shop", "web"),
        detail: Ok(PodDetail {
            key: PodKey::new("shop", "web"),
            ..pod_detail(None)
        }),
        policy: None,
    };
    a.update(Event::PodsRead {
        cluster: sim_cluster(),
        pods: vec![fleet_pod(sim_cluster())],
    });
    assert!(
        !matches!(a.mode, Mode::Fleet(_)),
        "the form waits for every cluster's read"
    );
    a.update(Event::PodsRead {
        cluster: cluster_b(),
        pods: vec![fleet_pod(cluster_b())],
    });
    assert!(matches!(a.mode, Mode::Fleet(_)), "{:?}", a.mode);
    let effects = a.update(code(KeyCode::Enter));
    let mut launched: Vec<String> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Launch { key, .. } => Some(format!("{}/{}", key.cluster.context, key.pod)),
            _ => None,
        })
        .collect();
    launched.sort();
    assert_eq!(launched, ["sim-b/shop/web", "sim/shop/web"], "{effects:?}");
}

#[test]
fn a_capture_of_marks_on_two_clusters_is_refused_with_why() {
    let mut a = two_clusters();
    select(&mut a, "sim", "web");
    a.update(key(' '));
    select(&mut a, "sim-b", "api");
    a.update(key(' '));
    let effects = a.update(key('P'));
    assert!(effects.is_empty());
    assert!(!matches!(a.mode, Mode::Capture(_)));
    let said = a
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(said.contains("on 2 contexts (sim, sim-b)"), "{said}");
}

#[test]
fn ctx_in_the_filter_shows_one_clusters_rows() {
    let mut a = two_clusters();
    a.pods.set_filter("ctx:sim-b");
    assert_eq!(shown(&a), ["sim-b:api", "sim-b:web"]);
    a.pods.set_filter("ctx:nowhere");
    assert!(shown(&a).is_empty());
}

#[test]
fn one_cluster_stalling_or_refusing_is_said_for_it_alone() {
    let mut a = two_clusters();
    a.update(Event::Pulse {
        cluster: cluster_b(),
        unanswered: Some(12),
    });
    let states = a.cluster_states();
    assert_eq!(
        (states[0].unanswered, states[1].unanswered),
        (None, Some(12))
    );
    // sim-b refuses the namespace: said for it, sim stays as it was, and the list
    // is not called unavailable while one cluster lists it.
    a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: super::scope_tests::pods_refused(Some("shop")),
    });
    assert_eq!(a.cluster_states()[1].failed, Some("forbidden"));
    assert_eq!(a.cluster_states()[0].failed, None);
    assert!(a.refused_scope().is_none());
    let said = a
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(said.starts_with("sim-b: "), "{said}");
}

#[test]
fn a_feed_of_a_cluster_the_list_left_changes_nothing() {
    let mut a = two_clusters();
    a.update(Event::Connected {
        cluster: ClusterId::new("prod", "https://10.0.0.1:6443", "admin"),
        context: "prod".into(),
        namespace: "shop".into(),
        contexts: vec!["sim".into(), "sim-b".into(), "prod".into()],
    });
    assert!(!a.shows_several(), "another context is one cluster");
    a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: Feed::Applied(PodRow {
            ..row("shop", "late", "Running")
        }),
    });
    assert_eq!(a.pods.total(), 0);
    let key = RowKey {
        context: Some("sim-b".into()),
        pod: PodKey::new("shop", "late"),
    };
    assert!(a.pods.get(&key).is_none());
}

#[test]
fn ctx_with_two_names_lists_both_once_the_first_connects() {
    let (mut a, _) = super::super::tests::app(false);
    a.contexts.push("sim-b".into());
    a.update(key(':'));
    for c in "ctx sim-dev,sim-b".chars() {
        a.update(key(c));
    }
    let effects = a.update(code(KeyCode::Enter));
    assert_eq!(effects, [Effect::SwitchContext("sim-dev".into())]);
    let effects = a.update(Event::Connected {
        cluster: ClusterId::new("sim-dev", "https://127.0.0.1:6443", "dev"),
        context: "sim-dev".into(),
        namespace: "shop".into(),
        contexts: vec!["sim".into(), "sim-dev".into(), "sim-b".into()],
    });
    assert!(a.shows_several());
    assert!(
        effects.contains(&Effect::ConnectContext("sim-b".into())),
        "{effects:?}"
    );
}

#[test]
fn a_workloads_pods_are_its_own_clusters_not_anothers_with_the_same_labels() {
    use super::super::pods::{Narrow, Pick};
    let a = two_clusters();
    // The test rows are labelled app=<their name>.
    let narrow = Narrow {
        picks: vec![Pick {
            context: Some("sim".into()),
            namespace: "shop".into(),
            selector: crate::model::selector::Selector::of_labels(&[("app".into(), "web".into())]),
        }],
    };
    let admitted: Vec<String> = a
        .pods
        .rows()
        .filter(|r| narrow.admits(r))
        .map(|r| format!("{}:{}", r.context.as_deref().unwrap_or("-"), r.key.name))
        .collect();
    assert_eq!(admitted, ["sim:web"]);
}

#[test]
fn a_debugger_of_the_other_clusters_pod_is_stopped_and_attached_there() {
    let mut a = two_clusters();
    // The same pod on both clusters; only sim-b's has a debugger.
    let with_debugger = PodRow {
        debuggers: super::super::tests::debuggers("shop", "web", &[true]),
        ..row("shop", "web", "Running")
    };
    a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: Feed::Applied(with_debugger),
    });
    a.update(key(':'));
    for c in "debuggers".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    assert!(matches!(a.view, View::Debuggers(_)));
    a.update(key('x'));
    let asked = a
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(asked.contains("in sim-b/shop/web"), "{asked}");
    let effects = a.update(key('y'));
    assert_eq!(
        effects,
        [Effect::StopDebugger {
            cluster: cluster_b(),
            pod: PodKey::new("shop", "web"),
            name: "debugger-1".into(),
        }]
    );
    let effects = a.update(key('a'));
    let attached: Vec<&ClusterId> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::OpenSession { key, .. } => Some(&key.cluster),
            _ => None,
        })
        .collect();
    assert_eq!(attached, [&cluster_b()], "{effects:?}");
}

#[test]
fn each_clusters_cpu_and_memory_are_read_there_and_fill_its_rows_alone() {
    use crate::app::usage_fixtures::used;
    let mut a = two_clusters();
    let later = a.now + jiff::SignedDuration::from_secs(1);
    let effects = a.update(Event::Tick(later));
    let read: Vec<&ClusterId> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::ReadUsage { cluster, .. } => Some(cluster),
            _ => None,
        })
        .collect();
    assert_eq!(read, [&sim_cluster(), &cluster_b()], "{effects:?}");
    a.update(Event::Usage {
        cluster: cluster_b(),
        namespaces: Some(vec!["shop".into()]),
        read: Ok((vec![used("shop", "web", 250, 64)], None)),
    });
    let used_by = |context: &str| {
        let key = RowKey {
            context: Some(context.into()),
            pod: PodKey::new("shop", "web"),
        };
        a.pods.get(&key).and_then(|r| r.usage).map(|u| u.cpu_text())
    };
    assert_eq!(used_by("sim-b"), Some("250m".into()));
    assert_eq!(used_by("sim"), None, "sim's web is another pod");
    assert!(a.usage_shown());
}

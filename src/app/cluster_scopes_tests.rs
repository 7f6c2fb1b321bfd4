//! Which pods each cluster of a list of several is asked for: its own
//! context's namespace while no namespace was chosen, and its own
//! fallback after it refuses the cluster-wide list, the others untouched.

use crossterm::event::KeyCode;

use super::super::tests::{code, key, row, sim_cluster};
use super::super::{App, AppOptions, Effect, Event, Reached, Scope};
use super::tests::cluster_b;
use crate::model::feed::Feed;
use crate::model::problem::Denied;

/// `podbay --context sim,sim-b` (with `-A` when `all`), sim's own
/// namespace `default` and sim-b's `shop`, `payments` in the config's
/// fallback; and what sim-b's connection asks for.
fn pair(all: bool) -> (App, Vec<Effect>) {
    let (mut a, effects) = App::new(AppOptions {
        all_namespaces: all,
        fallback_namespaces: vec!["payments".into()],
        ..super::tests::sim_and_sim_b()
    });
    let first = match all {
        true => Scope::All,
        false => namespaces(&["default"]),
    };
    assert_eq!(effects[0], Effect::WatchPods(first));
    let effects = a.update(Event::ContextReady {
        context: "sim-b".into(),
        outcome: Ok(Reached {
            cluster: cluster_b(),
            namespace: "shop".into(),
        }),
    });
    (a, effects)
}

fn namespaces(list: &[&str]) -> Scope {
    Scope::Namespaces(list.iter().map(|n| n.to_string()).collect())
}

fn watch_b(scope: Scope) -> Effect {
    Effect::WatchPodsOf {
        cluster: cluster_b(),
        scope,
    }
}

/// A refusal to list pods in `namespace` (`None`: cluster-wide).
pub(crate) fn pods_refused(namespace: Option<&str>) -> Feed<crate::model::PodRow> {
    Feed::Forbidden(Denied {
        verb: "list".into(),
        resource: "pods".into(),
        namespace: namespace.map(str::to_string),
    })
}

/// Each cluster's namespaces as the header says them beside its name.
fn own_namespaces(a: &App) -> Vec<Option<String>> {
    a.cluster_states()
        .into_iter()
        .map(|s| s.namespaces)
        .collect()
}

fn names_of(a: &App, context: &str) -> Vec<String> {
    a.pods
        .rows()
        .filter(|r| r.context.as_deref() == Some(context))
        .map(|r| r.key.to_string())
        .collect()
}

fn said(a: &App) -> String {
    a.message
        .as_ref()
        .map(|m| m.text.to_string())
        .unwrap_or_default()
}

#[test]
fn without_a_namespace_chosen_each_cluster_lists_its_own_contexts() {
    let (mut a, effects) = pair(false);
    assert_eq!(effects, [watch_b(namespaces(&["shop"]))]);
    assert_eq!(own_namespaces(&a), [None, Some("shop".into())]);
    assert!(
        !a.shows_one_namespace(),
        "a NAMESPACE column tells them apart"
    );
    assert_eq!(a.namespaces_label(), "default, sim-b/shop");
    // A namespace chosen is every cluster's.
    a.update(key(':'));
    for c in "ns payments".chars() {
        a.update(key(c));
    }
    let effects = a.update(code(KeyCode::Enter));
    let payments = namespaces(&["payments"]);
    assert!(effects.contains(&Effect::WatchPods(payments.clone())));
    assert!(effects.contains(&watch_b(payments)), "{effects:?}");
    assert_eq!(own_namespaces(&a), [None, None]);
    assert!(a.shows_one_namespace());
    assert_eq!(a.namespaces_label(), "payments");
}

#[test]
fn all_namespaces_and_back_returns_each_cluster_to_its_own() {
    let (mut a, _) = pair(false);
    let effects = a.update(key('0'));
    assert!(effects.contains(&watch_b(Scope::All)), "{effects:?}");
    let effects = a.update(key('0'));
    assert!(effects.contains(&Effect::WatchPods(namespaces(&["default"]))));
    assert!(
        effects.contains(&watch_b(namespaces(&["shop"]))),
        "{effects:?}"
    );
}

#[test]
fn a_cluster_wide_refusal_narrows_that_cluster_alone_from_its_own_namespace() {
    let (mut a, effects) = pair(true);
    assert_eq!(effects, [watch_b(Scope::All)]);
    a.update(Event::Pods(Feed::Listed {
        scope: None,
        rows: vec![
            row("default", "api", "Running"),
            row("kube-system", "dns", "Running"),
        ],
    }));
    let effects = a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: pods_refused(None),
    });
    // sim-b asks for its own namespace and the config's, and only sim-b.
    assert_eq!(effects, [watch_b(namespaces(&["shop", "payments"]))]);
    assert_eq!(a.scope, Scope::All, "sim lists every namespace still");
    assert_eq!(names_of(&a, "sim"), ["default/api", "kube-system/dns"]);
    assert!(
        said(&a).starts_with("sim-b: ")
            && said(&a).ends_with("Showing namespace shop, payments instead."),
        "{}",
        said(&a)
    );
    assert_eq!(own_namespaces(&a), [None, Some("shop,payments".into())]);
    assert_eq!(a.cluster_states()[1].failed, None);
    // Its fallback answers; one namespace of it refused is not the whole.
    a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: Feed::Listed {
            scope: Some("shop".into()),
            rows: vec![row("shop", "web", "Running")],
        },
    });
    a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: pods_refused(Some("payments")),
    });
    assert_eq!(names_of(&a, "sim-b"), ["shop/web"]);
    assert_eq!(a.cluster_states()[1].failed, None);
    assert!(a.refused_scope().is_none());
    // `0` goes to each context's own namespace (none was chosen), and
    // forgets the fallback.
    let effects = a.update(key('0'));
    assert!(
        effects.contains(&watch_b(namespaces(&["shop"]))),
        "{effects:?}"
    );
    assert!(effects.contains(&Effect::WatchPods(namespaces(&["default"]))));
    assert_eq!(own_namespaces(&a), [None, Some("shop".into())]);
    a.update(key('0'));
    assert_eq!(own_namespaces(&a), [None, None], "all of them, on both");
}

#[test]
fn the_browsers_cluster_refusing_all_leaves_the_others_listing_all() {
    let (mut a, _) = pair(true);
    a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: Feed::Listed {
            scope: None,
            rows: vec![row("shop", "web", "Running")],
        },
    });
    let effects = a.update(Event::Pods(pods_refused(None)));
    assert_eq!(
        effects,
        [Effect::WatchPodsOf {
            cluster: sim_cluster(),
            scope: namespaces(&["default", "payments"]),
        }]
    );
    assert_eq!(names_of(&a, "sim-b"), ["shop/web"]);
    assert_eq!(own_namespaces(&a), [Some("default,payments".into()), None]);
}

#[test]
fn a_cluster_refused_in_every_namespace_of_its_own_is_forbidden_and_the_list_is_not() {
    let (mut a, _) = pair(false);
    a.update(Event::OtherPods {
        cluster: cluster_b(),
        feed: pods_refused(Some("shop")),
    });
    assert_eq!(a.cluster_states()[1].failed, Some("forbidden"));
    assert_eq!(a.cluster_states()[0].failed, None);
    assert!(a.refused_scope().is_none());
    // sim refuses its own too: now the whole list is unavailable.
    a.update(Event::Pods(pods_refused(Some("default"))));
    assert!(a.refused_scope().is_some());
}

#[test]
fn a_kept_workspace_says_each_cluster_listed_its_own_namespace() {
    let (a, _) = pair(false);
    let (saved, _) = a.saved();
    assert_eq!(saved.browser.others, ["sim-b"]);
    assert!(saved.browser.own_namespaces);
    assert_eq!(saved.browser.namespaces, Some(vec!["default".to_string()]));
}

use crossterm::event::KeyCode;
use serde_json::json;

use super::*;
use crate::app::View;
use crate::app::tests::{app, code, key, listed, row};
use crate::app::{Event, Scope};
use crate::model::PodRow;
use crate::model::object_ref::{ObjectKind, ObjectRef};

fn deployment(name: &str, selector: serde_json::Value) -> WorkloadRow {
    WorkloadRow::from_object(
        WorkloadKind::Deployment,
        &json!({
            "metadata": {"name": name, "namespace": "shop"},
            "spec": {"replicas": 2, "selector": selector},
            "status": {"readyReplicas": 2, "availableReplicas": 2},
        }),
    )
}

fn pod(name: &str, labels: &str) -> PodRow {
    PodRow {
        labels: labels.into(),
        ..row("shop", name, "Running")
    }
}

fn command(a: &mut App, text: &str) -> Vec<Effect> {
    a.update(key(':'));
    for c in text.chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter))
}

fn shown(a: &App) -> Vec<String> {
    (0..a.pods.visible_len())
        .map(|i| a.pods.visible(i).unwrap().0.key.name.to_string())
        .collect()
}

/// `:deploy` over shop: web (selected by a label and an expression), and
/// a Deployment whose selector matches no pod listed.
fn on_deployments() -> App {
    let (mut a, _) = app(false);
    a.update(listed(vec![
        pod("web-1", "app=web tier=front"),
        pod("web-2", "app=web tier=front"),
        pod("web-canary", "app=web tier=front track=canary"),
        pod("cart-1", "app=cart"),
    ]));
    let effects = command(&mut a, "deploy");
    let shop = Scope::Namespaces(vec!["shop".into()]);
    assert_eq!(
        effects,
        [Effect::WatchWorkloads(
            WorkloadKind::Deployment,
            vec![(crate::app::tests::sim_cluster(), shop)]
        )]
    );
    a.update(Event::Workloads(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![
            deployment(
                "web",
                json!({"matchLabels": {"app": "web"},
                       "matchExpressions": [{"key": "track", "operator": "DoesNotExist"}]}),
            ),
            deployment("gone", json!({"matchLabels": {"app": "gone"}})),
        ],
    }));
    a
}

/// Enter shows only the workload's pods (the header says whose); the
/// filter works within them; esc clears the filter, then comes back to
/// the workload, watched again, and the whole list is there.
#[test]
fn enter_narrows_the_pod_list_to_a_workloads_pods_and_esc_comes_back() {
    let mut a = on_deployments();
    a.update(code(KeyCode::Down));
    assert_eq!(a.update(code(KeyCode::Enter)), [Effect::StopWatchingPod]);
    assert_eq!(a.narrowed.as_ref().unwrap().from, "deploy/web");
    assert_eq!(shown(&a), ["web-1", "web-2"], "not the canary, not cart");
    // A pod that comes matches; one that does not stays out.
    a.update(Event::Pods(Feed::Applied(pod("web-3", "app=web"))));
    a.update(Event::Pods(Feed::Applied(pod("cart-2", "app=cart"))));
    assert_eq!(shown(&a), ["web-1", "web-2", "web-3"]);
    a.update(key('/'));
    a.update(key('2'));
    a.update(code(KeyCode::Enter));
    assert_eq!(shown(&a), ["web-2"], "the filter within the narrowing");
    assert!(a.update(code(KeyCode::Esc)).is_empty(), "clears the filter");
    assert_eq!(shown(&a).len(), 3);
    let shop = Scope::Namespaces(vec!["shop".into()]);
    assert_eq!(
        a.update(code(KeyCode::Esc)),
        [Effect::WatchWorkloads(
            WorkloadKind::Deployment,
            vec![(crate::app::tests::sim_cluster(), shop)]
        )]
    );
    let View::Workloads(view) = &a.view else {
        panic!("back on the Deployments")
    };
    assert_eq!(view.list.selected().unwrap().name, "web");
    assert!(a.narrowed.is_none());
    assert_eq!(a.pods.visible_len(), 6);
}

/// `d` marks the workload's pods and reads them for the many-pods form.
#[test]
fn d_debugs_a_workloads_pods_at_once() {
    let mut a = on_deployments();
    a.update(code(KeyCode::Down));
    let effects = a.update(key('d'));
    let Some(Effect::ReadPods { pods, .. }) = effects.last() else {
        panic!("{effects:?}")
    };
    let names: Vec<&str> = pods.iter().map(|p| &*p.name).collect();
    assert_eq!(names, ["web-1", "web-2"]);
}

/// A workload whose selector matches no listed pod: the list says so in
/// one sentence, and `d` marks nothing.
#[test]
fn a_workload_without_pods_says_so() {
    let mut a = on_deployments();
    let effects = a.update(key('d'));
    assert_eq!(effects, [Effect::StopWatchingPod], "nothing to read");
    assert!(a.pods.marks().is_empty());
    let said = &a.message.as_ref().unwrap().text;
    assert!(
        said.contains("No pod of deploy/gone matches app.kubernetes.io/name")
            || said.contains("No pod of deploy/gone matches app=gone"),
        "{said}"
    );
}

/// Enter or `d` on an empty view acts on nothing: never on the pod list
/// hidden behind it (it opened the selected pod).
#[test]
fn keys_on_an_empty_view_never_reach_the_pod_list() {
    for view in ["deploy", "svc", "nodes"] {
        let (mut a, _) = app(false);
        a.update(listed(vec![pod("web-1", "app=web")]));
        command(&mut a, view);
        for k in [code(KeyCode::Enter), key('d'), key('D')] {
            assert!(a.update(k).is_empty(), "{view}");
            assert!(!matches!(a.view, View::Pod(_) | View::Pods), "{view}");
            assert!(a.mode == crate::app::Mode::Normal, "{view}");
        }
    }
}

/// Another namespace ends the narrowing: its pods are other pods.
#[test]
fn another_namespace_ends_the_narrowing() {
    let mut a = on_deployments();
    a.update(code(KeyCode::Down));
    a.update(code(KeyCode::Enter));
    command(&mut a, "ns payments");
    assert!(a.narrowed.is_none() && a.pods.narrow().is_none());
    a.update(listed(vec![row("payments", "api-1", "Running")]));
    assert_eq!(shown(&a), ["api-1"]);
}

/// The short names kubectl takes open their kinds' views, and `:` offers
/// them.
#[test]
fn kubectls_short_names_open_the_views() {
    for kind in WorkloadKind::ALL {
        let (mut a, _) = app(false);
        let effects = command(&mut a, kind.short());
        assert!(
            matches!(effects.as_slice(), [Effect::WatchWorkloads(k, _)] if *k == kind),
            "{effects:?}"
        );
    }
}

/// `/` filters the view by namespace/name, fuzzily; the cursor and enter
/// act on the rows shown; esc clears the filter before it goes back.
#[test]
fn slash_filters_a_workload_view() {
    let mut a = on_deployments();
    a.update(key('/'));
    for c in "gon".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    let View::Workloads(view) = &a.view else {
        panic!()
    };
    let shown: Vec<&str> = view.list.shown().map(|(_, w)| w.name.as_str()).collect();
    assert_eq!(shown, ["gone"]);
    assert_eq!(view.list.selected().unwrap().name, "gone");
    // A relist keeps the filter.
    a.update(Event::Workloads(Feed::Applied(deployment(
        "gonzo",
        json!({"matchLabels": {"app": "gonzo"}}),
    ))));
    a.update(code(KeyCode::Down));
    let View::Workloads(view) = &a.view else {
        panic!()
    };
    assert_eq!(view.list.shown_len(), 2);
    assert_eq!(view.list.selected().unwrap().name, "gonzo");
    assert!(a.update(code(KeyCode::Esc)).is_empty(), "clears the filter");
    let View::Workloads(view) = &a.view else {
        panic!("still the view")
    };
    assert_eq!(view.list.shown_len(), 3);
    assert_eq!(a.update(code(KeyCode::Esc)), [Effect::StopWatchingPod]);
}

/// `F` on a workload: the forward form for its pods (the template's
/// ports offered), and enter starts a forward that follows the owner; a
/// CronJob has no pods of its own to follow, and says so.
#[test]
fn f_forwards_to_a_workloads_pods() {
    let mut a = on_deployments();
    a.update(Event::Workloads(Feed::Applied(WorkloadRow::from_object(
        WorkloadKind::Deployment,
        &json!({"metadata": {"name": "web", "namespace": "shop"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "app", "ports": [
                    {"name": "http", "containerPort": 8080}, {"containerPort": 9090, "protocol": "UDP"}]}]}}}}),
    ))));
    a.update(code(KeyCode::Down));
    assert!(a.update(key('F')).is_empty());
    let crate::app::Mode::Forward(form) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let target = ForwardTarget::Owner {
        kind: crate::model::owner::OwnerKind::Deployment,
        name: "web".into(),
    };
    assert_eq!((form.namespace.as_str(), &form.target), ("shop", &target));
    let ports: Vec<u16> = form.ports.iter().map(|p| p.number).collect();
    assert_eq!(ports, [8080, 9090]);
    let effects = a.update(code(KeyCode::Enter));
    let [Effect::StartForward { request, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(
        (
            &request.target,
            request.ports[0].remote.to_string().as_str()
        ),
        (&target, "8080")
    );
    let (mut c, _) = app(false);
    command(&mut c, "cj");
    c.update(Event::Workloads(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![WorkloadRow::from_object(
            WorkloadKind::CronJob,
            &json!({"metadata": {"name": "nightly", "namespace": "shop"}, "spec": {"schedule": "0 2 * * *"}}),
        )],
    }));
    assert!(c.update(key('F')).is_empty());
    assert!(c.mode == crate::app::Mode::Normal);
    assert!(
        c.message
            .as_ref()
            .unwrap()
            .text
            .contains("cj/nightly runs no pods of its own")
    );
}

fn page(a: &App) -> &crate::app::object_page::ObjectReading {
    match &a.view {
        View::Workloads(view) => view.reading.as_ref().expect("a page open"),
        _ => panic!("not a workload view"),
    }
}

/// `D` reads the workload once and shows it as kubectl describes it, with
/// the pods of it the list has; a read of another object is not shown;
/// esc comes back to the list, which keeps its place.
#[test]
fn d_describes_a_workload_with_its_pods_and_esc_comes_back() {
    let mut a = on_deployments();
    a.update(code(KeyCode::Down));
    let effects = a.update(key('D'));
    let web = ObjectRef {
        kind: ObjectKind::Workload(WorkloadKind::Deployment),
        namespace: "shop".into(),
        name: "web".into(),
    };
    assert_eq!(
        effects,
        [Effect::ReadObject {
            cluster: a.cluster.clone(),
            object: web.clone()
        }]
    );
    assert!(page(&a).loading);
    assert_eq!(page(&a).title(), "describe shop/deploy/web");
    let object = json!({
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "track", "operator": "DoesNotExist"}]},
            "template": {"spec": {"containers": [{"name": "web", "image": "web:1"}]}}},
    });
    let read = |object: &ObjectRef| Event::ObjectRead {
        cluster: a_cluster(),
        object: object.clone(),
        read: Ok(crate::app::object_page::ObjectRead {
            object: json!({}),
            events: vec![],
        }),
    };
    // Another workload's answer (the user moved on): not this page's.
    let other = ObjectRef {
        name: "gone".into(),
        ..web.clone()
    };
    a.update(read(&other));
    assert!(page(&a).loading, "still waiting for its own");
    a.update(Event::ObjectRead {
        cluster: a_cluster(),
        object: web.clone(),
        read: Ok(crate::app::object_page::ObjectRead {
            object,
            events: vec![],
        }),
    });
    let lines = page(&a).reader.lines().to_vec();
    assert!(!page(&a).loading);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Name:") && l.ends_with("web")),
        "{lines:#?}"
    );
    let pods: Vec<&String> = lines
        .iter()
        .filter(|l| l.trim_start().starts_with("web-"))
        .collect();
    assert_eq!(pods.len(), 2, "web-1 and web-2, not the canary: {lines:#?}");
    // The list's keys do not act under the page; esc comes back.
    assert_eq!(a.update(code(KeyCode::Enter)), []);
    assert!(a.narrowed.is_none());
    a.update(code(KeyCode::Esc));
    let View::Workloads(view) = &a.view else {
        panic!("back on the list")
    };
    assert!(view.reading.is_none());
    assert_eq!(view.list.selected().unwrap().name, "web");
}

/// `y` shows the workload's YAML, kind first; a read that fails says why
/// in one sentence on the page.
#[test]
fn y_shows_a_workloads_yaml_and_a_failed_read_says_why() {
    let mut a = on_deployments();
    a.update(key('y'));
    let gone = ObjectRef {
        kind: ObjectKind::Workload(WorkloadKind::Deployment),
        namespace: "shop".into(),
        name: "gone".into(),
    };
    a.update(Event::ObjectRead {
        cluster: a_cluster(),
        object: gone.clone(),
        read: Ok(crate::app::object_page::ObjectRead {
            object: json!({"metadata": {"name": "gone", "managedFields": [{"manager": "x"}]},
                "spec": {"replicas": 1}}),
            events: vec![],
        }),
    });
    let lines = page(&a).reader.lines().to_vec();
    assert_eq!(lines[..2], ["apiVersion: apps/v1", "kind: Deployment"]);
    assert!(lines.iter().any(|l| l.contains("replicas: 1")));
    assert!(!lines.iter().any(|l| l.contains("managedFields")));
    a.update(code(KeyCode::Esc));
    a.update(key('y'));
    a.update(Event::ObjectRead {
        cluster: a_cluster(),
        object: gone,
        read: Err("deploy/gone is not in namespace shop any more.".into()),
    });
    assert_eq!(
        page(&a).reader.lines(),
        ["deploy/gone is not in namespace shop any more."]
    );
}

fn a_cluster() -> crate::model::ClusterId {
    let (a, _) = app(false);
    a.cluster.clone()
}

fn names(a: &App) -> Vec<String> {
    match &a.view {
        View::Workloads(view) => view.list.shown().map(|(_, r)| r.name.clone()).collect(),
        _ => panic!("not a workload view"),
    }
}

/// `S` puts the worst first (failed, then short, then fine), `A` the
/// youngest, `N` by name; the same key again reverses; the filter keeps
/// the order; changes from the watch land in it.
#[test]
fn a_workload_view_sorts_by_standing_age_and_name() {
    let (mut a, _) = app(false);
    command(&mut a, "deploy");
    let now = a.now;
    let at = |days: i64| {
        now.checked_sub(jiff::SignedDuration::from_hours(days * 24))
            .unwrap()
            .to_string()
    };
    let deployment = |name: &str, ready: i64, age: &str| {
        WorkloadRow::from_object(
            WorkloadKind::Deployment,
            &json!({
                "metadata": {"name": name, "namespace": "shop", "creationTimestamp": age},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}}},
                "status": {"readyReplicas": ready, "availableReplicas": ready},
            }),
        )
    };
    a.update(Event::Workloads(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![
            deployment("api", 2, &at(3)),
            deployment("cart", 1, &at(1)),
            deployment("web", 2, &at(2)),
        ],
    }));
    assert_eq!(names(&a), ["api", "cart", "web"]);
    a.update(key('S'));
    assert_eq!(names(&a)[0], "cart", "short of replicas first");
    let said = a.message.as_ref().map(|m| m.text.to_string());
    assert_eq!(
        said.as_deref(),
        Some("Sorted by status, the worst first; the same key again reverses it.")
    );
    a.update(key('A'));
    assert_eq!(names(&a), ["cart", "web", "api"], "youngest first");
    a.update(key('A'));
    assert_eq!(names(&a), ["api", "web", "cart"], "oldest first");
    a.update(Event::Workloads(Feed::Applied(deployment(
        "batch",
        2,
        &at(9),
    ))));
    assert_eq!(
        names(&a),
        ["batch", "api", "web", "cart"],
        "a new row in its place"
    );
    a.update(key('/'));
    a.update(key('a'));
    a.update(code(KeyCode::Enter));
    assert_eq!(
        names(&a),
        ["batch", "api", "cart"],
        "filtered, still oldest first"
    );
    a.update(key('N'));
    assert_eq!(names(&a), ["api", "batch", "cart"]);
    a.update(key('N'));
    assert_eq!(names(&a), ["cart", "batch", "api"]);
}

/// `E` on a workload: its namespace's events filtered by its name (its
/// own, its ReplicaSets' and its pods' match); esc clears the filter, then
/// comes back to the view, on the same row, watched again.
#[test]
fn events_of_a_workload_are_filtered_by_its_name_and_esc_comes_back_to_the_view() {
    let mut a = on_deployments();
    a.update(code(KeyCode::Down));
    let shop = Scope::Namespaces(vec!["shop".into()]);
    assert_eq!(
        a.update(key('E')),
        [Effect::WatchEvents(
            crate::app::tests::sim_cluster(),
            shop.clone()
        )]
    );
    let event = |name: &str, object: &str| crate::model::EventRow {
        name: name.into(),
        namespace: "shop".into(),
        object: object.into(),
        reason: "Started".into(),
        ..Default::default()
    };
    a.update(Event::Events(Feed::Listed {
        scope: None,
        rows: vec![
            event("a", "deployment/web"),
            event("b", "replicaset/web-5d8f"),
            event("c", "pod/web-5d8f-x2x9q"),
            event("d", "pod/cart-1"),
        ],
    }));
    let View::Events(view) = &a.view else {
        panic!("the events view");
    };
    assert_eq!(view.filter, "web");
    let names: Vec<&str> = view.visible().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["c", "b", "a"]);

    assert_eq!(a.update(code(KeyCode::Esc)), []);
    assert!(matches!(&a.view, View::Events(view) if view.filter.is_empty()));
    assert_eq!(
        a.update(code(KeyCode::Esc)),
        [Effect::WatchWorkloads(
            WorkloadKind::Deployment,
            vec![(crate::app::tests::sim_cluster(), shop)]
        )]
    );
    let View::Workloads(view) = &a.view else {
        panic!("back in the workload view");
    };
    assert_eq!(view.list.selected().map(|r| r.name.as_str()), Some("web"));
}

/// Marked workloads: enter shows the pods of every one, `d` debugs them
/// all; the marks stay through a change of the rows, and go with a
/// workload deleted.
#[test]
fn marked_workloads_lead_to_the_pods_of_all_of_them() {
    let mut a = on_deployments();
    a.update(Event::Workloads(Feed::Applied(deployment(
        "cart",
        json!({"matchLabels": {"app": "cart"}}),
    ))));
    // cart, gone, web: mark cart and web.
    a.update(key(' '));
    a.update(code(KeyCode::Down));
    a.update(code(KeyCode::Down));
    a.update(key(' '));
    a.update(Event::Workloads(Feed::Applied(deployment(
        "api",
        json!({"matchLabels": {"app": "api"}}),
    ))));
    let View::Workloads(view) = &a.view else {
        panic!("the Deployments")
    };
    let marked: Vec<&str> = view.list.marked().iter().map(|r| &*r.name).collect();
    assert_eq!(marked, ["cart", "web"]);

    assert_eq!(a.update(code(KeyCode::Enter)), [Effect::StopWatchingPod]);
    assert_eq!(a.narrowed.as_ref().unwrap().from, "deploy/cart +1");
    assert_eq!(shown(&a), ["cart-1", "web-1", "web-2"]);
    a.update(code(KeyCode::Esc));

    let effects = a.update(key('d'));
    let Some(Effect::ReadPods { pods, .. }) = effects.last() else {
        panic!("{effects:?}")
    };
    let names: Vec<&str> = pods.iter().map(|p| &*p.name).collect();
    assert_eq!(names, ["cart-1", "web-1", "web-2"]);

    // Back in the view, a marked workload deleted is marked no more.
    a.update(code(KeyCode::Esc));
    a.update(Event::Workloads(Feed::Deleted(deployment(
        "cart",
        json!({"matchLabels": {"app": "cart"}}),
    ))));
    let View::Workloads(view) = &a.view else {
        panic!("the Deployments")
    };
    assert_eq!(view.list.marks_len(), 1);
    // `*` marks every one shown; again, unmarks them.
    a.update(key('*'));
    let View::Workloads(view) = &a.view else {
        panic!("the Deployments")
    };
    assert_eq!(view.list.marks_len(), 3);
    a.update(key('*'));
    assert!(matches!(&a.view, View::Workloads(v) if v.list.marks_len() == 0));
}

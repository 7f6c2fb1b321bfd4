use crossterm::event::KeyCode;
use serde_json::json;

use super::*;
use crate::app::tests::{app, code, key, listed, row};
use crate::app::{Event, Scope};

fn service(namespace: &str, name: &str, selector: serde_json::Value) -> ServiceRow {
    ServiceRow::from_object(&json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterIP": "10.96.0.9", "selector": selector,
            "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    }))
}

fn pod(name: &str, status: &str, ready: u16) -> PodRow {
    PodRow {
        labels: "app=web pod-template-hash=1".into(),
        ready,
        total: 1,
        ..row("shop", name, status)
    }
}

/// The app on `:svc` over shop's web (three pods: one ready, one not
/// ready, one crash-looping), checkout (no pod) and manual (no selector).
fn on_services() -> App {
    let (mut a, _) = app(false);
    a.update(listed(vec![
        pod("web-1", "Running", 1),
        pod("web-2", "Running", 0),
        pod("web-3", "CrashLoopBackOff", 0),
        row("shop", "other", "Running"),
    ]));
    a.update(key(':'));
    for c in "svc".chars() {
        a.update(key(c));
    }
    let effects = a.update(code(KeyCode::Enter));
    assert_eq!(
        effects,
        [Effect::WatchServices(vec![(
            crate::app::tests::sim_cluster(),
            Scope::Namespaces(vec!["shop".into()])
        )])]
    );
    a.update(Event::Services(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![
            service("shop", "web", json!({"app": "web"})),
            service("shop", "checkout", json!({"app": "checkout"})),
            service("shop", "manual", json!({})),
        ],
    }));
    a
}

fn reading(a: &App) -> String {
    let View::Services(view) = &a.view else {
        panic!("not the services view");
    };
    view.reading
        .as_ref()
        .expect("a Service read")
        .lines()
        .join("\n")
}

#[test]
fn a_services_endpoints_are_its_ready_pods_of_those_it_selects() {
    let a = on_services();
    let View::Services(view) = &a.view else {
        panic!()
    };
    let names: Vec<&str> = view.list.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["checkout", "manual", "web"], "sorted");
    let counts = endpoints(&view.list.rows, a.pods.rows());
    assert_eq!(counts, [(0, 0), (0, 0), (1, 3)]);
}

/// `D` tells where the ports lead and which pods take traffic, and why
/// the others do not; esc closes it, esc again goes back to the pods.
#[test]
fn describe_tells_a_services_truth_and_esc_goes_back() {
    let mut a = on_services();
    a.update(code(KeyCode::Down));
    a.update(code(KeyCode::Down));
    a.update(key('D'));
    let text = reading(&a);
    for line in [
        "Service shop/web (ClusterIP, 10.96.0.9)",
        "Selector: app=web",
        "80/TCP (http) → each pod's port named http",
        "Pods it selects: 1 of 3 take traffic (of the pods listed).",
        "web-1",
        "takes traffic",
        "not ready (0/1 containers): no traffic",
        "CrashLoopBackOff: no traffic",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    assert!(!text.contains("other"), "{text}");
    assert!(a.update(code(KeyCode::Esc)).is_empty());
    a.update(code(KeyCode::Up));
    a.update(code(KeyCode::Up));
    a.update(key('D'));
    assert!(
        reading(&a).contains("No pod of shop matches its selector: it sends traffic nowhere."),
        "{}",
        reading(&a)
    );
    a.update(code(KeyCode::Esc));
    a.update(code(KeyCode::Down));
    a.update(key('D'));
    assert!(reading(&a).contains("No selector: its endpoints are kept by hand"));
    a.update(code(KeyCode::Esc));
    assert_eq!(a.update(code(KeyCode::Esc)), [Effect::StopWatchingPod]);
    assert!(matches!(a.view, View::Pods));
}

/// Enter narrows the pod list to the pods the Service selects (the
/// header names it); esc comes back to the Service, watched again. One
/// without a selector says so and stays.
#[test]
fn enter_narrows_the_pod_list_to_a_services_pods() {
    let mut a = on_services();
    a.update(code(KeyCode::Down));
    assert!(
        a.update(code(KeyCode::Enter)).is_empty(),
        "manual: no selector"
    );
    assert!(matches!(a.view, View::Services(_)));
    assert!(
        a.message
            .as_ref()
            .unwrap()
            .text
            .contains("svc/manual has no selector")
    );
    a.update(code(KeyCode::Down));
    assert_eq!(a.update(code(KeyCode::Enter)), [Effect::StopWatchingPod]);
    assert!(matches!(a.view, View::Pods));
    assert_eq!(a.narrowed.as_ref().unwrap().from, "svc/web");
    let shown: Vec<String> = (0..a.pods.visible_len())
        .map(|i| a.pods.visible(i).unwrap().0.key.name.to_string())
        .collect();
    assert_eq!(shown, ["web-1", "web-2", "web-3"]);
    assert_eq!(
        a.update(code(KeyCode::Esc)),
        [Effect::WatchServices(vec![(
            crate::app::tests::sim_cluster(),
            Scope::Namespaces(vec!["shop".into()])
        )])]
    );
    let View::Services(view) = &a.view else {
        panic!("back on the Services")
    };
    assert_eq!(view.list.selected().unwrap().name, "web", "where it was");
    assert_eq!(a.pods.visible_len(), 4, "the whole list again");
}

/// One feed a namespace: a namespace's relist replaces its own rows only;
/// a change and a deletion apply to the one Service.
#[test]
fn each_namespaces_feed_keeps_its_own_rows() {
    let mut a = on_services();
    a.update(Event::Services(Feed::Listed {
        scope: Some("payments".into()),
        rows: vec![service("payments", "api", json!({"app": "api"}))],
    }));
    a.update(Event::Services(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![service("shop", "web", json!({"app": "web"}))],
    }));
    a.update(Event::Services(Feed::Deleted(service(
        "payments",
        "api",
        json!({}),
    ))));
    a.update(Event::Services(Feed::Applied(service(
        "shop",
        "cart",
        json!({"app": "cart"}),
    ))));
    let View::Services(view) = &a.view else {
        panic!()
    };
    let names: Vec<String> = view
        .list
        .rows
        .iter()
        .map(|r| format!("{}/{}", r.namespace, r.name))
        .collect();
    assert_eq!(names, ["shop/cart", "shop/web"]);
}

/// `F` on a Service: its own ports offered, and a forward to `svc/NAME`,
/// which follows the pods it selects.
#[test]
fn f_forwards_to_a_service() {
    let mut a = on_services();
    a.update(code(KeyCode::Down));
    a.update(code(KeyCode::Down));
    assert!(a.update(key('F')).is_empty());
    let crate::app::Mode::Forward(form) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let ports: Vec<(Option<&str>, u16)> = form
        .ports
        .iter()
        .map(|p| (p.name.as_deref(), p.number))
        .collect();
    assert_eq!(ports, [(Some("http"), 80)]);
    let effects = a.update(code(KeyCode::Enter));
    let [Effect::StartForward { request, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(
        request.target,
        crate::model::forward::ForwardTarget::Service("web".into())
    );
    assert_eq!(request.ports[0].remote.to_string(), "80");
}

/// `y` reads the Service once and shows its YAML; esc comes back to the
/// list.
#[test]
fn y_shows_a_services_yaml() {
    let mut a = on_services();
    let effects = a.update(key('y'));
    let [Effect::ReadObject { cluster, object }] = effects.as_slice() else {
        panic!("one read: {effects:?}")
    };
    assert_eq!(object.to_string(), "svc/checkout");
    a.update(Event::ObjectRead {
        cluster: cluster.clone(),
        object: object.clone(),
        read: Ok(crate::app::object_page::ObjectRead {
            object: json!({"metadata": {"name": "checkout"}, "spec": {"type": "ClusterIP"}}),
            events: vec![],
        }),
    });
    let View::Services(view) = &a.view else {
        panic!("the services view")
    };
    let page = view.page.as_ref().expect("the YAML page");
    assert_eq!(page.title(), "yaml shop/svc/checkout");
    assert_eq!(
        page.reader.lines()[..2],
        ["apiVersion: v1", "kind: Service"]
    );
    assert!(
        page.reader
            .lines()
            .contains(&"  type: ClusterIP".to_string())
    );
    a.update(code(KeyCode::Esc));
    let View::Services(view) = &a.view else {
        panic!("the services view")
    };
    assert!(view.page.is_none() && view.reading.is_none());
}

//! The workload and Service views of a list of several clusters: each
//! cluster's objects, each with its context, and whatever acts on one
//! (its pods, its page, a forward, its endpoints) on its own cluster.

use crossterm::event::KeyCode;
use serde_json::json;

use super::super::tests::{code, key, sim_cluster};
use super::super::{App, Effect, Event, Mode, Scope, View};
use super::tests::{cluster_b, two_clusters};
use crate::model::feed::Feed;
use crate::model::service::ServiceRow;
use crate::model::workload::{WorkloadKind, WorkloadRow};

fn command(a: &mut App, text: &str) -> Vec<Effect> {
    a.update(key(':'));
    for c in text.chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter))
}

fn shop() -> Scope {
    Scope::Namespaces(vec!["shop".into()])
}

/// Deployment `web` of shop, selecting the test pods labelled app=web.
fn web() -> WorkloadRow {
    WorkloadRow::from_object(
        WorkloadKind::Deployment,
        &json!({
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "web", "ports": [{"containerPort": 8080}]}]}}},
            "status": {"readyReplicas": 1},
        }),
    )
}

fn web_service() -> ServiceRow {
    ServiceRow::from_object(&json!({
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"clusterIP": "10.96.0.9", "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
    }))
}

fn listed<R>(rows: Vec<R>) -> Feed<R> {
    Feed::Listed {
        scope: Some("shop".into()),
        rows,
    }
}

/// Two clusters, `:deploy` open, each listing its own `web`.
fn deployments_on_both() -> App {
    let mut a = two_clusters();
    let effects = command(&mut a, "deploy");
    assert_eq!(
        effects,
        [Effect::WatchWorkloads(
            WorkloadKind::Deployment,
            vec![(sim_cluster(), shop()), (cluster_b(), shop())]
        )],
        "one watch on each cluster"
    );
    a.update(Event::Workloads(listed(vec![web()])));
    a.update(Event::OtherWorkloads {
        cluster: cluster_b(),
        feed: listed(vec![web()]),
    });
    a
}

fn workloads(a: &App) -> &crate::app::workloads::WorkloadsView {
    match &a.view {
        View::Workloads(view) => view,
        other => panic!("not a workload view: {other:?}"),
    }
}

fn contexts_listed(a: &App) -> Vec<String> {
    workloads(a)
        .list
        .shown()
        .map(|(_, r)| format!("{}:{}", r.context.as_deref().unwrap_or("-"), r.name))
        .collect()
}

#[test]
fn a_workload_view_lists_each_clusters_and_a_relist_replaces_its_own_alone() {
    let mut a = deployments_on_both();
    assert_eq!(contexts_listed(&a), ["sim:web", "sim-b:web"]);
    a.update(Event::OtherWorkloads {
        cluster: cluster_b(),
        feed: listed(Vec::new()),
    });
    assert_eq!(contexts_listed(&a), ["sim:web"]);
    a.update(Event::Workloads(listed(Vec::new())));
    assert!(contexts_listed(&a).is_empty());
}

#[test]
fn a_refusal_of_one_cluster_is_said_for_it_and_hides_no_other_clusters_rows() {
    let mut a = deployments_on_both();
    a.update(Event::OtherWorkloads {
        cluster: cluster_b(),
        feed: Feed::Forbidden(crate::model::problem::Denied {
            verb: "list".into(),
            resource: "deployments".into(),
            namespace: Some("shop".into()),
        }),
    });
    assert!(workloads(&a).list.trouble.is_none(), "the rows stay drawn");
    assert_eq!(contexts_listed(&a), ["sim:web", "sim-b:web"]);
    let said = a.message.as_ref().map(|m| m.text.to_string());
    assert!(
        said.as_deref().is_some_and(|s| s.starts_with("sim-b: ")),
        "{said:?}"
    );
}

#[test]
fn enter_describe_and_forward_on_the_other_clusters_workload_go_there() {
    let mut a = deployments_on_both();
    a.update(key('j'));
    // Its pods: sim-b's web alone, not sim's of the same labels.
    a.update(code(KeyCode::Enter));
    let narrowed: Vec<String> = (0..a.pods.visible_len())
        .filter_map(|i| a.pods.visible(i))
        .map(|(r, _)| format!("{}:{}", r.context.as_deref().unwrap_or("-"), r.key.name))
        .collect();
    assert_eq!(narrowed, ["sim-b:web"]);
    a.update(code(KeyCode::Esc));
    assert_eq!(workloads(&a).list.cursor, 1, "back on sim-b's row");
    let effects = a.update(key('D'));
    assert!(
        matches!(effects.as_slice(), [Effect::ReadObject { cluster, .. }] if *cluster == cluster_b()),
        "{effects:?}"
    );
    // The page takes the answer from sim-b, not one from sim.
    let object = crate::model::object_ref::ObjectRef {
        kind: crate::model::object_ref::ObjectKind::Workload(WorkloadKind::Deployment),
        namespace: "shop".into(),
        name: "web".into(),
    };
    a.update(Event::ObjectRead {
        cluster: sim_cluster(),
        object: object.clone(),
        read: Err("from the wrong cluster".into()),
    });
    assert!(workloads(&a).reading.as_ref().is_some_and(|r| r.loading));
    a.update(Event::ObjectRead {
        cluster: cluster_b(),
        object,
        read: Err("sim-b's answer".into()),
    });
    assert!(workloads(&a).reading.as_ref().is_some_and(|r| !r.loading));
    a.update(code(KeyCode::Esc));
    a.update(key('F'));
    match &a.mode {
        Mode::Forward(form) => assert_eq!(form.cluster, cluster_b()),
        other => panic!("no forward form: {other:?}"),
    }
}

#[test]
fn logs_of_workloads_marked_on_two_clusters_are_refused_with_why() {
    let mut a = deployments_on_both();
    a.update(key(' '));
    a.update(key('j'));
    a.update(key(' '));
    let effects = a.update(key('l'));
    assert!(effects.is_empty(), "{effects:?}");
    let said = a.message.as_ref().map(|m| m.text.to_string());
    assert!(
        said.as_deref()
            .is_some_and(|s| s.contains("several clusters")),
        "{said:?}"
    );
}

#[test]
fn a_services_endpoints_are_its_own_clusters_pods() {
    let mut a = two_clusters();
    let effects = command(&mut a, "svc");
    assert_eq!(
        effects,
        [Effect::WatchServices(vec![
            (sim_cluster(), shop()),
            (cluster_b(), shop())
        ])]
    );
    a.update(Event::Services(listed(vec![web_service()])));
    a.update(Event::OtherServices {
        cluster: cluster_b(),
        feed: listed(vec![web_service()]),
    });
    let View::Services(view) = &a.view else {
        panic!("not the services view");
    };
    let counts = crate::app::services::endpoints(&view.list.rows, a.pods.rows());
    // Each cluster has one web pod: one endpoint each, not two.
    assert_eq!(counts, [(1, 1), (1, 1)]);
    let contexts: Vec<Option<&str>> = view
        .list
        .rows
        .iter()
        .map(|s| s.context.as_deref())
        .collect();
    assert_eq!(contexts, [Some("sim"), Some("sim-b")]);
}

#[test]
fn a_cluster_connected_while_a_view_shows_is_watched_there_too() {
    let mut a = two_clusters();
    a.others.push(super::OtherCluster::new("sim-c"));
    command(&mut a, "deploy");
    let sim_c = crate::model::ClusterId::new("sim-c", "https://127.0.0.3:6443", "admin");
    let effects = a.update(Event::ContextReady {
        context: "sim-c".into(),
        outcome: Ok(crate::app::Reached {
            cluster: sim_c.clone(),
            namespace: "default".into(),
        }),
    });
    let watched = effects.iter().find_map(|e| match e {
        Effect::WatchWorkloads(_, watches) => Some(watches.clone()),
        _ => None,
    });
    assert_eq!(
        watched,
        Some(vec![
            (sim_cluster(), shop()),
            (cluster_b(), shop()),
            (sim_c, shop())
        ])
    );
}

fn node(name: &str) -> crate::model::node::NodeRow {
    crate::model::node::NodeRow {
        name: name.into(),
        status: "Ready".into(),
        ready: true,
        roles: "<none>".into(),
        version: "v1.33.1".into(),
        os: "linux".into(),
        allocatable_cpu_m: 4000,
        allocatable_memory: 16 << 30,
        ..Default::default()
    }
}

/// The text of the node being read.
fn node_page(a: &App) -> String {
    match &a.view {
        View::Nodes(view) => view
            .reading
            .as_ref()
            .map(|r| r.lines().join("\n"))
            .unwrap_or_default(),
        other => panic!("not the nodes view: {other:?}"),
    }
}

#[test]
fn the_nodes_view_lists_each_clusters_and_reads_and_debugs_a_node_on_its_own() {
    let mut a = two_clusters();
    let effects = command(&mut a, "nodes");
    assert_eq!(
        effects,
        [Effect::WatchNodes(vec![sim_cluster(), cluster_b()])]
    );
    // Both clusters have a node-a1, each with its own two pods.
    let nodes = || Feed::Listed {
        scope: None,
        rows: vec![node("node-a1")],
    };
    a.update(Event::Nodes(nodes()));
    a.update(Event::OtherNodes {
        cluster: cluster_b(),
        feed: nodes(),
    });
    a.update(key('j'));
    let effects = a.update(code(KeyCode::Enter));
    assert_eq!(
        effects,
        [Effect::ReadNodePods {
            cluster: cluster_b(),
            node: "node-a1".into()
        }]
    );
    assert!(
        node_page(&a).contains("Pods on node-a1 (2,"),
        "sim-b's own two, not four:\n{}",
        node_page(&a)
    );
    // A read of sim's node-a1 is not sim-b's.
    let read = |cluster| Event::NodePods {
        cluster,
        node: "node-a1".into(),
        pods: Ok(vec![super::super::tests::row(
            "kube-system",
            "dns",
            "Running",
        )]),
    };
    a.update(read(sim_cluster()));
    assert!(!node_page(&a).contains("kube-system/dns"));
    a.update(read(cluster_b()));
    assert!(
        node_page(&a).contains("kube-system/dns"),
        "{}",
        node_page(&a)
    );
    a.update(code(KeyCode::Esc));
    a.update(key('d'));
    let effects = a.update(code(KeyCode::Enter));
    let created = effects.iter().find_map(|e| match e {
        Effect::CreatePod { key, .. } => Some(key.cluster.clone()),
        _ => None,
    });
    assert_eq!(created, Some(cluster_b()), "{effects:?}");
}

#[test]
fn events_are_read_on_the_cluster_of_the_pod_or_the_object_they_are_asked_from() {
    let mut a = deployments_on_both();
    a.update(key('j'));
    let effects = a.update(key('E'));
    assert_eq!(effects, [Effect::WatchEvents(cluster_b(), shop())]);
    // Back to the list (the events' filter, the events, the view).
    for _ in 0..3 {
        a.update(code(KeyCode::Esc));
    }
    assert!(matches!(a.view, View::Pods), "{:?}", a.view);
    // From the list: sim-b's pod, opened, then E.
    let at = (0..a.pods.visible_len())
        .find(|&i| {
            a.pods
                .visible(i)
                .is_some_and(|(r, _)| r.context.as_deref() == Some("sim-b"))
        })
        .expect("a row of sim-b");
    a.pods.select_index(at);
    a.update(code(KeyCode::Enter));
    let effects = a.update(key('E'));
    assert_eq!(effects, [Effect::WatchEvents(cluster_b(), shop())]);
}

//! The pod list of two clusters: a CONTEXT column first, each cluster's
//! state in the header, and a cluster that stops answering said on its
//! own rows.

use super::*;
use crate::app::other_clusters::tests::{cluster_b, two_clusters};

#[test]
fn a_list_of_two_clusters_fits_every_size_and_says_which_one_stalls() {
    for (w, h) in SIZES {
        let size = format!("{w}x{h}");
        let mut a = two_clusters();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("clusters_list_{size}"), &screen);
        assert!(
            screen.contains("sim ● live · sim-b ● live"),
            "{size}\n{screen}"
        );
        let rows: Vec<&str> = screen
            .lines()
            .filter(|l| l.contains("api") || l.contains("web"))
            .collect();
        assert_eq!(rows.len(), 4, "{size}\n{screen}");
        assert!(
            rows[..2].iter().all(|r| r.starts_with("sim "))
                && rows[2..].iter().all(|r| r.starts_with("sim-b ")),
            "each row after its context, sim's first:\n{screen}"
        );

        a.update(Event::Pulse {
            cluster: cluster_b(),
            unanswered: Some(12),
        });
        let screen = render(&a, w, h);
        assert_snapshot(&format!("clusters_stalled_{size}"), &screen);
        assert!(
            screen.contains("sim ● live · sim-b ◍ stalled 12s"),
            "{size}\n{screen}"
        );
        let marked = screen.lines().filter(|l| l.starts_with("◍ sim-b")).count();
        assert_eq!(marked, 2, "sim-b's rows, and only they:\n{screen}");
    }
}

/// Three clusters of long names on 80 columns: their states shrink to
/// dots before the namespace and the count leave the header.
#[test]
fn the_header_of_three_long_named_clusters_keeps_the_namespace_and_count_at_80() {
    use crate::app::{AppOptions, PaneOptions};
    use crate::model::ClusterId;
    let others = ["prod-us-east-1-blue", "staging-eu-west-2"];
    let (mut a, _) = App::new(AppOptions {
        cluster: crate::app::tests::sim_cluster(),
        context: "prod-eu-central-1-green".into(),
        others: others.iter().map(|c| c.to_string()).collect(),
        contexts: vec![],
        namespace: "shop".into(),
        namespace_chosen: true,
        all_namespaces: false,
        fallback_namespaces: vec![],
        keymap: Default::default(),
        now: "2026-01-01T01:00:00Z".parse().unwrap(),
        debug_images: vec![],
        debug_profile: crate::model::debug::Profile::General,
        download_dir: ".".into(),
        panes: PaneOptions::default(),
    });
    a.update(Event::ContextReady {
        context: others[0].into(),
        outcome: Ok(crate::app::Reached {
            cluster: ClusterId::new(others[0], "https://10.0.0.1", "me"),
            namespace: "default".into(),
        }),
    });
    a.update(Event::Pulse {
        cluster: ClusterId::new(others[0], "https://10.0.0.1", "me"),
        unanswered: Some(12),
    });
    a.update(listed(vec![row("shop", "web", "Running")]));
    let screen = render(&a, 80, 24);
    let header = screen.lines().next().unwrap_or_default().to_string();
    assert_snapshot("clusters_long_names_80x24", &screen);
    for (words, why) in [
        ("-green ●", "the first, live, its name's end kept"),
        ("-blue ◍ 12s", "the stalled one, with its seconds"),
        ("west-2 ◌", "the one still connecting"),
        ("ns shop", "the namespace"),
        ("1 pod", "the count"),
    ] {
        assert!(header.contains(words), "{why}: {header}");
    }
    let wide = render(&a, 250, 60);
    assert!(
        wide.contains("prod-us-east-1-blue ◍ stalled 12s · staging-eu-west-2 ◌ connecting"),
        "with room, the words:\n{wide}"
    );
}

/// `:deploy` and `:svc` over two clusters: a CONTEXT column first, each
/// cluster's objects after their context, each Service's endpoints
/// counted from its own cluster's pods.
#[test]
fn the_workload_service_and_node_views_of_two_clusters_say_each_rows_context() {
    use crate::model::service::ServiceRow;
    use crate::model::workload::{WorkloadKind, WorkloadRow};
    let deployment = WorkloadRow::from_object(
        WorkloadKind::Deployment,
        &serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop", "creationTimestamp": "2025-12-01T00:00:00Z"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1},
        }),
    );
    let service = ServiceRow::from_object(&serde_json::json!({
        "metadata": {"name": "web", "namespace": "shop", "creationTimestamp": "2025-12-01T00:00:00Z"},
        "spec": {"clusterIP": "10.96.0.9", "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
    }));
    fn listed<R>(rows: Vec<R>) -> Feed<R> {
        Feed::Listed {
            scope: Some("shop".into()),
            rows,
        }
    }
    for (w, h) in SIZES {
        let size = format!("{w}x{h}");
        let mut a = two_clusters();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        for c in ":deploy".chars() {
            a.update(key(c));
        }
        a.update(code(KeyCode::Enter));
        a.update(Event::Workloads(listed(vec![deployment.clone()])));
        a.update(Event::OtherWorkloads {
            cluster: cluster_b(),
            feed: listed(vec![deployment.clone()]),
        });
        let screen = render(&a, w, h);
        assert_snapshot(&format!("clusters_deployments_{size}"), &screen);
        let rows: Vec<&str> = screen.lines().filter(|l| l.contains(" web ")).collect();
        assert_eq!(rows.len(), 2, "{size}\n{screen}");
        assert!(
            rows[0].contains("│ sim ") && rows[1].contains("│ sim-b "),
            "each row after its context:\n{screen}"
        );

        for c in ":svc".chars() {
            a.update(key(c));
        }
        a.update(code(KeyCode::Enter));
        a.update(Event::Services(listed(vec![service.clone()])));
        a.update(Event::OtherServices {
            cluster: cluster_b(),
            feed: listed(vec![service.clone()]),
        });
        let screen = render(&a, w, h);
        assert_snapshot(&format!("clusters_services_{size}"), &screen);
        let rows: Vec<&str> = screen.lines().filter(|l| l.contains(" web ")).collect();
        assert_eq!(rows.len(), 2, "{size}\n{screen}");
        assert!(
            rows.iter().all(|r| r.contains(" 1/1 ")),
            "one endpoint each, not both clusters' pods:\n{screen}"
        );

        for c in ":nodes".chars() {
            a.update(key(c));
        }
        a.update(code(KeyCode::Enter));
        let node = crate::model::node::NodeRow {
            name: "node-a1".into(),
            status: "Ready".into(),
            ready: true,
            roles: "<none>".into(),
            version: "v1.33.1".into(),
            created: Some("2025-12-01T00:00:00Z".parse().unwrap()),
            os: "linux".into(),
            ..Default::default()
        };
        a.update(Event::Nodes(listed(vec![node.clone()])));
        a.update(Event::OtherNodes {
            cluster: cluster_b(),
            feed: listed(vec![node.clone()]),
        });
        let screen = render(&a, w, h);
        assert_snapshot(&format!("clusters_nodes_{size}"), &screen);
        let rows: Vec<&str> = screen.lines().filter(|l| l.contains("node-a1")).collect();
        assert_eq!(rows.len(), 2, "{size}\n{screen}");
        assert!(
            rows[0].contains("│ sim ") && rows[1].contains("│ sim-b "),
            "each node after its context:\n{screen}"
        );
        // The node debug form names sim-b's node as sim-b's.
        a.update(key('j'));
        a.update(key('d'));
        let screen = render(&a, w, h);
        assert!(
            screen.contains("A shell on node sim-b/node-a1"),
            "{size}\n{screen}"
        );
    }
}

/// In the workload, Service and node views too, a cluster that stops
/// answering is marked on its own rows, as in the pod list: what they say
/// may be old.
#[test]
fn a_stalled_clusters_rows_are_marked_in_every_view_of_two_clusters() {
    use crate::model::service::ServiceRow;
    use crate::model::workload::{WorkloadKind, WorkloadRow};
    let deployment = WorkloadRow::from_object(
        WorkloadKind::Deployment,
        &serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}},
        }),
    );
    let service = ServiceRow::from_object(&serde_json::json!({
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"clusterIP": "10.96.0.9", "ports": [{"port": 80}]},
    }));
    let node = crate::model::node::NodeRow {
        name: "node-web".into(),
        status: "Ready".into(),
        ready: true,
        ..Default::default()
    };
    let listed = |rows| Feed::Listed {
        scope: Some("shop".into()),
        rows,
    };
    let mut a = two_clusters();
    a.update(Event::Resize(crate::term::Size::new(120, 40)));
    for view in [":deploy", ":svc", ":nodes"] {
        for c in view.chars() {
            a.update(key(c));
        }
        a.update(code(KeyCode::Enter));
        match view {
            ":deploy" => {
                a.update(Event::Workloads(listed(vec![deployment.clone()])));
                a.update(Event::OtherWorkloads {
                    cluster: cluster_b(),
                    feed: listed(vec![deployment.clone()]),
                });
            }
            ":svc" => {
                a.update(Event::Services(Feed::Listed {
                    scope: Some("shop".into()),
                    rows: vec![service.clone()],
                }));
                a.update(Event::OtherServices {
                    cluster: cluster_b(),
                    feed: Feed::Listed {
                        scope: Some("shop".into()),
                        rows: vec![service.clone()],
                    },
                });
            }
            _ => {
                a.update(Event::Nodes(Feed::Listed {
                    scope: None,
                    rows: vec![node.clone()],
                }));
                a.update(Event::OtherNodes {
                    cluster: cluster_b(),
                    feed: Feed::Listed {
                        scope: None,
                        rows: vec![node.clone()],
                    },
                });
            }
        }
        let rows = |screen: &str| -> Vec<String> {
            screen
                .lines()
                .filter(|l| l.contains("web"))
                .map(str::to_string)
                .collect()
        };
        let screen = render(&a, 120, 40);
        assert_eq!(rows(&screen).len(), 2, "{view}\n{screen}");
        assert!(!screen.contains("◍ sim"), "both answer: {view}\n{screen}");
        a.update(Event::Pulse {
            cluster: cluster_b(),
            unanswered: Some(12),
        });
        let screen = render(&a, 120, 40);
        let rows = rows(&screen);
        assert!(
            rows[0].contains("│ sim ") && rows[1].contains("│ ◍ sim-b "),
            "sim-b's row marked, sim's not: {view}\n{screen}"
        );
        a.update(Event::Pulse {
            cluster: cluster_b(),
            unanswered: None,
        });
    }
}

/// `:pf` with a forward on each cluster to pods of one name: each target
/// after its context.
#[test]
fn forwards_on_two_clusters_say_whose_each_is() {
    let mut a = two_clusters();
    for context in ["sim", "sim-b"] {
        let at = (0..a.pods.visible_len())
            .find(|&i| {
                a.pods.visible(i).is_some_and(|(r, _)| {
                    r.context.as_deref() == Some(context) && &*r.key.name == "web"
                })
            })
            .expect("the row");
        a.pods.select_index(at);
        a.update(code(KeyCode::Enter));
        let detail = crate::app::tests::pod_detail(None);
        a.update(crate::app::tests::detail_event(detail));
        a.update(key('F'));
        for c in "8080".chars() {
            a.update(key(c));
        }
        a.update(code(KeyCode::Enter));
        a.update(code(KeyCode::Esc));
    }
    for c in ":pf".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    let screen = render(&a, 80, 24);
    assert_snapshot("clusters_forwards_80x24", &screen);
    assert!(
        screen.contains("sim/shop/pod/web") && screen.contains("sim-b/shop/pod/web"),
        "{screen}"
    );
}

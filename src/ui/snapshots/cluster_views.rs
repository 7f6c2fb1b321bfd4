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

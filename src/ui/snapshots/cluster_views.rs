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

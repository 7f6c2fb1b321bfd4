use crossterm::event::KeyCode;
use serde_json::json;

use super::*;
use crate::app::tests::{app, code, key, listed, row};
use crate::app::{Event, View};
use crate::model::feed::Feed;
use crate::model::session::SessionEnd;
use crate::model::workload::{WorkloadKind, WorkloadRow};

fn pod(name: &str, status: &str, labels: &str) -> PodRow {
    PodRow {
        labels: labels.into(),
        ..row("shop", name, status)
    }
}

fn not_ready(name: &str, status: &str, labels: &str) -> PodRow {
    PodRow {
        ready: 0,
        ..pod(name, status, labels)
    }
}

/// `:deploy` on shop's web (two pods running, one still pulling) and
/// cart, the cursor on web.
fn on_web() -> App {
    let (mut a, _) = app(false);
    a.update(listed(vec![
        pod("web-1", "Running", "app=web"),
        pod("web-2", "Running", "app=web"),
        not_ready("web-3", "ContainerCreating", "app=web"),
        pod("cart-1", "Running", "app=cart"),
    ]));
    a.update(key(':'));
    for c in "deploy".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    let deployment = |name: &str| {
        WorkloadRow::from_object(
            WorkloadKind::Deployment,
            &json!({
                "metadata": {"name": name, "namespace": "shop"},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}}},
            }),
        )
    };
    a.update(Event::Workloads(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![deployment("cart"), deployment("web")],
    }));
    a.update(code(KeyCode::Down));
    a
}

/// The pods of the one pods' log pane, and whether its last effect reads
/// them.
fn pane(a: &App) -> &crate::app::terminal::Terminal {
    let mut panes = a
        .workspace
        .terminals
        .values()
        .filter(|t| t.kind == TerminalKind::PodsLogs);
    let pane = panes.next().expect("a pods' log pane");
    assert!(panes.next().is_none(), "one pane");
    pane
}

fn reads(effects: &[Effect]) -> Option<Vec<String>> {
    effects.iter().find_map(|e| match e {
        Effect::ShowLog {
            containers,
            of_pods: true,
            follow: true,
            ..
        } => Some(containers.clone()),
        _ => None,
    })
}

/// `l` on a workload: one pane on its started pods' logs (not the one
/// still pulling, not another workload's), titled with the workload; it
/// follows no single pod.
#[test]
fn l_follows_a_workloads_started_pods_in_one_pane() {
    let mut a = on_web();
    let effects = a.update(key('l'));
    assert_eq!(
        reads(&effects).expect("the pods' logs read"),
        ["shop/web-1", "shop/web-2"]
    );
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Follow { .. })),
        "{effects:?}"
    );
    assert_eq!(pane(&a).label(), "shop/deploy/web");
    assert!(
        matches!(a.view, View::Workloads(_)),
        "the view stays behind"
    );
}

/// A pod of the workload that starts joins the pane (its streams start
/// again, after their last lines); a pod of another, or one still
/// pending, changes nothing.
#[test]
fn a_pod_that_starts_later_joins_the_pane() {
    let mut a = on_web();
    a.update(key('l'));
    let applied = |a: &mut App, row: PodRow| a.update(Event::Pods(Feed::Applied(row)));
    assert_eq!(
        reads(&applied(&mut a, pod("cart-2", "Running", "app=cart"))),
        None
    );
    assert_eq!(
        reads(&applied(&mut a, not_ready("web-4", "Pending", "app=web"))),
        None
    );
    let effects = applied(&mut a, pod("web-3", "Running", "app=web"));
    let Some(Effect::ShowLog { fresh, .. }) = effects.first() else {
        panic!("{effects:?}")
    };
    assert!(!fresh, "each stream goes on after its last line");
    assert_eq!(
        reads(&effects).unwrap(),
        ["shop/web-1", "shop/web-2", "shop/web-3"]
    );
    assert_eq!(pane(&a).containers.len(), 3);
    // Listed again with nothing new: nothing to do.
    let effects = a.update(listed(vec![
        pod("web-1", "Running", "app=web"),
        pod("web-3", "Running", "app=web"),
    ]));
    assert_eq!(reads(&effects), None);
}

/// Its streams all ended: cut while a pod still runs (`r` goes on), over
/// once none does, saying so.
#[test]
fn the_pane_ends_when_none_of_its_pods_runs() {
    let mut a = on_web();
    a.update(key('l'));
    let id = pane(&a).id;
    let end = |disconnected| SessionEnd {
        exit_code: None,
        reason: "the 2 containers' log streams ended".into(),
        disconnected,
    };
    a.update(Event::SessionEnded { id, end: end(true) });
    assert!(matches!(pane(&a).state, TerminalState::Disconnected(_)));
    for name in ["web-1", "web-2"] {
        a.update(Event::Pods(Feed::Deleted(pod(name, "Running", "app=web"))));
    }
    a.update(Event::SessionEnded { id, end: end(true) });
    let TerminalState::Ended(said) = &pane(&a).state else {
        panic!("{:?}", pane(&a).state)
    };
    assert_eq!(
        said.to_string(),
        "no pod of deploy/web is running; one that starts joins this pane"
    );
}

/// `l` on a workload none of whose pods has started says so and opens
/// nothing.
#[test]
fn l_with_no_started_pod_says_so() {
    let mut a = on_web();
    a.update(code(KeyCode::Up));
    a.update(Event::Pods(Feed::Deleted(pod(
        "cart-1", "Running", "app=cart",
    ))));
    assert_eq!(a.update(key('l')), []);
    assert!(a.workspace.terminals.is_empty());
    assert_eq!(
        a.message.as_ref().unwrap().text,
        "No pod of deploy/cart has started in the pod list: no log to follow yet."
    );
}

/// Kept and restored: the pane comes back on its workload, titled as
/// before, reading the pods the list has now (one was replaced while
/// podbay was away), each after its last line; a pod that starts later
/// still joins.
#[test]
fn a_kept_pods_log_pane_comes_back_on_its_workloads_pods_of_now() {
    use crate::app::restore::RestoreChoice;
    use crate::app::saved::SavedKind;
    let mut a = on_web();
    a.update(key('l'));
    let (mut saved, _) = a.saved();
    assert_eq!(saved.terminals[0].kind, SavedKind::PodsLogs);
    let at: jiff::Timestamp = "2026-01-01T00:45:00Z".parse().unwrap();
    saved.terminals[0].last_seen.insert("web-1 app".into(), at);

    let (mut b, _) = app(false);
    b.update(Event::Resize(crate::term::Size::new(100, 30)));
    b.update(listed(vec![
        pod("web-1", "Running", "app=web"),
        pod("web-9", "Running", "app=web"),
        pod("cart-1", "Running", "app=cart"),
    ]));
    let effects = b.offer_restore(saved, RestoreChoice::Always, false);
    let later = b.now + jiff::SignedDuration::from_secs(1);
    let effects = [effects, b.update(Event::Tick(later))].concat();
    assert_eq!(
        reads(&effects).expect("its pods read"),
        ["shop/web-1", "shop/web-9"]
    );
    assert!(effects.iter().any(|e| matches!(e,
        Effect::ShowLog { resume_from, .. } if resume_from.get("web-1 app") == Some(&at))));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Follow { .. })),
        "{effects:?}"
    );
    assert_eq!(pane(&b).label(), "shop/deploy/web");
    let effects = b.update(Event::Pods(Feed::Applied(pod(
        "web-10", "Running", "app=web",
    ))));
    assert_eq!(
        reads(&effects).unwrap(),
        ["shop/web-1", "shop/web-10", "shop/web-9"]
    );
}

/// More pods than one pane follows: said, nothing opened.
#[test]
fn too_many_pods_for_one_pane_are_said() {
    let mut a = on_web();
    for i in 10..40 {
        a.update(Event::Pods(Feed::Applied(pod(
            &format!("web-{i}"),
            "Running",
            "app=web",
        ))));
    }
    assert_eq!(a.update(key('l')), []);
    assert!(a.workspace.terminals.is_empty());
    let said = &a.message.as_ref().unwrap().text;
    assert!(
        said.starts_with("deploy/web has 32 pods running, and one pane follows at most 20"),
        "{said}"
    );
}

/// A scale-up past the limit once the pane is open: the first 20 by name
/// are followed, and the pane says so; back under it, the notice goes.
#[test]
fn a_scale_up_past_the_limit_is_said_on_the_pane() {
    let mut a = on_web();
    a.update(key('l'));
    let mut last = Vec::new();
    for i in 10..32 {
        last = a.update(Event::Pods(Feed::Applied(pod(
            &format!("web-{i}"),
            "Running",
            "app=web",
        ))));
    }
    assert_eq!(pane(&a).containers.len(), 20);
    assert!(
        reads(&last).is_none(),
        "past the limit, nothing new is read"
    );
    assert_eq!(
        pane(&a).notice.as_deref(),
        Some("Following 20 of its 24 pods (the first by name): one pane follows at most 20.")
    );
    for i in 20..32 {
        a.update(Event::Pods(Feed::Deleted(pod(
            &format!("web-{i}"),
            "Running",
            "app=web",
        ))));
    }
    a.update(Event::Pods(Feed::Applied(pod(
        "web-5", "Running", "app=web",
    ))));
    assert_eq!(pane(&a).notice, None);
}

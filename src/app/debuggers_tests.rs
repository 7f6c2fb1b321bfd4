use crossterm::event::KeyCode;

use super::*;
use crate::app::tests::{app, code, debuggers, key, listed, row, sim_cluster};
use crate::app::{Event, Severity};
use crate::model::feed::Feed;

/// The app on `:debuggers` over shop/redis-0 (debugger-1 running, a
/// shell by podbay; debugger-2 ended, by kubectl) and payments/ledger
/// (debugger-1 running, debugger-2 ended), and web-1 with none.
fn on_debuggers() -> App {
    let (mut a, _) = app(true);
    a.update(listed(vec![
        PodRow {
            debuggers: debuggers("shop", "redis-0", &[true, false]),
            ..row("shop", "redis-0", "Running")
        },
        PodRow {
            debuggers: debuggers("payments", "ledger", &[false, true]),
            ..row("payments", "ledger", "Running")
        },
        row("shop", "web-1", "Running"),
    ]));
    command(&mut a, "debuggers");
    assert!(matches!(a.view, View::Debuggers(_)));
    a
}

fn command(a: &mut App, line: &str) -> Vec<Effect> {
    a.update(key(':'));
    for c in line.chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter))
}

/// What the view shows, in order: `ns/pod name`.
fn shown(a: &App) -> Vec<String> {
    let View::Debuggers(view) = &a.view else {
        panic!("not the debuggers view");
    };
    view.shown(a.pods.rows())
        .iter()
        .map(|d| format!("{}/{} {}", d.namespace, d.pod, d.name))
        .collect()
}

fn message(a: &App) -> (Severity, String) {
    let m = a.message.as_ref().expect("a message");
    (m.level.clone(), m.text.to_string())
}

#[test]
fn every_debugger_of_the_pods_listed_is_shown_and_sorted_three_ways() {
    let mut a = on_debuggers();
    assert_eq!(
        shown(&a),
        [
            "payments/ledger debugger-1",
            "payments/ledger debugger-2",
            "shop/redis-0 debugger-1",
            "shop/redis-0 debugger-2",
        ]
    );
    a.update(key('S'));
    assert_eq!(
        shown(&a)[..2],
        ["payments/ledger debugger-2", "shop/redis-0 debugger-1"],
        "running first"
    );
    a.update(key('A'));
    assert_eq!(
        shown(&a),
        [
            "payments/ledger debugger-1",
            "shop/redis-0 debugger-1",
            "payments/ledger debugger-2",
            "shop/redis-0 debugger-2",
        ],
        "oldest first"
    );
    a.update(key('N'));
    assert_eq!(shown(&a)[0], "payments/ledger debugger-1");
}

#[test]
fn the_view_is_live_from_the_pod_lists_watch() {
    let mut a = on_debuggers();
    a.update(Event::Pods(Feed::Applied(PodRow {
        debuggers: debuggers("shop", "web-1", &[true]),
        ..row("shop", "web-1", "Running")
    })));
    assert!(shown(&a).contains(&"shop/web-1 debugger-1".to_string()));
    a.update(Event::Pods(Feed::Deleted(row(
        "payments", "ledger", "Running",
    ))));
    assert_eq!(shown(&a).len(), 3, "{:?}", shown(&a));
}

#[test]
fn the_filter_matches_who_added_them_and_esc_clears_it() {
    let mut a = on_debuggers();
    a.update(key('/'));
    for c in "kubectl".chars() {
        a.update(key(c));
    }
    // ↓ while typing moves the debuggers' cursor, never the pod list's
    // hidden behind the view.
    let behind = a.pods.cursor();
    a.update(code(KeyCode::Down));
    let View::Debuggers(view) = &a.view else {
        panic!()
    };
    assert_eq!((view.cursor, a.pods.cursor()), (1, behind));
    a.update(code(KeyCode::Enter));
    assert_eq!(
        shown(&a),
        ["payments/ledger debugger-2", "shop/redis-0 debugger-2"]
    );
    a.update(code(KeyCode::Esc));
    assert_eq!(shown(&a).len(), 4);
    a.update(code(KeyCode::Esc));
    assert!(matches!(a.view, View::Pods));
}

#[test]
fn x_asks_before_stopping_and_only_y_stops() {
    let mut a = on_debuggers();
    a.update(key('S'));
    // payments/ledger debugger-2: running.
    assert!(a.update(key('x')).is_empty());
    let (level, asked) = message(&a);
    assert_eq!(level, Severity::Warning);
    assert!(
        asked.starts_with("y stops debugger-2 in payments/ledger (up "),
        "{asked}"
    );
    assert!(asked.chars().count() <= 80, "{asked}");
    assert!(a.update(key('n')).is_empty());
    assert!(message(&a).1.contains("keeps running in payments/ledger"));

    a.update(key('x'));
    assert_eq!(
        a.update(key('y')),
        vec![Effect::StopDebugger {
            cluster: sim_cluster(),
            pod: PodKey::new("payments", "ledger"),
            name: "debugger-2".into(),
        }]
    );
    a.update(Event::DebuggerStopped(Ok(
        "Stopped debug container debugger-2 in pod payments/ledger: its process 7 ended with SIGTERM."
            .into(),
    )));
    assert_eq!(message(&a).0, Severity::Info);
    a.update(Event::DebuggerStopped(Err(
        "Could not stop it: no kill.".into()
    )));
    assert_eq!(
        message(&a),
        (Severity::Error, "Could not stop it: no kill.".into())
    );
}

#[test]
fn an_ended_debugger_is_not_stopped_nor_attached_to() {
    let mut a = on_debuggers();
    // payments/ledger debugger-1 has ended.
    assert!(a.update(key('x')).is_empty());
    assert_eq!(a.mode, Mode::Normal);
    assert!(
        message(&a).1.contains("has ended already"),
        "{:?}",
        message(&a)
    );
    assert!(a.update(key('a')).is_empty());
    assert!(message(&a).1.contains("nothing to attach to"));
    assert!(a.workspace.is_empty());
}

#[test]
fn a_attaches_a_pane_to_a_running_debugger_and_enter_opens_its_pod() {
    let mut a = on_debuggers();
    a.update(key('j'));
    a.update(key('j'));
    // shop/redis-0 debugger-1 runs.
    let effects = a.update(key('a'));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::OpenSession { key, .. }
            if key.container == "debugger-1" && key.pod == PodKey::new("shop", "redis-0"))),
        "{effects:?}"
    );
    let mut a = on_debuggers();
    a.update(key('j'));
    let effects = a.update(code(KeyCode::Enter));
    assert_eq!(
        effects,
        vec![Effect::WatchPod(
            super::tests::sim_cluster(),
            PodKey::new("payments", "ledger")
        )]
    );
    assert!(matches!(&a.view, View::Pod(view) if view.key == PodKey::new("payments", "ledger")));
}

#[test]
fn keys_the_view_does_not_take_do_nothing_to_the_pods_behind_it() {
    let mut a = on_debuggers();
    for c in ['d', ' ', 'X', 'C', 'l'] {
        assert!(a.update(key(c)).is_empty(), "{c}");
        assert_eq!(a.mode, Mode::Normal, "{c}");
    }
    assert!(a.pods.marks().is_empty());
    assert!(matches!(a.view, View::Debuggers(_)));
}

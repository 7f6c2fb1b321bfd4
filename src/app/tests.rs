use super::*;
use crate::model::Health;

pub(crate) fn row(ns: &str, name: &str, status: &str) -> PodRow {
    PodRow {
        key: PodKey::new(ns, name),
        ready: 1,
        total: 1,
        status: status.into(),
        restarts: 0,
        last_restart: None,
        created: Some("2026-01-01T00:00:00Z".parse().unwrap()),
        node: "node-a1".into(),
        ip: "10.0.0.1".into(),
        labels: format!("app={name}").into(),
        ephemeral: 0,
        health: Health::Good,
    }
}

pub(crate) fn app(all: bool) -> (App, Vec<Effect>) {
    App::new(AppOptions {
        context: "sim".into(),
        contexts: vec!["sim".into(), "sim-dev".into()],
        namespace: "shop".into(),
        all_namespaces: all,
        fallback_namespaces: vec!["payments".into()],
        keymap: Keymap::default(),
        now: "2026-01-01T01:00:00Z".parse().unwrap(),
    })
}

pub(crate) fn key(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

pub(crate) fn code(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub(crate) fn listed(rows: Vec<PodRow>) -> Event {
    Event::Pods(Feed::Listed { scope: None, rows })
}

fn typed(app: &mut App, text: &str) -> Vec<Effect> {
    text.chars().flat_map(|c| app.update(key(c))).collect()
}

#[test]
fn starts_by_watching_the_context_namespace_or_everything() {
    let (app_ns, effects) = app(false);
    assert_eq!(
        effects,
        [Effect::WatchPods(Scope::Namespaces(vec!["shop".into()]))]
    );
    assert_eq!(app_ns.connection, Connection::Connecting);
    let (_, effects) = app(true);
    assert_eq!(effects, [Effect::WatchPods(Scope::All)]);
}

#[test]
fn navigation_moves_and_clamps() {
    let (mut a, _) = app(true);
    a.update(listed(vec![
        row("a", "1", "Running"),
        row("a", "2", "Running"),
        row("a", "3", "Running"),
    ]));
    assert_eq!(a.connection, Connection::Live);
    assert_eq!(a.pods.selected().unwrap().name.as_ref(), "1");
    a.update(key('j'));
    a.update(code(KeyCode::Down));
    a.update(key('j'));
    assert_eq!(a.pods.selected().unwrap().name.as_ref(), "3");
    a.update(key('g'));
    assert_eq!(a.pods.cursor(), 0);
    a.update(Event::Key(KeyEvent::new(
        KeyCode::Char('G'),
        KeyModifiers::SHIFT,
    )));
    assert_eq!(a.pods.cursor(), 2);
    a.update(key('k'));
    assert_eq!(a.pods.cursor(), 1);
}

#[test]
fn live_changes_keep_the_selection_on_its_pod() {
    let (mut a, _) = app(true);
    a.update(listed(vec![
        row("a", "b", "Running"),
        row("a", "d", "Running"),
    ]));
    a.update(key('j'));
    assert_eq!(a.pods.selected().unwrap().name.as_ref(), "d");
    a.update(Event::Pods(Feed::Applied(row("a", "a", "Pending"))));
    a.update(Event::Pods(Feed::Applied(row("a", "c", "Pending"))));
    assert_eq!(a.pods.selected().unwrap().name.as_ref(), "d");
    assert_eq!(a.pods.cursor(), 3);
    a.update(Event::Pods(Feed::Applied(row(
        "a",
        "d",
        "CrashLoopBackOff",
    ))));
    assert_eq!(
        &*a.pods.get(a.pods.selected().unwrap()).unwrap().status,
        "CrashLoopBackOff"
    );
    a.update(Event::Pods(Feed::Deleted(row("a", "d", ""))));
    assert_eq!(
        a.pods.selected().unwrap().name.as_ref(),
        "c",
        "the row above takes over at the end"
    );
}

#[test]
fn filter_narrows_as_you_type_escape_clears_enter_keeps() {
    let (mut a, _) = app(true);
    a.update(listed(vec![
        row("shop", "storefront-x", "Running"),
        row("shop", "cart-y", "Running"),
        row("pay", "ledger", "Running"),
    ]));
    a.update(key('/'));
    typed(&mut a, "crt");
    assert_eq!(a.mode, Mode::Filter("crt".into()));
    assert_eq!(a.pods.visible_len(), 1);
    a.update(code(KeyCode::Backspace));
    assert_eq!(a.mode, Mode::Filter("cr".into()));
    a.update(key('t'));
    a.update(code(KeyCode::Enter));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(a.pods.visible_len(), 1, "Enter keeps the filter");
    a.update(key('/'));
    a.update(code(KeyCode::Esc));
    assert_eq!(a.pods.visible_len(), 3, "Esc clears it");
}

#[test]
fn keys_typed_into_the_filter_are_not_commands() {
    let (mut a, _) = app(true);
    a.update(listed(vec![row("a", "quiet", "Running")]));
    a.update(key('/'));
    let effects = typed(&mut a, "q");
    assert!(effects.is_empty(), "q in the filter is a letter, not quit");
    assert!(!a.quitting);
}

#[test]
fn enter_opens_the_pod_view_and_esc_returns() {
    let (mut a, _) = app(true);
    a.update(listed(vec![row("shop", "web", "Running")]));
    let effects = a.update(code(KeyCode::Enter));
    assert_eq!(effects, [Effect::WatchPod(PodKey::new("shop", "web"))]);
    assert!(matches!(&a.view, View::Pod(v) if v.key == PodKey::new("shop", "web")));
    a.update(Event::PodEvents(Feed::Applied(EventRow {
        name: "e1".into(),
        warning: true,
        reason: "BackOff".into(),
        message: "Back-off".into(),
        count: 3,
        last_seen: None,
        field_path: String::new(),
    })));
    let View::Pod(v) = &a.view else { panic!() };
    assert_eq!(v.events.len(), 1);
    assert_eq!(a.update(code(KeyCode::Esc)), [Effect::StopWatchingPod]);
    assert_eq!(a.view, View::Pods);
}

#[test]
fn command_line_switches_namespace_and_completes() {
    let (mut a, _) = app(false);
    a.update(Event::Namespaces(Feed::Listed {
        scope: None,
        rows: vec!["shop".into(), "payments".into()],
    }));
    a.update(key(':'));
    typed(&mut a, "ns pay");
    a.update(code(KeyCode::Tab));
    assert_eq!(
        a.mode,
        Mode::Command({
            let mut l = command::CommandLine::default();
            l.insert_str("ns payments ");
            l
        })
    );
    let effects = a.update(code(KeyCode::Enter));
    assert_eq!(
        effects,
        [
            Effect::StopWatchingPod,
            Effect::WatchPods(Scope::Namespaces(vec!["payments".into()]))
        ]
    );
    assert_eq!(a.scope.label(), "payments");
    a.update(key(':'));
    typed(&mut a, "ns");
    assert_eq!(
        a.update(code(KeyCode::Enter)),
        [Effect::StopWatchingPod, Effect::WatchPods(Scope::All)]
    );
    a.update(key(':'));
    typed(&mut a, "bogus");
    a.update(code(KeyCode::Enter));
    assert_eq!(a.message.as_ref().unwrap().level, Level::Error);
    a.update(key(':'));
    typed(&mut a, "q");
    assert_eq!(a.update(code(KeyCode::Enter)), [Effect::Quit]);
}

#[test]
fn ctx_checks_the_name_before_switching() {
    let (mut a, _) = app(false);
    a.update(key(':'));
    typed(&mut a, "ctx nope");
    assert_eq!(a.update(code(KeyCode::Enter)), []);
    assert!(
        a.message
            .as_ref()
            .unwrap()
            .text
            .starts_with("No context named \"nope\"")
    );
    a.update(key(':'));
    typed(&mut a, "ctx sim-dev");
    assert_eq!(
        a.update(code(KeyCode::Enter)),
        [Effect::SwitchContext("sim-dev".into())]
    );
    let effects = a.update(Event::Connected {
        context: "sim-dev".into(),
        namespace: "shop".into(),
        contexts: vec!["sim".into(), "sim-dev".into()],
    });
    assert_eq!(
        effects,
        [Effect::WatchPods(Scope::Namespaces(vec!["shop".into()]))]
    );
    assert_eq!(a.context, "sim-dev");
}

#[test]
fn a_refused_cluster_wide_list_falls_back_and_says_why() {
    let (mut a, _) = app(true);
    let denied = Denied {
        verb: "list".into(),
        resource: "pods".into(),
        namespace: None,
    };
    let effects = a.update(Event::Pods(Feed::Forbidden(denied.clone())));
    assert_eq!(
        effects,
        [Effect::WatchPods(Scope::Namespaces(vec![
            "shop".into(),
            "payments".into()
        ]))]
    );
    let message = a.message.clone().unwrap();
    assert_eq!(message.level, Level::Warning);
    assert_eq!(
        message.text,
        "You may not list pods at cluster scope: ask your cluster admin for `list` on `pods`. Showing namespace shop, payments instead."
    );
    // The narrower watches report per namespace; both show.
    a.update(Event::Pods(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![row("shop", "a", "Running")],
    }));
    a.update(Event::Pods(Feed::Listed {
        scope: Some("payments".into()),
        rows: vec![row("payments", "b", "Running")],
    }));
    assert_eq!(a.pods.total(), 2);
    // Denied even there: no loop, a message, and the app carries on.
    assert_eq!(a.update(Event::Pods(Feed::Forbidden(denied))), []);
}

#[test]
fn reconnecting_is_visible_until_data_flows_again() {
    let (mut a, _) = app(true);
    a.update(listed(vec![row("a", "1", "Running")]));
    a.update(Event::Pods(Feed::Reconnecting(
        "Cannot reach the API server.".into(),
    )));
    assert_eq!(a.connection, Connection::Reconnecting);
    a.update(Event::Pods(Feed::Listed {
        scope: None,
        rows: vec![row("a", "1", "Running")],
    }));
    assert_eq!(a.connection, Connection::Live);
}

#[test]
fn help_opens_and_any_key_closes_it() {
    let (mut a, _) = app(true);
    a.update(key('?'));
    assert_eq!(a.mode, Mode::Help);
    assert_eq!(a.update(key('q')), []);
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(a.update(key('q')), [Effect::Quit]);
}

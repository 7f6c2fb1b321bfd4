use super::*;
use crate::model::ContainerState;
use crate::model::feed::Feed;
use crate::model::pod_security::Policy;
use crate::model::session::{SessionEnd, SessionKind};
use crate::model::{EventRow, PodDetail};
use bytes::Bytes;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use terminal::TerminalState;

pub(crate) fn row(ns: &str, name: &str, status: &str) -> PodRow {
    PodRow {
        status: status.into(),
        created: Some("2026-01-01T00:00:00Z".parse().unwrap()),
        node: "node-a1".into(),
        ip: "10.0.0.1".into(),
        labels: format!("app={name}").into(),
        ..PodRow::new(ns, name)
    }
}

/// Debug containers of one pod, `debugger-1`… (running or ended, as
/// `running` says), started an hour apart, the first by podbay.
pub(crate) fn debuggers(
    namespace: &str,
    pod: &str,
    running: &[bool],
) -> Option<std::sync::Arc<[crate::model::debuggers::Debugger]>> {
    let list: Vec<crate::model::debuggers::Debugger> = running
        .iter()
        .enumerate()
        .map(|(i, running)| {
            let started: jiff::Timestamp =
                format!("2025-12-31T{:02}:00:00Z", 20 + i).parse().unwrap();
            crate::model::debuggers::Debugger {
                namespace: namespace.into(),
                pod: pod.into(),
                name: format!("debugger-{}", i + 1),
                image: "busybox:1.36".into(),
                target: (i == 0).then(|| "app".into()),
                state: if *running {
                    ContainerState::Running {
                        since: Some(started),
                    }
                } else {
                    ContainerState::Terminated {
                        exit_code: 0,
                        reason: "Completed".into(),
                        message: String::new(),
                        finished: Some(started),
                    }
                },
                started: Some(started),
                shell: i == 0,
                added_by: Some(if i == 0 { "podbay" } else { "kubectl-debug" }.into()),
            }
        })
        .collect();
    Some(list.into())
}

pub(crate) fn app(all: bool) -> (App, Vec<Effect>) {
    App::new(AppOptions {
        cluster: sim_cluster(),
        context: "sim".into(),
        others: Vec::new(),
        contexts: vec!["sim".into(), "sim-dev".into()],
        namespace: "shop".into(),
        namespace_chosen: true,
        all_namespaces: all,
        fallback_namespaces: vec!["payments".into()],
        keymap: Keymap::default(),
        now: "2026-01-01T01:00:00Z".parse().unwrap(),
        debug_images: vec!["busybox:1.36".into()],
        debug_profile: Profile::General,
        download_dir: ".".into(),
        panes: PaneOptions::default(),
    })
}

/// The cluster `app()` starts on.
pub(crate) fn sim_cluster() -> ClusterId {
    ClusterId::new("sim", "https://127.0.0.1:6443", "admin")
}

/// `container` of `ns/pod` on the cluster `app()` starts on.
pub(crate) fn on_sim(ns: &str, pod: &str, container: &str) -> TerminalKey {
    TerminalKey::new(sim_cluster(), PodKey::new(ns, pod), container)
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
    assert_eq!(app_ns.connection.state(), LinkState::Connecting);
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
    assert_eq!(a.connection.state(), LinkState::Live);
    assert_eq!(a.pods.selected().unwrap().pod.name.as_ref(), "1");
    a.update(key('j'));
    a.update(code(KeyCode::Down));
    a.update(key('j'));
    assert_eq!(a.pods.selected().unwrap().pod.name.as_ref(), "3");
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
    assert_eq!(a.pods.selected().unwrap().pod.name.as_ref(), "d");
    a.update(Event::Pods(Feed::Applied(row("a", "a", "Pending"))));
    a.update(Event::Pods(Feed::Applied(row("a", "c", "Pending"))));
    assert_eq!(a.pods.selected().unwrap().pod.name.as_ref(), "d");
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
        a.pods.selected().unwrap().pod.name.as_ref(),
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
    assert_eq!(
        effects,
        [Effect::WatchPod(sim_cluster(), PodKey::new("shop", "web"))]
    );
    assert!(matches!(&a.view, View::Pod(v) if v.key == PodKey::new("shop", "web")));
    a.update(Event::PodEvents(Feed::Applied(EventRow {
        name: "e1".into(),
        warning: true,
        reason: "BackOff".into(),
        message: "Back-off".into(),
        count: 3,
        last_seen: None,
        field_path: String::new(),
        ..Default::default()
    })));
    let View::Pod(v) = &a.view else { panic!() };
    assert_eq!(v.pod.events.len(), 1);
    assert_eq!(a.update(code(KeyCode::Esc)), [Effect::StopWatchingPod]);
    assert!(matches!(a.view, View::Pods));
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
    assert_eq!(a.message.as_ref().unwrap().level, Severity::Error);
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
        cluster: ClusterId::new("sim-dev", "https://127.0.0.1:6443", "dev"),
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
fn coming_back_to_a_context_finds_the_namespace_it_showed() {
    let (mut a, _) = app(false);
    a.update(key(':'));
    typed(&mut a, "ns payments");
    a.update(code(KeyCode::Enter));
    let connected = |context: &str, namespace: &str| Event::Connected {
        cluster: ClusterId::new(context, "https://127.0.0.1:6443", "u"),
        context: context.into(),
        namespace: namespace.into(),
        contexts: vec!["sim".into(), "sim-dev".into()],
    };
    // A context not seen yet opens on its own namespace…
    assert_eq!(
        a.update(connected("sim-dev", "shop")),
        [Effect::WatchPods(Scope::Namespaces(vec!["shop".into()]))]
    );
    // …and the first one comes back where it was, not on its default.
    assert_eq!(
        a.update(connected("sim", "default")),
        [Effect::WatchPods(Scope::Namespaces(vec![
            "payments".into()
        ]))]
    );
}

#[test]
fn a_namespace_whose_pods_are_refused_is_unavailable_not_empty() {
    let (mut a, _) = app(false);
    let denied = Denied {
        verb: "list".into(),
        resource: "pods".into(),
        namespace: Some("shop".into()),
    };
    assert_eq!(a.update(Event::Pods(Feed::Forbidden(denied.clone()))), []);
    assert_eq!(a.refused_scope(), Some(&denied));
    // Allowed after all (a role granted meanwhile): the list clears it.
    a.update(Event::Pods(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![],
    }));
    assert_eq!(a.refused_scope(), None);
}

#[test]
fn a_refused_list_is_no_longer_loading() {
    let (mut a, _) = app(true);
    a.update(Event::Pods(Feed::Listing { scope: None }));
    assert_eq!(a.pods_loading(), Some((0, None)));
    let denied = Denied {
        verb: "list".into(),
        resource: "pods".into(),
        namespace: None,
    };
    a.update(Event::Pods(Feed::Forbidden(denied.clone())));
    assert_eq!(
        a.pods_loading(),
        None,
        "the header said 'loading 0 pods…' for good"
    );
    // A namespace refused in turn stops loading too; the other goes on.
    a.update(Event::Pods(Feed::Listing {
        scope: Some("shop".into()),
    }));
    a.update(Event::Pods(Feed::Listing {
        scope: Some("payments".into()),
    }));
    a.update(Event::Pods(Feed::Forbidden(Denied {
        namespace: Some("shop".into()),
        ..denied
    })));
    assert_eq!(a.pods_loading(), Some((0, None)), "payments still lists");
    a.update(Event::Pods(Feed::Listed {
        scope: Some("payments".into()),
        rows: vec![],
    }));
    assert_eq!(a.pods_loading(), None);
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
    assert_eq!(message.level, Severity::Warning);
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
    assert_eq!(a.connection.state(), LinkState::Reconnecting);
    assert_eq!(
        a.message.as_ref().unwrap().text,
        "Cannot reach the API server."
    );
    for _ in 0..3 {
        a.update(Event::Tick(a.now));
    }
    assert_eq!(a.connection.state(), LinkState::Reconnecting, "still down");
    a.update(Event::Pods(Feed::Resumed));
    assert_eq!(a.connection.state(), LinkState::Live);
    assert_eq!(
        a.message, None,
        "the trouble sentence goes with the trouble"
    );
}

#[test]
fn a_cut_watch_shows_reconnecting_for_a_moment_even_when_it_resumes_at_once() {
    let (mut a, _) = app(true);
    a.update(listed(vec![row("a", "1", "Running")]));
    a.update(Event::Pods(Feed::Cut));
    a.update(Event::Pods(Feed::Resumed));
    a.update(Event::Pods(Feed::Applied(row("a", "1", "Running"))));
    assert_eq!(a.connection.state(), LinkState::Reconnecting);
    a.update(Event::Tick(a.now));
    a.update(Event::Tick(a.now));
    assert_eq!(a.connection.state(), LinkState::Live);
}

#[test]
fn help_opens_and_any_key_closes_it() {
    let (mut a, _) = app(true);
    a.update(key('?'));
    assert_eq!(a.mode, Mode::Help(0));
    assert_eq!(a.update(key('q')), []);
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(a.update(key('q')), [Effect::Quit]);
}

pub(crate) fn pod_detail(debug_state: Option<ContainerState>) -> PodDetail {
    use crate::model::{ContainerInfo, ContainerKind};
    let container = |kind, name: &str, state| ContainerInfo {
        kind,
        name: name.into(),
        image: "busybox:1.36".into(),
        state,
        ready: true,
        restarts: 0,
        target: None,
        command: vec![],
        args: vec![],
        previous: None,
        stdio: crate::model::Stdio::TERMINAL,
        mounts: Vec::new(),
    };
    let mut containers = vec![container(
        ContainerKind::Regular,
        "app",
        ContainerState::Running { since: None },
    )];
    if let Some(state) = debug_state {
        let mut debug = container(ContainerKind::Ephemeral, "dbg", state);
        debug.target = Some("app".into());
        containers.push(debug);
    }
    PodDetail {
        key: PodKey::new("shop", "web"),
        status: "Running".into(),
        phase: "Running".into(),
        node: "n".into(),
        containers,
        ..Default::default()
    }
}

pub(crate) fn detail_event(d: PodDetail) -> Event {
    Event::Detail(Feed::Applied(d))
}

pub(crate) fn in_pod_view() -> App {
    let (mut a, _) = app(false);
    a.update(Event::Resize(crate::term::Size::new(100, 30)));
    a.update(listed(vec![row("shop", "web", "Running")]));
    a.update(code(KeyCode::Enter));
    a.update(detail_event(pod_detail(None)));
    a
}

pub(crate) fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn terminal_pod(id: TerminalId, d: PodDetail) -> Event {
    Event::TerminalPod {
        id,
        feed: Feed::Applied(d),
    }
}

fn focused(a: &App) -> &super::terminal::Terminal {
    a.workspace.focused_terminal().expect("a focused terminal")
}

#[test]
fn launching_a_debug_container_follows_it_to_an_attached_terminal() {
    let mut a = in_pod_view();
    assert!(a.update(key('d')).is_empty());
    let Mode::Launcher(form) = &a.mode else {
        panic!("launcher expected, got {:?}", a.mode)
    };
    assert_eq!(form.target_name(), Some("app"));
    let name = form.name.clone();
    let effects = a.update(code(KeyCode::Enter));
    let [
        Effect::Launch {
            id,
            key: launched,
            spec,
        },
        Effect::Follow { id: followed, .. },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    assert_eq!(launched.cluster, sim_cluster());
    assert_eq!(
        (
            launched.pod.name.as_ref(),
            spec.name.as_str(),
            spec.target.as_deref()
        ),
        ("web", name.as_str(), Some("app"))
    );
    let id = *id;
    assert_eq!(*followed, id, "the terminal watches its own pod");
    assert_eq!(a.focus, Focus::Workspace);
    assert_eq!(focused(&a).state, TerminalState::Launching);

    // Live status from the terminal's pod watch…
    let mut waiting = pod_detail(None);
    waiting.containers.push(crate::model::ContainerInfo {
        kind: crate::model::ContainerKind::Ephemeral,
        name: name.to_string(),
        image: "busybox:1.36".into(),
        state: ContainerState::Waiting {
            reason: "ContainerCreating".into(),
            message: String::new(),
        },
        ready: false,
        restarts: 0,
        target: Some("app".into()),
        command: vec![],
        args: vec![],
        previous: None,
        stdio: crate::model::Stdio::TERMINAL,
        mounts: Vec::new(),
    });
    assert!(a.update(terminal_pod(id, waiting.clone())).is_empty());
    assert!(
        matches!(&focused(&a).state, TerminalState::Waiting { reason, .. } if reason == "ContainerCreating")
    );

    // …then attach once it runs, replaying what it printed before, at the
    // pane's inner size (100×30 minus the bars and the border).
    let mut running = waiting;
    running.containers[1].state = ContainerState::Running { since: None };
    let effects = a.update(terminal_pod(id, running));
    assert_eq!(
        effects,
        [
            Effect::OpenSession {
                id,
                key: on_sim("shop", "web", &name),
                kind: SessionKind::Attach,
                size: crate::term::Size::new(98, 25),
                replay_log: true,
                stdio: crate::model::Stdio::TERMINAL,
            },
            Effect::RememberImage("busybox:1.36".into())
        ]
    );
    a.update(Event::SessionAttached { id });
    a.update(Event::SessionOutput {
        id,
        bytes: Bytes::from_static(b"early line\r\n# "),
    });
    assert!(focused(&a).grid.text().contains("early line"));

    // Keys go to the shell, encoded; the prefix leaves.
    assert_eq!(
        a.update(key('x')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"x")
        }]
    );
    assert_eq!(
        a.update(ctrl('c')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"\x03")
        }],
        "ctrl-c goes to the shell"
    );
    assert!(a.update(ctrl('b')).is_empty());
    assert_eq!(
        a.update(ctrl('b')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"\x02")
        }]
    );
    assert!(a.update(ctrl('b')).is_empty());
    assert!(
        a.update(key('d')).is_empty(),
        "the session keeps running behind the browser"
    );
    assert_eq!(a.focus, Focus::Browser);
    assert!(matches!(a.view, View::Pod(_)));
    a.update(code(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Workspace, "tab comes back to the panes");
}

#[test]
fn a_failed_launch_reopens_the_form_with_its_values_and_the_reason() {
    let mut a = in_pod_view();
    a.update(key('d'));
    if let Mode::Launcher(form) = &mut a.mode {
        form.command = "sh -c true".into();
    }
    let effects = a.update(code(KeyCode::Enter));
    let [Effect::Launch { id, .. }, ..] = effects.as_slice() else {
        panic!()
    };
    let id = *id;
    let effects = a.update(Event::LaunchFailed {
        id,
        sentence: "You may not patch pods/ephemeralcontainers in namespace shop.".into(),
        refused_by: None,
    });
    assert_eq!(effects, [Effect::CloseSession { id }]);
    let Mode::Launcher(form) = &a.mode else {
        panic!("form expected")
    };
    assert_eq!(form.command, "sh -c true");
    assert_eq!(
        form.error.as_deref(),
        Some("You may not patch pods/ephemeralcontainers in namespace shop.")
    );
    assert!(matches!(a.view, View::Pod(_)));
    assert!(a.workspace.is_empty(), "the pane went with the launch");
    assert_eq!(a.focus, Focus::Browser);
}

#[test]
fn a_pod_security_refusal_reopens_the_form_on_a_profile_that_passes() {
    let mut a = in_pod_view();
    a.update(key('d'));
    let effects = a.update(code(KeyCode::Enter));
    let [Effect::Launch { id, spec, .. }, ..] = effects.as_slice() else {
        panic!()
    };
    assert_eq!(spec.profile, crate::model::debug::Profile::General);
    let message = format!(
        r#"pods "web" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "{}" must not include "SYS_PTRACE" in securityContext.capabilities.add)"#,
        spec.name
    );
    let id = *id;
    a.update(Event::LaunchFailed {
        id,
        sentence: message.clone().into(),
        refused_by: Policy::from_refusal(&message),
    });
    let Mode::Launcher(form) = &a.mode else {
        panic!("form expected")
    };
    assert_eq!(form.profile, crate::model::debug::Profile::Baseline);
    assert_eq!(form.error.as_deref(), Some(message.as_str()));
}

#[test]
fn attach_shell_and_logs_on_the_selected_container() {
    let mut a = in_pod_view();
    a.update(detail_event(pod_detail(Some(ContainerState::Terminated {
        exit_code: 3,
        reason: "Error".into(),
        message: String::new(),
        finished: None,
    }))));
    a.update(key('j'));
    assert!(
        a.update(key('a')).is_empty(),
        "not running: nothing to attach to"
    );
    assert!(
        a.message
            .as_ref()
            .unwrap()
            .text
            .contains("press l for its last run's log, p for the run before")
    );
    let effects = a.update(key('l'));
    assert!(
        matches!(effects.as_slice(), [Effect::Follow { .. }, Effect::ShowLog { key, .. }] if key.container == "dbg"),
        "{effects:?}"
    );
    a.update(code(KeyCode::Esc));
    assert_eq!(a.focus, Focus::Browser);
    a.update(key('k'));
    let effects = a.update(key('s'));
    assert!(
        matches!(effects.as_slice(), [Effect::Follow { .. }, Effect::OpenSession { kind: SessionKind::Exec(_), key, .. }] if key.container == "app"),
        "{effects:?}"
    );
    assert_eq!(a.workspace.panes.len(), 2, "the shell split the log's pane");
}

/// A pod view with a running debug container, attached to with `a`.
pub(crate) fn attached_to_debug_container() -> (App, TerminalId) {
    let mut a = in_pod_view();
    a.update(detail_event(pod_detail(Some(ContainerState::Running {
        since: None,
    }))));
    a.update(key('j'));
    let effects = a.update(key('a'));
    let [
        Effect::Follow { .. },
        Effect::OpenSession {
            id,
            replay_log: false,
            ..
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    let id = *id;
    a.update(Event::SessionAttached { id });
    (a, id)
}

#[test]
fn an_ended_attach_reports_the_containers_own_exit_code() {
    let (mut a, id) = attached_to_debug_container();
    let end = crate::model::session::SessionEnd {
        exit_code: Some(0),
        reason: "exited with code 0".into(),
        disconnected: false,
    };
    a.update(Event::SessionEnded { id, end });
    a.update(terminal_pod(
        id,
        pod_detail(Some(ContainerState::Terminated {
            exit_code: 7,
            reason: "Error".into(),
            message: String::new(),
            finished: None,
        })),
    ));
    assert_eq!(
        focused(&a).state,
        TerminalState::Ended("the container exited with code 7 (Error)".into())
    );
    assert!(
        a.update(code(KeyCode::Enter)).is_empty(),
        "a stray enter keeps the pane and its last screen"
    );
    assert!(focused(&a).id == id);
    assert_eq!(
        a.update(key('x')),
        [Effect::CloseSession { id }],
        "an ended pane closes without asking"
    );
    assert_eq!(a.focus, Focus::Browser);
}

#[test]
fn resizing_a_live_terminal_tells_the_session() {
    let (mut a, id) = attached_to_debug_container();
    assert_eq!(
        a.update(Event::Resize(crate::term::Size::new(120, 40))),
        [Effect::ResizeSession {
            id,
            size: crate::term::Size::new(118, 35)
        }]
    );
    assert!(
        a.update(Event::Resize(crate::term::Size::new(120, 40)))
            .is_empty(),
        "no change, no message"
    );
}

#[test]
fn a_cut_stream_offers_to_reattach_and_r_resumes_it() {
    let (mut a, id) = attached_to_debug_container();
    let cut = crate::model::session::SessionEnd {
        exit_code: None,
        reason: "disconnected: the stream was cut".into(),
        disconnected: true,
    };
    a.update(Event::SessionEnded { id, end: cut });
    assert_eq!(
        focused(&a).state,
        TerminalState::Disconnected("disconnected: the stream was cut".into())
    );
    assert!(a.update(key('y')).is_empty(), "nothing to type into");
    let effects = a.update(key('r'));
    assert!(
        matches!(effects.as_slice(), [Effect::OpenSession { id: same, kind: SessionKind::Attach, replay_log: false, .. }] if *same == id)
    );
    a.update(Event::SessionAttached { id });
    assert_eq!(
        a.update(key('y')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"y")
        }]
    );
}

/// Back to the pod list, `:ctx NAME`, and the runtime's answer for `cluster`.
fn switch_to(a: &mut App, cluster: ClusterId) {
    a.update(ctrl('b'));
    a.update(key('d'));
    a.update(code(KeyCode::Esc));
    a.update(key(':'));
    typed(a, &format!("ctx {}", cluster.context));
    a.update(code(KeyCode::Enter));
    a.update(Event::Connected {
        context: cluster.context.to_string(),
        cluster,
        namespace: "shop".into(),
        contexts: vec!["sim".into(), "sim-dev".into()],
    });
}

#[test]
fn a_terminal_is_never_shared_across_clusters_or_credentials() {
    let (mut a, first) = attached_to_debug_container();
    // Another cluster with a pod of the same name: attaching opens a new
    // stream on that cluster, not a second pane on the first one's.
    let other = ClusterId::new("sim-dev", "https://10.9.9.9:6443", "dev");
    switch_to(&mut a, other.clone());
    a.update(listed(vec![row("shop", "web", "Running")]));
    a.update(code(KeyCode::Enter));
    a.update(detail_event(pod_detail(Some(ContainerState::Running {
        since: None,
    }))));
    a.update(key('j'));
    let effects = a.update(key('a'));
    let Some(Effect::OpenSession {
        id, key: opened, ..
    }) = effects
        .iter()
        .find(|e| matches!(e, Effect::OpenSession { .. }))
    else {
        panic!("a new session on the other cluster: {effects:?}")
    };
    assert_ne!(*id, first);
    assert_eq!(opened.cluster, other);
    assert_eq!(
        a.workspace.viewers(first),
        1,
        "the first terminal is not shared"
    );
    // Its re-attach still goes to the cluster it was opened on.
    a.update(Event::SessionEnded {
        id: first,
        end: SessionEnd {
            exit_code: None,
            reason: "cut".into(),
            disconnected: true,
        },
    });
    a.focus = Focus::Workspace;
    let pane = a.workspace.panes_of(first).next();
    a.workspace.focused = pane;
    let effects = a.update(key('r'));
    let [Effect::OpenSession { key: again, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(
        again.cluster,
        sim_cluster(),
        "re-attach stays on its own cluster"
    );

    // The same server as another user is another cluster too.
    let viewer = ClusterId::new("sim", "https://127.0.0.1:6443", "viewer");
    assert_ne!(viewer, sim_cluster());
    assert_eq!(a.contexts_used, ["sim", "sim-dev"]);
}

#[test]
fn quitting_with_live_sessions_asks_first() {
    let (mut a, _) = attached_to_debug_container();
    a.update(ctrl('b'));
    a.update(key('d'));
    assert_eq!(a.focus, Focus::Browser);
    assert!(a.update(key('q')).is_empty(), "q asks instead of quitting");
    assert_eq!(a.mode, Mode::ConfirmQuit);
    assert_eq!(
        a.message.as_ref().map(|m| m.text.as_str()),
        Some("1 session is live (1 attach). Quit? y/n")
    );
    assert!(a.update(key('n')).is_empty());
    assert!(!a.quitting);
    assert_eq!(a.mode, Mode::Normal);
    // ctrl-c and :q ask the same question; y quits.
    assert!(a.update(ctrl('c')).is_empty());
    assert_eq!(a.mode, Mode::ConfirmQuit);
    assert_eq!(a.update(key('y')), [Effect::Quit]);
    assert!(a.quitting);

    let (mut b, _) = attached_to_debug_container();
    b.options.confirm_quit = false;
    b.update(ctrl('b'));
    b.update(key('d'));
    assert_eq!(
        b.update(key('q')),
        [Effect::Quit],
        "the config may turn it off"
    );

    let (mut c, _) = app(false);
    assert_eq!(
        c.update(key('q')),
        [Effect::Quit],
        "nothing live: no question"
    );
}

#[test]
fn the_live_sentence_counts_sessions_by_kind() {
    use terminal::TerminalKind::{Attach, Debug, Shell};
    assert_eq!(
        live_sentence(&[Debug, Shell, Debug]),
        "3 sessions are live (2 debug, 1 shell)"
    );
    assert_eq!(live_sentence(&[Attach]), "1 session is live (1 attach)");
}

#[test]
fn zero_goes_back_to_the_namespace_it_left() {
    let (mut a, _) = app(false);
    a.update(key(':'));
    typed(&mut a, "ns payments");
    a.update(code(KeyCode::Enter));
    assert_eq!(
        a.update(key('0')).last(),
        Some(&Effect::WatchPods(Scope::All))
    );
    assert_eq!(
        a.update(key('0')).last(),
        Some(&Effect::WatchPods(Scope::Namespaces(vec![
            "payments".into()
        ]))),
        "back to payments, not the context's shop"
    );
}

#[test]
fn the_pod_view_starts_on_the_first_regular_container_and_drops_old_notices() {
    use crate::model::{ContainerInfo, ContainerKind};
    let (mut a, _) = app(false);
    a.update(listed(vec![row("shop", "web", "Running")]));
    a.message = Some(info("Recording saved: /tmp/x.cast."));
    a.update(code(KeyCode::Enter));
    assert_eq!(a.message, None, "a notice of the last screen is gone");
    let mut d = pod_detail(None);
    d.containers.insert(
        0,
        ContainerInfo {
            kind: ContainerKind::Init,
            name: "init-config".into(),
            ..d.containers[0].clone()
        },
    );
    a.update(detail_event(d));
    let View::Pod(view) = &a.view else {
        panic!("pod view")
    };
    assert_eq!(view.cursor, 1, "as kubectl: the first regular container");
}

#[test]
fn a_start_error_says_the_runtimes_message() {
    let (mut a, id) = attached_to_debug_container();
    a.update(Event::SessionEnded {
        id,
        end: SessionEnd {
            exit_code: None,
            reason: "exited".into(),
            disconnected: false,
        },
    });
    let ended = pod_detail(Some(ContainerState::Terminated {
        exit_code: 128,
        reason: "StartError".into(),
        message: "exec: \"nosuchcmd\": executable file not found in $PATH".into(),
        finished: None,
    }));
    a.update(terminal_pod(id, ended));
    assert_eq!(
        a.workspace.terminals[&id].state,
        TerminalState::Ended(
            "the container exited with code 128 (StartError): exec: \"nosuchcmd\": executable file not found in $PATH".into()
        )
    );
}

#[test]
fn a_followed_log_that_ends_says_why_and_r_resumes_it_while_the_container_runs() {
    let end = || crate::model::session::SessionEnd {
        exit_code: None,
        reason: "dbg's log stream ended".into(),
        disconnected: true,
    };
    let log_id = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::ShowLog {
                id,
                previous: false,
                ..
            } => Some(*id),
            _ => None,
        })
    };
    let mut a = in_pod_view();
    a.update(detail_event(pod_detail(Some(ContainerState::Running {
        since: None,
    }))));
    a.update(key('j'));
    let id = log_id(&a.update(key('l'))).expect("a log pane");
    a.update(Event::SessionEnded { id, end: end() });
    assert_eq!(
        focused(&a).state,
        TerminalState::Disconnected("dbg's log stream ended".into())
    );
    assert_eq!(
        log_id(&a.update(key('r'))),
        Some(id),
        "the same pane asks again"
    );

    let mut a = in_pod_view();
    a.update(detail_event(pod_detail(Some(ContainerState::Terminated {
        exit_code: 0,
        reason: "Completed".into(),
        message: String::new(),
        finished: None,
    }))));
    a.update(key('j'));
    let id = log_id(&a.update(key('l'))).expect("a log pane");
    a.update(Event::SessionEnded { id, end: end() });
    assert_eq!(
        focused(&a).state,
        TerminalState::Ended("end of dbg's log: the container is not running".into())
    );
    assert!(
        log_id(&a.update(key('r'))).is_none(),
        "nothing more will come"
    );
}

#[test]
fn c_copies_the_pods_name_through_the_terminal() {
    let mut a = in_pod_view();
    let effects = a.update(key('c'));
    let View::Pod(view) = &a.view else {
        panic!("the pod view")
    };
    assert_eq!(effects, [Effect::Copy(view.key.name.to_string())]);
    assert!(
        a.message
            .as_ref()
            .unwrap()
            .text
            .contains("to the clipboard")
    );
}

#[test]
fn a_debug_container_that_exits_before_the_attach_shows_its_log_once_and_its_exit_code() {
    let mut a = in_pod_view();
    a.update(key('d'));
    let name = match &a.mode {
        Mode::Launcher(form) => form.name.clone(),
        other => panic!("launcher expected, got {other:?}"),
    };
    let effects = a.update(code(KeyCode::Enter));
    let Some(Effect::Launch { id, .. }) = effects.first() else {
        panic!("{effects:?}")
    };
    let id = *id;
    let mut exited = pod_detail(None);
    exited.containers.push(crate::model::ContainerInfo {
        kind: crate::model::ContainerKind::Ephemeral,
        name: name.to_string(),
        state: ContainerState::Terminated {
            exit_code: 3,
            reason: "Error".into(),
            message: String::new(),
            finished: None,
        },
        ..exited.containers[0].clone()
    });
    let effects = a.update(terminal_pod(id, exited));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::ShowLog {
                previous: false,
                follow: false,
                ..
            }]
        ),
        "read once, not followed: {effects:?}"
    );
    a.update(Event::SessionEnded {
        id,
        end: SessionEnd {
            exit_code: None,
            reason: format!("end of {name}'s log").into(),
            disconnected: false,
        },
    });
    assert_eq!(
        a.workspace.terminals[&id].state,
        TerminalState::Ended("the container exited with code 3 (Error)".into())
    );
}

#[test]
fn delete_asks_first_and_only_y_deletes() {
    let (mut a, _) = app(false);
    a.update(listed(vec![row("shop", "web", "Running")]));
    assert_eq!(a.update(key('X')), []);
    assert_eq!(
        a.mode,
        Mode::ConfirmDelete(sim_cluster(), PodKey::new("shop", "web"))
    );
    // Anything but y keeps the pod, and the key does nothing else.
    assert_eq!(a.update(key('q')), []);
    assert_eq!(a.mode, Mode::Normal);
    assert!(a.message.as_ref().unwrap().text.contains("was not deleted"));
    a.update(key('X'));
    assert_eq!(
        a.update(key('y')),
        [Effect::DeletePod {
            cluster: sim_cluster(),
            pod: PodKey::new("shop", "web")
        }]
    );
    let refused = "You (sim-viewer) may not delete pods in namespace shop.".to_string();
    a.update(Event::PodDeleted {
        key: PodKey::new("shop", "web"),
        outcome: Err(refused.clone()),
    });
    assert_eq!(a.message.as_ref().unwrap().text, refused);
    assert_eq!(a.message.as_ref().unwrap().level, Severity::Error);
}

#[test]
fn e_runs_a_typed_command_in_the_selected_container() {
    let mut a = in_pod_view();
    a.update(key('e'));
    let Mode::Command(line) = &a.mode else {
        panic!("the command line, prefilled: {:?}", a.mode);
    };
    assert_eq!(line.text(), "exec ");
    typed(&mut a, "ps -ef");
    let effects = a.update(code(KeyCode::Enter));
    let opened = effects.iter().find_map(|e| match e {
        Effect::OpenSession { key, kind, .. } => Some((key.clone(), kind.clone())),
        _ => None,
    });
    assert_eq!(
        opened,
        Some((
            on_sim("shop", "web", "app"),
            SessionKind::Exec(vec!["ps".into(), "-ef".into()])
        ))
    );
    assert_eq!(focused(&a).kind, TerminalKind::Exec);
}

#[test]
fn describe_from_the_list_follows_the_pod_and_esc_goes_back_to_the_list() {
    let (mut a, _) = app(false);
    a.update(Event::Resize(crate::term::Size::new(80, 24)));
    a.update(listed(vec![row("shop", "web", "Running")]));
    assert_eq!(
        a.update(key('D')),
        [Effect::WatchPod(sim_cluster(), PodKey::new("shop", "web"))]
    );
    a.update(detail_event(pod_detail(None)));
    let View::Pod(view) = &a.view else {
        panic!("the pod view");
    };
    let Page::Describe(text) = &view.page else {
        panic!("the describe page");
    };
    assert!(text.lines().iter().any(|l| l == "Containers:"));
    assert_eq!(a.update(code(KeyCode::Esc)), [Effect::StopWatchingPod]);
    assert!(matches!(a.view, View::Pods));
}

#[test]
fn the_events_view_filters_reads_one_in_full_and_goes_back_to_its_pod() {
    let mut a = in_pod_view();
    assert_eq!(
        a.update(key('E')),
        [Effect::WatchEvents(
            sim_cluster(),
            Scope::Namespaces(vec!["shop".into()])
        )]
    );
    let event = |name: &str, reason: &str, message: &str| EventRow {
        name: name.into(),
        reason: reason.into(),
        message: message.into(),
        namespace: "shop".into(),
        object: "pod/web".into(),
        ..Default::default()
    };
    a.update(Event::Events(Feed::Listed {
        scope: None,
        rows: vec![
            event("a", "Scheduled", "Successfully assigned shop/web to n"),
            event("b", "BackOff", "Back-off restarting failed container"),
        ],
    }));
    let View::Events(view) = &a.view else {
        panic!("the events view");
    };
    assert_eq!(view.visible()[0].name, "b", "newest first");
    a.update(key('/'));
    typed(&mut a, "assigned");
    a.update(code(KeyCode::Enter));
    let View::Events(view) = &a.view else {
        panic!("the events view");
    };
    assert_eq!(view.visible().len(), 1);
    a.update(code(KeyCode::Enter));
    let View::Events(view) = &a.view else {
        panic!("the events view");
    };
    let text = view.reading.as_ref().expect("the event in full");
    assert!(
        text.lines()
            .iter()
            .any(|l| l.contains("Successfully assigned"))
    );
    // esc: the event, then the filter, then back to the pod it came from.
    a.update(code(KeyCode::Esc));
    a.update(code(KeyCode::Esc));
    assert_eq!(
        a.update(code(KeyCode::Esc)),
        [Effect::WatchPod(sim_cluster(), PodKey::new("shop", "web"))]
    );
}

#[test]
fn a_log_pane_reads_again_with_timestamps_a_window_or_every_container() {
    let mut a = in_pod_view();
    let log_of = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::ShowLog {
                containers,
                options,
                fresh,
                ..
            } => Some((containers.clone(), *options, *fresh)),
            _ => None,
        })
    };
    let (_, options, fresh) = log_of(&a.update(key('l'))).expect("a log stream");
    assert_eq!(options.tail, Some(1000), "the configured tail");
    assert!(!options.timestamps && !fresh);
    // In the pane: t shows timestamps, reading the log again from the start.
    let (_, options, fresh) = log_of(&a.update(key('t'))).expect("read again");
    assert!(options.timestamps && fresh);
    // w cuts long lines in the grid, at each width the pane takes, where
    // what was read already is: nothing is read again.
    assert!(log_of(&a.update(key('w'))).is_none());
    assert!(focused(&a).log.cut && focused(&a).grid.is_cut());
    a.update(key('w'));
    assert!(!focused(&a).log.cut && !focused(&a).grid.is_cut());
    // :since 10m: a window instead of the tail.
    a.update(Event::Key(KeyEvent::new(
        KeyCode::F(12),
        KeyModifiers::NONE,
    )));
    assert_eq!(a.focus, Focus::Browser);
    a.update(key(':'));
    typed(&mut a, "since 10m");
    a.update(key('\t'));
    let effects = a.update(code(KeyCode::Enter));
    let (_, options, _) = log_of(&effects).expect("read from ten minutes ago");
    assert_eq!((options.since_seconds, options.tail), (Some(600), None));
    // L in the pod view: every container of the pod in one pane.
    assert_eq!(a.focus, Focus::Browser);
    let (containers, _, _) = log_of(&a.update(key('L'))).expect("all logs");
    assert_eq!(containers, ["app"]);
    assert_eq!(focused(&a).kind, TerminalKind::AllLogs);
}

#[test]
fn f_folds_finished_debug_containers_and_shows_them_again() {
    let mut a = in_pod_view();
    let exited = ContainerState::Terminated {
        exit_code: 0,
        reason: "Completed".into(),
        message: String::new(),
        finished: None,
    };
    a.update(detail_event(pod_detail(Some(exited))));
    let names = |a: &App| -> (Vec<String>, usize, Option<String>) {
        let View::Pod(view) = &a.view else {
            panic!("the pod view")
        };
        (
            view.listed().iter().map(|c| c.name.clone()).collect(),
            view.folded(),
            view.selected().map(|c| c.name.clone()),
        )
    };
    a.update(key('j'));
    assert_eq!(
        names(&a),
        (vec!["app".into(), "dbg".into()], 0, Some("dbg".into()))
    );
    a.update(key('f'));
    // Folded: the cursor goes to a container still listed.
    assert_eq!(names(&a), (vec!["app".into()], 1, Some("app".into())));
    // The next pod opens folded too.
    a.update(code(KeyCode::Esc));
    a.update(code(KeyCode::Enter));
    a.update(detail_event(pod_detail(Some(ContainerState::Terminated {
        exit_code: 1,
        reason: "Error".into(),
        message: String::new(),
        finished: None,
    }))));
    assert_eq!(names(&a).1, 1);
    a.update(key('f'));
    assert_eq!(
        names(&a),
        (vec!["app".into(), "dbg".into()], 0, Some("app".into()))
    );
}

#[test]
fn events_of_several_namespaces_are_listed_side_by_side() {
    let (mut a, _) = app(false);
    a.update(key(':'));
    typed(&mut a, "events");
    a.update(code(KeyCode::Enter));
    let event = |ns: &str, name: &str| EventRow {
        name: name.into(),
        namespace: ns.into(),
        ..Default::default()
    };
    for (ns, name) in [("shop", "a"), ("payments", "b")] {
        a.update(Event::Events(Feed::Listed {
            scope: Some(ns.into()),
            rows: vec![event(ns, name)],
        }));
    }
    // The same name in another namespace is another event.
    a.update(Event::Events(Feed::Applied(event("payments", "a"))));
    let View::Events(view) = &a.view else {
        panic!("the events view")
    };
    let mut seen: Vec<(String, String)> = view
        .rows
        .iter()
        .map(|e| (e.namespace.clone(), e.name.clone()))
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("payments".to_string(), "a".to_string()),
            ("payments".into(), "b".into()),
            ("shop".into(), "a".into())
        ]
    );
}

#[test]
fn the_events_view_keeps_its_selection_recovers_and_ignores_pod_keys() {
    let (mut a, _) = app(false);
    a.update(listed(vec![row("shop", "web", "Running")]));
    a.update(key('E'));
    let event = |name: &str, at: &str| EventRow {
        name: name.into(),
        namespace: "shop".into(),
        last_seen: Some(at.parse().unwrap()),
        ..Default::default()
    };
    a.update(Event::Events(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![event("old", "2026-01-01T00:00:00Z")],
    }));
    a.update(Event::Events(Feed::Reconnecting(
        "Cannot reach the API server.".into(),
    )));
    // A newer event arrives above the selected one, which stays selected.
    a.update(Event::Events(Feed::Applied(event(
        "new",
        "2026-01-01T00:05:00Z",
    ))));
    let View::Events(view) = &a.view else {
        panic!("the events view")
    };
    assert_eq!(view.trouble, None, "events flow again");
    assert_eq!(view.visible()[view.cursor].name, "old");
    // Keys about a pod do nothing here (no pod is selected).
    assert_eq!(a.update(key('d')), []);
    assert_eq!(a.update(key('l')), []);
    assert!(matches!(a.view, View::Events(_)));
}

#[test]
fn every_sentence_of_the_run_is_kept_and_shown_by_m() {
    let (mut a, _) = app(false);
    a.update(Event::Pods(Feed::Reconnecting(
        "Cannot reach the API server: refused. podbay keeps retrying.".into(),
    )));
    a.update(listed(vec![row("shop", "web", "Running")]));
    a.update(key(':'));
    typed(&mut a, "ns nope nope");
    a.update(code(KeyCode::Enter));
    assert!(a.said.len() >= 2, "{:?}", a.said);
    a.update(code(KeyCode::Esc));
    a.update(key('M'));
    let View::Messages(reader) = &a.view else {
        panic!("the messages view: {:?}", a.view)
    };
    let text = reader.lines().join("\n");
    assert!(
        text.contains("warning  Cannot reach the API server"),
        "{text}"
    );
    assert!(text.starts_with("01:00:00"), "time-stamped: {text}");
    a.update(code(KeyCode::Esc));
    assert!(matches!(a.view, View::Pods));
    // `:messages` too.
    a.update(key(':'));
    typed(&mut a, "messages");
    a.update(code(KeyCode::Enter));
    assert!(matches!(a.view, View::Messages(_)));
}

fn page(rows: Vec<PodRow>, loaded: usize, expected: Option<usize>) -> Event {
    Event::Pods(Feed::Page {
        scope: None,
        rows,
        loaded,
        expected,
    })
}

#[test]
fn a_trouble_message_stays_while_pages_come_and_goes_when_the_list_is_whole() {
    let (mut a, _) = app(true);
    let trouble = "The API server's list did not end after 2000 pages and 2000 rows: podbay stops a list at 1000000 rows. podbay keeps retrying.";
    a.update(Event::Pods(Feed::Reconnecting(trouble.into())));
    a.update(Event::Pods(Feed::Listing { scope: None }));
    a.update(page(vec![row("a", "1", "Running")], 1, None));
    assert_eq!(
        a.message.as_ref().map(|m| &*m.text),
        Some(trouble),
        "a list that may never end keeps its warning"
    );
    a.update(Event::Pods(Feed::Listed {
        scope: None,
        rows: vec![row("a", "2", "Running")],
    }));
    assert!(a.message.is_none(), "the list is whole: {:?}", a.message);
}

#[test]
fn a_first_list_is_shown_as_its_pages_come_and_a_relist_replaces_it_whole() {
    let (mut a, _) = app(true);
    a.update(Event::Pods(Feed::Listing { scope: None }));
    assert_eq!(a.pods_loading(), Some((0, None)));
    a.update(page(
        vec![row("a", "1", "Running"), row("a", "2", "Running")],
        2,
        Some(5),
    ));
    assert_eq!(a.pods.total(), 2, "the first page is on screen");
    assert_eq!(a.pods_loading(), Some((2, Some(5))));
    assert_eq!(a.connection.state(), LinkState::Live);
    a.update(key('j'));
    a.update(page(vec![row("a", "0", "Running")], 3, Some(5)));
    assert_eq!(
        a.pods.selected().unwrap().pod.name.as_ref(),
        "2",
        "a later page does not move the selection"
    );
    a.update(Event::Pods(Feed::Listed {
        scope: None,
        rows: vec![row("b", "3", "Running"), row("b", "4", "Running")],
    }));
    assert_eq!(a.pods.total(), 5);
    assert_eq!(a.pods_loading(), None, "whole");

    // A relist (after a 410) keeps the rows shown until it is whole.
    a.update(Event::Pods(Feed::Listing { scope: None }));
    a.update(page(vec![row("a", "1", "Running")], 1, Some(2)));
    assert_eq!(a.pods.total(), 5, "nothing vanishes meanwhile");
    assert_eq!(a.pods_loading(), None, "rows are shown: no loading count");
    a.update(Event::Pods(Feed::Listed {
        scope: None,
        rows: vec![row("c", "9", "Running")],
    }));
    let names: Vec<String> = a.pods.rows().map(|r| r.key.to_string()).collect();
    assert_eq!(names, ["a/1", "c/9"], "then replaced whole");

    // A first list that starts over drops the pages it had shown.
    let (mut b, _) = app(true);
    b.update(Event::Pods(Feed::Listing { scope: None }));
    b.update(page(vec![row("a", "1", "Running")], 1, Some(3)));
    b.update(Event::Pods(Feed::Listing { scope: None }));
    assert_eq!(b.pods.total(), 0);
    b.update(Event::Pods(Feed::Listed {
        scope: None,
        rows: vec![row("a", "2", "Running")],
    }));
    assert_eq!(b.pods.total(), 1);
}

#[test]
fn ctrl_c_cancels_a_form_or_the_filter_before_it_quits() {
    let mut a = in_pod_view();
    a.update(key('d'));
    assert!(matches!(a.mode, Mode::Launcher(_)));
    assert!(a.update(ctrl('c')).is_empty(), "the form is cancelled");
    assert_eq!(a.mode, Mode::Normal);
    assert!(!a.quitting);

    let (mut b, _) = app(false);
    b.update(key('/'));
    for c in "redis".chars() {
        b.update(key(c));
    }
    assert!(matches!(b.mode, Mode::Filter(_)));
    assert!(b.update(ctrl('c')).is_empty());
    assert_eq!(b.mode, Mode::Normal);
    assert!(!b.quitting);
    assert_eq!(b.update(ctrl('c')), [Effect::Quit], "then ctrl-c quits");
}

#[test]
fn a_log_pane_says_it_takes_no_typing_and_closes_only_on_its_keys() {
    let mut a = in_pod_view();
    a.update(key('l'));
    let panes = a.workspace.panes.len();
    for c in "ls -l".chars() {
        assert!(a.update(key(c)).is_empty(), "{c} does nothing");
    }
    assert!(a.update(code(KeyCode::Enter)).is_empty());
    assert_eq!(a.workspace.panes.len(), panes, "no pane closed");
    assert!(
        a.message
            .as_ref()
            .is_some_and(|m| m.text.starts_with("A log pane takes no typing")),
        "{:?}",
        a.message
    );
}

#[test]
fn a_feed_that_keeps_retrying_says_its_sentence_once_then_when_it_changes() {
    let (mut a, _) = app(true);
    a.update(listed(vec![row("a", "1", "Running")]));
    let down = "Cannot reach the API server. podbay keeps retrying.";
    for _ in 0..5 {
        a.update(Event::Pods(Feed::Reconnecting(down.into())));
        // The status line moves on (another sentence, a key) between tries.
        a.message = None;
        a.update(Event::Tick(a.now));
    }
    let said = |a: &App, text: &str| a.said.iter().filter(|(_, m)| m.text == text).count();
    assert_eq!(said(&a, down), 1, "said once");
    let other = "The API server answered 503. podbay keeps retrying.";
    a.update(Event::Pods(Feed::Reconnecting(other.into())));
    assert_eq!(said(&a, other), 1, "a new sentence is said");
    assert_eq!(a.message.as_ref().map(|m| m.text.as_str()), Some(other));
}

#[test]
fn slash_starts_a_new_query_and_up_brings_the_last_one_back() {
    let (mut a, _) = app(true);
    a.update(listed(vec![
        row("shop", "redis-0", "Running"),
        row("shop", "cart-y", "Running"),
    ]));
    a.update(key('/'));
    typed(&mut a, "redis");
    a.update(code(KeyCode::Enter));
    assert_eq!(a.pods.visible_len(), 1);
    a.update(key('/'));
    typed(&mut a, "cart");
    assert_eq!(a.mode, Mode::Filter("cart".into()), "not rediscart");
    assert_eq!(a.pods.visible_len(), 1);
    a.update(code(KeyCode::Enter));
    a.update(key('/'));
    assert_eq!(a.pods.visible_len(), 2, "a new query shows every pod");
    a.update(code(KeyCode::Up));
    assert_eq!(
        a.mode,
        Mode::Filter("cart".into()),
        "the last query, a key away"
    );
    assert_eq!(a.pods.visible_len(), 1);
}

#[test]
fn a_filter_does_not_follow_into_another_cluster_silently() {
    let (mut a, _) = app(true);
    a.update(listed(vec![row("shop", "redis-0", "Running")]));
    a.update(key('/'));
    typed(&mut a, "redis");
    a.update(code(KeyCode::Enter));
    let other = ClusterId::new("sim-dev", "https://10.9.9.9:6443", "dev");
    a.update(Event::Connected {
        context: other.context.to_string(),
        cluster: other,
        namespace: "shop".into(),
        contexts: vec!["sim".into(), "sim-dev".into()],
    });
    a.update(listed(vec![
        row("shop", "web-1", "Running"),
        row("shop", "web-2", "Running"),
    ]));
    assert_eq!(
        a.pods.visible_len(),
        2,
        "every pod of the new cluster shows"
    );
    assert!(
        a.message
            .as_ref()
            .is_some_and(|m| m.text.contains("the filter \"redis\" is cleared")),
        "{:?}",
        a.message
    );
    a.update(key('/'));
    a.update(code(KeyCode::Up));
    assert_eq!(a.mode, Mode::Filter("redis".into()), "a key away");
}

#[test]
fn a_namespace_that_does_not_exist_is_said_with_the_close_names() {
    let (mut a, _) = app(false);
    a.update(Event::Namespaces(Feed::Listed {
        scope: None,
        rows: vec!["payments".into(), "shop".into(), "kube-system".into()],
    }));
    a.update(key(':'));
    typed(&mut a, "ns paymnts");
    a.update(code(KeyCode::Enter));
    a.update(listed(vec![]));
    assert_eq!(a.missing_namespace(), Some(("paymnts", vec!["payments"])));
    a.update(key(':'));
    typed(&mut a, "ns shop");
    a.update(code(KeyCode::Enter));
    a.update(listed(vec![]));
    assert_eq!(
        a.missing_namespace(),
        None,
        "an empty namespace that exists"
    );
    assert_eq!(super::listing::edit_distance("paymnts", "payments"), 1);
    assert_eq!(super::listing::edit_distance("", "abc"), 3);
}

/// `C` follows `podbay debug --copy-to`'s rule: the configured profile,
/// or, where the namespace's Pod Security refuses the copy made with it,
/// the strongest one it admits, said.
#[test]
fn a_copy_takes_the_profile_the_namespace_admits_as_the_command_line_does() {
    let copy_in = |level: Option<&str>| {
        let mut a = in_pod_view();
        let mut detail = pod_detail(None);
        detail.manifest = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]},
        }))
        .unwrap();
        a.update(detail_event(detail));
        if let Some(level) = level {
            let labels = std::collections::BTreeMap::from([(
                "pod-security.kubernetes.io/enforce".to_string(),
                level.to_string(),
            )]);
            a.update(Event::PodSecurity(Some(Policy::from_labels(&labels))));
        }
        a.update(key('C'));
        assert!(matches!(a.mode, Mode::CopyPod(_)), "{:?}", a.mode);
        let effects = a.update(code(KeyCode::Enter));
        let pod = effects
            .iter()
            .find_map(|e| match e {
                Effect::CreatePod { pod, .. } => Some(pod.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("a pod to create: {effects:?} {:?}", a.message));
        let message = a.message.as_ref().map(|m| m.text.as_str().to_string());
        (pod, message)
    };
    let refused = |level, pod: &k8s_openapi::api::core::v1::Pod| {
        !crate::model::pod_security::evaluate(
            &crate::model::pod_security::LevelVersion::latest(level),
            pod,
        )
        .is_empty()
    };
    use crate::model::pod_security::Level;
    let (free, said) = copy_in(None);
    assert!(refused(Level::Baseline, &free), "general, as configured");
    assert_eq!(said, None);
    let (baseline, said) = copy_in(Some("baseline"));
    assert!(!refused(Level::Baseline, &baseline));
    assert!(
        refused(Level::Restricted, &baseline),
        "baseline, not weaker"
    );
    assert_eq!(
        said.as_deref(),
        Some(
            "shop enforces Pod Security \"baseline\": the copy runs with profile baseline instead of general."
        )
    );
    let (restricted, said) = copy_in(Some("restricted"));
    assert!(!refused(Level::Restricted, &restricted));
    assert!(said.is_some_and(|s| s.contains("profile restricted instead of general")));
}

/// Every text field is typed with the one line editor: in the launcher's
/// name, ctrl-u clears it and ← moves the cursor; in the filter too.
#[test]
fn forms_and_the_filter_edit_text_as_a_shell_does() {
    let mut a = in_pod_view();
    a.update(key('d'));
    a.update(code(KeyCode::Tab)); // image → name
    a.update(ctrl('u'));
    typed(&mut a, "ab");
    a.update(code(KeyCode::Left));
    typed(&mut a, "X");
    let Mode::Launcher(form) = &a.mode else {
        panic!("the launcher: {:?}", a.mode)
    };
    assert_eq!(form.name, "aXb");
    assert_eq!(form.name.split_at_cursor(), ("aX", "b"));
    a.update(code(KeyCode::Esc));
    a.update(code(KeyCode::Esc));

    let (mut b, _) = app(false);
    b.update(listed(vec![row("shop", "cart", "Running")]));
    b.update(key('/'));
    typed(&mut b, "crt");
    b.update(code(KeyCode::Left));
    b.update(code(KeyCode::Left));
    typed(&mut b, "a");
    let Mode::Filter(query) = &b.mode else {
        panic!("the filter: {:?}", b.mode)
    };
    assert_eq!(query, &"cart");
    assert_eq!(b.pods.query(), Some("cart"));
}

/// Enter on a node reads its pods of every namespace; where that is
/// refused (a user of one namespace), the list's are shown and why.
#[test]
fn a_nodes_pods_are_read_in_every_namespace_or_said_why_not() {
    use crate::model::node::NodeRow;
    let (mut a, _) = app(false);
    let mut here = row("shop", "web", "Running");
    here.node = "node-1".into();
    a.update(listed(vec![here]));
    a.update(key('O'));
    let node = NodeRow {
        context: None,
        name: "node-1".into(),
        status: "Ready".into(),
        ready: true,
        roles: "<none>".into(),
        version: "v1.33.1".into(),
        created: None,
        taints: vec!["dedicated=db:NoSchedule".into()],
        os: "linux".into(),
        allocatable_cpu_m: 4000,
        allocatable_memory: 16 << 30,
    };
    a.update(Event::Nodes(Feed::Listed {
        scope: None,
        rows: vec![node],
    }));
    let effects = a.update(code(KeyCode::Enter));
    assert_eq!(
        effects,
        [Effect::ReadNodePods {
            cluster: sim_cluster(),
            node: "node-1".into()
        }]
    );
    let text = |a: &App| match &a.view {
        View::Nodes(view) => view.reading.as_ref().unwrap().lines().join("\n"),
        _ => panic!("the nodes view"),
    };
    assert!(text(&a).contains("Taints: dedicated=db:NoSchedule"));
    assert!(text(&a).contains("shop/web"), "the list's at once");
    assert!(text(&a).contains("reading every namespace's"));
    let mut other = row("kube-system", "proxy-x", "Running");
    other.node = "node-1".into();
    a.update(Event::NodePods {
        cluster: sim_cluster(),
        node: "node-1".into(),
        pods: Ok(vec![other]),
    });
    assert!(text(&a).contains("(1, every namespace)"), "{}", text(&a));
    assert!(text(&a).contains("kube-system/proxy-x"));
    a.update(Event::NodePods {
        cluster: sim_cluster(),
        node: "node-1".into(),
        pods: Err("pods is forbidden".into()),
    });
    assert!(
        text(&a).contains("every namespace's could not be read: pods is forbidden"),
        "{}",
        text(&a)
    );
    assert!(text(&a).contains("shop/web"));
}

/// Keys faster than typing (a paste without bracketed paste, keys a
/// program sends) never create or delete: the launcher's enter and the
/// delete question's y wait for a key typed as a person types it.
#[test]
fn a_burst_of_keys_creates_and_deletes_nothing() {
    let mut a = in_pod_view();
    a.update(key('d'));
    assert!(matches!(a.mode, Mode::Launcher(_)));
    a.update(Event::Burst(true));
    assert!(a.update(code(KeyCode::Enter)).is_empty());
    assert!(matches!(a.mode, Mode::Launcher(_)), "the form stays open");
    let said = a.message.as_ref().expect("a sentence").text.to_string();
    assert!(
        said.starts_with("Enter came amid keys faster than typing"),
        "{said}"
    );
    // Letters still type into the form.
    a.update(key('x'));
    a.update(Event::Burst(false));
    assert!(
        a.update(code(KeyCode::Enter))
            .iter()
            .any(|e| matches!(e, Effect::Launch { .. })),
        "a key typed as a person types it launches"
    );

    let (mut a, _) = app(true);
    a.update(listed(vec![row("shop", "web-1", "Running")]));
    a.update(key('X'));
    assert!(matches!(a.mode, Mode::ConfirmDelete(..)));
    a.update(Event::Burst(true));
    assert!(a.update(key('y')).is_empty());
    assert!(matches!(a.mode, Mode::ConfirmDelete(..)), "still asking");
    a.update(Event::Burst(false));
    assert!(
        a.update(key('y'))
            .iter()
            .any(|e| matches!(e, Effect::DeletePod { .. }))
    );
}

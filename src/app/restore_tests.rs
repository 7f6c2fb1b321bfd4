use std::collections::BTreeMap;

use crossterm::event::KeyCode;

use super::RestoreChoice;
use crate::app::saved::{SavedKind, SavedWorkspace};
use crate::app::terminal::{TerminalKind, TerminalState};
use crate::app::tests::{
    app, attached_to_debug_container, code, ctrl, key, pod_detail, sim_cluster,
};
use crate::app::{App, Effect, Event, Mode, TerminalId};
use crate::model::feed::Feed;
use crate::model::session::SessionKind;
use crate::model::{ClusterId, ContainerState, PodDetail};

fn prefix(a: &mut App, c: char) -> Vec<Effect> {
    a.update(ctrl('b'));
    a.update(key(c))
}

fn typed(a: &mut App, text: &str) {
    for c in text.chars() {
        a.update(key(c));
    }
}

/// Three panes: an attach on the debug container, a shell and a log on
/// `app`; the log renamed, the shell marked, a divider moved.
fn three_panes() -> App {
    let (mut a, _) = attached_to_debug_container();
    prefix(&mut a, 'd');
    a.update(key('k'));
    a.update(key('s'));
    prefix(&mut a, 'm');
    prefix(&mut a, 'd');
    a.update(key('l'));
    prefix(&mut a, ',');
    typed(&mut a, "applog");
    a.update(code(KeyCode::Enter));
    prefix(&mut a, 'H');
    prefix(&mut a, 'z');
    a
}

/// Where the kept terminal of `kind` is in `saved`.
fn kept_index(saved: &SavedWorkspace, kind: SavedKind) -> usize {
    saved
        .terminals
        .iter()
        .position(|t| t.kind == kind)
        .expect("a kept terminal of that kind")
}

fn restored_app() -> App {
    let (mut b, _) = app(false);
    b.update(Event::Resize(crate::term::Size::new(100, 30)));
    b
}

fn with_uid(mut detail: PodDetail, uid: &str) -> PodDetail {
    detail.manifest.metadata.uid = Some(uid.into());
    detail
}

fn pod_of(id: TerminalId, detail: PodDetail) -> Event {
    Event::TerminalPod {
        id,
        feed: Feed::Applied(detail),
    }
}

fn id_of(a: &App, kind: TerminalKind) -> TerminalId {
    a.workspace
        .terminals
        .values()
        .find(|t| t.kind == kind)
        .map(|t| t.id)
        .expect("a terminal of that kind")
}

#[test]
fn a_workspace_comes_back_with_its_layout_names_marks_and_log_places() {
    let a = three_panes();
    let (mut saved, _) = a.saved();
    assert!(
        saved
            .panes
            .iter()
            .any(|p| p.title.as_deref() == Some("applog"))
            && saved.panes.iter().filter(|p| p.marked).count() == 1,
        "{saved:?}"
    );
    assert!(
        matches!(&saved.layout, Some(crate::app::saved::SavedShape::Split { ratio, .. }) if *ratio != 0.5),
        "the moved divider is kept: {:?}",
        saved.layout
    );
    assert!(saved.zoomed.is_some(), "the zoom is kept");
    let at: jiff::Timestamp = "2026-01-01T00:59:30Z".parse().unwrap();
    let log = kept_index(&saved, SavedKind::Log);
    saved.terminals[log].last_seen.insert("app".into(), at);
    saved.saved_at = "2026-01-01T00:48:00Z".parse().unwrap();

    let mut b = restored_app();
    assert!(
        b.offer_restore(saved.clone(), RestoreChoice::Ask, false)
            .is_empty()
    );
    assert!(
        !b.keeps_workspace(),
        "the kept file is not overwritten while asking"
    );
    assert_eq!(
        b.message.as_ref().unwrap().text,
        "Restore 3 panes from 12 min ago (1 attach, 1 shell, 1 log)?"
    );
    let effects = b.update(key('y'));
    assert!(b.keeps_workspace());

    let follows = effects
        .iter()
        .filter(|e| matches!(e, Effect::Follow { .. }))
        .count();
    assert_eq!(follows, 3, "{effects:?}");
    assert!(
        effects.iter().any(|e| matches!(e,
            Effect::OpenSession { kind: SessionKind::Exec(_), key, .. } if key.container == "app")),
        "a new shell: {effects:?}"
    );
    assert!(
        effects.iter().any(|e| matches!(e,
            Effect::ShowLog { resume_from, fresh: false, .. } if resume_from.get("app") == Some(&at))),
        "the log goes on after its last line: {effects:?}"
    );
    assert!(
        !effects.iter().any(|e| matches!(
            e,
            Effect::OpenSession {
                kind: SessionKind::Attach,
                ..
            }
        )),
        "the attach waits for its pod: {effects:?}"
    );
    let shell = &b.workspace.terminals[&id_of(&b, TerminalKind::Shell)];
    assert!(shell.notice.as_ref().unwrap().contains("A new shell"));

    // Kept again, it is what was kept: layout, sizes, names, marks, focus.
    let (again, _) = b.saved();
    assert_eq!(
        SavedWorkspace {
            saved_at: saved.saved_at,
            ..again
        },
        saved
    );

    // The attach's pod arrives with its container running: re-attached,
    // with what it printed meanwhile.
    let attach = id_of(&b, TerminalKind::Attach);
    let effects = b.update(pod_of(
        attach,
        pod_detail(Some(ContainerState::Running { since: None })),
    ));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::OpenSession {
                replay_log: true,
                kind: SessionKind::Attach,
                ..
            }]
        ),
        "{effects:?}"
    );
    let t = &b.workspace.terminals[&attach];
    assert!(
        t.notice
            .as_ref()
            .unwrap()
            .contains("Re-attached after podbay restarted")
    );
}

#[test]
fn an_ended_container_says_how_and_a_replaced_pod_says_so() {
    let (mut saved, _) = three_panes().saved();
    for t in &mut saved.terminals {
        t.pod_uid = Some("uid-1".into());
    }
    let mut b = restored_app();
    b.offer_restore(saved, RestoreChoice::Always, false);
    let attach = id_of(&b, TerminalKind::Attach);
    let effects = b.update(pod_of(
        attach,
        with_uid(
            pod_detail(Some(ContainerState::Terminated {
                exit_code: 3,
                reason: "Error".into(),
                message: String::new(),
                finished: None,
            })),
            "uid-1",
        ),
    ));
    let TerminalState::Ended(why) = &b.workspace.terminals[&attach].state else {
        panic!("{:?}", b.workspace.terminals[&attach].state)
    };
    assert!(why.as_str().contains("exited with code 3 (Error)"), "{why}");
    assert!(
        matches!(effects.as_slice(), [Effect::ShowLog { follow: false, .. }]),
        "its last output, read once: {effects:?}"
    );

    let mut c = restored_app();
    let (mut saved, _) = three_panes().saved();
    for t in &mut saved.terminals {
        t.pod_uid = Some("uid-1".into());
    }
    c.offer_restore(saved, RestoreChoice::Always, false);
    let attach = id_of(&c, TerminalKind::Attach);
    let effects = c.update(pod_of(
        attach,
        with_uid(
            pod_detail(Some(ContainerState::Running { since: None })),
            "uid-2",
        ),
    ));
    assert!(
        matches!(effects.as_slice(), [Effect::CloseSession { id }] if *id == attach),
        "nothing attaches to another pod, nor follows it: {effects:?}"
    );
    let TerminalState::Ended(why) = &c.workspace.terminals[&attach].state else {
        panic!()
    };
    assert!(why.as_str().contains("was replaced"), "{why}");
    let log = id_of(&c, TerminalKind::Log);
    c.update(pod_of(log, with_uid(pod_detail(None), "uid-2")));
    let note = c.workspace.terminals[&log]
        .notice
        .clone()
        .unwrap_or_default();
    assert!(note.contains("was replaced"), "a log says it too: {note}");
}

#[test]
fn panes_of_another_context_wait_for_it_and_say_when_it_cannot_be_reached() {
    let (mut saved, _) = three_panes().saved();
    let prod = ClusterId::new("prod", "https://prod:6443", "sre");
    for t in &mut saved.terminals {
        if t.kind != SavedKind::Shell {
            t.context = prod.context.to_string();
            t.server = prod.server.to_string();
            t.user = prod.user.to_string();
        }
    }
    let mut b = restored_app();
    let effects = b.offer_restore(saved.clone(), RestoreChoice::Always, false);
    assert!(
        effects.contains(&Effect::ConnectContext("prod".into())),
        "{effects:?}"
    );
    let follows: Vec<&Effect> = effects
        .iter()
        .filter(|e| matches!(e, Effect::Follow { .. }))
        .collect();
    assert!(
        matches!(follows.as_slice(), [Effect::Follow { key, .. }] if key.cluster == sim_cluster()),
        "only sim's pane starts: {effects:?}"
    );
    b.update(Event::ContextReady {
        context: "prod".into(),
        outcome: Err("The API server at https://prod:6443 did not answer.".into()),
    });
    let log = id_of(&b, TerminalKind::Log);
    let TerminalState::Ended(why) = &b.workspace.terminals[&log].state else {
        panic!()
    };
    assert!(
        why.as_str().contains("context prod cannot be reached"),
        "{why}"
    );
    let shell = id_of(&b, TerminalKind::Shell);
    assert!(
        effects.iter().any(|e| matches!(e,
            Effect::OpenSession { kind: SessionKind::Exec(_), key, .. } if key.cluster == sim_cluster())),
        "sim's shell opens at once: {effects:?}"
    );
    assert!(
        !matches!(b.workspace.terminals[&shell].state, TerminalState::Ended(_)),
        "sim's shell goes on"
    );

    let mut c = restored_app();
    c.offer_restore(saved.clone(), RestoreChoice::Always, false);
    let effects = c.update(Event::ContextReady {
        context: "prod".into(),
        outcome: Ok(crate::app::Reached {
            cluster: prod.clone(),
            namespace: "default".into(),
        }),
    });
    let on_prod = effects
        .iter()
        .filter(|e| matches!(e, Effect::Follow { key, .. } if key.cluster == prod))
        .count();
    assert_eq!(on_prod, 2, "{effects:?}");

    // The same context name on another server is not the same cluster.
    let mut d = restored_app();
    d.offer_restore(saved, RestoreChoice::Always, false);
    let effects = d.update(Event::ContextReady {
        context: "prod".into(),
        outcome: Ok(crate::app::Reached {
            cluster: ClusterId::new("prod", "https://other:6443", "sre"),
            namespace: "default".into(),
        }),
    });
    assert!(effects.is_empty(), "{effects:?}");
    let log = id_of(&d, TerminalKind::Log);
    let TerminalState::Ended(why) = &d.workspace.terminals[&log].state else {
        panic!()
    };
    assert!(
        why.as_str().contains("now reaches https://other:6443"),
        "{why}"
    );
}

#[test]
fn the_question_restores_keeps_for_later_or_forgets() {
    let (saved, _) = three_panes().saved();
    let mut b = restored_app();
    b.offer_restore(saved.clone(), RestoreChoice::Ask, false);
    let effects = b.update(key('n'));
    assert!(
        matches!(effects.as_slice(), [Effect::SaveWorkspace { name, .. }] if name == "previous"),
        "{effects:?}"
    );
    assert!(b.workspace.is_empty());
    assert!(b.message.as_ref().unwrap().text.contains(":load previous"));

    let mut c = restored_app();
    c.offer_restore(saved.clone(), RestoreChoice::Ask, false);
    // Text typed for a shell that is not back yet answers nothing: not `e`,
    // and no key of a burst, `y` and `d` among them.
    assert!(c.update(key('e')).is_empty());
    assert!(matches!(c.mode, Mode::ConfirmRestore(_)));
    assert!(
        c.message
            .as_ref()
            .unwrap()
            .text
            .contains("Only y, n or d answers. Restore")
    );
    c.update(Event::Burst(true));
    for k in ['y', 'd', 'n'] {
        assert!(c.update(key(k)).is_empty());
        assert!(matches!(c.mode, Mode::ConfirmRestore(_)));
    }
    assert!(c.workspace.is_empty());
    c.update(Event::Burst(false));
    assert_eq!(c.update(key('d')), [Effect::ForgetWorkspace]);
    assert!(c.workspace.is_empty());

    let mut d = restored_app();
    assert!(
        d.offer_restore(saved, RestoreChoice::Never, false)
            .is_empty()
    );
    assert_eq!(d.mode, Mode::Normal);
    assert!(d.workspace.is_empty());
}

#[test]
fn a_command_is_not_run_again_and_save_and_load_say_what_they_need() {
    let (mut saved, _) = three_panes().saved();
    let shell = kept_index(&saved, SavedKind::Shell);
    saved.terminals[shell].kind = SavedKind::Exec;
    saved.terminals[shell].command = vec!["rm".into(), "-rf".into(), "/tmp/x".into()];
    let mut b = restored_app();
    let effects = b.offer_restore(saved, RestoreChoice::Always, false);
    assert!(
        !effects.iter().any(|e| matches!(
            e,
            Effect::OpenSession {
                kind: SessionKind::Exec(_),
                ..
            }
        )),
        "{effects:?}"
    );
    let exec = id_of(&b, TerminalKind::Exec);
    let TerminalState::Ended(why) = &b.workspace.terminals[&exec].state else {
        panic!()
    };
    assert!(why.as_str().contains("`rm …`"), "{why}");
    let (kept, _) = b.saved();
    let exec = kept
        .terminals
        .iter()
        .find(|t| t.kind == SavedKind::Exec)
        .unwrap();
    assert_eq!(exec.command, ["rm"], "a command's arguments are not kept");

    // `:load` into panes is refused; `:save NAME` keeps them.
    prefix(&mut b, ':');
    typed(&mut b, "load incident");
    assert!(b.update(code(KeyCode::Enter)).is_empty());
    assert!(
        b.message
            .as_ref()
            .unwrap()
            .text
            .contains("Close the panes first")
    );
    prefix(&mut b, ':');
    typed(&mut b, "save incident-42");
    let effects = b.update(code(KeyCode::Enter));
    assert!(
        matches!(effects.as_slice(), [Effect::SaveWorkspace { name, workspace, terminals }]
            if name == "incident-42" && workspace.panes.len() == 3 && terminals.len() == 3),
        "{effects:?}"
    );
    prefix(&mut b, ':');
    typed(&mut b, "save ../etc");
    assert!(b.update(code(KeyCode::Enter)).is_empty());
    assert!(
        b.message
            .as_ref()
            .unwrap()
            .text
            .contains("Cannot keep a workspace as")
    );
}

#[test]
fn a_log_goes_on_where_it_stopped_and_says_so() {
    let (mut saved, _) = three_panes().saved();
    let log = kept_index(&saved, SavedKind::Log);
    let mut last = BTreeMap::new();
    last.insert("app".to_string(), "2026-01-01T00:40:05Z".parse().unwrap());
    saved.terminals[log].last_seen = last;
    saved.terminals[log].log.cut_at = Some(64);
    let mut b = restored_app();
    b.offer_restore(saved, RestoreChoice::Always, false);
    let t = &b.workspace.terminals[&id_of(&b, TerminalKind::Log)];
    // Its lines cut as they were, at each width the pane takes now.
    assert!(t.log.cut && t.grid.is_cut());
    assert_eq!(
        b.saved().0.terminals[log].log.cut_at,
        Some(t.grid.size().cols)
    );
    assert!(
        t.grid
            .text()
            .contains("podbay restarted: the log goes on after 00:40:05 UTC"),
        "{}",
        t.grid.text()
    );
}

#[test]
fn a_deleted_pod_is_said_and_a_waiting_container_is_waited_for() {
    let (saved, _) = three_panes().saved();
    let mut b = restored_app();
    b.offer_restore(saved.clone(), RestoreChoice::Always, false);
    let attach = id_of(&b, TerminalKind::Attach);
    b.update(Event::TerminalPod {
        id: attach,
        feed: Feed::Listed {
            scope: None,
            rows: vec![],
        },
    });
    let t = &b.workspace.terminals[&attach];
    assert!(
        matches!(&t.state, TerminalState::Ended(why) if why.as_str().contains("no longer exists")),
        "{:?}",
        t.state
    );
    assert!(t.grid.text().contains("not restored"), "said in the pane");

    let mut c = restored_app();
    c.offer_restore(saved, RestoreChoice::Always, false);
    let attach = id_of(&c, TerminalKind::Attach);
    let waiting = ContainerState::Waiting {
        reason: "ContainerCreating".into(),
        message: String::new(),
    };
    assert!(
        c.update(pod_of(attach, pod_detail(Some(waiting))))
            .is_empty()
    );
    assert!(matches!(
        c.workspace.terminals[&attach].state,
        TerminalState::Waiting { .. }
    ));
    let effects = c.update(pod_of(
        attach,
        pod_detail(Some(ContainerState::Running { since: None })),
    ));
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::OpenSession {
                replay_log: true,
                ..
            }]
        ),
        "attached once it runs: {effects:?}"
    );
}

#[test]
fn forwards_listen_again_on_their_ports_or_say_why_and_stay_kept() {
    use crate::app::saved::SavedForward;
    let forward = |context: &str, server: &str| SavedForward {
        context: context.into(),
        server: server.into(),
        user: "admin".into(),
        namespace: "shop".into(),
        target: "deploy/storefront".into(),
        local: Some(18080),
        remote: "8080".into(),
    };
    let (mut saved, _) = three_panes().saved();
    saved.forwards = vec![
        forward("sim", &sim_cluster().server),
        forward("prod", "https://prod:6443"),
    ];
    let mut b = restored_app();
    let effects = b.offer_restore(saved, RestoreChoice::Always, false);
    let started: Vec<&Effect> = effects
        .iter()
        .filter(|e| matches!(e, Effect::StartForward { .. }))
        .collect();
    assert!(
        matches!(started.as_slice(), [Effect::StartForward { request, cluster, .. }]
            if request.ports[0].local == Some(18080) && *cluster == sim_cluster()),
        "{effects:?}"
    );
    b.update(Event::ContextReady {
        context: "prod".into(),
        outcome: Err("Connection refused.".into()),
    });
    let failed: Vec<_> = b
        .forwards
        .iter()
        .filter(|f| matches!(f.state, crate::app::forwards::ForwardState::Failed(_)))
        .collect();
    assert_eq!(failed.len(), 1, "prod's forward is listed, saying why");
    let (kept, _) = b.saved();
    assert_eq!(kept.forwards.len(), 2, "both stay kept");
    assert!(kept.forwards.iter().all(|f| f.local == Some(18080)));
}

#[test]
fn a_log_whose_pod_its_controller_replaced_offers_the_new_pod() {
    use crate::app::saved::SavedController;
    let (mut saved, _) = three_panes().saved();
    let log = kept_index(&saved, SavedKind::Log);
    saved.terminals[log].controller = Some(SavedController {
        kind: "ReplicaSet".into(),
        name: "web-7d9".into(),
        uid: "rs-1".into(),
    });
    let mut b = restored_app();
    b.offer_restore(saved, RestoreChoice::Always, false);
    let id = id_of(&b, TerminalKind::Log);
    let effects = b.update(Event::TerminalPod {
        id,
        feed: Feed::Listed {
            scope: None,
            rows: vec![],
        },
    });
    assert!(
        matches!(effects.as_slice(), [Effect::FindReplacement { controller_uid, namespace, .. }]
            if controller_uid == "rs-1" && namespace == "shop"),
        "{effects:?}"
    );
    b.update(Event::ReplacementFound {
        id,
        pod: Some("web-7d9-x2k9p".into()),
    });
    let text = b.workspace.terminals[&id].grid.text();
    assert!(
        text.contains(
            "its ReplicaSet web-7d9 runs shop/web-7d9-x2k9p now: enter shows its log here"
        ),
        "{text}"
    );
    // Focus that pane, then enter: it reads the new pod's log.
    while b.workspace.focused_pane().map(|p| p.terminal) != Some(id) {
        prefix(&mut b, 'o');
    }
    let effects = b.update(code(KeyCode::Enter));
    assert!(
        matches!(effects.as_slice(), [Effect::Follow { key, .. }, Effect::ShowLog { key: log_key, fresh: true, .. }]
            if &*key.pod.name == "web-7d9-x2k9p" && log_key == key),
        "{effects:?}"
    );
    assert_eq!(b.workspace.panes.len(), 3, "the pane stays");
}

#[test]
fn typed_keys_go_to_the_restored_panes_not_the_pod_list() {
    for kept_in_workspace in [true, false] {
        let (mut saved, _) = three_panes().saved();
        saved.in_workspace = kept_in_workspace;
        let (mut b, _) = app(false);
        b.update(Event::Resize(crate::term::Size::new(250, 60)));
        b.offer_restore(saved, RestoreChoice::Ask, false);
        b.update(key('y'));
        assert_eq!(
            b.focus,
            crate::app::Focus::Workspace,
            "kept in the workspace: {kept_in_workspace}"
        );
        // A shell line typed at once: none of it acts on the pod list.
        for c in "echo port=$KUBERNETES_SERVICE_PORT".chars() {
            b.update(key(c));
        }
        b.update(code(KeyCode::Enter));
        assert_eq!(b.mode, Mode::Normal, "no form opened from typing");
        assert!(b.pods.marks().is_empty(), "no pod marked by a typed space");
    }
}

#[test]
fn a_kept_title_comes_back_printable() {
    let (mut saved, _) = three_panes().saved();
    let hostile = "evil\u{202e}gol\u{200b}\u{1b}]0;owned\u{7}";
    saved.panes[0].title = Some(hostile.into());
    let mut b = restored_app();
    b.offer_restore(saved, RestoreChoice::Always, false);
    let titles: Vec<String> = b
        .workspace
        .panes
        .values()
        .filter_map(|p| p.title.as_deref().map(str::to_string))
        .collect();
    let shown = titles
        .iter()
        .find(|t| t.starts_with("evil"))
        .expect("the kept title");
    assert_eq!(shown, "evil\\u{202e}gol\\u{200b}\\e]0;owned\\x07");
}

#[test]
fn hundreds_of_kept_panes_are_started_a_few_a_second() {
    let (one, _) = three_panes().saved();
    let mut saved = one.clone();
    // 300 panes, each on a terminal of its own.
    saved.terminals = (0..300)
        .map(|i| one.terminals[i % one.terminals.len()].clone())
        .collect();
    saved.panes = (0..300)
        .map(|i| crate::app::saved::SavedPane {
            terminal: i,
            title: None,
            marked: false,
        })
        .collect();
    saved.layout = None;
    saved.zoomed = None;
    saved.focused = None;
    let mut b = restored_app();
    let started = |effects: &[Effect]| {
        effects
            .iter()
            .filter(|e| matches!(e, Effect::Follow { .. }))
            .count()
    };
    let first = b.offer_restore(saved, RestoreChoice::Always, false);
    assert_eq!(started(&first), 10, "ten at once");
    let mut total = started(&first);
    let mut ticks = 0;
    while total < 300 {
        let more = b.update(Event::Tick(b.now));
        assert!(started(&more) <= 10, "at most ten a tick");
        total += started(&more);
        ticks += 1;
        assert!(ticks < 100, "every pane starts");
    }
    assert_eq!(ticks, 29);
}

/// `:save NAME` keeps a workspace that `:load` then completes by name.
#[test]
fn a_workspace_kept_by_name_completes_after_load() {
    let mut a = three_panes();
    prefix(&mut a, 'd');
    a.update(key(':'));
    typed(&mut a, "save incident-42");
    let effects = a.update(code(KeyCode::Enter));
    assert!(
        matches!(effects.as_slice(), [Effect::SaveWorkspace { name, .. }] if name == "incident-42"),
        "{effects:?}"
    );
    a.update(Event::WorkspaceSaved {
        name: "incident-42".into(),
        outcome: Ok("/kept/incident-42.json".into()),
    });
    a.update(key(':'));
    typed(&mut a, "load inc");
    a.update(code(KeyCode::Tab));
    let Mode::Command(line) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!(line.text(), "load incident-42 ");
}

#[test]
fn a_list_of_several_clusters_comes_back_with_every_cluster() {
    let a = crate::app::other_clusters::tests::two_clusters();
    let (saved, _) = a.saved();
    assert_eq!(saved.browser.others, ["sim-b"]);
    assert!(!saved.browser.own_namespaces, "-n shop was chosen");
    let mut b = restored_app();
    b.contexts.push("sim-b".into());
    assert!(!b.shows_several());
    let effects = b.restore(saved);
    assert!(
        effects.contains(&Effect::SwitchContext("sim".into())),
        "{effects:?}"
    );
    let contexts = b.contexts.clone();
    let effects = b.update(Event::Connected {
        cluster: sim_cluster(),
        context: "sim".into(),
        namespace: "default".into(),
        contexts,
    });
    assert!(
        effects.contains(&Effect::ConnectContext("sim-b".into())),
        "{effects:?}"
    );
    assert!(b.shows_several());
    assert_eq!(
        b.scope,
        crate::app::Scope::Namespaces(vec!["shop".into()]),
        "the namespace kept, not the context's own"
    );
}

//! Marking pods and debugging them all at once, through `App::update`.

use crossterm::event::KeyCode;

use super::super::fleet::{EACH_FIRST, FleetPod};
use super::super::tests::{app, code, key, listed, pod_detail, row, sim_cluster};
use super::super::{Effect, Event, Focus, Mode};
use crate::model::debug::Profile;
use crate::model::pod_security::Policy;
use crate::model::{ContainerState, PodDetail, PodKey};

/// `web`'s detail under another pod's name (containers `app` and,
/// optionally, a running debug container `dbg` on `app`).
fn detail_of(name: &str, debug: bool) -> PodDetail {
    let debug = debug.then_some(ContainerState::Running { since: None });
    PodDetail {
        key: PodKey::new("shop", name),
        ..pod_detail(debug)
    }
}

fn listed_app() -> super::App {
    let (mut a, _) = app(false);
    a.update(Event::Resize(crate::term::Size::new(120, 40)));
    a.update(listed(
        ["api-1", "api-2", "api-3", "db-0"]
            .iter()
            .map(|n| row("shop", n, "Running"))
            .collect(),
    ));
    a
}

/// Marks `pods` in the list, presses `d`, and answers its read with them.
fn read(a: &mut super::App, pods: Vec<FleetPod>) {
    a.pods.clear_marks();
    for pod in &pods {
        let at = (0..a.pods.visible_len())
            .find(|i| a.pods.visible(*i).is_some_and(|(r, _)| r.key == pod.key))
            .expect("the pod is listed");
        a.pods.select_index(at);
        a.pods.toggle_mark();
    }
    let asked = a.update(key('d'));
    assert!(
        matches!(&asked[..], [Effect::ReadPods { .. }]),
        "d reads the marked pods: {asked:?}"
    );
    a.update(Event::PodsRead {
        cluster: sim_cluster(),
        pods,
    });
}

fn fleet_pod(detail: PodDetail, policy: Option<Policy>) -> FleetPod {
    FleetPod {
        cluster: sim_cluster(),
        key: detail.key.clone(),
        detail: Ok(detail),
        policy,
    }
}

/// The marked pods' names, in the list's order.
fn marked_names(a: &super::App) -> Vec<String> {
    a.pods
        .marks()
        .iter()
        .map(|k| k.pod.name.to_string())
        .collect()
}

#[test]
fn space_marks_and_moves_on_star_marks_what_the_filter_shows() {
    let mut a = listed_app();
    a.update(key(' '));
    a.update(key(' '));
    let marked = marked_names(&a);
    assert_eq!(marked, ["api-1", "api-2"], "space marks, then moves down");
    a.update(key('k'));
    a.update(key(' '));
    assert_eq!(a.pods.marks().len(), 1, "space on a marked pod unmarks it");

    a.update(key('/'));
    for c in "api".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    a.update(key('*'));
    let marked = marked_names(&a);
    assert_eq!(
        marked,
        ["api-1", "api-2", "api-3"],
        "every pod shown, not db-0"
    );
    a.update(key('*'));
    assert!(a.pods.marks().is_empty(), "again: unmarked");
}

#[test]
fn d_with_marks_reads_them_all_and_a_gone_pod_loses_its_mark() {
    let mut a = listed_app();
    a.update(key(' '));
    a.update(key(' '));
    a.update(Event::Pods(crate::model::feed::Feed::Deleted(row(
        "shop", "api-2", "Running",
    ))));
    let effects = a.update(key('d'));
    assert_eq!(
        effects,
        [Effect::ReadPods {
            cluster: sim_cluster(),
            pods: vec![PodKey::new("shop", "api-1")],
        }],
        "the list's own pod view is not opened"
    );
    assert!(matches!(a.view, super::View::Pods));
}

#[test]
fn the_form_says_for_each_pod_what_enter_will_do() {
    let mut a = listed_app();
    let mut windows = detail_of("api-3", false);
    windows.os = Some("windows".into());
    let mut other_image = detail_of("api-2", true);
    other_image.containers[1].image = "nicolaka/netshoot".into();
    read(
        &mut a,
        vec![
            fleet_pod(detail_of("api-1", false), None),
            fleet_pod(other_image, None),
            fleet_pod(windows, None),
            FleetPod {
                cluster: sim_cluster(),
                key: PodKey::new("shop", "db-0"),
                detail: Err("pods \"db-0\" is forbidden".into()),
                policy: None,
            },
        ],
    );
    let Mode::Fleet(form) = &a.mode else {
        panic!("the fleet form, got {:?}", a.mode)
    };
    assert_eq!(form.launcher.target_name(), Some(EACH_FIRST));
    let plans = form.plans().expect("the form's values are good");
    use super::super::fleet::Plan;
    let [
        (_, Plan::Launch(spec)),
        (_, Plan::Launch(_)),
        (_, Plan::Refused(windows)),
        (_, Plan::Refused(unread)),
    ] = plans.as_slice()
    else {
        panic!("{plans:?}")
    };
    assert_eq!(spec.target.as_deref(), Some("app"), "each pod's first");
    assert!(windows.contains("Windows"), "{windows}");
    assert!(unread.contains("forbidden"), "{unread}");
    // api-2's running debug container has another image: a new one.
}

#[test]
fn a_running_debug_container_of_the_same_image_is_reattached_not_piled_up() {
    let mut a = listed_app();
    let running = detail_of("api-2", true);
    assert_eq!(running.containers[1].image, "busybox:1.36");
    read(
        &mut a,
        vec![
            fleet_pod(detail_of("api-1", false), None),
            fleet_pod(running, None),
        ],
    );
    let Mode::Fleet(form) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let plans = form.plans().unwrap();
    assert_eq!(
        plans[1].1,
        super::super::fleet::Plan::Reattach("dbg".into()),
        "same image, same target, running"
    );
}

#[test]
fn a_namespace_that_refuses_the_profile_gets_the_strongest_it_admits_unless_chosen() {
    let mut a = listed_app();
    let baseline = Policy::from_labels(
        &[(
            "pod-security.kubernetes.io/enforce".to_string(),
            "baseline".to_string(),
        )]
        .into(),
    );
    read(
        &mut a,
        vec![fleet_pod(detail_of("api-1", false), Some(baseline))],
    );
    let Mode::Fleet(form) = &mut a.mode else {
        panic!()
    };
    form.launcher.profile = Profile::Sysadmin;
    let plans = form.plans().unwrap();
    let super::super::fleet::Plan::Launch(spec) = &plans[0].1 else {
        panic!("{plans:?}")
    };
    assert_ne!(
        spec.profile,
        Profile::Sysadmin,
        "baseline refuses privileged"
    );
    form.launcher.profile_chosen = true;
    let plans = form.plans().unwrap();
    assert!(
        matches!(&plans[0].1, super::super::fleet::Plan::Refused(why) if why.contains("baseline")),
        "{plans:?}"
    );
}

#[test]
fn enter_opens_a_pane_per_pod_tiled_with_typing_broadcast_to_them() {
    let mut a = listed_app();
    a.update(key(' '));
    a.update(key(' '));
    a.update(key(' '));
    read(
        &mut a,
        vec![
            fleet_pod(detail_of("api-1", false), None),
            fleet_pod(detail_of("api-2", false), None),
            FleetPod {
                cluster: sim_cluster(),
                key: PodKey::new("shop", "api-3"),
                detail: Err("could not be read".into()),
                policy: None,
            },
        ],
    );
    let effects = a.update(code(KeyCode::Enter));
    let launches: Vec<&PodKey> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Launch { key, .. } => Some(&key.pod),
            _ => None,
        })
        .collect();
    assert_eq!(
        launches,
        [&PodKey::new("shop", "api-1"), &PodKey::new("shop", "api-2")]
    );
    assert_eq!(a.focus, Focus::Workspace);
    assert_eq!(a.workspace.panes.len(), 3, "the refused pod has its pane");
    assert_eq!(
        a.workspace.marked_count(),
        2,
        "typing goes to the two that run"
    );
    assert!(a.pods.marks().is_empty(), "the marks were used");
    let refused = a
        .workspace
        .terminals
        .values()
        .find(|t| t.key.pod.name.as_ref() == "api-3")
        .unwrap();
    assert!(
        refused.grid.text().contains("could not be read"),
        "the pane says why: {:?}",
        refused.grid.text()
    );
    // Tiled: two side by side above, one below.
    let area = a.areas().workspace.unwrap();
    let geometry = a.workspace.geometry(area);
    let tops: std::collections::BTreeSet<u16> = geometry.iter().map(|(_, r)| r.y).collect();
    assert_eq!(tops.len(), 2, "{geometry:?}");

    // A launch the cluster refuses stays on its pane and leaves the group.
    let id = a
        .workspace
        .terminals
        .values()
        .find(|t| t.key.pod.name.as_ref() == "api-2")
        .unwrap()
        .id;
    a.update(Event::LaunchFailed {
        id,
        sentence: "pods \"api-2\" is forbidden".into(),
        refused_by: None,
    });
    assert_eq!(a.workspace.panes.len(), 3, "its pane stays");
    assert_eq!(a.workspace.marked_count(), 1);
    assert!(a.workspace.terminals[&id].grid.text().contains("forbidden"));
    assert!(!matches!(a.mode, Mode::Launcher(_) | Mode::Fleet(_)));
}

#[test]
fn more_marks_than_panes_can_show_is_one_sentence_and_nothing_read() {
    let (mut a, _) = app(false);
    a.update(Event::Resize(crate::term::Size::new(120, 40)));
    let many = super::MOST_PANES + 1;
    a.update(listed(
        (0..many)
            .map(|i| row("shop", &format!("api-{i:02}"), "Running"))
            .collect(),
    ));
    a.update(key('*'));
    assert_eq!(a.pods.marks().len(), many);
    assert!(a.update(key('d')).is_empty(), "nothing is read");
    let said = a
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(said.contains("at most 32 panes"), "{said}");
}

#[test]
fn another_context_starts_with_no_marks_and_no_form() {
    let mut a = listed_app();
    a.update(key(' '));
    assert_eq!(a.pods.marks().len(), 1);
    read(&mut a, vec![fleet_pod(detail_of("api-1", false), None)]);
    assert!(matches!(a.mode, Mode::Fleet(_)));
    a.update(Event::Connected {
        cluster: crate::model::ClusterId::new("prod", "https://10.0.0.1:6443", "admin"),
        context: "prod".into(),
        namespace: "shop".into(),
        contexts: vec!["sim".into(), "prod".into()],
    });
    assert!(
        !matches!(a.mode, Mode::Fleet(_)),
        "a form for the other cluster's pods is void"
    );
    // The same names on another cluster are other pods.
    a.update(listed(vec![row("shop", "api-1", "Running")]));
    assert!(a.pods.marks().is_empty());
}

#[test]
fn when_the_focused_panes_launch_is_refused_typing_goes_on_to_the_others() {
    let mut a = listed_app();
    read(
        &mut a,
        vec![
            fleet_pod(detail_of("api-1", false), None),
            fleet_pod(detail_of("api-2", false), None),
        ],
    );
    a.update(code(KeyCode::Enter));
    let focused = a.workspace.focused_terminal().unwrap().id;
    let other = a
        .workspace
        .terminals
        .keys()
        .copied()
        .find(|id| *id != focused)
        .unwrap();
    a.update(Event::LaunchFailed {
        id: focused,
        sentence: "pods \"api-1\" is forbidden".into(),
        refused_by: None,
    });
    assert_eq!(
        a.workspace.input_targets(),
        [other],
        "the focus moved to the pane still in the group"
    );
}

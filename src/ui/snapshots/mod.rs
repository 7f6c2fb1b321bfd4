//! Snapshot tests: each view rendered into a `TestBackend` and compared with
//! a golden screen in `src/ui/snapshots/goldens/`, by insta. After an
//! intended change, run `INSTA_UPDATE=always cargo test --lib ui::` (or
//! `cargo insta review`) and review the diff.

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::app::tests::{app, code, debuggers, key, listed, row};
use crate::app::{App, Event};
use crate::model::feed::Feed;
use crate::model::{ContainerInfo, ContainerKind, ContainerState, EventRow, PodDetail, PodKey};
use crate::theme::Theme;

fn render(app: &App, width: u16, height: u16) -> String {
    let mut screen = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    let theme = Theme::default();
    screen.draw(|f| super::draw(f, app, &theme)).expect("draw");
    let buffer = screen.backend().buffer();
    (0..height)
        .map(|y| {
            let line: String = (0..width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect();
            line.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn assert_snapshot(name: &str, actual: &str) {
    insta::with_settings!({
        snapshot_path => "goldens",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, actual);
    });
}

fn demo_app() -> App {
    let (mut a, _) = app(true);
    let mut crash = row(
        "payments",
        "ledger-worker-7f9c6d8b5-w9x8v",
        "CrashLoopBackOff",
    );
    crash.health = crate::model::Health::Failing;
    crash.restarts = 17;
    crash.last_restart = Some("2026-01-01T00:58:00Z".parse().unwrap());
    crash.ready = 0;
    let mut debugged = row("shop", "redis-0", "Running");
    debugged.debuggers = debuggers("shop", "redis-0", &[true, false]);
    a.update(listed(vec![
        row("shop", "storefront-7d9c8b6f4-x2k9p", "Running"),
        row("shop", "cart-5f6d7c9b8-h2j4k", "Running"),
        debugged,
        crash,
    ]));
    a
}

#[test]
fn pod_list() {
    let mut a = demo_app();
    a.update(key('j'));
    assert_snapshot("pod_list", &render(&a, 110, 12));
}

#[test]
fn pod_list_filtered() {
    let mut a = demo_app();
    a.update(key('/'));
    for c in "stfr".chars() {
        a.update(key(c));
    }
    assert_snapshot("pod_list_filtered", &render(&a, 110, 10));
}

#[test]
fn pod_view() {
    let mut a = demo_app();
    a.update(code(KeyCode::Enter));
    let waiting = ContainerState::Waiting {
        reason: "ImagePullBackOff".into(),
        message: "Back-off pulling image \"doesnotexist\"".into(),
    };
    let detail = PodDetail {
        key: PodKey::new("payments", "ledger-worker-7f9c6d8b5-w9x8v"),
        status: "CrashLoopBackOff".into(),
        phase: "Running".into(),
        node: "node-a2".into(),
        ip: "10.244.1.7".into(),
        qos: "BestEffort".into(),
        containers: vec![
            wait_for_db(),
            ContainerInfo {
                command: vec!["/app/worker".into()],
                args: vec!["--queue".into(), "ledger".into()],
                restarts: 17,
                previous: Some(ContainerState::Terminated {
                    exit_code: 137,
                    reason: "OOMKilled".into(),
                    message: String::new(),
                    finished: Some("2026-01-01T00:29:58Z".parse().unwrap()),
                }),
                ..info(
                    ContainerKind::Regular,
                    "worker",
                    ContainerState::Running {
                        since: Some("2026-01-01T00:30:00Z".parse().unwrap()),
                    },
                    None,
                )
            },
            info(
                ContainerKind::Ephemeral,
                "debugger-x2k9p",
                waiting,
                Some("worker"),
            ),
        ],
        ..Default::default()
    };
    a.update(Event::Detail(Feed::Listed {
        scope: None,
        rows: vec![detail],
    }));
    a.update(Event::PodEvents(Feed::Listed {
        scope: None,
        rows: vec![EventRow {
            name: "e".into(),
            warning: true,
            reason: "BackOff".into(),
            message: "Back-off pulling image \"doesnotexist\"".into(),
            count: 4,
            last_seen: Some("2026-01-01T00:59:00Z".parse().unwrap()),
            field_path: "spec.ephemeralContainers{debugger-x2k9p}".into(),
            ..Default::default()
        },
        EventRow {
            name: "f".into(),
            warning: true,
            reason: "BackOff".into(),
            message: "Back-off restarting failed container worker in pod ledger-worker-7f9c6d8b5-w9x8v_payments(b553fcce-9701-4999-a1b2-6c1d0e4f5a7b)".into(),
            count: 68,
            last_seen: Some("2026-01-01T00:59:40Z".parse().unwrap()),
            field_path: "spec.containers{worker}".into(),
            ..Default::default()
        }],
    }));
    // The worker, whose last run was killed, in focus: the first regular
    // container is selected when the pod opens.
    assert_snapshot("pod_view", &render(&a, 120, 20));
}

/// The pod the describe and YAML views are tested on: a crash-looping
/// worker with a previous run, env from a secret, a port and mounts.
fn described_pod() -> PodDetail {
    let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "ledger-worker-0", "namespace": "payments",
            "labels": {"app": "ledger", "tier": "worker"},
            "annotations": {"note": "first line\nsecond line"},
            "managedFields": [{"manager": "kubectl", "operation": "Update"}],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "ledger-worker", "uid": "u", "controller": true}]},
        "spec": {"nodeName": "node-a2", "serviceAccountName": "ledger",
            "containers": [{"name": "worker", "image": "ledger/worker:2.1",
                "command": ["/app/worker"], "args": ["--queue", "ledger"],
                "ports": [{"containerPort": 8080}],
                "resources": {"limits": {"memory": "128Mi"}},
                "env": [{"name": "QUEUE", "value": "ledger"},
                        {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}],
                "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Running", "podIP": "10.244.1.7", "hostIP": "10.0.0.12", "qosClass": "Burstable",
            "startTime": "2026-01-01T00:00:00Z",
            "conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [{"name": "worker", "image": "ledger/worker:2.1", "imageID": "sha256:ab12",
                "containerID": "containerd://c0ffee", "ready": false, "restartCount": 17,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                    "startedAt": "2026-01-01T00:58:00Z", "finishedAt": "2026-01-01T00:58:02Z"}}}]}
    }))
    .expect("a pod");
    PodDetail::from_pod(&pod)
}

#[test]
fn describe_yaml_and_events_views_at_80x24() {
    let mut a = demo_app();
    a.update(Event::Resize(crate::term::Size::new(80, 24)));
    a.update(key('D'));
    a.update(Event::Detail(Feed::Listed {
        scope: None,
        rows: vec![described_pod()],
    }));
    a.update(Event::PodEvents(Feed::Listed {
        scope: None,
        rows: vec![EventRow {
            name: "e".into(),
            warning: true,
            reason: "BackOff".into(),
            message: "Back-off restarting failed container worker".into(),
            count: 40,
            first_seen: Some("2026-01-01T00:10:00Z".parse().unwrap()),
            last_seen: Some("2026-01-01T00:59:00Z".parse().unwrap()),
            source: "kubelet".into(),
            ..Default::default()
        }],
    }));
    let top = render(&a, 80, 24);
    assert_snapshot("describe_top", &top);
    // The container section: state, last state, env from a secret.
    a.update(code(KeyCode::PageDown));
    assert_snapshot("describe_containers", &render(&a, 80, 24));
    a.update(key('G'));
    assert_snapshot("describe_end", &render(&a, 80, 24));

    a.update(key('y'));
    let yaml = render(&a, 80, 24);
    assert_snapshot("yaml", &yaml);
    assert!(!yaml.contains("managedFields"), "{yaml}");
    a.update(key('/'));
    for c in "restartcount".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    assert_snapshot("yaml_found", &render(&a, 80, 24));

    a.update(code(KeyCode::Esc));
    a.update(key('E'));
    let long = format!(
        "0/3 nodes are available: {}preemption: not eligible due to preemptionPolicy=Never. THE-END",
        "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, ".repeat(12)
    );
    a.update(Event::Events(Feed::Listed {
        scope: None,
        rows: vec![
            EventRow {
                name: "old".into(),
                reason: "Scheduled".into(),
                message: "Successfully assigned payments/api-0 to node-a1".into(),
                object: "pod/api-0".into(),
                namespace: "payments".into(),
                last_seen: Some("2026-01-01T00:50:00Z".parse().unwrap()),
                ..Default::default()
            },
            EventRow {
                name: "new".into(),
                warning: true,
                reason: "FailedScheduling".into(),
                message: long,
                object: "pod/batch-7".into(),
                namespace: "payments".into(),
                last_seen: Some("2026-01-01T00:59:30Z".parse().unwrap()),
                ..Default::default()
            },
        ],
    }));
    let events = render(&a, 80, 24);
    assert_snapshot("events", &events);
    assert!(
        events.contains("THE-END"),
        "the whole message wraps on screen\n{events}"
    );
}

/// A container without a status says why it has not started.
#[test]
fn a_container_without_status_says_why() {
    let mut a = demo_app();
    a.update(code(KeyCode::Enter));
    let mut detail = PodDetail {
        key: PodKey::new("payments", "ledger-worker-7f9c6d8b5-w9x8v"),
        status: "Pending".into(),
        phase: "Pending".into(),
        node: String::new(),
        ip: String::new(),
        qos: "BestEffort".into(),
        containers: vec![info(
            ContainerKind::Regular,
            "worker",
            ContainerState::Unknown,
            None,
        )],
        ..Default::default()
    };
    let mut show = |detail: &PodDetail| {
        a.update(Event::Detail(Feed::Listed {
            scope: None,
            rows: vec![detail.clone()],
        }));
        render(&a, 120, 20)
    };
    let screen = show(&detail);
    assert!(
        screen.contains("not started: the pod is not on a node yet"),
        "{screen}"
    );
    detail.node = "node-a2".into();
    let screen = show(&detail);
    assert!(
        screen.contains("not started: no status from its node yet"),
        "{screen}"
    );
}

#[test]
fn help_overlay() {
    let mut a = demo_app();
    a.update(key('?'));
    assert_snapshot("help", &render(&a, 90, 26));
}

#[test]
fn restricted_user_notice() {
    let (mut a, _) = app(true);
    a.update(Event::Pods(Feed::Forbidden(
        crate::model::problem::Denied {
            verb: "list".into(),
            resource: "pods".into(),
            namespace: None,
        },
    )));
    a.update(Event::Pods(Feed::Listed {
        scope: Some("shop".into()),
        rows: vec![row("shop", "cart-1", "Running")],
    }));
    assert_snapshot("restricted", &render(&a, 130, 8));
}

/// An init container that did its job.
fn wait_for_db() -> ContainerInfo {
    let completed = ContainerState::Terminated {
        exit_code: 0,
        reason: "Completed".into(),
        message: String::new(),
        finished: None,
    };
    info(ContainerKind::Init, "wait-for-db", completed, None)
}

fn info(
    kind: ContainerKind,
    name: &str,
    state: ContainerState,
    target: Option<&str>,
) -> ContainerInfo {
    ContainerInfo {
        kind,
        name: name.into(),
        image: "busybox:1.36".into(),
        state,
        ready: kind == ContainerKind::Regular,
        restarts: 0,
        target: target.map(String::from),
        command: vec![],
        args: vec![],
        previous: None,
        stdio: crate::model::Stdio::TERMINAL,
        mounts: Vec::new(),
    }
}

/// Two panes sharing one attached terminal (colours, a wide character),
/// marked for broadcast, beside a disconnected one.
#[test]
fn workspace_panes() {
    use crate::app::tests::{attached_to_debug_container, ctrl};
    use bytes::Bytes;
    let (mut a, id) = attached_to_debug_container();
    a.update(Event::Resize(crate::term::Size::new(100, 16)));
    a.update(Event::SessionOutput {
        id,
        bytes: Bytes::from_static("\x1b[1;32mok\x1b[0m 漢字 done\r\n# ".as_bytes()),
    });
    a.update(ctrl('b'));
    a.update(key('-'));
    a.update(ctrl('b'));
    a.update(key('S'));
    a.update(Event::SessionEnded {
        id,
        end: crate::model::session::SessionEnd {
            exit_code: None,
            reason: "disconnected: the stream was cut".into(),
            disconnected: true,
        },
    });
    assert_snapshot("workspace", &render(&a, 100, 16));
}

/// Wide enough: the browser and the panes side by side.
#[test]
fn side_by_side() {
    use crate::app::tests::attached_to_debug_container;
    let (mut a, _) = attached_to_debug_container();
    a.update(Event::Resize(crate::term::Size::new(210, 10)));
    assert_snapshot("side_by_side", &render(&a, 210, 10));
}

/// The selected row reads in every theme: a status colour never lands on
/// the selection's own background (high-contrast's `Completed` was white on
/// white).
#[test]
fn the_selected_rows_status_is_readable_in_high_contrast() {
    let (mut a, _) = app(true);
    let mut done = row("batch", "report-28fj1", "Completed");
    done.health = crate::model::Health::Done;
    a.update(listed(vec![done]));
    let theme = Theme::load("high-contrast", None, false).expect("built-in theme");
    let mut screen = Terminal::new(TestBackend::new(100, 6)).expect("test terminal");
    screen.draw(|f| super::draw(f, &a, &theme)).expect("draw");
    let buffer = screen.backend().buffer();
    let (x, y) = (0..6u16)
        .flat_map(|y| (0..100u16).map(move |x| (x, y)))
        .find(|&(x, y)| {
            (0..9u16).all(|i| {
                x + i < 100
                    && buffer[(x + i, y)].symbol() == &"Completed"[i as usize..i as usize + 1]
            })
        })
        .expect("Completed on screen");
    let cell = &buffer[(x, y)];
    assert_ne!(cell.fg, cell.bg, "foreground and background differ");
}

/// The sizes users live at: a laptop's 80×24, a split screen's 120×40, a
/// wide monitor's 250×60.
const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (250, 60)];

/// A cluster as it looks at 3 a.m.: generated names that differ only in
/// their tails, long node names, long statuses, a pod without a node.
fn busy_cluster() -> App {
    let (mut a, _) = app(true);
    let pod = |ns: &str, name: &str, status: &str, health, node: &str| {
        let mut r = row(ns, name, status);
        r.health = health;
        r.node = node.into();
        r
    };
    use crate::model::Health::*;
    let aws = "ip-10-0-12-34.eu-west-1.compute.internal";
    let mut crashing = pod(
        "payments",
        "payments-api-66b8f7d5c9-x2k9p",
        "CrashLoopBackOff",
        Failing,
        aws,
    );
    crashing.restarts = 17;
    crashing.ready = 0;
    crashing.last_restart = Some("2026-01-01T00:58:00Z".parse().unwrap());
    crashing.debuggers = debuggers("payments", "payments-api-66b8f7d5c9-x2k9p", &[false, false]);
    let mut sidecars = pod(
        "monitoring",
        "prometheus-kube-prometheus-stack-prometheus-0",
        "Running",
        Good,
        aws,
    );
    sidecars.total = 2;
    sidecars.ready = 2;
    a.update(listed(vec![
        pod(
            "kube-system",
            "coredns-5d78c9869d-7xk2p",
            "Running",
            Good,
            aws,
        ),
        crashing,
        pod(
            "payments",
            "payments-api-66b8f7d5c9-q7m4n",
            "ImagePullBackOff",
            Failing,
            aws,
        ),
        pod(
            "payments",
            "ledger-migrate-8h2kd",
            "Init:CrashLoopBackOff",
            Failing,
            "node-a2",
        ),
        sidecars,
        pod(
            "search",
            "search-gpu-5c9f8d7b6-w2x4z",
            "Pending",
            Pending,
            "",
        ),
        pod("shop", "redis-0", "Running", Good, "node-a1"),
    ]));
    a
}

fn busy_pod() -> PodDetail {
    let api_waiting = ContainerState::Waiting {
        reason: "CrashLoopBackOff".into(),
        message: "back-off 5m0s restarting failed container=api".into(),
    };
    let image = |c: ContainerInfo, image: &str| ContainerInfo {
        image: image.into(),
        ..c
    };
    PodDetail {
        key: PodKey::new("payments", "payments-api-66b8f7d5c9-x2k9p"),
        status: "CrashLoopBackOff".into(),
        phase: "Running".into(),
        node: "ip-10-0-12-34.eu-west-1.compute.internal".into(),
        ip: "10.244.1.7".into(),
        qos: "Burstable".into(),
        containers: vec![
            wait_for_db(),
            image(
                info(ContainerKind::Regular, "api", api_waiting, None),
                "registry.example.com/payments/api:v2.14.3",
            ),
            image(
                info(
                    ContainerKind::Regular,
                    "istio-proxy",
                    ContainerState::Running { since: None },
                    None,
                ),
                "docker.io/istio/proxyv2:1.22.1",
            ),
            info(
                ContainerKind::Ephemeral,
                "debugger-x7k2q",
                ContainerState::Running { since: None },
                Some("api"),
            ),
            info(
                ContainerKind::Ephemeral,
                "debugger-m4n8z",
                ContainerState::Terminated {
                    exit_code: 1,
                    reason: "Error".into(),
                    message: String::new(),
                    finished: None,
                },
                Some("api"),
            ),
        ],
        ..Default::default()
    }
}

fn busy_pod_view() -> App {
    let mut a = busy_cluster();
    // payments/payments-api-…-x2k9p, the fifth row.
    for _ in 0..4 {
        a.update(key('j'));
    }
    a.update(code(KeyCode::Enter));
    a.update(Event::Detail(Feed::Listed {
        scope: None,
        rows: vec![busy_pod()],
    }));
    a
}

#[test]
fn a_sentence_longer_than_the_line_says_where_it_is_whole() {
    let mut a = busy_cluster();
    a.update(Event::Resize(crate::term::Size::new(80, 24)));
    a.message = Some(crate::app::warning(format!(
        "Recording saved: /home/sre/.local/state/podbay/recordings/{}.cast.",
        "20261124-235959-shop_redis-0_debugger-x7k2q-3".repeat(2)
    )));
    let screen = render(&a, 80, 24);
    let line = screen
        .lines()
        .find(|l| l.contains("Recording saved"))
        .unwrap_or_else(|| panic!("the sentence\n{screen}"));
    assert!(line.trim_end().ends_with("… (M reads it)"), "{line}");
    assert!(line.chars().count() <= 80, "{line}");
}

#[test]
fn a_panes_sentence_is_cut_before_its_key_never_the_key() {
    let (mut a, id) = crate::app::tests::attached_to_debug_container();
    a.update(Event::Resize(crate::term::Size::new(80, 24)));
    a.update(Event::SessionEnded {
        id,
        end: crate::model::session::SessionEnd {
            exit_code: None,
            reason: "could not connect: You may not get pods/exec in namespace shop: ask your cluster admin for `get` on `pods/exec`".into(),
            disconnected: true,
        },
    });
    let screen = render(&a, 80, 24);
    let border = screen
        .lines()
        .find(|l| l.contains("could not connect"))
        .unwrap_or_else(|| panic!("the pane's sentence\n{screen}"));
    assert!(border.contains("… — r to reattach"), "{border}");
    // Whole in the messages view.
    assert!(
        a.said
            .iter()
            .any(|(_, m)| m.text.contains("`get` on `pods/exec`")),
        "{:?}",
        a.said
    );
}

#[test]
fn a_long_command_wraps_under_itself() {
    let mut a = busy_cluster();
    for _ in 0..4 {
        a.update(key('j'));
    }
    a.update(code(KeyCode::Enter));
    let mut pod = busy_pod();
    for c in &mut pod.containers {
        c.command = [
            "sh",
            "-c",
            "while true; do echo a long line of shell for the pod view; sleep 5; done",
        ]
        .map(String::from)
        .to_vec();
    }
    a.update(Event::Detail(Feed::Listed {
        scope: None,
        rows: vec![pod],
    }));
    a.update(Event::Resize(crate::term::Size::new(60, 40)));
    let screen = render(&a, 60, 40);
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("while true"))
        .unwrap_or_else(|| panic!("the command\n{screen}"));
    let next = lines[at + 1];
    assert!(
        next.starts_with("    ") && next.contains("pod view"),
        "the command's next row hangs under it\n{screen}"
    );
}

/// Every screen at every size: a golden file each, and what must hold at
/// any size checked outright.
#[test]
fn the_sorted_columns_arrow_shows_at_every_size() {
    for (w, h) in SIZES {
        let mut a = busy_cluster();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        a.update(Event::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('R'),
            crossterm::event::KeyModifiers::SHIFT,
        )));
        let screen = render(&a, w, h);
        let titles = screen
            .lines()
            .find(|l| l.contains("READY"))
            .unwrap_or_else(|| panic!("{w}x{h}: the titles\n{screen}"));
        assert!(
            titles.contains("RESTART▼") || titles.contains("RESTARTS▼"),
            "{w}x{h}: {titles}"
        );
    }
}

#[test]
fn every_screen_fits_every_size() {
    for (w, h) in SIZES {
        let size = format!("{w}x{h}");
        let mut a = busy_cluster();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_pod_list_{size}"), &screen);
        for (tail, status, ready) in [
            ("x2k9p", "CrashLoopBackOff", "0/1"),
            ("q7m4n", "ImagePullBackOff", "1/1"),
            ("8h2kd", "Init:CrashLoopBackOff", "1/1"),
            ("s-0", "Running", "2/2"),
            ("w2x4z", "Pending", "1/1"),
        ] {
            let line = screen
                .lines()
                .find(|l| l.contains(tail))
                .unwrap_or_else(|| panic!("{size}: a row ending {tail}\n{screen}"));
            let words: Vec<&str> = line.split_whitespace().collect();
            assert!(
                words.contains(&status) && words.contains(&ready),
                "{size}: STATUS and READY whole on the {tail} row\n{screen}"
            );
        }

        let mut a = busy_pod_view();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_pod_view_{size}"), &screen);
        for name in ["debugger-x7k2q", "debugger-m4n8z", "istio-proxy"] {
            let tail = &name[name.len() - 5..];
            assert!(
                screen.lines().any(|l| l.contains(tail)),
                "{size}: {name} told apart by its tail\n{screen}"
            );
        }

        a.update(key('d'));
        // From the image field to the command.
        for _ in 0..2 {
            a.update(code(KeyCode::Tab));
        }
        for c in
            "sh -c 'while true; do cat /proc/1/root/etc/app/config.yaml; sleep 5; done'".chars()
        {
            a.update(key(c));
        }
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_launcher_{size}"), &screen);
        assert!(
            screen.contains("launch and attach"),
            "{size}: the launcher's keys\n{screen}"
        );
        let preview_end = screen
            .lines()
            .skip_while(|l| !l.contains("┌ launch"))
            .skip(1)
            .take_while(|l| !l.contains("launch and attach"))
            .filter_map(|l| Some(l[l.find('│')? + '│'.len_utf8()..l.rfind('│')?].trim()))
            .filter(|l| !l.is_empty())
            .last()
            .unwrap_or_default();
        assert!(
            preview_end.ends_with('}') || preview_end.ends_with('…'),
            "{size}: the preview ends whole or marked cut, not {preview_end:?}\n{screen}"
        );

        let mut a = busy_cluster();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        a.update(key('?'));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_help_{size}"), &screen);
        assert!(screen.contains("closes this help."), "{screen}");
        // Taller than the screen, it scrolls to its last line.
        if screen.contains("lines 1–") {
            for _ in 0..40 {
                a.update(key('j'));
            }
            let scrolled = render(&a, w, h);
            let (shown, total) = scrolled
                .split("lines ")
                .nth(1)
                .and_then(|rest| rest.split_once(':'))
                .and_then(|(range, _)| range.split_once(" of "))
                .unwrap_or_else(|| panic!("{size}: the scroll line\n{scrolled}"));
            let last = shown.split('–').nth(1).unwrap_or_default();
            assert_eq!(last, total, "{size}: scrolled to the last line\n{scrolled}");
        }

        let (mut a, _) = crate::app::tests::attached_to_debug_container();
        a.contexts_used.push("prod-eu-west-1".into());
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        a.update(crate::app::tests::ctrl('b'));
        a.update(key('?'));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_pane_help_{size}"), &screen);
        assert!(screen.contains("closes this help."), "{screen}");
        let all_shown = super::help::PANE_KEYS
            .iter()
            .all(|k| screen.contains(&k.does[..k.does.len().min(20)]));
        assert!(
            all_shown || screen.contains("more lines (a taller terminal"),
            "{size}: every pane key, or a note saying some are not shown\n{screen}"
        );
        if h >= 40 {
            assert!(all_shown, "{size}: every pane key\n{screen}");
        }

        a.update(key('q'));
        for _ in 0..3 {
            a.update(crate::app::tests::ctrl('b'));
            a.update(key('|'));
        }
        a.update(crate::app::tests::ctrl('b'));
        a.update(key('S'));
        // Halved and halved again, as tmux splits: the last panes are narrow.
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_panes_{size}"), &screen);
        let title_row = screen.lines().nth(1).unwrap_or_default();
        assert_eq!(
            title_row.matches('⚑').count(),
            4,
            "{size}: every one of 4 panes keeps its broadcast flag\n{screen}"
        );
        a.update(crate::app::tests::ctrl('b'));
        a.update(key('='));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_even_panes_{size}"), &screen);
        let title_row = screen.lines().nth(1).unwrap_or_default();
        assert_eq!(
            (
                title_row.matches('⚑').count(),
                title_row.matches("sim ▸").count()
            ),
            (4, 4),
            "{size}: every pane keeps its flag and says its context\n{screen}"
        );
    }
}

/// The launcher of a pod that cannot start a debug container says why once,
/// also after `enter` (it used to repeat the sentence).
#[test]
fn an_unschedulable_pods_launcher_says_why_once() {
    let mut a = busy_cluster();
    a.update(code(KeyCode::Enter));
    let mut pending = busy_pod();
    pending.node = String::new();
    pending.phase = "Pending".into();
    a.update(Event::Detail(Feed::Listed {
        scope: None,
        rows: vec![pending],
    }));
    a.update(key('d'));
    let why = "is not on a node yet";
    let screen = render(&a, 120, 40);
    assert_eq!(screen.matches(why).count(), 1, "{screen}");
    a.update(code(KeyCode::Enter));
    let screen = render(&a, 120, 40);
    assert_eq!(screen.matches(why).count(), 1, "{screen}");
    assert!(
        !screen.contains("What will be sent"),
        "nothing can be sent\n{screen}"
    );
}

/// The launcher says what the debugger will share and cost: the memory
/// limits it counts against, the debuggers running there already, a
/// sidecar target, the pod's own user namespace; at both extreme sizes.
#[test]
fn the_launcher_says_what_a_debugger_shares_and_costs() {
    let manifest: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "payments-api-66b8f7d5c9-x2k9p", "namespace": "payments"},
        "spec": {"hostUsers": false,
            "initContainers": [{"name": "istio-proxy", "image": "istio/proxyv2:1.22.1", "restartPolicy": "Always"}],
            "containers": [{"name": "api", "image": "api:2", "resources": {"limits": {"memory": "512Mi"}}}],
            "ephemeralContainers": [{"name": "debugger-old", "image": "busybox:1.36"}]},
        "status": {"ephemeralContainerStatuses": [{"name": "debugger-old", "image": "busybox:1.36",
            "imageID": "", "ready": false, "restartCount": 0, "state": {"running": {}}}]},
    }))
    .unwrap();
    for (w, h) in [(80, 24), (250, 60)] {
        let mut a = busy_cluster();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        a.update(code(KeyCode::Enter));
        let mut pod = busy_pod();
        pod.manifest = Box::new(manifest.clone());
        a.update(Event::Detail(Feed::Listed {
            scope: None,
            rows: vec![pod],
        }));
        a.update(key('d'));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_launcher_facts_{w}x{h}"), &screen);
        // The form's keys stay; the facts are said as far as room allows.
        assert!(
            screen.contains("enter launch and attach"),
            "{w}x{h}\n{screen}"
        );
        let facts: &[&str] = if h > 24 {
            &[
                "memory counts against",
                "One debug container runs",
                "user namespace of its own",
            ]
        } else {
            &["memory counts against"]
        };
        for fact in facts {
            assert!(screen.contains(fact), "{w}x{h}: {fact}\n{screen}");
        }
    }
}

/// Marked pods in the list, and the form for all of them with one pod that
/// cannot take the chosen target: every pod's line and the keys fit.
#[test]
fn marked_pods_and_their_form_fit_every_size() {
    use crate::app::fleet::FleetPod;
    for (w, h) in SIZES {
        let size = format!("{w}x{h}");
        let mut a = demo_app();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        // cart, then redis-0 (the list is in namespace/name order).
        a.update(key('j'));
        a.update(key(' '));
        a.update(key(' '));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_marked_list_{size}"), &screen);
        let marked: Vec<&str> = screen.lines().filter(|l| l.starts_with("● ")).collect();
        assert!(
            marked.len() == 2 && marked[0].contains("cart-") && marked[1].contains("redis-0"),
            "{size}\n{screen}"
        );
        assert!(screen.contains("2 marked"), "{size}\n{screen}");

        let pod = |name: &str, container: &str| {
            let mut detail = crate::app::tests::pod_detail(None);
            detail.key = PodKey::new("shop", name);
            detail.containers[0].name = container.into();
            FleetPod {
                cluster: crate::app::tests::sim_cluster(),
                key: detail.key.clone(),
                detail: Ok(detail),
                policy: None,
            }
        };
        // `d` reads the marked pods; the form opens with what the read found.
        a.update(key('d'));
        a.update(Event::PodsRead {
            cluster: crate::app::tests::sim_cluster(),
            pods: vec![
                pod("cart-5f6d7c9b8-h2j4k", "cart"),
                pod("redis-0", "redis"),
                pod("storefront-7d9c8b6f4-x2k9p", "web"),
            ],
        });
        // The target: from each pod's first to `cart`.
        a.update(code(KeyCode::BackTab));
        a.update(code(KeyCode::Right));
        let screen = render(&a, w, h);
        assert_snapshot(&format!("fit_fleet_{size}"), &screen);
        for line in [
            "Debug container in 3 pods",
            "1 launch, 0 attach, 2 cannot",
            "has no container \"cart\" to target",
            "enter launch in 1",
        ] {
            assert!(screen.contains(line), "{size}: {line}\n{screen}");
        }
    }
}

/// The file browser on a distroless container, a download under way and
/// one done, at the smallest size and a wide one.
#[test]
fn file_browser_with_copies() {
    use crate::app::files::{FilesEvent, Via};
    use crate::model::files::{Entry, Kind};
    let mut a = crate::app::tests::in_pod_view();
    let effects = a.update(key('b'));
    let generation = effects
        .iter()
        .find_map(|e| match e {
            crate::app::Effect::Files { generation, .. } => Some(*generation),
            _ => None,
        })
        .expect("a listing");
    let entry = |name: &str, kind: Kind, mode: u32, size: u64| Entry {
        name: name.into(),
        kind,
        mode,
        size,
        uid: 65532,
        gid: 65532,
        mtime: 1_767_225_600,
    };
    a.update(Event::Files(FilesEvent::Listed {
        generation,
        via: Via::Debugger("debugger-r9t58".into()),
        dir: "/var/dump".into(),
        result: Ok(vec![
            entry("old", Kind::Dir, 0o755, 4096),
            entry("heap.hprof", Kind::File, 0o644, 50_331_667),
            entry("latest", Kind::Link("heap.hprof".into()), 0o777, 10),
            entry("core.1", Kind::File, 0o600, 2_310_144),
        ]),
    }));
    a.update(key('j'));
    a.update(key('g'));
    a.update(key('j'));
    a.update(key('g'));
    let ids: Vec<u64> = match &a.view {
        crate::app::View::Files(b) => b.transfers.iter().map(|t| t.id).collect(),
        _ => panic!("the file browser"),
    };
    a.update(Event::Files(FilesEvent::Ended {
        id: ids[0],
        outcome: Ok("Copied 2.2 MiB in 0.1 s (22.0 MB/s).".into()),
    }));
    a.update(Event::Files(FilesEvent::Progress {
        id: ids[1],
        bytes: 20 << 20,
        total: Some(48 << 20),
        elapsed_ms: 500,
    }));
    assert_snapshot("file_browser_80x24", &render(&a, 80, 24));
    assert_snapshot("file_browser_160x30", &render(&a, 160, 30));
}

#[test]
fn forwards_view_and_form() {
    use crate::model::forward::ForwardEvent;
    let mut a = crate::app::tests::in_pod_view();
    let forward = |a: &mut App, remote: &str, local: &str| {
        a.update(key('F'));
        for c in remote.chars() {
            a.update(key(c));
        }
        a.update(Event::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Tab,
            crossterm::event::KeyModifiers::NONE,
        )));
        for c in local.chars() {
            a.update(key(c));
        }
    };
    // A typed port, and a free local port (the one that followed, cleared).
    forward(&mut a, "8080", "");
    for _ in 0..4 {
        a.update(Event::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Backspace,
            crossterm::event::KeyModifiers::NONE,
        )));
    }
    assert_snapshot("forward_form_80x24", &render(&a, 80, 24));
    a.update(Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Enter,
        crossterm::event::KeyModifiers::NONE,
    )));
    forward(&mut a, "6379", "16379");
    a.update(Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Enter,
        crossterm::event::KeyModifiers::NONE,
    )));
    let local = |port: u16| std::net::SocketAddr::from(([127, 0, 0, 1], port));
    a.update(Event::Forward {
        id: 1,
        event: ForwardEvent::Listening {
            local: local(41235),
            remote: 8080,
        },
    });
    a.update(Event::Forward {
        id: 1,
        event: ForwardEvent::Reaching {
            pod: "shop/web-1".into(),
            switched: false,
        },
    });
    a.update(Event::ForwardTotals {
        id: 1,
        open: 3,
        to_pod: 1_234,
        from_pod: 52_428_800,
    });
    a.update(Event::Forward {
        id: 2,
        event: ForwardEvent::Listening {
            local: local(16379),
            remote: 6379,
        },
    });
    a.update(Event::Forward {
        id: 2,
        event: ForwardEvent::Waiting(
            "waiting for a Running, Ready pod; new connections wait up to 30 s".into(),
        ),
    });
    let effects = a.update(Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Esc,
        crossterm::event::KeyModifiers::NONE,
    )));
    drop(effects);
    for c in ":pf\r".chars() {
        let code = match c {
            '\r' => crossterm::event::KeyCode::Enter,
            c => crossterm::event::KeyCode::Char(c),
        };
        a.update(Event::Key(crossterm::event::KeyEvent::new(
            code,
            crossterm::event::KeyModifiers::NONE,
        )));
    }
    a.update(key('j'));
    assert_snapshot("forwards_view_80x24", &render(&a, 80, 24));
    assert_snapshot("forwards_view_160x30", &render(&a, 160, 30));
}

#[test]
fn nodes_view_and_debug_form() {
    use crate::model::node::NodeRow;
    let (mut a, _) = app(true);
    a.update(listed(vec![
        crate::model::PodRow {
            node: "node-a1".into(),
            ..row("shop", "web-1", "Running")
        },
        crate::model::PodRow {
            node: "node-b1".into(),
            ..row("shop", "cart-1", "Running")
        },
    ]));
    a.update(key('O'));
    let now = a.now;
    let node = |name: &str, status: &str, ready: bool, roles: &str, taints: &[&str]| NodeRow {
        context: None,
        name: name.into(),
        status: status.into(),
        ready,
        roles: roles.into(),
        version: "v1.33.1".into(),
        created: now
            .checked_sub(jiff::SignedDuration::from_hours(41 * 24))
            .ok(),
        taints: taints.iter().map(|t| t.to_string()).collect(),
        os: "linux".into(),
        allocatable_cpu_m: 4000,
        allocatable_memory: 16 << 30,
    };
    a.update(Event::Nodes(Feed::Listed {
        scope: None,
        rows: vec![
            node(
                "node-a1",
                "Ready",
                true,
                "control-plane",
                &["node-role.kubernetes.io/control-plane:NoSchedule"],
            ),
            node("node-b1", "Ready", true, "<none>", &[]),
            node(
                "node-b2",
                "Ready,SchedulingDisabled",
                true,
                "<none>",
                &["node.kubernetes.io/unschedulable:NoSchedule"],
            ),
            node("node-win1", "NotReady", false, "<none>", &[]),
        ],
    }));
    assert_snapshot("nodes_view_80x24", &render(&a, 80, 24));
    a.update(key('d'));
    a.update(code(KeyCode::Down));
    assert_snapshot("node_debug_form_80x24", &render(&a, 80, 24));
}

/// `:svc` over every namespace: kubectl's columns and ENDPOINTS (a
/// Service whose pods are not ready, one that selects none, one kept by
/// hand), and at 80 columns EXTERNAL-IP, then CLUSTER-IP, give way.
#[test]
fn services_view() {
    use crate::model::service::ServiceRow;
    let (mut a, _) = app(true);
    let pod = |ns: &str, name: &str, labels: &str, ready: u16| crate::model::PodRow {
        labels: labels.into(),
        ready,
        total: 1,
        ..row(ns, name, "Running")
    };
    a.update(listed(vec![
        pod("shop", "storefront-1", "app=storefront", 1),
        pod("shop", "storefront-2", "app=storefront", 0),
        pod("payments", "api-1", "app=api", 1),
    ]));
    a.update(key(':'));
    for c in "svc".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    let created = a
        .now
        .checked_sub(jiff::SignedDuration::from_hours(41 * 24))
        .unwrap();
    let service = |ns: &str, name: &str, spec: serde_json::Value| {
        ServiceRow::from_object(&serde_json::json!({
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": created.to_string()},
            "spec": spec,
        }))
    };
    a.update(Event::Services(Feed::Listed {
        scope: None,
        rows: vec![
            service(
                "shop",
                "storefront",
                serde_json::json!({"type": "NodePort", "clusterIP": "10.96.14.20",
                "selector": {"app": "storefront"},
                "ports": [{"port": 80, "targetPort": "http", "nodePort": 30080}, {"port": 9000}]}),
            ),
            service(
                "shop",
                "checkout",
                serde_json::json!({"clusterIP": "10.96.14.31",
                "selector": {"app": "checkout"}, "ports": [{"port": 80}]}),
            ),
            service(
                "payments",
                "api",
                serde_json::json!({"type": "LoadBalancer", "clusterIP": "10.96.52.7",
                "selector": {"app": "api"}, "ports": [{"port": 443, "targetPort": 8080}]}),
            ),
            service(
                "payments",
                "legacy-db",
                serde_json::json!({"clusterIP": "None", "ports": [{"port": 5432}]}),
            ),
        ],
    }));
    assert_snapshot("services_view_80x24", &render(&a, 80, 24));
    assert_snapshot("services_view_250x60", &render(&a, 250, 60));
}

#[test]
fn a_node_name_with_combining_marks_keeps_its_row_in_its_columns() {
    use crate::model::node::NodeRow;
    let (mut a, _) = app(true);
    a.update(key('O'));
    let node = |name: &str| NodeRow {
        context: None,
        name: name.into(),
        status: "Ready".into(),
        ready: true,
        roles: "<none>".into(),
        version: "v1.33.1".into(),
        created: None,
        taints: vec![],
        os: "linux".into(),
        allocatable_cpu_m: 4000,
        allocatable_memory: 16 << 30,
    };
    a.update(Event::Nodes(Feed::Listed {
        scope: None,
        rows: vec![node("node-e\u{301}\u{301}"), node("node-b1")],
    }));
    let screen = render(&a, 120, 10);
    // Each cell of the buffer is one column: STATUS starts in the same one.
    let columns: Vec<usize> = screen
        .lines()
        .filter(|l| l.contains("node-"))
        .map(|l| {
            let at = l.find("Ready").expect("a status");
            unicode_width::UnicodeWidthStr::width(&l[..at])
        })
        .collect();
    assert_eq!(columns.len(), 2, "{screen}");
    assert_eq!(columns[0], columns[1], "{screen}");
}

#[test]
fn debuggers_view_at_80x24_and_250x60() {
    let mut a = busy_cluster();
    let mut more = row("payments", "payments-api-7c9f8d6b5-qv8lm", "Running");
    more.debuggers = debuggers(
        "payments",
        "payments-api-7c9f8d6b5-qv8lm",
        &[true, true, false],
    );
    if let Some(list) = more.debuggers.as_mut().and_then(std::sync::Arc::get_mut) {
        list[1].image = "registry.internal.example/tools/netshoot:1".into();
        list[1].state = ContainerState::Waiting {
            reason: "ImagePullBackOff".into(),
            message: String::new(),
        };
        list[1].started = None;
        list[2].target = Some("payments-api".into());
    }
    a.update(Event::Pods(Feed::Applied(more)));
    for c in ":debuggers".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    a.update(key('S'));
    a.update(key('j'));
    assert_snapshot("debuggers_view_80x24", &render(&a, 80, 24));
    assert_snapshot("debuggers_view_250x60", &render(&a, 250, 60));
    a.update(key('k'));
    a.update(key('x'));
    assert_snapshot("debuggers_stop_question_80x24", &render(&a, 80, 24));
}

#[test]
fn the_copy_form_takes_a_pull_secret() {
    let mut a = busy_pod_view();
    a.update(key('C'));
    // To the pull secrets, the last field.
    for _ in 0..2 {
        a.update(code(KeyCode::Tab));
    }
    for c in "regcred".chars() {
        a.update(key(c));
    }
    assert_snapshot("copy_form_80x24", &render(&a, 80, 24));
}

mod capture_views;
mod cluster_views;
mod workload_views;

/// The busy cluster with the metrics API's figures: one pod near its
/// memory limit (red), one that asks for nothing (`n/a` percentages), one
/// not measured (`n/a`), sorted by memory.
#[test]
fn pod_list_with_cpu_and_memory_at_every_size() {
    use crate::app::usage_fixtures::{measured, used};
    use crate::model::usage::Asks;
    for (w, h) in SIZES {
        let mut a = busy_cluster();
        let asks = Asks {
            cpu_request_m: 250,
            cpu_limit_m: 1000,
            memory_request: 128 << 20,
            memory_limit: 256 << 20,
        };
        for key in [
            PodKey::new("shop", "redis-0"),
            PodKey::new("payments", "payments-api-66b8f7d5c9-x2k9p"),
        ] {
            let mut with_asks = a
                .pods
                .get(&crate::model::RowKey::here(key))
                .expect("a pod of the fixture")
                .clone();
            with_asks.asks = Some(Box::new(asks));
            a.update(Event::Pods(Feed::Applied(with_asks)));
        }
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        a.update(Event::Tick("2026-01-01T01:00:01Z".parse().unwrap()));
        a.update(measured(vec![
            used("shop", "redis-0", 240, 250),
            used("payments", "payments-api-66b8f7d5c9-x2k9p", 1, 20),
            used("kube-system", "coredns-5d78c9869d-7xk2p", 3, 17),
            used(
                "monitoring",
                "prometheus-kube-prometheus-stack-prometheus-0",
                180,
                1400,
            ),
        ]));
        for c in ":sort memory".chars() {
            a.update(crate::app::tests::key(c));
        }
        a.update(crate::app::tests::code(KeyCode::Enter));
        let screen = render(&a, w, h);
        // At 80 columns with every namespace, names keep their room.
        assert_eq!(screen.contains("MEM▼"), w > 80, "{w}x{h}\n{screen}");
        assert_snapshot(&format!("pod_list_usage_{w}x{h}"), &screen);
    }
}

/// The pod view of a container climbing toward its memory limit: CPU and
/// MEM per container, and the focused one's figures against its request
/// and limit with their trend, at 80x24, 120x30 and 250x60.
#[test]
fn a_containers_use_against_its_limit_with_its_trend() {
    use crate::model::usage::{PodUse, Use};
    let manifest: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "ledger-worker-7f9c6d8b5-w9x8v", "namespace": "payments"},
        "spec": {"containers": [{"name": "worker", "image": "ledger:1", "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"cpu": "500m", "memory": "96Mi"}}}]},
    }))
    .unwrap();
    for (w, h) in [(80, 24), (120, 30), (250, 60)] {
        let mut a = demo_app();
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        a.update(code(KeyCode::Enter));
        let detail = PodDetail {
            key: PodKey::new("payments", "ledger-worker-7f9c6d8b5-w9x8v"),
            status: "Running".into(),
            phase: "Running".into(),
            node: "node-a2".into(),
            manifest: Box::new(manifest.clone()),
            containers: vec![ContainerInfo {
                restarts: 3,
                previous: Some(ContainerState::Terminated {
                    exit_code: 137,
                    reason: "OOMKilled".into(),
                    message: String::new(),
                    finished: Some("2026-01-01T00:58:00Z".parse().unwrap()),
                }),
                ..info(
                    ContainerKind::Regular,
                    "worker",
                    ContainerState::Running {
                        since: Some("2026-01-01T00:58:02Z".parse().unwrap()),
                    },
                    None,
                )
            }],
            ..Default::default()
        };
        a.update(Event::Detail(Feed::Listed {
            scope: None,
            rows: vec![detail],
        }));
        let start: jiff::Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
        for (i, mib) in [20u32, 32, 45, 58, 70, 81, 88].into_iter().enumerate() {
            a.update(Event::Tick(
                start + jiff::SignedDuration::from_secs(15 * i as i64 + 1),
            ));
            let used = Use {
                microcores: 40_000 + 10_000 * i as u32,
                memory_kib: mib * 1024,
            };
            a.update(Event::Usage {
                cluster: crate::app::tests::sim_cluster(),
                namespaces: None,
                read: Ok((
                    vec![PodUse {
                        key: PodKey::new("payments", "ledger-worker-7f9c6d8b5-w9x8v"),
                        total: used,
                        containers: vec![("worker".into(), used)],
                    }],
                    Some(std::time::Duration::from_secs(15)),
                )),
            });
        }
        let screen = render(&a, w, h);
        assert!(
            screen.contains("88Mi (request 64Mi, limit 96Mi: 91 %)"),
            "{w}x{h}\n{screen}"
        );
        assert!(screen.contains("restarted 3 times"), "{w}x{h}\n{screen}");
        assert_snapshot(&format!("pod_view_usage_{w}x{h}"), &screen);
    }
}

/// The nodes view with kubectl top node's figures.
#[test]
fn nodes_view_with_cpu_and_memory() {
    use crate::app::usage_fixtures::{measured, used};
    use crate::model::node::NodeRow;
    use crate::model::usage::Use;
    for (w, h) in [(80, 24), (250, 60)] {
        let (mut a, _) = app(true);
        a.update(Event::Resize(crate::term::Size::new(w, h)));
        a.update(listed(vec![row("shop", "web-1", "Running")]));
        a.update(key('O'));
        let node = |name: &str| NodeRow {
            context: None,
            name: name.into(),
            status: "Ready".into(),
            ready: true,
            roles: "<none>".into(),
            version: "v1.33.1".into(),
            created: None,
            taints: Vec::new(),
            os: "linux".into(),
            allocatable_cpu_m: 3920,
            allocatable_memory: 15_223_608 << 10,
        };
        a.update(Event::Nodes(Feed::Listed {
            scope: None,
            rows: vec![node("node-a1"), node("node-b1")],
        }));
        let effects = a.update(Event::Tick("2026-01-01T01:00:01Z".parse().unwrap()));
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, crate::app::Effect::ReadNodeUsage { .. })),
            "the nodes view reads the nodes' use: {effects:?}"
        );
        a.update(measured(vec![used("shop", "web-1", 3, 12)]));
        a.update(Event::NodeUsage {
            cluster: crate::app::tests::sim_cluster(),
            read: Ok(vec![(
                "node-a1".into(),
                Use {
                    microcores: 329_088,
                    memory_kib: 2_748_180,
                },
            )]),
        });
        let screen = render(&a, w, h);
        assert!(
            screen.contains("330m") && screen.contains(" 8%") && screen.contains("18%"),
            "{w}x{h}\n{screen}"
        );
        assert_snapshot(&format!("nodes_view_usage_{w}x{h}"), &screen);
        // A node read: what it uses of what it can give, its pods by use.
        a.update(code(KeyCode::Enter));
        let screen = render(&a, w, h);
        assert!(
            screen.contains("Uses 330m of the 3920m CPU (8 %)"),
            "{w}x{h}\n{screen}"
        );
        assert!(
            screen.contains("shop/web-1") && screen.contains("12Mi"),
            "{w}x{h}\n{screen}"
        );
    }
}

//! Sessions you can trust: a terminal belongs to the cluster (and the
//! credentials) it was opened with. Two simulators with the same pod names,
//! merged into one kubeconfig as a user merges production and staging.

use crate::support;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use podbay::cluster::debug::{self, Startup};
use podbay::model::debug::DebugSpec;
use support::{PodbayScreen, api_port_after, client, exits_cleanly, merged_kubeconfig, start_sim};

/// The same debug container (a shell) in redis-0 of `sim`, added through
/// the API, so both clusters have a container of the same name to attach to.
async fn add_shell(sim: &podbay::sim::SimHandle) {
    let client = client(sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    let spec = DebugSpec {
        name: "debugger-trust".into(),
        image: "busybox:1.36".into(),
        target: Some("redis".into()),
        command: vec!["sh".into()],
        stdin: true,
        tty: true,
        ..Default::default()
    };
    podbay::cluster::debug::launch(&spec, &client, "shop", "redis-0")
        .await
        .expect("launched");
    let started = debug::await_startup(
        &pods,
        "redis-0",
        (podbay::model::ContainerKind::Ephemeral, "debugger-trust"),
        std::time::Duration::from_secs(10),
        &mut |_, _| {},
    )
    .await;
    assert_eq!(started, Startup::Running);
}

/// From the pod list: open redis-0 and attach to its debug container (the
/// last container in the pod view).
async fn attach_to_the_shell(screen: &PodbayScreen) {
    screen
        .wait_for("shop pods", |t| t.contains("redis-0"))
        .await;
    screen.raw(b"\x1b").await;
    screen.keys("/redis-0\r").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| t.contains("debugger-trust"))
        .await;
    screen.keys("Ga").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_of_the_same_name_on_another_context_gets_its_own_terminal() {
    let sim_a = start_sim(0).await;
    let sim_b = start_sim(0).await;
    add_shell(&sim_a).await;
    add_shell(&sim_b).await;
    let config = merged_kubeconfig(&[(&sim_a, "sim-a"), (&sim_b, "sim-b")], "two-clusters");
    let args = vec![
        "--kubeconfig".to_string(),
        config.display().to_string(),
        "--context".into(),
        "sim-a".into(),
    ];
    let mut screen = PodbayScreen::spawn(&args, 120, 36);

    attach_to_the_shell(&screen).await;
    screen
        .wait_for("attached on sim-a", |t| {
            t.contains("attach shop/redis-0/debugger-trust") && t.contains("● attached")
        })
        .await;
    let port_a = api_port_after(&screen, "A=").await;
    assert_eq!(
        port_a,
        format!("{}/", sim_a.addr().port()),
        "the first attach is sim-a's process"
    );

    // To sim-b, the same pod name, `a`: a new stream on sim-b, never a
    // second pane on sim-a's.
    screen.raw(b"\x02d").await;
    screen.raw(b"\x1b").await;
    screen.keys(":ctx sim-b\r").await;
    screen
        .wait_for("sim-b connected", |t| {
            t.contains("Switched to context sim-b")
        })
        .await;
    attach_to_the_shell(&screen).await;
    screen
        .wait_for("a pane of sim-b, labelled so", |t| {
            t.contains("sim-b ▸ attach shop/redis-0/debugger-trust")
                && t.contains("sim-a ▸ attach shop/redis-0/debugger-trust")
        })
        .await;
    assert!(
        !screen.text().contains("shared ×2"),
        "not shared across clusters:\n{}",
        screen.text()
    );
    let port_b = api_port_after(&screen, "B=").await;
    assert_eq!(
        port_b,
        format!("{}/", sim_b.addr().port()),
        "what is typed in sim-b's pane runs on sim-b (sim-a's is {port_a})"
    );

    // Two live sessions: q asks first, and n keeps podbay running.
    screen.raw(b"\x02d").await;
    screen.keys("q").await;
    screen
        .wait_for("the quit question", |t| {
            t.contains("2 sessions are live (2 attach). Quit? y/n")
        })
        .await;
    screen.keys("n").await;
    screen
        .wait_for("still running", |t| !t.contains("Quit? y/n"))
        .await;
    assert!(screen.child.try_wait().expect("status").is_none());
    screen.keys(":q\r").await;
    screen
        .wait_for("the question again, for :q", |t| t.contains("Quit? y/n"))
        .await;
    screen.keys("y").await;
    exits_cleanly(&mut screen).await;
    let _ = std::fs::remove_file(config);
}

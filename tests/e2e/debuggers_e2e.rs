//! The debuggers view at 80×24, as a person finds a forgotten shell in the
//! demo's `hello`: `:debuggers`, running ones first, back into the shell
//! with `a`, then `x` and `y` end it, while the container it targets runs
//! on unrestarted.

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use crate::support::{self, PodbayScreen, args, kubeconfig};

const HELLO: &str = "hello-6c8f9d7b5-k3l9m";
const FORGOTTEN: &str = "debugger-r8t5c";

/// hello's own container: running, and its restart count.
async fn hello_container(pods: &Api<Pod>) -> (bool, i32) {
    let pod = pods.get(HELLO).await.expect("hello");
    let status = pod
        .status
        .and_then(|s| s.container_statuses)
        .and_then(|list| list.into_iter().find(|c| c.name == "hello"))
        .expect("hello's status");
    let running = status.state.is_some_and(|s| s.running.is_some());
    (running, status.restart_count)
}

/// The forgotten debugger's state as the API reports it.
async fn forgotten_state(pods: &Api<Pod>) -> Option<k8s_openapi::api::core::v1::ContainerState> {
    pods.get(HELLO)
        .await
        .ok()?
        .status?
        .ephemeral_container_statuses?
        .into_iter()
        .find(|s| s.name == FORGOTTEN)?
        .state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_shell_is_found_attached_to_and_stopped_without_touching_its_target() {
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "debuggers-view");
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "default");
    support::eventually(30, "the forgotten shell running", || {
        let pods = &pods;
        async move {
            forgotten_state(pods)
                .await
                .is_some_and(|s| s.running.is_some())
                .then_some(())
        }
    })
    .await;
    let before = hello_container(&pods).await;
    assert!(before.0, "hello runs");

    let screen = PodbayScreen::spawn(&args(&config, &["-n", "default"]), 80, 24);
    screen
        .wait_for("the list", |t| t.contains("hello-") && t.contains("● live"))
        .await;
    screen.keys(":debuggers\r").await;
    screen
        .wait_for("hello's four debuggers, one running", |t| {
            t.contains("1 running of 4")
                && t.lines()
                    .any(|l| l.contains(FORGOTTEN) && l.contains("Running"))
                && t.contains("Error (exit 137)")
        })
        .await;
    // Running first: the forgotten shell is the first row.
    screen.keys("S").await;
    screen
        .wait_for("sorted running first", |t| {
            t.contains("sorted by state")
                && t.lines()
                    .find(|l| l.contains(HELLO))
                    .is_some_and(|l| l.contains(FORGOTTEN))
        })
        .await;

    // Back into it.
    screen.keys("a").await;
    screen
        .wait_for("the attached pane", |t| {
            t.contains(&format!("attach default/{HELLO}/{FORGOTTEN}")) && t.contains("attached")
        })
        .await;
    screen.keys("echo $((6*7))-up\r").await;
    screen
        .wait_for("the shell answers", |t| {
            t.lines()
                .any(|l| l.contains("42-up") && !l.contains("echo"))
        })
        .await;
    // ctrl-b d: back to the browser, still on the debuggers view.
    screen.keys("\x02d").await;
    screen
        .wait_for("the view again", |t| t.contains("1 running of 4"))
        .await;

    // A key other than y keeps it.
    screen.keys("x").await;
    screen
        .wait_for("the question, key first", |t| {
            t.contains(&format!("y stops {FORGOTTEN} in default/hello-"))
        })
        .await;
    screen.keys("n").await;
    screen
        .wait_for("kept", |t| {
            t.contains(&format!("{FORGOTTEN} keeps running"))
        })
        .await;
    assert!(
        forgotten_state(&pods)
            .await
            .is_some_and(|s| s.running.is_some())
    );

    screen.keys("x").await;
    screen
        .wait_for("asked again", |t| {
            t.contains(&format!("y stops {FORGOTTEN}"))
        })
        .await;
    screen.keys("y").await;
    screen
        .wait_for_within(40, "stopped, and the view live", |t| {
            t.contains(&format!("Stopped debug container {FORGOTTEN}"))
                && t.contains("0 running of 4")
        })
        .await;
    let state = forgotten_state(&pods).await.expect("a state");
    assert!(state.terminated.is_some(), "{state:?}");
    assert_eq!(
        hello_container(&pods).await,
        before,
        "hello runs on, unrestarted"
    );
}

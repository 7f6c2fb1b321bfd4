//! The simulator driven through kube-rs, podbay's own client: watch
//! semantics, the ephemeral container lifecycle, and shared streams.

use crate::support;

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ContainerState, Event, Pod};
use kube::api::{
    Api, AttachParams, ListParams, LogParams, Patch, PatchParams, WatchEvent, WatchParams,
};
use serde_json::json;
use support::{client, eventually, start_sim};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const NS: &str = "shop";
const POD: &str = "redis-0";

fn debug_container(name: &str, image: &str, command: &[&str]) -> serde_json::Value {
    json!({"spec": {"ephemeralContainers": [{
        "name": name, "image": image, "command": command,
        "stdin": true, "tty": true, "targetContainerName": "redis",
    }]}})
}

async fn add_debug(pods: &Api<Pod>, name: &str, image: &str, command: &[&str]) -> Pod {
    pods.patch_ephemeral_containers(
        POD,
        &PatchParams::default(),
        &Patch::Strategic(debug_container(name, image, command)),
    )
    .await
    .expect("ephemeral container is added")
}

async fn ephemeral_state(pods: &Api<Pod>, name: &str) -> Option<ContainerState> {
    let pod = pods.get(POD).await.ok()?;
    pod.status?
        .ephemeral_container_statuses?
        .into_iter()
        .find(|s| s.name == name)?
        .state
}

#[tokio::test]
async fn watch_streams_changes_from_a_resource_version() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    let list = pods.list(&ListParams::default()).await.unwrap();
    let rv = list.metadata.resource_version.clone().unwrap();
    let params = WatchParams::default()
        .fields(&format!("metadata.name={POD}"))
        .timeout(20);
    let mut stream = pods.watch(&params, &rv).await.unwrap().boxed();
    add_debug(&pods, "dbg", "busybox:1.36", &["sh"]).await;
    let mut saw = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .unwrap()
        .unwrap()
    {
        if let WatchEvent::Modified(pod) = event {
            assert_eq!(pod.metadata.name.as_deref(), Some(POD));
            let statuses = pod
                .status
                .and_then(|s| s.ephemeral_container_statuses)
                .unwrap_or_default();
            if let Some(state) = statuses.first().and_then(|s| s.state.clone()) {
                if let Some(w) = &state.waiting {
                    saw.push(w.reason.clone().unwrap_or_default());
                }
                if state.running.is_some() {
                    saw.push("Running".into());
                    break;
                }
            }
        }
    }
    assert_eq!(saw.first().map(String::as_str), Some("ContainerCreating"));
    assert_eq!(saw.last().map(String::as_str), Some("Running"));
}

#[tokio::test]
async fn compacted_resource_version_is_410_gone() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    let rv = pods
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    add_debug(&pods, "dbg", "busybox:1.36", &["sh"]).await;
    sim.expire_resource_versions();
    let mut stream = pods
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Error(e)) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
            assert!(
                e.message.starts_with("too old resource version"),
                "{}",
                e.message
            );
        }
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
}

#[tokio::test]
async fn watch_with_bookmarks_and_selector_transitions() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::all(client(&sim, "sim").await);
    let params = WatchParams::default()
        .fields("status.phase=Running")
        .timeout(10);
    let mut stream = pods.watch(&params, "0").await.unwrap().boxed();
    let mut added = 0;
    let mut bookmark = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < deadline && !bookmark {
        match tokio::time::timeout(Duration::from_secs(2), stream.try_next()).await {
            Ok(Ok(Some(WatchEvent::Added(pod)))) => {
                assert_eq!(pod.status.unwrap().phase.as_deref(), Some("Running"));
                added += 1;
            }
            Ok(Ok(Some(WatchEvent::Bookmark(b)))) => {
                assert!(b.metadata.resource_version.parse::<u64>().unwrap() > 0);
                bookmark = true;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(
        added >= 10,
        "synthetic ADDED for the running pods, got {added}"
    );
    assert!(bookmark, "a BOOKMARK arrives when asked for");

    // A pod that stops matching the selector is DELETED for this watcher.
    let shop: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    shop.delete(POD, &Default::default()).await.unwrap();
    let deleted = loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.try_next()).await {
            Ok(Ok(Some(WatchEvent::Deleted(pod)))) => break pod,
            Ok(Ok(Some(_))) => continue,
            other => panic!("expected DELETED, got {other:?}"),
        }
    };
    assert_eq!(deleted.metadata.name.as_deref(), Some(POD));
}

#[tokio::test]
async fn ephemeral_container_runs_with_events_and_exit_code() {
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(kube.clone(), NS);
    add_debug(
        &pods,
        "quick",
        "busybox:1.36",
        &["sh", "-c", "echo early-output; sleep 0.3; exit 3"],
    )
    .await;
    let terminated = eventually(10, "the debug container to exit", || async {
        ephemeral_state(&pods, "quick").await?.terminated
    })
    .await;
    assert_eq!(terminated.exit_code, 3);
    assert_eq!(terminated.reason.as_deref(), Some("Error"));
    assert!(terminated.finished_at.is_some() && terminated.started_at.is_some());

    // Output written before anyone attached is in the log.
    let log = pods
        .logs(
            POD,
            &LogParams {
                container: Some("quick".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(log.contains("early-output"), "{log:?}");

    let events: Api<Event> = Api::namespaced(kube, NS);
    let list = events
        .list(&ListParams::default().fields(&format!("involvedObject.name={POD}")))
        .await
        .unwrap();
    let reasons: Vec<_> = list
        .items
        .iter()
        .filter(|e| {
            e.involved_object.field_path.as_deref() == Some("spec.ephemeralContainers{quick}")
        })
        .filter_map(|e| e.reason.clone())
        .collect();
    assert_eq!(reasons, ["Pulling", "Pulled", "Created", "Started"]);
}

#[tokio::test]
async fn unpullable_image_backs_off_and_never_runs() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    add_debug(&pods, "broken", "example.com/doesnotexist:1", &["sh"]).await;
    let waiting = eventually(10, "ImagePullBackOff", || async {
        let waiting = ephemeral_state(&pods, "broken").await?.waiting?;
        (waiting.reason.as_deref() == Some("ImagePullBackOff")).then_some(waiting)
    })
    .await;
    assert_eq!(
        waiting.message.as_deref(),
        Some("Back-off pulling image \"example.com/doesnotexist:1\"")
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    let state = ephemeral_state(&pods, "broken").await.unwrap();
    assert!(state.running.is_none() && state.terminated.is_none());
}

#[tokio::test]
async fn missing_command_is_a_start_error() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    add_debug(
        &pods,
        "nocmd",
        "busybox:1.36",
        &["definitely-not-a-command"],
    )
    .await;
    let terminated = eventually(10, "StartError", || async {
        ephemeral_state(&pods, "nocmd").await?.terminated
    })
    .await;
    assert_eq!(
        terminated.reason.as_deref(),
        Some("StartError"),
        "{terminated:?}"
    );
    assert_eq!(terminated.exit_code, 128);
    let message = terminated.message.unwrap_or_default();
    assert!(
        message.contains("executable file not found in $PATH"),
        "{message}"
    );
}

#[tokio::test]
async fn ephemeral_containers_on_pods_that_are_not_running_stay_waiting() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, "batch");
    let patch = json!({"spec": {"ephemeralContainers": [{"name": "late", "image": "busybox", "stdin": true, "tty": true}]}});
    pods.patch_ephemeral_containers(
        "nightly-report-29121440-8xk2p",
        &PatchParams::default(),
        &Patch::Strategic(patch),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pod = pods.get("nightly-report-29121440-8xk2p").await.unwrap();
    let state = pod.status.unwrap().ephemeral_container_statuses.unwrap()[0]
        .state
        .clone()
        .unwrap();
    assert_eq!(
        state.waiting.unwrap().reason.as_deref(),
        Some("ContainerCreating")
    );
}

async fn read_until(reader: &mut (impl tokio::io::AsyncRead + Unpin), needle: &str) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let n = tokio::time::timeout_at(deadline, reader.read(&mut buf))
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "timed out waiting for {needle:?}; saw {:?}",
                    String::from_utf8_lossy(&seen)
                )
            })
            .unwrap();
        assert!(n > 0, "stream ended before {needle:?}");
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test]
async fn two_attaches_share_one_terminal_and_detach_leaves_it_running() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    add_debug(&pods, "shell", "busybox:1.36", &["sh"]).await;
    eventually(10, "Running", || async {
        ephemeral_state(&pods, "shell").await?.running
    })
    .await;

    let params = AttachParams::interactive_tty().container("shell");
    let mut first = pods.attach(POD, &params).await.unwrap();
    let mut second = pods.attach(POD, &params).await.unwrap();
    let mut first_out = first.stdout().unwrap();
    let mut second_out = second.stdout().unwrap();
    let mut first_in = first.stdin().unwrap();
    first_in
        .write_all(b"echo shared-$((40+2))\n")
        .await
        .unwrap();
    read_until(&mut first_out, "shared-42").await;
    read_until(&mut second_out, "shared-42").await;

    // Size sent on the resize channel reaches the shared PTY.
    let mut resize = first.terminal_size().unwrap();
    futures::SinkExt::send(
        &mut resize,
        kube::api::TerminalSize {
            width: 101,
            height: 33,
        },
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    first_in.write_all(b"stty size\n").await.unwrap();
    read_until(&mut second_out, "33 101").await;

    // The second one leaves; the process keeps running for the first.
    drop(second_out);
    second.abort();
    first_in.write_all(b"echo still-$((1+1))\n").await.unwrap();
    read_until(&mut first_out, "still-2").await;
    assert!(
        ephemeral_state(&pods, "shell")
            .await
            .unwrap()
            .running
            .is_some()
    );
}

#[tokio::test]
async fn exec_reports_the_exit_code_in_its_status() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    let params = AttachParams::default().container("redis").stderr(true);
    let mut process = pods
        .exec(POD, ["sh", "-c", "echo out; echo err >&2; exit 7"], &params)
        .await
        .unwrap();
    let mut stdout = String::new();
    process
        .stdout()
        .unwrap()
        .read_to_string(&mut stdout)
        .await
        .unwrap();
    let mut stderr = String::new();
    process
        .stderr()
        .unwrap()
        .read_to_string(&mut stderr)
        .await
        .unwrap();
    let status = process.take_status().unwrap().await.unwrap();
    assert_eq!(stdout, "out\n");
    assert_eq!(stderr, "err\n");
    assert_eq!(status.status.as_deref(), Some("Failure"));
    assert_eq!(status.reason.as_deref(), Some("NonZeroExitCode"));
    let cause = &status.details.unwrap().causes.unwrap()[0];
    assert_eq!(cause.reason.as_deref(), Some("ExitCode"));
    assert_eq!(cause.message.as_deref(), Some("7"));
}

#[tokio::test]
async fn permissions_are_enforced_per_user() {
    let sim = start_sim(0).await;
    let viewer: Api<Pod> = Api::namespaced(client(&sim, "sim-viewer").await, NS);
    assert!(
        !viewer
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let err = viewer
        .patch_ephemeral_containers(
            POD,
            &PatchParams::default(),
            &Patch::Strategic(debug_container("x", "busybox", &["sh"])),
        )
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 403);
            assert_eq!(
                status.message,
                "pods \"redis-0\" is forbidden: User \"sim-viewer\" cannot patch resource \"pods/ephemeralcontainers\" in API group \"\" in the namespace \"shop\""
            );
        }
        other => panic!("expected 403, got {other}"),
    }
    let dev_all: Api<Pod> = Api::all(client(&sim, "sim-dev").await);
    match dev_all.list(&ListParams::default()).await.unwrap_err() {
        kube::Error::Api(status) => assert_eq!(status.code, 403),
        other => panic!("expected 403, got {other}"),
    }
    let dev: Api<Pod> = Api::namespaced(client(&sim, "sim-dev").await, NS);
    assert!(
        !dev.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn non_loopback_listen_is_refused() {
    let result = podbay::sim::Sim::start(podbay::sim::SimOptions {
        listen: "0.0.0.0:0".parse().unwrap(),
        ..Default::default()
    })
    .await;
    let err = result.err().expect("refused");
    assert!(
        err.to_string().contains("only listens on loopback"),
        "{err}"
    );
}

#[tokio::test]
async fn kubeconfig_is_private_and_names_three_contexts() {
    use std::os::unix::fs::PermissionsExt;
    let sim = start_sim(0).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let parsed = Kubeconfig::read_from(&path).unwrap();
    let names: Vec<_> = parsed.contexts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["sim", "sim-viewer", "sim-dev"]);
}

use kube::config::Kubeconfig;

#[tokio::test]
async fn scale_scenario_serves_a_full_list_in_pages() {
    let sim = podbay::sim::Sim::start(podbay::sim::SimOptions {
        pods: Some(20_000),
        shim: Some(env!("CARGO_BIN_EXE_podbay").into()),
        ..Default::default()
    })
    .await
    .unwrap();
    let pods: Api<Pod> = Api::all(client(&sim, "sim").await);
    let mut total = 0;
    let mut params = ListParams::default().limit(5_000);
    loop {
        let page = pods.list(&params).await.unwrap();
        total += page.items.len();
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => break,
        }
    }
    assert_eq!(total, 20_000);
}

#[tokio::test]
async fn log_follow_streams_new_output() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    add_debug(
        &pods,
        "ticker",
        "busybox:1.36",
        &[
            "sh",
            "-c",
            "for i in 1 2 3; do echo tick-$i; sleep 0.2; done",
        ],
    )
    .await;
    eventually(10, "Running", || async {
        let s = ephemeral_state(&pods, "ticker").await?;
        (s.running.is_some() || s.terminated.is_some()).then_some(())
    })
    .await;
    let params = LogParams {
        container: Some("ticker".into()),
        follow: true,
        ..Default::default()
    };
    let mut lines = pods.log_stream(POD, &params).await.unwrap();
    let mut text = String::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        futures::AsyncReadExt::read_to_string(&mut lines, &mut text),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(
        text.contains("tick-1") && text.contains("tick-3"),
        "{text:?}"
    );
}

#[tokio::test]
async fn put_with_a_stale_resource_version_is_a_conflict() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    let mut pod = pods.get_ephemeral_containers(POD).await.unwrap();
    let stale = pod.clone();
    add_debug(&pods, "first", "busybox:1.36", &["sh"]).await;
    pod = stale;
    pod.spec.as_mut().unwrap().ephemeral_containers = Some(vec![
        serde_json::from_value(json!({
            "name": "second", "image": "busybox", "stdin": true, "tty": true
        }))
        .unwrap(),
    ]);
    match pods
        .replace_ephemeral_containers(POD, &Default::default(), &pod)
        .await
        .unwrap_err()
    {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409);
            assert_eq!(status.reason, "Conflict");
            assert!(
                status.message.contains("the object has been modified"),
                "{}",
                status.message
            );
        }
        other => panic!("expected 409, got {other}"),
    }
}

#[tokio::test]
async fn json_patch_and_merge_patch_content_types() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    let add: json_patch::Patch = serde_json::from_value(json!([
        {"op": "add", "path": "/spec/ephemeralContainers", "value": [{"name": "viajson", "image": "busybox", "stdin": true, "tty": true}]}
    ]))
    .unwrap();
    let pod = pods
        .patch_ephemeral_containers(POD, &PatchParams::default(), &Patch::<()>::Json(add))
        .await
        .unwrap();
    let names: Vec<_> = pod
        .spec
        .unwrap()
        .ephemeral_containers
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["viajson"]);

    // A merge patch replaces the whole list: keeping the old entry adds one.
    let merge = json!({"spec": {"ephemeralContainers": [
        {"name": "viajson", "image": "busybox", "stdin": true, "tty": true, "terminationMessagePolicy": "File",
         "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "Always"},
        {"name": "viamerge", "image": "busybox", "stdin": true, "tty": true}
    ]}});
    let pod = pods
        .patch_ephemeral_containers(POD, &PatchParams::default(), &Patch::Merge(merge))
        .await
        .unwrap();
    assert_eq!(pod.spec.unwrap().ephemeral_containers.unwrap().len(), 2);

    // Dropping an existing one is refused.
    let drop_one = json!({"spec": {"ephemeralContainers": []}});
    match pods
        .patch_ephemeral_containers(POD, &PatchParams::default(), &Patch::Merge(drop_one))
        .await
        .unwrap_err()
    {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 422);
            assert!(
                status.message.contains("may not be removed"),
                "{}",
                status.message
            );
        }
        other => panic!("expected 422, got {other}"),
    }
}

#[tokio::test]
async fn patch_leaves_labels_and_annotations_alone() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    let before = pods.get(POD).await.unwrap();
    let sneaky = json!({
        "metadata": {"labels": {"injected": "yes"}, "annotations": {"x": "y"}},
        "spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox", "stdin": true, "tty": true}]},
    });
    let after = pods
        .patch_ephemeral_containers(POD, &PatchParams::default(), &Patch::Strategic(sneaky))
        .await
        .unwrap();
    assert_eq!(after.metadata.labels, before.metadata.labels);
    assert_eq!(after.metadata.annotations, before.metadata.annotations);
    assert_eq!(after.spec.unwrap().ephemeral_containers.unwrap().len(), 1);
}

#[tokio::test]
async fn a_stopped_server_refuses_connections_until_restarted() {
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    assert!(pods.get(POD).await.is_ok());
    sim.stop_server();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(matches!(
        pods.get(POD).await,
        Err(kube::Error::HyperError(_) | kube::Error::Service(_))
    ));
    sim.restart_server().await.unwrap();
    let fresh: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    eventually(5, "the server to answer again", || async {
        fresh.get(POD).await.ok()
    })
    .await;
}

#[tokio::test]
async fn dropping_the_simulator_stops_its_container_processes() {
    let marker = format!("sleep {}", 40_000 + std::process::id() % 10_000);
    let running = |m: &str| {
        std::process::Command::new("pgrep")
            .args(["-f", m])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    let sim = start_sim(0).await;
    let pods: Api<Pod> = Api::namespaced(client(&sim, "sim").await, NS);
    add_debug(
        &pods,
        "sleeper",
        "busybox",
        &["sh", "-c", &format!("exec {marker}")],
    )
    .await;
    eventually(10, "the process to run", || async {
        running(&marker).then_some(())
    })
    .await;
    drop(sim);
    eventually(5, "the process to be gone", || async {
        (!running(&marker)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_cut_stream_ends_the_session_as_a_disconnect_and_the_process_lives_on() {
    use podbay::cluster::session::{self, SessionEvent, SessionInput, SessionSpec};
    use podbay::model::session::SessionKind;
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(kube.clone(), NS);
    add_debug(&pods, "victim", "busybox:1.36", &["sh"]).await;
    eventually(10, "Running", || async {
        ephemeral_state(&pods, "victim").await?.running
    })
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let spec = SessionSpec {
        namespace: NS.into(),
        pod: POD.into(),
        container: "victim".into(),
        kind: SessionKind::Attach,
        size: podbay::term::Size::new(80, 24),
        keepalive: Some(session::DEFAULT_KEEPALIVE),
        tty: true,
        stdin: true,
    };
    let (input, inputs) = tokio::sync::mpsc::unbounded_channel();
    let _session = session::open(kube, spec, inputs, tx).await.unwrap();
    input
        .send(SessionInput::Data(bytes::Bytes::from_static(
            b"echo alive\n",
        )))
        .unwrap();
    let mut seen = String::new();
    while !seen.contains("alive\r\n") {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap()
        {
            Some(SessionEvent::Output(b)) => seen.push_str(&String::from_utf8_lossy(&b)),
            other => panic!("unexpected {other:?}"),
        }
    }
    sim.kill_streams();
    let end = loop {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("the session notices the cut")
        {
            Some(SessionEvent::Ended(end)) => break end,
            Some(
                SessionEvent::Output(_) | SessionEvent::Stderr(_) | SessionEvent::Unanswered(_),
            ) => continue,
            None => panic!("channel closed without an end"),
        }
    };
    assert!(end.disconnected && end.exit_code.is_none(), "{end:?}");
    assert!(
        ephemeral_state(&pods, "victim")
            .await
            .unwrap()
            .running
            .is_some(),
        "the process keeps running"
    );
}

/// Logs choose their run as the kubelet does: a crash-looping container's
/// last crash (also with `previous`), a completed job's output, and the
/// kubelet's sentences where there is no run to read.
#[tokio::test]
async fn logs_read_the_run_the_kubelet_would() {
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let log = |ns: &'static str, pod: &'static str, container: &'static str, previous: bool| {
        let pods: Api<Pod> = Api::namespaced(kube.clone(), ns);
        async move {
            let params = LogParams {
                container: Some(container.into()),
                previous,
                ..Default::default()
            };
            pods.logs(pod, &params).await
        }
    };
    let crash = "ledger-worker-7f9c6d8b5-w9x8v";
    let last = log("payments", crash, "worker", false).await.unwrap();
    let previous = log("payments", crash, "worker", true).await.unwrap();
    assert!(
        last.contains("FATAL ledger-worker: cannot reach the database; exiting with code 1"),
        "{last}"
    );
    assert_eq!(
        last, previous,
        "waiting in CrashLoopBackOff: both read lastState"
    );

    let report = log("batch", "nightly-report-29121440-8xk2p", "report", false)
        .await
        .unwrap();
    assert!(report.contains("INFO nightly-report: done"), "{report}");

    let no_previous = log("shop", "redis-0", "redis", true).await.unwrap_err();
    assert!(
        no_previous
            .to_string()
            .contains(r#"previous terminated container "redis" in pod "redis-0" not found"#),
        "{no_previous}"
    );
    let pulling = log("batch", "thumbnailer-6d5c8b9f7-q4w5e", "thumbnailer", false)
        .await
        .unwrap_err();
    assert!(
        pulling
            .to_string()
            .contains("is waiting to start: trying and failing to pull image"),
        "{pulling}"
    );
}

/// A server dry run takes every step but the last: the answer is the object
/// as it would be, and nothing is stored, started or deleted. Any value but
/// `All` is refused in the verb's options; streams take no dry run.
#[tokio::test]
async fn a_dry_run_changes_nothing_on_create_patch_and_delete() {
    use kube::api::{DeleteParams, PostParams};
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(kube.clone(), NS);
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"generateName": "dry-"},
        "spec": {"containers": [{"name": "a", "image": "busybox:1.36"}], "volumes": [{"name": "scratch"}]},
    }))
    .unwrap();
    let answered = pods.create(&dry, &pod).await.expect("a dry-run create");
    let name = answered.metadata.name.clone().unwrap();
    assert!(name.starts_with("dry-") && name.len() > 4, "{name}");
    assert!(answered.metadata.uid.is_some());
    assert_eq!(answered.metadata.resource_version, None);
    assert_eq!(answered.metadata.generation, Some(1));
    // Defaulted as it would be stored: a volume without a source is an emptyDir.
    let spec = answered.spec.unwrap();
    assert!(spec.volumes.unwrap()[0].empty_dir.is_some());
    assert!(
        pods.get_opt(&name).await.unwrap().is_none(),
        "{name} was stored"
    );

    let before = pods.get(POD).await.unwrap();
    let patched = pods
        .patch_ephemeral_containers(
            POD,
            &PatchParams {
                dry_run: true,
                ..Default::default()
            },
            &Patch::Strategic(debug_container("dry", "busybox:1.36", &["sh"])),
        )
        .await
        .expect("a dry-run patch");
    let listed = |pod: &Pod| {
        pod.spec
            .as_ref()
            .and_then(|s| s.ephemeral_containers.as_ref())
            .map(|list| list.iter().map(|c| c.name.clone()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert!(listed(&patched).contains(&"dry".to_string()));
    assert_eq!(
        patched.metadata.resource_version,
        before.metadata.resource_version
    );
    let after = pods.get(POD).await.unwrap();
    assert!(!listed(&after).contains(&"dry".to_string()));
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );

    // A pod's own update, patched or put, and the ephemeral containers put
    // whole: answered as they would be stored, nothing stored.
    let dry_patch = PatchParams {
        dry_run: true,
        ..Default::default()
    };
    let labelled = pods
        .patch(
            POD,
            &dry_patch,
            &Patch::Merge(json!({"metadata": {"labels": {"dry": "run"}}})),
        )
        .await
        .expect("a dry-run patch of the pod");
    assert_eq!(
        labelled.metadata.labels.as_ref().and_then(|l| l.get("dry")),
        Some(&"run".to_string())
    );
    let mut replaced = before.clone();
    replaced
        .metadata
        .annotations
        .get_or_insert_default()
        .insert("dry".into(), "put".into());
    let put = pods
        .replace(POD, &dry, &replaced)
        .await
        .expect("a dry-run put of the pod");
    assert_eq!(
        put.metadata.annotations.as_ref().and_then(|a| a.get("dry")),
        Some(&"put".to_string())
    );
    let mut with_debugger = before.clone();
    with_debugger
        .spec
        .as_mut()
        .unwrap()
        .ephemeral_containers
        .get_or_insert_default()
        .push(serde_json::from_value(json!({"name": "dry-put", "image": "busybox:1.36"})).unwrap());
    let put = pods
        .replace_subresource("ephemeralcontainers", POD, &dry, &with_debugger)
        .await
        .expect("a dry-run put of the ephemeral containers");
    assert!(listed(&put).contains(&"dry-put".to_string()));
    let after = pods.get(POD).await.unwrap();
    assert!(!listed(&after).contains(&"dry-put".to_string()));
    let kept = |map: &Option<std::collections::BTreeMap<String, String>>| {
        map.as_ref().is_some_and(|m| m.contains_key("dry"))
    };
    assert!(!kept(&after.metadata.labels) && !kept(&after.metadata.annotations));
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );

    let deleted = pods
        .delete(
            POD,
            &DeleteParams {
                dry_run: true,
                ..Default::default()
            },
        )
        .await
        .expect("a dry-run delete");
    let would_be = deleted.left().expect("a graceful delete answers the pod");
    assert!(would_be.metadata.deletion_timestamp.is_some());
    let still = pods.get(POD).await.unwrap();
    assert!(still.metadata.deletion_timestamp.is_none());
    assert_eq!(
        still.metadata.resource_version,
        before.metadata.resource_version
    );

    let refused = |path: String, method: &str, body: Vec<u8>| {
        let kube = kube.clone();
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .body(body)
            .unwrap();
        async move {
            match kube.request::<serde_json::Value>(request).await {
                Err(kube::Error::Api(status)) => (status.code, status.message),
                other => panic!("expected a refusal, got {other:?}"),
            }
        }
    };
    let body = serde_json::to_vec(&pod).unwrap();
    assert_eq!(
        refused(format!("/api/v1/namespaces/{NS}/pods?dryRun=Foo"), "POST", body).await,
        (
            422,
            r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All""#.to_string()
        )
    );
    let (code, message) = refused(
        format!("/api/v1/namespaces/{NS}/pods/{POD}?dryRun=all"),
        "DELETE",
        Vec::new(),
    )
    .await;
    assert_eq!(code, 422);
    assert!(
        message.starts_with("DeleteOptions.meta.k8s.io"),
        "{message}"
    );
    assert_eq!(
        refused(
            format!("/api/v1/namespaces/{NS}/pods/{POD}/exec?command=ls&stdout=true&dryRun=All"),
            "POST",
            Vec::new()
        )
        .await,
        (400, "dryRun is not supported".to_string())
    );
    assert!(pods.get_opt(POD).await.unwrap().is_some());
}

/// As a kubelet with containerd: a debug container that targets a
/// container that ran and is not running now (ledger-worker's crash loop)
/// is not created — it waits in `CreateContainerError` with containerd's
/// words, and a `Failed` event says why.
#[tokio::test]
async fn a_debugger_whose_target_is_not_running_is_not_created() {
    let sim = start_sim(0).await;
    let kube = client(&sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(kube.clone(), "payments");
    let ledger = "ledger-worker-7f9c6d8b5-w9x8v";
    pods.patch_ephemeral_containers(
        ledger,
        &PatchParams::default(),
        &Patch::Strategic(json!({"spec": {"ephemeralContainers": [{
            "name": "dbg", "image": "busybox:1.36", "command": ["sh"], "stdin": true,
            "targetContainerName": "worker",
        }]}})),
    )
    .await
    .expect("the API takes it: the target exists");
    let waiting = eventually(15, "the debugger to wait on its target", || {
        let pods = pods.clone();
        async move {
            let pod = pods.get(ledger).await.ok()?;
            let status = pod
                .status?
                .ephemeral_container_statuses?
                .into_iter()
                .find(|s| s.name == "dbg")?;
            let waiting = status.state?.waiting?;
            (waiting.reason.as_deref() == Some("CreateContainerError")).then_some(waiting)
        }
    })
    .await;
    assert!(
        waiting
            .message
            .unwrap_or_default()
            .contains("invalid target container: container")
    );
    let events: Api<Event> = Api::namespaced(kube, "payments");
    let said = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .any(|e| {
            e.reason.as_deref() == Some("Failed")
                && e.message
                    .unwrap_or_default()
                    .contains("is not running - in state CONTAINER_EXITED")
        });
    assert!(said, "a Failed event says why");
}

/// Pull secrets as the kubelet reads them: `shop`'s `regcred` is served
/// (not to the viewer, as the built-in `view` role keeps Secrets from it);
/// a pod naming a Secret that does not exist gets the kubelet's Warning,
/// and its private image waits in ErrImagePull with the registry's 401,
/// the pod Pending; one naming `regcred` pulls and runs.
#[tokio::test]
async fn pull_secrets_are_served_and_read_as_the_kubelet_reads_them() {
    use k8s_openapi::api::core::v1::Secret;
    let sim = start_sim(0).await;
    let admin = client(&sim, "sim").await;
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), NS);
    let regcred = secrets.get("regcred").await.expect("regcred");
    assert_eq!(
        regcred.type_.as_deref(),
        Some("kubernetes.io/dockerconfigjson")
    );
    let viewer: Api<Secret> = Api::namespaced(client(&sim, "sim-viewer").await, NS);
    match viewer.list(&Default::default()).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 403),
        other => panic!("the viewer read secrets: {other:?}"),
    }
    let developer: Api<Secret> = Api::namespaced(client(&sim, "sim-dev").await, NS);
    assert!(developer.get("regcred").await.is_ok());

    let pods: Api<Pod> = Api::namespaced(admin.clone(), NS);
    let pod = |name: &str, secret: &str| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {
                "imagePullSecrets": [{"name": secret}],
                "containers": [{"name": "tools", "image": "registry.internal.example/tools/netshoot:1",
                    "command": ["sleep", "3600"]}],
            },
        }))
        .unwrap()
    };
    pods.create(&Default::default(), &pod("no-secret", "gone"))
        .await
        .expect("created");
    pods.create(&Default::default(), &pod("with-secret", "regcred"))
        .await
        .expect("created");
    let state = |name: &'static str| {
        let pods = pods.clone();
        async move {
            let pod = pods.get(name).await.ok()?;
            let status = pod.status?;
            let state = status.container_statuses?.into_iter().next()?.state?;
            Some((status.phase.unwrap_or_default(), state))
        }
    };
    let (phase, refused) = eventually(20, "the private image refused", || async {
        state("no-secret").await.filter(|(_, s)| {
            s.waiting.as_ref().and_then(|w| w.reason.as_deref()) == Some("ErrImagePull")
        })
    })
    .await;
    assert_eq!(phase, "Pending");
    let message = refused.waiting.and_then(|w| w.message).unwrap_or_default();
    assert!(
        message.contains("401 Unauthorized") && message.contains("tools%2Fnetshoot"),
        "{message}"
    );
    eventually(20, "the pod with regcred running", || async {
        state("with-secret")
            .await
            .filter(|(phase, s)| phase == "Running" && s.running.is_some())
    })
    .await;

    let events: Api<Event> = Api::namespaced(admin, NS);
    let warned = events
        .list(&ListParams::default().fields("involvedObject.name=no-secret"))
        .await
        .expect("events")
        .items
        .into_iter()
        .find(|e| e.reason.as_deref() == Some("FailedToRetrieveImagePullSecret"))
        .expect("the kubelet's warning");
    assert_eq!(warned.type_.as_deref(), Some("Warning"));
    assert_eq!(
        warned.message.as_deref(),
        Some(
            "Unable to retrieve some image pull secrets (gone); attempting to pull the image may not succeed."
        )
    );
    assert_eq!(
        warned.involved_object.field_path, None,
        "about the whole pod"
    );
}

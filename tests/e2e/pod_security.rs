//! Pod Security admission, as a user meets it: the demo's `payments`
//! enforces baseline, `monitoring` restricted, `batch` only warns at
//! restricted. `podbay debug` (the real binary, piped, no `-t`) and the TUI
//! (in a PTY, read off the screen) pick a profile that passes before
//! anything is sent.

use crate::support;

use k8s_openapi::api::core::v1::Pod;
// `podbay_debug` runs with no config, so the profile defaults to `general`.
use support::{PodbayScreen, args, client, kubeconfig, pane_text, podbay_debug, start_sim, stderr};

const PAYMENTS_POD: &str = "payments-api-66b8f7d5c9-qv8lm";
const MONITORING_POD: &str = "prometheus-5b7c8d9f6-r2d2x";
const BATCH_POD: &str = "thumbnailer-6d5c8b9f7-q4w5e";

/// The ephemeral containers of a pod: (name, securityContext as JSON).
async fn debug_containers(
    sim: &podbay::sim::SimHandle,
    namespace: &str,
    pod: &str,
) -> Vec<(String, serde_json::Value)> {
    let pods: kube::Api<Pod> = kube::Api::namespaced(client(sim, "sim").await, namespace);
    let pod = pods.get(pod).await.expect("the pod");
    pod.spec
        .and_then(|s| s.ephemeral_containers)
        .into_iter()
        .flatten()
        .map(|c| {
            let security = serde_json::to_value(&c.security_context).unwrap();
            (c.name, security)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_profile_the_cli_uses_the_strongest_the_namespace_admits_and_says_so() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig(&sim, "psa-auto");
    let out = podbay_debug(
        &kubeconfig,
        &[
            PAYMENTS_POD,
            "-n",
            "payments",
            "--target",
            "api",
            "--",
            "sh",
            "-c",
            "echo ok",
        ],
    )
    .await;
    support::exits(
        &out,
        0,
        r#"podbay: payments enforces Pod Security "baseline": using --profile=baseline instead of general"#,
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
    let added = debug_containers(&sim, "payments", PAYMENTS_POD).await;
    assert_eq!(added.len(), 1);
    assert_eq!(
        added[0].1,
        serde_json::json!({"runAsUser": 65532, "runAsGroup": 65532}),
        "baseline adds no capability; without SYS_PTRACE it takes api's user"
    );

    let out = podbay_debug(
        &kubeconfig,
        &[
            MONITORING_POD,
            "-n",
            "monitoring",
            "--target",
            "prometheus",
            "--",
            "id",
            "-u",
        ],
    )
    .await;
    support::exits(&out, 0, "using --profile=restricted instead of general");
    if support::namespaces_or_skip("the restricted profile runs as the pod's user") {
        // The kubelet lets runAsNonRoot through because the pod sets a
        // non-root runAsUser, and the process is that user.
        assert_eq!(String::from_utf8_lossy(&out.stdout), "65534\n");
    }
    let _ = std::fs::remove_file(&kubeconfig);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_profile_the_namespace_forbids_is_not_sent() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig(&sim, "psa-explicit");
    let out = podbay_debug(
        &kubeconfig,
        &[
            PAYMENTS_POD,
            "-n",
            "payments",
            "--profile",
            "general",
            "--name",
            "debugger-traced",
            "--",
            "true",
        ],
    )
    .await;
    support::exits(
        &out,
        77,
        r#"payments enforces Pod Security "baseline", which refuses the general profile: non-default capabilities (container "debugger-traced" must not include "SYS_PTRACE" in securityContext.capabilities.add). The baseline profile passes. Nothing was sent; run again with --profile=baseline."#,
    );
    assert_eq!(debug_containers(&sim, "payments", PAYMENTS_POD).await, []);
    let _ = std::fs::remove_file(&kubeconfig);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warn_only_namespace_admits_and_its_warning_is_printed_as_kubectl_does() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig(&sim, "psa-warn");
    let out = podbay_debug(
        &kubeconfig,
        &[
            BATCH_POD,
            "-n",
            "batch",
            "--name",
            "debugger-warned",
            "--",
            "true",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warning = concat!(
        r#"Warning: would violate PodSecurity "restricted:latest": "#,
        r#"allowPrivilegeEscalation != false (container "debugger-warned" must set securityContext.allowPrivilegeEscalation=false), "#,
        r#"unrestricted capabilities (container "debugger-warned" must set securityContext.capabilities.drop=["ALL"]; "#,
        r#"container "debugger-warned" must not include "SYS_PTRACE" in securityContext.capabilities.add)"#,
        "\n"
    );
    assert!(stderr(&out).contains(warning), "{}", stderr(&out));
    let added = debug_containers(&sim, "batch", BATCH_POD).await;
    assert_eq!(added.len(), 1, "warn admits: general was sent");
    let _ = std::fs::remove_file(&kubeconfig);
}

/// The screen's words in one line, without borders: a wrapped sentence
/// reads whole.
fn unwrapped(screen: &str) -> String {
    screen
        .replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The TUI at `cols`×`rows` in the launcher of the pod whose name ends in
/// (or is) `filter`.
async fn launcher_for(
    kubeconfig: &std::path::Path,
    filter: &str,
    cols: u16,
    rows: u16,
) -> PodbayScreen {
    let screen = PodbayScreen::spawn(&args(kubeconfig, &["-A"]), cols, rows);
    screen.wait_for("the pods", |t| t.contains(filter)).await;
    screen.keys(&format!("/{filter}\r")).await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| {
            t.contains("containers") || t.contains("CONTAINER")
        })
        .await;
    screen.keys("d").await;
    screen
        .wait_for("the launcher", |t| t.contains("Debug container for"))
        .await;
    screen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_launcher_starts_on_a_profile_the_namespace_admits_and_marks_the_refused_one() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig(&sim, "psa-tui");
    let screen = launcher_for(&kubeconfig, "qv8lm", 80, 24).await;
    screen
        .wait_for("baseline chosen, with the reason", |t| {
            t.contains("profile  baseline ✓ payments enforces baseline")
                && t.contains(r#"payments enforces Pod Security "baseline", which refuses general"#)
        })
        .await;
    // Back on general: marked as refused, and enter does not send it.
    screen.keys("\t\t\t").await;
    screen.raw(b"\x1b[D").await;
    screen
        .wait_for("general marked as refused", |t| {
            t.contains("general ✗ baseline forbids SYS_PTRACE")
        })
        .await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the refusal, before anything is sent", |t| {
            let sentence = unwrapped(t);
            sentence.contains("which refuses the general profile: non-default capabilities")
                && sentence.contains("The baseline profile passes.")
        })
        .await;
    assert_eq!(debug_containers(&sim, "payments", PAYMENTS_POD).await, []);
    screen.raw(b"\x1b[C").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("attached to the debug container", |t| {
            t.lines()
                .any(|l| pane_text(l).starts_with("debugger-") && l.contains("@payments-api"))
        })
        .await;
    let added = debug_containers(&sim, "payments", PAYMENTS_POD).await;
    assert_eq!(added.len(), 1);
    // No capability added; api's user, as the preview said.
    assert_eq!(
        added[0].1,
        serde_json::json!({"runAsUser": 65532, "runAsGroup": 65532})
    );
    screen.quit().await;
    let _ = std::fs::remove_file(&kubeconfig);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restricted_namespace_launches_with_the_restricted_profile() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig(&sim, "psa-tui-restricted");
    let screen = launcher_for(&kubeconfig, "prometheus", 250, 60).await;
    screen
        .wait_for("restricted chosen", |t| {
            t.contains("profile  restricted ✓ monitoring enforces restricted")
        })
        .await;
    // The preview says who it will run as before anything is sent.
    screen
        .wait_for("the target's user in the preview", |t| {
            t.replace(['│', '\n', ' '], "")
                .contains("\"runAsUser\":65534")
        })
        .await;
    screen.raw(b"\r").await;
    screen
        .wait_for("attached to the debug container", |t| {
            t.lines()
                .any(|l| l.contains("│debugger-") && l.contains("@prometheus"))
        })
        .await;
    let added = debug_containers(&sim, "monitoring", MONITORING_POD).await;
    assert_eq!(added.len(), 1);
    assert_eq!(added[0].1["runAsNonRoot"], true, "{:?}", added[0].1);
    assert_eq!(added[0].1["capabilities"]["drop"][0], "ALL");
    // Without SYS_PTRACE, it runs as the target's user, so the target's
    // files under /proc/1/root are its own.
    assert_eq!(added[0].1["runAsUser"], 65534, "{:?}", added[0].1);
    assert_eq!(added[0].1["runAsGroup"], 65534, "{:?}", added[0].1);
    screen.quit().await;
    let _ = std::fs::remove_file(&kubeconfig);
}

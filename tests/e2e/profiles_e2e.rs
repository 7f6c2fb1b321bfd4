//! A team's `[profiles.team]` in the TUI's launcher: offered after the
//! built-ins, sent merged where admitted, refused in a baseline namespace
//! with the preflight's sentence before anything is sent.

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use crate::support::{self, PodbayScreen, args, kubeconfig};

const TEAM: &str = r#"
[profiles.team]
base = "baseline"
env = [{ name = "TEAM", value = "sre" }]
securityContext = { capabilities = { add = ["NET_ADMIN"] } }
"#;

/// From the pod view of `pod`: the launcher on its first container, with
/// the profile moved to `team` (after the five built-ins).
async fn launcher_on_team(screen: &PodbayScreen, pod: &str) {
    screen.keys(&format!("/{pod}\r")).await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| t.contains(pod) && t.contains("KIND"))
        .await;
    screen.keys("d").await;
    screen
        .wait_for("the launcher", |t| t.contains("Debug container for"))
        .await;
    // image → name → command → profile.
    screen.keys("\t\t\t").await;
    // From wherever the namespace's level put the profile, round to team.
    for _ in 0..6 {
        if screen.text().contains("team (on baseline)") {
            break;
        }
        screen.raw(b"\x1b[C").await;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    screen
        .wait_for("the team's profile", |t| t.contains("team (on baseline)"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_profile_is_offered_sent_merged_and_refused_where_baseline_forbids_it() {
    let sim = support::start_sim(0).await;
    let config = kubeconfig(&sim, "profiles");
    let screen = PodbayScreen::spawn_with_config(&args(&config, &["-n", "shop"]), 160, 50, TEAM);
    screen
        .wait_for("shop pods", |t| {
            t.contains("redis-0") && t.contains("● live")
        })
        .await;
    launcher_on_team(&screen, "redis-0").await;
    screen
        .wait_for("the preview, merged", |t| {
            t.contains("NET_ADMIN") && t.contains("TEAM")
        })
        .await;
    screen.raw(b"\r").await;
    screen
        .wait_for_within(30, "an attached shell", |t| t.contains("● attached"))
        .await;
    screen.keys("echo team=$TEAM\r").await;
    screen
        .wait_for("the team's env in the shell", |t| t.contains("team=sre"))
        .await;
    let pods: Api<Pod> = Api::namespaced(support::client(&sim, "sim").await, "shop");
    let sent = pods
        .get("redis-0")
        .await
        .unwrap()
        .spec
        .and_then(|s| s.ephemeral_containers)
        .unwrap_or_default();
    let caps = sent
        .last()
        .and_then(|c| c.security_context.clone())
        .and_then(|s| s.capabilities)
        .and_then(|c| c.add);
    assert_eq!(caps, Some(vec!["NET_ADMIN".to_string()]));

    // payments enforces baseline: NET_ADMIN is refused in the form.
    screen.raw(b"\x02d").await;
    screen.keys(":ns payments\r").await;
    // The list's filter (redis-0) goes with esc.
    screen.raw(b"\x1b").await;
    screen
        .wait_for("payments pods", |t| {
            t.contains("payments-api-66b8f7d5c9-qv8lm")
        })
        .await;
    let before = Api::<Pod>::namespaced(support::client(&sim, "sim").await, "payments")
        .get("payments-api-66b8f7d5c9-qv8lm")
        .await
        .unwrap()
        .spec
        .and_then(|s| s.ephemeral_containers)
        .map_or(0, |l| l.len());
    launcher_on_team(&screen, "qv8lm").await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the preflight's sentence", |t| {
            t.contains("refuses the team (on baseline) profile") && t.contains("NET_ADMIN")
        })
        .await;
    let after = Api::<Pod>::namespaced(support::client(&sim, "sim").await, "payments")
        .get("payments-api-66b8f7d5c9-qv8lm")
        .await
        .unwrap()
        .spec
        .and_then(|s| s.ephemeral_containers)
        .map_or(0, |l| l.len());
    assert_eq!(before, after, "nothing was sent");
}

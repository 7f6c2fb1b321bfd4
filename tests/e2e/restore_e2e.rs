//! The workspace comes back after a restart: the real `podbay` in a PTY,
//! killed with SIGKILL and started again in the same HOME.

use crate::support::{
    self, PodbayScreen, args, exits_cleanly, kubeconfig, launch_on_redis, pane_text, start_sim,
};

/// ctrl-b, then `keys`.
async fn pane_command(screen: &PodbayScreen, keys: &str) {
    screen.raw(b"\x02").await;
    screen.keys(keys).await;
}

/// The workspace podbay keeps in `home` (there is one kubeconfig per test).
fn kept_file(home: &std::path::Path) -> Option<std::path::PathBuf> {
    let dir = home.join("state").join("podbay").join("workspaces");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path().join("last.json"))
        .find(|p| p.exists())
}

fn kept(home: &std::path::Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(kept_file(home)?).ok()?).ok()
}

/// Waits until the kept workspace satisfies `check`.
async fn kept_when(
    home: &std::path::Path,
    what: &str,
    check: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    support::eventually(10, what, || {
        let found = kept(home).filter(|k| check(k));
        async move { found }
    })
    .await
}

/// Every string of the kubeconfig's users (tokens, keys): none may be kept.
fn credentials(kubeconfig: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for user in kubeconfig["users"].as_array().into_iter().flatten() {
        for (_, value) in user["user"].as_object().into_iter().flatten() {
            if let Some(text) = value.as_str().filter(|t| t.len() >= 8) {
                out.push(text.to_string());
            }
        }
    }
    out
}

/// podbay started again in `home`, asked the question (with each of
/// `question`'s parts), and answered `y`.
async fn restored(
    home: &std::path::Path,
    args: &[String],
    (cols, rows): (u16, u16),
    question: &[&str],
) -> PodbayScreen {
    let screen = PodbayScreen::spawn_in(home, args, cols, rows, &[]);
    screen
        .wait_for("the question", |t| question.iter().all(|q| t.contains(q)))
        .await;
    screen.keys("y").await;
    screen
}

/// SIGKILL: podbay gets no chance to keep anything more.
async fn kill(screen: &mut PodbayScreen) {
    screen.child.start_kill().expect("SIGKILL");
    let _ = screen.child.wait().await;
}

/// Three panes (a debug container, a shell, a followed log) with a moved
/// divider and a name; podbay is killed; the debug container prints
/// meanwhile; a new podbay asks and brings it all back: the layout and
/// names, the debug shell with what it printed before and after, the log
/// going on without a line twice, a shell that says it is new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_podbay_comes_back_where_it_was() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "restore");
    let podbay_args = args(&config, &["-n", "shop"]);
    let mut first = PodbayScreen::spawn(&podbay_args, 250, 60);
    launch_on_redis(&first).await;
    first
        .wait_for("the debug shell", |t| t.contains("● attached"))
        .await;
    first.keys("echo before-$((6*7))\r").await;
    first
        .wait_for("its output", |t| t.contains("before-42"))
        .await;
    // Printed while no podbay runs.
    first.keys("(sleep 5; echo after-$((7*7))) &\r").await;
    pane_command(&first, ",").await;
    first.keys("dbg-pane\r").await;
    pane_command(&first, "d").await;
    first.keys("s").await;
    first
        .wait_for("a shell beside it", |t| {
            t.contains("shell shop/redis-0/redis") && t.matches("● attached").count() == 2
        })
        .await;
    pane_command(&first, "d").await;
    first.keys("l").await;
    first
        .wait_for("the log", |t| t.contains("redis/redis handled request"))
        .await;
    let ids = |t: &str| -> Vec<String> {
        t.lines()
            .filter_map(|l| pane_text(l).split("handled request id=").nth(1))
            .map(|rest| {
                rest.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let home = first.home().to_path_buf();
    let three_panes = |k: &serde_json::Value| {
        k["panes"].as_array().is_some_and(|p| p.len() == 3) && k.to_string().contains("dbg-pane")
    };
    let unmoved = kept_when(&home, "three panes kept", three_panes).await;
    pane_command(&first, "LLL").await;
    kept_when(&home, "the moved divider kept, the log's place too", |k| {
        three_panes(k)
            && k["layout"] != unmoved["layout"]
            && k["terminals"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t["kind"] == "log" && t["last_seen"]["redis"].is_string())
    })
    .await;
    // Every line shown now was kept as shown: none may come again.
    let shown_before = ids(&first.text());
    assert!(!shown_before.is_empty());
    kill(&mut first).await;
    let before = kept(&home).expect("what the killed podbay kept");

    // Private, and nothing of the credentials.
    let file = kept_file(&home).expect("the kept file");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", file.display());
    let text = std::fs::read_to_string(&file).unwrap();
    let secrets = credentials(&sim.kubeconfig());
    assert!(!secrets.is_empty());
    for secret in &secrets {
        assert!(
            !text.contains(secret.as_str()),
            "a credential was kept:\n{text}"
        );
    }

    // The debug container prints while podbay is gone; redis logs on.
    crate::support::logged(&sim, "shop", "redis-0", "after-49").await;

    let mut second = restored(
        &home,
        &podbay_args,
        (250, 60),
        &["Restore 3 panes from", "(1 debug, 1 shell, 1 log)?"],
    )
    .await;
    second
        .wait_for("the three panes back", |t| {
            t.contains("dbg-pane")
                && t.contains("shell shop/redis-0/redis")
                && t.contains("log shop/redis-0/redis")
        })
        .await;
    second
        .wait_for(
            "the debug shell with what it printed before and after",
            |t| t.contains("before-42") && t.contains("after-49") && t.contains("Re-attached"),
        )
        .await;
    second
        .wait_for("a new shell, said so", |t| t.contains("A new shell"))
        .await;
    second
        .wait_for("the log going on after its last line", |t| {
            t.contains("podbay restarted: the log goes on") && !ids(t).is_empty()
        })
        .await;
    let text = second.text();
    let mut seen = ids(&text);
    let all = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), all, "no log line twice:\n{text}");
    for id in &shown_before {
        assert!(
            !seen.contains(id),
            "id={id} was shown before the restart and again after it:\n{text}"
        );
    }
    let last_before: jiff::Timestamp = before["terminals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == "log")
        .and_then(|t| t["last_seen"]["redis"].as_str())
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        text.contains(&last_before.strftime("%H:%M:%S UTC").to_string()),
        "the marker names where it stopped:\n{text}"
    );

    // The same layout, names and marks, kept again by the new podbay.
    let after = kept_when(&home, "the restored workspace kept", |k| {
        k["panes"].as_array().is_some_and(|p| p.len() == 3) && k["saved_at"] != before["saved_at"]
    })
    .await;
    assert_eq!(
        after["layout"], before["layout"],
        "the split tree and its sizes"
    );
    assert_eq!(after["panes"], before["panes"], "names and marks");
    assert_eq!(after["focused"], before["focused"]);

    pane_command(&second, "d").await;
    second.quit().await;
    exits_cleanly(&mut second).await;

    // --no-restore starts empty and, changing nothing, leaves them kept.
    let mut third = PodbayScreen::spawn_in(
        &home,
        &args(&config, &["-n", "shop", "--no-restore"]),
        250,
        60,
        &[],
    );
    third.wait_for("the list", |t| t.contains("redis-0")).await;
    assert!(!third.text().contains("Restore"), "not asked");
    third.quit().await;
    exits_cleanly(&mut third).await;
    let still = kept(&home).expect("the kept workspace");
    assert_eq!(still["panes"].as_array().map(Vec::len), Some(3), "{still}");
    let _ = std::fs::remove_file(config);
}

/// `sim` and `sim-b` are two simulators in one kubeconfig (same pod
/// names, other clusters).
fn two_clusters(
    a: &podbay::sim::SimHandle,
    b: &podbay::sim::SimHandle,
    tag: &str,
) -> std::path::PathBuf {
    let mut merged = a.kubeconfig();
    let other = b.kubeconfig();
    let admin = other["contexts"][0]["context"]["user"]
        .as_str()
        .unwrap()
        .to_string();
    let mut cluster = other["clusters"][0].clone();
    cluster["name"] = "podbay-sim-b".into();
    let mut user = other["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == admin.as_str())
        .unwrap()
        .clone();
    user["name"] = "admin-b".into();
    let context = serde_json::json!({"name": "sim-b", "context": {"cluster": "podbay-sim-b", "user": "admin-b", "namespace": "shop"}});
    merged["clusters"].as_array_mut().unwrap().push(cluster);
    merged["users"].as_array_mut().unwrap().push(user);
    merged["contexts"].as_array_mut().unwrap().push(context);
    let path = std::env::temp_dir().join(format!(
        "podbay-e2e-{tag}-{}-{}.kubeconfig",
        std::process::id(),
        a.addr().port()
    ));
    std::fs::write(&path, serde_json::to_vec_pretty(&merged).unwrap()).unwrap();
    path
}

/// Panes on two clusters come back each on its own (a file written in
/// one cluster's redis-0 is not in the other's); with one cluster gone,
/// its pane says why and the other works. At 80×24.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panes_of_two_clusters_come_back_on_their_own() {
    let sim_a = start_sim(0).await;
    let sim_b = start_sim(0).await;
    let config = two_clusters(&sim_a, &sim_b, "restore-two");
    let podbay_args = args(&config, &["-n", "shop"]);
    let mut first = PodbayScreen::spawn(&podbay_args, 80, 24);
    crate::panes_e2e::shell_in(&first, "redis-0", 1).await;
    pane_command(&first, "d").await;
    first.keys(":ctx sim-b\r").await;
    first
        .wait_for("the other cluster's pods", |t| {
            t.contains("ctx sim-b") && t.contains("redis-0")
        })
        .await;
    // The filter stayed on redis-0: open it, and a shell in redis.
    first.raw(b"\r").await;
    first
        .wait_for("the pod view", |t| {
            t.contains(" containers ") && t.contains("IMAGE")
        })
        .await;
    first.keys("js").await;
    first
        .wait_for("a shell on each cluster", |t| {
            t.matches("● attached").count() == 2 && t.contains("sim-b ▸ shell")
        })
        .await;
    first
        .keys("echo on-b > /tmp/mark; echo wrote-$((2*3))\r")
        .await;
    first.wait_for("the mark", |t| t.contains("wrote-6")).await;
    let home = first.home().to_path_buf();
    kept_when(&home, "two panes on two contexts kept", |k| {
        let contexts: Vec<&str> = k["terminals"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["context"].as_str())
            .collect();
        k["panes"].as_array().is_some_and(|p| p.len() == 2)
            && contexts.contains(&"sim")
            && contexts.contains(&"sim-b")
    })
    .await;
    kill(&mut first).await;

    let mut second = restored(&home, &podbay_args, (80, 24), &["Restore 2 panes from"]).await;
    second
        .wait_for("both shells back", |t| t.matches("● attached").count() == 2)
        .await;
    // The focus was on sim-b's pane.
    second.keys("cat /tmp/mark\r").await;
    second
        .wait_for("sim-b's file", |t| t.contains("on-b"))
        .await;
    let on_b = kept_when(&home, "the focus on sim-b's pane kept", |k| {
        k["focused"].is_number()
    })
    .await;
    pane_command(&second, "o").await;
    second.keys("cat /tmp/mark || echo none-$((3*3))\r").await;
    second
        .wait_for("no such file on sim", |t| t.contains("none-9"))
        .await;
    kept_when(&home, "the focus on sim's pane kept", |k| {
        k["focused"].is_number() && k["focused"] != on_b["focused"]
    })
    .await;
    kill(&mut second).await;

    sim_b.stop_server();
    let mut third = restored(&home, &podbay_args, (80, 24), &["Restore 2 panes from"]).await;
    third
        .wait_for_within(20, "sim-b's pane saying why, sim's attached", |t| {
            t.contains("not restored: context sim-b")
                && t.contains("sim-b ▸")
                && t.contains("● attached")
        })
        .await;
    third.keys("echo alive-$((4*5))\r").await;
    third
        .wait_for("sim's shell works", |t| t.contains("alive-20"))
        .await;
    pane_command(&third, "d").await;
    third.quit().await;
    exits_cleanly(&mut third).await;
    let _ = std::fs::remove_file(config);
}

/// A kept file that is broken, or from a newer podbay, is one sentence:
/// podbay starts empty and moves it aside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_or_newer_kept_workspace_is_one_sentence() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "restore-broken");
    let podbay_args = args(&config, &["-n", "shop"]);
    let mut first = PodbayScreen::spawn(&podbay_args, 250, 60);
    first.wait_for("the list", |t| t.contains("redis-0")).await;
    let home = first.home().to_path_buf();
    first.quit().await;
    exits_cleanly(&mut first).await;
    let store =
        podbay::tui::kept::Store::for_kubeconfig(&home.join("state").join("podbay"), Some(&config));
    let file = store.path("last");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    for (content, why) in [
        (r#"{"version": 1, "panes": ["#.to_string(), "is not JSON"),
        (
            r#"{"version": 9, "saved_at": "2026-01-01T00:00:00Z"}"#.to_string(),
            "was written by a newer podbay (format 9",
        ),
    ] {
        std::fs::write(&file, content).unwrap();
        let mut screen = PodbayScreen::spawn_in(&home, &podbay_args, 250, 60, &[]);
        screen
            .wait_for("the sentence and the list", |t| {
                t.contains("The kept workspace") && t.contains(why) && t.contains("redis-0")
            })
            .await;
        assert!(!screen.text().contains("Restore"), "nothing offered");
        assert!(
            file.with_extension("json.unreadable").exists(),
            "moved aside, not lost"
        );
        screen.quit().await;
        exits_cleanly(&mut screen).await;
    }
    let _ = std::fs::remove_file(config);
}

/// A followed log whose pod its ReplicaSet replaced while podbay was gone
/// says so, names the pod that runs now, and reads it on `enter`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_whose_pod_was_replaced_offers_the_replacement() {
    use k8s_openapi::api::core::v1::Pod;
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "restore-replaced");
    let podbay_args = args(&config, &["-n", "shop"]);
    let gone = "storefront-7d9c8b6f4-x2k9p";
    let mut first = PodbayScreen::spawn(&podbay_args, 120, 36);
    support::open_pod(&first, gone).await;
    first.keys("l").await;
    first
        .wait_for("its log", |t| t.contains(&format!("log shop/{gone}/")))
        .await;
    let home = first.home().to_path_buf();
    kept_when(&home, "the log pane and its ReplicaSet kept", |k| {
        k["terminals"][0]["controller"]["kind"] == "ReplicaSet"
    })
    .await;
    kill(&mut first).await;

    let pods: kube::Api<Pod> = kube::Api::namespaced(support::client(&sim, "sim").await, "shop");
    pods.delete(gone, &Default::default())
        .await
        .expect("deleted");
    let new = support::eventually(30, "its replacement", || {
        let pods = pods.clone();
        async move {
            let list = pods.list(&Default::default()).await.ok()?;
            list.items
                .into_iter()
                .filter_map(|p| p.metadata.name)
                .filter(|n| n.starts_with("storefront-7d9c8b6f4-"))
                .find(|n| {
                    !["x2k9p", "m4q7z", "t8w3n"]
                        .iter()
                        .any(|old| n.ends_with(old))
                })
        }
    })
    .await;
    support::eventually(30, "the old pod gone", || {
        let pods = pods.clone();
        async move { pods.get_opt(gone).await.ok()?.is_none().then_some(()) }
    })
    .await;

    let mut second = restored(&home, &podbay_args, (120, 36), &["Restore 1 pane from"]).await;
    second
        .wait_for_within(20, "the replacement offered", |t| {
            t.contains("no longer exists") && t.contains(&new) && t.contains("enter shows its log")
        })
        .await;
    second.raw(b"\r").await;
    second
        .wait_for_within(20, "the new pod's log in the pane", |t| {
            t.contains(&format!("log shop/{new}/")) && !t.contains("no longer exists")
        })
        .await;
    second.raw(b"\x02d").await;
    second.quit().await;
    exits_cleanly(&mut second).await;
    let _ = std::fs::remove_file(config);
}

/// Kept while the pod list had the keyboard (ctrl-b d), at 250×60 where
/// the list shows beside the panes: once restored, keys typed for the
/// shell go to the shell, and none acts on the list (a space would mark a
/// pod, C open the copy form, d the launcher).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_keys_go_to_the_restored_shell_not_the_list() {
    let sim = start_sim(0).await;
    let config = kubeconfig(&sim, "restore-keys");
    let podbay_args = args(&config, &["-n", "shop"]);
    let mut first = PodbayScreen::spawn(&podbay_args, 250, 60);
    launch_on_redis(&first).await;
    first
        .wait_for("the debug shell", |t| t.contains("● attached"))
        .await;
    pane_command(&first, "d").await;
    let home = first.home().to_path_buf();
    kept_when(&home, "the shell kept with the list focused", |k| {
        k["panes"].as_array().is_some_and(|p| p.len() == 1) && k["in_workspace"] == false
    })
    .await;
    kill(&mut first).await;

    let mut second = restored(&home, &podbay_args, (250, 60), &["Restore 1 pane from"]).await;
    // Typed as soon as the pane says it re-attaches, while its stream may
    // still be coming up: every key reaches the shell, none the list.
    second
        .wait_for("the shell re-attached", |t| t.contains("Re-attached"))
        .await;
    second.keys("echo typed-$((6*7)) SERVICE CD x\r").await;
    second
        .wait_for("the shell ran what was typed", |t| {
            t.lines()
                .any(|l| pane_text(l).contains("typed-42 SERVICE CD x"))
        })
        .await;
    let text = second.text();
    for list_reaction in ["marked", "Copy of", "Debug container for"] {
        assert!(!text.contains(list_reaction), "{list_reaction}:\n{text}");
    }
    pane_command(&second, "d").await;
    second.quit().await;
    exits_cleanly(&mut second).await;
    let _ = std::fs::remove_file(config);
}

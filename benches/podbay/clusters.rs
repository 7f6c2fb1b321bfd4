//! One pod list of three clusters, 30 000 pods each: three simulators in
//! processes of their own, merged into one kubeconfig as c1, c2 and c3,
//! listed by `podbay --context c1,c2,c3 -A`.

use super::*;

const CLUSTERS: usize = 3;
const PODS_EACH: usize = 30_000;

/// The real binary: first rows, the whole list of every cluster, peak
/// RSS, and the idle between metrics refreshes; in-process, the filter
/// keystroke over the 90 000 rows.
pub(super) async fn clusters(report: &mut Report) {
    let all = CLUSTERS * PODS_EACH;
    println!("pod list of {CLUSTERS} clusters, {PODS_EACH} pods each");
    let mut sims = Vec::new();
    for _ in 0..CLUSTERS {
        sims.push(sim_process(PODS_EACH, 1500).await);
    }
    let contexts: Vec<String> = (1..=CLUSTERS).map(|i| format!("c{i}")).collect();
    let kubeconfig = merged(
        sims.iter()
            .map(|(_, path, _)| path.as_path())
            .zip(&contexts),
    );
    let named = contexts.join(",");
    let live = contexts
        .iter()
        .map(|c| format!("{c} ● live"))
        .collect::<Vec<_>>()
        .join(" · ");
    let whole_list = format!("│ {all} pods");

    let start = Instant::now();
    let tui = Tui::start_with(&kubeconfig, 200, 60, &["--context", &named]);
    let mut first_rows = None;
    while !(tui.shows(&whole_list) && tui.shows(&live)) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "podbay did not list the {CLUSTERS} clusters' pods in time"
        );
        if first_rows.is_none() && tui.shows(" svc-0") {
            first_rows = Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let whole = start.elapsed();
    let first_rows = first_rows.unwrap_or(whole);
    let pid = tui.child.child.id().unwrap_or(0);
    let peak = peak_rss_kib(pid) as f64 / 1024.0;
    report.row(
        &format!("{CLUSTERS} clusters × {PODS_EACH} pods: start → first rows on screen"),
        format!("{:.2} s", first_rows.as_secs_f64()),
        "≤ 0.3 s",
    );
    report.row(
        &format!("{CLUSTERS} clusters × {PODS_EACH} pods: start → every cluster's pods listed"),
        format!("{:.2} s", whole.as_secs_f64()),
        "≤ 1.0 s",
    );
    report.row(
        &format!("{CLUSTERS} clusters × {PODS_EACH} pods: podbay peak RSS (VmHWM)"),
        format!("{peak:.0} MB"),
        "≤ 120 MB",
    );
    report.check("first rows, 3×30k, s", first_rows.as_secs_f64(), 0.3);
    report.check("whole list, 3×30k, s", whole.as_secs_f64(), 1.0);
    report.check("peak RSS, 3×30k, MB", peak, 120.0);

    // The list's garbage freed, the first refreshes done; then the idle
    // between metrics refreshes (each cluster's, every 15 s), as `idle`.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (idle, bursts) = between_refreshes(pid, 160).await;
    report.row(
        &format!("{CLUSTERS} clusters × {PODS_EACH} pods: idle CPU between metrics refreshes"),
        format!("{idle:.2} % ({} refreshes seen)", bursts.len()),
        "≤ 0.2 %",
    );
    report.check("idle CPU between refreshes, 3×30k, %", idle, 0.2);
    tui.quit().await;

    let p99 = filter_keystroke_p99(&kubeconfig, &contexts).await;
    report.row(
        &format!("{CLUSTERS} clusters × {PODS_EACH} pods: filter keystroke → redrawn, in-process"),
        format!("p99 {:.1} ms", ms(p99)),
        "≤ 8 ms",
    );
    report.check("filter keystroke p99, 3×30k, ms", ms(p99), 8.0);
    let _ = std::fs::remove_file(&kubeconfig);
    for (_, path, _) in &sims {
        let _ = std::fs::remove_file(path);
    }
}

/// The simulators' kubeconfigs as one, each context renamed (its cluster
/// and user too, which are named alike in each).
fn merged<'a>(
    configs: impl Iterator<Item = (&'a std::path::Path, &'a String)>,
) -> std::path::PathBuf {
    use serde_json::Value;
    let (mut clusters, mut users, mut contexts) = (Vec::new(), Vec::new(), Vec::new());
    let mut first = None;
    for (path, name) in configs {
        let text = std::fs::read_to_string(path).expect("the simulator's kubeconfig");
        let config: Value = serde_json::from_str(&text).expect("JSON");
        let context = config["contexts"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == "sim"))
            .expect("the sim context")
            .clone();
        let cluster_name = context["context"]["cluster"].as_str().unwrap_or_default();
        let user_name = context["context"]["user"].as_str().unwrap_or_default();
        let named = |list: &Value, wanted: &str| -> Value {
            list.as_array()
                .and_then(|l| l.iter().find(|e| e["name"] == wanted))
                .cloned()
                .expect("named in the kubeconfig")
        };
        let mut cluster = named(&config["clusters"], cluster_name);
        let mut user = named(&config["users"], user_name);
        cluster["name"] = Value::from(name.as_str());
        user["name"] = Value::from(name.as_str());
        let mut context = context;
        context["name"] = Value::from(name.as_str());
        context["context"]["cluster"] = Value::from(name.as_str());
        context["context"]["user"] = Value::from(name.as_str());
        clusters.push(cluster);
        users.push(user);
        contexts.push(context);
        first.get_or_insert_with(|| name.clone());
    }
    let merged = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": clusters,
        "users": users,
        "contexts": contexts,
        "current-context": first,
    });
    let path = std::env::temp_dir().join(format!(
        "podbay-bench-clusters-{}.kubeconfig",
        std::process::id()
    ));
    std::fs::write(&path, merged.to_string()).expect("write the merged kubeconfig");
    path
}

/// The app fed by each cluster's pod feed, as the TUI's executor feeds
/// it, then a query typed and cleared five times, each key timed with its
/// redraw: the p99.
async fn filter_keystroke_p99(kubeconfig: &std::path::Path, contexts: &[String]) -> Duration {
    let mut connections = Vec::new();
    for context in contexts {
        let connection = Target {
            kubeconfig: Some(kubeconfig.to_path_buf()),
            context: Some(context.clone()),
            ..Target::default()
        }
        .connect()
        .await
        .expect("connect");
        connections.push(connection);
    }
    let mut options = options(&connections[0]);
    options.others = contexts[1..].to_vec();
    let (mut app, _) = App::new(options);
    app.update(Event::Resize(podbay::term::Size::new(200, 60)));
    for (context, connection) in contexts.iter().zip(&connections).skip(1) {
        app.update(Event::ContextReady {
            context: context.clone(),
            outcome: Ok(podbay::app::Reached {
                cluster: connection.cluster(),
                namespace: connection.namespace.clone(),
            }),
        });
    }
    let (tx, mut rx) = mpsc::channel::<Event>(64);
    let mut watchers = Vec::new();
    for (i, connection) in connections.iter().enumerate() {
        let (feed_tx, mut feed_rx) = feed::channel();
        let strings = std::sync::Mutex::new(podbay::model::intern::Strings::default());
        watchers.push(tokio::spawn(feed::run(
            Api::<ListedPod>::all(connection.client.clone()),
            feed::config(),
            None,
            move |pod: &ListedPod| {
                PodRow::from_pod_sharing(&pod.0, &mut |text| strings.lock().unwrap().get(text))
            },
            feed_tx,
        )));
        let (tx, cluster) = (tx.clone(), connection.cluster());
        watchers.push(tokio::spawn(async move {
            while let Some(feed) = feed_rx.recv().await {
                let event = match i {
                    0 => Event::Pods(feed),
                    _ => Event::OtherPods {
                        cluster: cluster.clone(),
                        feed,
                    },
                };
                if tx.send(event).await.is_err() {
                    return;
                }
            }
        }));
    }
    drop(tx);
    let mut listed = 0;
    while listed < contexts.len() {
        let event = rx.recv().await.expect("the feeds run");
        let whole = matches!(
            &event,
            Event::Pods(Feed::Listed { .. })
                | Event::OtherPods {
                    feed: Feed::Listed { .. },
                    ..
                }
        );
        app.update(event);
        listed += usize::from(whole);
    }
    assert_eq!(
        app.pods.total(),
        CLUSTERS * PODS_EACH,
        "every cluster listed"
    );
    let mut screen = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let theme = podbay::theme::Theme::default();
    screen.draw(|f| podbay::ui::draw(f, &app, &theme)).unwrap();
    let mut samples = super::filter_keystrokes(&mut app, &mut screen, false);
    for watcher in watchers {
        watcher.abort();
    }
    percentiles(&mut samples).1
}

//! The workload and Service views at 20 000 rows each: 104 000 pods make
//! 208 namespaces of 97 Deployments, each with its ReplicaSet and Service.

use super::*;
use kube::api::{DynamicObject, ListParams};
use podbay::model::service::ServiceRow;
use podbay::model::workload::{WorkloadKind, WorkloadRow};

const PODS: usize = 104_000;
const ROWS: usize = 208 * 97;

/// The real binary on the 104 000-pod list: each view's command typed,
/// then the time until all its rows are listed, and what its rows add to
/// podbay's RSS; in-process, the filter keystroke over each view's rows.
pub(super) async fn views(report: &mut Report) {
    println!("views, {ROWS} rows each");
    let (_sim, kubeconfig, _) = sim_process(PODS, 1500).await;
    let tui = Tui::start(&kubeconfig);
    let start = Instant::now();
    while !tui.shows(&format!("│ {PODS} pods │ ● live")) {
        assert!(start.elapsed() < Duration::from_secs(120), "never listed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let pid = tui.child.child.id().unwrap_or(0);
    let listed_pods = rss_kib(pid);
    for (command, title) in [
        ("deploy", "deployments"),
        ("rs", "replicasets"),
        ("svc", "services"),
    ] {
        let before = rss_kib(pid);
        tui.type_slowly(format!(":{command}").as_bytes()).await;
        let start = Instant::now();
        let _ = tui.child.master.write_all(b"\r").await;
        let full = format!("{title} ({ROWS})");
        while !tui.shows(&full) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "never listed {full}"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let whole = start.elapsed();
        let added = rss_kib(pid).saturating_sub(before);
        report.row(
            &format!(":{command} typed on {PODS} pods → all {ROWS} {title} listed on screen"),
            format!(
                "{:.2} s, RSS +{:.1} MB",
                whole.as_secs_f64(),
                added as f64 / 1024.0
            ),
            "",
        );
        tui.type_slowly(b"\x1b").await;
    }
    report.row(
        &format!("podbay RSS with {PODS} pods listed / peak (VmHWM) after the three views"),
        format!(
            "{:.0} / {:.0} MB",
            listed_pods as f64 / 1024.0,
            peak_rss_kib(pid) as f64 / 1024.0
        ),
        "",
    );
    tui.quit().await;

    // In-process: each view's rows as the simulator lists them, then
    // filter keystrokes, each redrawn.
    let conn = Target {
        kubeconfig: Some(kubeconfig.clone()),
        ..Target::default()
    }
    .connect()
    .await
    .expect("connect");
    for (command, kind) in [
        ("deploy", Some(WorkloadKind::Deployment)),
        ("rs", Some(WorkloadKind::ReplicaSet)),
        ("svc", None),
    ] {
        let (group, plural, api_kind) = match kind {
            Some(kind) => (kind.group(), kind.plural(), kind.kind()),
            None => ("", "services", "Service"),
        };
        let gvk = kube::api::GroupVersionKind::gvk(group, "v1", api_kind);
        let resource = kube::api::ApiResource::from_gvk_with_plural(&gvk, plural);
        let api: Api<DynamicObject> = Api::all_with(conn.client.clone(), &resource);
        let mut objects = Vec::new();
        let mut params = ListParams::default().limit(500);
        loop {
            let page = api.list(&params).await.expect("listed");
            objects.extend(page.items);
            match page.metadata.continue_ {
                Some(token) if !token.is_empty() => params = params.continue_token(&token),
                _ => break,
            }
        }
        let (mut app, _) = App::new(options(&conn));
        app.update(Event::Resize(Size::new(200, 60)));
        for c in format!(":{command}").chars() {
            app.update(key(KeyCode::Char(c)));
        }
        app.update(key(KeyCode::Enter));
        let json = |o: &DynamicObject| serde_json::to_value(o).unwrap_or_default();
        let update = match kind {
            Some(kind) => Event::Workloads(Feed::Listed {
                scope: None,
                rows: objects
                    .iter()
                    .map(|o| WorkloadRow::from_object(kind, &json(o)))
                    .collect(),
            }),
            None => Event::Services(Feed::Listed {
                scope: None,
                rows: objects
                    .iter()
                    .map(|o| ServiceRow::from_object(&json(o)))
                    .collect(),
            }),
        };
        let start = Instant::now();
        app.update(update);
        let mut screen = Terminal::new(TestBackend::new(200, 60)).unwrap();
        let theme = podbay::theme::Theme::default();
        screen.draw(|f| podbay::ui::draw(f, &app, &theme)).unwrap();
        let applied = start.elapsed();
        let mut samples = filter_keystrokes(&mut app, &mut screen, true);
        let (p50, p99) = percentiles(&mut samples);
        report.row(
            &format!(
                ":{command}, {} rows in-process: the list applied and drawn / filter keystroke → redrawn",
                objects.len()
            ),
            format!(
                "{:.1} ms / p50 {:.1}, p99 {:.1} ms",
                ms(applied),
                ms(p50),
                ms(p99)
            ),
            "p99 ≤ 8 ms",
        );
        report.check(
            &format!("filter keystroke p99, :{command}, ms"),
            ms(p99),
            8.0,
        );
    }
    let _ = std::fs::remove_file(kubeconfig);
}

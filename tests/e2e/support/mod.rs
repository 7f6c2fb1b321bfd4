//! Shared helpers for integration tests: a simulator per test and clients for it.

use std::time::Duration;

pub mod churn;
pub mod hostile;
pub mod json;

use kube::config::{KubeConfigOptions, Kubeconfig};
use podbay::sim::{Sim, SimHandle, SimOptions};

pub async fn start_sim(pull_delay_ms: u64) -> SimHandle {
    Sim::start(SimOptions {
        pull_delay: Duration::from_millis(pull_delay_ms),
        pull_backoff: Duration::from_millis(500),
        bookmark_interval: Duration::from_millis(300),
        shim: Some(env!("CARGO_BIN_EXE_podbay").into()),
        ..SimOptions::default()
    })
    .await
    .expect("simulator starts")
}

/// A simulator with `n` generated pods (over `n / 500` namespaces) instead
/// of the demo's.
pub async fn start_sim_with_pods(n: usize) -> SimHandle {
    Sim::start(SimOptions {
        pods: Some(n),
        pull_delay: Duration::ZERO,
        bookmark_interval: Duration::from_millis(300),
        shim: Some(env!("CARGO_BIN_EXE_podbay").into()),
        ..SimOptions::default()
    })
    .await
    .expect("simulator starts")
}

/// Whether this host gives the simulator's pods Linux namespaces (asked of
/// the real binary, as the simulator does). When it does not, the test says
/// why and skips, unless `PODBAY_REQUIRE_NAMESPACES` is set (CI sets it:
/// it runs as root on Linux, where they must work).
/// Whether pods map ids 0–65535 (the simulator runs as root with the
/// capability to map them), so a container's runAsUser is its own; says
/// so when they do not (a root without CAP_SETUID over the host's ids, or
/// not root).
pub fn id_range_or_skip(test: &str) -> bool {
    let isolation = podbay::sim::sandbox::Isolation::detect(
        std::path::Path::new(env!("CARGO_BIN_EXE_podbay")),
        true,
    );
    match isolation {
        podbay::sim::sandbox::Isolation::Namespaces { id_range: true, .. } => true,
        other => {
            eprintln!("{test}: skipped, {}", other.describe());
            false
        }
    }
}

pub fn namespaces_or_skip(test: &str) -> bool {
    let isolation = podbay::sim::sandbox::Isolation::detect(
        std::path::Path::new(env!("CARGO_BIN_EXE_podbay")),
        true,
    );
    match isolation {
        podbay::sim::sandbox::Isolation::Namespaces { .. } => true,
        podbay::sim::sandbox::Isolation::Processes { reason } => {
            assert!(
                std::env::var_os("PODBAY_REQUIRE_NAMESPACES").is_none(),
                "{test}: namespaces are required here but {reason}"
            );
            eprintln!("{test}: skipped, {reason}");
            false
        }
    }
}

/// A kube-rs client for one of the simulator's contexts (`sim`, `sim-viewer`, `sim-dev`).
pub async fn client(sim: &SimHandle, context: &str) -> kube::Client {
    let kubeconfig: Kubeconfig =
        serde_json::from_value(sim.kubeconfig()).expect("kubeconfig parses");
    let options = KubeConfigOptions {
        context: Some(context.to_string()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .expect("kubeconfig loads");
    kube::Client::try_from(config).expect("client builds")
}

/// Waits until `count` of `pod`'s debug containers are running, failing
/// the test after `secs`.
pub async fn debug_containers_running(
    pods: &kube::Api<k8s_openapi::api::core::v1::Pod>,
    pod: &str,
    count: usize,
    secs: u64,
) {
    eventually(secs, "the debug containers running", || async {
        let found = pods.get(pod).await.ok()?;
        let statuses = found.status?.ephemeral_container_statuses?;
        let running = statuses
            .iter()
            .filter(|s| s.state.as_ref().is_some_and(|s| s.running.is_some()))
            .count();
        (running == count).then_some(())
    })
    .await;
}

/// Waits until some container of `namespace/pod` (an ephemeral one
/// included) has written `text`, read from its log as the cluster keeps it.
pub async fn logged(sim: &SimHandle, namespace: &str, pod: &str, text: &str) {
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(client(sim, "sim").await, namespace);
    eventually(
        30,
        &format!("{namespace}/{pod} to log {text:?}"),
        || async {
            let found = pods.get(pod).await.ok()?;
            let spec = found.spec?;
            let names = spec.containers.iter().map(|c| c.name.clone()).chain(
                spec.ephemeral_containers
                    .iter()
                    .flatten()
                    .map(|c| c.name.clone()),
            );
            for name in names {
                let params = kube::api::LogParams {
                    container: Some(name),
                    ..Default::default()
                };
                if pods
                    .logs(pod, &params)
                    .await
                    .is_ok_and(|log| log.contains(text))
                {
                    return Some(());
                }
            }
            None
        },
    )
    .await;
}

/// Polls `check` until it returns `Some`, failing the test after `secs`.
pub async fn eventually<T, F, Fut>(secs: u64, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The real `podbay` binary running on a PTY, with its screen parsed by a
/// vt100 emulator, as a person would see it.
pub struct PodbayScreen {
    pub master: podbay::pty::PtyMaster,
    pub child: tokio::process::Child,
    parser: std::sync::Arc<std::sync::Mutex<vt100::Parser>>,
    /// Every byte podbay wrote, as the terminal got it.
    written: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    /// Becomes true once everything podbay wrote has been parsed.
    ended: tokio::sync::watch::Receiver<bool>,
    home: std::path::PathBuf,
    /// The scratch HOME this screen made (none when it runs in another's).
    _own_home: Option<tempdir::TempHome>,
}

pub mod tempdir {
    /// A scratch HOME/XDG tree so tests never touch the user's config or
    /// logs; removed when dropped.
    pub type TempHome = tempfile::TempDir;

    pub fn temp_home(tag: &str) -> TempHome {
        tempfile::Builder::new()
            .prefix(&format!("podbay-home-{tag}-"))
            .tempdir()
            .expect("temp home")
    }
}

impl PodbayScreen {
    pub fn spawn(args: &[String], cols: u16, rows: u16) -> PodbayScreen {
        Self::spawn_with_config(args, cols, rows, "")
    }

    /// Like [`spawn`](Self::spawn), with this `config.toml`.
    pub fn spawn_with_config(args: &[String], cols: u16, rows: u16, config: &str) -> PodbayScreen {
        Self::spawn_with_env(args, cols, rows, config, &[])
    }

    /// Like [`spawn_with_config`](Self::spawn_with_config), with extra
    /// environment variables.
    pub fn spawn_with_env(
        args: &[String],
        cols: u16,
        rows: u16,
        config: &str,
        extra_env: &[(&str, &str)],
    ) -> PodbayScreen {
        let home = tempdir::temp_home("tui");
        let config_dir = home.path().join("config").join("podbay");
        std::fs::create_dir_all(&config_dir).expect("config dir");
        std::fs::write(config_dir.join("config.toml"), config).expect("config file");
        let mut screen = Self::spawn_in(home.path(), args, cols, rows, extra_env);
        screen._own_home = Some(home);
        screen
    }

    /// podbay in the scratch HOME `home` another screen made (a restart
    /// finds what the last run kept there).
    pub fn spawn_in(
        home: &std::path::Path,
        args: &[String],
        cols: u16,
        rows: u16,
        extra_env: &[(&str, &str)],
    ) -> PodbayScreen {
        let env: Vec<(String, String)> = vec![
            ("HOME".into(), home.display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                home.join("config").display().to_string(),
            ),
            (
                "XDG_STATE_HOME".into(),
                home.join("state").display().to_string(),
            ),
            ("TERM".into(), "xterm-256color".into()),
            ("KUBECONFIG".into(), String::new()),
        ]
        .into_iter()
        .chain(
            extra_env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        )
        .collect();
        let spawned = podbay::pty::spawn(&podbay::pty::Spawn {
            program: std::ffi::OsStr::new(env!("CARGO_BIN_EXE_podbay")),
            args,
            env: &env,
            cwd: None,
            size: podbay::term::Size { cols, rows },
            fd3: None,
        })
        .expect("podbay starts on a pty");
        let rows_nz = std::num::NonZeroU16::new(rows).expect("rows");
        let cols_nz = std::num::NonZeroU16::new(cols).expect("cols");
        let parser = std::sync::Arc::new(std::sync::Mutex::new(vt100::Parser::new(
            rows_nz, cols_nz, 0,
        )));
        let reader = spawned.master.clone();
        let sink = parser.clone();
        let written = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = written.clone();
        let (ended_tx, ended) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = reader.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().process(&buf[..n]);
                let mut log = log.lock().unwrap();
                // A flood test need not keep its flood.
                if log.len() < 64 << 20 {
                    log.extend_from_slice(&buf[..n]);
                }
            }
            ended_tx.send_replace(true);
        });
        PodbayScreen {
            master: spawned.master,
            child: spawned.child,
            parser,
            written,
            ended,
            home: home.to_path_buf(),
            _own_home: None,
        }
    }

    /// Waits (up to 5 s) until podbay's output has ended and been parsed:
    /// after it exits, its last bytes may still be on their way.
    pub async fn output_ended(&self) {
        let mut ended = self.ended.clone();
        let _ = tokio::time::timeout(Duration::from_secs(5), ended.wait_for(|e| *e)).await;
    }

    /// Every byte podbay has written to its terminal so far.
    pub fn written(&self) -> Vec<u8> {
        self.written.lock().unwrap().clone()
    }

    pub fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// The scratch HOME podbay runs with (config under `config/`, state under `state/`).
    pub fn home(&self) -> &std::path::Path {
        &self.home
    }

    pub fn with_screen<T>(&self, f: impl FnOnce(&vt100::Screen) -> T) -> T {
        f(self.parser.lock().unwrap().screen())
    }

    /// Waits until the screen satisfies `check`, failing with the screen shown.
    pub async fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) {
        self.wait_for_within(15, what, check).await;
    }

    /// [`wait_for`](Self::wait_for), for up to `secs` seconds.
    pub async fn wait_for_within(&self, secs: u64, what: &str, check: impl Fn(&str) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let text = self.text();
            if check(&text) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}; the screen shows:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }

    /// Types like a person: one key at a time, with a short pause (a
    /// terminal reads ESC followed at once by a key as Alt+key).
    pub async fn keys(&self, keys: &str) {
        for c in keys.chars() {
            self.raw(c.to_string().as_bytes()).await;
        }
    }

    /// Resizes the terminal podbay runs in (it gets SIGWINCH).
    pub fn resize(&self, cols: u16, rows: u16) {
        // The screen takes the new size before podbay can know of it: a
        // frame drawn for the new size and read at the old one would
        // leave cells podbay never draws again.
        let mut parser = self.parser.lock().unwrap();
        if let (Some(rows), Some(cols)) = (
            std::num::NonZeroU16::new(rows),
            std::num::NonZeroU16::new(cols),
        ) {
            parser.set_size(rows, cols);
        }
        self.master
            .resize(podbay::term::Size { cols, rows })
            .expect("resizing the pty");
    }

    /// `q`, answering podbay's question with `y` when sessions are live.
    pub async fn quit(&self) {
        self.keys("q").await;
        let deadline = tokio::time::Instant::now() + Duration::from_millis(600);
        while tokio::time::Instant::now() < deadline {
            if self.text().contains("Quit? y/n") {
                self.keys("y").await;
                return;
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }

    pub async fn raw(&self, bytes: &[u8]) {
        self.master
            .write_all(bytes)
            .await
            .expect("typing into podbay");
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
}

/// A kubeconfig file for the simulator, unique to the test.
pub fn kubeconfig(sim: &podbay::sim::SimHandle, tag: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "podbay-e2e-{tag}-{}-{}.kubeconfig",
        std::process::id(),
        sim.addr().port()
    ));
    sim.write_kubeconfig(&path).unwrap();
    path
}

/// `podbay debug --kubeconfig KUBECONFIG EXTRA…`, stdin closed, killed if
/// dropped, with HOME and the XDG directories in `home` (`config/`,
/// `state/`, `data/`, `cache/`): it reads the config a test puts there or
/// none, never the developer's. Each test's `home` lives while podbay runs.
pub fn podbay_debug_command(
    kubeconfig: &std::path::Path,
    extra: &[&str],
    home: &std::path::Path,
) -> tokio::process::Command {
    podbay_command("debug", kubeconfig, extra, home)
}

/// `podbay debug --kubeconfig KUBECONFIG ARGS…` started in `home`, its
/// stdin, stdout and stderr piped.
pub fn podbay_debug_spawned(
    kubeconfig: &std::path::Path,
    args: &[&str],
    home: &std::path::Path,
) -> tokio::process::Child {
    podbay_debug_command(kubeconfig, args, home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("podbay runs")
}

/// Runs `podbay debug --kubeconfig KUBECONFIG ARGS…` with `script` as its
/// piped standard input (then closed), in a scratch HOME; its output.
pub async fn podbay_debug_piped(
    kubeconfig: &std::path::Path,
    args: &[&str],
    script: &str,
) -> std::process::Output {
    use tokio::io::AsyncWriteExt;
    let home = tempdir::temp_home("cli-debug-piped");
    let mut child = podbay_debug_spawned(kubeconfig, args, home.path());
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(script.as_bytes()).await.expect("written");
    drop(stdin);
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("podbay ends when its input does")
        .expect("output")
}

/// `podbay SUBCOMMAND --kubeconfig … ARGS…` in a scratch HOME, stdin closed.
pub fn podbay_command(
    subcommand: &str,
    kubeconfig: &std::path::Path,
    extra: &[&str],
    home: &std::path::Path,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_podbay"));
    command
        .arg(subcommand)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(extra)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    command
}

/// A simulator with its kubeconfig written to a file of its own (removed
/// when dropped), for running `podbay debug` against it.
pub struct DebugFixture {
    pub sim: SimHandle,
    pub kubeconfig: std::path::PathBuf,
}

impl DebugFixture {
    pub async fn new(pull_delay_ms: u64) -> Self {
        let sim = start_sim(pull_delay_ms).await;
        let kubeconfig = std::env::temp_dir().join(format!(
            "podbay-cli-{}-{}.kubeconfig",
            std::process::id(),
            sim.addr().port()
        ));
        sim.write_kubeconfig(&kubeconfig).unwrap();
        DebugFixture { sim, kubeconfig }
    }

    /// `podbay debug ARGS…` against it, as [`podbay_debug`] runs it.
    pub async fn podbay(&self, args: &[&str]) -> std::process::Output {
        podbay_debug(&self.kubeconfig, args).await
    }
}

impl Drop for DebugFixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.kubeconfig);
    }
}

/// `podbay debug` with this kubeconfig, piped, stdin closed, in a scratch
/// HOME of its own with no config (see [`podbay_debug_command`]); its output.
pub async fn podbay_debug(kubeconfig: &std::path::Path, extra: &[&str]) -> std::process::Output {
    podbay_debug_with(kubeconfig, extra, Vec::new()).await
}

/// [`podbay_debug`] with these environment variables set over the scratch
/// ones (a test's own `XDG_CONFIG_HOME`, say).
pub async fn podbay_debug_with(
    kubeconfig: &std::path::Path,
    extra: &[&str],
    env: Vec<(String, String)>,
) -> std::process::Output {
    let home = tempdir::temp_home("debug");
    let run = podbay_debug_command(kubeconfig, extra, home.path())
        .envs(env)
        .output();
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("podbay debug finished in time")
        .expect("podbay runs")
}

pub fn args(kubeconfig: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["--kubeconfig".to_string(), kubeconfig.display().to_string()];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// podbay quit cleanly and left the terminal as it found it.
pub async fn exits_cleanly(screen: &mut PodbayScreen) {
    let status = tokio::time::timeout(Duration::from_secs(10), screen.child.wait())
        .await
        .expect("podbay exits after q")
        .unwrap();
    assert!(status.success(), "exit status {status:?}");
    screen.output_ended().await;
    assert_terminal_restored(screen);
}

/// Raw mode off, alternate screen left, cursor shown, mouse reporting and
/// bracketed paste off.
pub fn assert_terminal_restored(screen: &PodbayScreen) {
    screen.with_screen(|s| {
        assert!(!s.alternate_screen(), "left the alternate screen");
        assert!(!s.hide_cursor(), "cursor shown again");
        assert_eq!(
            s.mouse_protocol_mode(),
            vt100::MouseProtocolMode::None,
            "mouse reporting off"
        );
        assert!(!s.bracketed_paste(), "bracketed paste off");
    });
    assert!(
        screen.master.is_cooked().unwrap(),
        "raw mode off: canonical mode and echo restored"
    );
}

/// Finds pod `name` in the list with the filter and opens it.
pub async fn open_pod(screen: &PodbayScreen, name: &str) {
    screen
        .wait_for("the pod in the list", |t| t.contains(name))
        .await;
    screen.keys(&format!("/{name}\r")).await;
    screen.raw(b"\r").await;
    screen
        .wait_for("the pod view", |t| {
            t.contains(" containers ") && t.contains("IMAGE")
        })
        .await;
}

/// From the shop pod list: filter to redis-0, open the launcher with `d`,
/// and launch with its defaults.
pub async fn launch_on_redis(screen: &PodbayScreen) {
    screen
        .wait_for("shop pods", |t| t.contains("redis-0"))
        .await;
    screen.keys("/redis-0\r").await;
    screen.keys("d").await;
    screen
        .wait_for("the launcher", |t| {
            t.contains("Debug container for shop/redis-0")
        })
        .await;
    screen.raw(b"\r").await;
}

/// The API server port the focused shell's container was told
/// (`$KUBERNETES_SERVICE_PORT`: each simulator's own), after `marker`.
pub async fn api_port_after(screen: &PodbayScreen, marker: &str) -> String {
    screen
        .keys(&format!("echo {marker}$KUBERNETES_SERVICE_PORT/\r"))
        .await;
    screen
        .wait_for(&format!("the port after {marker}"), |t| {
            t.lines().any(|l| {
                pane_text(l)
                    .split_once(marker)
                    .is_some_and(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_digit()))
            })
        })
        .await;
    screen
        .text()
        .lines()
        .find_map(|l| {
            let (_, rest) = pane_text(l).split_once(marker)?;
            rest.starts_with(|c: char| c.is_ascii_digit()).then(|| {
                rest.split(['│', ' '])
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
        })
        .unwrap_or_default()
}

/// A screen line without the pane border around it.
pub fn pane_text(line: &str) -> &str {
    line.trim_start_matches('│')
        .trim_end()
        .trim_end_matches('│')
        .trim_end()
}

/// Asks the focused shell for its pid, printed after `marker`, and reads it
/// off the screen.
pub async fn shell_pid(screen: &PodbayScreen, marker: &str) -> String {
    screen.keys(&format!("echo {marker}$$\r")).await;
    screen
        .wait_for(&format!("the pid after {marker}"), |t| {
            t.lines().any(|l| pane_text(l).starts_with(marker))
        })
        .await;
    pid_after(&screen.text(), marker)
}

pub fn pid_after(text: &str, marker: &str) -> String {
    text.lines()
        .find_map(|l| pane_text(l).strip_prefix(marker))
        .map(|rest| rest.trim().to_string())
        .unwrap_or_default()
}

/// Lines of the pod table (below the header row).
pub fn table_rows(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.contains("NAME") || !l.contains("STATUS"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// One kubeconfig for several simulators, as a user merges production and
/// staging: each simulator's admin context under the name given, with its
/// own cluster and user entries, in namespace shop.
pub fn merged_kubeconfig(
    sims: &[(&podbay::sim::SimHandle, &str)],
    tag: &str,
) -> std::path::PathBuf {
    let as_admin: Vec<_> = sims
        .iter()
        .map(|(sim, name)| (*sim, *name, "sim", Some("shop")))
        .collect();
    merge_kubeconfigs(&as_admin, tag)
}

/// The same, each simulator's context `from` (its user and namespace:
/// `sim-dev`, a developer bound to one namespace) under the name given.
pub fn merged_kubeconfig_from(
    sims: &[(&podbay::sim::SimHandle, &str, &str)],
    tag: &str,
) -> std::path::PathBuf {
    let entries: Vec<_> = sims
        .iter()
        .map(|(sim, name, from)| (*sim, *name, *from, None))
        .collect();
    merge_kubeconfigs(&entries, tag)
}

/// Simulators, each with its name in the merged file, the context of its
/// own kubeconfig it is reached as, and a namespace instead of that
/// context's.
type Merged<'a> = (
    &'a podbay::sim::SimHandle,
    &'a str,
    &'a str,
    Option<&'a str>,
);

fn merge_kubeconfigs(sims: &[Merged], tag: &str) -> std::path::PathBuf {
    use serde_json::{Value, json};
    let (mut clusters, mut users, mut contexts) = (Vec::new(), Vec::new(), Vec::new());
    for (sim, name, from, namespace) in sims {
        let config = sim.kubeconfig();
        let cluster = config["clusters"][0]["cluster"].clone();
        let context = config["contexts"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["name"] == *from))
            .map(|c| c["context"].clone())
            .expect("the simulator's context");
        let user = config["users"]
            .as_array()
            .and_then(|us| us.iter().find(|u| u["name"] == context["user"]))
            .map(|u| u["user"].clone())
            .expect("its user");
        let namespace = namespace.map_or_else(|| context["namespace"].clone(), Value::from);
        clusters.push(json!({"name": format!("{name}-cluster"), "cluster": cluster}));
        users.push(json!({"name": format!("{name}-user"), "user": user}));
        contexts.push(json!({"name": name, "context": {
            "cluster": format!("{name}-cluster"), "user": format!("{name}-user"), "namespace": namespace}}));
    }
    let merged: Value = json!({
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "current-context": sims[0].1,
        "clusters": clusters, "users": users, "contexts": contexts,
    });
    let path = std::env::temp_dir().join(format!(
        "podbay-e2e-{tag}-{}-{}.kubeconfig",
        std::process::id(),
        sims[0].0.addr().port()
    ));
    std::fs::write(&path, serde_json::to_vec_pretty(&merged).expect("json")).expect("kubeconfig");
    path
}

/// What a command printed on its standard output.
pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a command said on its standard error.
pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The command exited `code` and said `sentence` on stderr; else the test
/// fails showing all it said.
#[track_caller]
pub fn exits(out: &std::process::Output, code: i32, sentence: &str) {
    let said = stderr(out);
    assert_eq!(out.status.code(), Some(code), "stderr: {said}");
    assert!(said.contains(sentence), "stderr lacks {sentence:?}: {said}");
}

/// The output of `command` when it ends within `secs`; else the test fails
/// saying `what` should have ended it.
pub async fn output_within(
    secs: u64,
    what: &str,
    command: &mut tokio::process::Command,
) -> std::process::Output {
    tokio::time::timeout(Duration::from_secs(secs), command.output())
        .await
        .unwrap_or_else(|_| panic!("did not end within {secs} s: {what}"))
        .expect("podbay runs")
}

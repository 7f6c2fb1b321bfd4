//! Bearer tokens stay out of what podbay prints and logs: the real binary
//! against the simulator, with a wrong token (401s) and with a right one
//! (trace logging, a `podbay debug` launch that fails), and no token — real
//! or wrong — ever appears on the terminal, on stdout/stderr, or in the log
//! file, which is readable by its owner only.
//!
//! (The simulator's kubeconfig authenticates with tokens only; there is no
//! client key to leak.)

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use podbay::sim::SimHandle;
use serde_json::Value;
use support::tempdir::TempHome;

const WRONG_TOKEN: &str = "podbay-test-wrong-token-5f0c1e9a7b3d";

struct Fixture {
    sim: SimHandle,
    home: TempHome,
}

impl Fixture {
    async fn new() -> Self {
        Fixture {
            sim: support::start_sim(0).await,
            home: TempHome::new("secrets"),
        }
    }

    /// Every token that must not show: the simulator's users' and the wrong one.
    fn secrets(&self) -> Vec<String> {
        let users = self.sim.users();
        vec![
            users.admin.token.clone(),
            users.viewer.token.clone(),
            users.developer.token.clone(),
            WRONG_TOKEN.to_string(),
        ]
    }

    /// The simulator's kubeconfig, with every user's token replaced by the
    /// wrong one when `wrong` is set.
    fn kubeconfig(&self, wrong: bool) -> PathBuf {
        let mut config = self.sim.kubeconfig();
        if wrong {
            for user in config["users"].as_array_mut().expect("users") {
                user["user"]["token"] = Value::String(WRONG_TOKEN.into());
            }
        }
        let path = self.home.0.join(if wrong {
            "wrong.kubeconfig"
        } else {
            "kubeconfig"
        });
        std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
        path
    }

    fn env(&self) -> Vec<(String, String)> {
        let home = &self.home.0;
        vec![
            ("HOME".into(), home.display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                home.join("config").display().to_string(),
            ),
            (
                "XDG_STATE_HOME".into(),
                home.join("state").display().to_string(),
            ),
            ("KUBECONFIG".into(), String::new()),
            // As much as podbay and its libraries ever log.
            ("PODBAY_LOG".into(), "trace".into()),
            ("RUST_BACKTRACE".into(), "0".into()),
        ]
    }

    /// The log files podbay wrote under the temporary home.
    fn logs(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "log") {
                    out.push(path);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.home.0, &mut out);
        out
    }

    /// Runs the TUI on a PTY until `until` shows on screen, then quits.
    /// Returns everything it wrote to the terminal.
    async fn tui(&self, kubeconfig: &Path, until: &[&str]) -> Vec<u8> {
        let args = vec![
            "--kubeconfig".to_string(),
            kubeconfig.display().to_string(),
            "-A".to_string(),
        ];
        let env = self.env();
        let mut spawned = podbay::pty::spawn(&podbay::pty::Spawn {
            program: std::ffi::OsStr::new(env!("CARGO_BIN_EXE_podbay")),
            args: &args,
            env: &env,
            cwd: None,
            size: podbay::pty::Size {
                cols: 160,
                rows: 40,
            },
        })
        .expect("podbay starts on a pty");
        let output = Arc::new(Mutex::new(Vec::new()));
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("non-zero");
        let screen = Arc::new(Mutex::new(vt100::Parser::new(size(40), size(160), 0)));
        let reader = spawned.master.clone();
        let (sink, parser) = (output.clone(), screen.clone());
        let reading = tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = reader.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
                parser.lock().unwrap().process(&buf[..n]);
            }
        });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let text = screen.lock().unwrap().screen().contents();
            if until.iter().any(|u| text.contains(u)) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "podbay never showed any of {until:?}; the screen shows:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = spawned.master.write_all(b"q").await;
        let _ = tokio::time::timeout(Duration::from_secs(10), spawned.child.wait()).await;
        let _ = spawned.child.kill().await;
        let _ = tokio::time::timeout(Duration::from_secs(2), reading).await;
        std::mem::take(&mut *output.lock().unwrap())
    }

    async fn debug(&self, kubeconfig: &Path, args: &[&str]) -> std::process::Output {
        let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_podbay"))
            .arg("debug")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .envs(self.env())
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("podbay debug finished in time")
            .expect("podbay runs")
    }

    fn assert_clean(&self, what: &str, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        for secret in self.secrets() {
            assert!(
                !text.contains(&secret),
                "{what} contains a bearer token ({}…):\n{text}",
                &secret[..6.min(secret.len())]
            );
        }
    }

    fn assert_logs_clean(&self) {
        let logs = self.logs();
        assert!(
            !logs.is_empty(),
            "podbay wrote no log file under {}",
            self.home.0.display()
        );
        for log in logs {
            let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{} has mode {mode:o}", log.display());
            self.assert_clean(&log.display().to_string(), &std::fs::read(&log).unwrap());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_token_is_not_shown_or_logged() {
    let f = Fixture::new().await;
    let wrong = f.kubeconfig(true);
    let screen = f.tui(&wrong, &["401", "credentials", "Unauthorized"]).await;
    f.assert_clean("the terminal", &screen);
    f.assert_logs_clean();
    let log = f
        .logs()
        .iter()
        .map(|l| std::fs::read_to_string(l).unwrap_or_default())
        .collect::<String>();
    assert!(!log.is_empty(), "the 401s were logged at all");

    let out = f
        .debug(&wrong, &["redis-0", "-n", "shop", "--image", "busybox"])
        .await;
    assert_ne!(out.status.code(), Some(0), "a 401 fails the launch");
    f.assert_clean("stdout of podbay debug", &out.stdout);
    f.assert_clean("stderr of podbay debug", &out.stderr);
    assert!(!out.stderr.is_empty(), "podbay debug says why it failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_token_is_not_shown_or_logged_even_at_trace_level() {
    let f = Fixture::new().await;
    let good = f.kubeconfig(false);
    let screen = f.tui(&good, &["redis-0"]).await;
    f.assert_clean("the terminal", &screen);
    f.assert_logs_clean();

    // Failing launches: no such pod, and a target container that does not exist.
    for args in [
        &["no-such-pod", "-n", "shop", "--image", "busybox"][..],
        &[
            "redis-0", "-n", "shop", "--image", "busybox", "--target", "nope",
        ][..],
    ] {
        let out = f.debug(&good, args).await;
        assert_ne!(out.status.code(), Some(0), "{args:?} fails");
        f.assert_clean("stdout of podbay debug", &out.stdout);
        f.assert_clean("stderr of podbay debug", &out.stderr);
    }
    f.assert_logs_clean();
}

//! Bearer tokens stay out of what podbay prints and logs: the real binary
//! against the simulator, with a wrong token (401s) and with a right one
//! (trace logging, a `podbay debug` launch that fails), and no token — real
//! or wrong — ever appears on the terminal, on stdout/stderr, or in the log
//! file, which is readable by its owner only.
//!
//!
//! The same for what a kubeconfig's credential plugin prints (it may print a
//! token, or fail with one in its output) and for client keys.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use podbay::sim::SimHandle;
use serde_json::Value;
use support::tempdir::TempHome;

const WRONG_TOKEN: &str = "podbay-test-wrong-token-5f0c1e9a7b3d";
/// What the test credential plugins print where kube-rs captures it.
const PLUGIN_STDOUT: &str = "podbay-test-plugin-stdout-secret-91c2";
const PLUGIN_STDERR: &str = "podbay-test-plugin-stderr-secret-4d7e";
/// Marks a client key that is not a valid key.
const KEY_SECRET: &str = "podbay-test-client-key-secret-0b6f";

/// A credential plugin that needs a login once. With the terminal
/// (`interactive: true`) it asks for a code on stderr and reads it from
/// stdin; without, it fails with secrets in its captured output. Once
/// logged in it prints the token in `token` next to it.
const LOGIN_PLUGIN: &str = r#"#!/bin/sh
dir=$(dirname "$0")
credential() {
  printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\n' "$(cat "$dir/token")"
}
if [ -f "$dir/logged-in" ]; then credential; exit 0; fi
case "$KUBERNETES_EXEC_INFO" in
  *'"interactive":true'*)
    printf 'Enter the code shown at https://login.example: ' >&2
    read -r code
    if [ "$code" != 4711 ]; then echo "wrong code" >&2; exit 1; fi
    touch "$dir/logged-in"
    credential;;
  *)
    echo "PLUGIN_STDOUT"
    echo "PLUGIN_STDERR: not logged in" >&2
    exit 1;;
esac
"#;

/// A credential plugin that always fails.
const FAILING_PLUGIN: &str = r#"#!/bin/sh
echo "PLUGIN_STDOUT"
case "$KUBERNETES_EXEC_INFO" in
  *'"interactive":true'*) echo "login failed" >&2 ;;
  *) echo "PLUGIN_STDERR" >&2 ;;
esac
exit 1
"#;

/// A credential plugin whose output is not an ExecCredential but holds the token.
const GARBLED_PLUGIN: &str = r#"#!/bin/sh
printf '{"kind":"ExecCredential","status":{"token":"%s",\n  "expirationTimestamp": [}}\n' "$(cat "$(dirname "$0")/token")"
"#;

struct Fixture {
    sim: SimHandle,
    home: TempHome,
}

impl Fixture {
    async fn new() -> Self {
        Fixture {
            sim: support::start_sim(0).await,
            home: support::tempdir::temp_home("secrets"),
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
            PLUGIN_STDOUT.to_string(),
            PLUGIN_STDERR.to_string(),
            KEY_SECRET.to_string(),
        ]
    }

    /// The simulator's kubeconfig with every user's credentials replaced
    /// by the plugin `script` (in a directory of its own, next to a file
    /// `token` holding the admin's token).
    fn plugin_kubeconfig(&self, name: &str, script: &str) -> PathBuf {
        let dir = self.home.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let plugin = dir.join("plugin.sh");
        let script = script
            .replace("PLUGIN_STDOUT", PLUGIN_STDOUT)
            .replace("PLUGIN_STDERR", PLUGIN_STDERR);
        std::fs::write(&plugin, script).unwrap();
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(dir.join("token"), &self.sim.users().admin.token).unwrap();
        let mut config = self.sim.kubeconfig();
        for user in config["users"].as_array_mut().expect("users") {
            user["user"] = serde_json::json!({"exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": plugin.display().to_string(),
                "interactiveMode": "IfAvailable",
            }});
        }
        self.write_config(&dir.join("kubeconfig"), &config)
    }

    /// The simulator's kubeconfig whose admin also presents a client
    /// certificate and `key_pem`.
    fn client_key_kubeconfig(&self, name: &str, cert_pem: &str, key_pem: &str) -> PathBuf {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let mut config = self.sim.kubeconfig();
        for user in config["users"].as_array_mut().expect("users") {
            user["user"]["client-certificate-data"] = Value::String(b64(cert_pem));
            user["user"]["client-key-data"] = Value::String(b64(key_pem));
        }
        self.write_config(&self.home.path().join(name), &config)
    }

    fn write_config(&self, path: &Path, config: &Value) -> PathBuf {
        std::fs::write(path, serde_json::to_vec_pretty(config).unwrap()).unwrap();
        path.to_path_buf()
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
        let name = if wrong {
            "wrong.kubeconfig"
        } else {
            "kubeconfig"
        };
        self.write_config(&self.home.path().join(name), &config)
    }

    fn env(&self) -> Vec<(String, String)> {
        let home = self.home.path();
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
        walk(self.home.path(), &mut out);
        out
    }

    /// Runs the TUI on a PTY until `until` shows on screen, then quits.
    /// Returns everything it wrote to the terminal.
    async fn tui(&self, kubeconfig: &Path, until: &[&str]) -> Vec<u8> {
        self.tui_answering(kubeconfig, None, until).await
    }

    /// `tui`, typing `answer.1` and enter once `answer.0` shows.
    async fn tui_answering(
        &self,
        kubeconfig: &Path,
        mut answer: Option<(&str, &str)>,
        until: &[&str],
    ) -> Vec<u8> {
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
            size: podbay::term::Size {
                cols: 160,
                rows: 40,
            },
            fd3: None,
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
            if let Some((_, reply)) = answer.filter(|(prompt, _)| text.contains(prompt)) {
                let line = format!("{reply}\r");
                spawned
                    .master
                    .write_all(line.as_bytes())
                    .await
                    .expect("typed");
                answer = None;
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
        support::podbay_debug_with(kubeconfig, args, self.env()).await
    }

    fn assert_clean(&self, what: &str, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        for secret in self.secrets() {
            assert!(
                !text.contains(&secret),
                "{what} contains a secret ({}…):\n{text}",
                &secret[..6.min(secret.len())]
            );
        }
    }

    fn assert_logs_clean(&self) {
        let logs = self.logs();
        assert!(
            !logs.is_empty(),
            "podbay wrote no log file under {}",
            self.home.path().display()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_plugin_asks_for_its_login_before_the_screen_changes() {
    let f = Fixture::new().await;
    let kubeconfig = f.plugin_kubeconfig("login", LOGIN_PLUGIN);
    let screen = f
        .tui_answering(
            &kubeconfig,
            Some(("Enter the code shown at", "4711")),
            &["redis-0"],
        )
        .await;
    let text = String::from_utf8_lossy(&screen);
    let prompt = text.find("Enter the code").expect("the plugin asked");
    let table = text.find("redis-0").expect("then the pods were listed");
    assert!(prompt < table, "the prompt came before the TUI");
    f.assert_clean("the terminal", &screen);
    f.assert_logs_clean();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_credential_plugin_is_one_sentence_without_its_output() {
    let f = Fixture::new().await;
    const FAILED: &str = "The kubeconfig's credential plugin failed (exit status: 1)";
    let failing = f.plugin_kubeconfig("failing", FAILING_PLUGIN);
    let screen = f.tui(&failing, &[FAILED]).await;
    f.assert_clean("the terminal", &screen);
    let out = f
        .debug(&failing, &["redis-0", "-n", "shop", "--image", "busybox"])
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(78), "{stderr}");
    assert!(stderr.contains(FAILED), "{stderr}");
    f.assert_clean("stdout of podbay debug", &out.stdout);
    f.assert_clean("stderr of podbay debug", &out.stderr);

    const GARBLED: &str = "did not print a usable ExecCredential";
    let garbled = f.plugin_kubeconfig("garbled", GARBLED_PLUGIN);
    let screen = f.tui(&garbled, &[GARBLED]).await;
    f.assert_clean("the terminal", &screen);
    let out = f
        .debug(&garbled, &["redis-0", "-n", "shop", "--image", "busybox"])
        .await;
    assert!(String::from_utf8_lossy(&out.stderr).contains(GARBLED));
    f.assert_clean("stderr of podbay debug", &out.stderr);
    f.assert_logs_clean();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_keys_are_not_shown_or_logged() {
    let f = Fixture::new().await;
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["podbay-test-user".to_string()]).unwrap();
    let key_pem = signing_key.serialize_pem();
    // Every line of the key's body is secret; the longest ones tell.
    let key_lines: Vec<String> = key_pem
        .lines()
        .filter(|l| !l.starts_with("-----") && l.len() >= 16)
        .map(str::to_string)
        .collect();
    assert!(!key_lines.is_empty());
    let good = f.client_key_kubeconfig("key.kubeconfig", &cert.pem(), &key_pem);
    let screen = f.tui(&good, &["redis-0"]).await;
    let logs: Vec<u8> = f
        .logs()
        .iter()
        .flat_map(|l| std::fs::read(l).unwrap())
        .collect();
    for (what, bytes) in [("the terminal", &screen), ("the log", &logs)] {
        let text = String::from_utf8_lossy(bytes);
        for line in &key_lines {
            assert!(!text.contains(line.as_str()), "{what} shows the client key");
        }
    }

    // A key that is not one: the sentence says so without quoting it.
    let bogus = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        KEY_SECRET
    );
    let bad = f.client_key_kubeconfig("bad-key.kubeconfig", &cert.pem(), &bogus);
    let screen = f.tui(&bad, &["Cannot use context"]).await;
    f.assert_clean("the terminal", &screen);
    let out = f
        .debug(&bad, &["redis-0", "-n", "shop", "--image", "busybox"])
        .await;
    assert_eq!(out.status.code(), Some(78));
    f.assert_clean("stderr of podbay debug", &out.stderr);
    f.assert_logs_clean();
}

//! Shell completion as bash runs it: the script `podbay completions bash`
//! prints, sourced, asks the installed podbay for each word, which takes
//! contexts from the kubeconfig, team profiles from config.toml and names
//! from the cluster, within its bound when the server stalls.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::hostile::{Hostile, Reply};
use crate::support::{start_sim, tempdir};

/// A directory with `podbay` in it, as an install puts it on the PATH, and
/// the registration script sourced from it.
struct Shell {
    home: tempdir::TempHome,
    script: std::path::PathBuf,
}

impl Shell {
    fn new(tag: &str) -> Shell {
        let home = tempdir::temp_home(tag);
        let bin = home.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_podbay"), bin.join("podbay")).unwrap();
        let out = std::process::Command::new(bin.join("podbay"))
            .args(["completions", "bash"])
            .output()
            .expect("podbay runs");
        assert!(out.status.success(), "{out:?}");
        let script = home.path().join("podbay.bash");
        std::fs::write(&script, &out.stdout).unwrap();
        Shell { home, script }
    }

    /// What bash offers for the last word of `line` (a trailing space: a
    /// new, empty word), with `kubeconfig` as $KUBECONFIG.
    fn complete(&self, kubeconfig: &Path, line: &str) -> Vec<String> {
        let mut words: Vec<String> = line.split_whitespace().map(String::from).collect();
        if line.ends_with(' ') {
            words.push(String::new());
        }
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let program = format!(
            "source {script}; COMP_WORDS=({words}); COMP_CWORD={index}; \
             COMP_LINE={line:?}; COMP_POINT=${{#COMP_LINE}}; COMP_TYPE=9; \
             _clap_complete_podbay podbay {current} {previous}; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script = self.script.display(),
            words = quoted.join(" "),
            index = words.len() - 1,
            current = quoted[words.len() - 1],
            previous = quoted[words.len().saturating_sub(2)],
        );
        let home = self.home.path();
        let path = format!(
            "{}:{}",
            home.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(program)
            .env("PATH", path)
            .env("KUBECONFIG", kubeconfig)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|w| w.trim_end().to_string())
            .filter(|w| !w.is_empty())
            .collect()
    }
}

fn offers(offered: &[String], words: &[&str]) -> bool {
    words.iter().all(|w| offered.iter().any(|o| o == w))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_completes_contexts_namespaces_pods_nodes_workloads_and_containers() {
    let sim = start_sim(0).await;
    let kubeconfig = crate::support::kubeconfig(&sim, "completion");
    let shell = Shell::new("completion");
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("podbay de", &["debug", "debuggers"], &[]),
        (
            "podbay --context sim-",
            &["sim-dev", "sim-viewer"],
            &["sim"],
        ),
        ("podbay -n s", &["shop", "search"], &["default"]),
        ("podbay debug -n shop re", &["redis-0"], &["cart"]),
        (
            "podbay debug -n shop node/node-a",
            &["node/node-a1", "node/node-a2"],
            &["node/node-b1"],
        ),
        (
            "podbay debug -n shop deploy/",
            &["deploy/cart", "deploy/storefront"],
            &[],
        ),
        (
            "podbay debug -n shop redis-0 --target ",
            &["redis"],
            &["--target"],
        ),
        (
            "podbay port-forward -n shop sto",
            &["storefront-7d9c8b6f4-m4q7z"],
            &["redis-0"],
        ),
        ("podbay cp -n shop redis", &["redis-0:"], &[]),
        ("podbay debug --ta", &["--target", "--target-all"], &[]),
    ];
    for (line, wanted, unwanted) in cases {
        let offered = shell.complete(&kubeconfig, line);
        assert!(offers(&offered, wanted), "{line}: {offered:?}");
        for word in *unwanted {
            assert!(
                !offered.iter().any(|o| o == word),
                "{line}: {word} in {offered:?}"
            );
        }
    }
    // The restricted user is asked as itself: what it may list.
    let offered = shell.complete(&kubeconfig, "podbay --context sim-dev -n shop debug c");
    assert!(
        offered.iter().any(|o| o.starts_with("cart-")),
        "{offered:?}"
    );
    let _ = std::fs::remove_file(&kubeconfig);
}

#[test]
fn a_teams_profiles_complete_beside_the_built_ins() {
    let shell = Shell::new("completion-profiles");
    let config = shell.home.path().join("config/podbay");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[profiles.oncall]\nbase = \"baseline\"\n",
    )
    .unwrap();
    let offered = shell.complete(Path::new("/nonexistent"), "podbay debug web-1 --profile ");
    assert!(
        offers(
            &offered,
            &[
                "general",
                "baseline",
                "restricted",
                "netadmin",
                "sysadmin",
                "oncall"
            ]
        ),
        "{offered:?}"
    );
    // No kubeconfig: contexts complete to nothing, and bash goes on.
    assert!(
        shell
            .complete(Path::new("/nonexistent"), "podbay --context ")
            .is_empty()
    );
}

/// A server that takes the request and never answers: the shell gets its
/// prompt back within the bound, with nothing offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_server_completes_nothing_within_the_bound() {
    let server = Hostile::start(|_| Reply::hang()).await;
    let kubeconfig = server.kubeconfig("completion-stall");
    let shell = Shell::new("completion-stall");
    let started = Instant::now();
    let offered = tokio::task::spawn_blocking({
        let kubeconfig = kubeconfig.clone();
        move || shell.complete(&kubeconfig, "podbay debug -n shop re")
    })
    .await
    .unwrap();
    let took = started.elapsed();
    assert!(offered.is_empty(), "{offered:?}");
    assert!(took < Duration::from_secs(10), "the shell waited {took:?}");
    assert!(
        server.count(|r| r.path.contains("/pods")) > 0,
        "{:?}",
        server.requests()
    );
    let _ = std::fs::remove_file(&kubeconfig);
}

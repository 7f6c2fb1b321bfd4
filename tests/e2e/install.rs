//! The installed experience, with the built binary: completion scripts a
//! shell accepts, a manual page man renders, `kubectl podbay` through a
//! `kubectl-podbay` link, and the krew manifest a release would publish.
//! (The release binary's size and strip are checked by CI beside the
//! lints, `.ci/check-release`: building it here made the tests slow.)

use std::path::PathBuf;
use std::process::{Command, Output};

fn podbay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_podbay"))
        .args(args)
        .output()
        .expect("podbay runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("podbay-install-{tag}-"))
        .tempdir()
        .expect("scratch dir")
}

#[test]
fn the_bash_completion_script_is_valid_bash_and_completes_subcommands_and_flags() {
    let out = podbay(&["completions", "bash"]);
    assert!(out.status.success(), "{out:?}");
    let script = stdout(&out);
    // It asks podbay for each word (what bash then offers: completion.rs).
    assert!(script.contains("PODBAY_COMPLETE=\"bash\""), "{script}");
    let dir = scratch("bash");
    let file = dir.path().join("podbay.bash");
    std::fs::write(&file, &script).unwrap();
    let check = Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .expect("bash");
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    // Sourced, it registers the completion function for podbay.
    let registered = Command::new("bash")
        .arg("-c")
        .arg(format!("source {}; complete -p podbay", file.display()))
        .output()
        .expect("bash");
    assert!(
        stdout(&registered).contains("podbay"),
        "{}",
        String::from_utf8_lossy(&registered.stderr)
    );
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_a_usage_error() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = podbay(&["completions", shell]);
        assert!(
            out.status.success() && stdout(&out).contains("PODBAY_COMPLETE"),
            "{shell}: {out:?}"
        );
    }
    let out = podbay(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values"));
}

#[test]
fn the_manual_page_renders_with_the_keys_and_the_exit_codes() {
    let out = podbay(&["man"]);
    assert!(out.status.success(), "{out:?}");
    let dir = scratch("man");
    let file = dir.path().join("podbay.1");
    std::fs::write(&file, &out.stdout).unwrap();
    let rendered = Command::new("man")
        .arg("-l")
        .arg(&file)
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("PAGER", "cat")
        .env("MANPAGER", "cat")
        .output()
        .expect("man");
    assert!(rendered.status.success(), "man -l: {rendered:?}");
    // Without bold/underline overstrikes, as a person reads it.
    let plain = strip_overstrike(&stdout(&rendered));
    // Justified and wrapped: read word by word.
    let words = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "KEYS",
        "EXIT STATUS",
        "PODBAY DEBUG",
        "quit podbay",
        "launch a debug container",
        "mark the pane for broadcast",
        "--timeout",
        "77 permission denied",
        "KUBECONFIG",
    ] {
        assert!(
            words.contains(expected),
            "{expected:?} in the page:\n{plain}"
        );
    }
    // groff's own warnings (bad requests, escapes) would show a broken page.
    let warnings = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .arg(&file)
        .output()
        .expect("groff");
    assert!(
        warnings.stderr.is_empty(),
        "groff warns: {}",
        String::from_utf8_lossy(&warnings.stderr)
    );
}

/// `man`'s bold and underline are `c\bc` and `_\bc` overstrikes.
fn strip_overstrike(text: &str) -> String {
    let mut out: Vec<char> = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if chars.peek() == Some(&'\u{8}') {
            chars.next();
            continue;
        }
        out.push(c);
    }
    out.into_iter().collect()
}

#[test]
fn kubectl_runs_podbay_as_a_plugin_through_a_kubectl_podbay_link() {
    let dir = scratch("plugin");
    let bin = dir.path();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_podbay"), bin.join("kubectl-podbay"))
        .expect("link");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let kubectl = |args: &[&str]| {
        Command::new("kubectl")
            .args(args)
            .env("PATH", &path)
            .output()
            .expect("kubectl on the PATH (CI installs it)")
    };
    let listed = kubectl(&["plugin", "list"]);
    assert!(
        stdout(&listed).contains("kubectl-podbay"),
        "kubectl plugin list: {listed:?}"
    );
    let help = kubectl(&["podbay", "--help"]);
    assert!(help.status.success(), "{help:?}");
    let text = stdout(&help);
    assert!(
        text.contains("Usage: kubectl podbay") && text.contains("--all-namespaces"),
        "podbay's help, under the plugin's name:\n{text}"
    );
    let help = kubectl(&["podbay", "debug", "--help"]);
    let text = stdout(&help);
    assert!(
        text.contains("Usage: kubectl podbay debug") && text.contains("--target"),
        "{text}"
    );
    // Flags kubectl users pass reach podbay as its own: a bad context is
    // podbay's one sentence and exit status, not kubectl's.
    let missing = bin.join("no-kubeconfig");
    let run = kubectl(&[
        "podbay",
        "debug",
        "web",
        "--kubeconfig",
        missing.to_str().unwrap(),
        "--context",
        "nowhere",
    ]);
    assert_eq!(run.status.code(), Some(78), "{run:?}");
    assert!(
        String::from_utf8_lossy(&run.stderr).starts_with("podbay"),
        "{run:?}"
    );
}

/// The manifest as krew-release-bot renders it for `tag`.
fn rendered_manifest(tag: &str) -> String {
    let template = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/krew/podbay.yaml"),
    )
    .expect("assets/krew/podbay.yaml");
    template
        .lines()
        .map(|line| {
            let line = line.replace("{{ .TagName }}", tag);
            match line.split_once("{{addURIAndSha \"") {
                Some((indent, rest)) => {
                    let uri = rest.split('"').next().unwrap_or_default();
                    format!("{indent}uri: {uri}\n{indent}sha256: {}", "ab".repeat(32))
                }
                None => line,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_krew_manifest_has_what_krew_validates() {
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let text = rendered_manifest(&tag);
    assert!(
        !text.contains("{{"),
        "every template field rendered:\n{text}"
    );
    let doc: serde_json::Value = serde_saphyr::from_str(&text).expect("valid YAML");
    let field = |pointer: &str| doc.pointer(pointer).and_then(|v| v.as_str()).unwrap_or("");
    assert_eq!(
        field("/apiVersion"),
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(field("/kind"), "Plugin");
    // krew: the name is the file's name, and what `kubectl NAME` runs.
    assert_eq!(field("/metadata/name"), "podbay");
    assert_eq!(field("/spec/version"), tag);
    let short = field("/spec/shortDescription");
    assert!(!short.is_empty() && short.len() <= 50, "{short:?}");
    assert!(field("/spec/homepage").starts_with("https://"));
    let platforms = doc
        .pointer("/spec/platforms")
        .and_then(|p| p.as_array())
        .expect("platforms");
    let mut seen = Vec::new();
    for p in platforms {
        let label = |k: &str| {
            p.pointer(&format!("/selector/matchLabels/{k}"))
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        seen.push((label("os"), label("arch")));
        let uri = p.get("uri").and_then(|v| v.as_str()).unwrap_or("");
        assert!(
            uri.starts_with("https://") && uri.ends_with(".tar.gz") && uri.contains(&tag),
            "{uri}"
        );
        let sha = p.get("sha256").and_then(|v| v.as_str()).unwrap_or("");
        assert!(sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()));
        let bin = p.get("bin").and_then(|v| v.as_str()).unwrap_or("");
        let files: Vec<(&str, &str)> = p
            .get("files")
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten()
            .map(|f| {
                (
                    f.get("from").and_then(|v| v.as_str()).unwrap_or(""),
                    f.get("to").and_then(|v| v.as_str()).unwrap_or(""),
                )
            })
            .collect();
        assert!(
            files.contains(&(bin, ".")),
            "the bin {bin:?} is one of the files installed"
        );
        assert!(files.iter().any(|(from, _)| *from == "LICENSE"));
    }
    for (os, arch) in [
        ("linux", "amd64"),
        ("linux", "arm64"),
        ("darwin", "amd64"),
        ("darwin", "arm64"),
    ] {
        assert!(
            seen.contains(&(os.to_string(), arch.to_string())),
            "{os}/{arch} in {seen:?}"
        );
    }
    // The LICENSE the archives carry.
    let license = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/LICENSE");
    assert!(
        std::fs::read_to_string(license)
            .unwrap_or_default()
            .contains("Apache License")
    );
}

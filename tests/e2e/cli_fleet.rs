//! `podbay debug` across many pods (the real binary against the
//! simulator): selectors, owners and several names; each pod's lines after
//! its name, a summary on stderr, and an exit status that says whether
//! every pod's command exited 0.

use crate::support;

use std::path::PathBuf;
use std::process::Output;

use support::start_sim;

const STOREFRONT: [&str; 3] = [
    "storefront-7d9c8b6f4-m4q7z",
    "storefront-7d9c8b6f4-t8w3n",
    "storefront-7d9c8b6f4-x2k9p",
];

struct Fixture {
    _sim: podbay::sim::SimHandle,
    kubeconfig: PathBuf,
}

impl Fixture {
    async fn new() -> Self {
        let sim = start_sim(0).await;
        let kubeconfig = std::env::temp_dir().join(format!(
            "podbay-fleet-{}-{}.kubeconfig",
            std::process::id(),
            sim.addr().port()
        ));
        sim.write_kubeconfig(&kubeconfig).unwrap();
        Fixture {
            _sim: sim,
            kubeconfig,
        }
    }

    async fn podbay(&self, args: &[&str]) -> Output {
        support::podbay_debug(&self.kubeconfig, args).await
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.kubeconfig);
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The summary's row of `pod` (stderr).
fn summary_row<'a>(stderr: &'a str, pod: &str) -> &'a str {
    let table = &stderr[stderr.find("POD ").expect("a summary table")..];
    table
        .lines()
        .find(|l| l.starts_with(pod))
        .unwrap_or_else(|| panic!("no summary row for {pod}:\n{stderr}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selector_runs_in_every_replica_each_line_after_its_pod() {
    let f = Fixture::new().await;
    let out = f
        .podbay(&[
            "-l",
            "app.kubernetes.io/name=storefront",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target-all",
            "--",
            "sh",
            "-c",
            "hostname; ls /proc/1/root; echo to-stderr >&2",
        ])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let sandboxed = support::namespaces_or_skip("fleet hostname");
    for pod in STOREFRONT {
        let own: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("{pod}: ")))
            .collect();
        assert!(own.len() >= 2, "{pod} has its block: {stdout}");
        if sandboxed {
            assert_eq!(own[0], pod, "each pod's own hostname, in its own block");
        }
        assert!(
            stderr.contains(&format!("{pod}: to-stderr")),
            "its stderr is prefixed on stderr: {stderr}"
        );
        assert!(summary_row(&stderr, pod).contains("exited 0"), "{stderr}");
    }
    assert!(
        stdout
            .lines()
            .all(|l| STOREFRONT.iter().any(|p| l.starts_with(&format!("{p}: ")))),
        "every line of stdout is a pod's: {stdout}"
    );
    assert!(stderr.contains("podbay: 3 of 3 pods exited 0"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_that_cannot_run_is_named_in_the_summary_and_the_status_says_some_failed() {
    let f = Fixture::new().await;
    let out = f
        .podbay(&[
            STOREFRONT[0],
            "cart-5f6d7c9b8-h2j4k",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--target",
            "web",
            "--",
            "sh",
            "-c",
            "echo ran-here",
        ])
        .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(123), "some failed: {stderr}");
    assert!(
        stdout.contains(&format!("{}: ran-here", STOREFRONT[0])),
        "{stdout}"
    );
    assert!(!stdout.contains("cart-5f6d7c9b8-h2j4k: "), "{stdout}");
    let cart = summary_row(&stderr, "cart-5f6d7c9b8-h2j4k");
    assert!(
        cart.contains("invalid") && cart.contains("no container \"web\""),
        "the reason, in one row: {cart}"
    );
    assert!(summary_row(&stderr, STOREFRONT[0]).contains("exited 0"));
    assert!(
        stderr.contains("podbay: 1 of 2 pods exited 0; 1 did not"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_resolves_through_its_selector_and_json_is_one_document() {
    let f = Fixture::new().await;
    let out = f
        .podbay(&[
            "deploy/storefront",
            "-n",
            "shop",
            "--image",
            "busybox:1.36",
            "--parallel",
            "2",
            "-o",
            "json",
            "--",
            "sh",
            "-c",
            "exit 4",
        ])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(123), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["total"], 3);
    assert_eq!(doc["failed"], 3);
    let pods: Vec<&str> = doc["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pod"].as_str().unwrap())
        .collect();
    assert_eq!(pods, STOREFRONT, "the deployment's pods, in name order");
    for pod in doc["pods"].as_array().unwrap() {
        assert_eq!(pod["exitCode"], 4, "{pod}");
        assert_eq!(pod["result"], "exited");
        assert!(pod["container"].as_str().unwrap().starts_with("debugger-"));
    }

    let missing = f
        .podbay(&["deploy/nothing", "-n", "shop", "--image", "busybox:1.36"])
        .await;
    assert_eq!(missing.status.code(), Some(66));
    assert!(
        text(&missing.stderr).contains("deploy/nothing not found in namespace shop"),
        "{}",
        text(&missing.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_work_for_many_pods_is_said_before_anything_is_sent() {
    let f = Fixture::new().await;
    let tty = f
        .podbay(&[STOREFRONT[0], STOREFRONT[1], "-n", "shop", "-it"])
        .await;
    assert_eq!(tty.status.code(), Some(2));
    assert!(text(&tty.stderr).contains("-t gives one pod your terminal"));

    let none = f
        .podbay(&[
            "-l",
            "app=nothing-like-this",
            "-n",
            "shop",
            "--image",
            "busybox",
        ])
        .await;
    assert_eq!(none.status.code(), Some(66));
    assert!(
        text(&none.stderr).contains("No pods in namespace shop match -l app=nothing-like-this."),
        "{}",
        text(&none.stderr)
    );

    let mixed = f.podbay(&[STOREFRONT[0], "-l", "app=x"]).await;
    assert_eq!(mixed.status.code(), Some(2), "names and a selector: usage");
    let kind = f.podbay(&["svc/storefront"]).await;
    assert_eq!(kind.status.code(), Some(2));
    assert!(
        text(&kind.stderr).contains("deploy/, rs/, sts/, ds/, job/"),
        "{}",
        text(&kind.stderr)
    );
}

//! Third-party clients against the simulator, unchanged: the official Python
//! client (PyPI `kubernetes`) and kubectl. Each must be present: CI installs
//! the Python client (`.ci/run`), and this test bootstraps it into
//! `target/conformance-venv` when `PODBAY_PYTHON` is not set.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use support::start_sim;

fn python_with_client() -> PathBuf {
    if let Some(python) = std::env::var_os("PODBAY_PYTHON") {
        return PathBuf::from(python);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let venv = root.join("target/conformance-venv");
    let python = venv.join("bin/python");
    let has_client = |p: &Path| {
        Command::new(p)
            .args(["-c", "import kubernetes"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has_client(&python) {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "python3 -m venv failed: install python3-venv"
        );
        let installed = Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "-r"])
            .arg(root.join("tests/conformance/requirements.txt"))
            .status();
        assert!(
            installed.is_ok_and(|s| s.success()),
            "pip could not install the kubernetes client"
        );
    }
    python
}

fn kubeconfig_file(sim: &podbay::sim::SimHandle, name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "podbay-conformance-{}-{name}.kubeconfig",
        std::process::id()
    ));
    sim.write_kubeconfig(&path).expect("kubeconfig written");
    path
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_python_client_works_unchanged() {
    let sim = start_sim(200).await;
    let kubeconfig = kubeconfig_file(&sim, "python");
    let python = python_with_client();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/python_client.py");
    let output = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(&kubeconfig)
        .output()
        .await
        .expect("python runs");
    let _ = std::fs::remove_file(&kubeconfig);
    let report = text(&output);
    println!("{report}");
    assert!(output.status.success(), "{report}");
    assert!(report.contains("passed, 0 failed"), "{report}");
}

/// kubectl binaries to check, one per minor version, oldest first:
/// `PODBAY_KUBECTL` (colon-separated) if set, else every `kubectl` and
/// `kubectl.1.N` beside the `kubectl` and the `gcloud` found on PATH (the
/// Cloud SDK ships one build per supported minor version).
fn kubectls() -> Vec<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("PODBAY_KUBECTL") {
        Some(list) => std::env::split_paths(&list).collect(),
        None => {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs: Vec<PathBuf> = Vec::new();
            for dir in std::env::split_paths(&path) {
                for tool in ["kubectl", "gcloud"] {
                    if let Ok(real) = std::fs::canonicalize(dir.join(tool))
                        && let Some(parent) = real.parent()
                        && !dirs.iter().any(|d| d == parent)
                    {
                        dirs.push(parent.to_path_buf());
                    }
                }
            }
            let mut found = Vec::new();
            for dir in dirs {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name == "kubectl" || name.starts_with("kubectl.1.") {
                        found.push(entry.path());
                    }
                }
            }
            found
        }
    };
    let mut by_minor: std::collections::BTreeMap<u32, PathBuf> = Default::default();
    for binary in candidates {
        if let Some(minor) = client_minor(&binary) {
            by_minor.entry(minor).or_insert(binary);
        }
    }
    assert!(
        !by_minor.is_empty(),
        "kubectl not found: install it or set PODBAY_KUBECTL"
    );
    // Where the minors to judge by are known (CI names them), each must be
    // found: a kubectl gone from the image must not shrink the matrix.
    if let Ok(wanted) = std::env::var("PODBAY_KUBECTL_MINORS") {
        let missing: Vec<u32> = minors_wanted(&wanted)
            .into_iter()
            .filter(|minor| !by_minor.contains_key(minor))
            .collect();
        assert!(
            missing.is_empty(),
            "PODBAY_KUBECTL_MINORS={wanted}: no kubectl 1.{missing:?} found (found 1.{:?})",
            by_minor.keys().collect::<Vec<_>>()
        );
    }
    by_minor.into_values().collect()
}

/// `27-33` or `27,30,33`: the kubectl minor versions a run must judge by.
fn minors_wanted(text: &str) -> Vec<u32> {
    text.split(',')
        .flat_map(|part| match part.trim().split_once('-') {
            Some((from, to)) => match (from.parse::<u32>(), to.parse::<u32>()) {
                (Ok(from), Ok(to)) => (from..=to).collect(),
                _ => panic!("PODBAY_KUBECTL_MINORS: {part:?} is not a range like 27-33"),
            },
            None => vec![part.trim().parse().unwrap_or_else(|_| {
                panic!("PODBAY_KUBECTL_MINORS: {part:?} is not a minor version")
            })],
        })
        .collect()
}

/// The minor version `binary` reports, if it runs as a kubectl.
fn client_minor(binary: &Path) -> Option<u32> {
    let output = Command::new(binary)
        .args(["version", "--client", "-o", "json"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let version: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    let minor = version["clientVersion"]["minor"].as_str()?;
    minor.trim_end_matches('+').parse().ok()
}

/// A debug container name per kubectl binary, so runs of several do not clash.
fn debug_container_name(binary: &Path) -> String {
    let file = binary.file_name().unwrap_or_default().to_string_lossy();
    format!("dbg-{}", file.replace('.', "-"))
}

async fn kubectl(binary: &Path, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(binary)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kubectl starts");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(data) = stdin {
        input
            .write_all(data.as_bytes())
            .await
            .expect("stdin written");
    }
    drop(input);
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("kubectl finished in time")
        .expect("kubectl output")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_exec_debug_and_attach_work_unchanged() {
    let sim = start_sim(100).await;
    let kubeconfig = kubeconfig_file(&sim, "kubectl");
    for binary in kubectls() {
        let version = text(&kubectl(&binary, &kubeconfig, &["version", "--client"], None).await);

        let get = kubectl(&binary, &kubeconfig, &["get", "pods", "-A"], None).await;
        let listing = String::from_utf8_lossy(&get.stdout).into_owned();
        assert!(get.status.success(), "{version}\n{}", text(&get));
        assert!(
            listing.contains("redis-0") && listing.contains("Running"),
            "{listing}"
        );
        // The owners, through discovery of the apps group, as on a cluster.
        let owners = kubectl(
            &binary,
            &kubeconfig,
            &["get", "deploy,rs", "-n", "shop"],
            None,
        )
        .await;
        let listing = String::from_utf8_lossy(&owners.stdout).into_owned();
        assert!(owners.status.success(), "{version}\n{}", text(&owners));
        assert!(
            listing.contains("deployment.apps/storefront")
                && listing.contains("replicaset.apps/storefront-7d9c8b6f4"),
            "{version}\n{listing}"
        );

        let exec = kubectl(
            &binary,
            &kubeconfig,
            &[
                "exec",
                "-n",
                "shop",
                "redis-0",
                "-c",
                "redis",
                "--",
                "sh",
                "-c",
                "echo from-exec; exit 3",
            ],
            None,
        )
        .await;
        assert_eq!(exec.status.code(), Some(3), "{version}\n{}", text(&exec));
        assert!(String::from_utf8_lossy(&exec.stdout).contains("from-exec"));

        let piped = kubectl(
            &binary,
            &kubeconfig,
            &[
                "exec", "-i", "-n", "shop", "redis-0", "-c", "redis", "--", "cat",
            ],
            Some("through-stdin\n"),
        )
        .await;
        assert!(piped.status.success(), "{}", text(&piped));
        assert_eq!(String::from_utf8_lossy(&piped.stdout), "through-stdin\n");

        // `kubectl cp` both ways: tar through exec, on the wire the version speaks.
        let name = debug_container_name(&binary);
        let local = std::env::temp_dir().join(format!("podbay-cp-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&local).unwrap();
        let sent = local.join("sent.txt");
        let payload: String = (0..2000)
            .map(|i| format!("line {i} of {version}\n"))
            .collect();
        std::fs::write(&sent, &payload).unwrap();
        let remote = format!("shop/redis-0:/tmp/{name}.txt");
        let up = kubectl(
            &binary,
            &kubeconfig,
            &["cp", "-c", "redis", sent.to_str().unwrap(), &remote],
            None,
        )
        .await;
        assert!(up.status.success(), "{version}\n{}", text(&up));
        let back = local.join("back.txt");
        let down = kubectl(
            &binary,
            &kubeconfig,
            &["cp", "-c", "redis", &remote, back.to_str().unwrap()],
            None,
        )
        .await;
        assert!(down.status.success(), "{version}\n{}", text(&down));
        assert_eq!(
            std::fs::read_to_string(&back).unwrap_or_default(),
            payload,
            "{version}: kubectl cp changed the file"
        );
        let _ = std::fs::remove_dir_all(&local);

        let debug = kubectl(
            &binary,
            &kubeconfig,
            &[
                "debug",
                "-n",
                "shop",
                "redis-0",
                "--image=busybox:1.36",
                "--target=redis",
                "--profile=general",
                // stdin kept open (as on a node, without it `read` sees EOF
                // at once), attached to below.
                "-i",
                "--attach=false",
                &format!("--container={name}"),
                "--",
                "sh",
                "-c",
                "read line; echo got-$line",
            ],
            None,
        )
        .await;
        assert!(debug.status.success(), "{}", text(&debug));
        let jsonpath = format!(
            "jsonpath={{.status.ephemeralContainerStatuses[?(@.name==\"{name}\")].state.running.startedAt}}"
        );
        support::eventually(15, "the kubectl debug container to run", || {
            let (binary, kubeconfig, jsonpath) =
                (binary.clone(), kubeconfig.clone(), jsonpath.clone());
            async move {
                let out = kubectl(
                    &binary,
                    &kubeconfig,
                    &["get", "pod", "-n", "shop", "redis-0", "-o", &jsonpath],
                    None,
                )
                .await;
                (!out.stdout.is_empty()).then_some(())
            }
        })
        .await;
        let attach = kubectl(
            &binary,
            &kubeconfig,
            &["attach", "-i", "-n", "shop", "redis-0", "-c", &name],
            Some("hello\n"),
        )
        .await;
        assert!(
            String::from_utf8_lossy(&attach.stdout).contains("got-hello"),
            "{}",
            text(&attach)
        );

        let viewer = kubectl(
            &binary,
            &kubeconfig,
            &[
                "--context",
                "sim-viewer",
                "debug",
                "-n",
                "shop",
                "redis-0",
                "--image=busybox",
                "--",
                "true",
            ],
            None,
        )
        .await;
        assert!(!viewer.status.success());
        assert!(
            String::from_utf8_lossy(&viewer.stderr)
                .contains("cannot patch resource \"pods/ephemeralcontainers\""),
            "{}",
            text(&viewer)
        );
    }
    let _ = std::fs::remove_file(&kubeconfig);
}

/// kubectl against pods with namespaces: exec into a distroless container
/// fails with containerd's error (exit 1), and `kubectl debug --target`
/// sees the target's process as PID 1 and its files under /proc/1/root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_meets_distroless_containers_as_on_a_node() {
    if !support::namespaces_or_skip("kubectl and distroless containers") {
        return;
    }
    let own_users = matches!(
        podbay::sim::sandbox::Isolation::detect(Path::new(env!("CARGO_BIN_EXE_podbay")), true),
        podbay::sim::sandbox::Isolation::Namespaces { id_range: true, .. }
    );
    let sim = start_sim(100).await;
    let kubeconfig = kubeconfig_file(&sim, "kubectl-distroless");
    let pod = "payments-api-66b8f7d5c9-qv8lm";
    for binary in kubectls() {
        let version = text(&kubectl(&binary, &kubeconfig, &["version", "--client"], None).await);
        let exec = kubectl(
            &binary,
            &kubeconfig,
            &["exec", "-n", "payments", pod, "-c", "api", "--", "sh"],
            None,
        )
        .await;
        let said = String::from_utf8_lossy(&exec.stderr);
        assert_eq!(exec.status.code(), Some(1), "{version}\n{}", text(&exec));
        assert!(
            said.starts_with("error: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec ")
                && said.contains(r#"OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown"#),
            "{version}\n{said}"
        );

        let name = debug_container_name(&binary);
        let debug = kubectl(
            &binary,
            &kubeconfig,
            &[
                "debug",
                "-n",
                "payments",
                pod,
                "--image=busybox:1.36",
                "--target=api",
                // payments enforces Pod Security baseline.
                "--profile=baseline",
                "-i",
                "-q",
                &format!("--container={name}"),
                "--",
                "sh",
                "-c",
                // Wait for the attach before printing, so nothing is missed.
                "read go; ps aux; cat /proc/1/root/etc/payments-api/config.yaml 2>&1; hostname",
            ],
            Some("go\n"),
        )
        .await;
        let out = String::from_utf8_lossy(&debug.stdout);
        assert!(debug.status.success(), "{version}\n{}", text(&debug));
        assert!(
            out.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.get(1) == Some(&"1") && cols.last() == Some(&"/app/payments-api")
            }),
            "{version}: the target is PID 1\n{out}"
        );
        if own_users {
            // api runs as 65532; a root debug container without
            // SYS_PTRACE (baseline) is refused its root, as on a node.
            assert!(
                out.contains("/proc/1/root/etc/payments-api/config.yaml: Permission denied"),
                "{version}\n{out}"
            );
        } else {
            assert!(out.contains("service: payments-api"), "{version}\n{out}");
        }
        assert!(out.lines().any(|l| l == pod), "{version}\n{out}");

        // What the crash loop next door died of.
        let previous = kubectl(
            &binary,
            &kubeconfig,
            &[
                "logs",
                "-p",
                "-n",
                "payments",
                "ledger-worker-7f9c6d8b5-w9x8v",
            ],
            None,
        )
        .await;
        assert!(
            String::from_utf8_lossy(&previous.stdout)
                .contains("FATAL ledger-worker: cannot reach the database"),
            "{version}\n{}",
            text(&previous)
        );
    }
}

/// kubectl meets Pod Security admission as on a cluster: `payments`
/// enforces baseline (general's SYS_PTRACE is refused, baseline is
/// created), `batch` only warns at restricted (kubectl prints the warning).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_debug_meets_pod_security_admission() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig_file(&sim, "kubectl-psa");
    let pod = "payments-api-66b8f7d5c9-qv8lm";
    for binary in kubectls() {
        let version = text(&kubectl(&binary, &kubeconfig, &["version", "--client"], None).await);
        let debug = |profile: &'static str, namespace: &'static str, pod: &'static str| {
            let name = format!("{}-{profile}", debug_container_name(&binary));
            let args = vec![
                "debug".to_string(),
                "-n".into(),
                namespace.into(),
                pod.into(),
                "--image=busybox:1.36".into(),
                format!("--profile={profile}"),
                format!("--container={name}"),
                "--".into(),
                "true".into(),
            ];
            let (binary, kubeconfig) = (binary.clone(), kubeconfig.clone());
            async move {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                (name, kubectl(&binary, &kubeconfig, &args, None).await)
            }
        };
        let (name, refused) = debug("general", "payments", pod).await;
        assert_eq!(
            refused.status.code(),
            Some(1),
            "{version}\n{}",
            text(&refused)
        );
        let expected = format!(
            r#"Error from server (Forbidden): pods "{pod}" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "{name}" must not include "SYS_PTRACE" in securityContext.capabilities.add)"#
        );
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains(&expected),
            "{version}\n{}",
            text(&refused)
        );
        let (_, created) = debug("baseline", "payments", pod).await;
        assert!(created.status.success(), "{version}\n{}", text(&created));

        let (name, warned) = debug("general", "batch", "thumbnailer-6d5c8b9f7-q4w5e").await;
        assert!(warned.status.success(), "{version}\n{}", text(&warned));
        // The whole pod is evaluated: debug containers added by an
        // earlier kubectl are named too.
        let said = String::from_utf8_lossy(&warned.stderr);
        let warning = said
            .lines()
            .find(|l| l.starts_with(r#"Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container"#))
            .unwrap_or_else(|| panic!("{version}\n{}", text(&warned)));
        assert!(
            warning.contains(&format!("{name:?}")),
            "{version}\n{warning}"
        );
    }
    let _ = std::fs::remove_file(&kubeconfig);
}

/// What an SRE reads before debugging, from kubectl against the simulator:
/// `describe pod` (and podbay's own description says the same things),
/// `get events -A`, `logs -f` that follows a running container and ends
/// with a finished one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_describe_events_and_followed_logs_read_as_on_a_cluster() {
    let sim = support::start_sim(0).await;
    let kubeconfig = kubeconfig_file(&sim, "kubectl-investigate");
    let client = support::client(&sim, "sim").await;
    let pod: k8s_openapi::api::core::v1::Pod = kube::Api::namespaced(client, "payments")
        .get("ledger-worker-7f9c6d8b5-w9x8v")
        .await
        .expect("the crash-looping pod");
    let ours: Vec<String> =
        podbay::model::describe::describe_pod(&pod, &[], jiff::Timestamp::now())
            .iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
    for binary in kubectls() {
        let version = text(&kubectl(&binary, &kubeconfig, &["version", "--client"], None).await);
        let describe = kubectl(
            &binary,
            &kubeconfig,
            &[
                "describe",
                "pod",
                "-n",
                "payments",
                "ledger-worker-7f9c6d8b5-w9x8v",
            ],
            None,
        )
        .await;
        assert!(describe.status.success(), "{version}\n{}", text(&describe));
        // The pull secret a copy may carry, in the apiserver's columns.
        let secrets = kubectl(
            &binary,
            &kubeconfig,
            &["get", "secrets", "-n", "shop"],
            None,
        )
        .await;
        let listing = String::from_utf8_lossy(&secrets.stdout).into_owned();
        assert!(secrets.status.success(), "{version}\n{}", text(&secrets));
        let words = |line: &str| {
            line.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let lines: Vec<Vec<String>> = listing.lines().map(words).collect();
        assert_eq!(
            lines[0],
            ["NAME", "TYPE", "DATA", "AGE"],
            "{version}\n{listing}"
        );
        assert_eq!(
            lines[1][..3],
            ["regcred", "kubernetes.io/dockerconfigjson", "1"],
            "{version}\n{listing}"
        );
        // The Services an incident starts from, in the apiserver's columns.
        let services = kubectl(
            &binary,
            &kubeconfig,
            &["get", "services", "-n", "shop", "-o", "wide"],
            None,
        )
        .await;
        let listing = String::from_utf8_lossy(&services.stdout).into_owned();
        assert!(services.status.success(), "{version}\n{}", text(&services));
        let lines: Vec<Vec<String>> = listing.lines().map(words).collect();
        assert_eq!(
            lines[0],
            [
                "NAME",
                "TYPE",
                "CLUSTER-IP",
                "EXTERNAL-IP",
                "PORT(S)",
                "AGE",
                "SELECTOR"
            ],
            "{version}\n{listing}"
        );
        let storefront = lines.iter().find(|l| l[0] == "storefront");
        assert_eq!(
            storefront.map(|l| [&l[1..5], &l[6..]].concat()),
            Some(
                [
                    "ClusterIP",
                    "10.96.14.20",
                    "<none>",
                    "80/TCP",
                    "app.kubernetes.io/name=storefront"
                ]
                .map(String::from)
                .to_vec()
            ),
            "{version}\n{listing}"
        );
        let redis = lines.iter().find(|l| l[0] == "redis");
        assert_eq!(
            redis.map(|l| l[2].as_str()),
            Some("None"),
            "{version}\n{listing}"
        );
        // Every workload kind an incident starts from, in one call, as the
        // apiserver prints them (podbay's views read the same rows).
        let workloads = kubectl(
            &binary,
            &kubeconfig,
            &["get", "deploy,sts,ds,rs,job,cj", "-A"],
            None,
        )
        .await;
        let listing = String::from_utf8_lossy(&workloads.stdout).into_owned();
        assert!(
            workloads.status.success(),
            "{version}\n{}",
            text(&workloads)
        );
        let lines: Vec<Vec<String>> = listing.lines().map(words).collect();
        let headers: Vec<String> = lines
            .iter()
            .filter(|l| l.first().is_some_and(|w| w == "NAMESPACE"))
            .map(|l| l.join(" "))
            .collect();
        assert_eq!(
            headers,
            [
                "NAMESPACE NAME READY UP-TO-DATE AVAILABLE AGE",
                "NAMESPACE NAME READY AGE",
                "NAMESPACE NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE",
                "NAMESPACE NAME DESIRED CURRENT READY AGE",
                "NAMESPACE NAME STATUS COMPLETIONS DURATION AGE",
                "NAMESPACE NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE",
            ],
            "{version}\n{listing}"
        );
        let line = |name: &str| {
            lines
                .iter()
                .find(|l| l.get(1).is_some_and(|n| n == name))
                .map(|l| l[2..].join(" "))
                .unwrap_or_default()
        };
        assert!(
            line("deployment.apps/storefront").starts_with("3/3 3 3 "),
            "{version}\n{listing}"
        );
        assert!(
            line("statefulset.apps/redis").starts_with("1/1 "),
            "{version}\n{listing}"
        );
        assert!(
            line("daemonset.apps/log-shipper").starts_with("4 4 4 4 4 kubernetes.io/os=linux "),
            "{version}\n{listing}"
        );
        assert!(
            line("job.batch/reindex-orders").starts_with("Failed 0/1 "),
            "{version}\n{listing}"
        );
        assert!(
            line("job.batch/nightly-report-29121440").starts_with("Complete 1/1 4m4s "),
            "{version}\n{listing}"
        );
        assert!(
            line("cronjob.batch/nightly-report").contains(" <none> False 0 "),
            "{version}\n{listing}"
        );
        // A Service's endpoints, as 1.27 reads them (core Endpoints) and as
        // 1.33 does (EndpointSlices): storefront's three ready pods.
        let described = kubectl(
            &binary,
            &kubeconfig,
            &["describe", "service", "-n", "shop", "storefront"],
            None,
        )
        .await;
        let description = String::from_utf8_lossy(&described.stdout).into_owned();
        let endpoints = description
            .lines()
            .find(|l| l.starts_with("Endpoints:"))
            .unwrap_or_default();
        assert_eq!(
            endpoints.matches(":8080").count(),
            3,
            "{version}\n{description}"
        );
        let slices = kubectl(
            &binary,
            &kubeconfig,
            &["get", "endpointslices", "-n", "shop"],
            None,
        )
        .await;
        let listing = String::from_utf8_lossy(&slices.stdout).into_owned();
        let lines: Vec<Vec<String>> = listing.lines().map(words).collect();
        assert_eq!(
            lines.first().map(|l| l.join(" ")).as_deref(),
            Some("NAME ADDRESSTYPE PORTS ENDPOINTS AGE"),
            "{version}\n{}",
            text(&slices)
        );
        let slice = |service: &str| {
            lines
                .iter()
                .find(|l| l[0].starts_with(&format!("{service}-")))
                .map(|l| l[1..4].join(" "))
                .unwrap_or_default()
        };
        assert_eq!(
            slice("checkout"),
            "IPv4 8080 <unset>",
            "{version}\n{listing}"
        );
        assert!(
            slice("redis").starts_with("IPv4 6379 10.244."),
            "{version}\n{listing}"
        );
        assert_eq!(
            slice("storefront").matches("10.244.").count(),
            3,
            "{version}\n{listing}"
        );
        let described = kubectl(
            &binary,
            &kubeconfig,
            &["describe", "job", "-n", "batch", "reindex-orders"],
            None,
        )
        .await;
        let description = String::from_utf8_lossy(&described.stdout).into_owned();
        assert!(
            described.status.success()
                && description.contains("0 Active (0 Ready) / 0 Succeeded / 1 Failed"),
            "{version}\n{}",
            text(&described)
        );
        // The deployment controller's conditions, as kubectl reads them:
        // described, and a rollout that is complete.
        let described = kubectl(
            &binary,
            &kubeconfig,
            &["describe", "deploy", "-n", "shop", "storefront"],
            None,
        )
        .await;
        let description = text(&described);
        let condition = |kind: &str| {
            description
                .lines()
                .find(|l| l.trim_start().starts_with(kind))
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        };
        assert_eq!(
            condition("Available "),
            "Available True MinimumReplicasAvailable",
            "{version}
{description}"
        );
        assert_eq!(
            condition("Progressing "),
            "Progressing True NewReplicaSetAvailable",
            "{version}
{description}"
        );
        let rollout = kubectl(
            &binary,
            &kubeconfig,
            &[
                "rollout",
                "status",
                "deploy/storefront",
                "-n",
                "shop",
                "--timeout=20s",
            ],
            None,
        )
        .await;
        assert!(
            rollout.status.success()
                && text(&rollout).contains("deployment \"storefront\" successfully rolled out"),
            "{version}
{}",
            text(&rollout)
        );
        let theirs = String::from_utf8_lossy(&describe.stdout).into_owned();
        // Every line of kubectl's description above its events, spacing
        // aside, is in podbay's.
        let above_events = theirs.split("\nEvents:").next().unwrap_or_default();
        let mut compared = 0;
        for line in above_events.lines() {
            let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
            if line.is_empty() {
                continue;
            }
            assert!(
                ours.contains(&line),
                "{version}: kubectl says {line:?}; podbay's description:\n{}",
                ours.join("\n")
            );
            compared += 1;
        }
        assert!(
            compared > 25,
            "{version}: {compared} lines compared\n{theirs}"
        );
        assert!(theirs.contains("Restart Count:  17"), "{theirs}");

        let events = kubectl(&binary, &kubeconfig, &["get", "events", "-A"], None).await;
        let listed = String::from_utf8_lossy(&events.stdout).into_owned();
        assert!(events.status.success(), "{version}\n{}", text(&events));
        // The apiserver's columns, not a bare NAME and AGE.
        let header = listed.lines().next().unwrap_or_default();
        for column in [
            "NAMESPACE",
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "MESSAGE",
        ] {
            assert!(header.contains(column), "{version}: {column}\n{listed}");
        }
        for (namespace, reason) in [("search", "FailedScheduling"), ("payments", "BackOff")] {
            assert!(
                listed
                    .lines()
                    .any(|l| l.starts_with(namespace) && l.contains(reason)),
                "{version}: {namespace} {reason}\n{listed}"
            );
        }

        // A finished init container: -f prints its log and ends.
        let init = kubectl(
            &binary,
            &kubeconfig,
            &["logs", "-f", "-n", "shop", "redis-0", "-c", "init-config"],
            None,
        )
        .await;
        assert!(init.status.success(), "{version}\n{}", text(&init));
        assert!(
            String::from_utf8_lossy(&init.stdout).contains("init-config: done"),
            "{version}\n{}",
            text(&init)
        );

        // A running one: -f keeps going, and a line written later arrives.
        let mut follow = tokio::process::Command::new(&binary)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args([
                "logs", "-f", "--tail=1", "-n", "shop", "redis-0", "-c", "redis",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("kubectl starts");
        // The tail, then a line written after kubectl started.
        use tokio::io::AsyncBufReadExt as _;
        let mut out = tokio::io::BufReader::new(follow.stdout.take().expect("stdout")).lines();
        let mut lines = 0;
        let read = tokio::time::timeout(Duration::from_secs(20), async {
            while lines < 2 {
                match out.next_line().await {
                    Ok(Some(line)) => lines += usize::from(line.contains("handled request")),
                    _ => break,
                }
            }
        })
        .await;
        assert!(
            read.is_ok() && lines >= 2,
            "{version}: the tail and a later line, got {lines}"
        );
        assert!(
            follow.try_wait().expect("kubectl's status").is_none(),
            "{version}: logs -f of a running container ended"
        );
        let _ = follow.start_kill();
        let _ = follow.wait().await;
    }
    let _ = std::fs::remove_file(kubeconfig);
}

/// `kubectl port-forward` as kubectl 1.31+ speaks it (SPDY tunnelled in a
/// WebSocket) and as it falls back (a plain SPDY upgrade), to a Deployment
/// and to a Service (whose port kubectl turns into its pods' port):
/// curl-style requests reach payments-api's /metrics through several
/// connections of one session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_port_forward_reaches_the_pods_ports_both_ways() {
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
    if !support::namespaces_or_skip("kubectl port-forward into a pod's network") {
        return;
    }
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig_file(&sim, "kubectl-pf");
    for binary in kubectls() {
        // Over SPDY through the Service (its port 443 is its pods' 8080,
        // as kubectl translates it), over WebSocket through the Deployment.
        for (websockets, target, port) in [
            ("true", "deploy/payments-api", ":8080"),
            ("false", "svc/payments-api", ":443"),
        ] {
            let mut child = tokio::process::Command::new(&binary)
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .args(["port-forward", "-n", "payments", target, port])
                .env("KUBECTL_PORT_FORWARD_WEBSOCKETS", websockets)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .expect("kubectl starts");
            let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("kubectl says where it listens")
                .unwrap()
                .unwrap_or_default();
            let port: u16 = line
                .strip_prefix("Forwarding from 127.0.0.1:")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|p| p.parse().ok())
                .filter(|_| line.ends_with(" -> 8080"))
                .unwrap_or_else(|| panic!("{binary:?} websockets={websockets}: {line}"));
            for _ in 0..3 {
                let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                stream
                    .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .await
                    .unwrap();
                let mut reply = Vec::new();
                tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut reply))
                    .await
                    .expect("an answer through kubectl")
                    .unwrap();
                let reply = String::from_utf8_lossy(&reply);
                assert!(
                    reply.starts_with("HTTP/1.1 200 OK")
                        && reply.contains("# TYPE http_requests_total counter"),
                    "{binary:?} websockets={websockets}: {reply}"
                );
            }
            child.kill().await.unwrap();
            let stderr = {
                let mut text = String::new();
                let _ = child.stderr.take().unwrap().read_to_string(&mut text).await;
                text
            };
            assert!(
                !stderr.contains("lost connection"),
                "{binary:?} websockets={websockets}: {stderr}"
            );
        }
    }
    let _ = std::fs::remove_file(&kubeconfig);
}

/// kubectl's node debugging and pod copies create pods (in protobuf): on
/// node-b1, the node debug pod's `ps` lists node-b1's containers and not
/// node-a1's, `/host` is the node's root (its pods' log directories, its
/// OS), and `chroot /host` finds a shell; a copy of the crash-looping
/// ledger-worker with `--share-processes` and a busybox container sees
/// the worker's process. kubectl lists and deletes both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_debugs_a_node_and_copies_a_pod() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig_file(&sim, "kubectl-node");
    for binary in kubectls() {
        let version = text(&kubectl(&binary, &kubeconfig, &["version", "--client"], None).await);
        let run = |args: Vec<String>| {
            let (binary, kubeconfig) = (binary.clone(), kubeconfig.clone());
            async move {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                kubectl(&binary, &kubeconfig, &args, None).await
            }
        };
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        // The server prints nodes as the apiserver does.
        let listed = run(args("get nodes")).await;
        let listed = String::from_utf8_lossy(&listed.stdout).to_string();
        let row = |name: &str| {
            listed
                .lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_default()
                .to_string()
        };
        assert!(
            listed.starts_with("NAME") && listed.contains("VERSION"),
            "{version}\n{listed}"
        );
        assert!(
            row("node-a1").contains("control-plane") && row("node-a1").contains("v1.33.1"),
            "{version}\n{listed}"
        );
        assert!(
            row("node-b2").contains("Ready,SchedulingDisabled"),
            "{version}\n{listed}"
        );
        assert!(row("node-win1").contains("NotReady"), "{version}\n{listed}");
        // kubectl's `sysadmin` profile came in 1.30; `general` before it
        // shares the node's namespaces and mounts its root all the same.
        let profile = match client_minor(&binary) {
            Some(minor) if minor >= 30 => "sysadmin",
            _ => "general",
        };
        let created = run(args(&format!(
            "debug node/node-b1 --image=busybox:1.36 --profile={profile} -- sleep 600"
        )))
        .await;
        assert!(created.status.success(), "{version}\n{}", text(&created));
        let said = String::from_utf8_lossy(&created.stdout).to_string();
        let pod = said
            .split_whitespace()
            .find(|w| w.starts_with("node-debugger-node-b1-"))
            .unwrap_or_else(|| panic!("{version}\n{}", text(&created)))
            .to_string();
        let mut running = false;
        for _ in 0..50 {
            let phase = run(args(&format!(
                "get pod {pod} -o jsonpath={{.status.phase}}"
            )))
            .await;
            if String::from_utf8_lossy(&phase.stdout) == "Running" {
                running = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(running, "{version}: {pod} never ran");
        let script = "ps -e -o comm; echo ---; ls /host/var/log/pods; echo ---; chroot /host sh -c 'grep ^ID= /etc/os-release; hostname'";
        // The demo's containers may still be starting: ask until redis runs.
        let mut seen = String::new();
        for _ in 0..50 {
            let mut exec = args(&format!("exec {pod} --"));
            exec.extend(["sh".into(), "-c".into(), script.into()]);
            let out = run(exec).await;
            assert!(out.status.success(), "{version}\n{}", text(&out));
            seen = String::from_utf8_lossy(&out.stdout).to_string();
            if seen.contains("redis-server") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let sections: Vec<&str> = seen.split("---\n").collect();
        let (processes, logs, host) = (sections[0], sections[1], sections[2]);
        // redis-0 and a storefront replica run on node-b1; payments-api's
        // qv8lm replica and the apiserver on node-a1.
        assert!(processes.contains("redis-server"), "{version}\n{seen}");
        assert!(!processes.contains("payments-api"), "{version}\n{seen}");
        assert!(logs.contains("shop_redis-0_"), "{version}\n{seen}");
        assert!(!logs.contains("kube-apiserver"), "{version}\n{seen}");
        assert!(
            host.contains("ID=debian") && host.contains("node-b1"),
            "{version}\n{seen}"
        );
        let deleted = run(args(&format!("delete pod {pod} --wait=false"))).await;
        assert!(deleted.status.success(), "{version}\n{}", text(&deleted));

        let ledger = "ledger-worker-7f9c6d8b5-w9x8v";
        let copy = format!("ledger-copy-{}", debug_container_name(&binary));
        let copied = run(args(&format!(
            "debug -n payments {ledger} --copy-to={copy} --image=busybox:1.36 --container=shell --share-processes --profile=baseline -- sleep 600"
        )))
        .await;
        assert!(copied.status.success(), "{version}\n{}", text(&copied));
        let mut ps = String::new();
        for _ in 0..50 {
            let out = run(args(&format!(
                "exec -n payments {copy} -c shell -- ps -e -o comm"
            )))
            .await;
            ps = String::from_utf8_lossy(&out.stdout).to_string();
            if ps.contains("ledger") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            ps.contains("ledger") && ps.contains("sleep"),
            "{version}\n{ps}"
        );
        let labels = run(args(&format!(
            "get pod -n payments {copy} -o jsonpath={{.metadata.labels}}"
        )))
        .await;
        assert_eq!(
            String::from_utf8_lossy(&labels.stdout),
            "",
            "{version}: kubectl drops the labels"
        );
        let deleted = run(args(&format!("delete pod -n payments {copy} --wait=false"))).await;
        assert!(deleted.status.success(), "{version}\n{}", text(&deleted));
    }
    let _ = std::fs::remove_file(&kubeconfig);
}

/// What kubectl sends from a file, every version: `create --dry-run=server`
/// stores nothing; `apply -f` creates, then patches (the server's defaults
/// kept), `label` patches; a field the API does not know is refused by the
/// server (kubectl asks it to be strict once the OpenAPI documents say it
/// can be), and a spec change the API forbids is refused in upstream's
/// words. No `--validate=false` anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_and_applies_files_with_server_side_validation() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig_file(&sim, "kubectl-apply");
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(support::client(&sim, "sim").await, "default");
    for binary in kubectls() {
        let version = text(&kubectl(&binary, &kubeconfig, &["version", "--client"], None).await);
        let name = format!("applied-{}", debug_container_name(&binary));
        let manifest = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  containers:\n  - name: a\n    image: busybox:1.36\n    command: [sleep, '600']\n  volumes:\n  - name: scratch\n"
        );
        let run = |args: &'static [&'static str], input: String| {
            let (binary, kubeconfig) = (binary.clone(), kubeconfig.clone());
            async move { kubectl(&binary, &kubeconfig, args, Some(&input)).await }
        };

        let dry = run(&["create", "--dry-run=server", "-f", "-"], manifest.clone()).await;
        assert!(dry.status.success(), "{version}\n{}", text(&dry));
        assert!(
            text(&dry).contains("created (server dry run)"),
            "{version}\n{}",
            text(&dry)
        );
        assert!(
            pods.get_opt(&name).await.unwrap().is_none(),
            "{version}: a server dry run stored {name}"
        );

        let created = run(&["apply", "-f", "-"], manifest.clone()).await;
        assert!(created.status.success(), "{version}\n{}", text(&created));
        let again = run(&["apply", "-f", "-"], manifest.clone()).await;
        assert!(again.status.success(), "{version}\n{}", text(&again));
        let stored = pods.get(&name).await.unwrap();
        let volume = &stored.spec.as_ref().unwrap().volumes.as_ref().unwrap()[0];
        assert!(volume.empty_dir.is_some(), "{version}: {volume:?}");
        assert!(
            stored
                .metadata
                .annotations
                .unwrap_or_default()
                .contains_key("kubectl.kubernetes.io/last-applied-configuration"),
            "{version}"
        );

        let label = format!("label pod -n default {name} team=sre");
        let args: Vec<&str> = label.split_whitespace().collect();
        let labeled = kubectl(&binary, &kubeconfig, &args, None).await;
        assert!(labeled.status.success(), "{version}\n{}", text(&labeled));
        let labels = pods
            .get(&name)
            .await
            .unwrap()
            .metadata
            .labels
            .unwrap_or_default();
        assert_eq!(
            labels.get("team").map(String::as_str),
            Some("sre"),
            "{version}"
        );

        let unknown = manifest.replace("  - name: a\n", "  - name: a\n    colour: red\n");
        let refused = run(&["create", "--dry-run=server", "-f", "-"], unknown).await;
        assert!(!refused.status.success(), "{version}\n{}", text(&refused));
        assert!(
            text(&refused)
                .contains(r#"strict decoding error: unknown field "spec.containers[0].colour""#),
            "{version}\n{}",
            text(&refused)
        );

        let forbidden = run(&["apply", "-f", "-"], manifest.replace("'600'", "'601'")).await;
        assert!(
            !forbidden.status.success(),
            "{version}\n{}",
            text(&forbidden)
        );
        assert!(
            text(&forbidden)
                .contains("spec: Forbidden: pod updates may not change fields other than"),
            "{version}\n{}",
            text(&forbidden)
        );

        let delete = format!("delete pod -n default {name} --dry-run=server");
        let args: Vec<&str> = delete.split_whitespace().collect();
        let kept = kubectl(&binary, &kubeconfig, &args, None).await;
        assert!(kept.status.success(), "{version}\n{}", text(&kept));
        let still = pods.get(&name).await.unwrap();
        assert!(
            still.metadata.deletion_timestamp.is_none(),
            "{version}: a server dry run deleted {name}"
        );
    }
    let _ = std::fs::remove_file(&kubeconfig);
}

/// `kubectl top` reads the simulator's metrics API as it reads
/// metrics-server's: pods of a namespace, of all, one pod's containers, and
/// the nodes, with figures from the containers' processes; the restricted
/// user is refused pod metrics across namespaces, in RBAC's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_top_reads_pod_and_node_metrics() {
    let sim = start_sim(0).await;
    let kubeconfig = kubeconfig_file(&sim, "kubectl-top");
    let memory_of = |table: &str, name: &str| -> Option<u64> {
        let line = table.lines().find(|l| l.contains(name))?;
        line.split_whitespace()
            .find_map(|cell| cell.strip_suffix("Mi")?.parse().ok())
    };
    for binary in kubectls() {
        let version = text(&kubectl(&binary, &kubeconfig, &["version", "--client"], None).await);
        // A figure exists after metrics-server's second measurement.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let containers = loop {
            let out = kubectl(
                &binary,
                &kubeconfig,
                &["top", "pod", "-n", "search", "--containers"],
                None,
            )
            .await;
            let table = String::from_utf8_lossy(&out.stdout).into_owned();
            if out.status.success() && memory_of(&table, "indexer").is_some_and(|m| m > 0) {
                break table;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{version}\n{}",
                text(&out)
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert!(
            containers.contains("POD") && containers.contains("search-indexer-"),
            "{version}\n{containers}"
        );
        let all = kubectl(
            &binary,
            &kubeconfig,
            &["top", "pod", "-A", "--sort-by=memory"],
            None,
        )
        .await;
        assert!(all.status.success(), "{version}\n{}", text(&all));
        let all = String::from_utf8_lossy(&all.stdout).into_owned();
        assert!(
            all.contains("kube-system") && all.contains("redis-0"),
            "{version}\n{all}"
        );
        let nodes = kubectl(&binary, &kubeconfig, &["top", "node"], None).await;
        assert!(nodes.status.success(), "{version}\n{}", text(&nodes));
        let nodes = String::from_utf8_lossy(&nodes.stdout).into_owned();
        assert!(
            nodes.contains("CPU(cores)") && memory_of(&nodes, "node-a1").is_some_and(|m| m > 0),
            "{version}\n{nodes}"
        );
        let refused = kubectl(
            &binary,
            &kubeconfig,
            &["--context", "sim-dev", "top", "pod", "-A"],
            None,
        )
        .await;
        assert!(!refused.status.success(), "{version}\n{}", text(&refused));
        assert!(
            text(&refused).contains(
                "cannot list resource \"pods\" in API group \"metrics.k8s.io\" at the cluster scope"
            ),
            "{version}\n{}",
            text(&refused)
        );
    }
}

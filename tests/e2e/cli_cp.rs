//! `podbay cp` (the real binary against the simulator): out of a
//! distroless container through a debug container, into it, directly where
//! the container has tar, as tar streams on stdin/stdout, and one sentence
//! with its exit code for each way it fails.

use std::path::Path;
use std::time::Duration;

use crate::support;

use support::DebugFixture as Fixture;

const PAYMENTS: &str = "payments/payments-api-66b8f7d5c9-qv8lm";
const REDIS: &str = "shop/redis-0";
/// Crash-looping, distroless, with an emptyDir for its core files.
const LEDGER: &str = "payments/ledger-worker-7f9c6d8b5-w9x8v";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `podbay cp ARGS…` in `dir`, piped; its output.
async fn cp_in(f: &Fixture, dir: &Path, args: &[&str]) -> std::process::Output {
    let home = support::tempdir::temp_home("cp");
    let run = support::podbay_command("cp", &f.kubeconfig, args, home.path())
        .current_dir(dir)
        .output();
    tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("podbay cp finished in time")
        .expect("podbay runs")
}

/// `podbay cp ARGS…` with `stream` on its stdin; its output.
async fn cp_from_stdin(f: &Fixture, args: &[&str], stream: &[u8]) -> std::process::Output {
    use tokio::io::AsyncWriteExt as _;
    let home = support::tempdir::temp_home("cp");
    let mut child = support::podbay_command("cp", &f.kubeconfig, args, home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(stream).await.unwrap();
    drop(stdin);
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("podbay cp finished in time")
        .unwrap()
}

/// What a one-shot debug container that targets `container` prints for
/// `command` (a second, independent look into the pod).
async fn look(f: &Fixture, pod: &str, container: &str, command: &str) -> String {
    let (namespace, pod) = pod.split_once('/').unwrap();
    let out = f
        .podbay(&[
            pod,
            "-n",
            namespace,
            "--target",
            container,
            "--image",
            "busybox:1.36",
            "--",
            "sh",
            "-c",
            command,
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn sha256(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum runs");
    text(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// payments-api writes its heap dump as it starts: copies are retried until
/// it is there (under a temporary name until whole).
/// The copy's output, with the stderr of every try before it (the first
/// may come before payments-api has written its dump).
async fn copy_heap_dump(f: &Fixture, dir: &Path) -> std::process::Output {
    let heap = format!("{PAYMENTS}:/var/dump/heap.hprof");
    let mut said = Vec::new();
    for _ in 0..40 {
        let mut out = cp_in(f, dir, &[&heap, "heap.hprof", "-c", "api"]).await;
        said.extend_from_slice(&out.stderr);
        if !text(&out.stderr).contains("No such file") {
            out.stderr = said;
            return out;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("payments-api never wrote its heap dump");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heap_dump_comes_out_of_a_distroless_container_whole() {
    if !support::namespaces_or_skip("cp heap dump") {
        return;
    }
    let f = Fixture::new(0).await;
    let dir = tempfile::tempdir().unwrap();
    let out = copy_heap_dump(&f, dir.path()).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("container api has no tar")
            && stderr.contains("added debug container debugger-"),
        "the route is said: {stderr}"
    );
    // Where each container is its own user (the simulator runs as root),
    // api runs as 65532 and payments enforces baseline (no SYS_PTRACE): the
    // debug container took api's user. As root, the kernel's ptrace check
    // refuses /proc/1/root: one sentence that says what would work.
    if support::id_range_or_skip("cp as the target's user") {
        assert!(
            stderr.contains("using --profile=baseline")
                && stderr.contains("running as the target's user 65532:65532"),
            "{stderr}"
        );
        let heap = format!("{PAYMENTS}:/var/dump/heap.hprof");
        let as_root = [
            heap.as_str(),
            "as-root.hprof",
            "-c",
            "api",
            "--as-target-user",
            "never",
            "--image",
            "busybox:1.37",
        ];
        let refused = cp_in(&f, dir.path(), &as_root).await;
        let said = text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{said}");
        let last = said.lines().last().unwrap_or_default();
        assert!(
            last.contains("Permission denied")
                && last.contains("--as-target-user")
                && last.contains("--profile=general"),
            "{said}"
        );
        assert!(!dir.path().join("as-root.hprof").exists());
    }
    let local = dir.path().join("heap.hprof");
    assert!(std::fs::metadata(&local).unwrap().len() > 40 << 20);
    let inside = look(
        &f,
        PAYMENTS,
        "api",
        "sha256sum /proc/1/root/var/dump/heap.hprof",
    )
    .await;
    assert!(
        inside.starts_with(&sha256(&local)),
        "same bytes as in the pod: {inside}"
    );
    // Nothing is left beside it but the file.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["heap.hprof"]);

    // A link in the path with an absolute target is followed in the
    // target's root, not in the debug container's (which has no /var/dump).
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Symlink);
    header.set_size(0);
    header.set_mode(0o777);
    builder
        .append_link(&mut header, "dumps", "/var/dump")
        .unwrap();
    let stream = builder.into_inner().unwrap();
    let linked = cp_from_stdin(
        &f,
        &["-", &format!("{PAYMENTS}:/tmp"), "-c", "api"],
        &stream,
    )
    .await;
    assert_eq!(linked.status.code(), Some(0), "{}", text(&linked.stderr));
    let through_link = cp_in(
        &f,
        dir.path(),
        &[
            &format!("{PAYMENTS}:/tmp/dumps/heap.hprof"),
            "linked.hprof",
            "-c",
            "api",
        ],
    )
    .await;
    let said = text(&through_link.stderr);
    assert_eq!(through_link.status.code(), Some(0), "{said}");
    assert!(
        said.contains("/tmp/dumps is /var/dump in the container"),
        "{said}"
    );
    assert_eq!(sha256(&dir.path().join("linked.hprof")), sha256(&local));
    std::fs::remove_file(dir.path().join("linked.hprof")).unwrap();

    // A second copy reuses the debug container: no pile-up.
    let again = cp_in(
        &f,
        dir.path(),
        &[
            &format!("{PAYMENTS}:/etc/payments-api"),
            "config",
            "-c",
            "api",
        ],
    )
    .await;
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("reusing debug container"), "{stderr}");
    let config = std::fs::read_to_string(dir.path().join("config/config.yaml")).unwrap();
    assert!(config.starts_with("service: payments-api"), "{config}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_lands_in_the_distroless_targets_own_root() {
    if !support::namespaces_or_skip("cp upload") {
        return;
    }
    let f = Fixture::new(0).await;
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("fix");
    std::fs::create_dir_all(tree.join("nested")).unwrap();
    std::fs::write(tree.join("flags.json"), "{\"debug\": true}\n").unwrap();
    std::fs::write(tree.join("nested/note.txt"), "uploaded by podbay\n").unwrap();
    std::os::unix::fs::symlink("flags.json", tree.join("current")).unwrap();
    let out = cp_in(
        &f,
        dir.path(),
        &["fix", &format!("{PAYMENTS}:/tmp/"), "-c", "api"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let seen = look(
        &f,
        PAYMENTS,
        "api",
        "cat /proc/1/root/tmp/fix/nested/note.txt; readlink /proc/1/root/tmp/fix/current",
    )
    .await;
    assert_eq!(seen, "uploaded by podbay\nflags.json\n");

    // And back out, whole: the link stays a link inside the copy.
    let back = cp_in(
        &f,
        dir.path(),
        &[&format!("{PAYMENTS}:/tmp/fix"), "back", "-c", "api"],
    )
    .await;
    assert_eq!(back.status.code(), Some(0), "{}", text(&back.stderr));
    let back = dir.path().join("back");
    assert_eq!(
        std::fs::read_to_string(back.join("nested/note.txt")).unwrap(),
        "uploaded by podbay\n"
    );
    assert_eq!(
        std::fs::read_link(back.join("current")).unwrap(),
        Path::new("flags.json")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_with_tar_is_copied_directly_and_streams_go_both_ways() {
    let f = Fixture::new(0).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seed.txt"), "warm the cache\n").unwrap();
    let up = cp_in(
        &f,
        dir.path(),
        &["seed.txt", &format!("{REDIS}:/data/seed.txt")],
    )
    .await;
    let stderr = text(&up.stderr);
    assert_eq!(up.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("debug container"),
        "tar in redis itself: {stderr}"
    );

    // Onto an existing directory (no trailing /), as kubectl: inside it.
    std::fs::write(dir.path().join("inside.txt"), "in /data\n").unwrap();
    let onto = cp_in(&f, dir.path(), &["inside.txt", &format!("{REDIS}:/data")]).await;
    assert_eq!(onto.status.code(), Some(0), "{}", text(&onto.stderr));

    // Out as a tar stream on stdout, listed by a real tar.
    let out = cp_in(&f, dir.path(), &[&format!("{REDIS}:/data"), "-"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut archive = tar::Archive::new(&out.stdout[..]);
    let names: Vec<String> = archive
        .entries()
        .unwrap()
        .map(|e| e.unwrap().path().unwrap().display().to_string())
        .collect();
    for name in ["data/seed.txt", "data/inside.txt"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }

    // In as a tar stream on stdin: unpacked into the directory named.
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(6);
    header.set_mode(0o644);
    header.set_cksum();
    builder
        .append_data(&mut header, "from-stdin.txt", &b"piped\n"[..])
        .unwrap();
    let stream = builder.into_inner().unwrap();
    let piped = cp_from_stdin(&f, &["-", &format!("{REDIS}:/data")], &stream).await;
    assert_eq!(piped.status.code(), Some(0), "{}", text(&piped.stderr));
    let check = cp_in(
        &f,
        dir.path(),
        &[&format!("{REDIS}:/data/from-stdin.txt"), "check.txt"],
    )
    .await;
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("check.txt")).unwrap(),
        "piped\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_looping_containers_core_file_comes_off_its_volume() {
    let f = Fixture::new(0).await;
    let dir = tempfile::tempdir().unwrap();
    let core = format!("{LEDGER}:/var/crash/core.ledger.1");
    let out = cp_in(&f, dir.path(), &[&core, "core"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("container worker is not running (Waiting CrashLoopBackOff")
            && stderr.contains("on its volume crash")
            && stderr.contains("added debug container"),
        "{stderr}"
    );
    let local = std::fs::read(dir.path().join("core")).unwrap();
    assert_eq!(&local[..4], b"\x7fELF");
    assert_eq!(local[16], 4, "ET_CORE");
    assert!(local.len() > 16 << 20, "{} bytes", local.len());

    // A second, independent look at the volume: the same bytes.
    let (namespace, pod) = LEDGER.split_once('/').unwrap();
    let look = f
        .podbay(&[
            pod,
            "-n",
            namespace,
            "--mount",
            "crash:/var/crash",
            "--image",
            "busybox:1.36",
            "--",
            "sha256sum",
            "/var/crash/core.ledger.1",
        ])
        .await;
    assert_eq!(look.status.code(), Some(0), "{}", text(&look.stderr));
    let inside = text(&look.stdout);
    assert_eq!(
        inside.split_whitespace().next(),
        Some(sha256(&dir.path().join("core")).as_str())
    );

    // The next copy reuses the debug container that mounts the volume.
    let again = cp_in(&f, dir.path(), &[&core, "again"]).await;
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("reusing debug container"), "{stderr}");
    assert_eq!(std::fs::read(dir.path().join("again")).unwrap(), local);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failure_is_one_sentence_and_its_exit_code() {
    let f = Fixture::new(0).await;
    let dir = tempfile::tempdir().unwrap();
    let ledger = format!("{LEDGER}:/etc");
    let cases: [(&[&str], i32, &str); 6] = [
        (
            &["shop/redis-0:/no/such/file", "x"],
            1,
            "No such file or directory",
        ),
        (
            &["shop/redis-0:/data", "x", "-c", "nope"],
            65,
            "has no container \"nope\"",
        ),
        (&["shop/redis-9:/data", "x"], 66, "not found"),
        (&["./a", "./b"], 2, "Neither SOURCE nor DESTINATION"),
        (
            &[&ledger, "x"],
            70,
            "is not running (Waiting CrashLoopBackOff",
        ),
        (
            &["shop/redis-0:/data", "no/such/dir/x"],
            73,
            "does not exist",
        ),
    ];
    for (args, code, words) in cases {
        let out = cp_in(&f, dir.path(), args).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        let last = stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("podbay: ") && last.contains(words),
            "{args:?}: {stderr}"
        );
    }
    // Nothing half-made was left in the working directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_256_mib_file_goes_in_and_out_whole_in_little_memory() {
    let f = Fixture::new(0).await;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.bin");
    {
        use std::io::Write as _;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
        let mut rng = fastrand::Rng::with_seed(256);
        let mut chunk = vec![0u8; 1 << 20];
        for _ in 0..256 {
            rng.fill(&mut chunk);
            file.write_all(&chunk).unwrap();
        }
    }
    let mut peaks = Vec::new();
    for args in [
        vec!["big.bin".to_string(), format!("{REDIS}:/data/big.bin")],
        vec![format!("{REDIS}:/data/big.bin"), "back.bin".to_string()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let home = support::tempdir::temp_home("cp");
        let child = support::podbay_command("cp", &f.kubeconfig, &args, home.path())
            .current_dir(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let watch = tokio::spawn(async move {
            let mut peak = 0;
            while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
                if let Some(kib) = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                {
                    peak = peak.max(kib);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            peak
        });
        let out = tokio::time::timeout(Duration::from_secs(180), child.wait_with_output())
            .await
            .expect("256 MiB copied in time")
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        peaks.push(watch.await.unwrap());
    }
    assert_eq!(sha256(&big), sha256(&dir.path().join("back.bin")));
    for peak in peaks {
        assert!(peak > 0 && peak < 100 * 1024, "peak RSS {peak} KiB");
    }
}

/// Runs `command` in redis (exec, as kubectl exec) and waits for it to end.
async fn exec_in_redis(f: &Fixture, command: &str) {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, AttachParams};
    let pods: Api<Pod> = Api::namespaced(support::client(&f.sim, "sim").await, "shop");
    let params = AttachParams::default().container("redis").stderr(true);
    let mut process = pods
        .exec("redis-0", ["sh", "-c", command], &params)
        .await
        .unwrap();
    let status = process.take_status().unwrap().await.unwrap();
    assert_eq!(
        status.status.as_deref(),
        Some("Success"),
        "{command}: {status:?}"
    );
}

/// The staging directories left in `dir`.
fn stages_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".podbay-cp-"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_takes_no_more_than_its_budget_and_a_signal_leaves_no_stage() {
    let f = Fixture::new(0).await;
    // 100 GiB of holes: du says 0 KiB, tar sends 100 GiB of zeros.
    exec_in_redis(&f, "truncate -s 100G /data/endless").await;
    let dir = tempfile::tempdir().unwrap();
    let endless = format!("{REDIS}:/data/endless");

    let bounded = cp_in(&f, dir.path(), &[&endless, "out", "--max-size", "8M"]).await;
    let stderr = text(&bounded.stderr);
    assert_eq!(bounded.status.code(), Some(76), "{stderr}");
    assert!(
        stderr.contains("goes on past 8 MiB, the --max-size given"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    for (signal, code) in [
        (nix::sys::signal::Signal::SIGTERM, 143),
        (nix::sys::signal::Signal::SIGHUP, 129),
    ] {
        let home = support::tempdir::temp_home("cp");
        let child = support::podbay_command("cp", &f.kubeconfig, &[&endless, "out"], home.path())
            .current_dir(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
        // Mid-copy: the stage holds bytes already.
        support::eventually(60, "a stage filling up", || {
            let dir = dir.path().to_path_buf();
            async move {
                let staged: u64 = stages_in(&dir)
                    .iter()
                    .filter_map(|s| std::fs::metadata(dir.join(s).join("endless")).ok())
                    .map(|m| m.len())
                    .sum();
                (staged > 1 << 20).then_some(())
            }
        })
        .await;
        nix::sys::signal::kill(pid, signal).unwrap();
        let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
            .await
            .expect("podbay ends on the signal")
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{signal}: {stderr}");
        assert!(
            stderr.contains("Interrupted; nothing was kept."),
            "{stderr}"
        );
        let left: Vec<String> = stages_in(dir.path())
            .iter()
            .flat_map(|stage| {
                std::fs::read_dir(dir.path().join(stage))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| format!("{stage}/{}", e.file_name().to_string_lossy()))
                    .chain([stage.clone()])
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(left, Vec::<String>::new(), "{signal}: {stderr}");
        assert!(!dir.path().join("out").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_destination_is_written_into_or_refused_never_replaced() {
    use std::io::Read as _;
    use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
    let f = Fixture::new(0).await;
    exec_in_redis(&f, "printf 'seed\\n' > /data/seed.txt").await;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let seed = format!("{REDIS}:/data/seed.txt");

    let nobody = cp_in(&f, dir.path(), &[&seed, "fifo"]).await;
    let stderr = text(&nobody.stderr);
    assert_eq!(nobody.status.code(), Some(73), "{stderr}");
    assert!(
        stderr.contains("it is a FIFO that nobody reads; start its reader first"),
        "{stderr}"
    );

    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let read = cp_in(&f, dir.path(), &[&seed, "fifo"]).await;
    assert_eq!(read.status.code(), Some(0), "{}", text(&read.stderr));
    let mut got = String::new();
    reader.read_to_string(&mut got).unwrap();
    assert_eq!(got, "seed\n");

    let whole_dir = cp_in(&f, dir.path(), &[&format!("{REDIS}:/data"), "fifo"]).await;
    let stderr = text(&whole_dir.stderr);
    assert_eq!(whole_dir.status.code(), Some(73), "{stderr}");
    assert!(
        stderr.contains("it is a FIFO, and podbay writes only a file into one"),
        "{stderr}"
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "nothing but the FIFO, no stage"
    );
}

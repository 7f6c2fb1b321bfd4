//! `podbay capture` (the real binary) against the simulator, whose
//! netshoot image runs the host's tcpdump inside the pod's network
//! namespace: requests sent through a forward are in the file (judged by
//! tcpdump itself), several pods make one pcapng with an interface each,
//! and nothing is left running; refusals come before anything is made.

use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use podbay::cluster::tunnel::{self, Connect};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};

use crate::support::{self, DebugFixture as Fixture, stderr};

/// A running `podbay capture`, its stderr read line by line.
struct Capture {
    child: tokio::process::Child,
    said: tokio::sync::mpsc::UnboundedReceiver<String>,
    lines: Vec<String>,
    _home: support::tempdir::TempHome,
}

impl Capture {
    fn start(f: &Fixture, args: &[&str], stdout: Stdio) -> Capture {
        let home = support::tempdir::temp_home("capture");
        let mut child = support::podbay_command("capture", &f.kubeconfig, args, home.path())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .expect("podbay runs");
        let (tx, said) = tokio::sync::mpsc::unbounded_channel();
        let stderr = child.stderr.take().unwrap();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = tx.send(line);
            }
        });
        Capture {
            child,
            said,
            lines: Vec::new(),
            _home: home,
        }
    }

    /// Waits for the line that says packets are being captured.
    async fn capturing(&mut self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while !self.lines.iter().any(|l| l.contains("capturing")) {
            match tokio::time::timeout_at(deadline, self.said.recv()).await {
                Ok(Some(line)) => self.lines.push(line),
                _ => panic!("podbay never started capturing: {:#?}", self.lines),
            }
        }
    }

    /// Its exit code and everything it said on stderr.
    async fn ended(mut self) -> (Option<i32>, String) {
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("the capture ends by itself")
            .unwrap();
        while let Some(line) = self.said.recv().await {
            self.lines.push(line);
        }
        (status.code(), self.lines.join("\n"))
    }
}

/// `request` to `port` of the pod, through a forward's session (which
/// enters the pod through its loopback, as on a node), then the client's
/// end; the answer.
async fn exchange(
    client: &kube::Client,
    (namespace, pod): (&str, &str),
    port: u16,
    request: &[u8],
) -> String {
    let Connect::Open(tunnel) = tunnel::connect(client, namespace, pod).await.unwrap() else {
        panic!("the simulator serves forwards");
    };
    let mut stream = tunnel.open(port).await.expect("a connection");
    stream.io.write_all(request).await.unwrap();
    stream.io.shutdown().await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), stream.io.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// `GET PATH` to `port` of the pod; the answer.
async fn get(client: &kube::Client, namespace: &str, pod: &str, port: u16, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    exchange(client, (namespace, pod), port, request.as_bytes()).await
}

/// redis-0 asked PING.
async fn ping_redis(client: &kube::Client) {
    let answer = exchange(client, ("shop", "redis-0"), 6379, b"PING\r\n").await;
    assert_eq!(answer, "+PONG\r\n");
}

/// The pod has no debug container: nothing was added to it.
async fn nothing_added(pods: &Api<Pod>, pod: &str) {
    let found = pods.get(pod).await.unwrap();
    assert!(
        found.spec.unwrap().ephemeral_containers.is_none(),
        "nothing was added"
    );
}

/// What tcpdump reads of `file` (`-` with `input`), payloads in ASCII.
fn tcpdump_reads(file: &str) -> String {
    let out = std::process::Command::new("tcpdump")
        .args(["-nn", "-A", "-r", file])
        .output()
        .expect("tcpdump is installed where the simulator runs captures (.ci/run installs it)");
    assert!(
        out.status.success(),
        "tcpdump cannot read {file}: {}",
        stderr(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The pod's debug containers that are running.
async fn running_debuggers(pods: &Api<Pod>, pod: &str) -> Vec<String> {
    let pod = pods.get(pod).await.unwrap();
    pod.status
        .and_then(|s| s.ephemeral_container_statuses)
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.state.as_ref().is_some_and(|s| s.running.is_some()))
        .map(|s| s.name)
        .collect()
}

async fn payments_pod(client: &kube::Client) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "payments");
    let list = pods.list(&Default::default()).await.unwrap();
    list.items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .find(|n| n.starts_with("payments-api"))
        .expect("the demo has payments-api pods")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_through_a_forward_are_in_the_file_and_nothing_is_left_running() {
    if !support::namespaces_or_skip("a capture runs in a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let client = support::client(&f.sim, "sim").await;
    let pod = payments_pod(&client).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.pcap");
    let file = file.to_str().unwrap();
    // Long enough for the answer on a loaded 2-core machine (it came after
    // 4 s once, beside a release build).
    let mut capture = Capture::start(
        &f,
        &[
            "-n",
            "payments",
            &pod,
            "-f",
            "tcp port 8080",
            "--duration",
            "8s",
            "-w",
            file,
        ],
        Stdio::null(),
    );
    capture.capturing().await;
    let answer = get(&client, "payments", &pod, 8080, "/capture-marker-42").await;
    assert!(answer.starts_with("HTTP/1.1"), "{answer}");
    let (code, said) = capture.ended().await;
    assert_eq!(code, Some(0), "{said}");
    // payments enforces baseline: the runtime's default NET_RAW, no added one.
    assert!(!said.contains("netadmin"), "{said}");
    let read = tcpdump_reads(file);
    assert!(
        read.contains("GET /capture-marker-42"),
        "the request's bytes: {read}"
    );
    assert!(
        read.contains("Server: payments-api"),
        "the answer's bytes: {read}\npodbay said: {said}"
    );
    assert!(
        said.contains("packets (") && said.contains("dropped by the kernel"),
        "{said}"
    );
    assert!(
        said.contains("has ended"),
        "the debug container ends with the capture: {said}"
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), "payments");
    assert_eq!(running_debuggers(&pods, &pod).await, Vec::<String>::new());
    let mode = std::fs::metadata(file).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600,
        "a capture holds the pod's traffic: owner-only"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_to_tcpdump_and_stopped_by_its_count() {
    if !support::namespaces_or_skip("a capture runs in a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let client = support::client(&f.sim, "sim").await;
    let mut capture = Capture::start(
        &f,
        &[
            "-n",
            "shop",
            "redis-0",
            "-f",
            "tcp port 6379",
            "--count",
            "4",
            "-w",
            "-",
        ],
        Stdio::piped(),
    );
    let mut stdout = capture.child.stdout.take().unwrap();
    let reader = tokio::spawn(async move {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).await.unwrap();
        bytes
    });
    capture.capturing().await;
    // Until the count is reached (one exchange is some ten packets).
    let mut sent = 0;
    while capture.child.try_wait().unwrap().is_none() && sent < 20 {
        ping_redis(&client).await;
        sent += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (code, said) = capture.ended().await;
    assert_eq!(code, Some(0), "{said}");
    let bytes = reader.await.unwrap();
    assert_eq!(
        &bytes[..4],
        [0xd4, 0xc3, 0xb2, 0xa1],
        "a pcap stream on stdout"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("piped.pcap");
    std::fs::write(&file, &bytes).unwrap();
    let read = tcpdump_reads(file.to_str().unwrap());
    assert_eq!(
        read.lines().filter(|l| l.contains(" IP ")).count(),
        4,
        "{read}"
    );
    assert!(said.contains("4 packets ("), "{said}");
}

/// The pcapng file's interface names and each one's packet count.
fn pcapng_interfaces(bytes: &[u8]) -> Vec<(String, usize)> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let mut interfaces: Vec<(String, usize)> = Vec::new();
    let mut at = 0;
    while at + 12 <= bytes.len() {
        let (kind, length) = (word(at), word(at + 4) as usize);
        assert!(
            length >= 12 && at + length <= bytes.len(),
            "a whole block at {at}"
        );
        assert_eq!(word(at + length - 4) as usize, length, "its length twice");
        match kind {
            1 => {
                // Options after link type, reserved and snaplen.
                let mut option = at + 16;
                let mut name = String::new();
                while option + 4 <= at + length - 4 {
                    let code = u16::from_le_bytes([bytes[option], bytes[option + 1]]);
                    let len = u16::from_le_bytes([bytes[option + 2], bytes[option + 3]]) as usize;
                    if code == 0 {
                        break;
                    }
                    if code == 2 {
                        name = String::from_utf8_lossy(&bytes[option + 4..option + 4 + len]).into();
                    }
                    option += 4 + len.next_multiple_of(4);
                }
                interfaces.push((name, 0));
            }
            6 => interfaces[word(at + 8) as usize].1 += 1,
            _ => {}
        }
        at += length;
    }
    assert_eq!(at, bytes.len(), "nothing after the last block");
    interfaces
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_pods_make_one_pcapng_with_an_interface_each() {
    if !support::namespaces_or_skip("a capture runs in a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let client = support::client(&f.sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "shop");
    let storefronts: Vec<String> = pods
        .list(&kube::api::ListParams::default().labels("app.kubernetes.io/name=storefront"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert_eq!(storefronts.len(), 3);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("three.pcapng");
    let file = file.to_str().unwrap();
    let mut capture = Capture::start(
        &f,
        &[
            "-n",
            "shop",
            "-l",
            "app.kubernetes.io/name=storefront",
            "-f",
            "tcp port 8080",
            "--duration",
            "10s",
            "-w",
            file,
        ],
        Stdio::null(),
    );
    capture.capturing().await;
    for pod in &storefronts {
        let answer = get(&client, "shop", pod, 8080, &format!("/to-{pod}")).await;
        assert!(answer.starts_with("HTTP/1.1"), "{answer}");
    }
    let (code, said) = capture.ended().await;
    assert_eq!(code, Some(0), "{said}");
    let interfaces = pcapng_interfaces(&std::fs::read(file).unwrap());
    let mut names: Vec<&str> = interfaces.iter().map(|(n, _)| n.as_str()).collect();
    names.sort();
    let expected: Vec<String> = storefronts.iter().map(|p| format!("shop/{p}")).collect();
    assert_eq!(
        names,
        expected.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert!(
        interfaces.iter().all(|(_, packets)| *packets > 0),
        "{interfaces:?}"
    );
    let read = tcpdump_reads(file);
    for pod in &storefronts {
        assert!(
            read.contains(&format!("GET /to-{pod}")),
            "{pod}'s request: {read}"
        );
    }
    for pod in &storefronts {
        assert_eq!(
            running_debuggers(&pods, pod).await,
            Vec::<String>::new(),
            "{said}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restricted_is_said_before_anything_is_created() {
    let f = Fixture::new(0).await;
    let client = support::client(&f.sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "monitoring");
    let pod = pods.list(&Default::default()).await.unwrap().items[0]
        .metadata
        .name
        .clone()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("never.pcap");
    let home = support::tempdir::temp_home("capture");
    let out = support::output_within(
        60,
        "a refusal",
        support::podbay_command(
            "capture",
            &f.kubeconfig,
            &["-n", "monitoring", &pod, "-w", file.to_str().unwrap()],
            home.path(),
        )
        .stderr(Stdio::piped()),
    )
    .await;
    support::exits(
        &out,
        77,
        "monitoring enforces Pod Security \"restricted\", where no container may capture packets",
    );
    assert_eq!(
        stderr(&out).lines().count(),
        1,
        "one sentence: {}",
        stderr(&out)
    );
    assert!(!file.exists(), "no empty file left");
    nothing_added(&pods, &pod).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_or_a_planted_link_is_never_written_through() {
    let f = Fixture::new(0).await;
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept.pcap");
    std::fs::write(&kept, "yesterday's capture").unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, "not podbay's").unwrap();
    let link = dir.path().join("link.pcap");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let home = support::tempdir::temp_home("capture");
    for path in [&kept, &link] {
        let out = support::output_within(
            60,
            "a refusal",
            support::podbay_command(
                "capture",
                &f.kubeconfig,
                &["-n", "shop", "redis-0", "-w", path.to_str().unwrap()],
                home.path(),
            )
            .stderr(Stdio::piped()),
        )
        .await;
        support::exits(&out, 73, "Cannot write the capture to");
    }
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "yesterday's capture"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "not podbay's");
    let client = support::client(&f.sim, "sim").await;
    let pods: Api<Pod> = Api::namespaced(client, "shop");
    nothing_added(&pods, "redis-0").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_ends_it_with_a_whole_file_and_tcpdump_gone() {
    if !support::namespaces_or_skip("a capture runs in a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let client = support::client(&f.sim, "sim").await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stopped.pcap");
    let file = file.to_str().unwrap();
    let mut capture = Capture::start(&f, &["-n", "shop", "redis-0", "-w", file], Stdio::null());
    capture.capturing().await;
    ping_redis(&client).await;
    let pid = nix::unistd::Pid::from_raw(capture.child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let (code, said) = capture.ended().await;
    assert_eq!(code, Some(0), "stopped is how a capture ends: {said}");
    assert!(
        said.contains("tcpdump captured"),
        "tcpdump said its counts: {said}"
    );
    let read = tcpdump_reads(file);
    assert!(read.contains("PING"), "{read}\n{said}");
    let pods: Api<Pod> = Api::namespaced(client, "shop");
    assert_eq!(
        running_debuggers(&pods, "redis-0").await,
        Vec::<String>::new(),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p_in_the_tui_captures_a_pod_and_x_in_captures_stops_it() {
    if !support::namespaces_or_skip("a capture runs in a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let client = support::client(&f.sim, "sim").await;
    let dir = tempfile::tempdir().unwrap();
    let settings = format!("[files]\ndownload_dir = {:?}\n", dir.path());
    let mut screen = support::PodbayScreen::spawn_with_config(
        &support::args(&f.kubeconfig, &["-n", "shop"]),
        80,
        24,
        &settings,
    );
    screen
        .wait_for("the list", |t| {
            t.contains("redis-0") && t.contains("● live")
        })
        .await;
    screen.keys("/redis-0\r").await;
    screen.keys("P").await;
    screen
        .wait_for("the capture form", |t| {
            t.contains("Capture the packets of shop/redis-0") && t.contains("redis-0.pcap")
        })
        .await;
    screen.keys("tcp port 6379\r").await;
    screen.keys(":captures\r").await;
    screen
        .wait_for_within(60, "the capture running", |t| t.contains("capturing"))
        .await;
    ping_redis(&client).await;
    screen
        .wait_for("its packets counted live", |t| {
            t.lines().any(|l| {
                let cells: Vec<&str> = l.trim_matches(['│', ' ']).split_whitespace().collect();
                cells.first() == Some(&"capturing") && cells.get(1).is_some_and(|n| *n != "0")
            })
        })
        .await;
    screen.keys("x").await;
    screen
        .wait_for_within(30, "the capture ended, its debug container too", |t| {
            t.contains("ended") && t.contains("has ended") && t.contains("tcpdump captured")
        })
        .await;
    let file = dir.path().join("redis-0.pcap");
    let read = tcpdump_reads(file.to_str().unwrap());
    assert!(read.contains("PING"), "{read}");
    let pods: Api<Pod> = Api::namespaced(client, "shop");
    assert_eq!(
        running_debuggers(&pods, "redis-0").await,
        Vec::<String>::new()
    );
    // Nothing runs on: q quits without a question.
    screen.keys("q").await;
    support::exits_cleanly(&mut screen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_debugger_without_net_raw_is_not_reused_for_a_capture() {
    if !support::namespaces_or_skip("a capture runs in a pod's network namespace") {
        return;
    }
    let f = Fixture::new(0).await;
    let client = support::client(&f.sim, "sim").await;
    let pod = payments_pod(&client).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "payments");
    // The capture's image, running, but with every capability dropped.
    let blind = serde_json::json!({"spec": {"ephemeralContainers": [{
        "name": "debugger-blind", "image": "nicolaka/netshoot:v0.13",
        "command": ["sleep", "300"],
        "securityContext": {"capabilities": {"drop": ["ALL"]}},
    }]}});
    pods.patch_subresource(
        "ephemeralcontainers",
        &pod,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Strategic(blind),
    )
    .await
    .expect("the debug container is added");
    support::eventually(30, "debugger-blind running", || {
        let pods = pods.clone();
        let pod = pod.clone();
        async move {
            running_debuggers(&pods, &pod)
                .await
                .contains(&"debugger-blind".to_string())
                .then_some(())
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.pcap");
    let mut capture = Capture::start(
        &f,
        &[
            "-n",
            "payments",
            &pod,
            "--duration",
            "2s",
            "-w",
            file.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    capture.capturing().await;
    let (code, said) = capture.ended().await;
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("debug container debugger-blind runs without NET_RAW or not as root"),
        "{said}"
    );
    assert!(said.contains("adding debug container"), "{said}");
    assert!(
        !said.contains("capturing through debug container debugger-blind"),
        "{said}"
    );
}

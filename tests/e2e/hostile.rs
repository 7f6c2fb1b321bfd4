//! podbay against API servers that lie, stall, flood, throttle and
//! redirect (`support::hostile`): the real binary, the TUI in a PTY and
//! `podbay debug` piped, read at the byte, the request log, the process's
//! peak memory and its exit status.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use support::hostile::{self, Hostile, Reply, Request};
use support::{PodbayScreen, args, podbay_debug};

/// What a hostile message tries to do to the terminal: write the
/// clipboard, retitle the window, clear the screen, with 8-bit C1 controls.
const PAYLOAD: &str = "\u{1b}]52;c;SGVsbG8=\u{7}\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{9d}0;x";

/// Whether `bytes` hold any of the payload's sequences, live.
fn holds_live_payload(bytes: &[u8]) -> bool {
    let live = [
        &b"\x1b]52;"[..],
        b"\x1b]0;pwned",
        b"\xc2\x9b",
        b"\xc2\x9d",
        b"\x9b31m",
    ];
    live.iter()
        .any(|seq| bytes.windows(seq.len()).any(|w| w == *seq))
}

/// Peak resident memory of a process, in MB.
fn peak_rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

async fn exit_code(screen: &mut PodbayScreen, within: Duration) -> Option<i32> {
    let status = tokio::time::timeout(within, screen.child.wait())
        .await
        .expect("podbay exits")
        .expect("exit status");
    screen.output_ended().await;
    status.code()
}

/// A server whose pod list answers, and whose other answers `rest` decides.
fn with_pods(
    names: &'static [&'static str],
    rest: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    move |r: &Request| {
        if r.path == "/version" {
            hostile::version()
        } else if r.is_list_of("pods") && !r.is_watch() && !r.query.contains("fieldSelector") {
            hostile::list("PodList", names.iter().map(|n| hostile::pod(n)).collect())
        } else {
            rest(r)
        }
    }
}

fn watch_stalls(r: &Request) -> Reply {
    if r.is_watch() {
        Reply::raw(200, "application/json", Vec::new()).then_stall()
    } else if r.is_list_of("events") {
        hostile::list("EventList", vec![])
    } else {
        Reply::failure(404, "NotFound", "not here")
    }
}

// §1: server text is shown, never run.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_startup_refusal_quoting_escape_sequences_is_printed_escaped() {
    let server =
        Hostile::start(|_| Reply::failure(403, "Forbidden", &format!("forbidden: {PAYLOAD}")))
            .await;
    let config = server.kubeconfig("403");
    let mut screen = PodbayScreen::spawn(&args(&config, &[]), 80, 24);
    assert_eq!(
        exit_code(&mut screen, Duration::from_secs(20)).await,
        Some(1)
    );
    let written = screen.written();
    assert!(
        !holds_live_payload(&written),
        "{:?}",
        String::from_utf8_lossy(&written)
    );
    let text = String::from_utf8_lossy(&written);
    assert!(
        text.contains("forbidden: \\e]52;c;SGVsbG8=\\x07\\e]0;pwned"),
        "the sentence shows what was sent: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn podbay_debug_quotes_the_server_escaped_on_stderr() {
    let server = Hostile::start(|r| match r.path.as_str() {
        "/version" => hostile::version(),
        _ => Reply::failure(403, "Forbidden", &format!("no: {PAYLOAD}")),
    })
    .await;
    let config = server.kubeconfig("debug-403");
    let out = podbay_debug(&config, &["web-1", "--image", "busybox"]).await;
    assert_eq!(out.status.code(), Some(77), "{out:?}");
    assert!(!holds_live_payload(&out.stderr), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no: \\e]52;c;SGVsbG8="),
        "{out:?}"
    );
}

/// A user who may add the debug container but not watch the pod hears why
/// at once, instead of waiting out the timeout for a status that cannot come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn podbay_debug_says_at_once_when_it_may_not_watch_the_pod() {
    let server = Hostile::start(|r: &Request| {
        let pod = "/api/v1/namespaces/shop/pods/web-1";
        if r.path == "/version" {
            hostile::version()
        } else if (r.method == "GET" && r.path == pod)
            || (r.method == "PATCH" && r.path == format!("{pod}/ephemeralcontainers"))
        {
            // The pod, and the patch adding the debug container, go through.
            Reply::json(200, &hostile::pod("web-1"))
        } else if r.is_list_of("pods") {
            Reply::failure(
                403,
                "Forbidden",
                "pods is forbidden: User \"someone\" cannot list resource \"pods\" in API group \"\" in the namespace \"shop\"",
            )
        } else {
            Reply::failure(404, "NotFound", "not here")
        }
    })
    .await;
    let config = server.kubeconfig("debug-nowatch");
    let started = std::time::Instant::now();
    let out = podbay_debug(
        &config,
        &["web-1", "--image", "busybox", "--timeout", "60s"],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(77), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "not the 60 s timeout: {:?}",
        started.elapsed()
    );
    assert!(
        stderr.contains("You may not list pods in namespace shop"),
        "{stderr}"
    );
    assert!(
        stderr.contains("was added, but podbay cannot see it start"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bidi_overrides_and_escapes_in_cells_keep_the_columns_in_place() {
    const EVIL: &str = "evil\u{202e}\u{202e}\u{202e}\u{202e}\u{202e}\u{202e}\u{202e}\u{202e}\u{202e}\u{202e}\u{200b}x";
    let server = Hostile::start(move |r: &Request| {
        if r.path == "/version" {
            hostile::version()
        } else if r.is_list_of("pods") && !r.is_watch() {
            let mut evil = hostile::pod(EVIL);
            evil["status"]["reason"] = json!(format!("Bad{PAYLOAD}"));
            hostile::list("PodList", vec![hostile::pod("web-1"), evil])
        } else {
            watch_stalls(r)
        }
    })
    .await;
    let config = server.kubeconfig("cells");
    for (cols, rows) in [(80, 24), (250, 60)] {
        let screen = PodbayScreen::spawn(&args(&config, &[]), cols, rows);
        screen
            .wait_for("both pods", |t| t.contains("web-1") && t.contains("evil"))
            .await;
        let text = screen.text();
        let Some(header) = text.lines().find(|l| l.contains("RESTARTS")) else {
            panic!("a RESTARTS column at {cols}×{rows}:\n{text}");
        };
        let column = header
            .find("RESTARTS")
            .map(|b| header[..b].chars().count())
            .unwrap();
        for row in support::table_rows(&text) {
            let cell: String = row.chars().skip(column).take(1).collect();
            assert!(
                cell.chars().all(|c| c.is_ascii_digit()),
                "RESTARTS stays under its title at {cols}×{rows}: {row:?}\n{text}"
            );
        }
        assert!(
            text.contains("evil\\u{202"),
            "the override is shown, not obeyed: {text}"
        );
        assert!(!holds_live_payload(&screen.written()));
        screen.quit().await;
    }
}

// §2: watches that end at once are retried with back-off.

async fn watch_requests_in_ten_seconds(tag: &str, watch: fn() -> Reply) -> (usize, String) {
    let server = Hostile::start(with_pods(&["web-1"], move |r: &Request| {
        if r.is_watch() {
            watch()
        } else {
            watch_stalls(r)
        }
    }))
    .await;
    let config = server.kubeconfig(tag);
    let screen = PodbayScreen::spawn(&args(&config, &[]), 120, 30);
    screen.wait_for("the list", |t| t.contains("web-1")).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let watches = server.count(|r| r.is_list_of("pods") && r.is_watch());
    eprintln!("{tag}: {watches} watch requests in 10 s");
    let text = screen.text();
    screen.quit().await;
    (watches, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_answered_with_nothing_backs_off() {
    let (watches, text) =
        watch_requests_in_ten_seconds("empty", || Reply::raw(200, "application/json", Vec::new()))
            .await;
    // Back-off from 0.8 s doubling: four or five tries in ten seconds
    // (1 868 before).
    assert!(watches <= 6, "{watches} watches in 10 s");
    assert!(
        text.contains("ended the watch at once") && text.contains("reconnecting"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_streaming_garbage_backs_off() {
    let (watches, text) = watch_requests_in_ten_seconds("garbage", || {
        Reply::raw(
            200,
            "application/json",
            b"<html>not json</html>\n".repeat(50),
        )
    })
    .await;
    // Nine before: each garbage line reset the back-off.
    assert!(watches <= 6, "{watches} watches in 10 s");
    assert!(text.contains("reconnecting"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_whose_requests_never_answer_says_so_instead_of_loading_forever() {
    let server = Hostile::start(with_pods(&["web-1"], |r: &Request| {
        if r.is_watch() {
            Reply::raw(200, "application/json", Vec::new()).then_stall()
        } else {
            // The pod's own list (by name) and its events: never answered.
            Reply::hang()
        }
    }))
    .await;
    let config = server.kubeconfig("stall");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 120, 30);
    screen.wait_for("the list", |t| t.contains("web-1")).await;
    screen.keys("\r").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(45);
    loop {
        let text = screen.text();
        if text.contains("no answer within 30 s") {
            assert!(!text.contains("Cannot reach"), "it was reached: {text}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the pod view says the server did not answer: {text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    screen.quit().await;
}

// §3: memory is bounded whatever the server sends.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_201_mb_watch_line_is_dropped_at_16_mib_and_memory_stays_bounded() {
    let server = Hostile::start(with_pods(&["web-1"], |r: &Request| {
        if r.is_watch() {
            Reply::flood(200, vec![b'x'; 1 << 20], 201)
        } else {
            watch_stalls(r)
        }
    }))
    .await;
    let config = server.kubeconfig("flood");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 160, 30);
    screen
        .wait_for("the sentence", |t| t.contains("larger than 16 MiB"))
        .await;
    let peak = peak_rss_mb(screen.child.id().unwrap());
    eprintln!("peak RSS with a 201 MB watch line: {peak:.1} MB");
    assert!(peak > 1.0 && peak < 150.0, "peak RSS {peak:.1} MB");
    screen.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_list_is_asked_again_in_smaller_pages_then_refused_within_bounds() {
    let server = Hostile::start(|r: &Request| {
        if r.path == "/version" {
            hostile::version()
        } else if r.is_list_of("pods") && !r.is_watch() {
            let item = format!("{},", hostile::pod("web-1")).into_bytes();
            let times = (100 << 20) / item.len();
            Reply::flood(200, item, times)
        } else {
            watch_stalls(r)
        }
    })
    .await;
    let config = server.kubeconfig("biglist");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 160, 30);
    screen
        .wait_for("the sentence", |t| t.contains("larger than 16 MiB"))
        .await;
    let peak = peak_rss_mb(screen.child.id().unwrap());
    eprintln!("peak RSS with a 100 MB list: {peak:.1} MB");
    assert!(peak > 1.0 && peak < 250.0, "peak RSS {peak:.1} MB");
    let pages: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.contains("/pods?") && !r.contains("watch"))
        .collect();
    // The first page is small (100), then smaller again (20).
    for limit in ["limit=100", "limit=20"] {
        assert!(
            pages.iter().any(|p| p.contains(limit)),
            "asked with {limit}: {pages:?}"
        );
    }
    screen.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_limit_is_still_listed_in_full() {
    let names: &'static [&'static str] = Box::leak(
        (0..3000)
            .map(|i| &*Box::leak(format!("web-{i:04}").into_boxed_str()))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let server = Hostile::start(with_pods(names, watch_stalls)).await;
    let config = server.kubeconfig("nolimit");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 120, 30);
    screen
        .wait_for("every pod", |t| {
            t.contains("3000 pods") && t.contains("● live")
        })
        .await;
    screen.quit().await;
}

// §6: `podbay debug` and the end of a stream.

/// A pod that gains debug container `dbg` (running) once patched, whose
/// attach stream sends `messages`.
async fn debuggable(messages: Vec<Vec<u8>>) -> Hostile {
    debuggable_but(messages, |_, _| None).await
}

/// [`debuggable`], but a request `instead` answers (given the request and
/// whether the attach was asked for yet) is answered so.
async fn debuggable_but(
    messages: Vec<Vec<u8>>,
    instead: impl Fn(&Request, bool) -> Option<Reply> + Send + Sync + 'static,
) -> Hostile {
    let patched = Arc::new(AtomicBool::new(false));
    let attached = Arc::new(AtomicBool::new(false));
    let messages = Arc::new(messages);
    Hostile::start(move |r: &Request| {
        if let Some(reply) = instead(r, attached.load(Ordering::SeqCst)) {
            return reply;
        }
        let mut pod = hostile::pod("web-1");
        if r.method == "PATCH" {
            patched.store(true, Ordering::SeqCst);
        }
        if patched.load(Ordering::SeqCst) {
            pod["spec"]["ephemeralContainers"] =
                json!([{"name": "dbg", "image": "busybox", "targetContainerName": "app"}]);
            pod["status"]["ephemeralContainerStatuses"] = json!([{"name": "dbg", "ready": false,
                "restartCount": 0, "image": "busybox", "imageID": "",
                "state": {"running": {"startedAt": "2026-11-01T00:00:00Z"}}}]);
        }
        match r.path.as_str() {
            "/version" => hostile::version(),
            p if p.ends_with("/attach") => {
                attached.store(true, Ordering::SeqCst);
                Reply::websocket(messages.to_vec())
            }
            p if p.ends_with("/log") => Reply::raw(200, "text/plain", Vec::new()),
            p if p.ends_with("/pods/web-1") || p.ends_with("/ephemeralcontainers") => {
                Reply::json(200, &pod)
            }
            _ if r.is_watch() => Reply::raw(200, "application/json", Vec::new()).then_stall(),
            _ if r.is_list_of("pods") => hostile::list("PodList", vec![pod]),
            _ => Reply::failure(404, "NotFound", "not here"),
        }
    })
    .await
}

fn channel(channel: u8, payload: &[u8]) -> Vec<u8> {
    let mut message = vec![channel];
    message.extend_from_slice(payload);
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_status_with_an_exit_code_is_podbay_debugs_exit_code() {
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "command terminated with non-zero exit code", "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": "42"}]}});
    let server = debuggable(vec![
        channel(1, b"partial output\n"),
        channel(3, status.to_string().as_bytes()),
    ])
    .await;
    let config = server.kubeconfig("exit42");
    let out = podbay_debug(&config, &["web-1", "--image", "busybox", "--name", "dbg"]).await;
    assert_eq!(out.status.code(), Some(42), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("partial output"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_without_a_status_while_the_container_runs_is_exit_75() {
    let server = debuggable(vec![channel(1, b"working\n")]).await;
    let config = server.kubeconfig("cut");
    let out = podbay_debug(&config, &["web-1", "--image", "busybox", "--name", "dbg"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    assert!(
        stderr.contains("was cut") && stderr.contains("kubectl attach -it web-1 -c dbg -n shop"),
        "{stderr}"
    );
}

// §7: sentences that say what happened.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttling_server_is_named_with_its_wait_at_once() {
    let server = Hostile::start(|_| {
        Reply::json(
            429,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Too many requests, please try again later.", "reason": "TooManyRequests",
                "details": {"retryAfterSeconds": 120}, "code": 429}),
        )
        .header("Retry-After", "120")
    })
    .await;
    let config = server.kubeconfig("429");
    let started = std::time::Instant::now();
    let mut screen = PodbayScreen::spawn(&args(&config, &[]), 120, 24);
    assert_eq!(
        exit_code(&mut screen, Duration::from_secs(20)).await,
        Some(1)
    );
    let text = String::from_utf8_lossy(&screen.written()).into_owned();
    assert!(
        text.contains("throttling requests (429 Too Many Requests) and asks to wait 120 s"),
        "{text}"
    );
    assert!(!text.contains("network or VPN") && !text.contains("keeps retrying"));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_named_with_its_location() {
    let server = Hostile::start(|_| {
        Reply::raw(302, "text/html", b"<a href=\"/login\">Found</a>".to_vec())
            .header("Location", "https://sso.example.com/login")
    })
    .await;
    let config = server.kubeconfig("302");
    let mut screen = PodbayScreen::spawn(&args(&config, &[]), 200, 24);
    assert_eq!(
        exit_code(&mut screen, Duration::from_secs(20)).await,
        Some(1)
    );
    let text = String::from_utf8_lossy(&screen.written()).into_owned();
    assert!(
        text.contains("redirected the request (302) to https://sso.example.com/login")
            && !text.contains("EOF while parsing"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_refused_at_startup_does_not_promise_retries() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = Hostile::start(|_| hostile::version()).await;
    let config = server.kubeconfig("refused");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace(&server.addr.port().to_string(), &port.to_string());
    std::fs::write(&config, text).unwrap();
    let mut screen = PodbayScreen::spawn(&args(&config, &[]), 200, 24);
    assert_eq!(
        exit_code(&mut screen, Duration::from_secs(20)).await,
        Some(1)
    );
    let text = String::from_utf8_lossy(&screen.written()).into_owned();
    assert!(text.contains("Cannot reach the API server"), "{text}");
    assert!(!text.contains("keeps retrying"), "{text}");
}

// §4: unchecked config values.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keepalive_past_the_clock_is_refused_with_file_line_and_range() {
    let server = Hostile::start(with_pods(&["web-1"], watch_stalls)).await;
    let config = server.kubeconfig("keepalive");
    let mut screen = PodbayScreen::spawn_with_config(
        &args(&config, &[]),
        200,
        24,
        "[terminal]\nkeepalive = 18446744073709551615\n",
    );
    assert_eq!(
        exit_code(&mut screen, Duration::from_secs(20)).await,
        Some(1)
    );
    let text = String::from_utf8_lossy(&screen.written()).into_owned();
    assert!(
        text.contains("config.toml, line 2: terminal.keepalive = 18446744073709551615 is out of range: 0 to 3600 seconds"),
        "{text}"
    );
}

// §5: the simulator's files and connections.

/// Starts `podbay sim` with `extra` and reads its output up to the `try:`
/// line; returns the process and the kubeconfig path it printed.
async fn podbay_sim(extra: &[&str]) -> (tokio::process::Child, std::path::PathBuf) {
    use tokio::io::AsyncBufReadExt;
    let mut sim = tokio::process::Command::new(env!("CARGO_BIN_EXE_podbay"))
        .args(["sim", "--no-namespaces"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("podbay sim starts");
    let mut lines = tokio::io::BufReader::new(sim.stdout.take().expect("stdout")).lines();
    let mut path = None;
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await
    {
        if let Some(p) = line.strip_prefix("kubeconfig: ") {
            path = Some(std::path::PathBuf::from(p));
        }
        if line.starts_with("try:") {
            break;
        }
    }
    (sim, path.expect("the kubeconfig line"))
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .expect("exists")
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulators_kubeconfig_is_private_and_its_scratch_directory_goes_with_it() {
    use std::os::unix::fs::PermissionsExt as _;
    // A file already there, readable by all, keeps no permission it had.
    let planted =
        std::env::temp_dir().join(format!("podbay-planted-{}.kubeconfig", std::process::id()));
    std::fs::write(&planted, "old").unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (mut sim, path) = podbay_sim(&["--kubeconfig-out", planted.to_str().unwrap()]).await;
    assert_eq!(path, planted);
    assert_eq!(mode(&planted), 0o600, "the tokens are the owner's alone");
    let _ = sim.kill().await;
    let _ = std::fs::remove_file(&planted);

    // By default it lives in the private scratch directory, which a
    // SIGTERM removes.
    let (mut sim, path) = podbay_sim(&[]).await;
    let scratch = path.parent().unwrap().to_path_buf();
    let name = scratch.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("podbay-sim-") && name.len() > "podbay-sim-".len() + 16,
        "an unguessable name: {name}"
    );
    assert_eq!((mode(&scratch), mode(&path)), (0o700, 0o600));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(sim.id().unwrap() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), sim.wait())
        .await
        .expect("exits on SIGTERM")
        .unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(!scratch.exists(), "{} removed on exit", scratch.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_closes_connections_that_send_no_request_and_caps_how_many_it_holds() {
    use tokio::io::AsyncReadExt as _;
    use tower::Service as _;
    let sim = support::start_sim(0).await;

    // A TLS connection that never sends its request headers: closed after
    // the 10 s header timeout.
    let kubeconfig: kube::config::Kubeconfig = serde_json::from_value(sim.kubeconfig()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let mut connector = {
        use kube::client::ConfigExt as _;
        config.rustls_https_connector().unwrap()
    };
    let opened = std::time::Instant::now();
    let stream = connector.call(sim.url().parse().unwrap()).await.unwrap();
    let mut stream = hyper_util::rt::TokioIo::new(stream);
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut byte))
        .await
        .expect("the server closes an idle connection");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    let held = opened.elapsed();
    assert!(
        held >= Duration::from_secs(9) && held < Duration::from_secs(15),
        "{held:?}"
    );

    // More connections than the cap: those past it are closed at once.
    raise_open_file_limit(4096);
    let mut sockets = Vec::new();
    for _ in 0..1100 {
        sockets.push(tokio::net::TcpStream::connect(sim.addr()).await.unwrap());
    }
    // All read at once, well within the 10 s handshake timeout.
    let reads = sockets.iter_mut().map(|socket| async move {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_secs(1), socket.read(&mut byte)).await;
        matches!(read, Ok(Ok(0) | Err(_)))
    });
    let closed_at_once = futures::future::join_all(reads)
        .await
        .into_iter()
        .filter(|closed| *closed)
        .count();
    assert!(
        (76..=200).contains(&closed_at_once),
        "{closed_at_once} of 1100 closed at once (the cap is 1024)"
    );
}

fn raise_open_file_limit(to: u64) {
    use nix::libc;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on a local struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max.min(to.max(limit.rlim_cur));
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
}

/// Every live (not zombie) process descended from `root`.
fn live_descendants(root: u32) -> Vec<u32> {
    let parent_and_state = |pid: u32| -> Option<(u32, char)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 2..];
        let mut fields = after.split_whitespace();
        let state = fields.next()?.chars().next()?;
        Some((fields.next()?.parse().ok()?, state))
    };
    let all: Vec<(u32, u32, char)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| parent_and_state(pid).map(|(ppid, state)| (pid, ppid, state)))
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            all.iter()
                .filter(|(_, ppid, _)| *ppid == parent)
                .map(|(pid, ..)| *pid),
        );
        i += 1;
    }
    found.retain(|pid| *pid != root && parent_and_state(*pid).is_some_and(|(_, s)| s != 'Z'));
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulators_containers_die_with_it_even_on_kill_9() {
    let (mut sim, _) = podbay_sim(&[]).await;
    let pid = sim.id().unwrap();
    let containers = support::eventually(20, "the containers started", || async move {
        let found = live_descendants(pid);
        (found.len() >= 10).then_some(found)
    })
    .await;
    sim.start_kill().unwrap();
    let _ = sim.wait().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let alive: Vec<u32> = containers
            .iter()
            .copied()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .is_ok_and(|s| !s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
            })
            .collect();
        if alive.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {} container processes outlived the simulator: {alive:?}",
            alive.len(),
            containers.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// §8: 410 storms, endless lists and short watches: back-off, bounds, a sentence.

/// A server whose pod list answers with `web-1` (pages as `list` says) and
/// whose pod watches `watch` answers; the requests it got in `seconds`, and
/// the screen then.
async fn requests_in(
    tag: &str,
    seconds: u64,
    list: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    watch: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> (Hostile, String, f64) {
    let server = Hostile::start(move |r: &Request| {
        if r.path == "/version" {
            hostile::version()
        } else if r.is_list_of("pods") && r.is_watch() {
            watch(r)
        } else if r.is_list_of("pods") {
            list(r)
        } else {
            watch_stalls(r)
        }
    })
    .await;
    let config = server.kubeconfig(tag);
    let screen = PodbayScreen::spawn(&args(&config, &[]), 160, 30);
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let rss = peak_rss_mb(screen.child.id().expect("podbay runs"));
    let text = screen.text();
    screen.quit().await;
    (server, text, rss)
}

fn one_pod(_: &Request) -> Reply {
    hostile::list("PodList", vec![hostile::pod("web-1")])
}

/// A page of a pod list that says there is more, after `token`.
fn page_with_more(token: &str, pod: &str) -> Reply {
    Reply::json(
        200,
        &json!({"kind": "PodList", "apiVersion": "v1",
            "metadata": {"resourceVersion": "7", "continue": token},
            "items": [hostile::pod(pod)]}),
    )
}

fn pod_watches(server: &Hostile) -> usize {
    server.count(|r| r.is_list_of("pods") && r.is_watch())
}

fn pod_lists(server: &Hostile) -> usize {
    server.count(|r| r.is_list_of("pods") && !r.is_watch())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_answered_410_relists_once_then_backs_off() {
    let (server, text, _) = requests_in("gone-http", 10, one_pod, |_| {
        Reply::failure(410, "Expired", "too old resource version: 7 (9)")
    })
    .await;
    let (lists, watches) = (pod_lists(&server), pod_watches(&server));
    eprintln!("410 on every watch: {lists} lists, {watches} watches in 10 s");
    // ~8 000 requests a second before; back-off from 0.8 s doubling.
    assert!(lists + watches <= 16, "{lists} lists, {watches} watches");
    assert!(text.contains("web-1"), "the list still shows: {text}");
    assert!(
        text.contains("410 Gone even to a watch") && text.contains("reconnecting"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_error_event_410_relists_once_then_backs_off() {
    let gone = json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1",
        "status": "Failure", "message": "too old resource version", "reason": "Expired", "code": 410}});
    let line = format!("{gone}\n").into_bytes();
    let (server, text, _) = requests_in("gone-event", 10, one_pod, move |_| {
        Reply::raw(200, "application/json", line.clone())
    })
    .await;
    let (lists, watches) = (pod_lists(&server), pod_watches(&server));
    eprintln!("410 event on every watch: {lists} lists, {watches} watches in 10 s");
    assert!(lists + watches <= 16, "{lists} lists, {watches} watches");
    assert!(text.contains("410 Gone even to a watch"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_that_delivers_one_event_and_ends_backs_off() {
    let added = json!({"type": "MODIFIED", "object": hostile::pod("web-1")});
    let line = format!("{added}\n").into_bytes();
    let (server, text, _) = requests_in("one-event", 10, one_pod, move |_| {
        Reply::raw(200, "application/json", line.clone())
    })
    .await;
    let watches = pod_watches(&server);
    eprintln!("one event per watch: {watches} watches in 10 s");
    // 1 800 watches a second before: each event reset the back-off.
    assert!(watches <= 8, "{watches} watches in 10 s");
    assert!(
        text.contains("ending watches as soon as they deliver"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_whose_pages_never_end_stops_at_the_cap_and_backs_off() {
    let page = std::sync::atomic::AtomicUsize::new(0);
    let (server, text, rss) = requests_in(
        "endless",
        15,
        move |_| {
            let n = page.fetch_add(1, Ordering::SeqCst);
            page_with_more(&format!("token-{n}"), &format!("web-{n}"))
        },
        watch_stalls,
    )
    .await;
    let lists = pod_lists(&server);
    eprintln!("endless list: {lists} pages in 15 s, peak RSS {rss:.0} MB");
    assert!(
        text.contains("did not end after 2000 pages"),
        "the screen says what the server did: {text}"
    );
    // Each try stops at 2 000 pages, then waits as long as those take at
    // 10 requests a second (200 s): one try in these 15 s.
    assert!(lists <= 2_000 + 2, "{lists} pages");
    assert!(rss < 150.0, "peak RSS {rss:.0} MB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_that_repeats_its_continue_token_is_refused_and_retried_with_back_off() {
    let (server, text, _) = requests_in(
        "same-token",
        10,
        |_| page_with_more("again", "web-1"),
        watch_stalls,
    )
    .await;
    let lists = pod_lists(&server);
    eprintln!("repeated token: {lists} pages in 10 s");
    // 5 000-6 000 requests a second before.
    assert!(lists <= 14, "{lists} pages in 10 s");
    assert!(text.contains("same continue token twice"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continue_token_that_is_always_gone_restarts_the_list_once_then_backs_off() {
    let (server, text, _) = requests_in(
        "gone-token",
        10,
        |r| {
            if r.query.contains("continue=") {
                Reply::failure(410, "Expired", "The provided continue parameter is too old")
            } else {
                page_with_more("next", "web-1")
            }
        },
        watch_stalls,
    )
    .await;
    let lists = pod_lists(&server);
    eprintln!("410 on every continue: {lists} pages in 10 s");
    assert!(lists <= 24, "{lists} pages in 10 s");
    assert!(
        text.contains("expired the list's continue token twice"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_status_without_an_exit_code_is_an_error_not_success() {
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("container runtime said no {PAYLOAD}"), "reason": "InternalError"});
    let server = debuggable(vec![channel(3, status.to_string().as_bytes())]).await;
    let config = server.kubeconfig("failure-no-code");
    let out = podbay_debug(&config, &["web-1", "--image", "busybox", "--name", "dbg"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "kubectl exits 1 here: {stderr}");
    assert!(
        stderr.contains("ended with an error and no exit code")
            && stderr.contains("container runtime said no"),
        "{stderr}"
    );
    assert!(!holds_live_payload(&out.stderr), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_outside_0_to_255_are_said_as_reported() {
    for (code, reported) in [("256", "256"), ("-1", "-1")] {
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "command terminated with non-zero exit code", "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": code}]}});
        let server = debuggable(vec![channel(3, status.to_string().as_bytes())]).await;
        let config = server.kubeconfig("exit-range");
        let out = podbay_debug(&config, &["web-1", "--image", "busybox", "--name", "dbg"]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        // process::exit truncated these: 256 exited 0, -1 exited 255.
        assert_eq!(out.status.code(), Some(125), "{code}: {stderr}");
        assert!(
            stderr.contains(&format!("exited with code {reported}")),
            "{stderr}"
        );
    }
}

// §9: `podbay debug --timeout` bounds every request.

/// `podbay debug --timeout 3s` against a server that does not answer one
/// step: its exit status, stderr and how long it took.
async fn debug_where_a_step_stalls(
    tag: &str,
    stall: impl Fn(&Request, bool) -> Option<Reply> + Send + Sync + 'static,
) -> (Option<i32>, String, Duration) {
    let exited = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"});
    let server = debuggable_but(
        vec![
            channel(1, b"hello\n"),
            channel(3, exited.to_string().as_bytes()),
        ],
        stall,
    )
    .await;
    let config = server.kubeconfig(tag);
    let started = std::time::Instant::now();
    let out = podbay_debug(
        &config,
        &[
            "web-1",
            "--image",
            "busybox",
            "--name",
            "dbg",
            "--timeout",
            "3s",
        ],
    )
    .await;
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("{tag}: exit {:?} after {took:?}", out.status.code());
    (out.status.code(), stderr, took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_never_answered_ends_at_the_timeout_naming_it() {
    let (code, stderr, took) = debug_where_a_step_stalls("patch-hangs", |r, _| {
        (r.method == "PATCH").then(Reply::hang)
    })
    .await;
    assert_eq!(code, Some(124), "{stderr}");
    assert!(
        stderr.contains("did not answer the request to add the debug container"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_answered_in_half_ends_at_the_timeout_naming_it() {
    let (code, stderr, took) = debug_where_a_step_stalls("patch-half", |r, _| {
        (r.method == "PATCH").then(|| {
            Reply::raw(
                200,
                "application/json",
                br#"{"kind": "Pod", "apiVersion": "#.to_vec(),
            )
            .then_stall()
        })
    })
    .await;
    assert_eq!(code, Some(124), "{stderr}");
    assert!(
        stderr.contains("did not answer the request to add the debug container"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_read_that_stalls_ends_at_the_timeout_naming_it() {
    let (code, stderr, took) = debug_where_a_step_stalls("log-stalls", |r, _| {
        r.path
            .ends_with("/log")
            .then(|| Reply::raw(200, "text/plain", b"half a li".to_vec()).then_stall())
    })
    .await;
    assert_eq!(code, Some(124), "{stderr}");
    assert!(
        stderr.contains("did not answer the read of the debug container's log"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_read_of_the_pod_that_stalls_ends_at_the_timeout_naming_it() {
    let (code, stderr, took) = debug_where_a_step_stalls("final-get", |r, attached| {
        (attached && r.method == "GET" && r.path.ends_with("/pods/web-1")).then(Reply::hang)
    })
    .await;
    assert_eq!(code, Some(124), "{stderr}");
    assert!(
        stderr.contains("did not answer the read of the pod's final status"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

// §10: one malformed object hides nothing else.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_that_does_not_decode_is_left_out_and_counted_the_others_shown() {
    let mut bad = hostile::pod("web-2");
    bad["status"]["containerStatuses"][0]["restartCount"] = json!(9_223_372_036_854_775_807_u64);
    let list = json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "7"},
        "items": [hostile::pod("web-1"), bad, hostile::pod("NAMEX")]});
    // A name that is not UTF-8 is read as kubectl reads it (U+FFFD).
    let text = list.to_string();
    let at = text.find("NAMEX").expect("the marker");
    let body: Vec<u8> = [
        &text.as_bytes()[..at],
        b"web-3-\xff",
        &text.as_bytes()[at + 5..],
    ]
    .concat();
    let modified = json!({"type": "MODIFIED", "object": {"kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web-1", "namespace": "shop", "resourceVersion": "8"},
        "spec": {"containers": "not a list"}}});
    let event = format!("{modified}\n").into_bytes();
    let server = Hostile::start(move |r: &Request| {
        if r.path == "/version" {
            hostile::version()
        } else if r.is_list_of("pods") && r.is_watch() {
            Reply::raw(200, "application/json", event.clone()).then_stall()
        } else if r.is_list_of("pods") {
            Reply::raw(200, "application/json", body.clone())
        } else {
            watch_stalls(r)
        }
    })
    .await;
    let config = server.kubeconfig("bad-item");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 160, 30);
    screen
        .wait_for("the readable pods", |t| {
            t.contains("web-1") && t.contains("web-3-")
        })
        .await;
    let text = screen.text();
    assert!(!text.contains("web-2 "), "the bad pod is left out: {text}");
    screen
        .wait_for("the count and the sentence", |t| {
            t.contains("2 pods (2 unreadable)") && t.contains("cannot be read")
        })
        .await;
    let text = screen.text();
    assert!(text.contains("web-1"), "its row stays: {text}");
    screen.quit().await;
}

// §11: a throttling server that says how long only in its header.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_in_the_header_alone_is_honoured_and_said() {
    let (server, text, _) = requests_in("retry-after-header", 10, one_pod, |_| {
        Reply::raw(429, "text/plain", b"slow down".to_vec()).header("Retry-After", "7")
    })
    .await;
    let watches = pod_watches(&server);
    eprintln!("429 with Retry-After: 7 on every watch: {watches} watches in 10 s");
    // A request retries three times within itself, then the feed waits 7 s.
    assert!(watches <= 8, "{watches} watches in 10 s");
    assert!(text.contains("asks to wait 7 s"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_of_an_hour_is_capped_and_said() {
    let (_server, text, _) = requests_in("retry-after-hour", 4, one_pod, |_| {
        Reply::raw(429, "text/plain", b"go away".to_vec()).header("Retry-After", "3600")
    })
    .await;
    assert!(
        text.contains("asks to wait 3600 s; podbay asks again after 300 s"),
        "{text}"
    );
}

// §12: sentences that say what the server did.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_the_status_channel_is_the_servers_word_not_a_cut_stream() {
    let server = debuggable(vec![
        channel(1, b"partial\n"),
        channel(
            3,
            format!("<html>upstream oops {PAYLOAD}</html>").as_bytes(),
        ),
    ])
    .await;
    let config = server.kubeconfig("status-garbage");
    let out = podbay_debug(&config, &["web-1", "--image", "busybox", "--name", "dbg"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not a Status") && stderr.contains("upstream oops"),
        "{stderr}"
    );
    assert!(!stderr.contains("was cut"), "{stderr}");
    assert!(!holds_live_payload(&out.stderr), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_compressed_without_being_asked_says_so_and_the_empty_table_says_why() {
    let (_server, text, _) = requests_in(
        "gzip",
        4,
        |_| {
            Reply::raw(
                200,
                "application/json",
                vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3],
            )
            .header("Content-Encoding", "gzip")
        },
        watch_stalls,
    )
    .await;
    assert!(
        text.contains("gzip-encoded answer podbay did not ask for"),
        "{text}"
    );
    assert!(!text.contains("invalid utf-8"), "{text}");
    assert!(
        text.contains("No pods to show: the list is not available"),
        "not an empty namespace: {text}"
    );
}

/// A server with the one pod `web-1` (listed, and read by name), no
/// events, and watches that stay open and quiet; `first` answers what it
/// will first.
fn one_quiet_pod(
    first: impl Fn(&Request) -> Option<Reply> + Send + Sync + 'static,
) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    move |r: &Request| {
        if let Some(reply) = first(r) {
            reply
        } else if r.path == "/version" {
            hostile::version()
        } else if r.is_watch() {
            Reply::raw(200, "application/json", Vec::new()).then_stall()
        } else if r.is_list_of("events") {
            hostile::list("EventList", vec![])
        } else if r.is_list_of("pods") {
            hostile::list("PodList", vec![hostile::pod("web-1")])
        } else {
            Reply::failure(404, "NotFound", "not here")
        }
    }
}

// §13: text that stacks.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_with_ten_thousand_combining_marks_stays_on_its_row() {
    let message = format!(
        "zalgo{} then the end of the message",
        "\u{301}".repeat(10_000)
    );
    let event = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "web-1.1", "namespace": "shop", "resourceVersion": "7"},
        "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "shop"},
        "reason": "Stacked", "message": message, "type": "Warning", "count": 1,
        "firstTimestamp": "2026-11-01T00:00:00Z", "lastTimestamp": "2026-11-01T00:00:00Z"});
    let server = Hostile::start(one_quiet_pod(move |r: &Request| {
        (r.is_list_of("events") && !r.is_watch())
            .then(|| hostile::list("EventList", vec![event.clone()]))
    }))
    .await;
    let config = server.kubeconfig("zalgo");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 120, 30);
    screen.wait_for("the list", |t| t.contains("web-1")).await;
    // The pod view shows the pod's events, each message on its row.
    screen.keys("\r").await;
    screen
        .wait_for("the whole message", |t| {
            t.contains("Stacked") && t.contains("the end of the message")
        })
        .await;
    screen.quit().await;
}

// §14: a pod is asked for by the name it has, shown by a safe one.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_whose_name_holds_escapes_is_asked_for_by_its_own_name() {
    const RAW: &str = "web-1\u{1b}[31m";
    let server = Hostile::start(|r: &Request| {
        if r.path == "/version" {
            hostile::version()
        } else if r.is_watch() {
            Reply::raw(200, "application/json", Vec::new()).then_stall()
        } else if r.is_list_of("events") {
            hostile::list("EventList", vec![])
        } else if r.is_list_of("pods") {
            let asked: String = form_urlencoded::parse(r.query.as_bytes())
                .find(|(k, _)| k == "fieldSelector")
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            // The whole list, or the pod by its real name; by any other
            // name (its escaped one, say) there is no such pod.
            let pods = if asked.is_empty() || asked == format!("metadata.name={RAW}") {
                vec![hostile::pod(RAW)]
            } else {
                vec![]
            };
            hostile::list("PodList", pods)
        } else {
            Reply::failure(404, "NotFound", "not here")
        }
    })
    .await;
    let config = server.kubeconfig("escaped-name");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 120, 30);
    screen
        .wait_for("the list, the name escaped", |t| t.contains("web-1\\e[31m"))
        .await;
    screen.keys("\r").await;
    screen
        .wait_for("the pod's containers", |t| {
            t.contains("shop/web-1\\e[31m") && t.contains("app")
        })
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let text = screen.text();
    assert!(!text.contains("no longer exists"), "{text}");
    let written = String::from_utf8_lossy(&screen.written()).into_owned();
    assert!(
        !written.contains(RAW),
        "the raw name never reaches the terminal"
    );
    screen.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tuis_launch_gives_up_at_its_timeout_and_says_the_container_may_be_added() {
    let server = Hostile::start(one_quiet_pod(|r: &Request| {
        (r.method == "PATCH").then(Reply::hang)
    }))
    .await;
    let config = server.kubeconfig("tui-launch-hangs");
    let screen = PodbayScreen::spawn_with_config(
        &args(&config, &[]),
        120,
        30,
        "[debug]\nlaunch_timeout = 2\n",
    );
    screen.wait_for("the list", |t| t.contains("web-1")).await;
    screen.keys("\r").await;
    screen.wait_for("the pod view", |t| t.contains("app")).await;
    screen.keys("d").await;
    screen
        .wait_for("the launcher", |t| t.contains("Debug container for"))
        .await;
    screen.keys("\r").await;
    // "adding the debug container… (38s)" for ever, before.
    screen
        .wait_for("the launch given up", |t| {
            t.contains("did not answer the request to add the debug container within 2 s")
        })
        .await;
    screen.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_error_that_is_not_a_status_says_so() {
    let line = b"{\"type\": \"ERROR\", \"object\": {\"surprise\": true}}\n".to_vec();
    let server = Hostile::start(move |r: &Request| {
        if r.path == "/version" {
            hostile::version()
        } else if r.is_list_of("pods") && r.is_watch() {
            Reply::raw(200, "application/json", line.clone())
        } else if r.is_list_of("pods") {
            one_pod(r)
        } else {
            watch_stalls(r)
        }
    })
    .await;
    let config = server.kubeconfig("error-not-status");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 160, 30);
    // Waited for, not read after a fixed time: on a loaded machine the
    // first watch can take longer than the seconds once given.
    screen
        .wait_for_within(30, "the sentence", |t| {
            t.contains("a watch error that is not a Status")
        })
        .await;
    let text = screen.text();
    assert!(!text.contains("answered 0"), "{text}");
    screen.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_pane_never_passes_bidi_controls_to_the_terminal() {
    let server = Hostile::start(one_quiet_pod(|r: &Request| {
        r.path.ends_with("/log").then(|| {
            Reply::raw(
                200,
                "text/plain",
                "reversed \u{202e}txet\u{202c} and hidden \u{200b}space\nnext line\n"
                    .as_bytes()
                    .to_vec(),
            )
            .then_stall()
        })
    }))
    .await;
    let config = server.kubeconfig("bidi-log");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 120, 30);
    screen.wait_for("the list", |t| t.contains("web-1")).await;
    screen.keys("\r").await;
    screen.wait_for("the pod view", |t| t.contains("app")).await;
    screen.keys("l").await;
    screen
        .wait_for("the log", |t| {
            t.contains("next line") && t.contains("reversed")
        })
        .await;
    let written = String::from_utf8_lossy(&screen.written()).into_owned();
    for control in ['\u{202e}', '\u{202c}', '\u{200b}'] {
        assert!(
            !written.contains(control),
            "{control:?} reached the terminal"
        );
    }
    screen.quit().await;
}

// §15: a stalled server is seen.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_server_is_seen_stalled_and_live_again_when_it_resumes() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let (sim, config) = podbay_sim(&[]).await;
    let pid = Pid::from_raw(sim.id().expect("the simulator runs") as i32);
    let screen = PodbayScreen::spawn(&args(&config, &["-A"]), 120, 30);
    screen
        .wait_for("the list, live", |t| {
            t.contains("redis-0") && t.contains("● live")
        })
        .await;
    // As `kill -STOP`: connections stay open, nothing answers, no error.
    kill(pid, Signal::SIGSTOP).expect("stop the simulator");
    let stalled = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let text = screen.text();
            if text.contains("stalled: no answer for") {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    kill(pid, Signal::SIGCONT).expect("resume the simulator");
    let text = stalled.expect("the header says the server stalled (it stayed ● live before)");
    assert!(!text.contains("● live"), "{text}");
    screen
        .wait_for("live again", |t| {
            t.contains("● live") && !t.contains("stalled")
        })
        .await;
    screen.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_whose_server_stops_says_so_on_its_pane_and_recovers() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let (sim, config) = podbay_sim(&[]).await;
    let pid = Pid::from_raw(sim.id().expect("the simulator runs") as i32);
    let screen = PodbayScreen::spawn(&args(&config, &["-n", "shop"]), 120, 30);
    crate::panes_e2e::shell_in(&screen, "redis-0", 0).await;
    screen.keys("echo ready-$((6*7))\r").await;
    screen
        .wait_for("its answer", |t| t.contains("ready-42"))
        .await;
    kill(pid, Signal::SIGSTOP).expect("stop the simulator");
    // A key into a stopped server: no echo, and no error either.
    screen.keys("x").await;
    let said = tokio::time::timeout(Duration::from_secs(25), async {
        loop {
            if screen.text().contains("no answer for") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    kill(pid, Signal::SIGCONT).expect("resume the simulator");
    said.expect("the pane says the server does not answer (keys vanished without a word before)");
    screen
        .wait_for("the pane answering again", |t| !t.contains("no answer for"))
        .await;
    screen.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_answer_at_start_is_said_while_podbay_waits() {
    let server = Hostile::start(|_| Reply::hang()).await;
    let config = server.kubeconfig("start-stalls");
    let mut screen = PodbayScreen::spawn(&args(&config, &[]), 100, 24);
    // A blank terminal for 10 s before.
    screen
        .wait_for("what podbay waits for", |t| {
            t.contains("◌ connecting to http://127.0.0.1:")
                && t.contains("(context hostile)")
                && t.contains("ctrl-c quits")
        })
        .await;
    assert_eq!(
        exit_code(&mut screen, Duration::from_secs(20)).await,
        Some(1)
    );
    let text = String::from_utf8_lossy(&screen.written()).into_owned();
    assert!(text.contains("did not answer within 10 seconds"), "{text}");
}

/// Pods named with escapes, debugged as many at once: the summary's POD
/// column and each pod's own lines show the names escaped (the summary
/// printed them raw).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_pods_with_hostile_names_are_printed_escaped() {
    let name = format!("web{PAYLOAD}");
    let server = Hostile::start(move |r| match r.path.as_str() {
        "/version" => hostile::version(),
        _ if r.is_list_of("pods") => {
            hostile::list("PodList", vec![hostile::pod(&name), hostile::pod("web-2")])
        }
        _ => Reply::failure(403, "Forbidden", &format!("no: {PAYLOAD}")),
    })
    .await;
    let config = server.kubeconfig("fleet-names");
    let out = podbay_debug(
        &config,
        &[
            "-l", "app=web", "-n", "shop", "--image", "busybox", "--", "true",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!holds_live_payload(&out.stderr), "{stderr}");
    assert!(!holds_live_payload(&out.stdout), "{out:?}");
    assert!(stderr.contains("web\\e]52;c;SGVsbG8="), "{stderr}");
    assert!(stderr.contains("POD"), "the summary: {stderr}");
}

/// A copy whose stream gets pings and empty frames but no byte of the file
/// is given up at its stall bound (it waited for ever: any frame counted as
/// progress), with the sentence and exit 75, nothing left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_kept_alive_by_pings_alone_stalls_out() {
    let server = Hostile::start(|r| {
        let command: Vec<&str> = r
            .query
            .split('&')
            .filter_map(|p| p.strip_prefix("command="))
            .collect();
        match r.path.as_str() {
            "/version" => hostile::version(),
            p if p.ends_with("/exec") && command.first() == Some(&"du") => Reply::websocket(vec![
                channel(1, b"4\t/etc/hosts\n"),
                channel(3, br#"{"metadata":{},"status":"Success"}"#),
            ]),
            p if p.ends_with("/exec") => {
                Reply::websocket(vec![]).then_keepalive(Duration::from_millis(200))
            }
            p if p.ends_with("/pods/web-1") => Reply::json(200, &hostile::pod("web-1")),
            _ => Reply::failure(404, "NotFound", "not here"),
        }
    })
    .await;
    let config = server.kubeconfig("cp-pings");
    let dir = tempfile::tempdir().unwrap();
    let home = support::tempdir::temp_home("cp-pings");
    let started = std::time::Instant::now();
    let out = support::output_within(
        30,
        "a copy with no payload ends at its stall bound",
        support::podbay_command(
            "cp",
            &config,
            &["shop/web-1:/etc/hosts", "hosts", "--stall", "2s"],
            home.path(),
        )
        .current_dir(dir.path()),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    assert!(
        stderr.contains("nothing was sent or received for 2 s"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no stage left"
    );

    // The whole copy's own deadline, whatever the stream does.
    let out = support::output_within(
        30,
        "a copy ends at its --max-time",
        support::podbay_command(
            "cp",
            &config,
            &["shop/web-1:/etc/hosts", "hosts", "--max-time", "2s"],
            home.path(),
        )
        .current_dir(dir.path()),
    )
    .await;
    support::exits(
        &out,
        124,
        "The copy was stopped: it took longer than 2 s (--max-time); nothing was kept.",
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no stage left"
    );
}

/// `podbay debug -l` over 1 200 pods of 16 KiB (19 MiB, over the 16 MiB
/// cap on one answer): listed in pages of 500, as the feeds list, so every
/// pod is reached (the list was one request, refused at the cap, and podbay
/// said the cluster was unreachable: exit 74).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selector_over_a_list_larger_than_one_answer_is_listed_in_pages() {
    const PODS: usize = 1_200;
    let fat = |i: usize| {
        let mut pod = hostile::pod(&format!("web-{i:04}"));
        pod["metadata"]["annotations"] = json!({"note": "x".repeat(16 << 10)});
        pod
    };
    let server = Hostile::start(move |r| {
        if r.path == "/version" {
            return hostile::version();
        }
        if !r.is_list_of("pods") {
            return Reply::failure(403, "Forbidden", "no");
        }
        let param = |name: &str| {
            r.query
                .split('&')
                .find_map(|p| p.strip_prefix(name))
                .and_then(|v| v.parse::<usize>().ok())
        };
        let limit = param("limit=").unwrap_or(PODS);
        let from = param("continue=").unwrap_or(0);
        let to = (from + limit).min(PODS);
        let more = if to < PODS {
            to.to_string()
        } else {
            String::new()
        };
        Reply::json(
            200,
            &json!({"kind": "PodList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "7", "continue": more},
                "items": (from..to).map(fat).collect::<Vec<_>>()}),
        )
    })
    .await;
    let config = server.kubeconfig("fat-selector");
    let out = podbay_debug(
        &config,
        &[
            "-l", "app=web", "-n", "shop", "--image", "busybox", "--", "true",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(123),
        "some pods could not run: {stderr}"
    );
    assert!(
        stderr.contains(&format!("podbay: 0 of {PODS} pods exited 0")),
        "every pod reached: {}",
        stderr.lines().take(5).collect::<Vec<_>>().join("\n")
    );
    let lists = server.count(|r| r.is_list_of("pods"));
    assert_eq!(lists, PODS.div_ceil(500), "pages of 500");
}

/// A port-forward whose stream breaks on a frame that is no channel's:
/// the connection closes and the forward says why (it closed without a
/// word), then goes on. (The server takes only the channel protocol; a
/// session's garbage is `forward_session`'s.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_stream_with_a_garbage_frame_is_said_and_closed() {
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
    let ready = || {
        let mut pod = hostile::pod("web-1");
        pod["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        pod
    };
    let server = Hostile::start(move |r| match r.path.as_str() {
        "/version" => hostile::version(),
        p if p.ends_with("/portforward")
            && r.header("sec-websocket-protocol")
                .is_some_and(|p| p.contains("SPDY")) =>
        {
            Reply::failure(400, "BadRequest", "unable to upgrade")
        }
        p if p.ends_with("/portforward") => Reply::websocket(vec![channel(9, &[1, 2, 3])]),
        p if p.ends_with("/pods/web-1") => Reply::json(200, &ready()),
        _ if r.is_watch() => watch_stalls(r),
        _ if r.is_list_of("pods") => hostile::list("PodList", vec![ready()]),
        _ => Reply::failure(404, "NotFound", "not here"),
    })
    .await;
    let (mut child, port) = hostile::forward_web_1(&server, "forward-garbage").await;
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(b"GET / HTTP/1.0\r\n\r\n").await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest))
        .await
        .expect("the connection closes")
        .unwrap_or_default();
    let said = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let line = stderr.next_line().await.unwrap().expect("a line");
            if line.contains("a connection failed") {
                return line;
            }
        }
    })
    .await
    .expect("the forward says why the connection closed");
    assert!(
        said.contains("the API server's stream broke (received invalid channel 9)"),
        "{said}"
    );
    if let Some(status) = child.try_wait().unwrap() {
        let mut rest = Vec::new();
        while let Ok(Some(line)) = stderr.next_line().await {
            rest.push(line);
        }
        panic!("the forward ended ({status}): {}", rest.join("\n"));
    }
}

/// `podbay debug -l` over 50 pods of one namespace reads that namespace's
/// Pod Security once, not once a pod.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_pods_of_one_namespace_read_its_pod_security_once() {
    const PODS: usize = 50;
    let server = Hostile::start(|r| {
        let path = r.path.as_str();
        if path == "/version" {
            hostile::version()
        } else if path == "/api/v1/namespaces/shop" {
            Reply::json(
                200,
                &json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": "shop", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}}),
            )
        } else if r.is_list_of("pods") {
            hostile::list(
                "PodList",
                (0..PODS).map(|i| hostile::pod(&format!("web-{i:02}"))).collect(),
            )
        } else if r.method == "GET" && path.contains("/pods/web-") {
            let name = path.rsplit('/').next().unwrap_or_default();
            Reply::json(200, &hostile::pod(name))
        } else {
            Reply::failure(403, "Forbidden", "no")
        }
    })
    .await;
    let config = server.kubeconfig("fleet-policies");
    let out = podbay_debug(
        &config,
        &[
            "-l", "app=web", "-n", "shop", "--image", "busybox", "--", "true",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("podbay: 0 of {PODS} pods exited 0")),
        "every pod reached the launch: {}",
        stderr.lines().take(5).collect::<Vec<_>>().join("\n")
    );
    let reads = server.count(|r| r.path == "/api/v1/namespaces/shop");
    assert_eq!(reads, 1, "the namespace read once for {PODS} pods");
}

/// `D` on a Deployment whose server never answers the read says so within
/// the read's deadline, and `y` on one whose server refuses with escape
/// sequences shows them escaped; the view still works after each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_read_that_stalls_or_refuses_hostilely_is_said_and_the_view_goes_on() {
    let deployment = |name: &str| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"),
                "resourceVersion": "7", "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "app", "image": "shop/app:1"}]}}},
            "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
                "updatedReplicas": 1}})
    };
    let server = Hostile::start(with_pods(&["web-1"], move |r: &Request| {
        if r.is_watch() {
            Reply::raw(200, "application/json", Vec::new()).then_stall()
        } else if r.is_list_of("deployments") {
            hostile::list(
                "DeploymentList",
                vec![deployment("stalls"), deployment("taunts")],
            )
        } else if r.path.ends_with("/deployments/stalls") {
            Reply::hang()
        } else if r.path.ends_with("/deployments/taunts") {
            Reply::failure(500, "InternalError", &format!("boom: {PAYLOAD}"))
        } else if r.is_list_of("events") {
            hostile::list("EventList", vec![])
        } else {
            Reply::failure(404, "NotFound", "not here")
        }
    }))
    .await;
    let config = server.kubeconfig("workload-read");
    let screen = PodbayScreen::spawn(&args(&config, &[]), 120, 30);
    screen.wait_for("the list", |t| t.contains("web-1")).await;
    screen.keys(":deploy\r").await;
    screen
        .wait_for("the Deployments", |t| {
            t.contains("deployments (2)") && t.contains("stalls") && t.contains("taunts")
        })
        .await;
    // Sorted by name: stalls, then taunts.
    screen.keys("D").await;
    screen
        .wait_for("the page loading", |t| {
            t.contains("describe shop/deploy/stalls")
        })
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = screen.text();
        if text.contains("the API server did not answer") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the page says the server did not answer: {text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    screen.keys("\x1b").await;
    screen
        .wait_for("the view again", |t| t.contains("deployments (2)"))
        .await;
    screen.keys("jy").await;
    screen
        .wait_for("the refusal, escaped", |t| {
            t.contains("yaml shop/deploy/taunts") && t.contains("boom: \\e]52;c;SGVsbG8=")
        })
        .await;
    let written = screen.written();
    assert!(
        !holds_live_payload(&written),
        "{:?}",
        String::from_utf8_lossy(&written)
    );
    screen.keys("\x1b").await;
    screen
        .wait_for("the view once more", |t| t.contains("deployments (2)"))
        .await;
    screen.quit().await;
}

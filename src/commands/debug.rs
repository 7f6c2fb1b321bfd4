//! `podbay debug POD …`: add a debug container, wait for it through a watch,
//! attach, and exit with its exit code. For scripts and for people who want
//! `kubectl debug` that shows everything and says clearly what went wrong.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use crate::cli::DebugArgs;
use crate::cluster::client::Target;
use crate::cluster::debug::{self, DebugSpec, LaunchProblem, Startup};
use crate::cluster::errors;
use crate::cluster::session::{self, SessionEvent, SessionInput, SessionKind, SessionSpec};

/// Exit codes of podbay's own failures (the container's exit code is passed
/// through otherwise). Documented in README.
pub mod exit {
    pub const INVALID: i32 = 65;
    pub const NOT_FOUND: i32 = 66;
    pub const UNSUPPORTED: i32 = 69;
    pub const NOT_RUNNING: i32 = 70;
    pub const IMAGE: i32 = 71;
    pub const START_FAILED: i32 = 72;
    pub const UNREACHABLE: i32 = 74;
    pub const CONFIG: i32 = 78;
    pub const FORBIDDEN: i32 = 77;
    pub const TIMEOUT: i32 = 124;
}

/// A failure: one sentence for stderr and its exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub sentence: String,
}

fn fail(code: i32, sentence: impl Into<String>) -> Failure {
    Failure {
        code,
        sentence: sentence.into(),
    }
}

/// Runs the command; `Ok(code)` is the exit code to use.
pub async fn run(args: DebugArgs) -> Result<i32, Failure> {
    let target = Target {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        ..Target::default()
    };
    let connection = target
        .connect()
        .await
        .map_err(|e| fail(exit::CONFIG, e.to_string()))?;
    let namespace = args
        .namespace
        .clone()
        .unwrap_or(connection.namespace.clone());
    let pods: Api<Pod> = Api::namespaced(connection.client.clone(), &namespace);

    let pod = pods
        .get(&args.pod)
        .await
        .map_err(|e| api_failure(&e, &args.pod, &namespace))?;
    preflight(&pod, &args, &namespace)?;
    let taken = debug::container_names(&pod);
    let name = match &args.name {
        Some(name) if taken.contains(name) => {
            return Err(fail(
                exit::INVALID,
                format!(
                    "Pod {} already has a container named {name:?}; pick another --name (ephemeral containers can never be removed).",
                    args.pod
                ),
            ));
        }
        Some(name) => name.clone(),
        None => debug::unique_name(&taken, random),
    };
    let spec = DebugSpec {
        name: name.clone(),
        image: args.image.clone(),
        target: args.target.clone(),
        command: args.command.clone(),
        profile: args.profile,
        env: args.env.clone(),
    };
    spec.launch(&pods, &args.pod)
        .await
        .map_err(|e| launch_failure(&e, &args.pod, &namespace))?;
    if !args.json() {
        eprintln!(
            "podbay: added debug container {name} to pod {namespace}/{}; waiting for it to start…",
            args.pod
        );
    }

    let quiet = args.json();
    let startup = debug::await_startup(&pods, &args.pod, &name, args.timeout, |reason, message| {
        if !quiet {
            let detail = if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            };
            eprintln!("podbay: {name} is waiting: {reason}{detail}");
        }
    })
    .await;
    match startup {
        Startup::Running => {}
        Startup::Terminated {
            exit_code,
            reason,
            message,
        } if reason == "StartError" => {
            return Err(fail(
                exit::START_FAILED,
                format!(
                    "The debug container could not start ({reason}, exit code {exit_code}): {message}. Check the command and that the image has it."
                ),
            ));
        }
        Startup::Terminated { .. } => {}
        Startup::Stuck { reason, message } => {
            return Err(fail(
                exit::IMAGE,
                format!(
                    "The debug container cannot start: {reason}: {message}. Check the image name."
                ),
            ));
        }
        Startup::TimedOut { reason, message } if reason.contains("Image") => {
            return Err(fail(
                exit::IMAGE,
                format!(
                    "Timed out after {} waiting for the image: {reason}: {message}. Check the image name and the pod's image pull secrets.",
                    humantime(args.timeout)
                ),
            ));
        }
        Startup::TimedOut { reason, .. } => {
            let still = if reason.is_empty() {
                "has no status yet".to_string()
            } else {
                format!("is still {reason}")
            };
            return Err(fail(
                exit::TIMEOUT,
                format!(
                    "Timed out after {}: the debug container {still}.",
                    humantime(args.timeout)
                ),
            ));
        }
        Startup::PodGone => {
            return Err(fail(
                exit::NOT_FOUND,
                format!(
                    "Pod {namespace}/{} went away while the debug container was starting.",
                    args.pod
                ),
            ));
        }
    }

    if !args.no_attach {
        attach(&connection.client, &pods, &namespace, &args, &name).await?;
    }
    report(&pods, &args, &name).await
}

fn random() -> u64 {
    let mut bytes = [0u8; 8];
    let _ = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    u64::from_le_bytes(bytes)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
}

fn humantime(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{}m", secs / 60)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// What is known to fail before asking the server.
fn preflight(pod: &Pod, args: &DebugArgs, namespace: &str) -> Result<(), Failure> {
    let name = &args.pod;
    if pod
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key("kubernetes.io/config.mirror"))
    {
        return Err(fail(
            exit::UNSUPPORTED,
            format!(
                "Pod {namespace}/{name} is a static (mirror) pod, and static pods do not support ephemeral containers; debug its node instead."
            ),
        ));
    }
    let spec = pod.spec.as_ref();
    let windows = spec
        .and_then(|s| s.os.as_ref())
        .is_some_and(|os| os.name == "windows");
    if windows && args.target.is_some() {
        return Err(fail(
            exit::UNSUPPORTED,
            format!(
                "Pod {namespace}/{name} runs on Windows, where a debug container cannot share a container's processes; drop --target."
            ),
        ));
    }
    if let Some(target) = &args.target {
        let containers: Vec<String> = spec
            .map(|s| s.containers.iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default();
        if !containers.contains(target) {
            return Err(fail(
                exit::INVALID,
                format!(
                    "Pod {namespace}/{name} has no container {target:?} to target; its containers are: {}.",
                    containers.join(", ")
                ),
            ));
        }
    }
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_default();
    if phase != "Running" {
        return Err(fail(
            exit::NOT_RUNNING,
            format!(
                "Pod {namespace}/{name} is {phase}, not Running: the kubelet only starts debug containers in running pods."
            ),
        ));
    }
    Ok(())
}

fn api_failure(error: &kube::Error, pod: &str, namespace: &str) -> Failure {
    match error {
        kube::Error::Api(status) if status.code == 404 => fail(
            exit::NOT_FOUND,
            format!("Pod {pod} not found in namespace {namespace}."),
        ),
        _ => classify(error),
    }
}

fn launch_failure(error: &kube::Error, pod: &str, namespace: &str) -> Failure {
    let (problem, sentence) = debug::describe_launch_error(error, namespace, pod);
    let code = match problem {
        LaunchProblem::Unsupported => exit::UNSUPPORTED,
        LaunchProblem::Invalid => exit::INVALID,
        LaunchProblem::Forbidden => exit::FORBIDDEN,
        LaunchProblem::Other => classify(error).code,
    };
    fail(code, sentence)
}

fn classify(error: &kube::Error) -> Failure {
    let (sentence, denied) = errors::describe(error);
    let code = match error {
        _ if denied.is_some() => exit::FORBIDDEN,
        _ if errors::credentials_problem(error).is_some() => exit::CONFIG,
        kube::Error::Api(status) if status.code == 401 => exit::FORBIDDEN,
        kube::Error::Api(status) if status.code == 403 => exit::FORBIDDEN,
        kube::Error::Api(_) => exit::INVALID,
        _ => exit::UNREACHABLE,
    };
    fail(code, sentence)
}

/// Attaches: first prints what the container wrote before the attach (from
/// its log), then streams, so nothing it printed is lost.
async fn attach(
    client: &kube::Client,
    pods: &Api<Pod>,
    namespace: &str,
    args: &DebugArgs,
    name: &str,
) -> Result<(), Failure> {
    let raw = args.tty && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let size = crossterm::terminal::size().unwrap_or((80, 24));
    let (events_tx, mut events) = mpsc::channel(256);
    let spec = SessionSpec {
        namespace: namespace.to_string(),
        pod: args.pod.clone(),
        container: name.to_string(),
        kind: SessionKind::Attach,
        size,
        keepalive: Some(session::DEFAULT_KEEPALIVE),
    };
    let session = match session::open(client.clone(), spec, events_tx).await {
        Ok(s) => Some(s),
        // Exited before we could attach: its whole output is in the log.
        Err(kube::Error::Api(status)) if status.code == 400 => None,
        Err(e) => return Err(classify(&e)),
    };
    let mut early = Vec::new();
    while let Ok(SessionEvent::Output(chunk)) = events.try_recv() {
        early.extend_from_slice(&chunk);
    }
    let log = pods
        .logs(
            &args.pod,
            &LogParams {
                container: Some(name.to_string()),
                ..Default::default()
            },
        )
        .await
        .unwrap_or_default();
    let mut out = std::io::stdout();
    let _ = out.write_all(log.as_bytes());
    let skip = session::overlap(log.as_bytes(), &early);
    let _ = out.write_all(&early[skip..]);
    let _ = out.flush();
    let Some(session) = session else {
        return Ok(());
    };

    let _raw_guard = if raw { RawMode::enable() } else { None };
    let input = session.input.clone();
    if args.interactive {
        tokio::spawn(forward_stdin(input.clone()));
    }
    if raw {
        tokio::spawn(forward_resizes(input));
    }
    while let Some(event) = events.recv().await {
        match event {
            SessionEvent::Output(chunk) => {
                let _ = out.write_all(&chunk);
                let _ = out.flush();
            }
            SessionEvent::Ended(_) => break,
        }
    }
    Ok(())
}

async fn forward_stdin(input: mpsc::UnboundedSender<SessionInput>) {
    let mut stdin = tokio::io::stdin();
    let mut buf = vec![0u8; 4096];
    while let Ok(n) = stdin.read(&mut buf).await {
        if n == 0
            || input
                .send(SessionInput::Data(Bytes::copy_from_slice(&buf[..n])))
                .is_err()
        {
            break;
        }
    }
}

async fn forward_resizes(input: mpsc::UnboundedSender<SessionInput>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut winch) = signal(SignalKind::window_change()) else {
        return;
    };
    while winch.recv().await.is_some() {
        if let Ok((cols, rows)) = crossterm::terminal::size()
            && input.send(SessionInput::Resize { cols, rows }).is_err()
        {
            break;
        }
    }
}

/// Restores cooked mode when dropped, however the attach ends.
struct RawMode;

impl RawMode {
    fn enable() -> Option<Self> {
        crossterm::terminal::enable_raw_mode().ok().map(|_| RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Final status: the container's exit code when it has ended, else 0.
async fn report(pods: &Api<Pod>, args: &DebugArgs, name: &str) -> Result<i32, Failure> {
    // The attach stream can end a moment before the kubelet reports the exit.
    let mut status = None;
    for _ in 0..20 {
        let pod = pods
            .get(&args.pod)
            .await
            .map_err(|e| api_failure(&e, &args.pod, ""))?;
        status = pod
            .status
            .and_then(|s| s.ephemeral_container_statuses)
            .and_then(|l| l.into_iter().find(|s| s.name == name));
        let running = status
            .as_ref()
            .and_then(|s| s.state.as_ref())
            .is_some_and(|s| s.running.is_some());
        if !running || args.no_attach {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let exit_code = status
        .as_ref()
        .and_then(|s| s.state.as_ref())
        .and_then(|s| s.terminated.as_ref())
        .map_or(0, |t| t.exit_code);
    if args.json() {
        let value = json!({
            "pod": args.pod,
            "container": name,
            "status": status,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else if args.no_attach {
        println!("{name}");
    }
    Ok(exit_code)
}

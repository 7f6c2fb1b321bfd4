//! `podbay debug POD …`: add a debug container, wait for it through a watch,
//! attach, and exit with its exit code. For scripts and for people who want
//! `kubectl debug` that shows everything and says clearly what went wrong.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use crate::cli::DebugArgs;
use crate::cluster::client::Target;
use crate::cluster::debug::{self, LaunchProblem, Startup};
use crate::cluster::errors;
use crate::cluster::replay::{ContainerRef, replay};
use crate::cluster::session::{self, SessionEvent, SessionInput, SessionSpec};
use crate::model::StartFailure;
use crate::model::debug::{Admission, DebugSpec, Profile};
use crate::model::session::{SessionEnd, SessionKind};
use crate::model::text::{Printable, sanitize};
use crate::term::Size;
use crate::term::modes::Modes;

/// Exit codes of podbay's own failures (the container's exit code is passed
/// through otherwise). Documented in README.
pub mod exit {
    /// The attach ended with the server's error and no exit code (as
    /// kubectl, which exits 1 there).
    pub const STREAM_FAILED: i32 = 1;
    /// The container's exit code, as the server reported it, is outside
    /// the 0–255 an exit status holds.
    pub const OUT_OF_RANGE: i32 = 125;
    pub const INVALID: i32 = 65;
    pub const NOT_FOUND: i32 = 66;
    pub const UNSUPPORTED: i32 = 69;
    pub const NOT_RUNNING: i32 = 70;
    pub const IMAGE: i32 = 71;
    pub const START_FAILED: i32 = 72;
    pub const UNREACHABLE: i32 = 74;
    /// EX_TEMPFAIL: the stream was cut while the container runs on.
    pub const CUT: i32 = 75;
    pub const CONFIG: i32 = 78;
    pub const FORBIDDEN: i32 = 77;
    pub const TIMEOUT: i32 = 124;
}

/// A failure: one sentence for stderr and its exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub sentence: Printable,
}

fn fail(code: i32, sentence: impl Into<Printable>) -> Failure {
    Failure {
        code,
        sentence: sentence.into(),
    }
}

/// What the config chooses when the command line does not.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// The first of `debug.images`.
    pub image: String,
    /// `debug.profile`.
    pub profile: Profile,
}

/// Runs the command; `Ok(code)` is the exit code to use.
pub async fn run(args: DebugArgs, defaults: &Defaults) -> Result<i32, Failure> {
    let default_image = defaults.image.as_str();
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

    // One deadline for the cluster and the container, as --timeout says.
    let deadline = tokio::time::Instant::now() + args.timeout;
    let pod = get_pod(&pods, &args, &namespace, &connection.server, deadline).await?;
    if args.list {
        return list(&pod, &args);
    }
    let image = match &args.image {
        Some(image) => image.clone(),
        None => {
            if !args.json() {
                eprintln!("podbay: using image {default_image} (pass --image to choose another)");
            }
            default_image.to_string()
        }
    };
    preflight(&pod, &args, &namespace)?;
    let reused = args
        .reuse
        .then(|| {
            let detail = crate::model::PodDetail::from_pod(&pod);
            let name = detail.reusable_debugger(&image, args.target.as_deref());
            name.map(str::to_string)
        })
        .flatten();
    let name = match reused {
        Some(name) => {
            if !args.json() {
                eprintln!(
                    "podbay: reusing debug container {name} of pod {namespace}/{} (same image and target, running)",
                    args.pod
                );
            }
            name
        }
        None => {
            let chosen = Chosen {
                image,
                profile: args.profile.unwrap_or(defaults.profile),
                explicit_profile: args.profile.is_some(),
            };
            launch(
                &connection.client,
                &pod,
                &args,
                &namespace,
                chosen,
                deadline,
            )
            .await?
        }
    };

    let end = if args.no_attach {
        None
    } else {
        attach(&connection.client, &namespace, &args, &name).await?
    };
    report(&pods, &args, &namespace, &name, end).await
}

/// The image and profile to launch with.
struct Chosen {
    image: String,
    profile: Profile,
    /// `--profile` was given: it is never swapped for another.
    explicit_profile: bool,
}

/// Adds the debug container and waits for it to run (or end).
async fn launch(
    client: &kube::Client,
    pod: &Pod,
    args: &DebugArgs,
    namespace: &str,
    chosen: Chosen,
    deadline: tokio::time::Instant,
) -> Result<String, Failure> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let taken = crate::model::debug::container_names(pod);
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
        None => crate::model::debug::unique_name(&taken, || fastrand::u64(..)),
    };
    let mut spec = DebugSpec {
        name: name.clone(),
        image: chosen.image,
        target: args.target.clone(),
        command: args.command.clone(),
        profile: chosen.profile,
        env: args.env.clone(),
        stdin: args.interactive,
        tty: args.tty,
        mounts: args.mounts.clone(),
        workdir: args.workdir.clone(),
        pull_policy: args.pull_policy.clone(),
    };
    spec.profile = admitted_profile(
        client,
        pod,
        &spec,
        namespace,
        chosen.explicit_profile,
        args,
        deadline,
    )
    .await?;
    let launched = answered(
        "the request to add the debug container (it may still be added: --list shows it)",
        args.timeout,
        deadline,
        async {
            debug::launch(&spec, client, namespace, &args.pod)
                .await
                .map_err(|e| launch_failure(&e, &args.pod, namespace))
        },
    )
    .await?;
    // As kubectl prints them, `-o json` included: they are not the output.
    for warning in &launched.warnings {
        eprintln!("Warning: {}", sanitize(warning));
    }
    if !args.json() {
        eprintln!(
            "podbay: added debug container {name} to pod {namespace}/{}; waiting for it to start…",
            args.pod
        );
    }

    let quiet = args.json();
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    let startup = debug::await_startup(&pods, &args.pod, &name, left, |reason, message| {
        // A reason that will not clear ends the wait, and its failure says
        // it: said here too, it was printed twice.
        let hopeless = matches!(
            crate::model::classify_waiting(reason, message),
            crate::model::Waiting::Hopeless(_)
        );
        if !quiet && !hopeless {
            let detail = if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            };
            eprintln!(
                "podbay: {name} is waiting: {}",
                sanitize(&format!("{reason}{detail}"))
            );
        }
    })
    .await;
    match startup {
        Startup::Running => Ok(name),
        Startup::Terminated {
            exit_code,
            reason,
            message,
        } if reason == "StartError" => Err(fail(
            exit::START_FAILED,
            format!(
                "The debug container could not start ({reason}, exit code {exit_code}): {message}. Check the command and that the image has it."
            ),
        )),
        Startup::Terminated { .. } => Ok(name),
        Startup::Stuck {
            failure: StartFailure::Image,
            reason,
            message,
        } => Err(fail(
            exit::IMAGE,
            format!(
                "The debug container's image cannot be pulled: {reason}: {}. Check the image name and the pod's image pull secrets.",
                message.trim_end_matches('.')
            ),
        )),
        Startup::Stuck {
            failure: StartFailure::Start,
            reason,
            message,
        } => Err(fail(
            exit::START_FAILED,
            format!(
                "The debug container cannot be created: {reason}: {}.",
                message.trim_end_matches('.')
            ),
        )),
        Startup::TimedOut { reason, .. } => {
            let still = if reason.is_empty() {
                "has no status yet".to_string()
            } else {
                format!("is still {reason}")
            };
            Err(fail(
                exit::TIMEOUT,
                format!(
                    "Timed out after {}: the debug container {still}.",
                    humantime(args.timeout)
                ),
            ))
        }
        Startup::Refused { sentence } => Err(fail(
            exit::FORBIDDEN,
            format!(
                "{} The debug container {name} was added, but podbay cannot see it start.",
                sentence.trim_end()
            ),
        )),
        Startup::PodGone => Err(fail(
            exit::NOT_FOUND,
            format!(
                "Pod {namespace}/{} went away while the debug container was starting.",
                args.pod
            ),
        )),
    }
}

/// `work`, unless `deadline` comes first: then exit 124, naming the `step`
/// the server did not answer (a request never answered, answered in half,
/// or a byte a second).
async fn answered<T>(
    step: &str,
    timeout: Duration,
    deadline: tokio::time::Instant,
    work: impl std::future::Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    tokio::time::timeout_at(deadline, work)
        .await
        .unwrap_or_else(|_| {
            Err(fail(
                exit::TIMEOUT,
                format!(
                    "Timed out after {}: the API server did not answer {step}.",
                    humantime(timeout)
                ),
            ))
        })
}

/// Reads the pod. An unreachable server is retried with back-off until
/// `deadline`, saying so once; a server that never answers is given up on
/// at the same deadline; anything else fails at once.
async fn get_pod(
    pods: &Api<Pod>,
    args: &DebugArgs,
    namespace: &str,
    server: &str,
    deadline: tokio::time::Instant,
) -> Result<Pod, Failure> {
    let mut pause = Duration::from_millis(500);
    // Why the last try failed: when the deadline passes while waiting to
    // retry, that is what to report, not a server that never answered.
    let mut last_cause: Option<String> = None;
    loop {
        let error = match tokio::time::timeout_at(deadline, pods.get(&args.pod)).await {
            Ok(Ok(pod)) => return Ok(pod),
            Ok(Err(e)) if errors::unreachable(&e) => e,
            Ok(Err(e)) => return Err(api_failure(&e, &args.pod, namespace)),
            Err(_deadline) => {
                let timeout = humantime(args.timeout);
                return Err(fail(
                    exit::UNREACHABLE,
                    match last_cause {
                        Some(cause) => format!(
                            "Cannot reach the API server at {server}: {cause}. Gave up after {timeout}; check the context, your network or VPN."
                        ),
                        None => format!(
                            "The API server at {server} did not answer within {timeout}; check the context, your network or VPN, or give it longer with --timeout."
                        ),
                    },
                ));
            }
        };
        let cause = sanitize(&errors::root_cause(&error)).into_owned();
        if last_cause.is_none() && !args.json() {
            eprintln!(
                "podbay: cannot reach the API server at {server} ({cause}); retrying for up to {}…",
                humantime(args.timeout)
            );
        }
        last_cause = Some(cause);
        tokio::time::sleep_until(deadline.min(tokio::time::Instant::now() + pause)).await;
        pause = (pause * 2).min(Duration::from_secs(5));
    }
}

/// `--list`: the pod's debug containers with their state, image and target.
fn list(pod: &Pod, args: &DebugArgs) -> Result<i32, Failure> {
    let detail = crate::model::PodDetail::from_pod(pod);
    let debug: Vec<_> = detail
        .containers
        .iter()
        .filter(|c| c.kind == crate::model::ContainerKind::Ephemeral)
        .collect();
    let mut out = std::io::stdout();
    if args.json() {
        let statuses = pod
            .status
            .as_ref()
            .and_then(|s| s.ephemeral_container_statuses.clone())
            .unwrap_or_default();
        let items: Vec<_> = debug
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "image": c.image,
                    "target": c.target,
                    "state": statuses.iter().find(|s| s.name == c.name).and_then(|s| s.state.clone()),
                })
            })
            .collect();
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&items).unwrap_or_default()
        );
        return Ok(0);
    }
    let rows: Vec<[String; 4]> = debug
        .iter()
        .map(|c| {
            [
                c.name.clone(),
                c.state.summary(),
                c.image.clone(),
                c.target.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let header = ["NAME", "STATE", "IMAGE", "TARGET"].map(String::from);
    let widths: Vec<usize> = (0..4)
        .map(|i| {
            std::iter::once(&header)
                .chain(&rows)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(&header).chain(&rows) {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("   ").trim_end());
    }
    if rows.is_empty() {
        eprintln!("podbay: pod {} has no debug containers.", args.pod);
    }
    Ok(0)
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
        // The API lets a debug container target init containers too.
        let containers: Vec<String> = spec
            .map(|s| {
                let init = s.init_containers.iter().flatten();
                s.containers
                    .iter()
                    .chain(init)
                    .map(|c| c.name.clone())
                    .collect()
            })
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
    match crate::model::PodDetail::from_pod(pod).why_no_debug_container_starts() {
        Some(why) => Err(fail(
            exit::NOT_RUNNING,
            format!("Pod {namespace}/{name} {why}."),
        )),
        None => Ok(()),
    }
}

/// The profile to send: the chosen one if the namespace's enforced Pod
/// Security level admits it; else, unless it was asked for explicitly, the
/// strongest one it admits (said on stderr). Nothing is decided when the
/// namespace cannot be read: the cluster's answer will say.
async fn admitted_profile(
    client: &kube::Client,
    pod: &Pod,
    spec: &DebugSpec,
    namespace: &str,
    explicit: bool,
    args: &DebugArgs,
    deadline: tokio::time::Instant,
) -> Result<Profile, Failure> {
    // A few seconds at most, within --timeout: this only saves a refusal.
    let limit =
        Duration::from_secs(5).min(deadline.saturating_duration_since(tokio::time::Instant::now()));
    let Some(policy) = debug::read_policy(client, namespace, limit).await else {
        return Ok(spec.profile);
    };
    let admission = spec.admission(&policy, pod);
    let level = policy.enforce.level.name();
    match &admission {
        Admission::Admitted => Ok(spec.profile),
        Admission::Refused {
            passing: Some(passing),
            ..
        } if !explicit => {
            if !args.json() {
                eprintln!(
                    "podbay: {namespace} enforces Pod Security \"{level}\": using --profile={passing} instead of {}",
                    spec.profile
                );
            }
            Ok(*passing)
        }
        refused => {
            let sentence =
                crate::model::debug::refusal_sentence(namespace, &policy, spec.profile, refused)
                    .unwrap_or_default();
            let hint = match refused {
                Admission::Refused {
                    passing: Some(p), ..
                } => format!(" Nothing was sent; run again with --profile={p}."),
                _ => " Nothing was sent.".to_string(),
            };
            Err(fail(exit::FORBIDDEN, format!("{sentence}{hint}")))
        }
    }
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
    let sentence = debug::describe_launch_error(error, namespace, pod).sentence;
    let code = match debug::launch_problem(error) {
        LaunchProblem::Unsupported => exit::UNSUPPORTED,
        LaunchProblem::Invalid => exit::INVALID,
        LaunchProblem::Forbidden => exit::FORBIDDEN,
        LaunchProblem::Other => classify(error).code,
    };
    fail(code, sentence)
}

fn classify(error: &kube::Error) -> Failure {
    let crate::model::problem::Problem {
        sentence, denied, ..
    } = errors::describe(error);
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
/// its log), then streams, so nothing it printed is lost. With a terminal
/// everything is one stream on stdout; without one, the container's stderr
/// goes to podbay's stderr.
async fn attach(
    client: &kube::Client,
    namespace: &str,
    args: &DebugArgs,
    name: &str,
) -> Result<Option<SessionEnd>, Failure> {
    let raw = args.tty && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let size =
        crossterm::terminal::size().map_or(Size::DEFAULT, |(cols, rows)| Size::new(cols, rows));
    let (events_tx, mut events) = mpsc::channel(256);
    let spec = SessionSpec {
        namespace: namespace.to_string(),
        pod: args.pod.clone(),
        container: name.to_string(),
        kind: SessionKind::Attach,
        size,
        keepalive: Some(session::DEFAULT_KEEPALIVE),
        tty: args.tty,
        stdin: args.interactive,
    };
    let (input, inputs) = mpsc::unbounded_channel();
    // Connecting and reading what it printed before get --timeout of their
    // own: the container is running, this is a new step.
    let deadline = tokio::time::Instant::now() + args.timeout;
    let session = answered("the attach", args.timeout, deadline, async {
        match session::open(client.clone(), spec, inputs, events_tx).await {
            Ok(s) => Ok(Some(s)),
            // Exited before we could attach: its whole output is in the log.
            Err(kube::Error::Api(status)) if status.code == 400 => Ok(None),
            Err(e) => Err(classify(&e)),
        }
    })
    .await?;
    let at = ContainerRef {
        namespace,
        pod: &args.pod,
        container: name,
    };
    let first = answered(
        "the read of the debug container's log",
        args.timeout,
        deadline,
        async { Ok(replay(client, at, args.tty, &mut events).await) },
    )
    .await?;
    // With -o json, stdout is the JSON document alone: the container's
    // output goes to stderr.
    let mut out: Box<dyn Write> = if args.json() {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    };
    let mut err = std::io::stderr();
    // What the container's output leaves on in the user's terminal.
    let mut modes = Modes::default();
    modes.observe(&first.out.log);
    modes.observe(&first.out.after);
    for (sink, stream) in [
        (&mut *out as &mut dyn Write, &first.out),
        (&mut err, &first.err),
    ] {
        let _ = sink.write_all(&stream.log);
        let _ = sink.write_all(&stream.after);
        let _ = sink.flush();
    }
    // Kept until the end: dropping it ends the stream.
    let Some(_session) = session.filter(|_| first.end.is_none()) else {
        return Ok(first.end);
    };

    let mut raw_guard = if raw { RawMode::enable(modes) } else { None };
    if args.interactive {
        tokio::spawn(forward_stdin(input.clone()));
    }
    if raw {
        tokio::spawn(forward_resizes(input));
    }
    while let Some(event) = events.recv().await {
        let (sink, chunk): (&mut dyn Write, _) = match event {
            SessionEvent::Output(chunk) => {
                if let Some(guard) = raw_guard.as_mut() {
                    guard.modes.observe(&chunk);
                }
                (&mut *out, chunk)
            }
            SessionEvent::Stderr(chunk) => (&mut err, chunk),
            SessionEvent::Ended(end) => return Ok(Some(end)),
            // The user's own terminal shows what it shows; --timeout and
            // the keepalive end a dead stream.
            SessionEvent::Unanswered(_) => continue,
        };
        let _ = sink.write_all(&chunk);
        let _ = sink.flush();
    }
    Ok(None)
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
            && input
                .send(SessionInput::Resize(Size::new(cols, rows)))
                .is_err()
        {
            break;
        }
    }
}

/// Restores the user's terminal when dropped, however the attach ends:
/// the modes the container's output left on (alternate screen, mouse,
/// bracketed paste, hidden cursor, …) are turned off, then cooked mode.
struct RawMode {
    modes: Modes,
}

impl RawMode {
    fn enable(modes: Modes) -> Option<Self> {
        crossterm::terminal::enable_raw_mode()
            .ok()
            .map(|_| RawMode { modes })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let mut out = std::io::stdout();
        let _ = out.write_all(&self.modes.restore());
        let _ = out.flush();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Final status: the container's exit code when it has ended (from the
/// pod, else from the stream's `Failure` status), else 0; exit 75 when the
/// stream was cut while the container runs on.
async fn report(
    pods: &Api<Pod>,
    args: &DebugArgs,
    namespace: &str,
    name: &str,
    end: Option<SessionEnd>,
) -> Result<i32, Failure> {
    // The attach stream can end a moment before the kubelet reports the exit.
    let mut status = None;
    let deadline = tokio::time::Instant::now() + args.timeout;
    for _ in 0..20 {
        let pod = answered(
            "the read of the pod's final status",
            args.timeout,
            deadline,
            async { Ok(pods.get(&args.pod).await) },
        )
        .await?
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
    let terminated = status
        .as_ref()
        .and_then(|s| s.state.as_ref())
        .and_then(|s| s.terminated.as_ref())
        .map(|t| t.exit_code);
    let from_stream = end.as_ref().and_then(|e| e.exit_code).filter(|c| *c != 0);
    if let Some(end) = end
        .as_ref()
        .filter(|e| e.disconnected && terminated.is_none())
        && !args.no_attach
    {
        let pod = &args.pod;
        return Err(fail(
            exit::CUT,
            format!(
                "The connection to debug container {name} was cut ({}); it is still running. \
                 Attach again with `kubectl attach -it {pod} -c {name} -n {namespace}`.",
                end.reason.trim_start_matches("disconnected: ")
            ),
        ));
    }
    // A Failure without an exit code is the server's error, not a success.
    if let Some(end) = end
        .as_ref()
        .filter(|e| !e.disconnected && e.exit_code.is_none())
        && terminated.is_none()
        && !args.no_attach
    {
        return Err(fail(
            exit::STREAM_FAILED,
            format!(
                "The attach to debug container {name} ended with an error and no exit code ({}).",
                end.reason.trim_start_matches("failed: ")
            ),
        ));
    }
    let exit_code = terminated.or(from_stream).unwrap_or(0);
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
    if !(0..=255).contains(&exit_code) {
        return Err(fail(
            exit::OUT_OF_RANGE,
            format!(
                "Debug container {name} exited with code {exit_code}, which no exit status can hold (0–255)."
            ),
        ));
    }
    Ok(exit_code)
}

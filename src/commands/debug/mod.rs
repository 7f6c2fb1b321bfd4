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

use crate::cli::{DebugArgs, DebugTarget};
use crate::cluster::debug::{self, LaunchProblem, Startup};
use crate::cluster::errors;
use crate::cluster::replay::{ContainerRef, replay};
use crate::cluster::session::{self, SessionEvent, SessionInput, SessionSpec};
pub use crate::engine::outcome::{Failure, classify, exit, fail};

mod attach;
use crate::model::StartFailure;
use crate::model::debug::{DebugSpec, Profile};
use crate::model::launch::{self, LaunchPlan, LaunchRefusal, LaunchRequest, RefusalKind};
use crate::model::session::{SessionEnd, SessionKind};
use crate::model::text::{Printable, sanitize};
use crate::term::Size;
use crate::term::modes::Modes;
use attach::exec_in;
pub(super) use attach::{Stream, attach, final_state};

/// What the config chooses when the command line does not.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// The first of `debug.images`.
    pub image: String,
    /// `debug.profile`.
    pub profile: Profile,
}

/// Runs the command in one pod; `Ok(code)` is the exit code to use (the
/// container's). Several pods, a selector or an owner are
/// [`fleet::run`](super::fleet::run)'s.
pub async fn run(args: DebugArgs, defaults: &Defaults) -> Result<i32, Failure> {
    // A signal drops the run: its raw mode, and the modes the container's
    // output turned on in the user's terminal, are restored as it goes.
    let stopped = crate::tty::termination();
    tokio::select! {
        done = run_one(args, defaults) => done,
        () = stopped => {
            let signal = crate::tty::stopped_by().unwrap_or(nix::libc::SIGINT);
            Err(fail(
                128 + signal,
                "Interrupted; a debug container already added runs on (ephemeral containers cannot be removed: --reuse attaches to it again).",
            ))
        }
    }
}

async fn run_one(args: DebugArgs, defaults: &Defaults) -> Result<i32, Failure> {
    let connection = connect(&args).await?;
    let namespace = args
        .namespace
        .clone()
        .unwrap_or(connection.namespace.clone());
    let pod = match args.pods.first() {
        Some(DebugTarget::Pod(name)) => name.clone(),
        _ => String::new(),
    };
    let voice = if args.json() {
        Voice::Quiet
    } else {
        Voice::Stderr
    };
    let job = Job {
        args: &args,
        pod,
        namespace,
        target: args.target.clone(),
        voice,
        input: None,
        policies: None,
    };
    // One deadline for the cluster and the container, as --timeout says.
    let deadline = tokio::time::Instant::now() + args.timeout;
    let pod = get_pod(&connection.client, &job, &connection.server, deadline).await?;
    let job = Job {
        target: if args.target_all {
            first_container(&pod)
        } else {
            job.target
        },
        ..job
    };
    if args.list {
        return list(&pod, &job);
    }
    let image = chosen_image(&args, defaults, &job.voice);
    let mut out: Box<dyn Write + Send> = if args.json() {
        // With -o json, stdout is the JSON document alone: the container's
        // output goes to stderr.
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    };
    let mut err = std::io::stderr();
    let sinks = Sinks {
        out: &mut *out,
        err: &mut err,
    };
    let finished = run_job(
        &connection.client,
        &job,
        &pod,
        image,
        defaults,
        sinks,
        deadline,
    )
    .await?;
    if args.json() {
        let value = finished.document(&job.namespace, &job.pod, args.no_attach);
        crate::print::stdout(&Printable::json(&value));
    } else if args.no_attach {
        crate::print::stdout(&Printable::from(&finished.container));
    }
    let exit_code = finished.exit_code;
    if !(0..=255).contains(&exit_code) {
        return Err(fail(
            exit::OUT_OF_RANGE,
            format!(
                "Debug container {} exited with code {exit_code}, which no exit status can hold (0–255).",
                finished.container
            ),
        ));
    }
    Ok(exit_code)
}

/// The kubeconfig's connection, or exit 78 with its sentence.
pub(super) async fn connect(
    args: &DebugArgs,
) -> Result<crate::cluster::client::Connection, Failure> {
    super::connect(
        args.clusters.kubeconfig.as_deref(),
        args.clusters.context.as_deref(),
    )
    .await
}

/// `--image`, else the config's first (said once).
pub(super) fn chosen_image(args: &DebugArgs, defaults: &Defaults, voice: &Voice) -> String {
    match &args.image {
        Some(image) => image.clone(),
        None => {
            voice.say(format!(
                "using image {} (pass --image to choose another)",
                defaults.image
            ));
            defaults.image.clone()
        }
    }
}

/// One pod's run: the pod, its namespace, the container to target, and
/// where podbay's own words about it go.
pub(super) struct Job<'a> {
    pub args: &'a DebugArgs,
    pub pod: String,
    pub namespace: String,
    pub target: Option<String>,
    pub voice: Voice,
    /// With `-i` for several pods: standard input, read once, given to
    /// each (then closed); `None` forwards podbay's stdin as it comes.
    pub input: Option<Bytes>,
    /// With several pods: namespaces' Pod Security read once for all.
    pub policies: Option<&'a Policies>,
}

/// Each namespace's Pod Security, read once for a run over many pods (the
/// choice of profile is per namespace; 5 000 pods read it 5 000 times).
#[derive(Default)]
pub(super) struct Policies(
    tokio::sync::Mutex<
        std::collections::HashMap<String, Option<crate::model::pod_security::Policy>>,
    >,
);

impl Policies {
    /// `namespace`'s, read the first time (pods of one namespace running at
    /// once wait for that one read).
    async fn get(
        &self,
        client: &kube::Client,
        namespace: &str,
        limit: Duration,
    ) -> Option<crate::model::pod_security::Policy> {
        let mut known = self.0.lock().await;
        if let Some(policy) = known.get(namespace) {
            return policy.clone();
        }
        let policy = debug::read_policy(client, namespace, limit).await;
        known.insert(namespace.to_string(), policy.clone());
        policy
    }
}

/// Where podbay's progress lines (`podbay: waiting…`) go.
pub(super) enum Voice {
    Stderr,
    /// `-o json`: only what must be said (the server's warnings).
    Quiet,
    /// Several pods: each line after its pod's prefix, on stderr.
    Prefixed(super::prefix::Prefix),
}

impl Voice {
    /// A progress line, made printable: any name or message from the
    /// cluster in it is shown escaped.
    pub fn say(&self, line: impl Into<Printable>) {
        let line = line.into();
        match self {
            Voice::Stderr => crate::print::say(&line),
            Voice::Quiet => {}
            Voice::Prefixed(prefix) => prefix.line_to_stderr(&format!("podbay: {line}").into()),
        }
    }

    /// A line said even under `-o json` (kubectl prints warnings there too).
    pub fn warn(&self, line: impl Into<Printable>) {
        let line = line.into();
        match self {
            Voice::Stderr | Voice::Quiet => crate::print::stderr(&line),
            Voice::Prefixed(prefix) => prefix.line_to_stderr(&line),
        }
    }
}

/// Where the container's output goes.
pub(super) struct Sinks<'a> {
    pub out: &'a mut (dyn Write + Send),
    pub err: &'a mut (dyn Write + Send),
}

/// How one pod's run ended: its debug container and exit code.
#[derive(Debug)]
pub(super) struct Finished {
    pub container: String,
    pub exit_code: i32,
    pub status: Option<k8s_openapi::api::core::v1::ContainerStatus>,
}

impl Finished {
    /// `-o json`'s document for one pod: the fields of a pod's entry in
    /// the many-pods document (namespace, pod, container, result,
    /// exitCode), and the container's status as the server reported it.
    pub fn document(&self, namespace: &str, pod: &str, left_running: bool) -> serde_json::Value {
        let running = left_running && !self.terminated();
        json!({
            "namespace": namespace,
            "pod": pod,
            "container": self.container,
            "result": if running { "running" } else { "exited" },
            "exitCode": (!running).then_some(self.exit_code),
            "status": self.status,
        })
    }

    /// The container has ended (its exit code is its own).
    pub fn terminated(&self) -> bool {
        self.status
            .as_ref()
            .and_then(|s| s.state.as_ref())
            .is_some_and(|s| s.terminated.is_some())
    }
}

/// `--target-all`: the pod's first (regular) container.
pub(super) fn first_container(pod: &Pod) -> Option<String> {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .map(|c| c.name.clone())
}

/// Checks, reuses or launches, attaches and reads the final state: one
/// pod's whole run after its pod was read.
pub(super) async fn run_job(
    client: &kube::Client,
    job: &Job<'_>,
    pod: &Pod,
    image: String,
    defaults: &Defaults,
    sinks: Sinks<'_>,
    deadline: tokio::time::Instant,
) -> Result<Finished, Failure> {
    let args = job.args;
    let detail = crate::model::PodDetail::from_pod(pod);
    let taken = crate::model::debug::container_names(pod);
    let profile = args.profile.unwrap_or(defaults.profile);
    let spec = DebugSpec {
        name: args
            .name
            .clone()
            .unwrap_or_else(|| crate::model::debug::unique_name(&taken, || fastrand::u64(..))),
        image,
        target: job.target.clone(),
        command: args.command.clone(),
        profile,
        env: args.env.clone(),
        stdin: args.interactive,
        stdin_once: closes_stdin(args, job.input.is_some()),
        tty: args.tty,
        mounts: args.mounts.clone(),
        workdir: args.workdir.clone(),
        pull_policy: args.pull_policy.clone(),
        run_as: None,
        custom: args.custom_profile(profile),
    };
    // Pod Security is read only when something may be sent: not for a pod
    // refused anyway, nor a debugger reused.
    let refused_anyway = detail
        .why_no_debug_container(spec.target.as_deref())
        .is_some();
    let reusable = args.reuse
        && detail
            .reusable_debugger(&spec.image, spec.target.as_deref(), &spec.mounts)
            .is_some();
    let policy = if refused_anyway || reusable {
        None
    } else {
        policy_of(client, job, deadline).await
    };
    let request = LaunchRequest {
        spec,
        profile_chosen: args.profile.is_some(),
        reuse: args.reuse,
    };
    let (name, reused) = match launch::plan(&detail, &request, policy.as_ref()) {
        LaunchPlan::Refused(refusal) => return Err(refused(&refusal, job, &request.spec)),
        LaunchPlan::Reattach(name) => {
            job.voice.say(format!(
                "reusing debug container {name} of pod {}/{} (same image, target and volumes, running)",
                job.namespace, job.pod
            ));
            (name, true)
        }
        LaunchPlan::Launch { spec, gave_way } => {
            if let (Some(from), Some(policy)) = (gave_way, &policy) {
                job.voice.say(format!(
                    "{} enforces Pod Security \"{}\": using --profile={} instead of {from}",
                    job.namespace,
                    policy.enforce.level.name(),
                    spec.profile
                ));
            }
            (launch(client, pod, job, *spec, deadline).await?, false)
        }
    };
    let mut stream = Stream::asked(args);
    if reused {
        stream = reused_stream(pod, &name, stream, job);
        if !args.command.is_empty() && !args.no_attach {
            return exec_in(client, job, &name, stream, sinks).await;
        }
    }
    // One pod's run says it; many pods' would say it for each.
    if let (Some(note), Voice::Stderr) = (no_input_note(args), &job.voice) {
        job.voice.say(note);
    }
    let end = if args.no_attach {
        None
    } else {
        attach(client, job, &name, stream, sinks).await?
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), &job.namespace);
    final_state(&pods, job, &name, end).await
}

/// A reused container's stream is what that container was made with: no
/// terminal if it has none (asking for one showed nothing), no input if
/// it takes none; said when it differs from what was asked.
fn reused_stream(pod: &Pod, name: &str, asked: Stream, job: &Job<'_>) -> Stream {
    let made = pod
        .spec
        .as_ref()
        .and_then(|s| s.ephemeral_containers.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.name == name));
    let has_tty = made.and_then(|c| c.tty).unwrap_or(false);
    let has_stdin = made.and_then(|c| c.stdin).unwrap_or(false);
    if asked.tty && !has_tty {
        job.voice.say(format!(
            "{name} has no terminal (it was made without -t): attached without one, your input goes line by line"
        ));
    }
    if asked.stdin && !has_stdin {
        job.voice.say(format!(
            "{name} takes no input (it was made without -i): its output only"
        ));
    }
    Stream {
        tty: asked.tty && has_tty,
        stdin: asked.stdin && has_stdin,
    }
}

/// Adds the debug container `spec` describes and waits for it to run (or
/// end).
async fn launch(
    client: &kube::Client,
    pod: &Pod,
    job: &Job<'_>,
    mut spec: DebugSpec,
    deadline: tokio::time::Instant,
) -> Result<String, Failure> {
    let args = job.args;
    let namespace = job.namespace.as_str();
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let name = spec.name.clone();
    let whose = job.target.as_deref().or(args.user_of.as_deref());
    if let Some(user) = spec.match_user_of(pod, whose, args.as_target_user) {
        job.voice.say(&match &spec.target {
            Some(_) => format!(
                "running as the target's user {user}, so its files under /proc/1/root are readable without SYS_PTRACE (--as-target-user=never to stay root)"
            ),
            None => format!(
                "running as container {}'s user {user}, so what it left on its volumes is read and written as it would (--as-target-user=never to stay root)",
                whose.unwrap_or_default()
            ),
        });
    }
    if let Some(warning) = uncovered_registry(client, namespace, pod, &spec.image).await {
        job.voice.warn(warning);
    }
    let launched = answered(
        "the request to add the debug container (it may still be added: --list shows it)",
        args.timeout,
        deadline,
        async {
            debug::launch(&spec, client, namespace, &job.pod)
                .await
                .map_err(|e| launch_failure(&e, &job.pod, namespace))
        },
    )
    .await?;
    // As kubectl prints them, `-o json` included: they are not the output.
    for warning in &launched.warnings {
        job.voice.warn(format!("Warning: {}", sanitize(warning)));
    }
    job.voice.say(format!(
        "added debug container {name} to pod {namespace}/{}; waiting for it to start…",
        job.pod
    ));

    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    let ephemeral = (crate::model::ContainerKind::Ephemeral, name.as_str());
    let mut progress = |reason: &str, message: &str| {
        if let Some(line) = waiting_line(&name, reason, message) {
            job.voice.say(line);
        }
    };
    let startup = debug::await_startup(&pods, &job.pod, ephemeral, left, &mut progress).await;
    let pulling = Pulling::of(&spec.image, pod, false)
        .offering(client, namespace, &startup)
        .await;
    started(
        startup,
        &name,
        "debug container",
        namespace,
        &job.pod,
        args.timeout,
        Some(&pulling),
    )?;
    Ok(name)
}

/// `NAME is waiting: REASON: MESSAGE`, as a container's wait goes on; none
/// for a reason that will not clear, which ends the wait with a failure
/// that says it (said here too, it was printed twice).
pub(crate) fn waiting_line(name: &str, reason: &str, message: &str) -> Option<String> {
    if matches!(
        crate::model::classify_waiting(reason, message),
        crate::model::Waiting::Hopeless(_)
    ) {
        return None;
    }
    let detail = if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    };
    Some(format!(
        "{name} is waiting: {}",
        sanitize(&format!("{reason}{detail}"))
    ))
}

/// The image being pulled and the pod's image pull secrets, which a
/// refusal for want of credentials names, with a Secret that would serve.
pub(super) struct Pulling<'a> {
    pub image: &'a str,
    pub secrets: Vec<String>,
    /// The pod is podbay's copy, whose own secrets its container pulls with.
    pub copy: bool,
    /// A Secret of the namespace holding credentials for the image.
    pub offer: Option<String>,
}

/// Before adding a debug container from a registry other than Docker
/// Hub: when the pod names image pull secrets, podbay may read them all,
/// and none holds credentials for that registry, the warning that the
/// pull will fail if the registry is private (a debug container pulls
/// with its pod's secrets).
async fn uncovered_registry(
    client: &kube::Client,
    namespace: &str,
    pod: &Pod,
    image: &str,
) -> Option<String> {
    let registry = crate::model::image::registry_of(image);
    let names: Vec<String> = pod
        .spec
        .as_ref()?
        .image_pull_secrets
        .as_ref()?
        .iter()
        .map(|s| s.name.clone())
        .collect();
    if registry == "docker.io" || names.is_empty() {
        return None;
    }
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(client.clone(), namespace);
    let read = crate::cluster::deadline::Deadline::none()
        .within(Some(OFFER_WITHIN))
        .bound(futures::future::join_all(
            names
                .iter()
                .map(|n| crate::cluster::objects::get(&secrets, n)),
        ))
        .await
        .ok()?;
    // One that cannot be read may hold them: say nothing rather than guess.
    let read: Vec<_> = read.into_iter().collect::<Result<_, _>>().ok()?;
    let covered = read.iter().any(|secret| {
        crate::model::pull_secret::credential_keys(secret)
            .iter()
            .any(|key| crate::model::pull_secret::covers(key, image))
    });
    (!covered).then(|| {
        format!(
            "podbay: none of the pod's image pull secrets ({}) holds credentials for {registry}; if it is private, {image} will not pull (a debug container pulls with its pod's secrets)",
            names.join(", ")
        )
    })
}

/// How long the search for a Secret that would serve may take.
const OFFER_WITHIN: Duration = Duration::from_secs(10);

impl<'a> Pulling<'a> {
    pub(super) fn of(image: &'a str, pod: &Pod, copy: bool) -> Self {
        let secrets = pod
            .spec
            .as_ref()
            .and_then(|s| s.image_pull_secrets.as_ref())
            .into_iter()
            .flatten()
            .map(|s| s.name.clone())
            .collect();
        Pulling {
            image,
            secrets,
            copy,
            offer: None,
        }
    }

    /// When the pull was refused for want of credentials: the first Secret
    /// of `namespace` whose credentials serve the image, if the user may
    /// list them (read only then, and within its own short bound).
    pub(super) async fn offering(
        mut self,
        client: &kube::Client,
        namespace: &str,
        startup: &Startup,
    ) -> Self {
        let refused = matches!(startup, Startup::Stuck {
            failure: StartFailure::Image,
            message,
            ..
        } if crate::model::image::needs_credentials(message));
        if !refused {
            return self;
        }
        let secrets: Api<k8s_openapi::api::core::v1::Secret> =
            Api::namespaced(client.clone(), namespace);
        let deadline = crate::cluster::deadline::Deadline::none().within(Some(OFFER_WITHIN));
        // Only pull secrets, by the field the apiserver selects them on: a
        // namespace's other Secrets (Helm keeps its releases there) can be
        // megabytes.
        for kind in crate::model::pull_secret::TYPES {
            let params = kube::api::ListParams::default().fields(&format!("type={kind}"));
            let listed = deadline
                .bound(crate::cluster::objects::list(&secrets, &params))
                .await;
            let Ok(Ok(list)) = listed else {
                break;
            };
            self.offer = list.iter().find_map(|secret| {
                crate::model::pull_secret::credential_keys(secret)
                    .iter()
                    .any(|key| crate::model::pull_secret::covers(key, self.image))
                    .then(|| secret.metadata.name.clone())
                    .flatten()
            });
            if self.offer.is_some() {
                break;
            }
        }
        self
    }
}

/// What a container's start means for the command: `Ok` once it runs (or
/// has already ended), else the failure that says why it will not.
pub(super) fn started(
    startup: Startup,
    name: &str,
    what: &str,
    namespace: &str,
    pod: &str,
    timeout: Duration,
    pull: Option<&Pulling<'_>>,
) -> Result<(), Failure> {
    match startup {
        Startup::Running => Ok(()),
        Startup::Terminated {
            exit_code,
            reason,
            message,
        } if reason == "StartError" => Err(fail(
            exit::START_FAILED,
            format!(
                "The {what} could not start ({reason}, exit code {exit_code}): {message}. Check the command and that the image has it."
            ),
        )),
        Startup::Terminated { .. } => Ok(()),
        Startup::Stuck {
            failure: StartFailure::Image,
            message,
            ..
        } if let Some(pull) = pull
            && crate::model::image::needs_credentials(&message) =>
        {
            Err(fail(
                exit::IMAGE,
                crate::model::image::PrivateImage {
                    image: pull.image,
                    namespace,
                    pod,
                    pull_secrets: &pull.secrets,
                    offer: pull.offer.as_deref(),
                    searched: true,
                    copy: pull.copy,
                }
                .sentence(),
            ))
        }
        Startup::Stuck {
            failure: StartFailure::Image,
            reason,
            message,
        } => Err(fail(
            exit::IMAGE,
            format!(
                "The {what}'s image cannot be pulled: {reason}: {}. Check the image name and the pod's image pull secrets.",
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
                "The {what} cannot be created: {reason}: {}.",
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
                    "Timed out after {}: the {what} {still}.",
                    humantime(timeout)
                ),
            ))
        }
        Startup::Refused { sentence } => Err(fail(
            exit::FORBIDDEN,
            format!(
                "{} The {what} {name} was {}, but podbay cannot see it start.",
                sentence.trim_end(),
                if what == "debug container" {
                    "added"
                } else {
                    "created"
                }
            ),
        )),
        Startup::PodGone => Err(fail(
            exit::NOT_FOUND,
            format!(
                "Pod {namespace}/{} went away while the {what} was starting.",
                pod
            ),
        )),
    }
}

/// `work`, unless `deadline` comes first: then exit 124, naming the `step`
/// the server did not answer (a request never answered, answered in half,
/// or a byte a second).
pub(super) async fn answered<T>(
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
pub(super) async fn get_pod(
    client: &kube::Client,
    job: &Job<'_>,
    server: &str,
    deadline: tokio::time::Instant,
) -> Result<Pod, Failure> {
    let args = job.args;
    let namespace = job.namespace.as_str();
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut pause = Duration::from_millis(500);
    // Why the last try failed: when the deadline passes while waiting to
    // retry, that is what to report, not a server that never answered.
    let mut last_cause: Option<String> = None;
    loop {
        let read = crate::cluster::objects::get(&pods, &job.pod);
        let error = match tokio::time::timeout_at(deadline, read).await {
            Ok(Ok(pod)) => return Ok(pod),
            Ok(Err(e)) if errors::unreachable(&e) => e,
            Ok(Err(e)) => return Err(api_failure(&e, &job.pod, namespace)),
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
        if last_cause.is_none() {
            job.voice.say(format!(
                "cannot reach the API server at {server} ({cause}); retrying for up to {}…",
                humantime(args.timeout)
            ));
        }
        last_cause = Some(cause);
        tokio::time::sleep_until(deadline.min(tokio::time::Instant::now() + pause)).await;
        pause = (pause * 2).min(Duration::from_secs(5));
    }
}

/// `--list`: the pod's debug containers, as `podbay debuggers` lists them.
fn list(pod: &Pod, job: &Job<'_>) -> Result<i32, Failure> {
    let found = crate::model::debuggers::of_pod(pod);
    if job.args.json() {
        let document = crate::model::debuggers::json(&found, &[pod]);
        crate::print::stdout(&Printable::json(&document));
        return Ok(0);
    }
    let rows = crate::model::debuggers::table(
        &found,
        jiff::Timestamp::now(),
        crate::model::debuggers::Scope::OnePod,
    );
    crate::print::stdout(&Printable::table(&rows));
    if found.is_empty() {
        crate::print::say(&format!("pod {} has no debug containers.", job.pod).into());
    }
    Ok(0)
}

pub(super) fn humantime(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{}m", secs / 60)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// Whether the container gets `stdinOnce`: input given whole to each of
/// many pods (`input_given`), or piped to one, ends with its end, so the
/// process reads EOF where kubectl 1.33 leaves `echo ps | kubectl debug -i`
/// waiting on a stdin nobody writes. Not for a terminal's stdin, nor one
/// podbay does not attach to (`--no-attach`: panes attach later and type
/// into it).
pub(super) fn closes_stdin(args: &DebugArgs, input_given: bool) -> bool {
    args.interactive && (input_given || !args.no_attach && !std::io::stdin().is_terminal())
}

/// Said when the container's default program (a shell, most often) gets
/// no input: without -i its stdin is empty, and a shell ends at once.
pub(super) fn no_input_note(args: &DebugArgs) -> Option<&'static str> {
    (!args.interactive && args.command.is_empty() && !args.no_attach && !args.reuse).then_some(
        "no -i: the container gets no input, so a shell in it ends at once (pass -it for a shell, or a command after --)",
    )
}

/// The namespace's Pod Security, read once for many pods; `None` when it
/// cannot be read (the cluster's answer will say) or in a few seconds at
/// most, within --timeout: it only saves a refusal.
async fn policy_of(
    client: &kube::Client,
    job: &Job<'_>,
    deadline: tokio::time::Instant,
) -> Option<crate::model::pod_security::Policy> {
    let namespace = job.namespace.as_str();
    let limit =
        Duration::from_secs(5).min(deadline.saturating_duration_since(tokio::time::Instant::now()));
    match job.policies {
        Some(policies) => policies.get(client, namespace, limit).await,
        None => debug::read_policy(client, namespace, limit).await,
    }
}

/// A refusal before anything was sent, as one sentence and its exit code.
fn refused(refusal: &LaunchRefusal, job: &Job<'_>, spec: &DebugSpec) -> Failure {
    let code = match refusal.kind {
        RefusalKind::Unsupported => exit::UNSUPPORTED,
        RefusalKind::Invalid => exit::INVALID,
        RefusalKind::NotRunning => exit::NOT_RUNNING,
        RefusalKind::Forbidden => exit::FORBIDDEN,
    };
    let sentence = refusal.sentence(&format!("Pod {}/{}", job.namespace, job.pod));
    let hint = match (refusal.kind, refusal.passing) {
        (RefusalKind::Forbidden, Some(p)) if spec.custom.is_some() => format!(
            " Nothing was sent; run again without --custom (--profile={p} passes), or in a namespace that admits it."
        ),
        (RefusalKind::Forbidden, Some(p)) => {
            format!(" Nothing was sent; run again with --profile={p}.")
        }
        (RefusalKind::Forbidden, None) => " Nothing was sent.".to_string(),
        _ => String::new(),
    };
    fail(code, sanitize(&format!("{sentence}{hint}")).into_owned())
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

//! `podbay debug node/NAME` and `podbay debug POD --copy-to NAME`: a pod
//! of podbay's own (on the node with its namespaces and root; or a copy of
//! the pod whose container runs what you give), checked against the
//! namespace's Pod Security, created, attached to, and deleted when the
//! session ends, however it ends (`--keep` keeps it, and says how to
//! delete it).

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use super::debug::{
    Defaults, Failure, Finished, Job, Pulling, Sinks, Stream, Voice, answered, attach,
    chosen_image, classify, closes_stdin, connect, exit, fail, final_state, first_container,
    started,
};
use crate::cli::{DebugArgs, DebugTarget};
use crate::cluster::deadline::{self, CleanUpCut, clean_up};
use crate::cluster::{debug, debug_pod};
use crate::model::debug::Profile;
use crate::model::debug_pod::{self as model, Keep, NodeDebug, PodCopy};
use crate::model::pod_security::Policy;
use crate::model::text::{Printable, sanitize};

/// The pod to create and the container to attach to.
struct Planned {
    pod: Pod,
    container: String,
    /// What to call it in sentences: "node debug pod", "copy".
    what: &'static str,
    /// The pod a copy was made of, deleted after with `--replace`.
    replaces: Option<String>,
}

/// A copy's word in sentences (and how it is told from a node's pod).
const COPY: &str = "copy";

pub async fn run(args: DebugArgs, defaults: &Defaults) -> Result<i32, Failure> {
    if args.pods.len() > 1 || args.selector.is_some() {
        return Err(fail(
            exit::INVALID,
            "A node, or a pod to copy, is debugged alone: give one target, without -l.",
        ));
    }
    let connection = connect(&args).await?;
    let client = &connection.client;
    let namespace = args
        .namespace
        .clone()
        .unwrap_or(connection.namespace.clone());
    let voice = if args.json() {
        Voice::Quiet
    } else {
        Voice::Stderr
    };
    let deadline = tokio::time::Instant::now() + args.timeout;
    let limit = args.timeout.min(std::time::Duration::from_secs(5));
    let planned = match args.pods.first() {
        Some(DebugTarget::Node(node)) => {
            let planned = plan_node(client, &args, defaults, node, &voice, deadline).await?;
            let planned = with_custom(planned, &args, defaults)?;
            let policy = debug::read_policy(client, &namespace, limit).await;
            preflight(policy.as_ref(), &planned, &namespace)?;
            planned
        }
        Some(DebugTarget::Pod(pod)) => {
            let original = fetch_original(client, &args, pod, &namespace, deadline).await?;
            let policy = debug::read_policy(client, &namespace, limit).await;
            plan_copy(
                &original,
                &args,
                defaults,
                policy.as_ref(),
                &namespace,
                &voice,
            )?
        }
        _ => {
            return Err(fail(
                exit::INVALID,
                "--copy-to copies one pod: name it (NAME or pod/NAME).",
            ));
        }
    };
    let name = planned.pod.metadata.name.clone().unwrap_or_default();
    let create = answered(
        "the request to create the pod",
        args.timeout,
        deadline,
        async {
            debug_pod::create(client, &namespace, &planned.pod)
                .await
                .map_err(|e| create_failure(&e, &name, &namespace))
        },
    );
    let created = tokio::select! {
        created = create => created,
        stop = stopped() => Err(stop),
    };
    let created = match created {
        Ok(created) => created,
        // Unanswered or interrupted, the create may still land: it goes.
        Err(failure) if failure.code == exit::TIMEOUT || failure.code > 128 => {
            let _ = clean_up(debug_pod::delete(client, &namespace, &name)).await;
            return Err(failure);
        }
        Err(failure) => return Err(failure),
    };
    for warning in &created.warnings {
        voice.warn(format!("Warning: {}", sanitize(warning)));
    }
    let node = created
        .pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .map(|n| format!(" on node {n}"))
        .unwrap_or_default();
    voice.say(format!(
        "created {} {namespace}/{name}{node}; waiting for {} to start…",
        planned.what, planned.container
    ));
    if let Some(original) = &planned.replaces {
        let deleted = clean_up(debug_pod::delete(client, &namespace, original)).await;
        match deleted {
            Ok(Ok(())) => voice.say(format!(
                "deleted the original pod {namespace}/{original} (--replace)"
            )),
            Ok(Err(e)) => voice.warn(format!(
                "podbay: the original pod {namespace}/{original} was not deleted: {e}"
            )),
            Err(cut) => voice.warn(format!(
                "podbay: the original pod {namespace}/{original} may not be deleted: {}",
                cut_words(cut)
            )),
        }
    }
    if matches!(args.pods.first(), Some(DebugTarget::Node(_)))
        && let Some(note) = super::debug::no_input_note(&args)
    {
        voice.say(note);
    }
    let job = Job {
        args: &args,
        pod: name.clone(),
        namespace: namespace.clone(),
        target: None,
        voice,
        input: None,
        policies: None,
    };
    // The pod is deleted however the session ends: an error, its end, or
    // a signal to stop (see `stopped`).
    let session = session(client, &job, &planned, deadline);
    let outcome = tokio::select! {
        outcome = session => outcome,
        stop = stopped() => Err(stop),
    };
    // kubectl never deletes a copy: with --replace it is all that is left
    // of the pod, and --no-attach hands it over running.
    if args.pod_flags.keep || args.pod_flags.replace || args.no_attach {
        job.voice.say(format!(
            "kept {} {namespace}/{name} ({}): delete it with `kubectl delete pod -n {namespace} {name}`",
            planned.what,
            match (args.pod_flags.keep, args.pod_flags.replace) {
                (true, _) => "--keep",
                (false, true) => "--replace: it takes the original's place",
                (false, false) => "--no-attach",
            }
        ));
    } else {
        match clean_up(debug_pod::delete(client, &namespace, &name)).await {
            Ok(Ok(())) => job
                .voice
                .say(format!("deleted {} {namespace}/{name}", planned.what)),
            Ok(Err(e)) => job.voice.warn(format!(
                "podbay: {} {namespace}/{name} could not be deleted ({e}); delete it with `kubectl delete pod -n {namespace} {name}`",
                planned.what,
            )),
            Err(cut) => job.voice.warn(format!(
                "podbay: {} {namespace}/{name} may be left: {}; delete it with `kubectl delete pod -n {namespace} {name}`",
                planned.what,
                cut_words(cut)
            )),
        }
    }
    let finished = outcome?;
    if args.no_attach {
        crate::print::stdout(&Printable::from(&name));
    }
    if args.json() {
        let value = finished.document(&namespace, &name, args.no_attach);
        crate::print::stdout(&Printable::json(&value));
    }
    Ok(finished.exit_code.clamp(0, 255))
}

/// Waits for the container, attaches, and reads how it ended.
async fn session(
    client: &kube::Client,
    job: &Job<'_>,
    planned: &Planned,
    deadline: tokio::time::Instant,
) -> Result<Finished, Failure> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &job.namespace);
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    let regular = (
        crate::model::ContainerKind::Regular,
        planned.container.as_str(),
    );
    let mut progress = |reason: &str, message: &str| {
        if let Some(line) = super::debug::waiting_line(&planned.container, reason, message) {
            job.voice.say(line);
        }
    };
    let startup = debug::await_startup(&pods, &job.pod, regular, left, &mut progress).await;
    // A copy's image that wants credentials: say which secret would serve.
    let image = planned
        .pod
        .spec
        .iter()
        .flat_map(|s| &s.containers)
        .find(|c| c.name == planned.container)
        .and_then(|c| c.image.clone())
        .unwrap_or_default();
    let pulling = match planned.what {
        COPY => Some(
            Pulling::of(&image, &planned.pod, true)
                .offering(client, &job.namespace, &startup)
                .await,
        ),
        _ => None,
    };
    started(
        startup,
        &planned.container,
        planned.what,
        &job.namespace,
        &job.pod,
        job.args.timeout,
        pulling.as_ref(),
    )?;
    let end = if job.args.no_attach {
        None
    } else {
        let mut out = std::io::stdout();
        let mut err = std::io::stderr();
        let sinks = Sinks {
            out: &mut out,
            err: &mut err,
        };
        attach(
            client,
            job,
            &planned.container,
            Stream::asked(job.args),
            sinks,
        )
        .await?
    };
    final_state(&pods, job, &planned.container, end).await
}

/// The node debug pod for `node`, once the node is read (it must exist;
/// one that is not Ready is said, as the pod may never start there).
async fn plan_node(
    client: &kube::Client,
    args: &DebugArgs,
    defaults: &Defaults,
    node: &str,
    voice: &Voice,
    deadline: tokio::time::Instant,
) -> Result<Planned, Failure> {
    let found = answered("the read of the node", args.timeout, deadline, async {
        debug_pod::node(client, node).await.map_err(|e| match &e {
            kube::Error::Api(status) if status.code == 404 => fail(
                exit::NOT_FOUND,
                format!("Node {node} not found (`kubectl get nodes` lists them)."),
            ),
            _ => classify(&e),
        })
    })
    .await?;
    if let Some(why) = crate::model::node::not_ready(&found) {
        voice.warn(format!(
            "podbay: node {node} is not Ready ({}): its kubelet may never start the pod",
            sanitize(&why)
        ));
    }
    let profile = args.profile.unwrap_or(defaults.profile);
    voice.say(format!(
        "profile {}: {}",
        profile.name(),
        model::node_profile_gives(profile)
    ));
    let pod = model::node_debug_pod(&NodeDebug {
        node: node.to_string(),
        pod: model::node_debug_pod_name(node, || fastrand::u64(..)),
        container: args.name.clone().unwrap_or_else(|| "debugger".into()),
        image: chosen_image(args, defaults, voice),
        command: args.command.clone(),
        env: args.env.clone(),
        profile,
        stdin: args.interactive,
        stdin_once: closes_stdin(args, false),
        tty: args.tty,
        pull_policy: args.pull_policy.clone(),
    });
    let container = first_container(&pod).unwrap_or_default();
    Ok(Planned {
        pod,
        container,
        what: "node debug pod",
        replaces: None,
    })
}

fn cut_words(cut: CleanUpCut) -> String {
    match cut {
        CleanUpCut::Unanswered => format!(
            "the server did not answer its deletion within {} s",
            deadline::CLEAN_UP.as_secs()
        ),
        CleanUpCut::Signalled => "podbay was stopped again before its deletion was answered".into(),
    }
}

/// Resolves when podbay is asked to stop: SIGTERM (`timeout`, a killed
/// job), SIGHUP (the terminal went), SIGQUIT, or SIGINT while podbay (not a
/// raw terminal) has the keyboard. It then ends with 128 + the signal, as a
/// shell reports it, after the pod is deleted.
async fn stopped() -> Failure {
    crate::tty::termination().await;
    let signal = crate::tty::stopped_by().unwrap_or(nix::libc::SIGINT);
    fail(128 + signal, "Interrupted.")
}

/// The pod to copy, as the cluster has it now.
async fn fetch_original(
    client: &kube::Client,
    args: &DebugArgs,
    pod: &str,
    namespace: &str,
    deadline: tokio::time::Instant,
) -> Result<Pod, Failure> {
    let job = Job {
        args,
        pod: pod.to_string(),
        namespace: namespace.to_string(),
        target: None,
        voice: Voice::Quiet,
        input: None,
        policies: None,
    };
    super::debug::get_pod(client, &job, "", deadline).await
}

/// The copy to create: made with the chosen profile, or with the one it
/// gives way to under the namespace's Pod Security (the rule the TUI's
/// `C` follows, [`model::admitted_copy_profile`]); a team's profile
/// (`--custom`) is never swapped. Refused with one sentence otherwise.
fn plan_copy(
    original: &Pod,
    args: &DebugArgs,
    defaults: &Defaults,
    policy: Option<&Policy>,
    namespace: &str,
    voice: &Voice,
) -> Result<Planned, Failure> {
    let chosen = args.profile.unwrap_or(defaults.profile);
    let planned = with_custom(
        build_copy(original, args, defaults, chosen, namespace, voice)?,
        args,
        defaults,
    )?;
    let Some(policy) = policy else {
        return Ok(planned);
    };
    if args.custom.is_some() {
        preflight(Some(policy), &planned, namespace)?;
        return Ok(planned);
    }
    let quiet = &Voice::Quiet;
    let build = |profile| {
        build_copy(original, args, defaults, profile, namespace, quiet)
            .ok()
            .map(|p| p.pod)
    };
    match model::admitted_copy_profile(policy, chosen, args.profile.is_some(), build) {
        Some(profile) if profile == chosen => Ok(planned),
        Some(profile) => {
            voice.say(format!(
                "{namespace} enforces Pod Security \"{}\": using --profile={profile} instead of {chosen}",
                policy.enforce.level.name(),
            ));
            build_copy(original, args, defaults, profile, namespace, quiet)
        }
        None => {
            preflight(Some(policy), &planned, namespace)?;
            Ok(planned)
        }
    }
}

/// The copy of `original` made with `profile`, as the flags describe it.
fn build_copy(
    original: &Pod,
    args: &DebugArgs,
    defaults: &Defaults,
    profile: Profile,
    namespace: &str,
    voice: &Voice,
) -> Result<Planned, Failure> {
    let flags = &args.pod_flags;
    let pod = original.metadata.name.clone().unwrap_or_default();
    // Only a new container needs an image; one of the pod's keeps its own.
    let adds = args
        .name
        .as_ref()
        .is_none_or(|n| !crate::model::debug::container_names(original).contains(n));
    let image = (args.image.is_some() || (adds && flags.set_image.is_empty()))
        .then(|| chosen_image(args, defaults, voice));
    let copy = PodCopy {
        name: flags.copy_to.clone().unwrap_or_default(),
        container: args.name.clone(),
        image,
        set_images: flags.set_image.clone(),
        command: args.command.clone(),
        env: args.env.clone(),
        stdin: args.interactive,
        stdin_once: closes_stdin(args, false),
        tty: args.tty,
        share_processes: flags.share_processes,
        same_node: flags.same_node,
        keep: Keep {
            labels: flags.keep_labels,
            annotations: flags.keep_annotations,
            liveness: flags.keep_liveness,
            readiness: flags.keep_readiness,
            startup: flags.keep_startup,
            init_containers: flags.keep_init_containers,
        },
        profile,
        pull_policy: args.pull_policy.clone(),
        pull_secrets: flags.pull_secret.clone(),
    };
    let (copied, container) =
        model::pod_copy(original, &copy, || fastrand::u64(..)).map_err(|e| {
            fail(
                exit::INVALID,
                format!("Cannot copy pod {namespace}/{pod}: {e}."),
            )
        })?;
    let container = container
        .or_else(|| first_container(&copied))
        .unwrap_or_default();
    Ok(Planned {
        pod: copied,
        container,
        what: COPY,
        replaces: flags.replace.then(|| pod.clone()),
    })
}

/// `--custom`, merged onto the container podbay attaches to, as kubectl
/// merges it after the profile.
fn with_custom(
    mut planned: Planned,
    args: &DebugArgs,
    defaults: &Defaults,
) -> Result<Planned, Failure> {
    let Some(custom) = args.custom_profile(args.profile.unwrap_or(defaults.profile)) else {
        return Ok(planned);
    };
    let containers = planned
        .pod
        .spec
        .as_mut()
        .map(|s| &mut s.containers)
        .into_iter()
        .flatten();
    for c in containers.filter(|c| c.name == planned.container) {
        let merged = serde_json::to_value(&*c)
            .map_err(|e| e.to_string())
            .and_then(|json| custom.merged(&json))
            .and_then(|json| serde_json::to_vec(&json).map_err(|e| e.to_string()))
            .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            .map_err(|e| fail(exit::INVALID, format!("--custom: {e}.")))?;
        *c = merged;
    }
    Ok(planned)
}

/// Pod Security, checked before the create: a refusal names the
/// namespace's label and what would be admitted. Nothing is decided when
/// the namespace could not be read: the cluster's answer will say.
fn preflight(policy: Option<&Policy>, planned: &Planned, namespace: &str) -> Result<(), Failure> {
    let Some(refusal) = policy.and_then(|p| p.pod_refusal(namespace, planned.what, &planned.pod))
    else {
        return Ok(());
    };
    let hint = match planned.what {
        "node debug pod" => "debug the node from a namespace that admits privileged pods (-n NAMESPACE, one without pod-security.kubernetes.io/enforce or with enforce=privileged), take --profile baseline (no node namespaces, no /host), or ask an admin to label one".to_string(),
        _ => "take a --profile the level admits (baseline or restricted), or copy into another namespace".to_string(),
    };
    Err(fail(exit::FORBIDDEN, format!("{refusal} Instead, {hint}.")))
}

fn create_failure(error: &kube::Error, pod: &str, namespace: &str) -> Failure {
    match error {
        kube::Error::Api(status) if status.code == 409 => fail(
            exit::INVALID,
            format!(
                "Pod {namespace}/{pod} already exists: give --copy-to another name, or delete it first."
            ),
        ),
        kube::Error::Api(status) if status.code == 422 || status.code == 400 => fail(
            exit::INVALID,
            format!(
                "The cluster refused the pod: {}.",
                sanitize(&status.message).trim_end_matches('.')
            ),
        ),
        _ => classify(error),
    }
}

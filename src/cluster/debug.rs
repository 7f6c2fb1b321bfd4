//! Sending a debug container: the one patch that adds it to a pod, the
//! namespace's Pod Security labels it is checked against, and the wait
//! for it to come up.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};

use crate::model::debug::DebugSpec;
use crate::model::pod_security::Policy;
use crate::model::problem::Problem;

/// Adds the container to `pod` with one patch of its
/// `ephemeralcontainers` subresource, touching nothing else. The
/// answer's `Warning` headers (Pod Security `warn`, any admission
/// webhook) come back too: kube-rs drops them.
pub async fn launch(
    spec: &DebugSpec,
    client: &kube::Client,
    namespace: &str,
    pod: &str,
) -> Result<Launched, kube::Error> {
    let request = kube::core::Request::new(format!("/api/v1/namespaces/{namespace}/pods"))
        .patch_subresource(
            "ephemeralcontainers",
            pod,
            // Named, so `podbay debuggers` (and anyone reading the pod's
            // managedFields) can tell podbay's debuggers from others.
            &PatchParams {
                field_manager: Some(crate::model::debuggers::PODBAY_MANAGER.into()),
                ..PatchParams::default()
            },
            &Patch::Strategic(spec.patch_body()),
        )
        .map_err(kube::Error::BuildRequest)?;
    let (pod, warnings) = super::warnings::send_warned(client, request).await?;
    Ok(Launched { pod, warnings })
}

/// The namespace's Pod Security labels, if the user may read it and it
/// answers within `limit`; else `None`, and the cluster's own refusal (if
/// any) will name the level.
pub async fn read_policy(
    client: &kube::Client,
    namespace: &str,
    limit: std::time::Duration,
) -> Option<Policy> {
    // Untyped: only its labels are read (no typed Namespace decoder).
    let kind = kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&());
    let namespaces: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &kind);
    let read = tokio::time::timeout(limit, super::objects::get(&namespaces, namespace));
    let labels = read.await.ok()?.ok()?.metadata.labels.unwrap_or_default();
    Some(Policy::from_labels(&labels))
}

/// A debug container the cluster accepted.
#[derive(Debug)]
pub struct Launched {
    pub pod: Pod,
    /// What admission warned about (`Warning: 299` headers), as sent.
    pub warnings: Vec<String>,
}

/// Where a freshly added debug container got to.
#[derive(Debug, Clone, PartialEq)]
pub enum Startup {
    Running,
    Terminated {
        exit_code: i32,
        reason: String,
        message: String,
    },
    /// Still waiting when time ran out, with the last waiting reason and message.
    TimedOut {
        reason: String,
        message: String,
    },
    /// Waiting for a reason that will not clear by itself (a bad image
    /// name, a pull the registry refused, a config the runtime cannot use).
    Stuck {
        failure: crate::model::StartFailure,
        reason: String,
        message: String,
    },
    PodGone,
    /// The pod may not be watched (a 403): the sentence naming the missing
    /// permission. The container was added; nothing says how it comes up.
    Refused {
        sentence: String,
    },
}

/// Watches the pod (never polls) until its container `name` (of `kind`:
/// an ephemeral one, or a regular one of a debug pod) runs, ends, or
/// `timeout` passes. `progress` sees every waiting reason change.
/// The same feed and the same reading of the pod as the TUI's terminals.
pub async fn await_startup(
    pods: &Api<Pod>,
    pod: &str,
    (kind, name): (crate::model::ContainerKind, &str),
    timeout: std::time::Duration,
    progress: &mut (dyn FnMut(&str, &str) + Send),
) -> Startup {
    use crate::cluster::feed;
    use crate::model::feed::Feed;
    use crate::model::{ContainerState, PodDetail, Waiting, classify_waiting};
    let config = feed::config().fields(&format!("metadata.name={pod}"));
    let (tx, mut updates) = feed::channel();
    let watch = feed::run(pods.clone(), config, None, PodDetail::from_pod, tx);
    tokio::pin!(watch);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut last = (String::new(), String::new());
    // The watch ends only when refused, and the refusal is the last update
    // it queues: it is read after everything before it, even once the
    // watch's future is done.
    let (mut watching, mut reading) = (true, true);
    loop {
        let detail = tokio::select! {
            _ = &mut deadline => return Startup::TimedOut { reason: last.0, message: last.1 },
            () = &mut watch, if watching => {
                watching = false;
                continue;
            }
            update = updates.recv(), if reading => match update {
                Some(Feed::Listed { mut rows, .. }) => match rows.pop() {
                    Some(detail) => detail,
                    None => return Startup::PodGone,
                },
                Some(Feed::Applied(detail)) => detail,
                Some(Feed::Deleted(_)) => return Startup::PodGone,
                // Refused, the watch ends: waiting on is waiting for nothing.
                Some(Feed::Forbidden(denied)) => {
                    return Startup::Refused { sentence: denied.sentence() };
                }
                Some(_) => continue,
                None => {
                    reading = false;
                    continue;
                }
            },
        };
        if detail.deleting {
            return Startup::PodGone;
        }
        let state = detail
            .containers
            .into_iter()
            .find(|c| c.kind == kind && c.name == name)
            .map(|c| c.state);
        match state {
            Some(ContainerState::Running { .. }) => return Startup::Running,
            Some(ContainerState::Terminated {
                exit_code,
                reason,
                message,
                ..
            }) => {
                return Startup::Terminated {
                    exit_code,
                    reason,
                    message,
                };
            }
            Some(ContainerState::Waiting { reason, message }) => {
                let now = (reason, message);
                if now != last {
                    progress(&now.0, &now.1);
                    last = now;
                }
                if let Waiting::Hopeless(failure) = classify_waiting(&last.0, &last.1) {
                    return Startup::Stuck {
                        failure,
                        reason: last.0,
                        message: last.1,
                    };
                }
            }
            Some(ContainerState::Unknown) | None => {}
        }
    }
}

/// What kind of failure adding a debug container was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchProblem {
    /// 404 on the subresource: the API is missing.
    Unsupported,
    /// 422: a field is invalid (with the field and reason in the sentence).
    Invalid,
    /// 401/403, including PodSecurity admission.
    Forbidden,
    /// Anything else (transport, server errors).
    Other,
}

/// What kind of failure a failed `ephemeralcontainers` patch was.
pub fn launch_problem(error: &kube::Error) -> LaunchProblem {
    match error {
        kube::Error::Api(status) if status.code == 404 && pod_gone(status) => LaunchProblem::Other,
        kube::Error::Api(status) if status.code == 404 => LaunchProblem::Unsupported,
        kube::Error::Api(status) if status.code == 422 => LaunchProblem::Invalid,
        kube::Error::Api(status) if status.code == 401 || status.code == 403 => {
            LaunchProblem::Forbidden
        }
        _ => LaunchProblem::Other,
    }
}

/// A 404 about the pod itself, not the subresource.
fn pod_gone(status: &kube::core::Status) -> bool {
    status.message.contains("not found") && status.message.contains("pods")
}

/// The problem a failed `ephemeralcontainers` patch is, in one sentence.
pub fn describe_launch_error(error: &kube::Error, namespace: &str, pod: &str) -> Problem {
    let mut refused_by = None;
    let sentence = match error {
        kube::Error::Api(status) if status.code == 404 && pod_gone(status) => {
            format!("Pod {namespace}/{pod} no longer exists.")
        }
        kube::Error::Api(status) if status.code == 404 => format!(
            "The cluster does not serve pods/ephemeralcontainers for {namespace}/{pod}: it is older than Kubernetes 1.23 or the EphemeralContainers feature is off."
        ),
        kube::Error::Api(status) if status.code == 422 => {
            let causes = status
                .details
                .as_ref()
                .map(|d| d.causes.clone())
                .unwrap_or_default();
            let detail = if causes.is_empty() {
                status.message.trim_end_matches('.').to_string()
            } else {
                causes
                    .iter()
                    .map(|c| format!("{}: {}", c.field, c.message.trim()))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            format!("The cluster rejected the debug container: {detail}.")
        }
        kube::Error::Api(status)
            if status.code == 403 && status.message.contains("violates PodSecurity") =>
        {
            refused_by = Policy::from_refusal(&status.message);
            let level = refused_by
                .as_ref()
                .map_or("restricted", |p| p.enforce.level.name());
            format!(
                "{}. The {level} profile meets that level.",
                status.message.trim_end_matches('.')
            )
        }
        other => return super::errors::describe(other),
    };
    Problem {
        sentence: sentence.into(),
        denied: None,
        refused_by,
    }
}

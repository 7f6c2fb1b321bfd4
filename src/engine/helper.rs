//! A debug container podbay adds for its own ends (the file browser's
//! reader, a capture's lease): sent, then watched until it runs, or the
//! one sentence (and exit code) why it will not.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use super::outcome::{Failure, exit, fail};
use crate::cluster::deadline::Deadline;
use crate::cluster::debug::{self as launching, Startup};
use crate::model::debug::DebugSpec;

/// Adds `spec`'s container to `namespace/pod` and waits up to `timeout`
/// for it to run; its name, or why not. Admission's warnings go to `say`.
pub async fn add_and_wait(
    client: &kube::Client,
    namespace: &str,
    pod: &str,
    spec: &DebugSpec,
    timeout: Duration,
    say: &(dyn Fn(String) + Send + Sync),
) -> Result<String, Failure> {
    let sent = Deadline::none()
        .within(Some(timeout))
        .bound(launching::launch(spec, client, namespace, pod))
        .await
        .map_err(|why| {
            fail(
                exit::TIMEOUT,
                format!(
                    "The API server did not answer the request to add debug container {} ({why}); it may still be added: watch the pod.",
                    spec.name,
                ),
            )
        })?;
    let launched = sent.map_err(|e| {
        let code = match launching::launch_problem(&e) {
            launching::LaunchProblem::Unsupported => exit::UNSUPPORTED,
            launching::LaunchProblem::Invalid => exit::INVALID,
            launching::LaunchProblem::Forbidden => exit::FORBIDDEN,
            launching::LaunchProblem::Other => super::outcome::classify(&e).code,
        };
        fail(
            code,
            launching::describe_launch_error(&e, namespace, pod).sentence,
        )
    })?;
    for warning in launched.warnings {
        say(format!("Warning: {warning}"));
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let ephemeral = (crate::model::ContainerKind::Ephemeral, spec.name.as_str());
    let name = &spec.name;
    match launching::await_startup(&pods, pod, ephemeral, timeout, &mut |_, _| {}).await {
        Startup::Running => Ok(name.clone()),
        Startup::Terminated {
            reason, message, ..
        } => Err(fail(
            exit::START_FAILED,
            format!("Debug container {name} ended before it could be used ({reason}: {message})."),
        )),
        Startup::Stuck {
            failure,
            reason,
            message,
        } => Err(fail(
            match failure {
                crate::model::StartFailure::Image => exit::IMAGE,
                _ => exit::START_FAILED,
            },
            format!(
                "Debug container {name} cannot start: {reason}: {}.",
                message.trim_end_matches('.')
            ),
        )),
        Startup::TimedOut { reason, .. } => Err(fail(
            exit::TIMEOUT,
            format!(
                "Debug container {name} did not start within {} s ({}).",
                timeout.as_secs(),
                if reason.is_empty() {
                    "no status yet"
                } else {
                    &reason
                }
            ),
        )),
        Startup::Refused { sentence } => Err(fail(exit::FORBIDDEN, sentence)),
        Startup::PodGone => Err(fail(
            exit::NOT_FOUND,
            format!("Pod {namespace}/{pod} went away."),
        )),
    }
}

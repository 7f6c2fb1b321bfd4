//! Where a pod's capture runs: a running debug container of the capture's
//! image, or one added with the least profile that captures under the
//! namespace's Pod Security (refused before anything is sent where none
//! can), ended with the capture.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use super::Where;
use crate::cluster::deadline::Deadline;
use crate::engine::outcome::{Failure, classify, exit, fail};
use crate::model::capture;
use crate::model::debug::DebugSpec;
use crate::model::launch::RefusalKind;

/// How long the namespace's Pod Security may take to read: it only saves
/// a refusal the server would make anyway.
const POLICY_WITHIN: Duration = Duration::from_secs(5);

/// Reads the pod and readies its capture within `timeout`; progress to `say`.
pub async fn prepare(
    client: &kube::Client,
    namespace: &str,
    pod: &str,
    image: &str,
    timeout: Duration,
    say: &(dyn Fn(String) + Send + Sync),
) -> Result<Where, Failure> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let manifest = Deadline::none()
        .within(Some(timeout))
        .bound(crate::cluster::objects::get(&pods, pod))
        .await
        .map_err(|why| {
            fail(
                exit::TIMEOUT,
                format!("The API server did not answer the read of pod {namespace}/{pod}: {why}."),
            )
        })?
        .map_err(|e| match &e {
            kube::Error::Api(status) if status.code == 404 => fail(
                exit::NOT_FOUND,
                format!("Pod {pod} not found in namespace {namespace}."),
            ),
            _ => classify(&e),
        })?;
    let detail = crate::model::PodDetail::from_pod(&manifest);
    let at = |container: &str, lease: bool| Where {
        namespace: namespace.to_string(),
        pod: pod.to_string(),
        container: container.to_string(),
        lease,
    };
    let (mut able, mut unable) = (None, None);
    for running in detail.reusable_debuggers(image, None, &[]) {
        if capture::can_capture(&manifest, running) {
            able = Some(running);
            break;
        }
        unable.get_or_insert(running);
    }
    if let Some(running) = able {
        say(format!(
            "capturing through debug container {running}, already running in pod {namespace}/{pod}"
        ));
        return Ok(at(running, false));
    }
    if let Some(running) = unable {
        say(format!(
            "debug container {running} runs without NET_RAW or not as root, so it cannot capture: adding another"
        ));
    }
    let policy =
        crate::cluster::debug::read_policy(client, namespace, POLICY_WITHIN.min(timeout)).await;
    let profile = capture::profile(&detail, policy.as_ref(), image).map_err(|refusal| {
        let code = match refusal.kind {
            RefusalKind::Unsupported => exit::UNSUPPORTED,
            RefusalKind::Invalid => exit::INVALID,
            RefusalKind::NotRunning => exit::NOT_RUNNING,
            RefusalKind::Forbidden => exit::FORBIDDEN,
        };
        fail(code, refusal.sentence(&format!("Pod {namespace}/{pod}")))
    })?;
    let taken = crate::model::debug::container_names(&manifest);
    let spec = DebugSpec {
        name: crate::model::debug::unique_name(&taken, || fastrand::u64(..)),
        image: image.to_string(),
        command: capture::lease_command(),
        profile,
        ..Default::default()
    };
    say(format!(
        "adding debug container {} to pod {namespace}/{pod} ({profile} profile); waiting for it to start…",
        spec.name
    ));
    let name =
        crate::engine::helper::add_and_wait(client, namespace, pod, &spec, timeout, say).await?;
    Ok(at(&name, true))
}

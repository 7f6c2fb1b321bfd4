//! Sending a debug pod (a node's, a copy): the create, with the warnings
//! admission sent back, and its deletion when the session ends.

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams, PostParams};

/// A pod the cluster accepted.
#[derive(Debug)]
pub struct Created {
    pub pod: Pod,
    /// What admission warned about (`Warning: 299` headers).
    pub warnings: Vec<String>,
}

/// Creates `pod` in `namespace`; kube-rs's `create` drops the warnings.
pub async fn create(
    client: &kube::Client,
    namespace: &str,
    pod: &Pod,
) -> Result<Created, kube::Error> {
    // Through a Value: the Pod's serializer into one is in the binary
    // already (describe, YAML), one into bytes would be a second copy.
    let body = serde_json::to_value(pod)
        .and_then(|pod| serde_json::to_vec(&pod))
        .map_err(kube::Error::SerdeError)?;
    let request = kube::core::Request::new(format!("/api/v1/namespaces/{namespace}/pods"))
        .create(
            &PostParams {
                field_manager: Some(crate::model::debuggers::PODBAY_MANAGER.into()),
                ..PostParams::default()
            },
            body,
        )
        .map_err(kube::Error::BuildRequest)?;
    let (pod, warnings) = super::warnings::send_warned(client, request).await?;
    Ok(Created { pod, warnings })
}

/// Deletes the debug pod now (its processes get no grace: the session
/// that wanted them is over).
pub async fn delete(client: &kube::Client, namespace: &str, name: &str) -> Result<(), kube::Error> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    match super::objects::delete(&pods, name, &DeleteParams::default().grace_period(0)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// The node, read to check it exists before a pod is bound to it; as its
/// JSON (a typed Node's decoder is ~80 KB of the binary).
pub async fn node(client: &kube::Client, name: &str) -> Result<serde_json::Value, kube::Error> {
    let kind = kube::api::ApiResource::erase::<Node>(&());
    let api: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &kind);
    Ok(super::objects::get(&api, name).await?.data)
}

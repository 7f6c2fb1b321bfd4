//! `PUT` and `PATCH` of a pod itself, as the apiserver's pod strategy
//! takes them: metadata (labels, annotations, owners) may change; the spec
//! only where the API lets it (`ValidatePodUpdate`), and the status is the
//! kubelet's (its own subresource), so a body's status is ignored. This is
//! what `kubectl label`, `kubectl annotate` and a second `kubectl apply`
//! send.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::SimState;
use super::ephemeral::{Request, Updated, apply_patch, check_identity, write_pod};
use super::status::{ApiError, FieldError};
use super::store::Key;

/// The spec fields an update may change, which upstream lists in its
/// refusal.
const MUTABLE: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

pub fn update(
    state: &Arc<SimState>,
    key: &Key,
    request: Request<'_>,
    dry_run: bool,
) -> Result<Updated, ApiError> {
    let submitted: Value = serde_json::from_slice(request.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))?;
    let step = |old: Value| next_pod(key, &request, &submitted, old);
    let (pod, warnings) = write_pod(state, key, dry_run, step)?;
    Ok(Updated { pod, warnings })
}

fn next_pod(
    key: &Key,
    request: &Request<'_>,
    submitted: &Value,
    old: Value,
) -> Result<(Value, Vec<String>), ApiError> {
    let mut new = if request.is_patch {
        apply_patch(request.content_type, &old, submitted)?
    } else {
        submitted.clone()
    };
    if !new.is_object() {
        return Err(ApiError::bad_request(
            "the request body is not a Pod object",
        ));
    }
    check_identity(key, &old, &new)?;
    // The server's own fields stay the server's.
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "resourceVersion",
        "namespace",
        "name",
    ] {
        match old["metadata"].get(field) {
            Some(value) => new["metadata"][field] = value.clone(),
            None => {
                if let Some(meta) = new["metadata"].as_object_mut() {
                    meta.remove(field);
                }
            }
        }
    }
    new["status"] = old["status"].clone();
    new["apiVersion"] = old["apiVersion"].clone();
    new["kind"] = old["kind"].clone();
    super::defaults::default_pod(&mut new);
    let typed = serde_json::to_vec(&new)
        .and_then(|json| serde_json::from_slice::<Pod>(&json))
        .map_err(|e| ApiError::bad_request(format!("error decoding the updated Pod: {e}")))?;
    let decoded = serde_json::to_value(&typed).unwrap_or_default();
    let warnings = request.fields.judge(
        "Pod",
        &serde_json::json!({"metadata": new["metadata"], "spec": new["spec"]}),
        &serde_json::json!({"metadata": decoded["metadata"], "spec": decoded["spec"]}),
    )?;
    // Pods the server made before defaulting grew are judged as defaulted.
    let mut before = old;
    super::defaults::default_pod(&mut before);
    if new["spec"] != before["spec"] {
        return Err(spec_change(key, &before["spec"], &new["spec"]));
    }
    Ok((new, warnings))
}

/// Why a spec change is refused. Upstream's refusal for a field the API
/// never lets change; for one it does (an image, a deadline, a
/// toleration), the simulator says plainly that its kubelet does not act
/// on it, rather than store a spec its containers would not follow.
fn spec_change(key: &Key, old: &Value, new: &Value) -> ApiError {
    let only_mutable = |spec: &Value| {
        let mut spec = spec.clone();
        for field in ["containers", "initContainers"] {
            for c in spec[field].as_array_mut().into_iter().flatten() {
                if let Some(c) = c.as_object_mut() {
                    c.remove("image");
                }
            }
        }
        if let Some(spec) = spec.as_object_mut() {
            for field in [
                "activeDeadlineSeconds",
                "tolerations",
                "terminationGracePeriodSeconds",
            ] {
                spec.remove(field);
            }
        }
        spec
    };
    if only_mutable(old) != only_mutable(new) {
        return ApiError::invalid("Pod", &key.name, &[FieldError::forbidden("spec", MUTABLE)]);
    }
    ApiError::new(
        422,
        "Invalid",
        format!(
            "Pod \"{}\" is invalid: spec: the simulated kubelet does not act on a changed image, deadline or toleration of a pod; delete the pod and create it again",
            key.name
        ),
    )
}

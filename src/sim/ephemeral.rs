//! The `pods/{name}/ephemeralcontainers` subresource: PUT and PATCH as the
//! apiserver's `EphemeralContainersREST` handles them. Only
//! `spec.ephemeralContainers` of the submitted pod is kept; everything else
//! (labels, annotations, other spec fields) is silently left as it was.

use std::sync::Arc;

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::SimState;
use super::create::pod_security_policy;
use super::status::ApiError;
use super::store::{Key, Kind, StoreError};
use super::validation;
use crate::model::smp;

/// What an accepted update answers: the pod, and admission's warnings
/// (sent as `Warning: 299` headers).
pub struct Updated {
    pub pod: Bytes,
    pub warnings: Vec<String>,
}

/// Applies a PUT (`is_patch == false`) or PATCH to the subresource and
/// returns the updated pod as JSON. New ephemeral containers are handed to
/// the kubelet; a dry run (`dryRun=All`) does every step but the store's
/// and the kubelet's, and answers the pod as it would be.
pub fn update(
    state: &Arc<SimState>,
    key: &Key,
    request: Request<'_>,
    dry_run: bool,
) -> Result<Updated, ApiError> {
    let policy = pod_security_policy(state, &key.namespace);
    let submitted: Value = serde_json::from_slice(request.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))?;
    let step = |old: Value| {
        let (pod, added, warnings) = next_pod(key, &request, &submitted, &policy, old)?;
        Ok((pod, (added, warnings)))
    };
    let (pod, (added, warnings)) = write_pod(state, key, dry_run, step)?;
    if !dry_run {
        for container in added {
            state
                .kubelet
                .ephemeral_container_added(key.clone(), container);
        }
    }
    Ok(Updated { pod, warnings })
}

/// The pod after `step`, stored, as the store answers it; in a dry run
/// the pod as `step` would leave it, with nothing stored. What the step
/// says beside the pod comes back with it.
pub(super) fn write_pod<T: Default>(
    state: &Arc<SimState>,
    key: &Key,
    dry_run: bool,
    step: impl Fn(Value) -> Result<(Value, T), ApiError>,
) -> Result<(Bytes, T), ApiError> {
    if dry_run {
        let current = state
            .store
            .get(Kind::Pod, key)
            .ok_or_else(|| ApiError::not_found("pods", &key.name))?;
        let (pod, said) = step(current.value())?;
        return Ok((
            Bytes::from(serde_json::to_vec(&pod).unwrap_or_default()),
            said,
        ));
    }
    let mut said = T::default();
    let result = state.store.update(Kind::Pod, key, None, |old| {
        let (pod, told) = step(old)?;
        said = told;
        Ok(pod)
    });
    match result {
        Ok(Ok(entry)) => Ok((entry.json.clone(), said)),
        Ok(Err(error)) => Err(error),
        Err(StoreError::NotFound) => Err(ApiError::not_found("pods", &key.name)),
        Err(StoreError::Conflict) => Err(ApiError::conflict("pods", &key.name)),
        Err(other) => Err(ApiError::internal(other.to_string())),
    }
}

/// A PUT's or a PATCH's body, as it came.
pub struct Request<'a> {
    pub is_patch: bool,
    pub content_type: &'a str,
    pub body: &'a [u8],
    pub fields: super::field_validation::Directive,
    /// Who writes: the request's `fieldManager`, else its user agent's
    /// first word, as the apiserver names managers.
    pub manager: &'a str,
}

/// The pod after the update, the containers it adds, and admission's
/// warnings: the apiserver's steps in order (patch, identity, defaulting,
/// decoding, validation, admission).
fn next_pod(
    key: &Key,
    request: &Request<'_>,
    submitted: &Value,
    policy: &crate::model::pod_security::Policy,
    old: Value,
) -> Result<(Value, Vec<Value>, Vec<String>), ApiError> {
    let submitted = if request.is_patch {
        apply_patch(request.content_type, &old, submitted)?
    } else {
        submitted.clone()
    };
    check_identity(key, &old, &submitted)?;
    let mut new = old.clone();
    let mut containers = submitted
        .pointer("/spec/ephemeralContainers")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    if !containers.is_array() && !containers.is_null() {
        return Err(ApiError::bad_request(
            "spec.ephemeralContainers: expected an array of EphemeralContainer objects",
        ));
    }
    // The whole submitted pod is defaulted, entries kept from before too,
    // so re-sending one without its defaults changes nothing.
    for c in containers.as_array_mut().into_iter().flatten() {
        super::defaults::default_container(c);
    }
    new["spec"]["ephemeralContainers"] = containers;
    // A field of the wrong type (`"stdin": "yes"`, `"command": false`, a
    // number out of int32 range) fails the apiserver's decoding of the
    // object: 400, before validation, and nothing is stored that clients
    // cannot read. From bytes, as every Pod in podbay is decoded: one
    // decoder in the binary (src/cluster/lenient.rs).
    let typed = serde_json::to_vec(&new)
        .and_then(|json| serde_json::from_slice::<Pod>(&json))
        .map_err(|e| ApiError::bad_request(format!("error decoding the updated Pod: {e}")))?;
    // Only what was sent is judged: the stored pod is the server's own.
    let decoded = serde_json::to_value(&typed).unwrap_or_default();
    let mut warnings = request.fields.judge(
        "Pod",
        &json!({"spec": {"ephemeralContainers": new["spec"]["ephemeralContainers"]}}),
        &json!({"spec": {"ephemeralContainers": decoded["spec"]["ephemeralContainers"]}}),
    )?;
    let errors = validation::validate_ephemeral_containers_update(&new, &old);
    if !errors.is_empty() {
        return Err(ApiError::invalid("Pod", &key.name, &errors));
    }
    let existing = names(&old);
    let added: Vec<Value> = new["spec"]["ephemeralContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| {
            c.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| !existing.contains(&n.to_string()))
        })
        .cloned()
        .collect();
    // Pod Security admission evaluates the whole pod when a container is
    // added (`isSignificantPodUpdate`), after validation.
    if !added.is_empty() {
        if let Some(message) = policy.refusal(&typed) {
            return Err(ApiError::admission_forbidden(message, &key.name));
        }
        warnings.extend(policy.warning(&typed));
        let generation = new.pointer("/metadata/generation").and_then(Value::as_i64);
        new["metadata"]["generation"] = json!(generation.unwrap_or(1) + 1);
        record_manager(&mut new, request.manager, &added);
    }
    Ok((new, added, warnings))
}

/// Notes in the pod's `managedFields` that `manager` set the added
/// containers (their keys in `spec.ephemeralContainers` and their fields),
/// in its one entry for this subresource, as server-side field tracking
/// records an update.
fn record_manager(pod: &mut Value, manager: &str, added: &[Value]) {
    let meta = &mut pod["metadata"];
    if !meta["managedFields"].is_array() {
        meta["managedFields"] = json!([]);
    }
    let Some(entries) = meta["managedFields"].as_array_mut() else {
        return;
    };
    let at = entries.iter().position(|e| {
        e["manager"] == manager
            && e["operation"] == "Update"
            && e["subresource"] == "ephemeralcontainers"
    });
    let at = at.unwrap_or_else(|| {
        entries.push(
            json!({"manager": manager, "operation": "Update", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": {}, "subresource": "ephemeralcontainers"}),
        );
        entries.len() - 1
    });
    let entry = &mut entries[at];
    entry["time"] = json!(
        jiff::Timestamp::now()
            .round(jiff::Unit::Second)
            .map(|t| t.to_string())
            .unwrap_or_default()
    );
    let owned = &mut entry["fieldsV1"]["f:spec"]["f:ephemeralContainers"];
    if !owned.is_object() {
        *owned = json!({});
    }
    for container in added {
        let mut fields = serde_json::Map::new();
        fields.insert(".".into(), json!({}));
        for key in container.as_object().into_iter().flat_map(|c| c.keys()) {
            fields.insert(format!("f:{key}"), json!({}));
        }
        let key = format!("k:{}", json!({"name": container["name"]}));
        owned[key] = Value::Object(fields);
    }
}

pub(super) fn apply_patch(
    content_type: &str,
    old: &Value,
    patch: &Value,
) -> Result<Value, ApiError> {
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    match media_type {
        "application/strategic-merge-patch+json" => {
            smp::apply_strategic_merge_patch(old, patch).map_err(ApiError::from)
        }
        "application/merge-patch+json" => Ok(smp::apply_merge_patch(old, patch)),
        "application/json-patch+json" => smp::apply_json_patch(old, patch).map_err(ApiError::from),
        "application/apply-patch+yaml" => Err(ApiError::unsupported_media_type(media_type)),
        other => Err(ApiError::unsupported_media_type(other)),
    }
}

/// Name, namespace, UID and resourceVersion preconditions of an update.
pub(super) fn check_identity(key: &Key, old: &Value, new: &Value) -> Result<(), ApiError> {
    let meta = |v: &Value, f: &str| {
        v.pointer(&format!("/metadata/{f}"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if let Some(name) = meta(new, "name")
        && name != *key.name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            key.name
        )));
    }
    if let Some(ns) = meta(new, "namespace")
        && ns != *key.namespace
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if let (Some(uid), Some(current)) = (meta(new, "uid"), meta(old, "uid"))
        && uid != current
    {
        return Err(ApiError {
            code: 409,
            reason: "Conflict",
            message: format!(
                "Operation cannot be fulfilled on pods \"{}\": Precondition failed: UID in precondition: {uid}, UID in object meta: {current}",
                key.name
            ),
            details: Some(serde_json::json!({"name": &*key.name, "kind": "pods"})),
        });
    }
    if let (Some(rv), Some(current)) = (meta(new, "resourceVersion"), meta(old, "resourceVersion"))
        && !rv.is_empty()
        && rv != current
    {
        return Err(ApiError::conflict("pods", &key.name));
    }
    Ok(())
}

fn names(pod: &Value) -> Vec<String> {
    pod.pointer("/spec/ephemeralContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(String::from))
        .collect()
}

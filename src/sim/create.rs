//! `POST /api/v1/namespaces/NS/pods`: what the apiserver does with a new
//! pod (decode, name, default, validate, Pod Security admission, store),
//! then what the scheduler and the kubelet do with it: bind it to a node
//! (the one its `nodeName` names, else a Ready one it tolerates), create
//! its containers, run them, and report when they exit.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::SimState;
use super::controllers::{bring_up, starting_status};
use super::field_validation::Directive;
use super::pod_json::uuid_like;
use super::status::ApiError;
use super::store::{Key, Kind, StoreError};
use super::{nodes, validation};
use crate::model::pod_security::Policy;

/// What an accepted create answers: the pod, and admission's warnings.
pub struct Created {
    pub pod: Bytes,
    pub warnings: Vec<String>,
}

/// A create's options, from its query.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// `dryRun=All`: every step but storing.
    pub dry_run: bool,
    pub fields: Directive,
}

impl Options {
    pub fn of(query: &super::http::Query) -> Result<Self, ApiError> {
        Ok(Self {
            dry_run: query.dry_run("CreateOptions")?,
            fields: Directive::of(query, "CreateOptions")?,
        })
    }
}

/// Creates a pod; a dry run takes every step but storing it, and answers
/// the pod as it would be, without a resourceVersion.
pub fn create_pod(
    state: &Arc<SimState>,
    namespace: &str,
    mut pod: Value,
    options: Options,
) -> Result<Created, ApiError> {
    if !pod.is_object() {
        return Err(ApiError::bad_request(
            "the request body is not a Pod object",
        ));
    }
    if let Some(kind) = pod.get("kind").and_then(Value::as_str)
        && kind != "Pod"
    {
        return Err(ApiError::bad_request(format!(
            "the body of the request was in an unknown format: expected a Pod, got a {kind}"
        )));
    }
    let meta = pod["metadata"].as_object().cloned().unwrap_or_default();
    let text = |field: &str| meta.get(field).and_then(Value::as_str).unwrap_or_default();
    if !text("namespace").is_empty() && text("namespace") != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    // Mutating admission (NamespaceLifecycle) runs before validation.
    if state
        .store
        .get(Kind::Namespace, &Key::new("", namespace))
        .is_none()
    {
        return Err(ApiError::not_found("namespaces", namespace));
    }
    let name = match (text("name"), text("generateName")) {
        ("", "") => {
            return Err(ApiError::invalid(
                "Pod",
                "",
                &[super::status::FieldError::required(
                    "metadata.name",
                    "name or generateName is required",
                )],
            ));
        }
        ("", prefix) => format!("{prefix}{}", super::controllers::generated_suffix()),
        (name, _) => name.to_string(),
    };
    let now = jiff::Timestamp::now().to_string();
    {
        let meta = pod["metadata"].as_object_mut().expect("an object, checked");
        for field in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink",
        ] {
            meta.remove(field);
        }
        meta.insert("name".into(), json!(name));
        meta.insert("namespace".into(), json!(namespace));
        meta.insert("uid".into(), json!(uuid_like()));
        meta.insert("creationTimestamp".into(), json!(now));
        meta.insert("generation".into(), json!(1));
    }
    pod["apiVersion"] = json!("v1");
    pod["kind"] = json!("Pod");
    super::defaults::default_pod(&mut pod);
    // A field of the wrong type fails decoding (400) before validation.
    let typed: Pod = serde_json::to_vec(&pod)
        .and_then(|json| serde_json::from_slice(&json))
        .map_err(|e| ApiError::bad_request(format!("error decoding the Pod: {e}")))?;
    let decoded = serde_json::to_value(&typed).unwrap_or_default();
    let mut warnings = options.fields.judge("Pod", &pod, &decoded)?;
    let errors = validation::validate_pod_create(&pod);
    if !errors.is_empty() {
        return Err(ApiError::invalid("Pod", &name, &errors));
    }
    let policy = pod_security_policy(state, namespace);
    if let Some(message) = policy.refusal(&typed) {
        return Err(ApiError::admission_forbidden(message, &name));
    }
    warnings.extend(policy.warning(&typed));
    pod["status"] = json!({"phase": "Pending", "qosClass": qos_class(&pod)});
    let key = Key::new(namespace, &name);
    if options.dry_run {
        if state.store.get(Kind::Pod, &key).is_some() {
            return Err(ApiError::already_exists("pods", &name));
        }
        return Ok(Created {
            pod: Bytes::from(serde_json::to_vec(&pod).unwrap_or_default()),
            warnings,
        });
    }
    let uid = pod
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .map(str::to_string);
    let entry = match state.store.create(Kind::Pod, key.clone(), pod) {
        Ok(entry) => entry,
        Err(StoreError::AlreadyExists) => {
            return Err(ApiError::already_exists("pods", &name));
        }
        Err(other) => return Err(ApiError::internal(other.to_string())),
    };
    if let Some(uid) = uid {
        state.kubelet.note_created(&uid);
    }
    tokio::spawn(schedule_and_run(state.clone(), key));
    Ok(Created {
        pod: entry.json.clone(),
        warnings,
    })
}

/// The namespace's `pod-security.kubernetes.io/*` labels, as a policy.
pub(crate) fn pod_security_policy(state: &SimState, namespace: &str) -> Policy {
    let labels: BTreeMap<String, String> = state
        .store
        .get(Kind::Namespace, &Key::new("", namespace))
        .map(|ns| {
            ns.labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default();
    Policy::from_labels(&labels)
}

/// The pod's QoS class as the kubelet's `GetPodQOS` computes it, from its
/// regular and init containers' cpu and memory: BestEffort when none asks
/// for any, Guaranteed when every container limits both and requests what
/// it limits, else Burstable.
pub(crate) fn qos_class(pod: &Value) -> &'static str {
    let mut best_effort = true;
    let mut guaranteed = true;
    for field in ["initContainers", "containers"] {
        for c in pod["spec"][field].as_array().into_iter().flatten() {
            let amounts = |kind: &str| -> [Option<f64>; 2] {
                ["cpu", "memory"].map(|name| {
                    c.pointer(&format!("/resources/{kind}/{name}"))
                        .and_then(quantity)
                        .filter(|q| *q > 0.0)
                })
            };
            let (requests, limits) = (amounts("requests"), amounts("limits"));
            if requests.iter().chain(&limits).any(Option::is_some) {
                best_effort = false;
            }
            if limits.iter().any(Option::is_none) || requests != limits {
                guaranteed = false;
            }
        }
    }
    match (best_effort, guaranteed) {
        (true, _) => "BestEffort",
        (false, true) => "Guaranteed",
        (false, false) => "Burstable",
    }
}

/// A resource quantity (`500m`, `1Gi`, `2e3`, `1.5`) as a number.
fn quantity(value: &Value) -> Option<f64> {
    value
        .as_f64()
        .or_else(|| crate::model::quantity::parse(value.as_str()?))
}

/// Binds the pod to a node, then lets that node's kubelet run it.
async fn schedule_and_run(state: Arc<SimState>, key: Key) {
    let Some(pod) = state.store.get(Kind::Pod, &key).map(|e| e.value()) else {
        return;
    };
    let node = match pod.pointer("/spec/nodeName").and_then(Value::as_str) {
        Some(node) if !node.is_empty() => node.to_string(),
        _ => {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            match choose_node(&state, &pod) {
                Ok(node) => {
                    bind(&state, &key, &node);
                    node
                }
                Err(message) => {
                    unschedulable(&state, &key, &message);
                    return;
                }
            }
        }
    };
    // A node that is not Ready (or does not exist) has no kubelet to start it.
    let node_ready = state
        .store
        .get(Kind::Node, &Key::new("", &node))
        .is_some_and(|_| nodes::ready(&node));
    if !node_ready {
        return;
    }
    let now = jiff::Timestamp::now().to_string();
    let host_network = pod.pointer("/spec/hostNetwork") == Some(&json!(true));
    let started = state.store.update::<()>(Kind::Pod, &key, None, |mut pod| {
        let mut status = starting_status(&pod, &pod, &now);
        let host = nodes::internal_ip(&node);
        status["hostIP"] = json!(host);
        status["hostIPs"] = json!([{"ip": host}]);
        let ip = if host_network {
            host
        } else {
            format!("10.244.{}.{}", fastrand::u8(0..250), fastrand::u8(2..250))
        };
        status["podIP"] = json!(ip);
        status["podIPs"] = json!([{"ip": ip}]);
        pod["status"] = status;
        Ok(pod)
    });
    if matches!(started, Ok(Ok(_))) {
        bring_up(state.clone(), key.clone()).await;
        watch_exits(state, key).await;
    }
}

/// A Ready, schedulable Linux node the pod tolerates and whose labels its
/// `nodeSelector` matches, the one with the fewest pods; else the
/// scheduler's sentence.
fn choose_node(state: &SimState, pod: &Value) -> Result<String, String> {
    let (list, _, _) = state.store.list(Kind::Node, None, None, None, &|_| true);
    let total = list.len();
    let selector = pod
        .pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let fits = list.iter().filter_map(|entry| {
        let node = entry.value();
        let name = node["metadata"]["name"].as_str()?.to_string();
        let labels = &node["metadata"]["labels"];
        let os = labels["kubernetes.io/os"].as_str().unwrap_or("linux");
        let wanted_os = pod
            .pointer("/spec/os/name")
            .and_then(Value::as_str)
            .or_else(|| selector.get("kubernetes.io/os").and_then(Value::as_str))
            .unwrap_or("linux");
        let matches = selector.iter().all(|(k, v)| &labels[k] == v);
        (nodes::ready(&name) && os == wanted_os && matches && nodes::tolerates(pod, &node))
            .then_some(name)
    });
    fits.min_by_key(|name| pods_on(state, name))
        .ok_or_else(|| {
            format!("0/{total} nodes are available: {total} node(s) didn't match Pod's node affinity/selector or had untolerated taints. preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling.")
        })
}

fn pods_on(state: &SimState, node: &str) -> usize {
    let on_node =
        |entry: &super::store::Entry| entry.field(Kind::Pod, "spec.nodeName") == Some(node);
    state
        .store
        .list(Kind::Pod, None, None, None, &on_node)
        .0
        .len()
}

fn bind(state: &SimState, key: &Key, node: &str) {
    let now = jiff::Timestamp::now().to_string();
    let _ = state.store.update::<()>(Kind::Pod, key, None, |mut pod| {
        pod["spec"]["nodeName"] = json!(node);
        pod["status"]["conditions"] =
            json!([{"type": "PodScheduled", "status": "True", "lastTransitionTime": now}]);
        Ok(pod)
    });
    state.kubelet.event(
        key,
        "",
        "Normal",
        "Scheduled",
        &format!(
            "Successfully assigned {}/{} to {node}",
            key.namespace, key.name
        ),
    );
}

fn unschedulable(state: &SimState, key: &Key, message: &str) {
    let now = jiff::Timestamp::now().to_string();
    let _ = state.store.update::<()>(Kind::Pod, key, None, |mut pod| {
        pod["status"]["conditions"] = json!([{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": message, "lastTransitionTime": now,
        }]);
        Ok(pod)
    });
    state
        .kubelet
        .event(key, "", "Warning", "FailedScheduling", message);
}

/// Reports each container's exit in the pod's status, and the pod's end
/// when its restart policy lets it end (the simulator does not restart a
/// created pod's containers: `Always` leaves the pod Running with them
/// terminated).
async fn watch_exits(state: Arc<SimState>, key: Key) {
    let Some(pod) = state.store.get(Kind::Pod, &key).map(|e| e.value()) else {
        return;
    };
    let names: Vec<String> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(String::from))
        .collect();
    let mut waits = tokio::task::JoinSet::new();
    for name in names {
        let Ok(process) = state.kubelet.log_source(&pod, &name) else {
            continue;
        };
        let mut exits = process.exit_updates();
        let (state, key) = (state.clone(), key.clone());
        waits.spawn(async move {
            let exit = loop {
                if let Some(exit) = *exits.borrow_and_update() {
                    break exit;
                }
                if exits.changed().await.is_err() {
                    return;
                }
            };
            record_exit(&state, &key, &name, exit);
        });
    }
    while waits.join_next().await.is_some() {}
}

fn record_exit(state: &SimState, key: &Key, container: &str, exit: super::runtime::Exit) {
    let code = exit.code;
    let now = jiff::Timestamp::now().to_string();
    let _ = state.store.update::<()>(Kind::Pod, key, None, |mut pod| {
        if !pod
            .pointer("/metadata/deletionTimestamp")
            .is_none_or(Value::is_null)
        {
            return Err(());
        }
        let policy = pod["spec"]["restartPolicy"]
            .as_str()
            .unwrap_or("Always")
            .to_string();
        let mut all_ended = true;
        let mut all_zero = true;
        for status in pod["status"]["containerStatuses"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            if status["name"] == container {
                let started = status
                    .pointer("/state/running/startedAt")
                    .cloned()
                    .unwrap_or(json!(now));
                status["state"] = json!({"terminated": {
                    "exitCode": code, "reason": exit.reason(), "startedAt": started, "finishedAt": now,
                    "containerID": status["containerID"].clone(),
                }});
                status["ready"] = json!(false);
                status["started"] = json!(false);
            }
            match status
                .pointer("/state/terminated/exitCode")
                .and_then(Value::as_i64)
            {
                Some(code) => all_zero &= code == 0,
                None => all_ended = false,
            }
        }
        for condition in pod["status"]["conditions"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            if matches!(
                condition["type"].as_str(),
                Some("Ready" | "ContainersReady")
            ) {
                condition["status"] = json!("False");
                condition["reason"] = json!(if all_ended {
                    "PodCompleted"
                } else {
                    "ContainersNotReady"
                });
                condition["lastTransitionTime"] = json!(now);
            }
        }
        let ends = match policy.as_str() {
            "Never" => true,
            "OnFailure" => all_zero,
            _ => false,
        };
        if all_ended && ends {
            pod["status"]["phase"] = json!(if all_zero { "Succeeded" } else { "Failed" });
        }
        Ok(pod)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_classes_follow_the_kubelet() {
        let pod = |containers: Value| json!({"spec": {"containers": containers}});
        let both = |cpu: &str, memory: &str| json!({"cpu": cpu, "memory": memory});
        assert_eq!(qos_class(&pod(json!([{"name": "a"}]))), "BestEffort");
        assert_eq!(
            qos_class(&pod(
                json!([{"resources": {"limits": both("1", "1Gi"), "requests": both("1000m", "1024Mi")}}])
            )),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&pod(
                json!([{"resources": {"limits": both("1", "1Gi"), "requests": both("500m", "1Gi")}}])
            )),
            "Burstable"
        );
        // A limit on cpu only cannot guarantee memory.
        assert_eq!(
            qos_class(&pod(
                json!([{"resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}])
            )),
            "Burstable"
        );
        // Every container must be guaranteed.
        assert_eq!(
            qos_class(&pod(json!([
                {"resources": {"limits": both("1", "1Gi"), "requests": both("1", "1Gi")}},
                {"name": "b"},
            ]))),
            "Burstable"
        );
        // Zero asks for nothing.
        assert_eq!(
            qos_class(&pod(json!([{"resources": {"requests": {"cpu": "0"}}}]))),
            "BestEffort"
        );
    }

    #[test]
    fn limits_alone_are_guaranteed_once_defaulted() {
        let mut pod = json!({"spec": {"containers": [{"name": "a", "image": "x",
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}});
        super::super::defaults::default_pod(&mut pod);
        assert_eq!(qos_class(&pod), "Guaranteed");
    }

    #[test]
    fn quantities_read_as_the_apiserver_reads_them() {
        for (text, value) in [
            ("500m", 0.5),
            ("2", 2.0),
            ("1Ki", 1024.0),
            ("1.5Gi", 1.5 * 1024f64.powi(3)),
            ("1e3", 1000.0),
            ("3k", 3000.0),
        ] {
            assert_eq!(quantity(&json!(text)), Some(value), "{text}");
        }
        assert_eq!(quantity(&json!("1Qi")), None);
    }
}

//! What the endpoints and EndpointSlice controllers keep for each Service
//! with a selector: the pods it selects, ready or not, at the ports its
//! `targetPort`s resolve to, as a core `Endpoints` (what kubectl up to 1.28
//! describes) and one `discovery.k8s.io/v1` EndpointSlice (what later
//! kubectl and kube-proxy read). They follow every pod change.

use serde_json::{Value, json};

use super::SimState;
use super::pod_json::{is_ready, is_terminating};
use super::store::{Key, Kind};

/// The label an EndpointSlice names its Service by.
pub const SERVICE_NAME: &str = "kubernetes.io/service-name";

/// Writes the endpoints of every Service of `pod`'s namespace that selects
/// it (before or after this change: a pod that left still counts here).
pub fn refresh(state: &SimState, pod: &Value) {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let labels = &pod["metadata"]["labels"];
    let (services, _, _) = state
        .store
        .list(Kind::Service, Some(namespace), None, None, &|_| true);
    for service in services {
        let service = service.value();
        let selects = selector(&service).is_some_and(|selector| {
            selector
                .iter()
                .all(|(k, v)| labels[k.as_str()].as_str() == v.as_str())
        });
        if selects {
            write(state, &service);
        }
    }
}

/// The endpoints of every Service there is (at the simulator's start).
pub fn write_all(state: &SimState) {
    let (services, _, _) = state.store.list(Kind::Service, None, None, None, &|_| true);
    for service in services {
        write(state, &service.value());
    }
}

fn selector(service: &Value) -> Option<&serde_json::Map<String, Value>> {
    service["spec"]["selector"]
        .as_object()
        .filter(|s| !s.is_empty())
}

/// One Service's Endpoints and EndpointSlice, created or brought up to
/// date (unchanged objects are not written again).
fn write(state: &SimState, service: &Value) {
    let Some(selector) = selector(service) else {
        return;
    };
    let namespace = service["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    let name = service["metadata"]["name"].as_str().unwrap_or_default();
    let pods: Vec<Value> = super::pod_json::selected(&state.store, namespace, selector)
        .into_iter()
        .filter(|p| p["status"]["podIP"].is_string())
        .collect();
    let ports: Vec<Value> = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|port| {
            let number = target_port(port, pods.first())?;
            let mut port = json!({"port": number, "protocol": port["protocol"].as_str().unwrap_or("TCP"), "name": port["name"]});
            if port["name"].is_null() {
                port.as_object_mut()?.remove("name");
            }
            Some(port)
        })
        .collect();
    let address = |pod: &Value| {
        json!({
            "ip": pod["status"]["podIP"], "nodeName": pod["spec"]["nodeName"],
            "targetRef": {"kind": "Pod", "namespace": namespace, "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]},
        })
    };
    let (taking, not_ready): (Vec<&Value>, Vec<&Value>) = pods.iter().partition(|p| ready(p));
    let mut subset = json!({"ports": ports});
    if !taking.is_empty() {
        subset["addresses"] = taking.iter().map(|p| address(p)).collect();
    }
    if !not_ready.is_empty() {
        subset["notReadyAddresses"] = not_ready.iter().map(|p| address(p)).collect();
    }
    let subsets = match pods.is_empty() {
        true => json!([]),
        false => json!([subset]),
    };
    let owner = json!([{"apiVersion": "v1", "kind": "Service", "name": name,
        "uid": service["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]);
    let endpoints = json!({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": name, "namespace": namespace, "labels": service["metadata"]["labels"],
            "creationTimestamp": service["metadata"]["creationTimestamp"]},
        "subsets": subsets,
    });
    let slice_name = format!("{name}-{}", &super::ids::hex_id(name, 11, 5));
    let mut labels = service["metadata"]["labels"].clone();
    labels[SERVICE_NAME] = json!(name);
    labels["endpointslice.kubernetes.io/managed-by"] = json!("endpointslice-controller.k8s.io");
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": slice_name, "generateName": format!("{name}-"), "namespace": namespace,
            "labels": labels, "ownerReferences": owner,
            "creationTimestamp": service["metadata"]["creationTimestamp"]},
        "addressType": "IPv4",
        "endpoints": pods.iter().map(|pod| {
            let ready = ready(pod);
            let terminating = is_terminating(pod);
            json!({
                "addresses": [pod["status"]["podIP"]],
                "conditions": {"ready": ready && !terminating, "serving": ready, "terminating": terminating},
                "nodeName": pod["spec"]["nodeName"],
                "targetRef": {"kind": "Pod", "namespace": namespace, "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]},
            })
        }).collect::<Vec<_>>(),
        "ports": ports,
    });
    put(state, Kind::Endpoints, Key::new(namespace, name), endpoints);
    put(
        state,
        Kind::EndpointSlice,
        Key::new(namespace, &slice_name),
        slice,
    );
}

/// Creates `object`, or replaces what is stored (its metadata's
/// resourceVersion and uid kept by the store).
fn put(state: &SimState, kind: Kind, key: Key, object: Value) {
    if state.store.get(kind, &key).is_none() {
        let mut object = object;
        object["metadata"]["uid"] = json!(super::ids::uid(
            &format!("{}/{}/{}", kind.plural(), key.namespace, key.name),
            10
        ));
        let _ = state.store.create(kind, key, object);
        return;
    }
    let _ = state.store.update(kind, &key, None, |current| {
        let mut object = object;
        object["metadata"]["uid"] = current["metadata"]["uid"].clone();
        object["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
        Ok::<_, ()>(object)
    });
}

/// Whether a pod is Ready and not on its way out.
fn ready(pod: &Value) -> bool {
    !is_terminating(pod) && is_ready(pod)
}

/// The port a Service's port sends to on `pod`: its `targetPort` by
/// number, or the pod's container port of that name (the first pod's, as
/// one slice here serves them all); the port itself without one.
fn target_port(port: &Value, pod: Option<&Value>) -> Option<i64> {
    match &port["targetPort"] {
        Value::Number(n) if n.as_i64() != Some(0) => n.as_i64(),
        Value::String(name) => pod?["spec"]["containers"]
            .as_array()?
            .iter()
            .flat_map(|c| c["ports"].as_array().into_iter().flatten())
            .find(|p| p["name"].as_str() == Some(name.as_str()))?["containerPort"]
            .as_i64(),
        _ => port["port"].as_i64(),
    }
}

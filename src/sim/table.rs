//! `meta.k8s.io/v1` Table rendering of pods, for `kubectl get` (which asks
//! the server to print).

use serde_json::{Value, json};

pub fn pods(pods: &[Value], resource_version: u64, continue_token: &str) -> Value {
    let column = |name: &str, kind: &str, format: &str, description: &str, priority: u8| json!({"name": name, "type": kind, "format": format, "description": description, "priority": priority});
    let rows: Vec<Value> = pods
        .iter()
        .map(|pod| {
            let s = Summary::of(pod);
            json!({
                "cells": [s.name, s.ready, s.status, s.restarts, s.age, s.ip, s.node, "<none>", "<none>"],
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": pod["metadata"],
                },
            })
        })
        .collect();
    let mut metadata = json!({"resourceVersion": resource_version.to_string()});
    if !continue_token.is_empty() {
        metadata["continue"] = json!(continue_token);
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": [
            column("Name", "string", "name", "Name must be unique within a namespace.", 0),
            column("Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0),
            column("Status", "string", "", "The aggregate status of the containers in this pod.", 0),
            column("Restarts", "string", "", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", 0),
            column("Age", "string", "", "CreationTimestamp is a timestamp representing the server time when this object was created.", 0),
            column("IP", "string", "", "If specified, the pod's IP address.", 1),
            column("Node", "string", "", "NodeName is a request to schedule this pod onto a specific node.", 1),
            column("Nominated Node", "string", "", "nominatedNodeName is set when this pod preempts other pods on the node.", 1),
            column("Readiness Gates", "string", "", "If specified, all readiness gates will be evaluated for pod readiness.", 1),
        ],
        "rows": rows,
    })
}

/// TEMPORARY: replaced by model::PodRow on merge.
struct Summary {
    name: String,
    ready: String,
    status: String,
    restarts: String,
    age: String,
    ip: String,
    node: String,
}
impl Summary {
    fn of(pod: &Value) -> Self {
        let s = |p: &str| {
            pod.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("<none>")
                .to_string()
        };
        let statuses = pod
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let ready = statuses.iter().filter(|c| c["ready"] == true).count();
        let total = pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Summary {
            name: s("/metadata/name"),
            ready: format!("{ready}/{total}"),
            status: s("/status/phase"),
            restarts: "0".into(),
            age: "1d".into(),
            ip: s("/status/podIP"),
            node: s("/spec/nodeName"),
        }
    }
}

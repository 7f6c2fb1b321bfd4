//! The demo's objects besides its pods and their owners: the Secrets, the
//! Services an incident starts from, and the Namespaces with their Pod
//! Security labels.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::scenario::{pod_security_labels, uid};

/// The demo's Secrets: `shop`'s `regcred`, credentials for the private
/// registry that no pod of the demo names (a copy may).
pub fn secrets(created: Timestamp) -> Vec<Value> {
    use base64::Engine as _;
    let base64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let registry = super::images::PRIVATE_REGISTRY;
    let config = json!({"auths": {registry: {
        "username": "ci", "password": "demo-only", "auth": base64("ci:demo-only"),
    }}});
    vec![json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "regcred",
            "namespace": "shop",
            "uid": uid("shop/regcred", 5),
            "creationTimestamp": created.to_string(),
        },
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": base64(&config.to_string())},
    })]
}

/// A Service selecting `app`'s pods by `app.kubernetes.io/name`.
fn service(
    created: Timestamp,
    (namespace, name, cluster_ip): (&str, &str, &str),
    app: &str,
    ports: Value,
) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid(&format!("{namespace}/svc/{name}"), 6),
            "creationTimestamp": created.to_string(),
            "labels": {"app.kubernetes.io/name": app},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "selector": {"app.kubernetes.io/name": app},
            "ports": ports,
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
        "status": {"loadBalancer": {}},
    })
}

/// A Service for each generated Deployment (`svc-042` in `team-0007`),
/// as each app of a real cluster has one: port 80 to its pods' 8080.
pub fn generated_services<'a>(
    deployments: impl Iterator<Item = (&'a str, &'a str)>,
    created: Timestamp,
) -> Vec<Value> {
    deployments
        .enumerate()
        .map(|(i, (namespace, name))| {
            let ip = format!("10.{}.{}.{}", 100 + i / 65_536, (i / 256) % 256, i % 256);
            let port = json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]);
            service(created, (namespace, name, &ip), name, port)
        })
        .collect()
}

/// The demo's Services, as an incident starts from them: storefront's
/// port 80 to its pods' port named `http` (8080), payments-api's 443 to
/// the number 8080, redis headless (its port as is), and checkout, whose
/// selector matches no pod.
pub fn services(created: Timestamp) -> Vec<Value> {
    let service = |namespace: &str, name: &str, cluster_ip: &str, app: &str, ports: Value| {
        service(created, (namespace, name, cluster_ip), app, ports)
    };
    vec![
        service(
            "shop",
            "storefront",
            "10.96.14.20",
            "storefront",
            json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}]),
        ),
        service(
            "shop",
            "redis",
            "None",
            "redis",
            json!([{"name": "redis", "port": 6379, "protocol": "TCP", "targetPort": 6379}]),
        ),
        service(
            "shop",
            "checkout",
            "10.96.14.31",
            "checkout",
            json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]),
        ),
        service(
            "payments",
            "payments-api",
            "10.96.52.7",
            "payments-api",
            json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8080}]),
        ),
    ]
}

pub fn namespace_object(name: &str, created: Timestamp) -> Value {
    let mut labels = serde_json::Map::new();
    labels.insert("kubernetes.io/metadata.name".into(), json!(name));
    for (key, value) in pod_security_labels(name) {
        labels.insert(format!("pod-security.kubernetes.io/{key}"), json!(value));
    }
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": uid(name, 5),
            "creationTimestamp": created.to_string(),
            "labels": labels,
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

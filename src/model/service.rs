//! A Service as the services view shows it: `kubectl get svc`'s columns,
//! its ports and where they lead, and the selector its pods are found by
//! in the pod list. Read from the object's JSON: one untyped feed serves
//! every kind a view may watch.

use jiff::Timestamp;
use serde_json::Value;

use super::PodRow;
use super::text::sanitize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRow {
    /// The context of its cluster, when the list shows several.
    pub context: Option<std::sync::Arc<str>>,
    pub namespace: String,
    pub name: String,
    /// `ClusterIP`, `NodePort`, `LoadBalancer`, `ExternalName`.
    pub kind: String,
    /// `None` for a headless Service.
    pub cluster_ip: String,
    /// `<none>`, `<pending>`, or the load balancer's addresses.
    pub external: String,
    pub ports: Vec<ServicePort>,
    /// The selector's `key=value` terms; none: its endpoints are kept by
    /// hand.
    pub selector: Vec<(String, String)>,
    pub created: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePort {
    pub name: String,
    pub port: i64,
    pub protocol: String,
    pub node_port: Option<i64>,
    /// Its `targetPort` as written: a number, a name, or empty (the port).
    pub target: String,
}

impl ServiceRow {
    /// A Service's JSON (its `metadata` read from there).
    pub fn from_object(object: &Value) -> ServiceRow {
        let metadata = serde_json::from_value(object["metadata"].clone()).unwrap_or_default();
        ServiceRow::from_parts(&metadata, object)
    }

    /// A Service as an untyped watch gives it: its metadata, and the rest
    /// of its JSON (`spec`, `status`).
    pub fn from_parts(
        metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        object: &Value,
    ) -> ServiceRow {
        let text = |value: &Value| sanitize(value.as_str().unwrap_or_default()).into_owned();
        let spec = &object["spec"];
        let kind = match spec["type"].as_str() {
            Some(kind) if !kind.is_empty() => sanitize(kind).into_owned(),
            _ => "ClusterIP".to_string(),
        };
        let external = match kind.as_str() {
            "ExternalName" => text(&spec["externalName"]),
            "LoadBalancer" => {
                let ingress: Vec<String> = object["status"]["loadBalancer"]["ingress"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                    .map(|a| sanitize(a).into_owned())
                    .collect();
                match ingress.is_empty() {
                    true => "<pending>".to_string(),
                    false => ingress.join(","),
                }
            }
            _ => String::new(),
        };
        let ports = spec["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| ServicePort {
                name: text(&p["name"]),
                port: p["port"].as_i64().unwrap_or_default(),
                protocol: match p["protocol"].as_str() {
                    Some(protocol) => sanitize(protocol).into_owned(),
                    None => "TCP".into(),
                },
                node_port: p["nodePort"].as_i64().filter(|n| *n > 0),
                target: match &p["targetPort"] {
                    Value::String(name) => sanitize(name).into_owned(),
                    Value::Number(n) if n.as_i64() != Some(0) => n.to_string(),
                    _ => String::new(),
                },
            })
            .collect();
        let selector = spec["selector"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (sanitize(k).into_owned(), text(v)))
            .collect();
        let clean =
            |text: &Option<String>| sanitize(text.as_deref().unwrap_or_default()).into_owned();
        ServiceRow {
            context: None,
            namespace: clean(&metadata.namespace),
            name: clean(&metadata.name),
            kind,
            cluster_ip: text(&spec["clusterIP"]),
            external,
            ports,
            selector,
            created: metadata.creation_timestamp.as_ref().map(|t| t.0),
        }
    }

    /// EXTERNAL-IP as kubectl prints it.
    pub fn external_text(&self) -> &str {
        match self.external.as_str() {
            "" => "<none>",
            external => external,
        }
    }

    /// PORT(S) as kubectl prints it: `80/TCP`, `80:30080/TCP`.
    pub fn ports_text(&self) -> String {
        if self.ports.is_empty() {
            return "<none>".into();
        }
        self.ports
            .iter()
            .map(|p| match p.node_port {
                Some(node) => format!("{}:{node}/{}", p.port, p.protocol),
                None => format!("{}/{}", p.port, p.protocol),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The selector as a label query (`<none>` without one).
    pub fn selector_text(&self) -> String {
        match self.selector.is_empty() {
            true => "<none>".into(),
            false => self
                .selector
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// Whether the Service sends to this pod: same cluster and namespace,
    /// every term of its selector among the pod's labels. None without a
    /// selector.
    pub fn selects(&self, pod: &PodRow) -> bool {
        !self.selector.is_empty()
            && pod.context == self.context
            && *pod.key.namespace == *self.namespace
            && self
                .selector
                .iter()
                .all(|(k, v)| super::selector::label(&pod.labels, k) == Some(v.as_str()))
    }
}

/// Whether a pod is one of a Service's ready endpoints: Running, every
/// container ready, not on its way out.
pub fn ready_endpoint(pod: &PodRow) -> bool {
    &*pod.status == "Running" && pod.total > 0 && pod.ready == pod.total
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn storefront() -> Value {
        json!({
            "metadata": {"name": "storefront", "namespace": "shop", "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": {
                "type": "NodePort", "clusterIP": "10.96.14.20",
                "selector": {"app": "storefront"},
                "ports": [
                    {"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http", "nodePort": 30080},
                    {"name": "admin", "port": 9000, "targetPort": 9001},
                    {"port": 7000, "targetPort": 0},
                ],
            },
        })
    }

    /// kubectl's columns: NodePort ports with their node port, TCP when no
    /// protocol is written, `<none>` for no external address.
    #[test]
    fn a_service_reads_as_kubectl_prints_it() {
        let row = ServiceRow::from_object(&storefront());
        assert_eq!(row.ports_text(), "80:30080/TCP,9000/TCP,7000/TCP");
        assert_eq!(row.external_text(), "<none>");
        assert_eq!(row.selector_text(), "app=storefront");
        let targets: Vec<&str> = row.ports.iter().map(|p| p.target.as_str()).collect();
        assert_eq!(targets, ["http", "9001", ""]);
        let mut balanced = storefront();
        balanced["spec"]["type"] = "LoadBalancer".into();
        assert_eq!(
            ServiceRow::from_object(&balanced).external_text(),
            "<pending>"
        );
        balanced["status"] = json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}, {"hostname": "lb.example"}]}});
        assert_eq!(
            ServiceRow::from_object(&balanced).external_text(),
            "203.0.113.7,lb.example"
        );
        let manual = json!({"metadata": {"name": "m", "namespace": "shop"}, "spec": {"ports": []}});
        let manual = ServiceRow::from_object(&manual);
        assert_eq!(
            (
                manual.kind.as_str(),
                manual.ports_text(),
                manual.selector_text()
            ),
            ("ClusterIP", "<none>".into(), "<none>".into())
        );
    }

    /// Every term of the selector must be among the pod's labels, in the
    /// Service's namespace; a Service without a selector selects nothing.
    #[test]
    fn a_service_selects_the_pods_its_selector_names() {
        let row = ServiceRow::from_object(&storefront());
        let pod = |namespace: &str, labels: &str, status: &str, ready: u16| {
            let mut pod = PodRow::from_pod(
                &serde_json::from_value(json!({
                    "metadata": {"name": "p", "namespace": namespace},
                    "spec": {"containers": [{"name": "a"}]},
                }))
                .unwrap(),
            );
            pod.labels = labels.into();
            pod.status = status.into();
            pod.ready = ready;
            pod.total = 1;
            pod
        };
        assert!(row.selects(&pod(
            "shop",
            "app=storefront pod-template-hash=1",
            "Running",
            1
        )));
        assert!(!row.selects(&pod("shop", "app=storefronts", "Running", 1)));
        assert!(!row.selects(&pod("other", "app=storefront", "Running", 1)));
        assert!(ready_endpoint(&pod("shop", "app=storefront", "Running", 1)));
        assert!(!ready_endpoint(&pod(
            "shop",
            "app=storefront",
            "Running",
            0
        )));
        assert!(!ready_endpoint(&pod(
            "shop",
            "app=storefront",
            "Terminating",
            1
        )));
        let mut manual = row.clone();
        manual.selector.clear();
        assert!(!manual.selects(&pod("shop", "app=storefront", "Running", 1)));
    }
}

//! The apiserver's defaulting of a pod, as it happens on decode
//! (`SetObjectDefaults_Pod` in `pkg/apis/core/v1`), before validation and
//! admission see it; plus the admission plugins that fill a new pod's
//! priority and its not-ready/unreachable tolerations. A field that is
//! absent, `null` or `""` is defaulted alike, as Go's zero values are.

use serde_json::{Map, Value, json};

use super::pod_json::str_field;

/// Defaults a new pod, every kind of container in it, and its volumes.
pub fn default_pod(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for (field, value) in [
        ("restartPolicy", json!("Always")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("dnsPolicy", json!("ClusterFirst")),
        ("securityContext", json!({})),
        ("schedulerName", json!("default-scheduler")),
        ("serviceAccountName", json!("default")),
        ("serviceAccount", json!("default")),
        ("enableServiceLinks", json!(true)),
        ("priority", json!(0)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
    ] {
        set_default(spec, field, value);
    }
    let host_network = spec.get("hostNetwork") == Some(&json!(true));
    for field in ["initContainers", "containers"] {
        for c in each_mut(spec, field) {
            default_container(c);
            let Some(fields) = c.as_object_mut() else {
                continue;
            };
            set_default(fields, "resources", json!({}));
            requests_from_limits(fields);
            if host_network {
                for port in each_mut(fields, "ports") {
                    if let Some(port) = port.as_object_mut()
                        && port.get("hostPort").is_none_or(|p| p == 0)
                        && let Some(container_port) = port.get("containerPort").cloned()
                    {
                        port.insert("hostPort".into(), container_port);
                    }
                }
            }
        }
    }
    for c in each_mut(spec, "ephemeralContainers") {
        default_container(c);
    }
    for volume in each_mut(spec, "volumes") {
        default_volume(volume);
    }
    default_tolerations(spec);
}

/// Defaults one container of any kind (`SetDefaults_Container`, which the
/// apiserver also runs for ephemeral containers), with its ports, env and
/// probes.
pub fn default_container(container: &mut Value) {
    let Some(fields) = container.as_object_mut() else {
        return;
    };
    let policy = pull_policy(str_field(fields, "image"));
    set_default(
        fields,
        "terminationMessagePath",
        json!("/dev/termination-log"),
    );
    set_default(fields, "terminationMessagePolicy", json!("File"));
    set_default(fields, "imagePullPolicy", json!(policy));
    for port in each_mut(fields, "ports") {
        if let Some(port) = port.as_object_mut() {
            set_default(port, "protocol", json!("TCP"));
        }
    }
    for env in each_mut(fields, "env") {
        if let Some(field_ref) = env
            .pointer_mut("/valueFrom/fieldRef")
            .and_then(Value::as_object_mut)
        {
            set_default(field_ref, "apiVersion", json!("v1"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = fields.get_mut(probe).and_then(Value::as_object_mut) {
            for (field, value) in [
                ("timeoutSeconds", 1),
                ("periodSeconds", 10),
                ("successThreshold", 1),
                ("failureThreshold", 3),
            ] {
                if probe.get(field).is_none_or(|v| v.is_null() || v == 0) {
                    probe.insert(field.into(), json!(value));
                }
            }
            default_http_get(probe);
        }
    }
    for hook in ["postStart", "preStop"] {
        if let Some(handler) = fields
            .get_mut("lifecycle")
            .and_then(|l| l.get_mut(hook))
            .and_then(Value::as_object_mut)
        {
            default_http_get(handler);
        }
    }
}

fn default_http_get(handler: &mut Map<String, Value>) {
    if let Some(get) = handler.get_mut("httpGet").and_then(Value::as_object_mut) {
        set_default(get, "path", json!("/"));
        set_default(get, "scheme", json!("HTTP"));
    }
}

/// A regular or init container's missing requests are its limits.
fn requests_from_limits(container: &mut Map<String, Value>) {
    let Some(resources) = container
        .get_mut("resources")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    if limits.is_empty() {
        return;
    }
    let requests = resources.entry("requests").or_insert_with(|| json!({}));
    if requests.is_null() {
        *requests = json!({});
    }
    if let Some(requests) = requests.as_object_mut() {
        for (name, quantity) in limits {
            requests.entry(name).or_insert(quantity);
        }
    }
}

/// The volume sources whose files get mode 0644 unless they say.
const MODED_SOURCES: [&str; 4] = ["secret", "configMap", "downwardAPI", "projected"];

fn default_volume(volume: &mut Value) {
    let Some(fields) = volume.as_object_mut() else {
        return;
    };
    // A volume names its source as its one other field.
    if !fields.keys().any(|k| k != "name") {
        fields.insert("emptyDir".into(), json!({}));
    }
    for source in MODED_SOURCES {
        if let Some(source) = fields.get_mut(source).and_then(Value::as_object_mut) {
            set_default(source, "defaultMode", json!(420));
        }
    }
    if let Some(host_path) = fields.get_mut("hostPath").and_then(Value::as_object_mut) {
        host_path.entry("type").or_insert(json!(""));
    }
}

/// The DefaultTolerationSeconds admission plugin: a pod tolerates a
/// not-ready or unreachable node for 300 s unless it says otherwise.
fn default_tolerations(spec: &mut Map<String, Value>) {
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if tolerations.is_null() {
        *tolerations = json!([]);
    }
    let Some(list) = tolerations.as_array_mut() else {
        return;
    };
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = list.iter().any(|t| {
            t.get("effect")
                .and_then(Value::as_str)
                .is_none_or(|e| e.is_empty() || e == "NoExecute")
                && (t.get("key").and_then(Value::as_str) == Some(key)
                    || (t.get("key").is_none_or(|k| k == "")
                        && t.get("operator").and_then(Value::as_str) == Some("Exists")))
        });
        if !tolerated {
            list.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
}

/// `Always` when the image's tag is `latest` (no tag and no digest is
/// `latest`), else `IfNotPresent` (a digest alone, or a reference that
/// does not parse, has no tag).
pub fn pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some("latest") => "Always",
        _ => "IfNotPresent",
    }
}

/// The tag of an image reference as the kubelet's `ParseImageName` reads
/// it: `latest` when there is neither tag nor digest, `None` when there is
/// only a digest or the reference does not parse.
fn image_tag(image: &str) -> Option<&str> {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match name[last_slash..].rfind(':') {
        Some(colon) => (
            &name[..last_slash + colon],
            Some(&name[last_slash + colon + 1..]),
        ),
        None => (name, None),
    };
    let valid_tag = tag.is_none_or(|t| {
        !t.is_empty()
            && t.len() <= 128
            && !t.starts_with(['.', '-'])
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
    });
    if !valid_repository(repository) || !valid_tag || digest.is_some_and(|d| !d.contains(':')) {
        return None;
    }
    match (tag, digest) {
        (Some(tag), _) => Some(tag),
        (None, Some(_)) => None,
        (None, None) => Some("latest"),
    }
}

/// A repository's path is lowercase (a registry host before it may not
/// be); each component alphanumeric with `.`, `_`, `-` inside.
fn valid_repository(repository: &str) -> bool {
    let mut components: Vec<&str> = repository.split('/').collect();
    if components.len() > 1 {
        let first = components[0];
        if first.contains(['.', ':']) || first == "localhost" {
            components.remove(0);
        }
    }
    !repository.is_empty()
        && components.iter().all(|c| {
            !c.is_empty()
                && c.starts_with(|ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit())
                && c.ends_with(|ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit())
                && c.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "._-".contains(ch))
        })
}

/// Sets `field` unless it holds something other than Go's zero value.
fn set_default(fields: &mut Map<String, Value>, field: &str, value: Value) {
    let unset = fields
        .get(field)
        .is_none_or(|v| v.is_null() || v.as_str() == Some(""));
    if unset {
        fields.insert(field.into(), value);
    }
}

fn each_mut<'a>(
    fields: &'a mut Map<String, Value>,
    field: &str,
) -> impl Iterator<Item = &'a mut Value> {
    fields
        .get_mut(field)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

#[cfg(test)]
#[path = "defaults_tests.rs"]
mod tests;

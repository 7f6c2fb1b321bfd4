//! Validation of a `pods/ephemeralcontainers` update, following the
//! apiserver's `ValidatePodEphemeralContainersUpdate` and
//! `validateEphemeralContainers`: an allow-list of fields, unique names,
//! an existing target, and existing entries frozen forever.

use serde_json::{Map, Value};

use super::pod_json::str_field;
use super::status::FieldError;

/// Container fields outside the apiserver's allow-list for ephemeral
/// containers (name, image, command, args, workingDir, env, envFrom,
/// volumeMounts, volumeDevices, terminationMessagePath/Policy,
/// imagePullPolicy, securityContext, stdin, stdinOnce, tty). Unknown fields
/// are dropped by decoding, as the apiserver does. "Set" follows Go's zero
/// values: slices and pointers are set whenever present and not null (so
/// `"ports": []` is set); the `resources` struct only when one of its maps
/// or lists is present (kubectl's `"resources": {}` passes).
const PRESENT_FIELDS: [&str; 8] = [
    "ports",
    "resizePolicy",
    "restartPolicyRules",
    "restartPolicy",
    "lifecycle",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
];

const FORBIDDEN: &str = "cannot be set for an Ephemeral Container";
const DNS1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

pub fn validate_ephemeral_containers_update(new_pod: &Value, old_pod: &Value) -> Vec<FieldError> {
    let mirror = old_pod
        .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some();
    if mirror {
        return vec![FieldError::forbidden(
            "",
            "static pods do not support ephemeral containers",
        )];
    }
    let mut errors = validate_new_pod(new_pod);
    let spec_path = "spec.ephemeralContainers";
    let new_list = containers(new_pod, "ephemeralContainers");
    for old in containers(old_pod, "ephemeralContainers") {
        let name = old.get("name").and_then(Value::as_str).unwrap_or_default();
        match new_list
            .iter()
            .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
        {
            None => errors.push(FieldError::forbidden(
                spec_path,
                format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(new) if without_zeros(new) != without_zeros(old) => {
                errors.push(FieldError::forbidden(
                    spec_path,
                    format!("existing ephemeral containers {name:?} may not be changed\n"),
                ))
            }
            Some(_) => {}
        }
    }
    errors
}

/// What every container, of any kind, is checked for first: an object,
/// a valid name no other container of the pod has (kept in `names`), an
/// image without leading or trailing whitespace (the apiserver's
/// validateContainerOnlyForPod, for pods and their ephemeral containers
/// alike), a known pull policy. `None` when it is no object (said).
fn named_container<'a>(
    pod: &Value,
    container: &'a Value,
    path: &str,
    names: &mut Vec<String>,
    errors: &mut Vec<FieldError>,
) -> Option<&'a serde_json::Map<String, Value>> {
    let Some(fields) = container.as_object() else {
        errors.push(FieldError::invalid(
            path,
            &container.to_string(),
            "must be an object",
        ));
        return None;
    };
    validate_name(fields, path, names, errors);
    let image = str_field(fields, "image");
    if image.is_empty() {
        errors.push(FieldError::required(format!("{path}.image"), ""));
    } else if image.trim() != image {
        errors.push(FieldError::invalid(
            format!("{path}.image"),
            image,
            "must not have leading or trailing whitespace",
        ));
    }
    validate_enum(
        fields,
        path,
        "imagePullPolicy",
        &["Always", "IfNotPresent", "Never"],
        errors,
    );
    // An unmasked /proc only in the pod's own user namespace.
    let own_users = pod.pointer("/spec/hostUsers") == Some(&Value::Bool(false));
    if !own_users
        && container
            .pointer("/securityContext/procMount")
            .and_then(Value::as_str)
            == Some("Unmasked")
    {
        errors.push(FieldError::invalid(
            format!("{path}.securityContext.procMount"),
            "Unmasked",
            "`hostUsers` must be false to use `Unmasked`",
        ));
    }
    Some(fields)
}

fn validate_new_pod(pod: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut other_names: Vec<String> = Vec::new();
    for field in ["containers", "initContainers"] {
        other_names.extend(
            containers(pod, field)
                .iter()
                .filter_map(|c| c.get("name")?.as_str().map(String::from)),
        );
    }
    let volumes: Vec<String> = pod
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name")?.as_str().map(String::from))
        .collect();
    let mut all_names = other_names.clone();
    for (i, container) in containers(pod, "ephemeralContainers").iter().enumerate() {
        let path = format!("spec.ephemeralContainers[{i}]");
        let Some(fields) = named_container(pod, container, &path, &mut all_names, &mut errors)
        else {
            continue;
        };
        let target = str_field(fields, "targetContainerName");
        if !target.is_empty() && !other_names.iter().any(|n| n == target) {
            errors.push(FieldError::not_found(
                format!("{path}.targetContainerName"),
                target,
            ));
        }
        let resources_set = fields
            .get("resources")
            .and_then(Value::as_object)
            .is_some_and(|r| r.values().any(|v| !v.is_null()));
        let forbidden = PRESENT_FIELDS
            .iter()
            .copied()
            .filter(|f| fields.get(*f).is_some_and(|v| !v.is_null()))
            .chain(resources_set.then_some("resources"));
        for field in forbidden {
            errors.push(FieldError::forbidden(format!("{path}.{field}"), FORBIDDEN));
        }
        validate_volume_mounts(fields, &path, &volumes, true, &mut errors);
        validate_enum(
            fields,
            &path,
            "terminationMessagePolicy",
            &["File", "FallbackToLogsOnError"],
            &mut errors,
        );
        for (j, var) in fields
            .get("env")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if var
                .get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                errors.push(FieldError::required(format!("{path}.env[{j}].name"), ""));
            }
        }
    }
    errors
}

/// What the apiserver's `ValidatePodCreate` says of a new pod, for the
/// fields the simulator runs: its name, containers, volumes and restart
/// policy. Ephemeral containers cannot come with a new pod.
pub fn validate_pod_create(pod: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !is_dns1123_subdomain(name) {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            DNS1123_SUBDOMAIN,
        ));
    }
    let mut volumes = Vec::new();
    for (i, volume) in containers(pod, "volumes").iter().enumerate() {
        let path = format!("spec.volumes[{i}]");
        let name = volume
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name_errors = dns1123_label_errors(name);
        if name.is_empty() {
            errors.push(FieldError::required(format!("{path}.name"), ""));
        } else if !name_errors.is_empty() {
            for detail in name_errors {
                errors.push(FieldError::invalid(format!("{path}.name"), name, detail));
            }
        } else if volumes.iter().any(|v| v == name) {
            errors.push(FieldError::duplicate(format!("{path}.name"), name));
        } else {
            volumes.push(name.to_string());
        }
        if let Some(host) = volume.get("hostPath") {
            let host_path = host.get("path").and_then(Value::as_str).unwrap_or_default();
            if host_path.is_empty() {
                errors.push(FieldError::required(format!("{path}.hostPath.path"), ""));
            } else if host_path.split('/').any(|part| part == "..") {
                errors.push(FieldError::invalid(
                    format!("{path}.hostPath.path"),
                    host_path,
                    "must not contain '..'",
                ));
            }
        }
    }
    if containers(pod, "containers").is_empty() {
        errors.push(FieldError::required("spec.containers", ""));
    }
    // Regular containers first: an init container that takes one's name
    // is the duplicate.
    let mut names = Vec::new();
    for field in ["containers", "initContainers"] {
        for (i, container) in containers(pod, field).iter().enumerate() {
            let path = format!("spec.{field}[{i}]");
            let Some(fields) = named_container(pod, container, &path, &mut names, &mut errors)
            else {
                continue;
            };
            validate_volume_mounts(fields, &path, &volumes, false, &mut errors);
        }
    }
    if pod
        .pointer("/spec/ephemeralContainers")
        .is_some_and(|v| !is_zero(v))
    {
        // Validated as on an update, then refused as on every create.
        errors.extend(validate_new_pod(pod));
        errors.push(FieldError::forbidden(
            "spec.ephemeralContainers",
            "cannot be set on create",
        ));
    }
    if let Some(spec) = pod.get("spec").and_then(Value::as_object) {
        validate_enum(
            spec,
            "spec",
            "restartPolicy",
            &["Always", "OnFailure", "Never"],
            &mut errors,
        );
    }
    errors
}

fn is_dns1123_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .split('.')
            .all(|part| !part.is_empty() && is_dns1123_label(part))
}

fn validate_name(
    fields: &Map<String, Value>,
    path: &str,
    all_names: &mut Vec<String>,
    errors: &mut Vec<FieldError>,
) {
    let name = str_field(fields, "name");
    let name_path = format!("{path}.name");
    if name.is_empty() {
        errors.push(FieldError::required(&name_path, ""));
    } else {
        for detail in dns1123_label_errors(name) {
            errors.push(FieldError::invalid(&name_path, name, detail));
        }
    }
    // An empty name is a duplicate of another empty one too.
    if all_names.iter().any(|n| n == name) {
        errors.push(FieldError::duplicate(name_path, name));
    } else {
        all_names.push(name.to_string());
    }
}

/// What apimachinery's `IsDNS1123Label` says of a name: too long, and
/// (separately) not a label — "must not contain dots" when it would be a
/// subdomain.
fn dns1123_label_errors(name: &str) -> Vec<&'static str> {
    let mut errors = Vec::new();
    if name.len() > 63 {
        errors.push("must be no more than 63 characters");
    }
    if !is_dns1123_label(name) {
        let subdomain = name
            .split('.')
            .all(|part| !part.is_empty() && is_dns1123_label(part));
        errors.push(if subdomain {
            "must not contain dots"
        } else {
            DNS1123_LABEL
        });
    }
    errors
}

/// A container's volume mounts, of any kind (`ValidateVolumeMounts`): a
/// named volume of the pod, a mount path, each path once; an ephemeral
/// container's may not use a sub-path.
fn validate_volume_mounts(
    fields: &Map<String, Value>,
    path: &str,
    volumes: &[String],
    ephemeral: bool,
    errors: &mut Vec<FieldError>,
) {
    let mut mount_points: Vec<&str> = Vec::new();
    for (j, mount) in fields
        .get("volumeMounts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mount_path = format!("{path}.volumeMounts[{j}]");
        let text = |field: &str| mount.get(field).and_then(Value::as_str).unwrap_or_default();
        let name = text("name");
        if name.is_empty() {
            errors.push(FieldError::required(format!("{mount_path}.name"), ""));
        }
        if !volumes.iter().any(|v| v == name) {
            errors.push(FieldError::not_found(format!("{mount_path}.name"), name));
        }
        let point = text("mountPath");
        if point.is_empty() {
            errors.push(FieldError::required(format!("{mount_path}.mountPath"), ""));
        }
        if mount_points.contains(&point) {
            errors.push(FieldError::invalid(
                format!("{mount_path}.mountPath"),
                point,
                "must be unique",
            ));
        }
        mount_points.push(point);
        if ephemeral {
            for forbidden in ["subPath", "subPathExpr"] {
                if mount.get(forbidden).is_some_and(|v| !is_zero(v)) {
                    errors.push(FieldError::forbidden(
                        format!("{mount_path}.{forbidden}"),
                        FORBIDDEN,
                    ));
                }
            }
        }
    }
}

fn validate_enum(
    fields: &Map<String, Value>,
    path: &str,
    field: &str,
    valid: &[&str],
    errors: &mut Vec<FieldError>,
) {
    let value = str_field(fields, field);
    if !value.is_empty() && !valid.contains(&value) {
        errors.push(FieldError::not_supported(
            format!("{path}.{field}"),
            value,
            valid,
        ));
    }
}

fn containers<'a>(pod: &'a Value, field: &str) -> &'a [Value] {
    pod.get("spec")
        .and_then(|s| s.get(field))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn is_dns1123_label(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// Go's zero value: what a field decodes to when absent.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.values().all(is_zero),
    }
}

/// The value with zero-valued fields removed, for apimachinery's semantic
/// equality (where nil and empty are the same).
fn without_zeros(value: &Value) -> Value {
    match value {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(_, v)| !is_zero(v))
                .map(|(k, v)| (k.clone(), without_zeros(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_zeros).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::status::ApiError;
    use serde_json::json;

    fn pod(ephemeral: Value) -> Value {
        json!({
            "metadata": {"name": "web-1", "namespace": "shop"},
            "spec": {
                "containers": [{"name": "app", "image": "app:1"}],
                "initContainers": [{"name": "init", "image": "busybox"}],
                "volumes": [{"name": "data"}],
                "ephemeralContainers": ephemeral,
            },
        })
    }

    fn errors(new: Value, old: Value) -> Vec<String> {
        validate_ephemeral_containers_update(&pod(new), &pod(old))
            .iter()
            .map(FieldError::message)
            .collect()
    }

    #[test]
    fn a_plain_debug_container_is_valid_even_with_kubectls_empty_resources() {
        let ok = json!([{"name": "debugger", "image": "busybox", "stdin": true, "tty": true, "targetContainerName": "app", "resources": {}, "ports": null}]);
        assert_eq!(errors(ok, json!([])), Vec::<String>::new());
    }

    #[test]
    fn set_follows_gos_zero_values() {
        // A non-nil slice is set even when empty; a struct with a non-nil map is set.
        let got = errors(
            json!([{"name": "d", "image": "b", "ports": [], "resources": {"limits": {}}}]),
            json!([]),
        );
        assert_eq!(
            got,
            [
                "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
            ]
        );
    }

    #[test]
    fn forbidden_fields_are_named_with_their_path() {
        let bad = json!([{"name": "d", "image": "busybox", "ports": [{"containerPort": 80}], "livenessProbe": {"exec": {"command": ["true"]}}, "resources": {"limits": {"cpu": "1"}}, "lifecycle": {"preStop": {}}}]);
        let mut got = errors(bad, json!([]));
        got.sort();
        assert_eq!(
            got,
            [
                "spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[0].livenessProbe: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
            ]
        );
    }

    #[test]
    fn names_must_be_unique_labels_and_targets_must_exist() {
        let bad = json!([
            {"name": "app", "image": "busybox"},
            {"name": "Bad_Name", "image": "busybox"},
            {"name": "d", "image": "", "targetContainerName": "nope"},
            {"name": "d", "image": "x", "targetContainerName": "init"},
        ]);
        let got = errors(bad, json!([]));
        assert!(
            got.contains(&"spec.ephemeralContainers[0].name: Duplicate value: \"app\"".to_string()),
            "{got:?}"
        );
        assert!(got.iter().any(|e| e.starts_with("spec.ephemeralContainers[1].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label")), "{got:?}");
        assert!(
            got.contains(&"spec.ephemeralContainers[2].image: Required value".to_string()),
            "{got:?}"
        );
        assert!(
            got.contains(
                &"spec.ephemeralContainers[2].targetContainerName: Not found: \"nope\"".to_string()
            ),
            "{got:?}"
        );
        assert!(
            got.contains(&"spec.ephemeralContainers[3].name: Duplicate value: \"d\"".to_string()),
            "{got:?}"
        );
        assert_eq!(got.len(), 5, "an init container is a valid target: {got:?}");
    }

    #[test]
    fn existing_entries_can_be_neither_removed_nor_changed() {
        let old = json!([{"name": "d", "image": "busybox", "resources": {}}]);
        assert_eq!(
            errors(json!([{"name": "d", "image": "busybox"}]), old.clone()),
            Vec::<String>::new(),
            "empty equals absent"
        );
        assert_eq!(
            errors(json!([]), old.clone()),
            [
                "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"d\" may not be removed\n"
            ]
        );
        assert_eq!(
            errors(json!([{"name": "d", "image": "alpine"}]), old),
            [
                "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"d\" may not be changed\n"
            ]
        );
    }

    #[test]
    fn subpaths_unknown_volumes_and_bad_enums() {
        let bad = json!([{"name": "d", "image": "b", "imagePullPolicy": "Sometimes",
            "volumeMounts": [{"name": "data", "mountPath": "/d", "subPath": "x"}, {"name": "ghost", "mountPath": "/g"}]}]);
        let got = errors(bad, json!([]));
        assert!(got.contains(&"spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container".to_string()), "{got:?}");
        assert!(
            got.contains(
                &"spec.ephemeralContainers[0].volumeMounts[1].name: Not found: \"ghost\""
                    .to_string()
            ),
            "{got:?}"
        );
        assert!(got.contains(&"spec.ephemeralContainers[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\"".to_string()), "{got:?}");
    }

    #[test]
    fn static_pods_refuse_ephemeral_containers() {
        let mut old = pod(json!([]));
        old["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "abc"});
        let new = pod(json!([{"name": "d", "image": "busybox"}]));
        let errs = validate_ephemeral_containers_update(&new, &old);
        let status = ApiError::invalid("Pod", "web-1", &errs);
        assert_eq!(
            status.message,
            "Pod \"web-1\" is invalid: : Forbidden: static pods do not support ephemeral containers"
        );
    }

    /// The apiserver's rule for every container of a pod, ephemeral ones
    /// too: an image is required and has no leading or trailing whitespace
    /// (a blank one was "required" for a pod and passed for a debugger).
    #[test]
    fn an_image_with_surrounding_whitespace_is_invalid_for_every_kind() {
        let debugger = errors(json!([{"name": "d", "image": " busybox"}]), json!([]));
        assert_eq!(
            debugger,
            [
                "spec.ephemeralContainers[0].image: Invalid value: \" busybox\": must not have leading or trailing whitespace"
            ]
        );
        let created = validate_pod_create(&json!({
            "metadata": {"name": "p", "namespace": "shop"},
            "spec": {"containers": [{"name": "a", "image": "  "}, {"name": "b", "image": ""}]},
        }));
        let got: Vec<String> = created.iter().map(FieldError::message).collect();
        assert!(
            got.contains(&"spec.containers[0].image: Invalid value: \"  \": must not have leading or trailing whitespace".to_string())
                && got.contains(&"spec.containers[1].image: Required value".to_string()),
            "{got:?}"
        );
    }

    /// Cases of `TestValidateEphemeralContainers` and `ValidatePodSpec`,
    /// written here as facts.
    #[test]
    fn upstream_cases_for_names_and_mounts() {
        let debugger = |fields: Value| {
            let mut c = json!({"name": "dbg", "image": "busybox", "imagePullPolicy": "Always",
                "terminationMessagePolicy": "File"});
            for (k, v) in fields.as_object().unwrap() {
                c[k] = v.clone();
            }
            c
        };
        for (ephemeral, expected) in [
            (
                json!([debugger(json!({"name": "a.b"}))]),
                vec![
                    r#"spec.ephemeralContainers[0].name: Invalid value: "a.b": must not contain dots"#,
                ],
            ),
            (
                json!([debugger(json!({"name": "A".repeat(64)}))]),
                vec![
                    "must be no more than 63 characters",
                    "a lowercase RFC 1123 label",
                ],
            ),
            (
                json!([debugger(json!({"name": ""})), debugger(json!({"name": ""}))]),
                vec![
                    "spec.ephemeralContainers[0].name: Required value",
                    "spec.ephemeralContainers[1].name: Required value",
                    r#"spec.ephemeralContainers[1].name: Duplicate value: """#,
                ],
            ),
            (
                json!([debugger(json!({"volumeMounts": [{"name": "data"}]}))]),
                vec!["spec.ephemeralContainers[0].volumeMounts[0].mountPath: Required value"],
            ),
            (
                json!([debugger(
                    json!({"volumeMounts": [{"name": "data", "mountPath": "/d"}, {"name": "data", "mountPath": "/d"}]})
                )]),
                vec![
                    r#"spec.ephemeralContainers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique"#,
                ],
            ),
            (
                json!([debugger(json!({"volumeMounts": [{"mountPath": "/d"}]}))]),
                vec![
                    "spec.ephemeralContainers[0].volumeMounts[0].name: Required value",
                    r#"spec.ephemeralContainers[0].volumeMounts[0].name: Not found: """#,
                ],
            ),
        ] {
            let said = errors(ephemeral.clone(), json!([]));
            assert_eq!(said.len(), expected.len(), "{ephemeral}: {said:?}");
            for (message, part) in said.iter().zip(&expected) {
                assert!(
                    message.contains(part),
                    "{ephemeral}: {message:?} lacks {part:?}"
                );
            }
        }
    }

    #[test]
    fn a_create_names_an_init_container_as_the_duplicate_and_validates_ephemeral_ones() {
        let create = |spec: Value| -> Vec<String> {
            validate_pod_create(&json!({"metadata": {"name": "p"}, "spec": spec}))
                .iter()
                .map(FieldError::message)
                .collect()
        };
        assert_eq!(
            create(json!({"containers": [{"name": "app", "image": "x"}],
                "initContainers": [{"name": "app", "image": "x"}]})),
            [r#"spec.initContainers[0].name: Duplicate value: "app""#]
        );
        assert_eq!(
            create(json!({"containers": [{"name": "app", "image": "x"}],
                "ephemeralContainers": [{"name": "d", "imagePullPolicy": "Always", "terminationMessagePolicy": "File"}]})),
            [
                "spec.ephemeralContainers[0].image: Required value",
                "spec.ephemeralContainers: Forbidden: cannot be set on create"
            ]
        );
        assert_eq!(
            create(json!({"containers": [{"name": "app", "image": "x",
                "volumeMounts": [{"name": "v", "mountPath": "/a"}, {"name": "v", "mountPath": "/a"}]}],
                "volumes": [{"name": "v", "emptyDir": {}}]})),
            [
                r#"spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique"#
            ]
        );
    }

    #[test]
    fn an_unmasked_proc_needs_the_pods_own_user_namespace() {
        let spec = |host_users: Value| {
            json!({"metadata": {"name": "p"}, "spec": {"hostUsers": host_users,
                "containers": [{"name": "a", "image": "x", "securityContext": {"procMount": "Unmasked"}}]}})
        };
        let said: Vec<String> = validate_pod_create(&spec(Value::Null))
            .iter()
            .map(FieldError::message)
            .collect();
        assert_eq!(
            said,
            [
                r#"spec.containers[0].securityContext.procMount: Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`"#
            ]
        );
        assert!(validate_pod_create(&spec(json!(false))).is_empty());
    }
}

use super::*;
use serde_json::json;

fn pod(spec: serde_json::Value) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": "redis-0"}, "spec": spec})).unwrap()
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (format!("{LABEL}{k}"), v.to_string()))
        .collect()
}

fn debugger(security: serde_json::Value) -> serde_json::Value {
    json!({
        "containers": [{"name": "redis", "image": "redis:7.4"}],
        "ephemeralContainers": [{"name": "debugger-x", "image": "busybox", "securityContext": security}],
    })
}

#[test]
fn baseline_refuses_sys_ptrace_in_the_plugins_words() {
    let policy = Policy::from_labels(&labels(&[("enforce", "baseline")]));
    let refused = policy.refusal(&pod(debugger(
        json!({"capabilities": {"add": ["SYS_PTRACE"]}}),
    )));
    assert_eq!(
        refused.as_deref(),
        Some(
            r#"pods "redis-0" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "debugger-x" must not include "SYS_PTRACE" in securityContext.capabilities.add)"#
        )
    );
    assert_eq!(policy.refusal(&pod(debugger(json!(null)))), None);
}

#[test]
fn restricted_lists_every_reason_in_order_with_every_container() {
    let policy = Policy::from_labels(&labels(&[
        ("enforce", "restricted"),
        ("enforce-version", "v1.30"),
    ]));
    let refused = policy
        .refusal(&pod(debugger(
            json!({"capabilities": {"add": ["SYS_PTRACE"]}}),
        )))
        .unwrap();
    assert_eq!(
        refused,
        concat!(
            r#"pods "redis-0" is forbidden: violates PodSecurity "restricted:v1.30": "#,
            r#"allowPrivilegeEscalation != false (containers "redis", "debugger-x" must set securityContext.allowPrivilegeEscalation=false), "#,
            r#"unrestricted capabilities (containers "redis", "debugger-x" must set securityContext.capabilities.drop=["ALL"]; container "debugger-x" must not include "SYS_PTRACE" in securityContext.capabilities.add), "#,
            r#"runAsNonRoot != true (pod or containers "redis", "debugger-x" must set securityContext.runAsNonRoot=true), "#,
            r#"seccompProfile (pod or containers "redis", "debugger-x" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#
        )
    );
}

#[test]
fn pod_level_settings_cover_containers_that_leave_them_unset() {
    let restricted = json!({
        "securityContext": {"runAsNonRoot": true, "runAsUser": 65534, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "prometheus", "image": "prom",
            "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}],
        "ephemeralContainers": [{"name": "debugger-x", "image": "busybox", "securityContext": {
            "runAsNonRoot": true, "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}}],
    });
    assert_eq!(evaluate(Level::Restricted, &pod(restricted)), []);
}

#[test]
fn host_namespaces_paths_ports_and_privilege_are_baseline_violations() {
    let spec = json!({
        "hostNetwork": true, "hostPID": true,
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
        "containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 443, "hostPort": 443}],
            "securityContext": {"privileged": true}}],
    });
    let violations = evaluate(Level::Baseline, &pod(spec));
    assert_eq!(
        detail(&violations),
        r#"host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "root"), hostPort (container "a" uses hostPorts 443, 8080), privileged (container "a" must not set securityContext.privileged=true)"#
    );
}

#[test]
fn labels_choose_the_policy_as_the_plugin_parses_them() {
    let none = Policy::from_labels(&BTreeMap::new());
    assert_eq!(none.enforce.level, Level::Privileged);
    let bad = Policy::from_labels(&labels(&[
        ("enforce", "strict"),
        ("enforce-version", "1.30"),
    ]));
    assert_eq!(bad.enforce.to_string(), "restricted:latest", "fails closed");
    let warn_only = Policy::from_labels(&labels(&[("warn", "restricted")]));
    assert_eq!(warn_only.enforce.level, Level::Privileged);
    assert_eq!(warn_only.warn.to_string(), "restricted:latest");
    let enforced = Policy::from_labels(&labels(&[
        ("enforce", "baseline"),
        ("enforce-version", "v1.31"),
    ]));
    assert_eq!(
        enforced.warn.to_string(),
        "baseline:v1.31",
        "warn defaults to enforce"
    );
}

#[test]
fn a_refusal_names_the_level_it_enforces() {
    let message = r#"pods "x" is forbidden: violates PodSecurity "restricted:v1.30": runAsNonRoot != true (…)"#;
    let policy = Policy::from_refusal(message).unwrap();
    assert_eq!(policy.enforce.to_string(), "restricted:v1.30");
    assert_eq!(
        Policy::from_refusal("pods \"x\" is forbidden: User cannot patch"),
        None
    );
}

#[test]
fn a_warn_level_words_its_warning() {
    let policy = Policy::from_labels(&labels(&[("warn", "restricted")]));
    let p = pod(json!({
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "report", "image": "r", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}],
        "ephemeralContainers": [{"name": "debugger-x", "image": "busybox", "securityContext": {"capabilities": {"add": ["SYS_PTRACE"]}}}],
    }));
    assert_eq!(policy.refusal(&p), None);
    assert_eq!(
        policy.warning(&p).as_deref(),
        Some(
            r#"would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "debugger-x" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "debugger-x" must set securityContext.capabilities.drop=["ALL"]; container "debugger-x" must not include "SYS_PTRACE" in securityContext.capabilities.add)"#
        )
    );
}

#[test]
fn short_words_name_what_a_narrow_form_can_show() {
    let violations = evaluate(
        Level::Baseline,
        &pod(debugger(json!({"capabilities": {"add": ["SYS_PTRACE"]}}))),
    );
    assert_eq!(short(&violations), "SYS_PTRACE");
}

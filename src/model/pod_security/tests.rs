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
    assert_eq!(
        evaluate(&LevelVersion::latest(Level::Restricted), &pod(restricted)),
        []
    );
}

#[test]
fn host_namespaces_paths_ports_and_privilege_are_baseline_violations() {
    let spec = json!({
        "hostNetwork": true, "hostPID": true,
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
        "containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 443, "hostPort": 443}],
            "securityContext": {"privileged": true}}],
    });
    let violations = evaluate(&LevelVersion::latest(Level::Baseline), &pod(spec));
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
        &LevelVersion::latest(Level::Baseline),
        &pod(debugger(json!({"capabilities": {"add": ["SYS_PTRACE"]}}))),
    );
    assert_eq!(short(&violations), "SYS_PTRACE");
}

/// Cases carrying the plugin's facts (k8s.io/pod-security-admission's
/// `policy/check_*.go` and `test/fixtures_*.go`), written here.
mod upstream {
    use super::*;

    fn at(level: Level, version: &str) -> LevelVersion {
        LevelVersion {
            level,
            version: version.to_string(),
        }
    }

    fn reasons(level: Level, version: &str, spec: serde_json::Value) -> String {
        detail(&evaluate(&at(level, version), &pod(spec)))
    }

    /// The fixtures' smallest restricted pod (as of 1.22): an init and a
    /// regular container, non-root, RuntimeDefault, no escalation, no
    /// capabilities.
    fn restricted(extra: serde_json::Value) -> serde_json::Value {
        let locked = json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}});
        let mut spec = json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "initContainers": [{"name": "initcontainer1", "image": "x", "securityContext": locked}],
            "containers": [{"name": "container1", "image": "x", "securityContext": locked}],
        });
        merge(&mut spec, extra);
        spec
    }

    fn merge(into: &mut serde_json::Value, from: serde_json::Value) {
        match (into, from) {
            (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                for (k, v) in b {
                    merge(a.entry(k).or_insert(serde_json::Value::Null), v);
                }
            }
            (slot, value) => *slot = value,
        }
    }

    #[test]
    fn an_explicit_false_is_all_run_as_non_root_says() {
        let spec = restricted(json!({"securityContext": {"runAsNonRoot": false}}));
        assert_eq!(
            reasons(Level::Restricted, "latest", spec),
            r#"runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)"#
        );
    }

    #[test]
    fn an_explicit_bad_seccomp_type_is_all_restricted_says() {
        let spec =
            restricted(json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}}}));
        assert_eq!(
            reasons(Level::Restricted, "latest", spec),
            r#"seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")"#
        );
    }

    #[test]
    fn selinux_types_are_sorted() {
        let spec = json!({
            "securityContext": {"seLinuxOptions": {"type": "foo"}},
            "containers": [{"name": "a", "image": "x", "securityContext": {"seLinuxOptions": {"type": "bar"}}}],
        });
        assert_eq!(
            reasons(Level::Baseline, "latest", spec),
            r#"seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: types "bar", "foo")"#
        );
    }

    #[test]
    fn an_apparmor_annotation_is_quoted_without_escaping() {
        let spec = json!({"containers": [{"name": "a", "image": "x"}]});
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "annotations": {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"}},
            "spec": spec,
        }))
        .unwrap();
        assert_eq!(
            detail(&evaluate(&at(Level::Baseline, "latest"), &pod)),
            r#"forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/a="unconfined"")"#
        );
    }

    /// The volume types restricted allows, and every other one named, in
    /// byte order, a volume with no source as "unknown".
    #[test]
    fn restricted_names_every_volume_type_it_does_not_allow() {
        let allowed = json!([
            {"name": "a1", "emptyDir": {}},
            {"name": "a2", "secret": {}},
            {"name": "a3", "persistentVolumeClaim": {"claimName": "c"}},
            {"name": "a4", "downwardAPI": {}},
            {"name": "a5", "configMap": {}},
            {"name": "a6", "projected": {}},
            {"name": "a7", "csi": {"driver": "d"}},
            {"name": "a8", "ephemeral": {}},
            {"name": "a9", "image": {}},
        ]);
        let spec = restricted(json!({"volumes": allowed.clone()}));
        assert_eq!(reasons(Level::Restricted, "latest", spec), "");
        let refused = json!([
            {"name": "b1", "hostPath": {"path": "/"}},
            {"name": "b2", "gcePersistentDisk": {"pdName": "d"}},
            {"name": "b3", "awsElasticBlockStore": {"volumeID": "v"}},
            {"name": "b4", "gitRepo": {"repository": "r"}},
            {"name": "b5", "nfs": {"server": "s", "path": "/"}},
            {"name": "b6", "iscsi": {"targetPortal": "t", "iqn": "i", "lun": 0}},
            {"name": "b7", "glusterfs": {"endpoints": "e", "path": "p"}},
            {"name": "b8", "rbd": {"monitors": [], "image": "i"}},
            {"name": "b9", "flexVolume": {"driver": "d"}},
            {"name": "b10", "cinder": {"volumeID": "v"}},
            {"name": "b11", "cephfs": {"monitors": []}},
            {"name": "b12", "flocker": {}},
            {"name": "b13", "fc": {}},
            {"name": "b14", "azureFile": {"secretName": "s", "shareName": "s"}},
            {"name": "b15", "vsphereVolume": {"volumePath": "p"}},
            {"name": "b16", "quobyte": {"registry": "r", "volume": "v"}},
            {"name": "b17", "azureDisk": {"diskName": "d", "diskURI": "u"}},
            {"name": "b18", "photonPersistentDisk": {"pdID": "p"}},
            {"name": "b19", "portworxVolume": {"volumeID": "v"}},
            {"name": "b20", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {}}},
            {"name": "b21", "storageos": {}},
            {"name": "c1"},
        ]);
        let mut volumes = allowed.as_array().unwrap().clone();
        volumes.extend(refused.as_array().unwrap().iter().cloned());
        let pod = pod(restricted(json!({"volumes": volumes})));
        let violations = evaluate(&at(Level::Restricted, "latest"), &pod);
        let restricted_types = violations
            .iter()
            .find(|v| v.reason == "restricted volume types")
            .expect("the volume types check");
        assert_eq!(
            restricted_types.detail,
            concat!(
                r#"volumes "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", "b14", "b15", "b16", "b17", "b18", "b19", "b20", "b21", "c1""#,
                r#" use restricted volume types "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "#,
                r#""hostPath", "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "unknown", "vsphereVolume""#,
            )
        );
        // One volume: said in the singular.
        let spec = restricted(json!({"volumes": [{"name": "b1", "hostPath": {"path": "/"}}]}));
        assert!(reasons(Level::Restricted, "latest", spec).ends_with(
            r#"restricted volume types (volume "b1" uses restricted volume type "hostPath")"#
        ));
    }

    /// A hostProcess pod or container is refused from baseline up; false
    /// or unset is not.
    #[test]
    fn host_process_is_refused_where_set_true() {
        let with = |pod_level: bool| {
            let windows = |host: Option<bool>| match host {
                Some(host) => json!({"windowsOptions": {"hostProcess": host}}),
                None => json!({"windowsOptions": {}}),
            };
            json!({
                "securityContext": {"windowsOptions": {"hostProcess": pod_level}},
                "containers": [
                    {"name": "a", "image": "x"},
                    {"name": "b", "image": "x", "securityContext": {}},
                    {"name": "c", "image": "x", "securityContext": windows(None)},
                    {"name": "d", "image": "x", "securityContext": windows(Some(false))},
                    {"name": "e", "image": "x", "securityContext": windows(Some(true))},
                    {"name": "f", "image": "x", "securityContext": windows(Some(true))},
                ],
            })
        };
        assert_eq!(
            reasons(Level::Baseline, "latest", with(true)),
            r#"hostProcess (pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true)"#
        );
        assert_eq!(
            reasons(Level::Baseline, "latest", with(false)),
            r#"hostProcess (containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true)"#
        );
        let none = json!({
            "securityContext": {"windowsOptions": {"hostProcess": false}},
            "containers": [{"name": "d", "image": "x", "securityContext": {"windowsOptions": {"hostProcess": false}}}],
        });
        assert_eq!(reasons(Level::Baseline, "latest", none), "");
    }

    /// Each check as of the version a namespace pins: (level, version,
    /// spec, admitted).
    #[test]
    fn a_pinned_version_runs_the_checks_of_that_version() {
        let probe_host = json!({"containers": [{"name": "a", "image": "x",
            "livenessProbe": {"httpGet": {"port": 80, "host": "10.0.0.1"}}}]});
        let unmasked = json!({"hostUsers": false, "containers": [{"name": "a", "image": "x",
            "securityContext": {"procMount": "Unmasked"}}]});
        let engine = json!({"containers": [{"name": "a", "image": "x",
            "securityContext": {"seLinuxOptions": {"type": "container_engine_t"}}}]});
        let sysctl = |name: &str| {
            json!({"securityContext": {"sysctls": [{"name": name, "value": "1"}]},
            "containers": [{"name": "a", "image": "x"}]})
        };
        let own_users = {
            let mut spec = restricted(json!({"hostUsers": false}));
            spec["securityContext"]
                .as_object_mut()
                .unwrap()
                .remove("runAsNonRoot");
            spec
        };
        let windows = json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true},
            "containers": [{"name": "container1", "image": "x"}]});
        let root_user = restricted(json!({"securityContext": {"runAsUser": 0}}));
        let no_drop = json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "a", "image": "x", "securityContext": {"allowPrivilegeEscalation": false}}]});
        let cases = [
            (Level::Baseline, "v1.33", probe_host.clone(), true),
            (Level::Baseline, "v1.34", probe_host, false),
            (Level::Baseline, "v1.34", unmasked.clone(), false),
            (Level::Baseline, "v1.35", unmasked.clone(), true),
            (Level::Baseline, "latest", unmasked.clone(), true),
            (
                Level::Restricted,
                "latest",
                restricted(
                    json!({"hostUsers": false, "containers": [{"name": "container1", "securityContext": {"procMount": "Unmasked"}}]}),
                ),
                false,
            ),
            (Level::Baseline, "v1.30", engine.clone(), false),
            (Level::Baseline, "v1.31", engine, true),
            (
                Level::Baseline,
                "v1.26",
                sysctl("net.ipv4.ip_local_reserved_ports"),
                false,
            ),
            (
                Level::Baseline,
                "v1.27",
                sysctl("net.ipv4.ip_local_reserved_ports"),
                true,
            ),
            (
                Level::Baseline,
                "v1.28",
                sysctl("net.ipv4.tcp_keepalive_time"),
                false,
            ),
            (
                Level::Baseline,
                "v1.29",
                sysctl("net.ipv4.tcp_keepalive_time"),
                true,
            ),
            (Level::Baseline, "v1.31", sysctl("net.ipv4.tcp_rmem"), false),
            (Level::Baseline, "v1.32", sysctl("net.ipv4.tcp_rmem"), true),
            (Level::Restricted, "v1.34", own_users.clone(), false),
            (Level::Restricted, "v1.35", own_users, true),
            (Level::Restricted, "v1.24", windows.clone(), false),
            (Level::Restricted, "v1.25", windows, true),
            (Level::Restricted, "v1.22", root_user.clone(), true),
            (Level::Restricted, "v1.23", root_user, false),
            (Level::Restricted, "v1.21", no_drop.clone(), true),
            (Level::Restricted, "v1.22", no_drop, false),
            // A version newer than the cluster is evaluated as its newest.
            (Level::Baseline, "v1.99", unmasked, true),
        ];
        for (level, version, spec, admitted) in cases {
            let said = reasons(level, version, spec);
            assert_eq!(said.is_empty(), admitted, "{level:?}:{version}: {said}");
        }
    }

    #[test]
    fn before_1_22_restricted_names_capabilities_as_baseline_does() {
        let spec = json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "a", "image": "x", "securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"add": ["SYS_PTRACE"]}}}]});
        assert_eq!(
            reasons(Level::Restricted, "v1.21", spec),
            r#"non-default capabilities (container "a" must not include "SYS_PTRACE" in securityContext.capabilities.add)"#
        );
    }

    #[test]
    fn before_1_19_seccomp_is_read_from_annotations() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}},
            "spec": {"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": [{"name": "a", "image": "x"}]},
        }))
        .unwrap();
        assert_eq!(
            detail(&evaluate(&at(Level::Baseline, "v1.18"), &pod)),
            r#"seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")"#
        );
        assert_eq!(
            detail(&evaluate(&at(Level::Baseline, "v1.19"), &pod)),
            r#"seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")"#
        );
    }

    #[test]
    fn warn_follows_enforce_only_when_enforce_is_valid() {
        let bad = Policy::from_labels(&labels(&[("enforce", "strict")]));
        assert_eq!(bad.enforce.level, Level::Restricted);
        assert_eq!(bad.warn.level, Level::Privileged);
        let overflow = Policy::from_labels(&labels(&[
            ("enforce", "baseline"),
            ("enforce-version", "v1.999999999999999999999"),
        ]));
        assert_eq!(overflow.enforce.to_string(), "baseline:latest");
    }
}

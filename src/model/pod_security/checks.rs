//! The checks of each level, one function each, named and worded as the
//! plugin's (k8s.io/pod-security-admission/policy/check_*.go): each
//! returns its violation of a pod, or `None`.

use super::*;

/// `"a", "b"`: the plugin's `joinQuote`, which escapes nothing.
fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("\"{}\"", items.join("\", \""))
}

fn plural<'s>(singular: &'s str, plural: &'s str, n: usize) -> &'s str {
    if n == 1 { singular } else { plural }
}

/// `container "a"` / `containers "a", "b"`.
fn containers_phrase(names: &[&str]) -> String {
    format!(
        "{} {}",
        plural("container", "containers", names.len()),
        join_quote(names)
    )
}

/// `pod and containers "a", "b"`: who set a bad value.
fn setters(pod: bool, containers: &[&str]) -> String {
    let mut parts = Vec::new();
    if pod {
        parts.push("pod".to_string());
    }
    if !containers.is_empty() {
        parts.push(containers_phrase(containers));
    }
    parts.join(" and ")
}

/// A check whose detail has several parts (explicit bad values, then
/// missing ones), joined as the plugin joins them; `None` without any.
fn violation_of_parts(reason: &'static str, parts: Vec<String>, short: &str) -> Option<Violation> {
    if parts.is_empty() {
        return None;
    }
    violation(reason, parts.join("; "), short)
}

fn violation(reason: &'static str, detail: String, short: &str) -> Option<Violation> {
    Some(Violation {
        reason,
        detail,
        short: short.to_string(),
    })
}

pub(super) fn app_armor(pod: &PodFacts) -> Option<Violation> {
    let allowed = |t: &str| matches!(t, "RuntimeDefault" | "Localhost");
    let mut bad_values = BTreeSet::new();
    let mut bad = |profile: Option<&k8s_openapi::api::core::v1::AppArmorProfile>| {
        let forbidden = profile.filter(|p| !allowed(&p.type_));
        if let Some(p) = forbidden {
            bad_values.insert(p.type_.clone());
        }
        forbidden.is_some()
    };
    let pod_bad = bad(pod
        .pod_security()
        .and_then(|s| s.app_armor_profile.as_ref()));
    let containers: Vec<&str> = pod
        .containers
        .iter()
        .filter(|c| bad(c.security.and_then(|s| s.app_armor_profile.as_ref())))
        .map(|c| c.name)
        .collect();
    let mut values: Vec<String> = bad_values.into_iter().collect();
    let mut annotations = BTreeSet::new();
    for (key, value) in pod.annotations.into_iter().flatten() {
        if key.starts_with("container.apparmor.security.beta.kubernetes.io/")
            && !(value.is_empty() || value == "runtime/default" || value.starts_with("localhost/"))
        {
            annotations.insert(format!("{key}={value:?}"));
        }
    }
    let annotation_count = annotations.len();
    values.extend(annotations);
    if values.is_empty() {
        return None;
    }
    let mut who = setters(pod_bad, &containers);
    if annotation_count > 0 {
        let word = plural("annotation", "annotations", annotation_count);
        who = if who.is_empty() {
            word.to_string()
        } else {
            format!("{who} and {word}")
        };
    }
    violation(
        if values.len() == 1 {
            "forbidden AppArmor profile"
        } else {
            "forbidden AppArmor profiles"
        },
        format!(
            "{who} must not set AppArmor profile type to {}",
            join_quote(&values)
        ),
        "AppArmor profile",
    )
}

const BASELINE_CAPABILITIES: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn added_capabilities<'a>(c: &ContainerView<'a>) -> &'a [String] {
    c.security
        .and_then(|s| s.capabilities.as_ref())
        .and_then(|caps| caps.add.as_deref())
        .unwrap_or_default()
}

/// The containers adding capabilities outside `allowed`, and those
/// capabilities (sorted).
fn forbidden_capabilities<'a>(pod: &PodFacts<'a>, allowed: &[&str]) -> (Vec<&'a str>, Vec<String>) {
    let mut names = Vec::new();
    let mut capabilities = BTreeSet::new();
    for c in &pod.containers {
        let bad: Vec<&String> = added_capabilities(c)
            .iter()
            .filter(|cap| !allowed.contains(&cap.as_str()))
            .collect();
        if !bad.is_empty() {
            names.push(c.name);
            capabilities.extend(bad.into_iter().cloned());
        }
    }
    (names, capabilities.into_iter().collect())
}

pub(super) fn capabilities_baseline(pod: &PodFacts) -> Option<Violation> {
    let (names, capabilities) = forbidden_capabilities(pod, &BASELINE_CAPABILITIES);
    if names.is_empty() {
        return None;
    }
    violation(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&names),
            join_quote(&capabilities)
        ),
        &capabilities.join(", "),
    )
}

pub(super) fn host_namespaces(pod: &PodFacts) -> Option<Violation> {
    let s = pod.spec;
    let set: Vec<&str> = [
        (s.host_network, "hostNetwork=true"),
        (s.host_pid, "hostPID=true"),
        (s.host_ipc, "hostIPC=true"),
    ]
    .into_iter()
    .filter(|(on, _)| *on == Some(true))
    .map(|(_, text)| text)
    .collect();
    if set.is_empty() {
        return None;
    }
    violation("host namespaces", set.join(", "), "host namespaces")
}

fn volume_type(volume: &k8s_openapi::api::core::v1::Volume) -> String {
    serde_json::to_value(volume)
        .ok()
        .and_then(|v| v.as_object()?.keys().find(|k| *k != "name").cloned())
        .unwrap_or_else(|| "unknown".to_string())
}

pub(super) fn host_path_volumes(pod: &PodFacts) -> Option<Violation> {
    let names: Vec<&str> = pod
        .spec
        .volumes
        .iter()
        .flatten()
        .filter(|v| v.host_path.is_some())
        .map(|v| v.name.as_str())
        .collect();
    if names.is_empty() {
        return None;
    }
    violation(
        "hostPath volumes",
        format!(
            "{} {}",
            plural("volume", "volumes", names.len()),
            join_quote(&names)
        ),
        "hostPath volumes",
    )
}

pub(super) fn host_ports(pod: &PodFacts) -> Option<Violation> {
    let mut ports = BTreeSet::new();
    let names = pod.containers_where(|c| c.ports.iter().any(|p| p.host_port.unwrap_or(0) != 0));
    for c in &pod.containers {
        ports.extend(
            c.ports
                .iter()
                .filter_map(|p| p.host_port.filter(|h| *h != 0).map(|h| h.to_string())),
        );
    }
    if names.is_empty() {
        return None;
    }
    let ports: Vec<String> = ports.into_iter().collect();
    violation(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&names),
            plural("uses", "use", names.len()),
            plural("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
        "hostPorts",
    )
}

pub(super) fn host_probes(pod: &PodFacts) -> Option<Violation> {
    let mut names = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    for c in &pod.containers {
        let mut handlers: Vec<(Option<&str>, Option<&str>)> = c
            .probes
            .iter()
            .flatten()
            .map(|p| {
                (
                    p.http_get.as_ref().and_then(|h| h.host.as_deref()),
                    p.tcp_socket.as_ref().and_then(|t| t.host.as_deref()),
                )
            })
            .collect();
        if let Some(l) = c.lifecycle {
            for h in [l.post_start.as_ref(), l.pre_stop.as_ref()]
                .into_iter()
                .flatten()
            {
                handlers.push((
                    h.http_get.as_ref().and_then(|g| g.host.as_deref()),
                    h.tcp_socket.as_ref().and_then(|t| t.host.as_deref()),
                ));
            }
        }
        for host in handlers
            .into_iter()
            .flat_map(|(a, b)| [a, b])
            .flatten()
            .filter(|h| !h.is_empty())
        {
            names.insert(c.name);
            hosts.insert(host.to_string());
        }
    }
    if names.is_empty() {
        return None;
    }
    let names: Vec<&str> = names.into_iter().collect();
    let hosts: Vec<String> = hosts.into_iter().collect();
    violation(
        "probe or lifecycle host",
        format!(
            "{} {} {} {}",
            containers_phrase(&names),
            plural("uses", "use", names.len()),
            plural(
                "probe or lifecycle host",
                "probe or lifecycle hosts",
                hosts.len()
            ),
            join_quote(&hosts)
        ),
        "probe hosts",
    )
}

pub(super) fn privileged(pod: &PodFacts) -> Option<Violation> {
    let names = pod.containers_where(|c| c.security.and_then(|s| s.privileged) == Some(true));
    if names.is_empty() {
        return None;
    }
    violation(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&names)
        ),
        "privileged",
    )
}

fn proc_mount(pod: &PodFacts) -> Option<Violation> {
    let bad = |c: &ContainerView| {
        c.security
            .and_then(|s| s.proc_mount.as_deref())
            .filter(|m| *m != "Default")
            .map(str::to_string)
    };
    let names = pod.containers_where(|c| bad(c).is_some());
    if names.is_empty() {
        return None;
    }
    let types: BTreeSet<String> = pod.containers.iter().filter_map(bad).collect();
    let types: Vec<String> = types.into_iter().collect();
    violation(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&names),
            join_quote(&types)
        ),
        "procMount",
    )
}

pub(super) fn proc_mount_baseline(pod: &PodFacts) -> Option<Violation> {
    if pod.host_users_relaxes() {
        return None;
    }
    proc_mount(pod)
}

pub(super) fn proc_mount_restricted(pod: &PodFacts) -> Option<Violation> {
    proc_mount(pod)
}

pub(super) fn se_linux(pod: &PodFacts) -> Option<Violation> {
    use k8s_openapi::api::core::v1::SELinuxOptions;
    const TYPES: [&str; 5] = [
        "",
        "container_t",
        "container_init_t",
        "container_kvm_t",
        "container_engine_t",
    ];
    // `container_engine_t` came in 1.31.
    let allowed = |t: &str| TYPES.contains(&t) && (t != "container_engine_t" || pod.minor >= 31);
    let mut types = BTreeSet::new();
    let (mut user, mut role) = (false, false);
    let mut bad = |o: &SELinuxOptions| {
        let mut is_bad = false;
        if let Some(t) = o.type_.as_deref()
            && !allowed(t)
        {
            types.insert(t.to_string());
            is_bad = true;
        }
        if o.user.as_deref().is_some_and(|u| !u.is_empty()) {
            user = true;
            is_bad = true;
        }
        if o.role.as_deref().is_some_and(|r| !r.is_empty()) {
            role = true;
            is_bad = true;
        }
        is_bad
    };
    let pod_bad = pod
        .pod_security()
        .and_then(|s| s.se_linux_options.as_ref())
        .is_some_and(&mut bad);
    let mut names = Vec::new();
    for c in &pod.containers {
        if c.security
            .and_then(|s| s.se_linux_options.as_ref())
            .is_some_and(&mut bad)
        {
            names.push(c.name);
        }
    }
    if !pod_bad && names.is_empty() {
        return None;
    }
    let types: Vec<String> = types.into_iter().collect();
    let mut data = Vec::new();
    if !types.is_empty() {
        data.push(format!(
            "{} {}",
            plural("type", "types", types.len()),
            join_quote(&types)
        ));
    }
    if user {
        data.push("user may not be set".to_string());
    }
    if role {
        data.push("role may not be set".to_string());
    }
    violation(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters(pod_bad, &names),
            data.join("; ")
        ),
        "SELinux options",
    )
}

fn seccomp_type<'a>(c: &ContainerView<'a>) -> Option<&'a str> {
    c.security
        .and_then(|s| s.seccomp_profile.as_ref())
        .map(|p| p.type_.as_str())
}

fn seccomp_allowed(t: &str) -> bool {
    matches!(t, "RuntimeDefault" | "Localhost")
}

/// Who set a seccomp type other than RuntimeDefault/Localhost, and the
/// types (sorted).
fn seccomp_explicitly_bad<'a>(pod: &PodFacts<'a>) -> (bool, Vec<&'a str>, Vec<String>) {
    let mut types = BTreeSet::new();
    let pod_type = pod
        .pod_security()
        .and_then(|s| s.seccomp_profile.as_ref())
        .map(|p| p.type_.as_str());
    let pod_bad = pod_type.is_some_and(|t| !seccomp_allowed(t));
    if let Some(t) = pod_type.filter(|t| !seccomp_allowed(t)) {
        types.insert(t.to_string());
    }
    let names = pod.containers_where(|c| seccomp_type(c).is_some_and(|t| !seccomp_allowed(t)));
    for c in &pod.containers {
        if let Some(t) = seccomp_type(c).filter(|t| !seccomp_allowed(t)) {
            types.insert(t.to_string());
        }
    }
    (pod_bad, names, types.into_iter().collect())
}

pub(super) fn seccomp_baseline(pod: &PodFacts) -> Option<Violation> {
    if pod.minor < 19 {
        return seccomp_annotations(pod);
    }
    let (pod_bad, names, types) = seccomp_explicitly_bad(pod);
    if !pod_bad && names.is_empty() {
        return None;
    }
    violation(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters(pod_bad, &names),
            join_quote(&types)
        ),
        "seccomp profile",
    )
}

/// Before 1.19 seccomp was annotations (the pod's, and one per container
/// by name), and the fields were not read.
fn seccomp_annotations(pod: &PodFacts) -> Option<Violation> {
    const POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
    const CONTAINER: &str = "container.seccomp.security.alpha.kubernetes.io/";
    let allowed =
        |v: &str| matches!(v, "runtime/default" | "docker/default") || v.starts_with("localhost/");
    let mut bad = BTreeSet::new();
    for (key, value) in pod.annotations.into_iter().flatten() {
        let checked = key == POD
            || key
                .strip_prefix(CONTAINER)
                .is_some_and(|name| pod.containers.iter().any(|c| c.name == name));
        if checked && !allowed(value) {
            bad.insert(format!("{key}={value:?}"));
        }
    }
    if bad.is_empty() {
        return None;
    }
    let bad: Vec<String> = bad.into_iter().collect();
    violation(
        "seccompProfile",
        format!(
            "forbidden {} {}",
            plural("annotation", "annotations", bad.len()),
            bad.join(", ")
        ),
        "seccomp profile",
    )
}

pub(super) fn seccomp_restricted(pod: &PodFacts) -> Option<Violation> {
    if pod.windows_exempt() {
        return None;
    }
    let (pod_bad, names, types) = seccomp_explicitly_bad(pod);
    let pod_sets_valid = pod
        .pod_security()
        .and_then(|s| s.seccomp_profile.as_ref())
        .is_some_and(|p| seccomp_allowed(&p.type_));
    let unset = if pod_sets_valid {
        Vec::new()
    } else {
        pod.containers_where(|c| seccomp_type(c).is_none())
    };
    // An explicit bad type is all the plugin says, when there is one.
    let detail = if pod_bad || !names.is_empty() {
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters(pod_bad, &names),
            join_quote(&types)
        )
    } else if !unset.is_empty() {
        format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&unset)
        )
    } else {
        return None;
    };
    violation("seccompProfile", detail, "no seccomp profile")
}

/// The sysctls baseline allows, each with the minor version that first
/// allowed it.
const SYSCTLS: [(&str, u32); 12] = [
    ("kernel.shm_rmid_forced", 0),
    ("net.ipv4.ip_local_port_range", 0),
    ("net.ipv4.tcp_syncookies", 0),
    ("net.ipv4.ping_group_range", 0),
    ("net.ipv4.ip_unprivileged_port_start", 0),
    ("net.ipv4.ip_local_reserved_ports", 27),
    ("net.ipv4.tcp_keepalive_time", 29),
    ("net.ipv4.tcp_fin_timeout", 29),
    ("net.ipv4.tcp_keepalive_intvl", 29),
    ("net.ipv4.tcp_keepalive_probes", 29),
    ("net.ipv4.tcp_rmem", 32),
    ("net.ipv4.tcp_wmem", 32),
];

pub(super) fn sysctls(pod: &PodFacts) -> Option<Violation> {
    let bad: Vec<&str> = pod
        .pod_security()
        .and_then(|s| s.sysctls.as_ref())
        .into_iter()
        .flatten()
        .map(|s| s.name.as_str())
        .filter(|name| {
            !SYSCTLS
                .iter()
                .any(|(allowed, since)| allowed == name && pod.minor >= *since)
        })
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation("forbidden sysctls", bad.join(", "), "sysctls")
}

pub(super) fn windows_host_process(pod: &PodFacts) -> Option<Violation> {
    let pod_bad = pod
        .pod_security()
        .and_then(|s| s.windows_options.as_ref())
        .and_then(|w| w.host_process)
        == Some(true);
    let names = pod.containers_where(|c| {
        c.security
            .and_then(|s| s.windows_options.as_ref())
            .and_then(|w| w.host_process)
            == Some(true)
    });
    if !pod_bad && names.is_empty() {
        return None;
    }
    violation(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters(pod_bad, &names)
        ),
        "hostProcess",
    )
}

pub(super) fn allow_privilege_escalation(pod: &PodFacts) -> Option<Violation> {
    if pod.windows_exempt() {
        return None;
    }
    let names = pod
        .containers_where(|c| c.security.and_then(|s| s.allow_privilege_escalation) != Some(false));
    if names.is_empty() {
        return None;
    }
    violation(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&names)
        ),
        "privilege escalation",
    )
}

pub(super) fn capabilities_restricted(pod: &PodFacts) -> Option<Violation> {
    if pod.windows_exempt() {
        return None;
    }
    let missing_drop = pod.containers_where(|c| {
        !c.security
            .and_then(|s| s.capabilities.as_ref())
            .and_then(|caps| caps.drop.as_ref())
            .is_some_and(|drop| drop.iter().any(|d| d == "ALL"))
    });
    let (adding, capabilities) = forbidden_capabilities(pod, &["NET_BIND_SERVICE"]);
    let mut parts = Vec::new();
    if !missing_drop.is_empty() {
        parts.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop)
        ));
    }
    if !adding.is_empty() {
        parts.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(&capabilities)
        ));
    }
    let short = if capabilities.is_empty() {
        "capabilities".to_string()
    } else {
        capabilities.join(", ")
    };
    violation_of_parts("unrestricted capabilities", parts, &short)
}

pub(super) fn restricted_volumes(pod: &PodFacts) -> Option<Violation> {
    const ALLOWED: [&str; 9] = [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "image",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    let mut names = Vec::new();
    let mut types = BTreeSet::new();
    for v in pod.spec.volumes.iter().flatten() {
        let t = volume_type(v);
        if !ALLOWED.contains(&t.as_str()) {
            names.push(v.name.as_str());
            types.insert(t);
        }
    }
    if names.is_empty() {
        return None;
    }
    let types: Vec<String> = types.into_iter().collect();
    violation(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            plural("volume", "volumes", names.len()),
            join_quote(&names),
            plural("uses", "use", names.len()),
            plural(
                "restricted volume type",
                "restricted volume types",
                types.len()
            ),
            join_quote(&types)
        ),
        "volume types",
    )
}

pub(super) fn run_as_non_root(pod: &PodFacts) -> Option<Violation> {
    if pod.host_users_relaxes() {
        return None;
    }
    let pod_value = pod.pod_security().and_then(|s| s.run_as_non_root);
    let explicit_false =
        pod.containers_where(|c| c.security.and_then(|s| s.run_as_non_root) == Some(false));
    let unset = if pod_value == Some(true) {
        Vec::new()
    } else {
        pod.containers_where(|c| c.security.and_then(|s| s.run_as_non_root).is_none())
    };
    // An explicit false is all the plugin says, when there is one.
    let detail = if pod_value == Some(false) || !explicit_false.is_empty() {
        format!(
            "{} must not set securityContext.runAsNonRoot=false",
            setters(pod_value == Some(false), &explicit_false)
        )
    } else if !unset.is_empty() {
        format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers_phrase(&unset)
        )
    } else {
        return None;
    };
    violation("runAsNonRoot != true", detail, "root")
}

pub(super) fn run_as_user(pod: &PodFacts) -> Option<Violation> {
    if pod.host_users_relaxes() {
        return None;
    }
    let pod_root = pod.pod_security().and_then(|s| s.run_as_user) == Some(0);
    let names = pod.containers_where(|c| c.security.and_then(|s| s.run_as_user) == Some(0));
    if !pod_root && names.is_empty() {
        return None;
    }
    violation(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters(pod_root, &names)),
        "runAsUser=0",
    )
}

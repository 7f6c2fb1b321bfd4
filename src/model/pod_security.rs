//! Pod Security Standards as the built-in `PodSecurity` admission plugin
//! checks them (k8s.io/pod-security-admission, `latest`): the namespace
//! labels that choose a level, the checks of each level, and the exact
//! words of its refusals and warnings. The simulator admits with it; the
//! launcher and `podbay debug` use it to pick a profile that passes before
//! anything is sent.
//!
//! Every version label is evaluated with the newest checks (as `latest` on
//! a 1.35 cluster), but quoted as written.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, Lifecycle, Pod, PodSpec, Probe, SecurityContext,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    fn parse(s: &str) -> Option<Level> {
        match s {
            "privileged" => Some(Level::Privileged),
            "baseline" => Some(Level::Baseline),
            "restricted" => Some(Level::Restricted),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// A level and the version label that came with it (`latest` or `v1.N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelVersion {
    pub level: Level,
    pub version: String,
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level.name(), self.version)
    }
}

/// What a namespace's `pod-security.kubernetes.io/*` labels ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub warn: LevelVersion,
}

const LABEL: &str = "pod-security.kubernetes.io/";

impl Policy {
    /// As `api.PolicyToEvaluate`: a missing label is `privileged`, a bad
    /// version is `latest`, a bad `enforce` level fails closed
    /// (`restricted`) and a bad `warn` level open. Without a `warn` label,
    /// warn is the enforced level.
    pub fn from_labels(labels: &BTreeMap<String, String>) -> Policy {
        let version = |mode: &str| {
            labels
                .get(&format!("{LABEL}{mode}-version"))
                .filter(|v| is_version(v))
                .cloned()
                .unwrap_or_else(|| "latest".to_string())
        };
        let level = |mode: &str, invalid: Level| {
            labels
                .get(&format!("{LABEL}{mode}"))
                .map(|l| Level::parse(l).unwrap_or(invalid))
        };
        let enforce = LevelVersion {
            level: level("enforce", Level::Restricted).unwrap_or(Level::Privileged),
            version: version("enforce"),
        };
        let warn = match level("warn", Level::Privileged) {
            Some(level) => LevelVersion {
                level,
                version: version("warn"),
            },
            None => LevelVersion {
                level: enforce.level,
                version: labels
                    .get(&format!("{LABEL}warn-version"))
                    .filter(|v| is_version(v))
                    .cloned()
                    .unwrap_or_else(|| enforce.version.clone()),
            },
        };
        Policy { enforce, warn }
    }

    /// The enforced level a refusal names (`violates PodSecurity
    /// "baseline:latest"`): what a namespace podbay could not read enforces.
    pub fn from_refusal(message: &str) -> Option<Policy> {
        let quoted = message.split_once("violates PodSecurity \"")?.1;
        let (level, version) = quoted.split_once('"')?.0.split_once(':')?;
        let enforce = LevelVersion {
            level: Level::parse(level)?,
            version: version.to_string(),
        };
        Some(Policy {
            warn: enforce.clone(),
            enforce,
        })
    }

    /// `None`: the pod is admitted; else the 403 message.
    pub fn refusal(&self, pod: &Pod) -> Option<String> {
        let violations = evaluate(self.enforce.level, pod);
        (!violations.is_empty()).then(|| {
            format!(
                "pods {:?} is forbidden: violates PodSecurity \"{}\": {}",
                pod.metadata.name.as_deref().unwrap_or_default(),
                self.enforce,
                detail(&violations)
            )
        })
    }

    /// The sentence for a pod podbay would create (`what`: "node debug
    /// pod", "copy") that the enforced level refuses, naming the label;
    /// `None` when it is admitted. Its caller says what to do instead.
    pub fn pod_refusal(&self, namespace: &str, what: &str, pod: &Pod) -> Option<String> {
        let violations = evaluate(self.enforce.level, pod);
        let level = self.enforce.level.name();
        (!violations.is_empty()).then(|| {
            format!(
                "Namespace {namespace} enforces Pod Security {level:?} (pod-security.kubernetes.io/enforce={level}), which refuses this {what}: {}.",
                detail(&violations).trim_end_matches('.')
            )
        })
    }

    /// The warning an admitted pod gets, if any.
    pub fn warning(&self, pod: &Pod) -> Option<String> {
        let violations = evaluate(self.warn.level, pod);
        (!violations.is_empty()).then(|| {
            format!(
                "would violate PodSecurity \"{}\": {}",
                self.warn,
                detail(&violations)
            )
        })
    }
}

fn is_version(v: &str) -> bool {
    v == "latest"
        || v.strip_prefix("v1.").is_some_and(|minor| {
            !minor.is_empty()
                && minor.bytes().all(|b| b.is_ascii_digit())
                && (minor == "0" || !minor.starts_with('0'))
        })
}

/// One failed check: the plugin's reason and detail, and a few words for
/// a narrow form (`SYS_PTRACE`, `privilege escalation`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub reason: &'static str,
    pub detail: String,
    pub short: String,
}

/// `reason (detail), reason (detail)`, as `ForbiddenDetail()` joins them.
pub fn detail(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("{} ({})", v.reason, v.detail))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The few words for every violation, joined.
pub fn short(violations: &[Violation]) -> String {
    let mut words: Vec<&str> = Vec::new();
    for v in violations {
        if !words.contains(&v.short.as_str()) {
            words.push(&v.short);
        }
    }
    words.join(", ")
}

/// Every check of `level` that `pod` fails, in the plugin's order: the
/// baseline checks by ID, then the restricted ones by ID.
pub fn evaluate(level: Level, pod: &Pod) -> Vec<Violation> {
    let Some(spec) = &pod.spec else {
        return Vec::new();
    };
    let pod = PodFacts::new(pod, spec);
    let checks: &[fn(&PodFacts) -> Option<Violation>] = match level {
        Level::Privileged => &[],
        Level::Baseline => &[
            app_armor,
            capabilities_baseline,
            host_namespaces,
            host_path_volumes,
            host_ports,
            host_probes,
            privileged,
            proc_mount_baseline,
            se_linux,
            seccomp_baseline,
            sysctls,
            windows_host_process,
        ],
        Level::Restricted => &[
            app_armor,
            host_namespaces,
            host_ports,
            host_probes,
            privileged,
            se_linux,
            sysctls,
            windows_host_process,
            allow_privilege_escalation,
            capabilities_restricted,
            proc_mount_restricted,
            restricted_volumes,
            run_as_non_root,
            run_as_user,
            seccomp_restricted,
        ],
    };
    checks.iter().filter_map(|check| check(&pod)).collect()
}

/// What the checks read of one container, of whichever kind.
struct ContainerView<'a> {
    name: &'a str,
    security: Option<&'a SecurityContext>,
    ports: &'a [ContainerPort],
    probes: [Option<&'a Probe>; 3],
    lifecycle: Option<&'a Lifecycle>,
}

struct PodFacts<'a> {
    spec: &'a PodSpec,
    annotations: Option<&'a BTreeMap<String, String>>,
    /// Init, then regular, then ephemeral containers: the plugin's order.
    containers: Vec<ContainerView<'a>>,
}

impl<'a> PodFacts<'a> {
    fn new(pod: &'a Pod, spec: &'a PodSpec) -> Self {
        // `Container` and `EphemeralContainer` are two types with the same
        // fields: one view of both.
        macro_rules! view {
            ($c:expr) => {
                ContainerView {
                    name: &$c.name,
                    security: $c.security_context.as_ref(),
                    ports: $c.ports.as_deref().unwrap_or_default(),
                    probes: [
                        $c.liveness_probe.as_ref(),
                        $c.readiness_probe.as_ref(),
                        $c.startup_probe.as_ref(),
                    ],
                    lifecycle: $c.lifecycle.as_ref(),
                }
            };
        }
        let mut containers: Vec<ContainerView> = spec
            .init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
            .map(|c: &'a Container| view!(c))
            .collect();
        containers.extend(spec.ephemeral_containers.iter().flatten().map(|c| view!(c)));
        PodFacts {
            spec,
            annotations: pod.metadata.annotations.as_ref(),
            containers,
        }
    }

    fn pod_security(&self) -> Option<&'a k8s_openapi::api::core::v1::PodSecurityContext> {
        self.spec.security_context.as_ref()
    }

    fn windows(&self) -> bool {
        self.spec.os.as_ref().is_some_and(|os| os.name == "windows")
    }

    fn host_users_off(&self) -> bool {
        self.spec.host_users == Some(false)
    }

    /// The names of the containers for which `bad` holds.
    fn containers_where(&self, bad: impl Fn(&ContainerView) -> bool) -> Vec<&'a str> {
        self.containers
            .iter()
            .filter(|c| bad(c))
            .map(|c| c.name)
            .collect()
    }
}

fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("{:?}", i.as_ref())).collect();
    quoted.join(", ")
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

fn app_armor(pod: &PodFacts) -> Option<Violation> {
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

fn capabilities_baseline(pod: &PodFacts) -> Option<Violation> {
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

fn host_namespaces(pod: &PodFacts) -> Option<Violation> {
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

fn host_path_volumes(pod: &PodFacts) -> Option<Violation> {
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

fn host_ports(pod: &PodFacts) -> Option<Violation> {
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

fn host_probes(pod: &PodFacts) -> Option<Violation> {
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

fn privileged(pod: &PodFacts) -> Option<Violation> {
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

fn proc_mount_baseline(pod: &PodFacts) -> Option<Violation> {
    if pod.host_users_off() {
        return None;
    }
    proc_mount(pod)
}

fn proc_mount_restricted(pod: &PodFacts) -> Option<Violation> {
    proc_mount(pod)
}

fn se_linux(pod: &PodFacts) -> Option<Violation> {
    use k8s_openapi::api::core::v1::SELinuxOptions;
    const TYPES: [&str; 5] = [
        "",
        "container_t",
        "container_init_t",
        "container_kvm_t",
        "container_engine_t",
    ];
    let mut types = Vec::new();
    let (mut user, mut role) = (false, false);
    let mut bad = |o: &SELinuxOptions| {
        let mut is_bad = false;
        if let Some(t) = o.type_.as_deref()
            && !TYPES.contains(&t)
        {
            if !types.contains(&t.to_string()) {
                types.push(t.to_string());
            }
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

fn seccomp_baseline(pod: &PodFacts) -> Option<Violation> {
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

fn seccomp_restricted(pod: &PodFacts) -> Option<Violation> {
    if pod.windows() {
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
    let mut parts = Vec::new();
    if pod_bad || !names.is_empty() {
        parts.push(format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters(pod_bad, &names),
            join_quote(&types)
        ));
    }
    if !unset.is_empty() {
        parts.push(format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&unset)
        ));
    }
    violation_of_parts("seccompProfile", parts, "no seccomp profile")
}

/// The sysctls baseline allows on a 1.35 cluster.
const SYSCTLS: [&str; 12] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
];

fn sysctls(pod: &PodFacts) -> Option<Violation> {
    let bad: Vec<&str> = pod
        .pod_security()
        .and_then(|s| s.sysctls.as_ref())
        .into_iter()
        .flatten()
        .map(|s| s.name.as_str())
        .filter(|name| !SYSCTLS.contains(name))
        .collect();
    if bad.is_empty() {
        return None;
    }
    violation("forbidden sysctls", bad.join(", "), "sysctls")
}

fn windows_host_process(pod: &PodFacts) -> Option<Violation> {
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

fn allow_privilege_escalation(pod: &PodFacts) -> Option<Violation> {
    if pod.windows() {
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

fn capabilities_restricted(pod: &PodFacts) -> Option<Violation> {
    if pod.windows() {
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

fn restricted_volumes(pod: &PodFacts) -> Option<Violation> {
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

fn run_as_non_root(pod: &PodFacts) -> Option<Violation> {
    if pod.host_users_off() {
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
    let mut parts = Vec::new();
    if pod_value == Some(false) || !explicit_false.is_empty() {
        parts.push(format!(
            "{} must not set securityContext.runAsNonRoot=false",
            setters(pod_value == Some(false), &explicit_false)
        ));
    }
    if !unset.is_empty() {
        parts.push(format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers_phrase(&unset)
        ));
    }
    violation_of_parts("runAsNonRoot != true", parts, "root")
}

fn run_as_user(pod: &PodFacts) -> Option<Violation> {
    if pod.host_users_off() {
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

#[cfg(test)]
mod tests {
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
}

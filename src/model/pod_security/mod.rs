//! Pod Security Standards as the built-in `PodSecurity` admission plugin
//! checks them (k8s.io/pod-security-admission, `latest`): the namespace
//! labels that choose a level, the checks of each level, and the exact
//! words of its refusals and warnings. The simulator admits with it; the
//! launcher and `podbay debug` use it to pick a profile that passes before
//! anything is sent.
//!
//! A version label (`enforce-version: v1.N`) runs each check as it was in
//! that version (the plugin's check revisions); `latest`, and any version
//! newer than a 1.35 cluster knows, runs them as of 1.35. Either is quoted
//! as written.

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

/// The newest version whose checks podbay knows: a 1.35 cluster's.
pub const LATEST_MINOR: u32 = 35;

impl LevelVersion {
    pub fn latest(level: Level) -> Self {
        LevelVersion {
            level,
            version: "latest".to_string(),
        }
    }

    /// The minor version the checks run as: the label's, at most the
    /// newest known (`latest` is the newest).
    pub fn minor(&self) -> u32 {
        self.version
            .strip_prefix("v1.")
            .and_then(|minor| minor.parse::<u32>().ok())
            .map_or(LATEST_MINOR, |minor| minor.min(LATEST_MINOR))
    }
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

mod checks;

const LABEL: &str = "pod-security.kubernetes.io/";

impl Policy {
    /// As `api.PolicyToEvaluate`: a missing label is `privileged`, a bad
    /// version is `latest`, a bad `enforce` level fails closed
    /// (`restricted`) and a bad `warn` level open. Without a `warn` label,
    /// warn is the enforced level when that is a valid one.
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
        let enforce_valid = labels
            .get(&format!("{LABEL}enforce"))
            .is_some_and(|l| Level::parse(l).is_some());
        let warn = match level("warn", Level::Privileged) {
            Some(level) => LevelVersion {
                level,
                version: version("warn"),
            },
            None if !enforce_valid => LevelVersion {
                level: Level::Privileged,
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
        let violations = evaluate(&self.enforce, pod);
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
        let violations = evaluate(&self.enforce, pod);
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
        let violations = evaluate(&self.warn, pod);
        (!violations.is_empty()).then(|| {
            format!(
                "would violate PodSecurity \"{}\": {}",
                self.warn,
                detail(&violations)
            )
        })
    }
}

/// `latest` or `v1.N`, N a number Go's `Atoi` reads (no leading zero).
fn is_version(v: &str) -> bool {
    v == "latest"
        || v.strip_prefix("v1.").is_some_and(|minor| {
            !minor.is_empty()
                && minor.bytes().all(|b| b.is_ascii_digit())
                && (minor == "0" || !minor.starts_with('0'))
                && minor.parse::<i64>().is_ok()
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

/// Every check of `policy`'s level, as of its version, that `pod` fails,
/// in the plugin's order: the baseline checks by ID, then the restricted
/// ones by ID. Restricted runs the baseline checks that none of its own
/// replaces at that version.
pub fn evaluate(policy: &LevelVersion, pod: &Pod) -> Vec<Violation> {
    use checks::*;
    type Check = fn(&PodFacts) -> Option<Violation>;
    let Some(spec) = &pod.spec else {
        return Vec::new();
    };
    let minor = policy.minor();
    let pod = PodFacts::new(pod, spec, minor);
    let restricted = match policy.level {
        Level::Privileged => return Vec::new(),
        Level::Baseline => false,
        Level::Restricted => true,
    };
    let mut checks: Vec<Check> = vec![app_armor];
    if !restricted || minor < 22 {
        checks.push(capabilities_baseline);
    }
    checks.push(host_namespaces);
    if !restricted {
        checks.push(host_path_volumes);
    }
    checks.push(host_ports);
    if minor >= 34 {
        checks.push(host_probes);
    }
    checks.push(privileged);
    if !restricted || minor < 35 {
        checks.push(proc_mount_baseline);
    }
    checks.push(se_linux);
    if !restricted || minor < 19 {
        checks.push(seccomp_baseline);
    }
    checks.extend([sysctls as Check, windows_host_process]);
    if restricted {
        if minor >= 8 {
            checks.push(allow_privilege_escalation);
        }
        if minor >= 22 {
            checks.push(capabilities_restricted);
        }
        if minor >= 35 {
            checks.push(proc_mount_restricted);
        }
        checks.extend([restricted_volumes as Check, run_as_non_root]);
        if minor >= 23 {
            checks.push(run_as_user);
        }
        if minor >= 19 {
            checks.push(seccomp_restricted);
        }
    }
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
    /// The minor version the checks run as.
    minor: u32,
    annotations: Option<&'a BTreeMap<String, String>>,
    /// Init, then regular, then ephemeral containers: the plugin's order.
    containers: Vec<ContainerView<'a>>,
}

impl<'a> PodFacts<'a> {
    fn new(pod: &'a Pod, spec: &'a PodSpec, minor: u32) -> Self {
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
            minor,
            annotations: pod.metadata.annotations.as_ref(),
            containers,
        }
    }

    fn pod_security(&self) -> Option<&'a k8s_openapi::api::core::v1::PodSecurityContext> {
        self.spec.security_context.as_ref()
    }

    /// A Windows pod passes the Linux-only restricted checks, from 1.25.
    fn windows_exempt(&self) -> bool {
        self.minor >= 25 && self.spec.os.as_ref().is_some_and(|os| os.name == "windows")
    }

    /// A pod in its own user namespace (`hostUsers: false`) passes the
    /// root and procMount checks of baseline and restricted, from 1.35.
    fn host_users_relaxes(&self) -> bool {
        self.minor >= 35 && self.spec.host_users == Some(false)
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

#[cfg(test)]
mod tests;

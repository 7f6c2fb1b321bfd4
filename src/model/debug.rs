//! Ephemeral debug containers as data: the spec (with kubectl debug's
//! security profiles), what Pod Security says of it before it is sent,
//! and a unique name. Sending it is `cluster::debug`'s job.

use std::fmt;
use std::str::FromStr;

use k8s_openapi::api::core::v1::{
    Capabilities, EnvVar, EphemeralContainer, Pod, SeccompProfile, SecurityContext, VolumeMount,
};
use serde_json::json;

use crate::model::pod_security::{self, Policy, Violation};

/// The security profiles of `kubectl debug --profile`, as they apply to an
/// ephemeral container (k8s.io/kubectl/pkg/cmd/debug/profiles.go).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// SYS_PTRACE, so debuggers and `strace` work on the target's processes.
    #[default]
    General,
    /// No extra privileges: passes the PodSecurity "baseline" level.
    Baseline,
    /// Non-root, no capabilities, no privilege escalation, RuntimeDefault
    /// seccomp: passes the PodSecurity "restricted" level.
    Restricted,
    /// NET_ADMIN and NET_RAW, for tcpdump and iptables.
    Netadmin,
    /// Privileged.
    Sysadmin,
}

impl Profile {
    pub const ALL: [Profile; 5] = [
        Profile::General,
        Profile::Baseline,
        Profile::Restricted,
        Profile::Netadmin,
        Profile::Sysadmin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::General => "general",
            Profile::Baseline => "baseline",
            Profile::Restricted => "restricted",
            Profile::Netadmin => "netadmin",
            Profile::Sysadmin => "sysadmin",
        }
    }

    /// The container securityContext this profile sets (`None`: none at all).
    pub fn security_context(self) -> Option<SecurityContext> {
        let add = |caps: &[&str]| SecurityContext {
            capabilities: Some(Capabilities {
                add: Some(caps.iter().map(|c| c.to_string()).collect()),
                drop: None,
            }),
            ..Default::default()
        };
        match self {
            Profile::General => Some(add(&["SYS_PTRACE"])),
            Profile::Baseline => None,
            Profile::Restricted => Some(SecurityContext {
                run_as_non_root: Some(true),
                capabilities: Some(Capabilities {
                    add: None,
                    drop: Some(vec!["ALL".to_string()]),
                }),
                allow_privilege_escalation: Some(false),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_string(),
                    localhost_profile: None,
                }),
                ..Default::default()
            }),
            Profile::Netadmin => Some(add(&["NET_ADMIN", "NET_RAW"])),
            Profile::Sysadmin => Some(SecurityContext {
                privileged: Some(true),
                ..Default::default()
            }),
        }
    }
}

impl Profile {
    /// Whether a debug container of this profile can read
    /// `/proc/PID/root` of a process of another user: that takes
    /// `CAP_SYS_PTRACE` (ptrace access mode checks), which only `general`
    /// adds and `sysadmin` (privileged) has.
    pub fn reads_any_users_root(self) -> bool {
        matches!(self, Profile::General | Profile::Sysadmin)
    }
}

/// A team's profile: a built-in one, then a partial container merged onto
/// the debug container as `kubectl debug --custom` merges it (a strategic
/// merge of a Container: `env` by name, `volumeMounts` by path, objects
/// field by field). From `--custom FILE` or `[profiles.NAME]` in
/// config.toml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomProfile {
    pub name: String,
    pub base: Profile,
    /// The partial container (a JSON object).
    pub container: serde_json::Value,
}

impl CustomProfile {
    /// Checks the partial container as kubectl does: an object that
    /// decodes as a Container and sets none of the fields a profile may
    /// not change.
    pub fn new(name: &str, base: Profile, container: serde_json::Value) -> Result<Self, String> {
        let Some(fields) = container.as_object() else {
            return Err(format!(
                "profile {name:?} is not a container's fields (a JSON object)"
            ));
        };
        const FIXED: [&str; 5] = ["name", "command", "image", "lifecycle", "volumeDevices"];
        if let Some(field) = FIXED.iter().find(|f| fields.contains_key(**f)) {
            return Err(format!(
                "profile {name:?} sets {field}: name, command, image, lifecycle and volume devices are not modifiable via custom profile"
            ));
        }
        let mut probe = fields.clone();
        probe.insert("name".into(), json!("probe"));
        // From bytes, as every Kubernetes object in podbay is decoded (one
        // decoder in the binary: src/cluster/lenient.rs).
        serde_json::to_vec(&probe)
            .and_then(|bytes| {
                serde_json::from_slice::<k8s_openapi::api::core::v1::Container>(&bytes)
            })
            .map_err(|e| format!("profile {name:?} is not a container's fields: {e}"))?;
        let profile = CustomProfile {
            name: name.to_string(),
            base,
            container,
        };
        profile.merged(&json!({"name": "probe"}))?;
        Ok(profile)
    }

    /// `container` (a JSON container) with this profile's fields merged in.
    pub fn merged(&self, container: &serde_json::Value) -> Result<serde_json::Value, String> {
        let mut patch = self.container.clone();
        patch["name"] = container["name"].clone();
        let wrap = |c: serde_json::Value| json!({"spec": {"containers": [c]}});
        let merged =
            super::smp::apply_strategic_merge_patch(&wrap(container.clone()), &wrap(patch))
                .map_err(|e| format!("profile {:?} cannot be merged: {e}", self.name))?;
        Ok(merged["spec"]["containers"][0].clone())
    }
}

impl fmt::Display for CustomProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (on {})", self.name, self.base)
    }
}

/// Who a debug container runs as (`runAsUser`, `runAsGroup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAs {
    pub user: i64,
    pub group: Option<i64>,
}

impl fmt::Display for RunAs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.group {
            Some(group) => write!(f, "{}:{group}", self.user),
            None => write!(f, "{}", self.user),
        }
    }
}

/// When a debug container takes its target's user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AsTargetUser {
    /// When the profile cannot read another user's `/proc/PID/root`.
    #[default]
    Auto,
    Always,
    Never,
}

impl FromStr for AsTargetUser {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(AsTargetUser::Auto),
            "always" => Ok(AsTargetUser::Always),
            "never" => Ok(AsTargetUser::Never),
            _ => Err(format!("{s:?} is not one of auto, always, never")),
        }
    }
}

/// The non-root user `target` runs as, when its spec says (the
/// container's securityContext over the pod's); an image's own `USER` is
/// not in the API, so it stays unknown.
pub fn target_user(pod: &Pod, target: &str) -> Option<RunAs> {
    let spec = pod.spec.as_ref()?;
    let container = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .find(|c| c.name == target)?;
    let own = container.security_context.as_ref();
    let pod_level = spec.security_context.as_ref();
    let user = own
        .and_then(|c| c.run_as_user)
        .or(pod_level.and_then(|p| p.run_as_user))?;
    // The kernel's ptrace check wants the group too; an image's group is
    // not in the API, and most images' app users have a group of their id.
    let group = own
        .and_then(|c| c.run_as_group)
        .or(pod_level.and_then(|p| p.run_as_group))
        .or(Some(user));
    (user != 0).then_some(RunAs { user, group })
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown profile {s:?}: use one of general, baseline, restricted, netadmin, sysadmin"))
    }
}

/// `K=V` as an environment variable (the value may be empty).
pub fn env_var(text: &str) -> Option<(String, String)> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Some((k.to_string(), v.to_string())),
        _ => None,
    }
}

/// `VOLUME:/absolute/path` as a volume to mount and where.
pub fn volume_mount(text: &str) -> Option<(String, String)> {
    match text.split_once(':') {
        Some((volume, path)) if !volume.is_empty() && path.starts_with('/') => {
            Some((volume.to_string(), path.to_string()))
        }
        _ => None,
    }
}

/// Everything the user chose for one debug container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DebugSpec {
    pub name: String,
    pub image: String,
    /// Container to share the process namespace with; `None` uses the pod's.
    pub target: Option<String>,
    /// Empty: the image's entrypoint.
    pub command: Vec<String>,
    pub profile: Profile,
    pub env: Vec<(String, String)>,
    /// Keep stdin open (`-i`).
    pub stdin: bool,
    /// Close the process's stdin when the first attach closes its own
    /// (`stdinOnce`): input given whole, then its end, reaches the process.
    /// `kubectl debug` leaves it off, so an attach's EOF never ends a read.
    pub stdin_once: bool,
    /// Allocate a terminal (`-t`): stdout and stderr become one stream.
    pub tty: bool,
    /// The pod's own volumes to mount, as (volume, path in the container):
    /// the way to a target's files when `/proc/PID/root` is out of reach.
    pub mounts: Vec<(String, String)>,
    /// `workingDir`; `None`: the image's.
    pub workdir: Option<String>,
    /// `imagePullPolicy`; `None`: the apiserver's default.
    pub pull_policy: Option<String>,
    /// Run as this user (the target's, so its files are readable).
    pub run_as: Option<RunAs>,
    /// A team's profile on top of `profile`.
    pub custom: Option<CustomProfile>,
}

impl DebugSpec {
    /// The EphemeralContainer, as `kubectl debug` builds it: stdin and tty
    /// as asked (the TUI always asks for both).
    pub fn container(&self) -> EphemeralContainer {
        let container = EphemeralContainer {
            name: self.name.clone(),
            image: Some(self.image.clone()),
            command: (!self.command.is_empty()).then(|| self.command.clone()),
            target_container_name: self.target.clone(),
            stdin: self.stdin.then_some(true),
            stdin_once: (self.stdin && self.stdin_once).then_some(true),
            tty: self.tty.then_some(true),
            termination_message_policy: Some("File".to_string()),
            env: (!self.env.is_empty()).then(|| {
                self.env
                    .iter()
                    .map(|(name, value)| EnvVar {
                        name: name.clone(),
                        value: Some(value.clone()),
                        value_from: None,
                    })
                    .collect()
            }),
            security_context: self.security_context(),
            volume_mounts: (!self.mounts.is_empty()).then(|| {
                self.mounts
                    .iter()
                    .map(|(volume, path)| VolumeMount {
                        name: volume.clone(),
                        mount_path: path.clone(),
                        ..Default::default()
                    })
                    .collect()
            }),
            working_dir: self.workdir.clone(),
            image_pull_policy: self.pull_policy.clone(),
            ..Default::default()
        };
        let Some(custom) = &self.custom else {
            return container;
        };
        // Checked when the profile was made: a merge that fails here leaves
        // the container as its base profile made it.
        serde_json::to_value(&container)
            .map_err(|e| e.to_string())
            .and_then(|c| custom.merged(&c))
            .and_then(|m| serde_json::to_vec(&m).map_err(|e| e.to_string()))
            .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            .unwrap_or(container)
    }

    /// The profile's securityContext, with the user to run as.
    fn security_context(&self) -> Option<SecurityContext> {
        let mut context = self.profile.security_context();
        if let Some(run_as) = self.run_as {
            let context = context.get_or_insert_with(SecurityContext::default);
            context.run_as_user = Some(run_as.user);
            context.run_as_group = run_as.group;
        }
        context
    }

    /// Takes the target's user when `mode` says so: by default when the
    /// profile cannot read another user's `/proc/PID/root` and the target
    /// runs as a known non-root user. Returns the user taken.
    pub fn match_target_user(&mut self, pod: &Pod, mode: AsTargetUser) -> Option<RunAs> {
        let target = self.target.clone();
        self.match_user_of(pod, target.as_deref(), mode)
    }

    /// As [`DebugSpec::match_target_user`], with `container`'s user: a
    /// stopped container whose volumes are reached, where there is no
    /// target (what it left there stays its own).
    pub fn match_user_of(
        &mut self,
        pod: &Pod,
        container: Option<&str>,
        mode: AsTargetUser,
    ) -> Option<RunAs> {
        let wanted = match mode {
            AsTargetUser::Never => false,
            AsTargetUser::Always => true,
            AsTargetUser::Auto => !self.profile.reads_any_users_root(),
        };
        self.run_as = wanted.then(|| target_user(pod, container?)).flatten();
        self.run_as
    }

    /// The strategic merge patch body: a pod with only this ephemeral container.
    pub fn patch_body(&self) -> serde_json::Value {
        json!({"spec": {"ephemeralContainers": [self.container()]}})
    }
}

/// What a namespace's enforced Pod Security level says of a debug
/// container, before it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// The level admits it (or there is no level).
    Admitted,
    /// The level refuses this profile; `passing` admits the same container.
    Refused {
        violations: Vec<Violation>,
        passing: Option<Profile>,
    },
    /// The pod's own containers already break the level: the cluster
    /// refuses any ephemeral container in it, whatever its profile.
    PodViolates(Vec<Violation>),
}

impl DebugSpec {
    /// The profile's name as the user chose it: a team's, or a built-in.
    pub fn profile_label(&self) -> String {
        match &self.custom {
            Some(custom) => custom.to_string(),
            None => self.profile.to_string(),
        }
    }

    /// `pod` as it would be with this container added: what admission
    /// evaluates.
    pub fn added_to(&self, pod: &Pod) -> Pod {
        let mut pod = pod.clone();
        let spec = pod.spec.get_or_insert_with(Default::default);
        spec.ephemeral_containers
            .get_or_insert_with(Vec::new)
            .push(self.container());
        pod
    }

    /// What `policy`'s enforced level says of this container in `pod`.
    pub fn admission(&self, policy: &Policy, pod: &Pod) -> Admission {
        let level = &policy.enforce;
        let own = pod_security::evaluate(level, pod);
        if !own.is_empty() {
            return Admission::PodViolates(own);
        }
        let violations = pod_security::evaluate(level, &self.added_to(pod));
        if violations.is_empty() {
            return Admission::Admitted;
        }
        let passing = FALLBACK.into_iter().find(|profile| {
            let other = DebugSpec {
                profile: *profile,
                custom: None,
                ..self.clone()
            };
            pod_security::evaluate(level, &other.added_to(pod)).is_empty()
        });
        Admission::Refused {
            violations,
            passing,
        }
    }
}

/// What to send once the enforced level has judged the chosen profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send it as chosen.
    Send,
    /// Send it with this profile instead, and say so.
    GiveWay(Profile),
    /// Send nothing: the refusal sentence says why.
    Refuse,
}

impl Admission {
    /// The one rule every entry point follows (`podbay debug`, the
    /// launcher, the many-pods form): an admitted profile is sent; a
    /// refused one gives way to the strongest the level admits unless the
    /// user chose it (`chosen`) or it is a team's (`custom`: never
    /// swapped); otherwise nothing is sent.
    pub fn verdict(&self, chosen: bool, custom: bool) -> Verdict {
        match self {
            Admission::Admitted => Verdict::Send,
            Admission::Refused {
                passing: Some(passing),
                ..
            } if !chosen && !custom => Verdict::GiveWay(*passing),
            _ => Verdict::Refuse,
        }
    }
}

/// The profiles tried, in order, when the chosen one would be refused: the
/// strongest first.
const FALLBACK: [Profile; 3] = [Profile::General, Profile::Baseline, Profile::Restricted];

/// The sentence for a profile `namespace`'s level refuses, naming the one
/// that passes.
pub fn refusal_sentence(
    namespace: &str,
    policy: &Policy,
    profile: &dyn fmt::Display,
    admission: &Admission,
) -> Option<String> {
    let level = policy.enforce.level.name();
    match admission {
        Admission::Admitted => None,
        Admission::Refused {
            violations,
            passing,
        } => Some(format!(
            "{namespace} enforces Pod Security \"{level}\", which refuses the {profile} profile: {}. {}",
            pod_security::detail(violations),
            match passing {
                Some(p) => format!("The {p} profile passes."),
                None => "No debug profile passes; ask for an exemption.".to_string(),
            }
        )),
        Admission::PodViolates(violations) => Some(format!(
            "The pod itself breaks {namespace}'s Pod Security level \"{level}\" ({}), so the cluster refuses any debug container in it; debug a copy of the pod or ask for an exemption.",
            pod_security::detail(violations)
        )),
    }
}

/// Every container name in the pod (regular, init and ephemeral).
pub fn container_names(pod: &Pod) -> Vec<String> {
    let Some(spec) = &pod.spec else {
        return Vec::new();
    };
    let regular = spec.containers.iter().map(|c| c.name.clone());
    let init = spec
        .init_containers
        .iter()
        .flatten()
        .map(|c| c.name.clone());
    let ephemeral = spec
        .ephemeral_containers
        .iter()
        .flatten()
        .map(|c| c.name.clone());
    regular.chain(init).chain(ephemeral).collect()
}

/// The alphabet Kubernetes generates names with
/// (`k8s.io/apimachinery/pkg/util/rand`): no vowels, no 0, 1 or 3.
pub const NAME_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// 5 characters from `n`, in [`NAME_ALPHABET`]: `debugger-xxxxx`,
/// `node-debugger-N-xxxxx`; different for each `n` below 27⁵.
pub fn name_suffix(mut n: u64) -> String {
    (0..5)
        .map(|_| {
            let c = NAME_ALPHABET[(n % NAME_ALPHABET.len() as u64) as usize] as char;
            n /= NAME_ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// `debugger-xxxxx`, unique among `taken`. The suffix alphabet is the one
/// Kubernetes uses for generated names (no vowels, no 0/1/3).
pub fn unique_name(taken: &[String], mut random: impl FnMut() -> u64) -> String {
    loop {
        let name = format!("debugger-{}", name_suffix(random()));
        if !taken.contains(&name) {
            return name;
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_custom_profile_is_merged_as_kubectl_merges_it() {
        let team = CustomProfile::new(
            "team",
            Profile::Baseline,
            json!({"env": [{"name": "TEAM", "value": "sre"}],
                   "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}),
        )
        .unwrap();
        let spec = DebugSpec {
            name: "debugger".into(),
            image: "busybox:1.36".into(),
            profile: Profile::Baseline,
            env: vec![("A".into(), "1".into())],
            custom: Some(team),
            ..Default::default()
        };
        let c = spec.container();
        let env: Vec<&str> = c.env.iter().flatten().map(|e| e.name.as_str()).collect();
        assert_eq!(env, ["A", "TEAM"], "env merged by name");
        let caps = c.security_context.unwrap().capabilities.unwrap();
        assert_eq!(caps.add.unwrap(), ["NET_ADMIN"]);
        assert_eq!(c.name, "debugger");
        assert_eq!(spec.profile_label(), "team (on baseline)");
    }

    #[test]
    fn a_custom_profile_may_not_change_what_kubectl_keeps() {
        for field in ["name", "command", "image", "lifecycle", "volumeDevices"] {
            let why = CustomProfile::new("t", Profile::General, json!({field: "x"})).unwrap_err();
            assert!(why.contains("not modifiable"), "{field}: {why}");
        }
        assert!(CustomProfile::new("t", Profile::General, json!(["env"])).is_err());
        let wrong_type = CustomProfile::new("t", Profile::General, json!({"env": "TEAM=sre"}));
        assert!(wrong_type.unwrap_err().contains("not a container's fields"));
    }

    #[test]
    fn a_refused_custom_profile_falls_back_to_a_built_in() {
        let baseline: Policy = Policy::from_labels(&std::collections::BTreeMap::from([(
            "pod-security.kubernetes.io/enforce".to_string(),
            "baseline".to_string(),
        )]));
        let team = CustomProfile::new(
            "team",
            Profile::Baseline,
            json!({"securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}),
        )
        .unwrap();
        let spec = DebugSpec {
            name: "debugger".into(),
            image: "busybox:1.36".into(),
            profile: Profile::Baseline,
            custom: Some(team),
            ..Default::default()
        };
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "payments"},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]},
        }))
        .unwrap();
        let admission = spec.admission(&baseline, &pod);
        let sentence = refusal_sentence("payments", &baseline, &spec.profile_label(), &admission)
            .expect("refused");
        assert!(
            sentence.contains("refuses the team (on baseline) profile"),
            "{sentence}"
        );
        assert!(sentence.contains("NET_ADMIN"), "{sentence}");
        assert!(
            sentence.contains("The baseline profile passes."),
            "{sentence}"
        );
    }
    use super::*;

    #[test]
    fn a_profile_without_sys_ptrace_runs_as_a_non_root_target_user() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "api"},
            "spec": {
                "securityContext": {"runAsUser": 1000, "runAsGroup": 3000},
                "containers": [
                    {"name": "api", "securityContext": {"runAsUser": 65532}},
                    {"name": "envoy"},
                    {"name": "root", "securityContext": {"runAsUser": 0}},
                ],
            },
        }))
        .unwrap();
        let mut spec = DebugSpec {
            target: Some("api".into()),
            profile: Profile::Baseline,
            ..Default::default()
        };
        let taken = spec.match_target_user(&pod, AsTargetUser::Auto);
        assert_eq!(
            taken,
            Some(RunAs {
                user: 65532,
                group: Some(3000)
            })
        );
        let context = spec.container().security_context.unwrap();
        assert_eq!(
            (context.run_as_user, context.run_as_group),
            (Some(65532), Some(3000))
        );
        // The restricted profile keeps its own settings beside the user.
        spec.profile = Profile::Restricted;
        spec.match_target_user(&pod, AsTargetUser::Auto);
        let context = spec.container().security_context.unwrap();
        assert_eq!(context.run_as_non_root, Some(true));
        assert_eq!(context.run_as_user, Some(65532));
        // general has SYS_PTRACE: it stays root unless asked.
        spec.profile = Profile::General;
        assert_eq!(spec.match_target_user(&pod, AsTargetUser::Auto), None);
        assert!(
            spec.container()
                .security_context
                .unwrap()
                .run_as_user
                .is_none()
        );
        assert!(spec.match_target_user(&pod, AsTargetUser::Always).is_some());
        assert_eq!(spec.match_target_user(&pod, AsTargetUser::Never), None);
        // The pod's user where the container sets none; root is no one to match.
        spec.profile = Profile::Baseline;
        spec.target = Some("envoy".into());
        assert_eq!(
            spec.match_target_user(&pod, AsTargetUser::Auto),
            Some(RunAs {
                user: 1000,
                group: Some(3000)
            })
        );
        spec.target = Some("root".into());
        assert_eq!(spec.match_target_user(&pod, AsTargetUser::Auto), None);
        spec.target = None;
        assert_eq!(spec.match_target_user(&pod, AsTargetUser::Auto), None);
        // No target, but a stopped container whose volumes it reaches.
        assert_eq!(
            spec.match_user_of(&pod, Some("envoy"), AsTargetUser::Auto)
                .map(|r| r.user),
            Some(1000)
        );
    }

    fn spec(profile: Profile) -> DebugSpec {
        DebugSpec {
            name: "debugger-abcde".into(),
            image: "busybox:1.36".into(),
            target: Some("app".into()),
            command: vec![],
            profile,
            env: vec![],
            stdin: true,
            stdin_once: false,
            tty: true,
            mounts: Vec::new(),
            workdir: None,
            pull_policy: None,
            run_as: None,
            custom: None,
        }
    }

    #[test]
    fn stdin_once_is_sent_only_when_asked_and_only_with_stdin() {
        let json = |s: DebugSpec| serde_json::to_value(s.container()).unwrap();
        assert_eq!(
            json(spec(Profile::General))["stdinOnce"],
            serde_json::Value::Null
        );
        let once = DebugSpec {
            stdin_once: true,
            ..spec(Profile::General)
        };
        assert_eq!(json(once.clone())["stdinOnce"], true);
        let no_stdin = DebugSpec {
            stdin: false,
            ..once
        };
        assert_eq!(json(no_stdin)["stdinOnce"], serde_json::Value::Null);
    }

    fn security(profile: Profile) -> serde_json::Value {
        serde_json::to_value(spec(profile).container()).unwrap()["securityContext"].clone()
    }

    #[test]
    fn profiles_match_kubectl_debug() {
        assert_eq!(
            security(Profile::General),
            json!({"capabilities": {"add": ["SYS_PTRACE"]}})
        );
        assert_eq!(security(Profile::Baseline), serde_json::Value::Null);
        assert_eq!(
            security(Profile::Restricted),
            json!({
                "runAsNonRoot": true,
                "capabilities": {"drop": ["ALL"]},
                "allowPrivilegeEscalation": false,
                "seccompProfile": {"type": "RuntimeDefault"},
            })
        );
        assert_eq!(
            security(Profile::Netadmin),
            json!({"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}})
        );
        assert_eq!(security(Profile::Sysadmin), json!({"privileged": true}));
    }

    #[test]
    fn the_patch_carries_only_the_ephemeral_container() {
        let mut s = spec(Profile::Baseline);
        s.command = vec!["sh".into(), "-c".into(), "echo hi".into()];
        s.env = vec![("A".into(), "1".into())];
        let body = s.patch_body();
        assert_eq!(body.as_object().unwrap().len(), 1);
        assert_eq!(body["spec"].as_object().unwrap().len(), 1);
        let c = &body["spec"]["ephemeralContainers"][0];
        assert_eq!(c["stdin"], true);
        assert_eq!(c["tty"], true);
        assert_eq!(c["targetContainerName"], "app");
        assert_eq!(c["command"], json!(["sh", "-c", "echo hi"]));
        assert_eq!(c["env"], json!([{"name": "A", "value": "1"}]));
        assert!(c.get("ports").is_none() && c.get("resources").is_none());
        s.stdin = false;
        s.tty = false;
        let c = s.container();
        assert_eq!(
            (c.stdin, c.tty),
            (None, None),
            "as kubectl debug without -i/-t"
        );
    }

    #[test]
    fn names_are_unique_and_kubernetes_shaped() {
        let mut calls = 0u64;
        let taken = vec![unique_name(&[], || 0)];
        let name = unique_name(&taken, || {
            calls += 1;
            calls / 2
        });
        assert_ne!(name, taken[0]);
        assert!(name.starts_with("debugger-") && name.len() == 14);
        assert!(
            name[9..]
                .bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
    }

    #[test]
    fn profile_names_round_trip() {
        for p in Profile::ALL {
            assert_eq!(p.name().parse::<Profile>().unwrap(), p);
        }
        assert!(
            "root"
                .parse::<Profile>()
                .unwrap_err()
                .contains("general, baseline")
        );
    }

    /// One rule for every entry point: admitted is sent; refused gives
    /// way only when the user neither chose the profile nor took a team's.
    #[test]
    fn a_refused_profile_gives_way_only_when_not_chosen() {
        let refused = |passing| Admission::Refused {
            violations: Vec::new(),
            passing,
        };
        let baseline = Some(Profile::Baseline);
        assert_eq!(Admission::Admitted.verdict(true, true), Verdict::Send);
        assert_eq!(
            refused(baseline).verdict(false, false),
            Verdict::GiveWay(Profile::Baseline)
        );
        assert_eq!(refused(baseline).verdict(true, false), Verdict::Refuse);
        assert_eq!(refused(baseline).verdict(false, true), Verdict::Refuse);
        assert_eq!(refused(None).verdict(false, false), Verdict::Refuse);
        assert_eq!(
            Admission::PodViolates(Vec::new()).verdict(false, false),
            Verdict::Refuse
        );
    }
}

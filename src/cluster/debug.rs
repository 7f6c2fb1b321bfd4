//! Ephemeral debug containers: the spec (with kubectl debug's security
//! profiles), a unique name, and the one patch that adds it to a pod.

use std::fmt;
use std::str::FromStr;

use http_body_util::BodyExt as _;
use k8s_openapi::api::core::v1::{
    Capabilities, EnvVar, EphemeralContainer, Pod, SeccompProfile, SecurityContext, VolumeMount,
};
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use super::errors::Problem;
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
    /// Allocate a terminal (`-t`): stdout and stderr become one stream.
    pub tty: bool,
    /// The pod's own volumes to mount, as (volume, path in the container):
    /// the way to a target's files when `/proc/PID/root` is out of reach.
    pub mounts: Vec<(String, String)>,
    /// `workingDir`; `None`: the image's.
    pub workdir: Option<String>,
    /// `imagePullPolicy`; `None`: the apiserver's default.
    pub pull_policy: Option<String>,
}

impl DebugSpec {
    /// The EphemeralContainer, as `kubectl debug` builds it: stdin and tty
    /// as asked (the TUI always asks for both).
    pub fn container(&self) -> EphemeralContainer {
        EphemeralContainer {
            name: self.name.clone(),
            image: Some(self.image.clone()),
            command: (!self.command.is_empty()).then(|| self.command.clone()),
            target_container_name: self.target.clone(),
            stdin: self.stdin.then_some(true),
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
            security_context: self.profile.security_context(),
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
        }
    }

    /// The strategic merge patch body: a pod with only this ephemeral container.
    pub fn patch_body(&self) -> serde_json::Value {
        json!({"spec": {"ephemeralContainers": [self.container()]}})
    }

    /// Adds the container to `pod` with one patch of its
    /// `ephemeralcontainers` subresource, touching nothing else. The
    /// answer's `Warning` headers (Pod Security `warn`, any admission
    /// webhook) come back too: kube-rs drops them.
    pub async fn launch(
        &self,
        client: &kube::Client,
        namespace: &str,
        pod: &str,
    ) -> Result<Launched, kube::Error> {
        let request = kube::core::Request::new(format!("/api/v1/namespaces/{namespace}/pods"))
            .patch_subresource(
                "ephemeralcontainers",
                pod,
                &PatchParams::default(),
                &Patch::Strategic(self.patch_body()),
            )
            .map_err(kube::Error::BuildRequest)?;
        let response = client.send(request.map(kube::client::Body::from)).await?;
        let warnings = super::warnings::from_headers(response.headers());
        let code = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        if code.is_client_error() || code.is_server_error() {
            return Err(super::errors::api_error(code.as_u16(), &body));
        }
        let pod = serde_json::from_slice(&body).map_err(kube::Error::SerdeError)?;
        Ok(Launched { pod, warnings })
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
        let level = policy.enforce.level;
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

/// The namespace's Pod Security labels, if the user may read it and it
/// answers within `limit`; else `None`, and the cluster's own refusal (if
/// any) will name the level.
pub async fn read_policy(
    client: &kube::Client,
    namespace: &str,
    limit: std::time::Duration,
) -> Option<Policy> {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let read = tokio::time::timeout(limit, namespaces.get(namespace));
    let labels = read.await.ok()?.ok()?.metadata.labels.unwrap_or_default();
    Some(Policy::from_labels(&labels))
}

/// The profiles tried, in order, when the chosen one would be refused: the
/// strongest first.
const FALLBACK: [Profile; 3] = [Profile::General, Profile::Baseline, Profile::Restricted];

/// The sentence for a profile `namespace`'s level refuses, naming the one
/// that passes.
pub fn refusal_sentence(
    namespace: &str,
    policy: &Policy,
    profile: Profile,
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

/// A debug container the cluster accepted.
#[derive(Debug)]
pub struct Launched {
    pub pod: Pod,
    /// What admission warned about (`Warning: 299` headers), as sent.
    pub warnings: Vec<String>,
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

/// `debugger-xxxxx`, unique among `taken`. The suffix alphabet is the one
/// Kubernetes uses for generated names (no vowels, no 0/1/3).
pub fn unique_name(taken: &[String], mut random: impl FnMut() -> u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    loop {
        let mut n = random();
        let suffix: String = (0..5)
            .map(|_| {
                let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
                n /= ALPHABET.len() as u64;
                c
            })
            .collect();
        let name = format!("debugger-{suffix}");
        if !taken.contains(&name) {
            return name;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(profile: Profile) -> DebugSpec {
        DebugSpec {
            name: "debugger-abcde".into(),
            image: "busybox:1.36".into(),
            target: Some("app".into()),
            command: vec![],
            profile,
            env: vec![],
            stdin: true,
            tty: true,
            mounts: Vec::new(),
            workdir: None,
            pull_policy: None,
        }
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
}

/// Where a freshly added debug container got to.
#[derive(Debug, Clone, PartialEq)]
pub enum Startup {
    Running,
    Terminated {
        exit_code: i32,
        reason: String,
        message: String,
    },
    /// Still waiting when time ran out, with the last waiting reason and message.
    TimedOut {
        reason: String,
        message: String,
    },
    /// Waiting for a reason that will not clear by itself (a bad image
    /// name, a pull the registry refused, a config the runtime cannot use).
    Stuck {
        failure: crate::model::StartFailure,
        reason: String,
        message: String,
    },
    PodGone,
    /// The pod may not be watched (a 403): the sentence naming the missing
    /// permission. The container was added; nothing says how it comes up.
    Refused {
        sentence: String,
    },
}

/// Watches the pod (never polls) until the ephemeral container `name` runs,
/// ends, or `timeout` passes. `progress` sees every waiting reason change.
/// The same feed and the same reading of the pod as the TUI's terminals.
pub async fn await_startup(
    pods: &Api<Pod>,
    pod: &str,
    name: &str,
    timeout: std::time::Duration,
    mut progress: impl FnMut(&str, &str),
) -> Startup {
    use crate::cluster::feed::{self, Feed};
    use crate::model::{ContainerKind, ContainerState, PodDetail, Waiting, classify_waiting};
    let config = feed::config().fields(&format!("metadata.name={pod}"));
    let (tx, mut updates) = feed::channel();
    let watch = feed::run(pods.clone(), config, None, PodDetail::from_pod, tx);
    tokio::pin!(watch);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut last = (String::new(), String::new());
    // The watch ends only when refused, and the refusal is the last update
    // it queues: it is read after everything before it, even once the
    // watch's future is done.
    let (mut watching, mut reading) = (true, true);
    loop {
        let detail = tokio::select! {
            _ = &mut deadline => return Startup::TimedOut { reason: last.0, message: last.1 },
            () = &mut watch, if watching => {
                watching = false;
                continue;
            }
            update = updates.recv(), if reading => match update {
                Some(Feed::Listed { mut rows, .. }) => match rows.pop() {
                    Some(detail) => detail,
                    None => return Startup::PodGone,
                },
                Some(Feed::Applied(detail)) => detail,
                Some(Feed::Deleted(_)) => return Startup::PodGone,
                // Refused, the watch ends: waiting on is waiting for nothing.
                Some(Feed::Forbidden(denied)) => {
                    return Startup::Refused { sentence: denied.sentence() };
                }
                Some(_) => continue,
                None => {
                    reading = false;
                    continue;
                }
            },
        };
        if detail.deleting {
            return Startup::PodGone;
        }
        let state = detail
            .containers
            .into_iter()
            .find(|c| c.kind == ContainerKind::Ephemeral && c.name == name)
            .map(|c| c.state);
        match state {
            Some(ContainerState::Running { .. }) => return Startup::Running,
            Some(ContainerState::Terminated {
                exit_code,
                reason,
                message,
                ..
            }) => {
                return Startup::Terminated {
                    exit_code,
                    reason,
                    message,
                };
            }
            Some(ContainerState::Waiting { reason, message }) => {
                let now = (reason, message);
                if now != last {
                    progress(&now.0, &now.1);
                    last = now;
                }
                if let Waiting::Hopeless(failure) = classify_waiting(&last.0, &last.1) {
                    return Startup::Stuck {
                        failure,
                        reason: last.0,
                        message: last.1,
                    };
                }
            }
            Some(ContainerState::Unknown) | None => {}
        }
    }
}

/// What kind of failure adding a debug container was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchProblem {
    /// 404 on the subresource: the API is missing.
    Unsupported,
    /// 422: a field is invalid (with the field and reason in the sentence).
    Invalid,
    /// 401/403, including PodSecurity admission.
    Forbidden,
    /// Anything else (transport, server errors).
    Other,
}

/// What kind of failure a failed `ephemeralcontainers` patch was.
pub fn launch_problem(error: &kube::Error) -> LaunchProblem {
    match error {
        kube::Error::Api(status) if status.code == 404 && pod_gone(status) => LaunchProblem::Other,
        kube::Error::Api(status) if status.code == 404 => LaunchProblem::Unsupported,
        kube::Error::Api(status) if status.code == 422 => LaunchProblem::Invalid,
        kube::Error::Api(status) if status.code == 401 || status.code == 403 => {
            LaunchProblem::Forbidden
        }
        _ => LaunchProblem::Other,
    }
}

/// A 404 about the pod itself, not the subresource.
fn pod_gone(status: &kube::core::Status) -> bool {
    status.message.contains("not found") && status.message.contains("pods")
}

/// The problem a failed `ephemeralcontainers` patch is, in one sentence.
pub fn describe_launch_error(error: &kube::Error, namespace: &str, pod: &str) -> Problem {
    let sentence = match error {
        kube::Error::Api(status) if status.code == 404 && pod_gone(status) => {
            format!("Pod {namespace}/{pod} no longer exists.")
        }
        kube::Error::Api(status) if status.code == 404 => format!(
            "The cluster does not serve pods/ephemeralcontainers for {namespace}/{pod}: it is older than Kubernetes 1.23 or the EphemeralContainers feature is off."
        ),
        kube::Error::Api(status) if status.code == 422 => {
            let causes = status
                .details
                .as_ref()
                .map(|d| d.causes.clone())
                .unwrap_or_default();
            let detail = if causes.is_empty() {
                status.message.trim_end_matches('.').to_string()
            } else {
                causes
                    .iter()
                    .map(|c| format!("{}: {}", c.field, c.message.trim()))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            format!("The cluster rejected the debug container: {detail}.")
        }
        kube::Error::Api(status)
            if status.code == 403 && status.message.contains("violates PodSecurity") =>
        {
            let level = Policy::from_refusal(&status.message)
                .map_or("restricted", |p| p.enforce.level.name());
            format!(
                "{}. The {level} profile meets that level.",
                status.message.trim_end_matches('.')
            )
        }
        other => return super::errors::describe(other),
    };
    Problem {
        sentence,
        denied: None,
    }
}

//! Pods made for debugging, as `kubectl debug` makes them
//! (k8s.io/kubectl/pkg/cmd/debug): a pod on a node with the node's
//! namespaces and root (`debug node/NAME`), and a copy of a pod whose
//! container runs what you choose (`--copy-to`), each with its profile
//! applied as kubectl's profiles.go does for that style. Creating and
//! deleting them is `cluster::debug_pod`'s job.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Capabilities, Container, EnvVar, HostPathVolumeSource, Pod, PodSpec, SeccompProfile,
    SecurityContext, Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::debug::Profile;

/// The label podbay (as kubectl, `kubectl-debug`) puts on the pods it
/// makes, so a leftover one is easy to find.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "podbay-debug");
/// Where a node debug pod mounts the node's root.
pub const HOST_ROOT: &str = "/host";

/// What a node debug pod runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDebug {
    pub node: String,
    /// The pod's name: `node-debugger-NODE-xxxxx`.
    pub pod: String,
    pub container: String,
    pub image: String,
    /// Empty: the image's entrypoint.
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    pub profile: Profile,
    pub stdin: bool,
    /// Its stdin closes when podbay's attach closes it (piped input).
    pub stdin_once: bool,
    pub tty: bool,
    pub pull_policy: Option<String>,
}

/// The name kubectl gives a node debug pod.
pub fn node_debug_pod_name(node: &str, mut random: impl FnMut() -> u64) -> String {
    format!(
        "node-debugger-{node}-{}",
        super::debug::name_suffix(random())
    )
}

/// The node debug pod: on the node, tolerating every taint, never
/// restarted, with the profile's share of the node (general and sysadmin:
/// its namespaces and root at `/host`; sysadmin privileged; netadmin its
/// network with NET_ADMIN; baseline and restricted neither).
pub fn node_debug_pod(d: &NodeDebug) -> Pod {
    let container = Container {
        name: d.container.clone(),
        image: Some(d.image.clone()),
        command: (!d.command.is_empty()).then(|| d.command.clone()),
        env: env(&d.env),
        image_pull_policy: d.pull_policy.clone(),
        stdin: d.stdin.then_some(true),
        stdin_once: (d.stdin && d.stdin_once).then_some(true),
        tty: d.tty.then_some(true),
        termination_message_policy: Some("File".into()),
        ..Default::default()
    };
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(d.pod.clone()),
            labels: Some(BTreeMap::from([(
                MANAGED_BY.0.to_string(),
                MANAGED_BY.1.to_string(),
            )])),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![container],
            node_name: Some(d.node.clone()),
            restart_policy: Some("Never".into()),
            tolerations: Some(vec![Toleration {
                operator: Some("Exists".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    apply_profile(
        &mut pod,
        &d.container,
        d.profile,
        Style::Node,
        &Keep::default(),
    );
    pod
}

/// What `--copy-to` keeps of the original (kubectl drops each by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Keep {
    pub labels: bool,
    pub annotations: bool,
    pub liveness: bool,
    pub readiness: bool,
    pub startup: bool,
    pub init_containers: bool,
}

/// A copy of a pod, as `kubectl debug POD --copy-to NAME` makes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodCopy {
    pub name: String,
    /// The container to change or add (`--container`); `None`: a new one,
    /// named `debugger-xxxxx`, needing an image.
    pub container: Option<String>,
    /// The image of that container (`--image`).
    pub image: Option<String>,
    /// `--set-image NAME=IMAGE` (`*` for all).
    pub set_images: Vec<(String, String)>,
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    pub stdin: bool,
    /// Its stdin closes when podbay's attach closes it (piped input).
    pub stdin_once: bool,
    pub tty: bool,
    /// `--share-processes` (kubectl's default: true, set by the profile).
    pub share_processes: Option<bool>,
    /// `--same-node`: stay on the original's node.
    pub same_node: bool,
    pub keep: Keep,
    pub profile: Profile,
    pub pull_policy: Option<String>,
    /// Image pull secrets the copy gets beside the original's.
    pub pull_secrets: Vec<String>,
}

/// The copy, and the container to attach to (`None`: only images changed).
pub fn pod_copy(
    original: &Pod,
    copy: &PodCopy,
    random: impl FnMut() -> u64,
) -> Result<(Pod, Option<String>), String> {
    let mut spec = original.spec.clone().unwrap_or_default();
    spec.ephemeral_containers = None;
    for secret in &copy.pull_secrets {
        let secrets = spec.image_pull_secrets.get_or_insert_with(Vec::new);
        if !secrets.iter().any(|s| s.name == *secret) {
            secrets.push(k8s_openapi::api::core::v1::LocalObjectReference {
                name: secret.clone(),
            });
        }
    }
    if !copy.same_node {
        spec.node_name = None;
    }
    for c in &mut spec.containers {
        let image = copy
            .set_images
            .iter()
            .find(|(name, _)| *name == c.name)
            .or_else(|| copy.set_images.iter().find(|(name, _)| name == "*"));
        if let Some((_, image)) = image {
            c.image = Some(image.clone());
        }
    }
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(copy.name.clone()),
            namespace: original.metadata.namespace.clone(),
            labels: original.metadata.labels.clone(),
            annotations: original.metadata.annotations.clone(),
            ..Default::default()
        },
        spec: Some(spec),
        ..Default::default()
    };
    let spec = pod.spec.as_mut().expect("set above");
    let name = match copy.container.as_deref() {
        Some(name) if spec.containers.iter().any(|c| c.name == name) => name.to_string(),
        wanted => {
            if copy.image.is_none() {
                // kubectl applies no profile to an image-only copy.
                if !copy.set_images.is_empty() && wanted.is_none() {
                    return Ok((pod, None));
                }
                return Err(match wanted {
                    Some(name) => format!(
                        "the pod has no container {name:?}: name one of its containers, or give --image to add one"
                    ),
                    None => "give --image for the container to add, or --container to change one of the pod's".into(),
                });
            }
            let taken: Vec<String> = spec.containers.iter().map(|c| c.name.clone()).collect();
            let name = wanted
                .map(str::to_string)
                .unwrap_or_else(|| super::debug::unique_name(&taken, random));
            spec.containers.push(Container {
                name: name.clone(),
                termination_message_policy: Some("File".into()),
                ..Default::default()
            });
            name
        }
    };
    let c = spec
        .containers
        .iter_mut()
        .find(|c| c.name == name)
        .expect("found or added above");
    if !copy.command.is_empty() {
        c.command = Some(copy.command.clone());
        c.args = None;
    }
    if !copy.env.is_empty() {
        c.env = env(&copy.env);
    }
    if let Some(image) = &copy.image {
        c.image = Some(image.clone());
    }
    if let Some(policy) = &copy.pull_policy {
        c.image_pull_policy = Some(policy.clone());
    }
    c.stdin = copy.stdin.then_some(true);
    if copy.stdin && copy.stdin_once {
        c.stdin_once = Some(true);
    }
    c.tty = copy.tty.then_some(true);
    apply_profile(&mut pod, &name, copy.profile, Style::Copy, &copy.keep);
    if let (Some(share), Some(spec)) = (copy.share_processes, pod.spec.as_mut()) {
        spec.share_process_namespace = Some(share);
    }
    Ok((pod, Some(name)))
}

/// The profile a copy is made with under the namespace's enforced Pod
/// Security level, by the rule `podbay debug --copy-to` and the TUI's `C`
/// share: `chosen` if the level admits the copy made with it; else, when
/// the user did not ask for it (`explicit`), the first of baseline and
/// restricted that the level admits (a held shell needs no privilege),
/// weakest last; `None` when none is admitted (the refusal of `chosen`
/// stands). `build` makes the copy with a profile.
pub fn admitted_copy_profile(
    policy: &super::pod_security::Policy,
    chosen: Profile,
    explicit: bool,
    mut build: impl FnMut(Profile) -> Option<Pod>,
) -> Option<Profile> {
    let admits = |pod: Option<Pod>| {
        pod.is_some_and(|pod| super::pod_security::evaluate(&policy.enforce, &pod).is_empty())
    };
    if admits(build(chosen)) {
        return Some(chosen);
    }
    if explicit {
        return None;
    }
    COPY_GIVE_WAY
        .into_iter()
        .filter(|p| *p != chosen)
        .find(|p| admits(build(*p)))
}

/// The profiles a copy gives way to, in order (see [`admitted_copy_profile`]).
const COPY_GIVE_WAY: [Profile; 2] = [Profile::Baseline, Profile::Restricted];

/// Which kind of debugging a profile applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Node,
    Copy,
}

fn apply_profile(pod: &mut Pod, container: &str, profile: Profile, style: Style, keep: &Keep) {
    if style == Style::Copy {
        remove_kept(pod, keep);
        if let Some(spec) = pod.spec.as_mut() {
            spec.share_process_namespace.get_or_insert(true);
        }
    }
    let node = style == Style::Node;
    let host_namespaces = |pod: &mut Pod| {
        if let Some(spec) = pod.spec.as_mut() {
            spec.host_network = Some(true);
            spec.host_pid = Some(true);
            spec.host_ipc = Some(true);
        }
    };
    match profile {
        Profile::General => {
            if node {
                mount_root(pod, container);
                set_security(pod, container, None);
                host_namespaces(pod);
            } else {
                add_capabilities(pod, container, &["SYS_PTRACE"]);
            }
        }
        Profile::Baseline => set_security(pod, container, None),
        Profile::Restricted => set_security(
            pod,
            container,
            Some(SecurityContext {
                run_as_non_root: Some(true),
                capabilities: Some(Capabilities {
                    add: None,
                    drop: Some(vec!["ALL".into()]),
                }),
                allow_privilege_escalation: Some(false),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".into(),
                    localhost_profile: None,
                }),
                ..Default::default()
            }),
        ),
        Profile::Netadmin => {
            add_capabilities(pod, container, &["NET_ADMIN", "NET_RAW"]);
            if node {
                host_namespaces(pod);
            }
        }
        Profile::Sysadmin => {
            let mut security = container_mut(pod, container)
                .and_then(|c| c.security_context.clone())
                .unwrap_or_default();
            security.privileged = Some(true);
            set_security(pod, container, Some(security));
            if node {
                host_namespaces(pod);
                mount_root(pod, container);
            }
        }
    }
}

fn remove_kept(pod: &mut Pod, keep: &Keep) {
    if !keep.labels {
        pod.metadata.labels = None;
    }
    if !keep.annotations {
        pod.metadata.annotations = None;
    }
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    if !keep.init_containers {
        spec.init_containers = None;
    }
    for c in &mut spec.containers {
        if !keep.liveness {
            c.liveness_probe = None;
        }
        if !keep.readiness {
            c.readiness_probe = None;
        }
        if !keep.startup {
            c.startup_probe = None;
        }
    }
}

fn container_mut<'p>(pod: &'p mut Pod, name: &str) -> Option<&'p mut Container> {
    pod.spec
        .as_mut()?
        .containers
        .iter_mut()
        .find(|c| c.name == name)
}

fn set_security(pod: &mut Pod, container: &str, security: Option<SecurityContext>) {
    if let Some(c) = container_mut(pod, container) {
        c.security_context = security;
    }
}

fn add_capabilities(pod: &mut Pod, container: &str, add: &[&str]) {
    if let Some(c) = container_mut(pod, container) {
        let security = c.security_context.get_or_insert_with(Default::default);
        let capabilities = security.capabilities.get_or_insert_with(Default::default);
        let list = capabilities.add.get_or_insert_with(Vec::new);
        for cap in add {
            if !list.iter().any(|c| c == cap) {
                list.push(cap.to_string());
            }
        }
    }
}

fn mount_root(pod: &mut Pod, container: &str) {
    const VOLUME: &str = "host-root";
    if let Some(spec) = pod.spec.as_mut() {
        spec.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: VOLUME.into(),
            host_path: Some(HostPathVolumeSource {
                path: "/".into(),
                type_: None,
            }),
            ..Default::default()
        });
    }
    if let Some(c) = container_mut(pod, container) {
        c.volume_mounts
            .get_or_insert_with(Vec::new)
            .push(VolumeMount {
                mount_path: HOST_ROOT.into(),
                name: VOLUME.into(),
                ..Default::default()
            });
    }
}

fn env(vars: &[(String, String)]) -> Option<Vec<EnvVar>> {
    (!vars.is_empty()).then(|| {
        vars.iter()
            .map(|(name, value)| EnvVar {
                name: name.clone(),
                value: Some(value.clone()),
                value_from: None,
            })
            .collect()
    })
}

/// What each profile gives a node debug pod, for the form and `--help`.
pub fn node_profile_gives(profile: Profile) -> &'static str {
    match profile {
        Profile::General => "the node's PID, network and IPC namespaces, its root at /host",
        Profile::Baseline => "a plain pod on the node: none of its namespaces, no /host",
        Profile::Restricted => "a non-root pod on the node, without capabilities",
        Profile::Netadmin => "the node's namespaces with NET_ADMIN and NET_RAW, no /host",
        Profile::Sysadmin => "general's, privileged: every capability and device",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Probe;

    fn node_debug_spec(profile: Profile) -> NodeDebug {
        NodeDebug {
            node: "node-a1".into(),
            pod: "node-debugger-node-a1-b2c4d".into(),
            container: "debugger".into(),
            image: "busybox:1.36".into(),
            command: vec![],
            env: vec![],
            profile,
            stdin: true,
            stdin_once: false,
            tty: true,
            pull_policy: None,
        }
    }

    fn node_debug(profile: Profile) -> Pod {
        node_debug_pod(&node_debug_spec(profile))
    }

    #[test]
    fn a_node_debug_pod_is_kubectls() {
        let pod = node_debug(Profile::Sysadmin);
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.node_name.as_deref(), Some("node-a1"));
        assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
        assert_eq!(spec.host_pid, Some(true));
        assert_eq!(spec.host_network, Some(true));
        assert_eq!(spec.host_ipc, Some(true));
        let toleration = &spec.tolerations.as_ref().unwrap()[0];
        assert_eq!(toleration.operator.as_deref(), Some("Exists"));
        assert!(toleration.key.is_none());
        let volume = &spec.volumes.as_ref().unwrap()[0];
        assert_eq!(volume.host_path.as_ref().unwrap().path, "/");
        let c = &spec.containers[0];
        assert_eq!(c.volume_mounts.as_ref().unwrap()[0].mount_path, "/host");
        assert_eq!(c.security_context.as_ref().unwrap().privileged, Some(true));
        assert_eq!((c.stdin, c.tty), (Some(true), Some(true)));
    }

    #[test]
    fn piped_input_gives_stdin_once_and_only_with_stdin() {
        let debug = |stdin, stdin_once| NodeDebug {
            stdin,
            stdin_once,
            tty: false,
            ..node_debug_spec(Profile::General)
        };
        let once = |pod: &Pod| pod.spec.as_ref().unwrap().containers[0].stdin_once;
        assert_eq!(once(&node_debug_pod(&debug(true, true))), Some(true));
        assert_eq!(once(&node_debug_pod(&debug(true, false))), None);
        assert_eq!(once(&node_debug_pod(&debug(false, true))), None);

        let copy = |stdin, stdin_once| PodCopy {
            name: "ledger-hold".into(),
            container: Some("worker".into()),
            stdin,
            stdin_once,
            ..Default::default()
        };
        let attached = |copy: &PodCopy| {
            let (pod, _) = pod_copy(&crashing(), copy, || 0).unwrap();
            pod.spec.unwrap().containers[0].stdin_once
        };
        assert_eq!(attached(&copy(true, true)), Some(true));
        assert_eq!(attached(&copy(true, false)), None);
        assert_eq!(attached(&copy(false, true)), None);
    }

    #[test]
    fn node_profiles_give_what_kubectls_do() {
        let general = node_debug(Profile::General);
        let spec = general.spec.as_ref().unwrap();
        assert_eq!(spec.host_pid, Some(true));
        assert!(spec.containers[0].security_context.is_none());
        assert!(spec.volumes.is_some());
        let baseline = node_debug(Profile::Baseline);
        let spec = baseline.spec.as_ref().unwrap();
        assert!(spec.host_pid.is_none() && spec.volumes.is_none());
        let netadmin = node_debug(Profile::Netadmin);
        let spec = netadmin.spec.as_ref().unwrap();
        assert_eq!(spec.host_network, Some(true));
        assert!(spec.volumes.is_none());
    }

    fn crashing() -> Pod {
        let probe = Some(Probe::default());
        Pod {
            metadata: ObjectMeta {
                name: Some("ledger-worker-7f9c6d8b5-w9x8v".into()),
                namespace: Some("payments".into()),
                labels: Some(BTreeMap::from([("app".into(), "ledger".into())])),
                annotations: Some(BTreeMap::from([("a".into(), "b".into())])),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: Some("node-b2".into()),
                containers: vec![Container {
                    name: "worker".into(),
                    image: Some("ghcr.io/podbay/ledger:1.0.4".into()),
                    args: Some(vec!["--serve".into()]),
                    liveness_probe: probe.clone(),
                    readiness_probe: probe.clone(),
                    startup_probe: probe,
                    ..Default::default()
                }],
                init_containers: Some(vec![Container {
                    name: "migrate".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_held_copy_runs_the_command_without_labels_probes_or_node() {
        let copy = PodCopy {
            name: "ledger-hold".into(),
            container: Some("worker".into()),
            command: vec!["sleep".into(), "infinity".into()],
            stdin: true,
            tty: true,
            ..Default::default()
        };
        let (pod, attach) = pod_copy(&crashing(), &copy, || 0).unwrap();
        assert_eq!(attach.as_deref(), Some("worker"));
        assert!(pod.metadata.labels.is_none() && pod.metadata.annotations.is_none());
        let spec = pod.spec.unwrap();
        assert!(spec.node_name.is_none() && spec.init_containers.is_none());
        assert_eq!(spec.share_process_namespace, Some(true));
        let c = &spec.containers[0];
        assert_eq!(c.command.as_ref().unwrap(), &["sleep", "infinity"]);
        assert!(c.args.is_none(), "kubectl drops args with a command");
        assert!(c.liveness_probe.is_none() && c.readiness_probe.is_none());
        let caps = c
            .security_context
            .as_ref()
            .unwrap()
            .capabilities
            .as_ref()
            .unwrap();
        assert_eq!(caps.add.as_ref().unwrap(), &["SYS_PTRACE"]);
    }

    #[test]
    fn keep_flags_same_node_and_set_image_are_kubectls() {
        let copy = PodCopy {
            name: "c".into(),
            image: Some("busybox:1.36".into()),
            set_images: vec![("worker".into(), "ghcr.io/podbay/ledger:debug".into())],
            same_node: true,
            share_processes: Some(false),
            keep: Keep {
                labels: true,
                readiness: true,
                init_containers: true,
                ..Keep::default()
            },
            profile: Profile::Baseline,
            ..Default::default()
        };
        let (pod, attach) = pod_copy(&crashing(), &copy, || 0).unwrap();
        let added = attach.unwrap();
        assert!(added.starts_with("debugger-"));
        assert!(pod.metadata.labels.is_some() && pod.metadata.annotations.is_none());
        let spec = pod.spec.unwrap();
        assert_eq!(spec.node_name.as_deref(), Some("node-b2"));
        assert_eq!(spec.share_process_namespace, Some(false));
        assert!(spec.init_containers.is_some());
        assert_eq!(
            spec.containers[0].image.as_deref(),
            Some("ghcr.io/podbay/ledger:debug")
        );
        assert!(spec.containers[0].readiness_probe.is_some());
        assert!(spec.containers[0].liveness_probe.is_none());
        assert_eq!(spec.containers[1].name, added);
        assert_eq!(spec.containers[1].image.as_deref(), Some("busybox:1.36"));
    }

    #[test]
    fn a_copy_without_an_image_needs_an_existing_container() {
        let copy = PodCopy {
            name: "c".into(),
            container: Some("nope".into()),
            ..Default::default()
        };
        assert!(
            pod_copy(&crashing(), &copy, || 0)
                .unwrap_err()
                .contains("\"nope\"")
        );
        let images_only = PodCopy {
            name: "c".into(),
            set_images: vec![("*".into(), "busybox:1.36".into())],
            ..Default::default()
        };
        let (pod, attach) = pod_copy(&crashing(), &images_only, || 0).unwrap();
        assert!(attach.is_none());
        assert!(
            pod.metadata.labels.is_some(),
            "no profile: kubectl keeps them"
        );
        assert_eq!(
            pod.spec.unwrap().containers[0].image.as_deref(),
            Some("busybox:1.36")
        );
    }
}

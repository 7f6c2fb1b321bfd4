//! A packet capture in a pod, as data: the debug container it runs in
//! (which profile, under the namespace's Pod Security), the programs run
//! there, and what tcpdump said at its end.
//!
//! Every container of a pod shares its network namespace, so a debug
//! container sees all of the pod's traffic. tcpdump needs `CAP_NET_RAW`:
//! the netadmin profile adds it; under Pod Security "baseline", which
//! refuses added capabilities, a root container keeps the runtime's
//! default set, which holds NET_RAW (containerd, Docker); "restricted"
//! drops every capability and forbids root, so no capture is possible.

use super::debug::{DebugSpec, Profile};
use super::detail::PodDetail;
use super::launch::{self, LaunchPlan, LaunchRefusal, LaunchRequest, RefusalKind};
use super::pod_security::Policy;
use k8s_openapi::api::core::v1::Pod;

/// The image a capture runs in unless told otherwise: it has tcpdump.
pub const DEFAULT_IMAGE: &str = "nicolaka/netshoot:v0.13";

/// `-i`: one interface of the pod (`any` is every one), as typed.
pub fn parse_interface(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err("name one interface of the pod (any, eth0, lo); any captures them all".into());
    }
    Ok(name.to_string())
}

/// `-c`: how many packets, more than none.
pub fn parse_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of packets: give one over 0 (none: capture until stopped)"
        )),
    }
}

/// The debug container a capture adds (its `$0` is [`LEASE`]): it waits
/// for a tcpdump to start in it, and ends when the last one has (the
/// capture ends it at once; else it sees within a second), or after a
/// minute if none starts (podbay stopped between adding it and
/// capturing). Ephemeral containers cannot be removed, but this one does
/// not stay running.
pub fn lease_command() -> Vec<String> {
    [
        "sh",
        "-c",
        "trap 'exit 0' TERM; i=0; until grep -qsx tcpdump /proc/[0-9]*/comm; do i=$((i+1)); [ $i -gt 60 ] && exit 0; sleep 1; done; while grep -qsx tcpdump /proc/[0-9]*/comm; do sleep 1; done",
        LEASE,
    ]
    .map(String::from)
    .to_vec()
}

/// Whether debug container `name` of `pod` may open a raw socket, as
/// tcpdump must: it runs as root (a non-root process has no effective
/// capabilities, added ones included) and keeps NET_RAW (not dropped, or
/// added back). A container run as another user by its image alone is not
/// seen here; tcpdump's own refusal then says so.
pub fn can_capture(pod: &Pod, name: &str) -> bool {
    let spec = pod.spec.as_ref();
    let Some(container) = spec
        .and_then(|s| s.ephemeral_containers.as_ref())
        .and_then(|list| list.iter().find(|c| c.name == name))
    else {
        return false;
    };
    let own = container.security_context.as_ref();
    let pod_level = spec.and_then(|s| s.security_context.as_ref());
    let user = own
        .and_then(|c| c.run_as_user)
        .or(pod_level.and_then(|p| p.run_as_user));
    let non_root = own
        .and_then(|c| c.run_as_non_root)
        .or(pod_level.and_then(|p| p.run_as_non_root));
    if user.is_some_and(|uid| uid != 0) || (user.is_none() && non_root == Some(true)) {
        return false;
    }
    let capabilities = own.and_then(|c| c.capabilities.as_ref());
    let names = |list: Option<&Vec<String>>| -> Vec<String> {
        list.into_iter()
            .flatten()
            .map(|c| c.trim_start_matches("CAP_").to_ascii_uppercase())
            .collect()
    };
    let dropped = names(capabilities.and_then(|c| c.drop.as_ref()));
    let added = names(capabilities.and_then(|c| c.add.as_ref()));
    let kept = |cap: &str| !dropped.iter().any(|d| d == "ALL" || d == cap);
    kept("NET_RAW") || added.iter().any(|a| a == "NET_RAW" || a == "ALL")
}

/// The lease's name among the container's processes.
pub const LEASE: &str = "podbay-lease";

/// What the capture asks of tcpdump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `-i`: `any` for every interface of the pod.
    pub interface: String,
    /// A BPF filter expression, as tcpdump takes it.
    pub filter: Option<String>,
    /// `-c`: stop after this many packets.
    pub count: Option<u64>,
}

/// The program exec'd for a capture: tcpdump writing pcap to stdout a
/// packet at a time, ended (SIGINT, so it prints its counts) when its
/// stdin ends: when podbay stops it, and when podbay's connection goes,
/// whatever ended podbay. With `end_lease`, the lease podbay added ends
/// with the last tcpdump (never any other process: it is found by its
/// name). Nothing is written in the pod. Arguments go through `"$@"`,
/// never through the shell's parser.
pub fn command(options: &Options, end_lease: bool) -> Vec<String> {
    // The lease's name is assembled at run time: this script's own
    // command line must not match it.
    const SCRIPT: &str = "lease=$1; shift
exec 3<&0 </dev/null
tcpdump \"$@\" 3<&- &
t=$!
{ cat >/dev/null; kill -INT $t; } <&3 >/dev/null 2>&1 &
exec 3<&-
wait $t
s=$?
if [ \"$lease\" = end ] && ! grep -qsx tcpdump /proc/[0-9]*/comm; then
  for p in /proc/[0-9]*; do
    grep -qs \"podbay-le\"\"ase\" \"$p/cmdline\" && kill -TERM \"${p#/proc/}\" 2>/dev/null
  done
fi
exit $s";
    let mut argv: Vec<String> = ["sh", "-c", SCRIPT, "podbay-capture"]
        .map(String::from)
        .to_vec();
    argv.push(if end_lease { "end" } else { "keep" }.into());
    argv.extend(["-i".into(), options.interface.clone()]);
    // Packets as they come, not when the kernel's buffer block is full
    // or a second has passed: a stop then loses none. Immediate mode
    // rings hold frames of the snapshot length: at tcpdump's 256 KiB in
    // its 2 MiB buffer that is 7 frames, and a burst of 20 loopback
    // packets lost 16 to the kernel. A full loopback packet (64 KiB and
    // its header) in a 16 MiB ring: some 250 frames.
    argv.extend(
        [
            "--immediate-mode",
            "-s",
            "65600",
            "-B",
            "16384",
            "-U",
            "-w",
            "-",
        ]
        .map(String::from),
    );
    if let Some(count) = options.count {
        argv.extend(["-c".into(), count.to_string()]);
    }
    if let Some(filter) = options.filter.as_ref().filter(|f| !f.trim().is_empty()) {
        argv.push(filter.clone());
    }
    argv
}

/// A capture as asked, from the command line or the TUI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `(namespace, pod)`, each once.
    pub pods: Vec<(String, String)>,
    pub image: String,
    /// For reading each pod and starting its debug container.
    pub timeout: std::time::Duration,
    pub options: Options,
    /// Stop this long after every pod listens.
    pub duration: Option<std::time::Duration>,
}

/// What a capture running for the TUI tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureEvent {
    /// A line of its progress (a pod readied, a warning).
    Said(String),
    /// Every pod's tcpdump listens; the file it writes (its name made
    /// free, when the one asked for was taken).
    Capturing { file: String },
    /// Packets and bytes written so far.
    Totals { packets: u64, bytes: u64 },
    /// It ended: a line per pod, and whether any was captured.
    Ended { lines: Vec<String>, captured: bool },
}

/// tcpdump's counts at its end (its stderr): `N packets captured`, `N
/// packets received by filter`, `N packets dropped by kernel`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub captured: Option<u64>,
    pub dropped: Option<u64>,
}

impl Counts {
    pub fn read(stderr: &str) -> Counts {
        let count = |what: &str| {
            stderr.lines().find_map(|line| {
                let (number, rest) = line.trim().split_once(' ')?;
                (rest == what).then(|| number.parse().ok())?
            })
        };
        Counts {
            captured: count("packets captured").or(count("packet captured")),
            dropped: count("packets dropped by kernel").or(count("packet dropped by kernel")),
        }
    }
}

/// Why tcpdump ended without a capture, from its stderr: one sentence
/// naming the cause and what to do, or `None` to give its words as they
/// are.
pub fn failure_hint(stderr: &str) -> Option<&'static str> {
    let has = |text: &str| stderr.contains(text);
    if has("Operation not permitted") || has("You don't have permission") {
        Some(
            "the debug container lacks NET_RAW: the runtime's default capabilities do not hold it (CRI-O drops it), and the namespace's Pod Security refuses adding it; capture in a namespace at \"privileged\", or use --image with a container that has it",
        )
    } else if has("syntax error") || has("can't parse filter") || has("illegal") {
        Some("tcpdump cannot read the filter: check -f's expression (man pcap-filter)")
    } else if has("not found") || has("No such file") {
        Some("the image has no tcpdump: pass --image with one that has (nicolaka/netshoot)")
    } else if has("No such device") || has("doesn't exist") {
        Some("the pod has no such interface: -i any captures on every one")
    } else {
        None
    }
}

/// The profile a capture's debug container gets in the pod, or why none
/// can capture there (before anything is created): netadmin where the
/// namespace admits it, else the strongest profile it admits, which
/// captures unless it is restricted. [`LaunchRefusal::sentence`] says it.
pub fn profile(
    detail: &PodDetail,
    policy: Option<&Policy>,
    image: &str,
) -> Result<Profile, LaunchRefusal> {
    let request = LaunchRequest {
        spec: DebugSpec {
            name: "capture-probe".into(),
            image: image.into(),
            command: lease_command(),
            profile: Profile::Netadmin,
            ..Default::default()
        },
        profile_chosen: false,
        reuse: false,
    };
    match launch::plan(detail, &request, policy) {
        LaunchPlan::Refused(refusal) => Err(refusal),
        LaunchPlan::Launch { spec, .. } if spec.profile == Profile::Restricted => {
            Err(LaunchRefusal {
                kind: RefusalKind::Forbidden,
                why: format!(
                    "{} enforces Pod Security \"restricted\", where no container may capture packets: it must run as non-root and drop every capability, NET_RAW too. Nothing was created; capture in a namespace at \"baseline\" or \"privileged\", or ask for an exemption.",
                    detail.key.shown().0
                ),
                hint: None,
                passing: None,
            })
        }
        LaunchPlan::Launch { spec, .. } => Ok(spec.profile),
        LaunchPlan::Reattach(_) => Ok(Profile::Netadmin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pod_security::{Level, LevelVersion};

    /// A pod with debug container `debugger-x` of this security context,
    /// and this pod-level one.
    fn with_debugger(own: serde_json::Value, pod_level: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {
                "securityContext": pod_level,
                "containers": [{"name": "web", "image": "web:1"}],
                "ephemeralContainers": [{
                    "name": "debugger-x", "image": DEFAULT_IMAGE, "securityContext": own,
                }],
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_debugger_captures_as_root_with_net_raw_kept_or_added_back() {
        use serde_json::json;
        let can = |own, pod_level| can_capture(&with_debugger(own, pod_level), "debugger-x");
        assert!(can(json!(null), json!(null)), "the runtime's defaults");
        assert!(can(
            json!({"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}}),
            json!(null)
        ));
        assert!(can(
            json!({"capabilities": {"drop": ["SYS_ADMIN"]}}),
            json!(null)
        ));
        assert!(can(
            json!({"capabilities": {"drop": ["ALL"], "add": ["CAP_NET_RAW"]}}),
            json!(null)
        ));
        assert!(can(json!({"runAsUser": 0}), json!({"runAsNonRoot": true})));

        assert!(
            !can(json!({"capabilities": {"drop": ["ALL"]}}), json!(null)),
            "restricted"
        );
        assert!(!can(
            json!({"capabilities": {"drop": ["net_raw"]}}),
            json!(null)
        ));
        assert!(!can(json!({"runAsUser": 1000}), json!(null)));
        assert!(!can(json!({"runAsNonRoot": true}), json!(null)));
        assert!(
            !can(json!(null), json!({"runAsUser": 65532})),
            "the pod's user"
        );
        assert!(
            !can(
                json!({"runAsUser": 1000, "capabilities": {"add": ["NET_RAW"]}}),
                json!(null)
            ),
            "an added capability is not effective for a non-root user"
        );
        assert!(!can_capture(
            &with_debugger(json!(null), json!(null)),
            "debugger-y"
        ));
    }

    /// A running pod that passes even "restricted".
    fn detail() -> PodDetail {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "api-1", "namespace": "payments"},
            "spec": {"nodeName": "node-a1",
                "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [{"name": "api", "image": "api:1", "securityContext": {
                    "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "api", "image": "api:1",
                "imageID": "", "ready": true, "restartCount": 0,
                "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]},
        }))
        .unwrap();
        PodDetail::from_pod(&pod)
    }

    fn enforcing(level: Level) -> Policy {
        Policy {
            enforce: LevelVersion::latest(level),
            warn: LevelVersion::latest(level),
        }
    }

    #[test]
    fn the_profile_is_the_least_that_captures_under_each_level() {
        assert_eq!(
            profile(&detail(), None, DEFAULT_IMAGE),
            Ok(Profile::Netadmin)
        );
        let privileged = enforcing(Level::Privileged);
        assert_eq!(
            profile(&detail(), Some(&privileged), DEFAULT_IMAGE),
            Ok(Profile::Netadmin)
        );
        // Baseline refuses added capabilities (NET_ADMIN, NET_RAW,
        // SYS_PTRACE): the runtime's default set, NET_RAW in it.
        let baseline = enforcing(Level::Baseline);
        assert_eq!(
            profile(&detail(), Some(&baseline), DEFAULT_IMAGE),
            Ok(Profile::Baseline)
        );
        let restricted = enforcing(Level::Restricted);
        let refusal = profile(&detail(), Some(&restricted), DEFAULT_IMAGE).unwrap_err();
        assert_eq!(refusal.kind, RefusalKind::Forbidden);
        let why = refusal.sentence("Pod payments/api-1");
        assert!(
            why.starts_with("payments enforces Pod Security \"restricted\""),
            "{why}"
        );
        assert!(why.contains("Nothing was created"), "{why}");
    }

    #[test]
    fn arguments_never_reach_the_shell_parser() {
        let argv = command(
            &Options {
                interface: "any".into(),
                filter: Some("tcp port 80; rm -rf /".into()),
                count: Some(5),
            },
            true,
        );
        assert_eq!(&argv[..2], ["sh", "-c"]);
        assert!(!argv[2].contains("rm -rf"));
        assert_eq!(argv[3], "podbay-capture");
        assert_eq!(
            &argv[4..],
            [
                "end",
                "-i",
                "any",
                "--immediate-mode",
                "-s",
                "65600",
                "-B",
                "16384",
                "-U",
                "-w",
                "-",
                "-c",
                "5",
                "tcp port 80; rm -rf /"
            ]
        );
        let none = command(
            &Options {
                interface: "eth0".into(),
                filter: Some("  ".into()),
                count: None,
            },
            false,
        );
        assert_eq!(
            &none[4..],
            [
                "keep",
                "-i",
                "eth0",
                "--immediate-mode",
                "-s",
                "65600",
                "-B",
                "16384",
                "-U",
                "-w",
                "-"
            ]
        );
        // The lease is found by its name; the script that ends it does
        // not carry that name itself.
        assert!(!argv[2].contains(LEASE));
        assert_eq!(lease_command().last().map(String::as_str), Some(LEASE));
    }

    #[test]
    fn tcpdumps_counts_are_read_from_its_last_words() {
        let stderr = "tcpdump: listening on any, link-type LINUX_SLL2\n12 packets captured\n14 packets received by filter\n2 packets dropped by kernel\n";
        assert_eq!(
            Counts::read(stderr),
            Counts {
                captured: Some(12),
                dropped: Some(2)
            }
        );
        assert_eq!(
            Counts::read(
                "1 packet captured\n1 packet received by filter\n0 packets dropped by kernel\n"
            ),
            Counts {
                captured: Some(1),
                dropped: Some(0)
            }
        );
        assert_eq!(Counts::read("tcpdump: syntax error"), Counts::default());
    }

    #[test]
    fn tcpdumps_failures_name_their_cause() {
        let hint = |s| failure_hint(s).unwrap_or("");
        assert!(hint("tcpdump: any: You don't have permission to perform this capture on that device\n(socket: Operation not permitted)").contains("NET_RAW"));
        assert!(hint("tcpdump: syntax error in filter expression: syntax error").contains("-f"));
        assert!(hint("sh: tcpdump: not found").contains("--image"));
        assert!(hint("tcpdump: eth9: No such device exists").contains("-i any"));
        assert_eq!(failure_hint("tcpdump: out of memory"), None);
    }
}

//! What is sent for a debug container in one pod, decided once for every
//! entry point (`podbay debug`, the many-pods form; the launcher uses the
//! same checks as the user fills it): refused, with why; attached to a
//! debug container already running there; or launched, with the profile
//! the namespace's Pod Security admits.

use super::debug::{self, Admission, DebugSpec, Profile, Verdict};
use super::detail::{NoDebugKind, PodDetail};
use super::pod_security::Policy;

/// One pod's debug container as asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchRequest {
    /// The container to add: its name (free in the pod, or refused), image,
    /// target, profile, command, …
    pub spec: DebugSpec,
    /// The user chose the profile: it is never swapped for another.
    pub profile_chosen: bool,
    /// Attach to a running debug container with the same image, target and
    /// mounts instead of adding one.
    pub reuse: bool,
}

/// What to do in the pod.
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchPlan {
    /// Add this container; `gave_way` is the profile asked for when the
    /// namespace's level refused it (to say so).
    Launch {
        spec: Box<DebugSpec>,
        gave_way: Option<Profile>,
    },
    /// Attach to this running debug container.
    Reattach(String),
    Refused(LaunchRefusal),
}

/// Why nothing is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchRefusal {
    pub kind: RefusalKind,
    /// The end of a sentence about the pod ("has no container …"); under
    /// Pod Security, the whole refusal naming the namespace's level.
    pub why: String,
    /// What to do instead, when there is something to say.
    pub hint: Option<String>,
    /// Under Pod Security: the profile the level would admit, if any.
    pub passing: Option<Profile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// The pod cannot take one at all, or not with a target.
    Unsupported,
    /// The target is not a container of the pod, or the name is taken.
    Invalid,
    /// No kubelet would start it.
    NotRunning,
    /// The namespace's Pod Security refuses it.
    Forbidden,
}

impl LaunchRefusal {
    /// The whole sentence, after the pod's name ("Pod ns/name", "The
    /// pod"); Pod Security's names the namespace itself.
    pub fn sentence(&self, pod: &str) -> String {
        match (&self.kind, &self.hint) {
            (RefusalKind::Forbidden, _) => self.why.clone(),
            (_, Some(hint)) => format!("{pod} {}; {hint}.", self.why),
            (_, None) => format!("{pod} {}.", self.why),
        }
    }
}

/// The plan for `request` in the pod `detail` shows, under `policy` (the
/// namespace's Pod Security, when it could be read).
pub fn plan(detail: &PodDetail, request: &LaunchRequest, policy: Option<&Policy>) -> LaunchPlan {
    let spec = &request.spec;
    let target = spec.target.as_deref();
    if let Some(refusal) = detail.why_no_debug_container(target) {
        return LaunchPlan::Refused(LaunchRefusal {
            kind: match refusal.kind {
                NoDebugKind::Unsupported => RefusalKind::Unsupported,
                NoDebugKind::NoSuchTarget => RefusalKind::Invalid,
                NoDebugKind::NotRunning => RefusalKind::NotRunning,
            },
            why: refusal.why,
            hint: refusal.hint,
            passing: None,
        });
    }
    if request.reuse
        && let Some(running) = detail.reusable_debugger(&spec.image, target, &spec.mounts)
    {
        return LaunchPlan::Reattach(running.to_string());
    }
    if detail.containers.iter().any(|c| c.name == spec.name) {
        return LaunchPlan::Refused(LaunchRefusal {
            kind: RefusalKind::Invalid,
            why: format!("already has a container named {:?}", spec.name),
            hint: Some("pick another name (ephemeral containers can never be removed)".into()),
            passing: None,
        });
    }
    let mut spec = spec.clone();
    let mut gave_way = None;
    if let Some(policy) = policy {
        let admission = spec.admission(policy, &detail.manifest);
        match admission.verdict(request.profile_chosen, spec.custom.is_some()) {
            Verdict::Send => {}
            Verdict::GiveWay(passing) => {
                gave_way = Some(spec.profile);
                spec.profile = passing;
                if let Some(custom) = spec.custom.as_mut() {
                    custom.base = passing;
                }
            }
            Verdict::Refuse => {
                let namespace = detail.key.shown().0.into_owned();
                let passing = match &admission {
                    Admission::Refused { passing, .. } => *passing,
                    _ => None,
                };
                let why =
                    debug::refusal_sentence(&namespace, policy, &spec.profile_label(), &admission)
                        .unwrap_or_else(|| "is refused by its namespace's Pod Security".into());
                return LaunchPlan::Refused(LaunchRefusal {
                    kind: RefusalKind::Forbidden,
                    why,
                    hint: None,
                    passing,
                });
            }
        }
    }
    LaunchPlan::Launch {
        spec: Box::new(spec),
        gave_way,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn pod(debugger: Option<&str>) -> PodDetail {
        let mut pod = json!({
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"nodeName": "node-1",
                "containers": [{"name": "app", "image": "app:1"}]},
            "status": {"phase": "Running"},
        });
        if let Some(image) = debugger {
            pod["spec"]["ephemeralContainers"] =
                json!([{"name": "dbg", "image": image, "targetContainerName": "app"}]);
            pod["status"]["ephemeralContainerStatuses"] = json!([{"name": "dbg", "image": image,
                "imageID": "", "ready": false, "restartCount": 0,
                "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]);
        }
        PodDetail::from_pod(&serde_json::from_value(pod).unwrap())
    }

    fn request(profile: Profile, chosen: bool, reuse: bool) -> LaunchRequest {
        LaunchRequest {
            spec: DebugSpec {
                name: "debugger-x".into(),
                image: "busybox:1.36".into(),
                target: Some("app".into()),
                profile,
                stdin: true,
                tty: true,
                ..Default::default()
            },
            profile_chosen: chosen,
            reuse,
        }
    }

    fn enforcing(level: &str) -> Policy {
        Policy::from_labels(&BTreeMap::from([(
            "pod-security.kubernetes.io/enforce".to_string(),
            level.to_string(),
        )]))
    }

    #[test]
    fn one_plan_for_a_pod_refused_reattached_or_launched() {
        let general = request(Profile::General, false, false);
        let LaunchPlan::Launch { spec, gave_way } = plan(&pod(None), &general, None) else {
            panic!("launched where nothing is enforced")
        };
        assert_eq!((spec.profile, gave_way), (Profile::General, None));

        let baseline = enforcing("baseline");
        let LaunchPlan::Launch { spec, gave_way } = plan(&pod(None), &general, Some(&baseline))
        else {
            panic!("a profile not chosen gives way")
        };
        assert_eq!(
            (spec.profile, gave_way),
            (Profile::Baseline, Some(Profile::General))
        );

        let chosen = request(Profile::General, true, false);
        let LaunchPlan::Refused(refusal) = plan(&pod(None), &chosen, Some(&baseline)) else {
            panic!("a chosen profile is never swapped")
        };
        assert_eq!(refusal.kind, RefusalKind::Forbidden);
        assert_eq!(refusal.passing, Some(Profile::Baseline));
        assert!(
            refusal
                .sentence("Pod shop/web")
                .starts_with("shop enforces Pod Security")
        );

        let running = pod(Some("busybox:1.36"));
        assert_eq!(
            plan(&running, &request(Profile::General, false, true), None),
            LaunchPlan::Reattach("dbg".into())
        );
        assert!(
            matches!(plan(&running, &general, None), LaunchPlan::Launch { .. }),
            "without reuse, another is added"
        );

        let mut taken = general.clone();
        taken.spec.name = "dbg".into();
        let LaunchPlan::Refused(refusal) = plan(&running, &taken, None) else {
            panic!("a taken name is refused")
        };
        assert_eq!(refusal.kind, RefusalKind::Invalid);
        assert_eq!(
            refusal.sentence("Pod shop/web"),
            "Pod shop/web already has a container named \"dbg\"; pick another name (ephemeral containers can never be removed)."
        );

        let mut elsewhere = general.clone();
        elsewhere.spec.target = Some("nope".into());
        let LaunchPlan::Refused(refusal) = plan(&pod(None), &elsewhere, None) else {
            panic!("no such target")
        };
        assert_eq!(refusal.kind, RefusalKind::Invalid);
    }
}

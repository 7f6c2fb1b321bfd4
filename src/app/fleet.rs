//! The launcher for several marked pods at once: one form (image, command,
//! profile, env, and a target that may be "each pod's first container"),
//! and for each pod what `enter` will do there — launch, attach to the
//! debug container already running the same image on the same target,
//! or nothing, and why — said before anything is sent.

use crossterm::event::KeyEvent;

pub use super::launcher::EACH_FIRST;
use super::launcher::{FormOutcome, Launcher};
use crate::model::debug::{AsTargetUser, DebugSpec, Profile};
use crate::model::launch::{self, LaunchPlan, LaunchRequest};
use crate::model::pod_security::Policy;
use crate::model::{ContainerInfo, ContainerKind, ContainerState, PodDetail, PodKey, Stdio};

/// A marked pod, as read when the form opened.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetPod {
    /// Its cluster: the list may show several, and each pod's pane goes
    /// to its own.
    pub cluster: crate::model::ClusterId,
    pub key: PodKey,
    /// The pod, or why it could not be read (one sentence).
    pub detail: Result<PodDetail, String>,
    /// Its namespace's Pod Security labels, when they could be read.
    pub policy: Option<Policy>,
}

/// What `enter` does in one pod.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    Launch(Box<DebugSpec>),
    /// A running debug container with this image and target: attach to it
    /// (debug containers can never be removed; no pile-up).
    Reattach(String),
    /// Nothing can be done there: why, as the end of "This pod …".
    Refused(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct FleetForm {
    /// The shared fields, over [`common`](Self::common).
    pub launcher: Launcher,
    /// What the pods have in common, as one pod for the form: every
    /// container name of every pod (names must be free in each), and the
    /// targets on offer.
    common: PodDetail,
    pub pods: Vec<FleetPod>,
}

/// What a key in the form asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum FleetOutcome {
    Stay,
    Cancel,
    /// Each pod with its plan; at least one launches or attaches.
    Go(Vec<(PodKey, Plan)>),
}

impl FleetForm {
    pub fn new(pods: Vec<FleetPod>, images: &[String], profile: Profile, random: u64) -> Self {
        let common = common_pod(&pods);
        let mut launcher = Launcher::new(&common, None, images, profile, None, random);
        launcher.target = Some(0);
        launcher.several = true;
        launcher.refresh(&common);
        FleetForm {
            launcher,
            common,
            pods,
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> FleetOutcome {
        match self.launcher.on_key(key, &self.common) {
            FormOutcome::Stay | FormOutcome::Reattach(_) => FleetOutcome::Stay,
            FormOutcome::Cancel => FleetOutcome::Cancel,
            FormOutcome::Launch(template) => {
                let plans = self.plans_for(&template);
                if plans.iter().all(|(_, p)| matches!(p, Plan::Refused(_))) {
                    self.launcher.error = Some(format!(
                        "None of the {} pods can take this debug container (each says why above).",
                        plans.len()
                    ));
                    return FleetOutcome::Stay;
                }
                FleetOutcome::Go(plans)
            }
        }
    }

    /// Each pod's plan for the form's values as they are; `None` while the
    /// form itself says something is wrong (its sentence is shown).
    pub fn plans(&self) -> Option<Vec<(PodKey, Plan)>> {
        let template = self.launcher.spec(&self.common).ok()?;
        Some(self.plans_for(&template))
    }

    /// The pods as one, for the form's own checks.
    pub fn common(&self) -> &PodDetail {
        &self.common
    }

    fn plans_for(&self, template: &DebugSpec) -> Vec<(PodKey, Plan)> {
        self.pods
            .iter()
            .map(|pod| {
                (
                    pod.key.clone(),
                    plan(pod, template, self.launcher.profile_chosen),
                )
            })
            .collect()
    }
}

/// One pod's plan: the checks `podbay debug` makes before sending.
fn plan(pod: &FleetPod, template: &DebugSpec, profile_chosen: bool) -> Plan {
    let detail = match &pod.detail {
        Ok(detail) => detail,
        Err(sentence) => return Plan::Refused(format!("could not be read: {sentence}")),
    };
    let target = match template.target.as_deref() {
        Some(EACH_FIRST) => detail
            .containers
            .iter()
            .find(|c| c.kind == ContainerKind::Regular)
            .map(|c| c.name.clone()),
        named => named.map(str::to_string),
    };
    let request = LaunchRequest {
        spec: DebugSpec {
            target,
            ..template.clone()
        },
        profile_chosen,
        reuse: true,
    };
    match launch::plan(detail, &request, pod.policy.as_ref()) {
        LaunchPlan::Refused(refusal) => Plan::Refused(refusal.why),
        LaunchPlan::Reattach(running) => Plan::Reattach(running),
        LaunchPlan::Launch { mut spec, .. } => {
            spec.match_target_user(&detail.manifest, AsTargetUser::Auto);
            Plan::Launch(spec)
        }
    }
}

/// The pods as one for the shared form: [`EACH_FIRST`], then each regular
/// and init container name any pod has (in the order met), and every
/// other name, so that a debug container's name is free in all of them.
fn common_pod(pods: &[FleetPod]) -> PodDetail {
    let details: Vec<&PodDetail> = pods.iter().filter_map(|p| p.detail.as_ref().ok()).collect();
    let named = |kind, name: &str| ContainerInfo {
        kind,
        name: name.to_string(),
        image: String::new(),
        state: ContainerState::Unknown,
        ready: false,
        restarts: 0,
        target: None,
        command: Vec::new(),
        args: Vec::new(),
        previous: None,
        stdio: Stdio::TERMINAL,
        mounts: Vec::new(),
    };
    let mut containers = vec![named(ContainerKind::Regular, EACH_FIRST)];
    for kind in [
        ContainerKind::Regular,
        ContainerKind::Init,
        ContainerKind::Ephemeral,
    ] {
        for c in details.iter().flat_map(|d| &d.containers) {
            if c.kind == kind && !containers.iter().any(|k| k.name == c.name) {
                containers.push(named(kind, &c.name));
            }
        }
    }
    PodDetail {
        key: pods.first().map(|p| p.key.clone()).unwrap_or_default(),
        phase: "Running".into(),
        node: "(each pod's)".into(),
        containers,
        ..PodDetail::default()
    }
}

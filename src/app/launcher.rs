//! The debug launcher form: target, image, name, command, profile, env,
//! mounts.
//! Pure state: it builds the `DebugSpec` to send and says what is wrong.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::form::{self, Answer, Form, Input, LineEdit, Shown};
use crate::model::debug::{
    self, Admission, AsTargetUser, CustomProfile, DebugSpec, Profile, Verdict,
};
use crate::model::launch::{self, LaunchPlan, LaunchRequest};
use crate::model::pod_security::{self, Level, Policy};
use crate::model::{ContainerKind, PodDetail};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Target,
    Image,
    Name,
    Command,
    Profile,
    Env,
    Mounts,
}

impl Field {
    pub const ALL: [Field; 7] = [
        Field::Target,
        Field::Image,
        Field::Name,
        Field::Command,
        Field::Profile,
        Field::Env,
        Field::Mounts,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Field::Target => "target",
            Field::Image => "image",
            Field::Name => "name",
            Field::Command => "command",
            Field::Profile => "profile",
            Field::Env => "env",
            Field::Mounts => "mounts",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Launcher {
    pub focus: Field,
    /// Containers that can be targeted (regular, then init); `None` means no target.
    pub targets: Vec<String>,
    pub target: Option<usize>,
    pub images: Vec<String>,
    pub image: LineEdit,
    pub name: LineEdit,
    pub command: LineEdit,
    pub profile: Profile,
    pub env: LineEdit,
    /// The pod's volumes to mount: `NAME:PATH, NAME:PATH`.
    pub mounts: LineEdit,
    /// The pod's volumes, as ←/→ offers them.
    pub volumes: Vec<String>,
    /// Why the last launch failed, shown in the form (values are kept).
    pub error: Option<String>,
    /// A running debug container with the same image and target, if any.
    pub reusable: Option<String>,
    /// The namespace's Pod Security labels, when they could be read (or a
    /// refusal named them).
    pub policy: Option<Policy>,
    /// Why the profile is not the configured one.
    pub profile_note: Option<String>,
    /// What the enforced level says of the current values (kept up to
    /// date by [`refresh`](Self::refresh), read on every frame).
    verdict: Option<Admission>,
    /// The user picked the profile: it is not changed for them any more.
    pub profile_chosen: bool,
    /// The team's profiles (config.toml's `[profiles.NAME]`), offered
    /// after the built-ins.
    pub customs: Vec<CustomProfile>,
    /// The one chosen, if any (`profile` is then its base).
    pub custom: Option<usize>,
    /// The pod's namespace as said (the verdict names it).
    namespace: String,
    /// The form launches in several pods at once (marks): no mounts.
    pub several: bool,
}

/// The target that stands for each pod's own first container, in the
/// form for several pods: no container can be named so.
pub const EACH_FIRST: &str = "*";

/// What a key in the form asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum FormOutcome {
    Stay,
    Cancel,
    Launch(Box<DebugSpec>),
    Reattach(String),
}

impl Launcher {
    /// A form for `detail`, targeting `selected` when it is a regular container.
    pub fn new(
        detail: &PodDetail,
        selected: Option<&str>,
        images: &[String],
        profile: Profile,
        policy: Option<&Policy>,
        random: u64,
    ) -> Launcher {
        // Regular containers first; the API allows init containers too.
        let of_kind = |kind| {
            detail
                .containers
                .iter()
                .filter(move |c| c.kind == kind)
                .map(|c| c.name.clone())
        };
        let targets: Vec<String> = of_kind(ContainerKind::Regular)
            .chain(of_kind(ContainerKind::Init))
            .collect();
        let windows = detail.os.as_deref() == Some("windows");
        let target = if windows {
            None
        } else {
            // The container the user chose; else the first the debugger
            // can join now (a crash-looping one cannot), else none.
            selected
                .and_then(|s| targets.iter().position(|t| t == s))
                .or_else(|| {
                    targets
                        .iter()
                        .position(|t| detail.why_no_debug_container(Some(t)).is_none())
                })
        };
        let taken: Vec<String> = detail.containers.iter().map(|c| c.name.clone()).collect();
        let mut rng = fastrand::Rng::with_seed(random);
        let name = crate::model::debug::unique_name(&taken, || rng.u64(..));
        let images = if images.is_empty() {
            vec!["busybox:1.36".to_string()]
        } else {
            images.to_vec()
        };
        let mut form = Launcher {
            focus: Field::Image,
            targets,
            target,
            image: images[0].as_str().into(),
            images,
            name: name.into(),
            command: LineEdit::default(),
            profile,
            env: LineEdit::default(),
            mounts: LineEdit::default(),
            volumes: detail.volumes.clone(),
            error: None,
            reusable: None,
            policy: None,
            profile_note: None,
            profile_chosen: false,
            verdict: None,
            customs: Vec::new(),
            custom: None,
            namespace: detail.key.shown().0.to_string(),
            several: false,
        };
        form.apply_policy(policy.cloned(), detail);
        form
    }

    /// Offers the team's profiles after the built-ins.
    pub fn with_customs(mut self, customs: &[CustomProfile], detail: &PodDetail) -> Self {
        self.customs = customs.to_vec();
        self.refresh(detail);
        self
    }

    /// The team's profile chosen, if one is.
    pub fn custom_profile(&self) -> Option<&CustomProfile> {
        self.custom.and_then(|i| self.customs.get(i))
    }

    /// The profile as the form shows it.
    pub fn profile_label(&self) -> String {
        match self.custom_profile() {
            Some(custom) => custom.to_string(),
            None => self.profile.to_string(),
        }
    }

    /// Adopts the namespace's Pod Security labels: a profile its enforced
    /// level would refuse gives way to the strongest one it admits, unless
    /// the user chose it.
    pub fn apply_policy(&mut self, policy: Option<Policy>, detail: &PodDetail) {
        self.policy = policy;
        self.refresh(detail);
        let Some(admission) = self.verdict.clone() else {
            return;
        };
        let custom = self.custom_profile().is_some();
        let Verdict::GiveWay(passing) = admission.verdict(self.profile_chosen, custom) else {
            return;
        };
        let Admission::Refused { violations, .. } = admission else {
            return;
        };
        let level = self.policy.as_ref().map_or("", |p| p.enforce.level.name());
        self.profile_note = Some(format!(
            "{} enforces Pod Security \"{level}\", which refuses {} ({}): using {passing}.",
            detail.key.shown().0,
            self.profile_label(),
            pod_security::short(&violations)
        ));
        self.profile = passing;
        self.custom = None;
        self.refresh(detail);
    }

    /// What the namespace's enforced level says of `profile`; `None` when
    /// nothing is known or nothing is enforced.
    fn admission(&self, detail: &PodDetail) -> Option<Admission> {
        let policy = self.policy.as_ref()?;
        if policy.enforce.level == Level::Privileged {
            return None;
        }
        let mut probe = DebugSpec {
            name: self.name.trim().to_string(),
            image: self.image.trim().to_string(),
            target: self.target_name().map(str::to_string),
            profile: self.profile,
            custom: self.custom_profile().cloned(),
            stdin: true,
            tty: true,
            ..Default::default()
        };
        probe.match_target_user(&detail.manifest, AsTargetUser::Auto);
        Some(probe.admission(policy, &detail.manifest))
    }

    /// A few words on how the chosen profile fares: `(admitted, words)`.
    pub fn profile_verdict(&self) -> Option<(bool, String)> {
        let level = self.policy.as_ref()?.enforce.level.name();
        Some(match self.verdict.as_ref()? {
            Admission::Admitted => (true, format!("{} enforces {level}", self.namespace)),
            Admission::Refused { violations, .. } => (
                false,
                format!("{level} forbids {}", pod_security::short(violations)),
            ),
            Admission::PodViolates(_) => (false, format!("the pod itself breaks {level}")),
        })
    }

    pub fn target_name(&self) -> Option<&str> {
        self.target
            .and_then(|i| self.targets.get(i))
            .map(String::as_str)
    }

    /// Brings what the form derives from its values and the pod up to
    /// date: a running debug container with this image and target, and the
    /// enforced level's verdict.
    pub fn refresh(&mut self, detail: &PodDetail) {
        self.verdict = self.admission(detail);
        let target = self.target_name().map(str::to_string);
        // Mounts not yet well formed ask for none: the hint is a hint.
        let mounts: Vec<(String, String)> = self
            .mounts
            .split(',')
            .filter_map(|m| debug::volume_mount(m.trim()))
            .collect();
        self.reusable = detail
            .reusable_debugger(&self.image, target.as_deref(), &mounts)
            .map(str::to_string);
    }

    /// The spec the form describes, or one sentence on what is wrong.
    pub fn spec(&self, detail: &PodDetail) -> Result<DebugSpec, String> {
        if self.image.trim().is_empty() {
            return Err("Choose an image (←/→ cycles the presets from your config).".into());
        }
        crate::model::image::validate_reference(self.image.trim())?;
        let env = self
            .env
            .split(',')
            .map(str::trim)
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                debug::env_var(kv).ok_or_else(|| {
                    format!("Env entries are K=V separated by commas; {kv:?} is not.")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mounts = self
            .mounts
            .split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(|m| {
                debug::volume_mount(m).ok_or_else(|| format!(
                    "Mounts are VOLUME:/path separated by commas (←/→ offers the pod's volumes); {m:?} is not."
                ))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut spec = DebugSpec {
            name: self.name.trim().to_string(),
            image: self.image.trim().to_string(),
            target: self.target_name().map(str::to_string),
            command: split_command(&self.command),
            profile: self.profile,
            custom: self.custom_profile().cloned(),
            env,
            stdin: true,
            tty: true,
            mounts,
            ..Default::default()
        };
        // Shown in the preview: the target's user, where the profile
        // could not read its files as root.
        spec.match_target_user(&detail.manifest, AsTargetUser::Auto);
        // What is sent is decided as for `podbay debug` and the many-pods
        // form (a running debugger is the user's to reattach: ctrl-a).
        let request = LaunchRequest {
            spec,
            profile_chosen: self.profile_chosen,
            reuse: false,
        };
        match launch::plan(detail, &request, self.policy.as_ref()) {
            LaunchPlan::Launch { spec, .. } => Ok(*spec),
            LaunchPlan::Refused(refusal) => Err(refusal.sentence("The pod")),
            // Never asked for: reuse is off.
            LaunchPlan::Reattach(_) => Ok(request.spec),
        }
    }

    pub fn on_key(&mut self, key: KeyEvent, detail: &PodDetail) -> FormOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.code == KeyCode::Char('a')
            && ctrl
            && let Some(name) = &self.reusable
        {
            return FormOutcome::Reattach(name.clone());
        }
        match form::on_key(self, &key, detail) {
            Answer::Cancel => return FormOutcome::Cancel,
            Answer::Send(spec) => return FormOutcome::Launch(Box::new(spec)),
            Answer::Refused(why) => {
                self.error = Some(why);
                return FormOutcome::Stay;
            }
            // An edit answers the last refusal: its sentence goes.
            Answer::Edited => self.error = None,
            Answer::Stay => {}
        }
        self.refresh(detail);
        FormOutcome::Stay
    }

    /// The target in words.
    fn target_words(&self) -> String {
        match self.target_name() {
            Some(EACH_FIRST) => "each pod's first container".to_string(),
            Some(name) => name.to_string(),
            None if self.several => "(none: each pod's shared namespaces)".to_string(),
            None => "(none: the pod's shared namespaces)".to_string(),
        }
    }

    /// What ←/→ offers in the mounts field, when nothing is typed.
    fn mounts_words(&self) -> String {
        if self.several {
            "(not with several pods)".to_string()
        } else if self.volumes.is_empty() {
            "(the pod has no volumes)".to_string()
        } else {
            format!("(none; {})", self.volumes.join(", "))
        }
    }
}

impl Form for Launcher {
    type Field = Field;
    type Sent = DebugSpec;
    type Context = PodDetail;

    fn fields(&self) -> &[Field] {
        &Field::ALL
    }

    fn focus(&self) -> Field {
        self.focus
    }

    fn set_focus(&mut self, field: Field) {
        self.focus = field;
    }

    /// The targets and the profiles are choices; the configured images
    /// and the pod's volumes are offered by ←/→ as well as typed.
    fn input(&self, field: Field) -> Input {
        match field {
            Field::Target | Field::Profile => Input::Choice,
            Field::Image if !self.images.is_empty() => Input::TextOrChoice,
            Field::Mounts if !self.volumes.is_empty() => Input::TextOrChoice,
            Field::Image | Field::Mounts | Field::Name | Field::Command | Field::Env => Input::Text,
        }
    }

    fn text_mut(&mut self, field: Field) -> Option<&mut LineEdit> {
        match field {
            Field::Image => Some(&mut self.image),
            Field::Name => Some(&mut self.name),
            Field::Command => Some(&mut self.command),
            Field::Env => Some(&mut self.env),
            Field::Mounts => Some(&mut self.mounts),
            Field::Target | Field::Profile => None,
        }
    }

    fn choose(&mut self, field: Field, delta: isize) {
        self.cycle(field, delta);
    }

    fn submit(&self, detail: &PodDetail) -> Result<DebugSpec, String> {
        self.spec(detail)
    }

    fn shown(&self, field: Field) -> Shown<'_> {
        let label = field.label();
        match field {
            Field::Target => Shown::choice(label, self.target_words()),
            Field::Image => Shown::text(label, &self.image, ""),
            Field::Name => Shown::text(label, &self.name, ""),
            Field::Command => Shown::text(label, &self.command, "(the image's entrypoint)"),
            Field::Profile => {
                Shown::choice(label, self.profile_label()).with_note(self.profile_verdict())
            }
            Field::Env => Shown::text(label, &self.env, "(none; K=V, K=V)"),
            Field::Mounts => Shown::text(label, &self.mounts, &self.mounts_words()),
        }
    }
}

impl Launcher {
    fn cycle(&mut self, field: Field, delta: isize) {
        match field {
            Field::Target => {
                // Choices: each regular container, then "(none)".
                let n = self.targets.len() as isize + 1;
                let current = self.target.map_or(n - 1, |i| i as isize);
                let next = (current + delta).rem_euclid(n);
                self.target = (next < n - 1).then_some(next as usize);
            }
            Field::Profile => {
                self.profile_chosen = true;
                self.profile_note = None;
                // The built-ins, then the team's.
                let builtins = Profile::ALL.len();
                let n = (builtins + self.customs.len()) as isize;
                let i = match self.custom {
                    Some(c) => builtins + c,
                    None => Profile::ALL
                        .iter()
                        .position(|p| *p == self.profile)
                        .unwrap_or(0),
                } as isize;
                let next = (i + delta).rem_euclid(n) as usize;
                match next.checked_sub(builtins) {
                    Some(c) => {
                        self.custom = Some(c);
                        self.profile = self.customs[c].base;
                    }
                    None => {
                        self.custom = None;
                        self.profile = Profile::ALL[next];
                    }
                }
            }
            Field::Image => {
                let i = self
                    .images
                    .iter()
                    .position(|x| self.image == x.as_str())
                    .map_or(-1, |i| i as isize);
                let n = self.images.len() as isize;
                self.image = self.images[(i + delta).rem_euclid(n) as usize]
                    .as_str()
                    .into();
            }
            Field::Mounts if !self.volumes.is_empty() => {
                // Choices: none, then each of the pod's volumes.
                let n = self.volumes.len() as isize + 1;
                let i = self
                    .volumes
                    .iter()
                    .position(|v| self.mounts == v.as_str())
                    .map_or(0, |i| i as isize + 1);
                let next = (i + delta).rem_euclid(n) as usize;
                self.mounts = next
                    .checked_sub(1)
                    .map_or_else(LineEdit::default, |v| self.volumes[v].as_str().into());
            }
            _ => {}
        }
    }
}

/// Splits a command line on whitespace, keeping "quoted words" together.
pub fn split_command(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            (None, c) => current.push(c),
        }
    }
    if started || !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerInfo, ContainerState, PodKey};

    fn detail() -> PodDetail {
        let c =
            |kind, name: &str, image: &str, target: Option<&str>, running: bool| ContainerInfo {
                kind,
                name: name.into(),
                image: image.into(),
                state: if running {
                    ContainerState::Running { since: None }
                } else {
                    ContainerState::Unknown
                },
                ready: true,
                restarts: 0,
                target: target.map(String::from),
                command: vec![],
                args: vec![],
                previous: None,
                stdio: crate::model::Stdio::TERMINAL,
                mounts: vec![],
            };
        PodDetail {
            key: PodKey::new("shop", "web"),
            status: "Running".into(),
            phase: "Running".into(),
            node: "n".into(),
            containers: vec![
                c(ContainerKind::Init, "init", "busybox", None, false),
                c(ContainerKind::Regular, "app", "app:1", None, true),
                c(ContainerKind::Regular, "envoy", "envoy", None, true),
                c(
                    ContainerKind::Ephemeral,
                    "debugger-old",
                    "busybox:1.36",
                    Some("envoy"),
                    true,
                ),
            ],
            ..Default::default()
        }
    }

    fn press(form: &mut Launcher, d: &PodDetail, code: KeyCode) -> FormOutcome {
        form.on_key(KeyEvent::new(code, KeyModifiers::NONE), d)
    }

    #[test]
    fn defaults_come_from_the_selection_and_config() {
        let d = detail();
        let form = Launcher::new(
            &d,
            Some("app"),
            &["busybox:1.36".into(), "alpine".into()],
            Profile::General,
            None,
            42,
        );
        assert_eq!(form.target_name(), Some("app"));
        assert_eq!(form.image, "busybox:1.36");
        assert!(form.name.starts_with("debugger-") && form.name != "debugger-old");
        let spec = form.spec(&d).unwrap();
        assert_eq!(spec.target.as_deref(), Some("app"));
        assert!(spec.command.is_empty());
    }

    /// Without a chosen container, the target is the first the debugger
    /// can join now: a crash-looping container is passed over, and with
    /// none to join there is no target.
    #[test]
    fn the_default_target_is_one_that_runs() {
        let crashing = |mut d: PodDetail, name: &str| {
            for c in d.containers.iter_mut().filter(|c| c.name == name) {
                c.state = ContainerState::Waiting {
                    reason: "CrashLoopBackOff".into(),
                    message: String::new(),
                };
                c.previous = Some(ContainerState::Terminated {
                    exit_code: 1,
                    reason: "Error".into(),
                    message: String::new(),
                    finished: None,
                });
            }
            d
        };
        let form = |d: &PodDetail| Launcher::new(d, None, &[], Profile::General, None, 1);
        assert_eq!(form(&detail()).target_name(), Some("app"));
        let app_crashing = crashing(detail(), "app");
        assert_eq!(form(&app_crashing).target_name(), Some("envoy"));
        let both = crashing(crashing(detail(), "app"), "envoy");
        // The init container never ran (no status): it may still come.
        assert_eq!(form(&both).target_name(), Some("init"));
        let all = crashing(both, "init");
        assert_eq!(form(&all).target_name(), None);
        // A container the user chose stays chosen, and the form says why
        // it cannot be joined.
        assert_eq!(
            Launcher::new(&all, Some("app"), &[], Profile::General, None, 1).target_name(),
            Some("app")
        );
    }

    #[test]
    fn editing_cycling_and_launching() {
        let d = detail();
        let mut form = Launcher::new(
            &d,
            None,
            &["busybox:1.36".into(), "nicolaka/netshoot".into()],
            Profile::General,
            None,
            7,
        );
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(form.image, "nicolaka/netshoot");
        press(&mut form, &d, KeyCode::Tab);
        press(&mut form, &d, KeyCode::Tab);
        assert_eq!(form.focus, Field::Command);
        for c in "sh -c 'echo hi; sleep 1'".chars() {
            press(&mut form, &d, KeyCode::Char(c));
        }
        press(&mut form, &d, KeyCode::Tab);
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(form.profile, Profile::Baseline);
        press(&mut form, &d, KeyCode::Tab);
        for c in "A=1, B=two".chars() {
            press(&mut form, &d, KeyCode::Char(c));
        }
        match press(&mut form, &d, KeyCode::Enter) {
            FormOutcome::Launch(spec) => {
                assert_eq!(spec.command, ["sh", "-c", "echo hi; sleep 1"]);
                assert_eq!(
                    spec.env,
                    [("A".into(), "1".into()), ("B".into(), "two".into())]
                );
                assert_eq!(spec.profile, Profile::Baseline);
                assert_eq!(spec.image, "nicolaka/netshoot");
            }
            other => panic!("expected a launch, got {other:?}"),
        }
    }

    #[test]
    fn mounts_offer_the_pods_volumes_and_are_checked() {
        let mut d = detail();
        d.volumes = vec!["data:/data".into(), "config:/mnt/config".into()];
        let mut form = Launcher::new(&d, Some("app"), &[], Profile::General, None, 1);
        form.focus = Field::Mounts;
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(form.mounts, "data:/data");
        press(&mut form, &d, KeyCode::Right);
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(form.mounts, "", "then none again");
        press(&mut form, &d, KeyCode::Left);
        assert_eq!(form.mounts, "config:/mnt/config");
        for c in ", data:/srv".chars() {
            press(&mut form, &d, KeyCode::Char(c));
        }
        let spec = form.spec(&d).unwrap();
        assert_eq!(
            spec.mounts,
            [
                ("config".into(), "/mnt/config".into()),
                ("data".into(), "/srv".into())
            ]
        );
        form.mounts = "data".into();
        assert!(form.spec(&d).unwrap_err().contains("VOLUME:/path"));
    }

    #[test]
    fn target_cycles_through_none() {
        let d = detail();
        let mut form = Launcher::new(&d, Some("envoy"), &[], Profile::General, None, 1);
        form.focus = Field::Target;
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(
            form.target_name(),
            Some("init"),
            "init containers come after"
        );
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(form.target_name(), None);
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(form.target_name(), Some("app"));
    }

    #[test]
    fn offers_to_reattach_instead_of_piling_up() {
        let d = detail();
        let mut form = Launcher::new(
            &d,
            Some("envoy"),
            &["busybox:1.36".into()],
            Profile::General,
            None,
            3,
        );
        assert_eq!(form.reusable.as_deref(), Some("debugger-old"));
        let outcome = form.on_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::CONTROL), &d);
        assert_eq!(outcome, FormOutcome::Reattach("debugger-old".into()));

        // One that lacks a volume the form asks for is no substitute.
        form.mounts = "data:/data".into();
        form.refresh(&d);
        assert_eq!(form.reusable, None);
        let mut mounted = d.clone();
        let old = mounted
            .containers
            .iter_mut()
            .find(|c| c.name == "debugger-old")
            .unwrap();
        old.mounts = vec![("data".into(), "/data".into())];
        form.refresh(&mounted);
        assert_eq!(form.reusable.as_deref(), Some("debugger-old"));
    }

    #[test]
    fn problems_are_one_sentence_and_keep_the_form() {
        let mut d = detail();
        let mut form = Launcher::new(&d, Some("app"), &[], Profile::General, None, 5);
        form.name = "app".into();
        assert_eq!(press(&mut form, &d, KeyCode::Enter), FormOutcome::Stay);
        assert!(
            form.error
                .as_ref()
                .unwrap()
                .contains("already has a container named \"app\"")
        );
        form.name = "fresh".into();
        form.env = "oops".into();
        assert!(form.spec(&d).unwrap_err().contains("K=V"));
        form.env = LineEdit::default();
        d.phase = "Succeeded".into();
        assert!(
            form.spec(&d)
                .unwrap_err()
                .contains("has finished (Succeeded)")
        );
        d.phase = "Pending".into();
        assert!(form.spec(&d).is_ok(), "init containers may still run");
        d.node.clear();
        assert!(form.spec(&d).unwrap_err().contains("not on a node yet"));
        d.node = "n".into();
        d.phase = "Running".into();
        form.image = "Bad Image:1".into();
        assert!(
            form.spec(&d)
                .unwrap_err()
                .contains("is not a valid image reference")
        );
        form.image = "busybox:1.36".into();
        d.os = Some("windows".into());
        assert!(form.spec(&d).unwrap_err().contains("Windows"));
        d.os = None;
        d.is_static = true;
        assert!(
            form.spec(&d)
                .unwrap_err()
                .contains("is a static (mirror) pod")
        );
    }

    #[test]
    fn commands_split_like_a_shell() {
        assert_eq!(split_command("sh -c 'echo a b'"), ["sh", "-c", "echo a b"]);
        assert_eq!(split_command("  "), Vec::<String>::new());
        assert_eq!(split_command("say \"\""), ["say", ""]);
    }

    fn policy(level: &str) -> Policy {
        let labels = [(
            "pod-security.kubernetes.io/enforce".to_string(),
            level.to_string(),
        )];
        Policy::from_labels(&labels.into_iter().collect())
    }

    #[test]
    fn a_team_profile_follows_the_built_ins_and_meets_the_namespaces_level() {
        let d = detail();
        let team = CustomProfile::new(
            "team",
            Profile::Baseline,
            serde_json::json!({"env": [{"name": "TEAM", "value": "sre"}],
                               "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}),
        )
        .unwrap();
        let mut form = Launcher::new(&d, Some("app"), &[], Profile::Sysadmin, None, 1)
            .with_customs(std::slice::from_ref(&team), &d);
        form.focus = Field::Profile;
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(
            form.profile_label(),
            "team (on baseline)",
            "after sysadmin, the last built-in"
        );
        let spec = form.spec(&d).unwrap();
        assert_eq!(spec.custom.as_ref(), Some(&team));
        let env = spec.container().env.unwrap();
        assert!(env.iter().any(|e| e.name == "TEAM"), "sent merged");
        // A baseline namespace refuses NET_ADMIN: the form says so with
        // the same sentence as the CLI's preflight.
        form.apply_policy(Some(policy("baseline")), &d);
        let why = form.spec(&d).unwrap_err();
        assert!(
            why.contains("refuses the team (on baseline) profile"),
            "{why}"
        );
        assert!(why.contains("NET_ADMIN"), "{why}");
        press(&mut form, &d, KeyCode::Right);
        assert_eq!(form.profile_label(), "general", "then round to the first");
    }

    #[test]
    fn a_profile_the_namespace_refuses_gives_way_unless_the_user_chose_it() {
        let d = detail();
        let form = Launcher::new(
            &d,
            Some("app"),
            &[],
            Profile::General,
            Some(&policy("baseline")),
            1,
        );
        assert_eq!(form.profile, Profile::Baseline);
        assert!(
            form.profile_note
                .as_deref()
                .is_some_and(|n| n.contains("refuses general (SYS_PTRACE)")),
            "{:?}",
            form.profile_note
        );
        assert_eq!(
            form.profile_verdict(),
            Some((true, "shop enforces baseline".to_string()))
        );

        let mut chosen = Launcher::new(&d, Some("app"), &[], Profile::General, None, 1);
        chosen.focus = Field::Profile;
        press(&mut chosen, &d, KeyCode::Right);
        press(&mut chosen, &d, KeyCode::Left);
        chosen.apply_policy(Some(policy("restricted")), &d);
        assert_eq!(chosen.profile, Profile::General, "the user's choice stays");
        assert_eq!(
            chosen.profile_verdict().map(|v| v.0),
            Some(false),
            "and is marked as refused"
        );
        let refused = chosen.spec(&d).unwrap_err();
        assert!(
            refused.contains("The restricted profile passes."),
            "{refused}"
        );
    }

    #[test]
    fn without_a_policy_nothing_is_judged() {
        let d = detail();
        let form = Launcher::new(&d, Some("app"), &[], Profile::Sysadmin, None, 1);
        assert_eq!(form.profile_verdict(), None);
        assert!(form.spec(&d).is_ok());
    }
}

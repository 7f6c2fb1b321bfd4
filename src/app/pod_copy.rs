//! `C` on a pod: a copy of it whose chosen container runs a shell instead
//! of its program (hold a crash-looping container up to look inside), in a
//! pane that shows it come up and attaches; the copy is deleted when its
//! last pane closes, as a node debug pod is.

use crossterm::event::KeyEvent;

use super::form::{self, Answer, Form, Input, LineEdit, Shown};
use super::message::{error, info};
use super::{App, Effect, Mode, View};
use crate::model::debug_pod::{self, PodCopy};
use crate::model::{ContainerKind, PodKey, TerminalKey};

/// The copy form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyForm {
    /// The pod's cluster, where the copy is made.
    pub cluster: crate::model::ClusterId,
    pub pod: PodKey,
    /// The pod's regular containers and their images.
    pub containers: Vec<(String, String)>,
    pub chosen: usize,
    /// The image the held container runs (its own, or a debug variant
    /// with a shell: a distroless image has none).
    pub image: LineEdit,
    /// What it runs instead of its program.
    pub command: LineEdit,
    /// Image pull secrets the copy pulls with beside the pod's (an image
    /// from a private registry), comma-separated; empty for none.
    pub pull_secrets: LineEdit,
    pub field: CopyField,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyField {
    Container,
    Image,
    Command,
    PullSecrets,
}

/// What a valid copy form asks for.
pub struct Held {
    pub image: String,
    pub command: Vec<String>,
}

impl CopyForm {
    fn choose_container(&mut self, index: usize) {
        self.chosen = index;
        self.image = self.containers[index].1.as_str().into();
    }
}

impl Form for CopyForm {
    type Field = CopyField;
    type Sent = Held;
    type Context = ();

    fn fields(&self) -> &[CopyField] {
        &[
            CopyField::Container,
            CopyField::Image,
            CopyField::Command,
            CopyField::PullSecrets,
        ]
    }

    fn focus(&self) -> CopyField {
        self.field
    }

    fn set_focus(&mut self, field: CopyField) {
        self.field = field;
    }

    fn input(&self, field: CopyField) -> Input {
        match field {
            CopyField::Container => Input::Choice,
            CopyField::Image | CopyField::Command | CopyField::PullSecrets => Input::Text,
        }
    }

    fn text_mut(&mut self, field: CopyField) -> Option<&mut LineEdit> {
        match field {
            CopyField::Container => None,
            CopyField::Image => Some(&mut self.image),
            CopyField::Command => Some(&mut self.command),
            CopyField::PullSecrets => Some(&mut self.pull_secrets),
        }
    }

    fn choose(&mut self, field: CopyField, delta: isize) {
        if field == CopyField::Container {
            self.choose_container(form::cycle(self.chosen, self.containers.len(), delta));
        }
    }

    fn submit(&self, _: &()) -> Result<Held, String> {
        let image = self.image.trim().to_string();
        crate::model::image::validate_reference(&image)?;
        let command = super::launcher::split_command(&self.command);
        if command.is_empty() {
            return Err("Give the command the container runs instead (sh).".to_string());
        }
        Ok(Held { image, command })
    }

    fn shown(&self, field: CopyField) -> Shown<'_> {
        match field {
            CopyField::Container => Shown::choice("container", &self.containers[self.chosen].0),
            CopyField::Image => Shown::text("its image", &self.image, ""),
            CopyField::Command => Shown::text("runs instead", &self.command, ""),
            CopyField::PullSecrets => {
                Shown::text("pull secrets", &self.pull_secrets, "(none; NAME, NAME)")
            }
        }
    }
}

impl App {
    /// `C`: the copy form for the pod the browser points at, once its
    /// detail is known (the pod view's).
    pub(super) fn open_copy_form(&mut self) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            let Some(row) = self.selected_row() else {
                return vec![];
            };
            self.form_after_detail = Some((row, form::AfterDetail::Copy));
            return self.open_pod(false);
        };
        let Some(detail) = &view.pod.detail else {
            let row = (view.cluster.clone(), view.key.clone());
            self.form_after_detail = Some((row, form::AfterDetail::Copy));
            return vec![];
        };
        let containers: Vec<(String, String)> = detail
            .containers
            .iter()
            .filter(|c| c.kind == ContainerKind::Regular)
            .map(|c| (c.name.clone(), c.image.clone()))
            .collect();
        if containers.is_empty() {
            return vec![];
        }
        // The one in trouble first: a crash loop is what a copy holds.
        let chosen = detail
            .containers
            .iter()
            .filter(|c| c.kind == ContainerKind::Regular)
            .position(|c| c.restarts > 0 || !c.ready)
            .or_else(|| {
                let selected = view.selected().map(|c| c.name.clone());
                containers
                    .iter()
                    .position(|(name, _)| Some(name) == selected.as_ref())
            })
            .unwrap_or(0);
        let mut form = CopyForm {
            cluster: view.cluster.clone(),
            pod: view.key.clone(),
            image: LineEdit::default(),
            containers,
            chosen: 0,
            command: "sh".into(),
            pull_secrets: LineEdit::default(),
            field: CopyField::Image,
        };
        form.choose_container(chosen);
        self.mode = Mode::CopyPod(Box::new(form));
        vec![]
    }

    pub(super) fn on_copy_form_key(&mut self, mut form: CopyForm, key: KeyEvent) -> Vec<Effect> {
        match form::on_key(&mut form, &key, &()) {
            Answer::Cancel => return vec![],
            Answer::Send(held) => return self.launch_copy(form, held),
            Answer::Refused(why) => self.message = Some(error(why)),
            Answer::Stay | Answer::Edited => {}
        }
        self.mode = Mode::CopyPod(Box::new(form));
        vec![]
    }

    fn launch_copy(&mut self, form: CopyForm, Held { image, command }: Held) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            return vec![];
        };
        let Some(detail) = &view.pod.detail else {
            return vec![];
        };
        let (container, original_image) = form.containers[form.chosen].clone();
        let base: String = form.pod.name.chars().take(40).collect();
        let mut names = fastrand::Rng::with_seed(self.random_seed());
        let name = format!(
            "{}-copy-{}",
            base.trim_end_matches('-'),
            crate::model::debug::name_suffix(names.u64(..))
        );
        let copy = |profile| PodCopy {
            name: name.clone(),
            container: Some(container.clone()),
            set_images: if image != original_image {
                vec![(container.clone(), image.clone())]
            } else {
                Vec::new()
            },
            command: command.clone(),
            stdin: true,
            tty: true,
            profile,
            pull_secrets: form
                .pull_secrets
                .split([',', ' '])
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            ..Default::default()
        };
        let made = |profile| debug_pod::pod_copy(&detail.manifest, &copy(profile), || 0);
        // As `podbay debug --copy-to`: the configured profile, or the one
        // the namespace's Pod Security admits, said.
        let chosen = self.debug_profile;
        let profile = view.policy.as_ref().and_then(|policy| {
                let admitted = debug_pod::admitted_copy_profile(policy, chosen, false, |p| {
                    made(p).ok().map(|(pod, _)| pod)
                })?;
                (admitted != chosen).then(|| {
                    let note = format!(
                        "{} enforces Pod Security \"{}\": the copy runs with profile {admitted} instead of {chosen}.",
                        form.pod.namespace,
                        policy.enforce.level.name()
                    );
                    (admitted, note)
                })
            });
        let note = profile.as_ref().map(|(_, note)| note.clone());
        let profile = profile.map_or(chosen, |(p, _)| p);
        let (pod, _) = match made(profile) {
            Ok(made) => made,
            Err(why) => {
                self.message = Some(error(why));
                return vec![];
            }
        };
        let key = TerminalKey {
            cluster: form.cluster.clone(),
            pod: PodKey::new(&form.pod.namespace, &name),
            container,
        };
        self.mode = Mode::Normal;
        let effects = self.open_owned_pod_pane(
            key,
            pod,
            "Copy it with podbay debug --copy-to into a namespace that admits it, or ask an admin.",
        );
        if let Some(note) = note {
            self.message = Some(info(note));
        }
        effects
    }
}

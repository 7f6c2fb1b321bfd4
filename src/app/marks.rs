//! Marking pods in the list and debugging them all at once: `space` and
//! `*` mark, `d` reads the marked pods and opens one form for all, and
//! `enter` opens a pane per pod, tiled, with typing broadcast to them all.

use super::fleet::{FleetForm, FleetOutcome, FleetPod, Plan};
use super::terminal::{LaunchedBy, TerminalState};
use super::*;
use crossterm::event::KeyEvent;

/// Panes opened at once for marked pods: more would not be readable on
/// any screen (`podbay debug -l` has no such limit: its output is lines).
pub const MOST_PANES: usize = 32;

impl App {
    /// `space`: marks the selected pod (or unmarks it) and moves on, so
    /// that a few presses mark a few pods.
    pub(super) fn toggle_mark(&mut self) {
        let Some(marked) = self.pods.toggle_mark() else {
            return;
        };
        if marked {
            self.pods.move_by(1);
        }
        self.say_marks();
    }

    /// `*`: marks every pod the filter shows (again: unmarks them).
    pub(super) fn mark_shown(&mut self) {
        self.pods.mark_shown();
        self.say_marks();
    }

    fn say_marks(&mut self) {
        let count = self.pods.marks().len();
        let debug = self.keymap.keys_for(Action::Debug);
        self.message = Some(info(match count {
            0 => "No pod is marked.".to_string(),
            1 => format!("1 pod marked: {debug} debugs it (space marks more)."),
            n => format!("{n} pods marked: {debug} debugs them all at once."),
        }));
    }

    /// `d` with pods marked: reads them (and their namespaces' Pod
    /// Security) for the form.
    pub(super) fn read_marked(&mut self) -> Vec<Effect> {
        let count = self.pods.marks().len();
        if count > MOST_PANES {
            self.message = Some(warning(format!(
                "{count} pods are marked, and podbay opens at most {MOST_PANES} panes at once: mark fewer (space unmarks), or run `podbay debug -l SELECTOR` for every pod, line by line."
            )));
            return vec![];
        }
        let by_cluster = self.marks_by_cluster();
        self.message = Some(info(format!("Reading the {count} marked pods…")));
        self.marks_read = Some(MarksRead {
            waiting: by_cluster.keys().cloned().collect(),
            pods: Vec::new(),
        });
        by_cluster
            .into_iter()
            .map(|(cluster, pods)| Effect::ReadPods { cluster, pods })
            .collect()
    }

    /// The marked pods, by cluster (those of a cluster the list no longer
    /// shows left out).
    pub(super) fn marks_by_cluster(&self) -> std::collections::BTreeMap<ClusterId, Vec<PodKey>> {
        let mut by_cluster: std::collections::BTreeMap<ClusterId, Vec<PodKey>> = Default::default();
        for key in self.pods.marks() {
            if let Some(cluster) = self.cluster_of(key) {
                by_cluster.entry(cluster).or_default().push(key.pod.clone());
            }
        }
        by_cluster
    }

    /// The marked pods are read: the form opens, unless the user has
    /// moved on (another context, or another form or view in the way).
    pub(super) fn on_pods_read(&mut self, cluster: ClusterId, pods: Vec<FleetPod>) {
        // Each cluster's pods come on their own: the form waits for all.
        let Some(read) = self
            .marks_read
            .as_mut()
            .filter(|r| r.waiting.contains(&cluster))
        else {
            return;
        };
        read.waiting.remove(&cluster);
        read.pods.extend(pods);
        if !read.waiting.is_empty() {
            return;
        }
        let pods = self.marks_read.take().map(|r| r.pods).unwrap_or_default();
        if self.mode != Mode::Normal || !matches!(self.view, View::Pods) {
            if self
                .message
                .as_ref()
                .is_some_and(|m| m.text.starts_with("Reading the "))
            {
                self.message = None;
            }
            return;
        }
        let random = self.now.as_nanosecond() as u64;
        let form = FleetForm::new(pods, &self.debug_images, self.debug_profile, random);
        self.message = None;
        self.mode = Mode::Fleet(Box::new(form));
    }

    pub(super) fn on_fleet_key(&mut self, mut form: FleetForm, key: KeyEvent) -> Vec<Effect> {
        match form.on_key(key) {
            FleetOutcome::Stay => {
                self.mode = Mode::Fleet(Box::new(form));
                vec![]
            }
            FleetOutcome::Cancel => vec![],
            FleetOutcome::Go(plans) => {
                let clusters = form.pods.iter().map(|p| p.cluster.clone());
                let plans = clusters.zip(plans).map(|(c, (pod, plan))| (c, pod, plan));
                self.launch_fleet(&form.launcher.name, plans.collect())
            }
        }
    }

    /// A pane per pod — launching, attaching, or saying why not — tiled,
    /// and marked, so that what is typed goes to every one of them.
    fn launch_fleet(&mut self, name: &str, plans: Vec<(ClusterId, PodKey, Plan)>) -> Vec<Effect> {
        // The new panes are the broadcast group.
        for pane in self.workspace.panes.values_mut() {
            pane.marked = false;
        }
        let mut effects = Vec::new();
        let mut refused = Vec::new();
        let mut reused = 0;
        let count = plans.len();
        for (cluster, pod, plan) in plans {
            match plan {
                Plan::Launch(spec) => {
                    let key = TerminalKey::new(cluster, pod, spec.name.clone());
                    let (id, opened) =
                        self.open_terminal_pane(TerminalKind::Debug, key.clone(), None);
                    if let Some(t) = self.workspace.terminals.get_mut(&id) {
                        t.launched_by = Some(LaunchedBy::Fleet);
                    }
                    effects.push(Effect::Launch {
                        id,
                        key,
                        spec: *spec,
                    });
                    effects.extend(opened);
                }
                Plan::Reattach(running) => {
                    reused += 1;
                    let key = TerminalKey::new(cluster, pod, running);
                    effects.extend(self.open_terminal_pane(TerminalKind::Attach, key, None).1);
                }
                Plan::Refused(why) => {
                    let key = TerminalKey::new(cluster, pod, name);
                    // Nothing runs there: no watch, no session, no input;
                    // the pane says why.
                    let (id, opened) = self.open_terminal_pane(TerminalKind::Debug, key, None);
                    effects.extend(
                        opened
                            .into_iter()
                            .filter(|e| !matches!(e, Effect::Follow { .. })),
                    );
                    if let Some(t) = self.workspace.terminals.get_mut(&id) {
                        t.launched_by = Some(LaunchedBy::Fleet);
                        t.state = TerminalState::Ended("not launched".into());
                    }
                    refused.push((id, format!("This pod {}.", why.trim_end_matches('.'))));
                    continue;
                }
            }
            if let Some(pane) = self.workspace.focused_pane_mut() {
                pane.marked = true;
            }
        }
        self.workspace.layout.tiled();
        self.workspace.focused = self
            .workspace
            .panes
            .iter()
            .find(|(_, p)| p.marked)
            .map(|(id, _)| *id);
        effects.extend(self.fit_terminals());
        // Written once the pane has its size, so that the sentence wraps.
        for (id, sentence) in &refused {
            if let Some(t) = self.workspace.terminals.get_mut(id) {
                t.say_in_pane("not launched", sentence);
            }
        }
        self.pods.clear_marks();
        let running = count - refused.len();
        let mut notes = Vec::new();
        if reused > 0 {
            notes.push(format!("{reused} reattached"));
        }
        if !refused.is_empty() {
            notes.push(format!("{} panes say why not", refused.len()));
        }
        let words = if notes.is_empty() {
            format!("Debugging {count} pods; what you type goes to all {count}.")
        } else {
            format!(
                "Debugging {running} of {count} pods ({}); typing goes to all.",
                notes.join("; ")
            )
        };
        self.message = Some(info(words));
        effects
    }
}

/// The marked pods being read for the form, a read per cluster.
pub(super) struct MarksRead {
    waiting: std::collections::BTreeSet<ClusterId>,
    pods: Vec<FleetPod>,
}

#[cfg(test)]
#[path = "marks_tests.rs"]
mod tests;

//! The workload views (`:deploy`, `:sts`, `:ds`, `:rs`, `:job`, `:cj`):
//! one kind's objects in the namespaces shown, by watch, in kubectl's
//! columns. `enter` leads to their pods: the pod list narrowed to the
//! workload's selector (a Service's too, from its view), saying so in the
//! header; `esc` comes back. `d` debugs those pods at once.

use super::keymap::Action;
use super::message::{info, warning};
use super::object_page::ObjectReading;
use super::object_rows::ObjectRows;
use super::pods::{Narrow, Pick};
use super::{App, Effect, View};
use crate::model::ClusterId;
use crate::model::feed::Feed;
use crate::model::forward::ForwardTarget;
use crate::model::object_ref::{ObjectKind, ObjectRef};
use crate::model::workload::{WorkloadKind, WorkloadRow};

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadsView {
    pub kind: WorkloadKind,
    pub list: ObjectRows<WorkloadRow>,
    /// `D` or `y`: the selected workload's page.
    pub reading: Option<ObjectReading>,
}

/// The pod list shows only some object's pods.
#[derive(Debug)]
pub struct Narrowed {
    /// `deploy/storefront`, `svc/storefront`.
    pub from: String,
    /// The view `enter` was pressed in, shown again on `esc`.
    back: View,
}

impl App {
    /// `:deploy` and the other kinds' commands.
    pub(super) fn open_workloads(&mut self, kind: WorkloadKind) -> Vec<Effect> {
        self.message = None;
        self.view = View::Workloads(Box::new(WorkloadsView {
            kind,
            list: ObjectRows::default(),
            reading: None,
        }));
        vec![Effect::WatchWorkloads(kind, self.cluster_scopes())]
    }

    /// Keys of a workload view; `None` for those with their usual meaning.
    pub(super) fn on_workloads_key(&mut self, action: Action) -> Option<Vec<Effect>> {
        let View::Workloads(view) = &mut self.view else {
            return None;
        };
        // A page being read takes its own keys first (see `on_reader_key`).
        if view.reading.is_some() {
            return None;
        }
        match action {
            Action::Open | Action::Debug | Action::Logs => {
                let rows = view.list.picked()?;
                if let Some(blind) = rows.iter().find(|r| r.selector.is_empty()) {
                    self.message = Some(warning(format!(
                        "{} has no selector podbay can read: its pods cannot be found by label.",
                        blind.reference()
                    )));
                    return Some(vec![]);
                }
                let picks = rows
                    .iter()
                    .map(|r| Pick {
                        context: r.context.clone(),
                        namespace: r.namespace.clone(),
                        selector: r.selector.clone(),
                    })
                    .collect();
                let from = names_of(&rows, WorkloadRow::reference);
                Some(match action {
                    Action::Logs => self.open_pods_logs(from, Narrow { picks }),
                    _ => self.narrow_to(from, picks, action == Action::Debug),
                })
            }
            Action::Forward => {
                let row = view.list.selected()?;
                let Some(kind) = row.kind.owner() else {
                    self.message = Some(warning(format!(
                        "{} runs no pods of its own; forward to one of its Jobs (:job).",
                        row.reference()
                    )));
                    return Some(vec![]);
                };
                let target = ForwardTarget::Owner {
                    kind,
                    name: row.name.clone(),
                };
                let (namespace, ports) = (row.namespace.clone(), row.ports.clone());
                let context = row.context.clone();
                let cluster = self.cluster_of_tag(&context)?;
                Some(self.open_forward_form_to(cluster, namespace, target, ports))
            }
            Action::Describe | Action::Yaml => {
                let row = view.list.selected()?;
                let object = ObjectRef {
                    kind: ObjectKind::Workload(row.kind),
                    namespace: row.namespace.clone(),
                    name: row.name.clone(),
                };
                let context = row.context.clone();
                let cluster = self.cluster_of_tag(&context)?;
                Some(self.read_object(cluster, object, action))
            }
            Action::Back => {
                self.view = View::Pods;
                Some(vec![Effect::StopWatchingPod])
            }
            _ => None,
        }
    }

    /// A workload view's feed, from the browser's cluster (`None`) or
    /// another the list shows.
    pub(super) fn on_workloads_feed(
        &mut self,
        cluster: Option<ClusterId>,
        feed: Feed<WorkloadRow>,
    ) {
        let Some(tag) = self.tag_of_feed(cluster) else {
            return;
        };
        let View::Workloads(view) = &mut self.view else {
            return;
        };
        let noun = format!("a {}", view.kind.kind());
        if let Some(trouble) = view.list.apply_tagged(&tag, feed, &noun) {
            self.message = Some(warning(self.said_of(&tag, &trouble)));
        }
    }

    /// Shows the pod list narrowed to the pods `picks` pick, the view left
    /// kept for `esc`; with `debug`, marks them all and opens the many-pods
    /// form on them.
    pub(super) fn narrow_to(&mut self, from: String, picks: Vec<Pick>, debug: bool) -> Vec<Effect> {
        let back = std::mem::replace(&mut self.view, View::Pods);
        self.narrowed = Some(Narrowed { from, back });
        self.pods.set_narrow(Some(Narrow { picks }));
        self.message = None;
        let mut effects = vec![Effect::StopWatchingPod];
        if debug {
            if self.pods.visible_len() == 0 {
                self.message = Some(warning(self.nothing_narrowed()));
                return effects;
            }
            self.pods.clear_marks();
            self.pods.mark_shown();
            effects.extend(self.read_marked());
        } else if self.pods.visible_len() == 0 {
            self.message = Some(info(self.nothing_narrowed()));
        }
        effects
    }

    /// Why the narrowed list is empty, in one sentence.
    pub(crate) fn nothing_narrowed(&self) -> String {
        match (&self.narrowed, self.pods.narrow().map(|n| &n.picks[..])) {
            (Some(narrowed), Some([pick])) => format!(
                "No pod of {} matches {} in the pod list (esc goes back).",
                narrowed.from, pick.selector
            ),
            (Some(narrowed), Some(_)) => format!(
                "No pod of {} is in the pod list (esc goes back).",
                narrowed.from
            ),
            _ => String::new(),
        }
    }

    /// `esc` on a narrowed pod list: the whole list, and the view the
    /// narrowing came from, watched again.
    pub(super) fn leave_narrowing(&mut self) -> Vec<Effect> {
        let Some(narrowed) = self.narrowed.take() else {
            return vec![];
        };
        self.pods.set_narrow(None);
        self.pods.clear_marks();
        self.message = None;
        self.view = narrowed.back;
        self.watch_shown_view()
    }

    /// The watch of a view of other objects shown again, its own having
    /// given its slot to the pod list's or the events view's.
    pub(super) fn watch_shown_view(&self) -> Vec<Effect> {
        match &self.view {
            View::Workloads(view) => vec![Effect::WatchWorkloads(view.kind, self.cluster_scopes())],
            View::Services(_) => vec![Effect::WatchServices(self.cluster_scopes())],
            View::Nodes(_) => vec![Effect::WatchNodes(self.clusters_shown())],
            _ => vec![],
        }
    }

    /// The list is narrowed no more, with nothing to go back to: another
    /// namespace or context was chosen.
    pub(super) fn forget_narrowing(&mut self) {
        if self.narrowed.take().is_some() {
            self.pods.set_narrow(None);
        }
    }
}

/// How the header names the objects a narrowed list shows the pods of:
/// `deploy/web`, or `deploy/web +2` for three marked.
pub(super) fn names_of<R>(rows: &[&R], name: impl Fn(&R) -> String) -> String {
    match rows {
        [] => String::new(),
        [one] => name(one),
        [first, rest @ ..] => format!("{} +{}", name(first), rest.len()),
    }
}

#[cfg(test)]
#[path = "workloads_tests.rs"]
mod tests;

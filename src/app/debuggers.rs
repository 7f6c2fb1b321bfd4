//! The debuggers view (`:debuggers`): every debug container of the pods
//! listed (the namespaces shown, `0` for all), live from the pod list's
//! own watch, filtered and sorted; `x` stops one (asks first, saying what
//! it ends), `a` attaches to one that runs, `enter` opens its pod.

use std::cmp::Reverse;

use crossterm::event::{KeyCode, KeyEvent};

use super::keymap::Action;
use super::message::{error, info, warning};
use super::{App, Effect, Mode, PodView, TerminalKind, View};
use crate::model::debuggers::Debugger;
use crate::model::{ClusterId, ContainerState, PodKey, PodRow, RowKey, TerminalKey};

/// A debugger shown, and the context of its pod's row (`None` in a list
/// of one cluster): what is done to it goes to that cluster.
#[derive(Debug, Clone, Copy)]
pub struct Listed<'a> {
    pub context: Option<&'a std::sync::Arc<str>>,
    pub debugger: &'a Debugger,
}

impl std::ops::Deref for Listed<'_> {
    type Target = Debugger;

    fn deref(&self) -> &Debugger {
        self.debugger
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DebuggersView {
    pub cursor: usize,
    pub filter: String,
    pub order: Order,
}

/// How the view is sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// By namespace, pod and name.
    #[default]
    Pod,
    /// Running first, then waiting, then ended.
    State,
    /// Oldest first: the forgotten ones on top.
    Age,
}

impl Order {
    pub fn words(self) -> &'static str {
        match self {
            Order::Pod => "pod",
            Order::State => "state, running first",
            Order::Age => "age, oldest first",
        }
    }
}

impl DebuggersView {
    /// The debuggers of `rows` the filter keeps, in the view's order.
    pub fn shown<'a>(&self, rows: impl Iterator<Item = &'a PodRow>) -> Vec<Listed<'a>> {
        use fuzzy_matcher::FuzzyMatcher;
        let matcher = fuzzy_matcher::skim::SkimMatcherV2::default().ignore_case();
        let query = self.filter.trim();
        let mut shown: Vec<Listed> = rows
            .filter_map(|row| Some((row.context.as_ref(), row.debuggers.as_deref()?)))
            .flat_map(|(context, debuggers)| {
                debuggers
                    .iter()
                    .map(move |debugger| Listed { context, debugger })
            })
            .filter(|d| {
                query.is_empty()
                    || [
                        format!("{}/{}", d.namespace, d.pod).as_str(),
                        &d.name,
                        &d.image,
                        &d.state_text(),
                        d.added_by.as_deref().unwrap_or_default(),
                    ]
                    .iter()
                    .any(|field| matcher.fuzzy_match(field, query).is_some())
            })
            .collect();
        // Within a pod, as they were added (the spec's order; sorts are
        // stable). Compared in place: the view sorts every frame.
        let by_pod = |a: &Listed, b: &Listed| {
            (a.context, &a.namespace, &a.pod).cmp(&(b.context, &b.namespace, &b.pod))
        };
        match self.order {
            Order::Pod => shown.sort_by(by_pod),
            Order::State => {
                shown.sort_by(|a, b| state_rank(a).cmp(&state_rank(b)).then_with(|| by_pod(a, b)))
            }
            // Never started (still pulling) after every one that did.
            Order::Age => shown.sort_by(|a, b| {
                (a.started.is_none(), a.started)
                    .cmp(&(b.started.is_none(), b.started))
                    .then_with(|| by_pod(a, b))
            }),
        }
        shown
    }

    /// The selected debugger and the tag of its pod's row.
    fn selected<'a>(
        &self,
        rows: impl Iterator<Item = &'a PodRow>,
    ) -> Option<(Option<std::sync::Arc<str>>, Debugger)> {
        let shown = self.shown(rows);
        let at = self.cursor.min(shown.len().saturating_sub(1));
        shown
            .get(at)
            .map(|d| (d.context.cloned(), d.debugger.clone()))
    }
}

fn state_rank(d: &Debugger) -> Reverse<u8> {
    Reverse(match d.state {
        ContainerState::Running { .. } => 3,
        ContainerState::Waiting { .. } => 2,
        ContainerState::Unknown => 1,
        ContainerState::Terminated { .. } => 0,
    })
}

impl App {
    /// `:debuggers`.
    pub(super) fn open_debuggers(&mut self) -> Vec<Effect> {
        self.message = None;
        self.view = View::Debuggers(Box::default());
        vec![Effect::StopWatchingPod]
    }

    /// Keys of the debuggers view fixed in it (`x`); `None` for the others.
    pub(super) fn on_debuggers_fixed_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        if !matches!(self.view, View::Debuggers(_)) {
            return None;
        }
        if !matches!(key.code, KeyCode::Char('x') | KeyCode::Delete) || !key.modifiers.is_empty() {
            return None;
        }
        let (cluster, debugger) = self.selected_debugger()?;
        if !debugger.state.is_running() {
            let why = match debugger.state {
                ContainerState::Terminated { .. } => "it has ended already",
                _ => "it has no process yet (it runs once its image pulls and it starts)",
            };
            self.message = Some(info(format!(
                "Nothing to stop in {} of {}/{} ({}): {why}.",
                debugger.name,
                debugger.namespace,
                debugger.pod,
                debugger.state_text()
            )));
            return Some(vec![]);
        }
        // The key first: a long pod name is cut at the bar's end.
        let shell = if debugger.shell { ", a shell" } else { "" };
        let pod = self.pod_label(&cluster, &PodKey::new(&debugger.namespace, &debugger.pod));
        self.message = Some(warning(format!(
            "y stops {} in {pod} (up {}{shell}); any other key keeps it.",
            debugger.name,
            debugger.age_text(self.now)
        )));
        self.mode = Mode::ConfirmStopDebugger(Box::new((cluster, debugger)));
        Some(vec![])
    }

    /// The debuggers view's selected debugger and its pod's cluster.
    fn selected_debugger(&self) -> Option<(ClusterId, Debugger)> {
        let View::Debuggers(view) = &self.view else {
            return None;
        };
        let (context, debugger) = view.selected(self.pods.rows())?;
        let row = RowKey {
            context,
            pod: PodKey::new(&debugger.namespace, &debugger.pod),
        };
        Some((self.cluster_of(&row)?, debugger))
    }

    /// The answer to "Stop …?".
    pub(super) fn on_stop_debugger_answer(
        &mut self,
        (cluster, debugger): (ClusterId, Debugger),
        key: &KeyEvent,
    ) -> Vec<Effect> {
        let pod = PodKey::new(&debugger.namespace, &debugger.pod);
        let shown = self.pod_label(&cluster, &pod);
        if !matches!(key.code, KeyCode::Char('y' | 'Y')) {
            self.message = Some(info(format!("{} keeps running in {shown}.", debugger.name)));
            return vec![];
        }
        self.message = Some(info(format!(
            "Stopping debug container {} in pod {shown}…",
            debugger.name
        )));
        vec![Effect::StopDebugger {
            cluster,
            pod,
            name: debugger.name,
        }]
    }

    /// A stop asked for with [`Effect::StopDebugger`] ended: one sentence.
    pub(super) fn on_debugger_stopped(&mut self, outcome: Result<String, String>) {
        self.message = Some(match outcome {
            Ok(sentence) => info(sentence),
            Err(sentence) => error(sentence),
        });
    }

    /// Keys of the debuggers view; `None` for those with their usual meaning.
    pub(super) fn on_debuggers_key(&mut self, action: Action) -> Option<Vec<Effect>> {
        let View::Debuggers(view) = &mut self.view else {
            return None;
        };
        let count = view.shown(self.pods.rows()).len();
        if super::keymap::move_cursor(&mut view.cursor, count, self.rows_per_page, action) {
            return Some(vec![]);
        }
        if super::input::filter_key(&mut view.filter, &mut view.cursor, &mut self.mode, action) {
            return Some(vec![]);
        }
        match action {
            Action::SortByName | Action::SortByStatus | Action::SortByAge => {
                view.order = match action {
                    Action::SortByName => Order::Pod,
                    Action::SortByStatus => Order::State,
                    _ => Order::Age,
                };
                view.cursor = 0;
            }
            Action::Back => {
                self.message = None;
                self.view = View::Pods;
            }
            Action::Open => {
                let (cluster, debugger) = self.selected_debugger()?;
                let key = PodKey::new(&debugger.namespace, &debugger.pod);
                let mut pod = PodView::new(cluster.clone(), key.clone());
                pod.fold_finished = self.fold_finished;
                self.view = View::Pod(Box::new(pod));
                return Some(vec![Effect::WatchPod(cluster, key)]);
            }
            Action::Attach => {
                let (cluster, debugger) = self.selected_debugger()?;
                if !debugger.state.is_running() {
                    self.message = Some(info(format!(
                        "Debug container {} has ended ({}): there is nothing to attach to.",
                        debugger.name,
                        debugger.state_text()
                    )));
                    return Some(vec![]);
                }
                let key = TerminalKey::new(
                    cluster,
                    PodKey::new(&debugger.namespace, &debugger.pod),
                    debugger.name,
                );
                return Some(self.open_terminal_pane(TerminalKind::Attach, key, None).1);
            }
            _ => return None,
        }
        Some(vec![])
    }
}

#[cfg(test)]
#[path = "debuggers_tests.rs"]
mod tests;

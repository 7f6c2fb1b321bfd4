//! The events view: the events of a namespace (or of all) by watch,
//! newest first, filtered, one read in full; and the watch's updates.

use jiff::Timestamp;

use super::keymap::Action;
use super::reader::Reader;
use super::{App, Effect, Mode, PodView, Scope, View};
use crate::model::feed::{Change, Feed};
use crate::model::text::Printable;
use crate::model::{EventRow, PodKey};

/// The events view: the events of a namespace (or of all), newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct EventsView {
    pub scope: Scope,
    /// Oldest first, as the watch keeps them.
    pub rows: Vec<EventRow>,
    pub filter: String,
    /// An index into [`EventsView::visible`].
    pub cursor: usize,
    /// `enter`: the selected event in full.
    pub reading: Option<Reader>,
    /// Where `esc` goes back to: this pod's view, or the list.
    pub back_to: Option<PodKey>,
    /// The watch's trouble (refused, failing), until it lists.
    pub trouble: Option<Printable>,
    pub listed: bool,
}

impl EventsView {
    /// The events shown: newest first, those matching the filter (fuzzy
    /// over the object, reason, namespace and type; the message must hold
    /// the words as typed, or a long message would match anything).
    pub fn visible(&self) -> Vec<&EventRow> {
        use fuzzy_matcher::FuzzyMatcher;
        let matcher = fuzzy_matcher::skim::SkimMatcherV2::default().ignore_case();
        let query = self.filter.trim();
        let lower = query.to_lowercase();
        self.rows
            .iter()
            .rev()
            .filter(|e| {
                query.is_empty()
                    || [
                        e.object.as_str(),
                        e.reason.as_str(),
                        e.namespace.as_str(),
                        if e.warning { "Warning" } else { "Normal" },
                    ]
                    .iter()
                    .any(|field| matcher.fuzzy_match(field, query).is_some())
                    || e.message.to_lowercase().contains(&lower)
            })
            .collect()
    }

    /// One event in full, for reading.
    fn full_text(e: &EventRow, now: Timestamp) -> Vec<String> {
        let when = |t: Option<Timestamp>| {
            t.map_or_else(
                || "-".into(),
                |t| {
                    format!(
                        "{} ago",
                        crate::model::human_duration(now.duration_since(t))
                    )
                },
            )
        };
        let mut lines = vec![
            format!(
                "Type:       {}",
                if e.warning { "Warning" } else { "Normal" }
            ),
            format!("Reason:     {}", e.reason),
            format!("Object:     {}/{}", e.namespace, e.object),
        ];
        if !e.field_path.is_empty() {
            lines.push(format!("Field:      {}", e.field_path));
        }
        lines.extend([
            format!("From:       {}", e.source),
            format!("Count:      {}", e.count),
            format!("First seen: {}", when(e.first_seen)),
            format!("Last seen:  {}", when(e.last_seen)),
            String::new(),
        ]);
        // Messages arrive with their line breaks escaped (`\n`): show them as lines.
        lines.extend(e.message.split("\\n").map(str::to_string));
        lines
    }
}

impl App {
    /// `E` or `:events`: the events of the namespaces shown (of the pod's,
    /// from its view), or of all namespaces.
    pub(super) fn open_events(&mut self, all_namespaces: bool) -> Vec<Effect> {
        let (scope, back_to) = match &self.view {
            View::Pod(view) => (
                Scope::Namespaces(vec![view.key.namespace.to_string()]),
                Some(view.key.clone()),
            ),
            View::Events(view) => (view.scope.clone(), view.back_to.clone()),
            View::Files(browser) => (
                Scope::Namespaces(vec![browser.key.pod.namespace.to_string()]),
                Some(browser.key.pod.clone()),
            ),
            View::Pods
            | View::Messages(_)
            | View::Forwards(_)
            | View::Nodes(_)
            | View::Services(_)
            | View::Workloads(_)
            | View::Debuggers(_) => (self.scope.clone(), None),
        };
        let scope = if all_namespaces { Scope::All } else { scope };
        self.message = None;
        self.view = View::Events(Box::new(EventsView {
            scope: scope.clone(),
            rows: Vec::new(),
            filter: String::new(),
            cursor: 0,
            reading: None,
            back_to,
            trouble: None,
            listed: false,
        }));
        vec![Effect::WatchEvents(scope)]
    }

    /// Keys of the events view's list; `None` for those with their usual meaning.
    pub(super) fn on_events_key(&mut self, action: Action) -> Option<Vec<Effect>> {
        let View::Events(view) = &mut self.view else {
            return None;
        };
        match action {
            Action::Open => {
                let now = self.now;
                let text = view
                    .visible()
                    .get(view.cursor)
                    .map(|e| EventsView::full_text(e, now));
                if let Some(text) = text {
                    view.reading = Some(Reader::new(text));
                    self.fit_reader();
                }
            }
            Action::Filter => self.mode = Mode::Filter(view.filter.as_str().into()),
            Action::Back if !view.filter.is_empty() => {
                view.filter.clear();
                view.cursor = 0;
            }
            Action::Back => {
                self.message = None;
                return Some(match view.back_to.clone() {
                    Some(pod) => {
                        let mut back = PodView::new(pod.clone());
                        back.fold_finished = self.fold_finished;
                        self.view = View::Pod(Box::new(back));
                        vec![Effect::WatchPod(pod)]
                    }
                    None => {
                        self.view = View::Pods;
                        vec![Effect::StopWatchingPod]
                    }
                });
            }
            Action::ToggleAllNamespaces => {
                let all = !matches!(view.scope, Scope::All);
                if !all {
                    // Back to the namespaces the view was opened on.
                    view.scope = match &view.back_to {
                        Some(pod) => Scope::Namespaces(vec![pod.namespace.to_string()]),
                        None => self.scope.clone(),
                    };
                }
                return Some(self.open_events(all));
            }
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.move_cursor(action),
            // Keys about a pod or the pod list: no pod is selected here.
            Action::Describe
            | Action::Yaml
            | Action::Events
            | Action::Delete
            | Action::Exec
            | Action::Debug
            | Action::Attach
            | Action::Shell
            | Action::Logs
            | Action::PreviousLogs
            | Action::AllLogs
            | Action::CopyName
            | Action::Fold
            | Action::SortByName
            | Action::SortByStatus
            | Action::SortByRestarts
            | Action::SortByAge
            | Action::Mark
            | Action::MarkShown
            | Action::Files
            | Action::Forward => {}
            Action::Quit
            | Action::Command
            | Action::Help
            | Action::Workspace
            | Action::Messages
            | Action::Nodes
            | Action::CopyPod => return None,
        }
        Some(vec![])
    }

    /// An update of the events view's watch.
    pub(super) fn on_events_feed(&mut self, feed: Feed<EventRow>) {
        if let View::Events(view) = &mut self.view {
            match &feed {
                Feed::Listed { .. } => {
                    view.listed = true;
                    view.trouble = None;
                }
                Feed::Forbidden(denied) => view.trouble = Some(denied.sentence().into()),
                Feed::Reconnecting(sentence) => view.trouble = Some(sentence.clone()),
                Feed::Resumed | Feed::Applied(_) | Feed::Deleted(_) => view.trouble = None,
                Feed::Unreadable(bad) => {
                    view.trouble = bad.first().map(|b| b.sentence("an event").into());
                }
                // Not a paged feed: no pages come.
                Feed::Listing { .. } | Feed::Page { .. } | Feed::Cut => {}
            }
            // Only these change the rows.
            if !matches!(
                feed,
                Feed::Listed { .. } | Feed::Applied(_) | Feed::Deleted(_)
            ) {
                return;
            }
            // The highlight stays on its event as newer ones arrive above it.
            let selected = view
                .visible()
                .get(view.cursor)
                .map(|e| (e.namespace.clone(), e.name.clone()));
            match feed {
                // One namespace's list of several watched: the others stay.
                Feed::Listed {
                    scope: Some(namespace),
                    rows,
                } => {
                    view.rows.retain(|e| e.namespace != namespace);
                    view.rows.extend(rows);
                    oldest_first(&mut view.rows);
                }
                feed => apply_events(&mut view.rows, feed),
            }
            let visible = view.visible();
            let found = selected.and_then(|(namespace, name)| {
                visible
                    .iter()
                    .position(|e| e.namespace == namespace && e.name == name)
            });
            let len = visible.len();
            view.cursor = found.unwrap_or(view.cursor).min(len.saturating_sub(1));
        }
    }
}

/// Applies an event watch's update to a list kept oldest first.
pub(super) fn apply_events(events: &mut Vec<EventRow>, feed: Feed<EventRow>) {
    match feed.change() {
        Some(Change::Listed(rows)) => *events = rows,
        Some(Change::Applied(e)) => match events
            .iter_mut()
            .find(|x| x.name == e.name && x.namespace == e.namespace)
        {
            Some(existing) => *existing = e,
            None => events.push(e),
        },
        Some(Change::Deleted(e)) => {
            events.retain(|x| x.name != e.name || x.namespace != e.namespace)
        }
        None => {}
    }
    oldest_first(events);
}

/// Events in the order they were last seen, the oldest first: one sort
/// for every list of events (each sort is its own code in the binary).
pub(super) fn oldest_first(events: &mut [EventRow]) {
    events.sort_by_key(|e| e.last_seen);
}

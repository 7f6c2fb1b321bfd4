//! The events view: the events of a namespace (or of all) by watch,
//! newest first, filtered, one read in full; and the watch's updates.

use jiff::Timestamp;

use super::keymap::Action;
use super::reader::Reader;
use super::{App, Effect, PodView, Scope, View};
use crate::model::feed::{Change, Feed};
use crate::model::text::Printable;
use crate::model::{EventRow, PodKey};

/// The events view: the events of a namespace (or of all), newest first.
#[derive(Debug)]
pub struct EventsView {
    /// Whose events: the pod's or the object's cluster, else the
    /// browser's.
    pub cluster: crate::model::ClusterId,
    pub scope: Scope,
    /// The namespaces it was opened on, for `0` to come back to from all.
    home: Scope,
    /// Oldest first, as the watch keeps them.
    pub rows: Vec<EventRow>,
    pub filter: String,
    /// An index into [`EventsView::visible`].
    pub cursor: usize,
    /// `enter`: the selected event in full.
    pub reading: Option<Reader>,
    /// Where `esc` goes back to.
    back: EventsBack,
    /// The watch's trouble (refused, failing), until it lists.
    pub trouble: Option<Printable>,
    pub listed: bool,
}

/// Where the events view was opened from, and `esc` goes back to.
#[derive(Debug)]
enum EventsBack {
    List,
    Pod(Box<(crate::model::ClusterId, PodKey)>),
    /// A view of other objects (nodes, Services, workloads), watched again.
    View(Box<View>),
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
    /// from its view; of the selected object's, filtered by its name, from
    /// a view of other objects), or of all namespaces.
    pub(super) fn open_events(&mut self, all_namespaces: bool) -> Vec<Effect> {
        let object = |tag: &Option<std::sync::Arc<str>>, namespace: &str, name: &str| {
            let scope = if namespace.is_empty() {
                Scope::All
            } else {
                Scope::Namespaces(vec![namespace.to_string()])
            };
            (tag.clone(), scope, name.to_string())
        };
        let selected = match &self.view {
            View::Workloads(view) => Some(
                view.list
                    .selected()
                    .map(|r| object(&r.context, &r.namespace, &r.name)),
            ),
            View::Services(view) => Some(
                view.list
                    .selected()
                    .map(|r| object(&r.context, &r.namespace, &r.name)),
            ),
            View::Nodes(view) => Some(
                view.list
                    .selected()
                    .map(|r| object(&r.context, "", &r.name)),
            ),
            _ => None,
        };
        if let Some(selected) = selected {
            return self.open_object_events(selected, all_namespaces);
        }
        let (cluster, home, filter) = match &self.view {
            View::Pod(view) => (
                view.cluster.clone(),
                Scope::Namespaces(vec![view.key.namespace.to_string()]),
                "",
            ),
            View::Events(view) => (
                view.cluster.clone(),
                view.home.clone(),
                view.filter.as_str(),
            ),
            View::Files(browser) => (
                browser.key.cluster.clone(),
                Scope::Namespaces(vec![browser.key.pod.namespace.to_string()]),
                "",
            ),
            _ => (self.cluster.clone(), self.scope_of(&self.first_tag), ""),
        };
        let filter = filter.to_string();
        let back = match std::mem::replace(&mut self.view, View::Pods) {
            View::Pod(view) => EventsBack::Pod(Box::new((view.cluster, view.key))),
            View::Files(browser) => {
                EventsBack::Pod(Box::new((browser.key.cluster, browser.key.pod)))
            }
            View::Events(mut view) => std::mem::replace(&mut view.back, EventsBack::List),
            _ => EventsBack::List,
        };
        self.show_events(cluster, (home, filter), back, all_namespaces)
    }

    /// `E` in a view of other objects: the events of the selected one's
    /// namespace (all namespaces for a node's), filtered by its name, so
    /// that its own, its ReplicaSets' and its pods' show; `esc` comes back
    /// to the view.
    fn open_object_events(
        &mut self,
        object: Option<(Option<std::sync::Arc<str>>, Scope, String)>,
        all_namespaces: bool,
    ) -> Vec<Effect> {
        let (tag, home, filter) = object.unwrap_or_else(|| {
            let tag = self.first_tag.clone();
            (tag.clone(), self.scope_of(&tag), String::new())
        });
        let Some(cluster) = self.cluster_of_tag(&tag) else {
            return vec![];
        };
        let back = std::mem::replace(&mut self.view, View::Pods);
        self.show_events(
            cluster,
            (home, filter),
            EventsBack::View(Box::new(back)),
            all_namespaces,
        )
    }

    /// The events of `home` (all namespaces' with `all_namespaces`) on
    /// `cluster`, `filter` typed.
    fn show_events(
        &mut self,
        cluster: crate::model::ClusterId,
        (home, filter): (Scope, String),
        back: EventsBack,
        all_namespaces: bool,
    ) -> Vec<Effect> {
        let scope = if all_namespaces {
            Scope::All
        } else {
            home.clone()
        };
        self.message = None;
        self.view = View::Events(Box::new(EventsView {
            cluster: cluster.clone(),
            scope: scope.clone(),
            home,
            rows: Vec::new(),
            filter,
            cursor: 0,
            reading: None,
            back,
            trouble: None,
            listed: false,
        }));
        vec![Effect::WatchEvents(cluster, scope)]
    }

    /// Keys of the events view's list; `None` for those with their usual meaning.
    pub(super) fn on_events_key(&mut self, action: Action) -> Option<Vec<Effect>> {
        let View::Events(view) = &mut self.view else {
            return None;
        };
        if super::input::filter_key(&mut view.filter, &mut view.cursor, &mut self.mode, action) {
            return Some(vec![]);
        }
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
            Action::Back => {
                self.message = None;
                let back = std::mem::replace(&mut view.back, EventsBack::List);
                return Some(match back {
                    EventsBack::Pod(pod) => {
                        let (cluster, pod) = *pod;
                        let mut back = PodView::new(cluster.clone(), pod.clone());
                        back.fold_finished = self.fold_finished;
                        self.view = View::Pod(Box::new(back));
                        vec![Effect::WatchPod(cluster, pod)]
                    }
                    EventsBack::List => {
                        self.view = View::Pods;
                        vec![Effect::StopWatchingPod]
                    }
                    EventsBack::View(back) => {
                        self.view = *back;
                        self.watch_shown_view()
                    }
                });
            }
            Action::ToggleAllNamespaces => {
                let all = !matches!(view.scope, Scope::All);
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
            | Action::Forward
            | Action::Capture => {}
            // Taken by `filter_key` above.
            Action::Filter => {}
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

//! The browser's screens: which pods are watched, the pod list, the pod
//! view and its pages, the events view; and where each half is drawn.

use jiff::Timestamp;
use ratatui::layout::Rect;

use super::EventsView;
use super::follow::PodFollow;
use super::reader::Reader;
use crate::model::PodKey;
use crate::model::pod_security::Policy;
use crate::model::text::Printable;

/// Which pods to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    /// One or more namespaces (more than one only as a fallback for users
    /// who may not list pods cluster-wide).
    Namespaces(Vec<String>),
}

impl Scope {
    pub fn label(&self) -> String {
        match self {
            Scope::All => "all".to_string(),
            Scope::Namespaces(list) => list.join(","),
        }
    }
}

/// The browser's screens (the workspace is beside them, see [`Focus`]).
#[derive(Debug)]
pub enum View {
    Pods,
    Pod(Box<PodView>),
    Events(Box<EventsView>),
    /// Every sentence of this run, time-stamped, read as a text.
    Messages(Box<Reader>),
    /// A container's files (`b`).
    Files(Box<super::files::FileBrowser>),
    /// The packet captures (`:captures`).
    Captures(super::captures::CapturesView),
    /// The port-forwards (`:pf`).
    Forwards(super::forwards::ForwardsView),
    /// The cluster's nodes (`:nodes`, `O`).
    Nodes(Box<super::nodes::NodesView>),
    /// The debug containers of the pods listed (`:debuggers`).
    Debuggers(Box<super::debuggers::DebuggersView>),
    /// The Services of the namespaces shown (`:svc`).
    Services(Box<super::services::ServicesView>),
    /// One kind of workload in the namespaces shown (`:deploy`, …).
    Workloads(Box<super::workloads::WorkloadsView>),
}

/// What the pod view shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Page {
    Containers,
    /// The pod as `kubectl describe pod` lays it out, live.
    Describe(Reader),
    /// The pod as YAML, live.
    Yaml(Reader),
}

/// Which half has the keyboard: the browser or the workspace of panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Browser,
    Workspace,
}

/// Where the browser and the workspace are drawn; `None` when hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub browser: Option<Rect>,
    pub workspace: Option<Rect>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodView {
    /// The pod's cluster: everything done from this view goes there.
    pub cluster: crate::model::ClusterId,
    pub key: PodKey,
    pub pod: PodFollow,
    pub cursor: usize,
    /// Open the debug launcher as soon as the pod's detail arrives.
    pub launch_when_loaded: bool,
    /// The namespace's Pod Security labels, once read (if they may be).
    pub policy: Option<Policy>,
    /// Why the pod's detail is not arriving (the server fails or is
    /// silent), until it does.
    pub trouble: Option<Printable>,
    pub page: Page,
    /// Opened straight on a page from the list (`D`, `y`): `esc` goes back
    /// to the list.
    pub back_to_list: bool,
    /// Finished debug containers are folded into one row (`f`): they pile
    /// up, one per try.
    pub fold_finished: bool,
}

impl PodView {
    pub(super) fn new(cluster: crate::model::ClusterId, key: PodKey) -> Self {
        PodView {
            cluster,
            key,
            pod: PodFollow::default(),
            cursor: 0,
            launch_when_loaded: false,
            policy: None,
            trouble: None,
            page: Page::Containers,
            back_to_list: false,
            fold_finished: false,
        }
    }

    /// The containers listed, in the pod's order (finished debug
    /// containers left out when folded).
    pub fn listed(&self) -> Vec<&crate::model::ContainerInfo> {
        let Some(detail) = &self.pod.detail else {
            return Vec::new();
        };
        detail
            .containers
            .iter()
            .filter(|c| !self.fold_finished || !finished_debug(c))
            .collect()
    }

    /// The container under the cursor.
    pub fn selected(&self) -> Option<&crate::model::ContainerInfo> {
        self.listed().get(self.cursor).copied()
    }

    /// How many finished debug containers are folded away.
    pub fn folded(&self) -> usize {
        match &self.pod.detail {
            Some(d) if self.fold_finished => {
                d.containers.iter().filter(|c| finished_debug(c)).count()
            }
            _ => 0,
        }
    }

    /// Writes the describe or YAML page again from the pod as it now is.
    pub(super) fn refresh_page(&mut self, now: Timestamp) {
        let Some(detail) = &self.pod.detail else {
            return;
        };
        match &mut self.page {
            Page::Containers => {}
            Page::Describe(reader) => reader.replace(crate::model::describe::describe_pod(
                &detail.manifest,
                &self.pod.events,
                now,
            )),
            Page::Yaml(reader) => {
                reader.replace(crate::model::describe::pod_yaml(&detail.manifest))
            }
        }
    }
}

/// A debug container that has exited: it will never run again.
pub(super) fn finished_debug(c: &crate::model::ContainerInfo) -> bool {
    c.kind == crate::model::ContainerKind::Ephemeral
        && matches!(c.state, crate::model::ContainerState::Terminated { .. })
}

//! A workload's description (`D`) and a workload's or Service's YAML
//! (`y`), read from the server once when asked and shown in a reader over
//! the view's list; `esc` goes back to the list.

use serde_json::Value;

use super::keymap::Action;
use super::reader::Reader;
use super::{App, Effect, View};
use crate::model::EventRow;
use crate::model::describe::object_yaml;
use crate::model::describe_workload::describe_workload;
use crate::model::object_ref::{ObjectKind, ObjectRef};
use crate::model::selector::Selector;

/// What was read: the object as the server has it, and the events about
/// it (none where the user may not list events).
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectRead {
    pub object: Value,
    pub events: Vec<EventRow>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectPage {
    Describe,
    Yaml,
}

/// An object's page being read.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectReading {
    /// Where it is read from.
    pub cluster: crate::model::ClusterId,
    pub object: ObjectRef,
    pub page: ObjectPage,
    pub reader: Reader,
    /// Until the answer comes (the reader says it is loading).
    pub loading: bool,
}

impl ObjectReading {
    /// `describe deploy/storefront`, `yaml svc/storefront`.
    pub fn title(&self) -> String {
        let page = match self.page {
            ObjectPage::Describe => "describe",
            ObjectPage::Yaml => "yaml",
        };
        format!("{page} {}/{}", self.object.namespace, self.object)
    }
}

impl App {
    /// `D` or `y` on a workload or Service: its page, loading, and the read.
    pub(super) fn read_object(
        &mut self,
        cluster: crate::model::ClusterId,
        object: ObjectRef,
        action: Action,
    ) -> Vec<Effect> {
        let page = match action {
            Action::Yaml => ObjectPage::Yaml,
            _ => ObjectPage::Describe,
        };
        let reading = Some(ObjectReading {
            cluster: cluster.clone(),
            object: object.clone(),
            page,
            reader: Reader::new(Vec::new()),
            loading: true,
        });
        match &mut self.view {
            View::Workloads(view) => view.reading = reading,
            View::Services(view) => view.page = reading,
            _ => return vec![],
        }
        self.fit_reader();
        vec![Effect::ReadObject { cluster, object }]
    }

    /// The read, shown if its page is still open.
    pub(super) fn on_object_read(
        &mut self,
        cluster: &crate::model::ClusterId,
        object: &ObjectRef,
        read: Result<ObjectRead, String>,
    ) {
        let open = match &self.view {
            View::Workloads(view) => view.reading.as_ref(),
            View::Services(view) => view.page.as_ref(),
            _ => None,
        };
        let Some(page) = open
            .filter(|r| r.loading && r.object == *object && r.cluster == *cluster)
            .map(|r| r.page)
        else {
            return;
        };
        let lines = match read {
            // Names the object by the server's name: shown as text only.
            Err(why) => vec![crate::model::text::sanitize(&why).into_owned()],
            Ok(read) => match (page, object.kind) {
                (ObjectPage::Yaml, kind) => {
                    object_yaml(read.object, kind.api_version(), kind.kind())
                }
                (ObjectPage::Describe, ObjectKind::Workload(kind)) => {
                    let mut events = read.events;
                    super::events_view::oldest_first(&mut events);
                    let pods = self.pods_of(cluster, object, &read.object);
                    describe_workload(kind, &read.object, &pods, &events, self.now)
                }
                // A Service's `D` is its truth, from the lists.
                (ObjectPage::Describe, ObjectKind::Service) => Vec::new(),
            },
        };
        let reading = match &mut self.view {
            View::Workloads(view) => view.reading.as_mut(),
            View::Services(view) => view.page.as_mut(),
            _ => None,
        };
        if let Some(reading) = reading {
            reading.reader.replace(lines);
            reading.loading = false;
        }
    }

    /// The pods of the pod list a workload's selector matches in its
    /// namespace, in the list's order.
    fn pods_of(
        &self,
        cluster: &crate::model::ClusterId,
        object: &ObjectRef,
        read: &Value,
    ) -> Vec<&crate::model::PodRow> {
        let Some(context) = self.row_tag(cluster) else {
            return Vec::new();
        };
        let pick = super::pods::Pick {
            context,
            namespace: object.namespace.clone(),
            selector: match object.kind {
                ObjectKind::Workload(_) => Selector::of_label_selector(&read["spec"]["selector"]),
                ObjectKind::Service => return Vec::new(),
            },
        };
        if pick.selector.is_empty() {
            return Vec::new();
        }
        self.pods.rows().filter(|pod| pick.admits(pod)).collect()
    }
}

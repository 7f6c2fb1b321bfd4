//! The watches of other kinds than pods (the nodes, services, workload and
//! events views, and a pod's events): untyped, over `DynamicObject`, each
//! object projected from its JSON into one row type, [`Untyped`], so the
//! list and watch loop is compiled once for them all (each pair of object
//! and row type is ~26 KB of the binary) and no typed decoder is.

use kube::api::{Api, ApiResource, DynamicObject};

use crate::app::object_page::ObjectRead;
use crate::model::EventRow;
use crate::model::feed::Feed;
use crate::model::node::NodeRow;
use crate::model::object_ref::ObjectRef;
use crate::model::service::ServiceRow;
use crate::model::workload::{WorkloadKind, WorkloadRow};

use super::*;

/// A row of any kind watched untyped.
pub(super) enum Untyped {
    Namespace(String),
    Node(NodeRow),
    Service(ServiceRow),
    Workload(WorkloadRow),
    Event(EventRow),
}

impl Tasks {
    /// The nodes view's watch of each cluster it shows, in the pod view's
    /// slot (one or the other shows): a cluster-scoped kind, one feed of
    /// all a cluster.
    pub(super) fn watch_nodes(&mut self, clusters: Vec<ClusterId>) {
        let kind = ApiResource::erase::<k8s_openapi::api::core::v1::Node>(&());
        let project = |object: &DynamicObject| {
            Untyped::Node(NodeRow::from_parts(&object.metadata, &object.data))
        };
        let wrap = |other: Option<ClusterId>, feed: Feed<Untyped>| {
            let feed = feed.filter_map(|row| match row {
                Untyped::Node(node) => Some(node),
                _ => None,
            });
            match other {
                Some(cluster) => Event::OtherNodes { cluster, feed },
                None => Event::Nodes(feed),
            }
        };
        let every = clusters.into_iter().map(|c| (c, Scope::All)).collect();
        self.watch_namespaced(kind, every, project, wrap);
    }

    /// The services view's watch, in the pod view's slot.
    pub(super) fn watch_services(&mut self, watches: Vec<(ClusterId, Scope)>) {
        let kind = ApiResource::erase::<k8s_openapi::api::core::v1::Service>(&());
        let project = |object: &DynamicObject| {
            Untyped::Service(ServiceRow::from_parts(&object.metadata, &object.data))
        };
        let wrap = |other: Option<ClusterId>, feed: Feed<Untyped>| {
            let feed = feed.filter_map(|row| match row {
                Untyped::Service(service) => Some(service),
                _ => None,
            });
            match other {
                Some(cluster) => Event::OtherServices { cluster, feed },
                None => Event::Services(feed),
            }
        };
        self.watch_namespaced(kind, watches, project, wrap);
    }

    /// The events view's watch, in the pod view's slot.
    pub(super) fn watch_events(&mut self, cluster: ClusterId, scope: Scope) {
        self.watch_namespaced(events(), vec![(cluster, scope)], event_row, |_, feed| {
            Event::Events(only_events(feed))
        });
    }

    /// A workload view's watch, in the pod view's slot.
    pub(super) fn watch_workloads(&mut self, kind: WorkloadKind, watches: Vec<(ClusterId, Scope)>) {
        let resource = ApiResource {
            group: kind.group().into(),
            version: "v1".into(),
            api_version: format!("{}/v1", kind.group()),
            kind: kind.kind().into(),
            plural: kind.plural().into(),
        };
        let project = move |object: &DynamicObject| {
            Untyped::Workload(WorkloadRow::from_parts(
                kind,
                &object.metadata,
                &object.data,
            ))
        };
        let wrap = |other: Option<ClusterId>, feed: Feed<Untyped>| {
            let feed = feed.filter_map(|row| match row {
                Untyped::Workload(workload) => Some(workload),
                _ => None,
            });
            match other {
                Some(cluster) => Event::OtherWorkloads { cluster, feed },
                None => Event::Workloads(feed),
            }
        };
        self.watch_namespaced(resource, watches, project, wrap);
    }

    /// A workload or Service and the events about it, read once (each
    /// within [`READ_TIMEOUT`]). Events that may not be listed are left
    /// out, as `kubectl describe` leaves them.
    pub(super) fn read_object(&mut self, cluster: ClusterId, object: ObjectRef) {
        let Some(client) = self.clients.get(&cluster).cloned() else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let kind = object.kind;
            let gvk = kube::api::GroupVersionKind::gvk(kind.group(), "v1", kind.kind());
            let resource = ApiResource::from_gvk_with_plural(&gvk, kind.plural());
            let url = |resource: &ApiResource| {
                Api::<DynamicObject>::namespaced_with(client.clone(), &object.namespace, resource)
                    .resource_url()
                    .to_string()
            };
            let about = kube::api::ListParams::default().fields(&format!(
                "involvedObject.name={},involvedObject.kind={}",
                object.name,
                kind.kind()
            ));
            let (object_url, events_url) = (url(&resource), url(&events()));
            let deadline = crate::cluster::deadline::Deadline::none().within(Some(READ_TIMEOUT));
            let (read, listed) = tokio::join!(
                deadline.bound(crate::cluster::objects::get_json(
                    client.clone(),
                    &object_url,
                    &object.name
                )),
                deadline.bound(crate::cluster::objects::first_page_json(
                    client.clone(),
                    &events_url,
                    &about
                )),
            );
            let read = match read {
                Ok(Ok(found)) => Ok(ObjectRead {
                    object: found,
                    events: match listed {
                        Ok(Ok(items)) => items.iter().map(EventRow::from_object).collect(),
                        _ => Vec::new(),
                    },
                }),
                Ok(Err(kube::Error::Api(status))) if status.code == 404 => Err(format!(
                    "{object} is not in namespace {} any more.",
                    object.namespace
                )),
                Ok(Err(e)) => Err(crate::cluster::errors::describe(&e).sentence.into_string()),
                Err(why) => Err(format!("the API server did not answer: {why}")),
            };
            let event = Event::ObjectRead {
                cluster,
                object,
                read,
            };
            let _ = tx.send(Tagged::untied(event)).await;
        });
    }

    /// A view's watch of a kind on each cluster it shows, in the pod
    /// view's slot (one or the other shows): one feed a namespace shown
    /// (one for all, and for a cluster-scoped kind), so a user who may list
    /// only some namespaces sees theirs. `wrap` is given the cluster of a
    /// feed that is not the browser's.
    fn watch_namespaced(
        &mut self,
        kind: ApiResource,
        watches: Vec<(ClusterId, Scope)>,
        project: impl Fn(&DynamicObject) -> Untyped + Clone + Send + Sync + 'static,
        wrap: fn(Option<ClusterId>, Feed<Untyped>) -> Event,
    ) {
        abort(&mut self.pod);
        let tagged = (FeedOrigin::Pod, self.next_generation(FeedOrigin::Pod));
        let browser = self.connection.cluster();
        for (cluster, scope) in watches {
            let Some(client) = self.clients.get(&cluster).cloned() else {
                continue;
            };
            let apis: Vec<(Api<DynamicObject>, Option<String>)> = match scope {
                Scope::All => vec![(Api::all_with(client, &kind), None)],
                Scope::Namespaces(list) => list
                    .into_iter()
                    .map(|ns| (Api::namespaced_with(client.clone(), &ns, &kind), Some(ns)))
                    .collect(),
            };
            let other = (cluster != browser).then_some(cluster);
            for (api, ns) in apis {
                let other = other.clone();
                let wrap = move |feed| wrap(other.clone(), feed);
                let task = self.spawn_feed(
                    tagged,
                    api,
                    feed::config(),
                    ns,
                    project.clone(),
                    wrap,
                    Pages::Whole,
                );
                self.pod.push(task);
            }
        }
    }
}
/// Core Events, read untyped (the pod view's and the events view's).
pub(super) fn events() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::Event>(&())
}

pub(super) fn event_row(object: &DynamicObject) -> Untyped {
    Untyped::Event(EventRow::from_parts(&object.metadata, &object.data))
}

pub(super) fn only_events(feed: Feed<Untyped>) -> Feed<EventRow> {
    feed.filter_map(|row| match row {
        Untyped::Event(event) => Some(event),
        _ => None,
    })
}

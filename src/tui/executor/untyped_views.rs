//! The views' watches of other kinds than pods (the nodes, services and
//! workload views): untyped, one feed over `DynamicObject` each, in the pod view's
//! slot (one or the other shows), so every such kind shares one copy of
//! the feed in the binary and no typed decoder.

use kube::api::{Api, ApiResource, DynamicObject};

use crate::model::feed::Feed;
use crate::model::workload::{WorkloadKind, WorkloadRow};

use super::*;

impl Tasks {
    /// The nodes view's watch, in the pod view's slot (one or the other
    /// shows); untyped, as the services view's.
    pub(super) fn watch_nodes(&mut self) {
        abort(&mut self.pod);
        let tagged = (FeedOrigin::Pod, self.next_generation(FeedOrigin::Pod));
        let kind = ApiResource::erase::<k8s_openapi::api::core::v1::Node>(&());
        let api = Api::<DynamicObject>::all_with(self.connection.client.clone(), &kind);
        let project = |object: &DynamicObject| {
            crate::model::node::NodeRow::from_parts(&object.metadata, &object.data)
        };
        let task = self.spawn_feed(
            tagged,
            api,
            feed::config(),
            None,
            project,
            Event::Nodes,
            Pages::Whole,
        );
        self.pod = vec![task];
    }

    /// The services view's watch, in the pod view's slot.
    pub(super) fn watch_services(&mut self, scope: Scope) {
        let kind = ApiResource::erase::<k8s_openapi::api::core::v1::Service>(&());
        let project = |object: &DynamicObject| {
            crate::model::service::ServiceRow::from_parts(&object.metadata, &object.data)
        };
        self.watch_namespaced(kind, scope, project, Event::Services);
    }

    /// A workload view's watch, in the pod view's slot.
    pub(super) fn watch_workloads(&mut self, kind: WorkloadKind, scope: Scope) {
        let resource = ApiResource {
            group: kind.group().into(),
            version: "v1".into(),
            api_version: format!("{}/v1", kind.group()),
            kind: kind.kind().into(),
            plural: kind.plural().into(),
        };
        let project = move |object: &DynamicObject| {
            WorkloadRow::from_parts(kind, &object.metadata, &object.data)
        };
        self.watch_namespaced(resource, scope, project, Event::Workloads);
    }

    /// A view's watch of a namespaced kind, in the pod view's slot (one or
    /// the other shows): one feed a namespace shown (one for all), so a
    /// user who may list only some namespaces sees theirs.
    fn watch_namespaced<R: Send + 'static>(
        &mut self,
        kind: ApiResource,
        scope: Scope,
        project: impl Fn(&DynamicObject) -> R + Clone + Send + Sync + 'static,
        wrap: fn(Feed<R>) -> Event,
    ) {
        abort(&mut self.pod);
        let tagged = (FeedOrigin::Pod, self.next_generation(FeedOrigin::Pod));
        let client = self.connection.client.clone();
        let apis: Vec<(Api<DynamicObject>, Option<String>)> = match scope {
            Scope::All => vec![(Api::all_with(client, &kind), None)],
            Scope::Namespaces(list) => list
                .into_iter()
                .map(|ns| (Api::namespaced_with(client.clone(), &ns, &kind), Some(ns)))
                .collect(),
        };
        self.pod = apis
            .into_iter()
            .map(|(api, ns)| {
                self.spawn_feed(
                    tagged,
                    api,
                    feed::config(),
                    ns,
                    project.clone(),
                    wrap,
                    Pages::Whole,
                )
            })
            .collect();
    }
}

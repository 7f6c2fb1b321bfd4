//! The object store: what etcd plus the watch cache are to the apiserver.
//!
//! Objects are kept as serialized JSON (a pod is ~1.5 KB that way instead of
//! tens of KB as a parsed value), with their labels and selectable fields
//! indexed beside them. One global `resourceVersion` counter orders every
//! change; a bounded history of changes serves watches that resume from a
//! resourceVersion, and anything older than the history is "compacted" (410).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::broadcast;

/// The kinds of object the simulator stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Pod,
    Event,
    Namespace,
    /// `apps/v1`, read-only: what `deploy/NAME` resolves through.
    Deployment,
    ReplicaSet,
    StatefulSet,
    /// Cluster-scoped, read-only: the simulated nodes.
    Node,
    /// Read-only: the demo's image pull secret, which the kubelet reads
    /// for a pod that names it.
    Secret,
    /// Read-only: what `svc/NAME` resolves through (a selector and ports).
    Service,
    /// `apps/v1` and `batch/v1`, read-only, as the other workloads.
    DaemonSet,
    Job,
    CronJob,
    /// Kept by the endpoints controllers (see `endpoints`), read-only.
    Endpoints,
    EndpointSlice,
}

impl Kind {
    pub const ALL: [Kind; 14] = [
        Kind::Pod,
        Kind::Event,
        Kind::Namespace,
        Kind::Deployment,
        Kind::ReplicaSet,
        Kind::StatefulSet,
        Kind::Node,
        Kind::Secret,
        Kind::Service,
        Kind::DaemonSet,
        Kind::Job,
        Kind::CronJob,
        Kind::Endpoints,
        Kind::EndpointSlice,
    ];

    pub fn plural(self) -> &'static str {
        match self {
            Kind::Pod => "pods",
            Kind::Event => "events",
            Kind::Namespace => "namespaces",
            Kind::Deployment => "deployments",
            Kind::ReplicaSet => "replicasets",
            Kind::StatefulSet => "statefulsets",
            Kind::Node => "nodes",
            Kind::Secret => "secrets",
            Kind::Service => "services",
            Kind::DaemonSet => "daemonsets",
            Kind::Job => "jobs",
            Kind::CronJob => "cronjobs",
            Kind::Endpoints => "endpoints",
            Kind::EndpointSlice => "endpointslices",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Pod => "Pod",
            Kind::Event => "Event",
            Kind::Namespace => "Namespace",
            Kind::Deployment => "Deployment",
            Kind::ReplicaSet => "ReplicaSet",
            Kind::StatefulSet => "StatefulSet",
            Kind::Node => "Node",
            Kind::Secret => "Secret",
            Kind::Service => "Service",
            Kind::DaemonSet => "DaemonSet",
            Kind::Job => "Job",
            Kind::CronJob => "CronJob",
            Kind::Endpoints => "Endpoints",
            Kind::EndpointSlice => "EndpointSlice",
        }
    }

    /// The API group (`""` for the core group).
    pub fn group(self) -> &'static str {
        match self {
            Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet | Kind::DaemonSet => "apps",
            Kind::Job | Kind::CronJob => "batch",
            Kind::EndpointSlice => "discovery.k8s.io",
            Kind::Pod
            | Kind::Event
            | Kind::Namespace
            | Kind::Node
            | Kind::Secret
            | Kind::Service
            | Kind::Endpoints => "",
        }
    }

    pub fn api_version(self) -> &'static str {
        match self.group() {
            "" => "v1",
            "batch" => "batch/v1",
            "discovery.k8s.io" => "discovery.k8s.io/v1",
            _ => "apps/v1",
        }
    }

    /// The resource as the apiserver names it in errors: `pods`,
    /// `deployments.apps`.
    pub fn qualified(self) -> String {
        match self.group() {
            "" => self.plural().to_string(),
            group => format!("{}.{group}", self.plural()),
        }
    }

    pub fn namespaced(self) -> bool {
        !matches!(self, Kind::Namespace | Kind::Node)
    }

    /// Fields that `fieldSelector` may name, in the order they are indexed.
    pub fn selectable_fields(self) -> &'static [&'static str] {
        match self {
            Kind::Pod => &[
                "metadata.name",
                "metadata.namespace",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ],
            Kind::Event => &[
                "metadata.name",
                "metadata.namespace",
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ],
            Kind::Namespace => &["metadata.name", "status.phase"],
            Kind::Node => &["metadata.name", "spec.unschedulable"],
            Kind::Secret => &["metadata.name", "metadata.namespace", "type"],
            Kind::Deployment
            | Kind::ReplicaSet
            | Kind::StatefulSet
            | Kind::Service
            | Kind::DaemonSet
            | Kind::CronJob
            | Kind::Endpoints
            | Kind::EndpointSlice => &["metadata.name", "metadata.namespace"],
            Kind::Job => &["metadata.name", "metadata.namespace", "status.successful"],
        }
    }

    fn index(self) -> usize {
        match self {
            Kind::Pod => 0,
            Kind::Event => 1,
            Kind::Namespace => 2,
            Kind::Deployment => 3,
            Kind::ReplicaSet => 4,
            Kind::StatefulSet => 5,
            Kind::Node => 6,
            Kind::Secret => 7,
            Kind::Service => 8,
            Kind::DaemonSet => 9,
            Kind::Job => 10,
            Kind::CronJob => 11,
            Kind::Endpoints => 12,
            Kind::EndpointSlice => 13,
        }
    }

    /// The workload kind this is, as podbay's views and tables read it.
    pub fn workload(self) -> Option<crate::model::workload::WorkloadKind> {
        use crate::model::workload::WorkloadKind;
        Some(match self {
            Kind::Deployment => WorkloadKind::Deployment,
            Kind::ReplicaSet => WorkloadKind::ReplicaSet,
            Kind::StatefulSet => WorkloadKind::StatefulSet,
            Kind::DaemonSet => WorkloadKind::DaemonSet,
            Kind::Job => WorkloadKind::Job,
            Kind::CronJob => WorkloadKind::CronJob,
            _ => return None,
        })
    }
}

/// Namespace (empty for cluster-scoped objects) and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub namespace: Box<str>,
    pub name: Box<str>,
}

impl Key {
    pub fn new(namespace: &str, name: &str) -> Self {
        Key {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

/// One stored object version.
#[derive(Debug)]
pub struct Entry {
    pub key: Key,
    pub resource_version: u64,
    pub json: Bytes,
    pub labels: Box<[(Box<str>, Box<str>)]>,
    /// Values of `Kind::selectable_fields`, same order.
    pub fields: Box<[Box<str>]>,
}

impl Entry {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }

    pub fn field(&self, kind: Kind, name: &str) -> Option<&str> {
        let i = kind.selectable_fields().iter().position(|f| *f == name)?;
        self.fields.get(i).map(|v| &**v)
    }

    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

/// One change, as watchers see it. `previous` lets a selector-filtered watch
/// turn "stopped matching" into DELETED and "started matching" into ADDED.
#[derive(Debug)]
pub struct Change {
    pub kind: Kind,
    pub change_type: ChangeType,
    pub entry: Arc<Entry>,
    pub previous: Option<Arc<Entry>>,
}

impl Change {
    pub fn resource_version(&self) -> u64 {
        self.entry.resource_version
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("already exists")]
    AlreadyExists,
    #[error("conflict")]
    Conflict,
    #[error("{0}")]
    Invalid(String),
}

/// How a watch starts, decided atomically with subscribing to live changes.
pub enum WatchStart {
    /// Every current object, as synthetic ADDED events, then live changes.
    State(Vec<Arc<Entry>>),
    /// Changes after the requested resourceVersion from history, then live.
    History(Vec<Arc<Change>>),
    /// The requested resourceVersion was compacted away.
    Expired { requested: u64, oldest: u64 },
}

const HISTORY_CAPACITY: usize = 100_000;
const LIVE_CHANNEL_CAPACITY: usize = 65_536;

pub struct Store {
    inner: Mutex<Inner>,
    live: broadcast::Sender<Arc<Change>>,
}

struct Inner {
    resource_version: u64,
    collections: [BTreeMap<Key, Arc<Entry>>; Kind::ALL.len()],
    history: VecDeque<Arc<Change>>,
    /// Watches from a resourceVersion below this get 410 Gone.
    compacted_below: u64,
}

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

impl Store {
    pub fn new() -> Self {
        let (live, _) = broadcast::channel(LIVE_CHANNEL_CAPACITY);
        Store {
            inner: Mutex::new(Inner {
                resource_version: 1,
                collections: Default::default(),
                history: VecDeque::new(),
                compacted_below: 0,
            }),
            live,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the maps half-updated
        // (every mutation is a single insert/remove), so poisoning is ignored.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn resource_version(&self) -> u64 {
        self.lock().resource_version
    }

    pub fn get(&self, kind: Kind, key: &Key) -> Option<Arc<Entry>> {
        self.lock().collections[kind.index()].get(key).cloned()
    }

    pub fn len(&self, kind: Kind) -> usize {
        self.lock().collections[kind.index()].len()
    }

    pub fn is_empty(&self, kind: Kind) -> bool {
        self.len(kind) == 0
    }

    /// Up to `limit` entries of `namespace` (all namespaces when `None`) after
    /// `after` that pass `keep`, plus the list's resourceVersion and whether
    /// more remain.
    pub fn list(
        &self,
        kind: Kind,
        namespace: Option<&str>,
        after: Option<&Key>,
        limit: Option<usize>,
        keep: &dyn Fn(&Entry) -> bool,
    ) -> (Vec<Arc<Entry>>, u64, bool) {
        let inner = self.lock();
        let map = &inner.collections[kind.index()];
        let start = match (after, namespace) {
            (Some(key), _) => std::ops::Bound::Excluded(key.clone()),
            (None, Some(ns)) => std::ops::Bound::Included(Key::new(ns, "")),
            (None, None) => std::ops::Bound::Unbounded,
        };
        let limit = limit.unwrap_or(usize::MAX);
        let mut items = Vec::new();
        let mut more = false;
        for (key, entry) in map.range((start, std::ops::Bound::Unbounded)) {
            if let Some(ns) = namespace
                && &*key.namespace != ns
            {
                break;
            }
            if !keep(entry) {
                continue;
            }
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(entry.clone());
        }
        (items, inner.resource_version, more)
    }

    /// How many objects of `kind` there are (in `namespace`): O(1) for
    /// every namespace, a walk of the namespace's otherwise.
    pub fn count(&self, kind: Kind, namespace: Option<&str>) -> usize {
        let inner = self.lock();
        let map = &inner.collections[kind.index()];
        match namespace {
            None => map.len(),
            Some(ns) => map
                .range(Key::new(ns, "")..)
                .take_while(|(key, _)| &*key.namespace == ns)
                .count(),
        }
    }

    /// Subscribes to live changes and decides where the watch starts, under
    /// one lock so no change falls between the two.
    pub fn watch(
        &self,
        kind: Kind,
        from: Option<u64>,
    ) -> (WatchStart, broadcast::Receiver<Arc<Change>>, u64) {
        let inner = self.lock();
        let receiver = self.live.subscribe();
        let start = match from {
            None | Some(0) => {
                WatchStart::State(inner.collections[kind.index()].values().cloned().collect())
            }
            Some(rv) if rv < inner.compacted_below => WatchStart::Expired {
                requested: rv,
                oldest: inner.compacted_below,
            },
            Some(rv) => WatchStart::History(
                inner
                    .history
                    .iter()
                    .filter(|c| c.kind == kind && c.resource_version() > rv)
                    .cloned()
                    .collect(),
            ),
        };
        (start, receiver, inner.resource_version)
    }

    /// Creates an object; its metadata.resourceVersion is set here.
    pub fn create(&self, kind: Kind, key: Key, object: Value) -> Result<Arc<Entry>, StoreError> {
        let mut inner = self.lock();
        if inner.collections[kind.index()].contains_key(&key) {
            return Err(StoreError::AlreadyExists);
        }
        let entry = inner.commit(kind, key, object)?;
        self.publish(&mut inner, kind, ChangeType::Added, entry.clone(), None);
        Ok(entry)
    }

    /// Read-modify-write of one object. `update` gets the current object and
    /// returns the new one, or an error that aborts without a change. When
    /// `expected_rv` is given and differs from the stored one: `Conflict`.
    pub fn update<E>(
        &self,
        kind: Kind,
        key: &Key,
        expected_rv: Option<u64>,
        update: impl FnOnce(Value) -> Result<Value, E>,
    ) -> Result<Result<Arc<Entry>, E>, StoreError> {
        let mut inner = self.lock();
        let current = inner.collections[kind.index()]
            .get(key)
            .cloned()
            .ok_or(StoreError::NotFound)?;
        if expected_rv.is_some_and(|rv| rv != current.resource_version) {
            return Err(StoreError::Conflict);
        }
        let object = match update(current.value()) {
            Ok(object) => object,
            Err(e) => return Ok(Err(e)),
        };
        if object == current.value() {
            // A no-op update does not bump the resourceVersion, as in the apiserver.
            return Ok(Ok(current));
        }
        let entry = inner.commit(kind, key.clone(), object)?;
        self.publish(
            &mut inner,
            kind,
            ChangeType::Modified,
            entry.clone(),
            Some(current),
        );
        Ok(Ok(entry))
    }

    pub fn delete(&self, kind: Kind, key: &Key) -> Result<Arc<Entry>, StoreError> {
        let mut inner = self.lock();
        let current = inner.collections[kind.index()]
            .remove(key)
            .ok_or(StoreError::NotFound)?;
        inner.resource_version += 1;
        let rv = inner.resource_version;
        // Watchers see the last state stamped with the deletion's resourceVersion.
        let mut object = current.value();
        object["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        let json = Bytes::from(serde_json::to_vec(&object).unwrap_or_default());
        let tombstone = Arc::new(Entry {
            key: current.key.clone(),
            resource_version: rv,
            json,
            labels: current.labels.clone(),
            fields: current.fields.clone(),
        });
        self.publish(
            &mut inner,
            kind,
            ChangeType::Deleted,
            tombstone.clone(),
            Some(current),
        );
        Ok(tombstone)
    }

    /// Forgets all history: any watch resuming from an older resourceVersion
    /// gets 410 Gone (a fault knob, and what etcd compaction does).
    pub fn compact(&self) {
        let mut inner = self.lock();
        inner.history.clear();
        inner.compacted_below = inner.resource_version + 1;
    }

    fn publish(
        &self,
        inner: &mut Inner,
        kind: Kind,
        change_type: ChangeType,
        entry: Arc<Entry>,
        previous: Option<Arc<Entry>>,
    ) {
        let change = Arc::new(Change {
            kind,
            change_type,
            entry,
            previous,
        });
        if inner.history.len() == HISTORY_CAPACITY
            && let Some(oldest) = inner.history.pop_front()
        {
            inner.compacted_below = oldest.resource_version() + 1;
        }
        inner.history.push_back(change.clone());
        // No receivers is fine: nobody is watching.
        let _ = self.live.send(change);
    }
}

impl Inner {
    fn commit(
        &mut self,
        kind: Kind,
        key: Key,
        mut object: Value,
    ) -> Result<Arc<Entry>, StoreError> {
        self.resource_version += 1;
        let rv = self.resource_version;
        let metadata = object
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .ok_or_else(|| StoreError::Invalid("object has no metadata".into()))?;
        metadata.insert("resourceVersion".into(), Value::String(rv.to_string()));
        let entry = Arc::new(index_entry(kind, key, rv, &object));
        self.collections[kind.index()].insert(entry.key.clone(), entry.clone());
        Ok(entry)
    }
}

/// Builds an entry: serializes the object and extracts labels and fields.
pub fn index_entry(kind: Kind, key: Key, resource_version: u64, object: &Value) -> Entry {
    let labels = object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.as_str().into(), v.as_str().unwrap_or_default().into()))
                .collect()
        })
        .unwrap_or_default();
    let fields = kind
        .selectable_fields()
        .iter()
        .map(|path| field_value(object, path).into_boxed_str())
        .collect();
    Entry {
        key,
        resource_version,
        json: Bytes::from(serde_json::to_vec(object).unwrap_or_default()),
        labels,
        fields,
    }
}

/// A selectable field's value as the apiserver renders it (absent = "").
fn field_value(object: &Value, path: &str) -> String {
    if path == "source" {
        // Events select on `source` = source.component.
        return field_value(object, "source.component");
    }
    let pointer = format!("/{}", path.replace('.', "/"));
    match object.pointer(&pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Null) | None => {
            if path == "spec.hostNetwork" {
                "false".into()
            } else {
                String::new()
            }
        }
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(ns: &str, name: &str, phase: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"nodeName": "node-1", "containers": []},
            "status": {"phase": phase},
        })
    }

    #[test]
    fn every_write_bumps_the_resource_version_and_indexes_fields() {
        let store = Store::new();
        let a = store
            .create(Kind::Pod, Key::new("ns", "a"), pod("ns", "a", "Pending"))
            .unwrap();
        assert_eq!(a.resource_version, 2);
        assert_eq!(a.value()["metadata"]["resourceVersion"], "2");
        assert_eq!(a.field(Kind::Pod, "status.phase"), Some("Pending"));
        assert_eq!(a.field(Kind::Pod, "spec.hostNetwork"), Some("false"));
        assert_eq!(a.label("app"), Some("a"));
        let b = store
            .update::<()>(Kind::Pod, &Key::new("ns", "a"), Some(2), |mut p| {
                p["status"]["phase"] = json!("Running");
                Ok(p)
            })
            .unwrap()
            .unwrap();
        assert_eq!(b.resource_version, 3);
        assert_eq!(b.field(Kind::Pod, "status.phase"), Some("Running"));
    }

    #[test]
    fn stale_update_is_a_conflict_and_no_op_update_keeps_the_version() {
        let store = Store::new();
        store
            .create(Kind::Pod, Key::new("ns", "a"), pod("ns", "a", "Running"))
            .unwrap();
        let stale = store.update::<()>(Kind::Pod, &Key::new("ns", "a"), Some(1), Ok);
        assert_eq!(stale.err(), Some(StoreError::Conflict));
        let same = store
            .update::<()>(Kind::Pod, &Key::new("ns", "a"), None, Ok)
            .unwrap()
            .unwrap();
        assert_eq!(same.resource_version, 2);
        assert_eq!(store.resource_version(), 2);
    }

    #[test]
    fn list_pages_in_key_order_within_a_namespace() {
        let store = Store::new();
        for (ns, name) in [("b", "x"), ("a", "2"), ("a", "1"), ("a", "3"), ("c", "y")] {
            store
                .create(Kind::Pod, Key::new(ns, name), pod(ns, name, "Running"))
                .unwrap();
        }
        let (page, _, more) = store.list(Kind::Pod, Some("a"), None, Some(2), &|_| true);
        let names: Vec<_> = page.iter().map(|e| &*e.key.name).collect();
        assert_eq!(names, ["1", "2"]);
        assert!(more);
        let (rest, _, more) =
            store.list(Kind::Pod, Some("a"), Some(&page[1].key), Some(2), &|_| true);
        assert_eq!(rest.len(), 1);
        assert_eq!(&*rest[0].key.name, "3");
        assert!(!more);
        let (all, rv, _) = store.list(Kind::Pod, None, None, None, &|_| true);
        assert_eq!(all.len(), 5);
        assert_eq!(rv, 6);
    }

    #[test]
    fn watch_resumes_from_history_and_expires_after_compaction() {
        let store = Store::new();
        store
            .create(Kind::Pod, Key::new("ns", "a"), pod("ns", "a", "Running"))
            .unwrap();
        store
            .create(Kind::Pod, Key::new("ns", "b"), pod("ns", "b", "Running"))
            .unwrap();
        store.delete(Kind::Pod, &Key::new("ns", "a")).unwrap();
        match store.watch(Kind::Pod, Some(2)).0 {
            WatchStart::History(changes) => {
                let types: Vec<_> = changes
                    .iter()
                    .map(|c| (c.change_type, c.resource_version()))
                    .collect();
                assert_eq!(types, [(ChangeType::Added, 3), (ChangeType::Deleted, 4)]);
            }
            _ => panic!("expected history"),
        }
        store.compact();
        assert!(matches!(
            store.watch(Kind::Pod, Some(3)).0,
            WatchStart::Expired {
                requested: 3,
                oldest: 5
            }
        ));
        match store.watch(Kind::Pod, None).0 {
            WatchStart::State(entries) => assert_eq!(entries.len(), 1),
            _ => panic!("expected state"),
        }
    }

    #[tokio::test]
    async fn live_changes_reach_subscribers_with_the_previous_state() {
        let store = Store::new();
        let (_, mut rx, _) = store.watch(Kind::Pod, None);
        store
            .create(Kind::Pod, Key::new("ns", "a"), pod("ns", "a", "Pending"))
            .unwrap();
        store
            .update::<()>(Kind::Pod, &Key::new("ns", "a"), None, |mut p| {
                p["status"]["phase"] = json!("Running");
                Ok(p)
            })
            .unwrap()
            .unwrap();
        let added = rx.recv().await.unwrap();
        assert_eq!(added.change_type, ChangeType::Added);
        let modified = rx.recv().await.unwrap();
        assert_eq!(modified.change_type, ChangeType::Modified);
        let previous = modified.previous.as_ref().unwrap();
        assert_eq!(previous.field(Kind::Pod, "status.phase"), Some("Pending"));
    }
}

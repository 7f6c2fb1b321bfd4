//! Port-forwards that outlive their pod. A forward listens on local ports
//! and, for each connection it accepts, opens a `pods/portforward`
//! WebSocket (kube-rs, the `v4.channel.k8s.io` protocol) to the pod it
//! reaches now. A live feed of the owner's pods ([`super::feed`]) tells it
//! when that pod goes; it then picks another ([`choose`]) and says so. A
//! connection accepted while no pod is ready waits, up to
//! [`WAIT_FOR_POD`]; one whose pod refused it before answering a byte is
//! tried again on the next pod, what the client sent replayed.
//!
//! The connections to one pod share one session ([`super::tunnel`]: SPDY
//! in a WebSocket, as kubectl since 1.31), where a client's half-close
//! reaches the pod. Where the server does not take that, each connection
//! is a WebSocket of its own (the channel protocol, which has no
//! half-close: the pod's answer is awaited while it keeps coming).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::watcher;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

use super::errors::describe;
use crate::model::PodDetail;
use crate::model::feed::Feed;
use crate::model::forward::{
    Candidate, DeclaredPort, ForwardTarget, PortMapping, RemotePort, choose, declared_ports,
    resolve_port, through_service,
};
pub use crate::model::forward::{ForwardEvent, ForwardRequest};
use crate::model::owner::{OwnerKind, spec_selector};

/// How long an accepted connection waits for a ready pod.
pub const WAIT_FOR_POD: Duration = Duration::from_secs(30);
/// What a connection may have sent, unanswered, and still be replayed on
/// another pod.
const REPLAY_LIMIT: usize = 1 << 20;
const COPY_CHUNK: usize = 64 << 10;
/// After a client's end, how long a silent pod is given to finish its
/// answer.
const LINGER: Duration = Duration::from_secs(5);

/// Running totals, read by the Forwards view.
#[derive(Debug, Default)]
pub struct ForwardStats {
    pub open: AtomicUsize,
    pub to_pod: AtomicU64,
    pub from_pod: AtomicU64,
}

/// The pod a forward reaches now, with its declared ports.
#[derive(Debug, Clone, PartialEq)]
struct Reach {
    pod: String,
    ports: Vec<DeclaredPort>,
}

/// A pod as the forward tracks it.
#[derive(Debug, Clone)]
struct Tracked {
    candidate: Candidate,
    ports: Vec<DeclaredPort>,
}

/// Which pods a forward may reach.
struct Pool {
    /// The label or field selector its feed watches.
    config: watcher::Config,
    /// Only this pod (a StatefulSet's ordinal, a pod with no owner).
    only: Option<String>,
    /// The forward ends when `only` is deleted (it has no owner to bring
    /// it back).
    ends_with_pod: bool,
    /// The label selector it follows, said while no pod matches it.
    selector: Option<String>,
}

/// Runs a forward until it ends (a pod with no owner is gone, a port
/// cannot be bound) or its task is dropped.
pub async fn run(
    client: kube::Client,
    request: ForwardRequest,
    events: mpsc::UnboundedSender<ForwardEvent>,
    stats: Arc<ForwardStats>,
) {
    if let Err(sentence) = forward(client, &request, &events, stats).await {
        let _ = events.send(ForwardEvent::Ended(sentence));
    }
}

async fn forward(
    client: kube::Client,
    request: &ForwardRequest,
    events: &mpsc::UnboundedSender<ForwardEvent>,
    stats: Arc<ForwardStats>,
) -> Result<(), String> {
    let namespace = &request.namespace;
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let (pool, ports) = pool(&client, namespace, &request.target, &request.ports).await?;
    let (reach_tx, mut reach) = watch::channel::<Option<Reach>>(None);
    let (gone_tx, mut gone) = mpsc::channel::<String>(1);
    // A pod named on the command line is the one reached first (its
    // owner's others are for when it goes).
    let named = match &request.target {
        ForwardTarget::Pod(name) => Some(name.clone()),
        ForwardTarget::Owner { .. } | ForwardTarget::Service(_) => None,
    };
    let tracker = tokio::spawn(track(
        pods.clone(),
        (pool, named),
        namespace.clone(),
        reach_tx,
        gone_tx,
        events.clone(),
    ));
    let _tracker = AbortOnDrop(tracker);
    // Named ports are read from the first pod reached, as kubectl does;
    // numbered ones listen at once, even while no pod is ready.
    let named = ports
        .iter()
        .any(|m| matches!(m.remote, RemotePort::Name(_)));
    let first_ports = if named {
        let first = tokio::select! {
            first = reach.wait_for(Option::is_some) => first.map_err(|_| "the pod feed ended".to_string())?.clone(),
            Some(why) = gone.recv() => return Err(why),
        };
        first.ok_or("the pod feed ended")?.ports
    } else {
        Vec::new()
    };
    let mut listeners = Vec::new();
    // Each translated mapping beside the one asked for (a Service's port
    // is what the user gives again).
    for (mapping, asked) in ports.iter().zip(&request.ports) {
        let remote = resolve_port(&mapping.remote, &first_ports)?;
        let local = mapping.local.unwrap_or(remote);
        let again = &asked.remote;
        for &address in &request.addresses {
            let listener = TcpListener::bind((address, local)).await.map_err(|e| {
                let at = SocketAddr::from((address, local));
                match e.kind() {
                    std::io::ErrorKind::AddrInUse => format!(
                        "cannot listen on {at}: something else listens there; give another local port ({}:{again}), or 0:{again} for a free one",
                        local.saturating_add(1).max(1024)
                    ),
                    std::io::ErrorKind::PermissionDenied => format!(
                        "cannot listen on {at}: ports below 1024 need privilege; give one above ({}:{again}), or 0:{again} for a free one",
                        u32::from(local) + 8000
                    ),
                    _ => format!("cannot listen on {at}: {e}"),
                }
            })?;
            let local = listener.local_addr().map_err(|e| e.to_string())?;
            let _ = events.send(ForwardEvent::Listening { local, remote });
            listeners.push((listener, mapping.remote.clone(), remote));
        }
    }
    let mut accepting = tokio::task::JoinSet::new();
    let sessions = Arc::new(super::tunnel::Sessions::new(client.clone(), namespace));
    for (listener, remote, number) in listeners {
        let connection = Connection {
            pods: pods.clone(),
            sessions: sessions.clone(),
            reach: reach.clone(),
            remote,
            first_number: number,
            events: events.clone(),
            stats: stats.clone(),
        };
        accepting.spawn(accept(listener, connection));
    }
    tokio::select! {
        Some(why) = gone.recv() => Err(why),
        Some(ended) = accepting.join_next() => Err(match ended {
            Ok(Err(e)) => format!("stopped accepting connections: {e}"),
            Ok(Ok(())) => "stopped accepting connections".to_string(),
            Err(e) => format!("stopped accepting connections: {e}"),
        }),
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The pods a target may reach, as kubectl resolves it, and the ports to
/// reach on them: an owner's pods by its selector; a Service's by its
/// selector, each port its Service port translated; a pod of a ReplicaSet
/// by its Deployment's (else the ReplicaSet's); a StatefulSet's pod is only
/// itself (its ordinal comes back); a pod with no owner is only itself, and
/// the forward ends with it.
async fn pool(
    client: &kube::Client,
    namespace: &str,
    target: &ForwardTarget,
    ports: &[PortMapping],
) -> Result<(Pool, Vec<PortMapping>), String> {
    let pool = match target {
        ForwardTarget::Service(name) => {
            let resource = ApiResource::erase::<k8s_openapi::api::core::v1::Service>(&());
            let service = object(client, namespace, &resource, "svc", name).await?;
            let through = through_service(name, &service.data, ports)?;
            return Ok((by_labels(through.selector, None), through.ports));
        }
        ForwardTarget::Owner { kind, name } => {
            by_labels(owner_selector(client, namespace, *kind, name).await?, None)
        }
        ForwardTarget::Pod(name) => pod_pool(client, namespace, name).await?,
    };
    Ok((pool, ports.to_vec()))
}

/// A pod's pool: its owner's pods, or itself.
async fn pod_pool(client: &kube::Client, namespace: &str, name: &str) -> Result<Pool, String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let pod = super::objects::get(&pods, name)
        .await
        .map_err(|e| match &e {
            kube::Error::Api(status) if status.code == 404 => {
                format!("pod {name} not found in namespace {namespace}.")
            }
            _ => describe(&e).sentence.into_string(),
        })?;
    let owner = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true));
    let alone = Pool {
        config: watcher::Config::default().fields(&format!("metadata.name={name}")),
        only: Some(name.to_string()),
        ends_with_pod: true,
        selector: None,
    };
    let Some(owner) = owner else {
        return Ok(alone);
    };
    match owner.kind.as_str() {
        "ReplicaSet" => {
            let rs = owner_object(client, namespace, OwnerKind::ReplicaSet, &owner.name).await;
            let deployment = rs.as_ref().ok().and_then(|rs| {
                rs.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .find(|r| r.controller == Some(true) && r.kind == "Deployment")
                    .map(|r| r.name.clone())
            });
            let selector = match deployment {
                Some(d) => owner_selector(client, namespace, OwnerKind::Deployment, &d).await,
                None => rs.and_then(|rs| selector_of(&rs, "ReplicaSet", &owner.name, namespace)),
            };
            // Without the owner's selector (not allowed to read it),
            // the pod alone.
            Ok(selector.map_or(alone, |s| by_labels(s, None)))
        }
        "StatefulSet" => {
            let selector =
                owner_selector(client, namespace, OwnerKind::StatefulSet, &owner.name).await;
            Ok(selector.map_or(
                Pool {
                    ends_with_pod: false,
                    ..alone
                },
                |s| by_labels(s, Some(name.to_string())),
            ))
        }
        // A static pod's mirror: its kubelet brings it back.
        "Node" => Ok(Pool {
            ends_with_pod: false,
            ..alone
        }),
        _ => Ok(alone),
    }
}

/// The pods a label query selects.
fn by_labels(query: String, only: Option<String>) -> Pool {
    Pool {
        config: watcher::Config::default().labels(&query),
        only,
        ends_with_pod: false,
        selector: Some(query),
    }
}

async fn owner_object(
    client: &kube::Client,
    namespace: &str,
    kind: OwnerKind,
    name: &str,
) -> Result<DynamicObject, String> {
    let gvk = GroupVersionKind::gvk(kind.group(), "v1", kind.kind());
    let resource = ApiResource::from_gvk_with_plural(&gvk, kind.plural());
    object(client, namespace, &resource, kind.short(), name).await
}

/// The object `short/name` (`svc/web`) of `resource`, or the sentence why not.
async fn object(
    client: &kube::Client,
    namespace: &str,
    resource: &ApiResource,
    short: &str,
    name: &str,
) -> Result<DynamicObject, String> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, resource);
    api.get(name).await.map_err(|e| match &e {
        kube::Error::Api(status) if status.code == 404 => {
            format!("{short}/{name} not found in namespace {namespace}.")
        }
        _ => describe(&e).sentence.into_string(),
    })
}

async fn owner_selector(
    client: &kube::Client,
    namespace: &str,
    kind: OwnerKind,
    name: &str,
) -> Result<String, String> {
    let object = owner_object(client, namespace, kind, name).await?;
    selector_of(&object, kind.kind(), name, namespace)
}

fn selector_of(
    object: &DynamicObject,
    kind: &str,
    name: &str,
    namespace: &str,
) -> Result<String, String> {
    match spec_selector(&object.data) {
        Some(query) => Ok(query),
        None => Err(format!(
            "{kind} {name} in namespace {namespace} has no usable spec.selector; forward to one of its pods by name."
        )),
    }
}

/// Follows the pool's pods and publishes the one to reach.
async fn track(
    pods: Api<Pod>,
    (pool, named): (Pool, Option<String>),
    namespace: String,
    reach: watch::Sender<Option<Reach>>,
    gone: mpsc::Sender<String>,
    events: mpsc::UnboundedSender<ForwardEvent>,
) {
    let (tx, mut rx) = super::feed::channel();
    // The pod view's feed, projection and all (one copy of the feed's code
    // in the binary): a forward follows a handful of pods.
    let detail: fn(&Pod) -> PodDetail = PodDetail::from_pod;
    let feed = tokio::spawn(super::feed::run(
        pods,
        pool.config.clone(),
        Some(namespace.clone()),
        detail,
        tx,
    ));
    let _feed = AbortOnDrop(feed);
    let mut known: BTreeMap<String, Tracked> = BTreeMap::new();
    let mut reached_once = false;
    let mut waiting_said = false;
    while let Some(update) = rx.recv().await {
        match update {
            Feed::Listed { rows, .. } => {
                known = rows
                    .iter()
                    .map(|d| project(&d.manifest))
                    .map(|t| (t.candidate.name.clone(), t))
                    .collect();
            }
            Feed::Applied(d) => {
                let t = project(&d.manifest);
                known.insert(t.candidate.name.clone(), t);
            }
            Feed::Deleted(d) => {
                let t = project(&d.manifest);
                known.remove(&t.candidate.name);
                if pool.ends_with_pod && pool.only.as_deref() == Some(t.candidate.name.as_str()) {
                    let _ = gone
                        .send(format!(
                            "pod {namespace}/{} was deleted and has no owner to replace it; the forward has stopped.",
                            t.candidate.name
                        ))
                        .await;
                    return;
                }
            }
            Feed::Forbidden(denied) => {
                let _ = gone.send(denied.sentence()).await;
                return;
            }
            Feed::Reconnecting(why) => {
                let _ = events.send(ForwardEvent::Waiting(why.into_string()));
                continue;
            }
            _ => continue,
        }
        let candidates: Vec<Candidate> = known.values().map(|t| t.candidate.clone()).collect();
        let current = reach.borrow().as_ref().map(|r| r.pod.clone());
        let wanted = current
            .clone()
            .or_else(|| named.clone().filter(|_| !reached_once));
        let chosen = choose(&candidates, wanted.as_deref(), pool.only.as_deref())
            .and_then(|c| known.get(&c.name))
            .map(|t| Reach {
                pod: t.candidate.name.clone(),
                ports: t.ports.clone(),
            });
        if chosen.as_ref().map(|r| &r.pod) == current.as_ref() && (chosen.is_some() || waiting_said)
        {
            continue;
        }
        match &chosen {
            Some(r) => {
                let _ = events.send(ForwardEvent::Reaching {
                    pod: format!("{namespace}/{}", r.pod),
                    switched: reached_once,
                });
                reached_once = true;
                waiting_said = false;
            }
            None if !waiting_said => {
                let of = match (&pool.only, &pool.selector) {
                    (Some(name), _) => format!("pod {namespace}/{name} to be Running and Ready"),
                    (None, Some(selector)) if known.is_empty() => {
                        format!("a pod: none in {namespace} matches {selector}")
                    }
                    (None, _) => "a Running, Ready pod".to_string(),
                };
                let _ = events.send(ForwardEvent::Waiting(format!(
                    "waiting for {of}; new connections wait up to {} s",
                    WAIT_FOR_POD.as_secs()
                )));
                waiting_said = true;
            }
            None => {}
        }
        reach.send_replace(chosen);
    }
}

fn project(pod: &Pod) -> Tracked {
    let status = pod.status.as_ref();
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    let ports = declared_ports(pod);
    Tracked {
        candidate: Candidate {
            name: pod.metadata.name.clone().unwrap_or_default(),
            running: status.and_then(|s| s.phase.as_deref()) == Some("Running"),
            ready,
            terminating: pod.metadata.deletion_timestamp.is_some(),
            started: status
                .and_then(|s| s.start_time.as_ref())
                .map(|t| t.0.to_string())
                .unwrap_or_default(),
        },
        ports,
    }
}

/// What each accepted connection needs.
#[derive(Clone)]
struct Connection {
    pods: Api<Pod>,
    sessions: Arc<super::tunnel::Sessions>,
    reach: watch::Receiver<Option<Reach>>,
    remote: RemotePort,
    /// The number the remote port had on the first pod.
    first_number: u16,
    events: mpsc::UnboundedSender<ForwardEvent>,
    stats: Arc<ForwardStats>,
}

async fn accept(listener: TcpListener, connection: Connection) -> std::io::Result<()> {
    let local_port = listener.local_addr()?.port();
    // The connections end with the forward (this task is aborted).
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next() => continue,
        };
        let client = match accepted {
            Ok((client, _)) => client,
            // Out of descriptors or buffers, a connection reset before
            // accept: the listener itself is fine.
            Err(e) if is_transient(&e) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let _ = client.set_nodelay(true);
        let _ = connection.events.send(ForwardEvent::Accepted(local_port));
        let connection = connection.clone();
        connections.spawn(async move {
            let _open = OpenConnection::count(&connection.stats);
            if let Err(sentence) = connection.serve(client).await {
                let _ = connection
                    .events
                    .send(ForwardEvent::ConnectionFailed(sentence));
            }
        });
    }
}

/// One open connection in the totals, for as long as it lives (however its
/// task ends).
struct OpenConnection(Arc<ForwardStats>);

impl OpenConnection {
    fn count(stats: &Arc<ForwardStats>) -> Self {
        stats.open.fetch_add(1, Ordering::Relaxed);
        OpenConnection(stats.clone())
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    ) || e.raw_os_error() == Some(24)
}

/// How one attempt on one pod ended.
enum Attempt {
    Done,
    /// The pod's side never connected (the upgrade failed, or the kubelet
    /// could not dial the port): nothing reached the pod, so what the
    /// client sent may go to the next one. `final_answer` when trying
    /// again cannot help (a 4xx answer). `port_closed` when the pod itself
    /// refused the port (nothing listens there). `again` when the same pod
    /// may take it next time (its session ended before the kubelet took the
    /// connection: a new session is opened).
    Refused {
        why: String,
        final_answer: bool,
        port_closed: bool,
        again: bool,
    },
    /// Cut after the pod's side had connected: the client's connection
    /// closes.
    Cut(String),
}

/// Whether the kubelet's error says its dial never connected (so the pod
/// received nothing): containerd's "failed to connect", a sandbox that is
/// gone or not running, or a session that ended before the kubelet took
/// the connection.
fn never_connected(text: &str) -> bool {
    text.contains(PORT_REFUSED)
        || text.contains("in store: not found")
        || text.contains("is not running")
        || text == super::tunnel::NOT_TAKEN
}

/// containerd's words for a port of a running pod that refused the dial.
const PORT_REFUSED: &str = "failed to connect to localhost:";

/// How long a refused port waits for its pod to be replaced before the
/// refusal is the answer.
const REFUSED_GRACE: Duration = Duration::from_millis(300);

/// How long opening a stream to the pod may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(15);

/// An open stream to a pod's port.
struct PodStream {
    io: tokio::io::DuplexStream,
    /// What the kubelet said on the connection's error stream, if anything.
    error: std::pin::Pin<Box<dyn Future<Output = Option<String>> + Send>>,
    /// The connection's own WebSocket (the channel protocol), which can say
    /// why it broke; `None` through the session to the pod.
    forwarder: Option<kube::api::Portforwarder>,
}

impl Connection {
    /// A stream to `port` on `pod`: through the forward's session to the
    /// pod, or a WebSocket of its own where the server does not take that;
    /// `None` when the server gave no stream for the port.
    async fn open(&self, pod: &str, port: u16) -> Result<Option<PodStream>, kube::Error> {
        if let Some(stream) = self.sessions.open(pod, port).await? {
            let error = stream.error;
            return Ok(Some(PodStream {
                io: stream.io,
                error: Box::pin(async move { error.await.ok().flatten() }),
                forwarder: None,
            }));
        }
        let mut forwarder = self.pods.portforward(pod, &[port]).await?;
        let (Some(io), Some(error)) = (forwarder.take_stream(port), forwarder.take_error(port))
        else {
            forwarder.abort();
            return Ok(None);
        };
        Ok(Some(PodStream {
            io,
            error: Box::pin(error),
            forwarder: Some(forwarder),
        }))
    }

    async fn serve(&self, mut client: TcpStream) -> Result<(), String> {
        let mut reach = self.reach.clone();
        let mut sent: Vec<u8> = Vec::new();
        let mut backoff = Duration::from_millis(100);
        let deadline = tokio::time::Instant::now() + WAIT_FOR_POD;
        let mut last_refusal: Option<(String, String)> = None;
        loop {
            let waited = tokio::time::timeout_at(deadline, reach.wait_for(Option::is_some))
                .await
                .map(|r| r.map(|target| target.clone()));
            let target = match waited {
                Ok(Ok(target)) => target.ok_or("no pod")?,
                Ok(Err(_)) => return Err("the forward stopped".into()),
                Err(_) => {
                    return Err(last_refusal.map(|(_, why)| why).unwrap_or_else(|| {
                        format!(
                            "no pod became ready within {} s; the connection was closed",
                            WAIT_FOR_POD.as_secs()
                        )
                    }));
                }
            };
            // A pod that refused is tried again only once another is
            // chosen: the same port on the same pod says the same.
            if let Some((pod, why)) = &last_refusal
                && *pod == target.pod
            {
                let changed = tokio::time::timeout_at(deadline, reach.changed()).await;
                match changed {
                    Ok(Ok(())) => continue,
                    _ => return Err(why.clone()),
                }
            }
            let number = match &self.remote {
                RemotePort::Number(n) => *n,
                RemotePort::Name(_) => {
                    resolve_port(&self.remote, &target.ports).unwrap_or(self.first_number)
                }
            };
            match self
                .attempt(&mut client, &target.pod, number, &mut sent, deadline)
                .await
            {
                Attempt::Done => return Ok(()),
                Attempt::Cut(why) => return Err(why),
                Attempt::Refused {
                    why,
                    final_answer,
                    port_closed,
                    again,
                } => {
                    if final_answer
                        || sent.len() > REPLAY_LIMIT
                        || tokio::time::Instant::now() >= deadline
                    {
                        return Err(why);
                    }
                    // Nothing listens on the port of a pod that stays
                    // chosen: that is the answer (as kubectl says it, at
                    // once). A pod on its way out has been replaced by
                    // then, or is within a moment.
                    if port_closed {
                        let moved_on = tokio::time::timeout(
                            REFUSED_GRACE,
                            reach.wait_for(|now| now.as_ref().is_none_or(|t| t.pod != target.pod)),
                        )
                        .await;
                        if !matches!(moved_on, Ok(Ok(_))) {
                            return Err(why);
                        }
                    }
                    if !again {
                        last_refusal = Some((target.pod.clone(), why));
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// One try on `pod`: everything the client sent so far (`sent`) goes
    /// first, then both ways at once until the pod's side ends.
    async fn attempt(
        &self,
        client: &mut TcpStream,
        pod: &str,
        port: u16,
        sent: &mut Vec<u8>,
        deadline: tokio::time::Instant,
    ) -> Attempt {
        let opened = tokio::time::timeout_at(
            deadline.min(tokio::time::Instant::now() + OPEN_TIMEOUT),
            self.open(pod, port),
        )
        .await;
        let PodStream {
            io: stream,
            error,
            forwarder,
        } = match opened {
            Ok(Ok(Some(opened))) => opened,
            Ok(Ok(None)) => {
                return Attempt::Refused {
                    why: format!("pod {pod}: no stream for port {port}"),
                    final_answer: false,
                    port_closed: false,
                    again: false,
                };
            }
            Ok(Err(e)) => {
                let final_answer = matches!(&e, kube::Error::Api(s) if (400..500).contains(&s.code) && s.code != 404 && s.code != 429);
                return Attempt::Refused {
                    why: format!("pod {pod}: {}", describe(&e).sentence),
                    final_answer,
                    port_closed: false,
                    again: false,
                };
            }
            Err(_) => {
                return Attempt::Refused {
                    why: format!(
                        "pod {pod}: the API server did not open the stream within {} s",
                        OPEN_TIMEOUT.as_secs()
                    ),
                    final_answer: false,
                    port_closed: false,
                    again: false,
                };
            }
        };
        let (mut from_pod, mut to_pod) = tokio::io::split(stream);
        let (mut client_read, mut client_write) = client.split();
        let stats = &self.stats;
        let answered = std::sync::atomic::AtomicU64::new(0);
        // The client's end: a session tells the pod, which ends its side
        // when it has answered. The channel protocol cannot (it has no
        // half-close), so the pod's answer is awaited while it keeps
        // coming, up to LINGER of silence.
        let half_close = forwarder.is_none();
        let client_done = tokio::sync::Notify::new();
        let client_finished = std::sync::atomic::AtomicBool::new(false);
        let upstream = async {
            if !sent.is_empty() && to_pod.write_all(sent).await.is_err() {
                return;
            }
            let mut buf = vec![0u8; COPY_CHUNK];
            loop {
                match client_read.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if answered.load(Ordering::Relaxed) == 0 && sent.len() <= REPLAY_LIMIT {
                            sent.extend_from_slice(&buf[..n]);
                        }
                        if to_pod.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                        stats.to_pod.fetch_add(n as u64, Ordering::Relaxed);
                    }
                }
            }
            client_finished.store(true, Ordering::Relaxed);
            if half_close {
                let _ = to_pod.shutdown().await;
            } else {
                client_done.notify_one();
            }
            std::future::pending::<()>().await;
        };
        let downstream = async {
            let mut buf = vec![0u8; COPY_CHUNK];
            let mut lingering = false;
            loop {
                let read = async {
                    if lingering {
                        tokio::time::timeout(LINGER, from_pod.read(&mut buf)).await
                    } else {
                        tokio::select! {
                            read = from_pod.read(&mut buf) => Ok(read),
                            () = client_done.notified() => Ok(Err(std::io::ErrorKind::Interrupted.into())),
                        }
                    }
                };
                match read.await {
                    // Silent past the linger: done.
                    Err(_) => return true,
                    Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => lingering = true,
                    Ok(Ok(0)) | Ok(Err(_)) => return false,
                    Ok(Ok(n)) => {
                        answered.fetch_add(n as u64, Ordering::Relaxed);
                        if client_write.write_all(&buf[..n]).await.is_err() {
                            return true;
                        }
                        stats.from_pod.fetch_add(n as u64, Ordering::Relaxed);
                    }
                }
            }
        };
        // The upstream ends only when the pod's side refuses a write: that
        // side has ended, and why is found below as for a read's end.
        let finished = tokio::select! {
            () = upstream => false,
            done = downstream => done,
        };
        if finished {
            if let Some(forwarder) = forwarder {
                forwarder.abort();
            }
            return Attempt::Done;
        }
        // The pod's side ended. Why, if the kubelet said (it writes the
        // error before it closes).
        let answered = answered.load(Ordering::Relaxed);
        let wait = match answered {
            0 => Duration::from_millis(500),
            _ => Duration::ZERO,
        };
        let said = tokio::time::timeout(wait, error).await.ok().flatten();
        // Nothing said: the stream may have broken on a frame the
        // forwarder would not take (a wrong channel, a bad first frame):
        // its own error is the reason.
        // The forwarder that broke has ended, but under load its end can
        // take a moment to be seen: give it longer when nothing was
        // answered (where a broken stream is likeliest) than after an
        // answer (where the wait is every normal close's latency).
        let join_wait = match answered {
            0 => Duration::from_secs(2),
            _ => Duration::from_millis(200),
        };
        let broke = match forwarder {
            Some(forwarder) if said.is_none() => {
                match tokio::time::timeout(join_wait, forwarder.join()).await {
                    Ok(Err(e)) => Some(e.to_string()),
                    _ => None,
                }
            }
            Some(forwarder) => {
                forwarder.abort();
                None
            }
            None => None,
        };
        if let Some(why) = broke {
            return Attempt::Cut(format!(
                "pod {pod}: the API server's stream broke ({why}); the connection was closed"
            ));
        }
        match said {
            Some(text) if answered == 0 && never_connected(&text) => Attempt::Refused {
                why: format!("pod {pod}: {}", short_error(&text)),
                final_answer: false,
                port_closed: text.contains(PORT_REFUSED),
                again: text == super::tunnel::NOT_TAKEN,
            },
            // A client that had finished and was answered lost nothing.
            Some(_) if client_finished.load(Ordering::Relaxed) && answered > 0 => {
                let _ = client_write.shutdown().await;
                Attempt::Done
            }
            Some(text) => Attempt::Cut(format!("pod {pod}: {}", short_error(&text))),
            None => {
                let _ = client_write.shutdown().await;
                Attempt::Done
            }
        }
    }
}

/// The kubelet's error without its sandbox ids: what failed, and why.
fn short_error(text: &str) -> String {
    if let Some(at) = text.find("failed to connect to localhost:") {
        let rest = &text[at..];
        let port = rest
            .trim_start_matches("failed to connect to localhost:")
            .split(' ')
            .next()
            .unwrap_or("?");
        let why = rest
            .split("connect: ")
            .nth(1)
            .map(|w| w.split(" IPv6").next().unwrap_or(w).trim())
            .unwrap_or("failed");
        return format!("nothing accepts connections on port {port} in the pod ({why})");
    }
    if text.contains("not found") || text.contains("not running") {
        return "the pod's sandbox is gone".into();
    }
    crate::model::text::sanitize(text.trim()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubelets_error_reads_as_one_short_sentence() {
        let text = "error forwarding port 8080 to pod 25bf05d0b8ec, uid : failed to execute portforward in network namespace \"/var/run/netns/cni-2f80\": failed to connect to localhost:8080 inside namespace \"25bf\", IPv4: dial tcp4 127.0.0.1:8080: connect: connection refused IPv6 dial tcp6 [::1]:8080: connect: connection refused ";
        assert_eq!(
            short_error(text),
            "nothing accepts connections on port 8080 in the pod (connection refused)"
        );
        assert_eq!(
            short_error("failed to find sandbox \"ab\" in store: not found"),
            "the pod's sandbox is gone"
        );
    }
}

//! Port-forwards that outlive their pod. A forward listens on local ports
//! and, for each connection it accepts, opens a `pods/portforward`
//! WebSocket (kube-rs, the `v4.channel.k8s.io` protocol) to the pod it
//! reaches now. A live feed of the owner's pods ([`super::feed`]) tells it
//! when that pod goes; it then picks another ([`choose`]) and says so. A
//! connection accepted while no pod is ready waits, up to
//! [`WAIT_FOR_POD`]; one whose pod refused it before answering a byte is
//! tried again on the next pod, what the client sent replayed.
//!
//! One WebSocket per connection: the channel protocol has no streams
//! within a session, and no half-close, so a client's half-close is not
//! passed on (the pod's answer still comes back).

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::watcher;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

use super::errors::describe;
use crate::model::feed::Feed;
use crate::model::forward::{
    Candidate, DeclaredPort, ForwardTarget, PortMapping, RemotePort, choose, resolve_port,
};
use crate::model::owner::{OwnerKind, selector_query};

/// How long an accepted connection waits for a ready pod.
pub const WAIT_FOR_POD: Duration = Duration::from_secs(30);
/// What a connection may have sent, unanswered, and still be replayed on
/// another pod.
const REPLAY_LIMIT: usize = 1 << 20;
const COPY_CHUNK: usize = 64 << 10;
/// After a client's end, how long a silent pod is given to finish its
/// answer.
const LINGER: Duration = Duration::from_secs(5);

/// What to forward.
#[derive(Debug, Clone)]
pub struct ForwardRequest {
    pub namespace: String,
    pub target: ForwardTarget,
    pub ports: Vec<PortMapping>,
    pub addresses: Vec<IpAddr>,
}

/// What a forward says as it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardEvent {
    Listening {
        local: SocketAddr,
        remote: u16,
    },
    /// It now reaches `pod` (`namespace/name`); `switched` after the first.
    Reaching {
        pod: String,
        switched: bool,
    },
    /// No pod can be reached; connections wait. One sentence.
    Waiting(String),
    /// A connection was accepted on this local port.
    Accepted(u16),
    /// One connection failed; the forward goes on. One sentence.
    ConnectionFailed(String),
    /// The forward has stopped. One sentence.
    Ended(String),
}

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
    let pool = pool(&client, namespace, &request.target).await?;
    let (reach_tx, mut reach) = watch::channel::<Option<Reach>>(None);
    let (gone_tx, mut gone) = mpsc::channel::<String>(1);
    let tracker = tokio::spawn(track(
        pods.clone(),
        pool,
        namespace.clone(),
        reach_tx,
        gone_tx,
        events.clone(),
    ));
    let _tracker = AbortOnDrop(tracker);
    // Named ports are read from the first pod reached, as kubectl does.
    let first = tokio::select! {
        first = reach.wait_for(Option::is_some) => first.map_err(|_| "the pod feed ended".to_string())?.clone(),
        Some(why) = gone.recv() => return Err(why),
    };
    let first = first.ok_or("the pod feed ended")?;
    let mut listeners = Vec::new();
    for mapping in &request.ports {
        let remote = resolve_port(&mapping.remote, &first.ports)?;
        let local = mapping.local.unwrap_or(remote);
        for &address in &request.addresses {
            let listener = TcpListener::bind((address, local)).await.map_err(|e| {
                format!(
                    "cannot listen on {}: {e}; pick another local port ({}:{remote}, or 0:{remote} for a free one)",
                    SocketAddr::from((address, local)),
                    local.saturating_add(1)
                )
            })?;
            let local = listener.local_addr().map_err(|e| e.to_string())?;
            let _ = events.send(ForwardEvent::Listening { local, remote });
            listeners.push((listener, mapping.remote.clone(), remote));
        }
    }
    let mut accepting = tokio::task::JoinSet::new();
    for (listener, remote, number) in listeners {
        let connection = Connection {
            pods: pods.clone(),
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
        Some(Err(e)) = accepting.join_next() => Err(format!("stopped accepting connections: {e}")),
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The pods a target may reach, as kubectl resolves it: an owner's by its
/// selector; a pod of a ReplicaSet by its Deployment's (else the
/// ReplicaSet's); a StatefulSet's pod is only itself (its ordinal comes
/// back); a pod with no owner is only itself, and the forward ends with it.
async fn pool(
    client: &kube::Client,
    namespace: &str,
    target: &ForwardTarget,
) -> Result<Pool, String> {
    let by_labels = |query: String, only: Option<String>| Pool {
        config: watcher::Config::default().labels(&query),
        only,
        ends_with_pod: false,
    };
    match target {
        ForwardTarget::Owner { kind, name } => {
            let selector = owner_selector(client, namespace, *kind, name).await?;
            Ok(by_labels(selector, None))
        }
        ForwardTarget::Pod(name) => {
            let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
            let pod = pods.get(name).await.map_err(|e| match &e {
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
                only: Some(name.clone()),
                ends_with_pod: true,
            };
            let Some(owner) = owner else {
                return Ok(alone);
            };
            match owner.kind.as_str() {
                "ReplicaSet" => {
                    let rs = object(client, namespace, OwnerKind::ReplicaSet, &owner.name).await;
                    let deployment = rs.as_ref().ok().and_then(|rs| {
                        rs.metadata
                            .owner_references
                            .iter()
                            .flatten()
                            .find(|r| r.controller == Some(true) && r.kind == "Deployment")
                            .map(|r| r.name.clone())
                    });
                    let selector = match deployment {
                        Some(d) => {
                            owner_selector(client, namespace, OwnerKind::Deployment, &d).await
                        }
                        None => {
                            rs.and_then(|rs| selector_of(&rs, "ReplicaSet", &owner.name, namespace))
                        }
                    };
                    // Without the owner's selector (not allowed to read it),
                    // the pod alone.
                    Ok(selector.map_or(alone, |s| by_labels(s, None)))
                }
                "StatefulSet" => {
                    let selector =
                        owner_selector(client, namespace, OwnerKind::StatefulSet, &owner.name)
                            .await;
                    Ok(selector.map_or(
                        Pool {
                            ends_with_pod: false,
                            ..alone
                        },
                        |s| by_labels(s, Some(name.clone())),
                    ))
                }
                _ => Ok(alone),
            }
        }
    }
}

async fn object(
    client: &kube::Client,
    namespace: &str,
    kind: OwnerKind,
    name: &str,
) -> Result<DynamicObject, String> {
    let gvk = GroupVersionKind::gvk(kind.group(), "v1", kind.kind());
    let resource = ApiResource::from_gvk_with_plural(&gvk, kind.plural());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    api.get(name).await.map_err(|e| match &e {
        kube::Error::Api(status) if status.code == 404 => {
            format!("{kind}/{name} not found in namespace {namespace}.")
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
    let object = object(client, namespace, kind, name).await?;
    selector_of(&object, kind.kind(), name, namespace)
}

fn selector_of(
    object: &DynamicObject,
    kind: &str,
    name: &str,
    namespace: &str,
) -> Result<String, String> {
    let selector: Option<LabelSelector> = object
        .data
        .get("spec")
        .and_then(|spec| spec.get("selector"))
        .and_then(|s| serde_json::from_value(s.clone()).ok());
    match selector.as_ref().and_then(selector_query) {
        Some(query) if !query.is_empty() => Ok(query),
        _ => Err(format!(
            "{kind} {name} in namespace {namespace} has no usable spec.selector; forward to one of its pods by name."
        )),
    }
}

/// Follows the pool's pods and publishes the one to reach.
async fn track(
    pods: Api<Pod>,
    pool: Pool,
    namespace: String,
    reach: watch::Sender<Option<Reach>>,
    gone: mpsc::Sender<String>,
    events: mpsc::UnboundedSender<ForwardEvent>,
) {
    let (tx, mut rx) = super::feed::channel();
    let feed = tokio::spawn(super::feed::run(
        pods,
        pool.config.clone(),
        Some(namespace.clone()),
        project,
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
                    .into_iter()
                    .map(|t| (t.candidate.name.clone(), t))
                    .collect();
            }
            Feed::Applied(t) => {
                known.insert(t.candidate.name.clone(), t);
            }
            Feed::Deleted(t) => {
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
        let chosen = choose(&candidates, current.as_deref(), pool.only.as_deref())
            .and_then(|c| known.get(&c.name))
            .map(|t| Reach {
                pod: t.candidate.name.clone(),
                ports: t.ports.clone(),
            });
        if chosen.as_ref().map(|r| &r.pod) == current.as_ref() {
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
                let of = match &pool.only {
                    Some(name) => format!("pod {namespace}/{name} to be Running and Ready"),
                    None => "a Running, Ready pod".to_string(),
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
    let ports = pod
        .spec
        .iter()
        .flat_map(|s| &s.containers)
        .flat_map(|c| {
            c.ports.iter().flatten().filter_map(move |p| {
                Some(DeclaredPort {
                    container: c.name.clone(),
                    name: p.name.clone(),
                    number: u16::try_from(p.container_port).ok()?,
                    protocol: p.protocol.clone().unwrap_or_else(|| "TCP".into()),
                })
            })
        })
        .collect();
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
    reach: watch::Receiver<Option<Reach>>,
    remote: RemotePort,
    /// The number the remote port had on the first pod.
    first_number: u16,
    events: mpsc::UnboundedSender<ForwardEvent>,
    stats: Arc<ForwardStats>,
}

async fn accept(listener: TcpListener, connection: Connection) -> std::io::Result<()> {
    let local_port = listener.local_addr()?.port();
    loop {
        let (client, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors, a connection reset before accept: the
            // listener itself is fine.
            Err(e) if is_transient(&e) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let _ = client.set_nodelay(true);
        let _ = connection.events.send(ForwardEvent::Accepted(local_port));
        let connection = connection.clone();
        tokio::spawn(async move {
            connection.stats.open.fetch_add(1, Ordering::Relaxed);
            if let Err(sentence) = connection.serve(client).await {
                let _ = connection
                    .events
                    .send(ForwardEvent::ConnectionFailed(sentence));
            }
            connection.stats.open.fetch_sub(1, Ordering::Relaxed);
        });
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
    /// The pod refused before answering anything: try the next one.
    Refused(String),
    /// Cut after the pod had answered: the client's connection closes.
    Cut(String),
}

impl Connection {
    async fn serve(&self, mut client: TcpStream) -> Result<(), String> {
        let mut reach = self.reach.clone();
        let mut sent: Vec<u8> = Vec::new();
        let mut backoff = Duration::from_millis(100);
        let deadline = tokio::time::Instant::now() + WAIT_FOR_POD;
        let mut last_refusal = None;
        loop {
            let waited = tokio::time::timeout_at(deadline, reach.wait_for(Option::is_some))
                .await
                .map(|r| r.map(|target| target.clone()));
            let target = match waited {
                Ok(Ok(target)) => target.ok_or("no pod")?,
                Ok(Err(_)) => return Err("the forward stopped".into()),
                Err(_) => {
                    return Err(last_refusal.unwrap_or_else(|| {
                        format!(
                            "no pod became ready within {} s; the connection was closed",
                            WAIT_FOR_POD.as_secs()
                        )
                    }));
                }
            };
            let number = match &self.remote {
                RemotePort::Number(n) => *n,
                RemotePort::Name(_) => {
                    resolve_port(&self.remote, &target.ports).unwrap_or(self.first_number)
                }
            };
            match self
                .attempt(&mut client, &target.pod, number, &mut sent)
                .await
            {
                Attempt::Done => return Ok(()),
                Attempt::Cut(why) => return Err(why),
                Attempt::Refused(why) => {
                    if sent.len() > REPLAY_LIMIT || tokio::time::Instant::now() >= deadline {
                        return Err(why);
                    }
                    last_refusal = Some(why);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// One try on `pod`: everything the client sent so far (`sent`) goes
    /// first, then both ways until the pod's side ends.
    async fn attempt(
        &self,
        client: &mut TcpStream,
        pod: &str,
        port: u16,
        sent: &mut Vec<u8>,
    ) -> Attempt {
        let mut forwarder = match self.pods.portforward(pod, &[port]).await {
            Ok(f) => f,
            Err(e) => return Attempt::Refused(format!("pod {pod}: {}", describe(&e).sentence)),
        };
        let (Some(stream), Some(error)) = (forwarder.take_stream(port), forwarder.take_error(port))
        else {
            return Attempt::Refused(format!("pod {pod}: no stream for port {port}"));
        };
        let (mut from_pod, mut to_pod) = tokio::io::split(stream);
        if !sent.is_empty() && to_pod.write_all(sent).await.is_err() {
            return Attempt::Refused(format!("pod {pod}: the stream closed at once"));
        }
        let (mut client_read, mut client_write) = client.split();
        let stats = &self.stats;
        let mut answered = 0u64;
        // After the client's end, the pod's answer is awaited while it
        // keeps coming (the pod cannot be told of a half-close).
        let mut linger: Option<tokio::time::Instant> = None;
        let mut buf_in = vec![0u8; COPY_CHUNK];
        let mut buf_out = vec![0u8; COPY_CHUNK];
        loop {
            let lingering = async {
                match linger {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                read = client_read.read(&mut buf_in), if linger.is_none() => match read {
                    Ok(0) => linger = Some(tokio::time::Instant::now() + LINGER),
                    Ok(n) => {
                        if answered == 0 && sent.len() <= REPLAY_LIMIT {
                            sent.extend_from_slice(&buf_in[..n]);
                        }
                        if to_pod.write_all(&buf_in[..n]).await.is_err() {
                            break;
                        }
                        stats.to_pod.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(_) => return Attempt::Done,
                },
                read = from_pod.read(&mut buf_out) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        answered += n as u64;
                        if client_write.write_all(&buf_out[..n]).await.is_err() {
                            return Attempt::Done;
                        }
                        stats.from_pod.fetch_add(n as u64, Ordering::Relaxed);
                        if linger.is_some() {
                            linger = Some(tokio::time::Instant::now() + LINGER);
                        }
                    }
                },
                () = lingering => return Attempt::Done,
            }
        }
        // Why the pod's side ended, if the kubelet said (it writes the error
        // before it closes): worth waiting for only if nothing came back.
        let wait = match answered {
            0 => Duration::from_millis(500),
            _ => Duration::ZERO,
        };
        let said = tokio::time::timeout(wait, error).await.ok().flatten();
        drop(forwarder);
        // A client that had finished lost nothing.
        let said = said.filter(|_| linger.is_none());
        match (said, answered) {
            (Some(text), 0) => Attempt::Refused(format!("pod {pod}: {}", short_error(&text))),
            (Some(text), _) => Attempt::Cut(format!("pod {pod}: {}", short_error(&text))),
            (None, _) => {
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

//! The embedded Kubernetes cluster: a real HTTP/WebSocket API server on
//! loopback, backed by local processes on PTYs.
//!
//! `Sim::start` binds, loads a scenario, writes nothing; `SimHandle` gives
//! the URL, the users' tokens, a kubeconfig, and fault knobs for tests.

pub(crate) mod api;
pub(crate) mod backstory;
pub(crate) mod churn;
pub(crate) mod controllers;
pub(crate) mod create;
mod defaults;
mod demo_objects;
mod endpoints;
pub mod ephemeral;
pub mod field_validation;
pub(crate) mod filter;
pub(crate) mod http;
pub(crate) mod ids;
pub mod images;
pub(crate) mod kubeconfig;
pub mod kubelet;
pub(crate) mod logs;
pub(crate) mod metrics;
pub(crate) mod node_root;
pub mod nodes;
mod openapi;
pub(crate) mod owners;
pub(crate) mod pod_json;
mod pod_update;
pub(crate) mod portforward;
mod procfs;
pub(crate) mod protobuf;
pub mod rbac;
pub(crate) mod reference;
pub mod runtime;
pub mod sandbox;
pub mod scenario;
pub(crate) mod selectors;
pub(crate) mod serve;
mod start_checks;
pub mod status;
pub mod store;
pub(crate) mod streams;
pub(crate) mod table;
pub(crate) mod throttle;
pub(crate) mod tls;
pub(crate) mod validation;
pub(crate) mod watch;
pub mod workload;
mod workload_status;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch as signal;

use kubelet::{Kubelet, KubeletConfig};
use rbac::Users;
use store::{Key, Kind, Store};

/// Locks a mutex, ignoring poisoning: every critical section in the
/// simulator is a single map or buffer update that a panic cannot leave
/// half-done.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What to simulate.
#[derive(Debug, Clone)]
pub struct SimOptions {
    pub listen: SocketAddr,
    /// `None`: the demo scenario. `Some(n)`: `n` generated pods.
    pub pods: Option<usize>,
    pub pull_delay: Duration,
    pub pull_backoff: Duration,
    pub bookmark_interval: Duration,
    /// Pod restarts per second (see [`churn`]); `None` for a still cluster.
    pub churn: Option<f64>,
    /// Delete an owned pod this often, for its owner to replace (see
    /// [`churn::replace`]).
    pub replace_every: Option<Duration>,
    /// The podbay binary that serves as the container shim and the
    /// distroless workloads; `None`: this executable.
    pub shim: Option<std::path::PathBuf>,
    /// Give pods Linux namespaces where the host allows (else plain processes).
    pub namespaces: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            pods: None,
            pull_delay: Duration::from_millis(1500),
            pull_backoff: Duration::from_secs(10),
            bookmark_interval: Duration::from_secs(30),
            churn: None,
            replace_every: None,
            shim: None,
            namespaces: true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(
        "the simulator only listens on loopback addresses; {0} is not one (use 127.0.0.1 or ::1)"
    )]
    NotLoopback(SocketAddr),
    #[error("{0}")]
    Tls(String),
    #[error("cannot create the simulator's scratch directory: {0}")]
    Scratch(std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Fault knobs, for reliability tests.
#[derive(Default)]
pub struct Faults {
    latency_ms: AtomicU64,
    watch_drops: signal::Sender<u64>,
    stream_kills: signal::Sender<u64>,
    stream_idle_ms: AtomicU64,
    /// While true, a list's pages after the first wait (a slow apiserver
    /// paging a large list).
    held_pages: signal::Sender<bool>,
    /// While true, a pod DELETE is never answered (nor carried out).
    mute_deletes: std::sync::atomic::AtomicBool,
}

impl Faults {
    /// Waits while later list pages are held back.
    pub async fn page_released(&self) {
        let mut held = self.held_pages.subscribe();
        let _ = held.wait_for(|held| !*held).await;
    }

    /// Whether pod DELETEs go unanswered.
    pub fn deletes_muted(&self) -> bool {
        self.mute_deletes.load(Ordering::Relaxed)
    }

    pub fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms.load(Ordering::Relaxed))
    }

    pub fn watch_drops(&self) -> signal::Receiver<u64> {
        self.watch_drops.subscribe()
    }

    pub fn stream_kills(&self) -> signal::Receiver<u64> {
        self.stream_kills.subscribe()
    }

    /// How long a stream may carry no frame either way before it is cut.
    pub fn stream_idle_timeout(&self) -> Option<Duration> {
        match self.stream_idle_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }
}

/// Everything a request handler needs.
pub struct SimState {
    pub store: Arc<Store>,
    pub kubelet: Arc<Kubelet>,
    pub users: Users,
    pub faults: Faults,
    pub options: SimOptions,
    pub addr: SocketAddr,
    pub ca_pem: String,
    /// Containers' resource use, as metrics-server last measured it.
    pub metrics: metrics::Meter,
}

/// A running simulator. Dropping it stops the server and kills its processes.
pub struct SimHandle {
    state: Arc<SimState>,
    acceptor: tokio_rustls::TlsAcceptor,
    shutdown: std::sync::Mutex<signal::Sender<bool>>,
}

pub struct Sim;

impl Sim {
    /// Binds the listener, loads the scenario and serves in the background.
    pub async fn start(options: SimOptions) -> Result<SimHandle, SimError> {
        if !options.listen.ip().is_loopback() {
            return Err(SimError::NotLoopback(options.listen));
        }
        let listener =
            TcpListener::bind(options.listen)
                .await
                .map_err(|source| SimError::Bind {
                    addr: options.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| SimError::Bind {
            addr: options.listen,
            source,
        })?;
        let tls = tls::generate().map_err(SimError::Tls)?;
        let store = Arc::new(Store::new());
        let kubelet = Kubelet::new(
            store.clone(),
            KubeletConfig {
                pull_delay: options.pull_delay,
                pull_backoff: options.pull_backoff,
                shim: match &options.shim {
                    Some(path) => path.clone(),
                    None => std::env::current_exe().map_err(SimError::Scratch)?,
                },
                namespaces: options.namespaces,
                api: addr,
            },
        )
        .map_err(SimError::Scratch)?;
        let state = Arc::new(SimState {
            store,
            kubelet,
            users: Users::generate(),
            faults: Faults::default(),
            options,
            addr,
            ca_pem: tls.ca_pem,
            metrics: metrics::Meter::default(),
        });
        load_scenario(&state);
        tokio::spawn(controllers::run(Arc::downgrade(&state)));
        tokio::spawn(metrics::run(Arc::downgrade(&state)));
        tokio::spawn(throttle::run(Arc::downgrade(&state)));
        if let Some(every) = state.options.replace_every.filter(|d| !d.is_zero()) {
            tokio::spawn(churn::replace(Arc::downgrade(&state), every));
        }
        if let Some(per_second) = state.options.churn.filter(|n| *n > 0.0) {
            tokio::spawn(churn::run(Arc::downgrade(&state.store), per_second));
        }
        let (shutdown, stop) = signal::channel(false);
        tokio::spawn(serve(listener, tls.acceptor.clone(), state.clone(), stop));
        Ok(SimHandle {
            state,
            acceptor: tls.acceptor,
            shutdown: std::sync::Mutex::new(shutdown),
        })
    }
}

fn load_scenario(state: &SimState) {
    let now = jiff::Timestamp::now();
    let created = now - jiff::SignedDuration::from_hours(1000);
    let mut namespaces = std::collections::BTreeSet::new();
    let pods: Box<dyn Iterator<Item = serde_json::Value>> = match state.options.pods {
        Some(n) => Box::new(scenario::generated(n, now)),
        None => {
            namespaces.extend(scenario::NAMESPACES.iter().map(|s| s.to_string()));
            Box::new(scenario::demo(now).into_iter())
        }
    };
    // Demo pods run their processes from the start; generated ones only on demand.
    let eager = state.options.pods.is_none();
    // Every pod's ReplicaSet and Deployment exist, so a deleted pod is
    // replaced by its controller, generated or not.
    let mut owners = owners::Owners::default();
    for pod in pods {
        owners.observe(&pod);
        let key = Key::new(
            pod["metadata"]["namespace"].as_str().unwrap_or_default(),
            pod["metadata"]["name"].as_str().unwrap_or_default(),
        );
        namespaces.insert(key.namespace.to_string());
        if eager {
            for event in backstory::events(&pod, now) {
                let name = event["metadata"]["name"].as_str().unwrap_or_default();
                let _ =
                    state
                        .store
                        .create(Kind::Event, Key::new(&key.namespace, name), event.clone());
            }
        }
        let running = pod["status"]["phase"] == "Running";
        if let Ok(entry) = state.store.create(Kind::Pod, key.clone(), pod)
            && eager
            && running
        {
            let pod = entry.value();
            state.kubelet.start_pod(&pod);
            // As a kubelet does on start: the debug containers the spec
            // has and no status reports are started.
            for debugger in unreported_debuggers(&pod) {
                state
                    .kubelet
                    .ephemeral_container_added(key.clone(), debugger);
            }
        }
    }
    let owned = owners.objects(created);
    let generated_services = match state.options.pods {
        Some(_) => demo_objects::generated_services(
            owned
                .iter()
                .filter(|(kind, _)| *kind == Kind::Deployment)
                .map(|(_, d)| {
                    let name = |field: &str| d["metadata"][field].as_str().unwrap_or_default();
                    (name("namespace"), name("name"))
                }),
            created,
        ),
        None => demo_objects::services(created),
    };
    for (kind, object) in owned.into_iter().chain(
        generated_services
            .into_iter()
            .map(|service| (Kind::Service, service)),
    ) {
        let key = Key::new(
            object["metadata"]["namespace"].as_str().unwrap_or_default(),
            object["metadata"]["name"].as_str().unwrap_or_default(),
        );
        let _ = state.store.create(kind, key, object);
    }
    endpoints::write_all(state);
    let nodes: Vec<&str> = match state.options.pods {
        Some(_) => nodes::LINUX.to_vec(),
        None => nodes::names().collect(),
    };
    for node in nodes {
        let _ = state.store.create(
            Kind::Node,
            Key::new("", node),
            nodes::object(node, created, now),
        );
    }
    if eager {
        for secret in demo_objects::secrets(created) {
            let key = Key::new(
                secret["metadata"]["namespace"].as_str().unwrap_or_default(),
                secret["metadata"]["name"].as_str().unwrap_or_default(),
            );
            let _ = state.store.create(Kind::Secret, key, secret);
        }
    }
    for ns in &namespaces {
        let _ = state.store.create(
            Kind::Namespace,
            Key::new("", ns),
            demo_objects::namespace_object(ns, created),
        );
    }
}

/// The pod's debug containers with no status yet.
fn unreported_debuggers(pod: &serde_json::Value) -> Vec<serde_json::Value> {
    let reported: Vec<&serde_json::Value> = pod["status"]["ephemeralContainerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| &s["name"])
        .collect();
    pod["spec"]["ephemeralContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| !reported.contains(&&c["name"]))
        .cloned()
        .collect()
}

/// Connections served at once; more are closed on arrival, so idle or
/// half-open ones cannot exhaust the simulator's file descriptors.
const MAX_CONNECTIONS: usize = 1024;

/// How long a connection may take to send its TLS handshake, and then each
/// request's headers.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

async fn serve(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    state: Arc<SimState>,
    mut stop: signal::Receiver<bool>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (socket, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::warn!("{MAX_CONNECTIONS} connections open: refusing another");
            continue;
        };
        let _ = socket.set_nodelay(true);
        let state = state.clone();
        let mut stop = stop.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let Ok(Ok(socket)) =
                tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(socket)).await
            else {
                return;
            };
            let service = service_fn(move |request| {
                let state = state.clone();
                async move { Ok::<_, std::convert::Infallible>(api::handle(state, request).await) }
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HANDSHAKE_TIMEOUT)
                .serve_connection(TokioIo::new(socket), service)
                .with_upgrades();
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stop.changed() => {}
            }
        });
    }
}

impl SimHandle {
    pub fn addr(&self) -> SocketAddr {
        self.state.addr
    }

    pub fn url(&self) -> String {
        format!("https://{}", self.state.addr)
    }

    pub fn users(&self) -> &Users {
        &self.state.users
    }

    /// The private directory the simulated pods' files live in; removed
    /// when the simulator stops.
    pub fn sandbox_dir(&self) -> &Path {
        self.state.kubelet.sandbox()
    }

    /// How the simulated containers are isolated on this host.
    pub fn isolation(&self) -> &sandbox::Isolation {
        self.state.kubelet.isolation()
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.state.store
    }

    /// The kubeconfig document (contexts `sim`, `sim-viewer`, `sim-dev`).
    pub fn kubeconfig(&self) -> serde_json::Value {
        kubeconfig::render(&self.url(), &self.state.ca_pem, &self.state.users)
    }

    /// Writes the kubeconfig with mode 0600.
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        kubeconfig::write(path, &self.url(), &self.state.ca_pem, &self.state.users)
    }

    /// The CA certificate (PEM) that signed the serving certificate.
    pub fn ca_pem(&self) -> &str {
        &self.state.ca_pem
    }

    /// Fault: add this much latency to every response.
    pub fn set_latency(&self, latency: Duration) {
        self.state
            .faults
            .latency_ms
            .store(latency.as_millis() as u64, Ordering::Relaxed);
    }

    /// Fault: hold every list page after the first (`true`) until released
    /// (`false`): a list stays incomplete as long as a test needs.
    pub fn hold_list_pages(&self, held: bool) {
        self.state.faults.held_pages.send_replace(held);
    }

    /// Fault: leave every pod DELETE unanswered (and not done) while `true`.
    pub fn mute_deletes(&self, muted: bool) {
        self.state
            .faults
            .mute_deletes
            .store(muted, Ordering::Relaxed);
    }

    /// Fault: end every open watch (clients re-watch from their last RV).
    pub fn drop_watches(&self) {
        self.state.faults.watch_drops.send_modify(|n| *n += 1);
    }

    /// Fault: compact history so the next watch from an old RV gets 410 Gone.
    pub fn expire_resource_versions(&self) {
        self.state.store.compact();
    }

    /// Fault: like a load balancer's (or the kubelet's) idle timeout, cut
    /// attach/exec streams opened from now on once no frame (data or ping)
    /// went either way for `timeout`; `None` turns it off.
    pub fn set_stream_idle_timeout(&self, timeout: Option<Duration>) {
        let ms = timeout.map_or(0, |t| t.as_millis().max(1) as u64);
        self.state
            .faults
            .stream_idle_ms
            .store(ms, Ordering::Relaxed);
    }

    /// Fault: cut every open attach/exec stream without a close frame.
    pub fn kill_streams(&self) {
        self.state.faults.stream_kills.send_modify(|n| *n += 1);
    }

    /// Fault: stop accepting and close open connections; the cluster's state
    /// and processes stay as they are.
    pub fn stop_server(&self) {
        self.shutdown_sender().send_replace(true);
    }

    /// Listens again on the same address after [`stop_server`](Self::stop_server).
    pub async fn restart_server(&self) -> Result<(), SimError> {
        self.stop_server();
        let addr = self.state.addr;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| SimError::Bind { addr, source })?;
        let (shutdown, stop) = signal::channel(false);
        *self.shutdown.lock().unwrap_or_else(|p| p.into_inner()) = shutdown;
        tokio::spawn(serve(
            listener,
            self.acceptor.clone(),
            self.state.clone(),
            stop,
        ));
        Ok(())
    }

    fn shutdown_sender(&self) -> std::sync::MutexGuard<'_, signal::Sender<bool>> {
        self.shutdown.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.shutdown_sender().send_replace(true);
        // Lifecycle tasks keep the kubelet alive while they wait on their
        // processes, so its own Drop would never run: stop them here.
        self.state.kubelet.shutdown();
    }
}

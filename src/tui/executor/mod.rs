//! Carries out the app's effects: the watches, one-off requests and
//! sessions they start and stop, each reporting back as events.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::Api;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

mod captures;
mod debuggers;
mod owned_pods;
mod pod_reads;
use pod_reads::OtherWatch;
mod untyped_views;
mod usage;

use super::READ_TIMEOUT;
use super::connect::connect_and_probe;
use super::log_pane;
use super::sessions::Sessions;
use crate::app::TerminalId;
use crate::app::fleet::FleetPod;
use crate::app::{Effect, Event, Scope};
use crate::cluster::client::{Connection, Target};
use crate::cluster::feed::{self, Pages};
use crate::cluster::session::SessionInput;
use crate::model::debug::DebugSpec;
use crate::model::feed::Feed;
use crate::model::intern::Strings;
use crate::model::listed::ListedPod;
use crate::model::session::SessionEnd;
use crate::model::{ClusterId, EventRow, PodDetail, PodKey, PodRow, TerminalKey};

/// Which watch an update came from. Updates already queued when a watch is
/// replaced (after `:ns`, `:ctx`, or leaving a pod) must not reach the app.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum FeedOrigin {
    Pods,
    Pod,
    Namespaces,
    Other,
}

pub(super) struct Tagged {
    source: FeedOrigin,
    generation: u64,
    event: Event,
}

impl Tagged {
    /// An update that is not tied to a replaceable watch.
    pub(super) fn untied(event: Event) -> Tagged {
        Tagged {
            source: FeedOrigin::Other,
            generation: 0,
            event,
        }
    }
}

/// The I/O tasks the app's effects start and stop.
pub(super) struct Tasks {
    /// The browser's connection: watches and new terminals use it.
    connection: Connection,
    /// Every cluster connected to in this run: a terminal's session, its
    /// pod watch and its re-attaches always use the client of the cluster
    /// it was opened on, whatever the browser shows now.
    clients: HashMap<ClusterId, kube::Client>,
    target: Target,
    tx: mpsc::Sender<Tagged>,
    generations: [u64; 3],
    connected: mpsc::Sender<Connection>,
    pods: Vec<JoinHandle<()>>,
    pod: Vec<JoinHandle<()>>,
    namespaces: Option<JoinHandle<()>>,
    connecting: Option<JoinHandle<()>>,
    /// The browser's connection's liveness probe.
    pulse: Option<JoinHandle<()>>,
    /// The pod watches and probes of the other clusters the list shows.
    others: HashMap<ClusterId, OtherWatch>,
    /// Each terminal's own pod watch (detail and events).
    followers: HashMap<TerminalId, Vec<JoinHandle<()>>>,
    pub(super) sessions: Sessions,
    pub(super) image_history: Option<std::path::PathBuf>,
    /// How long adding a debug container may take (`debug.launch_timeout`).
    pub(super) launch_timeout: std::time::Duration,
    /// The file browser's copies, by id, for cancelling.
    transfers: HashMap<u64, JoinHandle<()>>,
    /// The port-forwards, by id.
    forwards: HashMap<u64, JoinHandle<()>>,
    /// Running captures, stopped by sending `true`.
    captures: HashMap<u64, tokio::sync::watch::Sender<bool>>,
    /// Pod creations under way, and every pod created (each deleted when
    /// podbay quits, whatever became of its pane).
    creates: Vec<JoinHandle<()>>,
    created: std::sync::Arc<std::sync::Mutex<Vec<(ClusterId, PodKey)>>>,
    /// Contexts connected beside the browser's report here.
    beside: mpsc::Sender<(String, Result<Connection, String>)>,
    /// Where workspaces are kept (none: not in this run).
    pub(super) workspaces: Option<super::kept::Store>,
}

impl Tasks {
    pub(super) fn new(
        connection: Connection,
        target: Target,
        tx: mpsc::Sender<Tagged>,
        connected: mpsc::Sender<Connection>,
        beside: mpsc::Sender<(String, Result<Connection, String>)>,
        sessions: Sessions,
    ) -> Self {
        Tasks {
            clients: HashMap::from([(connection.cluster(), connection.client.clone())]),
            connection,
            target,
            tx,
            generations: [0; 3],
            connected,
            pods: Vec::new(),
            pod: Vec::new(),
            namespaces: None,
            connecting: None,
            pulse: None,
            others: HashMap::new(),
            followers: HashMap::new(),
            sessions,
            image_history: None,
            launch_timeout: std::time::Duration::from_secs(35),
            transfers: HashMap::new(),
            forwards: HashMap::new(),
            captures: HashMap::new(),
            creates: Vec::new(),
            created: Default::default(),
            beside,
            workspaces: None,
        }
    }

    fn slot(source: FeedOrigin) -> Option<usize> {
        match source {
            FeedOrigin::Pods => Some(0),
            FeedOrigin::Pod => Some(1),
            FeedOrigin::Namespaces => Some(2),
            FeedOrigin::Other => None,
        }
    }

    /// Starts a new generation of `source`'s watch; older updates become stale.
    fn next_generation(&mut self, source: FeedOrigin) -> u64 {
        match Self::slot(source) {
            Some(i) => {
                self.generations[i] += 1;
                self.generations[i]
            }
            None => 0,
        }
    }

    /// The event, unless it comes from a watch that has been replaced.
    pub(super) fn current(&self, tagged: Tagged) -> Option<Event> {
        match Self::slot(tagged.source) {
            Some(i) if self.generations[i] != tagged.generation => None,
            _ => Some(tagged.event),
        }
    }

    /// Starts what `effect` asks for. What is known at once (a recording
    /// started, a terminal whose cluster is gone) comes back as an event.
    pub(super) fn run(&mut self, effect: Effect) -> Option<Event> {
        self.start(effect)
            .unwrap_or_else(|gone| Some(gone.ends_its_terminal()))
    }

    /// As [`run`](Self::run), failing for a terminal whose cluster is gone.
    fn start(&mut self, effect: Effect) -> Result<Option<Event>, NoClient> {
        match effect {
            Effect::RememberImage(image) => self.remember_image(image),
            Effect::WakeAfter { after, token } => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(after).await;
                    let _ = tx.send(Tagged::untied(Event::Wake(token))).await;
                });
            }
            Effect::WatchPods(scope) => self.watch_pods(scope),
            Effect::WatchPodsOf { cluster, scope } => self.watch_pods_of(cluster, scope),
            Effect::WatchPod(cluster, key) => self.watch_pod(&cluster, key),
            Effect::WatchEvents(cluster, scope) => self.watch_events(cluster, scope),
            Effect::WatchNodes(clusters) => self.watch_nodes(clusters),
            Effect::WatchServices(watches) => self.watch_services(watches),
            Effect::WatchWorkloads(kind, watches) => self.watch_workloads(kind, watches),
            Effect::CreatePod {
                id,
                key,
                pod,
                refused_hint,
            } => {
                let client = self.client_of_terminal(id, &key.cluster)?;
                self.create_pod(id, client, key, *pod, refused_hint);
            }
            Effect::DeletePod { cluster, pod } => self.delete_pod(&cluster, pod),
            Effect::StopDebugger { cluster, pod, name } => self.stop_debugger(&cluster, pod, name),
            Effect::ReadPods { cluster, pods } => self.read_pods(cluster, pods),
            Effect::ReadNodePods { cluster, node } => self.read_node_pods(cluster, node),
            Effect::ReadUsage {
                cluster,
                namespaces,
                detailed,
            } => self.read_usage(cluster, namespaces, detailed),
            Effect::ReadNodeUsage { cluster } => self.read_node_usage(cluster),
            Effect::ReadObject { cluster, object } => self.read_object(cluster, object),
            Effect::Files {
                generation,
                key,
                via,
                op,
                transfer,
            } => {
                let Some(client) = self.clients.get(&key.cluster).cloned() else {
                    return Ok(None);
                };
                self.transfers.retain(|_, task| !task.is_finished());
                let tx = self.tx.clone();
                let emit: super::files::Emit = std::sync::Arc::new(move |event| {
                    let tx = tx.clone();
                    Box::pin(async move {
                        let _ = tx.send(Tagged::untied(event)).await;
                    })
                });
                let task = tokio::spawn(super::files::carry_out(
                    client, emit, generation, key, via, op, transfer,
                ));
                if let Some(id) = transfer {
                    self.transfers.insert(id, task);
                }
            }
            Effect::CompleteLocalPath(typed) => {
                let candidates = super::files::local_candidates(&typed);
                return Ok(Some(Event::Files(
                    crate::app::files::FilesEvent::Completed { typed, candidates },
                )));
            }
            Effect::CancelTransfer(id) => {
                if let Some(task) = self.transfers.remove(&id) {
                    task.abort();
                }
                return Ok(Some(Event::Files(crate::app::files::FilesEvent::Ended {
                    id,
                    outcome: Err(String::new()),
                })));
            }
            Effect::StopWatchingPod => {
                self.next_generation(FeedOrigin::Pod);
                abort(&mut self.pod);
            }
            Effect::SwitchContext(context) => self.switch_context(context),
            Effect::Launch { id, key, spec } => {
                let client = self.client_of_terminal(id, &key.cluster)?;
                self.launch(id, client, key, spec);
            }
            Effect::OpenSession {
                id,
                key,
                kind,
                size,
                replay_log,
                stdio,
            } => {
                let client = self.client_of_terminal(id, &key.cluster)?;
                self.sessions
                    .open(id, client, key, kind, size, replay_log, stdio);
            }
            Effect::ShowLog {
                id,
                key,
                containers,
                of_pods,
                previous,
                follow,
                options,
                fresh,
                resume_from,
            } => {
                let client = self.client_of_terminal(id, &key.cluster)?;
                let read = log_pane::Read {
                    previous,
                    follow,
                    options,
                };
                let start = if fresh {
                    super::sessions::LogStart::Over
                } else {
                    super::sessions::LogStart::Continue(&resume_from)
                };
                self.sessions
                    .show_log(id, client, (key, containers, of_pods), read, start);
            }
            Effect::ConnectContext(context) => self.connect_beside(context),
            Effect::SaveWorkspace {
                name,
                mut workspace,
                terminals,
            } => {
                let Some(store) = &self.workspaces else {
                    return Ok(None);
                };
                self.add_log_positions(&mut workspace, &terminals);
                let outcome = store.write(&name, &workspace);
                return Ok(Some(Event::WorkspaceSaved { name, outcome }));
            }
            Effect::LoadWorkspace(name) => {
                let outcome = match &self.workspaces {
                    Some(store) => store.load(&name).map(Box::new),
                    None => Err("Workspaces are not kept in this run.".into()),
                };
                return Ok(Some(Event::WorkspaceLoaded { name, outcome }));
            }
            Effect::FindReplacement {
                id,
                cluster,
                namespace,
                controller_uid,
            } => {
                if let Some(client) = self.clients.get(&cluster).cloned() {
                    let tx = self.tx.clone();
                    tokio::spawn(async move {
                        let pod = replacement(client, &namespace, &controller_uid).await;
                        let found = Event::ReplacementFound { id, pod };
                        let _ = tx.send(Tagged::untied(found)).await;
                    });
                }
            }
            Effect::ForgetWorkspace => {
                if let Some(store) = &self.workspaces {
                    store.forget(crate::app::saved::LAST);
                }
            }
            Effect::SendInput { id, bytes } => self.sessions.send(id, SessionInput::Data(bytes)),
            Effect::ResizeSession { id, size } => self.sessions.resize(id, size),
            Effect::CloseStdin { id } => self.sessions.send(id, SessionInput::CloseStdin),
            Effect::CloseSession { id } => {
                self.sessions.close(id);
                if let Some(mut handles) = self.followers.remove(&id) {
                    abort(&mut handles);
                }
            }
            Effect::Follow { id, key } => {
                let client = self.client_of_terminal(id, &key.cluster)?;
                self.follow(id, client, key);
            }
            Effect::Record {
                id,
                on,
                size,
                title,
            } => {
                return Ok(Some(self.sessions.set_recording(id, on, size, &title)));
            }
            // The loop that owns the user's terminal does these.
            Effect::StartForward {
                id,
                cluster,
                request,
            } => {
                if let Some(client) = self.clients.get(&cluster).cloned() {
                    let task = tokio::spawn(forward(id, client, request, self.tx.clone()));
                    self.forwards.insert(id, task);
                }
            }
            Effect::StopForward(id) => {
                if let Some(task) = self.forwards.remove(&id) {
                    task.abort();
                }
            }
            Effect::StartCapture {
                id,
                cluster,
                request,
                file,
            } => {
                if let Some(client) = self.clients.get(&cluster).cloned() {
                    let stop = captures::start(id, client, request, file, self.tx.clone());
                    self.captures.insert(id, stop);
                }
            }
            Effect::StopCapture(id) => {
                if let Some(stop) = self.captures.remove(&id) {
                    stop.send_replace(true);
                }
            }
            Effect::Quit | Effect::Copy(_) => {}
        }
        Ok(None)
    }

    fn remember_image(&self, image: String) {
        // A file read and write: off the UI loop.
        if let Some(path) = self.image_history.clone() {
            tokio::task::spawn_blocking(move || {
                if let Err(e) = crate::config::remember_image(&path, &image) {
                    tracing::warn!("cannot record the image history in {}: {e}", path.display());
                }
            });
        }
    }

    /// The client of the cluster terminal `id` was opened on. If the app
    /// names a cluster the runtime never connected to (a bug), nothing is
    /// sent to whichever cluster is current: the terminal ends, saying so.
    fn client_of_terminal(
        &self,
        id: TerminalId,
        cluster: &ClusterId,
    ) -> Result<kube::Client, NoClient> {
        match self.clients.get(cluster) {
            Some(client) => Ok(client.clone()),
            None => Err(NoClient {
                id,
                context: cluster.context.to_string(),
            }),
        }
    }

    /// Watches the pod a terminal is on, so it can follow its container.
    fn follow(&mut self, id: TerminalId, client: kube::Client, key: TerminalKey) {
        let handles = self.follow_pod(
            &client,
            &key.pod,
            (FeedOrigin::Other, 0),
            move |feed| Event::TerminalPod { id, feed },
            move |feed| Event::TerminalEvents { id, feed },
        );
        if let Some(mut old) = self.followers.insert(id, handles) {
            abort(&mut old);
        }
    }

    /// The pod view's watch of its pod, and the namespace's Pod Security level.
    fn watch_pod(&mut self, cluster: &ClusterId, key: PodKey) {
        abort(&mut self.pod);
        let generation = self.next_generation(FeedOrigin::Pod);
        let Some(client) = self.clients.get(cluster).cloned() else {
            return;
        };
        let mut handles = self.follow_pod(
            &client,
            &key,
            (FeedOrigin::Pod, generation),
            Event::Detail,
            Event::PodEvents,
        );
        let tx = self.tx.clone();
        handles.push(tokio::spawn(async move {
            // Read once: labels rarely change, and a user who may not read
            // namespaces learns the level from a refusal instead.
            let policy =
                crate::cluster::debug::read_policy(&client, &key.namespace, READ_TIMEOUT).await;
            let event = Event::PodSecurity(policy);
            let _ = tx
                .send(Tagged {
                    source: FeedOrigin::Pod,
                    generation,
                    event,
                })
                .await;
        }));
        self.pod = handles;
    }

    /// A pod's detail and its events, each update wrapped for the app.
    fn follow_pod(
        &self,
        client: &kube::Client,
        pod: &PodKey,
        (source, generation): (FeedOrigin, u64),
        detail: impl Fn(Feed<PodDetail>) -> Event + Send + Sync + 'static,
        events: impl Fn(Feed<EventRow>) -> Event + Send + Sync + 'static,
    ) -> Vec<JoinHandle<()>> {
        let by_name = feed::config().fields(&format!("metadata.name={}", pod.name));
        let about = feed::config().fields(&format!(
            "involvedObject.name={},involvedObject.kind=Pod",
            pod.name
        ));
        vec![
            self.spawn_feed(
                (source, generation),
                Api::<Pod>::namespaced(client.clone(), &pod.namespace),
                by_name,
                None,
                PodDetail::from_pod,
                detail,
                Pages::Whole,
            ),
            self.spawn_feed(
                (source, generation),
                Api::<kube::api::DynamicObject>::namespaced_with(
                    client.clone(),
                    &pod.namespace,
                    &untyped_views::events(),
                ),
                about,
                None,
                untyped_views::event_row,
                move |feed| events(untyped_views::only_events(feed)),
                Pages::Whole,
            ),
        ]
    }

    /// Adds the debug container; the pod view's watch reports how it comes up.
    fn launch(&mut self, id: TerminalId, client: kube::Client, key: TerminalKey, spec: DebugSpec) {
        let pod = key.pod;
        let tx = self.tx.clone();
        let limit = self.launch_timeout;
        tokio::spawn(async move {
            let launch = crate::cluster::debug::launch(&spec, &client, &pod.namespace, &pod.name);
            let Ok(launched) = tokio::time::timeout(limit, launch).await else {
                let sentence = format!(
                    "The API server did not answer the request to add the debug container within {} s; it may still be added: watch the pod.",
                    limit.as_secs()
                );
                let event = Event::LaunchFailed {
                    id,
                    sentence: sentence.into(),
                    refused_by: None,
                };
                let _ = tx.send(Tagged::untied(event)).await;
                return;
            };
            let event = match launched {
                Ok(launched) if launched.warnings.is_empty() => return,
                Ok(launched) => Event::LaunchWarned {
                    id,
                    warnings: launched
                        .warnings
                        .iter()
                        .map(|w| w.as_str().into())
                        .collect(),
                },
                Err(e) => {
                    let problem =
                        crate::cluster::debug::describe_launch_error(&e, &pod.namespace, &pod.name);
                    Event::LaunchFailed {
                        id,
                        sentence: problem.sentence,
                        refused_by: problem.refused_by,
                    }
                }
            };
            let _ = tx.send(Tagged::untied(event)).await;
        });
    }

    /// Runs a feed, forwarding its updates to the app as `wrap(update)`;
    /// a `Paged` one reports its list's pages as they come.
    #[allow(clippy::too_many_arguments)]
    fn spawn_feed<K, R>(
        &self,
        (source, generation): (FeedOrigin, u64),
        api: Api<K>,
        config: kube::runtime::watcher::Config,
        scope: Option<String>,
        project: impl Fn(&K) -> R + Send + Sync + 'static,
        wrap: impl Fn(Feed<R>) -> Event + Send + Sync + 'static,
        pages: Pages,
    ) -> JoinHandle<()>
    where
        K: Watched,
        R: Send + 'static,
    {
        let (feed_tx, mut feed_rx) = feed::channel();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let watcher = feed::run_with(api, config, scope, project, feed_tx, pages);
            let forward = async {
                while let Some(update) = feed_rx.recv().await {
                    let tagged = Tagged {
                        source,
                        generation,
                        event: wrap(update),
                    };
                    if tx.send(tagged).await.is_err() {
                        break;
                    }
                }
            };
            tokio::join!(watcher, forward);
        })
    }

    /// One feed of `K` on `client`'s cluster for each namespace of `scope`
    /// (one for all namespaces with [`Scope::All`]), each update wrapped.
    fn spawn_scoped<K, R>(
        &self,
        client: kube::Client,
        tagged: (FeedOrigin, u64),
        scope: Scope,
        project: impl Fn(&K) -> R + Clone + Send + Sync + 'static,
        wrap: impl Fn(Feed<R>) -> Event + Clone + Send + Sync + 'static,
        pages: Pages,
    ) -> Vec<JoinHandle<()>>
    where
        K: Watched + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
        R: Send + 'static,
    {
        match scope {
            Scope::All => vec![self.spawn_feed(
                tagged,
                Api::<K>::all(client),
                feed::config(),
                None,
                project,
                wrap,
                pages,
            )],
            Scope::Namespaces(list) => list
                .into_iter()
                .map(|ns| {
                    let api = Api::<K>::namespaced(client.clone(), &ns);
                    let (project, wrap) = (project.clone(), wrap.clone());
                    self.spawn_feed(tagged, api, feed::config(), Some(ns), project, wrap, pages)
                })
                .collect(),
        }
    }

    pub(super) fn watch_namespaces(&mut self) {
        if let Some(old) = self.namespaces.take() {
            old.abort();
        }
        let tagged = (
            FeedOrigin::Namespaces,
            self.next_generation(FeedOrigin::Namespaces),
        );
        // Untyped, so it shares the other kinds' loop (see untyped_views).
        let kind = kube::api::ApiResource::erase::<Namespace>(&());
        let api = Api::<kube::api::DynamicObject>::all_with(self.connection.client.clone(), &kind);
        let name = |ns: &kube::api::DynamicObject| {
            untyped_views::Untyped::Namespace(ns.metadata.name.clone().unwrap_or_default())
        };
        let wrap = |feed: Feed<untyped_views::Untyped>| {
            Event::Namespaces(feed.filter_map(|row| match row {
                untyped_views::Untyped::Namespace(name) => Some(name),
                _ => None,
            }))
        };
        self.namespaces =
            Some(self.spawn_feed(tagged, api, feed::config(), None, name, wrap, Pages::Whole));
    }

    fn switch_context(&mut self, context: String) {
        if let Some(old) = self.connecting.take() {
            old.abort();
        }
        let target = Target {
            context: Some(context),
            ..self.target.clone()
        };
        let tx = self.tx.clone();
        let connected = self.connected.clone();
        // Connecting reads files and may run exec plugins: keep it off the UI path.
        self.connecting = Some(tokio::spawn(async move {
            match connect_and_probe(&target).await {
                Ok(c) => {
                    let _ = connected.send(c).await;
                }
                Err(unusable) => {
                    let failed = Tagged::untied(Event::ConnectFailed(unusable.sentence));
                    let _ = tx.send(failed).await;
                }
            }
        }));
    }

    /// Connects to `context` beside the browser's (for restored panes):
    /// its client joins the others, the browser stays where it is.
    fn connect_beside(&mut self, context: String) {
        let target = Target {
            context: Some(context.clone()),
            ..self.target.clone()
        };
        let beside = self.beside.clone();
        tokio::spawn(async move {
            let outcome = connect_and_probe(&target).await.map_err(|u| u.sentence);
            let _ = beside.send((context, outcome)).await;
        });
    }

    /// A context connected beside the browser's: its client is kept.
    pub(super) fn connected_beside(
        &mut self,
        context: String,
        outcome: Result<Connection, String>,
    ) -> Event {
        let outcome = outcome.map(|connection| {
            let cluster = connection.cluster();
            self.clients.insert(cluster.clone(), connection.client);
            crate::app::Reached {
                cluster,
                namespace: connection.namespace,
            }
        });
        Event::ContextReady { context, outcome }
    }

    /// Where each of `terminals`' logs got to, into the kept workspace.
    pub(super) fn add_log_positions(
        &self,
        workspace: &mut crate::app::saved::SavedWorkspace,
        terminals: &[TerminalId],
    ) {
        use crate::app::saved::SavedKind;
        for (kept, id) in workspace.terminals.iter_mut().zip(terminals) {
            // Only a followed log goes on from a place; another pane's log
            // (a finished container's, a previous run's) is read whole.
            if matches!(
                kept.kind,
                SavedKind::Log | SavedKind::AllLogs | SavedKind::PodsLogs
            ) {
                kept.last_seen.extend(self.sessions.log_positions(*id));
            }
        }
    }

    /// Switches every watch to a new context's client.
    pub(super) fn replace_connection(&mut self, connection: Connection) {
        self.next_generation(FeedOrigin::Pods);
        self.next_generation(FeedOrigin::Pod);
        abort(&mut self.pods);
        abort(&mut self.pod);
        self.others.clear();
        self.clients
            .insert(connection.cluster(), connection.client.clone());
        self.connection = connection;
        self.watch_namespaces();
        self.feel_pulse();
    }

    /// Starts asking the browser's cluster whether it answers (one probe
    /// at a time, for the current connection only).
    pub(super) fn feel_pulse(&mut self) {
        if let Some(old) = self.pulse.take() {
            old.abort();
        }
        self.pulse = Some(tokio::spawn(super::pulse::run(
            self.connection.client.clone(),
            self.connection.cluster(),
            self.tx.clone(),
            Tagged::untied,
        )));
    }

    pub(super) fn stop_all(&mut self) {
        self.sessions.stop_all();
        for (_, mut handles) in self.followers.drain() {
            abort(&mut handles);
        }
        abort(&mut self.pods);
        abort(&mut self.pod);
        if let Some(ns) = self.namespaces.take() {
            ns.abort();
        }
    }
}

/// What a feed can watch.
trait Watched:
    kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync + 'static
{
}

impl<K> Watched for K where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// A terminal opened on a cluster the runtime has no client for.
struct NoClient {
    id: TerminalId,
    context: String,
}

impl NoClient {
    fn ends_its_terminal(self) -> Event {
        tracing::error!("no connection to context {}", self.context);
        let end = SessionEnd {
            exit_code: None,
            reason: format!(
                "no connection to context {} any more; open the pod again",
                self.context
            )
            .into(),
            disconnected: false,
        };
        Event::SessionEnded { id: self.id, end }
    }
}

/// Runs one port-forward, its news and (once a second, when they change)
/// its totals sent to the app.
async fn forward(
    id: u64,
    client: kube::Client,
    request: crate::model::forward::ForwardRequest,
    tx: mpsc::Sender<Tagged>,
) {
    use crate::cluster::forward::{self, ForwardStats};
    use std::sync::atomic::Ordering;
    let stats = std::sync::Arc::new(ForwardStats::default());
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let running = tokio::spawn(forward::run(client, request, events_tx, stats.clone()));
    struct AbortOnDrop(JoinHandle<()>);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let _running = AbortOnDrop(running);
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    let mut last = (0, 0, 0);
    loop {
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { return };
                let ended = matches!(event, crate::model::forward::ForwardEvent::Ended(_));
                if tx.send(Tagged::untied(Event::Forward { id, event })).await.is_err() || ended {
                    return;
                }
            }
            _ = ticks.tick() => {
                let now = (
                    stats.open.load(Ordering::Relaxed),
                    stats.to_pod.load(Ordering::Relaxed),
                    stats.from_pod.load(Ordering::Relaxed),
                );
                if now != last {
                    last = now;
                    let totals = Event::ForwardTotals { id, open: now.0, to_pod: now.1, from_pod: now.2 };
                    if tx.send(Tagged::untied(totals)).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// The newest pod, not being deleted, that the controller with this UID
/// runs in `namespace` (a gone pod's replacement); `None` if there is none
/// or the list fails.
async fn replacement(
    client: kube::Client,
    namespace: &str,
    controller_uid: &str,
) -> Option<String> {
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let listed = tokio::time::timeout(
        READ_TIMEOUT,
        crate::cluster::objects::list(&pods, &Default::default()),
    )
    .await
    .ok()?
    .ok()?;
    listed
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.uid == controller_uid)
        })
        .max_by_key(|p| p.metadata.creation_timestamp.clone().map(|t| t.0))
        .and_then(|p| p.metadata.name)
}

fn abort(handles: &mut Vec<JoinHandle<()>>) {
    for h in handles.drain(..) {
        h.abort();
    }
}

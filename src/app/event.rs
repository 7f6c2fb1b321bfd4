//! What happens to the app ([`Event`]) and what it asks the runtime to do
//! ([`Effect`]): the two halves of `App::update`.

use bytes::Bytes;
use crossterm::event::{KeyEvent, MouseEvent};
use jiff::Timestamp;

use super::Scope;
use super::TerminalId;
use super::fleet::FleetPod;
use super::object_page::ObjectRead;
use super::terminal;
use crate::model::debug::DebugSpec;
use crate::model::feed::Feed;
use crate::model::object_ref::ObjectRef;
use crate::model::pod_security::Policy;
use crate::model::session::{SessionEnd, SessionKind};
use crate::model::text::Printable;
use crate::model::usage::{PodUse, UsageError};
use crate::model::{ClusterId, EventRow, PodDetail, PodKey, PodRow, TerminalKey};
use crate::term::Size;

/// A context connected beside the browser's: which cluster, and the
/// namespace its kubeconfig entry names (`default` when it names none).
#[derive(Debug, Clone, PartialEq)]
pub struct Reached {
    pub cluster: ClusterId,
    pub namespace: String,
}

/// Everything that happens to the app.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    /// Keys now come faster than anyone types (text pasted without
    /// bracketed paste, or keys sent by a program), or, `false`, no
    /// longer: while they do, no key creates or deletes anything in the
    /// cluster (a form's enter, a question's y), as the user may be typing
    /// into what they believe is a shell.
    Burst(bool),
    /// The user's terminal changed size.
    Resize(Size),
    /// Once a second, for ages and the connection indicator.
    Tick(Timestamp),
    /// The pod list's watch of the browser's cluster.
    Pods(Feed<PodRow>),
    /// The pod list's watch of one cluster of several
    /// ([`Effect::WatchPodsOf`]).
    OtherPods {
        cluster: ClusterId,
        feed: Feed<PodRow>,
    },
    Namespaces(Feed<String>),
    Detail(Feed<PodDetail>),
    PodEvents(Feed<EventRow>),
    /// The events view's watch.
    Events(Feed<EventRow>),
    /// The nodes view's watch of the browser's cluster.
    Nodes(Feed<crate::model::node::NodeRow>),
    /// The nodes view's watch of another cluster the list shows.
    OtherNodes {
        cluster: ClusterId,
        feed: Feed<crate::model::node::NodeRow>,
    },
    /// The services view's watch of the browser's cluster (one feed a
    /// namespace).
    Services(Feed<crate::model::service::ServiceRow>),
    /// The services view's watch of another cluster the list shows.
    OtherServices {
        cluster: ClusterId,
        feed: Feed<crate::model::service::ServiceRow>,
    },
    /// A workload view's watch of the browser's cluster (one feed a
    /// namespace).
    Workloads(Feed<crate::model::workload::WorkloadRow>),
    /// A workload view's watch of another cluster the list shows.
    OtherWorkloads {
        cluster: ClusterId,
        feed: Feed<crate::model::workload::WorkloadRow>,
    },
    /// The pod [`Effect::CreatePod`] asked for was created (its pane may
    /// have closed meanwhile).
    PodCreated {
        id: TerminalId,
        cluster: ClusterId,
        pod: PodKey,
    },
    /// A delete asked for with [`Effect::DeletePod`] was accepted, or not
    /// (one sentence).
    PodDeleted {
        key: PodKey,
        outcome: Result<(), String>,
    },
    /// A stop asked for with [`Effect::StopDebugger`] ended: how, or why
    /// not (one sentence either way).
    DebuggerStopped(Result<String, String>),
    /// A new context is connected.
    Connected {
        cluster: ClusterId,
        context: String,
        namespace: String,
        contexts: Vec<String>,
    },
    /// Switching context failed: one sentence.
    ConnectFailed(String),
    /// Adding the debug container failed: one sentence, and the Pod
    /// Security level when that was the refusal.
    LaunchFailed {
        id: TerminalId,
        sentence: Printable,
        refused_by: Option<Policy>,
    },
    /// The debug container was added with warnings (`Warning` headers).
    LaunchWarned {
        id: TerminalId,
        warnings: Vec<Printable>,
    },
    /// The pod view's namespace's Pod Security labels; `None` when the user
    /// may not read the namespace.
    PodSecurity(Option<Policy>),
    /// The marked pods, read for the launcher ([`Effect::ReadPods`]), on
    /// this cluster.
    PodsRead {
        cluster: ClusterId,
        pods: Vec<FleetPod>,
    },
    /// The pods' CPU and memory in these namespaces (all for `None`), as
    /// [`Effect::ReadUsage`] asked, and how often they are measured.
    Usage {
        cluster: ClusterId,
        namespaces: Option<Vec<String>>,
        read: Result<(Vec<PodUse>, Option<std::time::Duration>), UsageError>,
    },
    /// What each node uses ([`Effect::ReadNodeUsage`]).
    NodeUsage {
        cluster: ClusterId,
        read: Result<Vec<(String, crate::model::usage::Use)>, UsageError>,
    },
    /// The pods on `node` in every namespace ([`Effect::ReadNodePods`]),
    /// or why they could not be read.
    NodePods {
        cluster: ClusterId,
        node: String,
        pods: Result<Vec<PodRow>, String>,
    },
    /// A workload or Service and its events ([`Effect::ReadObject`]), or
    /// why it could not be read.
    ObjectRead {
        cluster: ClusterId,
        object: ObjectRef,
        read: Result<ObjectRead, String>,
    },
    /// An answer for the file browser.
    Files(super::files::FilesEvent),
    /// The stream is open (and any earlier output shown): typing goes through.
    SessionAttached {
        id: TerminalId,
    },
    SessionOutput {
        id: TerminalId,
        bytes: Bytes,
    },
    SessionEnded {
        id: TerminalId,
        end: SessionEnd,
    },
    /// The stream has not answered for this many seconds (`None`: it
    /// answers again).
    SessionUnanswered {
        id: TerminalId,
        unanswered: Option<u64>,
    },
    /// The pod a terminal is on, from the terminal's own watch.
    TerminalPod {
        id: TerminalId,
        feed: Feed<PodDetail>,
    },
    TerminalEvents {
        id: TerminalId,
        feed: Feed<EventRow>,
    },
    /// The API server has left the liveness probe unanswered this many
    /// seconds, or answered it (`None`), on this cluster.
    Pulse {
        cluster: ClusterId,
        unanswered: Option<u64>,
    },
    /// A timer asked for with [`Effect::WakeAfter`] went off.
    Wake(u64),
    /// A capture said something ([`Effect::StartCapture`]).
    Capture {
        id: u64,
        event: crate::model::capture::CaptureEvent,
    },
    /// A port-forward said something ([`Effect::StartForward`]).
    Forward {
        id: u64,
        event: crate::model::forward::ForwardEvent,
    },
    /// A port-forward's totals, once a second while they change.
    ForwardTotals {
        id: u64,
        open: usize,
        to_pod: u64,
        from_pod: u64,
    },
    /// A context asked for with [`Effect::ConnectContext`] is connected
    /// (as this cluster), or cannot be: one sentence.
    ContextReady {
        context: String,
        outcome: Result<Reached, String>,
    },
    /// [`Effect::SaveWorkspace`] wrote this file, or could not.
    WorkspaceSaved {
        name: String,
        outcome: Result<std::path::PathBuf, String>,
    },
    /// The pod [`Effect::FindReplacement`] found (its name), if any.
    ReplacementFound {
        id: TerminalId,
        pod: Option<String>,
    },
    /// [`Effect::LoadWorkspace`] read it, or could not (one sentence).
    WorkspaceLoaded {
        name: String,
        outcome: Result<Box<super::saved::SavedWorkspace>, String>,
    },
    /// Recording started (with its file), stopped (`None`), or failed.
    Recording {
        id: TerminalId,
        outcome: Result<Option<std::path::PathBuf>, String>,
    },
}

/// What the runtime should do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    /// Something with a container's files, for the file browser: its
    /// answer is an [`Event::Files`]. With `transfer`, a copy that reports
    /// its progress under that id.
    Files {
        generation: u64,
        key: TerminalKey,
        via: super::files::Via,
        op: super::files::FileOp,
        transfer: Option<u64>,
    },
    /// Stop this copy (its partial file is removed).
    CancelTransfer(u64),
    /// Find the local paths that begin so, for the upload prompt.
    CompleteLocalPath(String),
    /// Send [`Event::Wake`] with `token` after this long.
    WakeAfter {
        after: std::time::Duration,
        token: u64,
    },
    /// Replace the pod watch(es) with this scope, on the browser's
    /// cluster (the other clusters the list shows are watched again with
    /// [`Effect::WatchPodsOf`]).
    WatchPods(Scope),
    /// Watch this scope's pods on one cluster of a list of several,
    /// replacing that cluster's watch alone (all are replaced by the next
    /// [`Effect::WatchPods`]), and whether another cluster answers:
    /// [`Event::OtherPods`], [`Event::Pulse`].
    WatchPodsOf {
        cluster: ClusterId,
        scope: Scope,
    },
    /// Watch one pod's detail and events (the pod view), on this cluster.
    WatchPod(ClusterId, PodKey),
    /// Watch the events of these namespaces of this cluster (the events
    /// view); replaces the pod view's watch.
    WatchEvents(ClusterId, Scope),
    /// Stop the pod view's, the events view's or the nodes view's watch.
    StopWatchingPod,
    /// Watch the nodes of these clusters (the nodes view); replaces the
    /// pod view's watch.
    WatchNodes(Vec<ClusterId>),
    /// Watch the Services of these namespaces of each cluster (the
    /// services view); replaces the pod view's watch.
    WatchServices(Vec<(ClusterId, Scope)>),
    /// Watch one kind of workload in these namespaces of each cluster (a
    /// workload view); replaces the pod view's watch.
    WatchWorkloads(
        crate::model::workload::WorkloadKind,
        Vec<(ClusterId, Scope)>,
    ),
    /// Create this pod (a node debug pod) for the terminal, after checking
    /// the namespace's Pod Security: [`Event::PodCreated`], else
    /// [`Event::LaunchFailed`].
    CreatePod {
        id: TerminalId,
        key: TerminalKey,
        pod: Box<k8s_openapi::api::core::v1::Pod>,
        /// What to do if the namespace's Pod Security refuses it.
        refused_hint: String,
    },
    /// Delete the pod, on this cluster (the user confirmed).
    DeletePod {
        cluster: ClusterId,
        pod: PodKey,
    },
    /// End debug container `name` of the pod, on this cluster (the user
    /// confirmed): [`Event::DebuggerStopped`].
    StopDebugger {
        cluster: ClusterId,
        pod: PodKey,
        name: String,
    },
    SwitchContext(String),
    /// Read the pods' CPU and memory in these namespaces (all for `None`)
    /// from the metrics API: [`Event::Usage`].
    ReadUsage {
        cluster: ClusterId,
        namespaces: Option<Vec<String>>,
        /// The pods whose containers' figures are kept (the rest: totals).
        detailed: Vec<PodKey>,
    },
    /// Read what each node uses from the metrics API: [`Event::NodeUsage`].
    ReadNodeUsage {
        cluster: ClusterId,
    },
    /// Read the pods on this node in every namespace (a field selector):
    /// [`Event::NodePods`].
    ReadNodePods {
        cluster: ClusterId,
        node: String,
    },
    /// Read a workload or Service and the events about it, once:
    /// [`Event::ObjectRead`].
    ReadObject {
        cluster: ClusterId,
        object: ObjectRef,
    },
    /// Read these pods and their namespaces' Pod Security labels, for the
    /// launcher of many pods: [`Event::PodsRead`].
    ReadPods {
        cluster: ClusterId,
        pods: Vec<PodKey>,
    },
    /// Add this ephemeral container (`key.container`) to the pod, on the
    /// key's cluster.
    Launch {
        id: TerminalId,
        key: TerminalKey,
        spec: DebugSpec,
    },
    /// Attach or exec, on the key's cluster. With `replay_log`, first show
    /// what the container printed before the attach (from its log), without
    /// duplicates.
    OpenSession {
        id: TerminalId,
        key: TerminalKey,
        kind: SessionKind,
        size: Size,
        replay_log: bool,
        /// The container's stdin and tty (an attach), or a terminal's (an
        /// exec): without a tty, output comes as two streams, untranslated.
        stdio: crate::model::Stdio,
    },
    /// Show a container's log (for containers that have exited).
    ShowLog {
        id: TerminalId,
        key: TerminalKey,
        /// Each of these containers' logs, each line after the container's
        /// name (the all-containers pane); empty: `key.container`'s alone.
        containers: Vec<String>,
        /// `containers` are pods of `key`'s namespace: every container's
        /// log of each, each line after `pod container`.
        of_pods: bool,
        options: terminal::LogOptions,
        /// Start over (after a toggle or `:since`), not from where the
        /// pane's last stream stopped.
        fresh: bool,
        /// Per container, where a restored pane's log stopped before the
        /// restart (used when its stream has no place of its own yet).
        resume_from: std::collections::BTreeMap<String, Timestamp>,
        /// The previous run's log (`previous=true`).
        previous: bool,
        /// Follow the running container's log (`follow=true`), as a log
        /// pane does; else read what there is, as a finished container's
        /// pane does.
        follow: bool,
    },
    SendInput {
        id: TerminalId,
        bytes: Bytes,
    },
    ResizeSession {
        id: TerminalId,
        size: Size,
    },
    /// Closes the session's stdin alone (`ctrl-d` on an empty line in a
    /// pane without a tty): the stream stays open for the output.
    CloseStdin {
        id: TerminalId,
    },
    /// Ends the session and everything that follows it (its pod watch,
    /// its recording).
    CloseSession {
        id: TerminalId,
    },
    /// Watch the pod a terminal is on (on its cluster), for its container's state.
    Follow {
        id: TerminalId,
        key: TerminalKey,
    },
    /// Put this text on the user's clipboard (OSC 52 to the user's own terminal).
    Copy(String),
    /// Remember an image that ran, first in the launcher's recent list.
    RememberImage(String),
    /// Capture, on this cluster, into `file` (a free name beside it if
    /// taken) until [`Effect::StopCapture`] or its own end: its news come
    /// as [`Event::Capture`].
    StartCapture {
        id: u64,
        cluster: ClusterId,
        request: crate::model::capture::Request,
        file: String,
    },
    StopCapture(u64),
    /// Start forwarding, on this cluster, until [`Effect::StopForward`]:
    /// its news come as [`Event::Forward`].
    StartForward {
        id: u64,
        cluster: ClusterId,
        request: crate::model::forward::ForwardRequest,
    },
    StopForward(u64),
    /// Connect to this context beside the browser's, for restored panes
    /// and forwards: [`Event::ContextReady`].
    ConnectContext(String),
    /// Keep the workspace under this name (the runtime adds where each
    /// log pane of `terminals` got to): [`Event::WorkspaceSaved`].
    SaveWorkspace {
        name: String,
        workspace: Box<super::saved::SavedWorkspace>,
        terminals: Vec<TerminalId>,
    },
    /// Read the workspace kept under this name: [`Event::WorkspaceLoaded`].
    LoadWorkspace(String),
    /// Forget the workspace kept at the last run's end (`d` at the question).
    ForgetWorkspace,
    /// Find the pod the controller with this UID runs now in `namespace`
    /// (a restored log pane's pod is gone): [`Event::ReplacementFound`].
    FindReplacement {
        id: TerminalId,
        cluster: ClusterId,
        namespace: String,
        controller_uid: String,
    },
    /// Start or stop recording a terminal (asciicast v2).
    Record {
        id: TerminalId,
        on: bool,
        size: Size,
        title: String,
    },
}

//! Port-forwards in the TUI: the `F` form over a pod, the Forwards view
//! (`:pf`), and each forward's state as its events report it. The
//! forwarding runs in the runtime (`cluster::forward`), for as long as the
//! app lives, whatever the user browses.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crossterm::event::{KeyCode, KeyEvent};

use super::form::{self, Answer, Form, Input, LineEdit, Shown, Value};
use super::*;
use crate::model::forward::{
    DeclaredPort, ForwardEvent, ForwardRequest, ForwardTarget, PortMapping, RemotePort,
    declared_ports, resolve_port,
};

/// One forward, as the Forwards view lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Forward {
    pub id: u64,
    pub cluster: ClusterId,
    pub namespace: String,
    pub target: ForwardTarget,
    pub remote: RemotePort,
    /// Where it listens, once it does.
    pub local: Option<SocketAddr>,
    /// The local port asked for (`None`: the remote port's number).
    pub wanted_local: Option<u16>,
    /// The remote port's number, once resolved.
    pub remote_number: Option<u16>,
    /// The pod it reaches now (`namespace/name`).
    pub pod: Option<String>,
    pub state: ForwardState,
    /// The last connection that failed, and why.
    pub last_failure: Option<String>,
    pub open: usize,
    pub to_pod: u64,
    pub from_pod: u64,
}

impl Forward {
    /// A forward of `mapping` to `target`, not listening yet.
    pub fn new(
        id: u64,
        cluster: ClusterId,
        namespace: String,
        target: ForwardTarget,
        mapping: PortMapping,
        state: ForwardState,
    ) -> Forward {
        Forward {
            id,
            cluster,
            namespace,
            target,
            remote: mapping.remote,
            local: None,
            wanted_local: mapping.local,
            remote_number: None,
            pod: None,
            state,
            last_failure: None,
            open: 0,
            to_pod: 0,
            from_pod: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardState {
    Starting,
    Listening,
    /// No pod can be reached now: why, in a few words.
    Switching(String),
    /// It stopped: one sentence.
    Failed(String),
}

impl ForwardState {
    /// One word; a failure's sentence is shown under the table.
    pub fn label(&self) -> &'static str {
        match self {
            ForwardState::Starting => "starting",
            ForwardState::Listening => "listening",
            ForwardState::Switching(_) => "switching",
            ForwardState::Failed(_) => "failed",
        }
    }
}

/// The Forwards view: which row is selected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardsView {
    pub cursor: usize,
}

/// The `F` form: one of the pod's declared ports (or a typed one) and a
/// local port.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardForm {
    /// Where the forward goes: the cluster of the pod or object it is for.
    pub cluster: ClusterId,
    pub namespace: String,
    /// A pod, or a Service or workload whose pods the forward follows.
    pub target: ForwardTarget,
    pub ports: Vec<DeclaredPort>,
    /// Index into `ports`; `ports.len()` is the typed remote port.
    pub choice: usize,
    /// The remote port when typed (a number or a port's name).
    pub typed_remote: LineEdit,
    pub local: LineEdit,
    /// The local port was typed by the user (else it follows the choice).
    pub local_typed: bool,
    pub field: FormField,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormField {
    Remote,
    Local,
}

impl ForwardForm {
    fn new(
        cluster: ClusterId,
        namespace: String,
        target: ForwardTarget,
        ports: Vec<DeclaredPort>,
        container: Option<&str>,
    ) -> Self {
        // The selected container's first TCP port, else the pod's first.
        let choice = ports
            .iter()
            .position(|p| Some(p.container.as_str()) == container && p.protocol == "TCP")
            .or_else(|| ports.iter().position(|p| p.protocol == "TCP"))
            .unwrap_or(ports.len());
        let mut form = ForwardForm {
            cluster,
            namespace,
            target,
            ports,
            choice,
            typed_remote: LineEdit::default(),
            local: LineEdit::default(),
            local_typed: false,
            field: FormField::Remote,
        };
        form.follow_choice();
        form
    }

    /// The local port follows the pod's, as kubectl's `8080` does, until
    /// the user types one.
    fn follow_choice(&mut self) {
        if !self.local_typed {
            self.local = match self.ports.get(self.choice) {
                Some(port) => port.number.to_string(),
                None => self
                    .typed_remote
                    .parse::<u16>()
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
            }
            .into();
        }
    }

    /// The remote port as the command line would take it.
    pub fn remote_text(&self) -> String {
        match self.ports.get(self.choice) {
            Some(port) => port.number.to_string(),
            None => self.typed_remote.to_string(),
        }
    }

    /// The mapping, or why the form cannot be sent.
    fn mapping(&self) -> Result<PortMapping, String> {
        let remote = self.remote_text();
        if remote.is_empty() {
            return Err("Type the pod's port: a number or a container port's name.".into());
        }
        let local = match self.local.trim() {
            "" => "0",
            typed => typed,
        };
        let mapping = PortMapping::parse(&format!("{local}:{remote}"))?;
        resolve_port(&mapping.remote, &self.ports)?;
        Ok(mapping)
    }
}

impl Form for ForwardForm {
    type Field = FormField;
    type Sent = PortMapping;
    type Context = ();

    /// Two fields: the pod's port, the local one.
    fn fields(&self) -> &[FormField] {
        &[FormField::Remote, FormField::Local]
    }

    fn focus(&self) -> FormField {
        self.field
    }

    fn set_focus(&mut self, field: FormField) {
        self.field = field;
    }

    fn input(&self, field: FormField) -> Input {
        match field {
            FormField::Remote => Input::List,
            FormField::Local => Input::Text,
        }
    }

    fn text_mut(&mut self, field: FormField) -> Option<&mut LineEdit> {
        Some(match field {
            FormField::Remote => &mut self.typed_remote,
            FormField::Local => &mut self.local,
        })
    }

    fn choose(&mut self, field: FormField, delta: isize) {
        if field == FormField::Remote {
            self.choice = form::cycle(self.choice, self.ports.len() + 1, delta);
            self.follow_choice();
        }
    }

    /// A port is a number or a port's name; typing the pod's port picks
    /// the typed one.
    fn typed(&mut self, field: FormField, before: LineEdit) {
        match field {
            FormField::Local => {
                self.local_typed = true;
                if !(self.local.len() <= 5 && self.local.bytes().all(|b| b.is_ascii_digit())) {
                    self.local = before;
                }
            }
            FormField::Remote => {
                let fits = self.typed_remote.len() <= 15
                    && self
                        .typed_remote
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-');
                if fits {
                    self.choice = self.ports.len();
                } else {
                    self.typed_remote = before;
                }
                self.follow_choice();
            }
        }
    }

    fn submit(&self, _: &()) -> Result<PortMapping, String> {
        self.mapping()
    }

    fn shown(&self, field: FormField) -> Shown<'_> {
        match field {
            FormField::Remote => Shown {
                label: match self.target {
                    ForwardTarget::Pod(_) => "pod's port",
                    ForwardTarget::Service(_) => "Service's port",
                    ForwardTarget::Owner { .. } => "pods' port",
                }
                .to_string(),
                value: Value::List {
                    options: self.ports.iter().map(port_words).collect(),
                    at: self.choice,
                    typed: Some((&self.typed_remote, "another: a number or a port's name")),
                },
                note: None,
            },
            FormField::Local => Shown::text("local port", &self.local, "a free one"),
        }
    }
}

/// A declared port as the form offers it: its name, number and protocol,
/// and its container (a Service's port belongs to none).
fn port_words(port: &DeclaredPort) -> String {
    let name = port.name.as_deref().unwrap_or("—");
    let mut words = format!("{name:<16} {:>5}/{:<4}", port.number, port.protocol);
    if !port.container.is_empty() {
        words.push_str(&format!(" container {}", port.container));
    }
    words
}

impl App {
    /// `F`: the form over the pod view's pod; from the list, the pod opens
    /// first and the form with it.
    pub(super) fn open_forward_form(&mut self) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            let Some(row) = self.selected_row() else {
                return vec![];
            };
            self.form_after_detail = Some((row, form::AfterDetail::Forward));
            return self.open_pod(false);
        };
        let Some(detail) = view.pod.detail.as_ref() else {
            let row = (view.cluster.clone(), view.key.clone());
            self.form_after_detail = Some((row, form::AfterDetail::Forward));
            return vec![];
        };
        let container = view.selected().map(|c| c.name.as_str().to_string());
        let form = ForwardForm::new(
            view.cluster.clone(),
            detail.key.namespace.to_string(),
            ForwardTarget::Pod(detail.key.name.to_string()),
            declared_ports(&detail.manifest),
            container.as_deref(),
        );
        self.mode = Mode::Forward(Box::new(form));
        vec![]
    }

    /// `F` on a Service or a workload: the form for a forward that follows
    /// its pods, offering `ports` (a Service's own; a workload's pod
    /// template's).
    pub(super) fn open_forward_form_to(
        &mut self,
        cluster: crate::model::ClusterId,
        namespace: String,
        target: ForwardTarget,
        ports: Vec<DeclaredPort>,
    ) -> Vec<Effect> {
        let form = ForwardForm::new(cluster, namespace, target, ports, None);
        self.mode = Mode::Forward(Box::new(form));
        vec![]
    }

    pub(super) fn on_forward_form_key(
        &mut self,
        mut form: ForwardForm,
        key: KeyEvent,
    ) -> Vec<Effect> {
        match form::on_key(&mut form, &key, &()) {
            Answer::Cancel => return vec![],
            Answer::Send(mapping) => {
                return self.start_forward(form.cluster, form.namespace, form.target, mapping);
            }
            Answer::Refused(why) => self.message = Some(error(why)),
            Answer::Stay | Answer::Edited => {}
        }
        self.mode = Mode::Forward(Box::new(form));
        vec![]
    }

    fn start_forward(
        &mut self,
        cluster: ClusterId,
        namespace: String,
        target: ForwardTarget,
        mapping: PortMapping,
    ) -> Vec<Effect> {
        self.next_forward += 1;
        let id = self.next_forward;
        let shown = match &target {
            ForwardTarget::Pod(name) => format!("{namespace}/{name}"),
            other => format!("{other} in {namespace}"),
        };
        let request = ForwardRequest {
            namespace: namespace.clone(),
            target: target.clone(),
            ports: vec![mapping.clone()],
            addresses: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
        };
        self.forwards.push(Forward::new(
            id,
            cluster.clone(),
            namespace,
            target,
            mapping,
            ForwardState::Starting,
        ));
        self.message = Some(info(format!(
            "Forwarding to {shown}; :pf lists the forwards (they run while you browse)."
        )));
        vec![Effect::StartForward {
            id,
            cluster,
            request,
        }]
    }

    pub(super) fn on_forward_event(&mut self, id: u64, event: ForwardEvent) {
        let Some(forward) = self.forwards.iter_mut().find(|f| f.id == id) else {
            return;
        };
        match event {
            ForwardEvent::Listening { local, remote } => {
                forward.local = Some(local);
                forward.remote_number = Some(remote);
                if forward.state == ForwardState::Starting {
                    forward.state = ForwardState::Listening;
                }
                self.message = Some(info(format!(
                    "Forwarding {local} -> {}:{remote}.",
                    forward.target
                )));
            }
            ForwardEvent::Reaching { pod, switched } => {
                if switched {
                    self.message = Some(info(format!(
                        "The forward on {} now reaches {pod}.",
                        local_text(forward)
                    )));
                }
                forward.pod = Some(pod);
                if !matches!(forward.state, ForwardState::Failed(_)) && forward.local.is_some() {
                    forward.state = ForwardState::Listening;
                }
            }
            ForwardEvent::Waiting(why) => forward.state = ForwardState::Switching(why),
            ForwardEvent::Accepted(_) => {}
            ForwardEvent::ConnectionFailed(why) => forward.last_failure = Some(why),
            ForwardEvent::Ended(why) => {
                self.message = Some(error(format!(
                    "The forward to {} stopped: {why}",
                    forward.target
                )));
                forward.state = ForwardState::Failed(why);
                forward.open = 0;
            }
        }
    }

    pub(super) fn on_forward_totals(&mut self, id: u64, open: usize, to_pod: u64, from_pod: u64) {
        if let Some(forward) = self.forwards.iter_mut().find(|f| f.id == id) {
            forward.open = open;
            forward.to_pod = to_pod;
            forward.from_pod = from_pod;
        }
    }

    /// `:pf`: the forwards.
    pub(super) fn open_forwards(&mut self) -> Vec<Effect> {
        let leaving_pod = matches!(self.view, View::Pod(_) | View::Events(_));
        self.view = View::Forwards(ForwardsView::default());
        self.message = match self.forwards.is_empty() {
            true => Some(info(
                "No forwards yet: F on a pod or a container forwards one of its ports.",
            )),
            false => None,
        };
        match leaving_pod {
            true => vec![Effect::StopWatchingPod],
            false => vec![],
        }
    }

    /// Keys of the Forwards view: move, `x` stops one, esc goes back.
    pub(super) fn on_forwards_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        let View::Forwards(view) = &mut self.view else {
            return None;
        };
        let last = self.forwards.len().saturating_sub(1);
        match key.code {
            KeyCode::Char('x') | KeyCode::Delete => {
                if self.forwards.is_empty() {
                    return Some(vec![]);
                }
                let stopped = self.forwards.remove(view.cursor.min(last));
                view.cursor = view.cursor.min(self.forwards.len().saturating_sub(1));
                self.message = Some(info(format!(
                    "Stopped the forward on {} to {}.",
                    local_text(&stopped),
                    stopped.target
                )));
                Some(vec![Effect::StopForward(stopped.id)])
            }
            _ => self.on_small_list_key(key, self.forwards.len()),
        }
    }

    /// The keys the small lists (forwards, captures) share: `j` `k` move
    /// over their `len` rows, `esc` goes back to the pods.
    pub(super) fn on_small_list_key(&mut self, key: &KeyEvent, len: usize) -> Option<Vec<Effect>> {
        let cursor = match &mut self.view {
            View::Forwards(view) => &mut view.cursor,
            View::Captures(view) => &mut view.cursor,
            _ => return None,
        };
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => {
                *cursor = (*cursor + 1).min(len.saturating_sub(1))
            }
            KeyCode::Char('k') | KeyCode::Up => *cursor = cursor.saturating_sub(1),
            KeyCode::Esc => {
                self.view = View::Pods;
                self.message = None;
            }
            _ => return None,
        }
        Some(vec![])
    }

    /// Forwards still running, for the quit question: "2 forwards
    /// (127.0.0.1:8080, …)".
    pub(super) fn running_forwards(&self) -> Option<String> {
        let running: Vec<String> = self
            .forwards
            .iter()
            .filter(|f| !matches!(f.state, ForwardState::Failed(_)))
            .map(local_text)
            .collect();
        match running.len() {
            0 => None,
            1 => Some(format!("a forward is open ({})", running[0])),
            n => Some(format!("{n} forwards are open ({})", running.join(", "))),
        }
    }
}

/// `127.0.0.1:8080`, or the port asked for before it listens.
pub fn local_text(forward: &Forward) -> String {
    match forward.local {
        Some(local) => local.to_string(),
        None => format!(":{}", forward.remote),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(container: &str, name: &str, number: u16, protocol: &str) -> DeclaredPort {
        DeclaredPort {
            container: container.into(),
            name: Some(name.into()),
            number,
            protocol: protocol.into(),
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, crossterm::event::KeyModifiers::NONE)
    }

    fn on_form_key(mut form: ForwardForm, key: &KeyEvent) -> (ForwardForm, Answer<PortMapping>) {
        let answer = form::on_key(&mut form, key, &());
        (form, answer)
    }

    fn here() -> ClusterId {
        ClusterId::new("sim", "https://127.0.0.1", "admin")
    }

    fn stay((form, answer): (ForwardForm, Answer<PortMapping>)) -> ForwardForm {
        assert!(
            matches!(answer, Answer::Stay | Answer::Edited),
            "the form stays: {answer:?}"
        );
        form
    }

    #[test]
    fn the_form_offers_the_containers_ports_and_follows_the_choice_until_local_is_typed() {
        let pod = ForwardTarget::Pod("api-1".into());
        let ports = vec![
            port("envoy", "admin", 9901, "TCP"),
            port("api", "http", 8080, "TCP"),
            port("dns", "dns", 53, "UDP"),
        ];
        let form = ForwardForm::new(here(), "payments".into(), pod, ports, Some("api"));
        assert_eq!((form.choice, form.local.as_str()), (1, "8080"));
        let form = stay(on_form_key(form, &key(KeyCode::Up)));
        assert_eq!(
            (form.remote_text().as_str(), form.local.as_str()),
            ("9901", "9901")
        );
        let form = stay(on_form_key(form, &key(KeyCode::Tab)));
        let form = stay(on_form_key(form, &key(KeyCode::Backspace)));
        let form = stay(on_form_key(form, &key(KeyCode::Char('2'))));
        let form = stay(on_form_key(form, &key(KeyCode::Char('x'))));
        assert_eq!(form.local, "9902");
        let form = stay(on_form_key(form, &key(KeyCode::Tab)));
        let form = stay(on_form_key(form, &key(KeyCode::Down)));
        assert_eq!(form.local, "9902", "a typed local port stays");
        match on_form_key(form.clone(), &key(KeyCode::Enter)) {
            (_, Answer::Send(mapping)) => {
                assert_eq!(mapping.local, Some(9902));
                assert_eq!(mapping.remote, RemotePort::Number(8080));
            }
            _ => panic!("sent"),
        }
        let udp = stay(on_form_key(form, &key(KeyCode::Down)));
        match on_form_key(udp, &key(KeyCode::Enter)) {
            (_, Answer::Refused(why)) => assert!(why.contains("TCP only"), "{why}"),
            _ => panic!("UDP is refused"),
        }
    }

    #[test]
    fn a_pod_without_declared_ports_takes_a_typed_one() {
        let form = ForwardForm::new(
            here(),
            "shop".into(),
            ForwardTarget::Pod("x".into()),
            vec![],
            None,
        );
        assert!(matches!(
            on_form_key(form.clone(), &key(KeyCode::Enter)),
            (_, Answer::Refused(why)) if why.contains("Type the pod's port")
        ));
        let mut form = form;
        for c in "5432".chars() {
            form = stay(on_form_key(form, &key(KeyCode::Char(c))));
        }
        match on_form_key(form, &key(KeyCode::Enter)) {
            (_, Answer::Send(mapping)) => {
                assert_eq!(mapping.remote, RemotePort::Number(5432));
                assert_eq!(mapping.local, Some(5432), "the same local port");
            }
            _ => panic!("sent"),
        }
    }
}

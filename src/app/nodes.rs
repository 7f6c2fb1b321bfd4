//! The nodes view (`:nodes`, `O`): the cluster's nodes by watch, `enter`
//! for the pods on one, and `d` for a shell on it: the node debug form,
//! whose pod is created in a pane and deleted when its last pane closes.

use crossterm::event::KeyEvent;

use super::form::{self, Answer, Form, Input, LineEdit, Shown, Value};
use super::keymap::Action;
use super::message::error;
use super::object_rows::ObjectRows;
use super::reader::Reader;
use super::terminal::OwnedPod;
use super::{App, Effect, Mode, Scope, View};
use crate::model::debug::Profile;
use crate::model::debug_pod::{self, NodeDebug};
use crate::model::feed::Feed;
use crate::model::node::NodeRow;
use crate::model::{ClusterId, PodKey, PodRow, TerminalKey};

#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodesView {
    pub list: ObjectRows<NodeRow>,
    /// `enter`: the pods on the selected node.
    pub reading: Option<Reader>,
}

/// The node debug form (`d` on a node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDebugForm {
    /// The node's cluster.
    pub cluster: ClusterId,
    pub node: String,
    /// Where the pod goes: the namespace shown, else `default`.
    pub namespace: String,
    pub image: LineEdit,
    pub profile: Profile,
    pub field: NodeField,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeField {
    Profile,
    Image,
}

impl Form for NodeDebugForm {
    type Field = NodeField;
    /// The image.
    type Sent = String;
    type Context = ();

    fn fields(&self) -> &[NodeField] {
        &[NodeField::Profile, NodeField::Image]
    }

    fn focus(&self) -> NodeField {
        self.field
    }

    fn set_focus(&mut self, field: NodeField) {
        self.field = field;
    }

    /// The profiles a line each, with what each gives on the node.
    fn input(&self, field: NodeField) -> Input {
        match field {
            NodeField::Profile => Input::List,
            NodeField::Image => Input::Text,
        }
    }

    fn text_mut(&mut self, field: NodeField) -> Option<&mut LineEdit> {
        (field == NodeField::Image).then_some(&mut self.image)
    }

    fn choose(&mut self, field: NodeField, delta: isize) {
        if field == NodeField::Profile {
            self.profile =
                NODE_PROFILES[form::cycle(self.profile_at(), NODE_PROFILES.len(), delta)];
        }
    }

    fn submit(&self, _: &()) -> Result<String, String> {
        let image = self.image.trim().to_string();
        crate::model::image::validate_reference(&image)?;
        Ok(image)
    }

    fn shown(&self, field: NodeField) -> Shown<'_> {
        match field {
            NodeField::Profile => Shown {
                label: "profile".to_string(),
                value: Value::List {
                    options: NODE_PROFILES
                        .iter()
                        .map(|p| format!("{:<11}{}", p.name(), debug_pod::node_profile_gives(*p)))
                        .collect(),
                    at: self.profile_at(),
                    typed: None,
                },
                note: None,
            },
            NodeField::Image => Shown::text("image", &self.image, ""),
        }
    }
}

impl NodeDebugForm {
    fn profile_at(&self) -> usize {
        NODE_PROFILES
            .iter()
            .position(|p| *p == self.profile)
            .unwrap_or(0)
    }
}

/// The profiles the form offers, in order: a node shell, then privileged.
pub const NODE_PROFILES: [Profile; 5] = [
    Profile::General,
    Profile::Sysadmin,
    Profile::Netadmin,
    Profile::Baseline,
    Profile::Restricted,
];

impl App {
    /// `:nodes` or `O`.
    pub(super) fn open_nodes(&mut self) -> Vec<Effect> {
        self.message = None;
        self.view = View::Nodes(Box::default());
        vec![Effect::WatchNodes(self.clusters_shown())]
    }

    /// Keys of the nodes view; `None` for those with their usual meaning.
    pub(super) fn on_nodes_key(&mut self, action: Action) -> Option<Vec<Effect>> {
        let View::Nodes(view) = &mut self.view else {
            return None;
        };
        if view.reading.is_some() {
            if action == Action::Back {
                view.reading = None;
                return Some(vec![]);
            }
            return None;
        }
        match action {
            // What the list knows at once, every namespace's when read.
            Action::Open => {
                let node = view.list.selected()?.clone();
                let cluster = self.cluster_of_tag(&node.context)?;
                let text = self.node_text(&node, None);
                if let View::Nodes(view) = &mut self.view {
                    view.reading = Some(Reader::new(text));
                }
                self.fit_reader();
                return Some(vec![Effect::ReadNodePods {
                    cluster,
                    node: node.name,
                }]);
            }
            Action::Debug => {
                let selected = view.list.selected()?;
                let (node, tag) = (selected.name.clone(), selected.context.clone());
                let cluster = self.cluster_of_tag(&tag)?;
                let namespace = match self.scope_of(&tag) {
                    Scope::Namespaces(list) if list.len() == 1 => list[0].clone(),
                    _ => "default".to_string(),
                };
                let image = self
                    .debug_images
                    .first()
                    .map_or("busybox:1.36", String::as_str)
                    .into();
                self.mode = Mode::NodeDebug(Box::new(NodeDebugForm {
                    cluster,
                    node,
                    namespace,
                    image,
                    profile: Profile::General,
                    field: NodeField::Profile,
                }));
            }
            Action::Back => {
                self.view = View::Pods;
                return Some(vec![Effect::StopWatchingPod]);
            }
            _ => return None,
        }
        Some(vec![])
    }

    /// The node to read: its taints and its pods, those of every namespace
    /// once read (`read`), else the list's (the namespaces shown).
    fn node_text(&self, node: &NodeRow, read: Option<&Result<Vec<PodRow>, String>>) -> Vec<String> {
        let mut lines = vec![format!("Node {} ({})", node.name, node.status)];
        lines.push(match node.taints.as_slice() {
            [] => "Taints: none".to_string(),
            taints => format!("Taints: {}", taints.join(", ")),
        });
        let cluster = self
            .cluster_of_tag(&node.context)
            .unwrap_or_else(|| self.cluster.clone());
        let node_use = self.usage_of(&cluster).and_then(|u| u.node(&node.name));
        if let Some(used) = node_use {
            use crate::model::usage::{bytes_text, percent};
            let share = |used: u64, of: u64| {
                percent(used, of).map_or_else(String::new, |p| format!(" ({p} %)"))
            };
            lines.push(format!(
                "Uses {} of the {}m CPU{} and {} of the {} memory{} it can give pods.",
                used.cpu_text(),
                node.allocatable_cpu_m,
                share(
                    u64::from(used.microcores),
                    u64::from(node.allocatable_cpu_m) * 1000
                ),
                used.memory_text(),
                bytes_text(node.allocatable_memory),
                share(used.memory_bytes(), node.allocatable_memory),
            ));
        }
        lines.push(String::new());
        // What each uses, where the list has read it: most memory first.
        let used = |row: &PodRow| self.row_of(&cluster, &row.key).and_then(|r| r.usage);
        let line = |row: &PodRow| {
            let figures = used(row)
                .map(|u| format!("  {:>6} {:>7}", u.cpu_text(), u.memory_text()))
                .unwrap_or_default();
            format!(
                "{:<48} {:<20} {}/{}{figures}",
                row.key.to_string(),
                row.status,
                row.ready,
                row.total
            )
        };
        let by_use = |rows: &mut Vec<&PodRow>| {
            rows.sort_unstable_by(|a, b| {
                let memory = |r: &&PodRow| used(r).map(|u| u.memory_kib);
                memory(b).cmp(&memory(a)).then_with(|| a.key.cmp(&b.key))
            })
        };
        let (heading, rows): (String, Vec<String>) = match read {
            Some(Ok(rows)) => {
                let mut rows: Vec<&PodRow> = rows.iter().collect();
                by_use(&mut rows);
                (
                    format!("Pods on {} ({}, every namespace):", node.name, rows.len()),
                    rows.into_iter().map(line).collect(),
                )
            }
            known => {
                let mut rows: Vec<&PodRow> = self
                    .pods
                    .rows()
                    .filter(|row| row.context == node.context && *row.node == *node.name)
                    .collect();
                by_use(&mut rows);
                let rows: Vec<String> = rows.into_iter().map(line).collect();
                let why = match known {
                    Some(Err(why)) => format!("; every namespace's could not be read: {why}"),
                    _ => "; reading every namespace's…".to_string(),
                };
                (
                    format!(
                        "Pods on {} ({}, of the namespaces shown{why}):",
                        node.name,
                        rows.len()
                    ),
                    rows,
                )
            }
        };
        lines.push(heading);
        lines.push(String::new());
        lines.extend(rows);
        lines
    }

    /// The pods on a node, read in every namespace: the node being read
    /// shows them.
    pub(super) fn on_node_pods(
        &mut self,
        cluster: &ClusterId,
        node: &str,
        pods: Result<Vec<PodRow>, String>,
    ) {
        let View::Nodes(view) = &self.view else {
            return;
        };
        let Some(shown) = view.list.selected().filter(|n| {
            n.name == node
                && view.reading.is_some()
                && self.cluster_of_tag(&n.context).as_ref() == Some(cluster)
        }) else {
            return;
        };
        let text = self.node_text(&shown.clone(), Some(&pods));
        if let View::Nodes(view) = &mut self.view {
            view.reading = Some(Reader::new(text));
        }
        self.fit_reader();
    }

    /// An update of the nodes view's watch of the browser's cluster
    /// (`None`) or another the list shows.
    pub(super) fn on_nodes_feed(&mut self, cluster: Option<ClusterId>, feed: Feed<NodeRow>) {
        let Some(tag) = self.tag_of_feed(cluster) else {
            return;
        };
        let View::Nodes(view) = &mut self.view else {
            return;
        };
        if let Some(trouble) = view.list.apply_tagged(&tag, feed, "a node") {
            self.message = Some(super::message::warning(self.said_of(&tag, &trouble)));
        }
    }

    pub(super) fn on_node_debug_key(
        &mut self,
        mut form: NodeDebugForm,
        key: KeyEvent,
    ) -> Vec<Effect> {
        match form::on_key(&mut form, &key, &()) {
            Answer::Cancel => return vec![],
            Answer::Send(image) => return self.launch_node_debug(form, image),
            Answer::Refused(why) => self.message = Some(error(why)),
            Answer::Stay | Answer::Edited => {}
        }
        self.mode = Mode::NodeDebug(Box::new(form));
        vec![]
    }

    /// Opens a pane on the node debug pod, which the executor creates.
    fn launch_node_debug(&mut self, form: NodeDebugForm, image: String) -> Vec<Effect> {
        let mut names = fastrand::Rng::with_seed(self.random_seed());
        let pod_name = debug_pod::node_debug_pod_name(&form.node, || names.u64(..));
        let pod = debug_pod::node_debug_pod(&NodeDebug {
            node: form.node.clone(),
            pod: pod_name.clone(),
            container: "debugger".into(),
            image,
            command: Vec::new(),
            env: Vec::new(),
            profile: form.profile,
            stdin: true,
            // Panes attach, detach and attach again.
            stdin_once: false,
            tty: true,
            pull_policy: None,
        });
        let key = TerminalKey {
            cluster: form.cluster.clone(),
            pod: PodKey::new(&form.namespace, &pod_name),
            container: "debugger".into(),
        };
        self.open_owned_pod_pane(
            key,
            pod,
            "Show a namespace that admits privileged pods (:ns NAME) and press d again, choose profile baseline (no node namespaces, no /host), or ask an admin.",
        )
    }

    /// The pods podbay made that are still open (deleted when it quits).
    pub fn owned_pods(&self) -> Vec<(crate::model::ClusterId, PodKey)> {
        self.workspace
            .terminals
            .values()
            .filter(|t| t.owns_pod())
            .map(|t| (t.key.cluster.clone(), t.key.pod.clone()))
            .collect()
    }

    /// A pod podbay made was created: its pane follows it up; if the pane
    /// closed while it was being created, it goes at once.
    pub(super) fn on_pod_created(
        &mut self,
        id: super::terminal::TerminalId,
        cluster: crate::model::ClusterId,
        pod: PodKey,
    ) -> Vec<Effect> {
        match self.workspace.terminals.get_mut(&id) {
            Some(t) => {
                t.owned = Some(OwnedPod::Created);
                vec![Effect::Follow {
                    id,
                    key: t.key.clone(),
                }]
            }
            None => vec![Effect::DeletePod { cluster, pod }],
        }
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyCode;

    use super::super::tests::{app, code, ctrl, key};
    use super::super::{Effect, Event};
    use crate::model::feed::Feed;
    use crate::model::node::NodeRow;

    fn node(name: &str) -> NodeRow {
        NodeRow {
            context: None,
            name: name.into(),
            status: "Ready".into(),
            ready: true,
            roles: "<none>".into(),
            version: "v1.33.1".into(),
            created: None,
            taints: Vec::new(),
            os: "linux".into(),
            allocatable_cpu_m: 4000,
            allocatable_memory: 16 << 30,
        }
    }

    /// `:nodes`, `d`, `enter`: the pane opens and the pod's creation is asked.
    fn launched() -> (
        super::super::App,
        super::super::terminal::TerminalId,
        crate::model::TerminalKey,
    ) {
        let (mut a, _) = app(true);
        assert_eq!(
            a.update(key('O')),
            [Effect::WatchNodes(vec![super::super::tests::sim_cluster()])]
        );
        a.update(Event::Nodes(Feed::Listed {
            scope: None,
            rows: vec![node("node-a1"), node("node-b1")],
        }));
        a.update(code(KeyCode::Down));
        a.update(key('d'));
        let effects = a.update(code(KeyCode::Enter));
        let Some(Effect::CreatePod { id, key, pod, .. }) = effects
            .iter()
            .find(|e| matches!(e, Effect::CreatePod { .. }))
            .cloned()
        else {
            panic!("no CreatePod in {effects:?}");
        };
        assert_eq!(pod.spec.unwrap().node_name.as_deref(), Some("node-b1"));
        assert!(key.pod.name.starts_with("node-debugger-node-b1-"));
        assert!(
            !effects.iter().any(|e| matches!(e, Effect::Follow { .. })),
            "followed once made"
        );
        (a, id, key)
    }

    #[test]
    fn a_pane_closed_while_its_pod_is_created_deletes_the_pod_once_made() {
        let (mut a, id, key) = launched();
        // ctrl-b x: a pane still launching closes without asking.
        a.update(ctrl('b'));
        let closing = a.update(key_x());
        let closing: Vec<Effect> = closing
            .into_iter()
            .chain(a.update(super::super::tests::key('y')))
            .collect();
        assert!(
            !closing
                .iter()
                .any(|e| matches!(e, Effect::DeletePod { .. })),
            "not before it exists: {closing:?}"
        );
        let made = a.update(Event::PodCreated {
            id,
            cluster: key.cluster.clone(),
            pod: key.pod.clone(),
        });
        assert_eq!(
            made,
            [Effect::DeletePod {
                cluster: key.cluster,
                pod: key.pod
            }]
        );
    }

    #[test]
    fn a_made_pod_is_followed_and_deleted_with_its_last_pane() {
        let (mut a, id, key) = launched();
        let made = a.update(Event::PodCreated {
            id,
            cluster: key.cluster.clone(),
            pod: key.pod.clone(),
        });
        assert_eq!(
            made,
            [Effect::Follow {
                id,
                key: key.clone()
            }]
        );
        assert_eq!(a.owned_pods(), [(key.cluster.clone(), key.pod.clone())]);
        a.update(ctrl('b'));
        let mut closing = a.update(key_x());
        closing.extend(a.update(super::super::tests::key('y')));
        assert!(
            closing.contains(&Effect::DeletePod {
                cluster: key.cluster,
                pod: key.pod
            }),
            "{closing:?}"
        );
        assert!(a.owned_pods().is_empty());
    }

    fn key_x() -> Event {
        super::super::tests::key('x')
    }
}

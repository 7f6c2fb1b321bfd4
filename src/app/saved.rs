//! The workspace as it is kept across runs: what each pane shows and
//! where, the browser's place, the port-forwards. Never what is on a
//! screen, and no credentials: a context is kept by name (its server and
//! user name only to notice that it now points elsewhere); its token stays
//! in the kubeconfig.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::term::layout::{Axis, PaneId, Shape};

/// The format this podbay writes and reads; a file from a newer one is
/// refused rather than half understood.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWorkspace {
    pub version: u32,
    pub saved_at: Timestamp,
    pub browser: SavedBrowser,
    /// The split tree; its panes are indexes into `panes`.
    #[serde(default)]
    pub layout: Option<SavedShape>,
    #[serde(default)]
    pub zoomed: Option<usize>,
    #[serde(default)]
    pub focused: Option<usize>,
    /// The workspace had the keyboard (not the browser).
    #[serde(default)]
    pub in_workspace: bool,
    #[serde(default)]
    pub panes: Vec<SavedPane>,
    #[serde(default)]
    pub terminals: Vec<SavedTerminal>,
    #[serde(default)]
    pub forwards: Vec<SavedForward>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedBrowser {
    pub context: String,
    /// `None`: all namespaces.
    pub namespaces: Option<Vec<String>>,
    #[serde(default)]
    pub filter: String,
    #[serde(default)]
    pub sort: Option<SavedSort>,
    /// The other contexts the list showed beside `context`'s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<String>,
    /// `namespaces` was each context's own (no `-n`, no `:ns`).
    #[serde(default)]
    pub own_namespaces: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSort {
    /// A column's name as `:sort` takes it.
    pub column: String,
    pub reversed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedShape {
    Pane(usize),
    Split {
        /// `horizontal`: side by side; `vertical`: stacked.
        axis: SavedAxis,
        ratio: f64,
        first: Box<SavedShape>,
        second: Box<SavedShape>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedAxis {
    Horizontal,
    Vertical,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPane {
    /// An index into `terminals`: panes sharing a terminal share it again.
    pub terminal: usize,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub marked: bool,
}

/// Where a terminal was, on which cluster, and how it read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedTerminal {
    pub context: String,
    /// The context's server and user name when it was saved.
    pub server: String,
    pub user: String,
    pub namespace: String,
    pub pod: String,
    /// The pod's UID: a pod of the same name made since is another pod.
    #[serde(default)]
    pub pod_uid: Option<String>,
    pub container: String,
    pub kind: SavedKind,
    /// What an exec ran.
    #[serde(default)]
    pub command: Vec<String>,
    /// The containers of an all-containers log.
    #[serde(default)]
    pub containers: Vec<String>,
    #[serde(default)]
    pub log: SavedLogOptions,
    /// Per container, the kubelet's timestamp of the last log line shown.
    #[serde(default)]
    pub last_seen: BTreeMap<String, Timestamp>,
    /// podbay made the pod (a node shell, a copy): it goes with its last pane.
    #[serde(default)]
    pub owned_pod: bool,
    /// The pod's controller (its ReplicaSet, StatefulSet…): a log pane whose
    /// pod it replaced offers the pod it runs now.
    #[serde(default)]
    pub controller: Option<SavedController>,
    /// A pods' log pane's: how its pods are found (`pod` names whose).
    #[serde(default)]
    pub picks: Vec<SavedPick>,
}

/// The pods of one namespace a `LabelSelector` picks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPick {
    pub namespace: String,
    pub selector: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedController {
    pub kind: String,
    pub name: String,
    pub uid: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedKind {
    Debug,
    Attach,
    Shell,
    Exec,
    Log,
    AllLogs,
    PreviousLog,
    /// Every container's log of a workload's or a Service's pods.
    PodsLogs,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedLogOptions {
    #[serde(default)]
    pub timestamps: bool,
    #[serde(default)]
    pub cut_at: Option<u16>,
    #[serde(default)]
    pub since_seconds: Option<i64>,
    #[serde(default)]
    pub tail: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedForward {
    pub context: String,
    pub server: String,
    pub user: String,
    pub namespace: String,
    /// `pod/NAME`, `deploy/NAME`, … as `podbay port-forward` takes it.
    pub target: String,
    /// The local port it listened on (kept, so what used it works again).
    pub local: Option<u16>,
    /// The remote port, a number or a container port's name.
    pub remote: String,
}

impl SavedWorkspace {
    /// Reads a kept workspace; the error is what is wrong with it, for a
    /// sentence that names the file.
    pub fn read(bytes: &[u8]) -> Result<SavedWorkspace, String> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| format!("is not JSON ({e})"))?;
        let version = value.get("version").and_then(serde_json::Value::as_u64);
        match version {
            Some(v) if v > u64::from(VERSION) => {
                return Err(format!(
                    "was written by a newer podbay (format {v}; this one reads {VERSION})"
                ));
            }
            None => return Err("has no format version".into()),
            Some(_) => {}
        }
        let saved: SavedWorkspace =
            serde_json::from_value(value).map_err(|e| format!("is not a workspace ({e})"))?;
        saved.check()?;
        Ok(saved)
    }

    /// Every index points somewhere, and the layout has each pane once.
    fn check(&self) -> Result<(), String> {
        if let Some(pane) = self
            .panes
            .iter()
            .find(|p| p.terminal >= self.terminals.len())
        {
            return Err(format!(
                "names terminal {} of {}",
                pane.terminal,
                self.terminals.len()
            ));
        }
        let mut leaves = Vec::new();
        if let Some(shape) = &self.layout {
            shape.leaves(&mut leaves);
        }
        leaves.sort_unstable();
        if leaves != (0..self.panes.len()).collect::<Vec<_>>() {
            return Err("has a layout that does not hold each pane once".into());
        }
        Ok(())
    }

    /// "4 panes from 12 min ago (2 debug, 1 shell, 1 log)".
    pub fn summary(&self, now: Timestamp) -> String {
        let mut kinds: Vec<(&str, usize)> = Vec::new();
        for pane in &self.panes {
            let label = self.terminals[pane.terminal].kind.label();
            match kinds.iter_mut().find(|(l, _)| *l == label) {
                Some((_, n)) => *n += 1,
                None => kinds.push((label, 1)),
            }
        }
        let kinds: Vec<String> = kinds
            .iter()
            .map(|(l, n)| match (n, *l) {
                (1, _) | (_, "debug") => format!("{n} {l}"),
                (_, "attach") => format!("{n} attaches"),
                _ => format!("{n} {l}s"),
            })
            .collect();
        let panes = self.panes.len();
        format!(
            "{panes} pane{} from {} ago ({})",
            if panes == 1 { "" } else { "s" },
            ago(now.duration_since(self.saved_at).as_secs()),
            kinds.join(", ")
        )
    }
}

impl SavedKind {
    pub fn label(self) -> &'static str {
        match self {
            SavedKind::Debug => "debug",
            SavedKind::Attach => "attach",
            SavedKind::Shell => "shell",
            SavedKind::Exec => "exec",
            SavedKind::Log | SavedKind::AllLogs | SavedKind::PodsLogs => "log",
            SavedKind::PreviousLog => "previous log",
        }
    }
}

impl SavedShape {
    fn leaves(&self, out: &mut Vec<usize>) {
        match self {
            SavedShape::Pane(i) => out.push(*i),
            SavedShape::Split { first, second, .. } => {
                first.leaves(out);
                second.leaves(out);
            }
        }
    }

    /// The layout's shape, its panes numbered by `index`.
    pub fn of(shape: &Shape, index: &impl Fn(PaneId) -> usize) -> SavedShape {
        match shape {
            Shape::Pane(pane) => SavedShape::Pane(index(*pane)),
            Shape::Split {
                axis,
                ratio,
                first,
                second,
            } => SavedShape::Split {
                axis: match axis {
                    Axis::Horizontal => SavedAxis::Horizontal,
                    Axis::Vertical => SavedAxis::Vertical,
                },
                ratio: *ratio,
                first: Box::new(SavedShape::of(first, index)),
                second: Box::new(SavedShape::of(second, index)),
            },
        }
    }

    /// The shape with pane `i` as `panes[i]`.
    pub fn to_shape(&self, panes: &[PaneId]) -> Shape {
        match self {
            SavedShape::Pane(i) => Shape::Pane(panes[*i]),
            SavedShape::Split {
                axis,
                ratio,
                first,
                second,
            } => Shape::Split {
                axis: match axis {
                    SavedAxis::Horizontal => Axis::Horizontal,
                    SavedAxis::Vertical => Axis::Vertical,
                },
                ratio: *ratio,
                first: Box::new(first.to_shape(panes)),
                second: Box::new(second.to_shape(panes)),
            },
        }
    }
}

/// A name for `:save`/`:load`: a file name in the state directory.
pub fn check_name(name: &str) -> Result<(), String> {
    let fits = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if name.is_empty() {
        return Err("Name the workspace: :save NAME (letters, digits, - _ .).".into());
    }
    if !fits || name == LAST || name == PREVIOUS {
        return Err(format!(
            "Cannot keep a workspace as {name:?}: use up to 64 letters, digits, - _ or . (not {LAST:?} or {PREVIOUS:?})."
        ));
    }
    Ok(())
}

/// The name of the workspace kept as it changes.
pub const LAST: &str = "last";

/// The name `n` at the question keeps the workspace under, for `:load`.
pub const PREVIOUS: &str = "previous";

/// "40 s", "12 min", "3 h", "2 days".
pub(crate) fn ago(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..172_800 => format!("{} h", s / 3600),
        _ => format!("{} days", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terminal(kind: SavedKind) -> SavedTerminal {
        SavedTerminal {
            context: "prod".into(),
            server: "https://prod".into(),
            user: "sre".into(),
            namespace: "shop".into(),
            pod: "web-0".into(),
            pod_uid: Some("u1".into()),
            container: "app".into(),
            kind,
            command: vec![],
            containers: vec![],
            log: SavedLogOptions::default(),
            last_seen: BTreeMap::new(),
            owned_pod: false,
            controller: None,
            picks: vec![],
        }
    }

    fn workspace() -> SavedWorkspace {
        let pane = |terminal| SavedPane {
            terminal,
            title: None,
            marked: false,
        };
        SavedWorkspace {
            version: VERSION,
            saved_at: "2026-11-26T10:00:00Z".parse().unwrap(),
            browser: SavedBrowser {
                context: "prod".into(),
                namespaces: Some(vec!["shop".into()]),
                filter: String::new(),
                sort: None,
                others: vec![],
                own_namespaces: false,
            },
            layout: Some(SavedShape::Split {
                axis: SavedAxis::Horizontal,
                ratio: 0.3,
                first: Box::new(SavedShape::Pane(0)),
                second: Box::new(SavedShape::Split {
                    axis: SavedAxis::Vertical,
                    ratio: 0.5,
                    first: Box::new(SavedShape::Pane(1)),
                    second: Box::new(SavedShape::Pane(2)),
                }),
            }),
            zoomed: None,
            focused: Some(1),
            in_workspace: true,
            panes: vec![pane(0), pane(1), pane(0)],
            terminals: vec![terminal(SavedKind::Debug), terminal(SavedKind::Shell)],
            forwards: vec![],
        }
    }

    #[test]
    fn a_workspace_reads_back_as_written() {
        let saved = workspace();
        let text = serde_json::to_vec_pretty(&saved).unwrap();
        assert_eq!(SavedWorkspace::read(&text), Ok(saved));
    }

    #[test]
    fn the_summary_counts_panes_by_what_they_show() {
        let now = "2026-11-26T10:12:30Z".parse().unwrap();
        assert_eq!(
            workspace().summary(now),
            "3 panes from 12 min ago (2 debug, 1 shell)"
        );
        let mut shells = workspace();
        for t in &mut shells.terminals {
            t.kind = SavedKind::Shell;
        }
        assert_eq!(shells.summary(now), "3 panes from 12 min ago (3 shells)");
    }

    #[test]
    fn a_newer_format_a_broken_file_and_a_bad_layout_are_refused_with_why() {
        let mut newer = serde_json::to_value(workspace()).unwrap();
        newer["version"] = 2.into();
        let newer = SavedWorkspace::read(&serde_json::to_vec(&newer).unwrap()).unwrap_err();
        assert!(newer.contains("newer podbay (format 2"), "{newer}");
        let broken = SavedWorkspace::read(b"{\"version\": 1, \"panes\": [").unwrap_err();
        assert!(broken.starts_with("is not JSON"), "{broken}");
        let mut twice = workspace();
        twice.layout = Some(SavedShape::Split {
            axis: SavedAxis::Vertical,
            ratio: 0.5,
            first: Box::new(SavedShape::Pane(0)),
            second: Box::new(SavedShape::Pane(0)),
        });
        let twice = SavedWorkspace::read(&serde_json::to_vec(&twice).unwrap()).unwrap_err();
        assert!(twice.contains("each pane once"), "{twice}");
        let mut dangling = workspace();
        dangling.panes[2].terminal = 7;
        let dangling = SavedWorkspace::read(&serde_json::to_vec(&dangling).unwrap()).unwrap_err();
        assert!(dangling.contains("terminal 7 of 2"), "{dangling}");
    }
}

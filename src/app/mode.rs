//! What the keyboard is doing: filtering, typing a command, a form, a
//! question waiting for y.

use super::PodKey;
use super::command::CommandLine;
use super::fleet::FleetForm;
use super::launcher::Launcher;
use super::line::LineEdit;
use crate::term::layout::PaneId;

#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Normal,
    /// Typing into the fuzzy filter.
    Filter(LineEdit),
    Command(CommandLine),
    /// The help box, scrolled this many lines down (j/k, space).
    Help(usize),
    /// The debug launcher form, over the pod view.
    Launcher(Box<Launcher>),
    /// The launcher for every marked pod, over the list.
    Fleet(Box<FleetForm>),
    /// Closing a pane whose session is alive: y to confirm.
    ConfirmClose(PaneId),
    /// Quitting while sessions are live: y to confirm.
    ConfirmQuit,
    /// Typing a search in the describe or YAML view, or in an event read
    /// in full.
    Find(String),
    /// Deleting this pod: y to confirm.
    ConfirmDelete(crate::model::ClusterId, PodKey),
    /// Stopping this debug container: y to confirm.
    /// Stop this debugger, on this cluster?
    ConfirmStopDebugger(Box<(crate::model::ClusterId, crate::model::debuggers::Debugger)>),
    /// The capture form (`P`), over the list or the pod view.
    Capture(Box<super::captures::CaptureForm>),
    /// The port-forward form (`F`), over the pod view.
    Forward(Box<super::forwards::ForwardForm>),
    /// The node debug form (`d` in the nodes view).
    NodeDebug(Box<super::nodes::NodeDebugForm>),
    /// The copy form (`C` on a pod).
    CopyPod(Box<super::pod_copy::CopyForm>),
    /// At start: restore the kept workspace? y, n, or d to forget it.
    ConfirmRestore(Box<super::saved::SavedWorkspace>),
}

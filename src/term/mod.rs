//! Terminal emulation for panes; knows nothing of Kubernetes.

pub mod keys;
pub mod pane;

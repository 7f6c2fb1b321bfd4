//! Everything that talks to a Kubernetes API server, through kube-rs.

pub(crate) mod cause;
pub mod client;
pub mod deadline;
pub mod debug;
pub mod debug_pod;
pub(crate) mod errors;
pub mod feed;
pub mod forward;
pub(crate) mod kubeconfig;
pub(crate) mod lenient;
pub(crate) mod limits;
pub mod metrics;
pub(crate) mod objects;
pub mod pipe;
mod reflector;
pub mod replay;
pub mod session;
pub(crate) mod transport;
pub mod tunnel;
pub(crate) mod warnings;

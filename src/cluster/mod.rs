//! Everything that talks to a Kubernetes API server, through kube-rs.

pub mod client;
pub mod debug;
pub mod errors;
pub mod feed;
pub mod limits;
pub mod session;
pub mod transport;
pub mod warnings;

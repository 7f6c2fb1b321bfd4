//! Everything that talks to a Kubernetes API server, through kube-rs.

pub mod client;
pub mod errors;
pub mod feed;

//! Compact projections of Kubernetes objects: what the UI shows, nothing more.
//! A full `Pod` costs tens of kilobytes of heap; a [`PodRow`] well under one.

mod age;
pub mod capture;
pub(crate) mod cluster;
pub mod container_state;
pub mod debug;
pub mod debug_pod;
pub mod debuggers;
pub mod describe;
pub mod describe_workload;
pub(crate) mod detail;
pub mod feed;
pub mod files;
pub mod forward;
pub(crate) mod image;
pub mod intern;
pub mod launch;
pub mod listed;
pub mod node;
pub mod object_ref;
pub mod owner;
pub mod pcap;
pub(crate) mod pod;
pub mod pod_security;
pub mod problem;
pub mod pull_secret;
pub mod quantity;
pub mod selector;
pub mod service;
pub mod session;
pub mod smp;
pub mod text;
pub mod transfer;
pub mod usage;
pub mod workload;

pub use age::{human_duration, parse_duration};
pub use cluster::{ClusterId, TerminalKey};
pub use detail::{
    ContainerInfo, ContainerKind, ContainerState, EventRow, NoDebugContainer, NoDebugKind,
    PodDetail, StartFailure, Stdio, Waiting, classify_waiting, waiting_in_trouble,
};
pub use pod::{Health, PodKey, PodRow, RowKey};

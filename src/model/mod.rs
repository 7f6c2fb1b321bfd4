//! Compact projections of Kubernetes objects: what the UI shows, nothing more.
//! A full `Pod` costs tens of kilobytes of heap; a [`PodRow`] well under one.

pub mod detail;
pub mod pod;

pub use detail::{
    ContainerInfo, ContainerKind, ContainerState, EventRow, PodDetail, waiting_in_trouble,
};
pub use pod::{Health, PodKey, PodRow, human_duration};

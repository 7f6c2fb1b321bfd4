//! Compact projections of Kubernetes objects: what the UI shows, nothing more.
//! A full `Pod` costs tens of kilobytes of heap; a [`PodRow`] well under one.

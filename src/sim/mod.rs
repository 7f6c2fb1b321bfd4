//! The embedded Kubernetes cluster.

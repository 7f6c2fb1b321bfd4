//! The embedded Kubernetes cluster: a real HTTP/WebSocket API server on
//! loopback, backed by local processes on PTYs.

pub mod status;

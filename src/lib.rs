//! podbay: a terminal console for debugging live Kubernetes pods.
//!
//! The crate is split by job: `app` is the pure state machine, `ui` draws it,
//! `cluster` talks to a Kubernetes API server, `term` emulates terminals,
//! `sim` is the embedded cluster, and `model` holds the compact projections
//! of Kubernetes objects that the rest share. `app`, `model` and `term` are
//! pure: they use nothing of the edges (docs/architecture.md;
//! checked by a test that reads the imports).

pub mod app;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod engine;
pub mod local;
pub mod logging;
pub mod model;
pub mod parallel;
pub mod print;
pub mod program;
pub mod pty;
pub mod sim;
pub mod spdy;
pub mod term;
pub mod theme;
pub mod tty;
pub mod tui;
pub mod ui;

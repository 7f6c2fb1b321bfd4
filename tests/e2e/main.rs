//! podbay's integration tests, one binary for all of them: each module below
//! was a test binary of its own, and each linked the whole crate. The real
//! `podbay` binary (`CARGO_BIN_EXE_podbay`), the embedded simulator and the
//! library's API, with the helpers in `support`. `cargo test --test e2e
//! tui_e2e::` runs one module's tests.
//!
//! The tests share this process: they pass environment to the programs they
//! start (never `std::env::set_var`), and keep no process-wide state.
//! `tests/fuzz` (a cargo-fuzz crate of its own) and `tests/conformance`
//! (the Python client, run by `conformance`) are not part of this binary.

mod support;

mod cli_capture;
mod cli_cp;
mod cli_debug;
mod cli_debug_pod;
mod cli_debuggers;
mod cli_fleet;
mod cli_fleet_contexts;
mod cli_forward;
mod cluster_feed;
mod clusters_e2e;
mod completion;
mod conformance;
mod debuggers_e2e;
mod docs;
mod faults_e2e;
mod files_e2e;
mod fleet_e2e;
mod forward_session;
mod forwards_e2e;
mod hostile;
mod install;
mod layers;
mod metrics_e2e;
mod model_props;
mod nodes_e2e;
mod pane_truth_e2e;
mod panes_e2e;
mod pod_filter;
mod pod_security;
mod profiles_e2e;
mod reliability;
mod restore_e2e;
mod sandbox;
mod secrets;
mod services_e2e;
mod sim_api;
mod sim_patch_props;
mod trust_e2e;
mod tui_e2e;
mod workloads_e2e;

//! Subcommands that run without the TUI.

pub mod complete;
pub mod cp;
pub mod debug;
pub mod debug_pod;
pub mod debuggers;
pub mod fleet;
pub mod man;
pub mod port_forward;
pub mod prefix;
pub mod top;

/// The cluster a command line names (`--kubeconfig`, `--context`), or the
/// sentence why it cannot be reached as configured (exit 78).
pub(crate) async fn connect(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
) -> Result<crate::cluster::client::Connection, debug::Failure> {
    let target = crate::cluster::client::Target {
        kubeconfig: kubeconfig.map(std::path::Path::to_path_buf),
        context: context.map(String::from),
        ..crate::cluster::client::Target::default()
    };
    target
        .connect()
        .await
        .map_err(|e| debug::fail(debug::exit::CONFIG, e.to_string()))
}

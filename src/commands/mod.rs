//! Subcommands that run without the TUI.

pub mod capture;
pub mod clusters;
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

/// How long a command's pod list may take: pages of a large cluster, not a stall.
const LIST_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// The pods of `namespace` (all for `None`) that `selector` matches, through
/// the one lister and within [`LIST_WITHIN`]; a failure is its sentence.
pub(crate) async fn list_pods(
    client: kube::Client,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> Result<Vec<k8s_openapi::api::core::v1::Pod>, debug::Failure> {
    let api: kube::Api<k8s_openapi::api::core::v1::Pod> = match namespace {
        Some(ns) => kube::Api::namespaced(client, ns),
        None => kube::Api::all(client),
    };
    let mut params = kube::api::ListParams::default();
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    crate::cluster::deadline::Deadline::none()
        .within(Some(LIST_WITHIN))
        .bound(crate::cluster::objects::list(&api, &params))
        .await
        .map_err(|why| {
            debug::fail(
                debug::exit::TIMEOUT,
                format!("The server did not list the pods ({why}); try again, or narrow it with -n or -l."),
            )
        })?
        .map_err(|e| debug::classify(&e))
}

//! kube-rs's default client stack, with `TCP_NODELAY` on its connections,
//! podbay's limits on what a server may send and its own retry of
//! throttled requests (see `limits`).
//!
//! kube-rs leaves Nagle's algorithm on (kube-rs/kube#2056). A terminal sends
//! tiny frames: when two go out back to back, a resize then a key, the
//! second waits for the server's delayed ACK, 40 ms on Linux, before it
//! leaves. Go, and so kubectl, sets `TCP_NODELAY` on every connection; this
//! builds the same stack as `kube::Client::try_from(config)` with it set
//! (its HTTP spans with tower-http's defaults, which leave headers out).

use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::{Body, ConfigExt as _};
use tower::retry::RetryLayer;
use tower::{BoxError, ServiceBuilder};
use tower_http::trace::TraceLayer;

use super::limits::{GuardLayer, ThrottleRetry};

pub fn client(config: kube::Config) -> kube::Result<kube::Client> {
    if config.proxy_url.is_some() {
        // kube-rs knows which proxies it was built for and says so.
        return kube::Client::try_from(config);
    }
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    let mut connector = TimeoutConnector::new(config.rustls_https_connector_with_connector(tcp)?);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new()).build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| RetryLayer::new(ThrottleRetry::new())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .layer(TraceLayer::new_for_http())
        .map_err(BoxError::from)
        .layer(GuardLayer)
        .service(http);
    Ok(kube::Client::new(service, config.default_namespace))
}

#[cfg(test)]
mod tests {
    use std::mem::ManuallyDrop;
    use std::net::{SocketAddr, TcpStream};
    use std::os::fd::FromRawFd as _;

    use tokio::io::AsyncReadExt as _;

    /// Whether this process's socket bound to `local` has TCP_NODELAY set.
    fn nodelay_of_socket_at(local: SocketAddr) -> Option<bool> {
        std::fs::read_dir("/proc/self/fd")
            .ok()?
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .find_map(|fd| {
                // SAFETY: the descriptor is only borrowed for two getsockopt-like
                // calls; ManuallyDrop keeps it from being closed here.
                let socket = ManuallyDrop::new(unsafe { TcpStream::from_raw_fd(fd) });
                (socket.local_addr().ok()? == local).then(|| socket.nodelay().ok())?
            })
    }

    #[tokio::test]
    async fn connections_to_the_api_server_are_made_with_nodelay() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let client = super::client(kube::Config::new(url.parse().unwrap())).unwrap();
        let request = tokio::spawn(async move { client.apiserver_version().await });
        let (mut accepted, client_side) = listener.accept().await.unwrap();
        // The connector sets its options before the request is written.
        let mut request_head = [0; 16];
        accepted.read_exact(&mut request_head).await.unwrap();
        let nodelay = nodelay_of_socket_at(client_side);
        request.abort();
        assert_eq!(nodelay, Some(true), "Nagle's algorithm is off");
    }
}

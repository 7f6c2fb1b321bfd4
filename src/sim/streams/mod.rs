//! attach and exec, as the kubelet's streaming server serves them, on
//! either wire a client may speak: a WebSocket (`v5.channel.k8s.io`, or
//! `v4.channel.k8s.io`; kube-rs, kubectl 1.30+) or SPDY/3.1 streams
//! (`v4.channel.k8s.io`; kubectl before 1.30, and its fallback). The
//! session is the same on both ([`Wire`]).

mod spdy;
mod websocket;

use std::sync::Arc;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{
    CONNECTION, HeaderValue, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL,
    UPGRADE,
};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::SimState;
use super::http::{Body, Query, full};
use super::logs::pod_and_container;
use super::runtime::{ContainerProcess, Stream, exit_code, spawn_on_pty, spawn_piped};
use super::sandbox::Launch;
use super::status::ApiError;
use super::store::Key;
use crate::term::Size;

pub use crate::model::session::channel::{CLOSE, ERROR, RESIZE, STDERR, STDIN, STDOUT};

/// Subprotocols in the order the simulator prefers them.
const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

struct StreamOptions {
    stdin: bool,
    /// The attached container's spec has `stdinOnce` (and no tty): as
    /// containerd does, the client closing its stdin closes the
    /// container's.
    stdin_once: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
}

/// Validates an attach/exec request and answers `101 Switching Protocols`;
/// the session runs on the upgraded connection.
pub fn upgrade(
    state: &Arc<SimState>,
    key: &Key,
    exec: bool,
    query: &Query,
    mut request: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let (pod, container) = pod_and_container(state, key, query)?;
    let mut options = StreamOptions {
        stdin: query.flag("stdin")?,
        stdin_once: false,
        stdout: query.flag("stdout")?,
        stderr: query.flag("stderr")?,
        tty: query.flag("tty")?,
    };
    if options.tty {
        // A terminal merges stderr into stdout.
        options.stderr = false;
    }
    if !(options.stdin || options.stdout || options.stderr) {
        return Err(ApiError::bad_request(
            "you must specify at least 1 of stdin, stdout, stderr",
        ));
    }
    let command: Vec<String> = query.all("command").to_vec();
    if exec && command.is_empty() {
        return Err(ApiError::bad_request(
            "you must specify at least one command for the container",
        ));
    }
    let session = if exec {
        let launch = state
            .kubelet
            .exec_launch(&pod, &container, command.clone())?;
        Session::Exec { command, launch }
    } else {
        let process = state.kubelet.process(&pod, &container)?;
        // As the kubelet: whether an attach is a terminal is the
        // container's choice (its spec's `tty`), not the request's.
        options.tty &= process.tty();
        options.stdin_once = !process.tty()
            && super::pod_json::find_container(&pod, &container)
                .is_some_and(|(_, spec)| spec["stdinOnce"] == true);
        Session::Attach(process)
    };

    let run = Run {
        session,
        kills: state.faults.stream_kills(),
        idle: state.faults.stream_idle_timeout(),
        pod_stopped: state.kubelet.stopped_pods(),
        key: key.clone(),
    };

    let headers = request.headers();
    let upgrade = headers
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if upgrade.eq_ignore_ascii_case("SPDY/3.1") {
        let offered = stream_protocols(headers);
        if !offered.iter().any(|p| p == spdy::PROTOCOL) {
            return Err(ApiError::new(
                403,
                "Forbidden",
                format!(
                    "unable to upgrade: unable to negotiate protocol: client supports {offered:?}, server accepts [{}]",
                    spdy::PROTOCOL
                ),
            ));
        }
        let wanted = spdy::Wanted {
            stdin: options.stdin,
            stdout: options.stdout,
            stderr: options.stderr,
            resize: options.tty,
        };
        let on_upgrade = hyper::upgrade::on(&mut request);
        tokio::spawn(async move {
            let Ok(upgraded) = on_upgrade.await else {
                return;
            };
            if let Some(wire) = spdy::SpdyWire::accept(TokioIo::new(upgraded), wanted).await {
                run.on(wire, options).await;
            }
        });
        let mut response = switching("SPDY/3.1");
        response.headers_mut().insert(
            STREAM_PROTOCOL_HEADER,
            HeaderValue::from_static(spdy::PROTOCOL),
        );
        return Ok(response);
    }
    let Some(ws_key) = headers
        .get(SEC_WEBSOCKET_KEY)
        .cloned()
        .filter(|_| upgrade.eq_ignore_ascii_case("websocket"))
    else {
        return Err(ApiError::bad_request("Upgrade request required"));
    };
    let offered = offered_protocols(headers);
    let Some(protocol) = PROTOCOLS
        .into_iter()
        .find(|p| offered.iter().any(|o| o == p))
    else {
        return Err(ApiError::bad_request(format!(
            "unable to upgrade: no supported subprotocol in {offered:?}; this server speaks {}",
            PROTOCOLS.join(", ")
        )));
    };

    let on_upgrade = hyper::upgrade::on(&mut request);
    let (stdout, stderr) = (options.stdout, options.stderr);
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
        match websocket::WsWire::hello(ws, stdout, stderr).await {
            Ok(wire) => run.on(wire, options).await,
            Err(e) => tracing::debug!("stream ended: {e}"),
        }
    });

    let mut response = switching("websocket");
    let h = response.headers_mut();
    h.insert(SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static(protocol));
    if let Ok(accept) = HeaderValue::from_str(&derive_accept_key(ws_key.as_bytes())) {
        h.insert(SEC_WEBSOCKET_ACCEPT, accept);
    }
    Ok(response)
}

const STREAM_PROTOCOL_HEADER: hyper::header::HeaderName =
    hyper::header::HeaderName::from_static("x-stream-protocol-version");

fn switching(upgrade: &'static str) -> Response<Body> {
    let mut response = Response::new(full(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = response.headers_mut();
    h.insert(UPGRADE, HeaderValue::from_static(upgrade));
    h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    response
}

/// The stream protocols an SPDY request offers (`X-Stream-Protocol-Version`,
/// once per protocol or comma-separated).
fn stream_protocols(headers: &hyper::HeaderMap) -> Vec<String> {
    headers
        .get_all(STREAM_PROTOCOL_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|p| p.trim().to_string()))
        .collect()
}

/// The WebSocket subprotocols a request offers, in its order (one header
/// or several, comma-separated).
pub(super) fn offered_protocols(headers: &hyper::HeaderMap) -> Vec<String> {
    headers
        .get_all(SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|p| p.trim().to_string()))
        .collect()
}

/// A session, ready to run on whichever wire the client speaks.
struct Run {
    session: Session,
    kills: tokio::sync::watch::Receiver<u64>,
    idle: Option<std::time::Duration>,
    pod_stopped: tokio::sync::broadcast::Receiver<Key>,
    key: Key,
}

impl Run {
    async fn on<W: Wire>(self, wire: W, options: StreamOptions) {
        let Run {
            session,
            kills,
            idle,
            pod_stopped,
            key,
        } = self;
        let result = match session {
            Session::Attach(process) => run_attach(wire, process, options, kills, idle).await,
            Session::Exec { command, launch } => {
                let pod_stopped = pod_stop(pod_stopped, key);
                run_exec(wire, command, launch, options, kills, idle, pod_stopped).await
            }
        };
        if let Err(e) = result {
            tracing::debug!("stream ended: {e}");
        }
    }
}

enum Session {
    Attach(Arc<ContainerProcess>),
    Exec {
        command: Vec<String>,
        launch: std::io::Result<Launch>,
    },
}

/// The connection an attach or exec session runs on.
pub(super) trait Wire: Send {
    /// Sends `data` on `channel` (stdout or stderr).
    fn send(&mut self, channel: u8, data: &[u8])
    -> impl Future<Output = anyhow::Result<()>> + Send;
    /// What the client sent next. Cancel-safe: used in `select!`.
    fn next(&mut self) -> impl Future<Output = Inbound> + Send;
    /// Sends the final Status and closes.
    fn finish(&mut self, status: Value) -> impl Future<Output = ()> + Send;
}

/// What the client sent, decoded.
pub(super) enum Inbound {
    Stdin(Bytes),
    CloseStdin,
    Resize(Size),
    Closed,
    Ignored,
}

/// The last well-formed `{"Width":w,"Height":h}` of a resize frame (several
/// may arrive newline-delimited in one frame).
pub fn parse_resize(payload: &[u8]) -> Option<Size> {
    serde_json::Deserializer::from_slice(payload)
        .into_iter::<Value>()
        .map_while(Result::ok)
        .filter_map(|v| {
            let cols = u16::try_from(v.get("Width")?.as_u64()?).ok()?;
            let rows = u16::try_from(v.get("Height")?.as_u64()?).ok()?;
            (cols > 0 && rows > 0).then_some(Size { cols, rows })
        })
        .last()
}

fn exit_status(command: &[String], code: i32) -> Value {
    if code == 0 {
        json!({"metadata": {}, "status": "Success"})
    } else {
        json!({
            "metadata": {},
            "status": "Failure",
            "message": format!("command terminated with non-zero exit code: error executing command [{}], exit code {code}", command.join(" ")),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
        })
    }
}

async fn run_attach(
    mut wire: impl Wire,
    process: Arc<ContainerProcess>,
    options: StreamOptions,
    mut kills: tokio::sync::watch::Receiver<u64>,
    idle: Option<std::time::Duration>,
) -> anyhow::Result<()> {
    let mut output = process.attach();
    kills.borrow_and_update();
    let mut last_frame = tokio::time::Instant::now();
    loop {
        tokio::select! {
            chunk = output.recv() => match chunk {
                Some(chunk) => {
                    let channel = match chunk.stream {
                        Stream::Stdout if options.stdout => STDOUT,
                        Stream::Stderr if options.stderr => STDERR,
                        _ => continue,
                    };
                    last_frame = tokio::time::Instant::now();
                    wire.send(channel, &chunk.data).await?
                }
                None => break,
            },
            () = idle_cut(idle, last_frame) => return Ok(()),
            inbound = wire.next() => match touch(&mut last_frame, inbound) {
                Inbound::Stdin(data) if options.stdin => process.write_input(&data).await?,
                Inbound::Resize(size) if options.tty => { let _ = process.resize(size); }
                // Without stdinOnce, detaching or closing stdin never sends
                // the process EOF; with it, closing stdin does.
                Inbound::CloseStdin if options.stdin && options.stdin_once => process.close_input().await,
                Inbound::Closed => return Ok(()),
                _ => {}
            },
            _ = kills.changed() => return Ok(()),
        }
    }
    // Attach reports Success when the container's streams end, whatever its exit code.
    wire.finish(json!({"metadata": {}, "status": "Success"}))
        .await;
    Ok(())
}

async fn run_exec(
    mut wire: impl Wire,
    command: Vec<String>,
    launch: std::io::Result<Launch>,
    options: StreamOptions,
    mut kills: tokio::sync::watch::Receiver<u64>,
    idle: Option<std::time::Duration>,
    pod_stopped: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    tokio::pin!(pod_stopped);
    let program = command.first().cloned().unwrap_or_default();
    let launch = match launch {
        Ok(launch) => launch,
        Err(e) => {
            wire.finish(start_failure(&program, &e)).await;
            return Ok(());
        }
    };
    kills.borrow_and_update();
    if options.tty {
        let spawned = spawn_on_pty(launch, Size::DEFAULT);
        let mut spawned = match spawned {
            Ok((s, _)) => s,
            Err(e) => {
                wire.finish(start_failure(&program, &e)).await;
                return Ok(());
            }
        };
        let (out_tx, mut out_rx) = mpsc::channel::<Bytes>(64);
        let reader = spawned.master.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = reader.read(&mut buf).await {
                if n == 0
                    || out_tx
                        .send(Bytes::copy_from_slice(&buf[..n]))
                        .await
                        .is_err()
                {
                    break;
                }
            }
        });
        let mut exited = None;
        let mut last_frame = tokio::time::Instant::now();
        loop {
            tokio::select! {
                chunk = out_rx.recv() => match chunk {
                    Some(chunk) => {
                        last_frame = tokio::time::Instant::now();
                        wire.send(STDOUT, &chunk).await?
                    }
                    None => break,
                },
                () = idle_cut(idle, last_frame) => {
                    let _ = spawned.child.start_kill();
                    return Ok(());
                }
                // The container is gone: its exec'd processes die with it,
                // as they would in a real pod.
                () = &mut pod_stopped => {
                    let _ = spawned.child.start_kill();
                    wire.finish(exit_status(&command, 137)).await;
                    return Ok(());
                }
                status = spawned.child.wait(), if exited.is_none() => {
                    exited = Some(status.map(exit_code).unwrap_or(128));
                    // Give the reader a moment to drain, then stop waiting on grandchildren.
                    let drain = tokio::time::sleep(std::time::Duration::from_millis(200));
                    tokio::pin!(drain);
                    loop {
                        tokio::select! {
                            chunk = out_rx.recv() => match chunk {
                                Some(chunk) => wire.send(STDOUT, &chunk).await?,
                                None => break,
                            },
                            _ = &mut drain => break,
                        }
                    }
                    break;
                }
                inbound = wire.next() => match touch(&mut last_frame, inbound) {
                    Inbound::Stdin(data) if options.stdin => spawned.master.write_all(&data).await?,
                    Inbound::Resize(size) => { let _ = spawned.master.resize(size); }
                    Inbound::Closed => { let _ = spawned.child.start_kill(); return Ok(()); }
                    _ => {}
                },
                _ = kills.changed() => { let _ = spawned.child.start_kill(); return Ok(()); }
            }
        }
        let code = match exited {
            Some(code) => code,
            None => spawned.child.wait().await.map(exit_code).unwrap_or(128),
        };
        wire.finish(exit_status(&command, code)).await;
        return Ok(());
    }

    let mut child = match spawn_piped(launch, options.stdin) {
        Ok((c, _)) => c,
        Err(e) => {
            wire.finish(start_failure(&program, &e)).await;
            return Ok(());
        }
    };
    let mut stdin = child.stdin.take();
    let (out_tx, mut out_rx) = mpsc::channel::<(u8, Bytes)>(64);
    for (channel, pipe) in [
        (
            STDOUT,
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        ),
        (
            STDERR,
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        ),
    ] {
        let Some(mut pipe) = pipe else { continue };
        let tx = out_tx.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0
                    || tx
                        .send((channel, Bytes::copy_from_slice(&buf[..n])))
                        .await
                        .is_err()
                {
                    break;
                }
            }
        });
    }
    drop(out_tx);
    loop {
        tokio::select! {
            chunk = out_rx.recv() => match chunk {
                Some((channel, data)) => {
                    let wanted = (channel == STDOUT && options.stdout) || (channel == STDERR && options.stderr);
                    if wanted {
                        wire.send(channel, &data).await?;
                    }
                }
                None => break,
            },
            inbound = wire.next() => match inbound {
                Inbound::Stdin(data) => {
                    if let Some(pipe) = stdin.as_mut()
                        && pipe.write_all(&data).await.is_err() {
                            stdin = None;
                        }
                }
                // v5 half-close: the process sees end of input.
                Inbound::CloseStdin => stdin = None,
                Inbound::Closed => { let _ = child.start_kill(); return Ok(()); }
                _ => {}
            },
            _ = kills.changed() => { let _ = child.start_kill(); return Ok(()); }
        }
    }
    let code = child.wait().await.map(exit_code).unwrap_or(128);
    wire.finish(exit_status(&command, code)).await;
    Ok(())
}

/// The Status a kubelet returns when the exec'd program cannot start.
/// Resolves when pod `key` stops.
async fn pod_stop(mut stopped: tokio::sync::broadcast::Receiver<Key>, key: Key) {
    loop {
        match stopped.recv().await {
            Ok(k) if k == key => return,
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                std::future::pending::<()>().await
            }
        }
    }
}

/// Notes a message from the client.
fn touch(last_frame: &mut tokio::time::Instant, inbound: Inbound) -> Inbound {
    *last_frame = tokio::time::Instant::now();
    inbound
}

/// Resolves when a stream idle since `last_frame` reaches the idle timeout.
async fn idle_cut(idle: Option<std::time::Duration>, last_frame: tokio::time::Instant) {
    match idle {
        Some(limit) => tokio::time::sleep_until(last_frame + limit).await,
        None => std::future::pending().await,
    }
}

/// The Status the kubelet sends when the runtime cannot start the program
/// (containerd's wording, wrapped by the kubelet's streaming server).
fn start_failure(program: &str, error: &std::io::Error) -> Value {
    let exec_id = super::rbac::random_token();
    let cause = match error.kind() {
        std::io::ErrorKind::NotFound => {
            format!("exec: {program:?}: executable file not found in $PATH")
        }
        std::io::ErrorKind::PermissionDenied => format!("exec: {program:?}: permission denied"),
        _ => error.to_string(),
    };
    let cause = format!(
        "error executing command in container: failed to exec in container: failed to start exec {exec_id:?}: OCI runtime exec failed: exec failed: unable to start container process: {cause}: unknown"
    );
    json!({"metadata": {}, "status": "Failure", "message": format!("Internal error occurred: {cause}"),
        "reason": "InternalError", "code": 500, "details": {"causes": [{"message": cause}]}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resize_takes_the_last_valid_message() {
        assert_eq!(
            parse_resize(br#"{"Width":100,"Height":30}"#),
            Some(Size {
                cols: 100,
                rows: 30
            })
        );
        assert_eq!(
            parse_resize(b"{\"Width\":10,\"Height\":5}\n{\"Width\":120,\"Height\":40}\n"),
            Some(Size {
                cols: 120,
                rows: 40
            })
        );
        assert_eq!(parse_resize(br#"{"Width":0,"Height":30}"#), None);
        assert_eq!(parse_resize(b"garbage"), None);
        assert_eq!(parse_resize(br#"{"Width":70000,"Height":30}"#), None);
    }

    #[test]
    fn exit_status_matches_the_kubelet() {
        let command = ["sh".to_string(), "-c".to_string(), "exit 3".to_string()];
        assert_eq!(exit_status(&command, 0)["status"], "Success");
        let failure = exit_status(&command, 3);
        assert_eq!(
            failure["message"],
            "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3"
        );
        assert_eq!(failure["reason"], "NonZeroExitCode");
        assert_eq!(failure["details"]["causes"][0]["reason"], "ExitCode");
        assert_eq!(failure["details"]["causes"][0]["message"], "3");
    }
}

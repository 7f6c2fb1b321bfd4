//! Terminal sessions on a container: attach (to the container's own
//! terminal, shared with every other attacher) or exec (a new process).
//! Bytes in, bytes out, resize, and how it ended.

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::{Api, AttachParams, AttachedProcess, TerminalSize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// What to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSpec {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub kind: SessionKind,
    /// Initial terminal size (columns, rows), sent as soon as the stream opens
    /// so the remote shell never starts at 80×24.
    pub size: (u16, u16),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKind {
    Attach,
    Exec(Vec<String>),
}

/// The command podbay runs for "open a shell": the best shell the image has.
pub fn shell_command() -> Vec<String> {
    [
        "sh",
        "-c",
        "command -v bash >/dev/null 2>&1 && exec bash || exec sh",
    ]
    .map(String::from)
    .to_vec()
}

/// What a session reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEvent {
    Output(Bytes),
    Ended(SessionEnd),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionEnd {
    /// The remote process's exit code when the server reported one.
    pub exit_code: Option<i32>,
    /// One sentence: "exited with code 3", "disconnected: …".
    pub reason: String,
    /// True when the stream was cut rather than ended by the process.
    pub disconnected: bool,
}

/// What the user sends to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionInput {
    Data(Bytes),
    Resize { cols: u16, rows: u16 },
}

/// A running session: send input here; events arrive on the channel given to [`open`].
pub struct Session {
    pub input: mpsc::UnboundedSender<SessionInput>,
    task: tokio::task::JoinHandle<()>,
}

impl Session {
    /// Leaves the session. For attach this never ends the container's process.
    pub fn detach(self) {
        self.task.abort();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Kube's default 1 KiB stdout pipe makes floods crawl; this is what a
/// screenful of 256-colour output needs.
const STDOUT_BUFFER: usize = 256 * 1024;

/// Opens the session and starts pumping it. Output and the end arrive on `events`.
pub async fn open(
    client: kube::Client,
    spec: SessionSpec,
    events: mpsc::Sender<SessionEvent>,
) -> Result<Session, kube::Error> {
    let pods: Api<Pod> = Api::namespaced(client, &spec.namespace);
    let params = AttachParams::interactive_tty()
        .container(spec.container.clone())
        .max_stdout_buf_size(STDOUT_BUFFER)
        .max_stdin_buf_size(64 * 1024);
    let process = match &spec.kind {
        SessionKind::Attach => pods.attach(&spec.pod, &params).await?,
        SessionKind::Exec(command) => pods.exec(&spec.pod, command.clone(), &params).await?,
    };
    let (input, input_rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(pump(process, spec.size, input_rx, events));
    Ok(Session { input, task })
}

async fn pump(
    mut process: AttachedProcess,
    (cols, rows): (u16, u16),
    mut input: mpsc::UnboundedReceiver<SessionInput>,
    events: mpsc::Sender<SessionEvent>,
) {
    let mut resize = process.terminal_size();
    if let Some(resize) = resize.as_mut() {
        let _ = futures::SinkExt::send(
            resize,
            TerminalSize {
                width: cols,
                height: rows,
            },
        )
        .await;
    }
    let mut stdin = process.stdin();
    let Some(mut stdout) = process.stdout() else {
        return;
    };
    // kube-rs resolves the status future when its message loop ends, with
    // None if the connection was cut; on that path it never closes the
    // stdout pipe, so stdout alone would wait forever.
    let status_future = process.take_status();
    let loop_ended = async move {
        match status_future {
            Some(f) => f.await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(loop_ended);
    let mut buf = vec![0u8; 64 * 1024];
    let mut input_open = true;
    let mut status = None;
    let end = loop {
        tokio::select! {
            read = stdout.read(&mut buf) => match read {
                Ok(0) | Err(_) => break None,
                Ok(n) => {
                    if events.send(SessionEvent::Output(Bytes::copy_from_slice(&buf[..n]))).await.is_err() {
                        process.abort();
                        return;
                    }
                }
            },
            ended = &mut loop_ended => {
                status = Some(ended);
                break None;
            }
            message = input.recv(), if input_open => match message {
                Some(SessionInput::Data(data)) => {
                    if let Some(writer) = stdin.as_mut()
                        && writer.write_all(&data).await.is_err() {
                            break Some("disconnected: the stream closed while sending input".to_string());
                        }
                }
                Some(SessionInput::Resize { cols, rows }) => {
                    if let Some(resize) = resize.as_mut() {
                        let _ = futures::SinkExt::send(resize, TerminalSize { width: cols, height: rows }).await;
                    }
                }
                None => input_open = false,
            },
        }
    };
    // Whatever output arrived before the end is still in the pipe.
    while let Ok(Ok(n)) =
        tokio::time::timeout(std::time::Duration::from_millis(50), stdout.read(&mut buf)).await
    {
        if n == 0
            || events
                .send(SessionEvent::Output(Bytes::copy_from_slice(&buf[..n])))
                .await
                .is_err()
        {
            break;
        }
    }
    let status = match status {
        Some(ended) => ended,
        None => tokio::time::timeout(std::time::Duration::from_secs(2), &mut loop_ended)
            .await
            .ok()
            .flatten(),
    };
    let ended = describe_end(status.as_ref(), end);
    let _ = events.send(SessionEvent::Ended(ended)).await;
}

/// How a session ended, from the Status the server sent on channel 3.
pub fn describe_end(status: Option<&Status>, local_reason: Option<String>) -> SessionEnd {
    if let Some(reason) = local_reason {
        return SessionEnd {
            exit_code: None,
            reason,
            disconnected: true,
        };
    }
    let Some(status) = status else {
        return SessionEnd {
            exit_code: None,
            reason: "disconnected: the stream was cut".to_string(),
            disconnected: true,
        };
    };
    if status.status.as_deref() == Some("Success") {
        return SessionEnd {
            exit_code: Some(0),
            reason: "exited with code 0".to_string(),
            disconnected: false,
        };
    }
    let exit_code = status
        .details
        .as_ref()
        .and_then(|d| d.causes.as_ref())
        .and_then(|causes| {
            causes
                .iter()
                .find(|c| c.reason.as_deref() == Some("ExitCode"))
        })
        .and_then(|c| c.message.as_deref()?.parse::<i32>().ok());
    match exit_code {
        Some(code) => SessionEnd {
            exit_code: Some(code),
            reason: format!("exited with code {code}"),
            disconnected: false,
        },
        None => SessionEnd {
            exit_code: None,
            reason: format!(
                "failed: {}",
                status
                    .message
                    .as_deref()
                    .unwrap_or("unknown error")
                    .trim_end_matches('.')
            ),
            disconnected: false,
        },
    }
}

/// How many leading bytes of `attached` (output received since attaching)
/// the container `log` fetched afterwards already ends with. The log covers
/// everything up to a moment after the attach began, so printing the log and
/// then `attached[overlap..]` shows every byte once.
pub fn overlap(log: &[u8], attached: &[u8]) -> usize {
    let pattern = &attached[..attached.len().min(log.len())];
    if pattern.is_empty() {
        return 0;
    }
    // Knuth-Morris-Pratt failure function of the pattern…
    let mut failure = vec![0usize; pattern.len()];
    let mut k = 0;
    for i in 1..pattern.len() {
        while k > 0 && pattern[i] != pattern[k] {
            k = failure[k - 1];
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        failure[i] = k;
    }
    // …then match it against the log's tail: the state at the end is the
    // longest pattern prefix that is a suffix of the log.
    let mut matched = 0;
    for &byte in &log[log.len() - pattern.len()..] {
        while matched > 0 && (matched == pattern.len() || byte != pattern[matched]) {
            matched = failure[matched - 1];
        }
        if byte == pattern[matched] {
            matched += 1;
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_finds_what_the_log_already_has() {
        assert_eq!(overlap(b"early\nline2\n", b"line2\nlive\n"), 6);
        assert_eq!(overlap(b"early\n", b"live\n"), 0);
        assert_eq!(overlap(b"", b"live"), 0);
        assert_eq!(overlap(b"abc", b""), 0);
        assert_eq!(overlap(b"xaab", b"aab"), 3);
        assert_eq!(overlap(b"aaaa", b"aaab"), 3);
        assert_eq!(overlap(b"abab", b"ababx"), 4);
        assert_eq!(overlap(b"everything", b"everything"), 10);
    }

    #[test]
    fn exit_codes_come_from_the_status_causes() {
        let ok: Status = serde_json::from_value(serde_json::json!({"status": "Success"})).unwrap();
        assert_eq!(describe_end(Some(&ok), None).exit_code, Some(0));
        let failed: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "reason": "NonZeroExitCode", "message": "command terminated with non-zero exit code",
            "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}
        }))
        .unwrap();
        let end = describe_end(Some(&failed), None);
        assert_eq!(end.exit_code, Some(3));
        assert_eq!(end.reason, "exited with code 3");
        assert!(!end.disconnected);
        let cut = describe_end(None, None);
        assert!(cut.disconnected && cut.exit_code.is_none());
    }
}

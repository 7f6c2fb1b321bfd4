//! "Replay the log, then attach": an attach shows only what a container
//! prints from then on, so what it printed before is read from its log, and
//! what the attach received meanwhile is joined on without duplicates.

use kube::api::LogParams;
use tokio::sync::mpsc;

use super::session::SessionEvent;
use crate::model::session::SessionEnd;

/// Where a container is: its pod's namespace and name, and its name.
pub struct ContainerRef<'a> {
    pub namespace: &'a str,
    pub pod: &'a str,
    pub container: &'a str,
}

/// One stream's first bytes: the log's, then what the attach received
/// that the log does not already hold.
#[derive(Debug, Default)]
pub struct Replayed {
    pub log: Vec<u8>,
    pub after: Vec<u8>,
}

/// What to show before the live stream: stdout's and stderr's first bytes
/// (with a terminal, everything is stdout), and the session's end if it
/// came while the log was read.
#[derive(Debug, Default)]
pub struct Replay {
    pub out: Replayed,
    pub err: Replayed,
    pub end: Option<SessionEnd>,
}

/// Reads what `container` printed before the attach whose events are
/// `events` (call it just after the attach opened), and joins what the
/// attach received meanwhile: every byte once.
pub async fn replay(
    client: &kube::Client,
    at: ContainerRef<'_>,
    tty: bool,
    events: &mut mpsc::Receiver<SessionEvent>,
) -> Replay {
    let (log_out, log_err) = earlier_output(client, at.namespace, at.pod, at.container, tty).await;
    let early = drain_early(events);
    let join = |log: Vec<u8>, early: &[u8]| {
        let skip = overlap(&log, early);
        Replayed {
            after: early[skip..].to_vec(),
            log,
        }
    };
    Replay {
        out: join(log_out, &early.out),
        err: join(log_err, &early.err),
        end: early.end,
    }
}

/// What the container wrote before the attach, from its log: (stdout,
/// stderr). Without a terminal the two are asked for apart
/// (`stream=Stdout`/`Stderr`, Kubernetes 1.32+); a server that does not
/// know `stream` answers both with the whole log, which then goes to stdout.
async fn earlier_output(
    client: &kube::Client,
    namespace: &str,
    pod: &str,
    container: &str,
    tty: bool,
) -> (Vec<u8>, Vec<u8>) {
    let params = LogParams {
        container: Some(container.to_string()),
        ..Default::default()
    };
    let fetch = |stream: Option<&'static str>| {
        let params = params.clone();
        async move {
            let path = format!("/api/v1/namespaces/{namespace}/pods");
            let mut request = kube::core::Request::new(path).logs(pod, &params).ok()?;
            if let Some(stream) = stream {
                let uri = format!("{}&stream={stream}", request.uri());
                *request.uri_mut() = uri.parse().ok()?;
            }
            client.request_text(request).await.ok()
        }
    };
    if tty {
        return (
            fetch(None).await.unwrap_or_default().into_bytes(),
            Vec::new(),
        );
    }
    let (out, err) = tokio::join!(fetch(Some("Stdout")), fetch(Some("Stderr")));
    match (out, err) {
        (Some(out), Some(err)) if out != err || out.is_empty() => {
            (out.into_bytes(), err.into_bytes())
        }
        (Some(merged), _) | (None, Some(merged)) => (merged.into_bytes(), Vec::new()),
        (None, None) => (
            fetch(None).await.unwrap_or_default().into_bytes(),
            Vec::new(),
        ),
    }
}

/// What a session received while the log was being fetched: its stdout,
/// its stderr, and its end if it came that soon.
#[derive(Debug, Default)]
pub struct Early {
    pub out: Vec<u8>,
    pub err: Vec<u8>,
    pub end: Option<SessionEnd>,
}

/// Takes what is already waiting in `events`, without waiting. Take it
/// after fetching the log, so [`overlap`] finds what both hold.
pub fn drain_early(events: &mut mpsc::Receiver<SessionEvent>) -> Early {
    let mut early = Early::default();
    while early.end.is_none()
        && let Ok(event) = events.try_recv()
    {
        match event {
            SessionEvent::Output(chunk) => early.out.extend_from_slice(&chunk),
            SessionEvent::Stderr(chunk) => early.err.extend_from_slice(&chunk),
            SessionEvent::Ended(end) => early.end = Some(end),
            SessionEvent::Unanswered(_) => {}
        }
    }
    early
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
    use bytes::Bytes;

    /// An end that came while the log was read is kept, never dropped
    /// with the output around it (the TUI's pane stayed "attached").
    #[test]
    fn draining_keeps_stderr_and_the_end() {
        let (tx, mut rx) = mpsc::channel(8);
        let end = SessionEnd {
            exit_code: Some(3),
            reason: "exited with code 3".into(),
            disconnected: false,
        };
        for event in [
            SessionEvent::Output(Bytes::from_static(b"out")),
            SessionEvent::Stderr(Bytes::from_static(b"err")),
            SessionEvent::Ended(end),
        ] {
            tx.try_send(event).unwrap();
        }
        let early = drain_early(&mut rx);
        assert_eq!((&early.out[..], &early.err[..]), (&b"out"[..], &b"err"[..]));
        assert_eq!(early.end.and_then(|e| e.exit_code), Some(3));
    }

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
}

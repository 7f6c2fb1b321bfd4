//! A log pane's stream: the current run followed (`follow=true`) until the
//! container exits or the stream is cut, resumable from the last line
//! without duplicates; or a log read once (the previous run's, or a
//! finished container's).

use std::sync::{Arc, Mutex};

use futures::{AsyncBufReadExt as _, FutureExt as _};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};

use super::outbox::Outbox;
use crate::app::Event;
use crate::cluster::session::SessionEnd;

/// Where a followed log got to: the timestamp of the last line shown.
pub type Resume = Arc<Mutex<Option<jiff::Timestamp>>>;

/// Which log, and whether to follow it.
#[derive(Debug, Clone, Copy)]
pub struct Read {
    /// The previous run's (`previous=true`).
    pub previous: bool,
    /// Follow it (`follow=true`) until the container stops.
    pub follow: bool,
}

/// Streams `container`'s log into pane `id` and says how it ended.
pub async fn run(
    id: u64,
    pods: Api<Pod>,
    pod: String,
    container: String,
    Read { previous, follow }: Read,
    resume: Resume,
    outbox: Outbox,
) {
    let since = *resume.lock().unwrap_or_else(|p| p.into_inner());
    let params = LogParams {
        container: Some(container.clone()),
        previous,
        follow,
        timestamps: true,
        // The apiserver takes whole seconds: lines up to `since` are skipped below.
        since_time: since.and_then(|t| jiff::Timestamp::from_second(t.as_second()).ok()),
        ..Default::default()
    };
    let which = if previous { "previous run's " } else { "" };
    let stream = match pods.log_stream(&pod, &params).await {
        Ok(stream) => stream,
        Err(e) => {
            // The server's answer is final; a server out of reach may
            // come back, and `r` asks again.
            let unreachable = !matches!(e, kube::Error::Api(_));
            let reason = crate::cluster::errors::describe(&e).0;
            end(&outbox, id, reason, unreachable && follow).await;
            return;
        }
    };
    let _ = outbox.send(Event::SessionAttached { id }).await;
    let mut reader = stream;
    // A line not yet complete, and the lines ready to go to the pane.
    let (mut partial, mut batch) = (Vec::new(), Vec::new());
    let mut shown = 0usize;
    let mut ended = false;
    while !ended {
        // Wait for one line, then take those already here, up to a batch:
        // one event per batch, not per line, however fast the log.
        let mut waited = false;
        while !ended && batch.len() < BATCH_BYTES {
            let read = if waited {
                match reader.read_until(b'\n', &mut partial).now_or_never() {
                    Some(read) => read,
                    None => break,
                }
            } else {
                waited = true;
                reader.read_until(b'\n', &mut partial).await
            };
            ended = !matches!(read, Ok(n) if n > 0);
            if partial.ends_with(b"\n") || (ended && !partial.is_empty()) {
                let line = trim_newline(&partial);
                let (at, text) = split_timestamp_bytes(line);
                if let (Some(at), Some(since)) = (at, since)
                    && at <= since
                {
                    partial.clear();
                    continue;
                }
                if let Some(at) = at {
                    *resume.lock().unwrap_or_else(|p| p.into_inner()) = Some(at);
                }
                shown += 1;
                batch.extend_from_slice(text);
                batch.extend_from_slice(b"\r\n");
                partial.clear();
            }
        }
        if !batch.is_empty() {
            let bytes = std::mem::take(&mut batch).into();
            if !outbox.send(Event::SessionOutput { id, bytes }).await {
                return;
            }
        }
    }
    if !follow {
        let reason = if shown == 0 {
            format!("{container}'s {which}log is empty")
        } else {
            format!("end of {container}'s {which}log")
        };
        end(&outbox, id, reason, false).await;
    } else {
        // The app tells an exit from a cut by the container's state.
        end(&outbox, id, format!("{container}'s log stream ended"), true).await;
    }
}

async fn end(outbox: &Outbox, id: u64, reason: String, disconnected: bool) {
    let end = SessionEnd {
        exit_code: None,
        reason,
        disconnected,
    };
    outbox.send(Event::SessionEnded { id, end }).await;
}

/// Bytes a log pane sends at once, at most (a line may exceed it).
const BATCH_BYTES: usize = 64 * 1024;

fn trim_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `2026-11-23T10:00:00.123456789Z text` → (the time, `text`).
#[cfg(test)]
fn split_timestamp(line: &str) -> (Option<jiff::Timestamp>, &str) {
    let (at, text) = split_timestamp_bytes(line.as_bytes());
    // `text` is `line` after an ASCII space, or all of it: still UTF-8.
    (at, std::str::from_utf8(text).unwrap_or(line))
}

/// [`split_timestamp`] on a line's bytes, which a program may write in any
/// encoding: only the timestamp must be text.
fn split_timestamp_bytes(line: &[u8]) -> (Option<jiff::Timestamp>, &[u8]) {
    let (time, text) = match line.iter().position(|&b| b == b' ') {
        Some(at) => (&line[..at], &line[at + 1..]),
        None => (line, &line[line.len()..]),
    };
    match std::str::from_utf8(time)
        .ok()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    {
        Some(at) => (Some(at), text),
        None => (None, line),
    }
}

#[cfg(test)]
mod tests {
    use super::split_timestamp;

    #[test]
    fn a_line_that_is_not_utf8_keeps_its_bytes_and_its_timestamp() {
        let (at, text) = super::split_timestamp_bytes(b"2026-11-23T10:00:00Z caf\xe9");
        assert!(at.is_some());
        assert_eq!(text, b"caf\xe9");
    }

    #[test]
    fn the_kubelets_timestamp_is_split_off() {
        let (at, text) = split_timestamp("2026-11-23T10:00:00.5Z INFO up");
        assert_eq!(text, "INFO up");
        assert_eq!(at.unwrap().to_string(), "2026-11-23T10:00:00.5Z");
        assert_eq!(split_timestamp("no time here"), (None, "no time here"));
        assert_eq!(split_timestamp("2026-11-23T10:00:00Z").1, "");
    }
}

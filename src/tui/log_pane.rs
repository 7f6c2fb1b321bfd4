//! A log pane's stream: the current run followed (`follow=true`) until the
//! container exits or the stream is cut, resumable from the last line
//! without duplicates; or the previous run's log, read once.

use std::sync::{Arc, Mutex};

use futures::{AsyncBufReadExt as _, StreamExt as _};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};

use super::outbox::Outbox;
use crate::app::Event;
use crate::cluster::session::SessionEnd;

/// Where a followed log got to: the timestamp of the last line shown.
pub type Resume = Arc<Mutex<Option<jiff::Timestamp>>>;

/// Streams `container`'s log into pane `id` and says how it ended.
pub async fn run(
    id: u64,
    pods: Api<Pod>,
    pod: String,
    container: String,
    previous: bool,
    resume: Resume,
    outbox: Outbox,
) {
    let since = *resume.lock().unwrap_or_else(|p| p.into_inner());
    let params = LogParams {
        container: Some(container.clone()),
        previous,
        follow: !previous,
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
            end(&outbox, id, reason, unreachable && !previous).await;
            return;
        }
    };
    let _ = outbox.send(Event::SessionAttached { id }).await;
    let mut lines = stream.lines();
    let mut shown = 0usize;
    while let Some(Ok(line)) = lines.next().await {
        let (at, text) = split_timestamp(&line);
        if let (Some(at), Some(since)) = (at, since)
            && at <= since
        {
            continue;
        }
        if let Some(at) = at {
            *resume.lock().unwrap_or_else(|p| p.into_inner()) = Some(at);
        }
        shown += 1;
        let bytes = format!("{text}\r\n").into_bytes().into();
        if !outbox.send(Event::SessionOutput { id, bytes }).await {
            return;
        }
    }
    if previous {
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

/// `2026-11-23T10:00:00.123456789Z text` → (the time, `text`).
fn split_timestamp(line: &str) -> (Option<jiff::Timestamp>, &str) {
    match line.split_once(' ') {
        Some((time, text)) => match time.parse::<jiff::Timestamp>() {
            Ok(at) => (Some(at), text),
            Err(_) => (None, line),
        },
        None => match line.parse::<jiff::Timestamp>() {
            Ok(at) => (Some(at), ""),
            Err(_) => (None, line),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::split_timestamp;

    #[test]
    fn the_kubelets_timestamp_is_split_off() {
        let (at, text) = split_timestamp("2026-11-23T10:00:00.5Z INFO up");
        assert_eq!(text, "INFO up");
        assert_eq!(at.unwrap().to_string(), "2026-11-23T10:00:00.5Z");
        assert_eq!(split_timestamp("no time here"), (None, "no time here"));
        assert_eq!(split_timestamp("2026-11-23T10:00:00Z").1, "");
    }
}

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
use crate::app::TerminalId;
use crate::app::terminal::LogOptions;
use crate::model::session::SessionEnd;
use crate::model::text::Printable;

/// Where a followed log got to: the timestamp of the last line shown.
pub type Resume = Arc<Mutex<Option<jiff::Timestamp>>>;

/// Which log, whether to follow it, and how to show it.
#[derive(Debug, Clone, Copy)]
pub struct Read {
    /// The previous run's (`previous=true`).
    pub previous: bool,
    /// Follow it (`follow=true`) until the container stops.
    pub follow: bool,
    pub options: LogOptions,
}

/// One container's log in a pane: its pod, the prefix its lines get (none
/// when it is alone) and where its stream got to.
pub struct ContainerLog {
    /// Its pod's namespace's pods.
    pods: Api<Pod>,
    pod: String,
    container: String,
    prefix: Vec<u8>,
    resume: Resume,
}

impl ContainerLog {
    pub fn alone((pods, pod): (&Api<Pod>, &str), container: &str, resume: Resume) -> Self {
        ContainerLog {
            pods: pods.clone(),
            pod: pod.to_string(),
            container: container.to_string(),
            prefix: Vec::new(),
            resume,
        }
    }

    /// Lines after `name` (the container's, or `pod container` for
    /// several pods'), padded to `width`, in the `index`th of six colours
    /// (as stern does).
    pub fn prefixed(
        (pods, pod, container): (&Api<Pod>, &str, &str),
        name: &str,
        (index, width): (usize, usize),
        resume: Resume,
    ) -> Self {
        const COLOURS: [u8; 6] = [36, 33, 35, 32, 34, 31];
        let colour = COLOURS[index % COLOURS.len()];
        ContainerLog {
            pods: pods.clone(),
            pod: pod.to_string(),
            container: container.to_string(),
            prefix: format!("\x1b[{colour}m{name:<width$}\x1b[0m \u{2502} ").into_bytes(),
            resume,
        }
    }
}

/// How one container's stream ended.
struct Outcome {
    reason: Printable,
    /// Cut, not finished: `r` may resume it.
    disconnected: bool,
}

/// Streams each source's log into terminal `id` as lines arrive, and says how
/// it ended once every stream has.
async fn run_all(id: TerminalId, sources: Vec<ContainerLog>, read: Read, outbox: Outbox) {
    // Every container's log at once: what they logged so far first, merged
    // by time, then each followed from there.
    if sources.len() > 1
        && !read.previous
        && !merged_backlog(id, &sources, read.options, &outbox).await
    {
        return;
    }
    let streams = sources.iter().map(|source| run(id, source, read, &outbox));
    let outcomes = futures::future::join_all(streams).await;
    let end_of = match outcomes.as_slice() {
        [one] if sources[0].prefix.is_empty() => Outcome {
            reason: one.reason.clone(),
            disconnected: one.disconnected,
        },
        all => Outcome {
            reason: if read.follow {
                format!("the {} containers' log streams ended", all.len()).into()
            } else {
                format!("end of the {} containers' logs", all.len()).into()
            },
            disconnected: all.iter().any(|o| o.disconnected),
        },
    };
    end(&outbox, id, end_of.reason, end_of.disconnected).await;
}

/// Where each `pod container` of a pods' log pane got to, shared with its
/// task: the containers are known only once it has read the pods.
pub type Resumes = Arc<Mutex<std::collections::HashMap<String, Resume>>>;

/// What a log pane reads: containers it knows, or every container of
/// some pods, which it reads first.
pub enum Sources {
    Containers(Vec<ContainerLog>),
    /// `namespace/name` each.
    Pods {
        client: kube::Client,
        pods: Vec<String>,
        resumes: Resumes,
        within: std::time::Duration,
    },
}

/// Streams `sources` into terminal `id` (see [`run_all`]): one task type
/// for every log pane.
pub async fn run_sources(id: TerminalId, sources: Sources, read: Read, outbox: Outbox) {
    let sources = match sources {
        Sources::Containers(sources) => sources,
        Sources::Pods {
            client,
            pods,
            resumes,
            within,
        } => match pods_containers(id, client, pods, (resumes, within), &outbox).await {
            Some(sources) => sources,
            None => return,
        },
    };
    run_all(id, sources, read, outbox).await;
}

/// Every container of each pod of `pods` (`namespace/name`), each line
/// after `pod container` (as stern shows a workload's pods). The pods are
/// read one after the other, all within `within`; one that cannot be read
/// is said in the pane and the others go on. `None` when none could be
/// read (the pane is told) or the pane is gone.
async fn pods_containers(
    id: TerminalId,
    client: kube::Client,
    pods: Vec<String>,
    (resumes, within): (Resumes, std::time::Duration),
    outbox: &Outbox,
) -> Option<Vec<ContainerLog>> {
    let deadline = crate::cluster::deadline::Deadline::none().within(Some(within));
    let named: Vec<(Api<Pod>, &str)> = pods
        .iter()
        .filter_map(|p| p.split_once('/'))
        .map(|(namespace, name)| (Api::namespaced(client.clone(), namespace), name))
        .collect();
    let mut found = Vec::new();
    let mut unread = Vec::new();
    // A few small reads (the app follows at most a few dozen pods).
    for (api, name) in &named {
        let url = api.resource_url();
        let pod = deadline
            .bound(crate::cluster::objects::get_json(client.clone(), url, name))
            .await;
        match pod {
            Ok(Ok(pod)) => {
                let containers = pod["spec"]["containers"].as_array().cloned();
                for c in containers.unwrap_or_default() {
                    if let Some(container) = c["name"].as_str() {
                        found.push((api, *name, container.to_string()));
                    }
                }
            }
            Ok(Err(e)) => unread.push(format!(
                "{name}: {}",
                crate::cluster::errors::describe(&e).sentence
            )),
            Err(late) => unread.push(format!("{name}: the API server did not answer: {late}")),
        }
    }
    for sentence in unread {
        let sentence = crate::model::text::sanitize(&sentence);
        let bytes = format!("\x1b[2m{sentence}\x1b[22m\r\n").into_bytes().into();
        if !outbox.send(Event::SessionOutput { id, bytes }).await {
            return None;
        }
    }
    if found.is_empty() {
        let reason = "no pod's log could be read".into();
        end(outbox, id, reason, false).await;
        return None;
    }
    // The names come from the server: shown as text, never as controls.
    let names: Vec<String> = found
        .iter()
        .map(|(_, p, c)| crate::model::text::sanitize(&format!("{p} {c}")).into_owned())
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let sources = found
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(i, ((api, pod, container), name))| {
            let resume = resumes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(name.clone())
                .or_default()
                .clone();
            ContainerLog::prefixed((api, pod, container), name, (i, width), resume)
        })
        .collect();
    Some(sources)
}

/// Streams one container's log into terminal `id`. A followed stream
/// that is cut is opened again after its last line, by itself, as watches
/// are; it ends when reopening brings nothing twice running (the container
/// has stopped, or every stream is cut at once: the app tells which).
async fn run(
    id: TerminalId,
    source: &ContainerLog,
    Read {
        previous,
        follow,
        options,
    }: Read,
    outbox: &Outbox,
) -> Outcome {
    let container = &source.container;
    let which = if previous { "previous run's " } else { "" };
    let closed = || Outcome {
        reason: format!("{container}'s log pane closed").into(),
        disconnected: false,
    };
    let mut attached = false;
    let mut shown = 0usize;
    let mut fruitless = 0;
    loop {
        let since = *source.resume.lock().unwrap_or_else(|p| p.into_inner());
        let params = LogParams {
            container: Some(container.clone()),
            previous,
            follow,
            timestamps: true,
            // The apiserver takes whole seconds: lines up to `since` are skipped below.
            since_time: since.and_then(|t| jiff::Timestamp::from_second(t.as_second()).ok()),
            // Resuming reads from where the pane stopped, whatever the window.
            since_seconds: options.since_seconds.filter(|_| since.is_none()),
            tail_lines: options.tail.filter(|_| since.is_none()),
            ..Default::default()
        };
        let stream = match open(id, &source.pods, &source.pod, &params, follow, outbox).await {
            Some(Ok(stream)) => stream,
            None => return closed(),
            Some(Err(e)) => {
                // The server's answer is final; a server out of reach may
                // come back, and `r` asks again.
                let unreachable = !matches!(e, kube::Error::Api(_));
                let reason = crate::cluster::errors::describe(&e).sentence;
                if !source.prefix.is_empty() {
                    // One container of many: say it in the pane, the others go on.
                    let mut line = source.prefix.clone();
                    line.extend_from_slice(format!("\x1b[2m{reason}\x1b[22m\r\n").as_bytes());
                    let bytes = line.into();
                    outbox.send(Event::SessionOutput { id, bytes }).await;
                }
                return Outcome {
                    reason,
                    disconnected: unreachable && follow,
                };
            }
        };
        if !attached {
            attached = true;
            let _ = outbox.send(Event::SessionAttached { id }).await;
        }
        let Some(lines) = pour(id, stream, source, since, options, outbox).await else {
            return closed();
        };
        shown += lines;
        if !follow {
            let reason = if shown == 0 {
                format!("{container}'s {which}log is empty")
            } else {
                format!("end of {container}'s {which}log")
            };
            return Outcome {
                reason: reason.into(),
                disconnected: false,
            };
        }
        fruitless = if lines == 0 { fruitless + 1 } else { 0 };
        if fruitless >= 2 {
            // The app tells an exit from a cut by the container's state.
            return Outcome {
                reason: format!("{container}'s log stream ended").into(),
                disconnected: true,
            };
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

/// Pours one open stream into the pane until it ends: the number of lines
/// shown, or `None` once the pane is gone.
async fn pour(
    id: TerminalId,
    mut stream: impl futures::AsyncBufRead + Unpin,
    source: &ContainerLog,
    since: Option<jiff::Timestamp>,
    options: LogOptions,
    outbox: &Outbox,
) -> Option<usize> {
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
                match stream.read_until(b'\n', &mut partial).now_or_never() {
                    Some(read) => read,
                    None => break,
                }
            } else {
                waited = true;
                stream.read_until(b'\n', &mut partial).await
            };
            ended = !matches!(read, Ok(n) if n > 0);
            if partial.ends_with(b"\n") || (ended && !partial.is_empty()) {
                let line = trim_newline(&partial);
                let (at, _) = split_timestamp_bytes(line);
                if let (Some(at), Some(since)) = (at, since)
                    && at <= since
                {
                    partial.clear();
                    continue;
                }
                if let Some(at) = at {
                    *source.resume.lock().unwrap_or_else(|p| p.into_inner()) = Some(at);
                }
                shown += 1;
                render(source, line, options, &mut batch);
                partial.clear();
            }
        }
        if !batch.is_empty() {
            let bytes = std::mem::take(&mut batch).into();
            if !outbox.send(Event::SessionOutput { id, bytes }).await {
                return None;
            }
        }
    }
    Some(shown)
}

/// Opens the log stream. A followed log whose server is out of reach is
/// tried again, as watches are (0.5 s doubling to 5 s), the pane saying
/// how long it has had no answer, until the server answers (the pane then
/// goes on by itself) or says no; `None` once the pane is gone.
async fn open(
    id: TerminalId,
    pods: &Api<Pod>,
    pod: &str,
    params: &LogParams,
    follow: bool,
    outbox: &Outbox,
) -> Option<Result<impl futures::AsyncBufRead + use<>, kube::Error>> {
    let since = tokio::time::Instant::now();
    let mut backoff = std::time::Duration::from_millis(500);
    let mut said = false;
    loop {
        match pods.log_stream(pod, params).await {
            Err(e) if follow && !matches!(e, kube::Error::Api(_)) => {
                let unanswered = Some(since.elapsed().as_secs().max(1));
                if !outbox
                    .send(Event::SessionUnanswered { id, unanswered })
                    .await
                {
                    return None;
                }
                said = true;
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
            }
            opened => {
                if said {
                    let unanswered = None;
                    outbox
                        .send(Event::SessionUnanswered { id, unanswered })
                        .await;
                }
                return Some(opened);
            }
        }
    }
}

/// One log line (without its newline, with the kubelet's timestamp) as
/// the pane shows it: after the container's prefix, the timestamp when
/// asked for. Long lines are the grid's to wrap or cut.
fn render(source: &ContainerLog, line: &[u8], options: LogOptions, out: &mut Vec<u8>) {
    let (at, text) = split_timestamp_bytes(line);
    out.extend_from_slice(&source.prefix);
    if options.timestamps && at.is_some() {
        let stamp = &line[..line.len() - text.len()];
        out.extend_from_slice(b"\x1b[2m");
        out.extend_from_slice(stamp);
        out.extend_from_slice(b"\x1b[22m");
    }
    // A record, not a screen: colours stay, nothing else acts.
    out.extend_from_slice(&crate::term::log_text::log_line(text));
    out.extend_from_slice(b"\x1b[0m\r\n");
}

/// What each container has logged so far (up to `[logs] tail` lines each,
/// or since `:since`, or after where its stream stopped), read once and
/// shown as one log, ordered by the kubelet's timestamps: not one
/// container's backlog after the other's. Each container's resume point
/// moves to its last line, so its followed stream goes on from there.
/// A container that cannot be read is left to its stream, which says why.
async fn merged_backlog(
    id: TerminalId,
    sources: &[ContainerLog],
    options: LogOptions,
    outbox: &Outbox,
) -> bool {
    let reads = sources.iter().map(|source| async move {
        let since = *source.resume.lock().unwrap_or_else(|p| p.into_inner());
        let params = LogParams {
            container: Some(source.container.clone()),
            timestamps: true,
            since_time: since.and_then(|t| jiff::Timestamp::from_second(t.as_second()).ok()),
            since_seconds: options.since_seconds.filter(|_| since.is_none()),
            tail_lines: options.tail.filter(|_| since.is_none()),
            ..Default::default()
        };
        let Ok(mut stream) = source.pods.log_stream(&source.pod, &params).await else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        let mut partial = Vec::new();
        loop {
            partial.clear();
            match stream.read_until(b'\n', &mut partial).await {
                Ok(n) if n > 0 => {}
                _ => break,
            }
            let line = trim_newline(&partial).to_vec();
            let (at, _) = split_timestamp_bytes(&line);
            if let (Some(at), Some(since)) = (at, since)
                && at <= since
            {
                continue;
            }
            lines.push((at, line));
        }
        lines
    });
    let backlogs = futures::future::join_all(reads).await;
    // (time, container, line): a line without a time keeps the time of
    // the line before it in its container.
    let mut merged = Vec::new();
    for (index, lines) in backlogs.into_iter().enumerate() {
        let mut last = None;
        for (at, line) in lines {
            last = at.or(last);
            merged.push((last, index, line));
        }
        if let Some(at) = last {
            *sources[index]
                .resume
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(at);
        }
    }
    if merged.is_empty() {
        return true;
    }
    // Stable: a container's lines keep their order among equal times.
    merged.sort_by_key(|(at, _, _)| *at);
    if !outbox.send(Event::SessionAttached { id }).await {
        return false;
    }
    let mut batch = Vec::new();
    for (_, index, line) in merged {
        render(&sources[index], &line, options, &mut batch);
        if batch.len() >= BATCH_BYTES {
            let bytes = std::mem::take(&mut batch).into();
            if !outbox.send(Event::SessionOutput { id, bytes }).await {
                return false;
            }
        }
    }
    let bytes = batch.into();
    outbox.send(Event::SessionOutput { id, bytes }).await
}

async fn end(outbox: &Outbox, id: TerminalId, reason: Printable, disconnected: bool) {
    let end = SessionEnd {
        exit_code: None,
        reason,
        disconnected,
    };
    outbox.send(Event::SessionEnded { id, end }).await;
}

/// Bytes a log pane sends at once, at most (a line may exceed it): about
/// what one turn of the UI loop parses, since a key typed meanwhile waits
/// for the turn.
const BATCH_BYTES: usize = 16 * 1024;

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

/// A log's text as a terminal shows it: every line ending `\r\n`.
pub(super) fn for_terminal(log: &str) -> Vec<u8> {
    log.replace('\n', "\r\n")
        .replace("\r\r\n", "\r\n")
        .into_bytes()
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

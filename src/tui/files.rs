//! The file browser's I/O: listing, reading and removing through `sh`,
//! `head` and `rm` in the container (or in the debug container that sees
//! its root), and copies through `podbay cp`'s own code, each reporting
//! back as [`FilesEvent`]s.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::app::Event;
use crate::app::files::{FileOp, FilesEvent, READ_LIMIT, Via};
use crate::cluster::pipe::{self, PipeSpec};
use crate::engine::transfer::progress::Meter;
use crate::engine::transfer::{Bounds, Copied, Reach, copy_in, copy_out};
use crate::model::TerminalKey;
use crate::model::files::{self, parse_listing};
use crate::model::text::sanitize;
use crate::model::transfer::{Route, split};

/// How long a debug container added for the browser may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// The most of a listing kept (a directory of some 50 000 entries).
const LISTING_LIMIT: usize = 8 << 20;

/// Hands an event to the app (the executor's queue).
pub(super) type Emit = std::sync::Arc<
    dyn Fn(Event) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync,
>;

/// One request of the browser, carried out; its answer goes to `emit`.
pub(super) async fn carry_out(
    client: kube::Client,
    emit: Emit,
    generation: u64,
    key: TerminalKey,
    via: Via,
    op: FileOp,
    transfer: Option<u64>,
) {
    let send = |event: FilesEvent| emit(Event::Files(event));
    match op {
        FileOp::List(dir) => {
            let (via, result) = list(&client, &key, via, &dir).await;
            send(FilesEvent::Listed {
                generation,
                via,
                dir,
                result,
            })
            .await;
        }
        FileOp::Read(path) => {
            let command = |reach: &Reach| files::head_command(&seen(reach, &path), READ_LIMIT);
            let result = output(&client, &reach_of(&key, &via), command, READ_LIMIT)
                .await
                .map_err(|why| format!("Cannot read {path}: {why}."));
            send(FilesEvent::Read {
                generation,
                path,
                result,
            })
            .await;
        }
        FileOp::Remove(path) => {
            let command = |reach: &Reach| files::remove_command(&seen(reach, &path));
            let result = output(&client, &reach_of(&key, &via), command, 4096)
                .await
                .map(|_| format!("Removed {path}."))
                .map_err(|why| format!("Cannot remove {path}: {why}."));
            send(FilesEvent::Removed { generation, result }).await;
        }
        FileOp::Download { path, to } => {
            let id = transfer.unwrap_or_default();
            let meter = Meter::quiet();
            let report = progress(emit.clone(), id, meter.clone());
            let reach = reach_of(&key, &via);
            let outcome = match split(&path) {
                Ok(from) => {
                    // Said by its whole path, and never over a file there.
                    let dir = std::path::absolute(&to).unwrap_or_else(|_| to.clone().into());
                    let target = crate::local::free_name(&dir, &from.name);
                    copy_out(
                        &client,
                        &reach,
                        &from,
                        Some(&target),
                        Bounds::default(),
                        &meter,
                    )
                    .await
                    .map_err(|f| f.sentence.as_str().to_string())
                    .and_then(done_or_no_tar)
                }
                Err(why) => Err(why),
            };
            report.abort();
            send(FilesEvent::Ended {
                id,
                outcome: outcome.map(capitalized),
            })
            .await;
        }
        FileOp::Upload { local, dir } => {
            let id = transfer.unwrap_or_default();
            let meter = Meter::quiet();
            let report = progress(emit.clone(), id, meter.clone());
            let reach = reach_of(&key, &via);
            let local_path = std::path::PathBuf::from(&local);
            let outcome = match local_path.file_name() {
                Some(name) => {
                    let name = name.to_string_lossy().into_owned();
                    copy_in(
                        &client,
                        &reach,
                        Some(&local_path),
                        &dir,
                        &name,
                        Bounds::default(),
                        &meter,
                    )
                    .await
                    .map_err(|f| f.sentence.as_str().to_string())
                    .and_then(done_or_no_tar)
                }
                None => Err(format!("{local} names no file to upload.")),
            };
            report.abort();
            send(FilesEvent::Ended {
                id,
                outcome: outcome.map(capitalized),
            })
            .await;
        }
    }
}

/// The local paths that begin as `typed` does, as typed (`~/` kept),
/// directories ending in `/`; hidden ones only when asked for with `.`.
pub(super) fn local_candidates(typed: &str) -> Vec<String> {
    let home = std::env::var("HOME").unwrap_or_default();
    let expanded = match typed.strip_prefix("~/") {
        Some(rest) => format!("{home}/{rest}"),
        None => typed.to_string(),
    };
    let (dir_typed, prefix) = match typed.rfind('/') {
        Some(at) => (&typed[..=at], &typed[at + 1..]),
        None => ("", typed),
    };
    let dir = match expanded.rfind('/') {
        Some(0) => "/".to_string(),
        Some(at) => expanded[..at].to_string(),
        None => ".".to_string(),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let wanted =
                name.starts_with(prefix) && (prefix.starts_with('.') || !name.starts_with('.'));
            wanted.then(|| {
                let slash = if e.path().is_dir() { "/" } else { "" };
                format!("{dir_typed}{name}{slash}")
            })
        })
        .take(200)
        .collect();
    found.sort();
    found
}

fn done_or_no_tar(copied: Copied) -> Result<String, String> {
    match copied {
        Copied::Done(summary) => Ok(summary),
        Copied::NoTar => Err("The container has no tar to copy with.".into()),
    }
}

fn capitalized(summary: String) -> String {
    let mut chars = summary.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => summary,
    }
}

/// Reports the copy's bytes four times a second until aborted.
fn progress(emit: Emit, id: u64, meter: Meter) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        loop {
            tick.tick().await;
            let event = FilesEvent::Progress {
                id,
                bytes: meter.bytes(),
                total: meter.total(),
                elapsed_ms: meter.started.elapsed().as_millis() as u64,
            };
            emit(Event::Files(event)).await;
        }
    })
}

/// Where the browser's requests run, once the route is known.
fn reach_of(key: &TerminalKey, via: &Via) -> Reach {
    let (runs_in, route) = match via {
        Via::Debugger(name) => (name.clone(), Route::Through),
        Via::Direct | Via::Unknown { .. } => (key.container.clone(), Route::Direct),
    };
    Reach {
        namespace: key.pod.namespace.to_string(),
        pod: key.pod.name.to_string(),
        runs_in,
        route,
    }
}

/// A path in the container's terms, as the process running the command
/// sees it.
fn seen(reach: &Reach, path: &str) -> String {
    reach.route.dir(path).unwrap_or_else(|| path.to_string())
}

/// Lists `dir`; where the route is not known yet, the container itself
/// first, then a debug container (reused, or added).
async fn list(
    client: &kube::Client,
    key: &TerminalKey,
    via: Via,
    dir: &str,
) -> (Via, Result<Vec<files::Entry>, String>) {
    let command = |reach: &Reach| files::list_command(&seen(reach, dir));
    let listed = |out: Vec<u8>| parse_listing(&out);
    let direct = match &via {
        Via::Unknown { .. } => Via::Direct,
        known => known.clone(),
    };
    match output(client, &reach_of(key, &direct), command, LISTING_LIMIT).await {
        Err(Failed::NotFound) => {}
        result => {
            return (
                direct,
                result
                    .map(listed)
                    .map_err(|why| format!("Cannot list {dir}: {why}.")),
            );
        }
    }
    let Via::Unknown { reuse, fallback } = via else {
        return (
            direct,
            Err(format!(
                "Cannot list {dir}: the container has no shell to list with."
            )),
        );
    };
    let debugger = match reuse {
        Some(name) => name,
        None => match add_debugger(client, key, &fallback).await {
            Ok(name) => name,
            Err(why) => {
                return (
                    Via::Unknown {
                        reuse: None,
                        fallback,
                    },
                    Err(why),
                );
            }
        },
    };
    let through = Via::Debugger(debugger);
    let result = output(client, &reach_of(key, &through), command, LISTING_LIMIT)
        .await
        .map(listed)
        .map_err(|why| format!("Cannot list {dir}: {why}."));
    (through, result)
}

/// Adds the debug container the browser reads through, and waits for it.
async fn add_debugger(
    client: &kube::Client,
    key: &TerminalKey,
    spec: &crate::model::debug::DebugSpec,
) -> Result<String, String> {
    let (namespace, pod) = (&*key.pod.namespace, &*key.pod.name);
    crate::engine::helper::add_and_wait(client, namespace, pod, spec, START_TIMEOUT, &|_| {})
        .await
        .map_err(|failure| failure.sentence.into_string())
}

enum Failed {
    /// The program is not in the image.
    NotFound,
    /// One sentence's middle.
    Said(String),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::NotFound => f.write_str("the container has no shell to do it with"),
            Failed::Said(why) => f.write_str(why),
        }
    }
}

/// Runs the command `for_reach` builds and keeps its stdout (at most
/// `limit` bytes).
async fn output(
    client: &kube::Client,
    reach: &Reach,
    for_reach: impl Fn(&Reach) -> Vec<String>,
    limit: usize,
) -> Result<Vec<u8>, Failed> {
    let (tx, mut rx) = mpsc::channel::<Bytes>(8);
    let collect = tokio::spawn(async move {
        let mut out = Vec::new();
        while let Some(chunk) = rx.recv().await {
            let room = limit.saturating_sub(out.len());
            out.extend_from_slice(&chunk[..room.min(chunk.len())]);
        }
        out
    });
    let spec = PipeSpec {
        namespace: reach.namespace.clone(),
        pod: reach.pod.clone(),
        container: reach.runs_in.clone(),
        command: for_reach(reach),
        deadline: crate::cluster::deadline::Deadline::none()
            .stalling_after(Duration::from_secs(30)),
    };
    let end = pipe::exec(client, &spec, None, tx)
        .await
        .map_err(|e| Failed::Said(crate::cluster::errors::describe(&e).sentence.into_string()))?;
    let out = collect.await.unwrap_or_default();
    if end.not_found() {
        return Err(Failed::NotFound);
    }
    if end.succeeded() {
        return Ok(out);
    }
    let said = crate::model::transfer::complaint(&end.stderr)
        .unwrap_or_else(|| end.end.reason.to_string());
    Err(Failed::Said(
        sanitize(said.trim_end_matches('.')).into_owned(),
    ))
}

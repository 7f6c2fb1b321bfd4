//! `GET pods/{name}/log`: container output with `container`, `follow`,
//! `tailLines`, `timestamps`, `limitBytes` and `sinceSeconds`.

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use hyper::{Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

use super::SimState;
use super::http::{Body, Query, full, respond, streaming};
use super::runtime::{ContainerProcess, LogRecord, Stream};
use super::status::ApiError;
use super::store::{Key, Kind};

pub fn serve(state: &Arc<SimState>, key: &Key, query: &Query) -> Result<Response<Body>, ApiError> {
    let (pod, container) = pod_and_container(state, key, query)?;
    let run = which_run(&pod, &key.name, &container, query.flag("previous")?)?;
    let options = LogOptions {
        timestamps: query.flag("timestamps")?,
        tail_lines: query.number("tailLines")?.map(|n| n.max(0) as usize),
        limit_bytes: query
            .number("limitBytes")?
            .filter(|n| *n > 0)
            .map(|n| n as usize),
        since: query
            .number("sinceSeconds")?
            .map(|s| jiff::Timestamp::now() - jiff::SignedDuration::from_secs(s.max(0))),
        stream: match query.get("stream") {
            None | Some("All") => None,
            Some("Stdout") => Some(Stream::Stdout),
            Some("Stderr") => Some(Stream::Stderr),
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "stream: Unsupported value: \"{other}\": supported values: \"All\", \"Stderr\", \"Stdout\""
                )));
            }
        },
    };
    let follows = query.flag("follow")?;
    if options.stream.is_some() && options.tail_lines.is_some() {
        return Err(ApiError::bad_request(
            "tailLines: Forbidden: `tailLines` and specific `stream` are mutually exclusive for now",
        ));
    }
    let process = match &run {
        Run::Current => state.kubelet.log_source(&pod, &container)?,
        // The last run's output, while the simulator still has it (or the
        // run a restart put in its place, which the kubelet serves as the
        // container's current one); else (a run from before the simulator
        // started) what the scenario says it wrote.
        Run::Finished { terminated, latest } => {
            match latest
                .then(|| state.kubelet.latest_process(&pod, &container))
                .flatten()
            {
                Some(process) => process,
                None => {
                    let records = super::backstory::run_log(&pod, &container, terminated);
                    let body = render(select_records(&records, &options), &options);
                    let body = full(truncate(body, options.limit_bytes));
                    return Ok(respond(StatusCode::OK, "text/plain", body));
                }
            }
        }
    };
    let (records, next) = process.log_since(0);
    let first = select_records(&records, &options);
    let initial = render(first, &options);
    if !follows {
        let body = truncate(initial, options.limit_bytes);
        return Ok(respond(StatusCode::OK, "text/plain", full(body)));
    }
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(follow(process, tx, initial, next, options));
    Ok(respond(StatusCode::OK, "text/plain", streaming(rx)))
}

/// Which run of a container a log request reads.
enum Run {
    /// The running process.
    Current,
    /// A run that ended: the container's latest (`state.terminated`) or the
    /// one before (`lastState.terminated`), with its terminated state.
    Finished { terminated: Value, latest: bool },
}

/// The kubelet's choice (`validateContainerLogStatus`): `previous` reads
/// `lastState`; otherwise the running process, else the latest run that
/// ended (a crash-looping container's last crash), else why there is none.
fn which_run(
    pod: &Value,
    pod_name: &str,
    container: &str,
    previous: bool,
) -> Result<Run, ApiError> {
    let status = [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ]
    .iter()
    .filter_map(|list| pod.pointer(&format!("/status/{list}"))?.as_array())
    .flatten()
    .find(|s| s["name"] == container);
    let state = status.map(|s| &s["state"]);
    let last = status
        .and_then(|s| s.pointer("/lastState/terminated"))
        .filter(|t| t["containerID"].as_str().is_some_and(|id| !id.is_empty()));
    let finished = |t: &Value, latest| Run::Finished {
        terminated: t.clone(),
        latest,
    };
    let terminated_error = || {
        ApiError::bad_request(format!(
            "container {container:?} in pod {pod_name:?} is terminated"
        ))
    };
    if previous {
        return last.map(|t| finished(t, false)).ok_or_else(|| {
            ApiError::bad_request(format!(
                "previous terminated container {container:?} in pod {pod_name:?} not found"
            ))
        });
    }
    let Some(state) = state else {
        return Err(ApiError::bad_request(format!(
            "container {container:?} in pod {pod_name:?} is waiting to start: ContainerCreating"
        )));
    };
    if state.get("running").is_some() {
        return Ok(Run::Current);
    }
    if let Some(terminated) = state.get("terminated") {
        let has_id = terminated["containerID"]
            .as_str()
            .is_some_and(|id| !id.is_empty());
        return match (has_id, last) {
            (true, _) => Ok(finished(terminated, true)),
            (false, Some(t)) => Ok(finished(t, false)),
            (false, None) => Err(terminated_error()),
        };
    }
    if let Some(t) = last {
        return Ok(finished(t, false));
    }
    let reason = match state.pointer("/waiting/reason").and_then(Value::as_str) {
        Some("ErrImagePull") => "image can't be pulled",
        Some("ImagePullBackOff") => "trying and failing to pull image",
        Some(reason) => reason,
        None => "ContainerCreating",
    };
    Err(ApiError::bad_request(format!(
        "container {container:?} in pod {pod_name:?} is waiting to start: {reason}"
    )))
}

struct LogOptions {
    /// `None`: both streams (`stream=All`, the default).
    stream: Option<Stream>,
    timestamps: bool,
    tail_lines: Option<usize>,
    limit_bytes: Option<usize>,
    since: Option<jiff::Timestamp>,
}

/// The pod (as JSON) and the container a log/attach/exec request is for.
pub fn pod_and_container(
    state: &SimState,
    key: &Key,
    query: &Query,
) -> Result<(Value, String), ApiError> {
    let pod = state
        .store
        .get(Kind::Pod, key)
        .ok_or_else(|| ApiError::not_found("pods", &key.name))?
        .value();
    let container = pick_container(&pod, query.get("container"))?;
    Ok((pod, container))
}

/// The container a log request is for: named, or the only one.
pub fn pick_container(pod: &Value, requested: Option<&str>) -> Result<String, ApiError> {
    let names = |field: &str| -> Vec<String> {
        pod.pointer(&format!("/spec/{field}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("name").and_then(Value::as_str).map(String::from))
            .collect()
    };
    let pod_name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let containers = names("containers");
    let init = names("initContainers");
    let ephemeral = names("ephemeralContainers");
    match requested.filter(|c| !c.is_empty()) {
        Some(c)
            if containers
                .iter()
                .chain(&init)
                .chain(&ephemeral)
                .any(|n| n == c) =>
        {
            Ok(c.to_string())
        }
        Some(c) => Err(ApiError::bad_request(format!(
            "container {c} is not valid for pod {pod_name}"
        ))),
        None if containers.len() == 1 => Ok(containers[0].clone()),
        None => {
            let mut message = format!(
                "a container name must be specified for pod {pod_name}, choose one of: [{}]",
                containers.join(" ")
            );
            if !init.is_empty() {
                message.push_str(&format!(
                    " or one of the init containers: [{}]",
                    init.join(" ")
                ));
            }
            if !ephemeral.is_empty() {
                message.push_str(&format!(
                    " or one of the ephemeral containers: [{}]",
                    ephemeral.join(" ")
                ));
            }
            Err(ApiError::bad_request(message))
        }
    }
}

fn select_records<'a>(records: &'a [LogRecord], options: &LogOptions) -> &'a [LogRecord] {
    let mut start = 0;
    if let Some(since) = options.since {
        start = records
            .iter()
            .position(|r| r.at >= since)
            .unwrap_or(records.len());
    }
    if let Some(tail) = options.tail_lines {
        let line_starts: Vec<usize> = records
            .iter()
            .enumerate()
            .skip(start)
            .filter(|(_, r)| r.starts_line)
            .map(|(i, _)| i)
            .collect();
        // A trailing partial line counts as a line, as in kubelet's tail.
        start = match line_starts.len().checked_sub(tail) {
            Some(i) if tail > 0 => line_starts[i],
            Some(_) => records.len(),
            None => start,
        };
    }
    &records[start..]
}

fn render(records: &[LogRecord], options: &LogOptions) -> Bytes {
    let mut out = BytesMut::new();
    let wanted = |r: &&LogRecord| options.stream.is_none_or(|s| s == r.stream);
    for r in records.iter().filter(wanted) {
        if options.timestamps && r.starts_line {
            out.put_slice(format!("{} ", r.at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")).as_bytes());
        }
        out.put_slice(&r.data);
    }
    out.freeze()
}

fn truncate(bytes: Bytes, limit: Option<usize>) -> Bytes {
    match limit {
        Some(n) if n < bytes.len() => bytes.slice(..n),
        _ => bytes,
    }
}

/// Bytes of log a follower renders and sends at a time.
const FOLLOW_CHUNK: usize = 256 * 1024;

async fn follow(
    process: Arc<ContainerProcess>,
    tx: mpsc::Sender<Bytes>,
    initial: Bytes,
    mut next: u64,
    options: LogOptions,
) {
    let mut budget = options.limit_bytes.unwrap_or(usize::MAX);
    let send = |chunk: Bytes, budget: &mut usize| {
        let chunk = truncate(chunk, Some(*budget));
        *budget -= chunk.len();
        chunk
    };
    if !initial.is_empty() && tx.send(send(initial, &mut budget)).await.is_err() {
        return;
    }
    let mut updates = process.log_updates();
    let mut exits = process.exit_updates();
    loop {
        if budget == 0 {
            return;
        }
        // In chunks, yielding between them: a follower far behind a flood
        // must not hold a worker (and every other stream on it) for the
        // whole backlog.
        let (records, after, more) = process.log_chunk(next, FOLLOW_CHUNK);
        next = after;
        if !records.is_empty()
            && tx
                .send(send(render(&records, &options), &mut budget))
                .await
                .is_err()
        {
            return;
        }
        if more {
            tokio::task::yield_now().await;
            continue;
        }
        if exits.borrow_and_update().is_some() {
            // Drain anything written between the last read and the exit.
            loop {
                let (records, after, more) = process.log_chunk(next, FOLLOW_CHUNK);
                next = after;
                if budget == 0
                    || (!records.is_empty()
                        && tx
                            .send(send(render(&records, &options), &mut budget))
                            .await
                            .is_err())
                    || !more
                {
                    return;
                }
            }
        }
        tokio::select! {
            changed = updates.changed() => if changed.is_err() { return },
            _ = exits.changed() => {}
            _ = tx.closed() => return,
        }
    }
}

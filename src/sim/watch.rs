//! Watch streams with the apiserver's semantics: start from current state or
//! from a resourceVersion, ERROR 410 once it is compacted, selector-aware
//! ADDED/DELETED for objects that start or stop matching, BOOKMARKs,
//! `sendInitialEvents`, and `timeoutSeconds`.

use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use hyper::{Response, StatusCode};
use serde_json::json;
use tokio::sync::{broadcast, mpsc};

use super::SimState;
use super::filter::Filter;
use super::http::{Body, Query, respond, streaming};
use super::status::ApiError;
use super::store::{Change, ChangeType, Entry, WatchStart};

/// How long a watch lasts when the client does not say (the apiserver
/// picks 30–60 minutes).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

pub fn serve(
    state: &Arc<SimState>,
    filter: Filter,
    query: &Query,
) -> Result<Response<Body>, ApiError> {
    let from = match query.get("resourceVersion").filter(|v| !v.is_empty()) {
        None => None,
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {v:?}")))?,
        ),
    };
    let send_initial_events = query.flag("sendInitialEvents")?;
    let bookmarks = query.flag("allowWatchBookmarks")?;
    if send_initial_events && !bookmarks {
        return Err(ApiError::invalid(
            "ListOptions",
            "",
            &[super::status::FieldError::forbidden(
                "allowWatchBookmarks",
                "allowWatchBookmarks required when sendInitialEvents is set",
            )],
        ));
    }
    let timeout = query
        .number("timeoutSeconds")?
        .filter(|s| *s > 0)
        .map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs(s as u64));
    // With sendInitialEvents the client wants current state first, whatever RV it names.
    let (start, live, store_rv) = state
        .store
        .watch(filter.kind, if send_initial_events { None } else { from });
    let (tx, rx) = mpsc::channel(64);
    let stream = WatchStream {
        filter,
        tx,
        last_rv: from.unwrap_or(0),
        bookmarks,
    };
    let drops = state.faults.watch_drops();
    let bookmark_every = state.options.bookmark_interval;
    tokio::spawn(stream.run(
        start,
        live,
        store_rv,
        send_initial_events,
        timeout,
        bookmark_every,
        drops,
    ));
    Ok(respond(StatusCode::OK, "application/json", streaming(rx)))
}

struct WatchStream {
    filter: Filter,
    tx: mpsc::Sender<Bytes>,
    /// Highest resourceVersion the client may resume from.
    last_rv: u64,
    bookmarks: bool,
}

impl WatchStream {
    #[allow(clippy::too_many_arguments)]
    async fn run(
        mut self,
        start: WatchStart,
        mut live: broadcast::Receiver<Arc<Change>>,
        store_rv: u64,
        send_initial_events: bool,
        timeout: Duration,
        bookmark_every: Duration,
        mut drops: tokio::sync::watch::Receiver<u64>,
    ) {
        let ok = match start {
            WatchStart::Expired { requested, oldest } => {
                let error =
                    ApiError::expired(format!("too old resource version: {requested} ({oldest})"));
                let _ = self
                    .send_raw(
                        "ERROR",
                        &serde_json::to_vec(&error.to_status()).unwrap_or_default(),
                    )
                    .await;
                return;
            }
            WatchStart::State(entries) => {
                let mut ok = true;
                let matching: Vec<_> = entries
                    .into_iter()
                    .filter(|e| self.filter.matches(e))
                    .collect();
                for entry in matching {
                    ok = ok && self.send("ADDED", &entry).await;
                }
                self.last_rv = self.last_rv.max(store_rv);
                ok
            }
            WatchStart::History(changes) => {
                let mut ok = true;
                for change in changes {
                    ok = ok && self.forward(&change).await;
                }
                ok
            }
        };
        if !ok {
            return;
        }
        if send_initial_events && !self.bookmark(true).await {
            return;
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut ticker = tokio::time::interval(bookmark_every);
        ticker.reset();
        drops.borrow_and_update();
        loop {
            tokio::select! {
                change = live.recv() => match change {
                    Ok(change) if change.kind == self.filter.kind => {
                        if !self.forward(&change).await {
                            return;
                        }
                    }
                    Ok(_) => {}
                    // A watcher that fell this far behind is closed, as the
                    // apiserver does; the client re-watches from its last RV.
                    Err(_) => return,
                },
                _ = ticker.tick(), if self.bookmarks => {
                    if !self.bookmark(false).await {
                        return;
                    }
                }
                _ = &mut deadline => return,
                _ = drops.changed() => return,
                _ = self.tx.closed() => return,
            }
        }
    }

    /// Sends one change as the client should see it through its selector.
    async fn forward(&mut self, change: &Change) -> bool {
        if change.resource_version() <= self.last_rv {
            return true;
        }
        let now = self.filter.matches(&change.entry);
        let before = change
            .previous
            .as_ref()
            .is_some_and(|p| self.filter.matches(p));
        let event_type = match (change.change_type, before, now) {
            (ChangeType::Added, _, true) => Some("ADDED"),
            (ChangeType::Modified, true, true) => Some("MODIFIED"),
            (ChangeType::Modified, false, true) => Some("ADDED"),
            (ChangeType::Modified, true, false) => Some("DELETED"),
            (ChangeType::Deleted, true, _) => Some("DELETED"),
            _ => None,
        };
        let rv = change.resource_version();
        let ok = match event_type {
            Some(t) => self.send(t, &change.entry).await,
            None => true,
        };
        self.last_rv = rv;
        ok
    }

    async fn send(&mut self, event_type: &str, entry: &Entry) -> bool {
        self.last_rv = self.last_rv.max(entry.resource_version);
        self.send_raw(event_type, &entry.json).await
    }

    async fn bookmark(&mut self, initial_events_end: bool) -> bool {
        let mut metadata = json!({"resourceVersion": self.last_rv.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object =
            json!({"kind": self.filter.kind.name(), "apiVersion": "v1", "metadata": metadata});
        self.send_raw("BOOKMARK", &serde_json::to_vec(&object).unwrap_or_default())
            .await
    }

    async fn send_raw(&self, event_type: &str, object: &[u8]) -> bool {
        let mut line = BytesMut::with_capacity(object.len() + 32);
        line.put_slice(br#"{"type":""#);
        line.put_slice(event_type.as_bytes());
        line.put_slice(br#"","object":"#);
        line.put_slice(object);
        line.put_slice(b"}\n");
        self.tx.send(line.freeze()).await.is_ok()
    }
}

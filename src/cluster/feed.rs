//! Live feeds: a kube-runtime watcher whose objects are projected into
//! compact rows as they arrive, reported as typed updates on a channel.
//!
//! The full objects never leave this module: a 40 KB `Pod` becomes a row of
//! a few hundred bytes before anything else sees it.

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use tokio::sync::mpsc;

use super::errors::{Denied, describe_watch_error};

/// What a feed reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Feed<R> {
    /// Listing has started (first time, or again after a 410 or reconnect).
    Listing {
        scope: Option<String>,
    },
    /// The complete current set for `scope` (a namespace, or everything when
    /// `None`): replace what you had for it.
    Listed {
        scope: Option<String>,
        rows: Vec<R>,
    },
    Applied(R),
    Deleted(R),
    /// The connection failed; the watcher retries with back-off. One sentence.
    Reconnecting(String),
    /// The user may not watch this at all. One sentence naming the permission.
    Forbidden(Denied),
}

/// Updates in flight before the watcher waits for the receiver.
const CHANNEL_DEPTH: usize = 1024;

pub fn channel<R>() -> (mpsc::Sender<Feed<R>>, mpsc::Receiver<Feed<R>>) {
    mpsc::channel(CHANNEL_DEPTH)
}

/// Runs a watcher on `api` until the receiver is dropped, projecting every
/// object with `project`. Returns early with `Feed::Forbidden` when the first
/// list is refused with 403, so the caller can fall back to a narrower scope.
pub async fn run<K, R>(
    api: Api<K>,
    config: watcher::Config,
    scope: Option<String>,
    project: impl Fn(&K) -> R + Send,
    tx: mpsc::Sender<Feed<R>>,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    R: Send + 'static,
{
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    let mut buffer: Vec<R> = Vec::new();
    while let Some(item) = stream.next().await {
        let update = match item {
            Ok(Event::Init) => {
                buffer.clear();
                Some(Feed::Listing {
                    scope: scope.clone(),
                })
            }
            Ok(Event::InitApply(object)) => {
                buffer.push(project(&object));
                None
            }
            Ok(Event::InitDone) => Some(Feed::Listed {
                scope: scope.clone(),
                rows: std::mem::take(&mut buffer),
            }),
            Ok(Event::Apply(object)) => Some(Feed::Applied(project(&object))),
            Ok(Event::Delete(object)) => Some(Feed::Deleted(project(&object))),
            Err(error) => {
                let (sentence, denied) = describe_watch_error(&error);
                if let Some(denied) = denied {
                    let _ = tx.send(Feed::Forbidden(denied)).await;
                    return;
                }
                Some(Feed::Reconnecting(sentence))
            }
        };
        if let Some(update) = update
            && tx.send(update).await.is_err()
        {
            return;
        }
    }
}

/// The watcher configuration podbay uses: bookmarks on, pages of 500.
pub fn config() -> watcher::Config {
    watcher::Config::default().page_size(500).timeout(290)
}

//! Live feeds: list, then watch from the list's resourceVersion, with the
//! objects projected into compact rows as they arrive and reported as typed
//! updates on a channel.
//!
//! The full objects never leave this module: a 40 KB `Pod` becomes a row of
//! a few hundred bytes before anything else sees it.
//!
//! This is client-go's reflector loop rather than kube-runtime's watcher,
//! because the watcher resumes a cut watch silently and podbay must show
//! the user that its view is catching up. The loop: list (paged) → watch from
//! the list's version → on a clean end at the requested timeout, watch again;
//! on an early end, report [`Feed::Cut`] and watch again at once; on 410 Gone,
//! list again; on errors, report one sentence and back off (0.8 s doubling to
//! 30 s, with jitter, or longer when a 429 asks). Every resumed watch reports
//! [`Feed::Resumed`].
//!
//! A server is not trusted to behave: a watch that ends within a second
//! without an event is a failure, not a cut (else an empty answer is asked
//! again hundreds of times a second), and the back-off only resets once a
//! watch has delivered; a watch silent past its timeout is dropped; a list
//! page or a watch that does not answer within [`ANSWER_TIMEOUT`] fails; a
//! page over the size cap is asked again in smaller pages.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use kube::runtime::utils::Backoff;
use kube::runtime::watcher::{self, DefaultBackoff};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::reflector::{Act, Cycle, Ending, Happened, Phase};
use std::fmt::Debug;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

use super::errors::describe;
use super::lenient::{Lenient, RawPage};
use crate::model::feed::Feed;
use crate::model::problem::Problem;

/// Updates in flight before the watcher waits for the receiver.
const CHANNEL_DEPTH: usize = 1024;

/// A watch that ends this close to its requested timeout ended normally.
const TIMEOUT_SLACK: Duration = Duration::from_secs(5);

/// A watch silent this long after its requested timeout is dead.
const SILENCE_SLACK: Duration = Duration::from_secs(30);

/// A watch that ends sooner than this without an event failed.
const TOO_SHORT: Duration = Duration::from_secs(1);

/// Two watches in a row that end this soon after delivering are a server
/// ending every watch (one event, then the end, hundreds of times a
/// second): back off. A load balancer cutting watches every second or two
/// is resumed at once, even when a cut lands just after a resume.
const ENDED_AT_ONCE: Duration = Duration::from_millis(500);

/// How long a list page, or the head of a watch, may take to arrive.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The smallest page asked for when pages come back over the size cap.
pub(crate) const SMALLEST_PAGE: u32 = 20;

/// The page size podbay lists in.
pub(crate) const PAGE_SIZE: u32 = 500;

/// A paged feed's first page: small, so the first rows are on screen after
/// one short round trip.
const FIRST_PAGE: u32 = 100;

/// A paged feed sends what it has at most this often while a list lasts
/// (each batch costs its consumer a merge).
const PAGE_EVERY: Duration = Duration::from_millis(100);

/// The most rows one list may hold: ten times the 100 000 pods of a very
/// large cluster, so only a server whose pages never end reaches it.
pub const MAX_LIST_ROWS: usize = 1_000_000;

/// The fewest pages a list may take: what [`MAX_LIST_ROWS`] needs in
/// podbay's pages of 500. Smaller pages (after a page over the size cap)
/// may take as many as the rows cap needs at their size. A server that
/// sends empty pages with a new token forever stops here.
pub const MIN_LIST_PAGES: usize = 2_000;

/// Requests a second that failed lists may cost, sustained: one that asked
/// for N pages waits N / RETRY_RATE seconds before the next try.
const RETRY_RATE: f64 = 10.0;

fn misbehaving(sentence: String) -> kube::Error {
    kube::Error::Service(Box::new(super::limits::Misbehaved(sentence)))
}

pub fn channel<R>() -> (mpsc::Sender<Feed<R>>, mpsc::Receiver<Feed<R>>) {
    mpsc::channel(CHANNEL_DEPTH)
}

/// How a watch ended (as [`Ending`] says), with its error.
enum Ended {
    Timeout,
    Cut,
    Short,
    Empty,
    Gone,
    Failed(kube::Error),
}

/// The receiver is gone, or the feed was refused: stop.
struct Stop;

/// Runs the list/watch loop on `api` until the receiver is dropped,
/// projecting every object with `project`. Returns early with
/// `Feed::Forbidden` when a request is refused with 403, so the caller can
/// fall back to a narrower scope.
pub async fn run<K, R>(
    api: Api<K>,
    config: watcher::Config,
    scope: Option<String>,
    project: impl Fn(&K) -> R + Send + Sync + 'static,
    tx: mpsc::Sender<Feed<R>>,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    R: Send + 'static,
{
    run_with(api, config, scope, project, tx, Pages::Whole).await;
}

/// Whether a feed reports its list whole, or its pages as they come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    Whole,
    /// [`Feed::Page`] as each page comes, the first one small: for a list
    /// big enough to be read before it is whole (the pod list).
    AsTheyCome,
}

/// [`run`], with its list reported as `pages` says.
pub async fn run_with<K, R>(
    api: Api<K>,
    config: watcher::Config,
    scope: Option<String>,
    project: impl Fn(&K) -> R + Send + Sync + 'static,
    tx: mpsc::Sender<Feed<R>>,
    pages: Pages,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    R: Send + 'static,
{
    let _ = Reflector {
        api,
        config,
        scope,
        project: Box::new(project),
        tx,
        backoff: DefaultBackoff::default(),
        paged: pages == Pages::AsTheyCome,
        pages_asked: 0,
    }
    .run()
    .await;
}

/// One feed's loop. The projection is boxed: the loop is compiled once per
/// kind and row, not again for every closure that makes those rows (each
/// copy is ~26 KB of the binary).
struct Reflector<K, R> {
    api: Api<K>,
    config: watcher::Config,
    scope: Option<String>,
    project: Box<dyn Fn(&K) -> R + Send + Sync>,
    tx: mpsc::Sender<Feed<R>>,
    backoff: DefaultBackoff,
    /// Report the list's rows as its pages come.
    paged: bool,
    /// Pages the last list asked for.
    pages_asked: usize,
}

impl<K, R> Reflector<K, R>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    R: Send + 'static,
{
    async fn run(mut self) -> Result<(), Stop> {
        let mut cycle = Cycle::default();
        loop {
            let from = match &cycle.phase {
                Phase::List => {
                    let happened = match self.list().await? {
                        Ok(listed) => Happened::Listed(listed),
                        Err(error) => {
                            // A failed list that asked for many pages (an
                            // endless one stops at its cap) waits as long as
                            // they take at RETRY_RATE: sustained, a server
                            // that misbehaves so gets no more than that.
                            let spent =
                                Duration::from_secs_f64(self.pages_asked as f64 / RETRY_RATE);
                            self.failed_waiting(&error, spent).await?;
                            Happened::ListFailed
                        }
                    };
                    cycle.step(happened);
                    continue;
                }
                Phase::Watch { from, .. } => from.clone(),
            };
            let params = self.watch_params();
            let opened = answered_in_time(super::lenient::watch(&self.api, &params, &from)).await;
            let stream = match opened {
                Ok(stream) => stream,
                Err(error) => {
                    let gone = is_gone(&error);
                    let act = cycle.step(Happened::Refused { gone });
                    self.act(act, Some(&error)).await?;
                    continue;
                }
            };
            let act = cycle.step(Happened::Opened);
            self.act(act, None).await?;
            let mut last = from;
            let (ending, error) = match self.follow(stream, &mut last).await? {
                Ended::Timeout => (Ending::Timeout, None),
                Ended::Cut => (Ending::Cut, None),
                Ended::Short => (Ending::Short, None),
                Ended::Empty => (Ending::Empty, None),
                Ended::Gone => (Ending::Gone, None),
                Ended::Failed(error) => (Ending::Failed, Some(error)),
            };
            let act = cycle.step(Happened::Ended { ending, last });
            self.act(act, error.as_ref()).await?;
        }
    }

    /// Does what the cycle asks before its next phase: tells the consumer,
    /// or says why and backs off (`error`: the one at hand).
    async fn act(&mut self, act: Option<Act>, error: Option<&kube::Error>) -> Result<(), Stop> {
        let misbehaving_error;
        let error = match act {
            None => return Ok(()),
            Some(Act::Resumed) => return self.send(Feed::Resumed).await,
            Some(Act::Cut) => return self.send(Feed::Cut).await,
            // The cycle asks for it only with an error at hand.
            Some(Act::Failed) => match error {
                Some(error) => error,
                None => return Ok(()),
            },
            Some(Act::EmptyWatch) => {
                misbehaving_error = kube::Error::ReadEvents(std::io::Error::other(
                    "the API server ended the watch at once, without an event",
                ));
                &misbehaving_error
            }
            Some(Act::GoneAfterList) => {
                misbehaving_error = misbehaving(
                    "The API server answers 410 Gone even to a watch from the list it has just sent."
                        .to_string(),
                );
                &misbehaving_error
            }
            Some(Act::EndsEveryWatch) => {
                misbehaving_error = misbehaving(
                    "The API server keeps ending watches as soon as they deliver.".to_string(),
                );
                &misbehaving_error
            }
        };
        self.failed(error).await
    }

    /// Lists every page; reports `Listing` then `Listed`, and returns the
    /// list's resourceVersion. A continue token that expires mid-list
    /// (410) starts the list over once; a list longer than
    /// [`MAX_LIST_ROWS`] rows (or the pages those take), or whose server
    /// repeats a continue token, fails.
    ///
    /// The next page is asked for as soon as a page's continue token is
    /// read, and the server serves it while this page is decoded: the
    /// server's work and podbay's overlap, as the two cores allow.
    async fn list(&mut self) -> Result<Result<String, kube::Error>, Stop> {
        self.send(Feed::Listing {
            scope: self.scope.clone(),
        })
        .await?;
        let mut rows = Vec::new();
        let mut unreadable = Vec::new();
        let mut params = ListParams {
            label_selector: self.config.label_selector.clone(),
            field_selector: self.config.field_selector.clone(),
            limit: self.config.page_size,
            ..ListParams::default()
        };
        // A paged feed asks for a small first page, then the usual size.
        let page_size = params.limit;
        let mut first_page = self.paged;
        if first_page {
            params.limit = Some(page_size.map_or(FIRST_PAGE, |size| size.min(FIRST_PAGE)));
        }
        let mut tokens = std::collections::HashSet::new();
        let mut restarted = false;
        // Rows already sent as pages, and when the last batch went.
        let mut sent = 0usize;
        let mut last_sent: Option<Instant> = None;
        // The request for `params`, when it was sent ahead, and the buffer
        // the page before was read into.
        let mut ahead: Option<Ahead> = None;
        let mut spare = Vec::new();
        self.pages_asked = 0;
        loop {
            self.pages_asked += 1;
            let answer = match ahead.take() {
                Some(ahead) => ahead.answer().await,
                None => {
                    let buffer = std::mem::take(&mut spare);
                    answered_in_time(super::lenient::fetch_page(&self.api, &params, buffer)).await
                }
            };
            let raw = match answer {
                Ok(raw) => raw,
                Err(error) if is_gone(&error) && params.continue_token.is_some() => {
                    if std::mem::replace(&mut restarted, true) {
                        return Ok(Err(misbehaving(format!(
                            "The API server expired the list's continue token twice (410 Gone after {} rows).",
                            sent + rows.len()
                        ))));
                    }
                    rows.clear();
                    unreadable.clear();
                    tokens.clear();
                    params.continue_token = None;
                    if std::mem::take(&mut sent) > 0 {
                        // The pages sent are void: the list starts over.
                        self.send(Feed::Listing {
                            scope: self.scope.clone(),
                        })
                        .await?;
                    }
                    continue;
                }
                // Fat objects (big annotations, many containers): smaller
                // pages, from the start, as a new list.
                Err(error) if super::limits::too_large(&error).is_some() => {
                    match params.limit.filter(|limit| *limit > SMALLEST_PAGE) {
                        Some(limit) => {
                            params.limit = Some((limit / 5).max(SMALLEST_PAGE));
                            first_page = false;
                            params.continue_token = None;
                            rows.clear();
                            unreadable.clear();
                            tokens.clear();
                            if std::mem::take(&mut sent) > 0 {
                                self.send(Feed::Listing {
                                    scope: self.scope.clone(),
                                })
                                .await?;
                            }
                            continue;
                        }
                        None => return Ok(Err(error)),
                    }
                }
                Err(error) => return Ok(Err(error)),
            };
            // The page is decoded aside; its metadata, read first, names
            // the next page, which is asked for while the items decode.
            let (told, heard) = tokio::sync::oneshot::channel();
            let decoding = decode_aside::<K>(raw, told);
            // Nothing told: the page did not decode.
            let Ok(metadata) = heard.await else {
                return Ok(Err(decoding.await.err().unwrap_or_else(undecodable)));
            };
            let listed = sent + rows.len();
            let next = match plan_next(
                &metadata,
                &params,
                &mut tokens,
                &mut first_page,
                page_size,
                listed,
            ) {
                Ok(next) => next,
                Err(error) => return Ok(Err(error)),
            };
            ahead = next
                .clone()
                .map(|next| Ahead::send(&self.api, next, std::mem::take(&mut spare)));
            let page = match decoding.await {
                Ok((page, buffer)) => {
                    spare = buffer;
                    page
                }
                Err(error) => return Ok(Err(error)),
            };
            rows.extend(page.items.iter().map(&self.project));
            unreadable.extend(page.unreadable);
            let listed = sent + rows.len();
            if next.is_some() && listed > MAX_LIST_ROWS {
                return Ok(Err(endless(tokens.len(), listed)));
            }
            if self.paged && next.is_some() && last_sent.is_none_or(|at| at.elapsed() >= PAGE_EVERY)
            {
                sent += rows.len();
                last_sent = Some(Instant::now());
                let expected = metadata
                    .remaining_item_count
                    .and_then(|left| usize::try_from(left).ok())
                    .map(|left| sent + left);
                self.send(Feed::Page {
                    scope: self.scope.clone(),
                    rows: std::mem::take(&mut rows),
                    loaded: sent,
                    expected,
                })
                .await?;
            }
            match next {
                Some(next) => params = next,
                None => {
                    let Some(version) = metadata.resource_version else {
                        return Ok(Err(kube::Error::Service(
                            "the API server sent a list without a resourceVersion, so it cannot be watched".into(),
                        )));
                    };
                    self.send(Feed::Listed {
                        scope: self.scope.clone(),
                        rows,
                    })
                    .await?;
                    if !unreadable.is_empty() {
                        self.send(Feed::Unreadable(unreadable)).await?;
                    }
                    return Ok(Ok(version));
                }
            }
        }
    }

    /// Forwards one watch's events, keeping `last` at the newest version
    /// seen (bookmarks included), until the watch ends.
    async fn follow(
        &mut self,
        stream: impl futures::Stream<Item = kube::Result<WatchEvent<Lenient<K>>>>,
        last: &mut String,
    ) -> Result<Ended, Stop> {
        let started = Instant::now();
        let requested = Duration::from_secs(self.config.timeout.unwrap_or(290).into());
        let dead_after = tokio::time::Instant::now() + requested + SILENCE_SLACK;
        let mut delivered = false;
        let mut proven = false;
        let mut stream = std::pin::pin!(stream.into_stream());
        loop {
            let Ok(next) = tokio::time::timeout_at(dead_after, stream.next()).await else {
                return Ok(Ended::Failed(kube::Error::ReadEvents(
                    std::io::Error::other(format!(
                        "the watch sent nothing for {} s, past its own timeout",
                        (requested + SILENCE_SLACK).as_secs()
                    )),
                )));
            };
            let Some(event) = next else { break };
            // Only a watch that delivers, and lasts, proves the server
            // well again (one that ends after one event does not; one a
            // load balancer cuts every second does).
            if event.is_ok() {
                delivered = true;
                if started.elapsed() >= ENDED_AT_ONCE && !std::mem::replace(&mut proven, true) {
                    self.backoff.reset();
                }
            }
            let update = match event {
                Ok(
                    WatchEvent::Added(Lenient::Read(object))
                    | WatchEvent::Modified(Lenient::Read(object)),
                ) => {
                    remember(last, &object);
                    Feed::Applied((self.project)(&object))
                }
                Ok(WatchEvent::Deleted(Lenient::Read(object))) => {
                    remember(last, &object);
                    Feed::Deleted((self.project)(&object))
                }
                // Its version cannot be read either: a relist, if it comes
                // to one, reads it again.
                Ok(
                    WatchEvent::Added(Lenient::Unreadable(bad))
                    | WatchEvent::Modified(Lenient::Unreadable(bad))
                    | WatchEvent::Deleted(Lenient::Unreadable(bad)),
                ) => Feed::Unreadable(vec![bad]),
                Ok(WatchEvent::Bookmark(bookmark)) => {
                    *last = bookmark.metadata.resource_version;
                    continue;
                }
                Ok(WatchEvent::Error(status)) if status.code == 410 => return Ok(Ended::Gone),
                // kube reads any object as a Status: one with no code is not.
                Ok(WatchEvent::Error(status)) if status.code == 0 => {
                    return Ok(Ended::Failed(misbehaving(
                        "The API server sent a watch error that is not a Status.".to_string(),
                    )));
                }
                Ok(WatchEvent::Error(status)) => {
                    return Ok(Ended::Failed(kube::Error::Api(status)));
                }
                Err(error) => return Ok(Ended::Failed(error)),
            };
            self.send(update).await?;
        }
        let lasted = started.elapsed();
        if lasted >= ENDED_AT_ONCE && delivered && !proven {
            self.backoff.reset();
        }
        Ok(if lasted + TIMEOUT_SLACK >= requested {
            Ended::Timeout
        } else if !delivered && lasted < TOO_SHORT {
            Ended::Empty
        } else if delivered && lasted < ENDED_AT_ONCE {
            Ended::Short
        } else {
            Ended::Cut
        })
    }

    /// Reports a failed request (or returns on 403) and waits out the
    /// back-off.
    async fn failed(&mut self, error: &kube::Error) -> Result<(), Stop> {
        self.failed_waiting(error, Duration::ZERO).await
    }

    /// [`Self::failed`], waiting at least `at_least`.
    async fn failed_waiting(
        &mut self,
        error: &kube::Error,
        at_least: Duration,
    ) -> Result<(), Stop> {
        let Problem {
            sentence, denied, ..
        } = describe(error);
        if let Some(denied) = denied {
            let _ = self.send(Feed::Forbidden(denied)).await;
            return Err(Stop);
        }
        self.send(Feed::Reconnecting(
            format!("{sentence} podbay keeps retrying.").into(),
        ))
        .await?;
        let backoff = self
            .backoff
            .next()
            .unwrap_or(Duration::from_secs(30))
            .max(at_least);
        let pause = super::errors::retry_after(error).map_or(backoff, |asked| {
            asked.min(super::errors::MAX_RETRY_AFTER).max(backoff)
        });
        tokio::time::sleep(pause).await;
        Ok(())
    }

    fn watch_params(&self) -> WatchParams {
        WatchParams {
            label_selector: self.config.label_selector.clone(),
            field_selector: self.config.field_selector.clone(),
            timeout: self.config.timeout,
            bookmarks: self.config.bookmarks,
            send_initial_events: false,
        }
    }

    async fn send(&self, update: Feed<R>) -> Result<(), Stop> {
        self.tx.send(update).await.map_err(|_| Stop)
    }
}

/// `request`, or an error if its answer does not start within
/// [`ANSWER_TIMEOUT`].
async fn answered_in_time<T>(
    request: impl std::future::Future<Output = kube::Result<T>>,
) -> kube::Result<T> {
    tokio::time::timeout(ANSWER_TIMEOUT, request)
        .await
        .unwrap_or_else(|_| {
            // It was reached: "Cannot reach" would send the user to their VPN.
            Err(misbehaving(format!(
                "The API server took the request but sent no answer within {} s.",
                ANSWER_TIMEOUT.as_secs()
            )))
        })
}

/// A list page asked for ahead, on a task of its own: the server serves it
/// while the page before is decoded. Dropped, the request is cancelled.
struct Ahead(tokio::task::JoinHandle<kube::Result<RawPage>>);

impl Ahead {
    fn send<K>(api: &Api<K>, params: ListParams, buffer: Vec<u8>) -> Self
    where
        K: Resource + Clone + Send + Sync + 'static,
    {
        let api = api.clone();
        Ahead(tokio::spawn(async move {
            answered_in_time(super::lenient::fetch_page(&api, &params, buffer)).await
        }))
    }

    async fn answer(mut self) -> kube::Result<RawPage> {
        (&mut self.0).await.unwrap_or_else(|_| {
            Err(misbehaving(
                "podbay's request for a page of the list ended without an answer.".to_string(),
            ))
        })
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn undecodable() -> kube::Error {
    misbehaving("podbay could not decode a page of the list.".to_string())
}

/// A decoded page, and its buffer.
type Decoded<K> = (super::lenient::Page<K>, Vec<u8>);

/// Decodes a page on a blocking thread, off the runtime's workers,
/// starting now: its metadata goes to `told` as soon as it is read; the
/// page's buffer comes back with it, for the next page.
fn decode_aside<K>(
    raw: RawPage,
    told: tokio::sync::oneshot::Sender<ListMeta>,
) -> impl std::future::Future<Output = kube::Result<Decoded<K>>>
where
    K: DeserializeOwned + Send + 'static,
{
    let decoding = tokio::task::spawn_blocking(move || {
        let page = raw.decode_telling(|metadata| {
            let _ = told.send(metadata.clone());
        });
        page.map(|page| (page, raw.into_buffer()))
    });
    async move { decoding.await.unwrap_or_else(|_| Err(undecodable())) }
}

/// The next page a list's `metadata` asks for, if any, after a page asked
/// for with `params`, `listed` rows in: checking that the list ends (its
/// continue tokens do not repeat, its pages are not endless).
pub(crate) fn plan_next(
    metadata: &ListMeta,
    params: &ListParams,
    tokens: &mut std::collections::HashSet<String>,
    first_page: &mut bool,
    page_size: Option<u32>,
    listed: usize,
) -> Result<Option<ListParams>, kube::Error> {
    let Some(token) = metadata
        .continue_
        .as_ref()
        .filter(|token| !token.is_empty())
    else {
        return Ok(None);
    };
    if tokens.len() + 1 >= max_pages(params) {
        return Err(endless(tokens.len() + 1, listed));
    }
    if !tokens.insert(token.clone()) {
        return Err(misbehaving(format!(
            "The API server sent the same continue token twice (after {} pages), so its list would never end.",
            tokens.len()
        )));
    }
    Ok(Some(ListParams {
        continue_token: Some(token.clone()),
        // After a small first page, the usual size.
        limit: if std::mem::take(first_page) {
            page_size
        } else {
            params.limit
        },
        ..params.clone()
    }))
}

/// A list that does not end: the sentence for it.
pub(crate) fn endless(pages: usize, rows: usize) -> kube::Error {
    misbehaving(format!(
        "The API server's list did not end after {pages} pages and {rows} rows: podbay stops a list at {MAX_LIST_ROWS} rows."
    ))
}

/// How many pages a list of [`MAX_LIST_ROWS`] takes at `params`' page size.
fn max_pages(params: &ListParams) -> usize {
    let page = params
        .limit
        .map_or(PAGE_SIZE as usize, |limit| limit.max(1) as usize);
    (MAX_LIST_ROWS / page).max(MIN_LIST_PAGES)
}

fn remember<K: Resource>(last: &mut String, object: &K) {
    if let Some(version) = object.resource_version() {
        *last = version;
    }
}

fn is_gone(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 410)
}

/// The watcher configuration podbay uses: bookmarks on, pages of 500.
pub fn config() -> watcher::Config {
    watcher::Config::default().page_size(PAGE_SIZE).timeout(290)
}

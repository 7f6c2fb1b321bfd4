//! What podbay accepts from an API server, whatever it sends: a cap on one
//! watch event (one line) or one whole answer, redirects turned into an
//! error that names the location, and retries of throttled requests that
//! honour `Retry-After` without waiting forever.
//!
//! kube-rs reads a list into memory whole and a watch line by line with no
//! bound, so a server that sends a 200 MB line, or ignores `limit`, would
//! take all the memory it likes. The cap sits under kube, on the response
//! body, where it costs one counter per chunk.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{Either, Full};
use hyper::body::{Body, Frame, SizeHint};
use tower::BoxError;

/// The most one watch event, one log line or one whole answer may be.
/// A page of 500 pods is typically 2–10 MB.
pub const MAX_MESSAGE: usize = 16 << 20;

/// An answer over [`MAX_MESSAGE`]: podbay stopped reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the API server sent {what} larger than {} MiB, podbay's limit; it stopped reading", MAX_MESSAGE >> 20)]
pub struct TooLarge {
    pub what: &'static str,
}

/// The `TooLarge` under `error`, if that is what it is.
pub fn too_large(error: &(dyn std::error::Error + 'static)) -> Option<TooLarge> {
    super::cause::find_cause::<TooLarge>(error).copied()
}

/// What a server did that no well-behaved one does: one sentence, ending
/// with a full stop.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Misbehaved(pub String);

/// The `Misbehaved` under `error`, if that is what it is.
pub fn misbehaved<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Misbehaved> {
    super::cause::find_cause::<Misbehaved>(error)
}

/// How an answer is measured: a stream line by line (a watch, a followed
/// log), anything else whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Lines,
    Whole,
}

impl Measure {
    fn of<B>(request: &Request<B>) -> Self {
        let query = request.uri().query().unwrap_or_default();
        let streams = query
            .split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1" || pair == "follow=true");
        if streams || request.uri().path().ends_with("/log") {
            Measure::Lines
        } else {
            Measure::Whole
        }
    }

    fn what(self) -> &'static str {
        match self {
            Measure::Lines => "one line (a watch event or a log line)",
            Measure::Whole => "an answer",
        }
    }
}

/// A response body that fails once it passes the cap.
pub struct Capped<B> {
    inner: B,
    measure: Measure,
    /// Bytes since the last newline (`Lines`) or in all (`Whole`).
    counted: usize,
    failed: bool,
}

impl<B> Body for Capped<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.failed {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        if let Some(data) = frame.data_ref() {
            let longest = match self.measure {
                Measure::Whole => {
                    self.counted = self.counted.saturating_add(data.len());
                    self.counted
                }
                Measure::Lines => {
                    let newline = |b: &u8| *b == b'\n';
                    match (
                        data.iter().position(newline),
                        data.iter().rposition(newline),
                    ) {
                        (Some(first), Some(last)) => {
                            let head = self.counted.saturating_add(first);
                            self.counted = data.len() - last - 1;
                            // Lines in between are shorter than the chunk:
                            // only a chunk over the cap needs them measured.
                            let middle = if data.len() > MAX_MESSAGE {
                                data[first + 1..last]
                                    .split(|&b| b == b'\n')
                                    .map(<[u8]>::len)
                                    .max()
                                    .unwrap_or(0)
                            } else {
                                0
                            };
                            head.max(middle).max(self.counted)
                        }
                        _ => {
                            self.counted = self.counted.saturating_add(data.len());
                            self.counted
                        }
                    }
                }
            };
            if longest > MAX_MESSAGE {
                self.failed = true;
                let what = self.measure.what();
                return Poll::Ready(Some(Err(Box::new(TooLarge { what }))));
            }
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The response podbay's client passes up to kube: the body capped, and a
/// redirect (which kube would try to parse as the object) made an error
/// whose `Status` names the location.
fn guard<B>(measure: Measure, response: Response<B>) -> Response<Guarded<B>>
where
    B: Body<Data = Bytes> + Unpin,
{
    if response.status().is_redirection() && response.status() != StatusCode::NOT_MODIFIED {
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .unwrap_or("nowhere")
            .to_string();
        let code = response.status().as_u16();
        let status = kube::core::Status::failure(
            &format!("the API server redirected the request ({code}) to {location}"),
            "Redirect",
        )
        .with_code(code);
        let text = serde_json::to_vec(&status).unwrap_or_default();
        let (mut parts, _) = response.into_parts();
        // A client error, so kube reads the Status; its `code` stays 3xx.
        parts.status = StatusCode::MISDIRECTED_REQUEST;
        parts.headers.remove(http::header::CONTENT_LENGTH);
        return Response::from_parts(parts, Either::Right(Full::new(Bytes::from(text))));
    }
    if let Some(encoding) = unasked_encoding(&response) {
        let status = kube::core::Status::failure(
            &format!(
                "The API server sent a {encoding}-encoded answer podbay did not ask for (a proxy in between may compress it), so it cannot be read."
            ),
            UNASKED_ENCODING,
        )
        .with_code(StatusCode::BAD_GATEWAY.as_u16());
        let text = serde_json::to_vec(&status).unwrap_or_default();
        let (mut parts, _) = response.into_parts();
        parts.status = StatusCode::BAD_GATEWAY;
        parts.headers.remove(http::header::CONTENT_LENGTH);
        parts.headers.remove(http::header::CONTENT_ENCODING);
        return Response::from_parts(parts, Either::Right(Full::new(Bytes::from(text))));
    }
    if let Some(text) = throttled(&response) {
        let (mut parts, _) = response.into_parts();
        parts.headers.remove(http::header::CONTENT_LENGTH);
        parts.headers.remove(http::header::CONTENT_ENCODING);
        return Response::from_parts(parts, Either::Right(Full::new(Bytes::from(text))));
    }
    response.map(|inner| {
        Either::Left(Capped {
            inner,
            measure,
            counted: 0,
            failed: false,
        })
    })
}

/// The reason of the Status that replaces an answer in an encoding podbay
/// did not ask for.
pub const UNASKED_ENCODING: &str = "UnaskedEncoding";

/// The encoding of an answer that is not plain: podbay never asks for one
/// (no `Accept-Encoding`, or `identity`), so its bytes are not the JSON.
fn unasked_encoding<B>(response: &Response<B>) -> Option<String> {
    let encoding = response
        .headers()
        .get(http::header::CONTENT_ENCODING)?
        .to_str()
        .unwrap_or("unknown")
        .trim()
        .to_ascii_lowercase();
    (!encoding.is_empty() && encoding != "identity")
        .then(|| crate::model::text::sanitize(&encoding).into_owned())
}

/// A 429 whose `Retry-After` header says how long to wait, as the
/// `Status` kube reads (the header alone was lost with the answer): its
/// `details.retryAfterSeconds` from the header, as an apiserver sets both.
fn throttled<B>(response: &Response<B>) -> Option<Vec<u8>> {
    if response.status() != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    let seconds: u64 = response
        .headers()
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let status = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Too many requests, please try again later.",
        "reason": "TooManyRequests", "code": 429,
        "details": {"retryAfterSeconds": seconds.min(u64::from(u32::MAX))},
    });
    serde_json::to_vec(&status).ok()
}

/// The layer that applies [`guard`] to every answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct GuardLayer;

impl<S> tower::Layer<S> for GuardLayer {
    type Service = GuardService<S>;

    fn layer(&self, inner: S) -> GuardService<S> {
        GuardService(inner)
    }
}

#[derive(Debug, Clone)]
pub struct GuardService<S>(S);

impl<S, RequestBody, B> tower::Service<Request<RequestBody>> for GuardService<S>
where
    S: tower::Service<Request<RequestBody>, Response = Response<B>>,
    S::Future: Send + 'static,
    B: Body<Data = Bytes> + Unpin,
{
    type Response = Response<Guarded<B>>;
    type Error = S::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request<RequestBody>) -> Self::Future {
        let measure = Measure::of(&request);
        let answer = self.0.call(request);
        Box::pin(async move { Ok(guard(measure, answer.await?)) })
    }
}

/// Either the capped answer or the `Status` that replaced a redirect.
pub type Guarded<B> = Either<Capped<B>, Full<Bytes>>;

/// Retries of answers that say "later" (429, 503, 504): at most three,
/// after the server's `Retry-After` when it is short, else with back-off.
/// A longer `Retry-After` is not waited out inside one request: the answer
/// goes up at once, so the caller can say the server is throttling (kube's
/// own policy waits up to 15 times, up to 1 000 s, looking from outside
/// like a server that never answers).
#[derive(Clone)]
pub struct ThrottleRetry {
    attempt: u32,
    /// Only for its `clone_request`.
    kube: kube::client::retry::RetryPolicy,
}

impl ThrottleRetry {
    pub const MAX_RETRIES: u32 = 3;
    /// The longest `Retry-After` waited out inside a request.
    pub const MAX_WAIT: Duration = Duration::from_secs(5);

    pub fn new() -> Self {
        ThrottleRetry {
            attempt: 0,
            kube: kube::client::retry::RetryPolicy::default(),
        }
    }

    /// How long to wait before trying again, if at all.
    fn pause(&self, status: StatusCode, retry_after: Option<&str>) -> Option<Duration> {
        let later = matches!(
            status,
            StatusCode::TOO_MANY_REQUESTS
                | StatusCode::SERVICE_UNAVAILABLE
                | StatusCode::GATEWAY_TIMEOUT
        );
        if !later || self.attempt >= Self::MAX_RETRIES {
            return None;
        }
        let backoff = Duration::from_millis(250) * 2u32.pow(self.attempt);
        match retry_after.map(|s| s.trim().parse::<u64>()) {
            Some(Ok(secs)) if Duration::from_secs(secs) > Self::MAX_WAIT => None,
            Some(Ok(secs)) => Some(Duration::from_secs(secs).max(backoff)),
            _ => Some(backoff),
        }
    }
}

impl Default for ThrottleRetry {
    fn default() -> Self {
        Self::new()
    }
}

impl<Res> tower::retry::Policy<Request<kube::client::Body>, Response<Res>, BoxError>
    for ThrottleRetry
{
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        _request: &mut Request<kube::client::Body>,
        result: &mut Result<Response<Res>, BoxError>,
    ) -> Option<Self::Future> {
        let response = result.as_ref().ok()?;
        let retry_after = response
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok());
        let pause = self.pause(response.status(), retry_after)?;
        self.attempt += 1;
        Some(tokio::time::sleep(pause))
    }

    fn clone_request(
        &mut self,
        request: &Request<kube::client::Body>,
    ) -> Option<Request<kube::client::Body>> {
        tower::retry::Policy::<_, Response<Res>, BoxError>::clone_request(&mut self.kube, request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt as _, StreamBody};

    fn body_of(chunks: Vec<Vec<u8>>) -> impl Body<Data = Bytes, Error = BoxError> + Unpin {
        StreamBody::new(futures::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, BoxError>(Frame::data(Bytes::from(c)))),
        ))
    }

    fn request(uri: &str) -> Request<()> {
        Request::get(uri).body(()).unwrap()
    }

    async fn read(uri: &str, chunks: Vec<Vec<u8>>) -> Result<usize, BoxError> {
        let response = guard(Measure::of(&request(uri)), Response::new(body_of(chunks)));
        Ok(response.into_body().collect().await?.to_bytes().len())
    }

    const MIB: usize = 1 << 20;

    #[tokio::test]
    async fn a_watch_may_stream_any_amount_in_lines_under_the_cap() {
        let line = |n: usize| {
            let mut l = vec![b'x'; n];
            l.push(b'\n');
            l
        };
        let chunks = (0..5).map(|_| line(10 * MIB)).collect();
        let read = read("/api/v1/pods?watch=true&resourceVersion=1", chunks).await;
        assert_eq!(read.unwrap(), 5 * (10 * MIB + 1));
    }

    #[tokio::test]
    async fn one_line_over_the_cap_fails_the_stream_in_any_chunking() {
        let chunks = (0..20).map(|_| vec![b'x'; MIB]).collect();
        let error = read("/api/v1/pods?watch=true", chunks).await.unwrap_err();
        assert_eq!(
            too_large(&*error),
            Some(TooLarge {
                what: "one line (a watch event or a log line)"
            })
        );
    }

    #[tokio::test]
    async fn a_whole_answer_counts_every_byte_newlines_or_not() {
        let chunks = (0..20).map(|_| b"{}\n".repeat(MIB / 3)).collect();
        let error = read("/api/v1/pods?limit=500", chunks).await.unwrap_err();
        assert_eq!(too_large(&*error).map(|t| t.what), Some("an answer"));
        assert!(
            read("/api/v1/pods?limit=500", vec![vec![b'x'; MIB]])
                .await
                .is_ok()
        );
    }

    #[tokio::test]
    async fn a_redirect_becomes_a_status_naming_the_location() {
        let response = Response::builder()
            .status(302)
            .header("location", "https://login.example.com/sso")
            .body(body_of(vec![]))
            .unwrap();
        let guarded = guard(Measure::Whole, response);
        assert!(guarded.status().is_client_error());
        let body = guarded.into_body().collect().await.unwrap().to_bytes();
        let status: kube::core::Status = serde_json::from_slice(&body).unwrap();
        assert_eq!(status.code, 302);
        assert!(status.message.contains("https://login.example.com/sso"));
    }

    #[test]
    fn throttled_requests_wait_a_short_retry_after_and_give_up_on_a_long_one() {
        let policy = ThrottleRetry::new();
        let busy = StatusCode::TOO_MANY_REQUESTS;
        assert_eq!(policy.pause(busy, Some("2")), Some(Duration::from_secs(2)));
        assert_eq!(policy.pause(busy, Some("120")), None);
        assert_eq!(policy.pause(busy, None), Some(Duration::from_millis(250)));
        assert_eq!(policy.pause(StatusCode::NOT_FOUND, None), None);
        let spent = ThrottleRetry {
            attempt: ThrottleRetry::MAX_RETRIES,
            ..ThrottleRetry::new()
        };
        assert_eq!(spent.pause(busy, Some("1")), None);
    }
}

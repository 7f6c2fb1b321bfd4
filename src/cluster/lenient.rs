//! Lists and watches read item by item: one object the server sends that
//! does not decode (a `restartCount` past 2^31, a name that is not UTF-8)
//! is reported as unreadable and the others are kept, as kubectl keeps
//! them. kube-rs decodes a list whole, so one bad pod hid every pod.
//!
//! Every object is decoded from its JSON bytes (`serde_json::from_slice`),
//! as kube-rs decodes its own answers: each other way to decode a Pod (from
//! a `&str`, from a `Value`) was another copy of k8s-openapi's decoders in
//! the binary, about 0.3 MB each.

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use http_body_util::BodyExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::model::feed::Unreadable;

/// What is wrong with `value`, named as well as it can be.
fn unreadable(value: &Value, error: &serde_json::Error) -> Unreadable {
    let field = |key: &str| value["metadata"][key].as_str().unwrap_or("?").to_string();
    let name = match value["metadata"]["namespace"].as_str() {
        Some(_) => format!("{}/{}", field("namespace"), field("name")),
        None => field("name"),
    };
    // "at line 1 column 812" points into one object's JSON: nothing a
    // user can find.
    let why = error.to_string();
    let why = why.split(" at line ").next().unwrap_or_default();
    Unreadable {
        name: name.into(),
        why: why.into(),
    }
}

/// An object as the server sent it: decoded, or what is wrong with it.
#[derive(Debug, Clone)]
pub enum Lenient<K> {
    Read(K),
    Unreadable(Unreadable),
}

impl<K: DeserializeOwned> Lenient<K> {
    /// Decodes one object's JSON.
    fn read(json: &[u8]) -> Self {
        match serde_json::from_slice(json) {
            Ok(object) => Lenient::Read(object),
            Err(error) => {
                let value = serde_json::from_slice(json).unwrap_or(Value::Null);
                Lenient::Unreadable(unreadable(&value, &error))
            }
        }
    }
}

/// One page of a list's items (its metadata is told as it is read:
/// [`RawPage::decode_telling`]).
pub struct Page<K> {
    pub items: Vec<K>,
    pub unreadable: Vec<Unreadable>,
}

/// A page's fields that are read; `metadata` is told as soon as it is
/// read, before the items (every apiserver sends it first).
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Metadata,
    Items,
    #[serde(other)]
    Other,
}

/// Decodes a list: its metadata, told to `tell` once read, and its items.
struct PageVisitor<'t, K, F> {
    tell: &'t mut Option<F>,
    items: std::marker::PhantomData<K>,
}

impl<'de, K, F> serde::de::Visitor<'de> for PageVisitor<'_, K, F>
where
    K: Deserialize<'de>,
    F: FnOnce(&ListMeta),
{
    type Value = Vec<K>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(field) = map.next_key()? {
            match field {
                Field::Metadata => {
                    let read: ListMeta = map.next_value()?;
                    if let Some(tell) = self.tell.take() {
                        tell(&read);
                    }
                }
                Field::Items => items = map.next_value()?,
                Field::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        // A list without metadata is told so: an empty one.
        if let Some(tell) = self.tell.take() {
            tell(&ListMeta::default());
        }
        Ok(items)
    }
}

/// A page whose items are read one by one.
#[derive(Deserialize)]
struct Items<'a> {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(borrow, default)]
    items: Vec<&'a RawValue>,
}

/// A page of a list as it came, not yet decoded.
pub struct RawPage(Vec<u8>);

impl RawPage {
    /// Decodes the page whole (the common case, and the fast one); only
    /// when that fails is it read item by item. It tells `tell` the list's
    /// metadata (its continue token above all) as soon as it is read,
    /// before the items
    /// are: the next page is asked for while this one is decoded. A page
    /// that decodes has told its metadata, once.
    pub fn decode_telling<K: DeserializeOwned>(
        &self,
        tell: impl FnOnce(&ListMeta),
    ) -> kube::Result<Page<K>> {
        let text = text(&self.0);
        let mut tell = Some(tell);
        let mut whole = serde_json::Deserializer::from_slice(text.as_bytes());
        let visitor = PageVisitor {
            tell: &mut tell,
            items: std::marker::PhantomData::<K>,
        };
        if let Ok(items) =
            serde::Deserializer::deserialize_map(&mut whole, visitor).and_then(|read| {
                whole.end()?;
                Ok(read)
            })
        {
            return Ok(Page {
                items,
                unreadable: Vec::new(),
            });
        }
        let page: Items =
            serde_json::from_slice(text.as_bytes()).map_err(kube::Error::SerdeError)?;
        if let Some(tell) = tell.take() {
            tell(&page.metadata);
        }
        let mut items = Vec::with_capacity(page.items.len());
        let mut unreadable = Vec::new();
        for raw in page.items {
            match Lenient::<K>::read(raw.get().as_bytes()) {
                Lenient::Read(object) => items.push(object),
                Lenient::Unreadable(bad) => unreadable.push(bad),
            }
        }
        Ok(Page { items, unreadable })
    }
}

impl RawPage {
    /// The page's buffer, for the next page to be read into.
    pub fn into_buffer(self) -> Vec<u8> {
        self.0
    }
}

/// Asks for one page of `api`'s list, read into `buffer` (emptied first):
/// the pages of a list take turns in two buffers rather than each
/// allocating (and the allocator mapping and unmapping) its megabyte.
pub async fn fetch_page<K>(
    api: &Api<K>,
    params: &ListParams,
    mut buffer: Vec<u8>,
) -> kube::Result<RawPage>
where
    K: kube::Resource + Clone,
{
    let request = kube::core::Request::new(api.resource_url())
        .list(params)
        .map_err(kube::Error::BuildRequest)?;
    let mut body = answer(api, request).await?.into_body();
    buffer.clear();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            buffer.extend_from_slice(&data);
        }
    }
    Ok(RawPage(buffer))
}

/// A body as text: Go's decoder, and so kubectl, reads bytes that are not
/// UTF-8 as U+FFFD. (A valid body is only validated: the lossy conversion
/// walks it in small chunks, 9 % of a 100 000-pod list's CPU in a profile.)
fn text(body: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(body) {
        Ok(text) => text.into(),
        Err(_) => String::from_utf8_lossy(body),
    }
}

/// Watches `api` from `version`: each line is one event, read on its own
/// (a line that is not UTF-8 is read as kubectl reads it).
pub async fn watch<K>(
    api: &Api<K>,
    params: &WatchParams,
    version: &str,
) -> kube::Result<impl Stream<Item = kube::Result<WatchEvent<Lenient<K>>>> + use<K>>
where
    K: kube::Resource + Clone + DeserializeOwned + 'static,
{
    let mut request = kube::core::Request::new(api.resource_url())
        .watch(params, version)
        .map_err(kube::Error::BuildRequest)?;
    // As kube-rs: a gzipped watch is one member per event, which the
    // client's decompression does not read past the first.
    request.headers_mut().insert(
        http::header::ACCEPT_ENCODING,
        http::HeaderValue::from_static("identity"),
    );
    let chunks = answer(api, request).await?.into_body().into_data_stream();
    Ok(lines(chunks).filter_map(|line| async move {
        match line {
            Ok(line) => event(&line),
            Err(error) if ended_early(&*error) => None,
            Err(error) => Some(Err(kube::Error::ReadEvents(std::io::Error::other(error)))),
        }
    }))
}

type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// A watch event as it arrives: its type, and its object still as JSON.
#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// The event on one line; a line that is a `Status` is the server's error.
fn event<K>(line: &[u8]) -> Option<kube::Result<WatchEvent<Lenient<K>>>>
where
    K: Clone + DeserializeOwned,
{
    let text = text(line);
    if text.trim().is_empty() {
        return None;
    }
    let raw = match serde_json::from_slice::<RawEvent>(text.as_bytes()) {
        Ok(raw) => raw,
        Err(error) => {
            return match serde_json::from_slice::<kube::core::Status>(text.as_bytes()) {
                Ok(status) if status.code != 0 => Some(Err(kube::Error::Api(status.boxed()))),
                _ => Some(Err(kube::Error::SerdeError(error))),
            };
        }
    };
    let object = raw.object.get().as_bytes();
    let decoded = match raw.kind.as_str() {
        "ADDED" => Ok(WatchEvent::Added(Lenient::read(object))),
        "MODIFIED" => Ok(WatchEvent::Modified(Lenient::read(object))),
        "DELETED" => Ok(WatchEvent::Deleted(Lenient::read(object))),
        "BOOKMARK" => serde_json::from_slice(object).map(WatchEvent::Bookmark),
        "ERROR" => serde_json::from_slice(object).map(|s| WatchEvent::Error(Box::new(s))),
        other => Err(serde::de::Error::unknown_variant(
            other,
            &["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"],
        )),
    };
    Some(decoded.map_err(kube::Error::SerdeError))
}

/// A cut chunked stream (an apiserver or a proxy ending a long watch): the
/// watch ended, and is resumed, as kube-rs does.
fn ended_early(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    for _ in 0..16 {
        let Some(e) = current else { return false };
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
            || e.to_string().contains("unexpected EOF during chunk")
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// The lines of a body, without their newlines; a last line without one
/// is kept. Each byte is looked at once, however long the line.
fn lines<S, E>(chunks: S) -> impl Stream<Item = Result<Bytes, BodyError>>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<BodyError>,
{
    struct Reader<S> {
        chunks: S,
        buffer: BytesMut,
        /// How much of `buffer` holds no newline.
        scanned: usize,
        done: bool,
    }
    let reader = Reader {
        chunks,
        buffer: BytesMut::new(),
        scanned: 0,
        done: false,
    };
    futures::stream::unfold(reader, |mut r| async move {
        loop {
            if let Some(at) = r.buffer[r.scanned..].iter().position(|&b| b == b'\n') {
                let end = r.scanned + at;
                let line = r.buffer.split_to(end + 1).freeze().slice(..end);
                r.scanned = 0;
                return Some((Ok(line), r));
            }
            r.scanned = r.buffer.len();
            if r.done {
                if r.buffer.is_empty() {
                    return None;
                }
                let line = r.buffer.split().freeze();
                r.scanned = 0;
                return Some((Ok(line), r));
            }
            match r.chunks.next().await {
                Some(Ok(chunk)) => r.buffer.extend_from_slice(&chunk),
                Some(Err(error)) => {
                    r.done = true;
                    r.buffer.clear();
                    r.scanned = 0;
                    return Some((Err(error.into()), r));
                }
                None => r.done = true,
            }
        }
    })
}

/// The answer to `request` when it is a success, else the server's error.
pub(super) async fn answer<K: kube::Resource + Clone>(
    api: &Api<K>,
    request: http::Request<Vec<u8>>,
) -> kube::Result<http::Response<kube::client::Body>> {
    answer_of(api.clone().into_client(), request).await
}

/// [`answer`], for a request built without a typed `Api`.
pub(super) async fn answer_of(
    client: kube::Client,
    request: http::Request<Vec<u8>>,
) -> kube::Result<http::Response<kube::client::Body>> {
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let code = response.status();
    if !code.is_success() {
        let body = response.into_body().collect().await?.to_bytes();
        return Err(super::errors::api_error(code.as_u16(), &body));
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;

    #[test]
    fn a_pod_that_does_not_decode_is_unreadable_and_named() {
        let bad = serde_json::json!({"metadata": {"name": "web-2", "namespace": "shop"},
            "status": {"containerStatuses": [{"name": "app", "image": "x", "imageID": "",
                "ready": true, "restartCount": 9_223_372_036_854_775_807_u64}]}});
        let bad = serde_json::to_vec(&bad).unwrap();
        let Lenient::<Pod>::Unreadable(why) = Lenient::read(&bad) else {
            panic!("restartCount past i32 decodes")
        };
        assert_eq!(why.name, "shop/web-2");
        assert!(why.why.contains("9223372036854775807"), "{}", why.why);
        let good = serde_json::json!({"metadata": {"name": "web-1", "namespace": "shop"}});
        let good = serde_json::to_vec(&good).unwrap();
        assert!(matches!(Lenient::<Pod>::read(&good), Lenient::Read(_)));
    }

    #[tokio::test]
    async fn lines_are_split_across_chunks_and_the_last_is_kept() {
        let chunks = futures::stream::iter(
            ["ab\ncd", "e\n\nf"].map(|c| Ok::<_, std::io::Error>(Bytes::from(c))),
        );
        let lines: Vec<Bytes> = lines(chunks).map(|l| l.unwrap()).collect().await;
        assert_eq!(lines, ["ab", "cde", "", "f"].map(Bytes::from));
    }

    #[test]
    fn a_status_line_is_the_servers_error() {
        let gone = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired","message":"too old"}"#;
        assert!(matches!(event::<Pod>(gone), Some(Err(kube::Error::Api(s))) if s.code == 410));
        // kube's Status takes any object: what is not one has code 0.
        let garbage = br#"{"type": "ERROR", "object": {"nope": 1}}"#;
        assert!(matches!(event::<Pod>(garbage), Some(Ok(WatchEvent::Error(s))) if s.code == 0));
    }

    #[test]
    fn each_kind_of_event_is_read_and_a_bad_object_is_named() {
        let line = |kind: &str, object: &str| format!(r#"{{"type":"{kind}","object":{object}}}"#);
        let pod = r#"{"metadata":{"name":"web-1","namespace":"shop","resourceVersion":"7"}}"#;
        let read = |kind: &str| event::<Pod>(line(kind, pod).as_bytes());
        let name = |p: &Pod| p.metadata.name.clone();
        let web = Some("web-1".to_string());
        assert!(
            matches!(read("ADDED"), Some(Ok(WatchEvent::Added(Lenient::Read(p)))) if name(&p) == web)
        );
        assert!(
            matches!(read("MODIFIED"), Some(Ok(WatchEvent::Modified(Lenient::Read(p)))) if name(&p) == web)
        );
        assert!(
            matches!(read("DELETED"), Some(Ok(WatchEvent::Deleted(Lenient::Read(p)))) if name(&p) == web)
        );
        let mark = r#"{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12"}}"#;
        assert!(matches!(
            event::<Pod>(line("BOOKMARK", mark).as_bytes()),
            Some(Ok(WatchEvent::Bookmark(b))) if b.metadata.resource_version == "12"
        ));
        let bad = r#"{"metadata":{"name":"web-2","namespace":"shop"},"spec":{"containers":7}}"#;
        assert!(matches!(
            event::<Pod>(line("MODIFIED", bad).as_bytes()),
            Some(Ok(WatchEvent::Modified(Lenient::Unreadable(u))))
                if &*u.name == "shop/web-2" && !u.why.contains("column")
        ));
        assert!(matches!(
            event::<Pod>(line("RENAMED", pod).as_bytes()),
            Some(Err(kube::Error::SerdeError(_)))
        ));
    }
}

//! Typed reads, lists and deletes, decoded from the answer's bytes.
//!
//! kube-rs's typed calls (`Api::get`, `list`, `delete`) decode from a
//! `&str`: for a Pod that was a second copy of each k8s-openapi decoder in
//! the binary (PodSpec, Volume, Container, PodStatus: about 1 MB) beside
//! the one the feeds use. These go through that one.

use http_body_util::BodyExt as _;
use kube::api::{Api, DeleteParams, GetParams, ListParams};
use serde::de::DeserializeOwned;

use super::lenient::{Page, answer, fetch_page};

/// `api.get(name)`.
pub async fn get<K>(api: &Api<K>, name: &str) -> kube::Result<K>
where
    K: kube::Resource + Clone + DeserializeOwned,
{
    let request = kube::core::Request::new(api.resource_url())
        .get(name, &GetParams::default())
        .map_err(kube::Error::BuildRequest)?;
    decoded(api.clone().into_client(), request).await
}

/// Everything `api.list(params)` selects, page by page as the feeds list
/// (pages of 500 unless `params` sets a size; smaller ones, from the start,
/// when a page is over the size cap), with the feeds' guards: a continue
/// token that repeats, or a list past its row cap, is an error. As
/// kube-rs's, it fails when an object does not decode, naming it: a
/// caller acting on every match must not quietly do less.
pub async fn list<K>(api: &Api<K>, params: &ListParams) -> kube::Result<Vec<K>>
where
    K: kube::Resource + Clone + DeserializeOwned,
{
    let mut params = ListParams {
        limit: params.limit.or(Some(super::feed::PAGE_SIZE)),
        continue_token: None,
        ..params.clone()
    };
    let mut tokens = std::collections::HashSet::new();
    let mut items = Vec::new();
    let mut buffer = Vec::new();
    loop {
        let raw = match fetch_page(api, &params, std::mem::take(&mut buffer)).await {
            Ok(raw) => raw,
            // Fat objects: smaller pages, from the start.
            Err(error) if super::limits::too_large(&error).is_some() => {
                match params.limit.filter(|l| *l > super::feed::SMALLEST_PAGE) {
                    Some(limit) => {
                        params.limit = Some((limit / 5).max(super::feed::SMALLEST_PAGE));
                        params.continue_token = None;
                        tokens.clear();
                        items.clear();
                        continue;
                    }
                    None => return Err(error),
                }
            }
            Err(error) => return Err(error),
        };
        let mut metadata = None;
        let Page {
            items: page,
            unreadable,
        } = raw.decode_telling(|meta| metadata = Some(meta.clone()))?;
        if let Some(bad) = unreadable.first() {
            return Err(kube::Error::Service(
                format!("{} could not be read: {}", bad.name, bad.why).into(),
            ));
        }
        items.extend(page);
        let next = match &metadata {
            Some(meta) => {
                let mut first_page = false;
                let size = params.limit;
                super::feed::plan_next(
                    meta,
                    &params,
                    &mut tokens,
                    &mut first_page,
                    size,
                    items.len(),
                )?
            }
            None => None,
        };
        match next {
            Some(next) => params = next,
            None => return Ok(items),
        }
        if items.len() > super::feed::MAX_LIST_ROWS {
            return Err(super::feed::endless(tokens.len(), items.len()));
        }
        buffer = raw.into_buffer();
    }
}

/// The names of the first page of what `params` selects at `url` (a
/// collection, as `Api::resource_url` gives it; its `limit`, or 500), read
/// as metadata: what a shell's completion offers, never a whole list of
/// 100 000. Untyped, so every kind shares one path in the binary.
pub async fn first_names(
    client: kube::Client,
    url: &str,
    params: &ListParams,
) -> kube::Result<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Page {
        #[serde(default)]
        items: Vec<Item>,
    }
    #[derive(serde::Deserialize)]
    struct Item {
        metadata: Meta,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        name: Option<String>,
    }
    let params = ListParams {
        limit: params.limit.or(Some(super::feed::PAGE_SIZE)),
        ..params.clone()
    };
    let request = kube::core::Request::new(url)
        .list_metadata(&params)
        .map_err(kube::Error::BuildRequest)?;
    let page: Page = decoded(client, request).await?;
    Ok(page
        .items
        .into_iter()
        .filter_map(|item| item.metadata.name)
        .collect())
}

/// The object `name` of the collection at `url` (as `Api::resource_url`
/// gives it), as JSON: one path in the binary for every kind read whole
/// and only shown (a describe, a YAML), no typed decoder.
pub async fn get_json(
    client: kube::Client,
    url: &str,
    name: &str,
) -> kube::Result<serde_json::Value> {
    let request = kube::core::Request::new(url)
        .get(name, &GetParams::default())
        .map_err(kube::Error::BuildRequest)?;
    decoded(client, request).await
}

/// The items of the first page (its `limit`, or 500) of what `params`
/// selects at `url`, as JSON: the events about one object, which one page
/// holds (its newest are what a reader wants; kubectl describe reads one
/// list too).
pub async fn first_page_json(
    client: kube::Client,
    url: &str,
    params: &ListParams,
) -> kube::Result<Vec<serde_json::Value>> {
    let params = ListParams {
        limit: params.limit.or(Some(super::feed::PAGE_SIZE)),
        ..params.clone()
    };
    let request = kube::core::Request::new(url)
        .list(&params)
        .map_err(kube::Error::BuildRequest)?;
    let mut page: serde_json::Value = decoded(client, request).await?;
    Ok(match page["items"].take() {
        serde_json::Value::Array(items) => items,
        _ => Vec::new(),
    })
}

/// The answer to `request`, read whole and decoded as `T`.
async fn decoded<T: DeserializeOwned>(
    client: kube::Client,
    request: http::Request<Vec<u8>>,
) -> kube::Result<T> {
    let body = super::lenient::answer_of(client, request)
        .await?
        .into_body()
        .collect()
        .await?
        .to_bytes();
    serde_json::from_slice(&body).map_err(kube::Error::SerdeError)
}

/// `api.delete(name, params)`; what the server answers with (the object
/// going, or a Status) is read to its end (so the connection is reused)
/// but not decoded.
pub async fn delete<K>(api: &Api<K>, name: &str, params: &DeleteParams) -> kube::Result<()>
where
    K: kube::Resource + Clone,
{
    let request = kube::core::Request::new(api.resource_url())
        .delete(name, params)
        .map_err(kube::Error::BuildRequest)?;
    answer(api, request).await?.into_body().collect().await?;
    Ok(())
}

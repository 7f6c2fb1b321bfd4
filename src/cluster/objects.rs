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
    let body = answer(api, request)
        .await?
        .into_body()
        .collect()
        .await?
        .to_bytes();
    serde_json::from_slice(&body).map_err(kube::Error::SerdeError)
}

/// `api.list(params)`, whole (no pages). As kube-rs's, it fails when an
/// object does not decode, naming it: a caller acting on every match
/// must not quietly do less.
pub async fn list<K>(api: &Api<K>, params: &ListParams) -> kube::Result<Vec<K>>
where
    K: kube::Resource + Clone + DeserializeOwned,
{
    let Page { items, unreadable } = fetch_page(api, params, Vec::new()).await?.decode()?;
    match unreadable.first() {
        Some(bad) => Err(kube::Error::Service(
            format!("{} could not be read: {}", bad.name, bad.why).into(),
        )),
        None => Ok(items),
    }
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

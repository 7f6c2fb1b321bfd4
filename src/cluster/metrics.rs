//! Pods' CPU and memory from `metrics.k8s.io/v1beta1`, the one read behind
//! `podbay top` and the pod list's CPU and MEM columns: one list per
//! namespace (or one for all), as metrics-server answers it (it does not
//! page).

use std::time::Duration;

use http_body_util::BodyExt as _;

use super::deadline::Deadline;
use crate::model::usage::{PodUse, UsageError, Use, parse_node_metrics, parse_pod_metrics};

/// How long one read may take before it is said to have stalled.
pub const READ_WITHIN: Duration = Duration::from_secs(10);

/// How often to read again when the server does not say its window:
/// metrics-server's default resolution.
pub const DEFAULT_PERIOD: Duration = Duration::from_secs(15);

/// Every pod's use in `namespace` (all when `None`) that `selector`
/// matches, and how often metrics-server measures (its window).
pub async fn pod_usage(
    client: kube::Client,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> Result<(Vec<PodUse>, Option<Duration>), UsageError> {
    let url = match namespace {
        Some(ns) => format!("/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods"),
        None => "/apis/metrics.k8s.io/v1beta1/pods".to_string(),
    };
    let body = read_list(client, url, selector).await?;
    parse_pod_metrics(&body).map_err(|e| {
        UsageError::Failed(format!(
            "the metrics API answered something that is not a PodMetricsList ({e})."
        ))
    })
}

/// Every node's use.
pub async fn node_usage(client: kube::Client) -> Result<Vec<(String, Use)>, UsageError> {
    let url = "/apis/metrics.k8s.io/v1beta1/nodes".to_string();
    let body = read_list(client, url, None).await?;
    parse_node_metrics(&body).map_err(|e| {
        UsageError::Failed(format!(
            "the metrics API answered something that is not a NodeMetricsList ({e})."
        ))
    })
}

/// One list at `url`, whole, within [`READ_WITHIN`].
async fn read_list(
    client: kube::Client,
    url: String,
    selector: Option<&str>,
) -> Result<bytes::Bytes, UsageError> {
    let mut params = kube::api::ListParams::default();
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    let request = kube::core::Request::new(url)
        .list(&params)
        .map_err(|e| UsageError::Failed(format!("{e}.")))?;
    let read = async {
        let answer = super::lenient::answer_of(client, request).await?;
        let body = answer.into_body().collect().await?.to_bytes();
        Ok::<_, kube::Error>(body)
    };
    Deadline::none()
        .within(Some(READ_WITHIN))
        .bound(read)
        .await
        .map_err(|why| UsageError::Failed(format!("the API server did not answer ({why}).")))?
        .map_err(|error| classify(&error))
}

fn classify(error: &kube::Error) -> UsageError {
    if super::limits::too_large(error).is_some() {
        return UsageError::TooLarge;
    }
    match error {
        kube::Error::Api(status) if status.code == 404 => UsageError::NoApi,
        kube::Error::Api(status) if status.code == 403 => {
            UsageError::Forbidden(super::errors::describe(error).sentence.to_string())
        }
        _ => UsageError::Failed(super::errors::describe(error).sentence.to_string()),
    }
}

//! HTTP plumbing of the simulator: request parsing, routing, authentication
//! and response bodies (whole, streamed). The handlers live in `api`.

use std::collections::BTreeMap;
use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

use super::status::ApiError;
use super::store::Kind;

pub type Body = BoxBody<Bytes, Infallible>;

/// Where a request goes, decoded from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Version,
    /// `/openapi/v2`: the one document of OpenAPI v2.
    OpenApiV2,
    /// `/openapi/v3`: the documents there are.
    OpenApiRoot,
    /// `/openapi/v3/api/v1` and the like.
    OpenApi(String),
    Health,
    ApiVersions,
    ApiGroups,
    CoreResources,
    /// `/apis/GROUP/v1`: the resources of the apps or batch group.
    GroupResources(&'static str),
    /// `GET` list/watch, across namespaces when `namespace` is `None`.
    Collection {
        kind: Kind,
        namespace: Option<String>,
    },
    Object {
        kind: Kind,
        namespace: Option<String>,
        name: String,
    },
    PodSubresource {
        namespace: String,
        name: String,
        subresource: Subresource,
    },
    /// `metrics.k8s.io`'s pods (`nodes` when `pods` is false): a list, or
    /// one object when `name` is given.
    Metrics {
        pods: bool,
        namespace: Option<String>,
        name: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    EphemeralContainers,
    Log,
    Attach,
    Exec,
    PortForward,
}

impl Subresource {
    pub fn as_str(self) -> &'static str {
        match self {
            Subresource::EphemeralContainers => "ephemeralcontainers",
            Subresource::Log => "log",
            Subresource::Attach => "attach",
            Subresource::Exec => "exec",
            Subresource::PortForward => "portforward",
        }
    }
}

/// The resource metrics API (metrics-server's), and its one version.
pub const METRICS_GROUP: &str = "metrics.k8s.io";
pub const METRICS_VERSION: &str = "v1beta1";

/// The API groups served besides the core group, each with its version.
pub const GROUPS: [(&str, &str); 4] = [
    ("apps", "v1"),
    ("batch", "v1"),
    ("discovery.k8s.io", "v1"),
    (METRICS_GROUP, METRICS_VERSION),
];

fn group_of(group: &str, version: &str) -> Option<&'static str> {
    GROUPS
        .into_iter()
        .find(|(g, v)| *g == group && *v == version)
        .map(|(g, _)| g)
}

/// The kind a `group`'s resource `plural` names (`""` is the core group).
fn kind_of(group: &str, plural: &str) -> Option<Kind> {
    Kind::ALL
        .into_iter()
        .find(|k| k.group() == group && k.plural() == plural)
}

/// Decodes a request path into a route; `None` means 404.
pub fn route(path: &str) -> Option<Route> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    Some(match segments.as_slice() {
        ["version"] => Route::Version,
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", rest @ ..] => Route::OpenApi(rest.join("/")),
        ["healthz" | "livez" | "readyz"] => Route::Health,
        ["api"] => Route::ApiVersions,
        ["apis"] => Route::ApiGroups,
        ["api", "v1"] => Route::CoreResources,
        ["api", "v1", plural] => Route::Collection {
            kind: kind_of("", plural)?,
            namespace: None,
        },
        ["apis", group, version] => Route::GroupResources(group_of(group, version)?),
        ["apis", METRICS_GROUP, METRICS_VERSION, rest @ ..] => metrics_route(rest)?,
        ["apis", group, "v1", plural] => Route::Collection {
            kind: kind_of(group, plural)?,
            namespace: None,
        },
        ["apis", group, "v1", "namespaces", ns, plural] => Route::Collection {
            kind: kind_of(group, plural)?,
            namespace: Some(ns.to_string()),
        },
        ["apis", group, "v1", "namespaces", ns, plural, name] => Route::Object {
            kind: kind_of(group, plural)?,
            namespace: Some(ns.to_string()),
            name: name.to_string(),
        },
        ["api", "v1", "nodes", name] => Route::Object {
            kind: Kind::Node,
            namespace: None,
            name: name.to_string(),
        },
        ["api", "v1", "namespaces", name] => Route::Object {
            kind: Kind::Namespace,
            namespace: None,
            name: name.to_string(),
        },
        ["api", "v1", "namespaces", ns, plural] => {
            let kind = kind_of("", plural).filter(|k| k.namespaced())?;
            Route::Collection {
                kind,
                namespace: Some(ns.to_string()),
            }
        }
        ["api", "v1", "namespaces", ns, plural, name] => {
            let kind = kind_of("", plural).filter(|k| k.namespaced())?;
            Route::Object {
                kind,
                namespace: Some(ns.to_string()),
                name: name.to_string(),
            }
        }
        ["api", "v1", "namespaces", ns, "pods", name, sub] => Route::PodSubresource {
            namespace: ns.to_string(),
            name: name.to_string(),
            subresource: match *sub {
                "ephemeralcontainers" => Subresource::EphemeralContainers,
                "log" => Subresource::Log,
                "attach" => Subresource::Attach,
                "exec" => Subresource::Exec,
                "portforward" => Subresource::PortForward,
                _ => return None,
            },
        },
        _ => return None,
    })
}

/// A path below `/apis/metrics.k8s.io/v1beta1/`.
fn metrics_route(rest: &[&str]) -> Option<Route> {
    let (pods, namespace, name) = match rest {
        ["nodes"] => (false, None, None),
        ["nodes", name] => (false, None, Some(name)),
        ["pods"] => (true, None, None),
        ["namespaces", ns, "pods"] => (true, Some(ns), None),
        ["namespaces", ns, "pods", name] => (true, Some(ns), Some(name)),
        _ => return None,
    };
    Some(Route::Metrics {
        pods,
        namespace: namespace.map(|s| s.to_string()),
        name: name.map(|s| s.to_string()),
    })
}

/// Query parameters; repeated keys (`command=a&command=b`) keep every value.
#[derive(Debug, Default, Clone)]
pub struct Query(BTreeMap<String, Vec<String>>);

impl Query {
    pub fn parse(query: Option<&str>) -> Self {
        let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (k, v) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            map.entry(k.into_owned()).or_default().push(v.into_owned());
        }
        Query(map)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.first()).map(String::as_str)
    }

    pub fn all(&self, key: &str) -> &[String] {
        self.0.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    /// Kubernetes booleans: `true`/`1` (and `false`/`0`); absent is `false`.
    pub fn flag(&self, key: &str) -> Result<bool, ApiError> {
        match self.get(key) {
            None | Some("") => Ok(false),
            Some("true" | "1" | "True") => Ok(true),
            Some("false" | "0" | "False") => Ok(false),
            Some(other) => Err(ApiError::bad_request(format!(
                "strconv.ParseBool: parsing {other:?}: invalid syntax"
            ))),
        }
    }

    /// Whether the request is a server dry run (`dryRun=All`); any other
    /// value is refused as the apiserver's `ValidateDryRun` refuses it, in
    /// the name of the verb's options (`CreateOptions`, `PatchOptions`, …).
    pub fn dry_run(&self, options: &str) -> Result<bool, ApiError> {
        dry_run(self.all("dryRun"), options)
    }

    pub fn number(&self, key: &str) -> Result<Option<i64>, ApiError> {
        self.get(key)
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.parse::<i64>().map_err(|_| {
                    ApiError::bad_request(format!(
                        "strconv.ParseInt: parsing {v:?}: invalid syntax"
                    ))
                })
            })
            .transpose()
    }
}

/// `dryRun` values, from a query or a body's options: none, or `All`.
pub fn dry_run(values: &[String], options: &str) -> Result<bool, ApiError> {
    if values.iter().all(|v| v == "All") {
        return Ok(!values.is_empty());
    }
    Err(ApiError::invalid_options(
        options,
        super::status::FieldError::new(
            super::status::FieldErrorKind::NotSupported,
            "dryRun",
            Some(format!(
                "[{}]",
                values
                    .iter()
                    .map(|v| format!("{v:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            "supported values: \"All\"",
        ),
    ))
}

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// A body fed chunk by chunk from a channel; dropping the sender ends it.
pub fn streaming(rx: mpsc::Receiver<Bytes>) -> Body {
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<_, Infallible>(Frame::data(chunk)), rx))
    });
    StreamBody::new(stream).boxed()
}

pub fn respond(status: StatusCode, content_type: &'static str, body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

pub fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    respond(
        status,
        "application/json",
        full(serde_json::to_vec(value).unwrap_or_default()),
    )
}

pub fn ok_json(value: &Value) -> Response<Body> {
    json_response(StatusCode::OK, value)
}

pub fn ok_bytes(bytes: impl Into<Bytes>) -> Response<Body> {
    respond(StatusCode::OK, "application/json", full(bytes))
}

pub fn error_response(error: &ApiError) -> Response<Body> {
    let status = StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, &error.to_status())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_cover_the_core_api() {
        assert_eq!(route("/version"), Some(Route::Version));
        assert_eq!(route("/api/v1/"), Some(Route::CoreResources));
        assert_eq!(
            route("/api/v1/pods"),
            Some(Route::Collection {
                kind: Kind::Pod,
                namespace: None
            })
        );
        assert_eq!(
            route("/api/v1/namespaces/shop/pods/web-1/ephemeralcontainers"),
            Some(Route::PodSubresource {
                namespace: "shop".into(),
                name: "web-1".into(),
                subresource: Subresource::EphemeralContainers
            })
        );
        assert_eq!(
            route("/api/v1/namespaces/shop"),
            Some(Route::Object {
                kind: Kind::Namespace,
                namespace: None,
                name: "shop".into()
            })
        );
        assert_eq!(route("/api/v1/namespaces/shop/namespaces"), None);
        assert_eq!(
            route("/api/v1/namespaces/shop/pods/web-1/portforward"),
            Some(Route::PodSubresource {
                namespace: "shop".into(),
                name: "web-1".into(),
                subresource: Subresource::PortForward
            })
        );
        assert_eq!(route("/api/v1/namespaces/shop/pods/web-1/proxy"), None);
        assert_eq!(
            route("/apis/apps/v1/namespaces/shop/deployments/cart"),
            Some(Route::Object {
                kind: Kind::Deployment,
                namespace: Some("shop".into()),
                name: "cart".into()
            })
        );
        assert_eq!(route("/api/v1/deployments"), None, "not in the core group");
        assert_eq!(
            route("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/web-1"),
            Some(Route::Metrics {
                pods: true,
                namespace: Some("shop".into()),
                name: Some("web-1".into())
            })
        );
        assert_eq!(
            route("/apis/metrics.k8s.io/v1beta1"),
            Some(Route::GroupResources("metrics.k8s.io"))
        );
        assert_eq!(route("/apis/metrics.k8s.io/v1"), None, "no such version");
        assert_eq!(
            route("/apis/metrics.k8s.io/v1beta1/namespaces/shop/nodes"),
            None
        );
        assert_eq!(route("/apis/apps/v1beta1"), None);
        assert_eq!(route("/apis/apps/v1/namespaces/shop/pods"), None);
    }

    #[test]
    fn query_keeps_repeated_keys_and_decodes() {
        let q = Query::parse(Some(
            "command=sh&command=-c&command=echo%20hi&tty=true&limit=5",
        ));
        assert_eq!(q.all("command"), ["sh", "-c", "echo hi"]);
        assert!(q.flag("tty").unwrap());
        assert!(!q.flag("stdin").unwrap());
        assert_eq!(q.number("limit").unwrap(), Some(5));
        assert!(Query::parse(Some("limit=x")).number("limit").is_err());
        assert!(Query::parse(Some("watch=maybe")).flag("watch").is_err());
    }
}

//! Request handlers: authentication and authorization first (as the
//! apiserver's filter chain does), then discovery, reads, and the pod
//! subresources.

use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use hyper::body::Incoming;
use hyper::header::{ACCEPT, AUTHORIZATION};
use hyper::{Method, Request, Response};
use serde_json::{Value, json};

use super::filter::Filter;
use super::http::{Body, Query, Route, Subresource, error_response, ok_bytes, ok_json, route};
use super::rbac::{Attributes, User};
use super::status::ApiError;
use super::store::{Key, Kind};
use super::{SimState, create, ephemeral, logs, portforward, protobuf, streams, table, watch};

pub async fn handle(state: Arc<SimState>, request: Request<Incoming>) -> Response<Body> {
    let latency = state.faults.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let authorization = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let Some(user) = state.users.authenticate(authorization).cloned() else {
        return error_response(&ApiError::unauthorized());
    };
    let path = request.uri().path().to_string();
    let query = Query::parse(request.uri().query());
    let Some(route) = route(&path) else {
        return error_response(&ApiError::path_not_found());
    };
    match dispatch(&state, &user, route, query, request).await {
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}

async fn dispatch(
    state: &Arc<SimState>,
    user: &User,
    route: Route,
    query: Query,
    request: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let method = request.method().clone();
    match (&method, route) {
        (&Method::GET, Route::Version) => Ok(ok_json(&version())),
        (&Method::GET, Route::OpenApiV2) => Ok(super::http::respond(
            hyper::StatusCode::OK,
            super::openapi::V2_PROTOBUF,
            super::http::full(super::openapi::v2_protobuf()),
        )),
        (&Method::GET, Route::OpenApiRoot) => Ok(ok_json(&super::openapi::root())),
        (&Method::GET, Route::OpenApi(group_version)) => super::openapi::document(&group_version)
            .map(|doc| ok_json(&doc))
            .ok_or_else(|| {
                ApiError::new(
                    404,
                    "NotFound",
                    "the server could not find the requested resource",
                )
            }),
        (&Method::GET, Route::Health) => Ok(Response::new(super::http::full("ok"))),
        (&Method::GET, Route::ApiVersions) => Ok(ok_json(&api_versions(state))),
        (&Method::GET, Route::ApiGroups) => Ok(ok_json(&api_groups())),
        (&Method::GET, Route::CoreResources) => Ok(ok_json(&core_resources())),
        (&Method::GET, Route::GroupResources(super::metrics::GROUP)) => {
            Ok(ok_json(&super::metrics::resources()))
        }
        (&Method::GET, Route::GroupResources(group)) => Ok(ok_json(&group_resources(group))),
        (
            &Method::GET,
            Route::Metrics {
                pods,
                namespace,
                name,
            },
        ) => {
            let resource = if pods { "pods" } else { "nodes" };
            let ns = namespace.as_deref().unwrap_or_default();
            if !user.role.reads_metrics(resource, ns) {
                let verb = if name.is_some() { "get" } else { "list" };
                return Err(ApiError::forbidden_in(
                    user.name,
                    verb,
                    super::metrics::GROUP,
                    resource,
                    "",
                    name.as_deref().unwrap_or_default(),
                    ns,
                ));
            }
            let kind = if pods { Kind::Pod } else { Kind::Node };
            let filter = Filter::from_query(kind, namespace, &query)?;
            let answer = if pods {
                super::metrics::pods(state, &filter, name.as_deref())
            } else {
                super::metrics::nodes(state, &filter, name.as_deref())
            };
            answer.map(|value| ok_json(&value))
        }
        (&Method::GET, Route::Collection { kind, namespace }) => {
            let watching = query.flag("watch")?;
            let verb = if watching { "watch" } else { "list" };
            authorize(
                user,
                verb,
                kind.plural(),
                "",
                namespace.as_deref().unwrap_or_default(),
                "",
            )?;
            let filter = Filter::from_query(kind, namespace, &query)?;
            let response = if watching {
                watch::serve(state, filter, &query)
            } else {
                if query.get("continue").is_some_and(|c| !c.is_empty()) {
                    state.faults.page_released().await;
                }
                let as_table = wants_table(&request);
                list(state, &filter, &query, as_table)
            };
            // As the apiserver since 1.33.
            match kind {
                Kind::Endpoints => response.map(|r| {
                    with_warnings(
                        r,
                        vec!["v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice".into()],
                    )
                }),
                _ => response,
            }
        }
        (
            &Method::GET,
            Route::Object {
                kind,
                namespace,
                name,
            },
        ) => {
            let ns = namespace.unwrap_or_default();
            authorize(user, "get", kind.plural(), "", &ns, &name)?;
            let entry = state
                .store
                .get(kind, &Key::new(&ns, &name))
                .ok_or_else(|| ApiError::not_found_of(kind, &name))?;
            if wants_table(&request)
                && let Some(table) = table::of(kind, &[entry.value()], entry.resource_version, "")
            {
                return Ok(ok_json(&table));
            }
            Ok(ok_bytes(entry.json.clone()))
        }
        (
            &Method::POST,
            Route::Collection {
                kind: Kind::Pod,
                namespace: Some(namespace),
            },
        ) => {
            authorize(user, "create", "pods", "", &namespace, "")?;
            let options = create::Options::of(&query)?;
            // kubectl creates pods in protobuf; everyone else in JSON.
            let content_type = request
                .headers()
                .get(hyper::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/json");
            let media_type = content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            let body = read_body(request).await?;
            let pod = match media_type.as_str() {
                "application/json" => serde_json::from_slice(&body).map_err(|e| {
                    ApiError::bad_request(format!("error decoding request body: {e}"))
                })?,
                protobuf::CONTENT_TYPE => protobuf::decode_pod(&body).map_err(|e| {
                    ApiError::bad_request(format!("error decoding request body: {e}"))
                })?,
                other => return Err(ApiError::unsupported_media_type(other)),
            };
            let created = create::create_pod(state, &namespace, pod, options)?;
            let mut response = with_warnings(ok_bytes(created.pod), created.warnings);
            *response.status_mut() = hyper::StatusCode::CREATED;
            Ok(response)
        }
        (
            &Method::PATCH | &Method::PUT,
            Route::Object {
                kind: Kind::Pod,
                namespace,
                name,
            },
        ) => {
            let key = Key::new(&namespace.unwrap_or_default(), &name);
            let writing = Writing::of(&method, &query)?;
            authorize(user, writing.verb, "pods", "", &key.namespace, &name)?;
            writing
                .apply(request, |req, dry_run| {
                    super::pod_update::update(state, &key, req, dry_run)
                })
                .await
        }
        (
            &Method::DELETE,
            Route::Object {
                kind: Kind::Pod,
                namespace,
                name,
            },
        ) => {
            let ns = namespace.unwrap_or_default();
            authorize(user, "delete", "pods", "", &ns, &name)?;
            let body = read_body(request).await?;
            if state.faults.deletes_muted() {
                std::future::pending::<()>().await;
            }
            delete_pod(state, &Key::new(&ns, &name), &query, &body)
        }
        (
            _,
            Route::PodSubresource {
                namespace,
                name,
                subresource,
            },
        ) => {
            let key = Key::new(&namespace, &name);
            match (method.clone(), subresource) {
                (Method::GET, Subresource::EphemeralContainers) => {
                    authorize(
                        user,
                        "get",
                        "pods",
                        "ephemeralcontainers",
                        &namespace,
                        &name,
                    )?;
                    let entry = state
                        .store
                        .get(Kind::Pod, &key)
                        .ok_or_else(|| ApiError::not_found("pods", &name))?;
                    Ok(ok_bytes(entry.json.clone()))
                }
                (Method::PATCH | Method::PUT, Subresource::EphemeralContainers) => {
                    let writing = Writing::of(&method, &query)?;
                    authorize(
                        user,
                        writing.verb,
                        "pods",
                        "ephemeralcontainers",
                        &namespace,
                        &name,
                    )?;
                    writing
                        .apply(request, |req, dry_run| {
                            ephemeral::update(state, &key, req, dry_run)
                        })
                        .await
                }
                (Method::GET, Subresource::Log) => {
                    authorize(user, "get", "pods", "log", &namespace, &name)?;
                    logs::serve(state, &key, &query)
                }
                (
                    Method::GET | Method::POST,
                    Subresource::Attach | Subresource::Exec | Subresource::PortForward,
                ) if !query.all("dryRun").is_empty() => {
                    Err(ApiError::bad_request("dryRun is not supported"))
                }
                (Method::GET | Method::POST, Subresource::Attach | Subresource::Exec) => {
                    // A WebSocket upgrade is a GET, authorized as `get`; from
                    // 1.35 (the version this server reports) it also needs
                    // `create`, as SPDY's POST always did (kubernetes#134577).
                    let sub = subresource.as_str();
                    if method == Method::GET {
                        authorize(user, "get", "pods", sub, &namespace, &name)?;
                    }
                    authorize(user, "create", "pods", sub, &namespace, &name)?;
                    streams::upgrade(
                        state,
                        &key,
                        subresource == Subresource::Exec,
                        &query,
                        request,
                    )
                }
                (Method::GET | Method::POST, Subresource::PortForward) => {
                    // As attach and exec: a WebSocket GET also needs `get`.
                    if method == Method::GET {
                        authorize(user, "get", "pods", "portforward", &namespace, &name)?;
                    }
                    authorize(user, "create", "pods", "portforward", &namespace, &name)?;
                    portforward::upgrade(state, &key, &query, request)
                }
                _ => Err(ApiError::method_not_allowed()),
            }
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// `299 - "text"`, with `"` and `\\` escaped, as the apiserver's
/// `NewWarningHeader` writes it.
fn warning_header(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    format!("299 - \"{escaped}\"")
}

fn authorize(
    user: &User,
    verb: &str,
    resource: &str,
    subresource: &str,
    namespace: &str,
    name: &str,
) -> Result<(), ApiError> {
    let attributes = Attributes {
        verb,
        resource,
        subresource,
        namespace,
    };
    if user.role.allows(&attributes) {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            user.name,
            verb,
            resource,
            subresource,
            name,
            namespace,
        ))
    }
}

/// kubectl asks for server-side printing with `Accept: application/json;as=Table;…`.
fn wants_table(request: &Request<Incoming>) -> bool {
    request
        .headers()
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("as=Table"))
}

const MAX_BODY: usize = 4 << 20;

pub async fn read_body(request: Request<Incoming>) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt;
    let limited = http_body_util::Limited::new(request.into_body(), MAX_BODY);
    limited
        .collect()
        .await
        .map(|c| c.to_bytes())
        .map_err(|_| ApiError::bad_request("request body too large or unreadable"))
}

/// A continue token: the list's resourceVersion, the last key returned,
/// and how many items the list has returned so far.
fn encode_continue(resource_version: u64, last: &Key, returned: usize) -> String {
    use base64::Engine;
    let raw = json!({"rv": resource_version, "ns": &*last.namespace, "name": &*last.name, "returned": returned})
        .to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn decode_continue(token: &str) -> Result<(u64, Key, usize), ApiError> {
    use base64::Engine;
    let invalid = || {
        ApiError::bad_request("continue key is not valid: illegal base64 data or malformed token")
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| invalid())?;
    let value: Value = serde_json::from_slice(&raw).map_err(|_| invalid())?;
    let rv = value["rv"].as_u64().ok_or_else(invalid)?;
    let ns = value["ns"].as_str().ok_or_else(invalid)?;
    let name = value["name"].as_str().ok_or_else(invalid)?;
    let returned = value["returned"].as_u64().unwrap_or(0) as usize;
    Ok((rv, Key::new(ns, name), returned))
}

fn list(
    state: &SimState,
    filter: &Filter,
    query: &Query,
    as_table: bool,
) -> Result<Response<Body>, ApiError> {
    let limit = query
        .number("limit")?
        .filter(|l| *l > 0)
        .map(|l| l as usize);
    let continued = query
        .get("continue")
        .filter(|c| !c.is_empty())
        .map(decode_continue)
        .transpose()?;
    let (after, pinned_rv, returned_before) = match &continued {
        Some((rv, key, returned)) => (Some(key), Some(*rv), *returned),
        None => (None, None, 0),
    };
    let (items, current_rv, more) = state.store.list(
        filter.kind,
        filter.namespace.as_deref(),
        after,
        limit,
        &|e| filter.matches(e),
    );
    // Later pages report the first page's resourceVersion, so a watch started
    // from it sees every change made while paging.
    let list_rv = pinned_rv.unwrap_or(current_rv);
    let returned = returned_before + items.len();
    let continue_token = match (more, items.last()) {
        (true, Some(last)) => encode_continue(list_rv, &last.key, returned),
        _ => String::new(),
    };
    let printed = matches!(
        filter.kind,
        Kind::Pod
            | Kind::Event
            | Kind::Node
            | Kind::Secret
            | Kind::Service
            | Kind::Endpoints
            | Kind::EndpointSlice
    ) || filter.kind.workload().is_some();
    if as_table && printed {
        let objects: Vec<Value> = items.iter().map(|e| e.value()).collect();
        if let Some(table) = table::of(filter.kind, &objects, list_rv, &continue_token) {
            return Ok(ok_json(&table));
        }
    }
    let mut body =
        BytesMut::with_capacity(64 + items.iter().map(|e| e.json.len() + 1).sum::<usize>());
    let mut metadata = json!({"resourceVersion": list_rv.to_string()});
    if !continue_token.is_empty() {
        metadata["continue"] = json!(continue_token);
        // As the apiserver: how many items are left, only when no selector
        // makes that a guess.
        if !filter.selects() {
            let total = state.store.count(filter.kind, filter.namespace.as_deref());
            metadata["remainingItemCount"] = json!(total.saturating_sub(returned));
        }
    }
    body.put_slice(
        format!(
            r#"{{"kind":"{}List","apiVersion":"{}","metadata":{},"items":["#,
            filter.kind.name(),
            filter.kind.api_version(),
            metadata
        )
        .as_bytes(),
    );
    for (i, entry) in items.iter().enumerate() {
        if i > 0 {
            body.put_u8(b',');
        }
        body.put_slice(&entry.json);
    }
    body.put_slice(b"]}");
    Ok(ok_bytes(body.freeze()))
}

/// A PUT or a PATCH of a pod or of its ephemeral containers, with its
/// verb and its options (`dryRun`, `fieldValidation`) read from the query.
struct Writing {
    verb: &'static str,
    is_patch: bool,
    dry_run: bool,
    fields: super::field_validation::Directive,
    /// `fieldManager`, if the request names one.
    manager: Option<String>,
}

impl Writing {
    fn of(method: &Method, query: &Query) -> Result<Self, ApiError> {
        let is_patch = method == Method::PATCH;
        let (verb, options) = if is_patch {
            ("patch", "PatchOptions")
        } else {
            ("update", "UpdateOptions")
        };
        Ok(Writing {
            verb,
            is_patch,
            dry_run: query.dry_run(options)?,
            fields: super::field_validation::Directive::of(query, options)?,
            manager: query
                .get("fieldManager")
                .filter(|m| !m.is_empty())
                .map(String::from),
        })
    }

    /// Reads the body, hands it to `update`, and answers the pod with
    /// admission's warnings.
    async fn apply(
        self,
        request: Request<Incoming>,
        update: impl FnOnce(ephemeral::Request<'_>, bool) -> Result<ephemeral::Updated, ApiError>,
    ) -> Result<Response<Body>, ApiError> {
        let header = |name| {
            request
                .headers()
                .get(name)
                .and_then(|v: &hyper::header::HeaderValue| v.to_str().ok())
                .unwrap_or_default()
                .to_string()
        };
        let content_type = header(hyper::header::CONTENT_TYPE);
        let manager = match &self.manager {
            Some(manager) => manager.clone(),
            None => header(hyper::header::USER_AGENT)
                .split('/')
                .next()
                .unwrap_or_default()
                .chars()
                .take(128)
                .collect(),
        };
        let body = read_body(request).await?;
        let updated = update(
            ephemeral::Request {
                is_patch: self.is_patch,
                content_type: &content_type,
                body: &body,
                fields: self.fields,
                manager: &manager,
            },
            self.dry_run,
        )?;
        Ok(with_warnings(ok_bytes(updated.pod), updated.warnings))
    }
}

/// `Warning: 299` headers, one per warning.
fn with_warnings(mut response: Response<Body>, warnings: Vec<String>) -> Response<Body> {
    for text in warnings {
        if let Ok(value) = warning_header(&text).parse() {
            response.headers_mut().append(hyper::header::WARNING, value);
        }
    }
    response
}

/// DELETE a pod: with a grace period it turns Terminating first, as a real
/// kubelet would stop its containers, then disappears.
pub(crate) fn delete_pod(
    state: &Arc<SimState>,
    key: &Key,
    query: &Query,
    body: &[u8],
) -> Result<Response<Body>, ApiError> {
    // The options come from the body when it has any, else from the query
    // (a body's presence silences the query, as in the apiserver).
    let options: Value = if body.is_empty() {
        json!({
            "gracePeriodSeconds": query.number("gracePeriodSeconds")?,
            "dryRun": query.all("dryRun"),
        })
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
    };
    let dry_run: Vec<String> = options["dryRun"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect();
    let dry_run = super::http::dry_run(&dry_run, "DeleteOptions")?;
    let current = state
        .store
        .get(Kind::Pod, key)
        .ok_or_else(|| ApiError::not_found("pods", &key.name))?;
    let pod = current.value();
    let finished = matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    );
    let grace = match options["gracePeriodSeconds"].as_i64().or_else(|| {
        pod.pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
    }) {
        // A pod that never ran, or has ended, goes at once.
        _ if finished || pod["spec"]["nodeName"].is_null() => 0,
        // A negative grace period is the shortest one, not none.
        Some(negative) if negative < 0 => 1,
        Some(grace) => grace,
        None => 30,
    };
    let now = jiff::Timestamp::now();
    let terminating = |mut pod: Value| {
        pod["metadata"]["deletionTimestamp"] =
            json!((now + jiff::SignedDuration::from_secs(grace)).to_string());
        pod["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
        pod
    };
    if dry_run {
        // The pod as the delete would leave it; nothing changes.
        let answer = if grace == 0 { pod } else { terminating(pod) };
        return Ok(ok_json(&answer));
    }
    state.kubelet.stop_pod(key);
    if grace == 0 {
        let gone = state
            .store
            .delete(Kind::Pod, key)
            .map_err(|_| ApiError::not_found("pods", &key.name))?;
        return Ok(ok_bytes(gone.json.clone()));
    }
    let updated = state
        .store
        .update::<ApiError>(Kind::Pod, key, None, |pod| Ok(terminating(pod)))
        .map_err(|_| ApiError::not_found("pods", &key.name))??;
    // The simulated kubelet finishes well within the grace period. Only
    // this pod goes: a StatefulSet's replacement has its name, not its uid.
    let store = state.store.clone();
    let key = key.clone();
    let uid = current.value()["metadata"]["uid"].clone();
    let wait = Duration::from_secs(grace.min(2) as u64);
    tokio::spawn(async move {
        tokio::time::sleep(wait).await;
        let same = store
            .get(Kind::Pod, &key)
            .is_some_and(|e| e.value()["metadata"]["uid"] == uid);
        if same {
            let _ = store.delete(Kind::Pod, &key);
        }
    });
    Ok(ok_bytes(updated.json.clone()))
}

fn version() -> Value {
    json!({
        "major": "1",
        "minor": "35",
        "gitVersion": "v1.35.0-podbay-sim",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

fn api_versions(state: &SimState) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": state.addr.to_string()}],
    })
}

/// `/apis`: the groups served besides the core group.
fn api_groups() -> Value {
    let groups: Vec<Value> = super::http::GROUPS
        .iter()
        .map(|(group, version)| {
            let version = json!({"groupVersion": format!("{group}/{version}"), "version": version});
            json!({"name": group, "versions": [version], "preferredVersion": version})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/apps/v1` (Deployments, ReplicaSets, StatefulSets, DaemonSets)
/// and `/apis/batch/v1` (Jobs, CronJobs), read-only (their controllers
/// run inside the simulator: see `controllers`).
fn group_resources(group: &str) -> Value {
    let resource = |name: &str, kind: &str, short: &str| {
        let mut resource = json!({
            "name": name, "singularName": kind.to_lowercase(), "namespaced": true, "kind": kind,
            "verbs": ["get", "list", "watch"], "storageVersionHash": "",
        });
        // `kubectl get all` reads the workloads, not the endpoints.
        if kind != "EndpointSlice" {
            resource["categories"] = json!(["all"]);
        }
        if !short.is_empty() {
            resource["shortNames"] = json!([short]);
        }
        resource
    };
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": format!("{group}/v1"),
        "resources": match group {
            "batch" => vec![resource("cronjobs", "CronJob", "cj"), resource("jobs", "Job", "")],
            "discovery.k8s.io" => vec![resource("endpointslices", "EndpointSlice", "")],
            _ => vec![
                resource("daemonsets", "DaemonSet", "ds"),
                resource("deployments", "Deployment", "deploy"),
                resource("replicasets", "ReplicaSet", "rs"),
                resource("statefulsets", "StatefulSet", "sts"),
            ],
        },
    })
}

fn core_resources() -> Value {
    let resource = |name: &str, kind: &str, namespaced: bool, verbs: &[&str], short: &[&str]| {
        let mut r = json!({
            "name": name, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": verbs,
        });
        if !short.is_empty() {
            r["shortNames"] = json!(short);
        }
        if !name.contains('/') {
            r["singularName"] = json!(kind.to_lowercase());
            r["storageVersionHash"] = json!("");
        }
        r
    };
    let mut pods = resource(
        "pods",
        "Pod",
        true,
        &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
        &["po"],
    );
    pods["categories"] = json!(["all"]);
    let mut services = resource(
        "services",
        "Service",
        true,
        &["get", "list", "watch"],
        &["svc"],
    );
    services["categories"] = json!(["all"]);
    json!({
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [
            resource("events", "Event", true, &["get", "list", "watch"], &["ev"]),
            resource("namespaces", "Namespace", false, &["get", "list", "watch"], &["ns"]),
            resource("nodes", "Node", false, &["get", "list", "watch"], &["no"]),
            pods,
            resource("pods/attach", "PodAttachOptions", true, &["create", "get"], &[]),
            resource("pods/ephemeralcontainers", "Pod", true, &["get", "patch", "update"], &[]),
            resource("pods/exec", "PodExecOptions", true, &["create", "get"], &[]),
            resource("pods/log", "Pod", true, &["get"], &[]),
            resource("pods/portforward", "PodPortForwardOptions", true, &["create", "get"], &[]),
            resource("secrets", "Secret", true, &["get", "list", "watch"], &[]),
            services,
            resource("endpoints", "Endpoints", true, &["get", "list", "watch"], &["ep"]),
        ],
    })
}

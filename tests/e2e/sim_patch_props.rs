//! The simulator's patch handling under arbitrary input: strategic merge,
//! JSON merge and JSON patch bodies (arbitrary JSON, bytes that are not
//! JSON, and valid patches with parts mutated), and PUTs of mutated pods,
//! sent to `pods/{name}/ephemeralcontainers`. The handler never panics;
//! what it rejects it rejects with a 4xx `Status`; what it accepts is
//! still a pod that podbay can show. Plus a few of these over HTTPS,
//! to the subresource and to the pod itself.

use crate::support::{self, json};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use json::{Mutation, any_json, mutate, mutation};
use k8s_openapi::api::core::v1::Pod;
use podbay::sim::kubelet::{Kubelet, KubeletConfig};
use podbay::sim::rbac::Users;
use podbay::sim::status::ApiError;
use podbay::sim::store::{Key, Kind, Store};
use podbay::sim::{Faults, SimOptions, SimState, ephemeral};
use proptest::prelude::*;
use serde_json::{Value, json};

const CONTENT_TYPES: [&str; 6] = [
    "application/strategic-merge-patch+json",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
    "",
];

/// A simulator state holding only `shop/redis-0` of the demo scenario;
/// its kubelet never runs (no runtime drives what it spawns).
fn state() -> (Arc<SimState>, Key, Value) {
    let pod = podbay::sim::scenario::demo(jiff::Timestamp::now())
        .into_iter()
        .find(|p| p["metadata"]["name"] == "redis-0")
        .expect("the demo has redis-0");
    let store = Arc::new(Store::new());
    let key = Key::new("shop", "redis-0");
    store
        .create(Kind::Pod, key.clone(), pod)
        .expect("pod stored");
    let stored = store.get(Kind::Pod, &key).expect("stored").value();
    let kubelet = Kubelet::new(
        store.clone(),
        KubeletConfig {
            pull_delay: Duration::from_secs(3600),
            pull_backoff: Duration::from_secs(3600),
            shim: env!("CARGO_BIN_EXE_podbay").into(),
            namespaces: false,
            api: SocketAddr::from(([127, 0, 0, 1], 0)),
        },
    )
    .expect("a scratch directory");
    let state = Arc::new(SimState {
        store,
        kubelet,
        users: Users::generate(),
        faults: Faults::default(),
        options: SimOptions::default(),
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        ca_pem: String::new(),
        metrics: Default::default(),
    });
    (state, key, stored)
}

fn debugger(name: &str) -> Value {
    json!({"name": name, "image": "busybox:1.36", "command": ["sh"], "stdin": true, "tty": true,
        "targetContainerName": "redis"})
}

/// A valid body for each content type (and the PUT body: the whole pod).
fn valid_body(content_type: &str, pod: &Value) -> Value {
    match content_type {
        "application/json-patch+json" => {
            json!([{"op": "add", "path": "/spec/ephemeralContainers", "value": [debugger("dbg")]}])
        }
        "application/merge-patch+json" => {
            json!({"spec": {"ephemeralContainers": [debugger("dbg")]}})
        }
        "put" => {
            let mut pod = pod.clone();
            pod["spec"]["ephemeralContainers"] = json!([debugger("dbg")]);
            pod
        }
        _ => json!({"spec": {"ephemeralContainers": [debugger("dbg")],
            "$setElementOrder/ephemeralContainers": [{"name": "dbg"}]}}),
    }
}

/// Sends one request to the handler and checks the outcome.
fn check(content_type: &str, body: &[u8]) -> Result<(), TestCaseError> {
    let (state, key, _) = state();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let _inside = runtime.enter();
    let is_patch = content_type != "put";
    match ephemeral::update(
        &state,
        &key,
        ephemeral::Request {
            is_patch,
            content_type,
            body,
            fields: Default::default(),
            manager: "test",
        },
        false,
    )
    .map(|u| u.pod)
    {
        Ok(json) => {
            let pod: Pod = serde_json::from_slice(&json)
                .map_err(|e| TestCaseError::fail(format!("accepted, but not a pod: {e}")))?;
            let _ = podbay::model::PodRow::from_pod(&pod);
            let _ = podbay::model::PodDetail::from_pod(&pod);
            let stored = state.store.get(Kind::Pod, &key).expect("still there");
            prop_assert_eq!(
                &stored.json[..],
                &json[..],
                "the response is what was stored"
            );
        }
        Err(error) => check_error(&error)?,
    }
    Ok(())
}

fn check_error(error: &ApiError) -> Result<(), TestCaseError> {
    prop_assert!(
        (400..500).contains(&error.code),
        "rejected with {} {}: {}",
        error.code,
        error.reason,
        error.message
    );
    let status = error.to_status();
    prop_assert_eq!(&status["kind"], "Status");
    prop_assert_eq!(&status["code"], &json!(error.code));
    prop_assert!(!error.message.is_empty());
    Ok(())
}

fn content_type() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        4 => proptest::sample::select(&CONTENT_TYPES[..3]),
        1 => proptest::sample::select(&CONTENT_TYPES[3..]),
        1 => Just("application/strategic-merge-patch+json; charset=utf-8"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn arbitrary_json_bodies(content_type in content_type(), body in any_json()) {
        check(content_type, body.to_string().as_bytes())?;
    }

    #[test]
    fn arbitrary_json_under_spec(content_type in content_type(), list in any_json(), other in any_json()) {
        let body = json!({"spec": {"ephemeralContainers": list, "containers": other}});
        check(content_type, body.to_string().as_bytes())?;
    }

    #[test]
    fn bytes_that_are_not_json_are_a_400(
        content_type in content_type(),
        body in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let (state, key, _) = state();
        let parsed = serde_json::from_slice::<Value>(&body);
        match ephemeral::update(&state, &key, ephemeral::Request { is_patch: true, content_type, body: &body, fields: Default::default(), manager: "test" }, false) {
            Err(error) => {
                check_error(&error)?;
                if parsed.is_err() {
                    prop_assert_eq!(error.code, 400);
                }
            }
            Ok(_) => prop_assert!(parsed.is_ok(), "accepted bytes that are not JSON"),
        }
    }

    #[test]
    fn mutated_valid_patches(
        content_type in prop_oneof![
            Just("application/strategic-merge-patch+json"),
            Just("application/merge-patch+json"),
            Just("application/json-patch+json"),
            Just("put"),
        ],
        mutations in proptest::collection::vec(mutation(), 0..5),
    ) {
        let (_, _, pod) = state();
        let mut body = valid_body(content_type, &pod);
        mutate(&mut body, &mutations);
        check(content_type, body.to_string().as_bytes())?;
    }

    #[test]
    fn two_mutated_patches_in_a_row(
        first in proptest::collection::vec(mutation(), 0..3),
        second in proptest::collection::vec(mutation(), 0..3),
    ) {
        // The second patch meets an object the first may have changed.
        let (state, key, pod) = state();
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let _inside = runtime.enter();
        let smp = "application/strategic-merge-patch+json";
        let patches: [&Vec<Mutation>; 2] = [&first, &second];
        for (i, mutations) in patches.into_iter().enumerate() {
            let mut body = valid_body(smp, &pod);
            body["spec"]["ephemeralContainers"][0]["name"] = json!(format!("dbg{i}"));
            mutate(&mut body, mutations);
            if let Err(error) = ephemeral::update(&state, &key, ephemeral::Request { is_patch: true, content_type: smp, body: body.to_string().as_bytes(), fields: Default::default(), manager: "test" }, false) {
                check_error(&error)?;
            }
        }
        let stored = state.store.get(Kind::Pod, &key).expect("still there");
        let pod: Pod = serde_json::from_slice(&stored.json).expect("still a pod");
        let _ = podbay::model::PodDetail::from_pod(&pod);
    }
}

#[test]
fn a_valid_patch_of_each_type_is_accepted() {
    for content_type in [
        "application/strategic-merge-patch+json",
        "application/merge-patch+json",
        "application/json-patch+json",
        "put",
    ] {
        let (state, key, pod) = state();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let _inside = runtime.enter();
        let body = valid_body(content_type, &pod).to_string();
        let request = ephemeral::Request {
            is_patch: content_type != "put",
            content_type,
            body: body.as_bytes(),
            fields: Default::default(),
            manager: "test",
        };
        let result = ephemeral::update(&state, &key, request, false);
        let json = result
            .unwrap_or_else(|e| panic!("{content_type}: {e:?}"))
            .pod;
        let pod: Pod = serde_json::from_slice(&json).unwrap();
        let names: Vec<String> = pod
            .spec
            .unwrap()
            .ephemeral_containers
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["dbg"], "{content_type}");
    }
}

/// Over HTTPS, as clients see it: rejections are `Status` objects with a
/// 4xx code, on the subresource and on the pod (which takes no PATCH).
#[tokio::test]
async fn rejections_over_https_are_4xx_status_objects() {
    let sim = support::start_sim(3_600_000).await;
    let client = support::client(&sim, "sim").await;
    let bodies: [(&str, &str, &[u8]); 6] = [
        (
            "ephemeralcontainers",
            "application/strategic-merge-patch+json",
            b"{not json",
        ),
        (
            "ephemeralcontainers",
            "application/strategic-merge-patch+json",
            b"[1, 2]",
        ),
        (
            "ephemeralcontainers",
            "application/json-patch+json",
            br#"[{"op": "jump"}]"#,
        ),
        (
            "ephemeralcontainers",
            "application/merge-patch+json",
            br#"{"spec": {"ephemeralContainers": 7}}"#,
        ),
        ("ephemeralcontainers", "application/yaml", b"{}"),
        // A pod's spec may not change where the API forbids it.
        (
            "",
            "application/merge-patch+json",
            br#"{"spec": {"restartPolicy": "Never"}}"#,
        ),
    ];
    for (subresource, content_type, body) in bodies {
        let uri = match subresource {
            "" => "/api/v1/namespaces/shop/pods/redis-0".to_string(),
            s => format!("/api/v1/namespaces/shop/pods/redis-0/{s}"),
        };
        let request = hyper::Request::builder()
            .method(hyper::Method::PATCH)
            .uri(&uri)
            .header(hyper::header::CONTENT_TYPE, content_type)
            .body(kube::client::Body::from(body.to_vec()))
            .unwrap();
        let response = client.send(request).await.expect("a response");
        let code = response.status().as_u16();
        let bytes: Bytes = {
            use http_body_util::BodyExt;
            response
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes()
        };
        let status: Value = serde_json::from_slice(&bytes).expect("a JSON body");
        assert!((400..500).contains(&code), "{uri} {content_type}: {code}");
        assert_eq!(status["kind"], "Status", "{uri}: {status}");
        assert_eq!(status["code"], code, "{uri}: {status}");
    }
}

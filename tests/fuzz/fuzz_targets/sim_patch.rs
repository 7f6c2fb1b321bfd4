//! Bytes as a PATCH or PUT of `pods/redis-0/ephemeralcontainers` to the
//! simulator's handler: the first byte picks the content type (and PUT),
//! the rest is the body. It never panics; rejections are 4xx; what it
//! accepts is stored and still a pod.
#![no_main]

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use libfuzzer_sys::fuzz_target;
use podbay::sim::kubelet::{Kubelet, KubeletConfig};
use podbay::sim::rbac::Users;
use podbay::sim::store::{Key, Kind, Store};
use podbay::sim::{Faults, SimOptions, SimState, ephemeral};
use serde_json::Value;

const CONTENT_TYPES: [&str; 5] = [
    "application/strategic-merge-patch+json",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
];

fn redis() -> &'static Value {
    static POD: OnceLock<Value> = OnceLock::new();
    POD.get_or_init(|| {
        podbay::sim::scenario::demo(jiff::Timestamp::now())
            .into_iter()
            .find(|p| p["metadata"]["name"] == "redis-0")
            .expect("the demo has redis-0")
    })
}

fuzz_target!(|data: &[u8]| {
    let [selector, body @ ..] = data else {
        return;
    };
    let store = Arc::new(Store::new());
    let key = Key::new("shop", "redis-0");
    store
        .create(Kind::Pod, key.clone(), redis().clone())
        .expect("stored");
    let state = Arc::new(SimState {
        kubelet: Kubelet::new(
            store.clone(),
            KubeletConfig {
                pull_delay: Duration::from_secs(3600),
                pull_backoff: Duration::from_secs(3600),
            },
        )
        .expect("a scratch directory"),
        store,
        users: Users::generate(),
        faults: Faults::default(),
        options: SimOptions::default(),
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        ca_pem: String::new(),
    });
    // Never driven, and dropped with what the kubelet spawned for new
    // containers: nothing runs, nothing piles up from one input to the next.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let _inside = runtime.enter();
    let is_patch = selector & 0x80 == 0;
    let content_type = CONTENT_TYPES[usize::from(selector & 0x7f) % CONTENT_TYPES.len()];
    match ephemeral::update(&state, &key, ephemeral::Request { is_patch, content_type, body, fields: Default::default(), manager: "test" }, false) {
        Ok(json) => {
            let pod: Pod = serde_json::from_slice(&json).expect("an accepted update is a pod");
            let _ = podbay::model::PodDetail::from_pod(&pod);
        }
        Err(error) => assert!((400..500).contains(&error.code), "{error:?}"),
    }
});

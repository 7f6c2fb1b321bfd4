//! Shared helpers for integration tests: a simulator per test and clients for it.
#![allow(dead_code)]

use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use podbay::sim::{Sim, SimHandle, SimOptions};

pub async fn start_sim(pull_delay_ms: u64) -> SimHandle {
    Sim::start(SimOptions {
        pull_delay: Duration::from_millis(pull_delay_ms),
        pull_backoff: Duration::from_millis(500),
        bookmark_interval: Duration::from_millis(300),
        ..SimOptions::default()
    })
    .await
    .expect("simulator starts")
}

/// A kube-rs client for one of the simulator's contexts (`sim`, `sim-viewer`, `sim-dev`).
pub async fn client(sim: &SimHandle, context: &str) -> kube::Client {
    let kubeconfig: Kubeconfig =
        serde_json::from_value(sim.kubeconfig()).expect("kubeconfig parses");
    let options = KubeConfigOptions {
        context: Some(context.to_string()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .expect("kubeconfig loads");
    kube::Client::try_from(config).expect("client builds")
}

/// Polls `check` until it returns `Some`, failing the test after `secs`.
pub async fn eventually<T, F, Fut>(secs: u64, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

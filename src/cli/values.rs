//! The values the command line takes, each parsed (and refused) in one
//! place: targets, selectors, images, durations, sizes, contexts.

use std::time::Duration;

use super::DebugTarget;
use crate::model::owner::OwnerKind;
use crate::model::parse_duration;

pub(super) fn parse_forward_target(
    s: &str,
) -> Result<crate::model::forward::ForwardTarget, String> {
    crate::model::forward::ForwardTarget::parse(s)
}

pub(super) fn parse_port_mapping(s: &str) -> Result<crate::model::forward::PortMapping, String> {
    crate::model::forward::PortMapping::parse(s)
}

/// The clusters `--context` names: several, comma-separated (`a,b`), each
/// once in the order given; `None` is the kubeconfig's current context.
pub fn contexts(given: Option<&str>) -> Vec<Option<String>> {
    let Some(given) = given else {
        return vec![None];
    };
    let mut named: Vec<Option<String>> = Vec::new();
    for context in given.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        if !named.iter().flatten().any(|seen| seen == context) {
            named.push(Some(context.to_string()));
        }
    }
    if named.is_empty() {
        // `--context ""`: the kubeconfig's own sentence about it.
        named.push(Some(given.to_string()));
    }
    named
}

/// `NAME`, kubectl's `TYPE/NAME` for a pod (`pod/`, `pods/`, `po/`), or an
/// owner (`deploy/NAME`, …).
pub(super) fn parse_pod(s: &str) -> Result<DebugTarget, String> {
    let Some((kind, name)) = s.split_once('/') else {
        return Ok(DebugTarget::Pod(s.to_string()));
    };
    let named = !name.is_empty() && !name.contains('/');
    match kind.to_ascii_lowercase().as_str() {
        "pod" | "pods" | "po" if named => Ok(DebugTarget::Pod(name.to_string())),
        "node" | "nodes" | "no" if named => Ok(DebugTarget::Node(name.to_string())),
        "svc" | "service" | "services" if named => Ok(DebugTarget::Service(name.to_string())),
        word => match OwnerKind::from_word(word) {
            Some(kind) if named => Ok(DebugTarget::Owner {
                kind,
                name: name.to_string(),
            }),
            _ => Err(format!(
                "{s:?} is not a pod, a node, a Service or a workload: give NAME, pod/NAME, node/NAME, svc/NAME, or one of deploy/, rs/, sts/, ds/, job/ and a NAME"
            )),
        },
    }
}

/// A label selector that selects something less than everything: an
/// empty one is every pod, and a debug container can never be removed.
pub(super) fn parse_selector(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err(
            "an empty selector matches every pod, and debug containers can never be removed: give labels (app=web), or name the pods".into(),
        );
    }
    Ok(s.to_string())
}

pub(super) fn parse_set_image(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, image)) if !name.is_empty() && !image.is_empty() => {
            parse_image(image).map(|image| (name.to_string(), image))
        }
        _ => Err(format!(
            "expected NAME=IMAGE (NAME a container, or *), got {s:?}"
        )),
    }
}

pub(super) fn parse_env(s: &str) -> Result<(String, String), String> {
    crate::model::debug::env_var(s).ok_or_else(|| format!("expected K=V, got {s:?}"))
}

pub(super) fn parse_mount(s: &str) -> Result<(String, String), String> {
    crate::model::debug::volume_mount(s).ok_or_else(|| {
        format!("expected VOLUME:/absolute/path (one of the pod's volumes), got {s:?}")
    })
}

pub(super) fn parse_image(s: &str) -> Result<String, String> {
    crate::model::image::validate_reference(s).map(|()| s.to_string())
}

/// A duration that leaves time to do something: more than zero.
pub(super) fn parse_timeout(s: &str) -> Result<Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err(format!(
            "{s:?} leaves no time to wait for anything: use e.g. 30s, 2m"
        )),
        d => Ok(d),
    }
}

/// `1048576`, `500K`, `500M`, `10G`, `1T` (powers of 1024; `Mi`, `MiB`
/// and `MB` read the same), more than zero.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let wrong = || format!("invalid size {s:?}: use e.g. 500M, 10G");
    let text = s.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().map_err(|_| wrong())?;
    let unit = unit.trim_start().to_ascii_uppercase();
    let unit = unit.trim_end_matches('B').trim_end_matches('I');
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(wrong()),
    };
    match number.checked_mul(1 << shift) {
        Some(0) => Err(format!("{s:?} takes nothing: use e.g. 500M, 10G")),
        Some(bytes) => Ok(bytes),
        None => Err(wrong()),
    }
}

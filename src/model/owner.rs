//! The workloads whose pods a command can name at once, as kubectl names
//! them (`deploy/NAME`, `sts/NAME`, …), and the label selector that picks
//! those pods out of a namespace.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OwnerKind {
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Job,
}

impl OwnerKind {
    pub const ALL: [OwnerKind; 5] = [
        OwnerKind::Deployment,
        OwnerKind::ReplicaSet,
        OwnerKind::StatefulSet,
        OwnerKind::DaemonSet,
        OwnerKind::Job,
    ];

    /// kubectl's names for the kind: singular, plural and short.
    pub fn from_word(word: &str) -> Option<OwnerKind> {
        Some(match word.to_ascii_lowercase().as_str() {
            "deploy" | "deployment" | "deployments" => OwnerKind::Deployment,
            "rs" | "replicaset" | "replicasets" => OwnerKind::ReplicaSet,
            "sts" | "statefulset" | "statefulsets" => OwnerKind::StatefulSet,
            "ds" | "daemonset" | "daemonsets" => OwnerKind::DaemonSet,
            "job" | "jobs" => OwnerKind::Job,
            _ => return None,
        })
    }

    pub fn group(self) -> &'static str {
        match self {
            OwnerKind::Job => "batch",
            _ => "apps",
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            OwnerKind::Deployment => "Deployment",
            OwnerKind::ReplicaSet => "ReplicaSet",
            OwnerKind::StatefulSet => "StatefulSet",
            OwnerKind::DaemonSet => "DaemonSet",
            OwnerKind::Job => "Job",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            OwnerKind::Deployment => "deployments",
            OwnerKind::ReplicaSet => "replicasets",
            OwnerKind::StatefulSet => "statefulsets",
            OwnerKind::DaemonSet => "daemonsets",
            OwnerKind::Job => "jobs",
        }
    }

    /// The short name kubectl prints (`deploy`, `sts`, …).
    pub fn short(self) -> &'static str {
        match self {
            OwnerKind::Deployment => "deploy",
            OwnerKind::ReplicaSet => "rs",
            OwnerKind::StatefulSet => "sts",
            OwnerKind::DaemonSet => "ds",
            OwnerKind::Job => "job",
        }
    }
}

impl fmt::Display for OwnerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short())
    }
}

/// A workload object's `spec.selector` (its JSON) as a query; `None` when
/// it has none, cannot be read, or would select everything (empty).
pub fn spec_selector(object: &serde_json::Value) -> Option<String> {
    let selector: LabelSelector =
        serde_json::from_value(object.get("spec")?.get("selector")?.clone()).ok()?;
    selector_query(&selector).filter(|query| !query.is_empty())
}

/// A Service's `spec.selector` (a plain map, not a workload's
/// LabelSelector) as a query; `None` when it has none: its endpoints are
/// kept by hand, and it names no pods.
pub fn service_selector(service: &serde_json::Value) -> Option<String> {
    let terms: Vec<String> = service["spec"]["selector"]
        .as_object()?
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    (!terms.is_empty()).then(|| terms.join(","))
}

/// `spec.selector` as a `labelSelector` query: `k=v` for each matchLabels
/// entry, then the expressions (`k in (a,b)`, `k notin (a)`, `k`, `!k`).
/// `None` for an operator the API does not define (nothing is guessed).
pub fn selector_query(selector: &LabelSelector) -> Option<String> {
    let mut terms: Vec<String> = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default().join(",");
        terms.push(match e.operator.as_str() {
            "In" => format!("{} in ({values})", e.key),
            "NotIn" => format!("{} notin ({values})", e.key),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            _ => return None,
        });
    }
    Some(terms.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    #[test]
    fn kubectls_words_name_the_kinds() {
        for kind in OwnerKind::ALL {
            assert_eq!(OwnerKind::from_word(kind.short()), Some(kind));
            assert_eq!(OwnerKind::from_word(kind.plural()), Some(kind));
            assert_eq!(
                OwnerKind::from_word(&kind.kind().to_lowercase()),
                Some(kind)
            );
        }
        assert_eq!(OwnerKind::from_word("Deploy"), Some(OwnerKind::Deployment));
        assert_eq!(OwnerKind::from_word("svc"), None);
        assert_eq!(OwnerKind::Job.group(), "batch");
    }

    #[test]
    fn selectors_become_the_query_kubectl_sends() {
        let selector = LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into()),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "In".into(),
                    values: Some(vec!["a".into(), "b".into()]),
                },
                LabelSelectorRequirement {
                    key: "canary".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        assert_eq!(
            selector_query(&selector).as_deref(),
            Some("app=web,tier in (a,b),!canary")
        );
        let odd = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "k".into(),
                operator: "Near".into(),
                values: None,
            }]),
            ..LabelSelector::default()
        };
        assert_eq!(selector_query(&odd), None);
    }
}

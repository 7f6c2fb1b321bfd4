//! What went wrong, for the user: one sentence, and the permission or the
//! Pod Security level that refused, when that was the cause. Reading a
//! server's error into one is `cluster::errors`'s job.

use crate::model::pod_security::Policy;
use crate::model::text::Printable;

/// A permission the cluster refused, parsed from its 403 message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub verb: String,
    /// `pods`, or `pods/ephemeralcontainers` for a subresource.
    pub resource: String,
    /// `None` at cluster scope.
    pub namespace: Option<String>,
}

impl Denied {
    /// Parses `… cannot VERB resource "RES" in API group "" in the namespace "NS"`
    /// (or `… at the cluster scope`), the apiserver's RBAC wording.
    pub fn from_message(message: &str) -> Option<Self> {
        let after = message.split(" cannot ").nth(1)?;
        let (verb, rest) = after.split_once(" resource \"")?;
        let (resource, rest) = rest.split_once('"')?;
        // A resource of another group than the core one is named with it,
        // as RBAC rules and `kubectl auth can-i` name it.
        let group = rest
            .split_once("in API group \"")
            .and_then(|(_, group)| group.split_once('"'))
            .map_or("", |(group, _)| group);
        let resource = match resource.split_once('/') {
            _ if group.is_empty() => resource.to_string(),
            Some((resource, sub)) => format!("{resource}.{group}/{sub}"),
            None => format!("{resource}.{group}"),
        };
        let namespace = rest
            .split_once("in the namespace \"")
            .and_then(|(_, ns)| ns.split_once('"'))
            .map(|(ns, _)| ns.to_string());
        Some(Denied {
            verb: verb.to_string(),
            resource,
            namespace,
        })
    }

    /// "You may not list pods at cluster scope (ask for the `list` verb on `pods`)."
    pub fn sentence(&self) -> String {
        let scope = match &self.namespace {
            Some(ns) => format!("in namespace {ns}"),
            None => "at cluster scope".to_string(),
        };
        let why = match (self.verb.as_str(), self.resource.as_str()) {
            ("create", "pods/exec" | "pods/attach" | "pods/portforward") => {
                " (Kubernetes 1.35+ wants it besides `get`)"
            }
            ("get", "pods/exec" | "pods/attach" | "pods/portforward") => {
                " (and `create` from Kubernetes 1.35)"
            }
            _ => "",
        };
        format!(
            "You may not {} {} {scope}: ask your cluster admin for `{}` on `{}`{why}.",
            self.verb, self.resource, self.verb, self.resource
        )
    }
}

/// What went wrong, for the user: one sentence, and the permission that
/// was missing when the server refused (a 403 naming it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub sentence: Printable,
    pub denied: Option<Denied>,
    /// The Pod Security level that refused a debug container, when that
    /// was the refusal (read once, from the 403).
    pub refused_by: Option<Policy>,
}

impl Problem {
    /// A problem that is only its sentence.
    pub fn sentence(sentence: impl Into<Printable>) -> Self {
        Problem {
            sentence: sentence.into(),
            denied: None,
            refused_by: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_namespaced_and_cluster_denials() {
        let d = Denied::from_message(
            "pods \"redis-0\" is forbidden: User \"sim-viewer\" cannot patch resource \"pods/ephemeralcontainers\" in API group \"\" in the namespace \"shop\"",
        )
        .unwrap();
        assert_eq!(d.verb, "patch");
        assert_eq!(d.resource, "pods/ephemeralcontainers");
        assert_eq!(d.namespace.as_deref(), Some("shop"));
        assert_eq!(
            d.sentence(),
            "You may not patch pods/ephemeralcontainers in namespace shop: ask your cluster admin for `patch` on `pods/ephemeralcontainers`."
        );
        let all = Denied::from_message(
            "pods is forbidden: User \"dev\" cannot list resource \"pods\" in API group \"\" at the cluster scope",
        )
        .unwrap();
        assert_eq!(all.namespace, None);
        assert!(all.sentence().contains("at cluster scope"));
        assert_eq!(Denied::from_message("something else"), None);
        let metrics = Denied::from_message(
            "pods.metrics.k8s.io is forbidden: User \"sim-dev\" cannot list resource \"pods\" in API group \"metrics.k8s.io\" at the cluster scope",
        )
        .unwrap();
        assert_eq!(
            metrics.resource, "pods.metrics.k8s.io",
            "not the core group's pods"
        );
        let scale = Denied::from_message(
            "deployments.apps \"web\" is forbidden: User \"u\" cannot patch resource \"deployments/scale\" in API group \"apps\" in the namespace \"shop\"",
        )
        .unwrap();
        assert_eq!(scale.resource, "deployments.apps/scale");
    }

    #[test]
    fn a_refused_terminal_names_the_verb_of_the_servers_version() {
        let denied = |verb: &str| {
            Denied::from_message(&format!(
                "pods \"redis-0\" is forbidden: User \"u\" cannot {verb} resource \"pods/exec\" in API group \"\" in the namespace \"shop\""
            ))
            .unwrap()
            .sentence()
        };
        assert_eq!(
            denied("create"),
            "You may not create pods/exec in namespace shop: ask your cluster admin for `create` on `pods/exec` (Kubernetes 1.35+ wants it besides `get`)."
        );
        assert!(denied("get").ends_with("(and `create` from Kubernetes 1.35)."));
    }
}

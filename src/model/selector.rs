//! A label selector read from an object, matched against the pod list's
//! rows: what narrows the list to a workload's or a Service's pods.

use std::fmt;

use serde_json::{Value, json};

use super::text::sanitize;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    Equals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// Every term must hold (the API's AND). Empty selects nothing here: an
/// empty workload selector is refused by the API, and a Service without
/// one names no pods.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    terms: Vec<Term>,
}

impl Selector {
    /// A workload's `spec.selector` (a `LabelSelector`: `matchLabels` and
    /// `matchExpressions`). An operator the API does not define selects
    /// nothing rather than more than it says.
    pub fn of_label_selector(selector: &Value) -> Selector {
        let text = |v: &Value| sanitize(v.as_str().unwrap_or_default()).into_owned();
        let mut terms: Vec<Term> = selector["matchLabels"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| Term::Equals(sanitize(k).into_owned(), text(v)))
            .collect();
        for expression in selector["matchExpressions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let key = text(&expression["key"]);
            let values = || {
                expression["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(text)
                    .collect()
            };
            terms.push(match expression["operator"].as_str() {
                Some("In") => Term::In(key, values()),
                Some("NotIn") => Term::NotIn(key, values()),
                Some("Exists") => Term::Exists(key),
                Some("DoesNotExist") => Term::DoesNotExist(key),
                _ => return Selector::default(),
            });
        }
        Selector { terms }
    }

    /// A Service's `spec.selector`, a plain map of labels.
    pub fn of_labels(labels: &[(String, String)]) -> Selector {
        Selector {
            terms: labels
                .iter()
                .map(|(k, v)| Term::Equals(k.clone(), v.clone()))
                .collect(),
        }
    }

    /// As a `LabelSelector` (every term an expression): what
    /// [`Selector::of_label_selector`] reads back as the same selector.
    pub fn to_label_selector(&self) -> Value {
        let expressions: Vec<Value> = self
            .terms
            .iter()
            .map(|term| match term {
                Term::Equals(k, v) => json!({"key": k, "operator": "In", "values": [v]}),
                Term::In(k, values) => json!({"key": k, "operator": "In", "values": values}),
                Term::NotIn(k, values) => json!({"key": k, "operator": "NotIn", "values": values}),
                Term::Exists(k) => json!({"key": k, "operator": "Exists"}),
                Term::DoesNotExist(k) => json!({"key": k, "operator": "DoesNotExist"}),
            })
            .collect();
        json!({ "matchExpressions": expressions })
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether a pod with these labels (the pod list's `k=v k=v` text) is
    /// selected.
    pub fn matches(&self, labels: &str) -> bool {
        let value = |key: &str| label(labels, key);
        !self.terms.is_empty()
            && self.terms.iter().all(|term| match term {
                Term::Equals(k, v) => value(k) == Some(v),
                Term::In(k, values) => value(k).is_some_and(|v| values.iter().any(|x| x == v)),
                Term::NotIn(k, values) => value(k).is_none_or(|v| values.iter().all(|x| x != v)),
                Term::Exists(k) => value(k).is_some(),
                Term::DoesNotExist(k) => value(k).is_none(),
            })
    }
}

/// The value of label `key` in the pod list's `k=v k=v` text.
pub fn label<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    labels
        .split(' ')
        .find_map(|label| label.split_once('=').filter(|(k, _)| *k == key))
        .map(|(_, v)| v)
}

/// As `kubectl get -l` takes it: `k=v,k in (a,b),!k`.
impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, term) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match term {
                Term::Equals(k, v) => write!(f, "{k}={v}")?,
                Term::In(k, values) => write!(f, "{k} in ({})", values.join(","))?,
                Term::NotIn(k, values) => write!(f, "{k} notin ({})", values.join(","))?,
                Term::Exists(k) => f.write_str(k)?,
                Term::DoesNotExist(k) => write!(f, "!{k}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `app=web,tier in (front,edge),track notin (canary),team,!legacy`.
    fn every_kind_of_term() -> Selector {
        Selector::of_label_selector(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "edge"]},
                {"key": "track", "operator": "NotIn", "values": ["canary"]},
                {"key": "team", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }))
    }

    /// The apiserver's semantics: `NotIn` and `DoesNotExist` hold for a pod
    /// without the key; `In` and `Exists` need it.
    #[test]
    fn every_term_must_hold() {
        let selector = every_kind_of_term();
        assert_eq!(
            selector.to_string(),
            "app=web,tier in (front,edge),track notin (canary),team,!legacy"
        );
        assert!(selector.matches("app=web tier=edge team=a"));
        assert!(selector.matches("team=a app=web tier=front track=stable"));
        assert!(!selector.matches("app=web tier=edge team=a track=canary"));
        assert!(!selector.matches("app=web tier=back team=a"));
        assert!(!selector.matches("app=web tier=edge"));
        assert!(!selector.matches("app=web tier=edge team=a legacy=1"));
        assert!(!selector.matches("app=webs tier=edge team=a"));
    }

    /// Nothing is guessed: an unknown operator, or no terms, selects none.
    #[test]
    fn an_unreadable_or_empty_selector_selects_nothing() {
        let odd = Selector::of_label_selector(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "x", "operator": "Near"}],
        }));
        assert!(odd.is_empty() && !odd.matches("app=web x=1"));
        assert!(!Selector::of_label_selector(&json!({})).matches("app=web"));
        let service = Selector::of_labels(&[("app".into(), "web".into())]);
        assert!(service.matches("app=web pod-template-hash=1") && !service.matches(""));
    }

    /// A selector kept as a `LabelSelector` selects the same pods read back.
    #[test]
    fn a_selector_written_out_reads_back_the_same() {
        let selector = every_kind_of_term();
        let again = Selector::of_label_selector(&selector.to_label_selector());
        for labels in [
            "app=web tier=front team=a",
            "app=web tier=edge team=a track=canary",
            "app=web tier=front team=a legacy=1",
            "app=web tier=back team=a",
            "app=api tier=front team=a",
        ] {
            assert_eq!(again.matches(labels), selector.matches(labels), "{labels}");
        }
        assert!(again.matches("app=web tier=front team=a"));
        assert_eq!(
            again.to_string(),
            "app in (web),tier in (front,edge),track notin (canary),team,!legacy"
        );
    }
}

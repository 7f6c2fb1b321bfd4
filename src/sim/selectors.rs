//! Label and field selectors with the apiserver's grammar and errors.
//!
//! Labels: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
//! joined by commas (AND). Fields: `f=v`, `f==v`, `f!=v` over the fields a
//! kind supports, with `\,` and `\=` escapes in values.

use super::status::ApiError;

#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector(Vec<LabelRequirement>);

impl LabelSelector {
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let fail = |why: &str| {
            ApiError::bad_request(format!(
                "unable to parse requested label selector {text:?}: {why}"
            ))
        };
        let mut requirements = Vec::new();
        for term in split_top_level(text) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            let requirement = if let Some(key) = term.strip_prefix('!') {
                LabelRequirement::DoesNotExist(valid_key(key.trim()).map_err(|e| fail(&e))?)
            } else if let Some((key, rest)) = split_set_operator(term) {
                let (negated, values) = rest;
                let key = valid_key(key).map_err(|e| fail(&e))?;
                let values = parse_set(values).map_err(|e| fail(&e))?;
                if negated {
                    LabelRequirement::NotIn(key, values)
                } else {
                    LabelRequirement::In(key, values)
                }
            } else if let Some((key, value)) = term.split_once("!=") {
                LabelRequirement::NotEquals(
                    valid_key(key.trim()).map_err(|e| fail(&e))?,
                    valid_value(value.trim()).map_err(|e| fail(&e))?,
                )
            } else if let Some((key, value)) =
                term.split_once("==").or_else(|| term.split_once('='))
            {
                LabelRequirement::Equals(
                    valid_key(key.trim()).map_err(|e| fail(&e))?,
                    valid_value(value.trim()).map_err(|e| fail(&e))?,
                )
            } else {
                LabelRequirement::Exists(valid_key(term).map_err(|e| fail(&e))?)
            };
            requirements.push(requirement);
        }
        Ok(LabelSelector(requirements))
    }

    /// Whether labels (looked up by key) satisfy every requirement.
    pub fn matches<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|r| match r {
            LabelRequirement::Equals(k, v) => label(k) == Some(v.as_str()),
            LabelRequirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            LabelRequirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            LabelRequirement::NotIn(k, vs) => label(k).is_none_or(|l| vs.iter().all(|v| v != l)),
            LabelRequirement::Exists(k) => label(k).is_some(),
            LabelRequirement::DoesNotExist(k) => label(k).is_none(),
        })
    }
}

/// Splits on commas that are not inside `( … )`.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// `key in (…)` / `key notin (…)` → (key, (negated, "(…)")).
fn split_set_operator(term: &str) -> Option<(&str, (bool, &str))> {
    let pos = term
        .find(" in ")
        .map(|p| (p, 4, false))
        .or_else(|| term.find(" notin ").map(|p| (p, 7, true)));
    let (p, len, negated) = pos?;
    Some((term[..p].trim(), (negated, term[p + len..].trim())))
}

fn parse_set(values: &str) -> Result<Vec<String>, String> {
    let inner = values
        .strip_prefix('(')
        .and_then(|v| v.strip_suffix(')'))
        .ok_or_else(|| format!("found '{values}', expected: '('"))?;
    inner.split(',').map(|v| valid_value(v.trim())).collect()
}

/// A qualified name: optional DNS prefix and `/`, then up to 63 of
/// `[A-Za-z0-9_.-]`, starting and ending alphanumeric.
fn valid_key(key: &str) -> Result<String, String> {
    let name = key.rsplit_once('/').map_or(
        key,
        |(prefix, name)| {
            if prefix.is_empty() { "" } else { name }
        },
    );
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(key.to_string())
    } else {
        Err(format!(
            "invalid label key {key:?}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        ))
    }
}

fn valid_value(value: &str) -> Result<String, String> {
    let ok = value.is_empty()
        || (value.len() <= 63
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && value.starts_with(|c: char| c.is_ascii_alphanumeric())
            && value.ends_with(|c: char| c.is_ascii_alphanumeric()));
    if ok {
        Ok(value.to_string())
    } else {
        Err(format!(
            "invalid label value: {value:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        ))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldRequirement {
    field: String,
    value: String,
    negated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector(Vec<FieldRequirement>);

impl FieldSelector {
    pub fn parse(text: &str, supported: &[&str]) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        for term in split_unescaped(text, ',') {
            if term.trim().is_empty() {
                continue;
            }
            let (field, value, negated) = if let Some(i) = find_unescaped(&term, "!=") {
                (&term[..i], &term[i + 2..], true)
            } else if let Some(i) = find_unescaped(&term, "==") {
                (&term[..i], &term[i + 2..], false)
            } else if let Some(i) = find_unescaped(&term, "=") {
                (&term[..i], &term[i + 1..], false)
            } else {
                return Err(ApiError::bad_request(format!(
                    "unable to parse requested field selector {text:?}: invalid selector: '{term}'; can't understand '{term}'"
                )));
            };
            let field = field.trim();
            if !supported.contains(&field) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            requirements.push(FieldRequirement {
                field: field.to_string(),
                value: unescape(value),
                negated,
            });
        }
        Ok(FieldSelector(requirements))
    }

    pub fn matches<'a>(&self, field: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|r| {
            let actual = field(&r.field).unwrap_or_default();
            (actual == r.value) != r.negated
        })
    }

    /// The value of `metadata.name=` when the selector names one object
    /// (the tests read what the parser made of an escaped value with it).
    #[cfg(test)]
    pub fn single_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|r| r.field == "metadata.name" && !r.negated)
            .map(|r| r.value.as_str())
    }
}

fn split_unescaped(text: &str, separator: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            if let Some(p) = parts.last_mut() {
                p.push('\\');
                p.push(c);
            }
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == separator {
            parts.push(String::new());
        } else if let Some(p) = parts.last_mut() {
            p.push(c);
        }
    }
    parts
}

fn find_unescaped(term: &str, operator: &str) -> Option<usize> {
    let bytes = term.as_bytes();
    (0..term.len()).find(|&i| term[i..].starts_with(operator) && (i == 0 || bytes[i - 1] != b'\\'))
}

fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn matches(selector: &str, pairs: &[(&str, &str)]) -> bool {
        let l = labels(pairs);
        LabelSelector::parse(selector)
            .unwrap()
            .matches(|k| l.get(k).map(String::as_str))
    }

    #[test]
    fn equality_and_set_based_label_selectors() {
        let web = [("app", "web"), ("tier", "front")];
        assert!(matches("app=web", &web));
        assert!(matches("app==web,tier=front", &web));
        assert!(!matches("app!=web", &web));
        assert!(matches("app in (web, api)", &web));
        assert!(!matches("app notin (web)", &web));
        assert!(matches("app notin (api),tier", &web));
        assert!(matches("!missing", &web));
        assert!(!matches("!app", &web));
        assert!(matches("app.kubernetes.io/name notin (x)", &web));
        assert!(matches("", &web));
    }

    #[test]
    fn bad_label_selectors_are_400_with_the_apiserver_prefix() {
        for bad in ["app in web", "-app=x", "app=with space", "app in (a b)"] {
            let err = LabelSelector::parse(bad).unwrap_err();
            assert_eq!(err.code, 400, "{bad}");
            assert!(
                err.message
                    .starts_with(&format!("unable to parse requested label selector {bad:?}")),
                "{}",
                err.message
            );
        }
    }

    #[test]
    fn field_selectors_with_escapes_and_unsupported_fields() {
        let supported = ["metadata.name", "status.phase"];
        let s =
            FieldSelector::parse("metadata.name=a\\,b,status.phase!=Failed", &supported).unwrap();
        let get = |f: &str| match f {
            "metadata.name" => Some("a,b"),
            "status.phase" => Some("Running"),
            _ => None,
        };
        assert!(s.matches(get));
        assert_eq!(s.single_name(), Some("a,b"));
        let err = FieldSelector::parse("spec.nope=1", &supported).unwrap_err();
        assert_eq!(err.message, "field label not supported: spec.nope");
        assert!(FieldSelector::parse("metadata.name", &supported).is_err());
        assert!(
            FieldSelector::parse("status.phase==Running", &supported)
                .unwrap()
                .matches(get)
        );
    }
}

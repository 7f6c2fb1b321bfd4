//! Server-side field validation (`fieldValidation=Strict|Warn|Ignore`): a
//! field the API does not know is refused, warned about (the default), or
//! dropped silently, as the apiserver does since 1.27. kubectl relies on it
//! instead of validating against a schema itself once the OpenAPI document
//! says the server takes the parameter.

use serde_json::Value;

use super::http::Query;
use super::status::{ApiError, FieldError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Directive {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl Directive {
    /// The request's directive; `options` names the verb's options kind
    /// for the error (`CreateOptions`, `PatchOptions`, …).
    pub fn of(query: &Query, options: &str) -> Result<Self, ApiError> {
        match query.get("fieldValidation").unwrap_or_default() {
            "" | "Warn" => Ok(Directive::Warn),
            "Ignore" => Ok(Directive::Ignore),
            "Strict" => Ok(Directive::Strict),
            other => Err(ApiError::invalid_options(
                options,
                FieldError::not_supported("fieldValidation", other, &["Ignore", "Warn", "Strict"]),
            )),
        }
    }

    /// What the directive makes of the fields of `sent` that decoding
    /// dropped (`decoded` is the object as the API knows it): an error under
    /// Strict, warnings under Warn.
    pub fn judge(self, kind: &str, sent: &Value, decoded: &Value) -> Result<Vec<String>, ApiError> {
        if self == Directive::Ignore {
            return Ok(Vec::new());
        }
        let mut unknown = Vec::new();
        unknown_fields(sent, decoded, "", &mut unknown);
        let said: Vec<String> = unknown
            .iter()
            .map(|path| format!("unknown field {path:?}"))
            .collect();
        match self {
            Directive::Strict if !said.is_empty() => Err(ApiError::bad_request(format!(
                "{kind} in version \"v1\" cannot be handled as a {kind}: strict decoding error: {}",
                said.join(", ")
            ))),
            _ => Ok(said),
        }
    }
}

/// Paths (`spec.containers[0].colour`) of the fields in `sent` that are
/// missing from `decoded`; a `null` is no field.
fn unknown_fields(sent: &Value, decoded: &Value, path: &str, out: &mut Vec<String>) {
    match (sent, decoded) {
        (Value::Object(sent), Value::Object(decoded)) => {
            for (key, value) in sent {
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match decoded.get(key) {
                    None if !value.is_null() => out.push(inner),
                    Some(known) => unknown_fields(value, known, &inner, out),
                    None => {}
                }
            }
        }
        (Value::Array(sent), Value::Array(decoded)) => {
            for (i, (value, known)) in sent.iter().zip(decoded).enumerate() {
                unknown_fields(value, known, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn query(text: &str) -> Query {
        Query::parse(Some(text))
    }

    #[test]
    fn unknown_fields_are_named_by_their_path() {
        let sent = json!({"spec": {"colour": "red", "containers": [{"name": "a"}, {"name": "b", "size": 3}]}, "status": null});
        let decoded = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(
            Directive::Warn.judge("Pod", &sent, &decoded).unwrap(),
            [
                r#"unknown field "spec.colour""#,
                r#"unknown field "spec.containers[1].size""#
            ]
        );
        let refused = Directive::Strict.judge("Pod", &sent, &decoded).unwrap_err();
        assert_eq!(refused.code, 400);
        assert_eq!(
            refused.message,
            r#"Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.colour", unknown field "spec.containers[1].size""#
        );
        assert!(
            Directive::Ignore
                .judge("Pod", &sent, &decoded)
                .unwrap()
                .is_empty()
        );
        assert!(
            Directive::Strict
                .judge("Pod", &decoded, &decoded)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn the_directive_defaults_to_warn_and_refuses_others() {
        assert_eq!(
            Directive::of(&query(""), "CreateOptions").unwrap(),
            Directive::Warn
        );
        assert_eq!(
            Directive::of(&query("fieldValidation=Strict"), "CreateOptions").unwrap(),
            Directive::Strict
        );
        let refused = Directive::of(&query("fieldValidation=strict"), "PatchOptions").unwrap_err();
        assert_eq!(refused.code, 422);
        assert!(
            refused.message.starts_with(
                r#"PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict""#
            ),
            "{}",
            refused.message
        );
    }
}

//! `Status` error bodies exactly as the Kubernetes apiserver writes them:
//! the same codes, reasons, messages and `details.causes`.

use serde_json::{Value, json};

/// One validation failure on one field, as `k8s.io/apimachinery/pkg/util/validation/field.Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub kind: FieldErrorKind,
    /// Field path such as `spec.ephemeralContainers[0].ports`.
    pub field: String,
    /// The offending value, rendered as Go's `%q`/`%v` would (already quoted for strings).
    pub value: Option<String>,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorKind {
    Required,
    Invalid,
    Duplicate,
    NotFound,
    Forbidden,
    NotSupported,
}

impl FieldError {
    pub fn new(
        kind: FieldErrorKind,
        field: impl Into<String>,
        value: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            kind,
            field: field.into(),
            value,
            detail: detail.into(),
        }
    }

    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::Required, field, None, detail)
    }

    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorKind::Forbidden, field, None, detail)
    }

    pub fn duplicate(field: impl Into<String>, value: &str) -> Self {
        Self::new(FieldErrorKind::Duplicate, field, Some(go_quote(value)), "")
    }

    pub fn not_found(field: impl Into<String>, value: &str) -> Self {
        Self::new(FieldErrorKind::NotFound, field, Some(go_quote(value)), "")
    }

    pub fn invalid(field: impl Into<String>, value: &str, detail: impl Into<String>) -> Self {
        Self::new(
            FieldErrorKind::Invalid,
            field,
            Some(go_quote(value)),
            detail,
        )
    }

    pub fn not_supported(field: impl Into<String>, value: &str, valid: &[&str]) -> Self {
        let valid: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
        Self::new(
            FieldErrorKind::NotSupported,
            field,
            Some(go_quote(value)),
            format!("supported values: {}", valid.join(", ")),
        )
    }

    /// The `reason` of the cause: `FieldValueForbidden` and friends.
    pub fn reason(&self) -> &'static str {
        match self.kind {
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Invalid => "FieldValueInvalid",
            FieldErrorKind::Duplicate => "FieldValueDuplicate",
            FieldErrorKind::NotFound => "FieldValueNotFound",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::NotSupported => "FieldValueNotSupported",
        }
    }

    /// `field.Error.ErrorBody()`: the message without the field path.
    pub fn body(&self) -> String {
        let label = match self.kind {
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Invalid => "Invalid value",
            FieldErrorKind::Duplicate => "Duplicate value",
            FieldErrorKind::NotFound => "Not found",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::NotSupported => "Unsupported value",
        };
        let mut s = label.to_string();
        match self.kind {
            FieldErrorKind::Required | FieldErrorKind::Forbidden => {}
            _ => {
                if let Some(v) = &self.value {
                    s.push_str(": ");
                    s.push_str(v);
                }
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// `field.Error.Error()`: `path: body`.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body())
    }
}

/// Go's `%q` for the plain strings we deal with.
pub fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// An API error, rendered as a `Status` object.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl ApiError {
    pub(crate) fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// `pods "x" not found`.
    pub fn not_found(resource: &str, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{resource} \"{name}\" not found"))
            .with_details(json!({"name": name, "kind": resource}))
    }

    /// 404 for an object of `kind`: `deployments.apps "web" not found`.
    pub fn not_found_of(kind: super::store::Kind, name: &str) -> Self {
        let mut details = json!({"name": name, "kind": kind.plural()});
        if !kind.group().is_empty() {
            details["group"] = json!(kind.group());
        }
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", kind.qualified()),
        )
        .with_details(details)
    }

    /// 404 for a path the server does not serve at all.
    pub fn path_not_found() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// RBAC denial, worded as the apiserver's authorizer does. `name` is empty
    /// for collection requests (list, watch, create).
    pub fn forbidden(
        user: &str,
        verb: &str,
        resource: &str,
        subresource: &str,
        name: &str,
        namespace: &str,
    ) -> Self {
        // The apps group's resources are named with it, as the apiserver
        // names them (`deployments.apps "web" is forbidden: … in API group "apps"`).
        let group = super::store::Kind::ALL
            .into_iter()
            .find(|k| k.plural() == resource)
            .map_or("", |k| k.group());
        Self::forbidden_in(user, verb, group, resource, subresource, name, namespace)
    }

    /// [`Self::forbidden`] for a resource of `group`.
    pub fn forbidden_in(
        user: &str,
        verb: &str,
        group: &str,
        resource: &str,
        subresource: &str,
        name: &str,
        namespace: &str,
    ) -> Self {
        // The subject names the resource without its subresource, as
        // `responsewriters.Forbidden` builds it.
        let full = if subresource.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}/{subresource}")
        };
        let qualified = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        let subject = if name.is_empty() {
            format!("{qualified} is forbidden")
        } else {
            format!("{qualified} \"{name}\" is forbidden")
        };
        let scope = if namespace.is_empty() {
            " at the cluster scope".to_string()
        } else {
            format!(" in the namespace \"{namespace}\"")
        };
        let message = format!(
            "{subject}: User \"{user}\" cannot {verb} resource \"{full}\" in API group \"{group}\"{scope}"
        );
        let mut details = json!({"kind": resource});
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        if !name.is_empty() {
            details["name"] = json!(name);
        }
        Self::new(403, "Forbidden", message).with_details(details)
    }

    /// An admission plugin's refusal of a pod: `pods "x" is forbidden: …`.
    pub fn admission_forbidden(message: String, name: &str) -> Self {
        Self::new(403, "Forbidden", message).with_details(json!({"name": name, "kind": "pods"}))
    }

    /// A create whose name is taken.
    pub fn already_exists(resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{resource} \"{name}\" already exists"),
        )
        .with_details(json!({"name": name, "kind": resource}))
    }

    /// Optimistic concurrency failure on update.
    pub fn conflict(resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
        )
        .with_details(json!({"name": name, "kind": resource}))
    }

    /// `410 Gone` with reason `Expired`, as for a compacted resourceVersion.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// `422 Invalid` for `kind` named `name`, with one cause per field error.
    pub fn invalid(kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let joined = match errors {
            [one] => one.message(),
            many => format!(
                "[{}]",
                many.iter()
                    .map(FieldError::message)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| json!({"reason": e.reason(), "message": e.body(), "field": e.field}))
            .collect();
        Self::new(
            422,
            "Invalid",
            format!("{kind} \"{name}\" is invalid: {joined}"),
        )
        .with_details(json!({"name": name, "kind": kind, "causes": causes}))
    }

    /// 422 for a bad value in a request's options (`CreateOptions`,
    /// `DeleteOptions`, …), which live in `meta.k8s.io`.
    pub fn invalid_options(options: &str, error: FieldError) -> Self {
        Self::new(
            422,
            "Invalid",
            format!("{options}.meta.k8s.io \"\" is invalid: {}", error.message()),
        )
        .with_details(json!({"group": "meta.k8s.io", "kind": options, "name": "",
            "causes": [{"reason": error.reason(), "message": error.body(), "field": error.field}]}))
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))
    }

    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json; got {content_type:?}"
            ),
        )
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        )
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ApiError {}

impl From<crate::model::smp::PatchError> for ApiError {
    fn from(error: crate::model::smp::PatchError) -> Self {
        match error {
            crate::model::smp::PatchError::Malformed(m) => ApiError::bad_request(m),
            crate::model::smp::PatchError::Inapplicable(m) => ApiError {
                code: 422,
                reason: "Invalid",
                message: format!(
                    "the server rejected our request due to an error in our request: {m}"
                ),
                details: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_message_matches_the_apiserver() {
        let e = ApiError::forbidden(
            "sim-viewer",
            "patch",
            "pods",
            "ephemeralcontainers",
            "web-1",
            "shop",
        );
        assert_eq!(
            e.message,
            "pods \"web-1\" is forbidden: User \"sim-viewer\" cannot patch resource \"pods/ephemeralcontainers\" in API group \"\" in the namespace \"shop\""
        );
        let status = e.to_status();
        assert_eq!(status["code"], 403);
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(status["details"]["kind"], "pods");
    }

    #[test]
    fn cluster_scope_forbidden_has_no_name() {
        let e = ApiError::forbidden("u", "list", "namespaces", "", "", "");
        assert_eq!(
            e.message,
            "namespaces is forbidden: User \"u\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"
        );
    }

    #[test]
    fn invalid_with_one_and_many_causes() {
        let one = ApiError::invalid(
            "Pod",
            "x",
            &[FieldError::forbidden(
                "spec.ephemeralContainers[0].ports",
                "cannot be set for an Ephemeral Container",
            )],
        );
        assert_eq!(
            one.message,
            "Pod \"x\" is invalid: spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container"
        );
        let s = one.to_status();
        assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueForbidden");
        assert_eq!(
            s["details"]["causes"][0]["field"],
            "spec.ephemeralContainers[0].ports"
        );
        assert_eq!(
            s["details"]["causes"][0]["message"],
            "Forbidden: cannot be set for an Ephemeral Container"
        );

        let many = ApiError::invalid(
            "Pod",
            "x",
            &[
                FieldError::duplicate("spec.ephemeralContainers[0].name", "app"),
                FieldError::required("spec.ephemeralContainers[0].image", ""),
            ],
        );
        assert_eq!(
            many.message,
            "Pod \"x\" is invalid: [spec.ephemeralContainers[0].name: Duplicate value: \"app\", spec.ephemeralContainers[0].image: Required value]"
        );
    }
}

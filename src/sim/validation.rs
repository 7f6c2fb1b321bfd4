//! TEMPORARY validation; replaced by the full implementation on merge.
use super::status::FieldError;
use serde_json::Value;
pub fn default_ephemeral_container(c: &mut Value) {
    c.as_object_mut()
        .map(|m| m.entry("terminationMessagePolicy").or_insert("File".into()));
}
pub fn validate_ephemeral_containers_update(new: &Value, _old: &Value) -> Vec<FieldError> {
    let mut errors = vec![];
    for (i, c) in new["spec"]["ephemeralContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if c.get("ports").is_some() {
            errors.push(FieldError::forbidden(
                format!("spec.ephemeralContainers[{i}].ports"),
                "cannot be set for an Ephemeral Container",
            ));
        }
    }
    errors
}

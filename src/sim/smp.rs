//! TEMPORARY patch functions; replaced by the full implementation on merge.
use super::status::ApiError;
use serde_json::Value;

#[derive(Debug)]
pub struct PatchError(String);
impl From<PatchError> for ApiError {
    fn from(e: PatchError) -> Self {
        ApiError::bad_request(e.0)
    }
}
pub fn apply_merge_patch(original: &Value, patch: &Value) -> Value {
    let mut out = original.clone();
    json_patch::merge(&mut out, patch);
    out
}
pub fn apply_strategic_merge_patch(original: &Value, patch: &Value) -> Result<Value, PatchError> {
    let mut out = original.clone();
    if let Some(new) = patch
        .pointer("/spec/ephemeralContainers")
        .and_then(Value::as_array)
    {
        let list = out["spec"]["ephemeralContainers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut list = list;
        for c in new {
            if !list.iter().any(|o| o["name"] == c["name"]) {
                list.push(c.clone());
            }
        }
        out["spec"]["ephemeralContainers"] = Value::Array(list);
    }
    Ok(out)
}
pub fn apply_json_patch(original: &Value, patch: &Value) -> Result<Value, PatchError> {
    let p: json_patch::Patch =
        serde_json::from_value(patch.clone()).map_err(|e| PatchError(e.to_string()))?;
    let mut out = original.clone();
    json_patch::patch(&mut out, &p).map_err(|e| PatchError(e.to_string()))?;
    Ok(out)
}

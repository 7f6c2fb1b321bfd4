//! The three patch types the apiserver accepts for pods (the simulator's
//! apiserver applies them; a custom debug profile is merged with the
//! first, as kubectl merges it): strategic merge
//! patch (lists merged by the Pod schema's merge keys, with the `$patch`,
//! `$setElementOrder`, `$retainKeys` and `$deleteFromPrimitiveList`
//! directives), JSON merge patch (RFC 7386) and JSON patch (RFC 6902).

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch document itself is malformed: 400.
    #[error("{0}")]
    Malformed(String),
    /// The patch cannot be applied to this object: 422.
    #[error("{0}")]
    Inapplicable(String),
}

const MAX_DEPTH: usize = 100;

pub fn apply_merge_patch(original: &Value, patch: &Value) -> Value {
    let mut merged = original.clone();
    json_patch::merge(&mut merged, patch);
    merged
}

pub fn apply_json_patch(original: &Value, patch: &Value) -> Result<Value, PatchError> {
    let operations: json_patch::Patch = serde_json::from_value(patch.clone())
        .map_err(|e| PatchError::Malformed(format!("error decoding JSON patch: {e}")))?;
    let mut patched = original.clone();
    json_patch::patch(&mut patched, &operations)
        .map_err(|e| PatchError::Inapplicable(e.to_string()))?;
    Ok(patched)
}

pub fn apply_strategic_merge_patch(original: &Value, patch: &Value) -> Result<Value, PatchError> {
    let (Value::Object(original), Value::Object(patch)) = (original, patch) else {
        return Err(PatchError::Malformed(
            "a strategic merge patch must be a JSON object".into(),
        ));
    };
    let mut path = Vec::new();
    merge_map(original, patch, &mut path).map(Value::Object)
}

/// The merge key of the list at `path` (field names, no indices), or `None`
/// when the list is replaced as a whole.
fn merge_key(path: &[String]) -> Option<&'static str> {
    let tail: Vec<&str> = path.iter().rev().take(3).map(String::as_str).collect();
    let container_list =
        |s: &str| matches!(s, "containers" | "initContainers" | "ephemeralContainers");
    match tail.as_slice() {
        [list, "spec", ..] if container_list(list) => Some("name"),
        ["volumes", "spec", ..] | ["imagePullSecrets", "spec", ..] => Some("name"),
        ["hostAliases", "spec", ..] => Some("ip"),
        ["topologySpreadConstraints", "spec", ..] => Some("topologyKey"),
        ["ownerReferences", "metadata", ..] => Some("uid"),
        ["conditions", "status", ..] => Some("type"),
        [field, list, ..] if container_list(list) => match *field {
            "env" => Some("name"),
            "ports" => Some("containerPort"),
            "volumeMounts" => Some("mountPath"),
            "volumeDevices" => Some("devicePath"),
            "resizePolicy" => Some("resourceName"),
            _ => None,
        },
        _ => None,
    }
}

fn merge_map(
    original: &Map<String, Value>,
    patch: &Map<String, Value>,
    path: &mut Vec<String>,
) -> Result<Map<String, Value>, PatchError> {
    if path.len() > MAX_DEPTH {
        return Err(PatchError::Malformed("patch nests too deeply".into()));
    }
    match patch.get("$patch").and_then(Value::as_str) {
        Some("replace") => return Ok(without_directives(patch)),
        Some("delete") => return Ok(Map::new()),
        Some("merge") | None => {}
        Some(other) => {
            return Err(PatchError::Malformed(format!(
                "unknown patch type: {other:?} in map"
            )));
        }
    }
    let mut result = original.clone();
    let mut orders = Vec::new();
    for (key, value) in patch {
        if let Some(list) = key.strip_prefix("$setElementOrder/") {
            orders.push((list.to_string(), value));
        } else if let Some(list) = key.strip_prefix("$deleteFromPrimitiveList/") {
            let remove = value.as_array().cloned().unwrap_or_default();
            if let Some(Value::Array(items)) = result.get_mut(list) {
                items.retain(|item| !remove.contains(item));
            }
        } else if key == "$retainKeys" || key == "$patch" {
            continue;
        } else if key.starts_with('$') {
            return Err(PatchError::Malformed(format!(
                "unknown patch directive {key:?}"
            )));
        } else if value.is_null() {
            result.remove(key);
        } else {
            path.push(key.clone());
            let merged = merge_value(original.get(key), value, path)?;
            path.pop();
            match merged {
                Some(v) => result.insert(key.clone(), v),
                None => result.remove(key),
            };
        }
    }
    if let Some(retain) = patch.get("$retainKeys").and_then(Value::as_array) {
        let keep: Vec<&str> = retain.iter().filter_map(Value::as_str).collect();
        result.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (list, order) in orders {
        path.push(list.clone());
        let key = merge_key(path);
        path.pop();
        if let (Some(key), Some(Value::Array(items)), Some(order)) =
            (key, result.get_mut(&list), order.as_array())
        {
            reorder(items, key, order);
        }
    }
    Ok(result)
}

/// The merged value, or `None` when a `$patch: delete` removed it.
fn merge_value(
    original: Option<&Value>,
    patch: &Value,
    path: &mut Vec<String>,
) -> Result<Option<Value>, PatchError> {
    match (original, patch) {
        (Some(Value::Object(o)), Value::Object(p)) => {
            if p.get("$patch").and_then(Value::as_str) == Some("delete") {
                return Ok(None);
            }
            merge_map(o, p, path).map(|m| Some(Value::Object(m)))
        }
        (_, Value::Object(p)) => merge_map(&Map::new(), p, path).map(|m| Some(Value::Object(m))),
        (original, Value::Array(items)) => match merge_key(path) {
            Some(key) => {
                let base = original
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                merge_list(base, items, key, path).map(|l| Some(Value::Array(l)))
            }
            None => Ok(Some(Value::Array(
                items
                    .iter()
                    .filter(|i| !is_directive_item(i))
                    .cloned()
                    .collect(),
            ))),
        },
        (_, scalar) => Ok(Some(scalar.clone())),
    }
}

fn merge_list(
    mut base: Vec<Value>,
    patch: &[Value],
    key: &str,
    path: &mut Vec<String>,
) -> Result<Vec<Value>, PatchError> {
    if patch
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        return Ok(patch
            .iter()
            .filter(|i| !is_directive_item(i))
            .cloned()
            .collect());
    }
    for item in patch {
        let Some(fields) = item.as_object() else {
            return Err(PatchError::Malformed(format!(
                "{}: expected a list of objects merged by {key:?}",
                path.join(".")
            )));
        };
        let id = fields.get(key).ok_or_else(|| {
            PatchError::Malformed(format!(
                "map: {} does not contain declared merge key: {key}",
                Value::Object(fields.clone())
            ))
        })?;
        let position = base.iter().position(|b| b.get(key) == Some(id));
        let delete = fields.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(i), true) => {
                base.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => {
                let existing = base[i].as_object().cloned().unwrap_or_default();
                base[i] = Value::Object(merge_map(&existing, fields, path)?);
            }
            (None, false) => base.push(Value::Object(merge_map(&Map::new(), fields, path)?)),
        }
    }
    Ok(base)
}

/// Orders `items` as `order` lists them (by merge key); unlisted items keep
/// their relative order after the listed ones.
fn reorder(items: &mut [Value], key: &str, order: &[Value]) {
    let rank = |item: &Value| {
        order
            .iter()
            .position(|o| o.get(key).is_some() && o.get(key) == item.get(key))
            .unwrap_or(usize::MAX)
    };
    items.sort_by_key(rank);
}

fn is_directive_item(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|m| m.len() == 1 && m.contains_key("$patch"))
}

fn without_directives(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
            "spec": {
                "containers": [{"name": "app", "image": "app:1", "env": [{"name": "X", "value": "1"}], "args": ["a", "b"]}],
                "ephemeralContainers": [{"name": "old", "image": "busybox"}],
            },
        })
    }

    #[test]
    fn kubectl_debug_patch_appends_in_order() {
        // What kubectl 1.32 sends: CreateTwoWayMergePatch(pod, pod + debug container).
        let patch = json!({"spec": {
            "$setElementOrder/ephemeralContainers": [{"name": "old"}, {"name": "debugger-x"}],
            "ephemeralContainers": [{"name": "debugger-x", "image": "busybox", "stdin": true, "tty": true, "targetContainerName": "app", "resources": {}}],
        }});
        let out = apply_strategic_merge_patch(&pod(), &patch).unwrap();
        let names: Vec<_> = out["spec"]["ephemeralContainers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].clone())
            .collect();
        assert_eq!(names, [json!("old"), json!("debugger-x")]);
        assert_eq!(out["spec"]["containers"], pod()["spec"]["containers"]);
    }

    #[test]
    fn lists_merge_by_key_maps_recurse_and_null_deletes() {
        let patch = json!({
            "metadata": {"labels": {"a": null, "c": "3"}},
            "spec": {"containers": [{"name": "app", "image": "app:2", "env": [{"name": "Y", "value": "2"}], "args": ["z"]}]},
        });
        let out = apply_strategic_merge_patch(&pod(), &patch).unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"b": "2", "c": "3"}));
        let app = &out["spec"]["containers"][0];
        assert_eq!(app["image"], "app:2");
        assert_eq!(
            app["env"],
            json!([{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}])
        );
        assert_eq!(
            app["args"],
            json!(["z"]),
            "lists without a merge key are replaced"
        );
    }

    #[test]
    fn patch_directives() {
        let delete =
            json!({"spec": {"ephemeralContainers": [{"name": "old", "$patch": "delete"}]}});
        let out = apply_strategic_merge_patch(&pod(), &delete).unwrap();
        assert_eq!(out["spec"]["ephemeralContainers"], json!([]));
        let replace = json!({"metadata": {"labels": {"$patch": "replace", "only": "this"}}});
        let out = apply_strategic_merge_patch(&pod(), &replace).unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"only": "this"}));
        let prim = json!({"spec": {"containers": [{"name": "app", "$deleteFromPrimitiveList/args": ["a"]}]}});
        let out = apply_strategic_merge_patch(&pod(), &prim).unwrap();
        assert_eq!(out["spec"]["containers"][0]["args"], json!(["b"]));
        let retain = json!({"metadata": {"$retainKeys": ["name"], "name": "p"}});
        let out = apply_strategic_merge_patch(&pod(), &retain).unwrap();
        assert_eq!(out["metadata"], json!({"name": "p"}));
    }

    #[test]
    fn malformed_patches_are_errors_not_panics() {
        for bad in [
            json!([1, 2]),
            json!({"$bogus": 1}),
            json!({"spec": {"ephemeralContainers": [{"image": "no-name"}]}}),
            json!({"spec": {"ephemeralContainers": ["str"]}}),
            json!({"metadata": {"$patch": "explode"}}),
        ] {
            let err = apply_strategic_merge_patch(&pod(), &bad).unwrap_err();
            assert!(matches!(err, PatchError::Malformed(_)), "{bad}: a 400");
        }
        let mut deep = json!({});
        for _ in 0..200 {
            deep = json!({"x": deep});
        }
        assert!(apply_strategic_merge_patch(&pod(), &deep).is_err());
    }

    #[test]
    fn json_and_merge_patches() {
        let ops = json!([{"op": "add", "path": "/spec/ephemeralContainers/-", "value": {"name": "n", "image": "i"}}]);
        let out = apply_json_patch(&pod(), &ops).unwrap();
        assert_eq!(out["spec"]["ephemeralContainers"][1]["name"], "n");
        let failing = json!([{"op": "test", "path": "/metadata/name", "value": "other"}]);
        assert!(matches!(
            apply_json_patch(&pod(), &failing).unwrap_err(),
            PatchError::Inapplicable(_)
        ));
        assert!(matches!(
            apply_json_patch(&pod(), &json!({"op": "add"})).unwrap_err(),
            PatchError::Malformed(_)
        ));
        let merged = apply_merge_patch(&pod(), &json!({"metadata": {"labels": {"a": null}}}));
        assert_eq!(merged["metadata"]["labels"], json!({"b": "2"}));
    }
}

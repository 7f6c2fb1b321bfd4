//! Strategies for property tests over JSON: arbitrary values, and
//! mutations of real documents (a value replaced, removed, duplicated,
//! pushed to an extreme).

use proptest::prelude::*;
use serde_json::{Value, json};

/// Any JSON value, a few levels deep, with the numbers and strings that
/// break conversions: extremes, negatives, floats, empty and Unicode text.
pub fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop_oneof![
            Just(i32::MAX as i64),
            Just(i32::MIN as i64),
            Just(u32::MAX as i64),
            Just(-1i64),
            Just(0i64)
        ]
        .prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("2026-01-01T00:00:00Z"),
            Just("0000-01-01T00:00:00Z"),
            Just("9999-12-31T23:59:59Z"),
            Just("Init:"),
            Just("Running"),
            Just("Always"),
            Just("spec.containers{x}"),
            Just("}{"),
        ]
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Object keys: mostly ones Kubernetes objects and patches use.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(vec![
            "metadata", "spec", "status", "name", "namespace", "containers",
            "initContainers", "ephemeralContainers", "containerStatuses",
            "initContainerStatuses", "ephemeralContainerStatuses", "state",
            "lastState", "running", "waiting", "terminated", "reason", "exitCode",
            "signal", "restartCount", "ready", "started", "restartPolicy",
            "conditions", "type", "phase", "image", "command", "labels",
            "annotations", "deletionTimestamp", "nodeName", "targetContainerName",
            "stdin", "tty", "op", "path", "value", "from", "$patch",
            "$retainKeys", "$setElementOrder/ephemeralContainers",
            "$deleteFromPrimitiveList/command", "env", "ports", "volumeMounts",
        ])
        .prop_map(String::from),
        1 => ".{0,8}",
    ]
}

/// One change to a document: at the `at`-th place (of all places, in
/// document order, modulo their number), do `op`.
#[derive(Debug, Clone)]
pub struct Mutation {
    pub at: usize,
    pub op: Op,
}

#[derive(Debug, Clone)]
pub enum Op {
    Replace(Value),
    Remove,
    Duplicate,
    Extreme(i64),
    Insert(String, Value),
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    (
        any::<usize>(),
        prop_oneof![
            3 => any_json().prop_map(Op::Replace),
            2 => Just(Op::Remove),
            1 => Just(Op::Duplicate),
            1 => prop_oneof![
                Just(i64::MAX),
                Just(i64::MIN),
                Just(i32::MAX as i64),
                Just(u32::MAX as i64 + 1),
                Just(-1)
            ]
            .prop_map(Op::Extreme),
            2 => (key(), any_json()).prop_map(|(k, v)| Op::Insert(k, v)),
        ],
    )
        .prop_map(|(at, op)| Mutation { at, op })
}

/// JSON pointers of every value in `doc`, the root first.
fn places(doc: &Value) -> Vec<String> {
    fn walk(v: &Value, at: String, out: &mut Vec<String>) {
        out.push(at.clone());
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    let escaped = k.replace('~', "~0").replace('/', "~1");
                    walk(child, format!("{at}/{escaped}"), out);
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    walk(child, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, String::new(), &mut out);
    out
}

pub fn mutate(doc: &mut Value, mutations: &[Mutation]) {
    for m in mutations {
        let places = places(doc);
        let at = &places[m.at % places.len()];
        let (parent, last) = match at.rfind('/') {
            Some(i) => (&at[..i], Some(&at[i + 1..])),
            None => ("", None),
        };
        match &m.op {
            Op::Replace(v) => {
                if let Some(slot) = doc.pointer_mut(at) {
                    *slot = v.clone();
                }
            }
            Op::Extreme(n) => {
                if let Some(slot) = doc.pointer_mut(at) {
                    *slot = json!(n);
                }
            }
            Op::Insert(k, v) => match doc.pointer_mut(at) {
                Some(Value::Object(map)) => {
                    map.insert(k.clone(), v.clone());
                }
                Some(Value::Array(items)) => items.push(v.clone()),
                _ => {}
            },
            Op::Remove | Op::Duplicate => {
                let Some(last) = last else { continue };
                let key = last.replace("~1", "/").replace("~0", "~");
                let duplicate = matches!(m.op, Op::Duplicate);
                match doc.pointer_mut(parent) {
                    Some(Value::Object(map)) => {
                        if duplicate {
                            if let Some(v) = map.get(&key).cloned() {
                                map.insert(format!("{key}2"), v);
                            }
                        } else {
                            map.remove(&key);
                        }
                    }
                    Some(Value::Array(items)) => {
                        if let Ok(i) = key.parse::<usize>()
                            && i < items.len()
                        {
                            if duplicate {
                                let v = items[i].clone();
                                items.insert(i, v);
                            } else {
                                items.remove(i);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

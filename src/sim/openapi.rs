//! The OpenAPI v3 documents clients read to learn what the server takes:
//! `/openapi/v3` lists one document per group-version, each listing the
//! operations the simulator serves with the query parameters they accept.
//! kubectl reads them before `create -f` and `apply -f`: a PATCH for the
//! kind that takes `fieldValidation` tells it the server validates fields
//! itself (see `field_validation`), so it sends `fieldValidation=Strict`
//! instead of validating against a schema it would have to download.
//! kubectl before 1.28 reads the one OpenAPI v2 document instead, in
//! protobuf (gnostic's `openapi.v2.Document`), for the same facts.
//! Only operations the simulator really serves are listed; schemas are
//! left out (kubectl then computes patches from its built-in types).

use serde_json::{Map, Value, json};

/// The group-versions with a document, as `/openapi/v3` names them.
const GROUP_VERSIONS: [&str; 2] = ["api/v1", "apis/apps/v1"];

/// One served operation.
struct Operation {
    path: &'static str,
    method: &'static str,
    kind: &'static str,
    action: &'static str,
    params: &'static [&'static str],
}

const WRITE: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const READ: &[&str] = &[];
const LIST: &[&str] = &[
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "resourceVersion",
    "timeoutSeconds",
    "watch",
    "allowWatchBookmarks",
];
const DELETE: &[&str] = &["dryRun", "gracePeriodSeconds"];

const CORE: &[Operation] = &[
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods",
        method: "post",
        kind: "Pod",
        action: "post",
        params: WRITE,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods",
        method: "get",
        kind: "Pod",
        action: "list",
        params: LIST,
    },
    Operation {
        path: "/api/v1/pods",
        method: "get",
        kind: "Pod",
        action: "list",
        params: LIST,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods/{name}",
        method: "get",
        kind: "Pod",
        action: "get",
        params: READ,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods/{name}",
        method: "put",
        kind: "Pod",
        action: "put",
        params: WRITE,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods/{name}",
        method: "patch",
        kind: "Pod",
        action: "patch",
        params: WRITE,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods/{name}",
        method: "delete",
        kind: "Pod",
        action: "delete",
        params: DELETE,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers",
        method: "get",
        kind: "Pod",
        action: "get",
        params: READ,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers",
        method: "put",
        kind: "Pod",
        action: "put",
        params: WRITE,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers",
        method: "patch",
        kind: "Pod",
        action: "patch",
        params: WRITE,
    },
    Operation {
        path: "/api/v1/namespaces",
        method: "get",
        kind: "Namespace",
        action: "list",
        params: LIST,
    },
    Operation {
        path: "/api/v1/namespaces/{name}",
        method: "get",
        kind: "Namespace",
        action: "get",
        params: READ,
    },
    Operation {
        path: "/api/v1/nodes",
        method: "get",
        kind: "Node",
        action: "list",
        params: LIST,
    },
    Operation {
        path: "/api/v1/nodes/{name}",
        method: "get",
        kind: "Node",
        action: "get",
        params: READ,
    },
    Operation {
        path: "/api/v1/namespaces/{namespace}/events",
        method: "get",
        kind: "Event",
        action: "list",
        params: LIST,
    },
];

const APPS: &[Operation] = &[
    Operation {
        path: "/apis/apps/v1/namespaces/{namespace}/replicasets",
        method: "get",
        kind: "ReplicaSet",
        action: "list",
        params: LIST,
    },
    Operation {
        path: "/apis/apps/v1/namespaces/{namespace}/replicasets/{name}",
        method: "get",
        kind: "ReplicaSet",
        action: "get",
        params: READ,
    },
    Operation {
        path: "/apis/apps/v1/namespaces/{namespace}/statefulsets",
        method: "get",
        kind: "StatefulSet",
        action: "list",
        params: LIST,
    },
    Operation {
        path: "/apis/apps/v1/namespaces/{namespace}/statefulsets/{name}",
        method: "get",
        kind: "StatefulSet",
        action: "get",
        params: READ,
    },
];

/// `GET /openapi/v3`.
pub fn root() -> Value {
    let paths: Map<String, Value> = GROUP_VERSIONS
        .iter()
        .map(|gv| {
            let url = format!("/openapi/v3/{gv}?hash={}", hash(gv));
            (gv.to_string(), json!({"serverRelativeURL": url}))
        })
        .collect();
    json!({"paths": paths})
}

/// `GET /openapi/v3/{group_version}`, or `None` for one not served.
pub fn document(group_version: &str) -> Option<Value> {
    let (group, version, operations) = match group_version {
        "api/v1" => ("", "v1", CORE),
        "apis/apps/v1" => ("apps", "v1", APPS),
        _ => return None,
    };
    let mut paths = Map::new();
    for op in operations {
        let mut parameters: Vec<Value> = op
            .params
            .iter()
            .map(|name| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}}))
            .collect();
        for segment in ["namespace", "name"] {
            if op.path.contains(&format!("{{{segment}}}")) {
                parameters.push(json!({"name": segment, "in": "path", "required": true, "schema": {"type": "string", "uniqueItems": true}}));
            }
        }
        let operation = json!({
            "operationId": format!("{}{}", op.method, op.kind),
            "parameters": parameters,
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": op.action,
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": op.kind},
        });
        let path = paths
            .entry(op.path.to_string())
            .or_insert_with(|| json!({}));
        path[op.method] = operation;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.35.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}

/// The media type of the v2 document in protobuf, as the apiserver labels
/// it (clients ask for the `…spec.v2@v1.0+protobuf` spelling, which Go's
/// media type parser refuses in a response).
pub const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `GET /openapi/v2` in protobuf: every group-version's operations in one
/// document, each PATCH and the rest tagged with its kind, as kubectl's
/// `QueryParamVerifier` reads them.
pub fn v2_protobuf() -> Vec<u8> {
    let mut paths = Message::default();
    let groups = [("", "v1", CORE), ("apps", "v1", APPS)];
    let mut items: Vec<(&str, Message)> = Vec::new();
    for (group, version, operations) in groups {
        for op in operations {
            let field = match op.method {
                "get" => 2,
                "put" => 3,
                "post" => 4,
                "delete" => 5,
                _ => 8,
            };
            let mut operation = Message::default().text(5, &format!("{}{}", op.method, op.kind));
            for name in op.params {
                let query = Message::default()
                    .text(2, "query")
                    .text(4, name)
                    .text(6, "string")
                    .flag(20);
                let parameter = Message::default().message(
                    1,
                    Message::default().message(2, Message::default().message(3, query)),
                );
                operation = operation.message(8, parameter);
            }
            let ok = Message::default().text(1, "OK");
            let response = Message::default()
                .text(1, "200")
                .message(2, Message::default().message(1, ok));
            operation = operation.message(9, Message::default().message(1, response));
            let gvk = format!(
                "group: \"{group}\"\nkind: {}\nversion: {version}\n",
                op.kind
            );
            let extension = Message::default()
                .text(1, "x-kubernetes-group-version-kind")
                .message(2, Message::default().text(2, &gvk));
            let action = Message::default()
                .text(1, "x-kubernetes-action")
                .message(2, Message::default().text(2, op.action));
            operation = operation.message(13, action).message(13, extension);
            match items.iter_mut().find(|(path, _)| *path == op.path) {
                Some((_, item)) => *item = std::mem::take(item).message(field, operation),
                None => items.push((op.path, Message::default().message(field, operation))),
            }
        }
    }
    for (path, item) in items {
        paths = paths.message(2, Message::default().text(1, path).message(2, item));
    }
    let info = Message::default().text(1, "Kubernetes").text(2, "v1.35.0");
    Message::default()
        .text(1, "2.0")
        .message(2, info)
        .message(8, paths)
        .0
}

/// A protobuf message, written field by field.
#[derive(Default)]
struct Message(Vec<u8>);

impl Message {
    fn varint(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.0.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn bytes(mut self, field: u32, data: &[u8]) -> Self {
        self.varint(u64::from(field) << 3 | 2);
        self.varint(data.len() as u64);
        self.0.extend_from_slice(data);
        self
    }

    fn text(self, field: u32, text: &str) -> Self {
        self.bytes(field, text.as_bytes())
    }

    fn message(self, field: u32, message: Message) -> Self {
        self.bytes(field, &message.0)
    }

    /// A `bool` field set to true.
    fn flag(mut self, field: u32) -> Self {
        self.varint(u64::from(field) << 3);
        self.varint(1);
        self
    }
}

/// A stable hash of a document, for its URL (clients cache by it).
fn hash(group_version: &str) -> String {
    let text = document(group_version)
        .map(|d| d.to_string())
        .unwrap_or_default();
    let sum = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{sum:016X}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What kubectl's `QueryParamVerifierV3` looks for: a PATCH for the
    /// kind, tagged with its group-version-kind, taking `fieldValidation`.
    #[test]
    fn a_pod_patch_takes_field_validation_as_kubectl_checks() {
        let root = root();
        let url = root["paths"]["api/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap();
        assert!(url.starts_with("/openapi/v3/api/v1?hash="), "{url}");
        let doc = document("api/v1").unwrap();
        let patches: Vec<&Value> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(|p| p.get("patch"))
            .filter(|op| op["x-kubernetes-group-version-kind"]["kind"] == "Pod")
            .collect();
        assert_eq!(patches.len(), 2);
        assert!(
            patches[0]["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
        );
        assert!(document("apis/batch/v1").is_none());
    }
}

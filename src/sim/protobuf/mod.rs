//! Kubernetes' protobuf encoding of a Pod, read into the JSON the
//! apiserver would have decoded: kubectl 1.33 creates pods
//! (`debug node/…`, `debug --copy-to`) with
//! `Content-Type: application/vnd.kubernetes.protobuf`, and client-go does
//! not fall back to JSON on a 415 for protobuf.
//!
//! The body is the 4-byte magic `k8s\0`, then a `runtime.Unknown`
//! (typeMeta = 1, raw = 2) whose `raw` is the `v1.Pod` message. The field
//! tables in [`schema`] are generated from kubernetes/api's
//! `generated.proto` by `schema.py` beside this file; their field names are
//! the JSON names. Unknown fields are skipped, as the apiserver's decoder
//! does.

mod schema;

use serde_json::{Map, Value, json};

pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\0";

/// A message's fields: number, JSON name, kind, repeated.
pub struct Fields(pub &'static [Field]);
pub struct Field(pub u32, pub &'static str, pub Kind, pub bool);

/// How a field's value is encoded.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Str,
    Bool,
    Int,
    Message(usize),
    /// An embedded Go struct (`json:""`): its fields are the parent's.
    Inline(usize),
    /// `map<string, V>`: entries with key = 1, value = 2.
    Map(&'static Kind),
    /// meta/v1 Time and MicroTime: seconds = 1, nanos = 2.
    Time,
    /// resource.Quantity: string = 1.
    Quantity,
    /// intstr.IntOrString: type = 1, intVal = 2, strVal = 3.
    IntOrString,
    /// FieldsV1, RawExtension: raw = 1, JSON bytes.
    Raw,
}

/// The Pod in a protobuf request body, as JSON.
pub fn decode_pod(body: &[u8]) -> Result<Value, String> {
    let unknown = body
        .strip_prefix(MAGIC)
        .ok_or("the body does not start with Kubernetes' protobuf magic")?;
    let mut raw = None;
    let mut kind = String::new();
    let mut api_version = String::new();
    for item in Reader(unknown) {
        match item? {
            (1, Wire::Bytes(type_meta)) => {
                for item in Reader(type_meta) {
                    match item? {
                        (1, Wire::Bytes(b)) => api_version = utf8(b)?,
                        (2, Wire::Bytes(b)) => kind = utf8(b)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(bytes)) => raw = Some(bytes),
            _ => {}
        }
    }
    if kind != "Pod" || api_version != "v1" {
        return Err(format!("expected a v1 Pod, got {api_version:?} {kind:?}"));
    }
    let mut pod = message(raw.unwrap_or_default(), schema::POD)?;
    pod.insert("apiVersion".into(), json!("v1"));
    pod.insert("kind".into(), json!("Pod"));
    Ok(Value::Object(pod))
}

fn message(bytes: &[u8], index: usize) -> Result<Map<String, Value>, String> {
    let fields = schema::MESSAGES[index].0;
    let mut object = Map::new();
    for item in Reader(bytes) {
        let (number, wire) = item?;
        let Some(Field(_, name, kind, repeated)) = fields.iter().find(|f| f.0 == number) else {
            continue;
        };
        if let Kind::Map(value_kind) = kind {
            let Wire::Bytes(entry) = wire else {
                return Err(format!("{name}: a map entry must be length-delimited"));
            };
            let (mut key, mut value) = (String::new(), Value::Null);
            for item in Reader(entry) {
                match item? {
                    (1, Wire::Bytes(b)) => key = utf8(b)?,
                    (2, w) => value = scalar(**value_kind, w, name)?,
                    _ => {}
                }
            }
            let map = object
                .entry(*name)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(map) = map {
                map.insert(key, value);
            }
            continue;
        }
        if let (Kind::Inline(index), Wire::Bytes(b)) = (kind, wire) {
            object.extend(message(b, *index)?);
            continue;
        }
        // Packed repeated numbers come as one length-delimited run.
        let values = match (kind, wire) {
            (Kind::Int | Kind::Bool, Wire::Bytes(run)) => {
                let mut run = run;
                let mut values = Vec::new();
                while !run.is_empty() {
                    let (n, rest) = varint(run)?;
                    run = rest;
                    values.push(scalar(*kind, Wire::Varint(n), name)?);
                }
                values
            }
            (_, wire) => vec![scalar(*kind, wire, name)?],
        };
        for value in values {
            if *repeated {
                let list = object
                    .entry(*name)
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = list {
                    list.push(value);
                }
            } else if !value.is_null() {
                object.insert((*name).into(), value);
            }
        }
    }
    Ok(object)
}

fn scalar(kind: Kind, wire: Wire<'_>, name: &str) -> Result<Value, String> {
    let wrong = || format!("{name}: unexpected wire type for {kind:?}");
    Ok(match (kind, wire) {
        (Kind::Bool, Wire::Varint(n)) => json!(n != 0),
        (Kind::Int, Wire::Varint(n)) => json!(n as i64),
        (Kind::Str, Wire::Bytes(b)) => json!(utf8(b)?),
        (Kind::Message(index), Wire::Bytes(b)) => Value::Object(message(b, index)?),
        (Kind::Time, Wire::Bytes(b)) => {
            let (mut seconds, mut nanos) = (0i64, 0i32);
            for item in Reader(b) {
                match item? {
                    (1, Wire::Varint(n)) => seconds = n as i64,
                    (2, Wire::Varint(n)) => nanos = n as i32,
                    _ => {}
                }
            }
            // Go's zero time: an unset timestamp.
            if seconds == 0 && nanos == 0 {
                return Ok(Value::Null);
            }
            let time = jiff::Timestamp::new(seconds, nanos).map_err(|e| format!("{name}: {e}"))?;
            json!(time.to_string())
        }
        (Kind::Quantity, Wire::Bytes(b)) => {
            let mut text = String::new();
            for item in Reader(b) {
                if let (1, Wire::Bytes(s)) = item? {
                    text = utf8(s)?;
                }
            }
            json!(text)
        }
        (Kind::IntOrString, Wire::Bytes(b)) => {
            let (mut is_string, mut int, mut string) = (false, 0i64, String::new());
            for item in Reader(b) {
                match item? {
                    (1, Wire::Varint(n)) => is_string = n == 1,
                    (2, Wire::Varint(n)) => int = i64::from(n as i32),
                    (3, Wire::Bytes(s)) => string = utf8(s)?,
                    _ => {}
                }
            }
            if is_string { json!(string) } else { json!(int) }
        }
        (Kind::Raw, Wire::Bytes(b)) => {
            let mut raw: &[u8] = &[];
            for item in Reader(b) {
                if let (1, Wire::Bytes(r)) = item? {
                    raw = r;
                }
            }
            serde_json::from_slice(raw).unwrap_or(Value::Null)
        }
        _ => return Err(wrong()),
    })
}

fn utf8(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| "a string field is not UTF-8".to_string())
}

/// One field's value as it is on the wire.
#[derive(Debug, Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    /// A fixed-width number: no field of a Pod has one, so it is skipped.
    Fixed,
    Bytes(&'a [u8]),
}

/// The fields of one message, in order.
struct Reader<'a>(&'a [u8]);

impl<'a> Iterator for Reader<'a> {
    type Item = Result<(u32, Wire<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let result = (|| {
            let (tag, rest) = varint(self.0)?;
            let number = u32::try_from(tag >> 3).map_err(|_| "field number out of range")?;
            let (wire, rest) = match tag & 7 {
                0 => {
                    let (n, rest) = varint(rest)?;
                    (Wire::Varint(n), rest)
                }
                1 => (Wire::Fixed, split(rest, 8)?.1),
                2 => {
                    let (len, rest) = varint(rest)?;
                    let len = usize::try_from(len).map_err(|_| "length out of range")?;
                    let (bytes, rest) = split(rest, len)?;
                    (Wire::Bytes(bytes), rest)
                }
                5 => (Wire::Fixed, split(rest, 4)?.1),
                other => return Err(format!("unsupported wire type {other}")),
            };
            self.0 = rest;
            Ok((number, wire))
        })();
        if result.is_err() {
            self.0 = &[];
        }
        Some(result)
    }
}

fn split(bytes: &[u8], n: usize) -> Result<(&[u8], &[u8]), String> {
    if bytes.len() < n {
        return Err("the message ends inside a field".into());
    }
    Ok(bytes.split_at(n))
}

fn varint(bytes: &[u8]) -> Result<(u64, &[u8]), String> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, &bytes[i + 1..]));
        }
    }
    Err("a varint runs past its end".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u32, wire: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = encode_varint(u64::from(number) << 3 | u64::from(wire));
        if wire == 2 {
            out.extend(encode_varint(payload.len() as u64));
        }
        out.extend_from_slice(payload);
        out
    }

    fn encode_varint(mut n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    fn wrap(pod: &[u8]) -> Vec<u8> {
        let type_meta = [field(1, 2, b"v1"), field(2, 2, b"Pod")].concat();
        [MAGIC.to_vec(), field(1, 2, &type_meta), field(2, 2, pod)].concat()
    }

    #[test]
    fn a_node_debug_pod_reads_as_its_json() {
        let labels = [field(1, 2, b"app"), field(2, 2, b"debug")].concat();
        let meta = [
            field(1, 2, b"node-debugger-node-a1-x7k2q"),
            field(3, 2, b"default"),
            field(11, 2, &labels),
            field(8, 2, &[]),
        ]
        .concat();
        let container = [
            field(1, 2, b"debugger"),
            field(2, 2, b"busybox:1.36"),
            field(3, 2, b"sleep"),
            field(3, 2, b"1000"),
            field(16, 0, &[1]),
        ]
        .concat();
        let limits = [field(1, 2, b"cpu"), field(2, 2, &field(1, 2, b"500m"))].concat();
        let resources = field(1, 2, &limits);
        let container = [container, field(8, 2, &resources)].concat();
        let spec = [
            field(2, 2, &container),
            field(10, 2, b"node-a1"),
            field(11, 0, &[1]),
            field(12, 0, &[1]),
        ]
        .concat();
        let pod = [field(1, 2, &meta), field(2, 2, &spec)].concat();
        let json = decode_pod(&wrap(&pod)).unwrap();
        assert_eq!(json["kind"], "Pod");
        assert_eq!(json["metadata"]["name"], "node-debugger-node-a1-x7k2q");
        assert_eq!(json["metadata"]["labels"]["app"], "debug");
        assert!(json["metadata"].get("creationTimestamp").is_none());
        let c = &json["spec"]["containers"][0];
        assert_eq!(c["command"], json!(["sleep", "1000"]));
        assert_eq!(c["stdin"], true);
        assert_eq!(c["resources"]["limits"]["cpu"], "500m");
        assert_eq!(json["spec"]["nodeName"], "node-a1");
        assert_eq!(json["spec"]["hostNetwork"], true);
        assert_eq!(json["spec"]["hostPID"], true);
    }

    #[test]
    fn embedded_structs_are_inlined_as_in_json() {
        let host_path = field(1, 2, b"/");
        let source = field(1, 2, &host_path);
        let volume = [field(1, 2, b"host-root"), field(2, 2, &source)].concat();
        let spec = field(1, 2, &volume);
        let pod = field(2, 2, &spec);
        let json = decode_pod(&wrap(&pod)).unwrap();
        assert_eq!(
            json["spec"]["volumes"][0],
            json!({"name": "host-root", "hostPath": {"path": "/"}})
        );
    }

    #[test]
    fn what_is_not_a_pod_or_not_protobuf_is_refused() {
        assert!(decode_pod(b"{\"kind\":\"Pod\"}").is_err());
        let type_meta = [field(1, 2, b"v1"), field(2, 2, b"Secret")].concat();
        let secret = [MAGIC.to_vec(), field(1, 2, &type_meta)].concat();
        assert!(decode_pod(&secret).unwrap_err().contains("Secret"));
        let truncated = [MAGIC.to_vec(), vec![0x12, 0x40, 1]].concat();
        assert!(decode_pod(&truncated).is_err());
    }
}

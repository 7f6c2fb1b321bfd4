//! A kubeconfig file read as kubectl and kube-rs read it: YAML (JSON is
//! YAML too) in UTF-8 or UTF-16, its documents merged, the files it names
//! made absolute from its own directory.
//!
//! kube-rs's `Kubeconfig::read_from` decodes the YAML straight into its
//! types, which compiles the YAML decoder once more for every one of them
//! (a third of a megabyte of the binary). Here the YAML becomes a JSON
//! value through the one YAML decoder podbay already has, and the types
//! are read from that. A YAML scalar is text to a field that wants text
//! (`args: [--account, 123456789012]`), so numbers and booleans become
//! strings, but in the few fields that are booleans.

use std::path::Path;

use kube::config::Kubeconfig;
use serde_json::Value;

/// The kubeconfig's fields that are booleans; every other scalar is text.
const BOOLEANS: [&str; 4] = [
    "insecure-skip-tls-verify",
    "disable-compression",
    "provideClusterInfo",
    "colors",
];

/// The kubeconfig at `path`, or why it cannot be read (a reason, without
/// the path).
pub fn read(path: &Path) -> Result<Kubeconfig, String> {
    let bytes = crate::local::read_config(path).map_err(|e| e.to_string())?;
    parse(&text(bytes)?, path.parent())
}

/// `text` as kubeconfig documents, merged; files named relative to `dir`.
pub fn parse(text: &str, dir: Option<&Path>) -> Result<Kubeconfig, String> {
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(text).map_err(|e| first_line(&e.to_string()))?;
    let mut merged: Option<Kubeconfig> = None;
    for mut document in documents {
        if document.is_null() {
            continue;
        }
        as_text(&mut document, None);
        let mut config: Kubeconfig = serde_json::from_value(document).map_err(|e| e.to_string())?;
        if let Some(dir) = dir {
            absolute(&mut config, dir);
        }
        merged = Some(match merged {
            Some(so_far) => so_far.merge(config).map_err(|e| e.to_string())?,
            None => config,
        });
    }
    Ok(merged.unwrap_or_default())
}

/// The file's text: UTF-8, or UTF-16 after its byte-order mark (as
/// PowerShell writes a redirected `kubectl config view`).
fn text(bytes: Vec<u8>) -> Result<String, String> {
    let utf16 = |rest: &[u8], word: fn([u8; 2]) -> u16| {
        let words: Vec<u16> = rest
            .chunks(2)
            .map(|c| word([c[0], c.get(1).copied().unwrap_or(0)]))
            .collect();
        String::from_utf16(&words).map_err(|_| "it is not valid UTF-16".to_string())
    };
    match bytes.as_slice() {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        _ => String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string()),
    }
}

/// Numbers and booleans as the text YAML wrote, but under [`BOOLEANS`].
fn as_text(value: &mut Value, key: Option<&str>) {
    match value {
        Value::Number(n) => *value = Value::String(n.to_string()),
        Value::Bool(b) if !key.is_some_and(|k| BOOLEANS.contains(&k)) => {
            *value = Value::String(b.to_string())
        }
        Value::Array(items) => items.iter_mut().for_each(|item| as_text(item, None)),
        Value::Object(map) => map.iter_mut().for_each(|(k, v)| as_text(v, Some(k))),
        _ => {}
    }
}

/// Files the kubeconfig names relative to its own directory (a CA, a
/// client certificate and key, a token file, an exec plugin given by a
/// path), as kube-rs and client-go resolve them.
fn absolute(config: &mut Kubeconfig, dir: &Path) {
    let fix = |file: &mut Option<String>| {
        if let Some(relative) = file.as_deref().filter(|f| Path::new(f).is_relative())
            && let Some(joined) = dir.join(relative).to_str()
        {
            *file = Some(joined.to_string());
        }
    };
    for cluster in config
        .clusters
        .iter_mut()
        .filter_map(|c| c.cluster.as_mut())
    {
        fix(&mut cluster.certificate_authority);
    }
    for user in config
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut())
    {
        fix(&mut user.client_certificate);
        fix(&mut user.client_key);
        fix(&mut user.token_file);
        // A bare command (`aws`) is looked up on PATH, as client-go does.
        if let Some(exec) = user.exec.as_mut()
            && exec
                .command
                .as_deref()
                .is_some_and(|c| c.contains(std::path::MAIN_SEPARATOR))
        {
            fix(&mut exec.command);
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: certs/ca.pem
    insecure-skip-tls-verify: false
- name: "1234"
  cluster:
    server: https://10.0.0.2
contexts:
- name: prod
  context: {cluster: prod, user: eks, namespace: 2024}
users:
- name: eks
  user:
    client-key: /etc/keys/key.pem
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: bin/aws
      args: [eks, get-token, --account, 123456789012, --verbose, true]
      env:
      - {name: RETRIES, value: 3}
      provideClusterInfo: true
- name: plain
  user:
    token: abc
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
"#;

    #[test]
    fn scalars_are_text_where_text_is_wanted_and_files_are_absolute() {
        let config = parse(CONFIG, Some(Path::new("/home/sre/.kube"))).expect("reads");
        assert_eq!(config.current_context.as_deref(), Some("prod"));
        let prod = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(
            prod.certificate_authority.as_deref(),
            Some("/home/sre/.kube/certs/ca.pem")
        );
        assert_eq!(prod.insecure_skip_tls_verify, Some(false));
        assert_eq!(
            config.clusters[1].name, "1234",
            "a quoted name stays a name"
        );
        let context = config.contexts[0].context.as_ref().unwrap();
        assert_eq!(context.namespace.as_deref(), Some("2024"));
        let eks = config.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(
            eks.client_key.as_deref(),
            Some("/etc/keys/key.pem"),
            "absolute stays"
        );
        let exec = eks.exec.as_ref().unwrap();
        assert_eq!(exec.command.as_deref(), Some("/home/sre/.kube/bin/aws"));
        assert_eq!(
            exec.args.as_deref().unwrap_or_default(),
            [
                "eks",
                "get-token",
                "--account",
                "123456789012",
                "--verbose",
                "true"
            ]
        );
        assert_eq!(exec.env.as_ref().unwrap()[0]["value"], "3");
        assert!(exec.provide_cluster_info);
        let plain = config.auth_infos[1].auth_info.as_ref().unwrap();
        assert_eq!(
            plain.exec.as_ref().unwrap().command.as_deref(),
            Some("aws"),
            "a bare command is found on PATH"
        );
    }

    #[test]
    fn documents_merge_the_first_one_winning_and_empty_ones_are_skipped() {
        let two = "current-context: a\ncontexts:\n- {name: a, context: {cluster: a}}\n---\n---\ncurrent-context: b\ncontexts:\n- {name: b, context: {cluster: b}}\n";
        let config = parse(two, None).expect("reads");
        assert_eq!(config.current_context.as_deref(), Some("a"));
        let names: Vec<&str> = config.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(parse("", None).is_ok_and(|c| c.contexts.is_empty()));
        assert!(parse("clusters: {not: a list}", None).is_err());
        assert!(parse("clusters: [", None).is_err());
    }

    #[test]
    fn utf16_with_a_byte_order_mark_is_read() {
        let text_le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(
                "current-context: x\n"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            )
            .collect();
        let config = parse(&text(text_le).expect("UTF-16"), None).expect("reads");
        assert_eq!(config.current_context.as_deref(), Some("x"));
        assert!(text(vec![0xC3, 0x28]).is_err());
    }
}

//! Image pull secrets as the kubelet reads them: which registries a
//! Secret holds credentials for, and whether those credentials serve an
//! image (the kubelet's keyring: a host whose labels may hold `*`, the
//! same port, the key's path a prefix of the image's).

use k8s_openapi::api::core::v1::Secret;

/// The Secret types that hold image pull credentials.
pub const TYPES: [&str; 2] = ["kubernetes.io/dockerconfigjson", "kubernetes.io/dockercfg"];

/// The keys a pull Secret holds credentials under: the `auths` of a
/// `kubernetes.io/dockerconfigjson` one, the top level of a
/// `kubernetes.io/dockercfg` one; none for another type or a config that
/// does not parse.
pub fn credential_keys(secret: &Secret) -> Vec<String> {
    let (field, nested) = match secret.type_.as_deref() {
        Some("kubernetes.io/dockerconfigjson") => (".dockerconfigjson", true),
        Some("kubernetes.io/dockercfg") => (".dockercfg", false),
        _ => return Vec::new(),
    };
    let Some(config) = secret
        .data
        .as_ref()
        .and_then(|data| data.get(field))
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes.0).ok())
    else {
        return Vec::new();
    };
    let auths = if nested { &config["auths"] } else { &config };
    auths
        .as_object()
        .map(|keys| keys.keys().cloned().collect())
        .unwrap_or_default()
}

/// Whether credentials stored under `key` serve `image`.
pub fn covers(key: &str, image: &str) -> bool {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let (key_host, key_path) = split_host(key);
    // Docker's own `/v1/` and `/v2/` name the API, not a path in it.
    let key_path = match key_path {
        "/v1/" | "/v2/" | "/v1" | "/v2" => "",
        path => path,
    };
    let name = image_name(image);
    let (image_host, image_path) = split_host(&name);
    hosts_match(&docker_hub(key_host), &docker_hub(image_host)) && image_path.starts_with(key_path)
}

/// The image's name: its registry and path, without tag or digest, Docker
/// Hub's images named by its registry (`jenkins` → `docker.io/jenkins`).
fn image_name(image: &str) -> String {
    let name = image.split('@').next().unwrap_or(image);
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let name = match name[last_slash..].rfind(':') {
        Some(i) => &name[..last_slash + i],
        None => name,
    };
    match name.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => name.to_string(),
        _ => format!("docker.io/{name}"),
    }
}

fn split_host(name: &str) -> (&str, &str) {
    match name.find('/') {
        Some(i) => (&name[..i], &name[i..]),
        None => (name, ""),
    }
}

/// Docker Hub answers to `docker.io` and `index.docker.io` alike.
fn docker_hub(host: &str) -> String {
    match host.to_ascii_lowercase().as_str() {
        "index.docker.io" | "registry-1.docker.io" => "docker.io".into(),
        other => other.into(),
    }
}

/// Host and port alike, each label of the key's host matching the
/// image's (`*` in a label matches any run of characters in it).
fn hosts_match(key: &str, image: &str) -> bool {
    let (key_host, key_port) = key.split_once(':').unwrap_or((key, ""));
    let (image_host, image_port) = image.split_once(':').unwrap_or((image, ""));
    let key_labels: Vec<&str> = key_host.split('.').collect();
    let image_labels: Vec<&str> = image_host.split('.').collect();
    key_port == image_port
        && key_labels.len() == image_labels.len()
        && key_labels
            .iter()
            .zip(&image_labels)
            .all(|(glob, label)| label_matches(glob, label))
}

fn label_matches(glob: &str, label: &str) -> bool {
    match glob.split_once('*') {
        None => glob == label,
        Some((head, rest)) => {
            let Some(after) = label.strip_prefix(head) else {
                return false;
            };
            (0..=after.len())
                .filter(|i| after.is_char_boundary(*i))
                .any(|i| label_matches(rest, &after[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kubelet keyring's own cases (its `urlsMatch`, keyring hits and
    /// misses), written out here as key, image, whether it serves.
    #[test]
    fn keys_serve_images_as_the_kubelets_keyring_matches_them() {
        let cases = [
            // A `*` in a label; the labels counted.
            ("*.kubernetes.io", "prefix.kubernetes.io/foo/bar", true),
            ("prefix.*.io", "prefix.kubernetes.io/foo/bar", true),
            ("prefix.kubernetes.*", "prefix.kubernetes.io/foo/bar", true),
            (
                "*-good.kubernetes.io",
                "prefix-good.kubernetes.io/foo/bar",
                true,
            ),
            ("*.kubernetes.io", "kubernetes.io/foo/bar", false),
            ("*.*.kubernetes.io", "prefix.kubernetes.io/foo/bar", false),
            ("kubernetes.io", "kubernetes.com/foo/bar", false),
            ("k*.io", "quay.io/foo/bar", false),
            ("https://*.docker.com", "prefix.docker.io/foo/bar", false),
            (
                "https://prefix.docker.c*",
                "prefix.docker.io/foo/bar",
                false,
            ),
            // Paths are prefixes; the port must be the same.
            (
                "*.kubernetes.io/blah",
                "prefix.kubernetes.io/blah/foo",
                true,
            ),
            ("prefix.*.io/foo", "prefix.kubernetes.io/foo/bar", true),
            (
                "*.kubernetes.io:1111/blah",
                "prefix.kubernetes.io:1111/blah/x",
                true,
            ),
            (
                "*.kubernetes.io:1234/blah",
                "prefix.kubernetes.io:1111/blah/x",
                false,
            ),
            (
                "prefix.*.io/foo",
                "prefix.kubernetes.io:1111/foo/bar",
                false,
            ),
            (
                "prefix.docker.io:1111",
                "prefix.docker.io:1111/path/foo/bar",
                true,
            ),
            ("bar.example.com/pong", "bar.example.com/pongz", true),
            ("bar.example.com/pong", "bar.example.com/ping", false),
            ("bar.example.com", "foo.example.com/x", false),
            // A scheme and Docker's `/v1/` name only the host.
            ("https://quay.io/v1/", "quay.io/foo/bar", true),
            (
                "https://*.docker.io/v2/",
                "prefix.docker.io/path:1111",
                true,
            ),
            (
                "https://hello.kubernetes.io",
                "hello.kubernetes.io/foo/bar",
                true,
            ),
            (
                "https://hello.kubernetes.io",
                "world.mesos.org/foo/bar",
                false,
            ),
            // Docker Hub's key serves its images, named or not.
            ("https://index.docker.io/v1/", "jenkins", true),
            (
                "https://index.docker.io/v1/",
                "google/docker-registry:1",
                true,
            ),
            (
                "https://index.docker.io/v1/",
                "index.docker.io/google/x",
                true,
            ),
            (
                "https://index.docker.io/v1/",
                "world.mesos.org/foo/bar",
                false,
            ),
            (
                "https://index.docker.io/v1/",
                "myhostdocker.io/foo/bar",
                false,
            ),
            (
                "https://index.docker.io/v1/",
                "registry:5000/foo/bar",
                false,
            ),
        ];
        for (key, image, serves) in cases {
            assert_eq!(covers(key, image), serves, "{key} for {image}");
        }
    }

    #[test]
    fn a_secrets_keys_come_from_its_type() {
        use k8s_openapi::ByteString;
        let secret = |type_: &str, field: &str, config: serde_json::Value| Secret {
            type_: Some(type_.into()),
            data: Some(
                [(
                    field.to_string(),
                    ByteString(config.to_string().into_bytes()),
                )]
                .into_iter()
                .collect(),
            ),
            ..Secret::default()
        };
        let json = secret(
            "kubernetes.io/dockerconfigjson",
            ".dockerconfigjson",
            serde_json::json!({"auths": {"registry.internal.example": {"auth": "eDp5"}}}),
        );
        assert_eq!(credential_keys(&json), ["registry.internal.example"]);
        let legacy = secret(
            "kubernetes.io/dockercfg",
            ".dockercfg",
            serde_json::json!({"https://quay.io/v1/": {"auth": "eDp5"}}),
        );
        assert_eq!(credential_keys(&legacy), ["https://quay.io/v1/"]);
        let opaque = secret(
            "Opaque",
            ".dockerconfigjson",
            serde_json::json!({"auths": {"x.example": {}}}),
        );
        assert!(credential_keys(&opaque).is_empty());
        let broken = Secret {
            type_: Some("kubernetes.io/dockerconfigjson".into()),
            ..Secret::default()
        };
        assert!(credential_keys(&broken).is_empty());
    }
}

//! Container image references, checked against the grammar the kubelet's
//! runtime uses (distribution/reference): a bad one is refused before
//! anything is sent, instead of ending as `InvalidImageName` on the node.
//!
//! ```text
//! reference := name [ ":" tag ] [ "@" digest ]
//! name      := [ domain "/" ] path-component [ "/" path-component ]*
//! domain    := host [ ":" port ]          (first component with "." or ":", or "localhost")
//! path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
//! tag       := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//! digest    := algorithm ":" [0-9a-fA-F]{32,}
//! ```

/// Whether a pull failed because the registry wants credentials the pod
/// did not give (rather than because the image does not exist).
pub fn needs_credentials(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "401 unauthorized",
        "no basic auth credentials",
        "failed to authorize",
        "authentication required",
    ]
    .iter()
    .any(|words| message.contains(words))
}

/// The registry an image is pulled from (`docker.io` when none is named).
pub fn registry_of(image: &str) -> &str {
    match image.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => first,
        _ => "docker.io",
    }
}

/// An image the registry would not give a pod for want of credentials.
pub struct PrivateImage<'a> {
    pub image: &'a str,
    pub namespace: &'a str,
    pub pod: &'a str,
    /// The pod's image pull secrets.
    pub pull_secrets: &'a [String],
    /// A Secret of the namespace that holds credentials for the registry,
    /// if podbay found one it may read.
    pub offer: Option<&'a str>,
    /// Whether podbay looked for one (the TUI's pane does not).
    pub searched: bool,
    /// The pod is podbay's copy (its container pulls with the copy's own
    /// secrets), not a pod a debug container was added to.
    pub copy: bool,
}

impl PrivateImage<'_> {
    /// One sentence: which registry, which secrets the container pulled
    /// with (named), and the way out, with the secret to use when known.
    pub fn sentence(&self) -> String {
        let registry = registry_of(self.image);
        let image = self.image;
        let secret = self.offer.unwrap_or("SECRET");
        let found = match (self.offer, self.searched) {
            (Some(name), _) => format!("{name} holds credentials for {registry}"),
            (None, true) => format!(
                "SECRET: a Secret of {} with credentials for {registry}; none podbay may read has them",
                self.namespace
            ),
            (None, false) => format!(
                "SECRET: a Secret of {} with credentials for {registry}",
                self.namespace
            ),
        };
        if self.copy {
            let secrets = match self.pull_secrets {
                [] => "it has none".to_string(),
                names => format!("they are {}", names.join(", ")),
            };
            return format!(
                "The registry {registry} wants credentials for {image}, and the copy pulls with its image pull secrets ({secrets}). Add one with --pull-secret {secret} ({found})."
            );
        }
        let secrets = match self.pull_secrets {
            [] => "it has none".to_string(),
            names => format!("they are {}", names.join(", ")),
        };
        format!(
            "The registry {registry} wants credentials for {image}, and a debug container pulls with its pod's image pull secrets ({secrets}). Debug a copy that carries one: podbay debug {pod} -n {namespace} --copy-to {pod}-debug --pull-secret {secret} --image {image} ({found}); or use an image the pod may pull.",
            pod = self.pod,
            namespace = self.namespace,
        )
    }
}

/// The name part may be at most this long (distribution's NameTotalLengthMax).
const NAME_MAX: usize = 255;

/// `Ok` for a reference a runtime would pull; else one sentence on what is wrong.
pub fn validate_reference(reference: &str) -> Result<(), String> {
    let bad = |why: &str| {
        Err(format!(
            "{reference:?} is not a valid image reference: {why}."
        ))
    };
    if reference.is_empty() {
        return bad("it is empty");
    }
    if let Some(c) = reference
        .chars()
        .find(|c| c.is_whitespace() || c.is_control())
    {
        return bad(&format!("it contains {c:?}"));
    }
    let (rest, digest) = match reference.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (reference, None),
    };
    if let Some(digest) = digest
        && !valid_digest(digest)
    {
        return bad("the digest after @ must be ALGORITHM:HEX (e.g. sha256: and 64 hex digits)");
    }
    // A tag follows the last ':' that comes after the last '/'.
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(tag) = tag
        && !valid_tag(tag)
    {
        return bad(
            "a tag is letters, digits, '_', '.' and '-' (at most 128, not starting with '.' or '-')",
        );
    }
    if name.len() > NAME_MAX {
        return bad("the name is longer than 255 characters");
    }
    let mut components: Vec<&str> = name.split('/').collect();
    let first = components[0];
    let has_domain = components.len() > 1
        && (first.contains('.') || first.contains(':') || first == "localhost");
    if has_domain {
        if !valid_domain(first) {
            return bad(&format!("{first:?} is not a valid registry host"));
        }
        components.remove(0);
    }
    match components.iter().find(|c| !valid_path_component(c)) {
        Some(c) if c.chars().any(|ch| ch.is_ascii_uppercase()) => {
            bad("repository names must be lowercase")
        }
        Some(&"") => bad("a name part between '/' is empty"),
        Some(c) => bad(&format!(
            "{c:?} may hold only lowercase letters, digits and single separators (. _ __ -)"
        )),
        None => Ok(()),
    }
}

fn alnum_lower(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn valid_path_component(component: &str) -> bool {
    let chars: Vec<char> = component.chars().collect();
    let (Some(&first), Some(&last)) = (chars.first(), chars.last()) else {
        return false;
    };
    if !alnum_lower(first) || !alnum_lower(last) {
        return false;
    }
    // Separators between alphanumeric runs: ".", "_", "__" or any run of "-".
    let mut i = 0;
    while i < chars.len() {
        if alnum_lower(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !alnum_lower(chars[i]) {
            i += 1;
        }
        let separator: String = chars[start..i].iter().collect();
        let ok =
            matches!(separator.as_str(), "." | "_" | "__") || separator.chars().all(|c| c == '-');
        if !ok {
            return false;
        }
    }
    true
}

fn valid_domain(domain: &str) -> bool {
    let (host, port) = match domain.rsplit_once(':') {
        Some((host, port)) if !domain.ends_with(']') => (host, Some(port)),
        _ => (domain, None),
    };
    if let Some(port) = port
        && (port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()))
    {
        return false;
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

fn valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric() || c == '_')
        && tag.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn valid_digest(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let algorithm_ok = algorithm.split(['+', '.', '-', '_']).all(|part| {
        let mut cs = part.chars();
        matches!(cs.next(), Some(c) if c.is_ascii_alphabetic())
            && cs.all(|c| c.is_ascii_alphanumeric())
    });
    algorithm_ok && hex.len() >= 32 && hex.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_registries_serve() {
        for good in [
            "busybox",
            "busybox:1.36",
            "nicolaka/netshoot:v0.13",
            "gcr.io/distroless/payments-api:3.2.0",
            "localhost:5000/team/tool_x:latest",
            "registry.example.com:443/a/b__c/d-e--f:1.0-rc.1",
            "[::1]:5000/debug:1",
            "alpine@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "alpine:3.20@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "MyRegistry.example.com/tools/x",
        ] {
            assert_eq!(validate_reference(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn refuses_what_a_runtime_would_call_invalid_image_name() {
        for (bad, says) in [
            ("Bad Image:1", "contains ' '"),
            ("", "empty"),
            ("Busybox:1.36", "lowercase"),
            ("busybox:", "a tag is"),
            ("busybox:-1", "a tag is"),
            ("team//tool", "empty"),
            ("tool-:1", "single separators"),
            ("a...b", "single separators"),
            ("alpine@sha256:abc", "digest"),
            ("host:notaport/x", "registry host"),
        ] {
            let err = validate_reference(bad).expect_err(bad);
            assert!(err.contains(says), "{bad}: {err}");
            assert!(err.starts_with(&format!("{bad:?} is not a valid image reference")));
        }
    }
}

#[cfg(test)]
mod private_tests {
    use super::*;

    #[test]
    fn a_registry_that_wants_credentials_is_named_with_the_pods_secrets() {
        assert!(needs_credentials(
            "failed to pull and unpack image \"r.example/x:1\": failed to resolve reference: failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized"
        ));
        assert!(!needs_credentials("manifest unknown: manifest unknown"));
        assert_eq!(
            registry_of("registry.internal.example/tools/netshoot:1"),
            "registry.internal.example"
        );
        assert_eq!(registry_of("localhost:5000/x"), "localhost:5000");
        assert_eq!(registry_of("nicolaka/netshoot"), "docker.io");
        let none = PrivateImage {
            image: "registry.internal.example/tools/netshoot:1",
            namespace: "shop",
            pod: "redis-0",
            pull_secrets: &[],
            offer: Some("regcred"),
            searched: true,
            copy: false,
        };
        assert_eq!(
            none.sentence(),
            "The registry registry.internal.example wants credentials for registry.internal.example/tools/netshoot:1, and a debug container pulls with its pod's image pull secrets (it has none). Debug a copy that carries one: podbay debug redis-0 -n shop --copy-to redis-0-debug --pull-secret regcred --image registry.internal.example/tools/netshoot:1 (regcred holds credentials for registry.internal.example); or use an image the pod may pull."
        );
        let secrets = ["regcred".to_string(), "other".to_string()];
        let unknown = PrivateImage {
            pull_secrets: &secrets,
            offer: None,
            ..none
        };
        assert!(unknown.sentence().contains("(they are regcred, other)"));
        assert!(
            unknown.sentence().contains("--pull-secret SECRET --image"),
            "{}",
            unknown.sentence()
        );
        let unsearched = PrivateImage {
            searched: false,
            ..unknown
        };
        assert!(
            unsearched.sentence().contains(
                "(SECRET: a Secret of shop with credentials for registry.internal.example); or"
            ),
            "{}",
            unsearched.sentence()
        );
        let copy = PrivateImage {
            copy: true,
            ..unknown
        };
        assert!(
            copy.sentence()
                .starts_with("The registry registry.internal.example wants credentials for registry.internal.example/tools/netshoot:1, and the copy pulls with its image pull secrets (they are regcred, other). Add one with --pull-secret SECRET ("),
            "{}",
            copy.sentence()
        );
    }
}

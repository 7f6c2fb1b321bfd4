//! What the simulator's images contain. There is no registry: an image is
//! one of two kinds, told apart by its name.
//!
//! - **Distroless** (a path component `distroless`, and the demo's ledger
//!   service): only its program, its files and the host's shared
//!   libraries (as `gcr.io/distroless/cc`). No shell, no coreutils, so
//!   `kubectl exec … -- sh` fails as it does on a real node. The program is
//!   podbay's own binary in its workload mode, which logs like a service.
//! - **Servers** (redis, nginx, the demo's storefront): a shell and the
//!   usual tools, and a server program that is podbay's workload mode too,
//!   answering on the ports a real one would (see [`super::serve`]).
//! - **Everything else** (busybox, netshoot, …): a shell and the usual
//!   tools, which are the host's own system directories mounted read-only.

use super::reference::{repository, split_reference};

/// The host directories a tools image is made of (`etc` last: a
/// distroless debug image keeps its own).
pub const HOST_SYSTEM_DIRS: [&str; 9] = [
    "bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "opt", "etc",
];

/// The host directories a distroless image gets: the C library and the
/// dynamic loader its program needs (as `gcr.io/distroless/cc` has them),
/// and no `bin`.
pub const HOST_LIBRARY_DIRS: [&str; 8] = [
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "usr/lib",
    "usr/lib32",
    "usr/lib64",
    "usr/libx32",
];

/// The environment variable that selects podbay's workload mode, and names
/// the service it plays.
pub const WORKLOAD_ENV: &str = "PODBAY_WORKLOAD";

/// Demo images that are distroless although their names do not say so.
const DISTROLESS_DEMO_REPOSITORIES: [&str; 1] = ["ghcr.io/podbay/ledger"];

/// Server images on a full base: (repository, service, program). The
/// program sits in `/app`, not where the real images keep it: `/usr` is the
/// host's, read-only.
const SERVER_IMAGES: [(&str, &str, &str); 5] = [
    ("redis", "redis", "/app/redis-server"),
    ("docker.io/library/redis", "redis", "/app/redis-server"),
    ("nginx", "nginx", "/app/nginx"),
    ("ghcr.io/podbay/storefront", "storefront", "/app/storefront"),
    ("ghcr.io/podbay/indexer", "indexer", "/app/indexer"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Image {
    /// A single program (at `/app/NAME`) and its configuration; with
    /// `debug` (a `debug` tag, as distroless's `:debug` images) busybox's
    /// shell and tools as well (here: the host's).
    Distroless { name: String, debug: bool },
    /// A shell and tools, and a server program (its ENTRYPOINT).
    Server {
        name: &'static str,
        program: &'static str,
    },
    /// A shell and tools.
    Tools,
}

/// The image's `USER`: root, as busybox and most images run, except the
/// `nonroot` variants (distroless's `:nonroot`, uid 65532).
pub fn user_of(reference: &str) -> i64 {
    let tag = split_reference(reference).1.unwrap_or_default();
    if tag.contains("nonroot") { 65532 } else { 0 }
}

impl Image {
    pub fn of(reference: &str) -> Image {
        let repository = repository(reference);
        let distroless = repository.split('/').any(|part| part == "distroless")
            || DISTROLESS_DEMO_REPOSITORIES.contains(&repository);
        // Distroless's `:debug` variants carry busybox and its shell.
        let debug_variant = split_reference(reference)
            .1
            .is_some_and(|tag| tag.starts_with("debug"));
        let demo_app = DISTROLESS_DEMO_REPOSITORIES.contains(&repository);
        let tag = split_reference(reference).1.unwrap_or_default();
        if distroless && (!debug_variant || demo_app) {
            let name = repository.rsplit('/').next().unwrap_or("app").to_string();
            // The demo's apps publish `VERSION-debug` (or `debug`) tags.
            let debug = demo_app && (debug_variant || tag.ends_with("-debug"));
            return Image::Distroless { name, debug };
        }
        match SERVER_IMAGES.iter().find(|(r, ..)| *r == repository) {
            Some(&(_, name, program)) => Image::Server { name, program },
            None => Image::Tools,
        }
    }

    /// The image's ENTRYPOINT, which a spec's `args` alone are appended to.
    pub fn entrypoint(&self) -> Vec<String> {
        self.program().into_iter().collect()
    }

    /// The image's ENTRYPOINT + CMD, used when the spec sets neither
    /// `command` nor `args`.
    pub fn default_argv(&self) -> Vec<String> {
        match self {
            Image::Distroless { .. } | Image::Server { .. } => self.entrypoint(),
            Image::Tools => vec!["sh".into()],
        }
    }

    /// The path of a distroless image's one program.
    pub fn program(&self) -> Option<String> {
        match self {
            Image::Distroless { name, .. } => Some(format!("/app/{name}")),
            Image::Server { program, .. } => Some(program.to_string()),
            Image::Tools => None,
        }
    }

    /// The service its program plays, if it has one.
    pub fn service(&self) -> Option<&str> {
        match self {
            Image::Distroless { name, .. } => Some(name),
            Image::Server { name, .. } => Some(name),
            Image::Tools => None,
        }
    }

    /// The image's own environment (its config's `Env`).
    pub fn env(&self) -> Vec<(String, String)> {
        match self {
            Image::Distroless { name, .. } => vec![
                ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
                (
                    "SSL_CERT_FILE".into(),
                    "/etc/ssl/certs/ca-certificates.crt".into(),
                ),
                (WORKLOAD_ENV.into(), name.clone()),
            ],
            Image::Server { name, .. } => vec![
                (
                    "PATH".into(),
                    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
                ),
                (WORKLOAD_ENV.into(), name.to_string()),
            ],
            Image::Tools => vec![(
                "PATH".into(),
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
            )],
        }
    }

    /// Files the image holds besides its program, as (path, content).
    pub fn files(&self) -> Vec<(String, String)> {
        match self {
            Image::Distroless { name, .. } => vec![
                (
                    "/etc/passwd".into(),
                    "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n".into(),
                ),
                ("/etc/group".into(), "root:x:0:\nnonroot:x:65532:\n".into()),
                (
                    format!("/etc/{name}/config.yaml"),
                    format!(
                        "service: {name}\nlisten: :8080\nupstream:\n  ledger: http://ledger.payments.svc:8080\n  timeout: 2s\nretries: 3\n"
                    ),
                ),
            ],
            Image::Server { .. } | Image::Tools => Vec::new(),
        }
    }

    /// Directories the image's program writes to, owned by its user.
    pub fn writable_dirs(&self) -> Vec<String> {
        match self {
            Image::Distroless { name, .. } => vec!["/var/dump".into(), format!("/var/log/{name}")],
            Image::Server { .. } | Image::Tools => Vec::new(),
        }
    }

    /// Whether `program` (as argv[0]) exists in the image, for hosts where
    /// the simulator cannot give containers their own root.
    pub fn provides(&self, program: &str) -> bool {
        match self {
            Image::Distroless { debug: false, .. } => self.program().as_deref() == Some(program),
            Image::Distroless { .. } if self.program().as_deref() == Some(program) => true,
            Image::Server {
                program: server, ..
            } if *server == program => true,
            Image::Server { .. } | Image::Tools | Image::Distroless { .. } => {
                program.contains('/') || which(program).is_some()
            }
        }
    }
}

pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The demo's private registry: its images pull only with credentials
/// for it, from one of the pod's image pull secrets.
pub const PRIVATE_REGISTRY: &str = "registry.internal.example";

/// The pod's image pull secrets, read as the kubelet reads them: those
/// found, and the names of those it could not find.
pub struct PullSecrets {
    pub found: Vec<serde_json::Value>,
    pub missing: Vec<String>,
}

impl PullSecrets {
    /// `secret` finds a Secret of the pod's namespace by name.
    pub fn of(
        pod: &serde_json::Value,
        secret: impl Fn(&str) -> Option<serde_json::Value>,
    ) -> PullSecrets {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        let names = pod
            .pointer("/spec/imagePullSecrets")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s["name"].as_str())
            .filter(|n| !n.is_empty());
        for name in names {
            match secret(name) {
                Some(s) => found.push(s),
                None => missing.push(name.to_string()),
            }
        }
        PullSecrets { found, missing }
    }

    /// The kubelet's Warning when some could not be read.
    pub fn missing_event(&self) -> Option<String> {
        (!self.missing.is_empty()).then(|| {
            format!(
                "Unable to retrieve some image pull secrets ({}); attempting to pull the image may not succeed.",
                self.missing.join(", ")
            )
        })
    }

    /// containerd's words when `image` is the private registry's and none
    /// of the secrets holds credentials for it.
    pub fn refusal(&self, image: &str) -> Option<String> {
        let rest = image.strip_prefix(PRIVATE_REGISTRY)?.strip_prefix('/')?;
        let authorized = self
            .found
            .iter()
            .flat_map(registries_of)
            .any(|key| key_matches(&key, PRIVATE_REGISTRY, rest));
        if authorized {
            return None;
        }
        let reference = super::reference::full_reference(image);
        let scope = super::reference::repository(rest).replace('/', "%2F");
        Some(format!(
            "failed to pull and unpack image {reference:?}: failed to resolve reference {reference:?}: failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://{PRIVATE_REGISTRY}/token?scope=repository%3A{scope}%3Apull: 401 Unauthorized"
        ))
    }
}

/// The registries a pull secret holds credentials for: the `auths` keys
/// of a `kubernetes.io/dockerconfigjson` one, the top-level keys of a
/// `kubernetes.io/dockercfg` one; none for any other type.
fn registries_of(secret: &serde_json::Value) -> Vec<String> {
    use base64::Engine as _;
    let (field, nested) = match secret["type"].as_str() {
        Some("kubernetes.io/dockerconfigjson") => (".dockerconfigjson", true),
        Some("kubernetes.io/dockercfg") => (".dockercfg", false),
        _ => return Vec::new(),
    };
    let config = secret["data"][field]
        .as_str()
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    let Some(config) = config else {
        return Vec::new();
    };
    let auths = if nested { &config["auths"] } else { &config };
    auths
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// Whether a credentials key (`registry.example`, `https://registry.example`,
/// `registry.example/team`) covers `repository` on `host`, as the
/// kubelet's keyring matches: the host alike, the key's path a prefix.
fn key_matches(key: &str, host: &str, repository: &str) -> bool {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let (key_host, key_path) = key.split_once('/').unwrap_or((key, ""));
    // Docker's own `…/v1/` names the registry, not a path in it.
    let key_path = match key_path.trim_end_matches('/') {
        "v1" => "",
        path => path,
    };
    key_host.eq_ignore_ascii_case(host) && repository.starts_with(key_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distroless_images_are_told_by_name() {
        assert_eq!(
            Image::of("gcr.io/distroless/payments-api:3.2.0"),
            Image::Distroless {
                name: "payments-api".into(),
                debug: false,
            }
        );
        let debug = Image::of("ghcr.io/podbay/ledger:1.0.4-debug");
        assert!(debug.provides("sh") && debug.provides("/app/ledger"));
        assert!(!Image::of("ghcr.io/podbay/ledger:1.0.4").provides("sh"));
        assert_eq!(
            Image::of("ghcr.io/podbay/ledger:1.0.4")
                .program()
                .as_deref(),
            Some("/app/ledger")
        );
        assert_eq!(Image::of("redis:7.4").default_argv(), ["/app/redis-server"]);
        assert!(Image::of("redis:7.4").provides("sh"));
        for tools in [
            "busybox:1.36",
            "nicolaka/netshoot",
            "localhost:5000/x",
            "gcr.io/distroless/base-debian12:debug",
            "gcr.io/distroless/static:debug-nonroot",
        ] {
            assert_eq!(Image::of(tools), Image::Tools, "{tools}");
        }
    }

    #[test]
    fn a_distroless_image_has_its_program_and_no_shell() {
        let image = Image::of("gcr.io/distroless/payments-api@sha256:abc");
        assert!(image.provides("/app/payments-api"));
        assert!(!image.provides("sh"));
        assert!(!image.provides("/bin/sh"));
        assert_eq!(image.default_argv(), ["/app/payments-api"]);
        assert!(Image::Tools.provides("sh"));
        assert!(!Image::Tools.provides("no-such-program-anywhere"));
    }

    #[test]
    fn only_nonroot_tags_run_as_non_root_whatever_the_digest_or_port() {
        assert_eq!(user_of("gcr.io/distroless/static:nonroot"), 65532);
        assert_eq!(
            user_of("gcr.io/distroless/static:nonroot@sha256:0123abcd"),
            65532
        );
        assert_eq!(user_of("gcr.io/distroless/static@sha256:0123abcd"), 0);
        assert_eq!(user_of("localhost:5000/nonroot-tools"), 0);
        assert_eq!(user_of("busybox:1.36"), 0);
    }
}

#[cfg(test)]
mod pull_secret_tests {
    use super::*;
    use base64::Engine as _;

    fn secret(type_: &str, field: &str, config: serde_json::Value) -> serde_json::Value {
        let data = base64::engine::general_purpose::STANDARD.encode(config.to_string());
        serde_json::json!({"type": type_, "data": {field: data}})
    }

    fn pod(secrets: &[&str]) -> serde_json::Value {
        let names: Vec<serde_json::Value> = secrets
            .iter()
            .map(|n| serde_json::json!({"name": n}))
            .collect();
        serde_json::json!({"spec": {"imagePullSecrets": names}})
    }

    #[test]
    fn the_private_registry_pulls_only_with_a_secret_for_it() {
        let image = "registry.internal.example/tools/netshoot:1";
        let for_it = secret(
            "kubernetes.io/dockerconfigjson",
            ".dockerconfigjson",
            serde_json::json!({"auths": {"https://registry.internal.example/v1/": {}}}),
        );
        let for_another = secret(
            "kubernetes.io/dockerconfigjson",
            ".dockerconfigjson",
            serde_json::json!({"auths": {"quay.io": {}}}),
        );
        let legacy = secret(
            "kubernetes.io/dockercfg",
            ".dockercfg",
            serde_json::json!({"registry.internal.example/tools": {}}),
        );
        let opaque = secret(
            "Opaque",
            ".dockerconfigjson",
            serde_json::json!({"auths": {"registry.internal.example": {}}}),
        );
        let lookup = |name: &str| match name {
            "regcred" => Some(for_it.clone()),
            "quay" => Some(for_another.clone()),
            "legacy" => Some(legacy.clone()),
            "opaque" => Some(opaque.clone()),
            _ => None,
        };
        let pulls = |names: &[&str]| {
            PullSecrets::of(&pod(names), lookup)
                .refusal(image)
                .is_none()
        };
        assert!(pulls(&["regcred"]));
        assert!(pulls(&["quay", "legacy"]));
        assert!(!pulls(&[]));
        assert!(!pulls(&["quay", "opaque"]));
        assert!(!pulls(&["gone"]));
        let missing = PullSecrets::of(&pod(&["gone", "regcred", "also-gone"]), lookup);
        assert_eq!(
            missing.missing_event().as_deref(),
            Some(
                "Unable to retrieve some image pull secrets (gone, also-gone); attempting to pull the image may not succeed."
            )
        );
        // Public images pull whatever the secrets.
        assert!(
            PullSecrets::of(&pod(&[]), lookup)
                .refusal("busybox:1.36")
                .is_none()
        );
    }
}

/// argv as a container runtime computes it from the spec and the image's
/// ENTRYPOINT/CMD (see [`Image::default_argv`]).
pub fn command_line(spec: &serde_json::Value, image: &Image) -> Vec<String> {
    let strings = |field: &str| -> Vec<String> {
        spec.get(field)
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let command = strings("command");
    let args = strings("args");
    match (command.is_empty(), args.is_empty()) {
        (false, _) => command.into_iter().chain(args).collect(),
        (true, false) => image.entrypoint().into_iter().chain(args).collect(),
        (true, true) => image.default_argv(),
    }
}

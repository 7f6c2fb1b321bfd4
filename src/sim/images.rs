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
const SERVER_IMAGES: [(&str, &str, &str); 4] = [
    ("redis", "redis", "/app/redis-server"),
    ("docker.io/library/redis", "redis", "/app/redis-server"),
    ("nginx", "nginx", "/app/nginx"),
    ("ghcr.io/podbay/storefront", "storefront", "/app/storefront"),
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

/// The demo's private registry: its images pull only for a pod whose
/// `imagePullSecrets` names a secret (the simulator keeps no Secrets, so
/// any name serves). `Some(registry)` when it refuses.
pub const PRIVATE_REGISTRY: &str = "registry.internal.example";

pub fn private_registry_refuses(image: &str, pod: &serde_json::Value) -> Option<&'static str> {
    let private = image
        .strip_prefix(PRIVATE_REGISTRY)
        .is_some_and(|rest| rest.starts_with('/'));
    let has_secret = pod
        .pointer("/spec/imagePullSecrets")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|secrets| {
            secrets
                .iter()
                .any(|s| s["name"].as_str().is_some_and(|n| !n.is_empty()))
        });
    (private && !has_secret).then_some(PRIVATE_REGISTRY)
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

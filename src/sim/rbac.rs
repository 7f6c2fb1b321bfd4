//! Bearer-token authentication and a small RBAC table with the users a real
//! cluster has: an admin, a read-only viewer, and a namespace-bound developer
//! who may not list namespaces or pods across namespaces.

use std::fmt::Write as _;

/// Who the simulator knows. Tokens are random per run.
#[derive(Debug, Clone)]
pub struct User {
    pub name: &'static str,
    pub token: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// cluster-admin.
    Admin,
    /// get/list/watch pods, namespaces, nodes, events, services and the apps
    /// that own pods, read logs; nothing else (as the built-in `view` role,
    /// not Secrets).
    Viewer,
    /// Everything on pods in one namespace, reading its events, workloads,
    /// Services and Secrets (as the built-in `edit` role does); nothing
    /// cluster-wide.
    Namespaced(String),
}

impl Role {
    /// Whether the user may read `metrics.k8s.io`'s `resource` (`pods`,
    /// `nodes`) in `namespace` (empty: cluster-wide), as metrics-server's
    /// `system:aggregated-metrics-reader` gives it to the view, edit and
    /// admin roles.
    pub fn reads_metrics(&self, resource: &str, namespace: &str) -> bool {
        match self {
            Role::Admin | Role::Viewer => true,
            Role::Namespaced(ns) => resource == "pods" && namespace == ns,
        }
    }
}

/// What a request wants to do, in RBAC terms.
#[derive(Debug, Clone, Copy)]
pub struct Attributes<'a> {
    pub verb: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    /// Empty for cluster-scoped requests (including all-namespace lists).
    pub namespace: &'a str,
}

impl Role {
    pub fn allows(&self, a: &Attributes<'_>) -> bool {
        let read = matches!(a.verb, "get" | "list" | "watch");
        match self {
            Role::Admin => true,
            Role::Viewer => match (a.resource, a.subresource) {
                (
                    "pods" | "namespaces" | "nodes" | "events" | "deployments" | "replicasets"
                    | "statefulsets" | "daemonsets" | "jobs" | "cronjobs" | "services"
                    | "endpoints" | "endpointslices",
                    "",
                ) => read,
                ("pods", "log") => a.verb == "get",
                _ => false,
            },
            Role::Namespaced(ns) => {
                if a.namespace != ns {
                    return false;
                }
                match (a.resource, a.subresource) {
                    (
                        "pods",
                        "" | "log" | "ephemeralcontainers" | "attach" | "exec" | "portforward",
                    ) => true,
                    (
                        "events" | "deployments" | "replicasets" | "statefulsets" | "daemonsets"
                        | "jobs" | "cronjobs" | "secrets" | "services" | "endpoints"
                        | "endpointslices",
                        "",
                    ) => read,
                    _ => false,
                }
            }
        }
    }
}

/// The users of one simulator run.
#[derive(Debug, Clone)]
pub struct Users {
    pub admin: User,
    pub viewer: User,
    pub developer: User,
}

/// The namespace the `sim-dev` user is bound to.
pub const DEVELOPER_NAMESPACE: &str = "shop";

impl Users {
    pub fn generate() -> Self {
        Users {
            admin: User {
                name: "sim-admin",
                token: random_token(),
                role: Role::Admin,
            },
            viewer: User {
                name: "sim-viewer",
                token: random_token(),
                role: Role::Viewer,
            },
            developer: User {
                name: "sim-dev",
                token: random_token(),
                role: Role::Namespaced(DEVELOPER_NAMESPACE.to_string()),
            },
        }
    }

    /// The user a `Authorization` header value authenticates, if any.
    pub fn authenticate(&self, authorization: Option<&str>) -> Option<&User> {
        let token = authorization?.strip_prefix("Bearer ")?.trim();
        [&self.admin, &self.viewer, &self.developer]
            .into_iter()
            .find(|u| constant_time_eq(u.token.as_bytes(), token.as_bytes()))
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// 32 random bytes from the OS as hex.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // Rather than refusing to start (the server only listens on
        // loopback): a generator seeded from the time and the process.
        let mut rng = fastrand::Rng::new();
        rng.fill(&mut bytes);
    }
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs<'a>(verb: &'a str, resource: &'a str, sub: &'a str, ns: &'a str) -> Attributes<'a> {
        Attributes {
            verb,
            resource,
            subresource: sub,
            namespace: ns,
        }
    }

    #[test]
    fn viewer_reads_but_cannot_debug() {
        let viewer = Role::Viewer;
        assert!(viewer.allows(&attrs("list", "pods", "", "")));
        assert!(viewer.allows(&attrs("watch", "events", "", "shop")));
        assert!(viewer.allows(&attrs("get", "pods", "log", "shop")));
        assert!(!viewer.allows(&attrs("patch", "pods", "ephemeralcontainers", "shop")));
        assert!(!viewer.allows(&attrs("create", "pods", "attach", "shop")));
        assert!(!viewer.allows(&attrs("create", "pods", "exec", "shop")));
        assert!(!viewer.allows(&attrs("create", "pods", "portforward", "shop")));
        assert!(!viewer.allows(&attrs("delete", "pods", "", "shop")));
    }

    #[test]
    fn developer_is_bound_to_one_namespace() {
        let dev = Role::Namespaced("shop".into());
        assert!(dev.allows(&attrs("patch", "pods", "ephemeralcontainers", "shop")));
        assert!(dev.allows(&attrs("create", "pods", "attach", "shop")));
        assert!(dev.allows(&attrs("create", "pods", "portforward", "shop")));
        assert!(!dev.allows(&attrs("list", "pods", "", "")));
        assert!(!dev.allows(&attrs("list", "namespaces", "", "")));
        assert!(!dev.allows(&attrs("get", "pods", "", "payments")));
    }

    #[test]
    fn metrics_are_read_where_pods_are() {
        assert!(Role::Viewer.reads_metrics("nodes", ""));
        let dev = Role::Namespaced("shop".into());
        assert!(dev.reads_metrics("pods", "shop"));
        assert!(!dev.reads_metrics("pods", ""));
        assert!(!dev.reads_metrics("pods", "payments"));
        assert!(!dev.reads_metrics("nodes", ""));
    }

    #[test]
    fn tokens_are_random_and_authenticate_their_user() {
        let users = Users::generate();
        assert_ne!(users.admin.token, users.viewer.token);
        assert_eq!(users.admin.token.len(), 64);
        let header = format!("Bearer {}", users.viewer.token);
        assert_eq!(
            users.authenticate(Some(&header)).map(|u| u.name),
            Some("sim-viewer")
        );
        assert!(users.authenticate(Some("Bearer nope")).is_none());
        assert!(users.authenticate(None).is_none());
        assert!(
            users.authenticate(Some(&users.admin.token)).is_none(),
            "scheme is required"
        );
    }
}

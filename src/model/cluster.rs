//! Which cluster, and as whom. Users run several clusters with the same pod
//! names (production and staging), so everything that reaches a container
//! is keyed by the cluster too, never by namespace/pod/container alone.

use std::sync::Arc;

use super::PodKey;

/// A connection's identity: the kubeconfig context it was made with, the
/// API server it talks to, and the kubeconfig user whose credentials it
/// carries. Two contexts on one server with other users are two clusters
/// here: a stream opened with one's credentials is never lent to the other.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterId {
    pub context: Arc<str>,
    pub server: Arc<str>,
    pub user: Arc<str>,
}

impl ClusterId {
    pub fn new(context: &str, server: &str, user: &str) -> Self {
        ClusterId {
            context: context.into(),
            server: server.into(),
            user: user.into(),
        }
    }
}

/// One container of one pod on one cluster: what a terminal is on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TerminalKey {
    pub cluster: ClusterId,
    pub pod: PodKey,
    pub container: String,
}

impl TerminalKey {
    pub fn new(cluster: ClusterId, pod: PodKey, container: impl Into<String>) -> Self {
        TerminalKey {
            cluster,
            pod,
            container: container.into(),
        }
    }
}

/// "shop/web/debugger-x7k2" (the cluster is shown apart, where it matters).
impl std::fmt::Display for TerminalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.pod, self.container)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_pod_on_another_context_or_user_is_another_container() {
        let pod = PodKey::new("shop", "cart-1");
        let a = TerminalKey::new(
            ClusterId::new("sim-a", "https://a", "admin"),
            pod.clone(),
            "cart",
        );
        let b = TerminalKey::new(
            ClusterId::new("sim-b", "https://b", "admin"),
            pod.clone(),
            "cart",
        );
        let viewer = TerminalKey::new(
            ClusterId::new("sim-a", "https://a", "viewer"),
            pod.clone(),
            "cart",
        );
        assert_ne!(a, b);
        assert_ne!(a, viewer);
        assert_eq!(a, a.clone());
        assert_eq!(a.to_string(), "shop/cart-1/cart");
    }
}

//! Kubeconfig, context and namespace → a `kube::Client`, with errors a
//! person can act on.

use std::path::PathBuf;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

use super::errors::root_cause;

/// Where to find the cluster: an explicit kubeconfig file (else `KUBECONFIG`,
/// which may list several files, else `~/.kube/config`) and a context (else
/// the current one).
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
}

/// A client bound to one context.
#[derive(Clone)]
pub struct Connection {
    pub client: kube::Client,
    pub context: String,
    /// The context's namespace, or `default`.
    pub namespace: String,
    /// Every context name in the kubeconfig, for `:ctx` completion.
    pub contexts: Vec<String>,
    pub server: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("Cannot read the kubeconfig {path}: {reason}. Check the file or pass --kubeconfig.")]
    Unreadable { path: String, reason: String },
    #[error(
        "No kubeconfig found (KUBECONFIG is unset and ~/.kube/config does not exist). Pass --kubeconfig, or try `podbay demo`."
    )]
    Missing,
    #[error("The kubeconfig has no context named {0:?}. Known contexts: {1}.")]
    UnknownContext(String, String),
    #[error("The kubeconfig has no current context. Pick one with --context ({0}).")]
    NoCurrentContext(String),
    #[error("Cannot use context {context:?}: {reason}.")]
    BadContext { context: String, reason: String },
}

impl Target {
    fn load(&self) -> Result<Kubeconfig, ConnectError> {
        let unreadable = |path: String, e: KubeconfigError| ConnectError::Unreadable {
            path,
            reason: root_cause(&e),
        };
        match &self.kubeconfig {
            Some(path) => {
                Kubeconfig::read_from(path).map_err(|e| unreadable(path.display().to_string(), e))
            }
            None => match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
                Some(list) => {
                    // Like kubectl, skip listed files that do not exist
                    // (kube's `Kubeconfig::from_env` fails on them).
                    let mut merged: Option<Kubeconfig> = None;
                    for path in std::env::split_paths(&list).filter(|p| p.exists()) {
                        let next = Kubeconfig::read_from(&path)
                            .map_err(|e| unreadable(path.display().to_string(), e))?;
                        merged = Some(match merged {
                            Some(acc) => acc
                                .merge(next)
                                .map_err(|e| unreadable(path.display().to_string(), e))?,
                            None => next,
                        });
                    }
                    merged.ok_or(ConnectError::Missing)
                }
                None => {
                    let home =
                        directories::BaseDirs::new().map(|d| d.home_dir().join(".kube/config"));
                    match home.filter(|p| p.exists()) {
                        Some(path) => Kubeconfig::read_from(&path)
                            .map_err(|e| unreadable(path.display().to_string(), e)),
                        None => Err(ConnectError::Missing),
                    }
                }
            },
        }
    }

    /// Reads the kubeconfig and builds a client for the chosen context. Does
    /// not contact the server: an unreachable one shows up on first use.
    pub async fn connect(&self) -> Result<Connection, ConnectError> {
        let kubeconfig = self.load()?;
        let contexts: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
        let known = || contexts.join(", ");
        let context = match self
            .context
            .clone()
            .or_else(|| kubeconfig.current_context.clone())
        {
            Some(c) if contexts.contains(&c) => c,
            Some(c) => return Err(ConnectError::UnknownContext(c, known())),
            None => return Err(ConnectError::NoCurrentContext(known())),
        };
        let options = KubeConfigOptions {
            context: Some(context.clone()),
            ..Default::default()
        };
        let bad = |reason: String| ConnectError::BadContext {
            context: context.clone(),
            reason,
        };
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| bad(root_cause(&e)))?;
        let namespace = config.default_namespace.clone();
        let server = config.cluster_url.to_string();
        let client = kube::Client::try_from(config).map_err(|e| bad(root_cause(&e)))?;
        Ok(Connection {
            client,
            context,
            namespace,
            contexts,
            server,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("podbay-client-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    const CONFIG: &str = r#"{"apiVersion":"v1","kind":"Config","current-context":"a",
        "clusters":[{"name":"c","cluster":{"server":"https://127.0.0.1:1"}}],
        "users":[{"name":"u","user":{"token":"t"}}],
        "contexts":[{"name":"a","context":{"cluster":"c","user":"u","namespace":"shop"}},
                    {"name":"b","context":{"cluster":"c","user":"u"}}]}"#;

    #[tokio::test]
    async fn picks_the_current_or_named_context_and_its_namespace() {
        let path = write("ok.kubeconfig", CONFIG);
        let target = Target {
            kubeconfig: Some(path.clone()),
            context: None,
        };
        let conn = target.connect().await.unwrap();
        assert_eq!(conn.context, "a");
        assert_eq!(conn.namespace, "shop");
        assert_eq!(conn.contexts, ["a", "b"]);
        let b = Target {
            kubeconfig: Some(path),
            context: Some("b".into()),
        };
        assert_eq!(b.connect().await.unwrap().namespace, "default");
    }

    #[tokio::test]
    async fn bad_inputs_give_one_clear_sentence() {
        let path = write("ok2.kubeconfig", CONFIG);
        let unknown = Target {
            kubeconfig: Some(path),
            context: Some("nope".into()),
        };
        let err = unknown.connect().await.err().unwrap().to_string();
        assert_eq!(
            err,
            "The kubeconfig has no context named \"nope\". Known contexts: a, b."
        );

        let broken = Target {
            kubeconfig: Some(write("broken.kubeconfig", "clusters: [")),
            context: None,
        };
        let err = broken.connect().await.err().unwrap().to_string();
        assert!(err.starts_with("Cannot read the kubeconfig "), "{err}");
        assert!(
            err.ends_with("Check the file or pass --kubeconfig."),
            "{err}"
        );

        let missing = Target {
            kubeconfig: Some("/nonexistent/podbay/kubeconfig".into()),
            context: None,
        };
        assert!(
            missing
                .connect()
                .await
                .err()
                .unwrap()
                .to_string()
                .contains("/nonexistent/podbay/kubeconfig")
        );
    }
}

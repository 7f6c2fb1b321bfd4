//! Kubeconfig, context and namespace → a `kube::Client`, with errors a
//! person can act on.

use std::io::IsTerminal as _;
use std::path::PathBuf;

use kube::config::{ExecInteractiveMode, KubeConfigOptions, Kubeconfig};

use super::errors::{credential_plugin_failed, root_cause, safe_cause};

/// Where to find the cluster: an explicit kubeconfig file (else `KUBECONFIG`,
/// which may list several files, else `~/.kube/config`) and a context (else
/// the current one).
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub plugins: PluginTerminal,
}

/// Whether the kubeconfig's credential plugins (`exec`) may use the terminal:
/// read the keyboard and write to stderr, to ask for a login.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PluginTerminal {
    /// As kubectl does: `interactiveMode: IfAvailable` plugins get the
    /// terminal when stdin is one, `Always` plugins always.
    #[default]
    AsKubectl,
    /// Never: the TUI owns the screen and the keyboard. A plugin's stderr is
    /// captured (and not shown: it may hold credentials).
    Withheld,
}

impl PluginTerminal {
    /// Sets every exec user's `interactiveMode` to what kube-rs should do:
    /// it treats anything but `Never` as "inherit stdin and stderr", so
    /// client-go's "only if stdin is a terminal" is decided here.
    fn apply(self, kubeconfig: &mut Kubeconfig) {
        let have_terminal = std::io::stdin().is_terminal();
        let execs = kubeconfig
            .auth_infos
            .iter_mut()
            .filter_map(|user| user.auth_info.as_mut()?.exec.as_mut());
        for exec in execs {
            let interactive = match (self, &exec.interactive_mode) {
                (PluginTerminal::Withheld, _) | (_, Some(ExecInteractiveMode::Never)) => false,
                (_, Some(ExecInteractiveMode::Always)) => true,
                (PluginTerminal::AsKubectl, _) => have_terminal,
            };
            if !interactive {
                exec.interactive_mode = Some(ExecInteractiveMode::Never);
            }
        }
    }
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
    /// The kubeconfig user (credentials) the context names.
    pub user: String,
}

impl Connection {
    /// Which cluster this client reaches, and as whom.
    pub fn cluster(&self) -> crate::model::ClusterId {
        crate::model::ClusterId::new(&self.context, &self.server, &self.user)
    }
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
    #[error(
        "--context {0} names several clusters, and this works in one: name one (`:ctx` switches the pod list between them; podbay debug, debuggers and top take several)."
    )]
    SeveralContexts(String),
    #[error("The kubeconfig has no current context. Pick one with --context ({0}).")]
    NoCurrentContext(String),
    #[error("Cannot use context {context:?}: {reason}.")]
    BadContext {
        context: String,
        reason: String,
        /// The credential plugin ran and failed, maybe for want of a login.
        plugin_failed: bool,
    },
}

impl ConnectError {
    pub fn credential_plugin_failed(&self) -> bool {
        matches!(
            self,
            ConnectError::BadContext {
                plugin_failed: true,
                ..
            }
        )
    }
}

/// [`Target::contexts_with_servers`].
#[derive(Debug, Clone, Default)]
pub struct ContextServers {
    pub contexts: Vec<(String, Option<String>)>,
    pub current: Option<String>,
}

impl Target {
    fn load(&self) -> Result<Kubeconfig, ConnectError> {
        let read = |path: &std::path::Path| {
            super::kubeconfig::read(path).map_err(|reason| ConnectError::Unreadable {
                path: path.display().to_string(),
                reason,
            })
        };
        match &self.kubeconfig {
            Some(path) => read(path),
            None => match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
                Some(list) => {
                    // Like kubectl, skip listed files that do not exist
                    // (kube's `Kubeconfig::from_env` fails on them).
                    let mut merged: Option<Kubeconfig> = None;
                    for path in std::env::split_paths(&list).filter(|p| p.exists()) {
                        let next = read(&path)?;
                        merged = Some(match merged {
                            Some(acc) => acc.merge(next).map_err(|e| ConnectError::Unreadable {
                                path: path.display().to_string(),
                                reason: root_cause(&e),
                            })?,
                            None => next,
                        });
                    }
                    merged.ok_or(ConnectError::Missing)
                }
                None => {
                    let home =
                        directories::BaseDirs::new().map(|d| d.home_dir().join(".kube/config"));
                    match home.filter(|p| p.exists()) {
                        Some(path) => read(&path),
                        None => Err(ConnectError::Missing),
                    }
                }
            },
        }
    }

    /// The kubeconfig's context names, in its order.
    pub fn contexts(&self) -> Result<Vec<String>, ConnectError> {
        Ok(self.load()?.contexts.into_iter().map(|c| c.name).collect())
    }

    /// The kubeconfig's contexts, in its order, each with the API server
    /// its cluster names (`None`: a cluster the kubeconfig lacks), and the
    /// current context.
    pub fn contexts_with_servers(&self) -> Result<ContextServers, ConnectError> {
        let kubeconfig = self.load()?;
        let server_of = |cluster: &str| {
            kubeconfig
                .clusters
                .iter()
                .find(|c| c.name == cluster)
                .and_then(|c| c.cluster.as_ref()?.server.clone())
        };
        let contexts = kubeconfig
            .contexts
            .iter()
            .map(|c| {
                let server = c.context.as_ref().and_then(|c| server_of(&c.cluster));
                (c.name.clone(), server)
            })
            .collect();
        Ok(ContextServers {
            contexts,
            current: kubeconfig.current_context.clone(),
        })
    }

    /// Reads the kubeconfig and builds a client for the chosen context. Does
    /// not contact the server: an unreachable one shows up on first use.
    pub async fn connect(&self) -> Result<Connection, ConnectError> {
        let mut kubeconfig = self.load()?;
        self.plugins.apply(&mut kubeconfig);
        let contexts: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
        let known = || contexts.join(", ");
        let context = match self
            .context
            .clone()
            .or_else(|| kubeconfig.current_context.clone())
        {
            Some(c) if contexts.contains(&c) => c,
            Some(c)
                if c.split(',')
                    .all(|one| contexts.iter().any(|k| k == one.trim())) =>
            {
                return Err(ConnectError::SeveralContexts(c));
            }
            Some(c) => return Err(ConnectError::UnknownContext(c, known())),
            None => return Err(ConnectError::NoCurrentContext(known())),
        };
        let user = kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context)
            .and_then(|c| c.context.as_ref()?.user.clone())
            .unwrap_or_default();
        let options = KubeConfigOptions {
            context: Some(context.clone()),
            ..Default::default()
        };
        let bad = |error: &(dyn std::error::Error + 'static)| ConnectError::BadContext {
            context: context.clone(),
            reason: safe_cause(error),
            plugin_failed: credential_plugin_failed(error),
        };
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| bad(&e))?;
        let namespace = config.default_namespace.clone();
        let server = config.cluster_url.to_string();
        let client = super::transport::client(config).map_err(|e| bad(&e))?;
        Ok(Connection {
            client,
            context,
            namespace,
            contexts,
            server,
            user,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` in a file of its own, removed with the returned guard.
    fn write(name: &str, text: &str) -> (PathBuf, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        (path, dir)
    }

    const CONFIG: &str = r#"{"apiVersion":"v1","kind":"Config","current-context":"a",
        "clusters":[{"name":"c","cluster":{"server":"https://127.0.0.1:1"}}],
        "users":[{"name":"u","user":{"token":"t"}}],
        "contexts":[{"name":"a","context":{"cluster":"c","user":"u","namespace":"shop"}},
                    {"name":"b","context":{"cluster":"c","user":"u"}}]}"#;

    #[tokio::test]
    async fn picks_the_current_or_named_context_and_its_namespace() {
        let (path, _dir) = write("ok.kubeconfig", CONFIG);
        let target = Target {
            kubeconfig: Some(path.clone()),
            ..Target::default()
        };
        let conn = target.connect().await.unwrap();
        assert_eq!(conn.context, "a");
        assert_eq!(conn.namespace, "shop");
        assert_eq!(conn.contexts, ["a", "b"]);
        let b = Target {
            kubeconfig: Some(path),
            context: Some("b".into()),
            ..Target::default()
        };
        assert_eq!(b.connect().await.unwrap().namespace, "default");
    }

    #[tokio::test]
    async fn bad_inputs_give_one_clear_sentence() {
        let (path, _dir) = write("ok2.kubeconfig", CONFIG);
        let unknown = Target {
            kubeconfig: Some(path),
            context: Some("nope".into()),
            ..Target::default()
        };
        let err = unknown.connect().await.err().unwrap().to_string();
        assert_eq!(
            err,
            "The kubeconfig has no context named \"nope\". Known contexts: a, b."
        );
        let several = Target {
            context: Some("a,b".into()),
            ..unknown.clone()
        };
        let err = several.connect().await.err().unwrap().to_string();
        assert!(
            err.starts_with("--context a,b names several clusters, and this works in one"),
            "{err}"
        );
        let one_unknown = Target {
            context: Some("a,nope".into()),
            ..unknown
        };
        let err = one_unknown.connect().await.err().unwrap().to_string();
        assert!(
            err.starts_with("The kubeconfig has no context named"),
            "{err}"
        );

        let (broken_path, _broken_dir) = write("broken.kubeconfig", "clusters: [");
        let broken = Target {
            kubeconfig: Some(broken_path),
            ..Target::default()
        };
        let err = broken.connect().await.err().unwrap().to_string();
        assert!(err.starts_with("Cannot read the kubeconfig "), "{err}");
        assert!(
            err.ends_with("Check the file or pass --kubeconfig."),
            "{err}"
        );

        let missing = Target {
            kubeconfig: Some("/nonexistent/podbay/kubeconfig".into()),
            ..Target::default()
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

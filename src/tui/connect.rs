//! Connecting to the cluster for the TUI: a client that answers, or one
//! sentence saying why not.

use std::io::IsTerminal as _;
use std::time::Duration;

use crate::cluster::client::{Connection, PluginTerminal, Target};
use crate::cluster::errors::{credential_plugin_failed, describe};

/// Why a context cannot be used, in one sentence.
#[derive(Debug, thiserror::Error)]
#[error("{sentence}")]
pub(super) struct Unusable {
    pub sentence: String,
    /// The credential plugin ran and failed, maybe for want of a login.
    plugin_failed: bool,
}

/// Connects for the TUI: credential plugins never get the terminal (the
/// TUI owns it), except once here, before the screen changes, if one fails
/// without it: that is a plugin asking for a login, as it would in kubectl.
/// Plugins keep what they get, so the quiet client then succeeds.
pub(super) async fn connect_before_the_screen(target: &Target) -> Result<Connection, Unusable> {
    let quietly = Target {
        plugins: PluginTerminal::Withheld,
        ..target.clone()
    };
    let say = std::io::stderr().is_terminal();
    match probe(&quietly, say).await {
        Err(unusable)
            if unusable.plugin_failed
                && target.plugins == PluginTerminal::AsKubectl
                && std::io::stdin().is_terminal() =>
        {
            probe(target, say).await?;
            probe(&quietly, say).await
        }
        result => result,
    }
}

/// The browser's connection when the list shows several contexts: the
/// first that can be used, in the order given, so one that cannot holds
/// the others back no longer than its own try (at most 10 s). Returns it,
/// the other contexts for the list (those that failed among them, to be
/// tried again and said as unreachable), and what to say about the ones
/// passed over. Fails with the first context's sentence when none works.
pub(super) async fn connect_the_browser(
    target: &Target,
    others: &[String],
) -> Result<(Connection, Vec<String>, Option<String>), Unusable> {
    let first = match connect_before_the_screen(target).await {
        Ok(connection) => return Ok((connection, others.to_vec(), None)),
        Err(unusable) if others.is_empty() => return Err(unusable),
        Err(unusable) => unusable,
    };
    let first_name = target.context.clone().unwrap_or_default();
    for (at, context) in others.iter().enumerate() {
        let instead = Target {
            context: Some(context.clone()),
            ..target.clone()
        };
        if let Ok(connection) = connect_before_the_screen(&instead).await {
            let mut rest = vec![first_name.clone()];
            rest.extend(others[..at].iter().cloned());
            rest.extend(others[at + 1..].iter().cloned());
            let said = format!(
                "Context {}: {} The other contexts are listed; it is tried again beside them.",
                crate::model::text::sanitize(&first_name),
                first.sentence
            );
            return Ok((connection, rest, Some(said)));
        }
    }
    Err(first)
}

/// Connects and asks the server for its version, so an unreachable server
/// or bad credentials fail fast, with one sentence.
pub(super) async fn connect_and_probe(target: &Target) -> Result<Connection, Unusable> {
    probe(target, false).await
}

/// [`connect_and_probe`]; with `say`, a server slow to answer is said on
/// stderr as it is waited for (before the screen is the TUI's, nothing
/// else would show): where, for which context, how long, and that ctrl-c
/// quits. The line goes once the answer comes.
async fn probe(target: &Target, say: bool) -> Result<Connection, Unusable> {
    let connection = target.connect().await.map_err(|e| Unusable {
        plugin_failed: e.credential_plugin_failed(),
        sentence: e.to_string(),
    })?;
    let asked = tokio::time::Instant::now();
    let client = connection.client.clone();
    let version = client.apiserver_version();
    tokio::pin!(version);
    let mut said = false;
    let answer = loop {
        tokio::select! {
            answer = &mut version => break Ok(answer),
            () = tokio::time::sleep(Duration::from_secs(1)) => {
                let waited = asked.elapsed();
                if waited >= Duration::from_secs(10) {
                    break Err(());
                }
                if say {
                    said = true;
                    crate::print::status(
                        &format!(
                            "◌ connecting to {} (context {}) {}s · ctrl-c quits",
                            connection.server,
                            connection.context,
                            waited.as_secs()
                        )
                        .into(),
                    );
                }
            }
        }
    };
    if said {
        crate::print::clear_status();
    }
    let (sentence, plugin_failed) = match answer {
        Ok(Ok(_)) => return Ok(connection),
        Ok(Err(e)) => (
            format!(
                "{} (context {}, server {})",
                describe(&e).sentence.trim_end_matches('.'),
                connection.context,
                connection.server
            ),
            credential_plugin_failed(&e),
        ),
        Err(_) => (
            format!(
                "The API server at {} did not answer within 10 seconds (context {}). Check your network or VPN.",
                connection.server, connection.context
            ),
            false,
        ),
    };
    Err(Unusable {
        sentence,
        plugin_failed,
    })
}

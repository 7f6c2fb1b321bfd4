//! A command run over several clusters (`--context a,b`): each connected
//! and asked at once, each under its own deadline, so a cluster that is
//! down or stalls is said on its own and never holds the others.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use crate::cluster::client::Connection;
use crate::cluster::deadline::Deadline;
use crate::engine::outcome::{Failure, exit, fail};

/// `--all-contexts`: `context` set to every cluster of the kubeconfig, as
/// `--context a,b,…` names them, so the rest of the run is the same. Each
/// API server is taken once ([`one_per_server`]): two contexts of one
/// cluster (an admin's and a read-only one) would list its pods twice, and
/// `debug` would add two debug containers to each.
pub fn all_contexts(clusters: &mut crate::cli::Clusters) -> Result<(), Failure> {
    if !clusters.all_contexts {
        return Ok(());
    }
    let known =
        servers(clusters.kubeconfig.as_deref()).map_err(|e| fail(exit::CONFIG, e.to_string()))?;
    let (chosen, passed_over) = one_per_server(&known.contexts, known.current.as_deref());
    if chosen.is_empty() {
        return Err(fail(
            exit::CONFIG,
            "The kubeconfig has no contexts for --all-contexts: add one (kubectl config set-context), or name the cluster with --context.",
        ));
    }
    for (skipped, instead) in passed_over {
        crate::print::say(
            &format!("--all-contexts: {skipped} reaches the same API server as {instead}, which is asked instead.").into(),
        );
    }
    clusters.context = Some(chosen.join(","));
    Ok(())
}

/// Refuses (a usage error) a `--context` list two of whose contexts reach
/// one API server: `podbay debug` would debug each of its pods twice.
pub fn refuse_one_server_twice(
    kubeconfig: Option<&Path>,
    contexts: &[Option<String>],
) -> Result<(), Failure> {
    if contexts.len() < 2 {
        return Ok(());
    }
    // An unreadable kubeconfig is said by the connection, per cluster.
    let Ok(known) = servers(kubeconfig) else {
        return Ok(());
    };
    // The named contexts, in the order named, as one_per_server reads them.
    let named: Vec<(String, Option<String>)> = contexts
        .iter()
        .flatten()
        .filter_map(|name| known.contexts.iter().find(|(known, _)| known == name))
        .cloned()
        .collect();
    let (_, passed_over) = one_per_server(&named, None);
    match passed_over.first() {
        Some((second, first)) => {
            let server = named
                .iter()
                .find_map(|(name, server)| (name == first).then_some(server.as_deref()))
                .flatten()
                .unwrap_or_default();
            Err(fail(
                exit::USAGE,
                format!(
                    "--context names {first} and {second}, which reach the same API server ({server}): each of its pods would be debugged twice. Name one of them."
                ),
            ))
        }
        None => Ok(()),
    }
}

/// The kubeconfig's contexts and the API server each reaches.
fn servers(
    kubeconfig: Option<&Path>,
) -> Result<crate::cluster::client::ContextServers, crate::cluster::client::ConnectError> {
    crate::cluster::client::Target {
        kubeconfig: kubeconfig.map(Path::to_path_buf),
        ..crate::cluster::client::Target::default()
    }
    .contexts_with_servers()
}

/// One context per API server, in the kubeconfig's order: the current
/// context where it reaches that server, else the first that does. Also
/// each context passed over, with the one taken instead. A context whose
/// server is not known is taken.
pub fn one_per_server(
    contexts: &[(String, Option<String>)],
    current: Option<&str>,
) -> (Vec<String>, Vec<(String, String)>) {
    let current_server = contexts
        .iter()
        .find(|(name, _)| Some(name.as_str()) == current)
        .and_then(|(_, server)| server.as_deref());
    let taken_for = |server: &str| -> Option<&str> {
        if Some(server) == current_server {
            return current;
        }
        contexts
            .iter()
            .find(|(_, s)| s.as_deref() == Some(server))
            .map(|(name, _)| name.as_str())
    };
    let (mut chosen, mut passed_over) = (Vec::new(), Vec::new());
    for (name, server) in contexts {
        match server.as_deref().and_then(taken_for) {
            Some(instead) if instead != name => {
                passed_over.push((name.clone(), instead.to_string()))
            }
            _ => chosen.push(name.clone()),
        }
    }
    (chosen, passed_over)
}

/// A cluster that gave nothing (not reached, refused, no match), and why.
#[derive(Debug, Clone)]
pub struct Unreached {
    pub context: String,
    pub failure: Failure,
}

impl Unreached {
    /// `ctx: sentence`, as said on stderr.
    pub fn sentence(&self) -> String {
        format!("{}: {}", self.context, self.failure.sentence)
    }
}

/// `work` on each of `contexts` (`None`: the kubeconfig's current one) at
/// once, each connection and its work within `within`; the results in the
/// order of `contexts`. `what` names the work in the timeout's sentence
/// ("Finding the pods to debug").
pub async fn in_each<T, Work, Done>(
    kubeconfig: Option<&Path>,
    contexts: &[Option<String>],
    within: Duration,
    what: &str,
    work: Work,
) -> Vec<Result<T, Unreached>>
where
    Work: Fn(Option<String>, Connection) -> Done,
    Done: Future<Output = Result<T, Failure>>,
{
    let mut answers: Vec<_> = each_as_it_answers(kubeconfig, contexts, within, what, &work)
        .collect()
        .await;
    answers.sort_by_key(|(position, _)| *position);
    answers.into_iter().map(|(_, answer)| answer).collect()
}

/// As [`in_each`], each result as soon as its cluster gives it, after its
/// position in `contexts`: a fast cluster is acted on while a slow one is
/// still being waited for.
pub fn each_as_it_answers<'a, T, Work, Done>(
    kubeconfig: Option<&'a Path>,
    contexts: &'a [Option<String>],
    within: Duration,
    what: &'a str,
    work: &'a Work,
) -> FuturesUnordered<impl Future<Output = (usize, Result<T, Unreached>)> + 'a>
where
    Work: Fn(Option<String>, Connection) -> Done,
    Done: Future<Output = Result<T, Failure>> + 'a,
    T: 'a,
{
    contexts
        .iter()
        .enumerate()
        .map(|(position, context)| async move {
            let answer = in_one(kubeconfig, context.clone(), within, what, work).await;
            (position, answer)
        })
        .collect()
}

async fn in_one<T, Work, Done>(
    kubeconfig: Option<&Path>,
    context: Option<String>,
    within: Duration,
    what: &str,
    work: &Work,
) -> Result<T, Unreached>
where
    Work: Fn(Option<String>, Connection) -> Done,
    Done: Future<Output = Result<T, Failure>>,
{
    let connect_and_work = async {
        let connection = super::connect(kubeconfig, context.as_deref()).await?;
        work(context.clone(), connection).await
    };
    let failure = match Deadline::none()
        .within(Some(within))
        .bound(connect_and_work)
        .await
    {
        Ok(Ok(done)) => return Ok(done),
        Ok(Err(failure)) => failure,
        Err(expired) => fail(
            exit::TIMEOUT,
            format!("{what} got no answer in time ({expired}): check that the cluster is up."),
        ),
    };
    Err(Unreached {
        context: context.unwrap_or_default(),
        failure,
    })
}

#[cfg(test)]
mod tests {
    use super::one_per_server;

    fn known(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(n, s)| (n.to_string(), s.map(String::from)))
            .collect()
    }

    #[test]
    fn each_api_server_is_taken_once_through_the_current_context_where_it_can_be() {
        let contexts = known(&[
            ("prod-viewer", Some("https://prod")),
            ("staging", Some("https://staging")),
            ("prod-admin", Some("https://prod")),
            ("broken", None),
        ]);
        let (chosen, passed) = one_per_server(&contexts, Some("prod-admin"));
        assert_eq!(chosen, ["staging", "prod-admin", "broken"]);
        assert_eq!(
            passed,
            [("prod-viewer".to_string(), "prod-admin".to_string())]
        );

        let (chosen, passed) = one_per_server(&contexts, Some("staging"));
        assert_eq!(
            chosen,
            ["prod-viewer", "staging", "broken"],
            "else the first"
        );
        assert_eq!(
            passed,
            [("prod-admin".to_string(), "prod-viewer".to_string())]
        );

        let (chosen, passed) = one_per_server(&contexts, None);
        assert_eq!(chosen, ["prod-viewer", "staging", "broken"]);
        assert_eq!(passed.len(), 1);
        assert_eq!(one_per_server(&[], None), (vec![], vec![]));
    }
}

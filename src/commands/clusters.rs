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

/// `--all-contexts`: `context` set to every context of the kubeconfig, as
/// `--context a,b,…` names them, so the rest of the run is the same.
pub fn all_contexts(
    kubeconfig: Option<&Path>,
    context: &mut Option<String>,
) -> Result<(), Failure> {
    let target = crate::cluster::client::Target {
        kubeconfig: kubeconfig.map(Path::to_path_buf),
        ..crate::cluster::client::Target::default()
    };
    let names = target
        .contexts()
        .map_err(|e| fail(exit::CONFIG, e.to_string()))?;
    if names.is_empty() {
        return Err(fail(
            exit::CONFIG,
            "The kubeconfig has no contexts for --all-contexts: add one (kubectl config set-context), or name the cluster with --context.",
        ));
    }
    *context = Some(names.join(","));
    Ok(())
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

//! A command run over several clusters (`--context a,b`): each connected
//! and asked at once, each under its own deadline, so a cluster that is
//! down or stalls is said on its own and never holds the others.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use crate::cluster::client::Connection;
use crate::cluster::deadline::Deadline;
use crate::engine::outcome::{Failure, exit, fail};

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
    let each = |context: &Option<String>| in_one(kubeconfig, context.clone(), within, what, &work);
    futures::future::join_all(contexts.iter().map(each)).await
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

//! The API server's pulse: a cheap request (`GET /version`, which every
//! user may make) every few seconds. A server that is stopped or wedged, or
//! a link that dropped without a word, answers nothing and reports no
//! error; watches then look live for minutes. The pulse sees it: past a few
//! seconds without an answer the header says how long, and it clears by
//! itself when the answer comes.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::app::Event;
use crate::model::ClusterId;

/// How often the server is asked.
const EVERY: Duration = Duration::from_secs(5);

/// How long an answer may take before the header says it has not come.
const STALLED_AFTER: Duration = Duration::from_secs(8);

/// Asks until the receiver goes (or the task is aborted, on a new context);
/// what it finds goes to `tx` as `wrap` makes it.
pub(super) async fn run<T>(
    client: kube::Client,
    cluster: ClusterId,
    tx: mpsc::Sender<T>,
    wrap: fn(Event) -> T,
) {
    loop {
        let asked = Instant::now();
        let probe = client.apiserver_version();
        tokio::pin!(probe);
        let mut said = false;
        loop {
            tokio::select! {
                // An error is an answer too: the feeds say what it is.
                _ = &mut probe => break,
                () = tokio::time::sleep(Duration::from_secs(1)) => {
                    let waited = asked.elapsed();
                    if waited >= STALLED_AFTER {
                        said = true;
                        let unanswered = Some(waited.as_secs());
                        let event = Event::Pulse { cluster: cluster.clone(), unanswered };
                        if tx.send(wrap(event)).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
        if said {
            let event = Event::Pulse {
                cluster: cluster.clone(),
                unanswered: None,
            };
            if tx.send(wrap(event)).await.is_err() {
                return;
            }
        }
        tokio::time::sleep(EVERY).await;
    }
}

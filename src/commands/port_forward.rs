//! `podbay port-forward`: kubectl's command line and output, and a forward
//! that survives its pod ([`crate::cluster::forward`]).

use std::sync::Arc;

use tokio::sync::mpsc;

use super::debug::{Failure, fail};
use crate::cli::PortForwardArgs;
use crate::cluster::forward::{self, ForwardEvent, ForwardRequest, ForwardStats};
use crate::model::forward::listen_addresses;

/// Forwards until ctrl-c (`Ok(0)`) or the forward ends (`Err`).
pub async fn run(args: PortForwardArgs) -> Result<i32, Failure> {
    let addresses = listen_addresses(&args.address).map_err(|e| fail(2, e))?;
    let connection = super::connect(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
    let request = ForwardRequest {
        namespace: args.namespace.unwrap_or(connection.namespace),
        target: args.target,
        ports: args.ports,
        addresses,
    };
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let forwarding = tokio::spawn(forward::run(
        connection.client,
        request,
        events_tx,
        Arc::new(ForwardStats::default()),
    ));
    let result = loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(ForwardEvent::Ended(sentence)) => break Err(fail(1, sentence)),
                Some(event) => say(&event),
                None => break Err(fail(1, "the forward stopped")),
            },
            _ = tokio::signal::ctrl_c() => break Ok(0),
        }
    };
    forwarding.abort();
    result
}

/// kubectl's lines on stdout; podbay's own about the pods on stdout too
/// (they are what the user watches for); problems on stderr.
fn say(event: &ForwardEvent) {
    let line = match event {
        ForwardEvent::Listening { local, remote } => {
            format!("Forwarding from {local} -> {remote}")
        }
        ForwardEvent::Reaching { pod, switched } => match switched {
            false => format!("forwarding to {pod}"),
            true => format!("now forwarding to {pod}"),
        },
        ForwardEvent::Accepted(port) => format!("Handling connection for {port}"),
        ForwardEvent::Waiting(why) => return warn(why),
        ForwardEvent::ConnectionFailed(why) => return warn(&format!("a connection failed: {why}")),
        ForwardEvent::Ended(why) => return warn(why),
    };
    crate::print::stdout(&line.into());
}

fn warn(line: &str) {
    crate::print::say(&line.into());
}

//! Stopping a debug container from the debuggers view, by the engine the
//! CLI's `podbay debuggers stop` uses (it bounds every request itself).

use super::*;

impl Tasks {
    pub(super) fn stop_debugger(&mut self, cluster: &ClusterId, pod: PodKey, name: String) {
        // The cluster the user was asked about, whatever the browser shows now.
        let Some(client) = self.clients.get(cluster).cloned() else {
            return;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let at = format!("{name} in pod {pod}");
            let outcome = crate::engine::debuggers::stop(&client, &pod.namespace, &pod.name, &name)
                .await
                .map(|stopped| capitalized(&stopped.sentence(&at)))
                .map_err(|failure| failure.sentence.to_string());
            let _ = tx
                .send(Tagged::untied(Event::DebuggerStopped(outcome)))
                .await;
        });
    }
}

/// The CLI's line as a sentence on the message bar.
fn capitalized(line: &str) -> String {
    let mut chars = line.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

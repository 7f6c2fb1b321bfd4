//! The services view (`:svc`): the Services of the namespaces shown, by
//! watch, each with how many of the pods it selects are ready endpoints
//! (counted from the pod list); `enter` tells a Service's truth: where its
//! ports lead, and which of its pods take traffic and which do not, why.

use super::keymap::Action;
use super::reader::Reader;
use super::{App, Effect, View};
use crate::model::PodRow;
use crate::model::feed::Feed;
use crate::model::service::{ServiceRow, ready_endpoint};
use crate::model::text::Printable;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServicesView {
    pub rows: Vec<ServiceRow>,
    pub cursor: usize,
    /// `enter`: the selected Service's ports and pods.
    pub reading: Option<Reader>,
    /// The watch's trouble (refused, failing), until it lists.
    pub trouble: Option<Printable>,
    pub listed: bool,
}

impl ServicesView {
    pub fn selected(&self) -> Option<&ServiceRow> {
        self.rows.get(self.cursor)
    }
}

/// Each Service's ENDPOINTS: its ready pods of those it selects in the
/// pod list, and how many it selects. One pass over the pods (the list may
/// hold 100 000; this runs each frame), each pod matched against the
/// Services of its own namespace only.
pub fn endpoints<'a>(
    services: &[ServiceRow],
    pods: impl Iterator<Item = &'a PodRow>,
) -> Vec<(usize, usize)> {
    let mut counts = vec![(0, 0); services.len()];
    let mut by_namespace: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, service) in services.iter().enumerate() {
        if !service.selector.is_empty() {
            by_namespace.entry(&service.namespace).or_default().push(i);
        }
    }
    for pod in pods {
        let Some(indexes) = by_namespace.get(&*pod.key.namespace) else {
            continue;
        };
        for &i in indexes {
            if services[i].selects(pod) {
                counts[i].0 += usize::from(ready_endpoint(pod));
                counts[i].1 += 1;
            }
        }
    }
    counts
}

impl App {
    /// `:svc`.
    pub(super) fn open_services(&mut self) -> Vec<Effect> {
        self.message = None;
        self.view = View::Services(Box::default());
        vec![Effect::WatchServices(self.scope.clone())]
    }

    /// Keys of the services view; `None` for those with their usual meaning.
    pub(super) fn on_services_key(&mut self, action: Action) -> Option<Vec<Effect>> {
        let View::Services(view) = &mut self.view else {
            return None;
        };
        if view.reading.is_some() {
            if action == Action::Back {
                view.reading = None;
                return Some(vec![]);
            }
            return None;
        }
        if super::keymap::move_cursor(&mut view.cursor, view.rows.len(), action) {
            return Some(vec![]);
        }
        match action {
            Action::Open => {
                let service = view.selected()?.clone();
                let text = self.service_text(&service);
                if let View::Services(view) = &mut self.view {
                    view.reading = Some(Reader::new(text));
                }
                self.fit_reader();
            }
            Action::Back => {
                self.view = View::Pods;
                return Some(vec![Effect::StopWatchingPod]);
            }
            _ => return None,
        }
        Some(vec![])
    }

    /// A Service's truth, from its spec and the pod list: where each port
    /// leads, and which of the pods it selects are ready endpoints.
    fn service_text(&self, service: &ServiceRow) -> Vec<String> {
        let address = match service.cluster_ip.as_str() {
            "None" => "headless".to_string(),
            "" => "no cluster IP".to_string(),
            ip => ip.to_string(),
        };
        let mut lines = vec![
            format!(
                "Service {}/{} ({}, {address})",
                service.namespace, service.name, service.kind
            ),
            format!("Selector: {}", service.selector_text()),
            String::new(),
            "Ports:".to_string(),
        ];
        for port in &service.ports {
            let name = match port.name.as_str() {
                "" => String::new(),
                name => format!(" ({name})"),
            };
            let to = match (service.cluster_ip.as_str(), port.target.as_str()) {
                ("None", _) | (_, "") => format!("the pods' port {}", port.port),
                (_, target) if target.parse::<u16>().is_ok() => {
                    format!("the pods' port {target}")
                }
                (_, target) => format!("each pod's port named {target}"),
            };
            lines.push(format!("  {}/{}{name} → {to}", port.port, port.protocol));
        }
        if service.ports.is_empty() {
            lines.push("  none".to_string());
        }
        lines.push(String::new());
        if service.selector.is_empty() {
            lines.push(
                "No selector: its endpoints are kept by hand, not chosen from pods.".to_string(),
            );
            return lines;
        }
        let selected: Vec<&PodRow> = self
            .pods
            .rows()
            .filter(|pod| service.selects(pod))
            .collect();
        let ready = selected.iter().filter(|pod| ready_endpoint(pod)).count();
        if selected.is_empty() {
            lines.push(format!(
                "No pod of {} matches its selector: it sends traffic nowhere.",
                service.namespace
            ));
            return lines;
        }
        lines.push(format!(
            "Pods it selects: {ready} of {} take traffic (of the pods listed).",
            selected.len()
        ));
        lines.push(String::new());
        for pod in selected {
            let why = if ready_endpoint(pod) {
                "takes traffic".to_string()
            } else if &*pod.status == "Running" {
                format!(
                    "not ready ({}/{} containers): no traffic",
                    pod.ready, pod.total
                )
            } else {
                format!("{}: no traffic", pod.status)
            };
            lines.push(format!("  {:<44} {why}", pod.key.name));
        }
        lines
    }

    pub(super) fn on_services_feed(&mut self, feed: Feed<ServiceRow>) {
        let View::Services(view) = &mut self.view else {
            return;
        };
        let same = |a: &ServiceRow, b: &ServiceRow| a.namespace == b.namespace && a.name == b.name;
        match feed {
            Feed::Listed { rows, scope, .. } => {
                // One feed a namespace: a relist replaces its own rows.
                match scope {
                    Some(namespace) => {
                        view.rows.retain(|r| r.namespace != namespace);
                        view.rows.extend(rows);
                    }
                    None => view.rows = rows,
                }
                view.listed = true;
                view.trouble = None;
            }
            Feed::Applied(row) => {
                match view.rows.iter_mut().find(|r| same(r, &row)) {
                    Some(existing) => *existing = row,
                    None => view.rows.push(row),
                }
                view.trouble = None;
            }
            Feed::Deleted(row) => view.rows.retain(|r| !same(r, &row)),
            Feed::Forbidden(denied) => view.trouble = Some(denied.sentence().into()),
            Feed::Reconnecting(sentence) => view.trouble = Some(sentence),
            Feed::Unreadable(bad) => {
                view.trouble = bad.first().map(|b| b.sentence("a Service").into());
            }
            // Not a paged feed: no pages come.
            Feed::Resumed | Feed::Listing { .. } | Feed::Page { .. } | Feed::Cut => {}
        }
        view.rows
            .sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        view.cursor = view.cursor.min(view.rows.len().saturating_sub(1));
    }
}

#[cfg(test)]
#[path = "services_tests.rs"]
mod tests;

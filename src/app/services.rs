//! The services view (`:svc`): the Services of the namespaces shown, by
//! watch, each with how many of the pods it selects are ready endpoints
//! (counted from the pod list); `enter` narrows the pod list to its pods,
//! `D` tells its truth: where its ports lead, and which of its pods take
//! traffic and which do not, why.

use super::keymap::Action;
use super::object_page::ObjectReading;
use super::object_rows::ObjectRows;
use super::pods::Pick;
use super::reader::Reader;
use super::{App, Effect, View};
use crate::model::PodRow;
use crate::model::feed::Feed;
use crate::model::selector::Selector;
use crate::model::service::{ServiceRow, ready_endpoint};

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServicesView {
    pub list: ObjectRows<ServiceRow>,
    /// `D`: the selected Service's ports and pods.
    pub reading: Option<Reader>,
    /// `y`: the selected Service's YAML.
    pub page: Option<ObjectReading>,
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
        vec![Effect::WatchServices(self.cluster_scopes())]
    }

    /// Keys of the services view; `None` for those with their usual meaning.
    pub(super) fn on_services_key(&mut self, action: Action) -> Option<Vec<Effect>> {
        let View::Services(view) = &mut self.view else {
            return None;
        };
        // A page being read takes its own keys first (see `on_reader_key`).
        if view.reading.is_some() || view.page.is_some() {
            return None;
        }
        match action {
            Action::Open | Action::Debug | Action::Logs => {
                let services = view.list.picked()?;
                let mut picks = Vec::new();
                for service in &services {
                    let selector = Selector::of_labels(&service.selector);
                    if selector.is_empty() {
                        self.message = Some(super::message::warning(format!(
                            "svc/{} has no selector: its endpoints are kept by hand, not chosen from pods.",
                            service.name
                        )));
                        return Some(vec![]);
                    }
                    let namespace = service.namespace.clone();
                    picks.push(Pick {
                        context: service.context.clone(),
                        namespace,
                        selector,
                    });
                }
                let from = super::workloads::names_of(&services, |s| format!("svc/{}", s.name));
                return Some(match action {
                    Action::Logs => self.open_pods_logs(from, super::pods::Narrow { picks }),
                    _ => self.narrow_to(from, picks, action == Action::Debug),
                });
            }
            Action::Forward => {
                let service = view.list.selected()?;
                let ports = service
                    .ports
                    .iter()
                    .filter_map(|p| {
                        Some(crate::model::forward::DeclaredPort {
                            container: String::new(),
                            name: Some(p.name.clone()).filter(|n| !n.is_empty()),
                            number: u16::try_from(p.port).ok()?,
                            protocol: p.protocol.clone(),
                        })
                    })
                    .collect();
                let target = crate::model::forward::ForwardTarget::Service(service.name.clone());
                let namespace = service.namespace.clone();
                let context = service.context.clone();
                let cluster = self.cluster_of_tag(&context)?;
                return Some(self.open_forward_form_to(cluster, namespace, target, ports));
            }
            Action::Describe => {
                let service = view.list.selected()?.clone();
                let text = self.service_text(&service);
                if let View::Services(view) = &mut self.view {
                    view.reading = Some(Reader::new(text));
                }
                self.fit_reader();
            }
            Action::Yaml => {
                let service = view.list.selected()?;
                let object = crate::model::object_ref::ObjectRef {
                    kind: crate::model::object_ref::ObjectKind::Service,
                    namespace: service.namespace.clone(),
                    name: service.name.clone(),
                };
                let context = service.context.clone();
                let cluster = self.cluster_of_tag(&context)?;
                return Some(self.read_object(cluster, object, action));
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

    /// The services view's feed, from the browser's cluster (`None`) or
    /// another the list shows.
    pub(super) fn on_services_feed(
        &mut self,
        cluster: Option<crate::model::ClusterId>,
        feed: Feed<ServiceRow>,
    ) {
        let Some(tag) = self.tag_of_feed(cluster) else {
            return;
        };
        let View::Services(view) = &mut self.view else {
            return;
        };
        if let Some(trouble) = view.list.apply_tagged(&tag, feed, "a Service") {
            self.message = Some(super::message::warning(self.said_of(&tag, &trouble)));
        }
    }
}

#[cfg(test)]
#[path = "services_tests.rs"]
mod tests;

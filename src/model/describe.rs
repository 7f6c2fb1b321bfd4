//! A pod as `kubectl describe pod` lays it out (labels, annotations, each
//! container's state, last state, ports, environment and mounts, conditions,
//! volumes, QoS, tolerations, events), and as YAML. Plain lines, every one
//! safe to print.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, ContainerState, ContainerStatus, EnvVar, EphemeralContainer, Pod,
    Probe, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::age::human_duration;
use super::detail::EventRow;
use super::text::sanitize;

/// The lines of `kubectl describe pod`, with `events` oldest first.
pub fn describe_pod(pod: &Pod, events: &[EventRow], now: Timestamp) -> Vec<String> {
    let mut out = Sheet::default();
    let meta = &pod.metadata;
    let (no_spec, no_status) = (Default::default(), Default::default());
    let spec = pod.spec.as_ref().unwrap_or(&no_spec);
    let status = pod.status.as_ref().unwrap_or(&no_status);
    out.pair(0, "Name", meta.name.as_deref().unwrap_or_default());
    out.pair(
        0,
        "Namespace",
        meta.namespace.as_deref().unwrap_or_default(),
    );
    if let Some(priority) = spec.priority {
        out.pair(0, "Priority", &priority.to_string());
    }
    if let Some(class) = &spec.priority_class_name {
        out.pair(0, "Priority Class Name", class);
    }
    out.pair(
        0,
        "Service Account",
        spec.service_account_name.as_deref().unwrap_or_default(),
    );
    let node = match (&spec.node_name, &status.host_ip) {
        (Some(node), Some(ip)) => format!("{node}/{ip}"),
        (Some(node), None) => node.clone(),
        (None, _) => "<none>".into(),
    };
    out.pair(0, "Node", &node);
    if let Some(start) = &status.start_time {
        out.pair(0, "Start Time", &rfc1123(start.0));
    }
    out.map(0, "Labels", meta.labels.iter().flatten(), "=");
    // As kubectl: the last-applied copy of the object is noise here (the
    // YAML view has it).
    let annotations = meta.annotations.iter().flatten();
    let shown =
        annotations.filter(|(k, _)| *k != "kubectl.kubernetes.io/last-applied-configuration");
    out.map(0, "Annotations", shown, ": ");
    let finished = matches!(status.phase.as_deref(), Some("Succeeded" | "Failed"));
    if let Some(deleting) = meta.deletion_timestamp.as_ref().filter(|_| !finished) {
        let grace = meta.deletion_grace_period_seconds.unwrap_or(0);
        out.pair(
            0,
            "Status",
            &format!(
                "Terminating (lasts {})",
                human_duration(now.duration_since(deleting.0))
            ),
        );
        out.pair(0, "Termination Grace Period", &format!("{grace}s"));
    } else {
        out.pair(0, "Status", status.phase.as_deref().unwrap_or("Unknown"));
    }
    if let Some(reason) = &status.reason {
        out.pair(0, "Reason", reason);
    }
    if let Some(message) = &status.message {
        out.pair(0, "Message", message);
    }
    out.pair(0, "IP", status.pod_ip.as_deref().unwrap_or_default());
    let ips: Vec<&str> = status
        .pod_ips
        .iter()
        .flatten()
        .map(|i| i.ip.as_str())
        .collect();
    if ips.is_empty() {
        out.pair(0, "IPs", "<none>");
    } else {
        out.heading(0, "IPs");
        for ip in ips {
            out.pair(2, "IP", ip);
        }
    }
    if let Some(owner) = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
    {
        out.pair(
            0,
            "Controlled By",
            &format!("{}/{}", owner.kind, owner.name),
        );
    }
    // kubectl always heads "Containers"; the other two only when there are some.
    let inits = spec.init_containers.iter().flatten();
    let debug = spec.ephemeral_containers.iter().flatten();
    let sections = [
        (
            "Init Containers",
            inits
                .map(|c| {
                    (
                        Described::of(c),
                        status_of(&status.init_container_statuses, &c.name),
                    )
                })
                .collect(),
        ),
        (
            "Containers",
            spec.containers
                .iter()
                .map(|c| {
                    (
                        Described::of(c),
                        status_of(&status.container_statuses, &c.name),
                    )
                })
                .collect(),
        ),
        (
            "Ephemeral Containers",
            debug
                .map(|c| {
                    (
                        Described::of_ephemeral(c),
                        status_of(&status.ephemeral_container_statuses, &c.name),
                    )
                })
                .collect::<Vec<_>>(),
        ),
    ];
    for (heading, containers) in sections {
        if containers.is_empty() && heading != "Containers" {
            continue;
        }
        out.heading(0, heading);
        for (c, state) in &containers {
            out.container(c, *state);
        }
    }
    let conditions = status.conditions.clone().unwrap_or_default();
    if !conditions.is_empty() {
        out.heading(0, "Conditions");
        let mut rows = vec![vec!["Type".to_string(), "Status".to_string()]];
        rows.extend(
            conditions
                .iter()
                .map(|c| vec![c.type_.clone(), c.status.clone()]),
        );
        out.table(2, rows);
    }
    match spec.volumes.as_ref().filter(|v| !v.is_empty()) {
        None => out.pair(0, "Volumes", "<none>"),
        Some(volumes) => {
            out.heading(0, "Volumes");
            for v in volumes {
                out.volume(v);
            }
        }
    }
    out.pair(
        0,
        "QoS Class",
        status.qos_class.as_deref().unwrap_or_default(),
    );
    out.map(
        0,
        "Node-Selectors",
        spec.node_selector.iter().flatten(),
        "=",
    );
    let tolerations: Vec<String> = spec
        .tolerations
        .iter()
        .flatten()
        .map(|t| {
            let mut text = t.key.clone().unwrap_or_default();
            if let Some(value) = &t.value {
                text.push('=');
                text.push_str(value);
            }
            if let Some(effect) = &t.effect {
                text.push(':');
                text.push_str(effect);
            }
            if t.operator.as_deref() == Some("Exists") && t.value.is_none() {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str("op=Exists");
            }
            if let Some(seconds) = t.toleration_seconds {
                text.push_str(&format!(" for {seconds}s"));
            }
            text
        })
        .collect();
    out.list(0, "Tolerations", &tolerations);
    out.events(events, now);
    out.finish()
}

/// The pod as YAML, without `managedFields` (noise nobody reads here).
pub fn pod_yaml(pod: &Pod) -> Vec<String> {
    object_yaml(serde_json::to_value(pod).unwrap_or_default(), "v1", "Pod")
}

/// An object as YAML, `apiVersion` and `kind` first (a watch leaves them
/// out), without `managedFields`.
pub fn object_yaml(mut object: serde_json::Value, api_version: &str, kind: &str) -> Vec<String> {
    if let Some(metadata) = object.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        metadata.remove("managedFields");
    }
    if let Some(map) = object.as_object_mut() {
        let head = [
            ("apiVersion".to_string(), serde_json::json!(api_version)),
            ("kind".to_string(), serde_json::json!(kind)),
        ];
        let rest = std::mem::take(map);
        map.extend(head);
        map.extend(
            rest.into_iter()
                .filter(|(k, _)| k != "apiVersion" && k != "kind"),
        );
    }
    match serde_saphyr::to_string(&object) {
        Ok(text) => text.lines().map(|l| sanitize(l).into_owned()).collect(),
        Err(e) => vec![format!("The {kind} cannot be shown as YAML: {e}.")],
    }
}

/// `Mon, 02 Jan 2006 15:04:05 +0000`, as kubectl prints times.
pub(super) fn rfc1123(t: Timestamp) -> String {
    t.strftime("%a, %d %b %Y %H:%M:%S %z").to_string()
}

fn status_of<'a>(
    list: &'a Option<Vec<ContainerStatus>>,
    name: &str,
) -> Option<&'a ContainerStatus> {
    list.iter().flatten().find(|s| s.name == name)
}

/// What describe prints of a container, regular or ephemeral alike.
pub(super) struct Described<'a> {
    name: &'a str,
    image: Option<&'a str>,
    target: Option<&'a str>,
    ports: Vec<String>,
    /// `hostPort/protocol` of each port.
    host_ports: Vec<String>,
    command: Option<&'a Vec<String>>,
    args: Option<&'a Vec<String>>,
    limits: Option<&'a BTreeMap<String, Quantity>>,
    requests: Option<&'a BTreeMap<String, Quantity>>,
    probes: [(&'static str, Option<&'a Probe>); 3],
    env: Option<&'a Vec<EnvVar>>,
    mounts: Vec<String>,
}

impl<'a> Described<'a> {
    pub(super) fn of(c: &'a Container) -> Self {
        let resources = c.resources.as_ref();
        Described {
            name: &c.name,
            image: c.image.as_deref(),
            target: None,
            host_ports: port_list(c, |p| p.host_port.unwrap_or(0)),
            ports: port_list(c, |p| p.container_port),
            command: c.command.as_ref(),
            args: c.args.as_ref(),
            limits: resources.and_then(|r| r.limits.as_ref()),
            requests: resources.and_then(|r| r.requests.as_ref()),
            probes: [
                ("Liveness", c.liveness_probe.as_ref()),
                ("Readiness", c.readiness_probe.as_ref()),
                ("Startup", c.startup_probe.as_ref()),
            ],
            env: c.env.as_ref(),
            mounts: mounts(c.volume_mounts.iter().flatten()),
        }
    }

    fn of_ephemeral(c: &'a EphemeralContainer) -> Self {
        Described {
            name: &c.name,
            image: c.image.as_deref(),
            target: c.target_container_name.as_deref(),
            ports: Vec::new(),
            host_ports: Vec::new(),
            command: c.command.as_ref(),
            args: c.args.as_ref(),
            limits: None,
            requests: None,
            probes: [("Liveness", None), ("Readiness", None), ("Startup", None)],
            env: c.env.as_ref(),
            mounts: mounts(c.volume_mounts.iter().flatten()),
        }
    }
}

/// `port/protocol` for each of the container's ports, with `port` as picked.
fn port_list(c: &Container, port: fn(&ContainerPort) -> i32) -> Vec<String> {
    c.ports
        .iter()
        .flatten()
        .map(|p| format!("{}/{}", port(p), p.protocol.as_deref().unwrap_or("TCP")))
        .collect()
}

fn mounts<'a>(
    list: impl Iterator<Item = &'a k8s_openapi::api::core::v1::VolumeMount>,
) -> Vec<String> {
    list.map(|m| {
        let mode = if m.read_only == Some(true) {
            "ro"
        } else {
            "rw"
        };
        let sub = m
            .sub_path
            .as_deref()
            .map_or_else(String::new, |p| format!(",path=\"{p}\""));
        format!("{} from {} ({mode}{sub})", m.mount_path, m.name)
    })
    .collect()
}

fn probe_text(p: &Probe) -> String {
    let how = if let Some(http) = &p.http_get {
        let port = match &http.port {
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => n.to_string(),
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
        };
        format!(
            "http-get {}://{}:{port}{}",
            http.scheme.as_deref().unwrap_or("HTTP").to_lowercase(),
            http.host.as_deref().unwrap_or_default(),
            http.path.as_deref().unwrap_or_default()
        )
    } else if let Some(exec) = &p.exec {
        format!(
            "exec [{}]",
            exec.command
                .iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        )
    } else if let Some(tcp) = &p.tcp_socket {
        let port = match &tcp.port {
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => n.to_string(),
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
        };
        format!(
            "tcp-socket {}:{port}",
            tcp.host.as_deref().unwrap_or_default()
        )
    } else if let Some(grpc) = &p.grpc {
        format!(
            "grpc <pod>:{} {}",
            grpc.port,
            grpc.service.as_deref().unwrap_or_default()
        )
    } else {
        "unknown".into()
    };
    format!(
        "{how} delay={}s timeout={}s period={}s #success={} #failure={}",
        p.initial_delay_seconds.unwrap_or(0),
        p.timeout_seconds.unwrap_or(1),
        p.period_seconds.unwrap_or(10),
        p.success_threshold.unwrap_or(1),
        p.failure_threshold.unwrap_or(3)
    )
}

/// Lines being written; runs of `key: value` lines are aligned together,
/// as kubectl's tabwriter does. Its methods are not inlined: a describe
/// calls them dozens of times, on a key press, and each inlined copy
/// would be kilobytes of the binary.
#[derive(Default)]
pub(super) struct Sheet {
    lines: Vec<String>,
    /// (indent, key with its colon or empty, value) not yet aligned.
    block: Vec<(usize, String, String)>,
}

impl Sheet {
    /// `Key:  value`; a value of several lines continues under itself.
    #[inline(never)]
    pub(super) fn pair(&mut self, indent: usize, key: &str, value: &str) {
        let mut parts = value.split('\n');
        let first = parts.next().unwrap_or_default();
        let key = if key.is_empty() {
            String::new()
        } else {
            format!("{}:", sanitize(key))
        };
        self.block.push((indent, key, sanitize(first).into_owned()));
        for more in parts {
            self.block
                .push((indent, String::new(), sanitize(more).into_owned()));
        }
    }

    /// `Key:` alone on its line, the items below it.
    #[inline(never)]
    pub(super) fn heading(&mut self, indent: usize, key: &str) {
        self.flush();
        self.lines
            .push(format!("{}{}:", " ".repeat(indent), sanitize(key)));
    }

    /// A map as kubectl prints labels: one `k=v` per line, `<none>` when empty.
    #[inline(never)]
    pub(super) fn map<'a>(
        &mut self,
        indent: usize,
        key: &str,
        entries: impl Iterator<Item = (&'a String, &'a String)>,
        sep: &str,
    ) {
        let items: Vec<String> = entries.map(|(k, v)| format!("{k}{sep}{v}")).collect();
        self.list(indent, key, &items);
    }

    #[inline(never)]
    pub(super) fn list(&mut self, indent: usize, key: &str, items: &[String]) {
        match items.split_first() {
            None => self.pair(indent, key, "<none>"),
            Some((first, rest)) => {
                self.pair(indent, key, first);
                for item in rest {
                    self.pair(indent, "", item);
                }
            }
        }
    }

    /// Columns padded to their widest cell plus two.
    #[inline(never)]
    pub(super) fn table(&mut self, indent: usize, rows: Vec<Vec<String>>) {
        self.flush();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|i| {
                rows.iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| sanitize(c).chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in rows {
            let mut line = " ".repeat(indent);
            let last = row.len().saturating_sub(1);
            for (i, cell) in row.iter().enumerate() {
                let cell = sanitize(cell);
                line.push_str(&cell);
                if i < last {
                    let pad = widths[i] - cell.chars().count() + 2;
                    line.push_str(&" ".repeat(pad));
                }
            }
            self.lines.push(line);
        }
    }

    fn container(&mut self, c: &Described, status: Option<&ContainerStatus>) {
        self.container_head(c, status, 2);
        self.container_status(status);
        self.container_tail(c);
    }

    /// A pod template's container: what it will run, no state.
    pub(super) fn template_container(&mut self, c: &Described) {
        self.container_head(c, None, 3);
        self.container_tail(c);
    }

    fn container_head(&mut self, c: &Described, status: Option<&ContainerStatus>, indent: usize) {
        self.heading(indent, c.name);
        if let Some(id) = status.and_then(|s| s.container_id.as_deref()) {
            self.pair(4, "Container ID", id);
        }
        self.pair(4, "Image", c.image.unwrap_or_default());
        if let Some(status) = status {
            self.pair(4, "Image ID", &status.image_id);
        }
        if let Some(target) = c.target {
            self.pair(4, "Target Container", target);
        }
        match c.ports.as_slice() {
            [] => {
                self.pair(4, "Port", "<none>");
                self.pair(4, "Host Port", "<none>");
            }
            [one] => {
                self.pair(4, "Port", one);
                self.pair(4, "Host Port", &c.host_ports.join(", "));
            }
            many => {
                self.pair(4, "Ports", &many.join(", "));
                self.pair(4, "Host Ports", &c.host_ports.join(", "));
            }
        }
        for (key, words) in [("Command", c.command), ("Args", c.args)] {
            if let Some(words) = words.filter(|w| !w.is_empty()) {
                self.heading(4, key);
                for word in words {
                    self.lines.push(format!("      {}", sanitize(word)));
                }
            }
        }
    }

    fn container_status(&mut self, status: Option<&ContainerStatus>) {
        match status.and_then(|s| s.state.as_ref()) {
            Some(state) => self.state(4, "State", state),
            None => self.pair(4, "State", "Waiting"),
        }
        if let Some(last) = status
            .and_then(|s| s.last_state.as_ref())
            .filter(|last| last.terminated.is_some())
        {
            self.state(4, "Last State", last);
        }
        self.pair(
            4,
            "Ready",
            if status.is_some_and(|s| s.ready) {
                "True"
            } else {
                "False"
            },
        );
        self.pair(
            4,
            "Restart Count",
            &status.map_or(0, |s| s.restart_count).to_string(),
        );
    }

    fn container_tail(&mut self, c: &Described) {
        for (key, quantities) in [("Limits", c.limits), ("Requests", c.requests)] {
            if let Some(q) = quantities.filter(|q| !q.is_empty()) {
                self.heading(4, key);
                for (resource, amount) in q {
                    self.pair(6, resource, &amount.0);
                }
            }
        }
        for (key, probe) in c.probes {
            if let Some(probe) = probe {
                self.pair(4, key, &probe_text(probe));
            }
        }
        match c.env.filter(|e| !e.is_empty()) {
            None => self.pair(4, "Environment", "<none>"),
            Some(env) => {
                self.heading(4, "Environment");
                for var in env {
                    self.pair(6, &var.name, &env_value(var));
                }
            }
        }
        if c.mounts.is_empty() {
            self.pair(4, "Mounts", "<none>");
        } else {
            self.heading(4, "Mounts");
            for mount in &c.mounts {
                self.lines.push(format!("      {}", sanitize(mount)));
            }
        }
    }

    #[inline(never)]
    fn state(&mut self, indent: usize, key: &str, state: &ContainerState) {
        let sub = indent + 2;
        if let Some(r) = &state.running {
            self.pair(indent, key, "Running");
            if let Some(t) = &r.started_at {
                self.pair(sub, "Started", &rfc1123(t.0));
            }
        } else if let Some(t) = &state.terminated {
            self.pair(indent, key, "Terminated");
            if let Some(reason) = t.reason.as_deref().filter(|r| !r.is_empty()) {
                self.pair(sub, "Reason", reason);
            }
            if let Some(message) = &t.message {
                self.pair(sub, "Message", message);
            }
            self.pair(sub, "Exit Code", &t.exit_code.to_string());
            if let Some(signal) = t.signal {
                self.pair(sub, "Signal", &signal.to_string());
            }
            if let Some(at) = &t.started_at {
                self.pair(sub, "Started", &rfc1123(at.0));
            }
            if let Some(at) = &t.finished_at {
                self.pair(sub, "Finished", &rfc1123(at.0));
            }
        } else if let Some(w) = &state.waiting {
            self.pair(indent, key, "Waiting");
            if let Some(reason) = &w.reason {
                self.pair(sub, "Reason", reason);
            }
            if let Some(message) = &w.message {
                self.pair(sub, "Message", message);
            }
        }
    }

    #[inline(never)]
    pub(super) fn volume(&mut self, v: &Volume) {
        self.heading(2, &v.name);
        if let Some(e) = &v.empty_dir {
            self.pair(
                4,
                "Type",
                "EmptyDir (a temporary directory that shares a pod's lifetime)",
            );
            self.pair(4, "Medium", e.medium.as_deref().unwrap_or_default());
            let limit = e.size_limit.as_ref().map_or("<unset>", |q| q.0.as_str());
            self.pair(4, "SizeLimit", limit);
        } else if let Some(c) = &v.config_map {
            self.pair(4, "Type", "ConfigMap (a volume populated by a ConfigMap)");
            self.pair(4, "Name", &c.name);
            self.pair(4, "Optional", &c.optional.unwrap_or(false).to_string());
        } else if let Some(s) = &v.secret {
            self.pair(4, "Type", "Secret (a volume populated by a Secret)");
            self.pair(
                4,
                "SecretName",
                s.secret_name.as_deref().unwrap_or_default(),
            );
            self.pair(4, "Optional", &s.optional.unwrap_or(false).to_string());
        } else if let Some(p) = &v.persistent_volume_claim {
            self.pair(
                4,
                "Type",
                "PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)",
            );
            self.pair(4, "ClaimName", &p.claim_name);
            self.pair(4, "ReadOnly", &p.read_only.unwrap_or(false).to_string());
        } else if let Some(h) = &v.host_path {
            self.pair(4, "Type", "HostPath (bare host directory volume)");
            self.pair(4, "Path", &h.path);
            self.pair(4, "HostPathType", h.type_.as_deref().unwrap_or_default());
        } else if v.projected.is_some() {
            self.pair(
                4,
                "Type",
                "Projected (a volume that contains injected data from multiple sources)",
            );
        } else {
            self.pair(4, "Type", "<unknown>");
        }
    }

    #[inline(never)]
    pub(super) fn events(&mut self, events: &[EventRow], now: Timestamp) {
        if events.is_empty() {
            self.pair(0, "Events", "<none>");
            return;
        }
        self.heading(0, "Events");
        let mut rows = vec![
            ["Type", "Reason", "Age", "From", "Message"]
                .map(String::from)
                .to_vec(),
            ["----", "------", "----", "----", "-------"]
                .map(String::from)
                .to_vec(),
        ];
        let age = |t: Option<Timestamp>| {
            t.map_or_else(
                || "<unknown>".into(),
                |t| human_duration(now.duration_since(t)),
            )
        };
        for e in events {
            let when = match e.first_seen {
                Some(first) if e.count > 1 => {
                    format!(
                        "{} (x{} over {})",
                        age(e.last_seen),
                        e.count,
                        age(Some(first))
                    )
                }
                _ => age(e.last_seen),
            };
            rows.push(vec![
                if e.warning { "Warning" } else { "Normal" }.to_string(),
                e.reason.clone(),
                when,
                e.source.clone(),
                e.message.clone(),
            ]);
        }
        self.table(2, rows);
    }

    /// Aligns the pending `key: value` lines: values start two columns
    /// after the longest key.
    #[inline(never)]
    fn flush(&mut self) {
        let width = self
            .block
            .iter()
            .map(|(indent, key, _)| indent + key.chars().count())
            .max()
            .unwrap_or(0);
        for (indent, key, value) in self.block.drain(..) {
            let pad = width - indent - key.chars().count() + 2;
            let line = format!("{}{key}{}{value}", " ".repeat(indent), " ".repeat(pad));
            self.lines.push(line.trim_end().to_string());
        }
    }

    pub(super) fn finish(mut self) -> Vec<String> {
        self.flush();
        self.lines
    }
}

/// An environment variable's value, or where it comes from.
fn env_value(var: &EnvVar) -> String {
    if let Some(value) = &var.value {
        return value.clone();
    }
    let Some(from) = &var.value_from else {
        return String::new();
    };
    let key_ref = |key: &str, of: &str, optional: Option<bool>| {
        format!(
            "<set to the key '{key}' {of}>  Optional: {}",
            optional.unwrap_or(false)
        )
    };
    if let Some(s) = &from.secret_key_ref {
        key_ref(&s.key, &format!("in secret '{}'", s.name), s.optional)
    } else if let Some(c) = &from.config_map_key_ref {
        key_ref(&c.key, &format!("of config map '{}'", c.name), c.optional)
    } else if let Some(f) = &from.field_ref {
        let version = f.api_version.as_deref().unwrap_or("v1");
        format!(" ({version}:{})", f.field_path)
    } else if let Some(r) = &from.resource_field_ref {
        let container = r.container_name.as_deref().unwrap_or_default();
        format!(" ({}:{container})", r.resource)
    } else {
        String::new()
    }
}

//! Port-forwards, as kubectl names them (`[LOCAL:]REMOTE`, `deploy/NAME`),
//! and the rule that picks the pod a forward reaches when the one it had
//! goes away. Pure: the forwarding itself is `cluster::forward`.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::owner::OwnerKind;

/// What a forward is pointed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardTarget {
    Pod(String),
    /// The owner's pods, by its selector (as kubectl resolves it).
    Owner {
        kind: OwnerKind,
        name: String,
    },
    /// The pods a Service selects, each port its Service port.
    Service(String),
}

impl ForwardTarget {
    /// `NAME`, `pod/NAME`, `svc/NAME`, or `deploy/`, `rs/`, `sts/` and a
    /// name.
    pub fn parse(text: &str) -> Result<ForwardTarget, String> {
        let Some((kind, name)) = text.split_once('/') else {
            return match text.is_empty() {
                true => {
                    Err("give a pod, pod/NAME, svc/NAME, deploy/NAME, rs/NAME or sts/NAME".into())
                }
                false => Ok(ForwardTarget::Pod(text.to_string())),
            };
        };
        let named = !name.is_empty() && !name.contains('/');
        match kind.to_ascii_lowercase().as_str() {
            "pod" | "pods" | "po" if named => Ok(ForwardTarget::Pod(name.to_string())),
            "svc" | "service" | "services" if named => Ok(ForwardTarget::Service(name.to_string())),
            word => match OwnerKind::from_word(word) {
                Some(
                    kind @ (OwnerKind::Deployment | OwnerKind::ReplicaSet | OwnerKind::StatefulSet),
                ) if named => Ok(ForwardTarget::Owner {
                    kind,
                    name: name.to_string(),
                }),
                _ => Err(format!(
                    "{text:?} is not a pod, a Service or a workload podbay forwards to: give NAME, pod/NAME, svc/NAME, deploy/NAME, rs/NAME or sts/NAME"
                )),
            },
        }
    }
}

impl fmt::Display for ForwardTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForwardTarget::Pod(name) => write!(f, "pod/{name}"),
            ForwardTarget::Owner { kind, name } => write!(f, "{kind}/{name}"),
            ForwardTarget::Service(name) => write!(f, "svc/{name}"),
        }
    }
}

/// What to forward.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardRequest {
    pub namespace: String,
    pub target: ForwardTarget,
    pub ports: Vec<PortMapping>,
    pub addresses: Vec<IpAddr>,
}

/// What a forward says as it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardEvent {
    Listening {
        local: SocketAddr,
        remote: u16,
    },
    /// It now reaches `pod` (`namespace/name`); `switched` after the first.
    Reaching {
        pod: String,
        switched: bool,
    },
    /// No pod can be reached; connections wait. One sentence.
    Waiting(String),
    /// A connection was accepted on this local port.
    Accepted(u16),
    /// One connection failed; the forward goes on. One sentence.
    ConnectionFailed(String),
    /// The forward has stopped. One sentence.
    Ended(String),
}

/// A port in the pod: a number, or a container port's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemotePort {
    Number(u16),
    Name(String),
}

impl fmt::Display for RemotePort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemotePort::Number(n) => write!(f, "{n}"),
            RemotePort::Name(name) => f.write_str(name),
        }
    }
}

/// One `[LOCAL:]REMOTE` of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortMapping {
    /// `None`: the remote port's number; `Some(0)`: any free port.
    pub local: Option<u16>,
    pub remote: RemotePort,
}

impl PortMapping {
    /// kubectl's forms: `8080`, `8888:8080`, `:8080` and `0:8080` (a free
    /// local port), and a container port's name for `REMOTE`.
    pub fn parse(text: &str) -> Result<PortMapping, String> {
        let (local, remote) = match text.split_once(':') {
            Some((local, remote)) => (Some(local), remote),
            None => (None, text),
        };
        let remote = match remote.parse::<u32>() {
            Ok(0) => return Err(format!("{text:?}: the remote port must be > 0")),
            Ok(n) => RemotePort::Number(
                u16::try_from(n).map_err(|_| format!("{text:?}: {n} is not a port (1-65535)"))?,
            ),
            Err(_) if is_port_name(remote) => RemotePort::Name(remote.to_string()),
            Err(_) => {
                return Err(format!(
                    "{text:?} is not [LOCAL:]REMOTE: REMOTE is a port number or a container port's name"
                ));
            }
        };
        let local = match local {
            None => None,
            Some("") => Some(0),
            Some(n) => Some(
                n.parse::<u16>()
                    .map_err(|_| format!("{text:?}: {n:?} is not a local port (0-65535)"))?,
            ),
        };
        Ok(PortMapping { local, remote })
    }
}

/// An IANA_SVC_NAME, as a container port's name must be: 1-15 lowercase
/// letters, digits and dashes, with a letter, no dash at either end.
fn is_port_name(name: &str) -> bool {
    (1..=15).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name.bytes().any(|b| b.is_ascii_lowercase())
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// A container port a pod declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredPort {
    pub container: String,
    pub name: Option<String>,
    pub number: u16,
    /// TCP, UDP or SCTP.
    pub protocol: String,
}

/// The ports a pod's containers declare, in spec order.
pub fn declared_ports(pod: &k8s_openapi::api::core::v1::Pod) -> Vec<DeclaredPort> {
    pod.spec
        .iter()
        .flat_map(|s| &s.containers)
        .flat_map(|c| {
            c.ports.iter().flatten().filter_map(move |p| {
                Some(DeclaredPort {
                    container: c.name.clone(),
                    name: p.name.clone(),
                    number: u16::try_from(p.container_port).ok().filter(|n| *n > 0)?,
                    protocol: p.protocol.clone().unwrap_or_else(|| "TCP".into()),
                })
            })
        })
        .collect()
}

/// The number `remote` names in a pod with these ports; a name is looked
/// up in every container, as kubectl does. UDP is refused: Kubernetes
/// forwards TCP only.
pub fn resolve_port(remote: &RemotePort, declared: &[DeclaredPort]) -> Result<u16, String> {
    let found = match remote {
        RemotePort::Number(n) => declared.iter().find(|p| p.number == *n),
        RemotePort::Name(name) => declared.iter().find(|p| p.name.as_deref() == Some(name)),
    };
    match (remote, found) {
        (_, Some(port)) if !port.protocol.eq_ignore_ascii_case("TCP") => Err(format!(
            "port {remote} is {} in container {}; Kubernetes forwards TCP only",
            port.protocol, port.container
        )),
        (_, Some(port)) => Ok(port.number),
        (RemotePort::Number(n), None) => Ok(*n),
        (RemotePort::Name(name), None) => {
            let names: Vec<String> = declared
                .iter()
                .filter_map(|p| Some(format!("{} ({})", p.name.as_deref()?, p.number)))
                .collect();
            Err(match names.is_empty() {
                true => format!("the pod declares no port named {name}; give the number"),
                false => format!(
                    "the pod declares no port named {name} (it has {}); give one of those or a number",
                    names.join(", ")
                ),
            })
        }
    }
}

/// What a forward to a Service reaches, as kubectl's `port-forward
/// svc/NAME` resolves it: the pods its selector selects, and each mapping
/// turned from a Service port (by number or name) to the port its pods
/// serve. A local port not given is the Service's port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThroughService {
    /// The selector as a label query.
    pub selector: String,
    pub ports: Vec<PortMapping>,
}

/// `service` is the Service object (its JSON), `name` its name.
pub fn through_service(
    name: &str,
    service: &serde_json::Value,
    ports: &[PortMapping],
) -> Result<ThroughService, String> {
    let spec = &service["spec"];
    let Some(selector) = super::owner::service_selector(service) else {
        return Err(format!(
            "service {name} has no selector: its endpoints are kept by hand, not chosen from pods; forward to a pod by name"
        ));
    };
    let declared: Vec<&serde_json::Value> =
        spec["ports"].as_array().into_iter().flatten().collect();
    let described = || {
        declared
            .iter()
            .map(|p| match p["name"].as_str().filter(|n| !n.is_empty()) {
                Some(port_name) => format!("{} ({port_name})", p["port"]),
                None => p["port"].to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let headless = spec["clusterIP"].as_str() == Some("None");
    let mut through = Vec::new();
    for mapping in ports {
        let port = match &mapping.remote {
            RemotePort::Number(n) => declared
                .iter()
                .find(|p| p["port"].as_u64() == Some(u64::from(*n))),
            RemotePort::Name(wanted) => {
                declared.iter().find(|p| p["name"].as_str() == Some(wanted))
            }
        };
        let Some(port) = port else {
            return Err(format!(
                "service {name} has no port {} (it has {}); give one of those",
                mapping.remote,
                described()
            ));
        };
        let number = port["port"]
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("service {name} declares a port that is not a number"))?;
        // A headless Service's port is its pods' port as it is; else its
        // targetPort: a number (none, or 0: the port's own), or a name each
        // pod resolves among its containers' ports.
        let remote = match &port["targetPort"] {
            _ if headless => RemotePort::Number(number),
            serde_json::Value::String(target) => RemotePort::Name(target.clone()),
            target => match target.as_u64().and_then(|n| u16::try_from(n).ok()) {
                Some(0) | None => RemotePort::Number(number),
                Some(n) => RemotePort::Number(n),
            },
        };
        through.push(PortMapping {
            local: mapping.local.or(Some(number)),
            remote,
        });
    }
    Ok(ThroughService {
        selector,
        ports: through,
    })
}

/// The local addresses to listen on, from `--address`: IPs, or
/// `localhost` (127.0.0.1 and ::1, as kubectl). Every interface (0.0.0.0,
/// ::) opens the pod's port to whoever reaches this machine, so it is
/// taken only when asked for twice.
pub fn listen_addresses(given: &[String]) -> Result<Vec<IpAddr>, String> {
    let mut addresses: Vec<IpAddr> = Vec::new();
    for text in given {
        let parsed: Vec<IpAddr> =
            match text.trim() {
                "localhost" => vec![Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()],
                other => vec![other.parse().map_err(|_| {
                    format!("--address {other:?} is not an IP address or localhost")
                })?],
            };
        for address in parsed {
            if address.is_unspecified() {
                let asked = given.iter().filter(|g| g.trim() == text.trim()).count();
                if asked < 2 {
                    return Err(format!(
                        "--address {address} opens the pod's port to every host that can reach this machine; if that is what you want, give --address {address} twice"
                    ));
                }
            }
            if !addresses.contains(&address) {
                addresses.push(address);
            }
        }
    }
    Ok(addresses)
}

/// What the forward needs to know of a pod to choose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub running: bool,
    pub ready: bool,
    /// It has a deletionTimestamp: it is going.
    pub terminating: bool,
    /// When it started (RFC 3339 sorts by time); the longest-running ready
    /// pod is chosen, as kubectl's `GetFirstPod` prefers.
    pub started: String,
}

impl Candidate {
    fn usable(&self) -> bool {
        self.running && self.ready && !self.terminating
    }
}

/// The pod to forward to: the current one while it is Running, Ready and
/// not terminating; else the longest-running such pod; else none (the
/// forward waits). A pod whose name is `only` is the one allowed (a
/// StatefulSet's ordinal, a pod with no owner).
pub fn choose<'a>(
    candidates: &'a [Candidate],
    current: Option<&str>,
    only: Option<&str>,
) -> Option<&'a Candidate> {
    let allowed = |c: &&Candidate| c.usable() && only.is_none_or(|name| c.name == name);
    if let Some(current) = current
        && let Some(same) = candidates
            .iter()
            .filter(allowed)
            .find(|c| c.name == current)
    {
        return Some(same);
    }
    candidates
        .iter()
        .filter(allowed)
        .min_by(|a, b| a.started.cmp(&b.started).then(a.name.cmp(&b.name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_read_as_kubectl_reads_them() {
        assert_eq!(
            ForwardTarget::parse("redis-0"),
            Ok(ForwardTarget::Pod("redis-0".into()))
        );
        assert_eq!(
            ForwardTarget::parse("po/redis-0"),
            Ok(ForwardTarget::Pod("redis-0".into()))
        );
        assert_eq!(
            ForwardTarget::parse("deploy/payments-api"),
            Ok(ForwardTarget::Owner {
                kind: OwnerKind::Deployment,
                name: "payments-api".into()
            })
        );
        assert_eq!(
            ForwardTarget::parse("svc/web"),
            Ok(ForwardTarget::Service("web".into()))
        );
        assert_eq!(
            ForwardTarget::parse("services/web").unwrap().to_string(),
            "svc/web"
        );
        assert!(ForwardTarget::parse("svc/").is_err());
        assert!(ForwardTarget::parse("ds/agent").is_err());
        assert!(ForwardTarget::parse("deploy/").is_err());
        assert_eq!(
            ForwardTarget::parse("sts/redis").unwrap().to_string(),
            "sts/redis"
        );
    }

    #[test]
    fn ports_take_kubectls_forms() {
        let mapping = |local, remote| PortMapping { local, remote };
        assert_eq!(
            PortMapping::parse("8080"),
            Ok(mapping(None, RemotePort::Number(8080)))
        );
        assert_eq!(
            PortMapping::parse("8888:8080"),
            Ok(mapping(Some(8888), RemotePort::Number(8080)))
        );
        assert_eq!(
            PortMapping::parse(":8080"),
            Ok(mapping(Some(0), RemotePort::Number(8080)))
        );
        assert_eq!(
            PortMapping::parse("0:http"),
            Ok(mapping(Some(0), RemotePort::Name("http".into())))
        );
        for bad in ["0", "8080:0", "70000", "x:80", "8080:Http", "a:b:c", ""] {
            assert!(PortMapping::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_interface_is_taken_only_when_asked_twice() {
        let given =
            |a: &[&str]| listen_addresses(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(given(&["127.0.0.1"]).unwrap().len(), 1);
        assert_eq!(given(&["localhost"]).unwrap().len(), 2);
        assert!(given(&["0.0.0.0"]).unwrap_err().contains("twice"));
        assert_eq!(
            given(&["0.0.0.0", "0.0.0.0"]).unwrap(),
            [IpAddr::from(Ipv4Addr::UNSPECIFIED)]
        );
        assert!(given(&["::"]).is_err());
        assert!(given(&["my-laptop"]).unwrap_err().contains("not an IP"));
    }

    #[test]
    fn names_resolve_in_any_container_and_udp_is_refused() {
        let port = |container: &str, name: Option<&str>, number, protocol: &str| DeclaredPort {
            container: container.into(),
            name: name.map(String::from),
            number,
            protocol: protocol.into(),
        };
        let declared = [
            port("api", Some("http"), 8080, "TCP"),
            port("envoy", Some("admin"), 9901, "TCP"),
            port("dns", Some("dns"), 53, "UDP"),
        ];
        let resolve = |r: RemotePort| resolve_port(&r, &declared);
        assert_eq!(resolve(RemotePort::Name("admin".into())), Ok(9901));
        assert_eq!(resolve(RemotePort::Number(7000)), Ok(7000));
        assert!(
            resolve(RemotePort::Number(53))
                .unwrap_err()
                .contains("TCP only")
        );
        let missing = resolve(RemotePort::Name("metrics".into())).unwrap_err();
        assert!(missing.contains("http (8080), admin (9901)"), "{missing}");
    }

    #[test]
    fn the_current_pod_stays_until_it_goes_then_the_oldest_ready_one_takes_over() {
        let pod = |name: &str, ready, terminating, started: &str| Candidate {
            name: name.into(),
            running: true,
            ready,
            terminating,
            started: started.into(),
        };
        let pods = [
            pod("a", true, false, "2026-01-01T10:00:00Z"),
            pod("b", true, false, "2026-01-01T09:00:00Z"),
            pod("c", false, false, "2026-01-01T08:00:00Z"),
        ];
        let name = |c: Option<&Candidate>| c.map(|c| c.name.clone());
        assert_eq!(name(choose(&pods, Some("a"), None)), Some("a".into()));
        assert_eq!(name(choose(&pods, None, None)), Some("b".into()));
        assert_eq!(name(choose(&pods, Some("gone"), None)), Some("b".into()));
        let going = [
            pod("a", true, true, "2026-01-01T10:00:00Z"),
            pod("c", false, false, "2026-01-01T08:00:00Z"),
        ];
        assert_eq!(name(choose(&going, Some("a"), None)), None);
        assert_eq!(name(choose(&pods, None, Some("a"))), Some("a".into()));
        assert_eq!(name(choose(&pods, None, Some("c"))), None);
    }

    /// kubectl's translation of a Service's ports (its port-forward's
    /// `translateServicePortToTargetPort` and the lookups behind it).
    #[test]
    fn a_services_ports_become_its_pods_ports_as_kubectl_translates_them() {
        let service = serde_json::json!({"spec": {
            "clusterIP": "10.96.0.10",
            "selector": {"app": "web", "tier": "front"},
            "ports": [
                {"name": "http", "port": 80, "targetPort": "http"},
                {"name": "metrics", "port": 9090, "targetPort": 9100},
                {"name": "plain", "port": 7000},
                {"name": "zero", "port": 7001, "targetPort": 0},
            ],
        }});
        let mapping = |text: &str| PortMapping::parse(text).unwrap();
        let through = |texts: &[&str]| {
            let ports: Vec<PortMapping> = texts.iter().map(|t| mapping(t)).collect();
            through_service("web", &service, &ports)
        };
        let ok = through(&["80", "8888:9090", "http", ":7000", "7001"]).unwrap();
        assert_eq!(ok.selector, "app=web,tier=front");
        let expected = [
            (Some(80), RemotePort::Name("http".into())),
            (Some(8888), RemotePort::Number(9100)),
            (Some(80), RemotePort::Name("http".into())),
            (Some(0), RemotePort::Number(7000)),
            (Some(7001), RemotePort::Number(7001)),
        ];
        let got: Vec<(Option<u16>, RemotePort)> =
            ok.ports.into_iter().map(|m| (m.local, m.remote)).collect();
        assert_eq!(got, expected);
        // A port the Service does not declare, by number or by name.
        let missing = through(&["8080"]).unwrap_err();
        assert_eq!(
            missing,
            "service web has no port 8080 (it has 80 (http), 9090 (metrics), 7000 (plain), 7001 (zero)); give one of those"
        );
        assert!(through(&["grpc"]).unwrap_err().contains("has no port grpc"));
        // Headless: the port as it is, its targetPort ignored.
        let mut headless = service.clone();
        headless["spec"]["clusterIP"] = "None".into();
        let ports = [mapping("9090")];
        let got = through_service("web", &headless, &ports).unwrap();
        assert_eq!(got.ports[0].remote, RemotePort::Number(9090));
        // No selector: no pods to follow.
        let mut manual = service.clone();
        manual["spec"]["selector"] = serde_json::json!({});
        assert!(
            through_service("web", &manual, &ports)
                .unwrap_err()
                .contains("has no selector")
        );
    }
}

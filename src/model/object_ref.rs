//! A workload or a Service named for a one-off read (describe, YAML).

use super::workload::WorkloadKind;

/// The kinds a view lists besides pods and nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Workload(WorkloadKind),
    Service,
}

impl ObjectKind {
    /// The API group (`""` for core).
    pub fn group(self) -> &'static str {
        match self {
            ObjectKind::Workload(kind) => kind.group(),
            ObjectKind::Service => "",
        }
    }

    pub fn api_version(self) -> &'static str {
        match self.group() {
            "" => "v1",
            "apps" => "apps/v1",
            _ => "batch/v1",
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            ObjectKind::Workload(kind) => kind.kind(),
            ObjectKind::Service => "Service",
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            ObjectKind::Workload(kind) => kind.plural(),
            ObjectKind::Service => "services",
        }
    }

    /// kubectl's short name (`deploy`, `svc`).
    pub fn short(self) -> &'static str {
        match self {
            ObjectKind::Workload(kind) => kind.short(),
            ObjectKind::Service => "svc",
        }
    }
}

/// One object of a namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub kind: ObjectKind,
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for ObjectRef {
    /// `deploy/storefront`, as kubectl takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.kind.short(), self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_names_its_api_as_the_server_serves_it() {
        let cases = [
            (ObjectKind::Service, "v1", "services"),
            (
                ObjectKind::Workload(WorkloadKind::Deployment),
                "apps/v1",
                "deployments",
            ),
            (
                ObjectKind::Workload(WorkloadKind::DaemonSet),
                "apps/v1",
                "daemonsets",
            ),
            (ObjectKind::Workload(WorkloadKind::Job), "batch/v1", "jobs"),
            (
                ObjectKind::Workload(WorkloadKind::CronJob),
                "batch/v1",
                "cronjobs",
            ),
        ];
        for (kind, api_version, plural) in cases {
            assert_eq!(
                (kind.api_version(), kind.plural()),
                (api_version, plural),
                "{kind:?}"
            );
        }
        let svc = ObjectRef {
            kind: ObjectKind::Service,
            namespace: "shop".into(),
            name: "storefront".into(),
        };
        assert_eq!(svc.to_string(), "svc/storefront");
    }
}

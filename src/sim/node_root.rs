//! What a simulated node's root directory holds, as a node debug pod sees
//! it at `/host`: the OS release, the kubelet's configuration, the static
//! pods' manifests, and `/var/log/pods/NS_POD_UID/CONTAINER/0.log` with each
//! running container's log in the CRI format the kubelet writes. The
//! host's programs are mounted over it when a pod mounts it (see
//! `sandbox::Runtime::container`), so `chroot /host` finds a shell.

use std::path::Path;

use serde_json::Value;

use super::nodes::KUBELET_VERSION;
use super::runtime::{LogRecord, Stream};

const OS_RELEASE: &str = r#"PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
"#;

const KUBELET_CONFIG: &str = "apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
authorization:
  mode: Webhook
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerLogMaxFiles: 5
containerLogMaxSize: 10Mi
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
staticPodPath: /etc/kubernetes/manifests
";

/// Writes (or refreshes) the node's files. `pods` are the pods bound to
/// the node; `log` gives a container's log so far, where it has run here.
pub fn lay_out(
    root: &Path,
    node: &str,
    pods: &[Value],
    log: impl Fn(&Value, &str) -> Option<Vec<LogRecord>>,
) -> std::io::Result<()> {
    let etc = root.join("etc");
    std::fs::create_dir_all(etc.join("kubernetes/manifests"))?;
    std::fs::write(etc.join("os-release"), OS_RELEASE)?;
    std::fs::write(etc.join("hostname"), format!("{node}\n"))?;
    let kubelet = root.join("var/lib/kubelet");
    std::fs::create_dir_all(&kubelet)?;
    std::fs::write(kubelet.join("config.yaml"), KUBELET_CONFIG)?;
    std::fs::write(
        kubelet.join("version"),
        format!("Kubernetes {KUBELET_VERSION}\n"),
    )?;
    for dir in ["tmp", "root", "run", "proc"] {
        std::fs::create_dir_all(root.join(dir))?;
    }
    let logs = root.join("var/log/pods");
    std::fs::create_dir_all(&logs)?;
    for pod in pods {
        let text = |p: &str| pod.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let (namespace, name, uid) = (
            text("/metadata/namespace"),
            text("/metadata/name"),
            text("/metadata/uid"),
        );
        if is_static(pod) {
            // The kubelet reads a static pod from its manifest; JSON is YAML.
            let manifest = serde_json::json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name.trim_end_matches(&format!("-{node}")), "namespace": namespace},
                "spec": pod["spec"],
            });
            let file = format!("{}.yaml", name.trim_end_matches(&format!("-{node}")));
            std::fs::write(
                etc.join("kubernetes/manifests").join(file),
                serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n",
            )?;
        }
        let pod_dir = logs.join(format!("{namespace}_{name}_{uid}"));
        for list in ["initContainers", "containers", "ephemeralContainers"] {
            for c in pod["spec"][list].as_array().into_iter().flatten() {
                let Some(container) = c["name"].as_str() else {
                    continue;
                };
                let dir = pod_dir.join(container);
                std::fs::create_dir_all(&dir)?;
                let records = log(pod, container).unwrap_or_default();
                std::fs::write(dir.join("0.log"), cri_lines(&records))?;
            }
        }
    }
    Ok(())
}

fn is_static(pod: &Value) -> bool {
    pod.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| refs.iter().any(|r| r["kind"] == "Node"))
}

/// The CRI log format: `TIMESTAMP STREAM F|P TEXT`, one record per line
/// (`P` for a partial line, which the next record continues).
fn cri_lines(records: &[LogRecord]) -> Vec<u8> {
    let mut out = Vec::new();
    for record in records {
        let stream = match record.stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        let (text, tag) = match record.data.strip_suffix(b"\n") {
            Some(line) => (line, "F"),
            None => (&record.data[..], "P"),
        };
        out.extend_from_slice(format!("{} {stream} {tag} ", record.at).as_bytes());
        out.extend_from_slice(text);
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_node_has_its_pods_log_directories_and_its_static_manifests() {
        let dir = tempfile::tempdir().unwrap();
        let pods = [
            json!({"metadata": {"namespace": "shop", "name": "cart-1", "uid": "u1"},
                   "spec": {"containers": [{"name": "cart"}]}}),
            json!({"metadata": {"namespace": "kube-system", "name": "kube-apiserver-node-a1", "uid": "u2",
                                "ownerReferences": [{"kind": "Node", "name": "node-a1"}]},
                   "spec": {"containers": [{"name": "kube-apiserver"}]}}),
        ];
        let record = LogRecord {
            seq: 0,
            at: "2026-11-26T12:00:00Z".parse().unwrap(),
            stream: Stream::Stdout,
            data: bytes::Bytes::from_static(b"ready\n"),
            starts_line: true,
        };
        lay_out(dir.path(), "node-a1", &pods, |pod, _| {
            (pod["metadata"]["name"] == "cart-1").then(|| vec![record.clone()])
        })
        .unwrap();
        let log =
            std::fs::read_to_string(dir.path().join("var/log/pods/shop_cart-1_u1/cart/0.log"))
                .unwrap();
        assert_eq!(log, "2026-11-26T12:00:00Z stdout F ready\n");
        assert!(
            dir.path()
                .join("var/log/pods/kube-system_kube-apiserver-node-a1_u2/kube-apiserver/0.log")
                .exists()
        );
        let manifest = std::fs::read_to_string(
            dir.path()
                .join("etc/kubernetes/manifests/kube-apiserver.yaml"),
        )
        .unwrap();
        assert!(manifest.contains("\"kube-apiserver\""));
        assert!(
            std::fs::read_to_string(dir.path().join("etc/os-release"))
                .unwrap()
                .contains("bookworm")
        );
    }
}

//! The kubeconfig a simulator run writes: one cluster, one user per role,
//! and a context each (`sim`, `sim-viewer`, `sim-dev`).

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::{Value, json};

use super::rbac::{DEVELOPER_NAMESPACE, Users};

pub fn render(server_url: &str, ca_pem: &str, users: &Users) -> Value {
    use base64::Engine;
    let ca_data = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let user = |name: &str, token: &str| json!({"name": name, "user": {"token": token}});
    let context = |name: &str, user: &str, namespace: &str| json!({"name": name, "context": {"cluster": "podbay-sim", "user": user, "namespace": namespace}});
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "current-context": "sim",
        "clusters": [{"name": "podbay-sim", "cluster": {"server": server_url, "certificate-authority-data": ca_data}}],
        "users": [
            user(users.admin.name, &users.admin.token),
            user(users.viewer.name, &users.viewer.token),
            user(users.developer.name, &users.developer.token),
        ],
        "contexts": [
            context("sim", users.admin.name, "default"),
            context("sim-viewer", users.viewer.name, "default"),
            context("sim-dev", users.developer.name, DEVELOPER_NAMESPACE),
        ],
    })
}

/// Writes the kubeconfig (JSON is valid YAML) readable by the owner only:
/// it holds bearer tokens. A file already there is made private before it
/// is written (`mode` only applies to new files); a symlink is refused.
pub fn write(path: &Path, server_url: &str, ca_pem: &str, users: &Users) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.set_len(0)?;
    let text = serde_json::to_string_pretty(&render(server_url, ca_pem, users))
        .map_err(std::io::Error::other)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")
}

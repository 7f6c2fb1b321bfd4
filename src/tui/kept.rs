//! Where workspaces are kept: `STATE/workspaces/KEY/NAME.json`, KEY naming
//! the kubeconfig files (a workspace belongs to their contexts). A file is
//! written whole and replaces the old one ([`local::replace_whole`]), so a
//! crash leaves the old or the new, never half of one.

use std::path::{Path, PathBuf};

use crate::local;

use crate::app::saved::{LAST, SavedWorkspace, check_name};

/// The most a kept workspace may hold: far more than a thousand panes.
const MOST_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store of the kubeconfig files podbay reads: `--kubeconfig`,
    /// else `$KUBECONFIG`'s, else `~/.kube/config`.
    pub fn for_kubeconfig(state: &Path, kubeconfig: Option<&Path>) -> Store {
        let files: Vec<PathBuf> = match kubeconfig {
            Some(path) => vec![path.to_path_buf()],
            None => match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
                Some(list) => std::env::split_paths(&list)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect(),
                None => std::env::var_os("HOME")
                    .map(|home| vec![PathBuf::from(home).join(".kube").join("config")])
                    .unwrap_or_default(),
            },
        };
        let named: Vec<String> = files
            .iter()
            .map(|f| {
                std::fs::canonicalize(f)
                    .unwrap_or_else(|_| f.clone())
                    .display()
                    .to_string()
            })
            .collect();
        Store {
            dir: state
                .join("workspaces")
                .join(format!("{:016x}", fnv1a(named.join("\n").as_bytes()))),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    /// The workspace kept as `name`; `None` when there is none. A file
    /// that cannot be used is moved aside (nothing is lost) and said in
    /// one sentence.
    pub fn read(&self, name: &str) -> Result<Option<SavedWorkspace>, String> {
        let path = self.path(name);
        let bytes = match local::read_state(&path, MOST_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "The kept workspace {} cannot be read ({e}); podbay starts without it.",
                    path.display()
                ));
            }
        };
        SavedWorkspace::read(&bytes).map(Some).map_err(|why| {
            let aside = path.with_extension("json.unreadable");
            let moved = std::fs::rename(&path, &aside).is_ok();
            format!(
                "The kept workspace {} {why}; podbay starts empty{}.",
                path.display(),
                if moved {
                    format!(" (the file is now {})", aside.display())
                } else {
                    String::new()
                }
            )
        })
    }

    /// Writes `workspace` as `name`, replacing what was kept.
    pub fn write(&self, name: &str, workspace: &SavedWorkspace) -> Result<PathBuf, String> {
        let path = self.path(name);
        let failed = |e: std::io::Error| {
            format!("Cannot keep the workspace in {}: {e}.", self.dir.display())
        };
        let text = serde_json::to_vec_pretty(workspace).map_err(|e| failed(e.into()))?;
        local::create_private_dir(&self.dir).map_err(failed)?;
        local::replace_whole(&path, &text).map_err(failed)?;
        Ok(path)
    }

    pub fn forget(&self, name: &str) {
        let _ = std::fs::remove_file(self.path(name));
    }

    /// The names kept with `:save` (and `previous`), sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".json")
                    .map(str::to_string)
            })
            .filter(|n| n != LAST && !n.starts_with('.'))
            .collect();
        names.sort();
        names
    }

    /// `:load NAME`: the workspace, or one sentence.
    pub fn load(&self, name: &str) -> Result<SavedWorkspace, String> {
        let kept = || match self.names().as_slice() {
            [] => "none is kept yet: :save NAME keeps one".to_string(),
            names => format!("kept: {}", names.join(", ")),
        };
        if name.is_empty() {
            return Err(format!("Name a workspace: :load NAME ({}).", kept()));
        }
        if name != crate::app::saved::PREVIOUS {
            check_name(name)?;
        }
        match self.read(name)? {
            Some(saved) => Ok(saved),
            None => Err(format!("No workspace is kept as {name} ({}).", kept())),
        }
    }
}

/// FNV-1a, 64 bits: a stable name for a list of paths (std's hasher may
/// change between Rust releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::saved::{SavedBrowser, VERSION};

    fn workspace() -> SavedWorkspace {
        SavedWorkspace {
            version: VERSION,
            saved_at: jiff::Timestamp::UNIX_EPOCH,
            browser: SavedBrowser {
                context: "prod".into(),
                namespaces: None,
                filter: String::new(),
                sort: None,
                others: vec![],
                own_namespaces: false,
            },
            layout: None,
            zoomed: None,
            focused: None,
            in_workspace: false,
            panes: vec![],
            terminals: vec![],
            forwards: vec![],
        }
    }

    #[test]
    fn a_kept_workspace_is_private_and_reads_back() {
        let state = tempfile::tempdir().unwrap();
        let store = Store::for_kubeconfig(state.path(), Some(Path::new("/nowhere/kubeconfig")));
        assert_eq!(store.read(LAST), Ok(None));
        let path = store.write(LAST, &workspace()).unwrap();
        assert_eq!(store.read(LAST), Ok(Some(workspace())));
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        store.write("incident-42", &workspace()).unwrap();
        assert_eq!(store.names(), ["incident-42"]);
        let other = Store::for_kubeconfig(state.path(), Some(Path::new("/elsewhere/kubeconfig")));
        assert_eq!(
            other.read(LAST),
            Ok(None),
            "another kubeconfig, another store"
        );
    }

    #[test]
    fn a_corrupt_file_is_one_sentence_and_moved_aside() {
        let state = tempfile::tempdir().unwrap();
        let store = Store::for_kubeconfig(state.path(), Some(Path::new("/k")));
        local::create_private_dir(&store.dir).unwrap();
        std::fs::write(store.path(LAST), b"{\"version\": 1, \"pan").unwrap();
        let sentence = store.read(LAST).unwrap_err();
        assert!(
            sentence.contains("is not JSON") && sentence.contains("podbay starts empty"),
            "{sentence}"
        );
        assert_eq!(store.read(LAST), Ok(None), "moved aside, not read again");
        assert!(store.path(LAST).with_extension("json.unreadable").exists());
        let unknown = store.load("nope").unwrap_err();
        assert!(
            unknown.contains("No workspace is kept as nope"),
            "{unknown}"
        );
    }

    #[test]
    fn a_kept_workspace_that_is_a_fifo_or_endless_is_one_sentence_at_once() {
        let state = tempfile::tempdir().unwrap();
        let store = Store::for_kubeconfig(state.path(), Some(Path::new("/k")));
        local::create_private_dir(&store.dir).unwrap();
        nix::unistd::mkfifo(
            &store.path(LAST),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let sentence = store.read(LAST).unwrap_err();
        assert!(
            sentence.contains(
                "cannot be read (it is a FIFO, not a regular file); podbay starts without it"
            ),
            "{sentence}"
        );
        std::fs::remove_file(store.path(LAST)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", store.path(LAST)).unwrap();
        let sentence = store.read(LAST).unwrap_err();
        assert!(sentence.contains("character device"), "{sentence}");
        std::fs::remove_file(store.path(LAST)).unwrap();
        std::fs::write(store.path(LAST), vec![b' '; MOST_BYTES as usize + 1]).unwrap();
        let sentence = store.read(LAST).unwrap_err();
        assert!(sentence.contains("more than the"), "{sentence}");
    }
}

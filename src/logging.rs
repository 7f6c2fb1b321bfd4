//! Logs go to a file in the state directory (created 0600), never to the
//! terminal the TUI draws on. `PODBAY_LOG` sets the filter (default `info`).

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

/// Starts file logging; returns false (and logs nowhere) when the file
/// cannot be opened, which must not stop podbay.
pub fn init(path: &Path) -> bool {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let Ok(file) = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
    else {
        return false;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("PODBAY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .is_ok()
}

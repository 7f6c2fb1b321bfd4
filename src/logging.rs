//! Logs go to a file in the state directory (created 0600), never to the
//! terminal the TUI draws on. `PODBAY_LOG` sets the filter (default `info`).

use std::path::Path;
use std::sync::Mutex;

use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Starts file logging; returns false (and logs nowhere) when the file
/// cannot be opened, which must not stop podbay.
pub fn init(path: &Path) -> bool {
    if let Some(dir) = path.parent() {
        let _ = crate::local::create_private_dir(dir);
    }
    let Ok(file) = crate::local::append_private(path) else {
        return false;
    };
    // `info`, `debug`, `podbay::echo=debug,kube=warn`: levels by target
    // (a filter without EnvFilter's regular expressions, which cost the
    // binary its own regex engine).
    let filter = std::env::var("PODBAY_LOG")
        .ok()
        .and_then(|text| text.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(Level::INFO));
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(Mutex::new(file))
                .with_ansi(false),
        )
        .with(filter)
        .try_init()
        .is_ok()
}

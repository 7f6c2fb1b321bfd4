//! The progress line on stderr (when it is a terminal): bytes, total,
//! rate, time left.

use std::io::IsTerminal as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use crate::model::transfer::{line, rate, size};

/// Bytes moved so far, and since when.
#[derive(Clone)]
pub struct Meter {
    pub done: Arc<AtomicU64>,
    pub started: Instant,
    /// The measured size, once known.
    pub total: Arc<AtomicU64>,
    /// Draw the progress line on stderr (the CLI; never in the TUI).
    pub on_stderr: bool,
}

impl Meter {
    /// For the command line: drawn on stderr when that is a terminal.
    pub fn on_stderr() -> Self {
        Meter {
            done: Arc::new(AtomicU64::new(0)),
            started: Instant::now(),
            total: Arc::new(AtomicU64::new(0)),
            on_stderr: true,
        }
    }

    /// For the TUI: read by its own progress bar, never drawn on stderr.
    pub fn quiet() -> Self {
        Meter {
            on_stderr: false,
            ..Meter::on_stderr()
        }
    }

    /// The measured size, if known.
    pub fn total(&self) -> Option<u64> {
        Some(self.total.load(Ordering::Relaxed)).filter(|t| *t > 0)
    }

    pub fn bytes(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// `1.2 s (41.9 MB/s)`: time and the rate of the stream.
    pub fn summary(&self) -> String {
        let seconds = self.started.elapsed().as_secs_f64();
        format!("{seconds:.1} s ({})", rate(self.bytes(), seconds))
    }
}

/// Draws the line every quarter second until dropped; nothing at all when
/// stderr is not a terminal.
pub struct Shown {
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Shown {
    pub fn start(meter: &Meter, total: Option<u64>) -> Shown {
        if let Some(total) = total {
            meter.total.store(total, Ordering::Relaxed);
        }
        if !meter.on_stderr || !std::io::stderr().is_terminal() {
            return Shown { task: None };
        }
        let meter = meter.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                crate::print::status(&line(meter.bytes(), total, meter.started.elapsed()).into());
            }
        });
        Shown { task: Some(task) }
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            crate::print::clear_status();
        }
    }
}

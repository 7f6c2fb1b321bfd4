//! The progress line on stderr (when it is a terminal): bytes, total,
//! rate, time left.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bytes moved so far, and since when.
#[derive(Clone)]
pub struct Meter {
    pub done: Arc<AtomicU64>,
    pub started: Instant,
}

impl Meter {
    pub fn new() -> Self {
        Meter {
            done: Arc::new(AtomicU64::new(0)),
            started: Instant::now(),
        }
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
        if !std::io::stderr().is_terminal() {
            return Shown { task: None };
        }
        let meter = meter.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                eprint!(
                    "\r\x1b[K{}",
                    line(meter.bytes(), total, meter.started.elapsed())
                );
                let _ = std::io::stderr().flush();
            }
        });
        Shown { task: Some(task) }
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            eprint!("\r\x1b[K");
        }
    }
}

/// One progress line: `12.0 MiB / 48.0 MiB  40.1 MB/s  1 s left`.
pub fn line(done: u64, total: Option<u64>, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    let mut text = size(done);
    if let Some(total) = total.filter(|t| *t >= done) {
        text.push_str(&format!(" / {}", size(total)));
        let per_second = done as f64 / seconds.max(0.001);
        if done > 0 && per_second > 0.0 {
            let left = (total - done) as f64 / per_second;
            text.push_str(&format!(
                "  {}  {:.0} s left",
                rate(done, seconds),
                left.ceil()
            ));
            return text;
        }
    }
    text.push_str(&format!("  {}", rate(done, seconds)));
    text
}

pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

fn rate(bytes: u64, seconds: f64) -> String {
    format!("{:.1} MB/s", bytes as f64 / seconds.max(0.001) / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_bytes_total_rate_and_time_left() {
        let half = line(24 << 20, Some(48 << 20), Duration::from_secs(1));
        assert_eq!(half, "24.0 MiB / 48.0 MiB  25.2 MB/s  1 s left");
        assert_eq!(line(512, None, Duration::from_secs(1)), "512 B  0.0 MB/s");
        // A total that was an estimate and was passed is dropped.
        assert!(!line(50 << 20, Some(48 << 20), Duration::from_secs(1)).contains(" / "));
    }
}

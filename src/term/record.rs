//! Session recording in asciicast v2, the format `asciinema play` reads:
//! a JSON header line, then one `[seconds, code, data]` JSON line per event.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::{Duration, Instant};

use serde_json::json;

use super::Size;

/// Writes one pane's output to an asciicast v2 file.
pub struct Recorder {
    out: BufWriter<File>,
    started: Instant,
    utf8: Utf8Stream,
}

impl Recorder {
    /// Records into `file` (which the caller made new and owner-only:
    /// recordings can hold secrets typed into a shell), starting with the
    /// header.
    pub fn new(file: File, size: Size, term: &str) -> io::Result<Self> {
        let mut out = BufWriter::new(file);
        let header = json!({
            "version": 2,
            "width": size.cols,
            "height": size.rows,
            "timestamp": jiff::Timestamp::now().as_second(),
            "env": { "TERM": term },
        });
        writeln!(out, "{header}")?;
        Ok(Recorder {
            out,
            started: Instant::now(),
            utf8: Utf8Stream::default(),
        })
    }

    /// Records remote output. A UTF-8 sequence split across calls is held
    /// back until complete; invalid bytes become U+FFFD.
    pub fn output(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.output_at(self.started.elapsed(), bytes)
    }

    /// Records a terminal resize.
    pub fn resize(&mut self, size: Size) -> io::Result<()> {
        self.resize_at(self.started.elapsed(), size)
    }

    /// Writes out buffered events, including any incomplete UTF-8 tail.
    pub fn finish(mut self) -> io::Result<()> {
        let tail = self.utf8.finish();
        if !tail.is_empty() {
            self.event(self.started.elapsed(), "o", &tail)?;
        }
        self.out.flush()
    }

    fn output_at(&mut self, elapsed: Duration, bytes: &[u8]) -> io::Result<()> {
        let text = self.utf8.decode(bytes);
        if text.is_empty() {
            return Ok(());
        }
        self.event(elapsed, "o", &text)
    }

    fn resize_at(&mut self, elapsed: Duration, size: Size) -> io::Result<()> {
        self.event(elapsed, "r", &format!("{}x{}", size.cols, size.rows))
    }

    fn event(&mut self, elapsed: Duration, code: &str, data: &str) -> io::Result<()> {
        let line = json!([elapsed.as_secs_f64(), code, data]);
        writeln!(self.out, "{line}")
    }
}

/// Decodes a byte stream that may split characters across chunks.
#[derive(Debug, Default)]
struct Utf8Stream {
    /// The start of a character whose remaining bytes have not arrived.
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn decode(&mut self, bytes: &[u8]) -> String {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(bytes);
        let mut text = String::with_capacity(input.len());
        let mut rest = input.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    text.push_str(valid);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    text.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(bad) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        None => {
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        text
    }

    fn finish(&mut self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::Value;

    use super::*;

    /// A fresh path in a scratch directory, which is held only for its
    /// drop: that removes it.
    struct TempPath(PathBuf, #[allow(dead_code)] tempfile::TempDir);

    impl TempPath {
        fn new(name: &str) -> Self {
            let dir = tempfile::tempdir().expect("scratch dir");
            TempPath(dir.path().join(format!("{name}.cast")), dir)
        }
    }

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .expect("recording is readable")
            .lines()
            .map(|line| serde_json::from_str(line).expect("every line is JSON"))
            .collect()
    }

    #[test]
    fn every_line_is_asciicast_json() {
        let path = TempPath::new("basic");
        let size = Size { cols: 80, rows: 24 };
        let mut recorder =
            Recorder::new(File::create(&path.0).unwrap(), size, "xterm-256color").expect("create");
        recorder
            .output_at(Duration::from_millis(1500), b"hello\r\n")
            .expect("write");
        recorder
            .resize_at(
                Duration::from_secs(2),
                Size {
                    cols: 100,
                    rows: 30,
                },
            )
            .expect("write");
        recorder.finish().expect("finish");

        let lines = lines(&path.0);
        assert_eq!(lines.len(), 3);
        let header = &lines[0];
        assert_eq!(header["version"], 2);
        assert_eq!(header["width"], 80);
        assert_eq!(header["height"], 24);
        assert_eq!(header["env"]["TERM"], "xterm-256color");
        assert!(
            header["timestamp"]
                .as_i64()
                .is_some_and(|t| t > 1_600_000_000)
        );
        assert_eq!(lines[1], json!([1.5, "o", "hello\r\n"]));
        assert_eq!(lines[2], json!([2.0, "r", "100x30"]));
    }

    #[test]
    fn characters_split_across_chunks_are_joined() {
        let path = TempPath::new("split");
        let mut recorder = Recorder::new(
            File::create(&path.0).unwrap(),
            Size { cols: 10, rows: 2 },
            "xterm",
        )
        .expect("create");
        let crab = "🦀".as_bytes();
        recorder
            .output_at(Duration::ZERO, &[b'a', crab[0]])
            .expect("write");
        recorder
            .output_at(Duration::ZERO, &crab[1..3])
            .expect("write");
        recorder
            .output_at(Duration::ZERO, &[crab[3], b'b'])
            .expect("write");
        recorder.finish().expect("finish");
        let data: Vec<Value> = lines(&path.0)[1..].iter().map(|l| l[2].clone()).collect();
        assert_eq!(data, [json!("a"), json!("🦀b")]);
    }

    #[test]
    fn utf8_stream_replaces_invalid_bytes_and_flushes_the_tail() {
        let mut stream = Utf8Stream::default();
        assert_eq!(stream.decode(b"x\xffy\xe2\x82"), "x\u{fffd}y");
        assert_eq!(stream.decode(b"\xac!"), "€!");
        assert_eq!(stream.decode(b"\xe2"), "");
        assert_eq!(
            stream.decode(b"z"),
            "\u{fffd}z",
            "a broken sequence is not held forever"
        );
        assert_eq!(stream.decode(b"\xf0\x9f"), "");
        assert_eq!(stream.finish(), "\u{fffd}");
    }
}

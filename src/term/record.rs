//! Session recording in asciicast v2, the format `asciinema play` reads:
//! a JSON header line, then one `[seconds, code, data]` JSON line per event.

use std::io::{self, BufWriter, Write};
use std::time::Duration;

use serde_json::json;

use super::Size;

/// Writes one pane's output as asciicast v2 into `W` (a file the edge
/// made new and owner-only: recordings can hold secrets typed into a
/// shell). The edge gives the times: when the recording started (Unix
/// seconds) and, for each event, how long after.
pub struct Recorder<W: Write> {
    out: BufWriter<W>,
    utf8: Utf8Stream,
}

impl<W: Write> Recorder<W> {
    /// Starts the recording with its header.
    pub fn new(out: W, size: Size, term: &str, started_at: i64) -> io::Result<Self> {
        let mut out = BufWriter::new(out);
        let header = json!({
            "version": 2,
            "width": size.cols,
            "height": size.rows,
            "timestamp": started_at,
            "env": { "TERM": term },
        });
        writeln!(out, "{header}")?;
        Ok(Recorder {
            out,
            utf8: Utf8Stream::default(),
        })
    }

    /// Records remote output, `elapsed` into the recording. A UTF-8
    /// sequence split across calls is held back until complete; invalid
    /// bytes become U+FFFD.
    pub fn output(&mut self, elapsed: Duration, bytes: &[u8]) -> io::Result<()> {
        let text = self.utf8.decode(bytes);
        if text.is_empty() {
            return Ok(());
        }
        self.event(elapsed, "o", &text)
    }

    /// Records a terminal resize.
    pub fn resize(&mut self, elapsed: Duration, size: Size) -> io::Result<()> {
        self.event(elapsed, "r", &format!("{}x{}", size.cols, size.rows))
    }

    /// Writes out buffered events, including any incomplete UTF-8 tail.
    pub fn finish(mut self, elapsed: Duration) -> io::Result<()> {
        let tail = self.utf8.finish();
        if !tail.is_empty() {
            self.event(elapsed, "o", &tail)?;
        }
        self.out.flush()
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
    use serde_json::Value;

    use super::*;

    /// The recording's lines, each parsed.
    fn lines(recorder: Recorder<Vec<u8>>) -> Vec<Value> {
        let out = recorder.out.into_inner().expect("flushed");
        String::from_utf8(out)
            .expect("UTF-8")
            .lines()
            .map(|line| serde_json::from_str(line).expect("every line is JSON"))
            .collect()
    }

    #[test]
    fn every_line_is_asciicast_json() {
        let size = Size { cols: 80, rows: 24 };
        let mut recorder =
            Recorder::new(Vec::new(), size, "xterm-256color", 1_700_000_000).expect("create");
        recorder
            .output(Duration::from_millis(1500), b"hello\r\n")
            .expect("write");
        recorder
            .resize(
                Duration::from_secs(2),
                Size {
                    cols: 100,
                    rows: 30,
                },
            )
            .expect("write");
        let lines = lines(recorder);
        assert_eq!(lines.len(), 3);
        let header = &lines[0];
        assert_eq!(header["version"], 2);
        assert_eq!(header["width"], 80);
        assert_eq!(header["height"], 24);
        assert_eq!(header["env"]["TERM"], "xterm-256color");
        assert_eq!(header["timestamp"], 1_700_000_000);
        assert_eq!(lines[1], json!([1.5, "o", "hello\r\n"]));
        assert_eq!(lines[2], json!([2.0, "r", "100x30"]));
    }

    #[test]
    fn characters_split_across_chunks_are_joined() {
        let mut recorder =
            Recorder::new(Vec::new(), Size { cols: 10, rows: 2 }, "xterm", 0).expect("create");
        let crab = "🦀".as_bytes();
        recorder
            .output(Duration::ZERO, &[b'a', crab[0]])
            .expect("write");
        recorder.output(Duration::ZERO, &crab[1..3]).expect("write");
        recorder
            .output(Duration::ZERO, &[crab[3], b'b'])
            .expect("write");
        let data: Vec<Value> = lines(recorder)[1..].iter().map(|l| l[2].clone()).collect();
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

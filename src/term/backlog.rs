//! A terminal session's output read ahead of its pane: handed on in
//! chunks, and in a flood rid of the lines no one will see (see
//! [`unseen`](super::unseen)).

use bytes::{Bytes, BytesMut};

use super::unseen::{self, Limits, Stream};

/// What a skip left out of the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    pub bytes: usize,
    /// Line feeds.
    pub lines: usize,
}

/// Output read but not yet fed to the terminal.
pub struct Backlog {
    bytes: BytesMut,
    /// Line feeds in `bytes`.
    lines: usize,
    /// The stream as fed so far.
    stream: Stream,
    /// Bytes to hand on before the next look for a skip.
    hold_off: usize,
    /// Lines skipped so far.
    skipped: u64,
}

impl Backlog {
    /// For a terminal whose emulator has been fed only what passes here
    /// (`fresh`), or possibly other output before.
    pub fn new(fresh: bool) -> Backlog {
        Backlog {
            bytes: BytesMut::new(),
            lines: 0,
            stream: if fresh {
                Stream::fresh()
            } else {
                Stream::unknown()
            },
            hold_off: 0,
            skipped: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Line feeds read and not yet handed on.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Lines skipped so far.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Adds output read; returns its line feeds.
    pub fn push(&mut self, output: &[u8]) -> usize {
        let lines = memchr::memchr_iter(b'\n', output).count();
        self.lines += lines;
        self.bytes.extend_from_slice(output);
        lines
    }

    /// Output fed around this backlog (a log read before an attach).
    pub fn passed(&mut self, output: &[u8]) {
        self.stream.observe(output);
    }

    /// Leaves out the lines that would scroll out of a terminal keeping
    /// `limits` before the backlog's end, if there are enough of them to be
    /// worth it; says what was left out.
    pub fn skip_unseen(&mut self, limits: Limits) -> Option<Skipped> {
        if self.hold_off > 0 || self.lines < limits.lines_to_skip() {
            return None;
        }
        // What was handed on may end inside a line (a read's end): a
        // UTF-8 character or an escape begun. The skip then starts after
        // that line, where the parser rests.
        let mut stream = self.stream.clone();
        let mut start = 0;
        if !stream.at_rest() {
            let Some(end) = memchr::memchr(b'\n', &self.bytes) else {
                self.hold_off = self.bytes.len().max(1);
                return None;
            };
            start = end + 1;
            stream.observe(&self.bytes[..start]);
        }
        match unseen::skip(&stream, &self.bytes[start..], limits) {
            Ok(skip) => {
                let cut = start..start + skip.cut;
                let lines = memchr::memchr_iter(b'\n', &self.bytes[cut.clone()]).count();
                let added = memchr::memchr_iter(b'\n', &skip.replacement).count();
                self.skipped += (lines - added) as u64;
                self.lines = self.lines - lines + added;
                let kept = self.bytes.len() - skip.cut + skip.replacement.len();
                let mut bytes = BytesMut::with_capacity(kept);
                bytes.extend_from_slice(&self.bytes[..start]);
                bytes.extend_from_slice(&skip.replacement);
                bytes.extend_from_slice(&self.bytes[cut.end..]);
                let left_out = self.bytes.len() - bytes.len();
                self.bytes = bytes;
                Some(Skipped {
                    bytes: left_out,
                    lines: lines - added,
                })
            }
            Err(unseen::NotYet(bytes)) => {
                self.hold_off = start + bytes;
                None
            }
        }
    }

    /// The next chunk to feed, of at most `most` bytes; ending at a line's
    /// end where one is within reach, so the next chunk starts where the
    /// parser rests.
    pub fn next_chunk(&mut self, most: usize) -> Bytes {
        let end = if self.bytes.len() <= most {
            self.bytes.len()
        } else {
            memchr::memrchr(b'\n', &self.bytes[..most]).map_or(most, |at| at + 1)
        };
        let chunk = self.bytes.split_to(end).freeze();
        self.lines -= memchr::memchr_iter(b'\n', &chunk).count();
        self.hold_off = self.hold_off.saturating_sub(chunk.len());
        self.stream.observe(&chunk);
        chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything the emulator shows or keeps: the screen and every line of
    /// scrollback (formatted, so attributes count), the cursor, the current
    /// attributes and modes; then, after `CSI 3 b` (repeat the last
    /// character printed), the screen again.
    fn state(parser: &mut vt100::Parser) -> Vec<String> {
        let formatted = |parser: &vt100::Parser| {
            parser
                .screen()
                .contents_formatted()
                .escape_debug()
                .to_string()
        };
        let mut out = Vec::new();
        let kept = parser.screen().scrollback_len();
        for offset in (0..=kept).rev() {
            parser.screen_mut().set_scrollback(offset);
            out.push(formatted(parser));
        }
        let screen = parser.screen();
        out.push(format!(
            "cursor {:?} attrs {:?} modes {:?} alternate {}",
            screen.cursor_position(),
            screen.attributes_formatted(),
            screen.input_mode_formatted(),
            screen.alternate_screen()
        ));
        parser.process(b"\x1b[3b");
        out.push(formatted(parser));
        out
    }

    /// Lines as a program writes them: words, wide and combining
    /// characters, colours and resets, tabs, backspaces, a bare CR, long
    /// lines that wrap, lines without CR; and now and then what is not
    /// plain: cursor moves, clears, scroll regions, the alternate screen,
    /// a title, a repeat, invalid UTF-8.
    fn stream(rng: &mut fastrand::Rng, lines: usize, odd: u32) -> Vec<u8> {
        let pieces: [&[u8]; 14] = [
            b"word ",
            b"x",
            "é漢".as_bytes(),
            "e\u{301}".as_bytes(),
            "👩\u{200d}💻".as_bytes(),
            b"\x1b[31m",
            b"\x1b[0m",
            b"\x1b[1;38;5;208m",
            b"\x1b[m",
            b"\x1b[0;4m",
            b"\t",
            b"\x08",
            b"\r",
            b"0123456789abcdefghijklmnopqrstuvwxyz",
        ];
        let odds: [&[u8]; 12] = [
            b"\x1b[2;3H",
            b"\x1b[2J",
            b"\x1b[2;4r",
            b"\x1b[r",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b]0;title\x07",
            b"\x1b[2b",
            b"\xff\xfe",
            b"\xe6\xbc",
            b"\x1b[A",
            b"\x1bc",
        ];
        let mut out = Vec::new();
        for _ in 0..lines {
            for _ in 0..rng.usize(0..6) {
                out.extend_from_slice(pieces[rng.usize(..pieces.len())]);
            }
            if odd > 0 && rng.u32(..odd) == 0 {
                out.extend_from_slice(odds[rng.usize(..odds.len())]);
            }
            out.extend_from_slice(if rng.u32(..20) == 0 { b"\n" } else { b"\r\n" });
        }
        out
    }

    /// Feeds `bytes` to a parser directly and through a backlog (read in
    /// pieces of random sizes, or all at once with `read_first`, handed on
    /// in chunks of random sizes); both must end the same. Returns the lines
    /// the backlog skipped.
    fn compare(
        seed: u64,
        bytes: &[u8],
        rows: u16,
        cols: u16,
        scrollback: usize,
        read_first: bool,
    ) -> u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let new = || {
            vt100::Parser::new(
                rows.try_into().unwrap(),
                cols.try_into().unwrap(),
                scrollback,
            )
        };
        let mut whole = new();
        let mut through = new();
        let limits = Limits { rows, scrollback };
        let mut backlog = Backlog::new(true);
        let mut read = 0;
        let mut said = 0;
        while read < bytes.len() || !backlog.is_empty() {
            if read < bytes.len() && (read_first || backlog.is_empty() || rng.u32(..4) != 0) {
                let n = rng.usize(1..=8192).min(bytes.len() - read);
                whole.process(&bytes[read..read + n]);
                backlog.push(&bytes[read..read + n]);
                read += n;
            } else {
                if rng.bool() {
                    said += backlog.skip_unseen(limits).map_or(0, |s| s.lines as u64);
                }
                through.process(&backlog.next_chunk(rng.usize(1..=4096)));
            }
        }
        assert_eq!(state(&mut whole), state(&mut through), "seed {seed}");
        assert_eq!(said, backlog.skipped(), "each skip is said");
        backlog.skipped()
    }

    #[test]
    fn a_flood_ends_as_if_every_line_had_been_fed() {
        let mut skipped = 0;
        for seed in 0..24 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let (rows, cols) = (rng.u16(1..8), rng.u16(1..40));
            let scrollback = rng.usize(0..40);
            // Mostly plain; one in `odd` lines has something else.
            let odd = [0, 0, 50, 500, 5000][rng.usize(..5)];
            let bytes = stream(&mut rng, 16_000, odd);
            skipped += compare(seed, &bytes, rows, cols, scrollback, seed % 3 == 0);
        }
        assert!(skipped > 50_000, "floods were skipped: {skipped} lines");
    }

    #[test]
    fn the_attributes_and_last_character_set_in_what_was_skipped_carry_on() {
        let mut bytes = b"\x1b[1;32m".to_vec();
        for i in 0..12_000 {
            bytes.extend_from_slice(format!("{i} \x1b[4munderlined\x1b[24m\r\n").as_bytes());
        }
        bytes.extend_from_slice(b"the last: Q\r\n");
        // No SGR and nothing printed after: all the attributes come from
        // before, and `CSI b` repeats the Q.
        bytes.extend(std::iter::repeat_n(b"\r\n".iter().copied(), 12_000).flatten());
        assert!(compare(1, &bytes, 5, 30, 20, true) > 0);
    }

    #[test]
    fn a_flood_after_a_chunk_that_ended_inside_a_character_or_an_escape_is_skipped() {
        for begun in [&b"abc\xe6\xbc"[..], b"abc\x1b[1;3", b"\x1b]0;tit"] {
            let limits = Limits {
                rows: 5,
                scrollback: 20,
            };
            let mut whole = vt100::Parser::new(5.try_into().unwrap(), 30.try_into().unwrap(), 20);
            let mut through = vt100::Parser::new(5.try_into().unwrap(), 30.try_into().unwrap(), 20);
            let mut backlog = Backlog::new(true);
            backlog.push(begun);
            through.process(&backlog.next_chunk(4096));
            let mut flood = b"\xa2 the rest\x07 of it\r\n".to_vec();
            for i in 0..12_000 {
                flood.extend_from_slice(format!("line {i}\r\n").as_bytes());
            }
            backlog.push(&flood);
            let skipped = backlog
                .skip_unseen(limits)
                .expect("a skip after the first line");
            assert!(skipped.lines > 5_000, "{skipped:?}");
            while !backlog.is_empty() {
                through.process(&backlog.next_chunk(4096));
            }
            whole.process(begun);
            whole.process(&flood);
            assert_eq!(state(&mut whole), state(&mut through));
        }
    }

    #[test]
    fn nothing_is_skipped_under_a_scroll_region_or_after_other_output() {
        // A scroll region set, a flood after: it is all fed.
        let mut rng = fastrand::Rng::with_seed(7);
        let mut bytes = b"\x1b[3;5r\x1b[1;1H".to_vec();
        bytes.extend(stream(&mut rng, 20_000, 0));
        assert_eq!(compare(7, &bytes, 6, 20, 10, false), 0);
        // Reset, it skips again.
        bytes.extend_from_slice(b"\x1b[r");
        bytes.extend(stream(&mut rng, 20_000, 0));
        assert!(compare(8, &bytes, 6, 20, 10, false) > 0);
        // A backlog after output this tracking did not see: no skip until
        // a reset.
        let mut backlog = Backlog::new(false);
        backlog.push(&stream(&mut rng, 20_000, 0));
        let limits = Limits {
            rows: 6,
            scrollback: 10,
        };
        while !backlog.is_empty() {
            assert_eq!(backlog.skip_unseen(limits), None);
            backlog.next_chunk(4096);
        }
        assert_eq!(backlog.skipped(), 0);
    }

    #[test]
    fn without_a_skip_every_byte_goes_in_order_in_chunks_ending_lines() {
        let mut rng = fastrand::Rng::with_seed(3);
        let bytes = stream(&mut rng, 20_000, 0);
        let mut backlog = Backlog::new(true);
        backlog.push(&bytes);
        let mut fed = Vec::new();
        while !backlog.is_empty() {
            let chunk = backlog.next_chunk(4096);
            assert!(chunk.len() <= 4096);
            assert!(
                chunk.ends_with(b"\n") || backlog.is_empty(),
                "a chunk ends a line when one ends within reach"
            );
            fed.extend_from_slice(&chunk);
        }
        assert_eq!(fed, bytes);
        assert_eq!(backlog.lines(), 0);
    }
}

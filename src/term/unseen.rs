//! Output no one can ever see. In a flood (`cat` of a big file), the lines
//! that will have scrolled out of a pane's scrollback by the time the flood
//! is drawn need not go through the emulator: [`skip`] finds them in what a
//! session has read ahead, and says what to feed instead so that the
//! emulator ends in the state it would have reached — the same screen, the
//! same scrollback, cursor, attributes and modes.
//!
//! Why that is exact. Say `S` is the part skipped and `K` what follows. `S`
//! holds only text, C0 controls (other than ESC) and SGR sequences, and at
//! least `R` line feeds, `R` at least the screen's rows; it starts where the
//! parser rests (ground state, no UTF-8 sequence begun) and ends with
//! "\r\n". So, fed, it leaves the cursor at the bottom row, column 0, with
//! the attributes its SGRs set, and only writes rows. `K` begins with at
//! least `scrollback + R` more line feeds before anything but text, C0 and
//! SGRs, each of them at the bottom row: every row that existed when `K`
//! began has left the scrollback by its last. What `S` wrote is then gone,
//! and the replacement only has to leave the same cursor, attributes and
//! last printed character (for `CSI b`): its SGRs since the last reset, a
//! move to the bottom row, and the last line of `S` that prints an ASCII
//! character, verbatim. Scrolling is plain only when no scroll region is
//! set, which [`Stream`] follows in every byte the terminal is fed.

use std::ops::Range;

/// The fewest rows the limits assume a screen may have: a pane resized
/// between a skip and its feed must not be taller.
pub const ROWS_AT_LEAST: u16 = 1000;

/// The fewest lines a skip saves (so that each scan of the backlog pays).
pub const SKIP_AT_LEAST: usize = 4096;

/// What the emulator the stream is fed to keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The screen's rows.
    pub rows: u16,
    /// Lines of scrollback.
    pub scrollback: usize,
}

impl Limits {
    /// Rows assumed for the screen (never fewer than [`ROWS_AT_LEAST`]).
    fn rows(self) -> usize {
        usize::from(self.rows.max(ROWS_AT_LEAST))
    }

    /// Line feeds a backlog must hold before a skip is worth looking for.
    pub fn lines_to_skip(self) -> usize {
        self.scrollback + 2 * self.rows() + SKIP_AT_LEAST
    }
}

/// The parser's states, as vte 0.15 (vt100's parser) has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscapeIntermediate,
    CsiEntry,
    CsiParam,
    CsiIntermediate,
    CsiIgnore,
    DcsEntry,
    DcsParam,
    DcsIntermediate,
    DcsIgnore,
    DcsPassthrough,
    OscString,
    SosPmApcString,
}

/// The CSI sequence being read: as much of it as this tracking needs.
#[derive(Debug, Clone, Default)]
struct Csi {
    /// The first intermediate or private marker (`?`), if any.
    marker: Option<u8>,
    /// Parameters so far (saturating, as vte's); `None` had subparameters.
    params: [Option<u16>; MAX_PARAMS],
    len: usize,
    current: u16,
    sub: bool,
    /// More parameters than kept.
    overflow: bool,
}

/// Parameters kept per CSI sequence (vte keeps 32).
const MAX_PARAMS: usize = 16;

/// A terminal's byte stream as the emulator reads it: its parser's state,
/// whether it shows the alternate screen, and whether either screen may
/// have a scroll region.
#[derive(Debug, Clone)]
pub struct Stream {
    state: State,
    csi: Csi,
    alternate: bool,
    /// Per screen (main, alternate): a scroll region may be set.
    region: [bool; 2],
    /// The last byte was ASCII: no UTF-8 sequence is begun.
    ascii: bool,
}

impl Stream {
    /// A new emulator's.
    pub fn fresh() -> Stream {
        Stream {
            state: State::Ground,
            csi: Csi::default(),
            alternate: false,
            region: [false; 2],
            ascii: true,
        }
    }

    /// An emulator fed before, by bytes this tracking did not see: until a
    /// reset (`ESC c`), a scroll region may be set.
    pub fn unknown() -> Stream {
        Stream {
            region: [true; 2],
            ..Stream::fresh()
        }
    }

    /// Where a skip may start: the parser in its ground state with no
    /// UTF-8 sequence begun, and no scroll region on the screen shown.
    pub fn at_rest(&self) -> bool {
        self.state == State::Ground && self.ascii && !self.region[usize::from(self.alternate)]
    }

    /// Follows `bytes`, fed to the emulator.
    pub fn observe(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Ground {
                // Text and controls change nothing followed here.
                match memchr::memchr(0x1b, &bytes[i..]) {
                    Some(at) => {
                        i += at + 1;
                        self.state = State::Escape;
                        self.ascii = true;
                    }
                    None => {
                        self.ascii = bytes[bytes.len() - 1] < 0x80;
                        return;
                    }
                }
                continue;
            }
            let byte = bytes[i];
            self.ascii = byte < 0x80;
            self.step(byte);
            i += 1;
        }
    }

    /// One byte outside the ground state: vte's transition table.
    fn step(&mut self, byte: u8) {
        use State::*;
        // Anywhere: CAN and SUB end any sequence, ESC starts one.
        match (self.state, byte) {
            (Ground, _) => unreachable!("ground is followed by observe"),
            (_, 0x18 | 0x1a) => {
                self.state = Ground;
                return;
            }
            (Escape, 0x1b) => return,
            (_, 0x1b) => {
                self.state = Escape;
                return;
            }
            _ => {}
        }
        let c0 = byte < 0x20;
        self.state = match self.state {
            Ground => unreachable!(),
            Escape => match byte {
                0x20..=0x2f => EscapeIntermediate,
                b'P' => DcsEntry,
                b'[' => {
                    self.csi = Csi::default();
                    CsiEntry
                }
                b']' => OscString,
                b'X' | b'^' | b'_' => SosPmApcString,
                b'c' => {
                    // RIS: a new screen.
                    self.alternate = false;
                    self.region = [false; 2];
                    Ground
                }
                0x30..=0x7e => Ground,
                _ => Escape,
            },
            EscapeIntermediate => match byte {
                0x30..=0x7e => Ground,
                _ => EscapeIntermediate,
            },
            CsiEntry | CsiParam | CsiIntermediate if c0 => self.state,
            CsiEntry => match byte {
                0x20..=0x2f => {
                    self.csi.marker = Some(byte);
                    CsiIntermediate
                }
                0x3c..=0x3f => {
                    self.csi.marker = Some(byte);
                    CsiParam
                }
                0x30..=0x3b => {
                    self.param(byte);
                    CsiParam
                }
                0x40..=0x7e => self.dispatch(byte),
                _ => CsiEntry,
            },
            CsiParam => match byte {
                0x20..=0x2f => {
                    self.csi.marker.get_or_insert(byte);
                    CsiIntermediate
                }
                0x30..=0x3b => {
                    self.param(byte);
                    CsiParam
                }
                0x3c..=0x3f => CsiIgnore,
                0x40..=0x7e => self.dispatch(byte),
                _ => CsiParam,
            },
            CsiIntermediate => match byte {
                0x20..=0x2f => CsiIntermediate,
                0x30..=0x3f => CsiIgnore,
                0x40..=0x7e => self.dispatch(byte),
                _ => CsiIntermediate,
            },
            CsiIgnore => match byte {
                0x40..=0x7e => Ground,
                _ => CsiIgnore,
            },
            DcsEntry | DcsParam | DcsIntermediate if c0 || byte == 0x7f => self.state,
            DcsEntry => match byte {
                0x20..=0x2f => DcsIntermediate,
                0x30..=0x3b => DcsParam,
                0x3c..=0x3f => DcsParam,
                0x40..=0x7e => DcsPassthrough,
                _ => DcsEntry,
            },
            DcsParam => match byte {
                0x20..=0x2f => DcsIntermediate,
                0x30..=0x3b => DcsParam,
                0x3c..=0x3f => DcsIgnore,
                0x40..=0x7e => DcsPassthrough,
                _ => DcsParam,
            },
            DcsIntermediate => match byte {
                0x20..=0x2f => DcsIntermediate,
                0x30..=0x3f => DcsIgnore,
                0x40..=0x7e => DcsPassthrough,
                _ => DcsIntermediate,
            },
            DcsPassthrough => match byte {
                0x9c => Ground,
                _ => DcsPassthrough,
            },
            OscString => match byte {
                0x07 => Ground,
                _ => OscString,
            },
            DcsIgnore | SosPmApcString => self.state,
        };
    }

    fn param(&mut self, byte: u8) {
        let csi = &mut self.csi;
        match byte {
            // The last one is kept for the parameter after the last `;`.
            b';' if csi.len + 1 >= MAX_PARAMS => csi.overflow = true,
            b';' => {
                csi.params[csi.len] = (!csi.sub).then_some(csi.current);
                csi.len += 1;
                csi.current = 0;
                csi.sub = false;
            }
            b':' => csi.sub = true,
            digit => {
                csi.current = csi
                    .current
                    .saturating_mul(10)
                    .saturating_add(u16::from(digit - b'0'));
            }
        }
    }

    /// A CSI sequence ends with `last`: what vt100 does with it, as far as
    /// screens and scroll regions go.
    fn dispatch(&mut self, last: u8) -> State {
        let mut csi = std::mem::take(&mut self.csi);
        csi.params[csi.len] = (!csi.sub).then_some(csi.current);
        let params = &csi.params[..=csi.len];
        match (csi.marker, last) {
            // DECSTBM: only a reset to the whole screen is known to be one.
            (None, b'r') => {
                let whole = !csi.overflow
                    && match *params {
                        [Some(top)] => top <= 1,
                        [Some(top), Some(0)] => top <= 1,
                        _ => false,
                    };
                self.region[usize::from(self.alternate)] = !whole;
            }
            // Which screen is shown is no longer known: either may have a
            // scroll region until a reset.
            (Some(b'?'), b'h' | b'l') if csi.overflow => self.region = [true; 2],
            (Some(b'?'), b'h' | b'l') => {
                for param in params {
                    if matches!(*param, Some(47 | 1049)) {
                        self.alternate = last == b'h';
                    }
                }
            }
            _ => {}
        }
        State::Ground
    }
}

/// What to feed instead of `backlog[..cut]`.
#[derive(Debug, PartialEq, Eq)]
pub struct Skip {
    pub cut: usize,
    pub replacement: Vec<u8>,
}

/// Why no skip: look again once this many bytes of the backlog are fed.
#[derive(Debug, PartialEq, Eq)]
pub struct NotYet(pub usize);

/// The lines at the start of `backlog` that will have left the scrollback
/// by its end, and what to feed instead; `stream` is where the emulator
/// stands before `backlog`.
pub fn skip(stream: &Stream, backlog: &[u8], limits: Limits) -> Result<Skip, NotYet> {
    if !stream.at_rest() {
        return Err(NotYet(1));
    }
    let (plain, sgrs) = plain_prefix(backlog);
    let feeds: Vec<usize> = memchr::memchr_iter(b'\n', &backlog[..plain]).collect();
    let rows = limits.rows();
    let keep = limits.scrollback + rows;
    // The last line feed of the part skipped: `keep` more follow it, and
    // it ends a "\r\n" (so the cursor is at column 0).
    let last = feeds
        .len()
        .checked_sub(keep + 1)
        .and_then(|newest| {
            (rows.max(SKIP_AT_LEAST) - 1..=newest)
                .rev()
                .find(|&n| feeds[n] > 0 && backlog[feeds[n] - 1] == b'\r')
        })
        .ok_or(NotYet(plain.max(1)))?;
    let cut = feeds[last] + 1;
    let skipped = &backlog[..cut];
    // The last line of the part skipped that prints an ASCII character.
    let printing = (0..=last)
        .rev()
        .map(|n| (if n == 0 { 0 } else { feeds[n - 1] + 1 }, feeds[n]))
        .find(|&(start, end)| prints_ascii(&skipped[start..end]))
        .map(|(start, _)| start)
        .ok_or(NotYet(cut))?;
    let mut replacement = Vec::new();
    let before_tail = &sgrs[..sgrs.partition_point(|sgr| sgr.end <= printing)];
    let since_reset = before_tail
        .iter()
        .rposition(|sgr| resets(&backlog[sgr.clone()]))
        .unwrap_or(0);
    for sgr in &before_tail[since_reset..] {
        replacement.extend_from_slice(&backlog[sgr.clone()]);
    }
    // The bottom row, column 0 (no scroll region: origin mode moves nothing).
    replacement.extend_from_slice(b"\x1b[65535;1H");
    replacement.extend_from_slice(&skipped[printing..]);
    Ok(Skip { cut, replacement })
}

/// How far `backlog` holds only text, C0 controls other than ESC and SGR
/// sequences; and where its SGR sequences are.
fn plain_prefix(backlog: &[u8]) -> (usize, Vec<Range<usize>>) {
    let mut sgrs = Vec::new();
    let mut at = 0;
    while let Some(esc) = memchr::memchr(0x1b, &backlog[at..]).map(|i| at + i) {
        let params = backlog[esc + 1..]
            .strip_prefix(b"[")
            .map(|rest| {
                rest.iter()
                    .take_while(|b| b.is_ascii_digit() || **b == b';' || **b == b':')
                    .count()
            })
            .filter(|&n| backlog.get(esc + 2 + n) == Some(&b'm'));
        match params {
            Some(n) => {
                sgrs.push(esc..esc + 3 + n);
                at = esc + 3 + n;
            }
            None => return (esc, sgrs),
        }
    }
    (backlog.len(), sgrs)
}

/// Whether `line` (plain: its only escapes are SGRs) prints an ASCII
/// character, which sets the last character printed.
fn prints_ascii(line: &[u8]) -> bool {
    let mut rest = line;
    while let Some((&b, tail)) = rest.split_first() {
        if b == 0x1b {
            // An SGR: skip to its final `m`.
            let end = tail
                .iter()
                .position(|&c| c == b'm')
                .map_or(tail.len(), |e| e + 1);
            rest = &tail[end..];
            continue;
        }
        if (0x20..0x7f).contains(&b) {
            return true;
        }
        rest = tail;
    }
    false
}

/// An SGR that sets every attribute back first (`CSI m`, `CSI 0 m`,
/// `CSI 0;… m`).
fn resets(sgr: &[u8]) -> bool {
    let params = &sgr[2..sgr.len() - 1];
    params.is_empty() || params == b"0" || params.starts_with(b"0;")
}

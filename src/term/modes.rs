//! The terminal modes a remote program turns on in the user's own terminal
//! (`podbay debug -t` passes its output through, as `kubectl attach -t`
//! does): the alternate screen, mouse reporting, bracketed paste, focus
//! events, a hidden cursor, application cursor keys. A program that is
//! killed, or a connection that is cut, leaves them on; [`Modes::restore`]
//! is what turns off those left on, and only those.

/// DEC private modes followed, and whether "set" (`h`) is the one to undo.
const FOLLOWED: [(u16, bool); 13] = [
    (1, true),    // application cursor keys
    (25, false),  // cursor shown: `l` hides it, so `h` restores
    (47, true),   // alternate screen
    (1047, true), // alternate screen
    (1049, true), // alternate screen, cursor saved
    (1000, true), // mouse: clicks
    (1002, true), // mouse: drags
    (1003, true), // mouse: all motion
    (1005, true), // mouse: UTF-8 coordinates
    (1006, true), // mouse: SGR coordinates
    (1015, true), // mouse: urxvt coordinates
    (1004, true), // focus events
    (2004, true), // bracketed paste
];

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    Escape,
    /// In `ESC [ ?`, reading parameters.
    Private,
    /// In another control sequence: skipped to its final byte.
    Other,
}

/// Reads output as the terminal will, for the modes it sets.
#[derive(Debug, Default, Clone)]
pub struct Modes {
    state: State,
    params: Vec<u16>,
    current: u16,
    /// Each followed mode that is now in its non-default state.
    left_on: Vec<u16>,
}

impl Modes {
    /// Reads `bytes` (any split: a sequence may span calls).
    pub fn observe(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.state = match (self.state, byte) {
                (_, 0x1b) => State::Escape,
                (State::Ground, _) => State::Ground,
                (State::Escape, b'[') => {
                    self.params.clear();
                    self.current = 0;
                    State::Other
                }
                (State::Escape, _) => State::Ground,
                (State::Other, b'?') if self.params.is_empty() && self.current == 0 => {
                    State::Private
                }
                (State::Private, b'0'..=b'9') => {
                    self.current = self
                        .current
                        .saturating_mul(10)
                        .saturating_add(u16::from(byte - b'0'));
                    State::Private
                }
                (State::Private, b';') => {
                    self.params.push(std::mem::take(&mut self.current));
                    State::Private
                }
                (State::Private, b'h' | b'l') => {
                    self.params.push(std::mem::take(&mut self.current));
                    for i in 0..self.params.len() {
                        self.set(self.params[i], byte == b'h');
                    }
                    State::Ground
                }
                (State::Private | State::Other, 0x40..=0x7e) => State::Ground,
                (state, _) => state,
            };
        }
    }

    fn set(&mut self, mode: u16, on: bool) {
        let Some(&(_, set_is_on)) = FOLLOWED.iter().find(|(m, _)| *m == mode) else {
            return;
        };
        self.left_on.retain(|m| *m != mode);
        if on == set_is_on {
            self.left_on.push(mode);
        }
    }

    /// The bytes that turn off every followed mode left on, newest first
    /// (so the alternate screen is left before the cursor is shown).
    pub fn restore(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for &mode in self.left_on.iter().rev() {
            let set_is_on = FOLLOWED.iter().any(|&(m, s)| m == mode && s);
            let end = if set_is_on { 'l' } else { 'h' };
            out.extend_from_slice(format!("\x1b[?{mode}{end}").as_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn left(bytes: &[&[u8]]) -> String {
        let mut modes = Modes::default();
        for chunk in bytes {
            modes.observe(chunk);
        }
        String::from_utf8(modes.restore()).unwrap()
    }

    #[test]
    fn only_the_modes_left_on_are_turned_off() {
        assert_eq!(left(&[b"plain text\r\n\x1b[31mred\x1b[0m"]), "");
        assert_eq!(
            left(&[b"\x1b[?1049h\x1b[?1000;1006h\x1b[?2004h\x1b[?25l"]),
            "\x1b[?25h\x1b[?2004l\x1b[?1006l\x1b[?1000l\x1b[?1049l"
        );
        assert_eq!(left(&[b"\x1b[?1049h vim \x1b[?1049l"]), "");
        assert_eq!(left(&[b"\x1b[?25l\x1b[?25h"]), "");
    }

    #[test]
    fn a_sequence_split_across_chunks_is_read() {
        assert_eq!(left(&[b"\x1b[?10", b"49h"]), "\x1b[?1049l");
        assert_eq!(left(&[b"\x1b", b"[?2004h"]), "\x1b[?2004l");
    }

    #[test]
    fn other_sequences_and_unknown_modes_change_nothing() {
        assert_eq!(
            left(&[b"\x1b[12;40H\x1b[2J\x1b[?9999h\x1b]0;title\x07"]),
            ""
        );
        assert_eq!(left(&[b"\x1b[1h"]), "", "ANSI mode 1, not DEC private");
    }
}

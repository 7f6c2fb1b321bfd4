//! A log's lines cut at a width instead of wrapped (a log pane's `w`):
//! applied to the bytes a log grid is fed, so the same kept bytes are cut
//! again at a new width. A log's bytes are lines of text and colours (SGR),
//! nothing else acts (`log_text`); escape sequences take no column and
//! always pass, so a line's colours and its reset still apply.

use unicode_width::UnicodeWidthChar;

/// Where a stream of bytes is: carried from one chunk to the next.
#[derive(Debug, Default, Clone)]
pub struct LineCut {
    /// Columns the current line has taken.
    column: usize,
    /// The current line reached the width: its text is dropped up to its end.
    full: bool,
    escape: Escape,
    /// A character's UTF-8 bytes as they arrive (they may span chunks).
    pending: [u8; 4],
    pending_len: u8,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Escape {
    #[default]
    None,
    /// After ESC.
    Started,
    /// In a CSI sequence, up to its final byte.
    Csi,
}

impl LineCut {
    /// Appends to `out` what of `bytes` fits in `width` columns a line.
    pub fn feed(&mut self, bytes: &[u8], width: usize, out: &mut Vec<u8>) {
        for &byte in bytes {
            match self.escape {
                Escape::Started => {
                    out.push(byte);
                    self.escape = if byte == b'[' {
                        Escape::Csi
                    } else {
                        Escape::None
                    };
                    continue;
                }
                Escape::Csi => {
                    out.push(byte);
                    if (0x40..=0x7e).contains(&byte) {
                        self.escape = Escape::None;
                    }
                    continue;
                }
                Escape::None => {}
            }
            match byte {
                0x1b => {
                    self.pending_len = 0;
                    self.escape = Escape::Started;
                    out.push(byte);
                }
                b'\n' | b'\r' => {
                    self.pending_len = 0;
                    self.column = 0;
                    self.full = false;
                    out.push(byte);
                }
                0x00..=0x1f | 0x7f => out.push(byte),
                0x20..=0x7e => self.place(&[byte], 1, width, out),
                0x80..=0xbf if self.pending_len > 0 => {
                    self.pending[usize::from(self.pending_len)] = byte;
                    self.pending_len += 1;
                    let char_bytes = self.pending;
                    let char_bytes = &char_bytes[..usize::from(self.pending_len)];
                    if char_bytes.len() == utf8_len(char_bytes[0]) {
                        self.pending_len = 0;
                        let columns = std::str::from_utf8(char_bytes)
                            .ok()
                            .and_then(|s| s.chars().next())
                            .map_or(1, |c| c.width().unwrap_or(0));
                        self.place(char_bytes, columns, width, out);
                    } else if self.pending_len == 4 {
                        self.pending_len = 0;
                    }
                }
                0xc2..=0xf4 => {
                    self.pending[0] = byte;
                    self.pending_len = 1;
                }
                // Not UTF-8: the emulator shows a replacement character.
                _ => self.place(&[byte], 1, width, out),
            }
        }
    }

    fn place(&mut self, text: &[u8], columns: usize, width: usize, out: &mut Vec<u8>) {
        if self.full || self.column + columns > width {
            // A mark that combines with what was dropped is dropped too.
            self.full = true;
            return;
        }
        self.column += columns;
        out.extend_from_slice(text);
    }
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::LineCut;

    fn cut(chunks: &[&[u8]], width: usize) -> Vec<u8> {
        let mut state = LineCut::default();
        let mut out = Vec::new();
        for chunk in chunks {
            state.feed(chunk, width, &mut out);
        }
        out
    }

    #[test]
    fn lines_are_cut_at_columns_and_escapes_take_none() {
        assert_eq!(cut(&[b"abcdef\r\nxy\r\n"], 3), b"abc\r\nxy\r\n");
        assert_eq!(
            cut(&[b"\x1b[31mabcdef\x1b[0m\r\n"], 2),
            b"\x1b[31mab\x1b[0m\r\n"
        );
        assert_eq!(cut(&["héllo\r\n".as_bytes()], 2), "hé\r\n".as_bytes());
    }

    #[test]
    fn wide_characters_take_two_columns_and_are_never_halved() {
        assert_eq!(cut(&["日本語\r\n".as_bytes()], 5), "日本\r\n".as_bytes());
        // A combining mark after a dropped letter is dropped with it.
        assert_eq!(cut(&["abe\u{301}\r\n".as_bytes()], 2), "ab\r\n".as_bytes());
        assert_eq!(
            cut(&["ae\u{301}x\r\n".as_bytes()], 2),
            "ae\u{301}\r\n".as_bytes()
        );
    }

    #[test]
    fn a_line_split_across_chunks_is_cut_as_one() {
        let whole = "ab\x1b[1mcé日d\x1b[0m\r\nnext line\r\n".as_bytes();
        for width in 0..12 {
            let one = cut(&[whole], width);
            for split in 0..whole.len() {
                let (a, b) = whole.split_at(split);
                assert_eq!(cut(&[a, b], width), one, "width {width}, split at {split}");
            }
        }
        assert_eq!(cut(&[whole], 3), "ab\x1b[1mc\x1b[0m\r\nnex\r\n".as_bytes());
    }
}

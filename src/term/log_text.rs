//! A log line as a record, not a screen: what a log pane feeds its grid.
//!
//! A container's log is what it wrote, line by line, whatever it thought
//! it was talking to. A program that clears the screen (`clear`, `top`),
//! moves the cursor or rewrites its line with a carriage return acts on a
//! terminal; in a log pane those bytes would wipe the other lines (and, with
//! `ESC [ 3 J`, the scrollback), or overwrite the pane's own prefix. Here
//! only colours (SGR) are kept; every other escape sequence and control
//! character goes, so every line the server sent stays readable.

/// `line` (without its newline) with SGR colour sequences kept and every
/// other escape sequence (CSI, OSC, DCS, SOS/PM/APC, two-byte escapes),
/// carriage return and control character (tab excepted) removed. Bytes that
/// are not UTF-8 read as U+FFFD; C1 controls are removed too.
/// Most lines have nothing to remove: they are returned as they are,
/// without a copy (this is every log byte's path).
pub fn log_line(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if let Ok(text) = std::str::from_utf8(line)
        && !text.chars().any(|c| c.is_control() && c != '\t')
    {
        return std::borrow::Cow::Borrowed(line);
    }
    std::borrow::Cow::Owned(filtered(line))
}

fn filtered(line: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(line);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\x1b' => i = escape(&chars, i, &mut out),
            '\t' => {
                out.push(c);
                i += 1;
            }
            // CR, BS, BEL, FF, VT, C1 (0x9b is a CSI on 8-bit terminals)…
            c if c.is_control() => i += 1,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out.into_bytes()
}

/// The escape sequence at `chars[start]` (an ESC): an SGR is copied to
/// `out`, anything else is skipped. Returns the index after it.
fn escape(chars: &[char], start: usize, out: &mut String) -> usize {
    let Some(&kind) = chars.get(start + 1) else {
        return start + 1;
    };
    match kind {
        '[' => {
            // CSI: parameters and intermediates in 0x20..0x3f, then a final
            // byte in 0x40..0x7e. A control character inside aborts it.
            let mut i = start + 2;
            while i < chars.len() && ('\x20'..='\x3f').contains(&chars[i]) {
                i += 1;
            }
            match chars.get(i) {
                Some(&'m') => {
                    let params = &chars[start + 2..i];
                    if params
                        .iter()
                        .all(|c| c.is_ascii_digit() || *c == ';' || *c == ':')
                    {
                        out.push_str("\x1b[");
                        out.extend(params);
                        out.push('m');
                    }
                    i + 1
                }
                Some(c) if ('\x40'..='\x7e').contains(c) => i + 1,
                // Cut short: drop what was read, go on from here.
                _ => i,
            }
        }
        // OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \).
        ']' | 'P' | 'X' | '^' | '_' => {
            let mut i = start + 2;
            while i < chars.len() {
                match chars[i] {
                    '\x07' => return i + 1,
                    '\x1b' if chars.get(i + 1) == Some(&'\\') => return i + 2,
                    '\x1b' => return i,
                    _ => i += 1,
                }
            }
            i
        }
        // ESC, intermediates, final: `ESC ( B`, `ESC c` (reset), `ESC 7`…
        _ => {
            let mut i = start + 1;
            while i < chars.len() && ('\x20'..='\x2f').contains(&chars[i]) {
                i += 1;
            }
            if i < chars.len() && ('\x30'..='\x7e').contains(&chars[i]) {
                i + 1
            } else {
                i
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::log_line;
    use crate::term::Size;
    use crate::term::grid::Grid;

    fn shown(line: &[u8]) -> String {
        String::from_utf8(log_line(line).into_owned()).unwrap()
    }

    #[test]
    fn colours_stay() {
        assert_eq!(
            shown(b"\x1b[1;31mERROR\x1b[0m up \x1b[38;5;208mo\x1b[38:2:1:2:3mk\x1b[m"),
            "\x1b[1;31mERROR\x1b[0m up \x1b[38;5;208mo\x1b[38:2:1:2:3mk\x1b[m"
        );
        assert_eq!(shown(b"plain\ttext"), "plain\ttext");
    }

    #[test]
    fn screen_control_goes() {
        assert_eq!(shown(b"\x1b[H\x1b[2J\x1b[3Jafter clear"), "after clear");
        assert_eq!(shown(b"\x1b[?1049hin alt\x1b[?1049l"), "in alt");
        assert_eq!(shown(b"a\x1b[10;5Hb\x1b[Kc\x1b[2Ad\x1b[1Ge"), "abcde");
        // A private SGR-looking sequence is not a colour.
        assert_eq!(shown(b"\x1b[>4;1mx\x1b[?25l"), "x");
        assert_eq!(shown(b"\x1bcreset\x1b7\x1b8\x1b(B"), "reset");
    }

    #[test]
    fn osc_dcs_and_friends_go() {
        assert_eq!(shown(b"\x1b]0;title\x07t\x1b]52;c;aGk=\x1b\\u"), "tu");
        assert_eq!(shown(b"\x1bPq#0;1\x1b\\v\x1b_apc\x1b\\w"), "vw");
        assert_eq!(shown(b"unterminated \x1b]8;;http://x"), "unterminated ");
        assert_eq!(shown(b"cut \x1b["), "cut ");
        assert_eq!(shown(b"end \x1b"), "end ");
    }

    #[test]
    fn carriage_returns_and_controls_go() {
        assert_eq!(shown(b"10%\r20%\r100%"), "10%20%100%");
        assert_eq!(shown(b"line\r"), "line");
        assert_eq!(shown(b"bell\x07 back\x08 ff\x0c"), "bell back ff");
        assert_eq!(shown("c1 \u{9b}2J csi".as_bytes()), "c1 2J csi");
        assert_eq!(shown(b"caf\xe9"), "caf\u{fffd}");
    }

    #[test]
    fn whatever_the_bytes_only_colours_and_text_come_out() {
        let mut rng = fastrand::Rng::with_seed(0x5eed_1095);
        let alphabet = b"\x1b[]();:?0123456789mHJKPX^_\\\x07\r\n\x08\tab\x9b\xc2";
        for round in 0..3_000 {
            let line: Vec<u8> = (0..(round % 48))
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            let out = String::from_utf8(log_line(&line).into_owned()).expect("UTF-8 out");
            assert!(
                !out.chars()
                    .any(|c| c.is_control() && c != '\x1b' && c != '\t')
            );
            let mut rest = out.as_str();
            while let Some(at) = rest.find('\x1b') {
                let sgr = &rest[at + 1..];
                let end = sgr.find('m').expect("an SGR ends in m");
                assert!(sgr.starts_with('['), "{out:?}");
                assert!(
                    sgr[1..end]
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == ';' || c == ':'),
                    "{out:?}"
                );
                rest = &sgr[end..];
            }
        }
    }

    #[test]
    fn a_hostile_line_cannot_wipe_the_lines_before_it() {
        let mut grid = Grid::new(Size::new(40, 5), 100);
        grid.feed(b"web | first\r\n");
        let mut line = b"db  | ".to_vec();
        line.extend(log_line(b"\x1b[H\x1b[2J\x1b[3J\rcleared\x1b[1;1Hx").iter());
        line.extend(b"\r\n");
        grid.feed(&line);
        let text = grid.text();
        assert!(text.contains("web | first"), "{text}");
        assert!(text.contains("db  | clearedx"), "{text}");
    }
}

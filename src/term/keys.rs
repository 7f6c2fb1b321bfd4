//! crossterm key and paste events → the bytes an xterm would send.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Encodes a key; `None` for keys a terminal sends nothing for.
pub fn encode_key(key: &KeyEvent, application_cursor: bool) -> Option<Vec<u8>> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    // xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl.
    let modifier = 1 + u8::from(shift) + 2 * u8::from(alt) + 4 * u8::from(ctrl);
    let mut bytes = match key.code {
        KeyCode::Char(c) if ctrl => vec![control_byte(c)?],
        KeyCode::Char(c) => c.to_string().into_bytes(),
        KeyCode::Enter => vec![b'\r'],
        KeyCode::Tab => vec![b'\t'],
        KeyCode::BackTab => b"\x1b[Z".to_vec(),
        KeyCode::Backspace => vec![if ctrl { 0x08 } else { 0x7f }],
        KeyCode::Esc => vec![0x1b],
        KeyCode::Up
        | KeyCode::Down
        | KeyCode::Right
        | KeyCode::Left
        | KeyCode::Home
        | KeyCode::End => {
            let letter = match key.code {
                KeyCode::Up => 'A',
                KeyCode::Down => 'B',
                KeyCode::Right => 'C',
                KeyCode::Left => 'D',
                KeyCode::Home => 'H',
                _ => 'F',
            };
            return Some(match (modifier, application_cursor) {
                (1, true) => format!("\x1bO{letter}").into_bytes(),
                (1, false) => format!("\x1b[{letter}").into_bytes(),
                (m, _) => format!("\x1b[1;{m}{letter}").into_bytes(),
            });
        }
        KeyCode::Insert | KeyCode::Delete | KeyCode::PageUp | KeyCode::PageDown => {
            let number = match key.code {
                KeyCode::Insert => 2,
                KeyCode::Delete => 3,
                KeyCode::PageUp => 5,
                _ => 6,
            };
            return Some(tilde(number, modifier));
        }
        KeyCode::F(n @ 1..=4) => {
            let letter = (b'P' + n - 1) as char;
            return Some(match modifier {
                1 => format!("\x1bO{letter}").into_bytes(),
                m => format!("\x1b[1;{m}{letter}").into_bytes(),
            });
        }
        KeyCode::F(n @ 5..=12) => {
            let number = [15, 17, 18, 19, 20, 21, 23, 24][usize::from(n - 5)];
            return Some(tilde(number, modifier));
        }
        _ => return None,
    };
    if alt {
        bytes.insert(0, 0x1b);
    }
    Some(bytes)
}

fn tilde(number: u8, modifier: u8) -> Vec<u8> {
    match modifier {
        1 => format!("\x1b[{number}~").into_bytes(),
        m => format!("\x1b[{number};{m}~").into_bytes(),
    }
}

/// Ctrl+key as a control byte: Ctrl-a = 0x01, Ctrl-space = NUL, Ctrl-[ = ESC …
fn control_byte(c: char) -> Option<u8> {
    match c.to_ascii_lowercase() {
        c @ 'a'..='z' => Some(c as u8 - b'a' + 1),
        ' ' | '@' | '2' => Some(0),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '7' | '/' => Some(0x1f),
        '8' | '?' => Some(0x7f),
        _ => None,
    }
}

/// Pasted text; wrapped in bracketed-paste markers when the remote enabled
/// them. An end marker inside the text is removed so a paste cannot break out.
pub fn encode_paste(text: &str, bracketed: bool) -> Vec<u8> {
    if !bracketed {
        return text.replace("\r\n", "\r").replace('\n', "\r").into_bytes();
    }
    // Removing the end marker can join pieces into a new one
    // ("\x1b[20\x1b[201~1~"), so remove until none is left: a paste must
    // never end early and have its rest run as typed keys.
    let mut safe = text.to_string();
    while safe.contains("\x1b[201~") {
        safe = safe.replace("\x1b[201~", "");
    }
    let mut out = b"\x1b[200~".to_vec();
    out.extend_from_slice(safe.as_bytes());
    out.extend_from_slice(b"\x1b[201~");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn xterm_sequences() {
        let none = KeyModifiers::NONE;
        let cases: Vec<(KeyEvent, bool, &[u8])> = vec![
            (k(KeyCode::Char('a'), none), false, b"a"),
            (k(KeyCode::Char('é'), none), false, "é".as_bytes()),
            (k(KeyCode::Char('c'), KeyModifiers::CONTROL), false, b"\x03"),
            (k(KeyCode::Char(' '), KeyModifiers::CONTROL), false, b"\x00"),
            (k(KeyCode::Char('['), KeyModifiers::CONTROL), false, b"\x1b"),
            (k(KeyCode::Char('x'), KeyModifiers::ALT), false, b"\x1bx"),
            (k(KeyCode::Enter, none), false, b"\r"),
            (k(KeyCode::Backspace, none), false, b"\x7f"),
            (k(KeyCode::BackTab, KeyModifiers::SHIFT), false, b"\x1b[Z"),
            (k(KeyCode::Up, none), false, b"\x1b[A"),
            (k(KeyCode::Up, none), true, b"\x1bOA"),
            (k(KeyCode::Left, KeyModifiers::CONTROL), true, b"\x1b[1;5D"),
            (k(KeyCode::Home, none), true, b"\x1bOH"),
            (k(KeyCode::End, none), false, b"\x1b[F"),
            (k(KeyCode::PageUp, none), false, b"\x1b[5~"),
            (k(KeyCode::Delete, KeyModifiers::SHIFT), false, b"\x1b[3;2~"),
            (k(KeyCode::F(1), none), false, b"\x1bOP"),
            (k(KeyCode::F(5), none), false, b"\x1b[15~"),
            (
                k(KeyCode::F(12), KeyModifiers::CONTROL),
                false,
                b"\x1b[24;5~",
            ),
        ];
        for (key, app, want) in cases {
            assert_eq!(
                encode_key(&key, app).as_deref(),
                Some(want),
                "{key:?} app={app}"
            );
        }
        assert_eq!(encode_key(&k(KeyCode::CapsLock, none), false), None);
    }

    #[test]
    fn paste_is_bracketed_only_when_asked_and_cannot_escape() {
        assert_eq!(encode_paste("a\nb", false), b"a\rb");
        assert_eq!(encode_paste("ls", true), b"\x1b[200~ls\x1b[201~");
        assert_eq!(
            encode_paste("x\x1b[201~rm -rf /", true),
            b"\x1b[200~xrm -rf /\x1b[201~"
        );
        assert_eq!(
            encode_paste("\x1b[20\x1b[201~1~rm -rf ~\r", true),
            b"\x1b[200~rm -rf ~\r\x1b[201~",
            "a marker rebuilt by the removal is removed too (found by cargo-fuzz)"
        );
    }

    proptest::proptest! {
        #[test]
        fn a_bracketed_paste_ends_only_at_its_end(text in "(\\x1b|\\[|2|0|1|~|a|\n){0,40}") {
            let out = encode_paste(&text, true);
            let end = b"\x1b[201~";
            let ends = out.windows(end.len()).filter(|w| w == end).count();
            proptest::prop_assert_eq!(ends, 1);
            proptest::prop_assert!(out.ends_with(end));
        }
    }
}

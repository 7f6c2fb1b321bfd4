//! Mouse events encoded as xterm reports them, for remote programs that
//! asked for mouse reporting (vim, htop, less --mouse).

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use vt100::{MouseProtocolEncoding, MouseProtocolMode};

/// The bytes for `event` at pane cell (`col`, `row`) (0-based), or `None`
/// when the remote's mode does not report this kind of event.
pub fn encode_mouse(
    event: &MouseEvent,
    col: u16,
    row: u16,
    mode: MouseProtocolMode,
    encoding: MouseProtocolEncoding,
) -> Option<Vec<u8>> {
    let button = |b: MouseButton| match b {
        MouseButton::Left => 0u16,
        MouseButton::Middle => 1,
        MouseButton::Right => 2,
    };
    let (code, release) = match event.kind {
        MouseEventKind::Down(b) => (button(b), false),
        MouseEventKind::Up(b) => {
            if mode == MouseProtocolMode::Press {
                return None;
            }
            (button(b), true)
        }
        MouseEventKind::Drag(b) => {
            if !matches!(
                mode,
                MouseProtocolMode::ButtonMotion | MouseProtocolMode::AnyMotion
            ) {
                return None;
            }
            (button(b) + 32, false)
        }
        MouseEventKind::Moved => {
            if mode != MouseProtocolMode::AnyMotion {
                return None;
            }
            (3 + 32, false)
        }
        MouseEventKind::ScrollUp => (64, false),
        MouseEventKind::ScrollDown => (65, false),
        MouseEventKind::ScrollLeft => (66, false),
        MouseEventKind::ScrollRight => (67, false),
    };
    if mode == MouseProtocolMode::None {
        return None;
    }
    let mut code = code;
    for (modifier, bit) in [
        (KeyModifiers::SHIFT, 4),
        (KeyModifiers::ALT, 8),
        (KeyModifiers::CONTROL, 16),
    ] {
        if event.modifiers.contains(modifier) {
            code += bit;
        }
    }
    let (x, y) = (u32::from(col) + 1, u32::from(row) + 1);
    match encoding {
        MouseProtocolEncoding::Sgr => {
            let end = if release { 'm' } else { 'M' };
            Some(format!("\x1b[<{code};{x};{y}{end}").into_bytes())
        }
        legacy => {
            // Without SGR a release cannot say which button: it is button 3.
            let code = if release { (code & !3) | 3 } else { code };
            let mut out = b"\x1b[M".to_vec();
            for value in [u32::from(code), x, y] {
                let value = value + 32;
                match legacy {
                    MouseProtocolEncoding::Utf8 => {
                        let c = char::from_u32(value.min(2047))?;
                        let mut buf = [0; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    // The original encoding cannot express columns past 223.
                    _ => out.push(u8::try_from(value).ok()?),
                }
            }
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: MouseEventKind, modifiers: KeyModifiers) -> MouseEvent {
        MouseEvent {
            kind,
            column: 0,
            row: 0,
            modifiers,
        }
    }

    #[test]
    fn reports_follow_the_mode_and_encoding_the_remote_asked_for() {
        use MouseProtocolEncoding as E;
        use MouseProtocolMode as M;
        let none = KeyModifiers::NONE;
        let down = event(MouseEventKind::Down(MouseButton::Left), none);
        let up = event(MouseEventKind::Up(MouseButton::Left), none);
        let drag = event(MouseEventKind::Drag(MouseButton::Left), none);
        let wheel = event(MouseEventKind::ScrollDown, KeyModifiers::CONTROL);
        let cases: Vec<(&MouseEvent, M, E, Option<&[u8]>)> = vec![
            (&down, M::PressRelease, E::Sgr, Some(b"\x1b[<0;5;3M")),
            (&up, M::PressRelease, E::Sgr, Some(b"\x1b[<0;5;3m")),
            (&up, M::Press, E::Sgr, None),
            (&drag, M::PressRelease, E::Sgr, None),
            (&drag, M::ButtonMotion, E::Sgr, Some(b"\x1b[<32;5;3M")),
            (&wheel, M::PressRelease, E::Sgr, Some(b"\x1b[<81;5;3M")),
            (&down, M::PressRelease, E::Default, Some(b"\x1b[M %#")),
            (&up, M::PressRelease, E::Default, Some(b"\x1b[M#%#")),
            (&down, M::None, E::Sgr, None),
        ];
        for (e, mode, encoding, want) in cases {
            assert_eq!(
                encode_mouse(e, 4, 2, mode, encoding).as_deref(),
                want,
                "{e:?} {mode:?} {encoding:?}"
            );
        }
        assert_eq!(
            encode_mouse(&down, 300, 0, M::PressRelease, E::Default),
            None,
            "too far right for the original encoding"
        );
        assert_eq!(
            encode_mouse(&down, 300, 0, M::PressRelease, E::Utf8),
            Some("\x1b[M \u{14d}!".as_bytes().to_vec())
        );
    }
}

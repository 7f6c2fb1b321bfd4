//! Key and paste encoding: any key event (code, modifiers, kind) and any
//! pasted text encode without panicking; a paste in bracketed mode is
//! wrapped once and carries no bracket-end of its own.
#![no_main]

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, MediaKeyCode, ModifierKeyCode,
};
use libfuzzer_sys::fuzz_target;
use podbay::term::keys::{encode_key, encode_paste};

fn code(tag: u8, value: u32) -> KeyCode {
    match tag % 24 {
        0 => KeyCode::Backspace,
        1 => KeyCode::Enter,
        2 => KeyCode::Left,
        3 => KeyCode::Right,
        4 => KeyCode::Up,
        5 => KeyCode::Down,
        6 => KeyCode::Home,
        7 => KeyCode::End,
        8 => KeyCode::PageUp,
        9 => KeyCode::PageDown,
        10 => KeyCode::Tab,
        11 => KeyCode::BackTab,
        12 => KeyCode::Delete,
        13 => KeyCode::Insert,
        14 => KeyCode::F((value % 256) as u8),
        15 => KeyCode::Null,
        16 => KeyCode::Esc,
        17 => KeyCode::CapsLock,
        18 => KeyCode::Menu,
        19 => KeyCode::Media(MediaKeyCode::Play),
        20 => KeyCode::Modifier(ModifierKeyCode::LeftShift),
        21 => KeyCode::KeypadBegin,
        _ => KeyCode::Char(char::from_u32(value).unwrap_or('\u{fffd}')),
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let value = u32::from_le_bytes([data[1], data[2], data[3], data[4]]);
    let kind = match data[6] % 3 {
        0 => KeyEventKind::Press,
        1 => KeyEventKind::Repeat,
        _ => KeyEventKind::Release,
    };
    let key = KeyEvent {
        code: code(data[0], value),
        modifiers: KeyModifiers::from_bits_truncate(data[5]),
        kind,
        state: KeyEventState::from_bits_truncate(data[7]),
    };
    let _ = encode_key(&key, data[6] & 0x80 != 0);
    let text = String::from_utf8_lossy(&data[8..]);
    let plain = encode_paste(&text, false);
    let bracketed = encode_paste(&text, true);
    assert!(bracketed.starts_with(b"\x1b[200~") && bracketed.ends_with(b"\x1b[201~"));
    let inner = &bracketed[6..bracketed.len() - 6];
    assert!(
        !inner.windows(6).any(|w| w == b"\x1b[201~"),
        "a paste must not end the bracket early"
    );
    let _ = plain;
});

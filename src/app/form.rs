//! What every form shares: the keys that leave it, submit it, move
//! between its fields and cycle a choice, and the one line editor
//! ([`LineEdit`]) its text fields are typed with. Each form keeps its
//! fields, its validation and what submitting does.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub use super::line::{Edit, LineEdit};

/// What a key asks of a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormKey {
    /// esc (ctrl-c too, before it reaches the form).
    Cancel,
    /// enter.
    Submit,
    /// tab or ↓: the next field; shift-tab or ↑: the one before.
    Focus(isize),
    /// ← or → on a field that offers choices: the one before or after.
    Cycle(isize),
    /// Anything else goes to the focused text field's line editor.
    Type,
}

impl FormKey {
    /// What `key` asks, on a focused field that offers choices
    /// (`cycles`) or not: there ←/→ move the text's cursor instead.
    pub fn of(key: &KeyEvent, cycles: bool) -> FormKey {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => FormKey::Cancel,
            KeyCode::Enter => FormKey::Submit,
            KeyCode::Tab | KeyCode::Down => FormKey::Focus(1),
            KeyCode::BackTab | KeyCode::Up => FormKey::Focus(-1),
            KeyCode::Left if cycles && plain => FormKey::Cycle(-1),
            KeyCode::Right if cycles && plain => FormKey::Cycle(1),
            _ => FormKey::Type,
        }
    }
}

impl FormKey {
    /// What `key` asks on a focused field that is a list shown one choice
    /// a line (the forward form's ports): ↑/↓ choose, tab and shift-tab
    /// move between fields, ←/→ move the typed text's cursor.
    pub fn of_list(key: &KeyEvent) -> FormKey {
        match key.code {
            KeyCode::Up => FormKey::Cycle(-1),
            KeyCode::Down => FormKey::Cycle(1),
            KeyCode::Tab => FormKey::Focus(1),
            KeyCode::BackTab => FormKey::Focus(-1),
            _ => FormKey::of(key, false),
        }
    }
}

/// The field `delta` places from `at` in `order`, going round.
pub fn step<F: Copy + PartialEq>(order: &[F], at: F, delta: isize) -> F {
    let i = order.iter().position(|f| *f == at).unwrap_or(0) as isize;
    order[(i + delta).rem_euclid(order.len() as isize) as usize]
}

/// The index `delta` places from `at` among `n` choices, going round.
pub fn cycle(at: usize, n: usize, delta: isize) -> usize {
    (at as isize + delta).rem_euclid(n.max(1) as isize) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_every_form_shares() {
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        assert_eq!(FormKey::of(&key(KeyCode::Esc), false), FormKey::Cancel);
        assert_eq!(FormKey::of(&key(KeyCode::Enter), true), FormKey::Submit);
        assert_eq!(FormKey::of(&key(KeyCode::Down), false), FormKey::Focus(1));
        assert_eq!(
            FormKey::of(&key(KeyCode::BackTab), false),
            FormKey::Focus(-1)
        );
        assert_eq!(FormKey::of(&key(KeyCode::Left), true), FormKey::Cycle(-1));
        assert_eq!(
            FormKey::of(&key(KeyCode::Left), false),
            FormKey::Type,
            "in a text, ← moves the cursor"
        );
        let word = KeyEvent::new(KeyCode::Right, KeyModifiers::ALT);
        assert_eq!(
            FormKey::of(&word, true),
            FormKey::Type,
            "alt-→ moves by word"
        );
        assert_eq!(FormKey::of_list(&key(KeyCode::Up)), FormKey::Cycle(-1));
        assert_eq!(FormKey::of_list(&key(KeyCode::Tab)), FormKey::Focus(1));
        assert_eq!(FormKey::of_list(&key(KeyCode::Left)), FormKey::Type);
        assert_eq!(step(&['a', 'b', 'c'], 'a', -1), 'c');
        assert_eq!(step(&['a', 'b', 'c'], 'c', 1), 'a');
        assert_eq!(cycle(0, 3, -1), 2);
        assert_eq!(cycle(0, 0, 1), 0, "no choices: stays");
    }
}

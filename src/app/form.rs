//! The one form engine: every form (the launcher, the many-pods launcher,
//! the forward, the node shell, the pod copy) is a list of fields the
//! engine takes keys for — leave, send, move between fields, choose, type
//! with the one line editor ([`LineEdit`]) — and that `ui::form` draws the
//! same way. A form says only what its fields are, what they offer and
//! what sending it gives (or why it cannot be sent).

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
    /// What `key` asks on a focused field that takes it as `input`: in a
    /// plain text ←/→ move the cursor; in a list shown a choice a line
    /// ↑/↓ choose and tab moves between fields.
    pub fn of(key: &KeyEvent, input: Input) -> FormKey {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let cycles = matches!(input, Input::Choice | Input::TextOrChoice);
        match key.code {
            KeyCode::Esc => FormKey::Cancel,
            KeyCode::Enter => FormKey::Submit,
            KeyCode::Up if input == Input::List => FormKey::Cycle(-1),
            KeyCode::Down if input == Input::List => FormKey::Cycle(1),
            KeyCode::Tab | KeyCode::Down => FormKey::Focus(1),
            KeyCode::BackTab | KeyCode::Up => FormKey::Focus(-1),
            KeyCode::Left if cycles && plain => FormKey::Cycle(-1),
            KeyCode::Right if cycles && plain => FormKey::Cycle(1),
            _ => FormKey::Type,
        }
    }
}

/// How a field takes its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Typed.
    Text,
    /// Typed, or filled by ←/→ with one of a few values (an image from
    /// the config, one of the pod's volumes).
    TextOrChoice,
    /// One of a few choices, by ←/→.
    Choice,
    /// One of choices shown a line each, by ↑/↓; typing makes the last
    /// one (a port the pod does not declare).
    List,
}

/// How a field shows: its label, its value, and what the form says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown<'a> {
    pub label: String,
    pub value: Value<'a>,
    /// A word on the value: `(fine, words)`, such as how Pod Security
    /// takes a profile.
    pub note: Option<(bool, String)>,
}

/// A field's value as shown.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// Typed text, and what an empty one means.
    Text { line: &'a LineEdit, empty: String },
    /// A choice in words.
    Choice(String),
    /// Choices a line each, `at` the chosen; `typed` is the last choice,
    /// typed, and what an empty one means.
    List {
        options: Vec<String>,
        at: usize,
        typed: Option<(&'a LineEdit, &'static str)>,
    },
}

impl<'a> Shown<'a> {
    pub fn text(label: &str, line: &'a LineEdit, empty: &str) -> Self {
        Shown {
            label: label.to_string(),
            value: Value::Text {
                line,
                empty: empty.to_string(),
            },
            note: None,
        }
    }

    pub fn choice(label: &str, words: impl Into<String>) -> Self {
        Shown {
            label: label.to_string(),
            value: Value::Choice(words.into()),
            note: None,
        }
    }

    pub fn with_note(mut self, note: Option<(bool, String)>) -> Self {
        self.note = note;
        self
    }
}

/// A form: its fields, what each offers and what sending it gives.
/// `Context` is what it is checked against (the pod a launcher is for).
pub trait Form {
    type Field: Copy + PartialEq;
    type Sent;
    type Context: ?Sized;

    /// The fields in the order tab visits them.
    fn fields(&self) -> &[Self::Field];
    fn focus(&self) -> Self::Field;
    fn set_focus(&mut self, field: Self::Field);
    fn input(&self, field: Self::Field) -> Input;
    /// The text `field` is typed into, if it is typed.
    fn text_mut(&mut self, field: Self::Field) -> Option<&mut LineEdit>;
    /// ←/→ (↑/↓ in a list) on `field`: the choice `delta` away.
    fn choose(&mut self, field: Self::Field, delta: isize);
    /// After an edit of `field`'s text, which was `before`: the form may
    /// refuse it (put `before` back) or follow it.
    fn typed(&mut self, _field: Self::Field, _before: LineEdit) {}
    /// What enter sends, or one sentence on why it cannot be sent.
    fn submit(&self, context: &Self::Context) -> Result<Self::Sent, String>;
    fn shown(&self, field: Self::Field) -> Shown<'_>;
}

/// What a key did to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<S> {
    /// Nothing changed (focus may have moved).
    Stay,
    /// A value changed.
    Edited,
    Cancel,
    Send(S),
    /// Enter on a form that cannot be sent: why.
    Refused(String),
}

/// Takes `key` for `form`.
pub fn on_key<F: Form>(form: &mut F, key: &KeyEvent, context: &F::Context) -> Answer<F::Sent> {
    let focus = form.focus();
    match FormKey::of(key, form.input(focus)) {
        FormKey::Cancel => Answer::Cancel,
        FormKey::Submit => match form.submit(context) {
            Ok(sent) => Answer::Send(sent),
            Err(why) => Answer::Refused(why),
        },
        FormKey::Focus(delta) => {
            let next = step(form.fields(), focus, delta);
            form.set_focus(next);
            Answer::Stay
        }
        FormKey::Cycle(delta) => {
            form.choose(focus, delta);
            Answer::Edited
        }
        FormKey::Type => {
            let Some(text) = form.text_mut(focus) else {
                return Answer::Stay;
            };
            let before = text.clone();
            if text.edit(key) != Edit::Edited {
                return Answer::Stay;
            }
            form.typed(focus, before);
            Answer::Edited
        }
    }
}

/// A form asked for on the pod list, which opens the pod first: the form
/// follows once the pod's detail is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterDetail {
    Forward,
    Copy,
}

impl super::App {
    /// Opens the form asked for from the list once its pod's detail is in
    /// (and nothing else has the keyboard).
    pub(super) fn form_after_detail_ready(&mut self) -> Vec<super::Effect> {
        let Some((key, form)) = &self.form_after_detail else {
            return vec![];
        };
        let ready = matches!(&self.view, super::View::Pod(view)
            if view.pod.detail.is_some() && (&view.cluster, &view.key) == (&key.0, &key.1));
        if !ready || self.mode != super::Mode::Normal {
            return vec![];
        }
        let form = *form;
        self.form_after_detail = None;
        match form {
            AfterDetail::Forward => self.open_forward_form(),
            AfterDetail::Copy => self.open_copy_form(),
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
        let of = |code, input| FormKey::of(&key(code), input);
        assert_eq!(of(KeyCode::Esc, Input::Text), FormKey::Cancel);
        assert_eq!(of(KeyCode::Enter, Input::Choice), FormKey::Submit);
        assert_eq!(of(KeyCode::Down, Input::Text), FormKey::Focus(1));
        assert_eq!(of(KeyCode::BackTab, Input::Text), FormKey::Focus(-1));
        assert_eq!(of(KeyCode::Left, Input::Choice), FormKey::Cycle(-1));
        assert_eq!(of(KeyCode::Right, Input::TextOrChoice), FormKey::Cycle(1));
        assert_eq!(
            of(KeyCode::Left, Input::Text),
            FormKey::Type,
            "in a text, ← moves the cursor"
        );
        let word = KeyEvent::new(KeyCode::Right, KeyModifiers::ALT);
        assert_eq!(
            FormKey::of(&word, Input::Choice),
            FormKey::Type,
            "alt-→ moves by word"
        );
        assert_eq!(of(KeyCode::Up, Input::List), FormKey::Cycle(-1));
        assert_eq!(of(KeyCode::Tab, Input::List), FormKey::Focus(1));
        assert_eq!(of(KeyCode::Left, Input::List), FormKey::Type);
        assert_eq!(step(&['a', 'b', 'c'], 'a', -1), 'c');
        assert_eq!(step(&['a', 'b', 'c'], 'c', 1), 'a');
        assert_eq!(cycle(0, 3, -1), 2);
        assert_eq!(cycle(0, 0, 1), 0, "no choices: stays");
    }
}

#[cfg(test)]
mod engine_tests {
    use super::*;

    /// A form of a digits-only text and a choice of three.
    #[derive(Default)]
    struct Toy {
        digits: LineEdit,
        choice: usize,
        on_choice: bool,
    }

    impl Form for Toy {
        type Field = bool;
        type Sent = (String, usize);
        type Context = ();

        fn fields(&self) -> &[bool] {
            &[false, true]
        }
        fn focus(&self) -> bool {
            self.on_choice
        }
        fn set_focus(&mut self, field: bool) {
            self.on_choice = field;
        }
        fn input(&self, field: bool) -> Input {
            if field { Input::Choice } else { Input::Text }
        }
        fn text_mut(&mut self, field: bool) -> Option<&mut LineEdit> {
            (!field).then_some(&mut self.digits)
        }
        fn choose(&mut self, _: bool, delta: isize) {
            self.choice = cycle(self.choice, 3, delta);
        }
        fn typed(&mut self, _: bool, before: LineEdit) {
            if !self.digits.bytes().all(|b| b.is_ascii_digit()) {
                self.digits = before;
            }
        }
        fn submit(&self, _: &()) -> Result<(String, usize), String> {
            if self.digits.is_empty() {
                return Err("Type a number.".into());
            }
            Ok((self.digits.to_string(), self.choice))
        }
        fn shown(&self, _: bool) -> Shown<'_> {
            Shown::text("digits", &self.digits, "")
        }
    }

    #[test]
    fn the_engine_types_refuses_moves_chooses_and_sends() {
        let press =
            |form: &mut Toy, code| on_key(form, &KeyEvent::new(code, KeyModifiers::NONE), &());
        let mut form = Toy::default();
        assert_eq!(
            press(&mut form, KeyCode::Enter),
            Answer::Refused("Type a number.".into())
        );
        assert_eq!(press(&mut form, KeyCode::Char('4')), Answer::Edited);
        press(&mut form, KeyCode::Char('x'));
        assert_eq!(form.digits, "4", "the form refused the letter");
        assert_eq!(press(&mut form, KeyCode::BackTab), Answer::Stay);
        assert!(form.on_choice, "focus goes round");
        assert_eq!(press(&mut form, KeyCode::Left), Answer::Edited);
        assert_eq!(form.choice, 2);
        assert_eq!(
            press(&mut form, KeyCode::Char('7')),
            Answer::Stay,
            "a choice takes no typing"
        );
        assert_eq!(form.digits, "4");
        assert_eq!(
            press(&mut form, KeyCode::Enter),
            Answer::Send(("4".into(), 2))
        );
        assert_eq!(press(&mut form, KeyCode::Esc), Answer::Cancel);
    }
}

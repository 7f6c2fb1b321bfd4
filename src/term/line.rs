//! A line discipline for a pane whose remote has no terminal.
//!
//! Attached to a container started with stdin but without a tty (`kubectl
//! debug -i`, `docker run -i`), nothing on the far side echoes, edits or
//! turns a carriage return into a newline: a program there reads lines
//! ending in LF from a pipe. The pane does what a local terminal in cooked
//! mode does for `kubectl attach -i`: it echoes what is typed, edits the
//! line (backspace, `ctrl-u`, `ctrl-w`) and sends it, with LF, on `enter`.
//! It also shows the output as a terminal would: LF as a new line, standard
//! error in its own colour.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The line being typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEditor {
    line: String,
}

/// What a key did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Typed {
    /// Bytes for the pane's own grid: the echo.
    pub echo: Vec<u8>,
    /// Bytes for the remote's stdin: a finished line (with its LF).
    pub send: Option<Vec<u8>>,
    /// A key that means something to a terminal's line discipline and that
    /// no pipe can carry.
    pub signal: Option<Signal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// `ctrl-d` on an empty line: end of input.
    EndOfInput,
    /// `ctrl-c`: a terminal would interrupt the foreground process; without
    /// one there is no process group to signal.
    Interrupt,
}

const RUB_OUT: &[u8] = b"\x08 \x08";

impl LineEditor {
    /// The line typed so far.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// One key, as a terminal in cooked mode (`stty sane`) takes it.
    pub fn key(&mut self, key: &KeyEvent) -> Typed {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let mut typed = Typed::default();
        match key.code {
            KeyCode::Enter => self.finish(&mut typed),
            KeyCode::Char('j' | 'm') if ctrl => self.finish(&mut typed),
            KeyCode::Backspace => self.erase(1, &mut typed),
            KeyCode::Char('h') if ctrl => self.erase(1, &mut typed),
            KeyCode::Char('u') if ctrl => self.erase(self.line.chars().count(), &mut typed),
            KeyCode::Char('w') if ctrl => {
                let trimmed = self.line.trim_end_matches(' ');
                let word = trimmed
                    .rfind(' ')
                    .map_or(trimmed.len(), |at| trimmed.len() - at - 1);
                let n = self.line.len() - trimmed.len() + word;
                // Spaces and the word are single bytes or whole characters.
                let chars = self.line[self.line.len() - n..].chars().count();
                self.erase(chars, &mut typed);
            }
            KeyCode::Char('d') if ctrl => {
                if self.line.is_empty() {
                    typed.signal = Some(Signal::EndOfInput);
                } else {
                    // As a terminal: what was typed goes, without a newline.
                    typed.send = Some(std::mem::take(&mut self.line).into_bytes());
                }
            }
            KeyCode::Char('c') if ctrl => {
                self.line.clear();
                typed.echo.extend_from_slice(b"^C\r\n");
                typed.signal = Some(Signal::Interrupt);
            }
            KeyCode::Char(c) if !ctrl && !alt && !c.is_control() => {
                self.line.push(c);
                typed.echo.extend_from_slice(c.to_string().as_bytes());
            }
            KeyCode::Tab => {
                self.line.push('\t');
                typed.echo.push(b'\t');
            }
            _ => {}
        }
        typed
    }

    /// Pasted text: its lines are sent as if typed and entered; what
    /// follows the last newline stays on the line.
    pub fn paste(&mut self, text: &str) -> Typed {
        let mut typed = Typed::default();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\r' | '\n' => {
                    if c == '\r' && chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    self.finish(&mut typed);
                }
                c if c.is_control() && c != '\t' => {}
                c => {
                    self.line.push(c);
                    let mut buf = [0; 4];
                    typed
                        .echo
                        .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        typed
    }

    fn finish(&mut self, typed: &mut Typed) {
        let mut line = std::mem::take(&mut self.line).into_bytes();
        line.push(b'\n');
        typed.echo.extend_from_slice(b"\r\n");
        typed.send.get_or_insert_with(Vec::new).extend(line);
    }

    fn erase(&mut self, chars: usize, typed: &mut Typed) {
        for _ in 0..chars {
            if self.line.pop().is_some() {
                typed.echo.extend_from_slice(RUB_OUT);
            }
        }
    }
}

/// Output of a remote without a terminal, as a terminal would show it:
/// every LF starts a new line (a pipe sends no CR), and standard error is
/// wrapped in `stderr_sgr` (the parameters of an SGR colour, `38;5;203`)
/// and back to the default colour after.
pub fn untranslated(bytes: &[u8], stderr_sgr: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 16 + 16);
    if let Some(sgr) = stderr_sgr {
        out.extend_from_slice(format!("\x1b[{sgr}m").as_bytes());
    }
    let mut previous = 0u8;
    for &b in bytes {
        if b == b'\n' && previous != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        previous = b;
    }
    if stderr_sgr.is_some() {
        out.extend_from_slice(b"\x1b[39m");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn type_str(editor: &mut LineEditor, text: &str) -> Vec<u8> {
        text.chars()
            .flat_map(|c| editor.key(&key(KeyCode::Char(c))).echo)
            .collect()
    }

    #[test]
    fn typing_echoes_and_enter_sends_the_line_with_lf() {
        let mut e = LineEditor::default();
        assert_eq!(type_str(&mut e, "echo hi"), b"echo hi");
        assert_eq!(e.line(), "echo hi");
        let done = e.key(&key(KeyCode::Enter));
        assert_eq!(done.echo, b"\r\n");
        assert_eq!(done.send.as_deref(), Some(&b"echo hi\n"[..]));
        assert_eq!(e.line(), "");
        // An empty line is a line too.
        assert_eq!(
            e.key(&key(KeyCode::Enter)).send.as_deref(),
            Some(&b"\n"[..])
        );
    }

    #[test]
    fn backspace_ctrl_u_and_ctrl_w_edit_the_line() {
        let mut e = LineEditor::default();
        type_str(&mut e, "ls -l  /tmpx");
        assert_eq!(e.key(&key(KeyCode::Backspace)).echo, RUB_OUT);
        assert_eq!(e.line(), "ls -l  /tmp");
        let word = e.key(&ctrl('w'));
        assert_eq!(word.echo, RUB_OUT.repeat(4));
        assert_eq!(e.line(), "ls -l  ");
        e.key(&ctrl('w'));
        assert_eq!(e.line(), "ls ", "trailing spaces go with the word");
        let all = e.key(&ctrl('u'));
        assert_eq!(all.echo, RUB_OUT.repeat(3));
        assert_eq!(e.line(), "");
        assert!(
            e.key(&key(KeyCode::Backspace)).echo.is_empty(),
            "nothing to rub out"
        );
        type_str(&mut e, "é");
        assert_eq!(e.key(&key(KeyCode::Backspace)).echo, RUB_OUT);
        assert_eq!(e.line(), "");
    }

    #[test]
    fn ctrl_d_ends_input_on_an_empty_line_and_sends_a_partial_one() {
        let mut e = LineEditor::default();
        assert_eq!(e.key(&ctrl('d')).signal, Some(Signal::EndOfInput));
        type_str(&mut e, "abc");
        let partial = e.key(&ctrl('d'));
        assert_eq!(partial.send.as_deref(), Some(&b"abc"[..]));
        assert_eq!(partial.signal, None);
        assert_eq!(e.key(&ctrl('d')).signal, Some(Signal::EndOfInput));
    }

    #[test]
    fn ctrl_c_cannot_interrupt_and_drops_the_line() {
        let mut e = LineEditor::default();
        type_str(&mut e, "sleep 100");
        let c = e.key(&ctrl('c'));
        assert_eq!(c.signal, Some(Signal::Interrupt));
        assert_eq!(c.send, None, "nothing reaches the process");
        assert_eq!(c.echo, b"^C\r\n");
        assert_eq!(e.line(), "");
    }

    #[test]
    fn other_keys_send_nothing() {
        let mut e = LineEditor::default();
        for k in [
            key(KeyCode::Up),
            key(KeyCode::Esc),
            key(KeyCode::F(1)),
            ctrl('z'),
        ] {
            assert_eq!(e.key(&k), Typed::default(), "{k:?}");
        }
    }

    #[test]
    fn a_paste_sends_each_line() {
        let mut e = LineEditor::default();
        type_str(&mut e, "> ");
        let p = e.paste("one\r\ntwo\nthr\x1bee");
        assert_eq!(p.send.as_deref(), Some(&b"> one\ntwo\n"[..]));
        assert_eq!(p.echo, b"one\r\ntwo\r\nthree");
        assert_eq!(e.line(), "three");
    }

    #[test]
    fn output_lines_start_at_the_left_and_stderr_is_coloured() {
        assert_eq!(untranslated(b"a\nb\r\nc", None), b"a\r\nb\r\nc");
        assert_eq!(
            untranslated(b"oops\n", Some("38;5;203")),
            b"\x1b[38;5;203moops\r\n\x1b[39m"
        );
        assert_eq!(untranslated(b"", None), b"");
    }
}

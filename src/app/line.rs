//! The one line editor: the `:` command line, the filter and every text
//! field of a form edit their text with it, as in a shell: ←/→ and
//! ctrl-b/ctrl-f move, ctrl-a/home and ctrl-e/end go to either end,
//! alt-b/alt-f (or ctrl-←/→) move by word, backspace and delete remove a
//! character, ctrl-u deletes to the start, ctrl-w or alt-backspace the
//! word before the cursor, ctrl-k to the end, alt-d the word after.

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A line of text and a cursor in it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineEdit {
    text: String,
    /// Byte offset of the cursor, always on a char boundary.
    cursor: usize,
}

/// What an editing key did to the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Edited,
    /// Backspace on an empty line (the command line leaves, as vim's).
    LeaveEmpty,
    /// Not an editing key.
    Ignored,
}

impl LineEdit {
    /// The text before and after the cursor, for drawing it.
    pub fn split_at_cursor(&self) -> (&str, &str) {
        self.text.split_at(self.cursor)
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    pub fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// Deletes the character before the cursor; false when the line was
    /// already empty.
    pub fn backspace(&mut self) -> bool {
        if self.text.is_empty() {
            return false;
        }
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
        true
    }

    /// Applies a line-editing key.
    pub fn edit(&mut self, key: &KeyEvent) -> Edit {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Backspace if alt => self.delete_to(self.word_left()),
            KeyCode::Backspace => {
                if !self.backspace() {
                    return Edit::LeaveEmpty;
                }
            }
            KeyCode::Delete => {
                if self.cursor < self.text.len() {
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Left if ctrl || alt => self.cursor = self.word_left(),
            KeyCode::Right if ctrl || alt => self.cursor = self.word_right(),
            KeyCode::Left => self.cursor = self.char_left(),
            KeyCode::Right => self.cursor = self.char_right(),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.text.len(),
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.text.len(),
            KeyCode::Char('b') if ctrl => self.cursor = self.char_left(),
            KeyCode::Char('f') if ctrl => self.cursor = self.char_right(),
            KeyCode::Char('u') if ctrl => self.delete_to(0),
            KeyCode::Char('w') if ctrl => self.delete_to(self.word_left()),
            KeyCode::Char('k') if ctrl => self.text.truncate(self.cursor),
            KeyCode::Char('b') if alt => self.cursor = self.word_left(),
            KeyCode::Char('f') if alt => self.cursor = self.word_right(),
            KeyCode::Char('d') if alt => {
                let end = self.word_right();
                self.text.replace_range(self.cursor..end, "");
            }
            KeyCode::Char(c) if !ctrl && !alt => self.insert(c),
            _ => return Edit::Ignored,
        }
        Edit::Edited
    }

    /// Deletes from `from` (before the cursor) up to the cursor.
    fn delete_to(&mut self, from: usize) {
        self.text.replace_range(from..self.cursor, "");
        self.cursor = from;
    }

    fn char_left(&self) -> usize {
        self.text[..self.cursor]
            .chars()
            .next_back()
            .map_or(0, |c| self.cursor - c.len_utf8())
    }

    fn char_right(&self) -> usize {
        self.text[self.cursor..]
            .chars()
            .next()
            .map_or(self.text.len(), |c| self.cursor + c.len_utf8())
    }

    /// The start of the word before the cursor (a shell's ctrl-w and alt-b).
    fn word_left(&self) -> usize {
        let before = self.text[..self.cursor].trim_end();
        before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        })
    }

    /// The end of the word after the cursor (alt-f).
    fn word_right(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skipped = after.len() - after.trim_start().len();
        let word = &after[skipped..];
        self.cursor + skipped + word.find(char::is_whitespace).unwrap_or(word.len())
    }
}

/// A line holding `text`, the cursor at its end (where typing goes on).
impl From<String> for LineEdit {
    fn from(text: String) -> Self {
        let cursor = text.len();
        LineEdit { text, cursor }
    }
}

impl From<&str> for LineEdit {
    fn from(text: &str) -> Self {
        LineEdit::from(text.to_string())
    }
}

/// Read as the text it holds (`trim`, `is_empty`, `split`, …).
impl std::ops::Deref for LineEdit {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for LineEdit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq<str> for LineEdit {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for LineEdit {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

//! Copy mode: a cursor that walks the screen and its scrollback, a
//! selection, and search. Lines are numbered as in [`Grid::line_text`]: 0
//! is the screen's top row, negative lines are in the scrollback.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::term::Size;
use crate::term::grid::Grid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Point {
    pub line: isize,
    pub col: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyMode {
    pub cursor: Point,
    pub anchor: Option<Point>,
    /// The search being typed after `/` or `?`.
    pub typing: Option<String>,
    pub last_search: Option<String>,
    /// The last search went up, to older lines (`?`); `/` goes down, as in
    /// vi and tmux. `n` goes the same way again, `N` the other.
    pub backward: bool,
    /// One sentence about the last action ("no match for …").
    pub note: Option<String>,
}

/// What a key in copy mode leads to.
#[derive(Debug, PartialEq, Eq)]
pub enum CopyOutcome {
    Stay,
    Leave,
    /// Copy this text to the user's clipboard and leave.
    Copy(String),
}

impl CopyMode {
    /// Starts at the remote cursor (or the top of the view when scrolled back).
    pub fn new(pane: &Grid) -> CopyMode {
        let offset = pane.view_offset() as isize;
        let (row, col) = pane.screen().cursor_position();
        let cursor = if offset > 0 {
            Point {
                line: -offset,
                col: 0,
            }
        } else {
            Point {
                line: ((row) as isize),
                col,
            }
        };
        CopyMode {
            cursor,
            anchor: None,
            typing: None,
            last_search: None,
            backward: false,
            note: None,
        }
    }

    pub fn on_key(&mut self, key: KeyEvent, pane: &mut Grid) -> CopyOutcome {
        if let Some(query) = &mut self.typing {
            match key.code {
                KeyCode::Esc => self.typing = None,
                KeyCode::Enter => {
                    let query = std::mem::take(query);
                    self.typing = None;
                    if !query.is_empty() {
                        self.last_search = Some(query);
                        self.search(pane, self.backward);
                    }
                }
                KeyCode::Backspace => {
                    query.pop();
                }
                KeyCode::Char(c) => query.push(c),
                _ => {}
            }
            return CopyOutcome::Stay;
        }
        self.note = None;
        let Size { cols, rows } = pane.size();
        let half = ((rows / 2) as isize).max(1);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return CopyOutcome::Leave,
            KeyCode::Enter | KeyCode::Char('y') => {
                return match self.selection() {
                    Some((from, to)) => CopyOutcome::Copy(selected_text(pane, from, to)),
                    None => CopyOutcome::Leave,
                };
            }
            KeyCode::Char('v') | KeyCode::Char(' ') => {
                self.anchor = match self.anchor {
                    Some(_) => None,
                    None => Some(self.cursor),
                }
            }
            KeyCode::Char('u') if ctrl => self.move_lines(pane, -half),
            KeyCode::Char('d') if ctrl => self.move_lines(pane, half),
            KeyCode::Up | KeyCode::Char('k') => self.move_lines(pane, -1),
            KeyCode::Down | KeyCode::Char('j') => self.move_lines(pane, 1),
            KeyCode::PageUp => self.move_lines(pane, -(rows as isize)),
            KeyCode::PageDown => self.move_lines(pane, rows as isize),
            KeyCode::Left | KeyCode::Char('h') => {
                self.cursor.col = self.cursor.col.saturating_sub(1)
            }
            KeyCode::Right | KeyCode::Char('l') => {
                self.cursor.col = (self.cursor.col + 1).min(cols.saturating_sub(1))
            }
            KeyCode::Home | KeyCode::Char('0') => self.cursor.col = 0,
            KeyCode::End | KeyCode::Char('$') => {
                self.cursor.col = pane.line_end(self.cursor.line);
            }
            KeyCode::Char('g') => self.move_lines(pane, isize::MIN / 2),
            KeyCode::Char('G') => self.move_lines(pane, isize::MAX / 2),
            KeyCode::Char(c @ ('/' | '?')) => {
                self.backward = c == '?';
                self.typing = Some(String::new());
            }
            KeyCode::Char('n') => self.search(pane, self.backward),
            KeyCode::Char('N') => self.search(pane, !self.backward),
            _ => {}
        }
        CopyOutcome::Stay
    }

    /// The selection, ordered, if one is being made.
    pub fn selection(&self) -> Option<(Point, Point)> {
        let anchor = self.anchor?;
        Some(if anchor <= self.cursor {
            (anchor, self.cursor)
        } else {
            (self.cursor, anchor)
        })
    }

    pub fn is_selected(&self, line: isize, col: u16) -> bool {
        let point = Point { line, col };
        self.selection()
            .is_some_and(|(from, to)| from <= point && point <= to)
    }

    fn move_lines(&mut self, pane: &mut Grid, by: isize) {
        let Size { rows, .. } = pane.size();
        let top = -(pane.history_len() as isize);
        let bottom = ((rows) as isize) - 1;
        self.cursor.line = self.cursor.line.saturating_add(by).clamp(top, bottom);
        follow(pane, self.cursor.line);
    }

    /// Moves to the next line holding the last search, older (`up`) or
    /// newer, going round past either end as vi and tmux do (and saying
    /// so). Lower-case queries match either case.
    fn search(&mut self, pane: &mut Grid, up: bool) {
        let Some(query) = self.last_search.clone() else {
            self.note = Some("Nothing to search for yet: press / and type.".into());
            return;
        };
        let fold = !query.chars().any(char::is_uppercase);
        let needle = if fold {
            query.to_lowercase()
        } else {
            query.clone()
        };
        let Size { cols, rows } = pane.size();
        let top = -(pane.history_len() as isize);
        let bottom = ((rows) as isize) - 1;
        let mut line = self.cursor.line;
        let mut wrapped = false;
        self.note = None;
        for _ in 0..=(bottom - top) {
            line += if up { -1 } else { 1 };
            if line < top || line > bottom {
                line = if up { bottom } else { top };
                wrapped = true;
            }
            let text = pane.line_text(line, 0, cols);
            let hay = if fold { text.to_lowercase() } else { text };
            if let Some(byte) = hay.find(&needle) {
                let index = hay[..byte].chars().count();
                self.cursor = Point {
                    line,
                    col: pane.column_of(line, index),
                };
                follow(pane, line);
                if wrapped {
                    self.note = Some(if up {
                        "Search hit the top, went on from the bottom.".into()
                    } else {
                        "Search hit the bottom, went on from the top.".into()
                    });
                }
                return;
            }
        }
        self.note = Some(format!("No match for {query:?}."));
    }
}

/// Scrolls the view just enough that `line` is on screen.
fn follow(pane: &mut Grid, line: isize) {
    let Size { rows, .. } = pane.size();
    let offset = pane.view_offset() as isize;
    let first = -offset;
    let last = first + ((rows) as isize) - 1;
    let next = if line < first {
        -line
    } else if line > last {
        (((rows) as isize) - 1 - line).max(0)
    } else {
        offset
    };
    if next != offset {
        pane.set_view_offset(next.max(0) as usize);
    }
}

/// The text between two points, inclusive, as a terminal selects it: the
/// first line from its column, whole lines between, the last line up to
/// its column; trailing blanks dropped.
fn selected_text(pane: &mut Grid, from: Point, to: Point) -> String {
    let Size { cols, .. } = pane.size();
    let mut lines = Vec::new();
    for line in from.line..=to.line {
        let start = if line == from.line { from.col } else { 0 };
        let end = if line == to.line {
            (to.col + 1).min(cols)
        } else {
            cols
        };
        lines.push(pane.line_text(line, start, end).trim_end().to_string());
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(mode: &mut CopyMode, pane: &mut Grid, keys: &str) -> CopyOutcome {
        let mut last = CopyOutcome::Stay;
        for c in keys.chars() {
            let code = match c {
                '\n' => KeyCode::Enter,
                c => KeyCode::Char(c),
            };
            last = mode.on_key(KeyEvent::new(code, KeyModifiers::NONE), pane);
        }
        last
    }

    fn pane_with_history() -> Grid {
        let mut pane = Grid::new(Size::new(20, 3), 100);
        for i in 0..10 {
            pane.feed(format!("line {i}\r\n").as_bytes());
        }
        pane.feed(b"$ ");
        pane
    }

    #[test]
    fn selects_across_lines_into_the_scrollback_and_copies() {
        let mut pane = pane_with_history();
        let mut mode = CopyMode::new(&pane);
        assert_eq!(mode.cursor, Point { line: 2, col: 2 });
        // Up three lines (into the scrollback), line start, select to the end of the next line.
        press(&mut mode, &mut pane, "kkk0vj$");
        assert!(pane.scrolled_back(), "the view follows the cursor");
        let outcome = press(&mut mode, &mut pane, "y");
        assert_eq!(outcome, CopyOutcome::Copy("line 7\nline 8".into()));
    }

    #[test]
    fn search_walks_older_then_newer_matches() {
        let mut pane = pane_with_history();
        let mut mode = CopyMode::new(&pane);
        press(&mut mode, &mut pane, "/LINE 3\n");
        assert!(mode.note.is_some(), "upper case is exact: no match");
        press(&mut mode, &mut pane, "/line 3\n");
        assert_eq!(mode.cursor.line, -5, "{:?}", mode.note);
        assert_eq!(pane.line_text(mode.cursor.line, 0, 20).trim(), "line 3");
        // `?` goes up to older lines, `n` on the same way, `N` back.
        press(&mut mode, &mut pane, "?line\nn");
        assert_eq!(pane.line_text(mode.cursor.line, 0, 20).trim(), "line 1");
        press(&mut mode, &mut pane, "N");
        assert_eq!(pane.line_text(mode.cursor.line, 0, 20).trim(), "line 2");
        assert_eq!(press(&mut mode, &mut pane, "q"), CopyOutcome::Leave);
    }

    #[test]
    fn slash_searches_down_from_the_top_and_goes_round() {
        let mut pane = pane_with_history();
        let mut mode = CopyMode::new(&pane);
        press(&mut mode, &mut pane, "g/line 4\n");
        assert_eq!(pane.line_text(mode.cursor.line, 0, 20).trim(), "line 4");
        assert_eq!(mode.note, None);
        press(&mut mode, &mut pane, "n");
        assert_eq!(pane.line_text(mode.cursor.line, 0, 20).trim(), "line 4");
        assert!(
            mode.note
                .as_deref()
                .unwrap_or_default()
                .contains("went on from the top")
        );
        press(&mut mode, &mut pane, "/nothing\n");
        assert_eq!(mode.note.as_deref(), Some("No match for \"nothing\"."));
    }

    #[test]
    fn wide_characters_are_copied_whole() {
        let mut pane = Grid::new(Size::new(20, 2), 10);
        pane.feed("漢字 ok".as_bytes());
        let mut mode = CopyMode::new(&pane);
        press(&mut mode, &mut pane, "0v$");
        assert_eq!(
            press(&mut mode, &mut pane, "\n"),
            CopyOutcome::Copy("漢字 ok".into())
        );
    }
}

//! A scrollable, searchable text: the describe and YAML views, one event
//! read in full. Lines are wrapped at the view's width (by characters, as
//! `less` does), and scrolling counts wrapped rows, so a line longer than
//! the screen (a last-applied-configuration annotation) is read to its end.

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reader {
    lines: Vec<String>,
    /// The wrapped rows as (line, byte range), kept from one change of the
    /// text or the width to the next: a frame draws from them, it does not
    /// wrap the document again.
    spans: Vec<(usize, std::ops::Range<usize>)>,
    /// The first row shown.
    top: usize,
    /// The size the text is shown at (columns, rows), from the app's areas.
    width: usize,
    height: usize,
    /// The last search, for `n` and `N`.
    pub search: Option<String>,
    /// The row of the match last moved to (the view may not start there
    /// at the end of the text).
    hit: Option<usize>,
}

/// One wrapped row: the line it belongs to, and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row<'a> {
    pub line: usize,
    pub text: &'a str,
}

/// Scroll moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
}

impl Reader {
    pub fn new(lines: Vec<String>) -> Self {
        let mut reader = Reader {
            lines,
            ..Reader::default()
        };
        reader.rewrap();
        reader
    }

    /// New text, the position kept (a live view updating under the reader).
    pub fn replace(&mut self, lines: Vec<String>) {
        self.lines = lines;
        self.rewrap();
        self.clamp();
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    pub fn top(&self) -> usize {
        self.top
    }

    /// Sets the size the text is shown at; the position stays in range.
    pub fn fit(&mut self, width: usize, height: usize) {
        let (width, height) = (width.max(1), height.max(1));
        if (width, height) != (self.width, self.height) {
            let rewrap = width != self.width;
            self.width = width;
            self.height = height;
            if rewrap {
                self.rewrap();
            }
            self.clamp();
        }
    }

    /// Every row at the current width.
    pub fn rows(&self) -> Vec<Row<'_>> {
        self.rows_in(0, self.spans.len())
    }

    /// At most `count` rows from row `from` on: what a frame shows.
    pub fn rows_in(&self, from: usize, count: usize) -> Vec<Row<'_>> {
        let end = from.saturating_add(count).min(self.spans.len());
        self.spans[from.min(end)..end]
            .iter()
            .map(|(line, range)| Row {
                line: *line,
                text: &self.lines[*line][range.clone()],
            })
            .collect()
    }

    pub fn row_count(&self) -> usize {
        self.spans.len()
    }

    /// Wraps the lines at the width (each whole before the width is known).
    fn rewrap(&mut self) {
        let width = if self.width == 0 {
            usize::MAX
        } else {
            self.width
        };
        self.spans.clear();
        for (line, text) in self.lines.iter().enumerate() {
            if text.is_empty() {
                self.spans.push((line, 0..0));
                continue;
            }
            let mut start = 0;
            while start < text.len() {
                let end = text[start..]
                    .char_indices()
                    .nth(width)
                    .map_or(text.len(), |(i, _)| start + i);
                self.spans.push((line, start..end));
                start = end;
            }
        }
    }

    pub fn scroll(&mut self, how: Scroll) {
        // `n` then searches from where the reader is, not the last match.
        self.hit = None;
        let page = self.height.saturating_sub(1).max(1);
        self.top = match how {
            Scroll::Up => self.top.saturating_sub(1),
            Scroll::Down => self.top + 1,
            Scroll::PageUp => self.top.saturating_sub(page),
            Scroll::PageDown => self.top + page,
            Scroll::Top => 0,
            Scroll::Bottom => usize::MAX,
        };
        self.clamp();
    }

    /// Moves to the next row (or the previous with `backwards`) that holds
    /// `query`, ignoring case; false when no row does.
    pub fn find(&mut self, query: &str, backwards: bool) -> bool {
        let query = query.to_lowercase();
        if query.is_empty() {
            return false;
        }
        // A new search starts from the top row shown; `n` from the last match.
        let continuing = self.search.as_deref() == Some(query.as_str()) && self.hit.is_some();
        let from = match self.hit {
            Some(hit) if continuing => hit,
            _ => self.top,
        };
        let new_search = !continuing;
        self.search = Some(query.clone());
        let rows = self.rows();
        let hits: Vec<usize> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.text.to_lowercase().contains(&query))
            .map(|(i, _)| i)
            .collect();
        let next = if backwards {
            hits.iter().rev().find(|&&i| i < from).or(hits.last())
        } else if new_search {
            hits.iter().find(|&&i| i >= from).or(hits.first())
        } else {
            hits.iter().find(|&&i| i > from).or(hits.first())
        };
        match next {
            Some(&row) => {
                self.top = row;
                self.hit = Some(row);
                self.clamp();
                true
            }
            None => false,
        }
    }

    fn clamp(&mut self) {
        self.top = self
            .top
            .min(self.spans.len().saturating_sub(self.height.max(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(lines: &[&str], width: usize, height: usize) -> Reader {
        let mut r = Reader::new(lines.iter().map(|l| l.to_string()).collect());
        r.fit(width, height);
        r
    }

    #[test]
    fn a_line_longer_than_the_screen_is_read_to_its_end() {
        let long = "x".repeat(95) + "END";
        let mut r = reader(&["a", &long, "b"], 10, 3);
        // 1 + 10 + 1 rows; the last three are shown at the bottom.
        r.scroll(Scroll::Bottom);
        let rows = r.rows();
        assert_eq!(rows.len(), 12);
        let shown: Vec<&str> = rows[r.top()..].iter().map(|r| r.text).collect();
        assert_eq!(shown, ["xxxxxxxxxx", "xxxxxEND", "b"]);
    }

    #[test]
    fn search_moves_to_the_next_match_and_wraps_around() {
        let mut r = reader(&["one", "two", "three", "two again", "end"], 20, 2);
        assert!(r.find("TWO", false));
        assert_eq!(r.top(), 1);
        assert!(r.find("two", false));
        assert_eq!(r.top(), 3);
        // Past the last match: back to the first.
        assert!(r.find("two", false));
        assert_eq!(r.top(), 1);
        assert!(!r.find("absent", false));
    }

    #[test]
    fn n_goes_on_from_a_match_on_the_last_page_and_wraps() {
        let mut r = reader(&["two", "x", "x", "x", "two", "two"], 20, 3);
        assert!(r.find("two", false));
        assert_eq!(r.top(), 0);
        assert!(r.find("two", false));
        // Row 4 is on the last page, which starts at row 3.
        assert_eq!(r.top(), 3);
        assert!(r.find("two", false));
        assert_eq!(r.top(), 3, "row 5, on the same last page");
        assert!(r.find("two", false));
        assert_eq!(r.top(), 0, "past the last match, back to the first");
    }

    #[test]
    fn new_text_keeps_the_position_in_range() {
        let mut r = reader(&["1", "2", "3", "4", "5", "6"], 5, 2);
        r.scroll(Scroll::PageDown);
        r.scroll(Scroll::PageDown);
        assert_eq!(r.top(), 2);
        r.replace(vec!["only".into(), "two".into()]);
        assert_eq!(r.top(), 0);
    }
}

//! A terminal's grid: the vt100 emulator fed with its remote output, drawn
//! cell by cell into ratatui (by a pane, or several). Nothing the remote sends reaches the user's terminal
//! as bytes: clipboard writes (OSC 52), title changes and other escape
//! sequences only change the emulator's state, and only cells are drawn.

use std::num::NonZeroU16;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

use super::Size;
use super::line_cut::LineCut;

pub const DEFAULT_SCROLLBACK: usize = 10_000;

/// How much of a log a grid keeps to lay out again at a new width: more
/// than its scrollback holds of most logs.
const RECORD_BYTES: usize = 4 << 20;

/// One terminal's emulator: its screen, its scrollback and the view into it.
pub struct Grid {
    parser: vt100::Parser,
    scrollback: usize,
    /// A log's output, kept to lay it out again when the width changes;
    /// `None` for a program's terminal, whose screen the program redraws.
    record: Option<Record>,
    /// A log's lines cut at the width instead of wrapped.
    cut: Option<LineCut>,
    /// What a cut leaves of a chunk, reused chunk after chunk.
    scratch: Vec<u8>,
}

/// The newest output fed, at most [`RECORD_BYTES`] of it, from a line's
/// start: one ring of bytes, so the pane's byte path allocates nothing.
#[derive(Default)]
struct Record {
    bytes: std::collections::VecDeque<u8>,
}

impl Record {
    fn push(&mut self, bytes: &[u8]) {
        self.bytes.extend(bytes);
        let over = self.bytes.len().saturating_sub(RECORD_BYTES);
        if over > 0 {
            // What is dropped goes to the end of its line: a replay starts
            // at a line's start.
            let line_end = self
                .bytes
                .range(over..)
                .position(|b| *b == b'\n')
                .map_or(self.bytes.len(), |i| over + i + 1);
            self.bytes.drain(..line_end);
        }
    }

    /// Feeds what is kept to `parser`, through `cut` from its start if
    /// lines are cut.
    fn replay(&self, parser: &mut vt100::Parser, cut: Option<&mut LineCut>) {
        let (front, back) = self.bytes.as_slices();
        match cut {
            None => {
                parser.process(front);
                parser.process(back);
            }
            Some(cut) => {
                *cut = LineCut::default();
                let width = usize::from(parser.screen().size().1.get());
                let mut kept = Vec::new();
                for part in [front, back] {
                    for chunk in part.chunks(64 << 10) {
                        kept.clear();
                        cut.feed(chunk, width, &mut kept);
                        parser.process(&kept);
                    }
                }
            }
        }
    }
}

impl Grid {
    pub fn new(size: Size, scrollback: usize) -> Grid {
        Grid {
            parser: vt100::Parser::new(nonzero(size.rows), nonzero(size.cols), scrollback),
            scrollback,
            record: None,
            cut: None,
            scratch: Vec::new(),
        }
    }

    /// A log's grid: its lines are laid out again (wrapped anew) when its
    /// width changes, as a log is lines, not a screen.
    pub fn for_log(size: Size, scrollback: usize) -> Grid {
        Grid {
            record: Some(Record::default()),
            ..Grid::new(size, scrollback)
        }
    }

    /// An empty grid of `size`, as this one is (a log's or not, its lines
    /// cut or not).
    pub fn renewed(&self, size: Size) -> Grid {
        Grid {
            record: self.record.as_ref().map(|_| Record::default()),
            cut: self.cut.as_ref().map(|_| LineCut::default()),
            ..Grid::new(size, self.scrollback)
        }
    }

    /// Cuts a log's lines at the width (or wraps them again), what was fed
    /// before too; a program's screen is left as it is.
    pub fn set_cut(&mut self, cut: bool) {
        if self.record.is_none() || cut == self.cut.is_some() {
            return;
        }
        self.cut = cut.then(LineCut::default);
        self.lay_out_again(self.size());
    }

    /// Whether a log's lines are cut at the width.
    pub fn is_cut(&self) -> bool {
        self.cut.is_some()
    }

    /// Feeds remote output. Any byte sequence is accepted.
    pub fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Some(record) = &mut self.record {
            record.push(bytes);
        }
        let width = usize::from(self.size().cols);
        match &mut self.cut {
            Some(cut) => {
                self.scratch.clear();
                cut.feed(bytes, width, &mut self.scratch);
                self.parser.process(&self.scratch);
            }
            None => self.parser.process(bytes),
        }
    }

    /// A log's kept output laid out anew at `size`, the view at its newest line.
    fn lay_out_again(&mut self, size: Size) {
        let Some(record) = &self.record else {
            return;
        };
        let mut parser =
            vt100::Parser::new(nonzero(size.rows), nonzero(size.cols), self.scrollback);
        record.replay(&mut parser, self.cut.as_mut());
        self.parser = parser;
    }

    /// Resizes the emulator; true if the size changed (and the remote should be told).
    /// A log's lines are laid out again at the new width, the view back at
    /// its newest line.
    pub fn resize(&mut self, size: Size) -> bool {
        if self.size() == Size::new(size.cols.max(1), size.rows.max(1)) {
            return false;
        }
        if self.record.is_some() && self.size().cols != size.cols.max(1) {
            self.lay_out_again(size);
        } else {
            self.parser.set_size(nonzero(size.rows), nonzero(size.cols));
        }
        true
    }

    pub fn size(&self) -> Size {
        let (rows, cols) = self.parser.screen().size();
        Size::new(cols.get(), rows.get())
    }

    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// Whether the remote program asked for application cursor keys.
    pub fn application_cursor(&self) -> bool {
        self.parser.screen().application_cursor()
    }

    pub fn bracketed_paste(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    /// Scrolls the view into the scrollback by `lines` (negative: towards now).
    pub fn scroll(&mut self, lines: isize) {
        let current = self.parser.screen().scrollback() as isize;
        let next = (current + lines).clamp(0, self.scrollback as isize) as usize;
        self.parser.screen_mut().set_scrollback(next);
    }

    pub fn scrolled_back(&self) -> bool {
        self.parser.screen().scrollback() > 0
    }

    /// The visible text, for tests and accessibility.
    pub fn text(&self) -> String {
        self.parser.screen().contents()
    }

    /// Lines kept above the screen.
    pub fn history_len(&self) -> usize {
        self.parser.screen().scrollback_len()
    }

    /// How far the view is scrolled into the scrollback.
    pub fn view_offset(&self) -> usize {
        self.parser.screen().scrollback()
    }

    pub fn set_view_offset(&mut self, offset: usize) {
        self.parser.screen_mut().set_scrollback(offset);
    }

    /// Runs `f` on the screen scrolled so that line `y` is visible, with
    /// its row; 0 is the screen's top row, negative lines are in the
    /// scrollback (-1 the newest).
    fn at_line<R>(&mut self, y: isize, f: impl FnOnce(&vt100::Screen, u16) -> R) -> R {
        let keep = self.view_offset();
        let (offset, row) = if y < 0 {
            (y.unsigned_abs(), 0)
        } else {
            (0, y.min(u16::MAX as isize) as u16)
        };
        self.parser.screen_mut().set_scrollback(offset);
        let out = f(self.parser.screen(), row);
        self.parser.screen_mut().set_scrollback(keep);
        out
    }

    /// The text of columns `from..to` of line `y`.
    pub fn line_text(&mut self, y: isize, from: u16, to: u16) -> String {
        self.at_line(y, |screen, row| {
            screen
                .rows(from, to.saturating_sub(from))
                .nth(usize::from(row))
                .unwrap_or_default()
        })
    }

    /// The column of the `index`th character of line `y`'s text (wide
    /// characters take two columns).
    pub fn column_of(&mut self, y: isize, index: usize) -> u16 {
        let Size { cols, .. } = self.size();
        self.at_line(y, |screen, row| {
            (0..cols)
                .filter(|&col| {
                    screen
                        .cell(row, col)
                        .is_some_and(|c| !c.is_wide_continuation())
                })
                .nth(index)
                .unwrap_or(cols.saturating_sub(1))
        })
    }

    /// The column of the last non-blank cell of line `y`.
    pub fn line_end(&mut self, y: isize) -> u16 {
        let Size { cols, .. } = self.size();
        self.at_line(y, |screen, row| {
            (0..cols)
                .rev()
                .find(|&col| screen.cell(row, col).is_some_and(|c| c.has_contents()))
                .unwrap_or(0)
        })
    }

    /// Whether the remote asked for mouse reports, and how to encode them.
    pub fn mouse_reporting(
        &self,
    ) -> Option<(vt100::MouseProtocolMode, vt100::MouseProtocolEncoding)> {
        let screen = self.parser.screen();
        match screen.mouse_protocol_mode() {
            vt100::MouseProtocolMode::None => None,
            mode => Some((mode, screen.mouse_protocol_encoding())),
        }
    }
}

fn nonzero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n.max(1)).unwrap_or(NonZeroU16::MIN)
}

/// Draws a grid's screen into an area; returns nothing to the terminal but cells.
pub struct GridView<'a> {
    pub grid: &'a Grid,
}

impl GridView<'_> {
    /// Where to put the real cursor, if the remote shows one and the view is live.
    pub fn cursor(&self, area: Rect) -> Option<(u16, u16)> {
        let screen = self.grid.screen();
        if screen.hide_cursor() || self.grid.scrolled_back() {
            return None;
        }
        let (row, col) = screen.cursor_position();
        (row < area.height && col < area.width).then_some((area.x + col, area.y + row))
    }
}

impl Widget for GridView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let screen = self.grid.screen();
        let Size { cols, rows } = self.grid.size();
        for row in 0..rows.min(area.height) {
            for col in 0..cols.min(area.width) {
                let Some(cell) = screen.cell(row, col) else {
                    continue;
                };
                if cell.is_wide_continuation() {
                    continue;
                }
                let Some(target) = buf.cell_mut((area.x + col, area.y + row)) else {
                    continue;
                };
                let contents = drawable(cell.contents());
                target.set_symbol(if contents.is_empty() { " " } else { &contents });
                target.set_style(style_of(cell));
            }
        }
    }
}

/// A cell's text as the user's terminal gets it. Bidi controls never go
/// through: they would reorder what the user's terminal draws after them,
/// outside the pane. Nor do zero-width spaces, word joiners and byte-order
/// marks, which hide text. The zero-width joiner and non-joiner stay: emoji
/// sequences and scripts need them.
fn drawable(contents: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        matches!(c,
            '\u{061c}' | '\u{200e}' | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200b}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
    };
    if contents.is_ascii() || !contents.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(contents);
    }
    std::borrow::Cow::Owned(contents.chars().filter(|&c| !hidden(c)).collect())
}

fn style_of(cell: &vt100::Cell) -> Style {
    let mut style = Style::default()
        .fg(color(cell.fgcolor()))
        .bg(color(cell.bgcolor()));
    let flags = [
        (cell.bold(), Modifier::BOLD),
        (cell.dim(), Modifier::DIM),
        (cell.italic(), Modifier::ITALIC),
        (cell.underline(), Modifier::UNDERLINED),
        (cell.inverse(), Modifier::REVERSED),
    ];
    for (on, m) in flags {
        if on {
            style = style.add_modifier(m);
        }
    }
    style
}

fn color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The screen's rows as drawn, blank ones left out.
    fn rows(grid: &Grid) -> Vec<String> {
        let cols = grid.size().cols;
        grid.screen()
            .rows(0, cols)
            .filter(|r| !r.trim().is_empty())
            .collect()
    }

    #[test]
    fn a_logs_lines_are_wrapped_anew_at_a_new_width_and_a_screens_are_not() {
        let (a, b) = ("a".repeat(30), "b".repeat(5));
        let line = format!("{a}\r\n{b}\r\n");
        let mut log = Grid::for_log(Size::new(20, 6), 100);
        log.feed(line.as_bytes());
        assert_eq!(rows(&log), ["a".repeat(20), "a".repeat(10), b.clone()]);
        assert!(log.resize(Size::new(40, 6)));
        assert_eq!(rows(&log), [a.clone(), b.clone()]);
        // Narrower again: wrapped again, nothing lost or doubled.
        log.resize(Size::new(10, 6));
        assert_eq!(
            rows(&log),
            ["a".repeat(10), "a".repeat(10), "a".repeat(10), b.clone()]
        );
        // A renewed log grid starts empty and still reflows.
        let mut renewed = log.renewed(Size::new(20, 6));
        assert!(rows(&renewed).is_empty());
        renewed.feed(line.as_bytes());
        renewed.resize(Size::new(40, 6));
        assert_eq!(rows(&renewed), [a.clone(), b.clone()]);

        let mut screen = Grid::new(Size::new(20, 6), 100);
        screen.feed(line.as_bytes());
        screen.resize(Size::new(40, 6));
        assert_eq!(
            rows(&screen),
            ["a".repeat(20), "a".repeat(10), b],
            "a program's screen is its own to redraw"
        );
    }

    #[test]
    fn a_logs_cut_lines_are_cut_anew_at_a_new_width_and_wrapped_again_on_demand() {
        let line = format!("{}\x1b[0m\r\n{}\r\n", "a".repeat(30), "b".repeat(5));
        let mut log = Grid::for_log(Size::new(20, 6), 100);
        log.feed(line.as_bytes());
        log.set_cut(true);
        assert!(log.is_cut());
        assert_eq!(rows(&log), ["a".repeat(20), "b".repeat(5)]);
        // Fed after the cut, split mid-line: cut as one line.
        let (first, second) = line.as_bytes().split_at(12);
        log.feed(first);
        log.feed(second);
        assert_eq!(rows(&log)[2..], ["a".repeat(20), "b".repeat(5)]);
        // Wider: the kept lines are cut at the new width, not the old one.
        log.resize(Size::new(25, 6));
        assert_eq!(rows(&log)[..2], ["a".repeat(25), "b".repeat(5)]);
        // A renewed grid (the log read again) keeps cutting.
        assert!(log.renewed(Size::new(20, 6)).is_cut());
        log.set_cut(false);
        assert!(
            rows(&log).ends_with(&["a".repeat(25), "a".repeat(5), "b".repeat(5)]),
            "{:?}",
            rows(&log)
        );
        // A program's screen has no lines to cut.
        let mut screen = Grid::new(Size::new(20, 6), 100);
        screen.set_cut(true);
        assert!(!screen.is_cut());
    }

    #[test]
    fn a_log_keeps_only_its_newest_bytes_to_lay_out_again() {
        let mut record = Record::default();
        let mut chunk = vec![b'x'; (1 << 20) - 1];
        chunk.push(b'\n');
        for _ in 0..6 {
            record.push(&chunk);
        }
        assert!(record.bytes.len() <= RECORD_BYTES, "{}", record.bytes.len());
        assert!(record.bytes.len() >= RECORD_BYTES - (1 << 20));
        // It starts at a line's start: the byte before it was a newline.
        assert_eq!(record.bytes.len() % (1 << 20), 0);
    }

    fn draw(pane: &Grid) -> Buffer {
        let Size { cols, rows } = pane.size();
        let area = Rect::new(0, 0, cols, rows);
        let mut buf = Buffer::empty(area);
        GridView { grid: pane }.render(area, &mut buf);
        buf
    }

    #[test]
    fn colours_attributes_and_wide_characters_become_cells() {
        let mut pane = Grid::new(Size::new(20, 3), 100);
        pane.feed("\x1b[1;31mred\x1b[0m \x1b[38;5;208mo\x1b[38;2;1;2;3mt\x1b[0m 漢x".as_bytes());
        let buf = draw(&pane);
        assert_eq!(buf[(0, 0)].symbol(), "r");
        assert_eq!(buf[(0, 0)].fg, Color::Indexed(1));
        assert!(buf[(0, 0)].modifier.contains(Modifier::BOLD));
        assert_eq!(buf[(4, 0)].fg, Color::Indexed(208));
        assert_eq!(buf[(5, 0)].fg, Color::Rgb(1, 2, 3));
        assert_eq!(buf[(7, 0)].symbol(), "漢");
        assert_eq!(
            buf[(9, 0)].symbol(),
            "x",
            "the wide character takes two columns"
        );
    }

    #[test]
    fn remote_escape_sequences_never_act_on_the_users_terminal() {
        let mut pane = Grid::new(Size::new(30, 2), 0);
        // OSC 52 clipboard write, OSC 0/2 title, DCS, then text.
        pane.feed(
            b"\x1b]52;c;aGVsbG8=\x07\x1b]0;owned\x07\x1b]2;title\x1b\\\x1bPq#0;1;1\x1b\\safe",
        );
        assert_eq!(pane.text().trim(), "safe");
        let buf = draw(&pane);
        let row: String = (0..30).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(row.trim(), "safe");
        assert!(!row.contains('\x1b'));
    }

    #[test]
    fn bidi_controls_and_hiding_characters_never_reach_the_users_terminal() {
        let mut pane = Grid::new(Size::new(30, 1), 0);
        pane.feed("a\u{202e}bc\u{2066}d\u{200b}e\u{feff}f 👩\u{200d}💻 g".as_bytes());
        let buf = draw(&pane);
        let row: String = (0..30).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        for hidden in ['\u{202e}', '\u{2066}', '\u{200b}', '\u{feff}'] {
            assert!(!row.contains(hidden), "{hidden:?} in {row:?}");
        }
        assert!(row.contains("bc") && row.contains('f'), "{row:?}");
        assert!(
            row.contains('\u{200d}'),
            "the joiner of an emoji stays: {row:?}"
        );
    }

    #[test]
    fn resize_reports_changes_and_modes_are_visible() {
        let mut pane = Grid::new(Size::new(80, 24), 10);
        assert!(!pane.resize(Size::new(80, 24)));
        assert!(pane.resize(Size::new(100, 30)));
        assert_eq!(pane.size(), Size::new(100, 30));
        assert!(!pane.application_cursor());
        pane.feed(b"\x1b[?1h\x1b[?2004h");
        assert!(pane.application_cursor() && pane.bracketed_paste());
        assert!(
            pane.resize(Size::new(0, 0)),
            "a zero size is clamped, never a panic"
        );
        assert_eq!(pane.size(), Size::new(1, 1));
    }

    #[test]
    fn scrollback_moves_the_view_and_hides_the_cursor() {
        let mut pane = Grid::new(Size::new(10, 2), 50);
        for i in 0..10 {
            pane.feed(format!("line{i}\r\n").as_bytes());
        }
        let area = Rect::new(0, 0, 10, 2);
        assert!(GridView { grid: &pane }.cursor(area).is_some());
        pane.scroll(3);
        assert!(pane.scrolled_back());
        assert!(pane.text().contains("line6"), "{}", pane.text());
        assert!(GridView { grid: &pane }.cursor(area).is_none());
        pane.scroll(-100);
        assert!(!pane.scrolled_back());
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut pane = Grid::new(Size::new(7, 3), 5);
        let mut rng = fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1d);
        for round in 0..2_000 {
            let chunk: Vec<u8> = (0..(round % 64)).map(|_| rng.u8(..)).collect();
            let seed = rng.u64(..);
            pane.feed(&chunk);
            if round % 97 == 0 {
                pane.resize(Size::new((seed % 11) as u16, (seed % 5) as u16));
            }
            let _ = draw(&pane);
        }
    }
}

//! A text being read (describe, YAML, one event in full): a title row with
//! where the reader is, then the wrapped rows, search matches highlighted.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::reader::Reader;
use crate::theme::Theme;

/// Draws `reader` under `title`; `waiting` replaces the text until it
/// arrives (loading, gone, refused).
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    waiting: Option<(&str, ratatui::style::Style)>,
    reader: &Reader,
    theme: &Theme,
) {
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let total = reader.row_count();
    let top = reader.top().min(total);
    let shown = reader.rows_in(top, usize::from(body.height));
    let position = if total == 0 {
        String::new()
    } else {
        format!("  {}–{} of {total} rows", top + 1, top + shown.len())
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" {title}"), theme.title),
            Span::styled(position, theme.dim),
        ])),
        head,
    );
    if let Some((text, style)) = waiting {
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {text}"), style)),
            body,
        );
        return;
    }
    let search = reader.search.as_deref().unwrap_or_default();
    let lines: Vec<Line> = shown
        .iter()
        .map(|row| highlighted(row.text, search, theme))
        .collect();
    frame.render_widget(Paragraph::new(lines), body);
}

/// `text` with each occurrence of `search` (any case) in the match style.
fn highlighted<'a>(text: &'a str, search: &str, theme: &Theme) -> Line<'a> {
    // Lower-casing that changes byte offsets (rare scripts) is not highlighted.
    let same_offsets = text
        .chars()
        .all(|c| c.to_lowercase().map(char::len_utf8).sum::<usize>() == c.len_utf8());
    if search.is_empty() || !same_offsets {
        return Line::styled(text, theme.text);
    }
    let lower = text.to_lowercase();
    let mut spans = Vec::new();
    let mut at = 0;
    for (start, found) in lower.match_indices(search) {
        if start < at {
            continue;
        }
        spans.push(Span::styled(&text[at..start], theme.text));
        spans.push(Span::styled(
            &text[start..start + found.len()],
            theme
                .matched
                .add_modifier(ratatui::style::Modifier::REVERSED),
        ));
        at = start + found.len();
    }
    spans.push(Span::styled(&text[at..], theme.text));
    Line::from(spans)
}

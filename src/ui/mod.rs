//! Drawing only: `draw(frame, app, theme)` reads the state and paints it.

mod bars;
mod captures;
mod columns;
mod debuggers;
mod events_view;
mod files;
mod fleet;
mod form;
mod forwards;
mod help;
mod launcher;
mod nodes;
mod pod_list;
mod pod_view;
mod reader;
mod services;
#[cfg(test)]
mod snapshots;
mod text_table;
mod workloads;
mod workspace;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;

use crate::app::{App, Mode, Page, View};

use crate::theme::Theme;
pub use help::PANE_KEYS;

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme) {
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(2),
    ])
    .areas(frame.area());
    bars::header(frame, header, app, theme);
    let screen = frame.area();
    let areas = app.areas_for(crate::term::Size::new(screen.width, screen.height));
    if let Some(area) = areas.browser {
        match &app.view {
            View::Pods => pod_list::draw(frame, area, app, theme),
            View::Pod(view) => match &view.page {
                Page::Containers => pod_view::draw(frame, area, app, view, theme),
                Page::Describe(text) | Page::Yaml(text) => {
                    let what = if matches!(view.page, Page::Yaml(_)) {
                        "yaml"
                    } else {
                        "describe"
                    };
                    let title = format!("{what} pod {} (live)", view.key);
                    let waiting = match &view.trouble {
                        _ if view.pod.gone => Some(("This pod no longer exists.", theme.dim)),
                        Some(trouble) if view.pod.detail.is_none() => {
                            Some((trouble.as_str(), theme.warning))
                        }
                        _ if view.pod.detail.is_none() => Some(("Loading…", theme.dim)),
                        _ => None,
                    };
                    reader::draw(frame, area, &title, waiting, text, theme)
                }
            },
            View::Events(view) => match &view.reading {
                Some(text) => reader::draw(frame, area, "event", None, text, theme),
                None => events_view::draw(frame, area, app, view, theme),
            },
            View::Messages(text) => {
                reader::draw(frame, area, "messages of this run", None, text, theme)
            }
            View::Files(browser) => match &browser.reading {
                Some((path, text)) => reader::draw(frame, area, path, None, text, theme),
                None => files::draw(frame, area, browser, theme),
            },
            View::Forwards(view) => forwards::draw(frame, area, app, view, theme),
            View::Captures(view) => captures::draw(frame, area, app, view, theme),
            View::Debuggers(view) => debuggers::draw(frame, area, app, view, theme),
            View::Nodes(view) => match &view.reading {
                Some(text) => reader::draw(frame, area, "pods on the node", None, text, theme),
                None => nodes::draw(frame, area, app, view, theme),
            },
            View::Services(view) => match (&view.page, &view.reading) {
                (Some(page), _) => object_page(frame, area, page, theme),
                (None, Some(text)) => reader::draw(frame, area, "the Service", None, text, theme),
                (None, None) => services::draw(frame, area, app, view, theme),
            },
            View::Workloads(view) => match &view.reading {
                Some(page) => object_page(frame, area, page, theme),
                None => workloads::draw(frame, area, app, view, theme),
            },
        }
    }
    if let Some(area) = areas.workspace {
        workspace::draw(frame, area, app, theme);
    }
    bars::footer(frame, footer, app, theme);
    match &app.mode {
        Mode::Help(top) => help::draw(frame, screen, app, *top, theme),
        Mode::Launcher(form) => {
            launcher::draw(frame, areas.browser.unwrap_or(body), app, form, theme)
        }
        Mode::Fleet(form) => fleet::draw(frame, areas.browser.unwrap_or(body), form, theme),
        Mode::Capture(form) => {
            captures::draw_form(frame, areas.browser.unwrap_or(body), form, theme)
        }
        Mode::Forward(form) => {
            forwards::draw_form(frame, areas.browser.unwrap_or(body), form, theme)
        }
        Mode::NodeDebug(form) => {
            let several = app.shows_several();
            nodes::draw_form(frame, areas.browser.unwrap_or(body), (form, several), theme)
        }
        Mode::CopyPod(form) => {
            nodes::draw_copy_form(frame, areas.browser.unwrap_or(body), form, theme)
        }
        _ => {}
    }
}

/// A form's box: its lines, bordered, centred in `area` and sized to them.
/// A workload's or Service's page: loading until the read answers.
fn object_page(
    frame: &mut Frame,
    area: Rect,
    page: &crate::app::object_page::ObjectReading,
    theme: &Theme,
) {
    let waiting = page.loading.then_some(("Loading…", theme.dim));
    reader::draw(frame, area, &page.title(), waiting, &page.reader, theme);
}

fn form_box(frame: &mut Frame, area: Rect, lines: Vec<ratatui::text::Line<'_>>, theme: &Theme) {
    use ratatui::widgets::{Block, Borders, Clear, Paragraph};
    let width = lines
        .iter()
        .map(ratatui::text::Line::width)
        .max()
        .unwrap_or(40)
        .saturating_add(3) as u16;
    let height = lines.len() as u16 + 2;
    let rect = centered(area, width, height);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.border),
        ),
        rect,
    );
}

/// A `width`×`height` box centred in `area` (shrunk to fit).
fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// `line` broken into rows of at most `width` columns, at the last space
/// that fits when there is one; rows after the first hang three spaces
/// past the line's own indent (a JSON field's value stays under its
/// field), at most half the width. Styles are kept.
fn wrap(line: &Line, width: usize) -> Vec<Line<'static>> {
    let own = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars())
        .take_while(|c| *c == ' ')
        .count();
    let indent = " ".repeat((own + 3).min(width.max(2) / 2).max(1));
    let indent = indent.as_str();
    let width = width.max(indent.len() + 1);
    let cells: Vec<(char, ratatui::style::Style)> = line
        .spans
        .iter()
        .flat_map(|s| {
            let style = line.style.patch(s.style);
            s.content.chars().map(move |c| (c, style))
        })
        .collect();
    let mut rows = Vec::new();
    let mut rest = &cells[..];
    let mut first = true;
    loop {
        let room = if first { width } else { width - indent.len() };
        let (take, next) = if rest.len() <= room {
            (rest.len(), rest.len())
        } else {
            match rest[..=room].iter().rposition(|(c, _)| *c == ' ') {
                Some(space) if space > 0 => (space, space + 1),
                _ => (room, room),
            }
        };
        let mut spans: Vec<ratatui::text::Span<'static>> = Vec::new();
        if !first {
            spans.push(ratatui::text::Span::raw(indent.to_string()));
        }
        for (c, style) in &rest[..take] {
            match spans.last_mut() {
                Some(last) if last.style == *style => last.content.to_mut().push(*c),
                _ => spans.push(ratatui::text::Span::styled(c.to_string(), *style)),
            }
        }
        rows.push(Line::from(spans));
        rest = &rest[next..];
        first = false;
        if rest.is_empty() {
            return rows;
        }
    }
}

/// `text` in rows of at most `width` characters, broken at spaces where
/// possible; at least one row.
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut row_len = 0;
    for word in text.split(' ') {
        let mut word = word;
        loop {
            let len = word.chars().count();
            let gap = usize::from(row_len > 0);
            if row_len + gap + len <= width {
                if gap == 1 {
                    row.push(' ');
                }
                row.push_str(word);
                row_len += gap + len;
                break;
            }
            if row_len > 0 {
                rows.push(std::mem::take(&mut row));
                row_len = 0;
                continue;
            }
            // A word longer than the row: cut it.
            let cut_at = word
                .char_indices()
                .nth(width)
                .map_or(word.len(), |(i, _)| i);
            rows.push(word[..cut_at].to_string());
            word = &word[cut_at..];
            if word.is_empty() {
                break;
            }
        }
    }
    if row_len > 0 || rows.is_empty() {
        rows.push(row);
    }
    rows
}

/// A line being typed, the cursor (`▏`) where typing goes.
pub(crate) fn with_cursor(
    line: &crate::app::line::LineEdit,
    text: ratatui::style::Style,
    cursor: ratatui::style::Style,
) -> Vec<ratatui::text::Span<'static>> {
    let (before, after) = line.split_at_cursor();
    vec![
        ratatui::text::Span::styled(before.to_string(), text),
        ratatui::text::Span::styled("▏", cursor),
        ratatui::text::Span::styled(after.to_string(), text),
    ]
}

#[cfg(test)]
mod tests {
    use super::wrap;
    use ratatui::text::Line;

    fn rows(text: &str, width: usize) -> Vec<String> {
        wrap(&Line::from(text.to_string()), width)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn lines_wrap_at_spaces_with_an_indent_and_lose_nothing() {
        assert_eq!(rows("short", 20), ["short"]);
        assert_eq!(
            rows("the wheel scrolls the pane", 12),
            ["the wheel", "   scrolls", "   the pane"]
        );
        assert_eq!(rows("abcdefghij", 6), ["abcdef", "   ghi", "   j"]);
        // A field's value hangs under the field, past its indent.
        assert_eq!(
            rows("    \"command\": [\"sleep\", \"3600\"]", 24),
            ["    \"command\": [\"sleep\",", "       \"3600\"]"]
        );
    }
}

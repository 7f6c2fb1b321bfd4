//! The pod table: only the visible slice is built, matched characters are
//! highlighted, STATUS is coloured by health.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

use crate::app::{App, Connection, Scope};
use crate::model::{Health, PodRow};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if app.pods.visible_len() == 0 {
        let text = match (app.connection.state(), app.pods.query()) {
            (Connection::Connecting, _) => "Connecting to the cluster…".to_string(),
            (_, Some(q)) => format!("No pod matches {q:?}. Esc clears the filter."),
            _ => format!("No pods in {}.", scope_words(&app.scope)),
        };
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {text}"), theme.dim)),
            inner,
        );
        return;
    }
    let all_namespaces = !matches!(&app.scope, Scope::Namespaces(list) if list.len() == 1);
    let height = usize::from(inner.height.saturating_sub(1)).max(1);
    let offset = visible_offset(app.pods.cursor(), height, app.pods.visible_len());

    let mut header = vec![];
    let mut widths = vec![];
    if all_namespaces {
        header.push("NAMESPACE");
        widths.push(Constraint::Length(14));
    }
    header.extend([
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "NODE", "DEBUG",
    ]);
    widths.extend([
        Constraint::Min(24),
        Constraint::Length(6),
        Constraint::Length(18),
        Constraint::Length(14),
        Constraint::Length(7),
        Constraint::Length(12),
        Constraint::Length(5),
    ]);
    let rows = (offset..(offset + height).min(app.pods.visible_len())).filter_map(|i| {
        let (row, positions) = app.pods.visible(i)?;
        let style = if i == app.pods.cursor() {
            theme.selected
        } else {
            theme.text
        };
        let selected = i == app.pods.cursor();
        Some(table_row(row, &positions, all_namespaces, selected, app, theme).style(style))
    });
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.header))
        .column_spacing(1);
    frame.render_widget(table, inner);
}

/// Keeps the cursor on screen, scrolling as little as a k9s user expects:
/// pages move with the cursor, the last page is full.
fn visible_offset(cursor: usize, height: usize, len: usize) -> usize {
    let page_start = (cursor / height) * height;
    page_start.min(len.saturating_sub(height))
}

fn table_row<'a>(
    row: &'a PodRow,
    positions: &[usize],
    all_namespaces: bool,
    selected: bool,
    app: &App,
    theme: &Theme,
) -> Row<'a> {
    // On the selected row the selection's colours win: a status colour on
    // the selection's background can vanish (white on white in high-contrast).
    let accent = |style: Style| if selected { theme.selected } else { style };
    let ns_len = row.key.namespace.chars().count();
    let mut cells = Vec::with_capacity(8);
    if all_namespaces {
        let ns_positions: Vec<usize> = positions.iter().copied().filter(|p| *p < ns_len).collect();
        cells.push(Cell::from(highlighted(
            &row.key.namespace,
            &ns_positions,
            theme,
        )));
    }
    let name_positions: Vec<usize> = positions
        .iter()
        .filter(|p| **p > ns_len)
        .map(|p| p - ns_len - 1)
        .collect();
    cells.push(Cell::from(highlighted(
        &row.key.name,
        &name_positions,
        theme,
    )));
    cells.push(Cell::from(format!("{}/{}", row.ready, row.total)));
    let status_style = match row.health {
        Health::Good => theme.good,
        Health::Pending => theme.pending,
        Health::Failing => theme.failing,
        Health::Done => theme.done,
    };
    cells.push(Cell::from(Span::styled(
        row.status.to_string(),
        accent(status_style),
    )));
    let restarts_style = if row.restarts > 0 {
        theme.warning
    } else {
        Style::default()
    };
    cells.push(Cell::from(Span::styled(
        row.restarts_text(app.now),
        accent(restarts_style),
    )));
    cells.push(Cell::from(row.age_text(app.now)));
    cells.push(Cell::from(row.node.to_string()));
    let debug = if row.ephemeral > 0 {
        format!("◆{}", row.ephemeral)
    } else {
        String::new()
    };
    cells.push(Cell::from(Span::styled(debug, accent(theme.debug))));
    Row::new(cells)
}

fn highlighted<'a>(text: &'a str, positions: &[usize], theme: &Theme) -> Line<'a> {
    if positions.is_empty() {
        return Line::from(text);
    }
    let spans: Vec<Span> = text
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let style = if positions.contains(&i) {
                theme.matched
            } else {
                Style::default()
            };
            Span::styled(c.to_string(), style)
        })
        .collect();
    Line::from(spans)
}

fn scope_words(scope: &Scope) -> String {
    match scope {
        Scope::All => "any namespace".to_string(),
        Scope::Namespaces(list) => format!("namespace {}", list.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::visible_offset;

    #[test]
    fn offset_keeps_the_cursor_visible() {
        assert_eq!(visible_offset(0, 10, 100), 0);
        assert_eq!(visible_offset(9, 10, 100), 0);
        assert_eq!(visible_offset(10, 10, 100), 10);
        assert_eq!(visible_offset(99, 10, 100), 90);
        assert_eq!(visible_offset(95, 10, 97), 87, "the last page is full");
        assert_eq!(visible_offset(3, 10, 5), 0);
    }
}

//! The pod table: only the visible slice is built, matched characters are
//! highlighted, STATUS is coloured by health.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

use crate::app::{App, Connection, Scope};
use crate::model::{Health, PodRow};
use crate::theme::Theme;

use super::columns::{self, Cut, Give, cut, cut_marked};

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
    let page: Vec<_> = (offset..(offset + height).min(app.pods.visible_len()))
        .filter_map(|i| {
            app.pods
                .visible(i)
                .map(|(row, positions)| (i, row, positions))
        })
        .collect();

    let columns: &[Col] = if all_namespaces {
        &Col::ALL
    } else {
        &Col::ALL[1..]
    };
    let (widths, spacing) = column_widths(columns, &page, app, usize::from(inner.width));
    let shown = |i: usize| widths[i] > 0;
    let header: Vec<&str> = (0..columns.len())
        .filter(|&i| shown(i))
        .map(|i| columns[i].title())
        .collect();
    let constraints: Vec<Constraint> = widths
        .iter()
        .filter(|w| **w > 0)
        .map(|w| Constraint::Length(*w as u16))
        .collect();
    let rows = page.iter().map(|(i, row, positions)| {
        let selected = *i == app.pods.cursor();
        let style = if selected { theme.selected } else { theme.text };
        let cells = columns
            .iter()
            .zip(&widths)
            .filter(|(_, w)| **w > 0)
            .map(|(col, w)| cell(*col, *w, row, positions, selected, app, theme));
        Row::new(cells).style(style)
    });
    let table = Table::new(rows, constraints)
        .header(Row::new(header).style(theme.header))
        .column_spacing(spacing as u16);
    frame.render_widget(table, inner);
}

/// The pod table's columns, in screen order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Namespace,
    Name,
    Ready,
    Status,
    Restarts,
    Age,
    Node,
    Debug,
}

impl Col {
    const ALL: [Col; 8] = [
        Col::Namespace,
        Col::Name,
        Col::Ready,
        Col::Status,
        Col::Restarts,
        Col::Age,
        Col::Node,
        Col::Debug,
    ];

    fn title(self) -> &'static str {
        match self {
            Col::Namespace => "NAMESPACE",
            Col::Name => "NAME",
            Col::Ready => "READY",
            Col::Status => "STATUS",
            Col::Restarts => "RESTARTS",
            Col::Age => "AGE",
            Col::Node => "NODE",
            Col::Debug => "DEBUG",
        }
    }
}

/// How the columns give way when the screen is narrow, as kubectl and k9s
/// users expect: NODE and NAMESPACE first, then RESTARTS drops its "(2m
/// ago)", then NAME is cut in the middle (its unique tail stays). READY and
/// STATUS are never cut.
const PLAN: [(Col, usize); 14] = [
    (Col::Node, 8),
    (Col::Namespace, 10),
    (Col::Restarts, 8),
    (Col::Node, 0),
    (Col::Namespace, 9),
    (Col::Name, 24),
    (Col::Name, 20),
    (Col::Namespace, 6),
    (Col::Debug, 0),
    (Col::Age, 0),
    (Col::Name, 16),
    (Col::Namespace, 0),
    (Col::Name, 12),
    (Col::Restarts, 0),
];

/// Each column sized to its content (names over all rows, the short
/// computed texts over the page), then fitted to `room`; with the spacing.
fn column_widths(
    columns: &[Col],
    page: &[(usize, &PodRow, Vec<usize>)],
    app: &App,
    room: usize,
) -> (Vec<usize>, usize) {
    let text = app.pods.widths();
    let widest =
        |f: &dyn Fn(&PodRow) -> usize| page.iter().map(|(_, r, _)| f(r)).max().unwrap_or(0);
    let wants: Vec<usize> = columns
        .iter()
        .map(|col| {
            let content = match col {
                Col::Namespace => text.namespace,
                Col::Name => text.name,
                Col::Ready => widest(&|r| format!("{}/{}", r.ready, r.total).len()),
                Col::Status => text.status,
                Col::Restarts => widest(&|r| r.restarts_text(app.now).chars().count()),
                Col::Age => widest(&|r| r.age_text(app.now).chars().count()),
                Col::Node => text.node,
                Col::Debug => 0,
            };
            content.max(col.title().len())
        })
        .collect();
    let plan: Vec<Give> = PLAN
        .iter()
        .filter_map(|(col, to)| {
            let column = columns.iter().position(|c| c == col)?;
            Some(Give { column, to: *to })
        })
        .collect();
    let spacing = columns::spacing(&wants, room);
    (columns::fit(&wants, &plan, room, spacing), spacing)
}

/// Keeps the cursor on screen, scrolling as little as a k9s user expects:
/// pages move with the cursor, the last page is full.
fn visible_offset(cursor: usize, height: usize, len: usize) -> usize {
    let page_start = (cursor / height) * height;
    page_start.min(len.saturating_sub(height))
}

fn cell<'a>(
    col: Col,
    width: usize,
    row: &'a PodRow,
    positions: &[usize],
    selected: bool,
    app: &App,
    theme: &Theme,
) -> Cell<'a> {
    // On the selected row the selection's colours win: a status colour on
    // the selection's background can vanish (white on white in high-contrast).
    let accent = |style: Style| if selected { theme.selected } else { style };
    // The filter matches `namespace/name`: positions index into that.
    let ns_len = row.key.namespace.chars().count();
    match col {
        Col::Namespace => {
            let marked: Vec<usize> = positions.iter().copied().filter(|p| *p < ns_len).collect();
            Cell::from(cut_marked(
                &row.key.namespace,
                &marked,
                theme.matched,
                width,
                Cut::End,
            ))
        }
        Col::Name => {
            let marked: Vec<usize> = positions
                .iter()
                .filter(|p| **p > ns_len)
                .map(|p| p - ns_len - 1)
                .collect();
            Cell::from(cut_marked(
                &row.key.name,
                &marked,
                theme.matched,
                width,
                Cut::Middle,
            ))
        }
        Col::Ready => Cell::from(format!("{}/{}", row.ready, row.total)),
        Col::Status => {
            let style = match row.health {
                Health::Good => theme.good,
                Health::Pending => theme.pending,
                Health::Failing => theme.failing,
                Health::Done => theme.done,
            };
            Cell::from(Span::styled(row.status.to_string(), accent(style)))
        }
        Col::Restarts => {
            let style = if row.restarts > 0 {
                theme.warning
            } else {
                Style::default()
            };
            // Narrowed, the count stays and "(2m ago)" goes.
            let full = row.restarts_text(app.now);
            let text = if full.chars().count() <= width {
                full
            } else {
                row.restarts.to_string()
            };
            Cell::from(Span::styled(text, accent(style)))
        }
        Col::Age => Cell::from(row.age_text(app.now)),
        Col::Node => Cell::from(cut(&row.node, width, Cut::End)),
        Col::Debug => {
            let debug = if row.ephemeral > 0 {
                format!("◆{}", row.ephemeral)
            } else {
                String::new()
            };
            Cell::from(Span::styled(debug, accent(theme.debug)))
        }
    }
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

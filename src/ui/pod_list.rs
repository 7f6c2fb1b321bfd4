//! The pod table: only the visible slice is built, matched characters are
//! highlighted, STATUS is coloured by health.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row};

use crate::app::other_clusters::ClusterState;
use crate::app::{App, LinkState, Scope};
use crate::model::{Health, PodRow};
use crate::theme::Theme;

use super::columns::{Cut, Fitted, Give, cut, cut_marked, give};
use super::text_table;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if app.pods.visible_len() == 0 {
        let trouble = app.connection.trouble().filter(|_| app.pods.total() == 0);
        let text = match (app.connection.state(), app.pods.query()) {
            _ if app.refused_scope().is_some() => app
                .refused_scope()
                .map(|denied| format!("The pod list is unavailable. {}", denied.sentence()))
                .unwrap_or_default(),
            (LinkState::Connecting, _) => "Connecting to the cluster…".to_string(),
            // The list failed: that is not an empty namespace.
            (LinkState::Reconnecting, None) if trouble.is_some() => format!(
                "No pods to show: the list is not available. {}",
                trouble.unwrap_or_default()
            ),
            (_, Some(q)) => format!("No pod matches {q:?}. Esc clears the filter."),
            _ if app.narrowed.is_some() => app.nothing_narrowed(),
            _ => match app.missing_namespace() {
                Some((name, close)) if close.is_empty() => format!(
                    "Namespace {name} does not exist in this cluster (:ns and tab list those that do)."
                ),
                Some((name, close)) => format!(
                    "Namespace {name} does not exist in this cluster. Did you mean {}? (:ns {})",
                    close.join(", "),
                    close[0]
                ),
                None => format!("No pods in {}.", scope_words(&app.scope)),
            },
        };
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!(" {}", crate::model::text::sanitize(&text)),
                theme.dim,
            ))
            .wrap(ratatui::widgets::Wrap { trim: true }),
            inner,
        );
        return;
    }
    let all_namespaces = !app.shows_one_namespace();
    // While pods are marked, a gutter holds their marks.
    let marking = !app.pods.marks().is_empty();
    let (gutter, inner) = if marking {
        let [gutter, table] = ratatui::layout::Layout::horizontal([
            ratatui::layout::Constraint::Length(2),
            ratatui::layout::Constraint::Min(0),
        ])
        .areas(inner);
        (Some(gutter), table)
    } else {
        (None, inner)
    };
    let height = usize::from(inner.height.saturating_sub(1)).max(1);
    let offset = visible_offset(app.pods.cursor(), height, app.pods.visible_len());
    let clusters = app.cluster_states();
    let page: Vec<PageRow> = (offset..(offset + height).min(app.pods.visible_len()))
        .filter_map(|index| {
            let (row, positions) = app.pods.visible(index)?;
            Some(PageRow {
                cluster: row
                    .context
                    .as_deref()
                    .and_then(|c| clusters.iter().find(|s| s.context == c)),
                selected: index == app.pods.cursor(),
                ready: format!("{}/{}", row.ready, row.total),
                restarts: row.restarts_text(app.now),
                age: row.age_text(app.now),
                row,
                positions,
            })
        })
        .collect();
    // The sorted column's arrow is part of its title: measured with it, so
    // a narrow screen does not cut it off.
    let titles = sorted_titles(app.pods.sort());
    let fitted = fit_columns(
        &page,
        all_namespaces,
        app,
        &titles,
        usize::from(inner.width),
    );
    if let Some(gutter) = gutter {
        let marks: Vec<Line> = std::iter::once(Line::default())
            .chain(page.iter().map(|r| {
                if app.pods.is_marked(&r.row.row_key()) {
                    Line::from(Span::styled("●", theme.key_hint))
                } else {
                    Line::default()
                }
            }))
            .collect();
        frame.render_widget(Paragraph::new(marks), gutter);
    }
    let rows: Vec<Row> = page
        .into_iter()
        .map(|mut page_row| {
            let style = if page_row.selected {
                theme.selected
            } else {
                theme.text
            };
            let cells: Vec<Cell> = fitted
                .shown()
                .map(|(i, width)| cell(Col::ALL[i], width, &mut page_row, theme))
                .collect();
            Row::new(cells).style(style)
        })
        .collect();
    let titles: Vec<&str> = titles.iter().map(String::as_str).collect();
    frame.render_widget(fitted.table(&titles, rows, theme.header), inner);
}

/// The column titles, the sorted one marked ▲ (ascending) or ▼.
fn sorted_titles(sort: Option<crate::app::pods::Sort>) -> Vec<String> {
    use crate::app::command::SortColumn;
    let mut titles: Vec<String> = TITLES.iter().map(|t| t.to_string()).collect();
    // SortColumn has no CONTEXT: rows of several clusters are in context
    // order whatever the sort, ties broken by it.
    if let Some(sort) = sort {
        let (column, descending) = match sort.column {
            SortColumn::Name => (Col::Name, false),
            SortColumn::Namespace => (Col::Namespace, false),
            SortColumn::Status => (Col::Status, false),
            SortColumn::Restarts => (Col::Restarts, true),
            SortColumn::Age => (Col::Age, false),
            SortColumn::Node => (Col::Node, false),
            SortColumn::Cpu => (Col::Cpu, true),
            SortColumn::Memory => (Col::Mem, true),
        };
        let arrow = if descending != sort.reversed {
            '▼'
        } else {
            '▲'
        };
        titles[column as usize].push(arrow);
    }
    titles
}

/// A row on screen, with the texts computed for it once (they are both
/// measured and shown).
struct PageRow<'a> {
    row: &'a PodRow,
    /// How the row's cluster stands, when the list shows several.
    cluster: Option<&'a ClusterState<'a>>,
    positions: Vec<usize>,
    selected: bool,
    ready: String,
    restarts: String,
    age: String,
}

/// The pod table's columns, in screen order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Context,
    Namespace,
    Name,
    Ready,
    Status,
    Restarts,
    Cpu,
    Mem,
    CpuOfRequest,
    MemOfLimit,
    Age,
    Node,
    Debug,
}

impl Col {
    const ALL: [Col; 13] = [
        Col::Context,
        Col::Namespace,
        Col::Name,
        Col::Ready,
        Col::Status,
        Col::Restarts,
        Col::Cpu,
        Col::Mem,
        Col::CpuOfRequest,
        Col::MemOfLimit,
        Col::Age,
        Col::Node,
        Col::Debug,
    ];

    /// A column of the metrics API's figures, shown while they are read.
    fn of_usage(self) -> bool {
        matches!(
            self,
            Col::Cpu | Col::Mem | Col::CpuOfRequest | Col::MemOfLimit
        )
    }
}

const TITLES: [&str; 13] = [
    "CONTEXT",
    "NAMESPACE",
    "NAME",
    "READY",
    "STATUS",
    "RESTARTS",
    "CPU",
    "MEM",
    "%CPU/R",
    "%MEM/L",
    "AGE",
    "NODE",
    "DEBUG",
];

/// How the columns give way when the screen is narrow, as kubectl and k9s
/// users expect: NODE, NAMESPACE and CONTEXT first, then RESTARTS drops
/// its "(2m ago)" and the percentages of requests and limits go, then CPU
/// and MEM (a name is worth more), then NAME is cut in the middle (its
/// unique tail stays). READY and STATUS are never cut, nor CONTEXT below
/// 6 characters: which cluster a row is on is never guessed.
const PLAN: [Give; 20] = [
    give(Col::Node as usize, 8),
    give(Col::Namespace as usize, 10),
    give(Col::Context as usize, 10),
    give(Col::Restarts as usize, 8),
    give(Col::CpuOfRequest as usize, 0),
    give(Col::MemOfLimit as usize, 0),
    give(Col::Node as usize, 0),
    give(Col::Namespace as usize, 9),
    give(Col::Cpu as usize, 0),
    give(Col::Mem as usize, 0),
    give(Col::Name as usize, 24),
    give(Col::Name as usize, 20),
    give(Col::Namespace as usize, 6),
    give(Col::Context as usize, 6),
    give(Col::Debug as usize, 0),
    give(Col::Age as usize, 0),
    give(Col::Name as usize, 16),
    give(Col::Namespace as usize, 0),
    give(Col::Name as usize, 12),
    give(Col::Restarts as usize, 0),
];

/// The widest STATUS column: kubectl's longest words
/// (`Init:CreateContainerConfigError`) fit; a server's essay does not push
/// RESTARTS and AGE off the screen.
const STATUS_WIDEST: usize = 32;

/// Each column sized to its content (names over all rows, the short
/// computed texts over the page), then fitted to `room`. NAMESPACE has
/// nothing to show for one namespace.
fn fit_columns(
    page: &[PageRow],
    all_namespaces: bool,
    app: &App,
    titles: &[String],
    room: usize,
) -> Fitted {
    let text = app.pods.widths();
    let widest = |f: &dyn Fn(&PageRow) -> usize| page.iter().map(f).max().unwrap_or(0);
    let measured = app.usage_shown();
    let wants: Vec<usize> = Col::ALL
        .iter()
        .zip(titles)
        .map(|(col, title)| {
            if col.of_usage() && !measured {
                return 0;
            }
            let content = match col {
                Col::Context if !app.shows_several() => return 0,
                Col::Context => app
                    .cluster_states()
                    .iter()
                    .map(|c| crate::model::text::sanitize(c.context).chars().count() + 2)
                    .max()
                    .unwrap_or(0),
                Col::Namespace if !all_namespaces => return 0,
                Col::Namespace => text.namespace,
                Col::Name => text.name,
                Col::Ready => widest(&|r| r.ready.len()),
                Col::Status => text.status.min(STATUS_WIDEST),
                Col::Restarts => widest(&|r| r.restarts.chars().count()),
                Col::Age => widest(&|r| r.age.chars().count()),
                Col::Cpu | Col::Mem | Col::CpuOfRequest | Col::MemOfLimit => {
                    widest(&|r| usage_text(*col, r.row).chars().count())
                }
                Col::Node => text.node,
                Col::Debug => 0,
            };
            content.max(title.chars().count())
        })
        .collect();
    Fitted::new(&wants, &PLAN, room)
}

/// Keeps the cursor on screen, scrolling as little as a k9s user expects:
/// pages move with the cursor, the last page is full.
fn visible_offset(cursor: usize, height: usize, len: usize) -> usize {
    let page_start = (cursor / height) * height;
    page_start.min(len.saturating_sub(height))
}

/// The cell of `col`; the row's computed texts move into their cells.
/// [`cut_marked`] of a name as shown: borrowed as it is, owned only when
/// sanitizing changed it.
fn marked_cell<'a>(
    text: std::borrow::Cow<'a, str>,
    marked: &[usize],
    mark: Style,
    width: usize,
    how: Cut,
) -> Cell<'a> {
    match text {
        std::borrow::Cow::Borrowed(text) => Cell::from(cut_marked(text, marked, mark, width, how)),
        std::borrow::Cow::Owned(text) => {
            let line = cut_marked(&text, marked, mark, width, how);
            let spans: Vec<Span<'static>> = line
                .spans
                .into_iter()
                .map(|s| Span::styled(s.content.into_owned(), s.style))
                .collect();
            Cell::from(ratatui::text::Line::from(spans))
        }
    }
}

fn cell<'a>(col: Col, width: usize, page_row: &mut PageRow<'a>, theme: &Theme) -> Cell<'a> {
    let (row, positions, selected) = (page_row.row, &page_row.positions, page_row.selected);
    // On the selected row the selection's colours win: a status colour on
    // the selection's background can vanish (white on white in high-contrast).
    let accent = |style: Style| if selected { theme.selected } else { style };
    // The filter matches `namespace/name` as shown: positions index into that.
    let (namespace, name) = row.key.shown();
    let ns_len = namespace.chars().count();
    match col {
        Col::Context => {
            let context = row.context.as_deref().unwrap_or_default();
            let mark = text_table::cluster_mark(page_row.cluster);
            let style = if mark.is_empty() {
                theme.dim
            } else {
                theme.warning
            };
            let shown = format!("{mark}{}", crate::model::text::sanitize(context));
            Cell::from(Span::styled(
                cut(&shown, width, Cut::End).into_owned(),
                accent(style),
            ))
        }
        Col::Namespace => {
            let marked: Vec<usize> = positions.iter().copied().filter(|p| *p < ns_len).collect();
            marked_cell(namespace, &marked, theme.matched, width, Cut::End)
        }
        Col::Name => {
            let marked: Vec<usize> = positions
                .iter()
                .filter(|p| **p > ns_len)
                .map(|p| p - ns_len - 1)
                .collect();
            marked_cell(name, &marked, theme.matched, width, Cut::Middle)
        }
        Col::Ready => Cell::from(std::mem::take(&mut page_row.ready)),
        Col::Status => {
            let style = match row.health {
                Health::Good => theme.good,
                Health::Pending => theme.pending,
                Health::Failing => theme.failing,
                Health::Done => theme.done,
            };
            Cell::from(Span::styled(
                cut(&row.status, width, Cut::End),
                accent(style),
            ))
        }
        Col::Restarts => {
            let style = if row.restarts > 0 {
                theme.warning
            } else {
                Style::default()
            };
            // Narrowed, the count stays and "(2m ago)" goes.
            let text = if page_row.restarts.chars().count() <= width {
                std::mem::take(&mut page_row.restarts)
            } else {
                row.restarts.to_string()
            };
            Cell::from(Span::styled(text, accent(style)))
        }
        Col::Age => Cell::from(std::mem::take(&mut page_row.age)),
        Col::Cpu | Col::Mem | Col::CpuOfRequest | Col::MemOfLimit => {
            use crate::model::usage::{Pressure, cpu_pressure, memory_pressure};
            let pressure = row.usage.map_or(Pressure::Easy, |used| match col {
                Col::Cpu | Col::CpuOfRequest => cpu_pressure(used, row.asks.as_deref()),
                _ => memory_pressure(used, row.asks.as_deref()),
            });
            let style = match pressure {
                Pressure::Easy if row.usage.is_none() => theme.dim,
                Pressure::Easy => Style::default(),
                Pressure::Near => theme.warning,
                Pressure::AtLimit => theme.failing,
            };
            Cell::from(Span::styled(usage_text(col, row), accent(style)))
        }
        Col::Node => Cell::from(cut(&row.node, width, Cut::End)),
        Col::Debug => Cell::from(Span::styled(row.debug_mark(), accent(theme.debug))),
    }
}

/// A figure of the metrics API as k9s shows it: `12m`, `45Mi`, a bare
/// percentage; `n/a` for a pod not measured (yet), or with no request or
/// limit to compare with.
fn usage_text(col: Col, row: &PodRow) -> String {
    use crate::model::usage::{cpu_of_request, memory_of_limit};
    let Some(used) = row.usage else {
        return "n/a".into();
    };
    let asks = row.asks.as_deref();
    let percent = |p: Option<u64>| p.map_or_else(|| "n/a".into(), |p| p.to_string());
    match col {
        Col::Cpu => used.cpu_text(),
        Col::Mem => used.memory_text(),
        Col::CpuOfRequest => percent(cpu_of_request(used, asks)),
        _ => percent(memory_of_limit(used, asks)),
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

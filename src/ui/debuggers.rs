//! The debuggers view (`:debuggers`): every debug container of the pods
//! listed, running ones marked, the columns giving way at 80 columns as
//! kubectl's would (IMAGE narrows, then ADDED BY and TARGET step aside).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::columns::{Cut, Fitted, cut, give};
use crate::app::App;
use crate::app::debuggers::DebuggersView;
use crate::model::ContainerState;
use crate::theme::Theme;

const TITLES: [&str; 10] = [
    "CONTEXT",
    "NAMESPACE",
    "POD",
    "NAME",
    "STATE",
    "AGE",
    "SHELL",
    "TARGET",
    "IMAGE",
    "ADDED BY",
];

/// How the columns give way: IMAGE narrows, ADDED BY, TARGET and IMAGE
/// step aside, then the pod's name narrows (cut in the middle, where
/// replica names differ), STATE keeps its first words, the namespace and
/// the context narrow, and the pod's name again.
const PLAN: [super::columns::Give; 9] = [
    give(8, 14),
    give(9, 0),
    give(7, 0),
    give(8, 0),
    give(2, 28),
    give(4, 20),
    give(1, 8),
    give(0, 8),
    give(2, 18),
];

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &DebuggersView, theme: &Theme) {
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let shown = view.shown(app.pods.rows());
    let running = shown.iter().filter(|d| d.state.is_running()).count();
    let mut title = vec![
        Span::styled(
            format!(
                " debuggers in {} · {running} running of {}",
                app.namespaces_label(),
                shown.len()
            ),
            theme.title,
        ),
        Span::styled(format!("  sorted by {}", view.order.words()), theme.dim),
    ];
    if !view.filter.is_empty() {
        title.push(Span::styled(format!("  /{}", view.filter), theme.dim));
    }
    frame.render_widget(Paragraph::new(Line::from(title)), head);
    if shown.is_empty() {
        let text = if view.filter.is_empty() {
            format!(
                " No debug containers in the {} pods listed; 0 shows every namespace.",
                app.pods.total()
            )
        } else {
            format!(
                " No debug container matches {:?}; esc clears the filter.",
                view.filter
            )
        };
        frame.render_widget(
            Paragraph::new(Span::styled(text, theme.dim))
                .wrap(ratatui::widgets::Wrap { trim: false }),
            body,
        );
        return;
    }
    let all = !app.shows_one_namespace();
    let cells: Vec<[String; 10]> = shown
        .iter()
        .map(|d| {
            [
                d.context
                    .map(|c| crate::model::text::sanitize(c).into_owned())
                    .unwrap_or_default(),
                d.namespace.clone(),
                d.pod.clone(),
                d.name.clone(),
                d.state_text(),
                d.age_text(app.now),
                if d.shell { "yes" } else { "no" }.into(),
                d.target.clone().unwrap_or_else(|| "-".into()),
                d.image.clone(),
                d.added_by.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let columns = |text: &str| unicode_width::UnicodeWidthStr::width(text);
    let wants: Vec<usize> = (0..TITLES.len())
        .map(|i| {
            if (i == 0 && !app.shows_several()) || (i == 1 && !all) {
                return 0;
            }
            cells
                .iter()
                .map(|row| columns(&row[i]))
                .max()
                .unwrap_or(0)
                .max(TITLES[i].len())
        })
        .collect();
    let fitted = Fitted::new(&wants, &PLAN, usize::from(body.width.saturating_sub(1)));
    let cursor = view.cursor.min(shown.len() - 1);
    let room = usize::from(body.height).saturating_sub(1).max(1);
    let first = cursor.saturating_sub(room - 1);
    let rows = cells
        .iter()
        .zip(&shown)
        .enumerate()
        .skip(first)
        .take(room)
        .map(|(i, (row, debugger))| {
            let style = if i == cursor {
                theme.selected
            } else {
                match debugger.state {
                    ContainerState::Running { .. } => theme.text,
                    ContainerState::Waiting { .. } => theme.warning,
                    _ => theme.dim,
                }
            };
            Row::new(fitted.shown().map(|(column, width)| {
                let how = if column == 2 { Cut::Middle } else { Cut::End };
                Cell::from(cut(&row[column], width, how).into_owned())
            }))
            .style(style)
        });
    let titles: Vec<&str> = TITLES.to_vec();
    let [_, table] = Layout::horizontal([Constraint::Length(1), Constraint::Min(0)]).areas(body);
    frame.render_widget(fitted.table(&titles, rows, theme.header), table);
}

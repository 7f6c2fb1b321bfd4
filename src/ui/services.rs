//! The services view (`:svc`): kubectl's columns and ENDPOINTS, the ready
//! pods of those each Service selects in the pod list.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::app::services::{ServicesView, endpoints};
use crate::app::{App, Scope};
use crate::model::human_duration;
use crate::theme::Theme;

/// The columns that give way on a narrow screen, first to go first:
/// EXTERNAL-IP (mostly `<none>`), CLUSTER-IP, then TYPE.
const GIVE_WAY: [&str; 3] = ["EXTERNAL-IP", "CLUSTER-IP", "TYPE"];

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &ServicesView, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(
            format!(
                " services ({}) · ns {} · ENDPOINTS: ready pods of those it selects ",
                view.rows.len(),
                app.scope.label()
            ),
            theme.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if let Some(trouble) = &view.trouble {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!(" {}", trouble.as_str()),
                theme.warning,
            )),
            inner,
        );
        return;
    }
    if !view.listed {
        frame.render_widget(Paragraph::new(Span::styled(" Loading…", theme.dim)), inner);
        return;
    }
    if view.rows.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!(" No Services in namespace {}.", app.scope.label()),
                theme.dim,
            )),
            inner,
        );
        return;
    }
    let namespaces = !matches!(&app.scope, Scope::Namespaces(list) if list.len() == 1);
    let mut titles: Vec<&str> = vec![
        "NAME",
        "TYPE",
        "CLUSTER-IP",
        "EXTERNAL-IP",
        "PORT(S)",
        "ENDPOINTS",
        "AGE",
    ];
    if namespaces {
        titles.insert(0, "NAMESPACE");
    }
    // Whether each Service sends traffic anywhere, for its colour.
    let mut idle = Vec::with_capacity(view.rows.len());
    let mut rows: Vec<Vec<String>> = view
        .rows
        .iter()
        .map(|s| {
            let (ready, selected) = endpoints(s, app.pods.rows());
            idle.push(!s.selector.is_empty() && ready == 0);
            let age = s
                .created
                .map(|t| human_duration(app.now.duration_since(t)))
                .unwrap_or_else(|| "—".into());
            let endpoints = match s.selector.is_empty() {
                true => "by hand".to_string(),
                false => format!("{ready}/{selected}"),
            };
            let mut row = vec![
                s.name.clone(),
                s.kind.clone(),
                s.cluster_ip.clone(),
                s.external_text().to_string(),
                s.ports_text(),
                endpoints,
                age,
            ];
            if namespaces {
                row.insert(0, s.namespace.clone());
            }
            row
        })
        .collect();
    // Columns by display width: a combining mark takes none, a wide
    // character two.
    let columns = |text: &str| unicode_width::UnicodeWidthStr::width(text);
    let widths_of = |titles: &[&str], rows: &[Vec<String>]| {
        let mut widths: Vec<usize> = titles.iter().map(|t| columns(t)).collect();
        for row in rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(columns(cell));
            }
        }
        widths
    };
    let fits = |widths: &[usize]| {
        1 + widths.iter().map(|w| w + 2).sum::<usize>() - 2 <= usize::from(inner.width)
    };
    let mut widths = widths_of(&titles, &rows);
    for column in GIVE_WAY {
        if fits(&widths) {
            break;
        }
        if let Some(at) = titles.iter().position(|t| *t == column) {
            titles.remove(at);
            for row in &mut rows {
                row.remove(at);
            }
            widths = widths_of(&titles, &rows);
        }
    }
    let line = |cells: &[String]| -> String {
        let mut text = String::from(" ");
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            text.push_str(cell);
            if i + 1 < cells.len() {
                text.push_str(&" ".repeat(width.saturating_sub(columns(cell)) + 2));
            }
        }
        text
    };
    let titles: Vec<String> = titles.iter().map(|t| t.to_string()).collect();
    let mut lines = vec![Line::from(Span::styled(line(&titles), theme.header))];
    // The selected row stays on screen: the rows scroll under the header.
    let room = (inner.height as usize).saturating_sub(1).max(1);
    let first = view.cursor.saturating_sub(room - 1);
    for (i, (row, idle)) in rows.iter().zip(&idle).enumerate().skip(first).take(room) {
        let style = if i == view.cursor {
            theme.selected
        } else if *idle {
            theme.warning
        } else {
            theme.text
        };
        lines.push(Line::from(Span::styled(line(row), style)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

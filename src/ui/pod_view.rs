//! One pod: its containers (init, regular, debug) with live state, and its
//! events, newest first.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};

use crate::app::{App, PodView};
use crate::model::{ContainerInfo, ContainerKind, ContainerState, human_duration};
use crate::theme::Theme;

use super::ellipsize;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &PodView, theme: &Theme) {
    let Some(detail) = &view.detail else {
        let text = if view.gone {
            "This pod no longer exists."
        } else {
            "Loading…"
        };
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {} — {text}", view.key), theme.dim)),
            area,
        );
        return;
    };
    let containers = detail.containers.len() as u16;
    let [summary, table, events] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(containers + 3),
        Constraint::Min(3),
    ])
    .areas(area);

    let sep = Span::styled("  ", theme.dim);
    let mut facts = vec![
        Span::styled(format!(" {}", view.key), theme.title),
        sep.clone(),
        Span::styled(detail.status.clone(), theme.text),
        sep.clone(),
        Span::styled(format!("node {}", or_dash(&detail.node)), theme.dim),
        sep.clone(),
        Span::styled(format!("ip {}", or_dash(&detail.ip)), theme.dim),
        sep.clone(),
        Span::styled(format!("qos {}", or_dash(&detail.qos)), theme.dim),
    ];
    if view.gone || detail.deleting {
        facts.push(sep.clone());
        facts.push(Span::styled(
            if view.gone { "deleted" } else { "terminating" },
            theme.warning,
        ));
    }
    if detail.is_static {
        facts.push(sep.clone());
        facts.push(Span::styled(
            "static pod: no debug containers",
            theme.warning,
        ));
    }
    if detail.os.as_deref() == Some("windows") {
        facts.push(sep);
        facts.push(Span::styled(
            "windows: debug containers cannot target a container",
            theme.warning,
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(facts)), summary);

    let rows = detail.containers.iter().enumerate().map(|(i, c)| {
        let style = if i == view.cursor {
            theme.selected
        } else {
            theme.text
        };
        container_row(c, app, theme).style(style)
    });
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border)
        .title(Span::styled(" containers ", theme.header));
    let table_widget = Table::new(
        rows,
        [
            Constraint::Length(6),
            Constraint::Length(20),
            Constraint::Min(20),
            Constraint::Min(28),
            Constraint::Length(5),
            Constraint::Length(8),
            Constraint::Length(14),
        ],
    )
    .header(
        Row::new([
            "KIND", "NAME", "IMAGE", "STATE", "READY", "RESTARTS", "TARGET",
        ])
        .style(theme.header),
    )
    .column_spacing(1)
    .block(block);
    frame.render_widget(table_widget, table);

    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border)
        .title(Span::styled(" events ", theme.header));
    let width = usize::from(events.width.saturating_sub(40));
    let lines: Vec<Line> = view
        .events
        .iter()
        .rev()
        .map(|e| {
            let age = e
                .last_seen
                .map_or_else(|| "-".into(), |t| human_duration(app.now.duration_since(t)));
            let count = if e.count > 1 {
                format!(" ×{}", e.count)
            } else {
                String::new()
            };
            let kind_style = if e.warning { theme.warning } else { theme.dim };
            Line::from(vec![
                Span::styled(format!(" {age:>6} "), theme.dim),
                Span::styled(
                    format!("{:<8}", if e.warning { "Warning" } else { "Normal" }),
                    kind_style,
                ),
                Span::styled(format!("{:<14} ", e.reason), theme.text),
                Span::styled(
                    format!("{:<12} ", e.container().unwrap_or("pod")),
                    theme.dim,
                ),
                Span::styled(
                    ellipsize(&format!("{}{count}", e.message), width.max(10)),
                    theme.text,
                ),
            ])
        })
        .collect();
    let body = if lines.is_empty() {
        vec![Line::from(Span::styled(" No events.", theme.dim))]
    } else {
        lines
    };
    frame.render_widget(
        Paragraph::new(body).block(block).wrap(Wrap { trim: false }),
        events,
    );
}

fn container_row<'a>(c: &'a ContainerInfo, app: &App, theme: &Theme) -> Row<'a> {
    let (state, style) = match &c.state {
        ContainerState::Unknown => ("—".to_string(), theme.dim),
        ContainerState::Running { since } => (
            match since {
                Some(t) => format!("Running {}", human_duration(app.now.duration_since(*t))),
                None => "Running".to_string(),
            },
            theme.good,
        ),
        ContainerState::Waiting { reason, message } => {
            let style = if reason.contains("Err")
                || reason.contains("BackOff")
                || reason.contains("Invalid")
            {
                theme.failing
            } else {
                theme.pending
            };
            let text = if message.is_empty() {
                reason.clone()
            } else {
                format!("{reason}: {message}")
            };
            (text, style)
        }
        ContainerState::Terminated {
            exit_code, reason, ..
        } => (
            format!("Terminated {reason} (exit {exit_code})"),
            if *exit_code == 0 {
                theme.done
            } else {
                theme.failing
            },
        ),
    };
    let kind_style = if c.kind == ContainerKind::Ephemeral {
        theme.debug
    } else {
        theme.dim
    };
    Row::new(vec![
        Cell::from(Span::styled(c.kind.label(), kind_style)),
        Cell::from(c.name.as_str()),
        Cell::from(c.image.as_str()),
        Cell::from(Span::styled(state, style)),
        Cell::from(if c.ready { "yes" } else { "no" }),
        Cell::from(c.restarts.to_string()),
        Cell::from(c.target.clone().unwrap_or_default()),
    ])
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

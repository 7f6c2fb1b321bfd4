//! One pod: its containers (init, regular, debug) with live state, and its
//! events, newest first.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};

use crate::app::{App, PodView};
use crate::model::{
    ContainerInfo, ContainerKind, ContainerState, human_duration, waiting_in_trouble,
};
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
    let focused = detail.containers.get(view.cursor);
    let on_a_node = !detail.node.is_empty();
    let about = focused.map_or_else(Vec::new, |c| container_facts(c, on_a_node, app, theme));
    // Shown only when the table and a few events still fit beside it.
    let about_height = match wrapped_height(&about, area.width).min(8) + 2 {
        h if about.is_empty() || 2 + containers + 3 + h + 3 > area.height => 0,
        h => h,
    };
    let [summary, table, focus, events] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(containers + 3),
        Constraint::Length(about_height),
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

    if let Some(container) = focused {
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(theme.border)
            .title(Span::styled(format!(" {} ", container.name), theme.header));
        frame.render_widget(
            Paragraph::new(about)
                .block(block)
                .wrap(Wrap { trim: false }),
            focus,
        );
    }

    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border)
        .title(Span::styled(" events ", theme.header));
    let width = usize::from(events.width);
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
            let mut line = Line::from(vec![
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
            ]);
            // One line per event: the message gets what the columns leave.
            let room = width.saturating_sub(line.width() + count.chars().count());
            line.push_span(Span::styled(
                ellipsize(&e.message, room.max(10)),
                theme.text,
            ));
            line.push_span(Span::styled(count, theme.text));
            line
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

/// The focused container in full: its state and how its previous run
/// ended (what a crash loop is about), its command and image.
fn container_facts<'a>(
    c: &ContainerInfo,
    on_a_node: bool,
    app: &App,
    theme: &Theme,
) -> Vec<Line<'a>> {
    let fact = |label: &str, text: String, style| {
        Line::from(vec![
            Span::styled(format!(" {label:<9} "), theme.dim),
            Span::styled(text, style),
        ])
    };
    let state = match c.state {
        ContainerState::Unknown if on_a_node => "not started: no status from its node yet".into(),
        ContainerState::Unknown => {
            "not started: the pod is not on a node yet (see its events)".into()
        }
        _ => state_text(&c.state, app, true),
    };
    let mut lines = vec![fact("state", state, state_style(&c.state, theme))];
    if let Some(previous) = &c.previous {
        lines.push(fact(
            "last run",
            state_text(previous, app, true),
            state_style(previous, theme),
        ));
    }
    let command: Vec<&str> = c
        .command
        .iter()
        .chain(&c.args)
        .map(String::as_str)
        .collect();
    lines.push(if command.is_empty() {
        fact("command", "(the image's entrypoint)".into(), theme.dim)
    } else {
        fact("command", command.join(" "), theme.text)
    });
    lines.push(fact("image", c.image.clone(), theme.text));
    lines
}

/// Rows `lines` take in `width` columns when wrapped.
fn wrapped_height(lines: &[Line], width: u16) -> u16 {
    let width = usize::from(width.max(1));
    lines
        .iter()
        .map(|l| l.width().max(1).div_ceil(width) as u16)
        .sum()
}

/// A state in words; `full` adds the time of a termination and its message.
fn state_text(state: &ContainerState, app: &App, full: bool) -> String {
    let ago = |t: &jiff::Timestamp| human_duration(app.now.duration_since(*t));
    match state {
        ContainerState::Unknown => "—".to_string(),
        ContainerState::Running { since: Some(t) } => format!("Running {}", ago(t)),
        ContainerState::Running { since: None } => "Running".to_string(),
        ContainerState::Waiting { reason, message } if message.is_empty() => reason.clone(),
        ContainerState::Waiting { reason, message } => format!("{reason}: {message}"),
        ContainerState::Terminated {
            exit_code,
            reason,
            message,
            finished,
        } => {
            let mut text = format!("Terminated {reason} (exit {exit_code})");
            if full {
                if let Some(t) = finished {
                    text.push_str(&format!(", {} ago", ago(t)));
                }
                if !message.is_empty() {
                    text.push_str(&format!(": {}", message.trim()));
                }
            }
            text
        }
    }
}

fn state_style(state: &ContainerState, theme: &Theme) -> ratatui::style::Style {
    match state {
        ContainerState::Unknown => theme.dim,
        ContainerState::Running { .. } => theme.good,
        ContainerState::Waiting { reason, .. } if waiting_in_trouble(reason) => theme.failing,
        ContainerState::Waiting { .. } => theme.pending,
        ContainerState::Terminated { exit_code: 0, .. } => theme.done,
        ContainerState::Terminated { .. } => theme.failing,
    }
}

fn container_row<'a>(c: &'a ContainerInfo, app: &App, theme: &Theme) -> Row<'a> {
    let (state, style) = (
        state_text(&c.state, app, false),
        state_style(&c.state, theme),
    );
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

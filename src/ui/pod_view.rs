//! One pod: its containers (init, regular, debug) with live state, and its
//! events, newest first.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};

use crate::app::{App, PodView};
use crate::model::{
    ContainerInfo, ContainerKind, ContainerState, PodDetail, human_duration, waiting_in_trouble,
};
use crate::theme::Theme;

use super::columns::{Cut, Fitted, Give, cut, give};

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &PodView, theme: &Theme) {
    let Some(detail) = &view.pod.detail else {
        let (text, style) = match &view.trouble {
            _ if view.pod.gone => ("This pod no longer exists.", theme.dim),
            Some(trouble) => (trouble.as_str(), theme.warning),
            None => ("Loading…", theme.dim),
        };
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {} — {text}", view.key), style))
                .wrap(Wrap { trim: false }),
            area,
        );
        return;
    };
    let facts = super::wrap(
        &Line::from(pod_facts(view, detail, app, theme)),
        usize::from(area.width),
    );
    let summary_height = (facts.len() as u16).min(3) + 1;
    let listed = view.listed();
    let folded = view.folded();
    let containers = listed.len() as u16 + u16::from(folded > 0);
    let focused = listed.get(view.cursor).copied();
    let on_a_node = !detail.node.is_empty();
    // Wrapped here, so a long command's next rows hang under it.
    let about: Vec<Line> = focused
        .map_or_else(Vec::new, |c| {
            let mut lines = container_facts(c, on_a_node, app, theme);
            lines.extend(usage_lines(c, detail, app.usage_of(&view.cluster), theme));
            lines
        })
        .iter()
        .flat_map(|line| super::wrap(line, usize::from(area.width)))
        .collect();
    // Shown only when the table and a few events still fit beside it.
    let about_height = match (about.len() as u16).min(8) + 2 {
        h if about.is_empty() || summary_height + containers + 3 + h + 3 > area.height => 0,
        h => h,
    };
    let [summary, table, focus, events] = Layout::vertical([
        Constraint::Length(summary_height),
        Constraint::Length(containers + 3),
        Constraint::Length(about_height),
        Constraint::Min(3),
    ])
    .areas(area);

    frame.render_widget(Paragraph::new(facts), summary);

    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border)
        .title(Span::styled(" containers ", theme.header));
    frame.render_widget(
        container_table(
            (&view.cluster, &view.key),
            &listed,
            folded,
            view.cursor,
            table.width,
            app,
            theme,
        )
        .block(block),
        table,
    );

    if let Some(container) = focused {
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(theme.border)
            .title(Span::styled(format!(" {} ", container.name), theme.header));
        frame.render_widget(Paragraph::new(about).block(block), focus);
    }

    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme.border)
        .title(Span::styled(" events ", theme.header));
    let width = usize::from(events.width);
    // Reason and container columns as wide as their longest entry, within reason.
    let widest = |f: &dyn Fn(&crate::model::EventRow) -> usize, cap: usize| {
        view.pod.events.iter().map(f).max().unwrap_or(0).min(cap)
    };
    let reason_width = widest(&|e| e.reason.chars().count(), 20);
    let container_width = widest(&|e| e.container().unwrap_or("pod").chars().count(), 24);
    let lines: Vec<Line> = view
        .pod
        .events
        .iter()
        .rev()
        .flat_map(|e| {
            let age = e
                .last_seen
                .map_or_else(|| "-".into(), |t| human_duration(app.now.duration_since(t)));
            let count = if e.count > 1 {
                format!(" ×{}", e.count)
            } else {
                String::new()
            };
            let kind_style = if e.warning { theme.warning } else { theme.dim };
            let reason = cut(&e.reason, reason_width, Cut::End);
            let container = cut(e.container().unwrap_or("pod"), container_width, Cut::Middle);
            let mut first = Line::from(vec![
                Span::styled(format!(" {age:>6} "), theme.dim),
                Span::styled(
                    format!("{:<8}", if e.warning { "Warning" } else { "Normal" }),
                    kind_style,
                ),
                Span::styled(format!("{reason:<reason_width$} "), theme.text),
                Span::styled(format!("{container:<container_width$} "), theme.dim),
            ]);
            // The message in full, wrapped under its column.
            let indent = first.width();
            let message = super::wrap_words(
                &format!("{}{count}", e.message),
                width.saturating_sub(indent).max(20),
            );
            let mut rows = message.into_iter();
            first.push_span(Span::styled(rows.next().unwrap_or_default(), theme.text));
            let mut lines = vec![first];
            lines.extend(rows.map(|more| {
                Line::from(Span::styled(
                    format!("{}{more}", " ".repeat(indent)),
                    theme.text,
                ))
            }));
            lines
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

/// The pod in one line: name, status, node, IP, QoS and what limits debugging.
/// The pod's name (after its context when the list shows several), its
/// state and where it runs.
fn pod_facts<'a>(view: &PodView, detail: &PodDetail, app: &App, theme: &Theme) -> Vec<Span<'a>> {
    let sep = Span::styled("  ", theme.dim);
    let mut facts = vec![
        Span::styled(
            format!(" {}", app.pod_label(&view.cluster, &view.key)),
            theme.title,
        ),
        sep.clone(),
        Span::styled(detail.status.clone(), theme.text),
        sep.clone(),
        Span::styled(format!("node {}", or_dash(&detail.node)), theme.dim),
        sep.clone(),
        Span::styled(format!("ip {}", or_dash(&detail.ip)), theme.dim),
        sep.clone(),
        Span::styled(format!("qos {}", or_dash(&detail.qos)), theme.dim),
    ];
    if view.pod.gone || detail.deleting {
        facts.push(sep.clone());
        facts.push(Span::styled(
            if view.pod.gone {
                "deleted"
            } else {
                "terminating"
            },
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
    facts
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
        let restarts = match c.restarts {
            n if n > 1 => format!("; restarted {n} times"),
            _ => String::new(),
        };
        lines.push(fact(
            "last run",
            format!("{}{restarts}", state_text(previous, app, true)),
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

/// The focused container's CPU and memory now, against what it asks for,
/// and their trend over the reads kept while the pod is open (a sparkline
/// to the limit's scale, so a full block is at the limit).
fn usage_lines<'a>(
    c: &ContainerInfo,
    detail: &PodDetail,
    usage: Option<&crate::app::UsageReads>,
    theme: &Theme,
) -> Vec<Line<'a>> {
    use crate::model::usage::{
        Pressure, bytes_text, cpu_pressure, memory_pressure, percent, sparkline,
    };
    let Some(usage) = usage.filter(|u| u.shown()) else {
        return Vec::new();
    };
    let samples: Vec<crate::model::usage::Use> = usage
        .history(&detail.key)
        .into_iter()
        .flatten()
        .filter_map(|s| {
            s.containers
                .iter()
                .find(|(name, _)| *name == c.name)
                .map(|(_, u)| *u)
        })
        .collect();
    let Some(now) = samples.last().copied() else {
        return Vec::new();
    };
    let asks = detail.asks_of(&c.name);
    let style = |pressure| match pressure {
        Pressure::Easy => theme.text,
        Pressure::Near => theme.warning,
        Pressure::AtLimit => theme.failing,
    };
    let line = |label: &str, figure: String, against: String, trend: String, style| {
        Line::from(vec![
            Span::styled(format!(" {label:<9} "), theme.dim),
            Span::styled(figure, style),
            Span::styled(against, theme.dim),
            Span::styled(trend, style),
        ])
    };
    let millicores = |m: u32| format!("{m}m");
    let cpu_against = match asks.filter(|a| a.cpu_request_m > 0 || a.cpu_limit_m > 0) {
        Some(a) => {
            let mut parts = Vec::new();
            if a.cpu_request_m > 0 {
                parts.push(format!("request {}", millicores(a.cpu_request_m)));
            }
            if a.cpu_limit_m > 0 {
                parts.push(format!("limit {}", millicores(a.cpu_limit_m)));
            }
            format!(" ({})  ", parts.join(", "))
        }
        None => "  ".into(),
    };
    let memory_against = match asks.filter(|a| a.memory_request > 0 || a.memory_limit > 0) {
        Some(a) => {
            let mut parts = Vec::new();
            if a.memory_request > 0 {
                parts.push(format!("request {}", bytes_text(a.memory_request)));
            }
            if a.memory_limit > 0 {
                let of = percent(now.memory_bytes(), a.memory_limit).unwrap_or(0);
                parts.push(format!("limit {}: {of} %", bytes_text(a.memory_limit)));
            }
            format!(" ({})  ", parts.join(", "))
        }
        None => "  ".into(),
    };
    let cpu_top = asks
        .map(|a| u64::from(a.cpu_limit_m) * 1000)
        .filter(|t| *t > 0);
    let memory_top = asks.map(|a| a.memory_limit).filter(|t| *t > 0);
    let cpu_trend: Vec<u64> = samples.iter().map(|u| u64::from(u.microcores)).collect();
    let memory_trend: Vec<u64> = samples.iter().map(|u| u.memory_bytes()).collect();
    vec![
        line(
            "cpu",
            now.cpu_text(),
            cpu_against,
            sparkline(&cpu_trend, cpu_top),
            style(cpu_pressure(now, asks.as_ref())),
        ),
        line(
            "memory",
            now.memory_text(),
            memory_against,
            sparkline(&memory_trend, memory_top),
            style(memory_pressure(now, asks.as_ref())),
        ),
    ]
}

/// A state in words; `full` adds the waiting message, the time of a
/// termination and its message.
fn state_text(state: &ContainerState, app: &App, full: bool) -> String {
    let ago = |t: &jiff::Timestamp| human_duration(app.now.duration_since(*t));
    match state {
        ContainerState::Unknown => "—".to_string(),
        ContainerState::Running { since: Some(t) } => format!("Running {}", ago(t)),
        ContainerState::Running { since: None } => "Running".to_string(),
        ContainerState::Waiting { reason, message } if message.is_empty() || !full => {
            reason.clone()
        }
        ContainerState::Waiting { reason, message } => format!("{reason}: {message}"),
        ContainerState::Terminated {
            exit_code,
            reason,
            message,
            finished,
        } => {
            if !full {
                return format!("{reason} (exit {exit_code})");
            }
            let mut text = format!("Terminated {reason} (exit {exit_code})");
            {
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

/// The containers' columns, in screen order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Kind,
    Name,
    Image,
    State,
    Ready,
    Restarts,
    Cpu,
    Mem,
    Target,
}

impl Col {
    const ALL: [Col; 9] = [
        Col::Kind,
        Col::Name,
        Col::Image,
        Col::State,
        Col::Ready,
        Col::Restarts,
        Col::Cpu,
        Col::Mem,
        Col::Target,
    ];
}

const TITLES: [&str; 9] = [
    "KIND", "NAME", "IMAGE", "STATE", "READY", "RESTARTS", "CPU", "MEM", "TARGET",
];

/// How the containers' columns give way: TARGET and IMAGE first (cut in
/// the middle, where the tag and the name's end stay), CPU, then STATE (its
/// full text is in the focused container's box below), MEM, NAME last.
const PLAN: [Give; 10] = [
    give(Col::Target as usize, 8),
    give(Col::Image as usize, 16),
    give(Col::Cpu as usize, 0),
    give(Col::State as usize, 24),
    give(Col::Image as usize, 10),
    give(Col::Target as usize, 0),
    give(Col::Mem as usize, 0),
    give(Col::State as usize, 16),
    give(Col::Name as usize, 12),
    give(Col::Image as usize, 0),
];

/// The containers' table; `folded` finished debug containers are one
/// last row that says so.
fn container_table<'a>(
    (cluster, key): (&crate::model::ClusterId, &crate::model::PodKey),
    containers: &[&'a ContainerInfo],
    folded: usize,
    cursor: usize,
    room: u16,
    app: &App,
    theme: &Theme,
) -> Table<'a> {
    // The last read's figures of each container, while the list has them.
    let latest = app
        .usage_of(cluster)
        .filter(|u| u.shown())
        .and_then(|u| u.history(key))
        .and_then(|samples| samples.back());
    let used = |c: &ContainerInfo| {
        latest.and_then(|s| {
            s.containers
                .iter()
                .find(|(name, _)| *name == c.name)
                .map(|(_, u)| *u)
        })
    };
    let texts: Vec<[String; 9]> = containers
        .iter()
        .map(|c| {
            [
                c.kind.label().to_string(),
                c.name.clone(),
                c.image.clone(),
                state_text(&c.state, app, false),
                if c.ready { "yes" } else { "no" }.to_string(),
                c.restarts.to_string(),
                used(c).map(|u| u.cpu_text()).unwrap_or_default(),
                used(c).map(|u| u.memory_text()).unwrap_or_default(),
                c.target.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let wants: Vec<usize> = TITLES
        .iter()
        .enumerate()
        .map(|(i, title)| {
            let widest = texts
                .iter()
                .map(|t| t[i].chars().count())
                .max()
                .unwrap_or(0);
            // Figures only when there are some.
            match Col::ALL[i] {
                Col::Cpu | Col::Mem if latest.is_none() => 0,
                _ => widest.max(title.len()),
            }
        })
        .collect();
    let fitted = Fitted::new(&wants, &PLAN, usize::from(room));
    let mut rows: Vec<Row> = containers
        .iter()
        .zip(texts)
        .enumerate()
        .map(|(row, (c, text))| {
            let selected = row == cursor;
            let cells: Vec<Cell> = fitted
                .shown()
                .map(|(i, width)| {
                    let col = Col::ALL[i];
                    let how = if col == Col::State {
                        Cut::End
                    } else {
                        Cut::Middle
                    };
                    let text = cut(&text[i], width, how).into_owned();
                    match col {
                        Col::Kind if c.kind == ContainerKind::Ephemeral && !selected => {
                            Cell::from(Span::styled(text, theme.debug))
                        }
                        Col::Kind if !selected => Cell::from(Span::styled(text, theme.dim)),
                        Col::State if !selected => {
                            Cell::from(Span::styled(text, state_style(&c.state, theme)))
                        }
                        _ => Cell::from(text),
                    }
                })
                .collect();
            let style = if selected { theme.selected } else { theme.text };
            Row::new(cells).style(style)
        })
        .collect();
    if folded > 0 {
        // Short, to fit the NAME column; the help and docs/browser.md say more.
        rows.push(Row::new([
            Cell::from(Span::styled("debug", theme.debug)),
            Cell::from(Span::styled(format!("+{folded} exited (f)"), theme.dim)),
        ]));
    }
    fitted.table(&TITLES, rows, theme.header)
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

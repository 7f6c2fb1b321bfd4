//! The debug launcher form, with a preview of the exact EphemeralContainer
//! that will be sent.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::launcher::{Field, Launcher};
use crate::app::{App, View};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, form: &Launcher, theme: &Theme) {
    let View::Pod(view) = &app.view else { return };
    let value = |field: Field| -> String {
        match field {
            Field::Target => form.target_name().map_or(
                "(none: the pod's shared namespaces)".to_string(),
                str::to_string,
            ),
            Field::Image => form.image.clone(),
            Field::Name => form.name.clone(),
            Field::Command => {
                if form.command.is_empty() {
                    "(the image's entrypoint)".to_string()
                } else {
                    form.command.clone()
                }
            }
            Field::Profile => form.profile.to_string(),
            Field::Env => {
                if form.env.is_empty() {
                    "(none; K=V, K=V)".to_string()
                } else {
                    form.env.clone()
                }
            }
        }
    };
    let mut lines = vec![
        Line::from(Span::styled(
            format!(" Debug container for {}", view.key),
            theme.title,
        )),
        Line::default(),
    ];
    for field in Field::ALL {
        let focused = field == form.focus;
        let cycles = matches!(field, Field::Target | Field::Profile | Field::Image);
        let marker = if focused { "▸" } else { " " };
        let hint = if focused && cycles { "  ←/→" } else { "" };
        lines.push(Line::from(vec![
            Span::styled(
                format!(" {marker} {:<9}", field.label()),
                if focused { theme.key_hint } else { theme.dim },
            ),
            Span::styled(
                value(field),
                if focused { theme.selected } else { theme.text },
            ),
            Span::styled(hint, theme.dim),
        ]));
    }
    lines.push(Line::default());
    if let Some(name) = &form.reusable {
        lines.push(Line::from(Span::styled(
            format!(" {name} already runs this image on this target: ctrl-a attaches to it instead of adding another."),
            theme.warning,
        )));
    }
    let spec = view.detail.as_ref().map(|d| form.spec(d));
    // The form's own error is shown unless it is the sentence the spec
    // gives anyway (enter on a form that cannot launch).
    let spec_error = match &spec {
        Some(Err(e)) => Some(e.as_str()),
        _ => None,
    };
    if let Some(error) = form.error.as_deref().filter(|e| Some(*e) != spec_error) {
        lines.push(Line::from(Span::styled(format!(" {error}"), theme.error)));
    }
    let preview = match &spec {
        Some(Ok(spec)) => {
            lines.push(Line::from(Span::styled(
                " What will be sent (ephemeral containers can never be removed):",
                theme.dim,
            )));
            let json = serde_json::to_string(&spec.container()).unwrap_or_default();
            Line::from(Span::styled(format!(" {json}"), theme.text))
        }
        Some(Err(e)) => Line::from(Span::styled(format!(" {e}"), theme.error)),
        None => Line::from(Span::styled(" Loading the pod…", theme.dim)),
    };
    let foot = [
        Line::default(),
        Line::from(vec![
            Span::styled(" enter ", theme.key_hint),
            Span::styled("launch and attach  ", theme.dim),
            Span::styled(" tab/↑↓ ", theme.key_hint),
            Span::styled("field  ", theme.dim),
            Span::styled(" esc ", theme.key_hint),
            Span::styled("cancel", theme.dim),
        ]),
    ];

    let width = area.width.min(100);
    let inner = usize::from(width.saturating_sub(2));
    let mut rows: Vec<Line> = lines.iter().flat_map(|l| super::wrap(l, inner)).collect();
    let foot_rows: Vec<Line> = foot.iter().flat_map(|l| super::wrap(l, inner)).collect();
    // The preview gets the rows left; a cut preview ends with `…`.
    let room =
        usize::from(area.height.saturating_sub(2)).saturating_sub(rows.len() + foot_rows.len());
    let mut preview_rows = chunks(&preview, inner);
    if preview_rows.len() > room {
        preview_rows.truncate(room);
        if let Some(last) = preview_rows.last_mut() {
            *last = mark_cut(last, inner);
        }
    }
    rows.extend(preview_rows);
    rows.extend(foot_rows);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(" launch ", theme.title));
    let area = super::centered(area, width, rows.len() as u16 + 2);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(rows).block(block), area);
}

/// `line` cut into rows of exactly `width` columns: JSON reads better
/// unbroken than wrapped at its spaces.
fn chunks(line: &Line<'static>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut rows: Vec<Line<'static>> = vec![Line::default()];
    for span in &line.spans {
        for c in span.content.chars() {
            if rows.last().is_some_and(|r| r.width() >= width) {
                rows.push(Line::default());
            }
            if let Some(row) = rows.last_mut() {
                row.push_span(Span::styled(c.to_string(), span.style));
            }
        }
    }
    rows
}

/// `row` with its last character replaced by `…` (or `…` appended when
/// there is room), to show that more followed.
fn mark_cut(row: &Line<'static>, width: usize) -> Line<'static> {
    let mut spans = row.spans.clone();
    if row.width() >= width {
        while let Some(last) = spans.last_mut() {
            let mut text = last.content.to_string();
            if text.pop().is_some() {
                last.content = text.into();
                break;
            }
            spans.pop();
        }
    }
    spans.push(Span::raw("…"));
    Line::from(spans)
}

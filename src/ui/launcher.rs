//! The debug launcher form, with a preview of the exact EphemeralContainer
//! that will be sent.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

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
    if let Some(error) = &form.error {
        lines.push(Line::from(Span::styled(format!(" {error}"), theme.error)));
    }
    lines.push(Line::from(Span::styled(
        " What will be sent (ephemeral containers can never be removed):",
        theme.dim,
    )));
    let preview = view
        .detail
        .as_ref()
        .map(|d| match form.spec(d) {
            Ok(spec) => serde_json::to_string(&spec.container()).unwrap_or_default(),
            Err(e) => e,
        })
        .unwrap_or_default();
    lines.push(Line::from(Span::styled(format!(" {preview}"), theme.text)));
    lines.push(Line::default());
    lines.push(Line::from(vec![
        Span::styled(" enter ", theme.key_hint),
        Span::styled("launch and attach  ", theme.dim),
        Span::styled(" tab/↑↓ ", theme.key_hint),
        Span::styled("field  ", theme.dim),
        Span::styled(" esc ", theme.key_hint),
        Span::styled("cancel", theme.dim),
    ]));
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(" launch ", theme.title));
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

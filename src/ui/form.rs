//! Every form drawn one way: a field a line, the focused one marked and
//! showing where typing goes, a list's choices a line each beneath its
//! label, and what `enter`, tab and esc do.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::form::{Form, Input, Shown, Value};
use crate::theme::Theme;

/// The form's fields, the focused one marked (`▸`).
pub fn field_lines<F: Form>(form: &F, theme: &Theme) -> Vec<Line<'static>> {
    let focus = form.focus();
    let fields: Vec<(bool, Input, Shown)> = form
        .fields()
        .iter()
        .map(|&field| (field == focus, form.input(field), form.shown(field)))
        .collect();
    let width = fields
        .iter()
        .map(|(_, _, shown)| shown.label.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut lines = Vec::new();
    for (focused, input, shown) in fields {
        let marker = if focused { "▸" } else { " " };
        let mut spans = vec![Span::styled(
            format!(" {marker} {:<width$}", shown.label),
            if focused { theme.key_hint } else { theme.dim },
        )];
        let chosen = if focused { theme.selected } else { theme.text };
        match &shown.value {
            Value::Text { line, empty } => {
                if focused {
                    spans.extend(super::with_cursor(line, theme.selected, theme.key_hint));
                    if line.is_empty() && !empty.is_empty() {
                        spans.push(Span::styled(format!(" {empty}"), theme.dim));
                    }
                } else if line.is_empty() {
                    spans.push(Span::styled(empty.clone(), theme.dim));
                } else {
                    spans.push(Span::styled(line.to_string(), theme.text));
                }
            }
            Value::Choice(words) => spans.push(Span::styled(words.clone(), chosen)),
            Value::List { .. } => {}
        }
        if let Some((fine, words)) = &shown.note {
            spans.push(if *fine {
                Span::styled(format!(" ✓ {words}"), theme.dim)
            } else {
                Span::styled(format!(" ✗ {words}"), theme.error)
            });
        }
        let hint = match input {
            Input::Choice | Input::TextOrChoice if focused => "  ←/→",
            Input::List if focused => "  ↑/↓",
            _ => "",
        };
        spans.push(Span::styled(hint, theme.dim));
        lines.push(Line::from(spans));
        if let Value::List { options, at, typed } = &shown.value {
            // Under the label: a choice's words can be long.
            let indent = "   ";
            let mark = |i: usize| if i == *at { "› " } else { "  " };
            for (i, option) in options.iter().enumerate() {
                let style = if i == *at { chosen } else { theme.dim };
                lines.push(Line::from(Span::styled(
                    format!("{indent}{}{option}", mark(i)),
                    style,
                )));
            }
            if let Some((line, empty)) = typed {
                let last = options.len();
                let mut spans = vec![Span::raw(format!("{indent}{}", mark(last)))];
                if focused && *at == last {
                    spans.extend(super::with_cursor(line, theme.selected, theme.key_hint));
                    if line.is_empty() {
                        spans.push(Span::styled(format!(" {empty}"), theme.dim));
                    }
                } else if line.is_empty() {
                    spans.push(Span::styled(*empty, theme.dim));
                } else {
                    let style = if *at == last { chosen } else { theme.dim };
                    spans.push(Span::styled(line.to_string(), style));
                }
                lines.push(Line::from(spans));
            }
        }
    }
    lines
}

/// What `enter` does (`send`), then tab and esc.
pub fn keys(send: &str, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(" enter ", theme.key_hint),
        Span::styled(format!("{send}  "), theme.dim),
        Span::styled(" tab ", theme.key_hint),
        Span::styled("next field  ", theme.dim),
        Span::styled(" esc ", theme.key_hint),
        Span::styled("cancel", theme.dim),
    ])
}

/// A small form in a box fitted to it: its title, its fields, what it
/// says of them beneath, and its keys (`enter` does `send`).
pub fn draw_boxed<F: Form>(
    frame: &mut Frame,
    area: Rect,
    form: &F,
    title: String,
    notes: &[String],
    send: &str,
    theme: &Theme,
) {
    let mut lines = vec![
        Line::from(Span::styled(title, theme.title)),
        Line::default(),
    ];
    lines.extend(field_lines(form, theme));
    lines.push(Line::default());
    lines.extend(
        notes
            .iter()
            .map(|note| Line::from(Span::styled(format!(" {note}"), theme.dim))),
    );
    lines.push(keys(send, theme));
    super::form_box(frame, area, lines, theme);
}

//! The Forwards view (`:pf`) and the `F` form.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::app::App;
use crate::app::forwards::{ForwardForm, ForwardState, ForwardsView, local_text};
use crate::model::forward::ForwardTarget;
use crate::model::text::sanitize;
use crate::theme::Theme;

/// 1234567 → "1.2 MB", as people read transfer totals.
fn bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} kB", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        _ => format!("{:.2} GB", n as f64 / 1e9),
    }
}

/// The STATE column.
const STATE: usize = 2;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &ForwardsView, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(
            format!(" forwards ({}) ", app.forwards.len()),
            theme.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if app.forwards.is_empty() {
        let text = " No forwards. F on a pod or a container forwards one of its ports; podbay port-forward does it from a shell.";
        frame.render_widget(Paragraph::new(Span::styled(text, theme.dim)), inner);
        return;
    }
    // Forwards on several clusters say whose each is (a Service of one
    // name may be on each).
    let clusters = app.names_clusters(app.forwards.iter().map(|f| &f.cluster));
    let rows: Vec<[String; 6]> = app
        .forwards
        .iter()
        .map(|f| {
            let context = match clusters {
                true => format!("{}/", f.cluster.context),
                false => String::new(),
            };
            let remote = match f.remote_number {
                Some(n) if n.to_string() != f.remote.to_string() => format!("{} ({n})", f.remote),
                _ => f.remote.to_string(),
            };
            // The target goes last: on a narrow screen it is cut first.
            [
                local_text(f),
                f.pod
                    .as_deref()
                    .and_then(|p| p.split_once('/').map(|(_, name)| name.to_string()))
                    .unwrap_or_else(|| "—".into()),
                f.state.label().to_string(),
                f.open.to_string(),
                format!("{}↑ {}↓", bytes(f.to_pod), bytes(f.from_pod)),
                format!("{context}{}/{} :{remote}", f.namespace, f.target),
            ]
        })
        .collect();
    let titles = ["LOCAL", "POD NOW", "STATE", "CONN", "BYTES", "TARGET"];
    let mut widths: Vec<usize> = titles.iter().map(|t| t.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // A failure's sentence is below the table: the state column says "failed".
    widths[STATE] = widths[STATE].min(9);
    let cell = |text: &str, width: usize| {
        let mut text: String = text.chars().take(width).collect();
        let pad = width.saturating_sub(text.chars().count());
        text.push_str(&" ".repeat(pad + 2));
        text
    };
    let mut lines = vec![Line::from(
        titles
            .iter()
            .zip(&widths)
            .map(|(t, w)| Span::styled(cell(t, *w), theme.header))
            .collect::<Vec<_>>(),
    )];
    for (i, (row, forward)) in rows.iter().zip(&app.forwards).enumerate() {
        let state_style = match forward.state {
            ForwardState::Listening => theme.good,
            ForwardState::Starting | ForwardState::Switching(_) => theme.pending,
            ForwardState::Failed(_) => theme.error,
        };
        let mut spans: Vec<Span> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(column, (text, w))| {
                let style = if column == STATE {
                    state_style
                } else {
                    theme.text
                };
                Span::styled(cell(&sanitize(text), *w), style)
            })
            .collect();
        if i == view.cursor {
            spans = spans
                .into_iter()
                .map(|s| Span::styled(s.content, s.style.patch(theme.selected)))
                .collect();
        }
        lines.push(Line::from(spans));
    }
    // What the selected one last said, in full.
    if let Some(forward) = app.forwards.get(view.cursor) {
        lines.push(Line::default());
        let said = match (&forward.state, &forward.last_failure) {
            (ForwardState::Failed(why) | ForwardState::Switching(why), _) => Some(why.clone()),
            (_, Some(failure)) => Some(format!("last failed connection: {failure}")),
            _ => None,
        };
        if let Some(said) = said {
            lines.push(Line::from(Span::styled(
                format!(" {}", sanitize(&said)),
                theme.dim,
            )));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The `F` form, centred over `area`.
pub fn draw_form(frame: &mut Frame, area: Rect, form: &ForwardForm, theme: &Theme) {
    let subject = match &form.target {
        ForwardTarget::Pod(name) => format!("{}/{name}", form.namespace),
        ForwardTarget::Service(_) => format!("{} in {}", form.target, form.namespace),
        ForwardTarget::Owner { .. } => format!("{}'s pods in {}", form.target, form.namespace),
    };
    let follows = match &form.target {
        ForwardTarget::Pod(_) => "It follows the pod's owner when the pod is replaced.",
        ForwardTarget::Service(_) => "It reaches a ready pod the Service selects, and the next.",
        ForwardTarget::Owner { .. } => "It reaches a ready pod of these, and the next.",
    };
    let notes = [
        "The local port listens on 127.0.0.1.".to_string(),
        follows.to_string(),
    ];
    let title = format!(" Forward a port of {subject}");
    super::form::draw_boxed(frame, area, form, title, &notes, "forward", theme);
}

#[cfg(test)]
mod tests {
    #[test]
    fn totals_read_as_people_read_them() {
        assert_eq!(super::bytes(999), "999 B");
        assert_eq!(super::bytes(1_234_567), "1.2 MB");
        assert_eq!(super::bytes(3_000_000_000), "3.00 GB");
    }
}

//! The debug launcher form, with a preview of the exact EphemeralContainer
//! that will be sent.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::launcher::Launcher;
use crate::app::{App, View};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, form: &Launcher, theme: &Theme) {
    let View::Pod(view) = &app.view else { return };
    let mut lines = vec![
        Line::from(Span::styled(
            format!(
                " Debug container for {}",
                app.pod_label(&view.cluster, &view.key)
            ),
            theme.title,
        )),
        Line::default(),
    ];
    lines.extend(super::form::field_lines(form, theme));
    lines.push(Line::default());
    if let Some(note) = &form.profile_note {
        lines.push(Line::from(Span::styled(format!(" {note}"), theme.warning)));
    }
    if let Some(name) = &form.reusable {
        lines.push(Line::from(Span::styled(
            format!(" {name} already runs this image on this target: ctrl-a attaches to it instead of adding another."),
            theme.warning,
        )));
    }
    let mut facts: Vec<Line> = view
        .pod
        .detail
        .as_ref()
        .map(|d| crate::model::debuggers::launch_facts(&d.manifest, form.target_name()))
        .unwrap_or_default()
        .into_iter()
        .map(|fact| Line::from(Span::styled(format!(" {fact}"), theme.dim)))
        .collect();
    facts.extend(memory_now(app, (&view.cluster, &view.key), theme));
    let facts_at = lines.len();
    let spec = view.pod.detail.as_ref().map(|d| form.spec(d));
    // The form's own error is shown unless it is the sentence the spec
    // gives anyway (enter on a form that cannot launch).
    let spec_error = match &spec {
        Some(Err(e)) => Some(e.as_str()),
        _ => None,
    };
    if let Some(error) = form.error.as_deref().filter(|e| Some(*e) != spec_error) {
        lines.push(Line::from(Span::styled(format!(" {error}"), theme.error)));
    }
    let (preview, preview_style) = match &spec {
        Some(Ok(spec)) => {
            lines.push(Line::from(Span::styled(
                " What will be sent (ephemeral containers can never be removed):",
                theme.dim,
            )));
            let json = serde_json::to_string(&spec.container()).unwrap_or_default();
            (format!(" {json}"), theme.text)
        }
        Some(Err(e)) => {
            // A sentence wraps at its words, unlike the JSON.
            lines.push(Line::from(Span::styled(format!(" {e}"), theme.error)));
            (String::new(), theme.error)
        }
        None => (" Loading the pod…".to_string(), theme.dim),
    };
    let foot = foot("launch and attach", theme);

    let width = area.width.min(100);
    let inner = usize::from(width.saturating_sub(2));
    let wrapped = |lines: &[Line<'static>]| -> Vec<Line<'static>> {
        lines.iter().flat_map(|l| super::wrap(l, inner)).collect()
    };
    let (head, tail) = lines.split_at(facts_at);
    let mut rows = wrapped(head);
    let tail_rows = wrapped(tail);
    let foot_rows = wrapped(&foot);
    // The facts are said where there is room for them beside the form, its
    // sentences, a row of what will be sent and its keys; else left out.
    let mut spare = usize::from(area.height.saturating_sub(2))
        .saturating_sub(rows.len() + tail_rows.len() + foot_rows.len() + 1);
    for fact in &facts {
        let fact_rows = super::wrap(fact, inner);
        if fact_rows.len() > spare {
            break;
        }
        spare -= fact_rows.len();
        rows.extend(fact_rows);
    }
    rows.extend(tail_rows);
    // The preview gets the rows left, at least one.
    let room = usize::from(area.height.saturating_sub(2))
        .saturating_sub(rows.len() + foot_rows.len())
        .max(1);
    rows.extend(
        preview_rows(&preview, inner, room)
            .into_iter()
            .map(|row| Line::from(Span::styled(row, preview_style))),
    );
    rows.extend(foot_rows);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(" launch ", theme.title));
    let area = super::centered(area, width, rows.len() as u16 + 2);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(rows).block(block), area);
}

/// The form's keys, after a blank line; `enter` does `what`.
pub(super) fn foot(what: &str, theme: &Theme) -> [Line<'static>; 2] {
    [Line::default(), super::form::keys(what, theme)]
}

/// `text` cut into rows of `width` characters (JSON reads better unbroken
/// than wrapped at its spaces), the rows after the first hanging three
/// spaces in, at most `room` of them; a cut preview ends with `…`.
pub(super) fn preview_rows(text: &str, width: usize, room: usize) -> Vec<String> {
    const HANG: &str = "   ";
    let width = width.max(HANG.len() + 1);
    let chars: Vec<char> = text.chars().collect();
    let first = chars.len().min(width);
    let mut rows: Vec<String> = vec![chars[..first].iter().collect()];
    rows.extend(
        chars[first..]
            .chunks(width - HANG.len())
            .map(|row| format!("{HANG}{}", row.iter().collect::<String>())),
    );
    if rows.len() > room {
        rows.truncate(room);
        if let Some(last) = rows.last_mut() {
            if last.chars().count() >= width {
                last.pop();
            }
            last.push('…');
        }
    }
    rows
}

/// How much of its memory limit the pod uses now, by the metrics API's
/// last read: a debugger's tools add to it, and near the limit they can
/// get the pod's own processes OOM-killed.
fn memory_now<'a>(
    app: &App,
    (cluster, pod): (&crate::model::ClusterId, &crate::model::PodKey),
    theme: &Theme,
) -> Option<Line<'a>> {
    use crate::model::usage::{Pressure, bytes_text, memory_of_limit, memory_pressure};
    let shown = app.usage_of(cluster).is_some_and(|u| u.shown());
    let row = app.row_of(cluster, pod).filter(|_| shown)?;
    let (used, asks) = (row.usage?, row.asks.as_deref());
    let share = memory_of_limit(used, asks)?;
    let limit = bytes_text(asks?.memory_limit);
    let (style, warning) = match memory_pressure(used, asks) {
        Pressure::Easy => (theme.dim, ""),
        _ => (theme.warning, ": a debugger's tools could push it over"),
    };
    Some(Line::from(Span::styled(
        format!(
            " The pod uses {} of its {limit} now ({share} %){warning}.",
            used.memory_text()
        ),
        style,
    )))
}

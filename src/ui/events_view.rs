//! The events view: newest first, every message wrapped in full under its
//! column, the selected event highlighted.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::{App, EventsView, Scope};
use crate::model::{EventRow, human_duration};
use crate::theme::Theme;

use super::columns::{Cut, cut};
use super::wrap_words;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &EventsView, theme: &Theme) {
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let all = view.scope == Scope::All;
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                match app.shows_several() || view.cluster != app.cluster {
                    true => format!(
                        " events in {}/{}",
                        crate::model::text::sanitize(&view.cluster.context),
                        view.scope.label()
                    ),
                    false => format!(" events in {}", view.scope.label()),
                },
                theme.title,
            ),
            Span::styled("  newest first · enter reads one in full", theme.dim),
        ])),
        head,
    );
    let waiting = match &view.trouble {
        Some(trouble) => Some((trouble.to_string(), theme.warning)),
        None if !view.listed => Some(("Loading…".to_string(), theme.dim)),
        None if view.rows.is_empty() => Some((
            format!(
                "No events in {}: the API server keeps them for an hour by default.",
                view.scope.label()
            ),
            theme.dim,
        )),
        None => None,
    };
    if let Some((text, style)) = waiting {
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {text}"), style))
                .wrap(ratatui::widgets::Wrap { trim: false }),
            body,
        );
        return;
    }
    let events = view.visible();
    if events.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!(
                    " No event matches {:?}; esc clears the filter.",
                    view.filter
                ),
                theme.dim,
            )),
            body,
        );
        return;
    }
    let widest = |f: &dyn Fn(&EventRow) -> usize, cap: usize| {
        events.iter().map(|e| f(e)).max().unwrap_or(0).min(cap)
    };
    let object = |e: &EventRow| {
        if all {
            format!("{}/{}", e.namespace, e.object)
        } else {
            e.object.clone()
        }
    };
    let reason_width = widest(&|e| e.reason.chars().count(), 22).max(6);
    let object_width = widest(&|e| object(e).chars().count(), 48).max(6);
    let width = usize::from(body.width);
    let fixed = 1 + 6 + 1 + 8 + reason_width + 1 + object_width + 1;
    // Narrow screens: the message goes under the columns, full width.
    let (message_at, message_width) = if width >= fixed + 30 {
        (fixed, width - fixed)
    } else {
        (3, width.saturating_sub(3).max(10))
    };
    let mut header = format!(
        " {:>6} {:<8}{:<reason_width$} {:<object_width$}",
        "AGE", "TYPE", "REASON", "OBJECT"
    );
    if message_at == fixed {
        header.push_str(" MESSAGE");
    }
    let mut lines = vec![Line::styled(header.trim_end().to_string(), theme.header)];
    let blocks: Vec<Vec<Line>> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let style = |base: Style| {
                if i == view.cursor {
                    base.patch(theme.selected)
                } else {
                    base
                }
            };
            let age = e
                .last_seen
                .map_or_else(|| "-".into(), |t| human_duration(app.now.duration_since(t)));
            let count = if e.count > 1 {
                format!(" (×{})", e.count)
            } else {
                String::new()
            };
            let kind = if e.warning { "Warning" } else { "Normal" };
            let columns = vec![
                Span::styled(format!(" {age:>6} "), style(theme.dim)),
                Span::styled(
                    format!("{kind:<8}"),
                    style(if e.warning { theme.warning } else { theme.dim }),
                ),
                Span::styled(
                    format!("{:<reason_width$} ", cut(&e.reason, reason_width, Cut::End)),
                    style(theme.text),
                ),
                Span::styled(
                    format!(
                        "{:<object_width$} ",
                        cut(&object(e), object_width, Cut::Middle)
                    ),
                    style(theme.dim),
                ),
            ];
            let message = wrap_words(&format!("{}{count}", e.message), message_width);
            let mut block = Vec::new();
            if message_at == fixed {
                let mut first = Line::from(columns);
                first.push_span(Span::styled(message[0].clone(), style(theme.text)));
                block.push(first);
                let pad = " ".repeat(fixed);
                for more in &message[1..] {
                    block.push(Line::from(vec![
                        Span::styled(pad.clone(), style(theme.text)),
                        Span::styled(more.clone(), style(theme.text)),
                    ]));
                }
            } else {
                block.push(Line::from(columns));
                for more in &message {
                    block.push(Line::from(Span::styled(
                        format!("   {more}"),
                        style(theme.text),
                    )));
                }
            }
            block
        })
        .collect();
    // From the first event that still lets the selected one show from its top.
    let room = usize::from(body.height).saturating_sub(1);
    let mut start = view.cursor.min(blocks.len() - 1);
    let mut used = blocks[start].len();
    while start > 0 && used + blocks[start - 1].len() <= room {
        start -= 1;
        used += blocks[start].len();
    }
    for block in &blocks[start..] {
        lines.extend(block.iter().cloned());
        if lines.len() > room {
            break;
        }
    }
    frame.render_widget(Paragraph::new(lines), body);
}

#[cfg(test)]
mod tests {
    use super::super::wrap_words;

    #[test]
    fn words_wrap_and_long_words_are_cut_nothing_is_lost() {
        let text =
            "Back-off restarting failed container worker in pod ledger-worker-0_payments(uid)";
        let rows = wrap_words(text, 20);
        assert!(rows.iter().all(|r| r.chars().count() <= 20), "{rows:?}");
        assert_eq!(rows.join(" ").replace(' ', ""), text.replace(' ', ""));
        assert_eq!(wrap_words("", 10), [""]);
    }
}

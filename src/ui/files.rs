//! The file browser: the directory's entries as `ls -l` shows them,
//! directories first, the selection highlighted; below, the copies with
//! their progress bars, and the question being asked.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::files::{FileBrowser, Prompt, Transfer, TransferState};
use crate::model::files::{Kind, mode_text};
use crate::model::text::sanitize;
use crate::model::transfer::line as progress_line;
use crate::theme::Theme;

/// At most this many copies are listed under the entries (the latest).
const TRANSFERS_SHOWN: usize = 3;

pub fn draw(frame: &mut Frame, area: Rect, browser: &FileBrowser, theme: &Theme) {
    let transfers: Vec<&Transfer> = browser
        .transfers
        .iter()
        .rev()
        .take(TRANSFERS_SHOWN)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let below = transfers.len() as u16
        + u16::from(browser.prompt.is_some() || browser.filtering || !browser.filter.is_empty())
        + u16::from(!browser.completions.is_empty());
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(below),
    ])
    .areas(area);
    let pod = &browser.key.pod;
    frame.render_widget(
        // The route first: at 80 columns the pod's name (in the header's
        // filter, and the pod view's) is what gets cut.
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" {} ", sanitize(&browser.dir)), theme.title),
            Span::styled(
                format!("· {} · {}/{}", browser.route(), pod.namespace, pod.name),
                theme.dim,
            ),
        ])),
        head,
    );
    draw_entries(frame, body, browser, theme);
    let mut lines: Vec<Line> = transfers
        .iter()
        .map(|t| transfer_line(t, usize::from(area.width), theme))
        .collect();
    match &browser.prompt {
        Some(Prompt::Upload(typed)) => {
            if !browser.completions.is_empty() {
                lines.push(Line::from(Span::styled(
                    format!(" {}", sanitize(&browser.completions.join("  "))),
                    theme.dim,
                )));
            }
            lines.push(Line::from(vec![
                Span::styled(
                    " upload (a local path, tab completes) into this directory: ",
                    theme.title,
                ),
                Span::styled(format!("{}▏", sanitize(typed)), theme.text),
            ]));
        }
        Some(Prompt::Remove(name)) => lines.push(Line::from(Span::styled(
            format!(
                " Remove {} for good? y removes, any other key keeps it.",
                sanitize(name)
            ),
            theme.warning,
        ))),
        None if browser.filtering || !browser.filter.is_empty() => lines.push(Line::from(vec![
            Span::styled(" / ", theme.key_hint),
            Span::styled(sanitize(&browser.filter).into_owned(), theme.text),
        ])),
        None => {}
    }
    frame.render_widget(Paragraph::new(lines), foot);
}

fn draw_entries(frame: &mut Frame, area: Rect, browser: &FileBrowser, theme: &Theme) {
    let entries = browser.visible();
    let waiting = match &browser.problem {
        Some(problem) => Some((problem.clone(), theme.error)),
        None if browser.loading && browser.entries.is_empty() => {
            Some(("Listing…".to_string(), theme.dim))
        }
        None if entries.is_empty() && browser.filter.is_empty() => {
            Some(("This directory is empty.".to_string(), theme.dim))
        }
        None if entries.is_empty() => Some((
            format!("No name holds {:?}; esc clears the filter.", browser.filter),
            theme.dim,
        )),
        None => None,
    };
    if let Some((text, style)) = waiting {
        frame.render_widget(
            Paragraph::new(Span::styled(format!(" {}", sanitize(&text)), style))
                .wrap(ratatui::widgets::Wrap { trim: false }),
            area,
        );
        return;
    }
    let rows = usize::from(area.height).max(1);
    let top = browser.cursor.saturating_sub(rows - 1);
    // Sizes as `ls -lh` shows them: 48.0 MiB, not 50331667.
    let sizes: Vec<String> = entries
        .iter()
        .map(|e| crate::model::transfer::size(e.size))
        .collect();
    let size_width = sizes.iter().map(String::len).max().unwrap_or(1);
    let lines: Vec<Line> = entries
        .iter()
        .enumerate()
        .skip(top)
        .take(rows)
        .map(|(i, entry)| {
            let when = jiff::Timestamp::from_second(entry.mtime)
                .map(|t| t.strftime("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default();
            let name = sanitize(&entry.name);
            let (shown, style) = match &entry.kind {
                Kind::Dir => (format!("{name}/"), theme.title),
                Kind::Link(target) => (format!("{name} → {}", sanitize(target)), theme.debug),
                Kind::Special => (name.into_owned(), theme.warning),
                Kind::File => (name.into_owned(), theme.text),
            };
            let row = format!(
                " {} {:>6} {:>size_width$} {when}  ",
                mode_text(entry),
                entry.uid,
                sizes[i],
            );
            let selected = i == browser.cursor;
            let pick = |s| if selected { theme.selected } else { s };
            Line::from(vec![
                Span::styled(row, pick(theme.dim)),
                Span::styled(shown, pick(style)),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// `↓ heap.hprof  ▕████░░░░▏ 24.0 MiB / 48.0 MiB  40.1 MB/s  1 s left`.
fn transfer_line<'a>(t: &Transfer, width: usize, theme: &Theme) -> Line<'a> {
    let what = format!(" {} ", sanitize(&t.what));
    match &t.state {
        TransferState::Running => {
            let elapsed = std::time::Duration::from_millis(t.elapsed_ms);
            let figures = progress_line(t.bytes, t.total, elapsed);
            let bar_width = width
                .saturating_sub(what.chars().count() + figures.chars().count() + 6)
                .clamp(0, 30);
            let done = match t.total {
                Some(total) if total > 0 => {
                    ((t.bytes.min(total) as f64 / total as f64) * bar_width as f64) as usize
                }
                _ => 0,
            };
            Line::from(vec![
                Span::styled(what, theme.title),
                Span::styled(
                    format!("▕{}{}▏ ", "█".repeat(done), "░".repeat(bar_width - done)),
                    theme.pending,
                ),
                Span::styled(figures, theme.dim),
                Span::styled("  x cancels", theme.dim),
            ])
        }
        TransferState::Done(summary) => Line::from(vec![
            Span::styled(what, theme.good),
            Span::styled(format!("done · {}", sanitize(summary)), theme.dim),
        ]),
        TransferState::Failed(sentence) => Line::from(vec![
            Span::styled(what, theme.error),
            Span::styled(sanitize(sentence).into_owned(), theme.error),
        ]),
        TransferState::Cancelled => Line::from(vec![
            Span::styled(what, theme.dim),
            Span::styled("cancelled; nothing was kept", theme.dim),
        ]),
    }
}

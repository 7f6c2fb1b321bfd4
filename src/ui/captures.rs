//! The Captures view (`:captures`) and the `P` form.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::text_table;
use crate::app::App;
use crate::app::captures::{CaptureForm, CaptureState, CapturesView};
use crate::model::text::sanitize;
use crate::model::transfer::size;
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &CapturesView, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(
            format!(" captures ({}) ", app.captures.len()),
            theme.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if app.captures.is_empty() {
        let text = " No captures. P on a pod (or on marked pods) captures its packets into a file; podbay capture does it from a shell.";
        frame.render_widget(Paragraph::new(Span::styled(text, theme.dim)), inner);
        return;
    }
    let said_rows = app
        .captures
        .get(view.cursor)
        .map_or(0, |c| c.said.len().min(6) as u16);
    // The selected one's lines right under the rows.
    let said_height = said_rows + u16::from(said_rows > 0);
    let table_height =
        (app.captures.len() as u16 + 1).min(inner.height.saturating_sub(said_height));
    let [table, said, _] = Layout::vertical([
        Constraint::Length(table_height.max(2)),
        Constraint::Length(said_height),
        Constraint::Min(0),
    ])
    .areas(inner);
    let mut titles: Vec<String> = ["STATE", "PACKETS", "BYTES", "FILE", "PODS"]
        .map(String::from)
        .to_vec();
    // Captures on several clusters say whose pods each took.
    let clusters = app.names_clusters(app.captures.iter().map(|c| &c.cluster));
    // The file goes before the pods: on a narrow screen the pods are cut.
    let mut rows: Vec<Vec<String>> = app
        .captures
        .iter()
        .map(|c| {
            let pods: Vec<String> = match clusters {
                true => c
                    .pods
                    .iter()
                    .map(|p| format!("{}/{p}", c.cluster.context))
                    .collect(),
                false => c.pods.clone(),
            };
            vec![
                c.state.label().to_string(),
                c.packets.to_string(),
                size(c.bytes),
                sanitize(&c.file).into_owned(),
                sanitize(&pods.join(" ")).into_owned(),
            ]
        })
        .collect();
    text_table::give_way(
        &mut titles,
        &mut rows,
        (table.width, &[]),
        &["PODS", "BYTES"],
    );
    let style = |i: usize| match app.captures[i].state {
        CaptureState::Capturing => theme.good,
        CaptureState::Starting | CaptureState::Stopping => theme.pending,
        CaptureState::Ended => theme.text,
        CaptureState::Failed => theme.error,
    };
    text_table::draw(
        frame,
        table,
        (&titles, &rows, &[]),
        (view.cursor, &[]),
        style,
        theme,
    );
    // What the selected one last said, a line each.
    if let Some(capture) = app.captures.get(view.cursor) {
        let lines: Vec<Line> =
            std::iter::once(Line::default())
                .chain(capture.said.iter().take(6).map(|line| {
                    Line::from(Span::styled(format!(" {}", sanitize(line)), theme.dim))
                }))
                .collect();
        frame.render_widget(Paragraph::new(lines), said);
    }
}

/// The `P` form, centred over `area`.
pub fn draw_form(frame: &mut Frame, area: Rect, form: &CaptureForm, theme: &Theme) {
    let subject = match form.pods.as_slice() {
        [one] => format!("{}/{}", one.namespace, one.name),
        many => format!("{} marked pods, into one pcapng", many.len()),
    };
    let notes = [
        "tcpdump runs in a debug container, with the least privilege".to_string(),
        "Pod Security admits; both end with the capture (x in :captures).".to_string(),
    ];
    let title = format!(" Capture the packets of {}", sanitize(&subject));
    super::form::draw_boxed(frame, area, form, title, &notes, "capture", theme);
}

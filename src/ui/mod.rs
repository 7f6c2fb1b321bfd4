//! Drawing only: `draw(frame, app, theme)` reads the state and paints it.

mod bars;
mod help;
mod launcher;
mod pod_list;
mod pod_view;
#[cfg(test)]
mod snapshots;
mod workspace;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use crate::app::{App, Mode, View};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme) {
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(2),
    ])
    .areas(frame.area());
    bars::header(frame, header, app, theme);
    let screen = frame.area();
    let areas = app.areas_for((screen.width, screen.height));
    if let Some(area) = areas.browser {
        match &app.view {
            View::Pods => pod_list::draw(frame, area, app, theme),
            View::Pod(view) => pod_view::draw(frame, area, app, view, theme),
        }
    }
    if let Some(area) = areas.workspace {
        workspace::draw(frame, area, app, theme);
    }
    bars::footer(frame, footer, app, theme);
    match &app.mode {
        Mode::Help => help::draw(frame, centered(body, 76, 26), app, theme),
        Mode::Launcher(form) => launcher::draw(
            frame,
            centered(areas.browser.unwrap_or(body), 100, 22),
            app,
            form,
            theme,
        ),
        _ => {}
    }
}

/// A `width`×`height` box centred in `area` (shrunk to fit).
fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Cuts `text` to `width` columns, marking the cut with `…`.
fn ellipsize(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

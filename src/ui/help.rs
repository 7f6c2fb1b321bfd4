//! `?`: every key of the current view, from the live keymap (so config
//! overrides show as they are).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::keymap::Action;
use crate::app::{App, View};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let actions: &[Action] = match app.view {
        View::Pods => &[
            Action::Quit,
            Action::Up,
            Action::Down,
            Action::Top,
            Action::Bottom,
            Action::PageUp,
            Action::PageDown,
            Action::Open,
            Action::Debug,
            Action::Back,
            Action::Filter,
            Action::Command,
            Action::Help,
            Action::ToggleAllNamespaces,
        ],
        View::Pod(_) | View::Terminal(_) => &[
            Action::Up,
            Action::Down,
            Action::Back,
            Action::Debug,
            Action::Attach,
            Action::Shell,
            Action::Logs,
            Action::Command,
            Action::Help,
            Action::Quit,
        ],
    };
    let mut lines: Vec<Line> = actions
        .iter()
        .map(|a| {
            Line::from(vec![
                Span::styled(format!(" {:<18}", app.keymap.keys_for(*a)), theme.key_hint),
                Span::styled(a.description(), theme.text),
            ])
        })
        .collect();
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        " Filter mode: type to narrow · ↑/↓ move · enter keep · esc clear",
        theme.dim,
    )));
    lines.push(Line::from(Span::styled(
        " Commands: :ns NAME · :ns (all) · :ctx NAME · :q · tab completes",
        theme.dim,
    )));
    lines.push(Line::from(Span::styled(
        " Any key closes this help.",
        theme.dim,
    )));
    let title = match app.view {
        View::Pods => " keys: pods ",
        View::Pod(_) | View::Terminal(_) => " keys: pod ",
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(title, theme.title));
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

//! A full-screen terminal on one container, with its state above it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::App;
use crate::app::terminal::{TerminalKind, TerminalState, TerminalView};
use crate::model::human_duration;
use crate::term::pane::PaneView;
use crate::theme::Theme;

const SPINNER: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];

pub fn draw(frame: &mut Frame, area: Rect, app: &App, t: &TerminalView, theme: &Theme) {
    let [status, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let elapsed = app.now.duration_since(t.since);
    let spin = SPINNER[(elapsed.as_secs().unsigned_abs() as usize) % SPINNER.len()];
    let what = match t.kind {
        TerminalKind::Debug => "debug",
        TerminalKind::Attach => "attach",
        TerminalKind::Shell => "shell",
        TerminalKind::Log => "log",
    };
    let (state, style) = match &t.state {
        TerminalState::Launching => (
            format!(
                "{spin} adding the debug container… {}",
                human_duration(elapsed)
            ),
            theme.pending,
        ),
        TerminalState::Waiting { reason, message } => {
            let trouble =
                reason.contains("Err") || reason.contains("BackOff") || reason.contains("Invalid");
            let advice = if trouble {
                " Check the image name and the pod's image pull secrets; esc goes back."
            } else {
                ""
            };
            let detail = if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            };
            (
                format!(
                    "{spin} {reason}{detail} {}{advice}",
                    human_duration(elapsed)
                ),
                if trouble {
                    theme.failing
                } else {
                    theme.pending
                },
            )
        }
        TerminalState::Attaching => (format!("{spin} attaching…"), theme.pending),
        TerminalState::Attached => ("● attached".to_string(), theme.live),
        TerminalState::Disconnected(reason) => (
            format!("◍ {reason} — r to reattach, esc to go back"),
            theme.warning,
        ),
        TerminalState::Ended(reason) => (format!("■ {reason} — esc to go back"), theme.warning),
    };
    let mut spans = vec![
        Span::styled(format!(" {what} "), theme.debug),
        Span::styled(format!("{}/{} ", t.pod, t.container), theme.title),
        Span::styled(state, style),
    ];
    // While it comes up, the newest event about it says what the kubelet is doing.
    if matches!(
        t.state,
        TerminalState::Launching | TerminalState::Waiting { .. }
    ) && let Some(event) = t
        .back
        .events
        .iter()
        .rev()
        .find(|e| e.container() == Some(t.container.as_str()))
    {
        let style = if event.warning {
            theme.warning
        } else {
            theme.dim
        };
        spans.push(Span::styled(
            format!("  {}: {}", event.reason, event.message),
            style,
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), status);
    let view = PaneView { pane: &t.pane };
    let cursor = view.cursor(body);
    frame.render_widget(view, body);
    if let Some((x, y)) = cursor.filter(|_| t.is_live()) {
        frame.set_cursor_position((x, y));
    }
}

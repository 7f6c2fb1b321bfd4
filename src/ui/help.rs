//! `?`: every key of the current view, from the live keymap (so config
//! overrides show as they are).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::keymap::Action;
use crate::app::{App, Focus, View};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, top: usize, theme: &Theme) {
    if app.focus == Focus::Workspace {
        return draw_pane_keys(frame, area, app, top, theme);
    }
    let actions: &[Action] = match app.view {
        View::Pods | View::Messages(_) => &[
            Action::Quit,
            Action::Up,
            Action::Down,
            Action::Top,
            Action::Bottom,
            Action::PageUp,
            Action::PageDown,
            Action::Open,
            Action::Debug,
            Action::Forward,
            Action::Mark,
            Action::MarkShown,
            Action::Back,
            Action::Filter,
            Action::Command,
            Action::Help,
            Action::ToggleAllNamespaces,
            Action::Describe,
            Action::Yaml,
            Action::Events,
            Action::SortByName,
            Action::SortByStatus,
            Action::SortByRestarts,
            Action::SortByAge,
            Action::Delete,
            Action::CopyName,
            Action::Messages,
            Action::Nodes,
            Action::CopyPod,
            Action::Workspace,
        ],
        View::Events(_) => &[
            Action::Up,
            Action::Down,
            Action::Top,
            Action::Bottom,
            Action::Open,
            Action::Filter,
            Action::Back,
            Action::ToggleAllNamespaces,
            Action::Command,
            Action::Help,
            Action::Quit,
        ],
        View::Files(_) | View::Forwards(_) | View::Nodes(_) => &[
            Action::Command,
            Action::Help,
            Action::Workspace,
            Action::Quit,
        ],
        View::Pod(_) => &[
            Action::Up,
            Action::Down,
            Action::Back,
            Action::Debug,
            Action::Attach,
            Action::Shell,
            Action::Logs,
            Action::PreviousLogs,
            Action::AllLogs,
            Action::Files,
            Action::Forward,
            Action::Fold,
            Action::Exec,
            Action::Describe,
            Action::Yaml,
            Action::Events,
            Action::Delete,
            Action::CopyName,
            Action::Workspace,
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
    if matches!(app.view, View::Files(_)) {
        for (keys, what) in [
            ("↑/↓ j/k pgup/pgdn", "move"),
            (
                "enter →",
                "open a directory (or a link to one); read a file",
            ),
            ("- ← backspace", "the directory above"),
            ("/", "filter the names (esc clears)"),
            (
                "v",
                "read the file (text, or a hex dump), its first 256 KiB",
            ),
            ("g", "download the selection into [files] download_dir"),
            ("u", "upload a local path into this directory"),
            ("D", "remove the selection (asks first)"),
            ("x", "cancel the last copy running"),
            ("r", "list again"),
            ("esc", "back to the pod"),
        ] {
            lines.push(Line::from(vec![
                Span::styled(format!(" {keys:<18}"), theme.key_hint),
                Span::styled(what, theme.text),
            ]));
        }
        lines.push(Line::default());
    }
    if matches!(app.view, View::Forwards(_)) {
        for (keys, what) in [
            ("↑/↓ j/k", "move"),
            ("x", "stop the selected forward"),
            ("esc", "back to the pods (forwards keep running)"),
        ] {
            lines.push(Line::from(vec![
                Span::styled(format!(" {keys:<18}"), theme.key_hint),
                Span::styled(what, theme.text),
            ]));
        }
        lines.push(Line::default());
    }
    lines.push(Line::from(Span::styled(
        " Filter mode: type to narrow · ↑/↓ move · enter keep · esc clear",
        theme.dim,
    )));
    lines.push(Line::from(Span::styled(
        " Describe, YAML, an event in full: ↑/↓ pgup/pgdn g/G scroll · / search · n/N next/previous · esc back",
        theme.dim,
    )));
    lines.push(Line::from(Span::styled(
        " Commands: :ns NAME · :ns (all) · :ctx NAME · :describe · :yaml · :events [-A] · :messages · :pf (forwards) · :nodes · :sort COLUMN · :exec CMD… · :delete · :save NAME · :load NAME · :q · tab completes",
        theme.dim,
    )));
    let title = match app.view {
        View::Pods => " keys: pods ",
        View::Pod(_) => " keys: pod ",
        View::Events(_) => " keys: events ",
        View::Messages(_) => " keys: messages ",
        View::Files(_) => " keys: files ",
        View::Forwards(_) => " keys: forwards ",
        View::Nodes(_) => " keys: nodes (enter: its pods, d: a shell on it) ",
    };
    draw_box(frame, area, title, lines, top, theme);
}

/// The help box, sized to its lines and centred in `screen`. Lines wrap
/// when the screen is narrow; when it is too short, blank lines go first,
/// then it shows the lines from `top` on and scrolls (j/k, space).
fn draw_box(
    frame: &mut Frame,
    screen: Rect,
    title: &str,
    mut lines: Vec<Line<'static>>,
    top: usize,
    theme: &Theme,
) {
    let closing = Line::from(Span::styled(" Any key closes this help.", theme.dim));
    let widest = lines
        .iter()
        .chain([&closing])
        .map(Line::width)
        .max()
        .unwrap_or(0);
    let width = (widest as u16 + 3)
        .max(title.len() as u16 + 4)
        .min(screen.width);
    let inner = usize::from(width.saturating_sub(2));
    let room = usize::from(screen.height.saturating_sub(3));
    let wrap = |lines: &[Line<'static>]| -> Vec<Line<'static>> {
        lines.iter().flat_map(|l| super::wrap(l, inner)).collect()
    };
    let mut rows = wrap(&lines);
    if rows.len() > room {
        lines.retain(|l| l.width() > 0);
        rows = wrap(&lines);
    }
    let closing = if rows.len() > room {
        // The scroll line stands where the closing line would.
        let shown = room.max(1);
        let first = top.min(rows.len() - shown);
        let total = rows.len();
        rows = rows.into_iter().skip(first).take(shown).collect();
        Line::from(Span::styled(
            format!(
                " lines {}–{} of {total}: j/k, space scroll; another key closes this help.",
                first + 1,
                first + shown
            ),
            theme.warning,
        ))
    } else {
        closing
    };
    rows.extend(super::wrap(&closing, inner));
    let area = super::centered(screen, width, rows.len() as u16 + 2);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(title.to_string(), theme.title));
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(rows).block(block), area);
}

/// The pane commands, each after the prefix key.
pub const PANE_KEYS: [(&str, &str); 17] = [
    ("d  esc  tab  f12", "the browser (sessions keep running)"),
    ("← ↓ ↑ →  h j k l", "focus the pane in that direction"),
    ("o", "focus the next pane"),
    ("|  %", "split side by side"),
    ("-  \"", "split one above the other"),
    (
        "H J K L  ctrl-arrows",
        "resize (repeats without the prefix)",
    ),
    ("z", "zoom the pane / unzoom"),
    ("=", "even out the splits"),
    ("space", "tile all panes"),
    ("x", "close the pane (asks if its session is alive)"),
    (",", "rename the pane"),
    ("m", "mark the pane for broadcast / unmark"),
    ("S", "mark all panes / unmark all"),
    ("[  pgup", "copy mode: v select, y copy, / search, q leave"),
    ("r", "reattach a disconnected pane"),
    (":", "command line (:record, :rename NAME, :save NAME, :q)"),
    ("(prefix again)", "send the prefix key itself to the shell"),
];

fn draw_pane_keys(frame: &mut Frame, area: Rect, app: &App, top: usize, theme: &Theme) {
    let prefix = app.options.prefix.label();
    let mut lines: Vec<Line> = vec![Line::from(Span::styled(
        format!(" Press {prefix}, then:"),
        theme.text,
    ))];
    lines.extend(PANE_KEYS.iter().map(|(keys, what)| {
        Line::from(vec![
            Span::styled(format!("   {keys:<22}"), theme.key_hint),
            Span::styled(*what, theme.text),
        ])
    }));
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        " Without the prefix every key goes to the shell; shift-pgup/pgdn and the wheel scroll.",
        theme.dim,
    )));
    draw_box(frame, area, " keys: panes ", lines, top, theme);
}

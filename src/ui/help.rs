//! `?`: every key of the current view, from the live keymap (so config
//! overrides show as they are).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::app::bindings;
use crate::app::{App, Focus, View};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, top: usize, theme: &Theme) {
    if app.focus == Focus::Workspace {
        return draw_pane_keys(frame, area, app, top, theme);
    }
    let mut lines: Vec<Line> = bindings::browser(app)
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(
                    format!(" {:<18}", b.keys_label(&app.keymap)),
                    theme.key_hint,
                ),
                Span::styled(b.help(), theme.text),
            ])
        })
        .collect();
    lines.push(Line::default());
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
        View::Captures(_) => " keys: captures ",
        View::Nodes(_) => " keys: nodes (enter: its pods, d: a shell on it) ",
        View::Services(_) => " keys: services (enter: its pods, D: where it sends) ",
        View::Workloads(_) => " keys: workloads (enter: its pods, d: debug them) ",
        View::Debuggers(_) => " keys: debuggers (x: stop one, a: attach to it) ",
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

/// A pane command, after the prefix key: its keys and what it does, and
/// the footer's words for it when the footer shows it.
pub struct PaneKey {
    pub keys: &'static str,
    pub does: &'static str,
    pub hint: Option<(&'static str, &'static str)>,
}

const fn pane_key(keys: &'static str, does: &'static str) -> PaneKey {
    PaneKey {
        keys,
        does,
        hint: None,
    }
}

const fn hinted(
    keys: &'static str,
    does: &'static str,
    hint: (&'static str, &'static str),
) -> PaneKey {
    PaneKey {
        keys,
        does,
        hint: Some(hint),
    }
}

/// The pane commands, each after the prefix key: the help lists them all,
/// the footer those with a hint (in this order, as room allows).
pub const PANE_KEYS: [PaneKey; 18] = [
    hinted("?", "these keys", ("?", "pane keys")),
    hinted(
        "d  esc  tab  f12",
        "the browser (sessions keep running)",
        ("d", "browser"),
    ),
    hinted("|  %", "split side by side", ("|/-", "split")),
    pane_key("-  \"", "split one above the other"),
    hinted(
        "← ↓ ↑ →  h j k l",
        "focus the pane in that direction",
        ("arrows", "focus"),
    ),
    pane_key("o", "focus the next pane"),
    pane_key(
        "H J K L  ctrl-arrows",
        "resize (repeats without the prefix)",
    ),
    hinted("z", "zoom the pane / unzoom", ("z", "zoom")),
    pane_key("=", "even out the splits"),
    pane_key("space", "tile all panes"),
    hinted(
        "x",
        "close the pane (asks if its session is alive)",
        ("x", "close"),
    ),
    pane_key(",", "rename the pane"),
    hinted(
        "m",
        "mark the pane for broadcast / unmark",
        ("m", "broadcast"),
    ),
    pane_key("S", "mark all panes / unmark all"),
    hinted(
        "[  pgup",
        "copy mode: v select, y copy, / search, q leave",
        ("[", "copy"),
    ),
    pane_key("r", "reattach a disconnected pane"),
    pane_key(":", "command line (:record, :rename NAME, :save NAME, :q)"),
    pane_key("(prefix again)", "send the prefix key itself to the shell"),
];

fn draw_pane_keys(frame: &mut Frame, area: Rect, app: &App, top: usize, theme: &Theme) {
    let prefix = app.options.prefix.label();
    let mut lines: Vec<Line> = vec![Line::from(Span::styled(
        format!(" Press {prefix}, then:"),
        theme.text,
    ))];
    lines.extend(PANE_KEYS.iter().map(|k| {
        Line::from(vec![
            Span::styled(format!("   {:<22}", k.keys), theme.key_hint),
            Span::styled(k.does, theme.text),
        ])
    }));
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        " Without the prefix every key goes to the shell; shift-pgup/pgdn and the wheel scroll.",
        theme.dim,
    )));
    draw_box(frame, area, " keys: panes ", lines, top, theme);
}

//! The workspace: every pane with its border (what it shows, its state,
//! shared/broadcast/recording marks) and its terminal's cells.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::app::copy::CopyMode;
use crate::app::terminal::{Input, Terminal, TerminalState};
use crate::app::workspace::{Pane, inner};
use crate::app::{App, Focus};
use crate::model::{human_duration, waiting_in_trouble};
use crate::term::Size;
use crate::term::grid::GridView;
use crate::theme::Theme;

use super::columns::{Cut, cut};

const SPINNER: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    for (pane, rect) in app.workspace.geometry(area) {
        let Some(slot) = app.workspace.panes.get(&pane) else {
            continue;
        };
        let Some(t) = app.workspace.terminals.get(&slot.terminal) else {
            continue;
        };
        let focused = app.focus == Focus::Workspace && app.workspace.focused == Some(pane);
        let viewers = app.workspace.viewers(t.id);
        draw_pane(frame, rect, app, slot, t, focused, viewers, theme);
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_pane(
    frame: &mut Frame,
    rect: Rect,
    app: &App,
    slot: &Pane,
    t: &Terminal,
    focused: bool,
    viewers: usize,
    theme: &Theme,
) {
    let border = if slot.marked {
        theme.failing.add_modifier(Modifier::BOLD)
    } else if focused {
        theme.key_hint
    } else {
        theme.border
    };
    // A pane's own name, else `ns/pod/container`, which may drop its
    // namespace before anything is cut: the pod is what tells panes apart.
    let label = t.label();
    let names: Vec<&str> = match &slot.title {
        Some(title) => vec![title.as_str()],
        None => vec![
            &label,
            label.split_once('/').map_or(&*label, |(_, rest)| rest),
        ],
    };
    let marks = Marks {
        context: (app.contexts_used.len() > 1).then_some(&*t.key.cluster.context),
        kind: t.kind.label(),
        viewers,
        recording: t.recording.is_some(),
        broadcast: slot.marked,
    };
    let (state, state_style) = state_label(app, t, theme);
    let (title, state) = title_line(&marks, &names, state, rect.width.saturating_sub(2), theme);
    let mut block = Block::bordered()
        .border_style(border)
        .title(title)
        .title_top(Line::from(Span::styled(state, state_style)).right_aligned());
    if let Some(bottom) = bottom_line(slot, t, usize::from(rect.width.saturating_sub(2)), theme) {
        block = block.title_bottom(bottom);
    }
    frame.render_widget(block, rect);
    let body = inner(rect);
    if body.is_empty() {
        return;
    }
    if matches!(
        t.state,
        TerminalState::Launching | TerminalState::Waiting { .. }
    ) {
        draw_coming_up(frame, body, app, t, theme);
        return;
    }
    let view = GridView { grid: &t.grid };
    let cursor = view.cursor(body);
    frame.render_widget(view, body);
    shade_unused(frame.buffer_mut(), body, t.grid.size(), theme);
    match &slot.copy {
        Some(copy) => {
            highlight_copy(frame.buffer_mut(), body, t, copy, theme);
            let (line, col) = (copy.cursor.line, copy.cursor.col);
            let row = line + t.grid.view_offset() as isize;
            if focused && (0..((body.height) as isize)).contains(&row) && col < body.width {
                frame.set_cursor_position((body.x + col, body.y + row as u16));
            }
        }
        None => {
            if let Some((x, y)) = cursor.filter(|_| focused && t.is_live()) {
                frame.set_cursor_position((x, y));
            }
        }
    }
}

/// What a pane's title says besides its name.
struct Marks<'a> {
    /// Set once more than one context has been used in this run.
    context: Option<&'a str>,
    kind: &'a str,
    viewers: usize,
    recording: bool,
    broadcast: bool,
}

/// How much of a title to show; the first level that leaves the name
/// `name_min` columns is used.
struct TitleDetail {
    short_flags: bool,
    state: bool,
    kind: bool,
    context_max: usize,
    name_min: usize,
}

const TITLE_DETAILS: [TitleDetail; 4] = [
    TitleDetail {
        short_flags: false,
        state: true,
        kind: true,
        context_max: 16,
        name_min: 12,
    },
    TitleDetail {
        short_flags: true,
        state: true,
        kind: true,
        context_max: 16,
        name_min: 6,
    },
    TitleDetail {
        short_flags: true,
        state: false,
        kind: true,
        context_max: 10,
        name_min: 4,
    },
    // The last resort: the flags, then as much of the context as fits.
    TitleDetail {
        short_flags: true,
        state: false,
        kind: false,
        context_max: usize::MAX,
        name_min: 0,
    },
];

/// The pane's title and its state label, fitted to `room` columns: the name
/// is cut first (in the middle), then the flags take their short forms,
/// then the state, the kind and the context give way. The flags go last:
/// typing into a broadcast pane must never come as a surprise.
fn title_line<'a>(
    marks: &Marks,
    names: &[&str],
    state: String,
    room: u16,
    theme: &Theme,
) -> (Line<'a>, String) {
    let room = usize::from(room);
    let state = format!(" {state} ");
    let width = |spans: &[Span]| spans.iter().map(Span::width).sum::<usize>();
    let shortest = names.iter().map(|n| n.chars().count()).min().unwrap_or(0);
    for (i, level) in TITLE_DETAILS.iter().enumerate() {
        let last = i == TITLE_DETAILS.len() - 1;
        let flags = flag_spans(marks, level.short_flags, theme);
        let state_width = if level.state {
            Span::raw(state.as_str()).width()
        } else {
            0
        };
        let mut head = Vec::new();
        if let Some(context) = marks.context {
            // " ctx ▸" and, at the last level, the " " before the flags.
            let left = room.saturating_sub(width(&flags) + 4);
            let max = level.context_max.min(left);
            if max > 0 {
                head.push(Span::styled(
                    format!(" {} ▸", cut(context, max, Cut::End)),
                    theme.title.add_modifier(Modifier::BOLD),
                ));
            }
        }
        if level.kind {
            head.push(Span::styled(format!(" {} ", marks.kind), theme.debug));
        } else {
            head.push(Span::raw(" "));
        }
        let name_room = room.saturating_sub(width(&head) + width(&flags) + state_width + 1);
        if name_room >= level.name_min.min(shortest) || last {
            // A name of one or two columns says nothing, unless it is whole.
            if name_room >= 3 || (name_room > 0 && name_room >= shortest) {
                head.push(Span::styled(
                    format!("{} ", fit_name(names, name_room)),
                    theme.title,
                ));
            }
            head.extend(flags);
            let state = if level.state { state } else { String::new() };
            return (Line::from(head), state);
        }
    }
    unreachable!("the last level always fits")
}

/// The first of `names` that fits `room` whole, else the last (the
/// shortest) cut in the middle.
fn fit_name<'a>(names: &[&'a str], room: usize) -> std::borrow::Cow<'a, str> {
    match names.iter().find(|n| n.chars().count() <= room) {
        Some(name) => std::borrow::Cow::Borrowed(name),
        None => cut(names.last().copied().unwrap_or_default(), room, Cut::Middle),
    }
}

/// Shared, recording and broadcast marks, long (`⇄ shared ×2`) or short (`⇄2`).
fn flag_spans<'a>(marks: &Marks, short: bool, theme: &Theme) -> Vec<Span<'a>> {
    let mut flags = Vec::new();
    if marks.viewers > 1 {
        let text = if short {
            format!("⇄{} ", marks.viewers)
        } else {
            format!("⇄ shared ×{} ", marks.viewers)
        };
        flags.push(Span::styled(text, theme.warning));
    }
    if marks.recording {
        flags.push(Span::styled(
            if short { "● " } else { "● REC " },
            theme.failing,
        ));
    }
    if marks.broadcast {
        flags.push(Span::styled(
            if short { "⚑ " } else { " ⚑ BROADCAST " },
            theme
                .failing
                .add_modifier(Modifier::REVERSED | Modifier::BOLD),
        ));
    }
    flags
}

/// The short state in the top border.
fn state_label(app: &App, t: &Terminal, theme: &Theme) -> (String, Style) {
    let elapsed = app.now.duration_since(t.since);
    let spin = SPINNER[(elapsed.as_secs().unsigned_abs() as usize) % SPINNER.len()];
    match &t.state {
        TerminalState::Launching => (format!("{spin} launching"), theme.pending),
        TerminalState::Waiting { reason, .. } => (
            format!("{spin} {reason} {}", human_duration(elapsed)),
            if waiting_in_trouble(reason) {
                theme.failing
            } else {
                theme.pending
            },
        ),
        TerminalState::Attaching => (format!("{spin} attaching…"), theme.pending),
        TerminalState::Attached => match t.input() {
            Input::Raw => ("● attached".into(), theme.live),
            // The pane is the line discipline: its process has no terminal.
            Input::Lines => ("● attached · no tty".into(), theme.live),
            Input::ReadOnly => ("● attached · read-only".into(), theme.live),
        },
        TerminalState::Disconnected(_) => ("◍ disconnected".into(), theme.warning),
        TerminalState::Ended(_) => ("■ ended".into(), theme.warning),
    }
}

/// The bottom border: copy mode, a disconnect, the end, or a notice.
fn bottom_line<'a>(slot: &Pane, t: &Terminal, width: usize, theme: &Theme) -> Option<Line<'a>> {
    if let Some(copy) = &slot.copy {
        let text = match (&copy.typing, &copy.note) {
            (Some(query), _) => {
                let way = if copy.backward { "?" } else { "/" };
                format!(" search {way}{query}▏ enter find · esc cancel ")
            }
            (None, Some(note)) => format!(" [copy] {note} "),
            (None, None) => " [copy] v select · y copy · / ? search · n/N next · q leave ".into(),
        };
        return Some(Line::from(Span::styled(text, theme.key_hint)));
    }
    // The sentence, and the key that acts on it: a narrow pane cuts the
    // sentence (M reads it whole), never the key.
    let (sentence, key) = match &t.state {
        TerminalState::Attached | TerminalState::Attaching if t.unanswered.is_some() => (
            format!(
                " ◌ no answer for {}s: the server or the link is stalled",
                t.unanswered.unwrap_or_default()
            ),
            " ",
        ),
        TerminalState::Disconnected(reason) => (format!(" ◍ {reason}"), " — r to reattach "),
        TerminalState::Ended(reason) => (format!(" ■ {reason}"), " — x closes "),
        _ => (format!(" {}", t.notice.as_ref()?), " "),
    };
    let room = width.saturating_sub(key.chars().count());
    let sentence = if sentence.chars().count() > room && room > 4 {
        let cut: String = sentence.chars().take(room - 1).collect();
        format!("{cut}…")
    } else {
        sentence
    };
    Some(Line::from(Span::styled(
        format!("{sentence}{key}"),
        theme.warning,
    )))
}

/// What to do about an image that will not pull: for want of credentials,
/// which registry and which secrets, and the copy that carries one.
fn advice(t: &Terminal, message: &str) -> String {
    let detail = t.pod.detail.as_ref();
    let image = detail
        .and_then(|d| d.container(&t.key.container))
        .map(|c| c.image.clone())
        .filter(|_| crate::model::image::needs_credentials(message));
    let Some(image) = image else {
        return "Check the image name and the pod's image pull secrets; x closes this pane.".into();
    };
    // The server's names, drawn: made printable as every cell is.
    let pull_secrets: Vec<String> = detail
        .and_then(|d| d.manifest.spec.as_ref())
        .and_then(|spec| spec.image_pull_secrets.as_ref())
        .into_iter()
        .flatten()
        .map(|s| crate::model::text::printable(s.name.clone()))
        .collect();
    let sentence = crate::model::image::PrivateImage {
        image: &image,
        namespace: &t.key.pod.namespace,
        pod: &t.key.pod.name,
        pull_secrets: &pull_secrets,
        offer: None,
        searched: false,
        copy: t.owns_pod(),
    }
    .sentence();
    format!("{sentence} x closes this pane.")
}

/// While a debug container comes up: what the kubelet is doing, and advice.
fn draw_coming_up(frame: &mut Frame, body: Rect, app: &App, t: &Terminal, theme: &Theme) {
    let elapsed = human_duration(app.now.duration_since(t.since));
    let mut lines = Vec::new();
    match &t.state {
        TerminalState::Waiting { reason, message } => {
            let style = if waiting_in_trouble(reason) {
                theme.failing
            } else {
                theme.pending
            };
            let detail = if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            };
            lines.push(Line::from(Span::styled(
                format!("{reason}{detail} ({elapsed})"),
                style,
            )));
            if waiting_in_trouble(reason) {
                lines.push(Line::from(Span::styled(advice(t, message), theme.dim)));
            }
        }
        _ => lines.push(Line::from(Span::styled(
            format!("adding the debug container… ({elapsed})"),
            theme.pending,
        ))),
    }
    if let Some(event) = t.newest_event() {
        let style = if event.warning {
            theme.warning
        } else {
            theme.dim
        };
        lines.push(Line::from(Span::styled(
            cut(
                &format!("{}: {}", event.reason, event.message),
                usize::from(body.width) * 3,
                Cut::End,
            )
            .into_owned(),
            style,
        )));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
}

/// Cells of the pane the terminal does not reach (a smaller pane sets a
/// shared terminal's size) are dotted, as tmux does.
fn shade_unused(buf: &mut Buffer, body: Rect, Size { cols, rows }: Size, theme: &Theme) {
    if cols >= body.width && rows >= body.height {
        return;
    }
    for y in body.top()..body.bottom() {
        for x in body.left()..body.right() {
            if (x - body.x >= cols || y - body.y >= rows)
                && let Some(cell) = buf.cell_mut((x, y))
            {
                cell.set_symbol("·").set_style(theme.dim);
            }
        }
    }
}

fn highlight_copy(buf: &mut Buffer, body: Rect, t: &Terminal, copy: &CopyMode, theme: &Theme) {
    let offset = t.grid.view_offset() as isize;
    let Size { cols, rows } = t.grid.size();
    for row in 0..rows.min(body.height) {
        let line = ((row) as isize) - offset;
        for col in 0..cols.min(body.width) {
            if copy.is_selected(line, col)
                && let Some(cell) = buf.cell_mut((body.x + col, body.y + row))
            {
                cell.set_style(theme.selected);
            }
        }
    }
}

//! The header (context, namespace, counts, connection) and the footer
//! (message or input line, and the main keys).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::bindings::{self, Key};
use crate::app::keymap::Action;
use crate::app::{App, Focus, LinkState, Mode, Severity, View};
use crate::theme::Theme;

/// How many words a cluster's state takes in the header.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Words {
    /// One cluster: `stalled: no answer for 12s`.
    Whole,
    /// Several: `stalled 12s`.
    Short,
    /// Several on a line too narrow for their words: the dot, and a
    /// stall's seconds.
    Dot,
}

/// A cluster's link as the header says it: a dot, words, a colour.
fn link_words(
    cluster: &crate::app::other_clusters::ClusterState,
    words: Words,
    theme: &Theme,
) -> (&'static str, String, ratatui::style::Style) {
    let (dot, said, style) = match (cluster.failed, cluster.unanswered, cluster.state) {
        (Some(failed), _, _) => ("⊘", failed.to_string(), theme.failing),
        // A server that does not answer is neither live nor reconnecting.
        (None, Some(seconds), _) if words == Words::Dot => {
            return ("◍", format!("{seconds}s"), theme.warning);
        }
        (None, Some(seconds), _) if words == Words::Short => {
            ("◍", format!("stalled {seconds}s"), theme.warning)
        }
        (None, Some(seconds), _) => (
            "◍",
            format!("stalled: no answer for {seconds}s"),
            theme.warning,
        ),
        (None, None, LinkState::Live) => ("●", "live".into(), theme.live),
        (None, None, LinkState::Connecting) => ("◌", "connecting".into(), theme.pending),
        (None, None, LinkState::Reconnecting) => ("◍", "reconnecting".into(), theme.warning),
    };
    match words {
        Words::Dot => (dot, String::new(), style),
        _ => (dot, said, style),
    }
}

/// Each cluster of a list of several, with its state (`prod ● live ·
/// staging ◍ stalled 12s`): one that stalls or refuses is seen at once,
/// beside those that answer.
/// Names longer than `longest` characters are cut in the middle, where
/// contexts of one fleet differ least (`prod-us-…-blue`).
fn cluster_spans(
    clusters: &[crate::app::other_clusters::ClusterState],
    words: Words,
    longest: usize,
    theme: &Theme,
) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    for (i, cluster) in clusters.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.dim));
        }
        let (dot, said, style) = link_words(cluster, words, theme);
        let whole = crate::model::text::sanitize(cluster.context);
        let name = super::columns::cut(&whole, longest, super::columns::Cut::Middle).into_owned();
        spans.push(Span::styled(name, theme.text));
        // Namespaces of its own, when not the header's `ns`.
        if let Some(namespaces) = cluster.namespaces.as_deref() {
            let namespaces = crate::model::text::sanitize(namespaces);
            spans.push(Span::styled(format!("/{namespaces}"), theme.dim));
        }
        spans.push(Span::raw(" "));
        let state = match said.is_empty() {
            true => dot.to_string(),
            false => format!("{dot} {said}"),
        };
        spans.push(Span::styled(state, style));
    }
    spans
}

pub fn header(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let clusters = app.cluster_states();
    let (dot, state, style) = link_words(
        &crate::app::other_clusters::ClusterState {
            failed: None,
            ..clusters[0].clone()
        },
        Words::Whole,
        theme,
    );
    let (scope, counts, query) = match &app.view {
        View::Events(view) => {
            let total = view.rows.len();
            let noun = if total == 1 { "event" } else { "events" };
            let counts = if view.filter.is_empty() {
                format!("{total} {noun}")
            } else {
                format!("{}/{total} {noun}", view.visible().len())
            };
            let query = (!view.filter.is_empty()).then(|| view.filter.clone());
            (view.scope.label(), counts, query)
        }
        _ => {
            let total = app.pods.total();
            let noun = if total == 1 { "pod" } else { "pods" };
            let mut counts = if app.pods.query().is_some() || app.pods.narrow().is_some() {
                format!("{}/{total} {noun}", app.pods.visible_len())
            } else {
                format!("{total} {noun}")
            };
            if let Some((loaded, expected)) = app.pods_loading() {
                counts = match expected {
                    Some(all) => format!("loading {} / ~{} pods", grouped(loaded), grouped(all)),
                    None => format!("loading {} pods…", grouped(loaded)),
                };
            }
            if app.refused_scope().is_some() {
                counts = "pods unavailable".to_string();
            } else if !app.refused.is_empty() {
                counts.push_str(&format!(" ({} ns refused)", app.refused.len()));
            }
            if !app.unreadable_pods.is_empty() {
                counts.push_str(&format!(" ({} unreadable)", app.unreadable_pods.len()));
            }
            let marked = app.pods.marks().len();
            if marked > 0 {
                counts.push_str(&format!(" · {marked} marked"));
            }
            (
                app.scope.label(),
                counts,
                app.pods.query().map(str::to_string),
            )
        }
    };
    let sep = Span::styled(" │ ", theme.dim);
    let mut spans = Vec::new();
    if !app.shows_several() {
        spans.push(Span::styled("ctx ", theme.dim));
        spans.push(Span::styled(app.context.clone(), theme.text));
    }
    spans.extend([
        sep.clone(),
        Span::styled("ns ", theme.dim),
        Span::styled(scope, theme.text),
        sep.clone(),
        Span::styled(counts, theme.text),
    ]);
    if let (Some(narrowed), View::Pods | View::Pod(_)) = (&app.narrowed, &app.view) {
        spans.push(sep.clone());
        spans.push(Span::styled("pods of ", theme.dim));
        spans.push(Span::styled(narrowed.from.clone(), theme.matched));
    }
    if let Some(query) = query {
        spans.push(sep.clone());
        spans.push(Span::styled("filter ", theme.dim));
        spans.push(Span::styled(query, theme.matched));
    }
    let forwarding = app
        .forwards
        .iter()
        .filter(|f| !matches!(f.state, crate::app::forwards::ForwardState::Failed(_)))
        .count();
    if forwarding > 0 {
        let noun = if forwarding == 1 {
            "forward"
        } else {
            "forwards"
        };
        spans.push(sep.clone());
        spans.push(Span::styled(format!("⇄ {forwarding} {noun}"), theme.text));
    }
    if !app.shows_several() {
        spans.push(sep.clone());
        spans.push(Span::styled(format!("{dot} {state}"), style));
    }
    let mut line = vec![Span::styled(" podbay", theme.title), sep];
    if app.shows_several() {
        // The clusters' words give way before the namespace and counts.
        let width = |spans: &[Span]| spans.iter().map(|s| s.width()).sum::<usize>();
        let room = usize::from(area.width).saturating_sub(width(&line) + width(&spans));
        let mut spans_of = cluster_spans(&clusters, Words::Short, usize::MAX, theme);
        if width(&spans_of) > room {
            spans_of = cluster_spans(&clusters, Words::Dot, usize::MAX, theme);
        }
        // Still too wide: each name gets an equal share of what is left
        // after the dots and separators (6 characters at least).
        let names: usize = clusters
            .iter()
            .map(|c| crate::model::text::sanitize(c.context).chars().count())
            .sum();
        let over = width(&spans_of).saturating_sub(room);
        if over > 0 {
            let share = (names.saturating_sub(over) / clusters.len()).max(6);
            spans_of = cluster_spans(&clusters, Words::Dot, share, theme);
        }
        line.extend(spans_of);
    }
    line.extend(spans);
    frame.render_widget(
        Paragraph::new(Line::from(line)).style(theme.status_bar),
        area,
    );
}

pub fn footer(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let [top, bottom] = [
        Rect { height: 1, ..area },
        Rect {
            y: area.y + 1,
            height: 1,
            ..area
        },
    ];
    let line = match &app.mode {
        Mode::Filter(query) => {
            let mut spans = vec![Span::styled("/", theme.key_hint)];
            spans.extend(super::with_cursor(query, theme.text, theme.key_hint));
            spans.push(Span::styled("   enter keep · esc clear", theme.dim));
            Line::from(spans)
        }
        Mode::Command(line) => {
            let (before, after) = line.split_at_cursor();
            let hint = if line.candidates.is_empty() {
                "   tab complete · enter run · esc cancel".to_string()
            } else {
                format!("   {}", line.candidates.join("  "))
            };
            Line::from(vec![
                Span::styled(":", theme.key_hint),
                Span::styled(before.to_string(), theme.text),
                Span::styled("▏", theme.key_hint),
                Span::styled(after.to_string(), theme.text),
                Span::styled(hint, theme.dim),
            ])
        }
        Mode::Find(query) => Line::from(vec![
            Span::styled("/", theme.key_hint),
            Span::styled(query.clone(), theme.text),
            Span::styled("▏", theme.key_hint),
            Span::styled("   enter find · n/N next/previous · esc cancel", theme.dim),
        ]),
        Mode::ConfirmDelete(..) => Line::from(Span::styled(
            format!(
                " {}",
                app.message
                    .as_ref()
                    .map_or("Delete the pod? y/n", |m| m.text.as_str())
            ),
            theme.warning.add_modifier(ratatui::style::Modifier::BOLD),
        )),
        Mode::ConfirmClose(pane) => Line::from(vec![
            Span::styled(
                match app
                    .workspace
                    .panes
                    .get(pane)
                    .and_then(|p| app.workspace.terminals.get(&p.terminal))
                {
                    Some(t) if t.owns_pod() => {
                        " Close this pane (the pod podbay made is deleted)? "
                    }
                    _ => " Close this pane (a container runs on)? ",
                },
                theme.warning,
            ),
            Span::styled("y", theme.key_hint),
            Span::styled(" closes · other keys keep it", theme.dim),
        ]),
        Mode::ConfirmRestore(_) => Line::from(vec![
            Span::styled(
                format!(
                    " {} ",
                    app.message.as_ref().map_or("Restore?", |m| m.text.as_str())
                ),
                theme.warning.add_modifier(ratatui::style::Modifier::BOLD),
            ),
            Span::styled("y", theme.key_hint),
            Span::styled("/n · ", theme.dim),
            Span::styled("d", theme.key_hint),
            Span::styled(" forgets it", theme.dim),
        ]),
        Mode::ConfirmQuit => Line::from(Span::styled(
            format!(
                " {}",
                app.message
                    .as_ref()
                    .map_or("Quit? y/n", |m| m.text.as_str())
            ),
            theme.warning.add_modifier(ratatui::style::Modifier::BOLD),
        )),
        _ if app.resizing.is_some() && app.focus == Focus::Workspace => Line::from(Span::styled(
            " resizing: H J K L again (or shift-arrows) · any other key goes to the pane",
            theme.key_hint,
        )),
        _ if app.prefix_armed && app.focus == Focus::Workspace => Line::from(Span::styled(
            format!(
                " {} … pane command (? lists them)",
                app.options.prefix.label()
            ),
            theme.key_hint,
        )),
        _ => match &app.message {
            Some(m) => {
                let style = match m.level {
                    Severity::Info => theme.text,
                    Severity::Warning => theme.warning,
                    Severity::Error => theme.error,
                };
                // A sentence longer than the line ends with where it is
                // whole: the messages view.
                let room = usize::from(top.width).saturating_sub(1);
                let text = if m.text.chars().count() > room && room > 12 {
                    let keys = app.keymap.keys_for(Action::Messages);
                    let whole = format!("… ({} reads it)", keys.split(", ").next().unwrap_or("M"));
                    let cut: String = m
                        .text
                        .chars()
                        .take(room.saturating_sub(whole.chars().count()))
                        .collect();
                    format!("{cut}{whole}")
                } else {
                    m.text.to_string()
                };
                Line::from(Span::styled(format!(" {text}"), style))
            }
            None => Line::default(),
        },
    };
    frame.render_widget(Paragraph::new(line), top);

    let group = |keys: String, what: &str| {
        vec![
            Span::styled(format!(" {keys} "), theme.key_hint),
            Span::styled(format!("{what} "), theme.dim),
        ]
    };
    // Each hint is a group of spans, shown whole or not at all.
    let mut spans: Vec<Vec<Span>> = Vec::new();
    // Help and quit always show; the view's hints take the room left.
    let mut last: Vec<Vec<Span>> = Vec::new();
    if app.focus == Focus::Workspace {
        let marked = app.workspace.marked_count();
        if marked > 0 {
            spans.push(vec![Span::styled(
                format!(
                    " ⚑ BROADCAST to {marked} {} ",
                    if marked == 1 { "pane" } else { "panes" }
                ),
                theme
                    .failing
                    .add_modifier(Modifier::REVERSED | Modifier::BOLD),
            )]);
        }
        let prefix = app.options.prefix.label();
        for (keys, what) in super::help::PANE_KEYS
            .iter()
            .filter_map(|pane_key| pane_key.hint)
        {
            spans.push(group(format!("{prefix} {keys}"), what));
        }
    } else {
        for binding in bindings::browser(app) {
            let Some(what) = &binding.hint else { continue };
            let hint = group(binding.footer_key(&app.keymap), what);
            match binding.key {
                Key::Action(Action::Help | Action::Quit) => last.push(hint),
                _ => spans.push(hint),
            }
        }
    }
    let width_of = |group: &Vec<Span>| group.iter().map(Span::width).sum::<usize>();
    let mut room = usize::from(bottom.width).saturating_sub(last.iter().map(width_of).sum());
    let shown: Vec<Span> = spans
        .into_iter()
        .take_while(|group| {
            let width = width_of(group);
            let fits = width <= room;
            room = room.saturating_sub(width);
            fits
        })
        .chain(last)
        .flatten()
        .collect();
    frame.render_widget(
        Paragraph::new(Line::from(shown)).style(theme.status_bar),
        bottom,
    );
}

/// 34000 as "34 000": a count the eye reads at once.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

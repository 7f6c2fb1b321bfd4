//! A list drawn as text columns (the nodes and services views): its frame
//! and what it says before it has rows, columns by display width, and rows
//! that scroll under their header.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::app::LinkState;
use crate::app::object_rows::{Object, ObjectRows};
use crate::app::other_clusters::ClusterState;
use crate::model::text::Printable;
use crate::theme::Theme;

/// Draws the list's border and title; the area inside it when rows are to
/// be drawn there, else `None` once the watch's trouble or "Loading…" is.
pub fn frame(
    frame: &mut Frame,
    area: Rect,
    title: String,
    (trouble, listed): (Option<&Printable>, bool),
    theme: &Theme,
) -> Option<Rect> {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(title, theme.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let said = match (trouble, listed) {
        (Some(trouble), _) => Span::styled(trouble.as_str().to_string(), theme.warning),
        (None, false) => Span::styled("Loading…", theme.dim),
        (None, true) => return Some(inner),
    };
    // A refusal is a sentence to read whole, at any width, a space in
    // from the border as the rows are.
    let text = Rect {
        x: inner.x.saturating_add(1),
        width: inner.width.saturating_sub(2),
        ..inner
    };
    frame.render_widget(
        Paragraph::new(said).wrap(ratatui::widgets::Wrap { trim: true }),
        text,
    );
    None
}

/// How many rows a list shows: `12`, or `3/12` while filtered.
pub fn count<R: Object>(list: &ObjectRows<R>) -> String {
    match list.filter.is_empty() {
        true => list.rows.len().to_string(),
        false => format!("{}/{}", list.shown_len(), list.rows.len()),
    }
}

/// A list's frame (`title`, then its count), and what it says instead of
/// rows: the watch's trouble, Loading…, no `noun` matching the filter, or
/// `none` (a list with no rows at all; `None`: an empty table). The area
/// for the rows, when there are some to draw.
pub fn list_frame<R: Object>(
    frame: &mut Frame,
    area: Rect,
    (list, title): (&ObjectRows<R>, String),
    (noun, none): (&str, Option<String>),
    theme: &Theme,
) -> Option<Rect> {
    let state = (list.trouble.as_ref(), list.listed);
    let inner = self::frame(frame, area, title, state, theme)?;
    let said = if !list.filter.is_empty() && list.shown_len() == 0 {
        format!(
            " No {noun} matches {:?}. Esc clears the filter.",
            list.filter
        )
    } else if list.rows.is_empty()
        && let Some(none) = none
    {
        none
    } else {
        return Some(inner);
    };
    frame.render_widget(
        Paragraph::new(Span::styled(
            crate::model::text::sanitize(&said).into_owned(),
            theme.dim,
        )),
        inner,
    );
    None
}

/// A row's CONTEXT cell, in a list of several clusters: the context
/// sanitized, as the kubeconfig's names are not the cluster's to trust,
/// marked while its cluster stalls, refuses or reconnects.
pub fn context_cell(context: &Option<std::sync::Arc<str>>, clusters: &[ClusterState]) -> String {
    let context = context.as_deref().unwrap_or_default();
    let cluster = clusters.iter().find(|c| c.context == context);
    format!(
        "{}{}",
        cluster_mark(cluster),
        crate::model::text::sanitize(context)
    )
}

/// `◍ ` before a row of a cluster that stalls, refuses or reconnects (as
/// the header marks it): what the row says may be old.
pub fn cluster_mark(cluster: Option<&ClusterState>) -> &'static str {
    match cluster {
        Some(c)
            if c.failed.is_some()
                || c.unanswered.is_some()
                || c.state == LinkState::Reconnecting =>
        {
            "◍ "
        }
        _ => "",
    }
}

/// Columns by display width: a combining mark takes none, a wide
/// character two.
fn columns(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// The rows of a list on screen, from where the selected one stays
/// visible: only those are written out each frame (a view may hold tens
/// of thousands), and `floor` keeps the namespace and name columns as wide
/// as the widest of all rows, so they do not move as the list scrolls.
pub struct Window {
    pub rows: std::ops::Range<usize>,
    /// The selected row, counted from the window's first.
    pub cursor: usize,
    pub floor: Vec<(&'static str, usize)>,
}

impl Window {
    /// The rows of `list` in the window (with each one's index in the list).
    pub fn rows<'a, R: Object>(
        &self,
        list: &'a ObjectRows<R>,
    ) -> impl Iterator<Item = (usize, &'a R)> + use<'a, R> {
        list.shown().skip(self.rows.start).take(self.rows.len())
    }
}

pub fn window<R: Object>(inner: Rect, list: &ObjectRows<R>) -> Window {
    let room = (inner.height as usize).saturating_sub(1).max(1);
    let first = list.cursor.saturating_sub(room - 1);
    let (namespace, name) = list.widest();
    Window {
        rows: first..(first + room).min(list.shown_len()),
        cursor: list.cursor - first,
        floor: vec![("NAMESPACE", namespace), ("NAME", name)],
    }
}

/// Least widths of columns, by title.
pub type Floor<'a> = &'a [(&'a str, usize)];

/// Each column's width: its title's, its widest cell's, or its `floor`.
pub fn widths(titles: &[String], rows: &[Vec<String>], floor: Floor<'_>) -> Vec<usize> {
    let mut widths: Vec<usize> = titles
        .iter()
        .map(|t| {
            let least = floor.iter().find(|(name, _)| name == t).map_or(0, |f| f.1);
            columns(t).max(least)
        })
        .collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(columns(cell));
        }
    }
    widths
}

/// Whether the columns, two spaces apart after a margin of one, fit `width`.
pub fn fits(widths: &[usize], width: u16) -> bool {
    1 + widths.iter().map(|w| w + 2).sum::<usize>() - 2 <= usize::from(width)
}

/// Drops the columns named in `give_way`, first first, until the rest fit
/// `width`.
pub fn give_way(
    titles: &mut Vec<String>,
    rows: &mut [Vec<String>],
    (width, floor): (u16, Floor<'_>),
    give_way: &[&str],
) {
    for column in give_way {
        if fits(&widths(titles, rows, floor), width) {
            break;
        }
        if let Some(at) = titles.iter().position(|t| t == column) {
            titles.remove(at);
            for row in rows.iter_mut() {
                row.remove(at);
            }
        }
    }
}

/// The header, then `rows` (a [`Window`]'s: `cursor` counts from its
/// first), each in its style, a marked one (`marked[i]`) with a dot before
/// it.
pub fn draw(
    frame: &mut Frame,
    inner: Rect,
    (titles, rows, floor): (&[String], &[Vec<String>], Floor<'_>),
    (cursor, marked): (usize, &[bool]),
    style: impl Fn(usize) -> Style,
    theme: &Theme,
) {
    let widths = widths(titles, rows, floor);
    let line = |cells: &[String]| -> String {
        let mut text = String::from(" ");
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            text.push_str(cell);
            if i + 1 < cells.len() {
                text.push_str(&" ".repeat(width.saturating_sub(columns(cell)) + 2));
            }
        }
        text
    };
    let mut lines = vec![Line::from(Span::styled(line(titles), theme.header))];
    let room = (inner.height as usize).saturating_sub(1).max(1);
    let first = cursor.saturating_sub(room - 1);
    for (i, row) in rows.iter().enumerate().skip(first).take(room) {
        let style = if i == cursor {
            theme.selected
        } else {
            style(i)
        };
        let text = line(row);
        lines.push(match marked.get(i) {
            Some(true) => Line::from(vec![
                Span::styled("●", theme.key_hint),
                Span::styled(text[1..].to_string(), style),
            ]),
            _ => Line::from(Span::styled(text, style)),
        });
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

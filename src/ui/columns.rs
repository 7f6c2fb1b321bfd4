//! Tables that fit any width the way kubectl and k9s make them fit: each
//! column asks for its content's width, and when the columns do not fit,
//! they give way by a plan (some narrow, some step aside) while the ones
//! that must stay whole, such as STATUS and READY, are never cut.

use std::borrow::Cow;

use ratatui::layout::Constraint;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Row, Table};

/// Columns fitted to a width: each one's width (0 when hidden) and the
/// spacing between the shown ones.
pub struct Fitted {
    pub widths: Vec<usize>,
    pub spacing: usize,
}

impl Fitted {
    /// `wants` (0 for a column with nothing to show) fitted to `room` by `plan`.
    pub fn new(wants: &[usize], plan: &[Give], room: usize) -> Self {
        let spacing = spacing(wants, room);
        Fitted {
            widths: fit(wants, plan, room, spacing),
            spacing,
        }
    }

    /// Index and width of each shown column, in order.
    pub fn shown(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.widths
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0)
            .map(|(i, w)| (i, *w))
    }

    /// The table of `rows` (cells of the shown columns only) under the
    /// shown `titles`.
    pub fn table<'a>(
        &self,
        titles: &[&'a str],
        rows: impl IntoIterator<Item = Row<'a>>,
        header_style: Style,
    ) -> Table<'a> {
        let constraints: Vec<Constraint> = self
            .shown()
            .map(|(_, w)| Constraint::Length(w as u16))
            .collect();
        let header: Vec<String> = self
            .shown()
            .map(|(i, width)| fit_title(titles[i], width))
            .collect();
        Table::new(rows, constraints)
            .header(Row::new(header).style(header_style))
            .column_spacing(self.spacing as u16)
    }
}

/// A title in `width` columns: a sorted column's arrow (its last
/// character) stays when the words are cut (`RESTART▼`).
fn fit_title(title: &str, width: usize) -> String {
    let len = title.chars().count();
    match title.chars().last() {
        Some(arrow @ ('▲' | '▼')) if len > width && width > 1 => {
            let words: String = title.chars().take(width - 1).collect();
            format!("{words}{arrow}")
        }
        _ => title.to_string(),
    }
}

/// One step of a plan: `column` narrows down to `to` columns of text
/// (0 hides it, with its spacing).
#[derive(Debug, Clone, Copy)]
pub struct Give {
    pub column: usize,
    pub to: usize,
}

/// A step of a plan: `column` (its index) gives way down to `to` columns.
pub const fn give(column: usize, to: usize) -> Give {
    Give { column, to }
}

/// The width of each column, given what each wants, the plan, the room and
/// the spacing between shown columns. Steps are taken in order, only as
/// far as needed; a step to 0 hides the column whole. A column the plan
/// never names keeps its width; if even the whole plan is not enough (a
/// pod list under ~40 columns), ratatui squeezes the columns without `…`.
pub fn fit(wants: &[usize], plan: &[Give], room: usize, spacing: usize) -> Vec<usize> {
    let mut widths = wants.to_vec();
    for give in plan {
        let over = total(&widths, spacing).saturating_sub(room);
        if over == 0 {
            break;
        }
        let width = &mut widths[give.column];
        if *width <= give.to {
            continue;
        }
        *width = if give.to == 0 {
            0
        } else {
            *width - over.min(*width - give.to)
        };
    }
    widths
}

/// The spacing between columns: kubectl's three when everything fits with
/// it, less when the room is short (one column of text is worth more than
/// a wide gap).
pub fn spacing(wants: &[usize], room: usize) -> usize {
    (1..=3)
        .rev()
        .find(|s| total(wants, *s) <= room)
        .unwrap_or(1)
}

/// Width of the shown columns with their spacing.
pub fn total(widths: &[usize], spacing: usize) -> usize {
    let shown = widths.iter().filter(|w| **w > 0).count();
    widths.iter().sum::<usize>() + spacing * shown.saturating_sub(1)
}

/// How a text too long for its column is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Keep the start: `ImagePullBa…`.
    End,
    /// Keep both ends, where names differ: `payments-ap…5c9-x2k9p`.
    Middle,
}

/// `text` in `width` columns, the cut marked with `…` (borrowed when it fits).
pub fn cut(text: &str, width: usize, how: Cut) -> Cow<'_, str> {
    match cut_at(text.chars().count(), width, how) {
        None => Cow::Borrowed(text),
        Some((head, tail)) => {
            let skip = text.chars().count() - tail;
            let mut out: String = text.chars().take(head).collect();
            out.push('…');
            out.extend(text.chars().skip(skip));
            Cow::Owned(out)
        }
    }
}

/// `text` in `width` columns with the characters at `marked` (indices into
/// `text`) in `mark` style, cut like [`cut`].
pub fn cut_marked<'a>(
    text: &'a str,
    marked: &[usize],
    mark: Style,
    width: usize,
    how: Cut,
) -> Line<'a> {
    let len = text.chars().count();
    let cutting = cut_at(len, width, how);
    if marked.is_empty() {
        return match cutting {
            None => Line::from(text),
            Some(_) => Line::from(cut(text, width, how)),
        };
    }
    let (head, tail) = cutting.unwrap_or((len, 0));
    let style = |i: usize| {
        if marked.contains(&i) {
            mark
        } else {
            Style::default()
        }
    };
    let mut spans = Vec::with_capacity(head + tail + 1);
    for (i, c) in text.chars().enumerate() {
        if i == head && cutting.is_some() {
            spans.push(Span::raw("…"));
        }
        if i < head || i >= len - tail {
            spans.push(Span::styled(c.to_string(), style(i)));
        }
    }
    Line::from(spans)
}

/// How many characters to keep before and after the `…`, or `None` when
/// `len` characters fit.
fn cut_at(len: usize, width: usize, how: Cut) -> Option<(usize, usize)> {
    if len <= width {
        return None;
    }
    let keep = width.saturating_sub(1);
    Some(match how {
        Cut::End => (keep, 0),
        // The tail is where generated names differ: it gets the odd one.
        Cut::Middle => (keep / 2, keep - keep / 2),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn give(column: usize, to: usize) -> Give {
        Give { column, to }
    }

    #[test]
    fn columns_that_fit_keep_their_content_width() {
        assert_eq!(fit(&[5, 10, 3], &[give(1, 0)], 100, 1), vec![5, 10, 3]);
    }

    #[test]
    fn columns_give_way_in_plan_order_and_only_as_far_as_needed() {
        // 5 + 10 + 8 + 2 spaces = 25; 22 columns of room: 3 too many.
        let plan = [give(2, 4), give(1, 6)];
        assert_eq!(fit(&[5, 10, 8], &plan, 22, 1), vec![5, 10, 5]);
        // 8 too many: the first step goes to its limit, the second takes the rest.
        assert_eq!(fit(&[5, 10, 8], &plan, 17, 1), vec![5, 6, 4]);
    }

    #[test]
    fn gaps_narrow_before_any_text_is_cut() {
        assert_eq!(spacing(&[5, 10, 8], 29), 3);
        assert_eq!(spacing(&[5, 10, 8], 27), 2);
        assert_eq!(spacing(&[5, 10, 8], 20), 1);
    }

    #[test]
    fn a_hidden_column_gives_its_spacing_too() {
        let widths = fit(&[5, 10, 8], &[give(2, 0)], 16, 1);
        assert_eq!(widths, vec![5, 10, 0]);
        assert_eq!(total(&widths, 1), 16);
    }

    #[test]
    fn columns_the_plan_never_names_are_never_cut() {
        assert_eq!(fit(&[16, 10], &[give(1, 4)], 10, 1), vec![16, 4]);
    }

    #[test]
    fn names_are_cut_in_the_middle_so_their_unique_tail_stays() {
        assert_eq!(
            cut("payments-api-66b8f7d5c9-x2k9p", 20, Cut::Middle),
            "payments-…d5c9-x2k9p"
        );
        assert_eq!(cut("ImagePullBackOff", 10, Cut::End), "ImagePull…");
        assert_eq!(cut("redis-0", 7, Cut::Middle), "redis-0");
        assert_eq!(cut("redis-0", 1, Cut::Middle), "…");
    }

    #[test]
    fn marked_characters_stay_marked_across_the_cut() {
        let mark = Style::default().fg(ratatui::style::Color::Red);
        let line = cut_marked("abcdefghij", &[0, 9], mark, 5, Cut::Middle);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "ab…ij");
        let marked: String = line
            .spans
            .iter()
            .filter(|s| s.style == mark)
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(marked, "aj");
        let line = cut_marked("abcdefghij", &[1], mark, 4, Cut::End);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "abc…");
    }
}

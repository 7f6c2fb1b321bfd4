//! The split tree: which pane goes where. Pure geometry; panes are ids.

use ratatui::layout::Rect;

/// Identifies a pane in the layout; the caller owns the numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PaneId(pub u64);

/// How a split arranges its two halves, as in ratatui: `Horizontal` puts
/// them side by side (left | right), `Vertical` stacks them (top / bottom).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    Horizontal,
    Vertical,
}

/// A way to move on screen, for focus changes and resizing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Left,
    Right,
    Up,
    Down,
}

impl Direction {
    fn axis(self) -> Axis {
        match self {
            Direction::Left | Direction::Right => Axis::Horizontal,
            Direction::Up | Direction::Down => Axis::Vertical,
        }
    }
}

/// A layout's tree as plain data ([`Layout::shape`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Pane(PaneId),
    Split {
        axis: Axis,
        /// Share of the length given to `first`.
        ratio: f64,
        first: Box<Shape>,
        second: Box<Shape>,
    },
}

#[derive(Debug, Clone)]
enum Node {
    Leaf(PaneId),
    Split {
        axis: Axis,
        /// Share of the length given to `first`, in 0..=1.
        ratio: f64,
        first: Box<Node>,
        second: Box<Node>,
    },
}

/// A binary tree of splits whose leaves are panes, plus an optional zoomed
/// pane that, while set, fills the whole area alone.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    root: Option<Node>,
    zoomed: Option<PaneId>,
}

impl Layout {
    /// A layout holding just `pane`.
    pub fn new(pane: PaneId) -> Self {
        Layout {
            root: Some(Node::Leaf(pane)),
            zoomed: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    pub fn contains(&self, pane: PaneId) -> bool {
        self.panes().contains(&pane)
    }

    /// All panes, left to right and top to bottom in tree order.
    pub fn panes(&self) -> Vec<PaneId> {
        let mut out = Vec::new();
        if let Some(root) = &self.root {
            root.collect_leaves(&mut out);
        }
        out
    }

    /// Splits `target` in two halves: `target` keeps the first (left or
    /// top), `new` takes the second. In an empty layout `new` becomes the
    /// only pane. Returns false, changing nothing, when `target` is absent
    /// or `new` is already present. Unzooms.
    pub fn split(&mut self, target: PaneId, axis: Axis, new: PaneId) -> bool {
        if self.contains(new) {
            return false;
        }
        let Some(root) = &mut self.root else {
            self.root = Some(Node::Leaf(new));
            return true;
        };
        let Some(leaf) = root.find_leaf_mut(target) else {
            return false;
        };
        *leaf = Node::Split {
            axis,
            ratio: 0.5,
            first: Box::new(Node::Leaf(target)),
            second: Box::new(Node::Leaf(new)),
        };
        self.zoomed = None;
        true
    }

    /// Removes `pane`; its sibling takes the freed space. Returns the pane
    /// that should take focus (the one now nearest in the tree), or `None`
    /// if `pane` was absent or the layout is now empty.
    pub fn close(&mut self, pane: PaneId) -> Option<PaneId> {
        if self.zoomed == Some(pane) {
            self.zoomed = None;
        }
        match self.root.take() {
            Some(Node::Leaf(only)) if only == pane => None,
            Some(mut root) => {
                let heir = root.remove_leaf(pane);
                self.root = Some(root);
                heir
            }
            None => None,
        }
    }

    /// Zooms `pane`, or unzooms if it is the zoomed one. Returns whether a
    /// pane is zoomed afterwards.
    pub fn toggle_zoom(&mut self, pane: PaneId) -> bool {
        self.zoomed = match self.zoomed {
            Some(zoomed) if zoomed == pane => None,
            _ if self.contains(pane) => Some(pane),
            other => other,
        };
        self.zoomed.is_some()
    }

    pub fn zoomed(&self) -> Option<PaneId> {
        self.zoomed
    }

    /// The rectangle of every visible pane. They tile `area` exactly, with
    /// no gaps or overlaps (a pane may get an empty rectangle when `area` is
    /// too small); borders are drawn by the caller inside them. While a pane
    /// is zoomed it is the only one returned.
    pub fn geometry(&self, area: Rect) -> Vec<(PaneId, Rect)> {
        match self.zoomed {
            Some(zoomed) => vec![(zoomed, area)],
            None => self.tiles(area),
        }
    }

    /// The pane under the screen cell (`x`, `y`), for mouse clicks.
    pub fn pane_at(&self, area: Rect, x: u16, y: u16) -> Option<PaneId> {
        let point = ratatui::layout::Position::new(x, y);
        self.geometry(area)
            .into_iter()
            .find(|(_, rect)| rect.contains(point))
            .map(|(pane, _)| pane)
    }

    /// The pane next to `from` in direction `dir`: among the panes beyond
    /// that edge and overlapping it, the nearest, then the one sharing the
    /// most of the edge, then the topmost/leftmost. Ignores zoom, so the
    /// caller can move the zoom along.
    pub fn focus_neighbor(&self, from: PaneId, dir: Direction, area: Rect) -> Option<PaneId> {
        let tiles = self.tiles(area);
        let origin = tiles.iter().find(|(pane, _)| *pane == from)?.1;
        tiles
            .iter()
            .filter(|(pane, _)| *pane != from)
            .filter_map(|&(pane, rect)| {
                let (gap, overlap) = match dir {
                    Direction::Left => (
                        origin.left().checked_sub(rect.right())?,
                        overlap_rows(origin, rect),
                    ),
                    Direction::Right => (
                        rect.left().checked_sub(origin.right())?,
                        overlap_rows(origin, rect),
                    ),
                    Direction::Up => (
                        origin.top().checked_sub(rect.bottom())?,
                        overlap_cols(origin, rect),
                    ),
                    Direction::Down => (
                        rect.top().checked_sub(origin.bottom())?,
                        overlap_cols(origin, rect),
                    ),
                };
                (overlap > 0).then_some((gap, u16::MAX - overlap, rect.y, rect.x, pane))
            })
            .min()
            .map(|(.., pane)| pane)
    }

    /// Moves one of `pane`'s dividers across `dir` by `amount` cells in
    /// `dir`: the one after the pane (its right or bottom edge) if it has
    /// one, else the one before. Each side keeps at least one cell. Returns
    /// whether anything moved.
    pub fn resize(&mut self, pane: PaneId, dir: Direction, amount: u16, area: Rect) -> bool {
        let Some(root) = &mut self.root else {
            return false;
        };
        let delta = match dir {
            Direction::Left | Direction::Up => -i32::from(amount),
            Direction::Right | Direction::Down => i32::from(amount),
        };
        // Like tmux: move the divider after the pane (right/bottom) if it
        // has one, otherwise the one before it.
        match root.move_divider(pane, Side::First, dir.axis(), delta, area) {
            Search::Done(moved) => moved,
            Search::Absent => false,
            Search::Pending => {
                root.move_divider(pane, Side::Second, dir.axis(), delta, area) == Search::Done(true)
            }
        }
    }

    /// Evens out every split so that panes in a row or column of same-way
    /// splits get equal space.
    pub fn even(&mut self) {
        if let Some(root) = &mut self.root {
            root.even();
        }
    }

    /// Rearranges all panes into a grid of near-equal tiles, row by row in
    /// the current pane order. Unzooms.
    pub fn tiled(&mut self) {
        let panes = self.panes();
        let columns = (1..).find(|c| c * c >= panes.len()).unwrap_or(1);
        let rows: Vec<Node> = panes
            .chunks(columns)
            .filter_map(|row| {
                chain(
                    Axis::Horizontal,
                    row.iter().map(|&p| Node::Leaf(p)).collect(),
                )
            })
            .collect();
        self.root = chain(Axis::Vertical, rows);
        self.zoomed = None;
        self.even();
    }

    /// `panes` tiled, in that order.
    pub fn tiled_of(panes: &[PaneId]) -> Layout {
        let mut layout = Layout::default();
        let mut last = None;
        for &pane in panes {
            match last {
                Some(target) => {
                    layout.split(target, Axis::Horizontal, pane);
                }
                None => layout = Layout::new(pane),
            }
            last = Some(pane);
        }
        layout.tiled();
        layout
    }

    /// The tree as data, for keeping it across runs.
    pub fn shape(&self) -> Option<Shape> {
        fn of(node: &Node) -> Shape {
            match node {
                Node::Leaf(pane) => Shape::Pane(*pane),
                Node::Split {
                    axis,
                    ratio,
                    first,
                    second,
                } => Shape::Split {
                    axis: *axis,
                    ratio: *ratio,
                    first: Box::new(of(first)),
                    second: Box::new(of(second)),
                },
            }
        }
        self.root.as_ref().map(of)
    }

    /// A layout from a kept [`Shape`], zooming `zoomed` if it is in it.
    /// Ratios are brought into 0.05..=0.95 (a file may say anything); a
    /// pane named twice is refused (`None`).
    pub fn from_shape(shape: Shape, zoomed: Option<PaneId>) -> Option<Layout> {
        fn node(shape: Shape) -> Node {
            match shape {
                Shape::Pane(pane) => Node::Leaf(pane),
                Shape::Split {
                    axis,
                    ratio,
                    first,
                    second,
                } => Node::Split {
                    axis,
                    ratio: if ratio.is_finite() {
                        ratio.clamp(0.05, 0.95)
                    } else {
                        0.5
                    },
                    first: Box::new(node(*first)),
                    second: Box::new(node(*second)),
                },
            }
        }
        let mut layout = Layout {
            root: Some(node(shape)),
            zoomed: None,
        };
        let mut panes = layout.panes();
        let count = panes.len();
        panes.sort_unstable();
        panes.dedup();
        if panes.len() != count {
            return None;
        }
        layout.zoomed = zoomed.filter(|z| panes.contains(z));
        Some(layout)
    }

    fn tiles(&self, area: Rect) -> Vec<(PaneId, Rect)> {
        let mut out = Vec::new();
        if let Some(root) = &self.root {
            root.tile(area, &mut out);
        }
        out
    }
}

/// Which half of a split a pane lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    First,
    Second,
}

/// Progress of a divider search up from a pane.
#[derive(Debug, PartialEq, Eq)]
enum Search {
    /// The pane is not below this node.
    Absent,
    /// The pane is below, but no suitable split was found yet.
    Pending,
    /// A split was found; whether its divider moved (it may be at a limit).
    Done(bool),
}

/// Moves a split's divider by `delta` cells, keeping a cell on each side.
fn shift_divider(ratio: &mut f64, area: Rect, axis: Axis, delta: i32) -> bool {
    let length = match axis {
        Axis::Horizontal => area.width,
        Axis::Vertical => area.height,
    };
    if length < 2 {
        return false;
    }
    let current = i32::from(first_length(length, *ratio));
    let target = (current + delta).clamp(1, i32::from(length) - 1);
    if target == current {
        return false;
    }
    *ratio = f64::from(target) / f64::from(length);
    true
}

/// Nests `nodes` as a right-leaning chain of splits; `even` balances it.
fn chain(axis: Axis, mut nodes: Vec<Node>) -> Option<Node> {
    let mut node = nodes.pop()?;
    while let Some(previous) = nodes.pop() {
        node = Node::Split {
            axis,
            ratio: 0.5,
            first: Box::new(previous),
            second: Box::new(node),
        };
    }
    Some(node)
}

fn overlap_rows(a: Rect, b: Rect) -> u16 {
    a.bottom()
        .min(b.bottom())
        .saturating_sub(a.top().max(b.top()))
}

fn overlap_cols(a: Rect, b: Rect) -> u16 {
    a.right()
        .min(b.right())
        .saturating_sub(a.left().max(b.left()))
}

/// Splits `area` in two along `axis`, the first getting `ratio`.
fn split_rect(area: Rect, axis: Axis, ratio: f64) -> (Rect, Rect) {
    let length = match axis {
        Axis::Horizontal => area.width,
        Axis::Vertical => area.height,
    };
    let first_len = first_length(length, ratio);
    match axis {
        Axis::Horizontal => (
            Rect {
                width: first_len,
                ..area
            },
            Rect {
                x: area.x + first_len,
                width: length - first_len,
                ..area
            },
        ),
        Axis::Vertical => (
            Rect {
                height: first_len,
                ..area
            },
            Rect {
                y: area.y + first_len,
                height: length - first_len,
                ..area
            },
        ),
    }
}

/// The first half's length: `ratio` of `length`, but each half keeps at
/// least one cell when there are two to share.
fn first_length(length: u16, ratio: f64) -> u16 {
    let wanted = (f64::from(length) * ratio.clamp(0.0, 1.0)).round() as u16;
    if length < 2 {
        return length;
    }
    wanted.clamp(1, length - 1)
}

impl Node {
    fn collect_leaves(&self, out: &mut Vec<PaneId>) {
        match self {
            Node::Leaf(pane) => out.push(*pane),
            Node::Split { first, second, .. } => {
                first.collect_leaves(out);
                second.collect_leaves(out);
            }
        }
    }

    fn first_leaf(&self) -> PaneId {
        match self {
            Node::Leaf(pane) => *pane,
            Node::Split { first, .. } => first.first_leaf(),
        }
    }

    fn find_leaf_mut(&mut self, pane: PaneId) -> Option<&mut Node> {
        match self {
            Node::Leaf(p) if *p == pane => Some(self),
            Node::Leaf(_) => None,
            Node::Split { first, second, .. } => first
                .find_leaf_mut(pane)
                .or_else(|| second.find_leaf_mut(pane)),
        }
    }

    /// Removes `pane` from below this split node, replacing its parent split
    /// by the sibling. Returns the sibling's first pane.
    fn remove_leaf(&mut self, pane: PaneId) -> Option<PaneId> {
        let Node::Split { first, second, .. } = self else {
            return None;
        };
        let sibling = match (&**first, &**second) {
            (Node::Leaf(p), _) if *p == pane => std::mem::replace(&mut **second, Node::Leaf(pane)),
            (_, Node::Leaf(p)) if *p == pane => std::mem::replace(&mut **first, Node::Leaf(pane)),
            _ => {
                return first.remove_leaf(pane).or_else(|| second.remove_leaf(pane));
            }
        };
        let heir = sibling.first_leaf();
        *self = sibling;
        Some(heir)
    }

    fn tile(&self, area: Rect, out: &mut Vec<(PaneId, Rect)>) {
        match self {
            Node::Leaf(pane) => out.push((*pane, area)),
            Node::Split {
                axis,
                ratio,
                first,
                second,
            } => {
                let (a, b) = split_rect(area, *axis, *ratio);
                first.tile(a, out);
                second.tile(b, out);
            }
        }
    }

    /// Looks for the nearest split along `axis` above `pane` where the pane
    /// lies on `side`, and moves its divider by `delta` cells.
    fn move_divider(
        &mut self,
        pane: PaneId,
        side: Side,
        axis: Axis,
        delta: i32,
        area: Rect,
    ) -> Search {
        let Node::Split {
            axis: split_axis,
            ratio,
            first,
            second,
        } = self
        else {
            return match self {
                Node::Leaf(p) if *p == pane => Search::Pending,
                _ => Search::Absent,
            };
        };
        let (a, b) = split_rect(area, *split_axis, *ratio);
        let (found, pane_side) = match first.move_divider(pane, side, axis, delta, a) {
            Search::Absent => (
                second.move_divider(pane, side, axis, delta, b),
                Side::Second,
            ),
            found => (found, Side::First),
        };
        match found {
            Search::Pending if *split_axis == axis && pane_side == side => {
                Search::Done(shift_divider(ratio, area, axis, delta))
            }
            other => other,
        }
    }

    fn even(&mut self) {
        if let Node::Split {
            axis,
            ratio,
            first,
            second,
        } = self
        {
            first.even();
            second.even();
            let span = |node: &Node| node.span_along(*axis);
            let (a, b) = (span(first), span(second));
            *ratio = a as f64 / (a + b) as f64;
        }
    }

    /// How many panes this subtree lines up along `axis`.
    fn span_along(&self, axis: Axis) -> usize {
        match self {
            Node::Leaf(_) => 1,
            Node::Split {
                axis: d,
                first,
                second,
                ..
            } if *d == axis => first.span_along(axis) + second.span_along(axis),
            Node::Split { first, second, .. } => {
                first.span_along(axis).max(second.span_along(axis))
            }
        }
    }
}

#[cfg(test)]
mod tests;

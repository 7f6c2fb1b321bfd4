//! The workspace: panes in a split layout, each showing a terminal. Several
//! panes may show the same terminal (they share its screen and stream);
//! marked panes receive typed input together (broadcast).

use crate::app::TerminalId;
use std::collections::BTreeMap;

use ratatui::layout::Rect;

use super::copy::CopyMode;
use super::terminal::Terminal;
use crate::model::text::Printable;
use crate::term::Size;
use crate::term::layout::{Axis, Direction, Layout, PaneId};

/// One pane: a view on a terminal.
#[derive(Debug)]
pub struct Pane {
    pub terminal: TerminalId,
    /// Set by the user (or read back from a kept workspace, a file anyone
    /// may have edited): printable only. Otherwise the pane shows
    /// pod/container.
    pub title: Option<Printable>,
    /// Typed input goes to every marked pane.
    pub marked: bool,
    pub copy: Option<CopyMode>,
}

#[derive(Debug, Default)]
pub struct Workspace {
    pub layout: Layout,
    pub panes: BTreeMap<PaneId, Pane>,
    pub terminals: BTreeMap<TerminalId, Terminal>,
    pub focused: Option<PaneId>,
    next_pane: u64,
}

impl Workspace {
    pub fn is_empty(&self) -> bool {
        self.panes.is_empty()
    }

    /// Adds a pane showing `terminal`: the first fills the workspace, later
    /// ones split the focused pane (along its longer side unless told).
    /// The new pane takes focus.
    pub fn add_pane(&mut self, terminal: TerminalId, axis: Option<Axis>, area: Rect) -> PaneId {
        self.next_pane += 1;
        let id = PaneId(self.next_pane);
        let axis = axis.unwrap_or_else(|| {
            let rect = self
                .focused
                .and_then(|f| {
                    self.layout
                        .geometry(area)
                        .into_iter()
                        .find(|(p, _)| *p == f)
                })
                .map_or(area, |(_, r)| r);
            // Cells are about twice as tall as wide.
            if rect.width >= rect.height.saturating_mul(2) {
                Axis::Horizontal
            } else {
                Axis::Vertical
            }
        });
        match self.focused {
            Some(target) if self.layout.contains(target) => {
                self.layout.split(target, axis, id);
            }
            _ => self.layout = Layout::new(id),
        }
        self.panes.insert(
            id,
            Pane {
                terminal,
                title: None,
                marked: false,
                copy: None,
            },
        );
        self.focused = Some(id);
        id
    }

    /// A pane on `terminal` outside the layout (the caller places it).
    pub fn insert_pane(
        &mut self,
        terminal: TerminalId,
        title: Option<Printable>,
        marked: bool,
    ) -> PaneId {
        self.next_pane += 1;
        let id = PaneId(self.next_pane);
        self.panes.insert(
            id,
            Pane {
                terminal,
                title,
                marked,
                copy: None,
            },
        );
        id
    }

    /// Removes a pane. Returns its terminal's id if no pane shows it any
    /// more (the caller ends that session).
    pub fn close_pane(&mut self, pane: PaneId) -> Option<TerminalId> {
        let slot = self.panes.remove(&pane)?;
        let heir = self.layout.close(pane);
        if self.focused == Some(pane) {
            self.focused = heir.or_else(|| self.panes.keys().next().copied());
        }
        if self.panes.is_empty() {
            self.layout = Layout::default();
        }
        let orphan = !self.panes.values().any(|p| p.terminal == slot.terminal);
        orphan.then(|| {
            self.terminals.remove(&slot.terminal);
            slot.terminal
        })
    }

    /// Removes every pane of a terminal, and the terminal.
    pub fn close_terminal(&mut self, terminal: TerminalId) {
        let panes: Vec<PaneId> = self.panes_of(terminal).collect();
        for pane in panes {
            self.close_pane(pane);
        }
        self.terminals.remove(&terminal);
    }

    pub fn focused_pane(&self) -> Option<&Pane> {
        self.panes.get(&self.focused?)
    }

    pub fn focused_pane_mut(&mut self) -> Option<&mut Pane> {
        self.panes.get_mut(&self.focused?)
    }

    pub fn focused_terminal(&self) -> Option<&Terminal> {
        self.terminals.get(&self.focused_pane()?.terminal)
    }

    pub fn focused_terminal_mut(&mut self) -> Option<&mut Terminal> {
        let id = self.focused_pane()?.terminal;
        self.terminals.get_mut(&id)
    }

    pub fn panes_of(&self, terminal: TerminalId) -> impl Iterator<Item = PaneId> + '_ {
        self.panes
            .iter()
            .filter(move |(_, p)| p.terminal == terminal)
            .map(|(id, _)| *id)
    }

    /// How many panes show this terminal.
    pub fn viewers(&self, terminal: TerminalId) -> usize {
        self.panes_of(terminal).count()
    }

    /// The kinds of terminals with a live shell or attach (logs lose
    /// nothing when closed, so they do not count), oldest first.
    pub fn live_sessions(&self) -> Vec<super::terminal::TerminalKind> {
        self.terminals
            .values()
            .filter(|t| t.is_live() && !t.kind.is_log())
            .map(|t| t.kind)
            .collect()
    }

    pub fn marked_count(&self) -> usize {
        self.panes.values().filter(|p| p.marked).count()
    }

    /// Where typed input goes: the focused pane's terminal, or, when the
    /// focused pane is marked, every marked pane's terminal (each once).
    pub fn input_targets(&self) -> Vec<TerminalId> {
        let Some(focused) = self.focused_pane() else {
            return vec![];
        };
        if !focused.marked {
            return vec![focused.terminal];
        }
        let mut targets: Vec<TerminalId> = self
            .panes
            .values()
            .filter(|p| p.marked)
            .map(|p| p.terminal)
            .collect();
        targets.sort_unstable();
        targets.dedup();
        targets
    }

    pub fn focus(&mut self, dir: Direction, area: Rect) -> bool {
        let Some(from) = self.focused else {
            return false;
        };
        let Some(next) = self.layout.focus_neighbor(from, dir, area) else {
            return false;
        };
        if self.layout.zoomed().is_some() {
            // Move the zoom along, as tmux does.
            self.layout.toggle_zoom(from);
            self.layout.toggle_zoom(next);
        }
        self.focused = Some(next);
        true
    }

    /// Focus the next pane in layout order, wrapping.
    pub fn focus_next(&mut self) {
        let order = self.layout.panes();
        let at = self
            .focused
            .and_then(|f| order.iter().position(|p| *p == f))
            .map_or(0, |i| (i + 1) % order.len().max(1));
        self.focused = order.get(at).copied();
    }

    /// Each pane's outer rectangle (border included).
    pub fn geometry(&self, area: Rect) -> Vec<(PaneId, Rect)> {
        self.layout.geometry(area)
    }

    /// The size every terminal should have for `area`: the smallest inner
    /// size of the panes showing it (one size can reach a container).
    pub fn terminal_sizes(&self, area: Rect) -> BTreeMap<TerminalId, Size> {
        let mut sizes: BTreeMap<TerminalId, Size> = BTreeMap::new();
        for (pane, rect) in self.geometry(area) {
            let Some(shown) = self.panes.get(&pane) else {
                continue;
            };
            let inner = inner(rect);
            let size = Size::new(inner.width.max(1), inner.height.max(1));
            sizes
                .entry(shown.terminal)
                .and_modify(|s| *s = Size::new(s.cols.min(size.cols), s.rows.min(size.rows)))
                .or_insert(size);
        }
        sizes
    }
}

/// A pane's drawing area inside its border.
pub fn inner(rect: Rect) -> Rect {
    Rect {
        x: rect.x.saturating_add(1),
        y: rect.y.saturating_add(1),
        width: rect.width.saturating_sub(2),
        height: rect.height.saturating_sub(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PodKey;

    fn workspace_with(terminals: &[u64]) -> Workspace {
        let mut w = Workspace::default();
        for &id in terminals {
            let id = TerminalId(id);
            w.terminals.insert(
                id,
                Terminal::new(
                    id,
                    crate::model::TerminalKey::new(
                        crate::model::ClusterId::new("sim", "https://sim", "admin"),
                        PodKey::new("shop", "web"),
                        "app",
                    ),
                    super::super::terminal::TerminalKind::Attach,
                    jiff::Timestamp::UNIX_EPOCH,
                ),
            );
        }
        w
    }

    const AREA: Rect = Rect {
        x: 0,
        y: 1,
        width: 120,
        height: 40,
    };

    #[test]
    fn panes_split_the_focused_one_along_its_longer_side() {
        let mut w = workspace_with(&[1, 2, 3]);
        let a = w.add_pane(TerminalId(1), None, AREA);
        let b = w.add_pane(TerminalId(2), None, AREA);
        let geometry = w.geometry(AREA);
        let rect = |p| geometry.iter().find(|(q, _)| *q == p).unwrap().1;
        assert_eq!(rect(a).y, rect(b).y, "120×40 is wide: side by side");
        let c = w.add_pane(TerminalId(3), None, AREA);
        let geometry = w.geometry(AREA);
        let rect = |p| geometry.iter().find(|(q, _)| *q == p).unwrap().1;
        assert_eq!(rect(b).x, rect(c).x, "60×40 is tall: stacked");
        assert_eq!(w.focused, Some(c));
    }

    #[test]
    fn a_shared_terminal_takes_the_smallest_pane_size_and_closes_with_its_last_pane() {
        let mut w = workspace_with(&[1, 2]);
        let a = w.add_pane(TerminalId(1), Some(Axis::Horizontal), AREA);
        let b = w.add_pane(TerminalId(1), Some(Axis::Vertical), AREA);
        let c = w.add_pane(TerminalId(2), Some(Axis::Horizontal), AREA);
        let sizes = w.terminal_sizes(AREA);
        // a is 120×20, b and c are 60×20 each: terminal 1 gets b's inner 58×18.
        assert_eq!(sizes[&TerminalId(1)], Size::new(58, 18));
        assert_eq!(sizes[&TerminalId(2)], Size::new(58, 18));
        assert_eq!(w.viewers(TerminalId(1)), 2);
        assert_eq!(w.close_pane(a), None, "b still shows terminal 1");
        assert_eq!(w.close_pane(b), Some(TerminalId(1)));
        assert!(!w.terminals.contains_key(&TerminalId(1)));
        assert_eq!(w.focused, Some(c));
    }

    #[test]
    fn broadcast_goes_to_marked_panes_only_from_a_marked_pane() {
        let mut w = workspace_with(&[1, 2, 3]);
        let a = w.add_pane(TerminalId(1), None, AREA);
        let b = w.add_pane(TerminalId(2), None, AREA);
        let c = w.add_pane(TerminalId(3), None, AREA);
        let d = w.add_pane(TerminalId(3), None, AREA);
        for p in [a, c, d] {
            w.panes.get_mut(&p).unwrap().marked = true;
        }
        w.focused = Some(b);
        assert_eq!(w.input_targets(), [TerminalId(2)]);
        w.focused = Some(a);
        assert_eq!(
            w.input_targets(),
            [TerminalId(1), TerminalId(3)],
            "each terminal once"
        );
    }
}

use proptest::prelude::*;

use super::*;

const A: PaneId = PaneId(1);
const B: PaneId = PaneId(2);
const C: PaneId = PaneId(3);
const D: PaneId = PaneId(4);
const AREA: Rect = Rect {
    x: 0,
    y: 0,
    width: 80,
    height: 24,
};

fn rect(x: u16, y: u16, width: u16, height: u16) -> Rect {
    Rect::new(x, y, width, height)
}

/// Every cell of `area` belongs to exactly one tile, none outside it.
fn assert_exact_tiling(tiles: &[(PaneId, Rect)], area: Rect) {
    let covered: u32 = tiles
        .iter()
        .map(|(_, r)| u32::from(r.width) * u32::from(r.height))
        .sum();
    assert_eq!(
        covered,
        u32::from(area.width) * u32::from(area.height),
        "{tiles:?}"
    );
    for (i, (_, a)) in tiles.iter().enumerate() {
        assert_eq!(a.intersection(area), *a, "tile outside area: {tiles:?}");
        for (_, b) in &tiles[i + 1..] {
            assert!(!a.intersects(*b), "overlap {a:?} {b:?}");
        }
    }
}

/// A | (B / C): A left, B top right, C bottom right.
fn three() -> Layout {
    let mut layout = Layout::new(A);
    assert!(layout.split(A, Axis::Horizontal, B));
    assert!(layout.split(B, Axis::Vertical, C));
    layout
}

#[test]
fn single_pane_fills_the_area() {
    assert_eq!(Layout::new(A).geometry(AREA), vec![(A, AREA)]);
}

#[test]
fn splits_halve_the_target() {
    let layout = three();
    assert_eq!(
        layout.geometry(AREA),
        vec![
            (A, rect(0, 0, 40, 24)),
            (B, rect(40, 0, 40, 12)),
            (C, rect(40, 12, 40, 12))
        ]
    );
    assert_eq!(layout.panes(), vec![A, B, C]);
}

#[test]
fn split_rejects_absent_target_and_duplicate_id() {
    let mut layout = three();
    assert!(!layout.split(D, Axis::Vertical, PaneId(9)));
    assert!(!layout.split(A, Axis::Vertical, B));
    assert_eq!(layout.panes(), vec![A, B, C]);
}

#[test]
fn odd_sizes_still_tile_exactly() {
    let layout = three();
    for area in [
        rect(3, 2, 81, 25),
        rect(0, 0, 7, 3),
        rect(5, 5, 1, 1),
        rect(0, 0, 0, 0),
    ] {
        let tiles = layout.geometry(area);
        assert_eq!(tiles.len(), 3);
        assert_exact_tiling(&tiles, area);
    }
}

#[test]
fn close_gives_the_space_to_the_sibling() {
    let mut layout = three();
    assert_eq!(layout.close(B), Some(C));
    assert_eq!(
        layout.geometry(AREA),
        vec![(A, rect(0, 0, 40, 24)), (C, rect(40, 0, 40, 24))]
    );
    assert_eq!(layout.close(A), Some(C));
    assert_eq!(layout.geometry(AREA), vec![(C, AREA)]);
    assert_eq!(layout.close(D), None);
    assert_eq!(layout.close(C), None);
    assert!(layout.is_empty());
    assert!(layout.geometry(AREA).is_empty());
    assert!(
        layout.split(A, Axis::Vertical, D),
        "an empty layout takes a new pane"
    );
    assert_eq!(layout.geometry(AREA), vec![(D, AREA)]);
}

#[test]
fn zoom_shows_one_pane_and_toggles_back() {
    let mut layout = three();
    assert!(layout.toggle_zoom(B));
    assert_eq!(layout.geometry(AREA), vec![(B, AREA)]);
    assert_eq!(layout.pane_at(AREA, 0, 0), Some(B));
    assert!(!layout.toggle_zoom(B));
    assert_eq!(layout.geometry(AREA).len(), 3);
    assert!(!layout.toggle_zoom(D), "absent pane cannot be zoomed");
    layout.toggle_zoom(C);
    layout.close(C);
    assert_eq!(layout.zoomed(), None, "closing the zoomed pane unzooms");
}

#[test]
fn pane_at_finds_the_clicked_pane() {
    let layout = three();
    assert_eq!(layout.pane_at(AREA, 0, 23), Some(A));
    assert_eq!(layout.pane_at(AREA, 39, 0), Some(A));
    assert_eq!(layout.pane_at(AREA, 40, 11), Some(B));
    assert_eq!(layout.pane_at(AREA, 79, 12), Some(C));
    assert_eq!(layout.pane_at(AREA, 80, 0), None);
}

#[test]
fn focus_moves_geometrically() {
    let layout = three();
    assert_eq!(
        layout.focus_neighbor(A, Direction::Right, AREA),
        Some(B),
        "ties go to the top"
    );
    assert_eq!(layout.focus_neighbor(C, Direction::Left, AREA), Some(A));
    assert_eq!(layout.focus_neighbor(B, Direction::Down, AREA), Some(C));
    assert_eq!(layout.focus_neighbor(C, Direction::Up, AREA), Some(B));
    assert_eq!(layout.focus_neighbor(A, Direction::Left, AREA), None);
    assert_eq!(layout.focus_neighbor(A, Direction::Up, AREA), None);
    assert_eq!(layout.focus_neighbor(B, Direction::Right, AREA), None);
    assert_eq!(layout.focus_neighbor(D, Direction::Right, AREA), None);
}

#[test]
fn focus_prefers_the_pane_sharing_most_of_the_edge() {
    let mut layout = three();
    // Move the B/C divider down so C only shares the bottom 4 rows with A.
    assert!(layout.resize(B, Direction::Down, 8, AREA));
    assert_eq!(layout.focus_neighbor(A, Direction::Right, AREA), Some(B));
    assert!(layout.resize(B, Direction::Up, 16, AREA));
    assert_eq!(layout.focus_neighbor(A, Direction::Right, AREA), Some(C));
}

#[test]
fn resize_moves_the_divider_after_the_pane_else_before() {
    let mut layout = three();
    assert!(layout.resize(A, Direction::Right, 5, AREA));
    assert_eq!(layout.geometry(AREA)[0], (A, rect(0, 0, 45, 24)));
    // B's right edge is the screen edge, so its left divider moves.
    assert!(layout.resize(B, Direction::Left, 10, AREA));
    assert_eq!(layout.geometry(AREA)[0], (A, rect(0, 0, 35, 24)));
    // C's bottom is the screen edge, so the B/C divider moves.
    assert!(layout.resize(C, Direction::Up, 2, AREA));
    assert_eq!(layout.geometry(AREA)[1], (B, rect(35, 0, 45, 10)));
}

#[test]
fn resize_stops_at_one_cell_and_reports_no_change() {
    let mut layout = three();
    assert!(layout.resize(A, Direction::Left, 500, AREA));
    assert_eq!(layout.geometry(AREA)[0], (A, rect(0, 0, 1, 24)));
    assert!(!layout.resize(A, Direction::Left, 1, AREA));
    assert!(!layout.resize(D, Direction::Left, 1, AREA), "absent pane");
    assert!(
        !Layout::new(A).resize(A, Direction::Left, 1, AREA),
        "no divider"
    );
}

#[test]
fn even_gives_a_row_of_splits_equal_widths() {
    let mut layout = Layout::new(A);
    layout.split(A, Axis::Horizontal, B);
    layout.split(B, Axis::Horizontal, C);
    layout.split(C, Axis::Horizontal, D);
    let widths = |l: &Layout| {
        l.geometry(AREA)
            .iter()
            .map(|(_, r)| r.width)
            .collect::<Vec<_>>()
    };
    assert_eq!(widths(&layout), [40, 20, 10, 10]);
    layout.even();
    assert_eq!(widths(&layout), [20, 20, 20, 20]);
}

#[test]
fn tiled_arranges_a_grid() {
    let mut layout = Layout::new(A);
    layout.split(A, Axis::Horizontal, B);
    layout.split(B, Axis::Horizontal, C);
    layout.split(C, Axis::Horizontal, D);
    layout.toggle_zoom(A);
    layout.tiled();
    assert_eq!(layout.zoomed(), None);
    assert_eq!(
        layout.geometry(AREA),
        vec![
            (A, rect(0, 0, 40, 12)),
            (B, rect(40, 0, 40, 12)),
            (C, rect(0, 12, 40, 12)),
            (D, rect(40, 12, 40, 12)),
        ]
    );
    let mut layout = three();
    layout.split(C, Axis::Vertical, D);
    layout.split(D, Axis::Vertical, PaneId(5));
    layout.tiled();
    let heights: Vec<u16> = layout
        .geometry(AREA)
        .iter()
        .map(|(_, r)| r.height)
        .collect();
    assert_eq!(heights, [12, 12, 12, 12, 12], "5 panes: 3 over 2");
    let widths: Vec<u16> = layout.geometry(AREA).iter().map(|(_, r)| r.width).collect();
    assert_eq!(widths, [27, 27, 26, 40, 40]);
}

#[derive(Debug, Clone)]
enum Op {
    Split(usize, bool),
    Close(usize),
    Zoom(usize),
    Resize(usize, u8, u16),
    Even,
    Tiled,
}

fn any_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<usize>(), any::<bool>()).prop_map(|(i, v)| Op::Split(i, v)),
        1 => any::<usize>().prop_map(Op::Close),
        1 => any::<usize>().prop_map(Op::Zoom),
        2 => (any::<usize>(), 0u8..4, 0u16..100).prop_map(|(i, d, n)| Op::Resize(i, d, n)),
        1 => Just(Op::Even),
        1 => Just(Op::Tiled),
    ]
}

proptest! {
    #[test]
    fn any_sequence_of_operations_tiles_exactly(
        ops in prop::collection::vec(any_op(), 0..40),
        width in 0u16..200,
        height in 0u16..80,
    ) {
        let area = rect(3, 1, width, height);
        let dirs = [Direction::Left, Direction::Right, Direction::Up, Direction::Down];
        let mut layout = Layout::new(PaneId(0));
        let mut next_id = 1;
        for op in ops {
            let panes = layout.panes();
            let pick = |i: usize| panes.get(i % panes.len().max(1)).copied().unwrap_or(PaneId(0));
            match op {
                Op::Split(i, vertical) => {
                    let axis = if vertical { Axis::Vertical } else { Axis::Horizontal };
                    layout.split(pick(i), axis, PaneId(next_id));
                    next_id += 1;
                }
                Op::Close(i) => { layout.close(pick(i)); }
                Op::Zoom(i) => { layout.toggle_zoom(pick(i)); }
                Op::Resize(i, d, n) => { layout.resize(pick(i), dirs[usize::from(d)], n, area); }
                Op::Even => layout.even(),
                Op::Tiled => layout.tiled(),
            }
            let tiles = layout.geometry(area);
            if layout.is_empty() {
                prop_assert!(tiles.is_empty());
            } else {
                assert_exact_tiling(&tiles, area);
            }
            for (pane, _) in &tiles {
                for dir in dirs {
                    if let Some(next) = layout.focus_neighbor(*pane, dir, area) {
                        prop_assert!(layout.contains(next) && next != *pane);
                    }
                }
            }
        }
    }
}

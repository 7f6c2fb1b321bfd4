//! Bytes from a container into a pane, and the pane drawn: the first two
//! bytes pick the pane's size, the rest is split into chunks at 0xff
//! bytes (chunk boundaries inside escape sequences, as sessions deliver
//! them); some chunks scroll or resize before the next frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use podbay::term::grid::{Grid, GridView};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

fuzz_target!(|data: &[u8]| {
    let [cols, rows, rest @ ..] = data else {
        return;
    };
    let cols = u16::from(*cols % 200) + 1;
    let rows = u16::from(*rows % 60) + 1;
    let mut pane = Grid::new(Size::new(cols, rows), 100);
    let mut area = Rect::new(0, 0, cols, rows);
    let mut buffer = Buffer::empty(area);
    for chunk in rest.split(|b| *b == 0xff) {
        pane.feed(chunk);
        match chunk.first() {
            Some(0xfe) => pane.scroll(i8::from_le_bytes([chunk.len() as u8]) as isize),
            Some(0xfd) if chunk.len() >= 3 => {
                let (c, r) = (u16::from(chunk[1] % 200) + 1, u16::from(chunk[2] % 60) + 1);
                pane.resize(c, r);
                area = Rect::new(0, 0, c, r);
                buffer = Buffer::empty(area);
            }
            _ => {}
        }
        GridView { grid: &pane }.render(area, &mut buffer);
        let _ = GridView { grid: &pane }.cursor(area);
    }
    // A frame smaller and larger than the pane.
    let small = Rect::new(0, 0, area.width / 2, area.height / 2);
    GridView { grid: &pane }.render(small, &mut Buffer::empty(small));
    let _ = pane.text();
});

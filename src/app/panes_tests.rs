//! The workspace through `App::update`: splits, sharing, broadcast, copy
//! mode, mouse, closing, renaming and recording.

use bytes::Bytes;
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use super::super::tests::{attached_to_debug_container, code, ctrl, key};
use super::super::{Effect, Event, Focus, Mode};
use crate::model::session::SessionKind;

fn prefix(a: &mut super::App, k: Event) -> Vec<Effect> {
    a.update(ctrl('b'));
    a.update(k)
}

fn click(column: u16, row: u16, kind: MouseEventKind) -> Event {
    Event::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    })
}

#[test]
fn a_split_shares_the_attach_and_the_smaller_pane_sets_the_size() {
    let (mut a, id) = attached_to_debug_container();
    // 100×30: one pane, 98×25 inside its border.
    assert_eq!(
        a.workspace.terminals[&id].grid.size(),
        crate::term::Size::new(98, 25)
    );
    let effects = prefix(&mut a, key('-'));
    assert_eq!(
        effects,
        [Effect::ResizeSession {
            id,
            size: crate::term::Size::new(98, 11)
        }],
        "no second stream: the new pane shares the terminal"
    );
    assert_eq!(a.workspace.viewers(id), 2);
    // Zooming one pane lets the terminal take the whole area again.
    let effects = prefix(&mut a, key('z'));
    assert_eq!(
        effects,
        [Effect::ResizeSession {
            id,
            size: crate::term::Size::new(98, 25)
        }]
    );
    prefix(&mut a, key('z'));
    // Resizing a split moves the divider and repeats without the prefix.
    let height = |a: &super::App| {
        let area = a.areas().workspace.unwrap();
        let focused = a.workspace.focused;
        let geometry = a.workspace.geometry(area);
        geometry
            .iter()
            .find(|(p, _)| Some(*p) == focused)
            .unwrap()
            .1
            .height
    };
    let before = height(&a);
    prefix(&mut a, key('K'));
    a.update(key('K'));
    assert_eq!(height(&a), before + 4, "the lower pane grew upwards");
    assert!(a.resizing.is_some(), "still in resize mode");
    // The key that ends the repeat is not swallowed: it reaches the shell.
    assert_eq!(
        a.update(key('e')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"e")
        }]
    );
    assert!(a.resizing.is_none());
    assert_eq!(
        a.update(key('K')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"K")
        }],
        "after the repeat, K is a letter again"
    );
}

#[test]
fn the_resize_repeat_ends_by_itself_after_a_short_idle() {
    let (mut a, id) = attached_to_debug_container();
    prefix(&mut a, key('-'));
    let effects = prefix(&mut a, key('K'));
    let Some(&Effect::WakeAfter { after, token }) = effects.last() else {
        panic!("a timer for the repeat: {effects:?}")
    };
    assert_eq!(after, super::REPEAT_TIME);
    // A second resize key restarts the clock: the first timer no longer ends it.
    let effects = a.update(key('K'));
    let Some(&Effect::WakeAfter { token: later, .. }) = effects.last() else {
        panic!("{effects:?}")
    };
    a.update(Event::Wake(token));
    assert!(
        a.resizing.is_some(),
        "an older timer does not end a newer repeat"
    );
    a.update(Event::Wake(later));
    assert!(a.resizing.is_none());
    assert_eq!(
        a.update(key('J')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"J")
        }],
        "after the idle, J is typed"
    );
}

#[test]
fn closing_a_live_pane_asks_first_and_renaming_sticks() {
    let (mut a, id) = attached_to_debug_container();
    a.update(ctrl('b'));
    a.update(key(','));
    for c in " db shell".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    assert_eq!(
        a.workspace.focused_pane().unwrap().title.as_deref(),
        Some("db shell")
    );
    assert!(prefix(&mut a, key('x')).is_empty());
    assert!(matches!(a.mode, Mode::ConfirmClose(_)));
    assert!(a.update(key('n')).is_empty(), "anything but y keeps it");
    assert_eq!(a.workspace.panes.len(), 1);
    prefix(&mut a, key('x'));
    assert_eq!(a.update(key('y')), [Effect::CloseSession { id }]);
    assert!(a.workspace.is_empty());
    assert_eq!(a.focus, Focus::Browser);
}

#[test]
fn copy_mode_selects_and_sends_the_text_to_the_users_clipboard() {
    let (mut a, id) = attached_to_debug_container();
    a.update(Event::SessionOutput {
        id,
        bytes: Bytes::from_static(b"alpha\r\nbeta\r\n# "),
    });
    prefix(&mut a, key('['));
    assert!(a.workspace.focused_pane().unwrap().copy.is_some());
    for k in ['k', 'k', '0', 'v', 'j', '$'] {
        assert!(
            a.update(key(k)).is_empty(),
            "copy keys never reach the shell"
        );
    }
    assert_eq!(a.update(key('y')), [Effect::Copy("alpha\nbeta".into())]);
    assert!(a.workspace.focused_pane().unwrap().copy.is_none());
    assert_eq!(
        a.update(key('z')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"z")
        }],
        "out of copy mode, keys go to the shell again"
    );
}

#[test]
fn the_mouse_focuses_and_scrolls_unless_the_remote_asked_for_it() {
    let (mut a, id) = attached_to_debug_container();
    prefix(&mut a, key('|'));
    let right = a.workspace.focused.unwrap();
    // The left pane starts at column 0, below the header.
    assert!(
        a.update(click(5, 5, MouseEventKind::Down(MouseButton::Left)))
            .is_empty()
    );
    assert_ne!(a.workspace.focused, Some(right), "a click focuses");
    // The remote turns on SGR mouse reporting: clicks inside go to it.
    a.update(Event::SessionOutput {
        id,
        bytes: Bytes::from_static(b"\x1b[?1000h\x1b[?1006h"),
    });
    assert_eq!(
        a.update(click(5, 5, MouseEventKind::Down(MouseButton::Left))),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"\x1b[<0;5;4M")
        }]
    );
}

#[test]
fn record_toggles_on_the_focused_terminal() {
    let (mut a, id) = attached_to_debug_container();
    a.update(ctrl('b'));
    a.update(key(':'));
    for c in "record".chars() {
        a.update(key(c));
    }
    let effects = a.update(code(KeyCode::Enter));
    let [
        Effect::Record {
            id: recorded,
            on: true,
            size: crate::term::Size { cols: 98, rows: 25 },
            ..
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    assert_eq!(*recorded, id);
    a.update(Event::Recording {
        id,
        outcome: Ok(Some("/tmp/x.cast".into())),
    });
    assert!(a.workspace.terminals[&id].recording.is_some());
    assert!(a.message.as_ref().unwrap().text.contains("/tmp/x.cast"));
}

#[test]
fn attaching_again_to_an_attached_container_adds_a_pane_not_a_stream() {
    let (mut a, id) = attached_to_debug_container();
    a.update(ctrl('b'));
    a.update(key('d'));
    assert_eq!(a.focus, Focus::Browser);
    let effects = a.update(key('a'));
    assert!(
        !effects.iter().any(|e| matches!(
            e,
            Effect::OpenSession {
                kind: SessionKind::Attach,
                ..
            }
        )),
        "{effects:?}"
    );
    assert_eq!(a.workspace.viewers(id), 2);
    assert_eq!(a.focus, Focus::Workspace);
}

/// Terminal `id`'s stream is cut, saying `reason`.
fn cut(a: &mut super::App, id: crate::app::TerminalId, reason: &str) -> Vec<Effect> {
    a.update(Event::SessionEnded {
        id,
        end: crate::model::session::SessionEnd {
            exit_code: None,
            reason: reason.into(),
            disconnected: true,
        },
    })
}

/// Whether `effects` send anything into a session.
fn sends_input(effects: &[Effect]) -> bool {
    effects
        .iter()
        .any(|e| matches!(e, Effect::SendInput { .. }))
}

/// A debug container's pane, attaching again after a cut (`r`), its
/// stream not yet up.
fn attaching() -> (super::App, crate::app::TerminalId) {
    let (mut a, id) = attached_to_debug_container();
    let effects = cut(&mut a, id, "the stream was cut");
    assert!(effects.is_empty(), "{effects:?}");
    let effects = a.update(key('r'));
    assert!(
        matches!(effects.as_slice(), [Effect::OpenSession { .. }]),
        "r re-attaches: {effects:?}"
    );
    (a, id)
}

#[test]
fn keys_typed_while_a_pane_attaches_reach_its_shell_once_it_is_up() {
    let (mut a, id) = attaching();
    // Typed, not taken as the pane's own keys (q or x would close it).
    for c in "exit q".chars() {
        assert!(a.update(key(c)).is_empty(), "{c} waits for the stream");
    }
    assert!(a.update(code(KeyCode::Enter)).is_empty());
    assert_eq!(a.workspace.panes.len(), 1, "the pane is still there");
    let effects = a.update(Event::SessionAttached { id });
    assert_eq!(
        effects.last(),
        Some(&Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"exit q\r")
        }),
        "{effects:?}"
    );
    // Then keys go straight to the stream, and nothing is sent twice.
    assert_eq!(
        a.update(key('y')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"y")
        }]
    );
    cut(&mut a, id, "cut");
    a.update(key('r'));
    let effects = a.update(Event::SessionAttached { id });
    assert!(!sends_input(&effects), "{effects:?}");
}

#[test]
fn keys_typed_ahead_of_an_attach_that_fails_go_nowhere() {
    let (mut a, id) = attaching();
    a.update(key('l'));
    a.update(key('s'));
    cut(&mut a, id, "could not connect: the server refused");
    a.update(key('r'));
    let effects = a.update(Event::SessionAttached { id });
    assert!(
        !sends_input(&effects),
        "what was typed for the failed attach is not sent to the next: {effects:?}"
    );
}

#[test]
fn a_paste_while_attaching_is_kept_up_to_a_limit_and_the_cut_is_said() {
    let (mut a, id) = attaching();
    let most = crate::app::terminal::TYPED_AHEAD_MOST;
    a.update(Event::Paste("p".repeat(most + 10)));
    let t = &a.workspace.terminals[&id];
    assert_eq!(t.typed_ahead.len(), most);
    assert!(
        t.notice
            .as_deref()
            .is_some_and(|n| n.contains("KiB typed while attaching")),
        "{:?}",
        t.notice
    );
    let effects = a.update(Event::SessionAttached { id });
    let sent: usize = effects
        .iter()
        .map(|e| match e {
            Effect::SendInput { bytes, .. } => bytes.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(sent, most);
}

//! A terminal on a container without a tty: the pane is its line
//! discipline; without stdin it only shows output.

use bytes::Bytes;
use crossterm::event::KeyCode;

use crate::app::tests::{code, ctrl, detail_event, in_pod_view, key, pod_detail};
use crate::app::{App, Effect, Event, TerminalId};
use crate::model::{ContainerState, Stdio};

/// Attaches (`a`) to the debug container, whose spec has `stdio`.
fn attached(stdio: Stdio) -> (App, TerminalId) {
    let mut a = in_pod_view();
    let mut detail = pod_detail(Some(ContainerState::Running { since: None }));
    detail.containers[1].stdio = stdio;
    a.update(detail_event(detail));
    a.update(key('j'));
    let effects = a.update(key('a'));
    let Some(&Effect::OpenSession {
        id, stdio: asked, ..
    }) = effects
        .iter()
        .find(|e| matches!(e, Effect::OpenSession { .. }))
    else {
        panic!("{effects:?}")
    };
    assert_eq!(asked, stdio, "the attach asks for what the spec has");
    a.update(Event::SessionAttached { id });
    (a, id)
}

fn typed(a: &mut App, text: &str) -> Vec<Effect> {
    text.chars().flat_map(|c| a.update(key(c))).collect()
}

const NO_TTY: Stdio = Stdio {
    stdin: true,
    stdin_once: false,
    tty: false,
};

#[test]
fn without_a_tty_the_pane_echoes_edits_and_sends_lines_with_lf() {
    let (mut a, id) = attached(NO_TTY);
    assert!(
        typed(&mut a, "echo hix").is_empty(),
        "nothing sent mid-line"
    );
    assert!(a.update(code(KeyCode::Backspace)).is_empty());
    assert!(
        a.workspace.terminals[&id].grid.text().contains("echo hi"),
        "echoed by the pane"
    );
    assert_eq!(
        a.update(code(KeyCode::Enter)),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"echo hi\n")
        }]
    );
    // Output from a pipe: LF alone, which the runtime turned into CRLF.
    a.update(Event::SessionOutput {
        id,
        bytes: Bytes::from_static(b"hi\r\n"),
    });
    let text = a.workspace.terminals[&id].grid.text();
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    assert_eq!(lines, ["echo hi", "hi"]);
}

#[test]
fn ctrl_c_says_it_cannot_interrupt_and_ctrl_d_closes_stdin() {
    let (mut a, id) = attached(NO_TTY);
    typed(&mut a, "sleep 5");
    assert!(
        a.update(ctrl('c')).is_empty(),
        "nothing reaches the process"
    );
    let notice = a.workspace.terminals[&id].notice.clone().unwrap();
    assert!(notice.contains("cannot interrupt"), "{notice}");
    assert_eq!(a.update(ctrl('d')), [Effect::CloseStdin { id }]);
    let notice = a.workspace.terminals[&id].notice.clone().unwrap();
    assert!(notice.contains("stdinOnce"), "{notice}");
    // Closed: typing sends nothing more.
    assert!(typed(&mut a, "x\r").is_empty());
}

#[test]
fn without_stdin_the_pane_is_read_only_and_says_so() {
    let (mut a, id) = attached(Stdio::NONE);
    let notice = a.workspace.terminals[&id].notice.clone().unwrap();
    assert!(notice.starts_with("Read-only"), "{notice}");
    assert!(typed(&mut a, "ls\r").is_empty());
    assert_eq!(
        a.workspace.terminals[&id].input(),
        crate::app::terminal::Input::ReadOnly
    );
}

#[test]
fn with_a_tty_every_key_goes_as_xterm_sends_it() {
    let (mut a, id) = attached(Stdio::TERMINAL);
    assert_eq!(
        a.update(key('e')),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"e")
        }]
    );
    assert_eq!(
        a.update(code(KeyCode::Enter)),
        [Effect::SendInput {
            id,
            bytes: Bytes::from_static(b"\r")
        }]
    );
}

//! The file browser as a state machine: what each key asks the executor
//! for, and what each answer changes.

use crossterm::event::KeyCode;

use super::*;
use crate::app::tests::{code, in_pod_view, key};
use crate::app::{Event, Mode};
use crate::model::files::Entry;

fn entry(name: &str, kind: Kind, size: u64) -> Entry {
    Entry {
        name: name.into(),
        kind,
        mode: 0o644,
        size,
        uid: 65532,
        gid: 65532,
        mtime: 1_700_000_000,
    }
}

fn browser(a: &App) -> &FileBrowser {
    match &a.view {
        View::Files(b) => b,
        other => panic!("not the file browser: {other:?}"),
    }
}

/// The one `Effect::Files` among `effects`.
fn request(effects: &[Effect]) -> (u64, Via, FileOp, Option<u64>) {
    let found: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Files {
                generation,
                via,
                op,
                transfer,
                ..
            } => Some((*generation, via.clone(), op.clone(), *transfer)),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 1, "{effects:?}");
    found[0].clone()
}

/// The pod view's `app` container browsed, `/` listed with a directory,
/// a link and a file, through debug container dbg-1.
fn browsing() -> App {
    let mut a = in_pod_view();
    let effects = a.update(key('b'));
    assert!(effects.contains(&Effect::StopWatchingPod), "{effects:?}");
    let (generation, via, op, _) = request(&effects);
    assert_eq!(op, FileOp::List("/".into()));
    let Via::Unknown { fallback, .. } = via else {
        panic!("the route is found on the first listing: {via:?}")
    };
    assert_eq!(fallback.target.as_deref(), Some("app"));
    assert!(fallback.stdin && fallback.tty, "a shell that stays up");
    a.update(Event::Files(FilesEvent::Listed {
        generation,
        via: Via::Debugger("dbg-1".into()),
        dir: "/".into(),
        result: Ok(vec![
            entry("var", Kind::Dir, 4096),
            entry("lib", Kind::Link("usr/lib".into()), 7),
            entry("notes.txt", Kind::File, 12),
        ]),
    }));
    a
}

#[test]
fn enter_descends_follows_links_and_minus_goes_up() {
    let mut a = browsing();
    assert_eq!(browser(&a).via, Via::Debugger("dbg-1".into()));
    let (_, via, op, _) = request(&a.update(code(KeyCode::Enter)));
    assert_eq!(
        (via, op),
        (Via::Debugger("dbg-1".into()), FileOp::List("/var".into()))
    );
    assert!(browser(&a).loading);
    assert!(
        browser(&a).visible().is_empty(),
        "nothing of / is selectable under /var's name"
    );
    let (generation, _, op, _) = request(&a.update(key('-')));
    assert_eq!(op, FileOp::List("/".into()));
    a.update(Event::Files(FilesEvent::Listed {
        generation,
        via: Via::Debugger("dbg-1".into()),
        dir: "/".into(),
        result: Ok(vec![
            entry("var", Kind::Dir, 4096),
            entry("lib", Kind::Link("usr/lib".into()), 7),
        ]),
    }));
    a.update(key('j'));
    let (_, _, op, _) = request(&a.update(code(KeyCode::Enter)));
    assert_eq!(
        op,
        FileOp::List("/usr/lib".into()),
        "a link is followed in the container's root"
    );
    // Downloading a link takes what it points to.
    let (generation, ..) = request(&a.update(key('-')));
    a.update(Event::Files(FilesEvent::Listed {
        generation,
        via: Via::Debugger("dbg-1".into()),
        dir: "/usr".into(),
        result: Ok(vec![entry("lib", Kind::Link("../usr/lib".into()), 7)]),
    }));
    let (_, _, op, _) = request(&a.update(key('g')));
    assert_eq!(
        op,
        FileOp::Download {
            path: "/usr/lib".into(),
            to: ".".into()
        }
    );
}

#[test]
fn an_answer_for_another_directory_is_dropped() {
    let mut a = browsing();
    let (old, ..) = request(&a.update(code(KeyCode::Enter)));
    let (new, ..) = request(&a.update(key('-')));
    a.update(Event::Files(FilesEvent::Listed {
        generation: old,
        via: Via::Debugger("dbg-1".into()),
        dir: "/var".into(),
        result: Ok(vec![entry("log", Kind::Dir, 1)]),
    }));
    assert_eq!(browser(&a).dir, "/");
    assert!(browser(&a).loading, "still waiting for {new}");
}

#[test]
fn a_file_is_read_and_esc_comes_back_to_the_list_then_the_pod() {
    let mut a = browsing();
    a.update(key('j'));
    a.update(key('j'));
    let (generation, _, op, _) = request(&a.update(key('v')));
    assert_eq!(op, FileOp::Read("/notes.txt".into()));
    a.update(Event::Files(FilesEvent::Read {
        generation,
        path: "/notes.txt".into(),
        result: Ok(b"hello\nworld\n".to_vec()),
    }));
    let reading = &browser(&a).reading.as_ref().expect("reading").1;
    assert_eq!(reading.lines(), ["hello", "world"]);
    a.update(code(KeyCode::Esc));
    assert!(browser(&a).reading.is_none());
    let effects = a.update(code(KeyCode::Esc));
    assert!(matches!(a.view, View::Pod(_)));
    assert!(matches!(effects[..], [Effect::WatchPod(..)]), "{effects:?}");
}

#[test]
fn a_download_runs_reports_progress_and_can_be_cancelled() {
    let mut a = browsing();
    a.update(key('j'));
    a.update(key('j'));
    let (_, _, op, transfer) = request(&a.update(key('g')));
    assert_eq!(
        op,
        FileOp::Download {
            path: "/notes.txt".into(),
            to: ".".into()
        }
    );
    let id = transfer.expect("a transfer id");
    a.update(Event::Files(FilesEvent::Progress {
        id,
        bytes: 6,
        total: Some(12),
        elapsed_ms: 500,
    }));
    let t = &browser(&a).transfers[0];
    assert_eq!(
        (t.bytes, t.total, &t.state),
        (6, Some(12), &TransferState::Running)
    );
    assert_eq!(a.update(key('x')), [Effect::CancelTransfer(id)]);
    a.update(Event::Files(FilesEvent::Ended {
        id,
        outcome: Err(String::new()),
    }));
    assert_eq!(browser(&a).transfers[0].state, TransferState::Cancelled);
}

#[test]
fn an_upload_asks_for_the_path_and_lists_again_when_done() {
    let mut a = browsing();
    a.update(key('u'));
    for c in "./f".chars() {
        a.update(key(c));
    }
    // tab asks for the local paths that begin so; their common start is
    // typed, and the rest shown.
    assert_eq!(
        a.update(code(KeyCode::Tab)),
        [Effect::CompleteLocalPath("./f".into())]
    );
    a.update(Event::Files(FilesEvent::Completed {
        typed: "./f".into(),
        candidates: vec!["./fix.json".into(), "./fixes/".into()],
    }));
    assert_eq!(browser(&a).prompt, Some(Prompt::Upload("./fix".into())));
    assert_eq!(browser(&a).completions, ["fix.json", "fixes/"]);
    for c in ".json".chars() {
        a.update(key(c));
    }
    assert!(browser(&a).completions.is_empty());
    let (_, _, op, transfer) = request(&a.update(code(KeyCode::Enter)));
    assert_eq!(
        op,
        FileOp::Upload {
            local: "./fix.json".into(),
            dir: "/".into()
        }
    );
    let effects = a.update(Event::Files(FilesEvent::Ended {
        id: transfer.unwrap(),
        outcome: Ok("Copied ./fix.json.".into()),
    }));
    assert_eq!(request(&effects).2, FileOp::List("/".into()));
    assert!(matches!(
        browser(&a).transfers[0].state,
        TransferState::Done(_)
    ));
}

#[test]
fn removing_asks_first_and_any_other_key_keeps_it() {
    let mut a = browsing();
    a.update(key('D'));
    assert_eq!(browser(&a).prompt, Some(Prompt::Remove("var".into())));
    assert!(a.update(key('n')).is_empty());
    assert_eq!(browser(&a).prompt, None);
    a.update(key('D'));
    let (_, _, op, _) = request(&a.update(key('y')));
    assert_eq!(op, FileOp::Remove("/var".into()));
}

#[test]
fn the_filter_narrows_the_names() {
    let mut a = browsing();
    a.update(key('/'));
    for c in "NOT".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Enter));
    let names: Vec<&str> = browser(&a)
        .visible()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["notes.txt"]);
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn a_container_that_is_not_running_is_not_browsed() {
    let mut a = crate::app::tests::in_pod_view();
    a.update(crate::app::tests::detail_event(
        crate::app::tests::pod_detail(None),
    ));
    if let View::Pod(view) = &mut a.view
        && let Some(detail) = view.pod.detail.as_mut()
    {
        detail.containers[0].state = crate::model::ContainerState::Waiting {
            reason: "CrashLoopBackOff".into(),
            message: String::new(),
        };
    }
    assert!(a.update(key('b')).is_empty());
    assert!(matches!(a.view, View::Pod(_)));
    assert!(a.message.as_ref().unwrap().text.contains("not running"));
}

#[test]
fn files_takes_an_absolute_path() {
    let mut a = in_pod_view();
    a.update(key(':'));
    for c in "files /var/log".chars() {
        a.update(key(c));
    }
    let (_, _, op, _) = request(&a.update(code(KeyCode::Enter)));
    assert_eq!(op, FileOp::List("/var/log".into()));
}

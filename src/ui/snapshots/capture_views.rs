//! The `P` form over two marked pods, and the Captures view with one
//! capture running and one failed, at 80×24 and 250×60.

use super::*;
use crate::app::Effect;
use crate::model::capture::CaptureEvent;

fn capture_app() -> (App, Vec<Effect>) {
    let (mut a, _) = app(true);
    a.update(listed(vec![
        row("shop", "storefront-7d9c8b6f4-x2k9p", "Running"),
        row("shop", "storefront-7d9c8b6f4-m4q7z", "Running"),
        row("monitoring", "prometheus-5b7c8d9f6-r2d2x", "Running"),
    ]));
    // The two storefronts, below monitoring's pod.
    a.update(key('j'));
    a.update(key(' '));
    a.update(key(' '));
    a.update(key('P'));
    for c in "tcp port 8080".chars() {
        a.update(key(c));
    }
    a.update(code(KeyCode::Tab));
    for c in "30s".chars() {
        a.update(key(c));
    }
    (a, Vec::new())
}

#[test]
fn capture_form_and_view() {
    let (mut a, _) = capture_app();
    assert_snapshot("capture_form_80x24", &render(&a, 80, 24));
    assert_snapshot("capture_form_250x60", &render(&a, 250, 60));
    let effects = a.update(code(KeyCode::Enter));
    let Some(Effect::StartCapture {
        id, request, file, ..
    }) = effects.first()
    else {
        panic!("enter starts the capture: {effects:?}");
    };
    assert_eq!(request.pods.len(), 2, "the marked pods, together");
    assert_eq!(request.options.filter.as_deref(), Some("tcp port 8080"));
    assert_eq!(request.duration, Some(std::time::Duration::from_secs(30)));
    assert_eq!(file, "./capture-2-pods.pcapng");
    let first = *id;
    a.update(Event::Capture {
        id: first,
        event: CaptureEvent::Capturing {
            file: "/home/sre/capture-2-pods.pcapng".into(),
        },
    });
    a.update(Event::Capture {
        id: first,
        event: CaptureEvent::Totals {
            packets: 1_532,
            bytes: 2_345_678,
        },
    });
    // A second, of monitoring's pod alone (the marks cleared), in a
    // namespace that forbids it.
    a.update(key('*'));
    a.update(key('*'));
    a.update(key('g'));
    let effects = a.update(key('P'));
    assert!(effects.is_empty());
    let effects = a.update(code(KeyCode::Enter));
    let Some(Effect::StartCapture {
        id: second,
        request,
        ..
    }) = effects.first()
    else {
        panic!("enter starts the capture: {effects:?}");
    };
    assert_eq!(
        request.pods,
        [(
            "monitoring".to_string(),
            "prometheus-5b7c8d9f6-r2d2x".to_string()
        )]
    );
    a.update(Event::Capture {
        id: *second,
        event: CaptureEvent::Ended {
            lines: vec!["monitoring/prometheus-5b7c8d9f6-r2d2x: not captured: monitoring enforces Pod Security \"restricted\", where no container may capture packets.".into()],
            captured: false,
        },
    });
    for c in ":captures\r".chars() {
        a.update(match c {
            '\r' => code(KeyCode::Enter),
            c => key(c),
        });
    }
    assert_snapshot("captures_view_80x24", &render(&a, 80, 24));
    assert_snapshot("captures_view_250x60", &render(&a, 250, 60));

    // x stops the running one; the failed one is said to be over.
    let effects = a.update(key('x'));
    assert_eq!(effects, vec![Effect::StopCapture(first)]);
    assert_eq!(
        a.captures[0].state,
        crate::app::captures::CaptureState::Stopping
    );
    a.update(key('j'));
    assert!(
        a.update(key('x')).is_empty(),
        "an ended capture is not stopped again"
    );
    // o copies the command that opens the file.
    a.update(key('k'));
    let effects = a.update(key('o'));
    assert_eq!(
        effects,
        vec![Effect::Copy(
            "wireshark /home/sre/capture-2-pods.pcapng".into()
        )]
    );
}

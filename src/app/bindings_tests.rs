use std::collections::BTreeMap;

use crossterm::event::KeyCode;

use super::*;
use crate::app::tests::{code, in_pod_view, key, listed, row};
use crate::app::{Effect, Event, Mode};

/// Every browser view and state a table is made for, by the keys a user
/// presses to get there.
fn views() -> Vec<(&'static str, App)> {
    let list = || {
        let (mut a, _) = crate::app::tests::app(false);
        a.update(Event::Resize(crate::term::Size::new(120, 30)));
        a.update(listed(vec![
            row("shop", "cart", "Running"),
            row("shop", "web", "Running"),
            row("shop", "redis-0", "Running"),
        ]));
        a
    };
    let after = |mut a: App, keys: &[Event]| {
        for k in keys {
            a.update(k.clone());
        }
        a
    };
    vec![
        ("pods", list()),
        ("pods, two marked", after(list(), &[key(' '), key(' ')])),
        ("pod", in_pod_view()),
        ("pod, described", after(in_pod_view(), &[key('D')])),
        ("events", after(list(), &[key('E')])),
        ("nodes", after(list(), &[key('O')])),
        ("messages", after(list(), &[key('M')])),
        ("files", after(in_pod_view(), &[key('b')])),
        ("forwards", {
            let mut a = list();
            a.run_command("pf");
            a
        }),
    ]
}

#[test]
fn no_view_takes_a_key_twice_and_each_key_says_what_it_does() {
    let mut kinds = Vec::new();
    for (name, a) in views() {
        let table = browser(&a);
        kinds.push(std::mem::discriminant(&a.view));
        let mut by_key: BTreeMap<String, String> = BTreeMap::new();
        for binding in &table {
            assert!(!binding.help().is_empty(), "{name}: {binding:?}");
            assert!(
                !binding.keys_label(&a.keymap).is_empty(),
                "{name}: a binding with no key: {binding:?}"
            );
            let specs = binding.specs(&a.keymap);
            assert!(
                !specs.is_empty(),
                "{name}: {binding:?} is pressed with nothing"
            );
            for spec in specs {
                let said = format!("{:?}", binding.key);
                if let Some(before) = by_key.insert(spec.label(), said.clone()) {
                    panic!("{name}: {} is both {before} and {said}", spec.label());
                }
            }
        }
        let hinted: Vec<&str> = table.iter().filter_map(|b| b.hint.as_deref()).collect();
        assert!(
            hinted.contains(&"help") && hinted.contains(&"quit"),
            "{name}: {hinted:?}"
        );
    }
    kinds.dedup();
    assert_eq!(kinds.len(), 7, "every kind of view is tried");
}

#[test]
fn a_views_fixed_keys_are_the_ones_it_handles() {
    for (name, a) in views() {
        for binding in browser(&a) {
            let Key::Fixed { keys, .. } = binding.key else {
                continue;
            };
            for k in keys {
                // A fresh view for each key: some leave it.
                let (_, mut fresh) = views().into_iter().find(|(n, _)| *n == name).unwrap();
                let event = KeySpec::parse(k).unwrap().event();
                let handled = fresh
                    .on_reader_key(&event)
                    .or_else(|| fresh.on_files_key(&event))
                    .or_else(|| fresh.on_forwards_key(&event));
                assert!(
                    handled.is_some(),
                    "{name}: {k} is in its table but not handled"
                );
            }
        }
    }
}

/// A key the shown view does not take does nothing there; each of these
/// acted on the pod list or the pod behind the view: `X` in the file
/// browser asked to delete the pod, `c` copied its name, `d` in the
/// forwards view opened the list's pod, space in the nodes view marked
/// one, `F` there opened a pod to forward (`E` there now shows the node's
/// events, and comes back), `d` in the messages opened one.
#[test]
fn a_key_the_view_does_not_take_acts_on_nothing_behind_it() {
    for (name, keys) in [
        ("files", ['X', 'c', 'F', 'E']),
        ("forwards", ['d', 'E', 'F', '*']),
        ("nodes", [' ', 'F', 'y', '*']),
        ("messages", ['d', 'F', 'E', ' ']),
    ] {
        for k in keys {
            let (_, mut a) = views().into_iter().find(|(n, _)| *n == name).unwrap();
            let before = std::mem::discriminant(&a.view);
            let said = a.message.clone();
            let effects = a.update(key(k));
            assert_eq!(effects, Vec::<Effect>::new(), "{name}: {k:?}");
            assert_eq!(std::mem::discriminant(&a.view), before, "{name}: {k:?}");
            assert_eq!(a.mode, Mode::Normal, "{name}: {k:?}");
            assert_eq!(a.message, said, "{name}: {k:?}");
            assert!(a.pods.marks().is_empty(), "{name}: {k:?}");
        }
    }
    // The keys they take still act.
    let (_, mut nodes) = views().into_iter().find(|(n, _)| *n == "nodes").unwrap();
    nodes.update(code(KeyCode::Esc));
    assert!(matches!(nodes.view, View::Pods));
    let (_, mut nodes) = views().into_iter().find(|(n, _)| *n == "nodes").unwrap();
    assert!(matches!(
        nodes.update(key('E'))[..],
        [Effect::WatchEvents(..)]
    ));
    assert_eq!(
        nodes.update(code(KeyCode::Esc)),
        [Effect::WatchNodes(vec![crate::app::tests::sim_cluster()])]
    );
    assert!(matches!(nodes.view, View::Nodes(_)));
    let (_, mut files) = views().into_iter().find(|(n, _)| *n == "files").unwrap();
    files.update(key('u'));
    assert!(matches!(&files.view, View::Files(b) if b.prompt.is_some()));
}

/// A key says what it does in its view: enter in the nodes view lists a
/// node's pods (the help said "open the pod"), d there opens a shell on it.
#[test]
fn a_key_says_what_it_does_in_its_view() {
    let (_, nodes) = views().into_iter().find(|(n, _)| *n == "nodes").unwrap();
    let help = |action| {
        browser(&nodes)
            .into_iter()
            .find(|b| b.key == Key::Action(action))
            .map(|b| b.help())
            .unwrap()
    };
    assert_eq!(
        help(Action::Open),
        "the node's taints and its pods of every namespace"
    );
    assert!(help(Action::Debug).starts_with("a shell on the node"));
    let (_, pods) = views().into_iter().find(|(n, _)| *n == "pods").unwrap();
    let open = browser(&pods)
        .into_iter()
        .find(|b| b.key == Key::Action(Action::Open))
        .unwrap();
    assert_eq!(open.help(), Action::Open.description(), "the list's own");
}

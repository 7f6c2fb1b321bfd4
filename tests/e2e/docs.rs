//! The reference in docs/ against the code it describes: every key the
//! browser binds by default is in the keys reference, and the front door
//! stays one.

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect(path)
}

#[test]
fn every_default_key_of_the_browser_is_in_the_keys_reference() {
    use podbay::app::keymap::{Action, Keymap};
    let reference = read("docs/browser.md");
    let keymap = Keymap::default();
    let mut missing = Vec::new();
    for action in Action::ALL {
        let keys = keymap.keys_for(action);
        assert!(!keys.is_empty(), "{action:?} has a default key");
        for key in keys.split(", ") {
            if !reference.contains(&format!("`{key}`")) {
                missing.push(format!("{key} ({})", action.name()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/browser.md does not name these default keys: {missing:?}"
    );
}

#[test]
fn the_readme_is_a_front_door_that_links_every_reference_page() {
    let readme = read("README.md");
    assert!(readme.lines().count() <= 300, "README.md is short");
    for line in ["cargo run --release -- demo", "cargo test --locked"] {
        assert!(readme.contains(line), "the two commands: {line}");
    }
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    for entry in std::fs::read_dir(docs).expect("docs/") {
        let name = entry.expect("an entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            readme.contains(&format!("(docs/{name})")),
            "README links docs/{name}"
        );
    }
}

#[test]
fn links_between_the_pages_lead_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec!["README.md".to_string()];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        pages.push(format!(
            "docs/{}",
            entry.expect("an entry").file_name().to_string_lossy()
        ));
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = read(page);
        let dir = Path::new(page).parent().unwrap_or(Path::new(""));
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.starts_with("http") || target.contains(' ') {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file_text = if file.is_empty() {
                text.clone()
            } else {
                match std::fs::read_to_string(root.join(dir).join(file)) {
                    Ok(t) => t,
                    Err(_) => {
                        broken.push(format!("{page}: {target}"));
                        continue;
                    }
                }
            };
            if !anchor.is_empty() && !anchors(&file_text).iter().any(|a| a == anchor) {
                broken.push(format!("{page}: {target}"));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:?}");
}

/// GitHub's anchors for a page's headings: lower case, spaces to `-`,
/// punctuation but `-` and `_` dropped.
fn anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    text.lines()
        .filter(|line| {
            if line.starts_with("```") {
                in_code = !in_code;
            }
            !in_code && line.starts_with('#')
        })
        .map(|line| {
            line.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

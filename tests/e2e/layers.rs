//! The layering docs/architecture.md describes, read off the
//! source: the pure layers (`app`, `model`, `term`) reach only the layers
//! under them, and no two modules (top-level, or submodules of one
//! top-level module) import each other in a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What each pure layer may use of the crate.
const PURE: [(&str, &[&str]); 3] = [
    ("app", &["model", "term", "parallel"]),
    ("model", &[]),
    ("term", &[]),
];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `src/app/terminal/mod.rs` is `app::terminal`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .strip_prefix(src)
        .expect("under src/")
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The code of a file without its comments.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths that follow each `prefix` in `code`, their first two names
/// each (`crate::app::Event` → `app`, `Event`); a group
/// (`super::{a, b::C}`) gives one path per member.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    fn names(path: &str) -> Vec<String> {
        path.split("::")
            .map(|part| {
                let part = part.trim_start();
                let end = part
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(part.len());
                part[..end].to_string()
            })
            .take_while(|name| !name.is_empty())
            .take(2)
            .collect()
    }
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let glued = code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        if glued {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                paths.extend(group.split(',').map(names));
            }
            None => paths.push(names(rest)),
        }
    }
    paths.retain(|path| !path.is_empty());
    paths
}

/// A circle in `graph`, if there is one (a depth-first search).
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

struct Imports {
    /// Top-level module → the top-level modules it uses.
    top: BTreeMap<String, BTreeSet<String>>,
    /// `a::b` → the `a::c` it uses, for each top-level module `a`.
    inner: BTreeMap<String, BTreeSet<String>>,
}

fn imports() -> Imports {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut modules = BTreeSet::new();
    for file in &files {
        let module = module_of(&src, file);
        if module.len() >= 2 {
            modules.insert(format!("{}::{}", module[0], module[1]));
        }
    }
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut inner: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        let Some(own) = module.first().filter(|m| *m != "lib" && *m != "main") else {
            continue;
        };
        let text = code(&std::fs::read_to_string(file).expect("a source file"));
        for path in paths_after(&text, "crate::") {
            if path[0] != *own {
                top.entry(own.clone())
                    .or_default()
                    .insert(path[0].to_string());
            } else if module.len() >= 2 && path.len() == 2 {
                let used = format!("{own}::{}", path[1]);
                if modules.contains(&used) && used != format!("{own}::{}", module[1]) {
                    inner
                        .entry(format!("{own}::{}", module[1]))
                        .or_default()
                        .insert(used);
                }
            }
        }
        // `super::x` from `a::b` (its file or its mod.rs) is `a::x`; in
        // its test module, `super` is `a::b` itself.
        if module.len() == 2 {
            let outside_tests = text.split("#[cfg(test)]\nmod ").next().unwrap_or(&text);
            for path in paths_after(outside_tests, "super::") {
                let used = format!("{own}::{}", path[0]);
                if modules.contains(&used) && used != format!("{own}::{}", module[1]) {
                    inner
                        .entry(format!("{own}::{}", module[1]))
                        .or_default()
                        .insert(used);
                }
            }
        }
    }
    Imports { top, inner }
}

#[test]
fn the_pure_layers_use_only_the_layers_under_them() {
    let imports = imports();
    for (layer, allowed) in PURE {
        let used = imports.top.get(layer).cloned().unwrap_or_default();
        let beyond: Vec<_> = used
            .iter()
            .filter(|m| !allowed.contains(&m.as_str()))
            .collect();
        assert!(
            beyond.is_empty(),
            "{layer} is pure and may use only {allowed:?}, but uses {beyond:?}"
        );
    }
    assert!(
        imports.top.contains_key("tui") && imports.top["tui"].contains("app"),
        "the check reads the source: tui uses app"
    );
}

/// The command line and the TUI are two front ends over the same
/// engines: neither reaches an action through the other, and the engines
/// know neither.
#[test]
fn the_engines_sit_below_both_front_ends() {
    let imports = imports();
    let uses = |layer: &str, other: &str| {
        imports
            .top
            .get(layer)
            .is_some_and(|used| used.contains(other))
    };
    for layer in ["tui", "app", "ui", "engine"] {
        assert!(!uses(layer, "commands"), "{layer} uses commands");
    }
    for front in ["commands", "tui", "app", "ui"] {
        assert!(!uses("engine", front), "engine uses {front}");
    }
    assert!(
        uses("commands", "engine") && uses("tui", "engine"),
        "the check reads the source: both front ends use the engines"
    );
}

#[test]
fn no_modules_import_each_other_in_a_circle() {
    let imports = imports();
    assert_eq!(circle(&imports.top), None, "top-level modules");
    assert_eq!(circle(&imports.inner), None, "submodules");
    assert!(
        imports.inner.values().map(BTreeSet::len).sum::<usize>() > 10,
        "the check sees submodules use each other"
    );
}

#[test]
fn a_circle_is_found() {
    let graph = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
    ]);
    assert_eq!(
        circle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let line = BTreeMap::from([("a".to_string(), BTreeSet::from(["b".to_string()]))]);
    assert_eq!(circle(&line), None);
}

/// `name: line` for each line `find` picks in the source files outside
/// the simulator (whose files and output are its pretend cluster's), the
/// module `owner` that may do it, and test files.
fn lines_outside(owner: &str, find: impl Fn(&str) -> Vec<String>) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let name = file
            .strip_prefix(&src)
            .expect("under src/")
            .to_string_lossy()
            .into_owned();
        if name.starts_with("sim/") || name == owner || name.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a source file");
        found.extend(
            find(&text)
                .into_iter()
                .map(|line| format!("{name}: {line}")),
        );
    }
    found
}

/// Calls that create, write or wholly read local files: only `local` makes
/// them (it creates without following links, stages and renames, reads
/// regular files under a cap). The simulator's files are its pretend
/// nodes' and containers', and tests make what they check.
const LOCAL_FILE_CALLS: [&str; 6] = [
    "File::create",
    "OpenOptions",
    "fs::write",
    "DirBuilder",
    "create_dir",
    "fs::read(",
];

/// The lines of `text` outside its tests that make a local file call
/// other than through `local::`.
fn local_file_calls(text: &str) -> Vec<String> {
    let outside_tests = text.split("#[cfg(test)]").next().unwrap_or(text);
    code(outside_tests)
        .lines()
        .filter(|line| {
            LOCAL_FILE_CALLS.iter().any(|call| {
                line.match_indices(call)
                    .any(|(at, _)| !line[..at].ends_with("local::"))
            }) || line.contains("fs::read_to_string(")
        })
        .map(|line| line.trim().to_string())
        .collect()
}

#[test]
fn local_files_are_made_and_read_only_by_the_local_module() {
    let found = lines_outside("local.rs", local_file_calls);
    assert!(
        found.is_empty(),
        "local files are written and read through crate::local only:\n{}",
        found.join("\n")
    );
    assert_eq!(
        local_file_calls(
            "fn f() { crate::local::create_dir(p, 0o700); std::fs::write(p, b\"x\"); }\n#[cfg(test)]\nmod tests { fn g() { std::fs::write(p, b\"\"); } }"
        ),
        ["fn f() { crate::local::create_dir(p, 0o700); std::fs::write(p, b\"x\"); }"],
        "the check sees a write and skips local's own and the tests'"
    );
}

/// podbay's own text reaches stdout and stderr only through `print`,
/// which takes `Printable` text alone (sanitized when made). The
/// simulator's programs are its containers', printing their own output.
#[test]
fn the_command_lines_text_is_printed_only_through_the_printer() {
    let printing = ["println!", "eprintln!", "print!(", "eprint!("];
    let found = lines_outside("print.rs", |text| {
        let outside_tests = text.split("#[cfg(test)]").next().unwrap_or(text);
        code(outside_tests)
            .lines()
            .filter(|line| {
                printing.iter().any(|m| {
                    line.match_indices(m).any(|(at, _)| {
                        !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
                })
            })
            .map(|line| line.trim().to_string())
            .collect()
    });
    assert!(
        found.is_empty(),
        "print through crate::print (Printable text only):\n{}",
        found.join("\n")
    );
}

/// What the pure layers never do themselves: read or write files, start
/// threads, read a clock, the environment or the global random source, or
/// run async code. The edge gives them time (events carry it), seeds and
/// files; `parallel` lends a second core.
const IMPURE: [&str; 12] = [
    "std::fs",
    "std::thread",
    "thread::spawn",
    "thread::scope",
    "Instant::now",
    "SystemTime",
    "Timestamp::now",
    "Zoned::now",
    "std::env",
    "tokio::",
    "getrandom",
    "fastrand::",
];

/// The lines of `text` outside its tests that do what [`IMPURE`] names; a
/// seeded generator (`fastrand::Rng::with_seed`) is a pure function of its
/// seed.
fn impure_lines(text: &str) -> Vec<String> {
    let outside_tests = text.split("#[cfg(test)]").next().unwrap_or(text);
    code(outside_tests)
        .lines()
        .filter(|line| {
            let line = line.replace("fastrand::Rng::with_seed", "");
            IMPURE.iter().any(|call| line.contains(call))
        })
        .map(|line| line.trim().to_string())
        .collect()
}

#[test]
fn the_pure_layers_do_no_io_keep_no_clock_and_start_no_threads() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for layer in ["app", "model", "term"] {
        let mut files = Vec::new();
        sources(&src.join(layer), &mut files);
        for file in files {
            let name = file.strip_prefix(&src).expect("under src/").display();
            if name.to_string().ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("a source file");
            found.extend(
                impure_lines(&text)
                    .into_iter()
                    .map(|l| format!("{name}: {l}")),
            );
        }
    }
    assert!(found.is_empty(), "impure calls:\n{}", found.join("\n"));
    assert_eq!(
        impure_lines(
            "let a = fastrand::u64(..);\nlet b = fastrand::Rng::with_seed(1);\nlet c = std::time::Instant::now();\n#[cfg(test)]\nmod tests { fn t() { std::fs::write(p, b\"\"); } }"
        ),
        [
            "let a = fastrand::u64(..);",
            "let c = std::time::Instant::now();"
        ],
        "the check sees a global random source and a clock, not a seed or the tests"
    );
}

/// Small modules with one job: no source file over 1 000 lines, but for
/// test files (`*tests.rs`, the golden screens' `ui/snapshots`) and what a
/// generator wrote (`// @generated`).
#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut long = Vec::new();
    for file in &files {
        let name = file
            .strip_prefix(&src)
            .expect("under src/")
            .display()
            .to_string();
        let text = std::fs::read_to_string(file).expect("a source file");
        let exempt = name.ends_with("tests.rs")
            || name.starts_with("ui/snapshots/")
            || text.starts_with("// @generated");
        let lines = text.lines().count();
        if !exempt && lines > 1000 {
            long.push(format!("{name}: {lines} lines"));
        }
    }
    assert!(files.len() > 100, "the check reads the source");
    assert!(long.is_empty(), "split these:\n{}", long.join("\n"));
}

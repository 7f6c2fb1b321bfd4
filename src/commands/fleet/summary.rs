//! What became of each pod: the table on stderr, the `-o json` document,
//! and the exit status.

use serde_json::{Value, json};

use crate::commands::debug::{Failure, exit};
use crate::model::text::Printable;

/// Exit status when some pod's command did not exit 0, or could not run
/// (as xargs says "some invocation failed").
pub const SOME_FAILED: i32 = 123;
/// Exit status when ctrl-c stopped the run (as a shell reports SIGINT).
pub const INTERRUPTED: i32 = 130;
/// A pod's run that ended in podbay's own panic (as Rust exits on one).
pub const BUG: i32 = 101;

/// One pod's line in the summary.
#[derive(Debug)]
pub struct Outcome {
    /// `ns/pod` when the run spans namespaces, else `pod`.
    pub label: String,
    pub namespace: String,
    pub pod: String,
    pub result: Result,
}

#[derive(Debug)]
pub enum Result {
    Exited {
        container: String,
        code: i32,
    },
    /// `--no-attach`: it runs, and podbay left it to run.
    Started {
        container: String,
    },
    CouldNotRun(Failure),
    /// ctrl-c came before its turn.
    NotStarted,
    /// Still running when podbay was told to leave (its container runs on).
    Left,
}

impl Result {
    fn succeeded(&self) -> bool {
        matches!(
            self,
            Result::Exited { code: 0, .. } | Result::Started { .. }
        )
    }

    fn container(&self) -> Option<&str> {
        match self {
            Result::Exited { container, .. } | Result::Started { container } => Some(container),
            _ => None,
        }
    }

    /// A word or two for the kind of outcome (the JSON's `result`).
    fn kind(&self) -> &'static str {
        match self {
            Result::Exited { .. } => "exited",
            Result::Started { .. } => "running",
            Result::NotStarted => "not started",
            Result::Left => "left running",
            Result::CouldNotRun(f) => match f.code {
                exit::FORBIDDEN => "refused",
                exit::NOT_RUNNING => "not running",
                exit::IMAGE => "image pull failed",
                exit::START_FAILED => "could not start",
                exit::INVALID => "invalid",
                exit::NOT_FOUND => "not found",
                exit::UNSUPPORTED => "not supported",
                exit::TIMEOUT => "timed out",
                exit::UNREACHABLE => "unreachable",
                exit::CUT => "cut off",
                exit::OUT_OF_RANGE => "exit code out of range",
                exit::CONFIG => "bad kubeconfig",
                _ => "failed",
            },
        }
    }

    fn words(&self) -> String {
        match self {
            Result::Exited { code, .. } => format!("exited {code}"),
            Result::Started { .. } => "running (--no-attach)".into(),
            Result::CouldNotRun(f) => format!("{}: {}", self.kind(), f.sentence),
            Result::NotStarted => "not started: interrupted before its turn".into(),
            Result::Left => "left running: interrupted (its debug container runs on)".into(),
        }
    }
}

/// The exit status of the whole run.
pub fn status(outcomes: &[Outcome]) -> i32 {
    if outcomes
        .iter()
        .any(|o| matches!(o.result, Result::NotStarted | Result::Left))
    {
        INTERRUPTED
    } else if outcomes.iter().all(|o| o.result.succeeded()) {
        0
    } else {
        SOME_FAILED
    }
}

/// The table: a header line, then POD, CONTAINER, RESULT per pod.
pub fn table(outcomes: &[Outcome]) -> Printable {
    let succeeded = outcomes.iter().filter(|o| o.result.succeeded()).count();
    let done = if outcomes
        .iter()
        .any(|o| matches!(o.result, Result::Started { .. }))
    {
        "run"
    } else {
        "exited 0"
    };
    let mut text = format!("podbay: {succeeded} of {} pods {done}", outcomes.len());
    let failed = outcomes.len() - succeeded;
    if failed > 0 {
        text.push_str(&format!("; {failed} did not (below)"));
    }
    let mut lines = vec![Printable::from(text)];
    // Cells as they will show (a name from the server, escaped), so the
    // columns line up on what is printed.
    let rows: Vec<[String; 3]> = outcomes
        .iter()
        .map(|o| {
            let words = o.result.words();
            [
                o.label.as_str(),
                o.result.container().unwrap_or("-"),
                words.as_str(),
            ]
            .map(|cell| Printable::from(cell).into_string())
        })
        .collect();
    let header = ["POD", "CONTAINER", "RESULT"].map(String::from);
    let width = |i: usize| {
        std::iter::once(&header)
            .chain(&rows)
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (pod_width, container_width) = (width(0), width(1));
    for [pod, container, result] in std::iter::once(&header).chain(&rows) {
        lines.push(Printable::from(format!(
            "{pod:<pod_width$}   {container:<container_width$}   {result}"
        )));
    }
    Printable::lines(lines)
}

/// `-o json`: every pod's outcome, and the counts.
pub fn document(outcomes: &[Outcome]) -> Value {
    let pods: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let (exit_code, message) = match &o.result {
                Result::Exited { code, .. } => (Some(*code), None),
                Result::Started { .. } => (None, None),
                Result::CouldNotRun(f) => (None, Some(f.sentence.to_string())),
                Result::NotStarted | Result::Left => (None, None),
            };
            json!({
                "namespace": o.namespace,
                "pod": o.pod,
                "container": o.result.container(),
                "result": o.result.kind(),
                "exitCode": exit_code,
                "message": message,
            })
        })
        .collect();
    let succeeded = outcomes.iter().filter(|o| o.result.succeeded()).count();
    json!({
        "pods": pods,
        "total": outcomes.len(),
        "succeeded": succeeded,
        "failed": outcomes.len() - succeeded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(pod: &str, result: Result) -> Outcome {
        Outcome {
            label: pod.into(),
            namespace: "shop".into(),
            pod: pod.into(),
            result,
        }
    }

    fn refused() -> Result {
        Result::CouldNotRun(Failure {
            code: exit::INVALID,
            sentence: "Pod shop/cart-1 has no container \"web\" to target.".into(),
        })
    }

    #[test]
    fn only_every_pod_exiting_0_is_success() {
        let ok = |p: &str| {
            outcome(
                p,
                Result::Exited {
                    container: "debugger-a".into(),
                    code: 0,
                },
            )
        };
        assert_eq!(status(&[ok("a"), ok("b")]), 0);
        let three = Result::Exited {
            container: "debugger-b".into(),
            code: 3,
        };
        assert_eq!(status(&[ok("a"), outcome("b", three)]), SOME_FAILED);
        assert_eq!(status(&[ok("a"), outcome("b", refused())]), SOME_FAILED);
        assert_eq!(
            status(&[outcome("b", refused()), outcome("c", Result::NotStarted)]),
            INTERRUPTED
        );
    }

    #[test]
    fn the_table_names_each_pod_and_why() {
        let table = table(&[
            outcome(
                "storefront-1",
                Result::Exited {
                    container: "debugger-abcde".into(),
                    code: 0,
                },
            ),
            outcome("cart-1", refused()),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "podbay: 1 of 2 pods exited 0; 1 did not (below)");
        assert_eq!(lines[1], "POD            CONTAINER        RESULT");
        assert_eq!(lines[2], "storefront-1   debugger-abcde   exited 0");
        assert!(
            lines[3].starts_with("cart-1         -                invalid: Pod shop/cart-1"),
            "{}",
            lines[3]
        );
    }

    #[test]
    fn a_hostile_pod_name_is_shown_escaped_in_its_column() {
        let hostile = "web\x1b]52;c;cm0gLXJm\x07\u{202e}1";
        let table = table(&[outcome(hostile, refused()), outcome("cart-1", refused())]);
        assert!(
            !table.contains('\x1b') && !table.contains('\u{202e}'),
            "{table}"
        );
        let lines: Vec<&str> = table.lines().collect();
        let shown = "web\\e]52;c;cm0gLXJm\\x07\\u{202e}1";
        assert!(lines[2].starts_with(shown), "{}", lines[2]);
        let column = lines[1].find("CONTAINER").unwrap();
        assert!(
            lines[2][column..].starts_with('-') && lines[3][column..].starts_with('-'),
            "columns line up:\n{table}"
        );
    }

    #[test]
    fn the_document_has_every_pod_and_the_counts() {
        let doc = document(&[outcome("cart-1", refused())]);
        assert_eq!(doc["total"], 1);
        assert_eq!(doc["failed"], 1);
        assert_eq!(doc["pods"][0]["result"], "invalid");
        assert_eq!(doc["pods"][0]["exitCode"], Value::Null);
        assert!(
            doc["pods"][0]["message"]
                .as_str()
                .unwrap()
                .contains("no container")
        );
    }
}

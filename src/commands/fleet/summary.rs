//! What became of each pod: the table on stderr, the `-o json` document,
//! and the exit status.

use serde_json::{Value, json};

pub use crate::commands::clusters::Unreached;
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
    /// `ctx/ns/pod` when the run spans clusters, `ns/pod` when it spans
    /// namespaces, else `pod`.
    pub label: String,
    /// Its cluster's context, when the run spans clusters.
    pub context: Option<String>,
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
                INTERRUPTED => "interrupted",
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

/// An unreached cluster's line and JSON entry, worded as a pod's failure.
fn unreached_result(unreached: &Unreached) -> Result {
    Result::CouldNotRun(unreached.failure.clone())
}

/// The exit status of the whole run. When no cluster gave a pod and all
/// failed alike, their failure's (as one cluster's would be).
pub fn status(outcomes: &[Outcome], unreached: &[Unreached]) -> i32 {
    if let [first, rest @ ..] = unreached
        && outcomes.is_empty()
        && rest.iter().all(|u| u.failure.code == first.failure.code)
    {
        return first.failure.code;
    }
    let stopped = unreached.iter().any(|u| u.failure.code == INTERRUPTED);
    if stopped
        || outcomes
            .iter()
            .any(|o| matches!(o.result, Result::NotStarted | Result::Left))
    {
        INTERRUPTED
    } else if unreached.is_empty() && outcomes.iter().all(|o| o.result.succeeded()) {
        0
    } else {
        SOME_FAILED
    }
}

/// The table: a header line, then POD, CONTAINER, RESULT per pod, and a
/// line per cluster whose pods could not be found (`ctx/*`).
pub fn table(outcomes: &[Outcome], unreached: &[Unreached]) -> Printable {
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
    match unreached.len() {
        0 => {}
        1 => text.push_str("; 1 cluster gave no pods (below)"),
        n => text.push_str(&format!("; {n} clusters gave no pods (below)")),
    }
    let mut lines = vec![Printable::from(text)];
    // Cells as they will show (a name from the server, escaped), so the
    // columns line up on what is printed.
    let row = |label: &str, result: &Result| {
        let words = result.words();
        [label, result.container().unwrap_or("-"), words.as_str()]
            .map(|cell| Printable::from(cell).into_string())
    };
    let rows: Vec<[String; 3]> = outcomes
        .iter()
        .map(|o| row(&o.label, &o.result))
        .chain(
            unreached
                .iter()
                .map(|u| row(&format!("{}/*", u.context), &unreached_result(u))),
        )
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

/// `-o json`: every pod's outcome, and the counts; across clusters each
/// pod has its `context`, and `unreachedClusters` says which gave no pods.
pub fn document(outcomes: &[Outcome], unreached: &[Unreached]) -> Value {
    let pods: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let (exit_code, message) = match &o.result {
                Result::Exited { code, .. } => (Some(*code), None),
                Result::Started { .. } => (None, None),
                Result::CouldNotRun(f) => (None, Some(f.sentence.to_string())),
                Result::NotStarted | Result::Left => (None, None),
            };
            let mut pod = json!({
                "namespace": o.namespace,
                "pod": o.pod,
                "container": o.result.container(),
                "result": o.result.kind(),
                "exitCode": exit_code,
                "message": message,
            });
            if let Some(context) = &o.context {
                pod["context"] = json!(context);
            }
            pod
        })
        .collect();
    let succeeded = outcomes.iter().filter(|o| o.result.succeeded()).count();
    let mut document = json!({
        "pods": pods,
        "total": outcomes.len(),
        "succeeded": succeeded,
        "failed": outcomes.len() - succeeded,
    });
    if !unreached.is_empty() {
        document["unreachedClusters"] = unreached
            .iter()
            .map(|u| {
                json!({
                    "context": u.context,
                    "result": unreached_result(u).kind(),
                    "message": u.failure.sentence.to_string(),
                })
            })
            .collect();
    }
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(pod: &str, result: Result) -> Outcome {
        Outcome {
            label: pod.into(),
            context: None,
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
        assert_eq!(status(&[ok("a"), ok("b")], &[]), 0);
        let three = Result::Exited {
            container: "debugger-b".into(),
            code: 3,
        };
        assert_eq!(status(&[ok("a"), outcome("b", three)], &[]), SOME_FAILED);
        assert_eq!(
            status(&[ok("a"), outcome("b", refused())], &[]),
            SOME_FAILED
        );
        assert_eq!(
            status(
                &[outcome("b", refused()), outcome("c", Result::NotStarted)],
                &[]
            ),
            INTERRUPTED
        );
    }

    #[test]
    fn the_table_names_each_pod_and_why() {
        let table = table(
            &[
                outcome(
                    "storefront-1",
                    Result::Exited {
                        container: "debugger-abcde".into(),
                        code: 0,
                    },
                ),
                outcome("cart-1", refused()),
            ],
            &[],
        );
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
        let table = table(
            &[outcome(hostile, refused()), outcome("cart-1", refused())],
            &[],
        );
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
        let doc = document(&[outcome("cart-1", refused())], &[]);
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

    fn web_1_exited_0_on_sim_a() -> Outcome {
        Outcome {
            label: "sim-a/shop/web-1".into(),
            context: Some("sim-a".into()),
            namespace: "shop".into(),
            pod: "web-1".into(),
            result: Result::Exited {
                container: "debugger-a".into(),
                code: 0,
            },
        }
    }

    #[test]
    fn a_cluster_that_gave_no_pods_is_a_line_a_failure_and_in_the_document() {
        let ok = web_1_exited_0_on_sim_a();
        let down = Unreached {
            context: "sim-b".into(),
            failure: Failure {
                code: exit::UNREACHABLE,
                sentence: "Cannot reach the cluster at https://127.0.0.1:1.".into(),
            },
        };
        let outcomes = [ok];
        assert_eq!(status(&outcomes, &[]), 0);
        assert_eq!(status(&outcomes, std::slice::from_ref(&down)), SOME_FAILED);
        assert_eq!(
            status(&[], std::slice::from_ref(&down)),
            exit::UNREACHABLE,
            "every cluster unreachable: as one would be"
        );
        let refused = Unreached {
            context: "sim-c".into(),
            failure: Failure {
                code: exit::FORBIDDEN,
                sentence: "pods is forbidden.".into(),
            },
        };
        assert_eq!(status(&[], &[down.clone(), refused]), SOME_FAILED);

        let table = table(&outcomes, std::slice::from_ref(&down));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "podbay: 1 of 1 pods exited 0; 1 cluster gave no pods (below)"
        );
        assert!(
            lines[2].starts_with("sim-a/shop/web-1   debugger-a"),
            "{table}"
        );
        assert!(
            lines[3].starts_with("sim-b/*            -            unreachable: Cannot reach"),
            "{table}"
        );

        let doc = document(&outcomes, &[down]);
        assert_eq!(doc["pods"][0]["context"], "sim-a");
        assert_eq!(doc["total"], 1);
        assert_eq!(doc["unreachedClusters"][0]["context"], "sim-b");
        assert_eq!(doc["unreachedClusters"][0]["result"], "unreachable");
    }

    #[test]
    fn a_cluster_still_being_asked_at_ctrl_c_makes_the_run_interrupted() {
        let ok = web_1_exited_0_on_sim_a();
        let stopped = Unreached {
            context: "sim-b".into(),
            failure: Failure {
                code: INTERRUPTED,
                sentence: "Stopped (ctrl-c) before this cluster's pods were found.".into(),
            },
        };
        let outcomes = [ok];
        let unreached = std::slice::from_ref(&stopped);
        assert_eq!(status(&outcomes, unreached), INTERRUPTED);
        assert_eq!(status(&[], unreached), INTERRUPTED);
        let table = table(&outcomes, unreached);
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("sim-b/*") && l.contains("interrupted: Stopped (ctrl-c)")),
            "{table}"
        );
    }

    #[test]
    fn one_cluster_s_document_has_no_context_fields() {
        let doc = document(&[outcome("cart-1", refused())], &[]);
        assert!(doc["pods"][0].get("context").is_none(), "{doc}");
        assert!(doc.get("unreachedClusters").is_none(), "{doc}");
    }
}

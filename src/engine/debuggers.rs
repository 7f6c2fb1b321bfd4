//! Stopping a debug container. Kubernetes cannot remove or stop an
//! ephemeral container (kubernetes/kubernetes#124270); podbay ends the
//! container's own process from inside it, so the container turns
//! `Terminated` and its memory is freed while the pod and its other
//! containers run on unrestarted.
//!
//! The container's own process is told apart by its mount namespace: a
//! command run in the debug container (an exec) joins that namespace, the
//! target's processes (whose PID namespace the debugger shares) are in
//! their own. The oldest process of the debugger's mount namespace is its
//! own process; the exec's are younger. It gets SIGTERM, then SIGKILL. A
//! debugger that is the first process of a PID namespace of its own (no
//! target) takes no signal from inside it: a shell that reads input is
//! told `exit` instead, through an attach.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use super::outcome::{Failure, exit, fail};
use crate::cluster::deadline::{Deadline, Expired};
use crate::cluster::pipe::{self, PipeSpec};
use crate::model::debuggers::{self, Debugger};
use crate::model::detail::ContainerState;

/// How a debug container was stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// Its process was signalled (`signal`: `SIGTERM` or `SIGKILL`).
    Signalled { pid: u32, signal: &'static str },
    /// It was a shell: it was told to exit.
    Exited,
    /// It had ended already.
    AlreadyEnded,
}

impl Stopped {
    /// The one sentence for it, the CLI's and the TUI's: `at` is "NAME in
    /// pod NS/POD".
    pub fn sentence(&self, at: &str) -> String {
        match self {
            Stopped::Signalled { pid, signal } => {
                format!("stopped debug container {at}: its process {pid} ended with {signal}.")
            }
            Stopped::Exited => {
                format!("stopped debug container {at}: its shell was told to exit.")
            }
            Stopped::AlreadyEnded => format!("debug container {at} had ended already."),
        }
    }
}

/// How long a stop may take in all: reading the pod, running the stop in
/// the debugger (it gives SIGKILL after 2 s), and the pod saying so.
const STOP_WITHIN: Duration = Duration::from_secs(30);

/// What the script in the debugger reports (its exit code and stdout).
const OWN_PID_NAMESPACE: i32 = 3;
const NOT_FOUND: i32 = 4;

/// Finds the debugger's own process and ends it; prints `PID SIGNAL`.
const SCRIPT: &str = r#"me=$(readlink /proc/self/ns/mnt) || exit 4
main=; oldest=
for d in /proc/[0-9]*; do
  [ "$(readlink "$d/ns/mnt" 2>/dev/null)" = "$me" ] || continue
  t=$(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -d' ' -f20) || continue
  [ -n "$t" ] || continue
  if [ -z "$oldest" ] || [ "$t" -lt "$oldest" ]; then oldest=$t; main=${d#/proc/}; fi
done
[ -n "$main" ] || exit 4
[ "$main" = 1 ] && exit 3
[ "$main" = "$$" ] && exit 4
kill -TERM "$main" 2>/dev/null || exit 5
i=0
while [ -d "/proc/$main" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
if [ -d "/proc/$main" ]; then kill -KILL "$main"; echo "$main SIGKILL"; else echo "$main SIGTERM"; fi
"#;

/// Ends debug container `name` of `namespace/pod`, and waits until the
/// pod says it has terminated.
pub async fn stop(
    client: &kube::Client,
    namespace: &str,
    pod: &str,
    name: &str,
) -> Result<Stopped, Failure> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    // Every request of a stop, within one bound: a server that stalls
    // cannot hold the command (or a TUI action) for ever.
    let deadline = Deadline::none().within(Some(STOP_WITHIN));
    let current = deadline
        .bound(crate::cluster::objects::get(&pods, pod))
        .await
        .map_err(|why| unanswered(namespace, pod, name, why))?
        .map_err(|e| super::outcome::classify(&e))?;
    let Some(debugger) = debuggers::of_pod(&current)
        .into_iter()
        .find(|d| d.name == name)
    else {
        let names: Vec<String> = debuggers::of_pod(&current)
            .into_iter()
            .map(|d| d.name)
            .collect();
        let known = if names.is_empty() {
            "it has none".to_string()
        } else {
            format!("its debug containers are: {}", names.join(", "))
        };
        return Err(fail(
            exit::NOT_FOUND,
            format!("Pod {namespace}/{pod} has no debug container {name:?}; {known}."),
        ));
    };
    if !debugger.state.is_running() {
        return Ok(Stopped::AlreadyEnded);
    }
    let spec = PipeSpec {
        namespace: namespace.to_string(),
        pod: pod.to_string(),
        container: name.to_string(),
        command: vec!["sh".into(), "-c".into(), SCRIPT.into()],
        deadline,
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(4);
    let collect = tokio::spawn(async move {
        let mut out = Vec::new();
        while let Some(chunk) = rx.recv().await {
            out.extend_from_slice(&chunk);
        }
        String::from_utf8_lossy(&out).into_owned()
    });
    let end = pipe::exec(client, &spec, None, tx)
        .await
        .map_err(|e| super::outcome::classify(&e))?;
    let said = collect.await.unwrap_or_default();
    let stopped = match end.end.exit_code {
        Some(0) => {
            let mut words = said.split_whitespace();
            let pid = words.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let signal = match words.next() {
                Some("SIGKILL") => "SIGKILL",
                _ => "SIGTERM",
            };
            Stopped::Signalled { pid, signal }
        }
        Some(OWN_PID_NAMESPACE) if debugger.shell => {
            deadline
                .bound(tell_exit(&pods, pod, name))
                .await
                .map_err(|why| unanswered(namespace, pod, name, why))??;
            Stopped::Exited
        }
        Some(OWN_PID_NAMESPACE) => {
            return Err(cannot(
                &debugger,
                "it is the first process of a PID namespace of its own (it has no target), which takes no signal from inside it, and it reads no input",
                "it ends when its command ends, or with the pod",
            ));
        }
        Some(NOT_FOUND) => {
            return Err(cannot(
                &debugger,
                "its own process could not be told apart from the others it sees",
                "it ends when its command ends, or with the pod",
            ));
        }
        _ if end.not_found() => {
            return Err(cannot(
                &debugger,
                "its image has no shell to run the stop in",
                "it ends when its command ends, or with the pod; debug with an image that has sh, kill and sed",
            ));
        }
        _ => {
            let why = if end.stderr.trim().is_empty() {
                end.end.reason.to_string()
            } else {
                end.stderr.trim().to_string()
            };
            return Err(fail(
                exit::START_FAILED,
                format!("Could not stop debug container {name} in pod {namespace}/{pod}: {why}."),
            ));
        }
    };
    deadline
        .bound(wait_terminated(&pods, pod, name))
        .await
        .map_err(|why| {
            fail(
                exit::TIMEOUT,
                format!(
                    "Debug container {name}'s process was ended, but pod {namespace}/{pod} did not report it terminated ({why}); `podbay debuggers` shows when it does."
                ),
            )
        })?;
    Ok(stopped)
}

/// Types `exit` into the debugger's input, as a person at its shell would.
async fn tell_exit(pods: &Api<Pod>, pod: &str, name: &str) -> Result<(), Failure> {
    use tokio::io::AsyncWriteExt as _;
    let params = kube::api::AttachParams::default()
        .container(name)
        .stdin(true)
        .stdout(false)
        .stderr(false);
    let mut attached = pods
        .attach(pod, &params)
        .await
        .map_err(|e| super::outcome::classify(&e))?;
    if let Some(mut input) = attached.stdin() {
        let _ = input.write_all(b"exit\n").await;
        let _ = input.flush().await;
        // Give the line time to reach the shell before the stream closes.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    attached.abort();
    Ok(())
}

fn cannot(debugger: &Debugger, why: &str, instead: &str) -> Failure {
    fail(
        exit::UNSUPPORTED,
        format!(
            "Debug container {} in pod {}/{} cannot be stopped: {why}; {instead}.",
            debugger.name, debugger.namespace, debugger.pod
        ),
    )
}

/// Waits until the pod reports the container terminated.
async fn wait_terminated(pods: &Api<Pod>, pod: &str, name: &str) {
    loop {
        if let Ok(current) = crate::cluster::objects::get(pods, pod).await
            && debuggers::of_pod(&current)
                .iter()
                .any(|d| d.name == name && matches!(d.state, ContainerState::Terminated { .. }))
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The sentence for a stop the server did not answer in time.
fn unanswered(namespace: &str, pod: &str, name: &str, why: Expired) -> Failure {
    fail(
        exit::TIMEOUT,
        format!(
            "Could not stop debug container {name} in pod {namespace}/{pod}: the server did not answer ({why}); nothing may have changed, `podbay debuggers` shows."
        ),
    )
}

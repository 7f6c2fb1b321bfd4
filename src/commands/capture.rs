//! `podbay capture`: one pod's packets, or several pods' at once, into a
//! local pcap (pcapng for several) or stdout. Each pod gets a debug
//! container with the least profile that captures (or reuses a running
//! one of the same image), tcpdump is exec'd in it, and its stream is
//! written by the capture engine's one writer. ctrl-c, `--duration` or
//! `--count` ends it; a summary on stderr says what each pod gave.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use tokio::sync::watch;

use super::debug::{self as debug_cmd, Failure, Voice, exit, fail};
use super::fleet::PodRef;
use super::prefix::Prefix;
use crate::cli::{CaptureArgs, DebugTarget};
use crate::engine::capture::{self as engine, Ended, Where};
use crate::model::capture::Options;
use crate::model::text::Printable;

/// How long the debug containers podbay added are watched ending.
const LEASE_END_WAIT: Duration = Duration::from_secs(5);

pub async fn run(args: CaptureArgs) -> Result<i32, Failure> {
    let mut output = Output::chosen(&args)?;
    let connection = super::connect(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
    let namespace = args
        .namespace
        .clone()
        .unwrap_or(connection.namespace.clone());
    let client = connection.client.clone();
    if let Some(DebugTarget::Node(node)) =
        args.pods.iter().find(|t| matches!(t, DebugTarget::Node(_)))
    {
        return Err(fail(
            exit::INVALID,
            format!("node/{node} is not a pod: capture the pods on it (-l, or their names)"),
        ));
    }
    let pods = super::fleet::resolve(
        &client,
        &args.pods,
        args.selector.as_deref(),
        args.all_namespaces,
        &namespace,
    )
    .await?;
    let labels = labels(&pods);
    let mut file = output.open()?;

    let prepared = tokio::select! {
        prepared = prepare_all(&client, &args, &pods, &labels) => prepared,
        () = crate::tty::termination() => {
            output.discard_if_empty();
            let signal = crate::tty::stopped_by().unwrap_or(nix::libc::SIGINT);
            return Err(fail(128 + signal, "Interrupted before the capture started; a debug container podbay added ends by itself within a minute."));
        }
    };
    let mut failures: Vec<(usize, Failure)> = Vec::new();
    let mut ready = Vec::new();
    for (index, result) in prepared.into_iter().enumerate() {
        match result {
            Ok(place) => ready.push((index, place)),
            Err(failure) => failures.push((index, failure)),
        }
    }
    if ready.is_empty() {
        output.discard_if_empty();
        let (_, first) = failures.remove(0);
        if pods.len() == 1 {
            return Err(first);
        }
        for (index, failure) in &failures {
            say_about(&labels[*index], &failure.sentence);
        }
        return Err(first);
    }
    for (index, failure) in &failures {
        say_about(
            &labels[*index],
            &format!("not captured: {}", failure.sentence),
        );
    }

    let options = Options {
        interface: args.interface.clone(),
        filter: args.filter.clone(),
        count: args.count,
    };
    let names: Vec<String> = ready.iter().map(|(i, _)| labels[*i].clone()).collect();
    let tallies = engine::tallies(ready.len());
    let (stop_tx, stop_rx) = watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    let (chunks_tx, chunks_rx) = engine::channel();
    let (listening_tx, mut listening) = tokio::sync::mpsc::unbounded_channel();
    let writer = {
        let tallies = tallies.clone();
        let stop = stop_tx.clone();
        let names = names.clone();
        let runtime = tokio::runtime::Handle::current();
        let limit = args.count;
        tokio::task::spawn_blocking(move || {
            let events = |event| match event {
                engine::Event::Listening(stream) | engine::Event::Silent(stream) => {
                    let _ = listening_tx.send(stream);
                }
                engine::Event::LimitReached => {
                    stop.send_replace(true);
                }
            };
            engine::write(
                &mut *file, &names, chunks_rx, &tallies, limit, &events, &runtime,
            )
        })
    };
    let runs = ready.iter().enumerate().map(|(stream, (_, place))| {
        let (client, options, chunks) = (&client, &options, chunks_tx.clone());
        let mut stop = stop_rx.clone();
        async move {
            let stopped = async move {
                let _ = stop.wait_for(|stopped| *stopped).await;
            };
            engine::run(client, &place.at, options, stream, chunks, stopped).await
        }
    });
    let runs = futures::future::join_all(runs);
    drop(chunks_tx);
    tokio::pin!(runs);
    // Said once every pod's tcpdump listens (its stream's header is
    // here): what is sent from then on is captured. --duration counts
    // from then.
    let mut duration = Box::pin(tokio::time::sleep(Duration::MAX / 4));
    let mut waiting_for = names.len();
    let mut terminated = Box::pin(crate::tty::termination());
    let ended = loop {
        tokio::select! {
            ended = &mut runs => break ended,
            Some(_) = listening.recv(), if waiting_for > 0 => {
                waiting_for -= 1;
                if waiting_for == 0 {
                    announce(&names, &output, args.duration);
                    if let Some(d) = args.duration {
                        duration.as_mut().reset(tokio::time::Instant::now() + d);
                    }
                }
            }
            () = &mut terminated => break finish(&stop_tx, &mut runs).await?,
            () = &mut duration => break finish(&stop_tx, &mut runs).await?,
        }
    };
    let written = writer
        .await
        .map_err(|e| {
            fail(
                exit::CANT_CREATE,
                format!("The capture's writer failed: {e}."),
            )
        })?
        .map_err(|e| {
            fail(
                exit::CANT_CREATE,
                format!("Cannot write {}: {e}.", output.describe()),
            )
        })?;

    let mut captured = 0;
    for (stream, ((index, place), ended)) in ready.iter().zip(ended).enumerate() {
        let label = &labels[*index];
        let tally = &tallies[stream];
        let (packets, bytes) = (
            tally.packets.load(Ordering::Relaxed),
            tally.bytes.load(Ordering::Relaxed),
        );
        let corrupt = written.corrupt.iter().find(|(s, _)| *s == stream);
        match (ended, corrupt) {
            (_, Some((_, why))) => say_about(
                label,
                &format!(
                    "not captured: its stream is not a pcap stream ({why}); what came before is in the file"
                ),
            ),
            (Ok(ended), None) if ended.captured() || packets > 0 => {
                captured += 1;
                say_about(label, &summary(packets, bytes, &ended));
            }
            (Ok(ended), None) => say_about(label, &format!("not captured: {}", ended.failure())),
            (Err(e), None) => say_about(
                label,
                &format!("not captured: {}", debug_cmd::classify(&e).sentence),
            ),
        }
        if place.added {
            lease_ended(&client, place).await;
        }
    }
    if captured == 0 {
        output.discard_if_empty();
    }
    Ok(
        match (captured, failures.is_empty() && captured == ready.len()) {
            (_, true) => 0,
            (0, false) if pods.len() == 1 => exit::STREAM_FAILED,
            _ => 123,
        },
    )
}

fn announce(names: &[String], output: &Output, duration: Option<Duration>) {
    crate::print::say(&Printable::from(format!(
        "capturing {} into {}{} (ctrl-c stops)",
        match names {
            [one] => one.clone(),
            many => format!("{} pods", many.len()),
        },
        output.describe(),
        duration
            .map(|d| format!(" for {}", debug_cmd::humantime(d)))
            .unwrap_or_default(),
    )));
}

/// Stops every pod's capture and waits for them to end; a second signal
/// gives up waiting.
async fn finish<F: std::future::Future + Unpin>(
    stop: &watch::Sender<bool>,
    runs: &mut F,
) -> Result<F::Output, Failure> {
    stop.send_replace(true);
    tokio::select! {
        ended = runs => Ok(ended),
        () = crate::tty::next_termination() => Err(fail(
            128 + nix::libc::SIGINT,
            "Stopped again before every pod's tcpdump had ended; they end as their connections close.",
        )),
    }
}

/// `N packets, B bytes; tcpdump: C captured, D dropped by the kernel`.
fn summary(packets: u64, bytes: u64, ended: &Ended) -> String {
    let mut line = format!(
        "{packets} packet{} ({}) written",
        if packets == 1 { "" } else { "s" },
        crate::model::transfer::size(bytes)
    );
    if let Some(captured) = ended.counts.captured {
        line.push_str(&format!("; tcpdump captured {captured}"));
    }
    if let Some(dropped) = ended.counts.dropped {
        line.push_str(&format!(", {dropped} dropped by the kernel"));
    }
    line
}

fn say_about(label: &str, text: &str) {
    crate::print::say(&Printable::from(format!("{label}: {text}")));
}

/// Each pod as the file names it: `namespace/pod`.
fn labels(pods: &[PodRef]) -> Vec<String> {
    pods.iter()
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .collect()
}

/// A pod ready to capture: where tcpdump runs, and whether podbay added
/// that debug container (it then waits for it to end).
struct Place {
    at: Where,
    added: bool,
}

/// Every pod's debug container, all at once: a capture starts together.
async fn prepare_all(
    client: &kube::Client,
    args: &CaptureArgs,
    pods: &[PodRef],
    labels: &[String],
) -> Vec<Result<Place, Failure>> {
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let several = pods.len() > 1;
    let each = pods.iter().enumerate().map(|(index, pod)| {
        let voice = match several {
            true => Voice::Prefixed(Prefix::new(&Printable::from(&labels[index]), index, width)),
            false => Voice::Stderr,
        };
        prepare(client, args, pod, voice)
    });
    futures::future::join_all(each).await
}

/// One pod, through the capture engine: its progress said after its name.
async fn prepare(
    client: &kube::Client,
    args: &CaptureArgs,
    pod: &PodRef,
    voice: Voice,
) -> Result<Place, Failure> {
    let say = |line: String| voice.say(line);
    let at = engine::prepare(
        client,
        &pod.namespace,
        &pod.name,
        &args.image,
        args.timeout,
        &say,
    )
    .await?;
    Ok(Place {
        added: at.lease,
        at,
    })
}

/// Says whether the debug container podbay added has ended, as it does a
/// second after its capture.
async fn lease_ended(client: &kube::Client, place: &Place) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &place.at.namespace);
    let waited = tokio::time::Instant::now() + LEASE_END_WAIT;
    let name = &place.at.container;
    loop {
        let state = pods.get(&place.at.pod).await.ok().and_then(|pod| {
            pod.status?
                .ephemeral_container_statuses?
                .into_iter()
                .find(|s| &s.name == name)?
                .state
        });
        if state.as_ref().is_some_and(|s| s.terminated.is_some()) {
            say_about(
                &format!("{}/{}", place.at.namespace, place.at.pod),
                &format!("debug container {name} has ended"),
            );
            return;
        }
        if tokio::time::Instant::now() >= waited {
            say_about(
                &format!("{}/{}", place.at.namespace, place.at.pod),
                &format!(
                    "debug container {name} has not ended yet; it ends by itself once no tcpdump runs in it (podbay debuggers shows it)"
                ),
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Where the capture goes.
enum Output {
    Stdout,
    File { path: PathBuf, created: bool },
}

impl Output {
    fn chosen(args: &CaptureArgs) -> Result<Output, Failure> {
        let terminal = std::io::stdout().is_terminal();
        match args.write.as_deref() {
            Some(path) if path != Path::new("-") => Ok(Output::File {
                path: path.to_path_buf(),
                created: false,
            }),
            _ if terminal => Err(fail(
                exit::USAGE,
                "Standard output is a terminal, and a capture is binary: give -w FILE, or pipe it (| tcpdump -r -).",
            )),
            _ => Ok(Output::Stdout),
        }
    }

    /// Opened through the one writer of local files: never over a file
    /// already there.
    fn open(&mut self) -> Result<Box<dyn std::io::Write + Send>, Failure> {
        match self {
            Output::Stdout => Ok(Box::new(std::io::stdout())),
            Output::File { path, created } => {
                let kind = crate::local::Place::of(path).ok();
                let file = crate::local::create_stream_file(path).map_err(|e| {
                    fail(
                        exit::CANT_CREATE,
                        format!("Cannot write the capture to {}: {e}.", path.display()),
                    )
                })?;
                *created = kind == Some(crate::local::Place::Absent);
                Ok(Box::new(file))
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Output::Stdout => "standard output".into(),
            Output::File { path, .. } => path.display().to_string(),
        }
    }

    /// A file podbay created that got nothing is removed with the
    /// capture that failed: no empty pcap left to puzzle over.
    fn discard_if_empty(&self) {
        if let Output::File {
            path,
            created: true,
        } = self
            && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0)
        {
            let _ = std::fs::remove_file(path);
        }
    }
}

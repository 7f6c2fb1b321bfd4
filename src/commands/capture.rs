//! `podbay capture`: one pod's packets, or several pods' at once, into a
//! local pcap (pcapng for several) or stdout. Each pod gets a debug
//! container with the least profile that captures (or reuses a running
//! one of the same image), tcpdump is exec'd in it, and its stream is
//! written by the capture engine's one writer. ctrl-c, `--duration` or
//! `--count` ends it; a summary on stderr says what each pod gave.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;

use super::debug::{self as debug_cmd, Failure, Voice, exit, fail};
use super::prefix::Prefix;
use crate::cli::{CaptureArgs, DebugTarget};
use crate::engine::capture as engine;
use crate::model::capture::Options;
use crate::model::text::Printable;

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
    let labels: Vec<String> = pods
        .iter()
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .collect();
    let file = output.open()?;
    let request = engine::Request {
        pods: pods
            .iter()
            .map(|p| (p.namespace.clone(), p.name.clone()))
            .collect(),
        image: args.image.clone(),
        timeout: args.timeout,
        options: Options {
            interface: args.interface.clone(),
            filter: args.filter.clone(),
            count: args.count,
        },
        duration: args.duration,
    };
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let voices: Vec<Voice> = match labels.len() {
        1 => vec![Voice::Stderr],
        _ => labels
            .iter()
            .enumerate()
            .map(|(i, l)| Voice::Prefixed(Prefix::new(&Printable::from(l), i, width)))
            .collect(),
    };
    let report = |report: engine::Report| match report {
        engine::Report::Said(pod, line) => voices[pod].say(line),
        engine::Report::Capturing => announce(&labels, &output, args.duration),
    };
    let tallies = engine::tallies(pods.len());
    let (stop, stopped) = watch::channel(false);
    let capture = engine::capture(&client, &request, file, tallies, stopped, &report);
    tokio::pin!(capture);
    let ends = tokio::select! {
        ends = &mut capture => ends,
        () = crate::tty::termination() => {
            stop.send_replace(true);
            tokio::select! {
                ends = &mut capture => ends,
                () = crate::tty::next_termination() => Err(engine::StoppedEarly),
            }
        }
    };
    let Ok(ends) = ends else {
        output.discard_if_empty();
        let signal = crate::tty::stopped_by().unwrap_or(nix::libc::SIGINT);
        return Err(fail(
            128 + signal,
            "Stopped before every pod's capture had ended; each tcpdump ends with its connection, and a debug container podbay added ends by itself within a minute.",
        ));
    };
    let mut captured = 0;
    let mut first_failure = None;
    for (label, end) in labels.iter().zip(ends) {
        let lines = end.lines();
        match end {
            engine::PodEnd::Captured { .. } => captured += 1,
            // One pod: its failure is the command's one sentence.
            engine::PodEnd::NotCaptured(failure) if labels.len() == 1 => {
                first_failure.get_or_insert(failure);
                continue;
            }
            engine::PodEnd::NotCaptured(failure) => {
                first_failure.get_or_insert(failure);
            }
        }
        for line in lines {
            say_about(label, &line);
        }
    }
    if captured == 0 {
        output.discard_if_empty();
    }
    match (captured, first_failure) {
        (_, None) => Ok(0),
        (0, Some(failure)) => Err(failure),
        (_, Some(_)) => Ok(123),
    }
}

fn announce(labels: &[String], output: &Output, duration: Option<Duration>) {
    crate::print::say(&Printable::from(format!(
        "capturing {} into {}{} (ctrl-c stops)",
        match labels {
            [one] => one.clone(),
            many => format!("{} pods", many.len()),
        },
        output.describe(),
        duration
            .map(|d| format!(" for {}", debug_cmd::humantime(d)))
            .unwrap_or_default(),
    )));
}

fn say_about(label: &str, text: &str) {
    crate::print::say(&Printable::from(format!("{label}: {text}")));
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
        {
            crate::local::remove_if_empty(path);
        }
    }
}

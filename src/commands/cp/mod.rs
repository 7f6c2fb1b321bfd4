//! `podbay cp`: files out of a container and into it, as `kubectl cp`
//! (tar over exec), and where the container has no tar (every distroless
//! image), through a debug container that targets it and reaches its
//! files under `/proc/1/root`. What comes back is unpacked by
//! [`unpack`], which trusts none of it.

mod io;
pub(crate) mod progress;
pub mod unpack;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::mpsc;

use super::debug::{self as debug_cmd, Defaults, Failure, Job, Sinks, Voice, exit, fail};
use crate::cli::{CpArgs, DebugArgs, DebugTarget};
use crate::cluster::deadline::Deadline;
use crate::cluster::pipe::{self, PipeEnd, PipeSpec};
use crate::local::{Place, Stage};
use crate::model::text::sanitize;
use crate::model::transfer::{
    Location, PodPath, Route, Split, lower_case_pod, mount_holding, parse_du, split,
};
use io::{CHUNKS_IN_FLIGHT, ChannelReader, ChannelWriter};
use progress::{Meter, Shown};
use unpack::{Budget, Refusal, unpack};

/// Exit codes of `podbay cp` beyond `podbay debug`'s (docs/cp.md lists all).
pub mod codes {
    /// tar in the container failed (no such file, permission denied).
    pub const TAR_FAILED: i32 = 1;
    pub const USAGE: i32 = 2;
    /// EX_CANTCREAT: the local destination cannot be written.
    pub const CANNOT_WRITE: i32 = 73;
    /// EX_PROTOCOL: the container sent a stream podbay will not unpack.
    pub const REFUSED_STREAM: i32 = 76;
}

/// With no payload either way for this long, a copy is given up.
const STALL: Duration = Duration::from_secs(60);

/// Which way the bytes go.
enum Plan {
    /// Out of the pod into a local path, or onto stdout as tar.
    Out { from: Split, to: Option<PathBuf> },
    /// Into the pod from a local path (named `name` there), or from a tar
    /// stream on stdin (unpacked into `dir`).
    In {
        from: Option<PathBuf>,
        dir: String,
        name: String,
    },
}

impl Plan {
    /// The path on the pod's side, as the user gave it (without `./`).
    fn pod_path(&self) -> String {
        match self {
            Plan::Out { from, .. } => joined(from),
            Plan::In { dir, name, .. } => joined(&Split {
                dir: dir.clone(),
                name: name.clone(),
            }),
        }
    }
}

/// The container a copy reads or writes, and how tar reaches it.
pub(crate) struct Reach {
    pub namespace: String,
    pub pod: String,
    /// Where tar runs: the container itself or a debug container.
    pub runs_in: String,
    pub route: Route,
}

/// The copy, or a signal (ctrl-c, SIGTERM, SIGHUP, SIGQUIT): then what
/// was staged is removed and podbay exits 128 + the signal's number. Past
/// `--max-time`, the same with exit 124.
pub async fn run(args: CpArgs, defaults: &Defaults) -> Result<(), Failure> {
    let upload = matches!(Location::parse(&args.destination), Location::Pod(_));
    let stopped = crate::tty::termination();
    let deadline = Deadline::none().within(args.max_time);
    let kept = if upload {
        "part of the copy may be in the container already"
    } else {
        "nothing was kept"
    };
    tokio::select! {
        done = deadline.bound(copy(args, defaults)) => done.unwrap_or_else(|why| {
            crate::local::remove_stages();
            Err(fail(exit::TIMEOUT, format!("The copy was stopped: {why} (--max-time); {kept}.")))
        }),
        () = stopped => {
            crate::local::remove_stages();
            let signal = crate::tty::stopped_by().unwrap_or(nix::libc::SIGINT);
            Err(fail(
                128 + signal,
                if upload {
                    "Interrupted; part of the copy may be in the container already."
                } else {
                    "Interrupted; nothing was kept."
                },
            ))
        }
    }
}

async fn copy(args: CpArgs, defaults: &Defaults) -> Result<(), Failure> {
    let (at, plan) = plan(&args)?;
    let connection = debug_cmd::connect(&DebugArgs::for_copy(&args, "", "", None)).await?;
    let namespace = at
        .namespace
        .clone()
        .or(args.namespace.clone())
        .unwrap_or(connection.namespace.clone());
    let client = connection.client.clone();
    let mut debug_args = DebugArgs::for_copy(&args, &at.pod, &namespace, None);
    let voice = Voice::Stderr;
    let deadline = tokio::time::Instant::now() + args.timeout;
    let probe = job(&debug_args, &at.pod, &namespace, None);
    let pod = debug_cmd::get_pod(&client, &probe, &connection.server, deadline).await?;
    let container = container_of(&pod, args.container.as_deref(), &voice)?;
    let detail = crate::model::PodDetail::from_pod(&pod);
    if let Some(info) = detail
        .container(&container)
        .filter(|c| !c.state.is_running())
    {
        // Not running: only the volumes it mounts are left to reach.
        let upload = matches!(plan, Plan::In { .. });
        let mounts = volumes_for(&detail, info, &plan.pod_path(), upload)?;
        let names: Vec<&str> = mounts.iter().map(|(volume, _)| volume.as_str()).collect();
        voice.say(&sanitize(&format!(
            "container {container} is not running ({}); {} is on its volume {}: copying through a debug container that mounts it",
            info.state.summary(),
            plan.pod_path(),
            names.join(", ")
        )));
        debug_args.mounts = mounts;
        debug_args.user_of = Some(container.clone());
        let reach = debugger(
            &client,
            &debug_args,
            &pod,
            defaults,
            deadline,
            Route::Direct,
        )
        .await?;
        let done = carry(&client, &reach, &plan, Bounds::of(&args)).await?;
        voice.say(&done.ok_or_else(|| no_tar(&reach))?);
        return Ok(());
    }
    let direct = Reach {
        namespace: namespace.clone(),
        pod: at.pod.clone(),
        runs_in: container.clone(),
        route: Route::Direct,
    };
    let done = match carry(&client, &direct, &plan, Bounds::of(&args)).await? {
        Some(done) => done,
        None => {
            voice.say(format!(
                "container {container} has no tar (a distroless image?): copying through a debug container that targets it"
            ));
            debug_args.target = Some(container.clone());
            let through = debugger(
                &client,
                &debug_args,
                &pod,
                defaults,
                deadline,
                Route::Through,
            )
            .await?;
            carry(&client, &through, &plan, Bounds::of(&args)).await?.ok_or_else(|| {
                fail(
                    exit::UNSUPPORTED,
                    format!(
                        "Neither container {container} nor debug container {} has tar; pass --image with one that does (busybox:1.36).",
                        through.runs_in
                    ),
                )
            })?
        }
    };
    voice.say(&done);
    Ok(())
}

/// The copy `plan` by `reach`; `Ok(None)`: there is no tar there.
async fn carry(
    client: &kube::Client,
    reach: &Reach,
    plan: &Plan,
    bounds: Bounds,
) -> Result<Option<String>, Failure> {
    let meter = Meter::new();
    match plan {
        Plan::Out { from, to } => {
            copy_out(client, reach, from, to.as_deref(), bounds, &meter).await
        }
        Plan::In { from, dir, name } => {
            copy_in(client, reach, from.as_deref(), dir, name, bounds, &meter).await
        }
    }
}

/// What a copy may take: bytes out of the pod (`None`: the default
/// budget, see [`Budget::for_item`]) and the silence of its stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    pub bytes: Option<u64>,
    pub stall: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            bytes: None,
            stall: STALL,
        }
    }
}

impl Bounds {
    fn of(args: &CpArgs) -> Bounds {
        Bounds {
            bytes: args.max_size,
            stall: args.stall,
        }
    }
}

fn no_tar(reach: &Reach) -> Failure {
    fail(
        exit::UNSUPPORTED,
        format!(
            "Debug container {} has no tar; pass --image with one that does (busybox:1.36).",
            reach.runs_in
        ),
    )
}

/// The volumes (name, path) to mount to reach `path` of a container that
/// is not running: the one that holds it, and those mounted below it (a
/// directory copy is then whole). Its own files are gone until it runs
/// again, but the pod's volumes it mounts outlive it (a core file, a heap
/// dump on an emptyDir), and a debug container that mounts them at the
/// same paths reaches them. In a pod that has ended, nothing can start.
fn volumes_for(
    detail: &crate::model::PodDetail,
    info: &crate::model::ContainerInfo,
    path: &str,
    upload: bool,
) -> Result<Vec<(String, String)>, Failure> {
    let ended = matches!(detail.phase.as_str(), "Succeeded" | "Failed");
    let spec = detail.manifest.spec.as_ref();
    let mounts: Vec<&k8s_openapi::api::core::v1::VolumeMount> = spec
        .into_iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .chain(s.init_containers.iter().flatten())
        })
        .filter(|c| c.name == info.name)
        .flat_map(|c| c.volume_mounts.iter().flatten())
        .collect();
    let stopped = |why: String| {
        fail(
            exit::NOT_RUNNING,
            format!(
                "Container {} of pod {} is not running ({}); {why}.",
                info.name,
                detail.key.name,
                sanitize(&info.state.summary())
            ),
        )
    };
    if ended {
        return Err(stopped(format!(
            "pod {} has ended, so nothing can be started in it to reach its files",
            detail.key.name
        )));
    }
    let Some((volume, at)) = mount_holding(&info.mounts, path) else {
        let volumes: Vec<String> = info
            .mounts
            .iter()
            .map(|(volume, at)| sanitize(&format!("{at} (volume {volume})")).into_owned())
            .collect();
        return Err(stopped(if volumes.is_empty() {
            "files can be copied only while it runs".to_string()
        } else {
            format!(
                "its own files are gone until it runs again, but its volumes can be read: {}",
                volumes.join(", ")
            )
        }));
    };
    let below = |m: &&&k8s_openapi::api::core::v1::VolumeMount| {
        (m.name == *volume && m.mount_path == *at)
            || mount_holding(&[(String::new(), path.to_string())], &m.mount_path).is_some()
    };
    let mut wanted = Vec::new();
    for m in mounts.iter().filter(below) {
        let sub_path = m.sub_path.as_deref().or(m.sub_path_expr.as_deref());
        if sub_path.is_some_and(|p| !p.is_empty()) {
            return Err(fail(
                exit::UNSUPPORTED,
                sanitize(&format!(
                    "Container {} mounts only part of volume {} at {} (subPath), and a debug container cannot (Kubernetes forbids subPath there); copy it while {} runs.",
                    info.name, m.name, m.mount_path, info.name
                ))
                .into_owned(),
            ));
        }
        if upload && m.read_only == Some(true) {
            return Err(fail(
                exit::UNSUPPORTED,
                sanitize(&format!(
                    "Container {} mounts volume {} read-only at {}; podbay will not write there behind its back.",
                    info.name, m.name, m.mount_path
                ))
                .into_owned(),
            ));
        }
        wanted.push((m.name.clone(), m.mount_path.clone()));
    }
    Ok(wanted)
}

/// Reads the two arguments: exactly one side in a pod.
fn plan(args: &CpArgs) -> Result<(PodPath, Plan), Failure> {
    let usage = |s: &str| fail(codes::USAGE, s.to_string());
    match (
        Location::parse(&args.source),
        Location::parse(&args.destination),
    ) {
        (Location::Pod(at), to @ (Location::Local(_) | Location::Stdio)) => {
            let from = split(&at.path).map_err(|s| usage(&s))?;
            let to = match to {
                Location::Local(path) => Some(path),
                _ if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
                    return Err(usage(
                        "The destination - writes a tar stream to stdout, which is a terminal; pipe it (| tar xf -) or give a path.",
                    ));
                }
                _ => None,
            };
            Ok((at, Plan::Out { from, to }))
        }
        (from @ (Location::Local(_) | Location::Stdio), Location::Pod(at)) => {
            let from = match from {
                Location::Local(path) => Some(path),
                _ => None,
            };
            let into_dir = at.path.ends_with('/') || from.is_none();
            let (dir, name) = if into_dir {
                let name = from
                    .as_deref()
                    .map(local_name)
                    .transpose()
                    .map_err(|s| usage(&s))?
                    .unwrap_or_default();
                (at.path.trim_end_matches('/').to_string(), name)
            } else {
                let s = split(&at.path).map_err(|s| usage(&s))?;
                (s.dir, s.name)
            };
            let dir = if into_dir && dir.is_empty() && at.path.starts_with('/') {
                "/".to_string()
            } else {
                dir
            };
            Ok((at, Plan::In { from, dir, name }))
        }
        (Location::Pod(_), Location::Pod(_)) => Err(usage(
            "Both SOURCE and DESTINATION are in pods; copy through this machine: podbay cp POD:PATH ./x, then podbay cp ./x OTHER:PATH.",
        )),
        _ => Err(usage(&match [&args.source, &args.destination]
                .into_iter()
                .find_map(|arg| Some((arg, lower_case_pod(arg)?)))
            {
                Some((given, meant)) => format!(
                    "No pod can be named as in {given}: pod names are lower case. Did you mean {meant}?"
                ),
                None => "Neither SOURCE nor DESTINATION is in a pod; write the pod's side as [NAMESPACE/]POD:PATH.".to_string(),
            })),
    }
}

/// The name a local path is copied as: its own (a link keeps its name,
/// and is copied as a link, as kubectl does); `.` and `..` are their
/// directory's.
fn local_name(path: &Path) -> Result<String, String> {
    let named = path
        .file_name()
        .filter(|n| *n != "." && *n != "..")
        .map(|n| n.to_string_lossy().into_owned());
    match named {
        Some(name) => Ok(name),
        None => std::fs::canonicalize(path)
            .ok()
            .and_then(|real| real.file_name().map(|n| n.to_string_lossy().into_owned()))
            .ok_or_else(|| format!("{} names nothing to copy", path.display())),
    }
}

fn job<'a>(args: &'a DebugArgs, pod: &str, namespace: &str, target: Option<String>) -> Job<'a> {
    Job {
        args,
        pod: pod.to_string(),
        namespace: namespace.to_string(),
        target,
        voice: Voice::Stderr,
        input: None,
        policies: None,
    }
}

/// `-c`, else the pod's default container (kubectl's annotation), else
/// its first, said when there was a choice; one it has, or one sentence.
fn container_of(pod: &Pod, asked: Option<&str>, voice: &Voice) -> Result<String, Failure> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let detail = crate::model::PodDetail::from_pod(pod);
    let names: Vec<&str> = detail.containers.iter().map(|c| c.name.as_str()).collect();
    let chosen = match asked {
        Some(asked) => asked.to_string(),
        None => {
            let spec = pod.spec.as_ref();
            let regular: Vec<String> = spec
                .map(|s| s.containers.iter().map(|c| c.name.clone()).collect())
                .unwrap_or_default();
            let annotated = pod
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("kubectl.kubernetes.io/default-container"))
                .filter(|c| regular.contains(c));
            let chosen = annotated
                .or(regular.first())
                .cloned()
                .ok_or_else(|| fail(exit::INVALID, format!("Pod {name} has no containers.")))?;
            if annotated.is_none() && regular.len() > 1 {
                voice.say(format!(
                    "container {chosen} chosen, out of: {} (pass -c to choose)",
                    regular.join(", ")
                ));
            }
            chosen
        }
    };
    if detail.container(&chosen).is_none() {
        return Err(fail(
            exit::INVALID,
            format!(
                "Pod {name} has no container {chosen:?}; its containers are: {}.",
                names.join(", ")
            ),
        ));
    }
    Ok(chosen)
}

/// A running debug container, reused or added: one that targets
/// `args.target` (`Route::Through`), or mounts `args.mounts`
/// (`Route::Direct`: the files are at the same paths in it).
async fn debugger(
    client: &kube::Client,
    args: &DebugArgs,
    pod: &Pod,
    defaults: &Defaults,
    deadline: tokio::time::Instant,
    route: Route,
) -> Result<Reach, Failure> {
    let namespace = args.namespace.clone().unwrap_or_default();
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let shares_processes = pod
        .spec
        .as_ref()
        .and_then(|s| s.share_process_namespace)
        .unwrap_or(false);
    if route == Route::Through && shares_processes {
        return Err(fail(
            exit::UNSUPPORTED,
            format!(
                "Container {} has no tar, and pod {pod_name} shares one process namespace, where its files are not at /proc/1/root of a debug container; copy from a container that has tar.",
                args.target.as_deref().unwrap_or_default()
            ),
        ));
    }
    let job = job(args, &pod_name, &namespace, args.target.clone());
    let image = debug_cmd::chosen_image(args, defaults, &job.voice);
    let (mut out, mut err) = (std::io::sink(), std::io::sink());
    let sinks = Sinks {
        out: &mut out,
        err: &mut err,
    };
    let finished = debug_cmd::run_job(client, &job, pod, image, defaults, sinks, deadline).await?;
    if finished.terminated() {
        return Err(fail(
            exit::START_FAILED,
            format!(
                "Debug container {} ended before the copy could use it (exit code {}).",
                finished.container, finished.exit_code
            ),
        ));
    }
    Ok(Reach {
        namespace,
        pod: pod_name,
        runs_in: finished.container,
        route,
    })
}

/// Out of the pod. `Ok(None)`: there is no tar where it was tried.
pub(crate) async fn copy_out(
    client: &kube::Client,
    reach: &Reach,
    from: &Split,
    to: Option<&Path>,
    bounds: Bounds,
    meter: &Meter,
) -> Result<Option<String>, Failure> {
    let shown_from = format!("{}/{}:{}", reach.namespace, reach.pod, joined(from));
    let resolved = resolved_dir(client, reach, &from.dir, meter.on_stderr).await;
    let from = &Split {
        dir: resolved,
        name: from.name.clone(),
    };
    // The size, for the progress line and to bound the stream; a container
    // without du still copies.
    let (measured, _) = run_quietly(client, reach, reach.route.measure(from)).await;
    let measured = measured
        .and_then(|out| parse_du(&out))
        .map(|kib| kib.saturating_mul(1024));
    let (tx, rx) = mpsc::channel::<Bytes>(CHUNKS_IN_FLIGHT);
    let spec = pipe_spec(reach, reach.route.pack(from), bounds.stall);
    let _shown = Shown::start(meter, measured);
    let count = meter.done.clone();
    match to {
        None => {
            let writer = tokio::spawn(async move {
                let mut rx = rx;
                let mut stdout = tokio::io::stdout();
                while let Some(chunk) = rx.recv().await {
                    stdout.write_all(&chunk).await?;
                    count.fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
                }
                stdout.flush().await
            });
            let end = pipe::exec(client, &spec, None, tx)
                .await
                .map_err(|e| debug_cmd::classify(&e))?;
            let written = writer
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e)));
            if end.not_found() {
                return Ok(None);
            }
            // The reader went away first: that is the cause, not a cut.
            written.map_err(|e| {
                fail(
                    codes::CANNOT_WRITE,
                    format!("Cannot write the stream to stdout: {e}."),
                )
            })?;
            check_end(&end, reach, &shown_from, false)?;
            Ok(Some(format!(
                "copied {shown_from} as a tar stream ({}) in {}",
                progress::size(meter.bytes()),
                meter.summary()
            )))
        }
        Some(to) => {
            let target = Destination::for_item(to, &from.name)?;
            let stage = target.stage()?;
            let top = from.name.clone();
            let budget = Budget::for_item(measured, bounds.bytes);
            // The stage goes with the unpacking: if this copy is dropped
            // (cancelled), it is removed when the unpacking ends, not
            // while it still writes.
            let unpacking = tokio::task::spawn_blocking(move || {
                let result = unpack(ChannelReader::new(rx, count), &top, stage.path(), budget);
                (stage, result)
            });
            let end = pipe::exec(client, &spec, None, tx)
                .await
                .map_err(|e| debug_cmd::classify(&e))?;
            let (stage, unpacked) = unpacking
                .await
                .map_err(|e| fail(codes::CANNOT_WRITE, format!("The unpacking failed: {e}.")))?;
            if end.not_found() {
                return Ok(None);
            }
            let unpacked = match unpacked {
                Err(Refusal::Hostile(why)) => return Err(refused(&shown_from, &why, to)),
                Err(Refusal::Local(e)) => {
                    return Err(fail(
                        codes::CANNOT_WRITE,
                        format!("Cannot write into {}: {e}.", target.parent.display()),
                    ));
                }
                // Cut or failed on the far side: that is the cause; else
                // the stream itself was wrong.
                Err(Refusal::Broken(why)) => {
                    if !end.stopped_here {
                        check_end(&end, reach, &shown_from, false)?;
                    }
                    return Err(refused(&shown_from, &why, to));
                }
                Ok(unpacked) => unpacked,
            };
            check_end(&end, reach, &shown_from, false)?;
            target.finish(&stage, &from.name)?;
            drop(stage);
            if let Some(mode) = unpacked.top_dir_mode {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(&target.path, std::fs::Permissions::from_mode(mode))
                    .map_err(|e| {
                        fail(
                            codes::CANNOT_WRITE,
                            format!("Cannot set the mode of {}: {e}.", target.path.display()),
                        )
                    })?;
            }
            let notes: String = unpacked.notes.iter().map(|n| format!("; {n}")).collect();
            Ok(Some(format!(
                "copied {shown_from} to {} ({} file{}, {}) in {}{notes}",
                target.path.display(),
                unpacked.files,
                if unpacked.files == 1 { "" } else { "s" },
                progress::size(unpacked.bytes),
                meter.summary()
            )))
        }
    }
}

/// Into the pod. `Ok(None)`: there is no tar where it was tried.
pub(crate) async fn copy_in(
    client: &kube::Client,
    reach: &Reach,
    from: Option<&Path>,
    dir: &str,
    name: &str,
    bounds: Bounds,
    meter: &Meter,
) -> Result<Option<String>, Failure> {
    // As kubectl: onto an existing directory, the item goes inside it.
    let (dir, name) = match from {
        Some(local) if !name.is_empty() => {
            let full = joined(&Split {
                dir: dir.to_string(),
                name: name.to_string(),
            });
            let seen = reach.route.dir(&full).unwrap_or_else(|| full.clone());
            let (is_dir, _) =
                run_quietly(client, reach, vec!["test".into(), "-d".into(), seen]).await;
            match is_dir {
                Some(_) => (full, local_name(local).unwrap_or_else(|_| name.to_string())),
                None => (dir.to_string(), name.to_string()),
            }
        }
        _ => (dir.to_string(), name.to_string()),
    };
    let dir = resolved_dir(client, reach, &dir, meter.on_stderr).await;
    let (dir, name) = (dir.as_str(), name.as_str());
    let shown_to = format!(
        "{}/{}:{}",
        reach.namespace,
        reach.pod,
        if name.is_empty() {
            dir.to_string()
        } else {
            joined(&Split {
                dir: dir.to_string(),
                name: name.to_string(),
            })
        }
    );
    let (tx, rx) = mpsc::channel::<pipe::InputChunk>(CHUNKS_IN_FLIGHT);
    let count = meter.done.clone();
    let total;
    let producing = match from {
        Some(local) => {
            let meta = std::fs::symlink_metadata(local).map_err(|e| {
                fail(
                    exit::NOT_FOUND,
                    format!("Cannot read {}: {e}.", local.display()),
                )
            })?;
            total = (!meta.is_dir()).then_some(meta.len());
            let local = local.to_path_buf();
            let name = name.to_string();
            tokio::task::spawn_blocking(move || {
                io::pack(&local, &name, ChannelWriter::new(tx, count))
            })
        }
        None => {
            // Stdin cannot be read twice: ask first whether tar is there.
            if reach.route == Route::Direct {
                let (_, end) =
                    run_quietly(client, reach, vec!["tar".into(), "--help".into()]).await;
                if end.as_ref().is_some_and(PipeEnd::not_found) {
                    return Ok(None);
                }
            }
            total = None;
            tokio::task::spawn_blocking(move || {
                let mut out = ChannelWriter::new(tx, count);
                std::io::copy(&mut std::io::stdin().lock(), &mut out)?;
                std::io::Write::flush(&mut out)
            })
        }
    };
    let _shown = Shown::start(meter, total);
    let spec = pipe_spec(reach, reach.route.unpack(dir), bounds.stall);
    let (sink, mut drained) = mpsc::channel::<Bytes>(4);
    tokio::spawn(async move { while drained.recv().await.is_some() {} });
    let end = pipe::exec(client, &spec, Some(rx), sink)
        .await
        .map_err(|e| debug_cmd::classify(&e))?;
    let produced = producing
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)));
    if end.not_found() {
        return Ok(None);
    }
    check_end(&end, reach, &shown_to, true)?;
    if let Err(e) = produced {
        let what = from.map_or("stdin".to_string(), |p| p.display().to_string());
        return Err(fail(exit::NOT_FOUND, format!("Cannot read {what}: {e}.")));
    }
    Ok(Some(format!(
        "copied {} to {shown_to} ({} of tar) in {}",
        from.map_or("stdin".to_string(), |p| p.display().to_string()),
        progress::size(meter.bytes()),
        meter.summary()
    )))
}

/// Through a debug container, an absolute directory with links in it,
/// resolved in the target's root (said when it differs); anything else as
/// it is.
async fn resolved_dir(client: &kube::Client, reach: &Reach, dir: &str, say: bool) -> String {
    if reach.route != Route::Through || !dir.starts_with('/') || dir == "/" {
        return dir.to_string();
    }
    let (out, _) = run_quietly(client, reach, crate::model::transfer::resolve_command(dir)).await;
    match out.as_deref().map(str::trim_end) {
        Some(real) if real.starts_with('/') && real != dir => {
            if say {
                crate::print::say(
                    &format!("{dir} is {real} in the container (through its links)").into(),
                );
            }
            real.to_string()
        }
        _ => dir.to_string(),
    }
}

fn pipe_spec(reach: &Reach, command: Vec<String>, stall: Duration) -> PipeSpec {
    PipeSpec {
        namespace: reach.namespace.clone(),
        pod: reach.pod.clone(),
        container: reach.runs_in.clone(),
        command,
        deadline: Deadline::none().stalling_after(stall),
    }
}

/// Runs a small command and keeps its stdout (`None` if it failed).
pub(crate) async fn run_quietly(
    client: &kube::Client,
    reach: &Reach,
    command: Vec<String>,
) -> (Option<String>, Option<PipeEnd>) {
    let (tx, mut rx) = mpsc::channel::<Bytes>(4);
    let collect = tokio::spawn(async move {
        let mut out = Vec::new();
        while let Some(chunk) = rx.recv().await {
            if out.len() < 4096 {
                out.extend_from_slice(&chunk);
            }
        }
        out
    });
    let spec = pipe_spec(reach, command, Duration::from_secs(20));
    let end = pipe::exec(client, &spec, None, tx).await.ok();
    let out = collect.await.unwrap_or_default();
    let ok = end.as_ref().is_some_and(PipeEnd::succeeded);
    (ok.then(|| String::from_utf8_lossy(&out).into_owned()), end)
}

/// A tar that failed or a stream that was cut, as one sentence.
fn check_end(end: &PipeEnd, reach: &Reach, what: &str, upload: bool) -> Result<(), Failure> {
    if end.succeeded() {
        return Ok(());
    }
    if end.end.disconnected {
        let kept = if upload {
            "part of it may be in the container already"
        } else {
            "nothing was kept"
        };
        let v4 = if end.stdin_left_open {
            " (the server speaks v4.channel.k8s.io, which cannot end tar's input)"
        } else {
            ""
        };
        return Err(fail(
            exit::CUT,
            format!(
                "The copy of {what} was cut ({}){v4}; {kept}. Run it again.",
                end.end.reason.trim_start_matches("disconnected: ")
            ),
        ));
    }
    let said = crate::model::transfer::complaint(&end.stderr)
        .unwrap_or_else(|| end.end.reason.to_string());
    let place = match reach.route {
        Route::Direct => format!("container {}", reach.runs_in),
        Route::Through => format!("debug container {}", reach.runs_in),
    };
    // Through /proc/1/root, a refusal is the kernel's ptrace check: the
    // target is another user, and the debug container lacks SYS_PTRACE.
    let hint = if reach.route == Route::Through && said.contains("Permission denied") {
        " The target runs as another user: copy as its user (--as-target-user=always; its runAsUser must be in the pod's spec), or with --profile=general (SYS_PTRACE) where the namespace's Pod Security allows it."
    } else {
        ""
    };
    Err(fail(
        codes::TAR_FAILED,
        format!(
            "tar in {place} could not copy {what}: {}.{hint}",
            sanitize(&said).trim_end_matches('.')
        ),
    ))
}

fn refused(what: &str, why: &str, to: &Path) -> Failure {
    fail(
        codes::REFUSED_STREAM,
        format!(
            "The stream from {what} was not unpacked: {why}. Nothing was written to {}.",
            to.display()
        ),
    )
}

fn joined(at: &Split) -> String {
    match at.dir.as_str() {
        "" => at.name.clone(),
        "/" => format!("/{}", at.name),
        dir => format!("{dir}/{}", at.name),
    }
}

/// Where an item copied out lands: `to` itself, or inside `to` when that
/// is an existing directory (as cp does).
struct Destination {
    path: PathBuf,
    parent: PathBuf,
}

impl Destination {
    fn for_item(to: &Path, name: &str) -> Result<Destination, Failure> {
        let path = if to.is_dir() {
            to.join(name)
        } else {
            to.to_path_buf()
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            return Err(fail(
                codes::CANNOT_WRITE,
                format!(
                    "Directory {} does not exist; create it or choose another destination.",
                    parent.display()
                ),
            ));
        }
        Ok(Destination { path, parent })
    }

    /// A private directory where the item is put together: beside the
    /// destination (the same filesystem, so the final rename is atomic),
    /// or, for a device or FIFO written into, in the temporary directory
    /// (never in `/dev`).
    fn stage(&self) -> Result<Stage, Failure> {
        let special = matches!(Place::of(&self.path), Ok(Place::Special(_)));
        let dir = if special {
            std::env::temp_dir()
        } else {
            self.parent.clone()
        };
        Stage::new_in(&dir).map_err(|e| {
            fail(
                codes::CANNOT_WRITE,
                format!("Cannot write into {}: {e}.", dir.display()),
            )
        })
    }

    /// Puts the whole item `name` of `stage` in place: renamed over an
    /// absent path, a file or a link; written into a device or FIFO, as
    /// cp writes into `/dev/null` (a file only).
    fn finish(&self, stage: &Stage, name: &str) -> Result<(), Failure> {
        let to = &self.path;
        let item = stage.path().join(name);
        let cannot = |why: String| {
            fail(
                codes::CANNOT_WRITE,
                format!("Cannot put the copy at {}: {why}.", to.display()),
            )
        };
        crate::local::put(&item, to).map_err(|e| {
            cannot(match e.kind() {
                std::io::ErrorKind::DirectoryNotEmpty | std::io::ErrorKind::IsADirectory => {
                    "it exists and is a directory that is not empty; remove it or choose another name"
                        .to_string()
                }
                _ => e.to_string(),
            })
        })
    }
}

impl DebugArgs {
    /// What `podbay debug` would be given to add the debug container a
    /// copy goes through: an interactive shell with a terminal (so it
    /// stays up, and can be attached to later), not attached, reused.
    pub fn for_copy(args: &CpArgs, pod: &str, namespace: &str, target: Option<String>) -> Self {
        DebugArgs {
            pods: vec![DebugTarget::Pod(pod.to_string())],
            selector: None,
            all_namespaces: false,
            namespace: Some(namespace.to_string()).filter(|n| !n.is_empty()),
            context: args.context.clone(),
            kubeconfig: args.kubeconfig.clone(),
            target,
            target_all: false,
            parallel: 1,
            image: args.image.clone(),
            name: None,
            profile: args.profile,
            profile_name: None,
            as_target_user: args.as_target_user,
            env: Vec::new(),
            mounts: Vec::new(),
            workdir: None,
            pull_policy: None,
            interactive: true,
            tty: true,
            no_attach: true,
            reuse: true,
            list: false,
            timeout: args.timeout,
            output: None,
            custom: None,
            pod_flags: Default::default(),
            command: Vec::new(),
            user_of: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crash-looping pod whose container mounts: log at /var/log, app
    /// below it, part of data (subPath), config read-only.
    fn stopped_pod() -> crate::model::PodDetail {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop"},
            "spec": {"containers": [{"name": "app", "image": "x", "volumeMounts": [
                {"name": "log", "mountPath": "/var/log"},
                {"name": "app-log", "mountPath": "/var/log/app"},
                {"name": "data", "mountPath": "/data", "subPath": "web"},
                {"name": "config", "mountPath": "/etc/web", "readOnly": true},
            ]}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "app", "image": "x",
                "imageID": "", "ready": false, "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]},
        }))
        .unwrap();
        crate::model::PodDetail::from_pod(&pod)
    }

    #[test]
    fn a_stopped_containers_volumes_are_mounted_whole_or_refused() {
        let detail = stopped_pod();
        let info = detail.container("app").unwrap();
        let names = |path: &str, upload: bool| -> Result<Vec<String>, String> {
            volumes_for(&detail, info, path, upload)
                .map(|m| m.into_iter().map(|(v, _)| v).collect())
                .map_err(|f| f.sentence.to_string())
        };
        assert_eq!(
            names("/var/log/app/today.log", false),
            Ok(vec!["app-log".into()])
        );
        assert_eq!(
            names("/var/log", false),
            Ok(vec!["log".into(), "app-log".into()]),
            "what is mounted below comes along"
        );
        assert_eq!(names("/var/log/other", true), Ok(vec!["log".into()]));
        assert!(names("/data/x", false).unwrap_err().contains("subPath"));
        assert!(
            names("/", false)
                .unwrap_err()
                .contains("can be read: /var/log (volume log)")
        );
        assert_eq!(names("/etc/web/app.yaml", false), Ok(vec!["config".into()]));
        assert!(
            names("/etc/web/app.yaml", true)
                .unwrap_err()
                .contains("read-only")
        );
        let elsewhere = names("/etc/passwd", false).unwrap_err();
        assert!(
            elsewhere.contains("is not running (Waiting CrashLoopBackOff)")
                && elsewhere.contains("/var/log (volume log)"),
            "{elsewhere}"
        );
    }

    fn args(source: &str, destination: &str) -> CpArgs {
        CpArgs {
            source: source.into(),
            destination: destination.into(),
            container: None,
            namespace: None,
            context: None,
            kubeconfig: None,
            image: None,
            profile: None,
            as_target_user: Default::default(),
            timeout: Duration::from_secs(60),
            max_size: None,
            max_time: None,
            stall: Duration::from_secs(60),
        }
    }

    #[test]
    fn one_side_must_be_a_pod() {
        let Err(both) = plan(&args("a:/x", "b:/y")) else {
            panic!()
        };
        assert_eq!(both.code, codes::USAGE);
        assert!(both.sentence.as_str().contains("Both"));
        let Err(neither) = plan(&args("./a", "./b")) else {
            panic!()
        };
        assert!(neither.sentence.as_str().contains("[NAMESPACE/]POD:PATH"));
        let Err(capital) = plan(&args("payments/api-qv8lX:/var/dump", "./dump")) else {
            panic!()
        };
        assert_eq!(
            capital.sentence.as_str(),
            "No pod can be named as in payments/api-qv8lX:/var/dump: pod names are lower case. Did you mean payments/api-qv8lx:/var/dump?"
        );
    }

    #[test]
    fn uploads_name_the_item_by_the_destination_or_keep_the_local_name() {
        let Ok((_, Plan::In { dir, name, .. })) = plan(&args("Cargo.toml", "web-0:/tmp/x.toml"))
        else {
            panic!()
        };
        assert_eq!((dir.as_str(), name.as_str()), ("/tmp", "x.toml"));
        let Ok((_, Plan::In { dir, name, .. })) = plan(&args("Cargo.toml", "web-0:/tmp/")) else {
            panic!()
        };
        assert_eq!((dir.as_str(), name.as_str()), ("/tmp", "Cargo.toml"));
        let Ok((_, Plan::In { dir, name, from })) = plan(&args("-", "web-0:/srv")) else {
            panic!()
        };
        assert_eq!((dir.as_str(), name.as_str(), from), ("/srv", "", None));
        let Ok((_, Plan::In { dir, .. })) = plan(&args("Cargo.toml", "web-0:/")) else {
            panic!()
        };
        assert_eq!(dir, "/");
    }

    #[test]
    fn an_existing_directory_receives_the_item_inside_it() {
        let scratch = tempfile::tempdir().unwrap();
        let inside = Destination::for_item(scratch.path(), "heap.hprof").unwrap();
        assert_eq!(inside.path, scratch.path().join("heap.hprof"));
        let named = Destination::for_item(&scratch.path().join("h"), "heap.hprof").unwrap();
        assert_eq!(named.path, scratch.path().join("h"));
        let Err(missing) = Destination::for_item(&scratch.path().join("no/h"), "x") else {
            panic!()
        };
        assert_eq!(missing.code, codes::CANNOT_WRITE);
    }

    #[test]
    fn a_fifo_destination_is_written_into_and_never_replaced() {
        use std::io::Read as _;
        use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
        let scratch = tempfile::tempdir().unwrap();
        let fifo = scratch.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let target = Destination::for_item(&fifo, "hosts").unwrap();
        let stage = target.stage().unwrap();
        assert!(
            !stage.path().starts_with(scratch.path()),
            "a stage for a FIFO is made in the temporary directory"
        );
        std::fs::write(stage.path().join("hosts"), b"127.0.0.1 localhost\n").unwrap();
        target.finish(&stage, "hosts").unwrap();
        let mut got = String::new();
        reader.read_to_string(&mut got).unwrap();
        assert_eq!(got, "127.0.0.1 localhost\n");

        std::fs::create_dir(stage.path().join("logs")).unwrap();
        let refused = target.finish(&stage, "logs").unwrap_err();
        assert_eq!(
            refused.sentence.as_str(),
            format!(
                "Cannot put the copy at {}: it is a FIFO, and podbay writes only a file into one, as cp does.",
                fifo.display()
            )
        );
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        let stage_path = stage.path().to_path_buf();
        drop(stage);
        assert!(!stage_path.exists());
        assert_eq!(
            std::fs::read_dir(scratch.path()).unwrap().count(),
            1,
            "nothing but the FIFO"
        );
    }
}

//! The transfer engine: files out of a container and into it, as `kubectl
//! cp` (tar over exec), by a [`Reach`]: the container itself, or a debug
//! container that targets it and reaches its files under `/proc/1/root`.
//! What comes back is unpacked by [`unpack`], which trusts none of it, in
//! a stage of the one local writer, put in place whole. `podbay cp` and
//! the TUI's file browser both copy through here.

mod io;
pub mod progress;
pub mod unpack;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::mpsc;

use crate::cluster::deadline::Deadline;
use crate::cluster::pipe::{self, PipeEnd, PipeSpec};
use crate::engine::outcome::{Failure, classify, exit, fail};
use crate::local::{Place, Stage};
use crate::model::text::sanitize;
use crate::model::transfer::{Route, Split, parse_du};
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
pub const STALL: Duration = Duration::from_secs(60);

/// How a copy ended, when nothing failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Copied {
    /// Done: what was copied, where, how much and how fast.
    Done(String),
    /// There is no tar where it was tried (a distroless image): nothing
    /// was copied, and another reach may do it.
    NoTar,
}

/// The container a copy reads or writes, and how tar reaches it.
pub struct Reach {
    pub namespace: String,
    pub pod: String,
    /// Where tar runs: the container itself or a debug container.
    pub runs_in: String,
    pub route: Route,
}

/// What a copy may take: bytes out of the pod (`None`: the default
/// budget, see [`Budget::for_item`]) and the silence of its stream.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
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

/// The name a local path is copied as: its own (a link keeps its name,
/// and is copied as a link, as kubectl does); `.` and `..` are their
/// directory's.
pub fn local_name(path: &Path) -> Result<String, String> {
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

/// Out of the pod.
pub async fn copy_out(
    client: &kube::Client,
    reach: &Reach,
    from: &Split,
    to: Option<&Path>,
    bounds: Bounds,
    meter: &Meter,
) -> Result<Copied, Failure> {
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
                .map_err(|e| classify(&e))?;
            let written = writer
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e)));
            if end.not_found() {
                return Ok(Copied::NoTar);
            }
            // The reader went away first: that is the cause, not a cut.
            written.map_err(|e| {
                fail(
                    codes::CANNOT_WRITE,
                    format!("Cannot write the stream to stdout: {e}."),
                )
            })?;
            check_end(&end, reach, &shown_from, false)?;
            Ok(Copied::Done(format!(
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
                .map_err(|e| classify(&e))?;
            let (stage, unpacked) = unpacking
                .await
                .map_err(|e| fail(codes::CANNOT_WRITE, format!("The unpacking failed: {e}.")))?;
            if end.not_found() {
                return Ok(Copied::NoTar);
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
            Ok(Copied::Done(format!(
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

/// Into the pod.
pub async fn copy_in(
    client: &kube::Client,
    reach: &Reach,
    from: Option<&Path>,
    dir: &str,
    name: &str,
    bounds: Bounds,
    meter: &Meter,
) -> Result<Copied, Failure> {
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
                    return Ok(Copied::NoTar);
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
        .map_err(|e| classify(&e))?;
    let produced = producing
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)));
    if end.not_found() {
        return Ok(Copied::NoTar);
    }
    check_end(&end, reach, &shown_to, true)?;
    if let Err(e) = produced {
        let what = from.map_or("stdin".to_string(), |p| p.display().to_string());
        return Err(fail(exit::NOT_FOUND, format!("Cannot read {what}: {e}.")));
    }
    Ok(Copied::Done(format!(
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
pub async fn run_quietly(
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

pub fn joined(at: &Split) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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

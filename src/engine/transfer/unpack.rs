//! Unpacks a tar stream that a container sent, trusting none of it.
//!
//! The `tar` crate reads the format (ustar, GNU long names, PAX, sparse);
//! everything it would let through that could leave the destination is
//! refused here: absolute or `..` paths, an entry outside the one item
//! asked for, a write through a symlink (a symlink entry, then a file
//! "inside" it), symlinks and hard links that point outside, device nodes
//! and FIFOs, names with control characters, more bytes than the item
//! measured, a size field that lies. setuid/setgid/sticky bits are dropped.
//! Everything lands in a staging directory the caller made; the caller
//! renames the item into place only when the whole stream was good.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use crate::model::text::sanitize;

/// What was unpacked.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Unpacked {
    pub files: u64,
    pub bytes: u64,
    /// Things done that the user should know (bits dropped).
    pub notes: Vec<String>,
    /// The item's own mode when it is a directory: set once it is in
    /// place (a directory without write permission could not be moved).
    pub top_dir_mode: Option<u32>,
}

/// Why the stream was not unpacked.
#[derive(Debug)]
pub enum Refusal {
    /// The stream holds something podbay will not write: the sentence's
    /// middle ("it holds an entry ../x that climbs out").
    Hostile(String),
    /// The stream is not a whole tar archive.
    Broken(String),
    /// Writing locally failed.
    Local(io::Error),
}

/// How many bytes of stream a copy takes, and why that many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub bytes: u64,
    pub why: BudgetWhy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetWhy {
    /// Well past what the container measured before the copy.
    Measured,
    /// The user's `--max-size`.
    Asked,
    /// The container could not tell the size.
    Unmeasured,
}

impl Budget {
    /// Taken of an item whose size the container cannot tell.
    pub const UNMEASURED: u64 = 4 << 30;

    /// The user's `limit` if set; else well past the `measured` size
    /// (16 times it, and at least 1 GiB more: a log grows while copied);
    /// else [`Budget::UNMEASURED`].
    pub fn for_item(measured: Option<u64>, limit: Option<u64>) -> Budget {
        match (limit, measured) {
            (Some(bytes), _) => Budget {
                bytes,
                why: BudgetWhy::Asked,
            },
            (None, Some(m)) => {
                Budget::measured(m.saturating_mul(16).max(m.saturating_add(1 << 30)))
            }
            (None, None) => Budget {
                bytes: Budget::UNMEASURED,
                why: BudgetWhy::Unmeasured,
            },
        }
    }

    pub fn measured(bytes: u64) -> Budget {
        Budget {
            bytes,
            why: BudgetWhy::Measured,
        }
    }

    fn exceeded(&self) -> String {
        let mib = self.bytes / (1 << 20);
        match self.why {
            BudgetWhy::Measured => format!(
                "it goes on past {mib} MiB, more than what was measured in the container before the copy"
            ),
            BudgetWhy::Asked => format!("it goes on past {mib} MiB, the --max-size given"),
            BudgetWhy::Unmeasured => format!(
                "it goes on past {mib} MiB, the most podbay takes of an item whose size the container cannot tell (podbay cp --max-size takes more)"
            ),
        }
    }
}

/// Unpacks `stream`, which must hold `top` (a file, directory or link
/// named so) and what is under it, into `stage`, taking at most `budget`
/// bytes of it.
pub fn unpack(
    stream: impl Read,
    top: &str,
    stage: &Path,
    budget: Budget,
) -> Result<Unpacked, Refusal> {
    let mut archive = tar::Archive::new(Bounded {
        inner: stream,
        read: 0,
        budget,
    });
    let mut done = Unpacked::default();
    let mut dirs: Vec<(PathBuf, u32)> = Vec::new();
    let entries = archive.entries().map_err(broken)?;
    for entry in entries {
        let mut entry = entry.map_err(broken)?;
        let raw = entry.path_bytes().into_owned();
        let Some(parts) = inside(&raw, top)? else {
            continue;
        };
        let shown = shown(&raw);
        let path = stage.join(parts.iter().collect::<PathBuf>());
        real_parents(stage, &parts, &shown)?;
        let header = entry.header();
        let mode = header.mode().map_err(broken)?;
        let kind = header.entry_type();
        if mode & 0o7000 != 0 && !kind.is_symlink() {
            done.notes.push(format!(
                "dropped the setuid/setgid/sticky bits of {shown} (mode {:o} became {:o})",
                mode & 0o7777,
                mode & 0o777
            ));
        }
        let mode = mode & 0o777;
        use tar::EntryType as T;
        match kind {
            T::Regular | T::Continuous | T::GNUSparse => {
                let written = write_file(&mut entry, &path, mode, &shown)?;
                done.files += 1;
                done.bytes += written;
            }
            T::Directory => {
                match std::fs::symlink_metadata(&path) {
                    Ok(meta) if meta.is_dir() => {}
                    Ok(_) => {
                        return Err(Refusal::Hostile(format!(
                            "it holds a directory {shown} where it already put something else"
                        )));
                    }
                    Err(_) => crate::local::create_dir(&path, 0o777).map_err(Refusal::Local)?,
                }
                dirs.push((path, mode));
            }
            T::Symlink => {
                let target = entry.link_name_bytes().unwrap_or_default().into_owned();
                link_stays_inside(&parts, &target, &shown)?;
                if std::fs::symlink_metadata(&path).is_ok() {
                    return Err(Refusal::Hostile(format!(
                        "it holds a symlink {shown} over something it already put there"
                    )));
                }
                std::os::unix::fs::symlink(OsStr::from_bytes(&target), &path)
                    .map_err(Refusal::Local)?;
            }
            T::Link => {
                let target = entry.link_name_bytes().unwrap_or_default().into_owned();
                let Some(source) = inside(&target, top)? else {
                    return Err(Refusal::Hostile(format!(
                        "it holds a hard link {shown} to nothing"
                    )));
                };
                real_parents(stage, &source, &shown)?;
                let source = stage.join(source.iter().collect::<PathBuf>());
                let is_file = std::fs::symlink_metadata(&source).is_ok_and(|m| m.is_file());
                if !is_file {
                    return Err(Refusal::Hostile(format!(
                        "it holds a hard link {shown} to {}, which is not a file it sent before",
                        self::shown(&target)
                    )));
                }
                if std::fs::symlink_metadata(&path).is_ok() {
                    std::fs::remove_file(&path).map_err(Refusal::Local)?;
                }
                std::fs::hard_link(&source, &path).map_err(Refusal::Local)?;
                done.files += 1;
            }
            T::Char | T::Block => {
                return Err(Refusal::Hostile(format!("it holds a device node {shown}")));
            }
            T::Fifo => {
                return Err(Refusal::Hostile(format!("it holds a FIFO {shown}")));
            }
            other => {
                return Err(Refusal::Hostile(format!(
                    "it holds {shown} of a kind podbay does not write (tar type {:?})",
                    other.as_byte() as char
                )));
            }
        }
    }
    if std::fs::symlink_metadata(stage.join(top)).is_err() {
        return Err(Refusal::Broken(format!(
            "it held no {}",
            shown(top.as_bytes())
        )));
    }
    // What follows the end of the archive (GNU tar pads to 10 KiB
    // records) is read to its end, still bounded, so the sender finishes.
    io::copy(&mut archive.into_inner(), &mut io::sink()).map_err(broken)?;
    // Modes last, deepest first, so a read-only directory was writable
    // while it filled; the item's own once it is in place.
    let top_path = stage.join(top);
    done.top_dir_mode = dirs
        .iter()
        .rev()
        .find(|(dir, _)| *dir == top_path)
        .map(|(_, mode)| *mode);
    dirs.retain(|(dir, _)| *dir != top_path);
    for (dir, mode) in dirs.iter().rev() {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(*mode))
            .map_err(Refusal::Local)?;
    }
    Ok(done)
}

/// An entry's path as parts under `stage`, checked: relative, no `..`,
/// no control characters, under `top`. `None` for the archive's own `./`.
fn inside(raw: &[u8], top: &str) -> Result<Option<Vec<PathBuf>>, Refusal> {
    let name = shown(raw);
    if raw.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return Err(Refusal::Hostile(format!(
            "it holds a name with control characters ({name})"
        )));
    }
    let mut parts = Vec::new();
    for component in Path::new(OsStr::from_bytes(raw)).components() {
        match component {
            Component::Normal(part) => parts.push(PathBuf::from(part)),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(Refusal::Hostile(format!(
                    "it holds an entry {name} that climbs out with \"..\""
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(Refusal::Hostile(format!(
                    "it holds an entry with an absolute path ({name})"
                )));
            }
        }
    }
    match parts.first() {
        None => Ok(None),
        Some(first) if first.as_os_str() == OsStr::new(top) => Ok(Some(parts)),
        Some(_) => Err(Refusal::Hostile(format!(
            "it holds {name}, which is not under {}, what was asked for",
            shown(top.as_bytes())
        ))),
    }
}

/// Every directory above the entry exists as a real directory (made if
/// missing): a symlink there would carry the write elsewhere.
fn real_parents(stage: &Path, parts: &[PathBuf], shown: &str) -> Result<(), Refusal> {
    let mut at = stage.to_path_buf();
    for part in &parts[..parts.len().saturating_sub(1)] {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(Refusal::Hostile(format!(
                    "it holds {shown}, to be written through the symlink {}",
                    at.strip_prefix(stage).unwrap_or(&at).display()
                )));
            }
            Ok(_) => {
                return Err(Refusal::Hostile(format!(
                    "it holds {shown} under something that is not a directory"
                )));
            }
            Err(_) => crate::local::create_dir(&at, 0o777).map_err(Refusal::Local)?,
        }
    }
    Ok(())
}

/// A symlink's target, read from where the link is, must stay within the
/// item (relative, and never above its top).
fn link_stays_inside(parts: &[PathBuf], target: &[u8], shown: &str) -> Result<(), Refusal> {
    let outside = || {
        Refusal::Hostile(format!(
            "it holds a symlink {shown} → {} that points outside what was copied (copy what it points to instead)",
            self::shown(target)
        ))
    };
    // The item itself a link: whatever it names is outside it.
    if parts.len() < 2 || target.is_empty() || target.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return Err(outside());
    }
    // Where the link sits: its parent directories, top first. `..` only
    // at the start: after a name, that name could itself be a link, and
    // `..` from where it leads is not known here.
    let mut depth = parts.len().saturating_sub(1);
    let mut named = false;
    for component in Path::new(OsStr::from_bytes(target)).components() {
        match component {
            Component::Normal(_) => {
                depth += 1;
                named = true;
            }
            Component::CurDir => {}
            Component::ParentDir if depth > 1 && !named => depth -= 1,
            _ => return Err(outside()),
        }
    }
    Ok(())
}

/// Writes one file: a new inode (never through an existing name), the
/// stream's bytes, its mode without special bits, its time.
fn write_file(
    entry: &mut tar::Entry<'_, impl Read>,
    path: &Path,
    mode: u32,
    shown: &str,
) -> Result<u64, Refusal> {
    use std::os::unix::fs::PermissionsExt as _;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(Refusal::Hostile(format!(
                "it holds a file {shown} where it already put a directory"
            )));
        }
        // A later copy of a name replaces it, as tar does; removing a
        // symlink removes the link, never what it points to.
        Ok(_) => std::fs::remove_file(path).map_err(Refusal::Local)?,
        Err(_) => {}
    }
    let mut file = crate::local::create_private(path).map_err(Refusal::Local)?;
    let declared = entry.size();
    // Large writes: io::copy's 8 KiB would be 32 768 of them for 256 MiB.
    let mut out = io::BufWriter::with_capacity(256 * 1024, &mut file);
    let written = io::copy(entry, &mut out).and_then(|n| {
        io::Write::flush(&mut out)?;
        Ok(n)
    });
    drop(out);
    let written = written.map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => Refusal::Broken(format!(
            "it ended inside {shown}, whose header said {declared} bytes"
        )),
        _ => broken(e),
    })?;
    if written != declared {
        return Err(Refusal::Broken(format!(
            "it ended inside {shown}, whose header said {declared} bytes"
        )));
    }
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(Refusal::Local)?;
    if let Ok(Ok(mtime)) = entry.header().mtime().map(|s| {
        std::time::UNIX_EPOCH
            .checked_add(std::time::Duration::from_secs(s))
            .ok_or(())
    }) {
        let _ = file.set_modified(mtime);
    }
    Ok(written)
}

/// A name as it can be shown on a terminal.
fn shown(raw: &[u8]) -> String {
    sanitize(&String::from_utf8_lossy(raw)).into_owned()
}

fn broken(e: io::Error) -> Refusal {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => Refusal::Broken("it ended in the middle".into()),
        io::ErrorKind::FileTooLarge => Refusal::Hostile(e.to_string()),
        io::ErrorKind::Other | io::ErrorKind::InvalidData => {
            Refusal::Broken(format!("it is not a valid tar archive ({e})"))
        }
        _ => Refusal::Local(e),
    }
}

/// The stream, failing once it passes its budget.
struct Bounded<R> {
    inner: R,
    read: u64,
    budget: Budget,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.budget.bytes {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                self.budget.exceeded(),
            ));
        }
        Ok(n)
    }
}

/// Panics if anything under `stage` is a symlink whose target leaves it,
/// or anything but a file, directory or symlink: the invariant [`unpack`]
/// keeps whatever it is fed (for the tests and the fuzz target).
pub fn assert_contained(stage: &Path) {
    fn walk(stage: &Path, dir: &Path) {
        for entry in std::fs::read_dir(dir).expect("readable") {
            let path = entry.expect("an entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let kind = meta.file_type();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).expect("a link");
                // Through every link (when it resolves at all).
                if let (Ok(real), Ok(stage_real)) =
                    (std::fs::canonicalize(&path), std::fs::canonicalize(stage))
                {
                    let below = real
                        .strip_prefix(&stage_real)
                        .is_ok_and(|rel| rel.components().next().is_some());
                    assert!(
                        below,
                        "{} → {} resolves to {}, outside the item",
                        path.display(),
                        target.display(),
                        real.display()
                    );
                }
                let resolved = path.parent().unwrap_or(stage).join(&target);
                let mut depth: i64 = 0;
                let inside = resolved.strip_prefix(stage).ok().is_some_and(|rel| {
                    rel.components().all(|c| {
                        depth += match c {
                            Component::ParentDir => -1,
                            Component::CurDir => 0,
                            _ => 1,
                        };
                        depth >= 1
                    })
                });
                assert!(
                    inside,
                    "{} → {} leaves the stage",
                    path.display(),
                    target.display()
                );
            } else if kind.is_dir() {
                walk(stage, &path);
            } else {
                assert!(kind.is_file(), "{} is not a file", path.display());
            }
        }
    }
    walk(stage, stage);
}

#[cfg(test)]
#[path = "unpack_tests.rs"]
mod tests;

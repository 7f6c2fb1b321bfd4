//! The one place podbay touches local files: everything it writes (copies,
//! downloads, recordings, the kept workspace, the image history, its log)
//! and the state it reads back (config, themes, workspaces, custom specs).
//!
//! - New files are created with `O_EXCL | O_NOFOLLOW`, owner-only: never
//!   through a name that is already there (a planted link is not followed,
//!   an existing file keeps what it holds).
//! - A whole file or a copied item is staged beside its place and renamed
//!   over it only when the place is absent, a regular file or a link; a
//!   device, FIFO or socket is never replaced ([`Place`] says what is
//!   there, and callers write *into* a device or FIFO, as cp does).
//! - Stages are removed on every ending: when dropped, and by
//!   [`remove_stages`] when a signal ends podbay.
//! - State is read only from regular files, never more than a cap, and
//!   opening never blocks (a FIFO, a device, `/dev/zero` are refused in
//!   one sentence).

use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use nix::libc;

/// What is at a local path now, following links as cp follows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Absent,
    Regular,
    Directory,
    /// A device, FIFO or socket: its kind, in words.
    Special(&'static str),
}

impl Place {
    pub fn of(path: &Path) -> io::Result<Place> {
        match std::fs::metadata(path) {
            Ok(meta) => Ok(Place::from_type(meta.file_type())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Place::Absent),
            Err(e) => Err(e),
        }
    }

    /// What it is, in words: "FIFO", "directory".
    fn words(self) -> &'static str {
        match self {
            Place::Absent => "nothing",
            Place::Regular => "file",
            Place::Directory => "directory",
            Place::Special(kind) => kind,
        }
    }

    fn from_type(kind: std::fs::FileType) -> Place {
        if kind.is_dir() {
            Place::Directory
        } else if kind.is_file() {
            Place::Regular
        } else if kind.is_char_device() {
            Place::Special("character device")
        } else if kind.is_block_device() {
            Place::Special("block device")
        } else if kind.is_fifo() {
            Place::Special("FIFO")
        } else if kind.is_socket() {
            Place::Special("socket")
        } else {
            Place::Special("special file")
        }
    }
}

/// A new file at `path`, created here and now with `mode`: fails if
/// anything (a file, a link, a FIFO) is already there.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(mode)
        .open(path)
}

/// A new owner-only file (recordings, stages of state files).
pub fn create_private(path: &Path) -> io::Result<File> {
    create_new(path, 0o600)
}

/// `path` opened to append (podbay's log), created owner-only if absent;
/// a link or anything but a regular file there is refused.
pub fn append_private(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .mode(0o600)
        .open(path)?;
    regular_only(file, path)
}

/// An owner-only directory and its missing parents.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// One new directory (not its parents) with `mode`.
pub fn create_dir(dir: &Path, mode: u32) -> io::Result<()> {
    std::fs::DirBuilder::new().mode(mode).create(dir)
}

/// Replaces `path` with `bytes`, whole: written to a new owner-only file
/// beside it, on disk, then renamed over it. A crash leaves the old file
/// or the new one, never half of one; a device, FIFO, socket or directory
/// at `path` is left alone and the write refused.
pub fn replace_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir)?;
    }
    refuse_unless_replaceable(path)?;
    let staged = beside(path, "new");
    let written = create_private(&staged).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&staged, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&staged);
            Err(e)
        }
    }
}

/// Errors unless `path` is absent, a regular file or a link (a rename
/// replaces the link, not what it points to).
fn refuse_unless_replaceable(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(meta) if meta.is_file() || meta.file_type().is_symlink() => Ok(()),
        Ok(meta) => Err(io::Error::other(format!(
            "it is a {}, which podbay does not replace",
            Place::from_type(meta.file_type()).words()
        ))),
    }
}

/// A hidden name beside `path` no other process picks: `.NAME.WHAT.RANDOM`.
fn beside(path: &Path, what: &str) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "podbay".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{what}.{:016x}", fastrand::u64(..)))
}

/// `path` opened for writing *into* it, as cp writes into `/dev/null` or a
/// FIFO: never created, never truncated, never a regular file or a
/// directory (those are replaced by a rename instead). A FIFO nobody
/// reads is refused at once rather than waited on.
pub fn open_special(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => {
                io::Error::other("it is a FIFO that nobody reads; start its reader first")
            }
            _ => e,
        })?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() || kind.is_dir() {
        return Err(io::Error::other(
            "it changed into a file or directory while opened",
        ));
    }
    set_blocking(&file)?;
    Ok(file)
}

fn set_blocking(file: &File) -> io::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = fcntl(file, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) & !OFlag::O_NONBLOCK;
    fcntl(file, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}

fn regular_only(file: File, path: &Path) -> io::Result<File> {
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        set_blocking(&file)?;
        return Ok(file);
    }
    Err(io::Error::other(format!(
        "{} is a {}, not a regular file",
        path.display(),
        Place::from_type(kind).words()
    )))
}

/// The most podbay reads of a config, theme, history or spec file.
pub const STATE_MOST_BYTES: u64 = 1 << 20;

/// Puts the staged `item` at `to`: renamed over it when `to` is absent, a
/// file or a link; written into it when it is a device or FIFO, as cp
/// writes into `/dev/null` (a file only); a socket is refused.
pub fn put(item: &Path, to: &Path) -> io::Result<()> {
    match Place::of(to)? {
        Place::Special("socket") => Err(io::Error::other("it is a socket")),
        Place::Special(kind) => {
            if !std::fs::symlink_metadata(item).is_ok_and(|m| m.is_file()) {
                return Err(io::Error::other(format!(
                    "it is a {kind}, and podbay writes only a file into one, as cp does"
                )));
            }
            let mut into = open_special(to)?;
            io::copy(&mut File::open(item)?, &mut into).map(drop)
        }
        _ => std::fs::rename(item, to),
    }
}

/// Where a stream written as it comes goes (a packet capture): a new
/// owner-only file, never one already there (a link is not followed), or
/// into a FIFO or device (`/dev/null`, a FIFO Wireshark reads), as
/// tcpdump -w writes into one.
pub fn create_stream_file(path: &Path) -> io::Result<File> {
    match Place::of(path)? {
        Place::Absent => create_new(path, 0o600),
        Place::Special("socket") => Err(io::Error::other("it is a socket")),
        Place::Special(_) => open_special(path),
        Place::Regular => Err(io::Error::other(
            "it already exists, and podbay never writes over a file: choose another name or remove it",
        )),
        Place::Directory => Err(io::Error::other("it is a directory: name a file in it")),
    }
}

/// Removes the file podbay created at `path` if it is still empty (a
/// capture that got nothing): no empty file left to puzzle over. Anything
/// else there is left alone.
pub fn remove_if_empty(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
        let _ = std::fs::remove_file(path);
    }
}

/// `dir/name` if nothing is there, else the first free `stem (N).ext`, as
/// a browser names a second download: a download never replaces a file.
pub fn free_name(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if std::fs::symlink_metadata(&first).is_err() {
        return first;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    (1..)
        .map(|n| dir.join(format!("{stem} ({n}){ext}")))
        .find(|path| std::fs::symlink_metadata(path).is_err())
        .unwrap_or(first)
}

/// Why local state could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// Not a regular file (a FIFO, a device, a directory): in words.
    NotRegular(String),
    /// Larger than the cap: its size and the cap.
    TooLarge {
        size: u64,
        cap: u64,
    },
    Io(io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotRegular(kind) => write!(f, "it is a {kind}, not a regular file"),
            ReadError::TooLarge { size, cap } => {
                write!(f, "it holds {size} bytes, more than the {cap} podbay reads")
            }
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// The bytes of the regular file at `path` (a link to one is followed),
/// at most `cap` of them; `None` when there is none. Opening never blocks.
pub fn read_state(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReadError::Io(e)),
    };
    let meta = file.metadata().map_err(ReadError::Io)?;
    let place = Place::from_type(meta.file_type());
    if place != Place::Regular {
        return Err(ReadError::NotRegular(place.words().into()));
    }
    if meta.len() > cap {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            cap,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file growing while read is cut at the cap plus one byte, and said.
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            cap,
        });
    }
    Ok(Some(bytes))
}

/// The most a kubeconfig may hold (kubectl reads any size; one of 16 MiB
/// is already thousands of clusters).
pub const CONFIG_MOST_BYTES: u64 = 16 << 20;

/// A kubeconfig's bytes: a regular file (a link to one is followed), or a
/// pipe or device as `--kubeconfig <(vault read …)` gives one, which is
/// read to its end. At most [`CONFIG_MOST_BYTES`].
pub fn read_config(path: &Path) -> io::Result<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::other("it is a directory"));
    }
    let mut bytes = Vec::new();
    file.take(CONFIG_MOST_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > CONFIG_MOST_BYTES {
        return Err(io::Error::other(format!(
            "it holds more than the {} MiB podbay reads",
            CONFIG_MOST_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// Staging directories of copies under way, removed by [`remove_stages`]
/// when a signal ends podbay before they are dropped.
static STAGES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn stages() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    STAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A private directory where a copy is put together before it is moved
/// into place; removed with all it holds when dropped.
#[derive(Debug)]
pub struct Stage {
    path: PathBuf,
}

impl Stage {
    /// A new stage in `dir` (beside the destination: the same filesystem,
    /// so the final rename is atomic).
    pub fn new_in(dir: &Path) -> io::Result<Stage> {
        let path = dir.join(format!(".podbay-cp-{:016x}", fastrand::u64(..)));
        // Made and listed at once, and never once podbay is ending: a stage
        // made after the sweep would be left behind.
        let mut stages = stages();
        if ENDING.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "podbay is ending",
            ));
        }
        create_dir(&path, 0o700)?;
        stages.push(path.clone());
        Ok(Stage { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        // Removed, then forgotten: while this thread removes it, a signal's
        // sweep on another still finds it listed, and removes it too before
        // podbay exits (forgotten first, it was left half removed).
        remove_tree(&self.path);
        stages().retain(|p| *p != self.path);
    }
}

/// Set once podbay is ending on a signal: no stage is made after.
static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Removes every stage still there, and lets no other be made: podbay is
/// ending on a signal.
pub fn remove_stages() {
    {
        let _listed = stages();
        ENDING.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    remove_stages_where(|_| true);
}

fn remove_stages_where(going: impl Fn(&Path) -> bool) {
    let mut stages = stages();
    let (going, staying): (Vec<PathBuf>, Vec<PathBuf>) =
        stages.drain(..).partition(|stage| going(stage));
    *stages = staying;
    drop(stages);
    for stage in going {
        remove_tree(&stage);
    }
}

fn remove_tree(dir: &Path) {
    let _ = make_writable(dir);
    let _ = std::fs::remove_dir_all(dir);
}

/// Read-only directories (as a container had them) cannot be emptied.
fn make_writable(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o700))?;
            make_writable(&entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_new_file_is_never_made_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"untouched").unwrap();
        let planted = dir.path().join("planted");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(create_private(&planted).is_err());
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(create_private(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        assert!(create_private(&victim).is_err(), "an existing file is kept");
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        let made = dir.path().join("made");
        drop(create_private(&made).unwrap());
        let mode = std::fs::metadata(&made).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_whole_replacement_leaves_a_link_target_and_a_fifo_alone() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"untouched").unwrap();
        let link = dir.path().join("last.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        replace_whole(&link, b"{}").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        assert_eq!(std::fs::read(&link).unwrap(), b"{}");
        assert!(
            !std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );

        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let refused = replace_whole(&fifo, b"{}").unwrap_err();
        assert!(refused.to_string().contains("FIFO"), "{refused}");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(left.len(), 3, "no stage left behind: {left:?}");
    }

    #[test]
    fn state_is_read_from_regular_files_only_and_never_past_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            read_state(&dir.path().join("absent"), 10)
                .unwrap()
                .is_none()
        );
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // Would block forever if opened as a reader waits for a writer.
        let refused = read_state(&fifo, 10).unwrap_err().to_string();
        assert_eq!(refused, "it is a FIFO, not a regular file");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let refused = read_state(&zero, 10).unwrap_err().to_string();
        assert_eq!(refused, "it is a character device, not a regular file");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 11]).unwrap();
        let refused = read_state(&big, 10).unwrap_err().to_string();
        assert_eq!(refused, "it holds 11 bytes, more than the 10 podbay reads");
        std::fs::write(&big, b"ok").unwrap();
        assert_eq!(read_state(&big, 10).unwrap().unwrap(), b"ok");
        let refused = read_state(dir.path(), 10).unwrap_err().to_string();
        assert_eq!(refused, "it is a directory, not a regular file");
    }

    #[test]
    fn a_special_file_is_written_into_never_created_or_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let mut null = open_special(Path::new("/dev/null")).unwrap();
        null.write_all(b"gone").unwrap();
        assert!(open_special(&dir.path().join("absent")).is_err());
        assert!(!dir.path().join("absent").exists());
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let refused = open_special(&fifo).unwrap_err().to_string();
        assert!(refused.contains("nobody reads"), "{refused}");
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let mut writer = open_special(&fifo).unwrap();
        writer.write_all(b"hi").unwrap();
        let mut got = [0u8; 2];
        (&reader).read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hi");
        let regular = dir.path().join("regular");
        std::fs::write(&regular, b"x").unwrap();
        assert!(open_special(&regular).is_err());
    }

    #[test]
    fn a_second_download_gets_a_name_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            free_name(dir.path(), "heap.hprof"),
            dir.path().join("heap.hprof")
        );
        std::fs::write(dir.path().join("heap.hprof"), b"1").unwrap();
        assert_eq!(
            free_name(dir.path(), "heap.hprof"),
            dir.path().join("heap (1).hprof")
        );
        std::fs::write(dir.path().join("heap (1).hprof"), b"2").unwrap();
        assert_eq!(
            free_name(dir.path(), "heap.hprof"),
            dir.path().join("heap (2).hprof")
        );
        std::os::unix::fs::symlink("/nowhere", dir.path().join("core")).unwrap();
        assert_eq!(
            free_name(dir.path(), "core"),
            dir.path().join("core (1)"),
            "a dangling link is something"
        );
        assert_eq!(free_name(dir.path(), ".env"), dir.path().join(".env"));
    }

    #[test]
    fn the_log_is_appended_to_but_never_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"untouched").unwrap();
        let log = dir.path().join("podbay.log");
        std::os::unix::fs::symlink(&victim, &log).unwrap();
        assert!(append_private(&log).is_err());
        std::fs::remove_file(&log).unwrap();
        append_private(&log).unwrap().write_all(b"a\n").unwrap();
        append_private(&log).unwrap().write_all(b"b\n").unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), b"a\nb\n");
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
    }

    #[test]
    fn a_stage_goes_with_its_read_only_directories_on_drop_or_signal() {
        let dir = tempfile::tempdir().unwrap();
        let dropped = Stage::new_in(dir.path()).unwrap();
        let kept = Stage::new_in(dir.path()).unwrap();
        for stage in [&dropped, &kept] {
            std::fs::create_dir_all(stage.path().join("d/ro")).unwrap();
            std::fs::set_permissions(
                stage.path().join("d"),
                std::fs::Permissions::from_mode(0o500),
            )
            .unwrap();
        }
        let dropped_path = dropped.path().to_path_buf();
        drop(dropped);
        assert!(!dropped_path.exists());
        let kept_path = kept.path().to_path_buf();
        // As remove_stages does, but only this test's (others run beside it).
        remove_stages_where(|stage| stage.starts_with(dir.path()));
        assert!(!kept_path.exists(), "removed as podbay ends on a signal");
        std::mem::forget(kept);
    }
}

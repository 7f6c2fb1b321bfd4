//! What `podbay cp` is asked to do, before any byte moves: which side is
//! the pod's (`[NS/]POD:PATH`, as kubectl writes it), and the `tar` command
//! lines that read or write a path in a container, either directly or
//! through a debug container that sees the target's root at
//! `/proc/1/root`; and how a copy's progress reads.

use std::time::Duration;

/// One side of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// `-`: a tar stream on stdin or stdout.
    Stdio,
    Local(std::path::PathBuf),
    Pod(PodPath),
}

/// `[NS/]POD:PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodPath {
    pub namespace: Option<String>,
    pub pod: String,
    pub path: String,
}

impl Location {
    /// Reads one argument as kubectl does: `POD:PATH` or `NS/POD:PATH` is
    /// the pod's side when the part before the colon is a name (so
    /// `./a:b` and `/tmp/x:y` stay local).
    pub fn parse(arg: &str) -> Location {
        if arg == "-" {
            return Location::Stdio;
        }
        if let Some((before, path)) = arg.split_once(':') {
            let (namespace, pod) = match before.split_once('/') {
                Some((ns, pod)) => (Some(ns), pod),
                None => (None, before),
            };
            if is_name(pod) && namespace.is_none_or(is_name) {
                return Location::Pod(PodPath {
                    namespace: namespace.map(str::to_string),
                    pod: pod.to_string(),
                    path: path.to_string(),
                });
            }
        }
        Location::Local(arg.into())
    }
}

/// `arg` as a pod's side would be written, for an `arg` that is one but
/// for its case (`web-0X:/tmp`): no pod can be named with capitals, so it
/// was read as a local path; `None` for anything else.
pub fn lower_case_pod(arg: &str) -> Option<String> {
    let (before, path) = arg.split_once(':')?;
    let lower = before.to_ascii_lowercase();
    if lower == before {
        return None;
    }
    match Location::parse(&format!("{lower}:{path}")) {
        Location::Pod(_) => Some(format!("{lower}:{path}")),
        _ => None,
    }
}

/// A DNS subdomain, as pod and namespace names are.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
}

/// A path in a container, split where tar needs it: the directory to
/// change into and the name to archive (or to extract as).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Absolute, or empty for the container's working directory.
    pub dir: String,
    pub name: String,
}

/// Splits a path in the container. `/` alone and paths ending in `..` name
/// no one thing to copy; `.` components are dropped.
pub fn split(path: &str) -> Result<Split, String> {
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    match parts.split_last() {
        None => Err(format!(
            "{path:?} names no file or directory to copy; give one, as POD:/var/log/app.log"
        )),
        Some((last, _)) if *last == ".." => Err(format!(
            "{path:?} ends in \"..\"; name the directory itself"
        )),
        Some((last, dirs)) => {
            let joined = dirs.join("/");
            let dir = match (absolute, joined.is_empty()) {
                (true, _) => format!("/{joined}"),
                (false, true) => String::new(),
                (false, false) => joined,
            };
            Ok(Split {
                dir,
                name: (*last).to_string(),
            })
        }
    }
}

/// How the container's files are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `tar` in the container itself (kubectl's way).
    Direct,
    /// `tar` in a debug container that targets it: the target's files are
    /// under its main process's root, `/proc/1/root` (its working directory
    /// is `/proc/1/cwd`, for relative paths).
    Through,
}

impl Route {
    /// Where `dir` (as [`split`] gave it) is, seen from the process that
    /// runs tar; `None` is its working directory.
    pub fn dir(self, dir: &str) -> Option<String> {
        match (self, dir) {
            (Route::Direct, "") => None,
            (Route::Direct, dir) => Some(dir.to_string()),
            (Route::Through, "") => Some("/proc/1/cwd".into()),
            (Route::Through, dir) if dir.starts_with('/') => {
                Some(format!("/proc/1/root{}", dir.trim_end_matches('/')))
            }
            (Route::Through, dir) => Some(format!("/proc/1/cwd/{dir}")),
        }
    }

    /// `tar` writing `name` (in `dir`) to stdout.
    pub fn pack(self, at: &Split) -> Vec<String> {
        let mut argv = vec!["tar".to_string(), "cf".into(), "-".into()];
        if let Some(dir) = self.dir(&at.dir) {
            argv.extend(["-C".into(), dir]);
        }
        // `--` so a name starting with `-` is a name.
        argv.extend(["--".into(), at.name.clone()]);
        argv
    }

    /// `tar` extracting stdin into `dir`: `m`, as kubectl, so the times
    /// are the extraction's; `o`, so the files are the container user's
    /// (GNU tar and busybox both read it so when extracting).
    pub fn unpack(self, dir: &str) -> Vec<String> {
        let mut argv = vec!["tar".to_string(), "xmof".into(), "-".into()];
        if let Some(dir) = self.dir(dir) {
            argv.extend(["-C".into(), dir]);
        }
        argv
    }

    /// The size of what is to be copied, in KiB (`du -sk`: busybox and GNU
    /// alike), for the progress bar and to bound what may arrive.
    pub fn measure(self, at: &Split) -> Vec<String> {
        let path = match self.dir(&at.dir) {
            Some(dir) => format!("{dir}/{}", at.name),
            None => at.name.clone(),
        };
        vec!["du".into(), "-sk".into(), "--".into(), path]
    }
}

/// Resolves the links in directory `$1` (absolute, in the target's
/// terms) within the target's root, one component at a time: through
/// `/proc/1/root` the kernel would resolve an absolute link against the
/// debug container's own root instead (`/var/run` → the debugger's
/// `/run`). Prints the directory without links.
const RESOLVE_SCRIPT: &str = r#"root=/proc/1/root; rest="${1#/}"; out=; n=0
while [ -n "$rest" ]; do
  comp="${rest%%/*}"
  if [ "$comp" = "$rest" ]; then rest=; else rest="${rest#*/}"; fi
  case "$comp" in
    ''|.) continue;;
    ..) out="${out%/*}"; continue;;
  esac
  if [ -L "$root$out/$comp" ]; then
    n=$((n+1)); [ "$n" -gt 40 ] && { echo "too many levels of links in $1" >&2; exit 1; }
    target=$(readlink "$root$out/$comp")
    case "$target" in
      /*) out=; rest="${target#/}${rest:+/$rest}";;
      *) rest="$target${rest:+/$rest}";;
    esac
  else
    out="$out/$comp"
  fi
done
printf '%s\n' "${out:-/}""#;

/// `sh -c` with the resolving script for `dir` (see [`RESOLVE_SCRIPT`]).
pub fn resolve_command(dir: &str) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        RESOLVE_SCRIPT.into(),
        "sh".into(),
        dir.into(),
    ]
}

/// Which of a container's volume mounts (volume, path) holds the absolute
/// `path`, the deepest where mounts nest: a container that is not running
/// has no files but these, which outlive it.
pub fn mount_holding<'a>(
    mounts: &'a [(String, String)],
    path: &str,
) -> Option<&'a (String, String)> {
    if !path.starts_with('/') {
        return None;
    }
    let components = |p: &str| -> Vec<String> {
        p.split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .map(str::to_string)
            .collect()
    };
    let wanted = components(path);
    if wanted.iter().any(|c| c == "..") {
        return None;
    }
    mounts
        .iter()
        .filter(|(_, at)| wanted.starts_with(&components(at)))
        .max_by_key(|(_, at)| components(at).len())
}

/// The KiB figure at the start of `du -sk`'s output.
pub fn parse_du(output: &str) -> Option<u64> {
    output.split_whitespace().next()?.parse().ok()
}

/// One progress line: `12.0 MiB / 48.0 MiB  40.1 MB/s  1 s left`.
pub fn line(done: u64, total: Option<u64>, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    let mut text = size(done);
    if let Some(total) = total.filter(|t| *t >= done) {
        text.push_str(&format!(" / {}", size(total)));
        let per_second = done as f64 / seconds.max(0.001);
        if done > 0 && per_second > 0.0 {
            let left = (total - done) as f64 / per_second;
            text.push_str(&format!(
                "  {}  {:.0} s left",
                rate(done, seconds),
                left.ceil()
            ));
            return text;
        }
    }
    text.push_str(&format!("  {}", rate(done, seconds)));
    text
}

pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

pub fn rate(bytes: u64, seconds: f64) -> String {
    format!("{:.1} MB/s", bytes as f64 / seconds.max(0.001) / 1e6)
}

/// What tar (or sh) said went wrong: its first line that is not a closing
/// remark, with the debug container's view of paths taken out (the user
/// named `/var/x`, not `/proc/1/root/var/x`).
pub fn complaint(stderr: &str) -> Option<String> {
    const REMARKS: [&str; 3] = [
        "Exiting with failure status",
        "Error is not recoverable",
        "Removing leading",
    ];
    let line = stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !REMARKS.iter().any(|r| l.contains(r)))?;
    Some(
        line.trim_start_matches("tar: ")
            .trim_start_matches("sh: ")
            .replace("/proc/1/root/", "/")
            .replace("/proc/1/root", "/")
            .replace("/proc/1/cwd/", ""),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_on_the_deepest_volume_that_holds_it() {
        let mounts = vec![
            ("data".to_string(), "/var".to_string()),
            ("crash".to_string(), "/var/crash".to_string()),
        ];
        let holding = |p: &str| mount_holding(&mounts, p).map(|(v, _)| v.as_str());
        assert_eq!(holding("/var/crash/core.ledger.1"), Some("crash"));
        assert_eq!(holding("/var/crash/"), Some("crash"));
        assert_eq!(
            holding("/var/crashes"),
            Some("data"),
            "a component, not a prefix"
        );
        assert_eq!(holding("/etc/ledger"), None);
        assert_eq!(
            holding("var/crash/core"),
            None,
            "relative: the working directory is gone"
        );
        assert_eq!(holding("/var/crash/../../etc"), None);
    }

    fn pod(ns: Option<&str>, pod: &str, path: &str) -> Location {
        Location::Pod(PodPath {
            namespace: ns.map(str::to_string),
            pod: pod.into(),
            path: path.into(),
        })
    }

    #[test]
    fn locations_read_as_kubectl_reads_them() {
        assert_eq!(
            Location::parse("api-0:/var/log"),
            pod(None, "api-0", "/var/log")
        );
        assert_eq!(
            Location::parse("shop/redis-0:data/x"),
            pod(Some("shop"), "redis-0", "data/x")
        );
        assert_eq!(Location::parse("-"), Location::Stdio);
        for local in ["./a:b", "/tmp/x:y", "heap.hprof", "Dir:/x", "a/b/c:d", ":x"] {
            assert_eq!(
                Location::parse(local),
                Location::Local(local.into()),
                "{local}"
            );
        }
    }

    #[test]
    fn paths_split_into_a_directory_and_one_name() {
        let s = split("/var/dump/heap.hprof").unwrap();
        assert_eq!(
            (s.dir.as_str(), s.name.as_str()),
            ("/var/dump", "heap.hprof")
        );
        let s = split("/etc/").unwrap();
        assert_eq!((s.dir.as_str(), s.name.as_str()), ("/", "etc"));
        let s = split("logs/./app.log").unwrap();
        assert_eq!((s.dir.as_str(), s.name.as_str()), ("logs", "app.log"));
        let s = split("app.log").unwrap();
        assert_eq!((s.dir.as_str(), s.name.as_str()), ("", "app.log"));
        assert!(split("/").unwrap_err().contains("names no file"));
        assert!(split("").is_err());
        assert!(split("/var/..").unwrap_err().contains(".."));
    }

    #[test]
    fn through_a_debug_container_paths_go_by_the_targets_root_and_cwd() {
        let abs = split("/var/dump/heap.hprof").unwrap();
        assert_eq!(
            Route::Through.pack(&abs),
            [
                "tar",
                "cf",
                "-",
                "-C",
                "/proc/1/root/var/dump",
                "--",
                "heap.hprof"
            ]
        );
        assert_eq!(
            Route::Direct.pack(&abs),
            ["tar", "cf", "-", "-C", "/var/dump", "--", "heap.hprof"]
        );
        let top = split("/etc").unwrap();
        assert_eq!(Route::Through.dir(&top.dir).unwrap(), "/proc/1/root");
        let rel = split("app.log").unwrap();
        assert_eq!(
            Route::Direct.pack(&rel),
            ["tar", "cf", "-", "--", "app.log"]
        );
        assert_eq!(
            Route::Through.measure(&rel),
            ["du", "-sk", "--", "/proc/1/cwd/app.log"]
        );
        assert_eq!(
            Route::Through.unpack("logs"),
            ["tar", "xmof", "-", "-C", "/proc/1/cwd/logs"]
        );
        assert_eq!(Route::Direct.unpack(""), ["tar", "xmof", "-"]);
    }

    #[test]
    fn du_output_gives_kibibytes() {
        assert_eq!(parse_du("48832\t/proc/1/root/var/dump\n"), Some(48832));
        assert_eq!(parse_du("du: cannot access 'x'"), None);
    }

    #[test]
    fn the_line_says_bytes_total_rate_and_time_left() {
        let half = line(24 << 20, Some(48 << 20), Duration::from_secs(1));
        assert_eq!(half, "24.0 MiB / 48.0 MiB  25.2 MB/s  1 s left");
        assert_eq!(line(512, None, Duration::from_secs(1)), "512 B  0.0 MB/s");
        // A total that was an estimate and was passed is dropped.
        assert!(!line(50 << 20, Some(48 << 20), Duration::from_secs(1)).contains(" / "));
    }
    #[test]
    fn tar_complaints_name_the_users_path() {
        let gnu = "tar: /proc/1/root/nope: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now\n";
        assert_eq!(
            complaint(gnu).unwrap(),
            "/nope: Cannot open: No such file or directory"
        );
        let busybox = "tar: can't open '/proc/1/cwd/x': No such file or directory\n";
        assert_eq!(
            complaint(busybox).unwrap(),
            "can't open 'x': No such file or directory"
        );
        assert_eq!(complaint("tar: Removing leading `/'\n"), None);
    }
}

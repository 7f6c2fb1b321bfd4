//! A container's files as the file browser shows them: the shell command
//! that lists a directory (busybox and GNU alike), its output parsed, and
//! the small path arithmetic of moving about (in the container's own
//! terms, `/var/log`, whatever route reaches it).

use crate::model::text::sanitize;

/// What a directory entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    /// A symlink and where it points (as stored: an absolute target is in
    /// the container's root).
    Link(String),
    /// A device, FIFO or socket.
    Special,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub kind: Kind,
    /// Permission bits (and setuid/setgid/sticky).
    pub mode: u32,
    pub size: u64,
    pub uid: u32,
    pub gid: u32,
    /// Seconds since the epoch.
    pub mtime: i64,
}

/// The shell script that lists `$1`: per entry, `stat`'s raw mode (hex),
/// size, uid, gid and mtime, a tab, the name, NUL, the link target (empty
/// for anything but a link), NUL. Names may hold anything but NUL and `/`.
const LIST_SCRIPT: &str = r#"cd -- "$1" || exit 1
for f in .* *; do
  case "$f" in .|..) continue;; esac
  [ -e "$f" ] || [ -L "$f" ] || continue
  s=$(stat -c '%f %s %u %g %Y' -- "$f" 2>/dev/null) || continue
  l=
  if [ -L "$f" ]; then l=$(readlink -- "$f"); fi
  printf '%s\t%s\0%s\0' "$s" "$f" "$l"
done"#;

/// `sh -c` with the listing script for `dir` (as tar's side sees it).
pub fn list_command(dir: &str) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        LIST_SCRIPT.into(),
        "sh".into(),
        dir.into(),
    ]
}

/// The first `limit` bytes of a file.
pub fn head_command(path: &str, limit: usize) -> Vec<String> {
    vec![
        "head".into(),
        "-c".into(),
        limit.to_string(),
        "--".into(),
        path.into(),
    ]
}

pub fn remove_command(path: &str) -> Vec<String> {
    vec!["rm".into(), "-rf".into(), "--".into(), path.into()]
}

/// Parses the listing script's output, directories first, then by name.
pub fn parse_listing(output: &[u8]) -> Vec<Entry> {
    let mut fields = output.split(|b| *b == 0);
    let mut entries = Vec::new();
    while let (Some(head), Some(link)) = (fields.next(), fields.next()) {
        let Some(tab) = head.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let (stat, name) = (&head[..tab], &head[tab + 1..]);
        let stat = String::from_utf8_lossy(stat);
        let parts: Vec<&str> = stat.split_whitespace().collect();
        let [raw, size, uid, gid, mtime] = parts[..] else {
            continue;
        };
        let Ok(raw) = u32::from_str_radix(raw, 16) else {
            continue;
        };
        let kind = match raw & 0o170000 {
            0o040000 => Kind::Dir,
            0o100000 => Kind::File,
            0o120000 => Kind::Link(String::from_utf8_lossy(link).into_owned()),
            _ => Kind::Special,
        };
        entries.push(Entry {
            name: String::from_utf8_lossy(name).into_owned(),
            kind,
            mode: raw & 0o7777,
            size: size.parse().unwrap_or(0),
            uid: uid.parse().unwrap_or(0),
            gid: gid.parse().unwrap_or(0),
            mtime: mtime.parse().unwrap_or(0),
        });
    }
    entries.sort_by(|a, b| {
        let dir = |e: &Entry| !matches!(e.kind, Kind::Dir);
        dir(a).cmp(&dir(b)).then_with(|| a.name.cmp(&b.name))
    });
    entries
}

/// `drwxr-xr-x`, as ls writes it.
pub fn mode_text(entry: &Entry) -> String {
    let kind = match entry.kind {
        Kind::Dir => 'd',
        Kind::Link(_) => 'l',
        Kind::File => '-',
        Kind::Special => 'c',
    };
    let mut text = String::with_capacity(10);
    text.push(kind);
    for (shift, special, set, unset) in [
        (6, 0o4000, 's', 'S'),
        (3, 0o2000, 's', 'S'),
        (0, 0o1000, 't', 'T'),
    ] {
        let bits = (entry.mode >> shift) & 0o7;
        text.push(if bits & 4 != 0 { 'r' } else { '-' });
        text.push(if bits & 2 != 0 { 'w' } else { '-' });
        text.push(match (bits & 1 != 0, entry.mode & special != 0) {
            (true, true) => set,
            (false, true) => unset,
            (true, false) => 'x',
            (false, false) => '-',
        });
    }
    text
}

/// `dir` and `name` joined (`/` + `etc` is `/etc`).
pub fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// The directory above `dir` (`/` stays `/`).
pub fn parent(dir: &str) -> String {
    let trimmed = dir.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(0) | None => "/".into(),
        Some(at) => trimmed[..at].into(),
    }
}

/// Where a symlink in `dir` leads, in the container's terms: an absolute
/// target is in the container's root (not the debug container's, which a
/// `cd` through `/proc/1/root` would reach), a relative one from `dir`.
pub fn follow(dir: &str, target: &str) -> String {
    let start = if target.starts_with('/') { "/" } else { dir };
    let mut parts: Vec<&str> = start.split('/').filter(|p| !p.is_empty()).collect();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// What `tab` makes of `typed` given the paths that begin so: their
/// longest common start, and the candidates to show when several remain.
pub fn complete(typed: &str, candidates: &[String]) -> (String, Vec<String>) {
    let Some(first) = candidates.first() else {
        return (typed.to_string(), Vec::new());
    };
    let mut common = first.len();
    for other in &candidates[1..] {
        common = common.min(
            first
                .char_indices()
                .zip(other.chars())
                .take_while(|((_, a), b)| a == b)
                .last()
                .map_or(0, |((at, a), _)| at + a.len_utf8()),
        );
    }
    let longer = if common > typed.len() {
        first[..common].to_string()
    } else {
        typed.to_string()
    };
    let shown = if candidates.len() > 1 {
        candidates
            .iter()
            .map(|c| {
                let c = c.trim_end_matches('/');
                let name = c.rsplit('/').next().unwrap_or(c);
                let dir = if candidates.iter().any(|x| x == &format!("{c}/")) {
                    "/"
                } else {
                    ""
                };
                format!("{name}{dir}")
            })
            .collect()
    } else {
        Vec::new()
    };
    (longer, shown)
}

/// A file's first bytes as lines to read: text as it is (control
/// characters made visible), anything else as a hex dump.
pub fn preview_lines(bytes: &[u8], whole: bool) -> Vec<String> {
    let text = std::str::from_utf8(bytes)
        .ok()
        .filter(|t| !t.contains('\0'));
    let mut lines: Vec<String> = match text {
        Some(text) => text.lines().map(|l| sanitize(l).into_owned()).collect(),
        None => bytes
            .chunks(16)
            .enumerate()
            .map(|(row, chunk)| {
                let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
                let ascii: String = chunk
                    .iter()
                    .map(|&b| {
                        if (0x20..0x7f).contains(&b) {
                            b as char
                        } else {
                            '.'
                        }
                    })
                    .collect();
                format!("{:08x}  {:<47}  |{ascii}|", row * 16, hex.join(" "))
            })
            .collect(),
    };
    if !whole {
        lines.push(format!(
            "… (the first {} KiB; download it with g for the rest)",
            bytes.len() / 1024
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_parses_kinds_modes_links_and_odd_names() {
        let out = b"41ed 4096 0 0 1700000000\tlogs\0\0\
81a4 50331667 65532 65532 1700000100\theap.hprof\0\0\
a1ff 11 0 0 1700000200\tcurrent\0heap.hprof\0\
81a4 3 0 0 1\tname\twith tab\0\0\
garbage\0\0\
21b6 0 0 0 1\tnull\0\0";
        let entries = parse_listing(out);
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            ["logs", "current", "heap.hprof", "name\twith tab", "null"]
        );
        assert_eq!(entries[0].kind, Kind::Dir);
        assert_eq!(entries[1].kind, Kind::Link("heap.hprof".into()));
        assert_eq!(entries[2].size, 50331667);
        assert_eq!(entries[2].uid, 65532);
        assert_eq!(mode_text(&entries[0]), "drwxr-xr-x");
        assert_eq!(mode_text(&entries[2]), "-rw-r--r--");
        assert_eq!(entries[4].kind, Kind::Special);
        let setuid = Entry {
            mode: 0o4755,
            ..entries[2].clone()
        };
        assert_eq!(mode_text(&setuid), "-rwsr-xr-x");
    }

    #[test]
    fn paths_move_up_and_links_resolve_in_the_containers_root() {
        assert_eq!(join("/", "etc"), "/etc");
        assert_eq!(join("/var", "log"), "/var/log");
        assert_eq!(parent("/var/log"), "/var");
        assert_eq!(parent("/var"), "/");
        assert_eq!(parent("/"), "/");
        assert_eq!(follow("/etc/ssl", "/usr/share/ca"), "/usr/share/ca");
        assert_eq!(follow("/etc/ssl", "../alt/./certs"), "/etc/alt/certs");
        assert_eq!(follow("/a", "../../../x"), "/x");
    }

    #[test]
    fn tab_completes_to_the_common_start_and_lists_the_rest() {
        let one = vec!["./fixes/".to_string()];
        assert_eq!(complete("./fi", &one), ("./fixes/".into(), vec![]));
        let two = vec!["./fix.json".to_string(), "./fixes/".to_string()];
        let (longer, shown) = complete("./f", &two);
        assert_eq!(longer, "./fix");
        assert_eq!(shown, ["fix.json", "fixes/"]);
        assert_eq!(complete("./z", &[]), ("./z".into(), vec![]));
    }

    #[test]
    fn text_reads_as_text_and_the_rest_as_a_hex_dump() {
        assert_eq!(preview_lines(b"a\nb\x1b[31m\n", true), ["a", "b\\e[31m"]);
        let dump = preview_lines(b"\x7fELF\0\x01", false);
        assert!(
            dump[0].starts_with("00000000  7f 45 4c 46 00 01"),
            "{dump:?}"
        );
        assert!(dump[0].ends_with("|.ELF..|"), "{dump:?}");
        assert!(dump[1].contains("download it with g"));
    }
}

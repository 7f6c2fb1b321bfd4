//! Hand-made streams, one per way a container could try to write outside
//! the destination (kubectl cp's CVEs and their cousins), and good ones.

use super::*;

/// A tar entry with any name, type, link and size field, as a hostile
/// container could write it (the builder refuses `..` and absolute paths).
fn raw(name: &[u8], kind: tar::EntryType, link: &[u8], data: &[u8], size: Option<u64>) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    {
        let old = header.as_old_mut();
        old.name[..name.len()].copy_from_slice(name);
        old.linkname[..link.len()].copy_from_slice(link);
    }
    header.set_entry_type(kind);
    header.set_mode(0o644);
    header.set_size(size.unwrap_or(data.len() as u64));
    header.set_mtime(1_700_000_000);
    header.set_cksum();
    let mut out = header.as_bytes().to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn file(name: &str, data: &[u8]) -> Vec<u8> {
    raw(name.as_bytes(), tar::EntryType::Regular, b"", data, None)
}

fn dir(name: &str) -> Vec<u8> {
    raw(name.as_bytes(), tar::EntryType::Directory, b"", b"", None)
}

fn symlink(name: &str, to: &str) -> Vec<u8> {
    raw(
        name.as_bytes(),
        tar::EntryType::Symlink,
        to.as_bytes(),
        b"",
        None,
    )
}

fn archive(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut out = entries.concat();
    out.extend_from_slice(&[0; 1024]);
    out
}

/// Unpacks into a fresh stage inside a scratch directory that also holds a
/// `victim` file beside the stage: nothing may touch it.
fn run(stream: &[u8], top: &str) -> (Result<Unpacked, Refusal>, tempfile::TempDir) {
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(scratch.path().join("victim"), b"untouched").unwrap();
    let stage = scratch.path().join("stage");
    std::fs::create_dir(&stage).unwrap();
    let result = unpack(stream, top, &stage, Budget::measured(1 << 20));
    (result, scratch)
}

/// Refused as hostile, with `words` in the sentence, and nothing written
/// beside the stage.
fn refused(stream: &[u8], top: &str, words: &str) {
    let (result, scratch) = run(stream, top);
    match result {
        Err(Refusal::Hostile(why)) | Err(Refusal::Broken(why)) => {
            assert!(why.contains(words), "{why:?} lacks {words:?}")
        }
        other => panic!("expected a refusal with {words:?}, got {other:?}"),
    }
    let beside: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut beside = beside;
    beside.sort();
    assert_eq!(beside, ["stage", "victim"]);
    assert_eq!(
        std::fs::read(scratch.path().join("victim")).unwrap(),
        b"untouched"
    );
}

#[test]
fn a_directory_with_files_links_and_modes_comes_out_whole() {
    let stream = archive(&[
        dir("logs/"),
        file("logs/app.log", b"line 1\nline 2\n"),
        dir("logs/old/"),
        file("logs/old/app.1.log", b"older\n"),
        symlink("logs/current", "app.log"),
        symlink("logs/old/up", "../app.log"),
        raw(
            b"logs/again",
            tar::EntryType::Link,
            b"logs/app.log",
            b"",
            None,
        ),
    ]);
    let (result, scratch) = run(&stream, "logs");
    let done = result.unwrap();
    assert_eq!((done.files, done.bytes), (3, 20));
    let stage = scratch.path().join("stage/logs");
    assert_eq!(
        std::fs::read(stage.join("current")).unwrap(),
        b"line 1\nline 2\n"
    );
    assert_eq!(
        std::fs::read(stage.join("old/up")).unwrap(),
        b"line 1\nline 2\n"
    );
    assert_eq!(
        std::fs::read(stage.join("again")).unwrap(),
        b"line 1\nline 2\n"
    );
    assert_eq!(
        std::fs::read(stage.join("old/app.1.log")).unwrap(),
        b"older\n"
    );
}

#[test]
fn setuid_and_setgid_bits_are_dropped_and_said() {
    let mut header = tar::Header::new_gnu();
    header.set_path("su").unwrap();
    header.set_mode(0o6755);
    header.set_size(2);
    header.set_cksum();
    let mut entry = header.as_bytes().to_vec();
    entry.extend_from_slice(b"#!");
    entry.resize(1024, 0);
    let (result, scratch) = run(&archive(&[entry]), "su");
    let done = result.unwrap();
    assert!(done.notes[0].contains("setuid"), "{:?}", done.notes);
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(scratch.path().join("stage/su"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o755);
}

#[test]
fn parent_components_are_refused() {
    refused(
        &archive(&[file("logs/../../victim", b"x")]),
        "logs",
        "climbs out",
    );
    refused(&archive(&[file("../victim", b"x")]), "logs", "climbs out");
}

#[test]
fn absolute_paths_are_refused() {
    refused(
        &archive(&[file("/tmp/evil", b"x")]),
        "logs",
        "absolute path",
    );
}

#[test]
fn entries_beside_what_was_asked_are_refused() {
    refused(
        &archive(&[file("logs/a", b"x"), file("victim", b"x")]),
        "logs",
        "not under logs",
    );
}

#[test]
fn a_file_written_through_a_symlink_entry_is_refused() {
    // CVE-2019-11246's shape: a link into the parent, then a file "in" it.
    refused(
        &archive(&[
            dir("logs/"),
            symlink("logs/out", "."),
            file("logs/out/x", b"x"),
        ]),
        "logs",
        "through the symlink",
    );
    // The link pointing outside is refused first.
    refused(
        &archive(&[
            dir("logs/"),
            symlink("logs/out", "../.."),
            file("logs/out/victim", b"x"),
        ]),
        "logs",
        "points outside",
    );
}

#[test]
fn a_link_through_another_link_cannot_climb_out() {
    // up → ../../.. is the item's top; esc goes through it and above.
    refused(
        &archive(&[
            dir("logs/"),
            dir("logs/a/"),
            dir("logs/a/b/"),
            dir("logs/a/b/c/"),
            symlink("logs/a/b/c/up", "../../.."),
            symlink("logs/esc", "a/b/c/up/../../../../victim"),
        ]),
        "logs",
        "points outside",
    );
}

#[test]
fn symlinks_pointing_outside_are_refused() {
    for to in [
        "/etc/passwd",
        "../victim",
        "../../victim",
        "a/../../../victim",
    ] {
        refused(
            &archive(&[dir("logs/"), symlink("logs/l", to)]),
            "logs",
            "points outside",
        );
    }
    // The item itself a symlink: what it names is not what was copied.
    refused(
        &archive(&[symlink("localtime", "UTC")]),
        "localtime",
        "points outside",
    );
}

#[test]
fn hard_links_to_anything_but_a_file_already_sent_are_refused() {
    refused(
        &archive(&[
            dir("logs/"),
            raw(b"logs/h", tar::EntryType::Link, b"/etc/passwd", b"", None),
        ]),
        "logs",
        "absolute path",
    );
    refused(
        &archive(&[
            dir("logs/"),
            raw(
                b"logs/h",
                tar::EntryType::Link,
                b"logs/../victim",
                b"",
                None,
            ),
        ]),
        "logs",
        "climbs out",
    );
    refused(
        &archive(&[
            dir("logs/"),
            raw(b"logs/h", tar::EntryType::Link, b"logs/later", b"", None),
        ]),
        "logs",
        "not a file it sent before",
    );
}

#[test]
fn device_nodes_and_fifos_are_refused() {
    refused(
        &archive(&[raw(b"disk", tar::EntryType::Block, b"", b"", None)]),
        "disk",
        "device node",
    );
    refused(
        &archive(&[raw(b"tty", tar::EntryType::Char, b"", b"", None)]),
        "tty",
        "device node",
    );
    refused(
        &archive(&[
            dir("d/"),
            raw(b"d/pipe", tar::EntryType::Fifo, b"", b"", None),
        ]),
        "d",
        "FIFO",
    );
}

#[test]
fn names_with_control_characters_are_refused_and_shown_sanitized() {
    let (result, _scratch) = run(
        &archive(&[dir("logs/"), file("logs/\x1b]52;c;evil\x07x", b"x")]),
        "logs",
    );
    match result {
        Err(Refusal::Hostile(why)) => {
            assert!(why.contains("control characters"), "{why}");
            assert!(!why.contains('\x1b') && !why.contains('\x07'), "{why:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_size_field_that_lies_is_refused() {
    // Says 4 KiB, sends 10 bytes, and the stream ends.
    let mut lying = raw(
        b"heap",
        tar::EntryType::Regular,
        b"",
        b"0123456789",
        Some(4096),
    );
    lying.truncate(512 + 10);
    refused(&lying, "heap", "ended inside heap");
}

#[test]
fn a_stream_that_never_ends_is_cut_at_the_bound() {
    // An endless file: far more than the 1 MiB measured.
    struct Endless(Vec<u8>, usize);
    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.1 < self.0.len() {
                let n = buf.len().min(self.0.len() - self.1);
                buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
                self.1 += n;
                return Ok(n);
            }
            buf.fill(b'z');
            Ok(buf.len())
        }
    }
    let header = raw(b"heap", tar::EntryType::Regular, b"", b"", Some(1 << 40));
    let scratch = tempfile::tempdir().unwrap();
    let result = unpack(
        Endless(header, 0),
        "heap",
        scratch.path(),
        Budget::measured(1 << 20),
    );
    match result {
        Err(Refusal::Hostile(why)) => assert!(why.contains("goes on past 1 MiB"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn garbage_and_empty_streams_are_not_archives() {
    refused(&[0x42; 2048], "x", "not a valid tar archive");
    refused(&[], "x", "held no x");
    refused(&archive(&[]), "x", "held no x");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// A good archive with bytes overwritten anywhere (headers re-summed
    /// half the time, so the damage reaches the checks past the checksum):
    /// refused or unpacked, it never leaves the stage.
    #[test]
    fn damaged_archives_never_leave_the_stage(
        edits in proptest::collection::vec((0usize..4096, proptest::prelude::any::<u8>()), 1..24),
        resum in proptest::prelude::any::<bool>(),
    ) {
        let mut stream = archive(&[
            dir("item/"),
            file("item/a.txt", b"alpha"),
            symlink("item/l", "a.txt"),
            raw(b"item/h", tar::EntryType::Link, b"item/a.txt", b"", None),
            dir("item/sub/"),
            file("item/sub/b", &[7; 700]),
        ]);
        for (at, byte) in edits {
            let at = at % stream.len();
            stream[at] = byte;
        }
        if resum {
            for block in stream.chunks_mut(512) {
                let mut header = tar::Header::new_old();
                header.as_mut_bytes().copy_from_slice(block);
                if header.entry_size().is_ok() && block[257..262] == *b"ustar" {
                    header.set_cksum();
                    block.copy_from_slice(header.as_bytes());
                }
            }
        }
        let (_result, scratch) = run(&stream, "item");
        let mut beside: Vec<_> = std::fs::read_dir(scratch.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        beside.sort();
        proptest::prop_assert_eq!(beside, ["stage", "victim"]);
        assert_contained(&scratch.path().join("stage"));
        proptest::prop_assert_eq!(std::fs::read(scratch.path().join("victim")).unwrap(), b"untouched");
    }
}

#[test]
fn a_copy_takes_what_it_was_measured_at_and_more_or_what_it_was_told() {
    use super::BudgetWhy;
    let measured = Budget::for_item(Some(10 << 20), None);
    assert_eq!(
        (measured.bytes, measured.why),
        ((10 << 20) + (1 << 30), BudgetWhy::Measured)
    );
    let big = Budget::for_item(Some(1 << 30), None);
    assert_eq!(big.bytes, 16 << 30, "16 times a big item");
    let unmeasured = Budget::for_item(None, None);
    assert_eq!(
        (unmeasured.bytes, unmeasured.why),
        (4 << 30, BudgetWhy::Unmeasured)
    );
    let asked = Budget::for_item(Some(1 << 30), Some(8 << 20));
    assert_eq!((asked.bytes, asked.why), (8 << 20, BudgetWhy::Asked));
}

//! podbay's workload mode: the program of the simulator's distroless and
//! server images. It serves its ports (see [`super::serve`]); a distroless
//! service also logs like one, a request every few seconds. It runs until
//! it is killed. It needs nothing from its root but itself;
//! in a root of its own (where the host allows namespaces) it also leaves
//! what real services leave for an SRE to take out: its log in a file
//! and, for payments-api, a heap dump.

use std::io::Write as _;
use std::time::Duration;

/// Runs the service named `name` forever.
pub fn run(name: &str) -> ! {
    let name: &'static str = Box::leak(name.into());
    // Servers on a full base log the requests they serve, and their
    // background work.
    let server = !matches!(name, "payments-api" | "ledger");
    super::serve::start(name);
    if name == "indexer" {
        std::thread::spawn(grow_cache);
    }
    let mut log_file = own_root(name).then(|| leave_files(name)).flatten();
    let mut request: u64 = fastrand::u64(1 << 20..1 << 32);
    let parent = nix::unistd::getppid();
    loop {
        // Where containers are plain processes, nothing else ends this one
        // when the simulator dies.
        if nix::unistd::getppid() != parent {
            std::process::exit(0);
        }
        request += 1;
        let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ");
        // The background work a server logs between the requests it serves
        // (as the tools images' containers log theirs); a service's own.
        let line = match server {
            true => format!("{now} {name}/{name} handled request id={request} status=200"),
            false => format!(
                "{now} INFO {name}: handled POST /v1/charges id={request:x} status=200 in {}ms",
                3 + fastrand::u64(..40)
            ),
        };
        // Locked for the line only: the threads serving requests log too.
        let written = {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{line}").and_then(|()| stdout.flush())
        };
        if written.is_err() {
            std::process::exit(0);
        }
        if let Some(file) = log_file.as_mut()
            && writeln!(file, "{line}").is_err()
        {
            log_file = None;
        }
        std::thread::sleep(Duration::from_secs(5));
    }
}

/// How fast the indexer's cache grows: its 96 MiB limit is reached about
/// a minute and a half after it starts.
const CACHE_GROWTH_PER_SECOND: usize = 1 << 20;

/// The indexer's leak: a cache that is filled and never evicted, written
/// so its pages are resident (memory a kubelet counts), until the kubelet
/// kills it.
fn grow_cache() {
    let mut cache: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut shard = vec![0u8; CACHE_GROWTH_PER_SECOND];
        fastrand::fill(&mut shard);
        cache.push(shard);
        if cache.len().is_multiple_of(16) {
            let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ");
            println!(
                "{now} WARN indexer: term cache holds {} MiB, nothing evicted",
                cache.len()
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Its image's config is at `/etc/NAME/`: this root is the container's,
/// not the host's (where containers are plain processes, it writes nothing).
fn own_root(name: &str) -> bool {
    std::path::Path::new(&format!("/etc/{name}/config.yaml")).is_file()
}

/// Where the heap dump goes, and how big it is (about what a small JVM or
/// Go service's dump weighs).
pub const HEAP_DUMP: &str = "/var/dump/heap.hprof";
const HEAP_DUMP_BYTES: usize = 48 << 20;

/// Opens `/var/log/NAME/app.log` for appending and, for payments-api,
/// writes its heap dump in the background.
fn leave_files(name: &str) -> Option<std::fs::File> {
    if name == "payments-api" {
        std::thread::spawn(write_heap_dump);
    }
    let dir = format!("/var/log/{name}");
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(format!("{dir}/app.log"))
        .ok()
}

/// An hprof header, then random bytes.
fn write_heap_dump() {
    let path = std::path::Path::new(HEAP_DUMP);
    if path.exists() {
        return;
    }
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let _ = write_dump(path, b"JAVA PROFILE 1.0.2\0", HEAP_DUMP_BYTES >> 20);
    }
}

/// A dump as a program leaves one: `header`, then `mib` MiB of random
/// bytes (a copy that changes one is caught by its checksum), written under
/// a temporary name and renamed, so a copy never finds half a dump.
pub fn write_dump(path: &std::path::Path, header: &[u8], mib: usize) -> std::io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let partial = path.with_file_name(format!(".{name}.partial"));
    let written = (|| -> std::io::Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&partial)?);
        file.write_all(header)?;
        let mut rng = fastrand::Rng::new();
        let mut chunk = vec![0u8; 1 << 20];
        for _ in 0..mib {
            rng.fill(&mut chunk);
            file.write_all(&chunk)?;
        }
        file.flush()
    })();
    match written {
        Ok(()) => std::fs::rename(&partial, path),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

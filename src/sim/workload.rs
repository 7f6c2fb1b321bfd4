//! podbay's workload mode: the program of the simulator's distroless
//! images. It logs like a small service, one request a few seconds, and
//! runs until it is killed. It needs nothing from its root but itself.

use std::io::Write as _;
use std::time::Duration;

/// Runs the service named `name` forever.
pub fn run(name: &str) -> ! {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "{} INFO {name}: listening on :8080 (config /etc/{name}/config.yaml)",
        jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ")
    );
    let mut request: u64 = fastrand::u64(1 << 20..1 << 32);
    let parent = nix::unistd::getppid();
    loop {
        // Where containers are plain processes, nothing else ends this one
        // when the simulator dies.
        if nix::unistd::getppid() != parent {
            std::process::exit(0);
        }
        request += 1;
        let millis = 3 + fastrand::u64(..40);
        let line = format!(
            "{} INFO {name}: handled POST /v1/charges id={request:x} status=200 in {millis}ms",
            jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ")
        );
        if writeln!(stdout, "{line}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            std::process::exit(0);
        }
        std::thread::sleep(Duration::from_secs(5));
    }
}

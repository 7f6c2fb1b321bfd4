//! What the processes of a container use, read from `/proc`: the
//! simulator's stand-in for a container's cgroup (its CPU time and memory,
//! and which processes are in it).

use std::collections::HashMap;

/// A process tree's CPU time and resident memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Measured {
    pub cpu_ns: u64,
    pub rss: u64,
}

/// One process as `/proc/PID/stat` tells it.
#[derive(Debug, Clone, Copy)]
struct Proc {
    ppid: u32,
    /// Its own CPU ticks and those of the children it has reaped.
    ticks: u64,
    rss_pages: u64,
    /// The runtime's own process (a shim), which a node does not count in
    /// the container's cgroup: only what is below it.
    shim: bool,
}

/// What the runtime's processes call themselves (see `sandbox::shim`).
const SHIM_NAME: &str = "podbay-shim";

/// `/proc/PID/stat`: `pid (comm) state ppid …`; after the command name,
/// utime is field 11, stime, cutime, cstime 14, …, rss 21.
fn parse_stat(stat: &str) -> Option<Proc> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let fields: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let number = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(Proc {
        ppid: u32::try_from(number(1)?).ok()?,
        ticks: number(11)? + number(12)? + number(13)? + number(14)?,
        rss_pages: number(21)?,
        shim: comm == SHIM_NAME,
    })
}

fn read_procs() -> HashMap<u32, Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    dir.filter_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Some((pid, parse_stat(&stat)?))
    })
    .collect()
}

/// The CPU time and memory of each root's tree: the root, every process
/// below it, and the children they reaped (a cgroup's totals, near enough).
fn measure_trees(procs: &HashMap<u32, Proc>, roots: &[u32]) -> Vec<Option<Measured>> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, proc) in procs {
        children.entry(proc.ppid).or_default().push(*pid);
    }
    let tick_ns = 1_000_000_000 / clock_ticks();
    let page = page_size();
    roots
        .iter()
        .map(|root| {
            procs.get(root)?;
            let mut total = Measured::default();
            let mut stack = vec![*root];
            while let Some(pid) = stack.pop() {
                if let Some(proc) = procs.get(&pid).filter(|p| !p.shim) {
                    total.cpu_ns += proc.ticks * tick_ns;
                    total.rss += proc.rss_pages * page;
                }
                stack.extend(children.get(&pid).into_iter().flatten());
            }
            Some(total)
        })
        .collect()
}

/// What the tree under each of `roots` uses now (`None`: it is gone).
pub(super) fn measure(roots: &[u32]) -> Vec<Option<Measured>> {
    measure_trees(&read_procs(), roots)
}

/// The processes of the tree under `root`, read from each one's
/// `children` (a few files, not all of `/proc`), the runtime's shims left
/// out.
pub(super) fn tree_of(root: u32) -> Vec<u32> {
    let mut tree = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if parse_stat(&stat).is_some_and(|p| !p.shim) {
            tree.push(pid);
        }
        // Every thread's children: a process forks from any of its threads.
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let path = task.path().join("children");
            if let Ok(children) = std::fs::read_to_string(path) {
                stack.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    tree.sort_unstable();
    tree
}

/// The CPU time `pids` have used (their own and their reaped children's).
pub(super) fn cpu_ns_of(pids: &[u32]) -> u64 {
    let tick_ns = 1_000_000_000 / clock_ticks();
    pids.iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|stat| parse_stat(&stat))
        .map(|proc| proc.ticks * tick_ns)
        .sum()
}

fn clock_ticks() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|t| *t > 0)
        .unwrap_or(100)
}

fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_command_name() {
        // A command name with spaces and parentheses, as a process may set.
        let stat = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 \
                    100 10000000 2048 18446744073709551615";
        let proc = parse_stat(stat).expect("a stat line");
        assert_eq!(proc.ppid, 17);
        assert_eq!(proc.ticks, 250 + 50 + 7 + 3);
        assert_eq!(proc.rss_pages, 2048);
        assert!(!proc.shim);
        assert!(parse_stat("4242 (cut").is_none());
        let shim = "7 (podbay-shim) S 1 7 7 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1 1000 300 0";
        assert!(parse_stat(shim).is_some_and(|p| p.shim));
    }

    /// pid 10 is a shim: the tree below it counts, not the shim itself.
    #[test]
    fn a_tree_counts_its_descendants_and_nothing_else() {
        let procs: HashMap<u32, Proc> = [
            (10, 1, 100, 10),
            (11, 10, 50, 5),
            (12, 11, 25, 1),
            (20, 1, 1000, 100),
        ]
        .into_iter()
        .map(|(pid, ppid, ticks, rss_pages)| {
            let shim = pid == 10;
            (
                pid,
                Proc {
                    ppid,
                    ticks,
                    rss_pages,
                    shim,
                },
            )
        })
        .collect();
        let tick_ns = 1_000_000_000 / clock_ticks();
        let measured = measure_trees(&procs, &[10, 20, 99]);
        assert_eq!(
            measured[0],
            Some(Measured {
                cpu_ns: 75 * tick_ns,
                rss: 6 * page_size()
            })
        );
        assert_eq!(measured[1].map(|m| m.cpu_ns), Some(1000 * tick_ns));
        assert_eq!(measured[2], None, "a process that is gone");
    }

    #[test]
    fn a_child_is_found_in_its_parents_tree() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep");
        let tree = tree_of(std::process::id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            tree.contains(&std::process::id()) && tree.contains(&child.id()),
            "{tree:?}"
        );
    }

    #[test]
    fn this_process_is_measured_from_proc() {
        let me = std::process::id();
        let measured = measure_trees(&read_procs(), &[me]);
        let mine = measured[0].expect("this test's own process");
        assert!(mine.rss > 1 << 20, "{mine:?}");
    }
}

//! Host memory: checked before the inputs and the FP64 reference are allocated, so that a large
//! -N is one clear line with the figures instead of an abort ("memory allocation of … failed").
//!
//! What a process may allocate is the least of what the machine has free (MemAvailable) and
//! what its limits leave it: the address-space and data limits (`ulimit -v`, `ulimit -d`: an
//! allocation past them fails however much memory is free) and its cgroup's memory limit (a
//! container's: past it the kernel kills the process). The big host buffers are then allocated
//! fallibly ([`try_vec`]), so a check that guessed wrong is the same one line, not an abort.

use crate::error::{Result, RuntimeError};
use std::path::{Path, PathBuf};

/// What bounds the memory this process may still take, and how much it leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct Available {
    pub bytes: u64,
    /// Which bound it is, for the message: `MemAvailable in /proc/meminfo`,
    /// `the address-space limit, ulimit -v`, ...
    pub bound: String,
}

/// The soft limit `resource` minus what is already `used`, if the limit is set. (A macro: the
/// resource's type differs between C libraries.)
macro_rules! rlimit_headroom {
    ($resource:expr, $used:expr) => {{
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes one rlimit through a valid pointer.
        match unsafe { libc::getrlimit($resource, &mut lim) } {
            0 if lim.rlim_cur != libc::RLIM_INFINITY => Some((lim.rlim_cur as u64).saturating_sub($used.unwrap_or(0))),
            _ => None,
        }
    }};
}

/// The tightest of the bounds that can be read; `None` where none can (then nothing is checked).
pub fn host_available() -> Option<Available> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| parse_kib(&t, "MemAvailable:"));
    let bounds = [
        meminfo.map(|b| Available { bytes: b, bound: "MemAvailable in /proc/meminfo".into() }),
        // The address space already mapped (libraries, thread stacks) counts against the limit.
        rlimit_headroom!(libc::RLIMIT_AS, parse_kib(&status, "VmSize:")).map(|b| Available { bytes: b, bound: "the address-space limit, ulimit -v".into() }),
        // Since Linux 4.7 private anonymous mappings (large allocations) count as data.
        rlimit_headroom!(libc::RLIMIT_DATA, parse_kib(&status, "VmData:")).map(|b| Available { bytes: b, bound: "the data-segment limit, ulimit -d".into() }),
        cgroup_headroom(&std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default(), Path::new("/sys/fs/cgroup")),
    ];
    bounds.into_iter().flatten().min_by_key(|a| a.bytes)
}

/// `kB` figure of the line starting with `key` (/proc/meminfo, /proc/self/status), in bytes.
fn parse_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The least headroom under a memory limit of this process's cgroup or of its ancestors (a limit
/// on a parent bounds the children), cgroup v2 (`memory.max`, `memory.current`) or v1
/// (`memory.limit_in_bytes`, `memory.usage_in_bytes`). Page cache counts as usage there but is
/// reclaimed before the limit is hit, so it is left out of what is used.
fn cgroup_headroom(proc_cgroup: &str, root: &Path) -> Option<Available> {
    let mut dirs: Vec<(PathBuf, bool)> = Vec::new();
    for line in proc_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (bases, v2) = match controllers {
            "" => (vec![root.to_path_buf(), root.join("unified")], true),
            c if c.split(',').any(|c| c == "memory") => (vec![root.join("memory")], false),
            _ => continue,
        };
        for base in bases {
            let mut dir = base.join(path.trim_start_matches('/'));
            loop {
                dirs.push((dir.clone(), v2));
                if dir == base || !dir.pop() {
                    break;
                }
            }
        }
    }
    let read = |dir: &Path, file: &str| std::fs::read_to_string(dir.join(file)).ok().map(|t| t.trim().to_string());
    dirs.into_iter()
        .filter_map(|(dir, v2)| {
            let (max, current, cache) = if v2 { ("memory.max", "memory.current", "file ") } else { ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_cache ") };
            let limit: u64 = read(&dir, max)?.parse().ok()?; // "max": no limit
            let used: u64 = read(&dir, current).and_then(|t| t.parse().ok()).unwrap_or(0);
            let cached: u64 = read(&dir, "memory.stat").and_then(|s| s.lines().find_map(|l| l.strip_prefix(cache)?.trim().parse().ok())).unwrap_or(0);
            let bytes = limit.saturating_sub(used.saturating_sub(cached));
            Some(Available { bytes, bound: format!("the cgroup memory limit, {}", dir.join(max).display()) })
        })
        .min_by_key(|a| a.bytes)
}

/// Refuses `need` bytes of host memory for `what` if more than 90% of what is available.
pub fn check_host(what: &str, need: u64) -> Result<()> {
    let Some(available) = host_available() else { return Ok(()) };
    if need as f64 > available.bytes as f64 * 0.9 {
        return Err(RuntimeError::HostOutOfMemory {
            what: what.to_string(),
            need_gib: need as f64 / GIB,
            available_gib: available.bytes as f64 / GIB,
            bound: available.bound,
        });
    }
    Ok(())
}

/// An empty vector with room for `n` elements, or the one-line error naming `what` where the
/// allocation is refused (a limit, or no memory), instead of Rust's abort.
pub fn try_vec<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| RuntimeError::HostAllocation { what: what.to_string(), need_gib: n as f64 * std::mem::size_of::<T>() as f64 / GIB })?;
    Ok(v)
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available() {
        let m = "MemTotal:       16318480 kB\nMemFree:         1000 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(parse_kib(m, "MemAvailable:"), Some(8_000_000 * 1024));
        assert_eq!(parse_kib("MemTotal: 1 kB\n", "MemAvailable:"), None);
    }

    #[test]
    fn refuses_more_than_there_is() {
        let e = check_host("test", u64::MAX).unwrap_err().to_string();
        assert!(e.contains("host memory") && e.contains("GiB"), "{e}");
        check_host("test", 1).unwrap();
    }

    #[test]
    fn a_cgroup_limit_on_the_process_or_a_parent_bounds_it_without_its_page_cache() {
        let root = std::env::temp_dir().join(format!("mra-cgroup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let write = |dir: PathBuf, files: &[(&str, &str)]| {
            std::fs::create_dir_all(&dir).unwrap();
            for (f, t) in files {
                std::fs::write(dir.join(f), t).unwrap();
            }
        };
        // v2: unlimited here, 4 GiB on the parent, 1 GiB used of which 0.5 GiB page cache.
        write(root.join("a/b"), &[("memory.max", "max\n"), ("memory.current", "100\n")]);
        write(root.join("a"), &[("memory.max", "4294967296\n"), ("memory.current", "1073741824\n"), ("memory.stat", "anon 536870912\nfile 536870912\n")]);
        let got = cgroup_headroom("0::/a/b\n", &root).unwrap();
        assert_eq!(got.bytes, 4294967296 - 536870912);
        assert!(got.bound.contains("cgroup memory limit") && got.bound.ends_with("a/memory.max"), "{}", got.bound);
        // v1: the memory controller's line.
        write(root.join("memory/x"), &[("memory.limit_in_bytes", "2147483648\n"), ("memory.usage_in_bytes", "1073741824\n"), ("memory.stat", "cache 10\ntotal_cache 73741824\n")]);
        assert_eq!(cgroup_headroom("4:memory:/x\n0::/\n", &root).unwrap().bytes, 2147483648 - 1000000000);
        assert_eq!(cgroup_headroom("4:cpu:/x\n", &root), None, "no memory controller, no limit");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_refused_allocation_is_an_error_not_an_abort() {
        let e = try_vec::<f64>(usize::MAX / 8, "the test's array").unwrap_err().to_string();
        assert!(e.contains("the test's array") && e.contains("cannot allocate") && !e.contains('\n'), "{e}");
        assert!(try_vec::<f64>(10, "x").unwrap().capacity() >= 10);
    }
}

//! Host memory: checked before the inputs and the FP64 reference are allocated, so that a large
//! -N is one clear line with the figures instead of an abort ("memory allocation of … failed").

use crate::error::{Result, RuntimeError};

/// Bytes the kernel may still give this process without swapping: `MemAvailable` in
/// /proc/meminfo. `None` where that file is absent or unreadable (then nothing is checked).
pub fn host_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Refuses `need` bytes of host memory for `what` if more than 90% of what is available.
pub fn check_host(what: &str, need: u64) -> Result<()> {
    let Some(available) = host_available() else { return Ok(()) };
    if need as f64 > available as f64 * 0.9 {
        return Err(RuntimeError::HostOutOfMemory {
            what: what.to_string(),
            need_gib: need as f64 / GIB,
            available_gib: available as f64 / GIB,
        });
    }
    Ok(())
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available() {
        let m = "MemTotal:       16318480 kB\nMemFree:         1000 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(parse_mem_available(m), Some(8_000_000 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn refuses_more_than_there_is() {
        let e = check_host("test", u64::MAX).unwrap_err().to_string();
        assert!(e.contains("host memory") && e.contains("GiB"), "{e}");
        check_host("test", 1).unwrap();
    }
}

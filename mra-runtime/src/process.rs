//! Running the external tools (clang, clang++, llvm-objdump, nvdisasm, cuobjdump) with a time
//! limit: a compiler that hangs (a stuck NFS mount, a wrapper script waiting on a licence) ends
//! as one error line naming the tool and the limit, instead of an `mra-bench` that never returns.
//!
//! The limit is `MRA_TOOL_TIMEOUT` seconds (default 600, far above any compile here; 0 for none).
//! The wait is also a safe point of `interrupt`: after Ctrl-C or SIGTERM the tool is stopped
//! and reaped, and the error has kind `Interrupted`. Each tool runs in a process group of its
//! own, so that stopping it stops what it started too (clang's linker): no compiler outlives
//! us. (The terminal's Ctrl-C then reaches only mra-bench, which stops the tool itself.)

use std::cell::Cell;
use std::io::{Error, ErrorKind, Read, Result};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const TIMEOUT_ENV: &str = "MRA_TOOL_TIMEOUT";
const DEFAULT_SECS: u64 = 600;

/// The limit `MRA_TOOL_TIMEOUT` asks for: `None` for no limit (0).
pub fn limit() -> Result<Option<Duration>> {
    match std::env::var(TIMEOUT_ENV) {
        Err(_) => Ok(Some(Duration::from_secs(DEFAULT_SECS))),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(0) => Ok(None),
            Ok(s) => Ok(Some(Duration::from_secs(s))),
            Err(_) => Err(Error::new(ErrorKind::InvalidInput, format!("{TIMEOUT_ENV}=`{}` is not a number of seconds (0 for no limit)", v.chars().take(40).collect::<String>()))),
        },
    }
}

/// `cmd.output()` within [`limit`]: stdin closed, stdout and stderr captured. Past the limit the
/// tool is killed and the error (kind `TimedOut`) says so.
pub fn output(cmd: &mut Command) -> Result<Output> {
    output_within(cmd, limit()?)
}

thread_local! {
    /// Tools this thread stopped at their time limit (see [`timeouts`]).
    static TIMEOUTS: Cell<u64> = const { Cell::new(0) };
}

/// How many tools this thread has stopped at their time limit so far. The tuner compares it
/// before and after a candidate: a compiler stopped at the limit reads as "does not compile",
/// which is no verdict on the candidate.
pub fn timeouts() -> u64 {
    TIMEOUTS.with(Cell::get)
}

/// [`output`] with an explicit limit.
pub fn output_within(cmd: &mut Command, limit: Option<Duration>) -> Result<Output> {
    // Nothing new starts once interrupted.
    crate::interrupt::check_io()?;
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn()?;
    // Both pipes drained while the tool runs: a tool that fills one pipe must not block on it.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if crate::interrupt::pending().is_some() {
            stop(&mut child);
            return Err(Error::new(ErrorKind::Interrupted, "interrupted"));
        }
        if let Some(l) = limit.filter(|l| start.elapsed() >= *l) {
            stop(&mut child);
            TIMEOUTS.with(|t| t.set(t.get() + 1));
            // The readers are left to finish on their own (they end with the pipes).
            return Err(Error::new(ErrorKind::TimedOut, format!("did not finish within {} s and was stopped (set {TIMEOUT_ENV} to more seconds, or 0 for no limit)", l.as_secs())));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    };
    Ok(Output { status, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() })
}

/// Stops a tool and whatever it started (its process group): SIGTERM first, so that clang
/// removes its own temporary files, SIGKILL to what is left after a second; the tool is reaped
/// before this returns.
fn stop(child: &mut Child) {
    let group = -(child.id() as libc::pid_t);
    // SAFETY: kill(2) with a process group we made; no memory is involved.
    unsafe { libc::kill(group, libc::SIGTERM) };
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(5));
    }
    // The rest of the group (a linker the tool started) even where the tool itself has ended.
    unsafe { libc::kill(group, libc::SIGKILL) };
    let _ = child.wait();
}

/// Reads `pipe` to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut bytes);
        }
        bytes
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_past_its_limit_is_stopped_with_an_error_that_says_so() {
        let start = Instant::now();
        let e = output_within(Command::new("sleep").arg("30"), Some(Duration::from_secs(1))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert!(e.to_string().contains("within 1 s") && e.to_string().contains(TIMEOUT_ENV), "{e}");
        assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    }

    #[test]
    fn a_tool_past_its_limit_is_stopped_with_what_it_started_and_counted() {
        let before = timeouts();
        // A tool that starts a process of its own and waits for it, as clang waits for lld.
        let pid_file = std::env::temp_dir().join(format!("mra-process-test-{}", std::process::id()));
        let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let e = output_within(Command::new("sh").args(["-c", &script]), Some(Duration::from_millis(300))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert_eq!(timeouts(), before + 1);
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let _ = std::fs::remove_file(&pid_file);
        // Killed; reaped by init soon after (a zombie has no command line).
        let start = Instant::now();
        while std::fs::read(format!("/proc/{}/cmdline", pid.trim())).is_ok_and(|c| !c.is_empty()) {
            assert!(start.elapsed() < Duration::from_secs(5), "the tool's own child {} is still running", pid.trim());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_tool_within_its_limit_gives_its_output_and_status() {
        // More than a pipe's buffer on stdout, some on stderr, a failing status.
        let o = output_within(Command::new("sh").args(["-c", "head -c 200000 /dev/zero; echo oops >&2; exit 3"]), Some(Duration::from_secs(30))).unwrap();
        assert_eq!((o.stdout.len(), o.stderr.as_slice(), o.status.code()), (200_000, &b"oops\n"[..], Some(3)));
        let o = output_within(Command::new("true").arg("x"), None).unwrap();
        assert!(o.status.success());
    }
}

//! Ctrl-C (SIGINT), SIGTERM and SIGHUP. The signal handler only records which signal arrived;
//! the main thread looks at safe points ([`check`]: the wait for a child tool, between
//! candidates, cases, levels, K and timed repetitions) and returns
//! [`RuntimeError::Interrupted`], which propagates to `main`: it removes the scratch
//! directories, says `interrupted` and exits 128 + the signal (130 for SIGINT, 143 for SIGTERM).
//!
//! Nothing is freed, printed or exited from the handler: a handler (or a handler thread, as
//! the `ctrlc` crate runs) that calls `exit` runs the exit handlers while the main thread may
//! be inside malloc, which ended runs in "double free or corruption" (exit 134 or 139).
//! signal-hook's flags are a store to an atomic and nothing else, which is async-signal-safe.

use crate::error::{Result, RuntimeError};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The signal that arrived (0: none).
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
/// Set by the first signal: a second one ends the process at once.
static ARMED: AtomicBool = AtomicBool::new(false);

/// Installs the handlers; called once, first thing in `main`.
pub fn install() -> std::io::Result<()> {
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // A second signal while the first is still on its way to a safe point (an NVRTC call
        // cannot be left halfway, a clean-up may hang on a dead file system) ends the process
        // at once with `_exit(128 + signal)`: async-signal-safe, but it leaves the scratch
        // directories and the tool in flight behind. It must be registered before the flag
        // that arms it, or the first signal would already end the process.
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, &ARMED)?;
        signal_hook::flag::register(sig, &ARMED)?;
        signal_hook::flag::register_usize(sig, &SIGNAL, sig as usize)?;
    }
    Ok(())
}

/// The signal that asked the process to stop, if one did.
pub fn pending() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s as i32),
    }
}

/// A safe point: `Err(RuntimeError::Interrupted)` once a signal arrived.
pub fn check() -> Result<()> {
    match pending() {
        Some(_) => Err(RuntimeError::Interrupted),
        None => Ok(()),
    }
}

/// [`check`] for code that returns `std::io::Error` (kind `Interrupted`).
pub fn check_io() -> std::io::Result<()> {
    match pending() {
        Some(_) => Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted")),
        None => Ok(()),
    }
}

/// The exit status of a process the signal stopped, as a shell reports one: 128 + the signal.
pub fn exit_status() -> Option<i32> {
    pending().map(|s| 128 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run by [`a_signal_is_recorded_and_a_second_one_ends_the_process`] in a child process:
    /// the flag is global, and other tests of this process must not see it.
    #[test]
    fn child_interrupt() {
        let Ok(second) = std::env::var("MRA_TEST_INTERRUPT_CHILD") else { return };
        install().unwrap();
        assert!(check().is_ok());
        signal_hook::low_level::raise(SIGTERM).unwrap();
        assert_eq!((pending(), exit_status()), (Some(SIGTERM), Some(143)), "recorded, the process goes on");
        assert!(matches!(check(), Err(RuntimeError::Interrupted)));
        assert_eq!(check_io().unwrap_err().kind(), std::io::ErrorKind::Interrupted);
        if second == "1" {
            signal_hook::low_level::raise(SIGINT).unwrap();
            unreachable!("a second signal ends the process");
        }
        std::process::exit(7);
    }

    #[test]
    fn a_signal_is_recorded_and_a_second_one_ends_the_process() {
        for (second, code) in [("0", 7), ("1", 130)] {
            let o = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "interrupt::tests::child_interrupt", "--nocapture", "--test-threads=1"])
                .env("MRA_TEST_INTERRUPT_CHILD", second)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(code), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }
}

//! Every byte a command writes to standard output goes through here, so that one policy holds
//! everywhere:
//!
//! - A closed pipe (`mra-bench levels | head -1`) ends the program quietly, exactly as it ends
//!   `cat`: by SIGPIPE, which shells do not report (the pipeline's status is the reader's; under
//!   `set -o pipefail` it is 141). A cut-short `validate | head` therefore never claims success.
//!   Rust ignores SIGPIPE, so the write fails with EPIPE; we restore the default action and
//!   raise the signal.
//! - Any other write error (`levels > /dev/full`) is a one-line error and a non-zero exit.
//!
//! Each write is flushed, so an error shows up at the write that caused it, not at exit.

use std::io::Write;

/// Writes `text` to standard output (see the module docs for the error policy).
pub fn write(text: &str) -> Result<(), String> {
    write_bytes(text.as_bytes())
}

/// [`write`] for bytes that are not text (`transform --output -`: a .npy file).
pub fn write_bytes(bytes: &[u8]) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => end_like_cat(),
        Err(e) => Err(format!("writing to standard output: {e}")),
    }
}

/// Ends the process by SIGPIPE with the default action (no message), as `cat` ends.
fn end_like_cat() -> ! {
    // SAFETY: resetting a signal's disposition and raising it have no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // Not reached (SIGPIPE's default action ends the process); the shell's code for it otherwise.
    std::process::exit(128 + libc::SIGPIPE)
}

/// `outln!("x = {x}")?`: one line to standard output through [`write`].
#[macro_export]
macro_rules! outln {
    () => { $crate::out::write("\n") };
    ($($arg:tt)*) => { $crate::out::write(&(format!($($arg)*) + "\n")) };
}

/// `out!("{src}")?`: text without a newline through [`write`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(&format!($($arg)*)) };
}

//! Every byte a command writes to standard output goes through here, so that one policy holds
//! everywhere:
//!
//! - A closed pipe (`mra-bench levels | head -1`) ends the program quietly with status 0: the
//!   reader chose to stop reading, as with `cat file | head -1` (cat is ended by SIGPIPE, which
//!   shells do not report; Rust ignores SIGPIPE, so the write fails with EPIPE and we exit 0).
//! - Any other write error (`levels > /dev/full`) is a one-line error and a non-zero exit.
//!
//! Each write is flushed, so an error shows up at the write that caused it, not at exit.

use std::io::Write;

/// Writes `text` to standard output (see the module docs for the error policy).
pub fn write(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("writing to standard output: {e}")),
    }
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

//! Scratch directories in flight (one per clang compile or disassembly), so that an interrupt
//! can remove them: Drop does not run when a signal ends the process.

use std::path::PathBuf;
use std::sync::Mutex;

static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

pub(crate) fn register(path: PathBuf) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(path);
}

pub(crate) fn unregister(path: &std::path::Path) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != path);
}

/// Removes every registered scratch directory; called from the interrupt handler.
pub fn remove_all() {
    let dirs = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner()));
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

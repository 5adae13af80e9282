//! Scratch directories in flight (one per clang compile or disassembly), so that an interrupt
//! can remove them: Drop does not run when a signal ends the process.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The live directories; `None` once [`remove_all`] ran (the process is about to exit).
static LIVE: Mutex<Option<Vec<PathBuf>>> = Mutex::new(Some(Vec::new()));

/// Records a directory just created. After [`remove_all`] it is removed at once instead, so
/// that a compile racing with the interrupt leaves nothing behind either.
pub(crate) fn register(path: PathBuf) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    match live.as_mut() {
        Some(dirs) => dirs.push(path),
        None => {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

pub(crate) fn unregister(path: &Path) {
    if let Some(dirs) = LIVE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        dirs.retain(|p| p != path);
    }
}

/// Removes every registered scratch directory, and any registered later; called from the
/// interrupt handler just before the process exits.
pub fn remove_all() {
    let dirs = LIVE.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

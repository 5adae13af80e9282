//! Scratch directories in flight (one per clang compile or disassembly), so that an interrupt
//! can remove them: Drop does not run when a signal ends the process.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The live directories; `None` once [`remove_all`] ran (the process is about to exit).
static LIVE: Mutex<Option<Vec<PathBuf>>> = Mutex::new(Some(Vec::new()));

/// Creates directory `path` and records it, under one lock, so that an interrupt sees either
/// no directory or a recorded one (a directory created between the two would outlive the
/// exit). After [`remove_all`] nothing is created: `ErrorKind::Interrupted`.
pub(crate) fn create(path: &Path) -> std::io::Result<()> {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dirs) = live.as_mut() else {
        return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "the process is being interrupted"));
    };
    std::fs::create_dir(path)?;
    dirs.push(path.to_path_buf());
    Ok(())
}

pub(crate) fn unregister(path: &Path) {
    if let Some(dirs) = LIVE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        dirs.retain(|p| p != path);
    }
}

/// Removes every registered scratch directory, and any registered later; called by `main` on
/// an interrupt, just before the process exits (a thread's compile may still own one).
pub fn remove_all() {
    let dirs = LIVE.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
    for d in dirs {
        remove_while_written(&d);
    }
}

/// Removes `dir` although a compiler (a child process the interrupt did not stop) may still be
/// adding files to it: one `remove_dir_all` can then fail with the directory not empty (seen
/// once under load in the SIGTERM test), so it retries for up to half a second.
fn remove_while_written(dir: &Path) {
    for _ in 0..100 {
        if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_written_during_removal_is_still_removed() {
        let dir = std::env::temp_dir().join(format!("mra-scratch-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A writer keeps adding files for a while, as clang does after the interrupt.
        let writer = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                for i in 0..2000 {
                    let _ = std::fs::write(dir.join(format!("f{i}")), b"x");
                }
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(2));
        remove_while_written(&dir);
        writer.join().unwrap();
        // The writer cannot recreate the directory itself, only files in it.
        assert!(!dir.exists(), "{} survived", dir.display());
    }
}

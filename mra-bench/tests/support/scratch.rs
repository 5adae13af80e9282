//! A test's scratch path in the temp directory, named by prefix, process and name, removed
//! (file, link or directory) before use and when the guard goes: a passing test leaves nothing
//! behind. Included by `#[path]` from the test crates that write files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(prefix: &str, name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
        remove(&p);
        Scratch(p)
    }
}

fn remove(p: &Path) {
    if p.is_dir() && !p.is_symlink() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        remove(&self.0);
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

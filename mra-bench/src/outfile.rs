//! Result files (`sweep --json/--csv`): checked before any measurement, written atomically.
//!
//! A sweep can take an hour; a bad path noticed at the end would lose it. So every path is
//! checked up front by creating (and removing) the very temporary file the final write will use,
//! and each file is then written to that temporary file in the same directory and renamed over
//! the target, so a reader never sees half a file and a failed write leaves the old one intact.

use std::path::{Path, PathBuf};

/// Where one result goes.
#[derive(Clone, Debug)]
pub enum Target {
    Stdout,
    /// `flag` (`--json`) names the file in messages.
    File { flag: &'static str, path: PathBuf },
}

impl Target {
    /// Checks that `path` (given to `flag`) can be written: `-` is standard output; otherwise
    /// not empty, not a directory, in a directory that exists and takes a new file.
    pub fn check(flag: &'static str, path: &str) -> Result<Target, String> {
        if path == "-" {
            return Ok(Target::Stdout);
        }
        if path.trim().is_empty() {
            return Err(format!("{flag}: the path is empty; give a file name, or - for standard output"));
        }
        let file = PathBuf::from(path);
        let shown = crate::select::quote(path);
        if file.is_dir() {
            return Err(format!("{flag} {shown}: is a directory; give a file name inside it"));
        }
        let dir = parent(&file);
        if !dir.is_dir() {
            return Err(format!("{flag} {shown}: directory {} does not exist; create it first", dir.display()));
        }
        if is_special(&file) {
            return Ok(Target::File { flag, path: file });
        }
        let tmp = temp_path(&file);
        std::fs::write(&tmp, b"").map_err(|e| format!("{flag} {shown}: cannot create a file in {}: {e}", dir.display()))?;
        let _ = std::fs::remove_file(&tmp);
        Ok(Target::File { flag, path: file })
    }

    /// Writes `text` (atomically for a regular file); the error names the flag and the path.
    pub fn write(&self, text: &str) -> Result<(), String> {
        match self {
            Target::Stdout => crate::out::write(text),
            Target::File { flag, path } => write_atomically(path, text.as_bytes())
                .map_err(|e| format!("{flag} {}: {e}; the results were not saved there", path.display())),
        }
    }
}

/// Temporary file in the same directory, then rename. A device or FIFO (`/dev/stdout`) is
/// written directly: renaming over it would replace the device node.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if is_special(path) {
        return std::fs::write(path, bytes);
    }
    let tmp = temp_path(path);
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Like [`write_atomically`] for a writer that takes a path (the plot backends): `draw` writes a
/// temporary file in the same directory whose name keeps `path`'s extension (the backends pick
/// the image format by it), which is then renamed over `path`.
pub fn write_atomically_with(path: &Path, draw: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    if is_special(path) {
        return draw(path);
    }
    let mut tmp = temp_path(path).into_os_string();
    if let Some(ext) = path.extension() {
        tmp.push(".");
        tmp.push(ext);
    }
    let tmp = PathBuf::from(tmp);
    let result = draw(&tmp).and_then(|()| std::fs::rename(&tmp, path).map_err(|e| format!("cannot write `{}`: {e}", path.display())));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// An existing path that is not a regular file (a device, a FIFO).
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

fn parent(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn temp_path(file: &Path) -> PathBuf {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    parent(file).join(format!(".{name}.{}.tmp", std::process::id()))
}

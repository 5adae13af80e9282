//! Result files (`sweep --json/--csv`, charts, .npy outputs): checked before any measurement,
//! written atomically, and told apart from the inputs (`same_file`).
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
    /// not empty, not a directory, not read-only, in a directory that exists and takes a new file.
    pub fn check(flag: &'static str, path: &str) -> Result<Target, String> {
        if path == "-" {
            return Ok(Target::Stdout);
        }
        if path.trim().is_empty() {
            return Err(format!("{flag}: the path is empty; give a file name, or - for standard output"));
        }
        let file = PathBuf::from(path);
        let shown = crate::select::quote(path);
        // A device, FIFO or the pipe behind /dev/stdout: written as it is, nothing to create.
        if mra_runtime::replace_file::is_special(&file) {
            return Ok(Target::File { flag, path: file });
        }
        if file.is_dir() {
            return Err(format!("{flag} {shown}: is a directory; give a file name inside it"));
        }
        // A symbolic link is written through: its target's directory is where the file goes. A
        // read-only file is refused now, by the rule the write itself applies.
        let target = mra_runtime::replace_file::replaceable(&file).map_err(|e| format!("{flag} {shown}: {e}; make it writable or choose another name"))?;
        let dir = parent(&target);
        if !dir.is_dir() {
            return Err(format!("{flag} {shown}: directory {} does not exist; create it first", dir.display()));
        }
        let tmp = temp_path(&target);
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

/// Temporary file in the same directory, then rename (`mra_runtime::replace_file`: through a
/// symbolic link to its target, a read-only file refused, the old file's mode kept, a device or
/// FIFO such as `/dev/stdout` written directly).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    mra_runtime::replace_file::replace(path, bytes)
}

/// Like [`write_atomically`] for a writer that takes a path (the plot backends): `draw` writes a
/// temporary file in the same directory whose name keeps `path`'s extension (the backends pick
/// the image format by it), which is then renamed over `path`.
pub fn write_atomically_with(path: &Path, draw: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    let suffix = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    let mut drawn = Ok(());
    let written = mra_runtime::replace_file::replace_with(path, &suffix, |tmp| {
        drawn = draw(tmp);
        drawn.clone().map_err(std::io::Error::other)
    });
    drawn?;
    written.map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

fn parent(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn temp_path(target: &Path) -> PathBuf {
    mra_runtime::replace_file::temp_path(target, "")
}

/// Are `a` and `b` the same file, under any names (symlinks, hard links, `./x` and `x`)? Two
/// existing regular files are compared by (device, inode); two paths that do not exist yet by
/// their absolute form (they would become one file). Devices and FIFOs are never "the same
/// file" here: writing twice to /dev/null or a terminal loses nothing.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.is_file() && y.is_file() && x.dev() == y.dev() && x.ino() == y.ino(),
        (Err(_), Err(_)) => absolute(a) == absolute(b),
        _ => false,
    }
}

/// `path` with its directory made canonical (the file itself may not exist).
fn absolute(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => path.to_path_buf(),
    }
}

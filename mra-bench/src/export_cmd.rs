//! `mra-bench export`: the generated kernels for a list of K, as a directory that drops into a
//! C++ build (sources, `mra_transform.h`, device headers, README; see `mra_codegen::export`).
//!
//! The directory is written atomically: staged next to it and renamed into place. An existing
//! non-empty directory is refused unless `--force`, which replaces the export's files one by
//! one (each atomically) and leaves any other file there alone.

use crate::cli::ExportArgs;
use crate::select::{self, CmdResult};
use crate::tuned;
use mra_codegen::export::{self, Entry};
use std::path::{Path, PathBuf};

pub fn run(args: &ExportArgs) -> CmdResult {
    let arch = select::arch(&args.arch)?;
    let dtype = select::dtype(&args.dtype)?;
    let ks: Vec<u32> = select::numbers("-K", &args.ks)?;
    if ks.is_empty() {
        return Err("-K: give at least one K".into());
    }
    let dir = &args.output;
    // Refuse before generating anything: the user's files come first.
    let existing = existing_entries(dir)?;
    if existing > 0 && !args.force {
        return Err(format!(
            "{} is not empty ({existing} entries); choose a new directory, or pass --force to replace the export's files in it",
            dir.display()
        )
        .into());
    }
    let entries = ks.iter().map(|&k| entry(args.level.as_deref(), k, arch, dtype, args.untuned)).collect::<CmdResult<Vec<Entry>>>()?;
    let generator = format!("mra-bench {} export --arch {} -K {} --dtype {dtype}", env!("CARGO_PKG_VERSION"), arch.name, args.ks);
    let files = export::bundle(&entries, &generator)?;
    if existing == 0 {
        write_new(dir, &files)?;
    } else {
        for f in &files {
            write_atomic(&dir.join(&f.path), f.text.as_bytes())?;
        }
    }
    eprintln!("# wrote {} files to {} ({}, {dtype}):", files.len(), dir.display(), arch.name);
    for e in &entries {
        eprintln!("#   K={:<2} {:<10} {} [{}]", e.k, e.kernel.level, e.kernel.entry, e.reason);
    }
    Ok(0)
}

/// The kernel for one K: `-l best` from the tuning database, `-l LEVEL` exactly, or the default;
/// a named or default level in its tuned configuration for `arch` where the database has one.
fn entry(level: Option<&str>, k: u32, arch: &'static mra_codegen::Arch, dtype: mra_codegen::DType, untuned: bool) -> CmdResult<Entry> {
    match level {
        Some(sel) if sel.trim().eq_ignore_ascii_case("best") => tuned::best_entry(k, arch, dtype),
        Some(sel) => {
            let (level, tuned) = tuned::configured(&select::level(sel)?, k, arch, dtype, untuned)?;
            Ok(export::entry_for(&level, k, arch, dtype, format!("-l {sel}{tuned}"))?)
        }
        None => {
            let default = export::default_entry(k, arch, dtype)?;
            let (level, tuned) = tuned::configured(&default.schedule, k, arch, dtype, untuned)?;
            if tuned.is_empty() {
                return Ok(default);
            }
            Ok(export::entry_for(&level, k, arch, dtype, format!("{}{tuned}", default.reason))?)
        }
    }
}

/// Entries in `dir` (0 if it does not exist); an error if it is a file or unreadable.
fn existing_entries(dir: &Path) -> CmdResult<usize> {
    match std::fs::read_dir(dir) {
        Ok(rd) => Ok(rd.count()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) if dir.is_file() => Err(format!("{} is a file, not a directory: {e}", dir.display()).into()),
        Err(e) => Err(format!("cannot read {}: {e}", dir.display()).into()),
    }
}

/// Writes `files` into a staging directory beside `dir`, then renames it to `dir` (which is
/// absent or empty): a reader sees no export or all of it.
fn write_new(dir: &Path, files: &[export::File]) -> CmdResult<()> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(format!("{}: the parent directory {} does not exist", dir.display(), parent.display()).into());
    }
    let name = dir.file_name().ok_or_else(|| format!("{}: not a directory name", dir.display()))?;
    let stage = parent.join(format!(".{}.mra-export-{}", name.to_string_lossy(), std::process::id()));
    let result = (|| -> CmdResult<()> {
        std::fs::create_dir(&stage).map_err(|e| format!("cannot create {}: {e}", stage.display()))?;
        for f in files {
            std::fs::write(stage.join(&f.path), &f.text).map_err(|e| format!("cannot write {}: {e}", stage.join(&f.path).display()))?;
        }
        if dir.exists() {
            // Empty (checked by the caller): rename replaces only an empty directory.
            std::fs::remove_dir(dir).map_err(|e| format!("cannot replace the empty directory {}: {e}", dir.display()))?;
        }
        std::fs::rename(&stage, dir).map_err(|e| format!("cannot move {} to {}: {e}", stage.display(), dir.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&stage);
    }
    result
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> CmdResult<()> {
    let name = path.file_name().ok_or_else(|| format!("{}: not a file name", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {}: {e}", tmp.display()).into());
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot move {} to {}: {e}", tmp.display(), path.display()).into()
    })
}

//! `mra-bench export`: the generated kernels for a list of K, as a directory that drops into a
//! C++ build (sources, `mra_transform.h`, device headers, README; see `mra_codegen::export`).
//!
//! A new directory is written atomically: staged next to it and renamed into place. An existing
//! empty directory is written into (it keeps its owner and mode), each file atomically. An
//! existing non-empty directory is refused unless `--force`, which replaces the export's files
//! one by one (each atomically) and leaves any other file there alone; a name taken by a
//! directory or a read-only file is refused before anything is written.

use crate::cli::ExportArgs;
use crate::select::{self, CmdResult};
use mra_codegen::export::operations::{self, OpKind};
use mra_codegen::export::{self, Entry};
use mra_runtime::configure::{self, Configured, Tuning};
use std::path::{Path, PathBuf};

pub fn run(args: &ExportArgs) -> CmdResult {
    let arch = select::arch(&args.arch)?;
    let dtype = select::dtype(&args.dtype)?;
    // In range and none twice, refused as a malformed command line (status 2).
    let ks: Vec<u32> = select::k_list(&args.ks)?;
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
    let best = args.level.as_deref().is_some_and(configure::is_best);
    // The export's launchers run once over a caller's batch: the API regime's records.
    let tuning = Tuning::open(None, args.untuned, best)?.in_regime(mra_codegen::tuned_defaults::Regime::Api);
    let entries = ks
        .iter()
        .map(|&k| {
            mra_runtime::interrupt::check()?;
            entry(&tuning, args.level.as_deref(), k, arch, dtype)
        })
        .collect::<CmdResult<Vec<Entry>>>()?;
    // The last safe point: from here the export's files are written whole.
    mra_runtime::interrupt::check()?;
    let ops = if args.ops.is_empty() { String::new() } else { format!(" --ops {}", args.ops.join(",")) };
    let generator = format!("mra-bench {} export --arch {} -K {} --dtype {dtype}{ops}", env!("CARGO_PKG_VERSION"), arch.name, args.ks);
    let mut files = export::bundle(&entries, &generator)?;
    let kinds: Vec<OpKind> = args.ops.iter().filter_map(|o| OpKind::parse(o)).collect();
    if !kinds.is_empty() {
        let ops = ks.iter().map(|&k| operations::op_kernels(k, arch, dtype, &kinds)).collect::<Result<Vec<_>, _>>()?.concat();
        files.extend(operations::files(&ops, &kinds, &generator));
    }
    if dir.is_dir() {
        // An existing directory keeps its owner, group and mode (setgid, a read-only one's
        // refusal): the files go into it. Checked before the first write, so that a directory or
        // read-only file in the way of one name does not leave half an export.
        check_replaceable(dir, &files)?;
        write_into(dir, &files, existing == 0)?;
    } else {
        write_new(dir, &files)?;
    }
    eprintln!("# wrote {} files to {} ({}, {dtype}):", files.len(), dir.display(), arch.name);
    for e in &entries {
        eprintln!("#   K={:<2} {:<13} {} [{}]", e.k, e.kernel.level, e.kernel.entry, e.reason);
        if let Some(b) = &e.block {
            eprintln!("#        transform_block: {} ({})", b.kernel.level, b.kernel.entry);
        }
    }
    Ok(0)
}

/// The kernel for one K: `-l best` from the tuning database, `-l LEVEL` exactly, or the default;
/// a named or default level in its tuned configuration for `arch` where the database has one.
fn entry(tuning: &Tuning, level: Option<&str>, k: u32, arch: &'static mra_codegen::Arch, dtype: mra_codegen::DType) -> CmdResult<Entry> {
    let any = configure::any_gpu_of(arch);
    // What the reason says of the configuration, and the note said on stderr.
    let tuned = |c: &Configured| -> String {
        if let Some(note) = &c.note {
            eprintln!("{note}");
        }
        c.record.as_ref().map_or(String::new(), |r| format!(", tuned: {}", mra_codegen::tune::describe(&r.config)))
    };
    match level {
        Some(sel) if configure::is_best(sel) => {
            // A vendor-library level has no kernel to export.
            let c = tuning.best(&any, k, dtype, |s| !s.iter_steps().any(|st| matches!(st, mra_codegen::ir::Step::Library(_))))?;
            tuned(&c);
            let config = mra_codegen::tune::describe(&c.record.as_ref().expect("best comes from a record").config);
            Ok(export::entry_for(&c.schedule, k, arch, dtype, format!("tuned (-l best): {config}"))?)
        }
        Some(sel) => {
            let c = tuning.configure(&select::level(sel)?, &any, k, dtype)?;
            Ok(export::entry_for(&c.schedule, k, arch, dtype, format!("-l {sel}{}", tuned(&c)))?)
        }
        None => {
            let default = export::default_entry(k, arch, dtype)?;
            let c = tuning.configure(&default.schedule, &any, k, dtype)?;
            let said = tuned(&c);
            if said.is_empty() {
                return Ok(default);
            }
            Ok(export::entry_for(&c.schedule, k, arch, dtype, format!("{}{said}", default.reason))?)
        }
    }
}

/// Entries in `dir` (0 if it does not exist); an error if it is a file or unreadable.
fn existing_entries(dir: &Path) -> CmdResult<usize> {
    match std::fs::read_dir(dir) {
        Ok(rd) => Ok(rd.count()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) if dir.is_file() => Err(format!("{} is a file, not a directory: {e}", dir.display()).into()),
        Err(e) => Err(format!("cannot use {} as the export directory: {e}", dir.display()).into()),
    }
}

/// Writes `files` into a staging directory beside `dir`, then renames it to `dir` (absent): a
/// reader sees no export or all of it.
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
        std::fs::rename(&stage, dir).map_err(|e| format!("cannot move {} to {}: {e}", stage.display(), dir.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&stage);
    }
    result
}

/// Every file of the export can be written in `dir`: no name is taken by a directory or by a
/// read-only file (`replace_file` would refuse it halfway through).
fn check_replaceable(dir: &Path, files: &[export::File]) -> CmdResult<()> {
    for f in files {
        let path = dir.join(&f.path);
        mra_runtime::replace_file::replaceable(&path)
            .map_err(|e| format!("{} {e}; the export writes a file of that name: move it away, make it writable or choose another directory", path.display()))?;
    }
    Ok(())
}

/// Writes `files` into the existing directory `dir`, each atomically, the manifest last. If it
/// was empty and a write fails, the files already written are removed again: no half export.
fn write_into(dir: &Path, files: &[export::File], was_empty: bool) -> CmdResult<()> {
    let mut written = Vec::new();
    for f in files {
        let path = dir.join(&f.path);
        if let Err(e) = write_atomic(&path, f.text.as_bytes()) {
            if was_empty {
                for p in &written {
                    let _ = std::fs::remove_file(p);
                }
            }
            return Err(e);
        }
        written.push(path);
    }
    Ok(())
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`
/// (`mra_runtime::replace_file`: through a symbolic link, a read-only file refused, the mode
/// kept). The error names `path`, not the temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> CmdResult<()> {
    mra_runtime::replace_file::replace(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()).into())
}

//! `--emit-src`: the generated source of one kernel (stdout or `-o FILE`), or of several
//! levels × K written one file per kernel into `-o DIR`. No GPU and no toolkit needed.

use crate::cli::RunArgs;
use crate::select::{self, CmdResult};
use mra_codegen::arch::Vendor;
use mra_codegen::{Arch, DType, Request};
use mra_runtime::configure::{self, Tuning};
use std::path::{Path, PathBuf};

pub fn run(args: &RunArgs) -> CmdResult {
    let arch = match &args.arch {
        Some(a) => select::arch(a)?,
        None => return Err(format!("--emit-src needs --arch (one of: {})", mra_codegen::arch::names().join(", ")).into()),
    };
    select::compiler(args.compiler.as_deref(), Some(arch))?;
    let dtype = select::dtype(&args.dtype)?;
    // The tuned configuration for this arch where the tuning database has one (said on stderr;
    // --untuned keeps the defaults); `-l best`: the fastest tuned level at the first K.
    // --untuned: the database is not read at all (a broken one must not stop the defaults);
    // `-l best` needs it whatever --untuned says.
    let best = configure::is_best(&args.level);
    let tuning = Tuning::open(None, args.untuned, best)?;
    let device = configure::any_gpu_of(arch);
    let say = |c: configure::Configured| {
        if let Some(note) = &c.note {
            eprintln!("{note}");
        }
        c.schedule
    };
    let schedules = if best { vec![say(tuning.best(&device, args.ks[0], dtype, |_| true)?)] } else { select::level_list(&args.level)? };
    let tuned = |s: &mra_codegen::Schedule, k: u32| -> CmdResult<mra_codegen::Schedule> {
        if best { Ok(s.clone()) } else { Ok(say(tuning.configure_op(s, &device, k, dtype, args.op.operation())?)) }
    };
    for &k in &args.ks {
        if !(1..=mra_codegen::K_MAX).contains(&k) {
            return Err(mra_codegen::PlanError::KOutOfRange(k).into());
        }
    }
    let several = schedules.len() > 1 || args.ks.len() > 1;
    if !several {
        let kernel = args.op.generate(&tuned(&schedules[0], args.ks[0])?, Request { k: args.ks[0], arch, dtype })?;
        let file = match &args.output {
            // An existing directory gets the kernel under its descriptive name.
            Some(dir) if Path::new(dir).is_dir() => Path::new(dir).join(file_name(&kernel.level, args.ks[0], arch, dtype)),
            Some(file) => PathBuf::from(file),
            None => {
                crate::out!("{}", kernel.source)?;
                return Ok(0);
            }
        };
        refuse_overwrite(&[(file.clone(), kernel.source.clone())], args.force)?;
        write(&file, &kernel.source)?;
        return Ok(0);
    }
    let Some(dir) = &args.output else {
        return Err(select::usage(format!(
            "--emit-src with {} levels x {} K values writes one file per kernel: add -o DIR",
            schedules.len(),
            args.ks.len()
        )));
    };
    let dir = Path::new(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the directory `{}`: {e}", dir.display()))?;
    let (mut written, mut skipped) = (0, 0);
    // Every kernel generated first: a file that would be overwritten is refused before any is written.
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for s in &schedules {
        // (reason, the K it stops): one stderr line per level and reason, not per K.
        let mut refused: Vec<(String, Vec<u32>)> = Vec::new();
        for &k in &args.ks {
            mra_runtime::interrupt::check()?;
            match args.op.generate(&tuned(s, k)?, Request { k, arch, dtype }) {
                Ok(kernel) => {
                    files.push((dir.join(file_name(&kernel.level, k, arch, dtype)), kernel.source));
                    written += 1;
                }
                Err(e) => {
                    let reason = e.to_string();
                    match refused.iter_mut().find(|(r, _)| *r == reason) {
                        Some((_, ks)) => ks.push(k),
                        None => refused.push((reason, vec![k])),
                    }
                    skipped += 1;
                }
            }
        }
        for (reason, ks) in refused {
            let ks = ks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",");
            eprintln!("mra-bench: skipped {} at K={ks} on {} ({dtype}): {reason}", s.name, arch.name);
        }
    }
    if written == 0 {
        return Err(format!("no kernel written to `{}`: every level asked for cannot run at these K on {} ({dtype})", dir.display(), arch.name).into());
    }
    refuse_overwrite(&files, args.force)?;
    for (file, source) in &files {
        write(file, source)?;
    }
    eprintln!("# wrote {written} kernel source{} to {}{}", if written == 1 { "" } else { "s" }, dir.display(), if skipped > 0 { format!(" ({skipped} skipped, see above)") } else { String::new() });
    Ok(0)
}

/// `L3-regblk_k16_gfx90a_f64.hip`, `L4-mma_k8_sm_90_f64.cu`.
pub fn file_name(level: &str, k: u32, arch: &Arch, dtype: DType) -> PathBuf {
    let ext = match arch.vendor {
        Vendor::Nvidia => "cu",
        Vendor::Amd => "hip",
    };
    PathBuf::from(format!("{level}_k{k}_{}_{dtype}.{ext}", arch.name))
}

/// Refuses, unless `force`, to replace a regular file that exists and holds something else
/// than what would be written (the same bytes lose nothing, so rerunning an emit is fine): it
/// may be a kernel the user edited. A device such as /dev/stdout is written, not replaced.
fn refuse_overwrite(files: &[(PathBuf, String)], force: bool) -> CmdResult<()> {
    if force {
        return Ok(());
    }
    let taken: Vec<&PathBuf> = files
        .iter()
        .filter(|(path, source)| std::fs::metadata(path).is_ok_and(|m| m.is_file()) && std::fs::read(path).map_or(true, |old| old != source.as_bytes()))
        .map(|(path, _)| path)
        .collect();
    match taken.as_slice() {
        [] => Ok(()),
        [one] => Err(format!("-o {}: the file exists and holds something else (a hand-edited kernel?); choose another name, or pass --force to replace it", one.display()).into()),
        [first, ..] => Err(format!(
            "-o: {} of the kernel files exist and hold something else (e.g. {}); choose another directory, or pass --force to replace them",
            taken.len(),
            first.display()
        )
        .into()),
    }
}

/// Atomically (temporary file, then rename): a failed write leaves no half a kernel behind.
fn write(path: &Path, text: &str) -> CmdResult<()> {
    crate::outfile::write_atomically(path, text.as_bytes()).map_err(|e| format!("cannot write `{}`: {e}", path.display()).into())
}

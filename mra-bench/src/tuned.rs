//! The tuning database in `export`: `-l best` (the tuned level from `mra_runtime::tuned`, the
//! one place the database plugs in for the GPU-free commands) and the tuned configuration of a
//! named or default level, as export entries. Each tuned choice is said on stderr.

use crate::select::CmdResult;
use mra_codegen::export::{self, Entry};
use mra_codegen::{Arch, DType, Schedule};

/// The tuned kernel for `k` on `arch` in `dtype`.
pub fn best_entry(k: u32, arch: &'static Arch, dtype: DType) -> CmdResult<Entry> {
    // best_among keeps transform levels only; of those, a vendor-library level has no kernel to
    // export. One that spreads a tensor over several blocks (a cluster, split_output) is
    // exported with another level's block-level function beside it.
    let (level, r) = mra_runtime::tuned::best_among(k, arch, dtype, |s| !s.iter_steps().any(|st| matches!(st, mra_codegen::ir::Step::Library(_))))?;
    let config = mra_codegen::tune::describe(&r.config);
    eprintln!("# -l best at K={k}: {} {config} is the fastest tuned level for {}", level.name, arch.name);
    Ok(export::entry_for(&level, k, arch, dtype, format!("tuned (-l best): {config}"))?)
}

/// `level` at `k` with its tuned configuration for `arch` where the database has one (unless
/// `untuned`), and the reason suffix that says so.
pub fn configured(level: &Schedule, k: u32, arch: &'static Arch, dtype: DType, untuned: bool) -> CmdResult<(Schedule, String)> {
    if untuned {
        return Ok((level.clone(), String::new()));
    }
    match mra_runtime::tuned::tuned_config(level, k, arch, dtype)? {
        Some((tuned, r)) => {
            let config = mra_codegen::tune::describe(&r.config);
            let on = if r.device.gpu.is_empty() { r.device.arch.clone() } else { r.device.gpu.clone() };
            eprintln!(
                "# {} K={k}: tuned configuration {config} ({:.2} us/task when tuned on {on}); --untuned for the defaults",
                level.name,
                r.outcome.us().unwrap_or(f64::NAN)
            );
            Ok((tuned, format!(", tuned: {config}")))
        }
        None => Ok((level.clone(), String::new())),
    }
}

//! `-l best` for `export`: the tuned level from `mra_runtime::tuned` (the one place the tuning
//! database plugs in), as an export entry.

use crate::select::CmdResult;
use mra_codegen::export::{self, Entry};
use mra_codegen::{Arch, DType};

/// The tuned kernel for `k` on `arch` in `dtype`.
pub fn best_entry(k: u32, arch: &'static Arch, dtype: DType) -> CmdResult<Entry> {
    let level = mra_runtime::tuned::best_level(k, arch, dtype)?;
    Ok(export::entry_for(&level, k, arch, dtype, "tuned (-l best)".into())?)
}

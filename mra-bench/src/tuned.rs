//! `-l best`: the tuned level (and parameters) for one (K, arch, dtype) from the tuning
//! database of `mra-bench tune`. The one place that lookup plugs in; `export` and `transform`
//! both call it.

use crate::select::CmdResult;
use mra_codegen::export::Entry;
use mra_codegen::{Arch, DType};

/// The tuned kernel for `k` on `arch` in `dtype`.
pub fn best_entry(k: u32, arch: &'static Arch, dtype: DType) -> CmdResult<Entry> {
    let _ = (k, arch, dtype);
    Err("-l best: no tuning database in this build (mra-bench tune is not available yet); name a level with -l, or omit -l for the default levels".into())
}

//! `best`: the tuned level for one (K, arch, dtype) from the tuning database. The one place
//! the lookup plugs in; `mra-bench export -l best`, `mra-bench transform -l best` and
//! [`crate::transformer::Transformer`] all come through here.

use crate::error::{Result, RuntimeError};
use mra_codegen::{Arch, DType, Schedule};

/// The tuned level for `k` on `arch` in `dtype`.
pub fn best_level(k: u32, arch: &'static Arch, dtype: DType) -> Result<Schedule> {
    let _ = (k, arch, dtype);
    Err(RuntimeError::Invalid(
        "-l best: no tuning database in this build; name a level with -l, or omit -l for the default levels".into(),
    ))
}

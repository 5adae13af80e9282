//! Every reason a level cannot run as asked, each with a message a user can act on.

use crate::arch::Arch;
use crate::dtype::DType;
use crate::request::K_MAX;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("K={0} is out of range: levels support 1 <= K <= {K_MAX}")]
    KOutOfRange(u32),
    #[error("level {level}: threads({threads}) is not a multiple of the {wave}-wide {unit} on {arch}")]
    ThreadsNotWaveMultiple { level: String, threads: u32, wave: u32, unit: &'static str, arch: &'static str },
    #[error("level {level}: threads({threads}) exceeds the {max} threads a block may have on {arch}")]
    TooManyThreads { level: String, threads: u32, max: u32, arch: &'static str },
    #[error("level {level} at K={k} ({dtype}) needs {need} bytes of shared memory per block; {arch} allows {max}")]
    SharedTooLarge { level: String, k: u32, dtype: DType, need: u64, max: u32, arch: &'static str },
    #[error("level {level}: {what}")]
    Malformed { level: String, what: String },
    #[error("level {level} cannot compute in {dtype}: {why}")]
    DTypeUnsupported { level: String, dtype: DType, why: String },
    #[error("level {level}: {why}")]
    Constraint { level: String, why: String },
    #[error("level {level} cannot run at K={k}: {why}")]
    KUnsupported { level: String, k: u32, why: String },
    #[error("level {level} cannot run on {arch}: {why}")]
    ArchUnsupported { level: String, arch: &'static str, why: String },
    #[error("level {level} does not lower {op}: {why}; {instead} can")]
    Operation { level: String, op: String, why: String, instead: &'static str },
    /// A tensorized level without an instruction for (arch, dtype): either the arch lacks such
    /// matrix cores, or it has them and this level has no lowering onto them. The message
    /// says which, and what runs instead (see [`crate::matrix_support`]).
    #[error("{}", crate::matrix_support::explain(level, arch, *dtype, *k, *wmma))]
    NoMatrixCore { level: String, arch: &'static Arch, dtype: DType, k: u32, wmma: bool },
}

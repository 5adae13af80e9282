//! What to generate: one kernel per (level, K, arch, dtype).

use crate::arch::Arch;
use crate::dtype::DType;
use serde::Serialize;

/// Every level supports transform orders 1..=K_MAX.
pub const K_MAX: u32 = 32;

/// What to generate: one kernel per (level, K, arch, dtype).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Request {
    pub k: u32,
    pub arch: &'static Arch,
    pub dtype: DType,
}

//! Which matrix instruction an arch offers for a dtype, and what follows from it (the deepest
//! `fuse_k`, whether rows come in pairs): facts of the arch tables that planning, the tunable
//! parameters' built-in names and the refusals all read.

use crate::arch::{Arch, MatrixInstr};
use crate::dtype::DType;

/// The matrix instruction a tensorized level uses on `arch` for `dtype`, if the arch has one.
/// The arch table lists its instructions preferred first (sm_90: the full-rate m16n8k4).
pub fn matrix_instr(arch: &Arch, dtype: DType) -> Option<MatrixInstr> {
    arch.matrix.iter().copied().find(|&i| mma_computes(i, dtype))
}

/// Whether `instr` is a register-fragment instruction (`tensorize(mma)`) for `dtype`.
pub fn mma_computes(instr: MatrixInstr, dtype: DType) -> bool {
    use MatrixInstr::*;
    match dtype {
        DType::F64 => matches!(instr, MmaSyncM8n8k4F64 | MmaSyncM16n8k4F64 | MmaSyncM16n8k8F64 | MmaSyncM16n8k16F64 | MfmaF64_16x16x4),
        DType::F32 => false,
        DType::F16 | DType::Bf16 => matches!(instr, WmmaF32_16x16x16Gfx11 | WmmaF32_16x16x16Gfx12),
    }
}

/// The largest `fuse_k(N)` the arch allows for `dtype`: the most k-steps of its matrix
/// instruction one deeper instruction of the arch takes (sm_90 f64: 4, `mma.m16n8k16`); 1
/// where there is none. The name `fuse_k_max` of constraints and default conditions.
pub fn fuse_k_max(arch: &Arch, dtype: DType) -> u32 {
    let Some(instr) = matrix_instr(arch, dtype) else { return 1 };
    [4, 2].into_iter().find(|&d| crate::fragment::deeper(instr, d).is_some_and(|deep| arch.has(deep))).unwrap_or(1)
}

/// Whether `pair_rows(1)` has row pairs to give on `arch` for `dtype`: its matrix instruction
/// lays a lane's A and D rows 8 apart in a 16-row tile (NVIDIA m16n8k*), which the permutation
/// makes adjacent. Elsewhere pair_rows(1) is the instruction's own layout, the same kernel as 0.
/// The name `row_pairs` of constraints and default conditions.
pub fn row_pairs(arch: &Arch, dtype: DType) -> bool {
    matrix_instr(arch, dtype).is_some_and(|i| crate::fragment::fragment(i).with_row_pairs().is_some())
}

/// The WMMA-API fragment for `dtype` on `arch`, if it has one (NVIDIA f64 8×8×4, sm_80+).
pub fn wmma_instr(arch: &Arch, dtype: DType) -> Option<MatrixInstr> {
    (dtype == DType::F64 && arch.has(MatrixInstr::WmmaM8n8k4F64)).then_some(MatrixInstr::WmmaM8n8k4F64)
}

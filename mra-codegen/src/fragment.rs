//! Matrix-core fragments: which lane holds which matrix element for each matrix instruction,
//! and a CPU model that executes one instruction from per-lane registers.
//!
//! The emitter builds its C++ index expressions from these tables ([`Axis::cpp`]) and the
//! tests run the same tables through [`execute`], so a wrong layout fails on the CPU.
//!
//! Sources of the layouts (element (row, col) held by `lane`, register `r`):
//! - NVIDIA `mma.m8n8k4` `.f64`: PTX ISA 8.x, section "Matrix Fragments for mma.m8n8k4 with
//!   .f64 floating point type": A (8×4, row): row = lane >> 2, col = lane % 4; B (4×8, col):
//!   row = lane % 4, col = lane >> 2; C/D (8×8): row = lane >> 2, col = 2·(lane % 4) + r.
//! - NVIDIA `mma.m16n8k4` `.f64` (sm_90): PTX ISA 8.x, "Matrix Fragments for mma.m16n8k4"
//!   (.tf32/.f64 layout; groupID = lane >> 2, threadID_in_group = lane % 4): A (16×4, two
//!   registers): row = groupID + 8·r, col = lane % 4; B (4×8): row = lane % 4, col = groupID;
//!   C/D (16×8, four registers): row = groupID + 8·(r >> 1), col = 2·(lane % 4) + (r & 1).
//! - NVIDIA `mma.m16n8k8` `.f64` (sm_90): PTX ISA 8.x, "Matrix Fragments for mma.m16n8k8"
//!   (.tf32/.f64 layout): A (16×8, four registers): row = groupID + 8·(r & 1),
//!   col = lane % 4 + 4·(r >> 1); B (8×8, two registers): row = lane % 4 + 4·r, col = groupID;
//!   C/D as m16n8k4.
//! - NVIDIA `mma.m16n8k16` `.f64` (sm_90): PTX ISA 8.x, "Matrix Fragments for mma.m16n8k16
//!   with floating point type" (.f64): A (16×16, eight registers): row = groupID + 8·(r & 1),
//!   col = lane % 4 + 4·(r >> 1); B (16×8, four registers): row = lane % 4 + 4·r,
//!   col = groupID; C/D as m16n8k4. (CUTLASS's CuTe `SM90_16x8x16_F64F64F64F64_TN` traits say
//!   the same; a test compares the tables with those layouts.)
//! - AMD `v_mfma_f64_16x16x4f64` (CDNA2 gfx90a, CDNA3 gfx942): AMD Matrix Instruction
//!   Calculator (`--detail-instruction`): A[i][k] in lane i + 16·k, B[k][j] in lane j + 16·k,
//!   D[i][j] in register pair i / 4, lane 16·(i % 4) + j; so lane l, register r holds
//!   D[4r + l/16][l%16] (not the row order of the f32 16x16 MFMAs, which the seed's README
//!   states for f64 too).
//! - AMD RDNA3 `v_wmma_f32_16x16x16_f16/bf16` wave32 (gfx1100, gfx1151): RDNA3 ISA guide
//!   section 7.9: A row = lane % 16 holds k = 0..15 in 16 halves, and lanes 16..31 must repeat
//!   lanes 0..15; B likewise by column; D (f32, 8 registers): row = 2·r + lane / 16,
//!   col = lane % 16.
//! - AMD RDNA4 `v_wmma_f32_16x16x16_f16/bf16` (gfx1201): AMD Matrix Instruction Calculator
//!   (rdna4, wave32): A row = lane % 16, k = 8·(r / 4) + 4·(lane / 16) + r % 4 (8 halves, no
//!   replication: lanes 0-15 hold k 0-3 and 8-11, lanes 16-31 k 4-7 and 12-15); B column
//!   likewise; D row = 8·(lane / 16) + r, col = lane % 16.
//!
//! `tests/tests/amd_layouts.rs` checks the AMD tables against the calculator's printed
//! per-lane tables (`tests/data/amd-matrix-layouts/`) for every lane and register.

use crate::arch::MatrixInstr;
use serde::Serialize;

/// One coordinate of a fragment element:
/// `((lane / lane_div) % lane_mod) · lane_scale + ((reg / reg_div) % reg_mod) · reg_scale`
/// (`reg_mod` 0: no modulo), plus `(reg / div) · scale` where `reg_hi` is `Some((div, scale))`
/// (RDNA4's k runs in two groups of four registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Axis {
    pub lane_div: u32,
    pub lane_mod: u32,
    pub lane_scale: u32,
    pub reg_scale: u32,
    pub reg_div: u32,
    pub reg_mod: u32,
    pub reg_hi: Option<(u32, u32)>,
}

impl Axis {
    const fn new(lane_div: u32, lane_mod: u32, lane_scale: u32, reg_scale: u32) -> Axis {
        Axis { lane_div, lane_mod, lane_scale, reg_scale, reg_div: 1, reg_mod: 0, reg_hi: None }
    }

    /// The same lane part, the register part `((reg / reg_div) % reg_mod) · reg_scale`.
    const fn with_reg(self, reg_div: u32, reg_mod: u32, reg_scale: u32) -> Axis {
        Axis { reg_div, reg_mod, reg_scale, ..self }
    }

    /// The coordinate of register `reg` in lane `lane`.
    pub fn at(&self, lane: u32, reg: u32) -> u32 {
        let reg_part = if self.reg_mod == 0 { reg / self.reg_div } else { (reg / self.reg_div) % self.reg_mod };
        let hi = self.reg_hi.map_or(0, |(div, scale)| (reg / div) * scale);
        ((lane / self.lane_div) % self.lane_mod) * self.lane_scale + reg_part * self.reg_scale + hi
    }

    /// The same as a C++ expression over the names `lane` and `reg` (reg may be a constant);
    /// `lanes` is the wave size, below which `lane` stays (a modulo that cannot bite is dropped).
    pub fn cpp(&self, lane: &str, reg: &str, lanes: u32) -> String {
        let mut lane_part = lane.to_string();
        if self.lane_div > 1 {
            lane_part = match self.lane_div.is_power_of_two() {
                true => format!("({lane_part} >> {})", self.lane_div.trailing_zeros()),
                false => format!("({lane_part} / {})", self.lane_div),
            };
        }
        let mut terms = Vec::new();
        if self.lane_mod > 1 && self.lane_scale > 0 {
            let m = if self.lane_div * self.lane_mod >= lanes {
                lane_part
            } else if self.lane_mod.is_power_of_two() {
                format!("({lane_part} & {})", self.lane_mod - 1)
            } else {
                format!("({lane_part} % {})", self.lane_mod)
            };
            terms.push(if self.lane_scale == 1 { m } else { format!("{m} * {}", self.lane_scale) });
        }
        if self.reg_scale > 0 && reg != "0" {
            let mut r = reg.to_string();
            if self.reg_div > 1 {
                r = match self.reg_div.is_power_of_two() {
                    true => format!("({r} >> {})", self.reg_div.trailing_zeros()),
                    false => format!("({r} / {})", self.reg_div),
                };
            }
            if self.reg_mod > 0 {
                r = match self.reg_mod.is_power_of_two() {
                    true => format!("({r} & {})", self.reg_mod - 1),
                    false => format!("({r} % {})", self.reg_mod),
                };
            }
            terms.push(if self.reg_scale == 1 { r } else { format!("{r} * {}", self.reg_scale) });
        }
        if let (Some((div, scale)), false) = (self.reg_hi, reg == "0") {
            let r = match div.is_power_of_two() {
                true => format!("({reg} >> {})", div.trailing_zeros()),
                false => format!("({reg} / {div})"),
            };
            terms.push(if scale == 1 { r } else { format!("{r} * {scale}") });
        }
        if terms.is_empty() { "0".into() } else { terms.join(" + ") }
    }
}

/// Where one operand's elements live: `regs` registers per lane, element (row, col).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OperandLayout {
    pub regs: u32,
    pub row: Axis,
    pub col: Axis,
}

/// A matrix instruction's shape and lane layouts: D (m×n) = A (m×k) · B (k×n) + C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Fragment {
    pub instr: MatrixInstr,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub lanes: u32,
    pub a: OperandLayout,
    pub b: OperandLayout,
    pub c: OperandLayout,
}

/// The layouts of every matrix instruction in the arch table.
pub fn fragment(instr: MatrixInstr) -> Fragment {
    use MatrixInstr::*;
    const Z: Axis = Axis::new(1, 1, 0, 0);
    match instr {
        MmaSyncM8n8k4F64 | WmmaM8n8k4F64 => Fragment {
            instr,
            m: 8,
            n: 8,
            k: 4,
            lanes: 32,
            a: OperandLayout { regs: 1, row: Axis::new(4, 8, 1, 0), col: Axis::new(1, 4, 1, 0) },
            b: OperandLayout { regs: 1, row: Axis::new(1, 4, 1, 0), col: Axis::new(4, 8, 1, 0) },
            c: OperandLayout { regs: 2, row: Axis::new(4, 8, 1, 0), col: Axis::new(1, 4, 2, 1) },
        },
        MmaSyncM16n8k4F64 => Fragment {
            instr,
            m: 16,
            n: 8,
            k: 4,
            lanes: 32,
            a: OperandLayout { regs: 2, row: Axis::new(4, 8, 1, 8), col: Axis::new(1, 4, 1, 0) },
            b: OperandLayout { regs: 1, row: Axis::new(1, 4, 1, 0), col: Axis::new(4, 8, 1, 0) },
            c: OperandLayout { regs: 4, row: Axis::new(4, 8, 1, 0).with_reg(2, 0, 8), col: Axis::new(1, 4, 2, 0).with_reg(1, 2, 1) },
        },
        MmaSyncM16n8k8F64 => Fragment {
            instr,
            m: 16,
            n: 8,
            k: 8,
            lanes: 32,
            a: OperandLayout { regs: 4, row: Axis::new(4, 8, 1, 0).with_reg(1, 2, 8), col: Axis::new(1, 4, 1, 0).with_reg(2, 0, 4) },
            b: OperandLayout { regs: 2, row: Axis::new(1, 4, 1, 4), col: Axis::new(4, 8, 1, 0) },
            c: OperandLayout { regs: 4, row: Axis::new(4, 8, 1, 0).with_reg(2, 0, 8), col: Axis::new(1, 4, 2, 0).with_reg(1, 2, 1) },
        },
        MmaSyncM16n8k16F64 => Fragment {
            instr,
            m: 16,
            n: 8,
            k: 16,
            lanes: 32,
            a: OperandLayout { regs: 8, row: Axis::new(4, 8, 1, 0).with_reg(1, 2, 8), col: Axis::new(1, 4, 1, 0).with_reg(2, 0, 4) },
            b: OperandLayout { regs: 4, row: Axis::new(1, 4, 1, 4), col: Axis::new(4, 8, 1, 0) },
            c: OperandLayout { regs: 4, row: Axis::new(4, 8, 1, 0).with_reg(2, 0, 8), col: Axis::new(1, 4, 2, 0).with_reg(1, 2, 1) },
        },
        MfmaF64_16x16x4 => Fragment {
            instr,
            m: 16,
            n: 16,
            k: 4,
            lanes: 64,
            a: OperandLayout { regs: 1, row: Axis::new(1, 16, 1, 0), col: Axis::new(16, 4, 1, 0) },
            b: OperandLayout { regs: 1, row: Axis::new(16, 4, 1, 0), col: Axis::new(1, 16, 1, 0) },
            // D[4r + lane/16][lane%16]: register r holds rows 4r .. 4r + 3, one per 16 lanes.
            c: OperandLayout { regs: 4, row: Axis::new(16, 4, 1, 4), col: Axis::new(1, 16, 1, 0) },
        },
        WmmaF32_16x16x16Gfx11 => Fragment {
            instr,
            m: 16,
            n: 16,
            k: 16,
            lanes: 32,
            a: OperandLayout { regs: 16, row: Axis::new(1, 16, 1, 0), col: Axis { reg_scale: 1, ..Z } },
            b: OperandLayout { regs: 16, row: Axis { reg_scale: 1, ..Z }, col: Axis::new(1, 16, 1, 0) },
            c: OperandLayout { regs: 8, row: Axis::new(16, 2, 1, 2), col: Axis::new(1, 16, 1, 0) },
        },
        WmmaF32_16x16x16Gfx12 => Fragment {
            instr,
            m: 16,
            n: 16,
            k: 16,
            lanes: 32,
            // k = 8·(r / 4) + 4·(lane / 16) + r % 4: each half-wave holds two runs of 4 k.
            a: OperandLayout { regs: 8, row: Axis::new(1, 16, 1, 0), col: Axis { reg_hi: Some((4, 8)), ..Axis::new(16, 2, 4, 0).with_reg(1, 4, 1) } },
            b: OperandLayout { regs: 8, row: Axis { reg_hi: Some((4, 8)), ..Axis::new(16, 2, 4, 0).with_reg(1, 4, 1) }, col: Axis::new(1, 16, 1, 0) },
            c: OperandLayout { regs: 8, row: Axis::new(16, 2, 8, 1), col: Axis::new(1, 16, 1, 0) },
        },
    }
}

impl Fragment {
    /// `pair_rows(1)`: the same instruction with the rows of its 16-row tile permuted, tile row
    /// g + 8x (x = 0, 1; the lane's group g = lane >> 2) placed at 2g + x, in A and in C/D
    /// alike. The hardware still computes D(m) from A(m) row by row, so reading A and writing
    /// D through one permutation is exact; a lane's A registers become two adjacent rows of
    /// one column, one 16-byte access where the rows are contiguous. `None` for instructions
    /// whose rows are not laid out as g + 8x (one A register per lane: m8n8k4, AMD's MFMA and
    /// WMMA), which keep their rows.
    pub fn with_row_pairs(&self) -> Option<Fragment> {
        let paired = |axis: Axis, regs: u32| {
            let g_plus_8x = axis.lane_div == 4 && axis.lane_mod == 8 && axis.lane_scale == 1 && axis.reg_scale == 8 && axis.reg_hi.is_none();
            let x = |r: u32| (axis.at(0, r)) / 8;
            (g_plus_8x && (0..regs).all(|r| x(r) <= 1)).then_some(Axis { lane_scale: 2, reg_scale: 1, ..axis })
        };
        if self.m != 16 {
            return None;
        }
        let (a_row, c_row) = (paired(self.a.row, self.a.regs)?, paired(self.c.row, self.c.regs)?);
        Some(Fragment { a: OperandLayout { row: a_row, ..self.a }, c: OperandLayout { row: c_row, ..self.c }, ..*self })
    }

    /// `fuse_k(N)`: how `deep`, an instruction N times as deep in k, takes the operands of N
    /// consecutive k-steps of this one, found from the two layouts: register r of `deep`'s A
    /// is register `a[r].1` of k-step `a[r].0`'s A fragment (the same element, its column
    /// moved by `a[r].0 · k`), likewise B's rows. `None` unless every register of `deep` is
    /// such a register and both lay out C/D alike, i.e. unless one `deep` instruction computes
    /// exactly what N chained instructions of this one compute from the same registers.
    pub fn step_operands(&self, deep: &Fragment) -> Option<StepOperands> {
        let depth = deep.k / self.k;
        if deep.m != self.m || deep.n != self.n || deep.lanes != self.lanes || deep.k != depth * self.k || depth < 2 || deep.c != self.c {
            return None;
        }
        let lanes = self.lanes;
        let find = |deep_op: &OperandLayout, op: &OperandLayout, k_is_col: bool, r: u32| {
            (0..depth).flat_map(|s| (0..op.regs).map(move |q| (s, q))).find(|&(s, q)| {
                (0..lanes).all(|l| {
                    let (row, col) = (op.row.at(l, q), op.col.at(l, q));
                    let shifted = if k_is_col { (row, col + s * self.k) } else { (row + s * self.k, col) };
                    (deep_op.row.at(l, r), deep_op.col.at(l, r)) == shifted
                })
            })
        };
        let a = (0..deep.a.regs).map(|r| find(&deep.a, &self.a, true, r)).collect::<Option<Vec<_>>>()?;
        let b = (0..deep.b.regs).map(|r| find(&deep.b, &self.b, false, r)).collect::<Option<Vec<_>>>()?;
        Some(StepOperands { depth, a, b })
    }
}

/// The instruction `depth` k-steps deep in `instr`'s family, if the family has one: sm_90's
/// f64 `mma.m16n8k4` → `m16n8k8` (2), `m16n8k16` (4). Others have no deeper form.
pub fn deeper(instr: MatrixInstr, depth: u32) -> Option<MatrixInstr> {
    use MatrixInstr::*;
    match (instr, depth) {
        (_, 1) => Some(instr),
        (MmaSyncM16n8k4F64, 2) => Some(MmaSyncM16n8k8F64),
        (MmaSyncM16n8k4F64, 4) => Some(MmaSyncM16n8k16F64),
        _ => None,
    }
}

/// See [`Fragment::step_operands`]: `(k-step, register)` of the shallow instruction for each
/// register of the deep one's A and B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepOperands {
    pub depth: u32,
    pub a: Vec<(u32, u32)>,
    pub b: Vec<(u32, u32)>,
}

/// Per-lane registers of one operand: `regs[lane][r]`.
pub type Registers = Vec<Vec<f64>>;

/// Why the CPU model refused a set of registers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("{operand}: lanes disagree on element ({row}, {col}): {first} vs {second} (replicated lanes must hold the same value)")]
    ReplicaMismatch { operand: char, row: u32, col: u32, first: f64, second: f64 },
    #[error("{operand}: element ({row}, {col}) is held by no lane")]
    Uncovered { operand: char, row: u32, col: u32 },
    #[error("{operand}: expected {lanes} lanes x {regs} registers")]
    Shape { operand: char, lanes: u32, regs: u32 },
}

fn gather(op: char, layout: &OperandLayout, rows: u32, cols: u32, lanes: u32, regs: &Registers) -> Result<Vec<f64>, ModelError> {
    if regs.len() != lanes as usize || regs.iter().any(|r| r.len() != layout.regs as usize) {
        return Err(ModelError::Shape { operand: op, lanes, regs: layout.regs });
    }
    let mut m: Vec<Option<f64>> = vec![None; (rows * cols) as usize];
    for lane in 0..lanes {
        for r in 0..layout.regs {
            let (i, j) = (layout.row.at(lane, r), layout.col.at(lane, r));
            let v = regs[lane as usize][r as usize];
            let slot = &mut m[(i * cols + j) as usize];
            match *slot {
                Some(first) if first.to_bits() != v.to_bits() => {
                    return Err(ModelError::ReplicaMismatch { operand: op, row: i, col: j, first, second: v })
                }
                _ => *slot = Some(v),
            }
        }
    }
    m.iter()
        .enumerate()
        .map(|(e, v)| v.ok_or(ModelError::Uncovered { operand: op, row: e as u32 / cols, col: e as u32 % cols }))
        .collect()
}

/// Executes one instruction of one wave on the CPU: D = A·B + C, in f64 arithmetic.
/// Inputs and output are per-lane registers laid out as the instruction expects.
pub fn execute(f: &Fragment, a: &Registers, b: &Registers, c: &Registers) -> Result<Registers, ModelError> {
    let am = gather('A', &f.a, f.m, f.k, f.lanes, a)?;
    let bm = gather('B', &f.b, f.k, f.n, f.lanes, b)?;
    let cm = gather('C', &f.c, f.m, f.n, f.lanes, c)?;
    let mut d = vec![vec![0.0; f.c.regs as usize]; f.lanes as usize];
    for lane in 0..f.lanes {
        for r in 0..f.c.regs {
            let (i, j) = (f.c.row.at(lane, r), f.c.col.at(lane, r));
            let mut s = cm[(i * f.n + j) as usize];
            for kk in 0..f.k {
                s += am[(i * f.k + kk) as usize] * bm[(kk * f.n + j) as usize];
            }
            d[lane as usize][r as usize] = s;
        }
    }
    Ok(d)
}

/// Per-lane registers holding `matrix` (row-major, rows × cols) as `layout` says.
pub fn scatter(layout: &OperandLayout, lanes: u32, cols: u32, matrix: &[f64]) -> Registers {
    (0..lanes)
        .map(|lane| (0..layout.regs).map(|r| matrix[(layout.row.at(lane, r) * cols + layout.col.at(lane, r)) as usize]).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use MatrixInstr::*;

    const ALL: [MatrixInstr; 8] = [
        MmaSyncM8n8k4F64,
        MmaSyncM16n8k4F64,
        MmaSyncM16n8k8F64,
        MmaSyncM16n8k16F64,
        WmmaM8n8k4F64,
        MfmaF64_16x16x4,
        WmmaF32_16x16x16Gfx11,
        WmmaF32_16x16x16Gfx12,
    ];

    fn matrix(rows: u32, cols: u32, seed: u32) -> Vec<f64> {
        (0..rows * cols).map(|e| ((e * 7 + seed * 13) % 23) as f64 - 11.0).collect()
    }

    #[test]
    fn every_layout_covers_its_matrix_and_fits_the_wave() {
        for f in ALL.iter().flat_map(|&i| [Some(fragment(i)), fragment(i).with_row_pairs()]).flatten() {
            let instr = f.instr;
            for (name, l, rows, cols) in [("A", f.a, f.m, f.k), ("B", f.b, f.k, f.n), ("C", f.c, f.m, f.n)] {
                let mut seen = vec![0u32; (rows * cols) as usize];
                for lane in 0..f.lanes {
                    for r in 0..l.regs {
                        let (i, j) = (l.row.at(lane, r), l.col.at(lane, r));
                        assert!(i < rows && j < cols, "{instr:?} {name}: lane {lane} reg {r} -> ({i},{j})");
                        seen[(i * cols + j) as usize] += 1;
                    }
                }
                let copies = f.lanes * l.regs / (rows * cols);
                assert!(seen.iter().all(|&s| s == copies), "{instr:?} {name}: uneven coverage {seen:?}");
            }
        }
    }

    #[test]
    fn the_model_multiplies_like_a_plain_gemm() {
        for instr in ALL {
            let f = fragment(instr);
            let (am, bm, cm) = (matrix(f.m, f.k, 1), matrix(f.k, f.n, 2), matrix(f.m, f.n, 3));
            let d = execute(&f, &scatter(&f.a, f.lanes, f.k, &am), &scatter(&f.b, f.lanes, f.n, &bm), &scatter(&f.c, f.lanes, f.n, &cm)).unwrap();
            for lane in 0..f.lanes {
                for r in 0..f.c.regs {
                    let (i, j) = (f.c.row.at(lane, r), f.c.col.at(lane, r));
                    let want: f64 = cm[(i * f.n + j) as usize] + (0..f.k).map(|k| am[(i * f.k + k) as usize] * bm[(k * f.n + j) as usize]).sum::<f64>();
                    assert_eq!(d[lane as usize][r as usize], want, "{instr:?} lane {lane} reg {r}");
                }
            }
        }
    }

    /// `pair_rows(1)`: A loaded and D read through the permuted rows, the instruction executed
    /// with its own (PTX ISA) layout, gives the plain GEMM in the permuted coordinates; a lane's
    /// A registers are adjacent rows of one column. Permuting A's rows without D's must fail.
    #[test]
    fn row_pairs_multiply_like_a_plain_gemm_and_pair_the_a_registers() {
        for instr in [MmaSyncM16n8k4F64, MmaSyncM16n8k8F64, MmaSyncM16n8k16F64] {
            let f = fragment(instr);
            let p = f.with_row_pairs().unwrap();
            let (am, bm, cm) = (matrix(f.m, f.k, 4), matrix(f.k, f.n, 5), matrix(f.m, f.n, 6));
            let (b, c) = (scatter(&f.b, f.lanes, f.n, &bm), scatter(&p.c, f.lanes, f.n, &cm));
            let d = execute(&f, &scatter(&p.a, f.lanes, f.k, &am), &b, &c).unwrap();
            let plain = |i: u32, j: u32| cm[(i * f.n + j) as usize] + (0..f.k).map(|k| am[(i * f.k + k) as usize] * bm[(k * f.n + j) as usize]).sum::<f64>();
            for lane in 0..f.lanes {
                for r in 0..f.c.regs {
                    let (i, j) = (p.c.row.at(lane, r), p.c.col.at(lane, r));
                    assert_eq!(d[lane as usize][r as usize], plain(i, j), "{instr:?} lane {lane} reg {r}");
                }
                for q in 0..f.a.regs / 2 {
                    let (r0, r1) = (2 * q, 2 * q + 1);
                    assert_eq!(p.a.row.at(lane, r0) % 2, 0, "{instr:?} lane {lane}");
                    assert_eq!((p.a.row.at(lane, r1), p.a.col.at(lane, r1)), (p.a.row.at(lane, r0) + 1, p.a.col.at(lane, r0)), "{instr:?} lane {lane}");
                }
            }
            // Only A permuted: some D element differs from the GEMM at the coordinates read.
            let d = execute(&f, &scatter(&p.a, f.lanes, f.k, &am), &b, &scatter(&f.c, f.lanes, f.n, &cm)).unwrap();
            let wrong = (0..f.lanes).any(|l| (0..f.c.regs).any(|r| d[l as usize][r as usize] != plain(f.c.row.at(l, r), f.c.col.at(l, r))));
            assert!(wrong, "{instr:?}: A's rows permuted without D's went unnoticed");
        }
        for instr in [MmaSyncM8n8k4F64, WmmaM8n8k4F64, MfmaF64_16x16x4, WmmaF32_16x16x16Gfx11, WmmaF32_16x16x16Gfx12] {
            assert!(fragment(instr).with_row_pairs().is_none(), "{instr:?}");
        }
    }

    #[test]
    fn rdna3_refuses_unreplicated_upper_lanes() {
        let f = fragment(WmmaF32_16x16x16Gfx11);
        let mut a = scatter(&f.a, f.lanes, f.k, &matrix(16, 16, 1));
        a[20][3] += 1.0; // lane 20 must repeat lane 4
        let b = scatter(&f.b, f.lanes, f.n, &matrix(16, 16, 2));
        let c = scatter(&f.c, f.lanes, f.n, &matrix(16, 16, 3));
        assert!(matches!(execute(&f, &a, &b, &c), Err(ModelError::ReplicaMismatch { operand: 'A', .. })));
    }

    /// Evaluates the C++ index expressions the emitter prints (`lane`, `r`, integers, `+ * / %
    /// >> &` and parentheses, with C++ precedence) so they can be compared with the layouts.
    fn eval_cpp(expr: &str, lane: u32, reg: u32) -> u32 {
        let toks: Vec<String> = {
            let mut t = Vec::new();
            let cs: Vec<char> = expr.chars().collect();
            let mut i = 0;
            while i < cs.len() {
                let c = cs[i];
                if c.is_whitespace() {
                    i += 1;
                } else if c.is_alphanumeric() || c == '_' {
                    let st = i;
                    while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
                        i += 1;
                    }
                    t.push(cs[st..i].iter().collect());
                } else if c == '>' {
                    t.push(">>".into());
                    i += 2;
                } else {
                    t.push(c.to_string());
                    i += 1;
                }
            }
            t
        };
        fn prec(op: &str) -> Option<u32> {
            match op {
                "*" | "/" | "%" => Some(4),
                "+" => Some(3),
                ">>" => Some(2),
                "&" => Some(1),
                _ => None,
            }
        }
        fn parse(t: &[String], pos: &mut usize, min: u32, lane: u32, reg: u32) -> u32 {
            let mut lhs = match t[*pos].as_str() {
                "(" => {
                    *pos += 1;
                    let v = parse(t, pos, 0, lane, reg);
                    assert_eq!(t[*pos], ")");
                    v
                }
                "lane" => lane,
                "r" => reg,
                n => n.parse().unwrap_or_else(|_| panic!("unexpected token {n}")),
            };
            *pos += 1;
            while *pos < t.len() {
                let Some(p) = prec(&t[*pos]) else { break };
                if p < min {
                    break;
                }
                let op = t[*pos].clone();
                *pos += 1;
                let rhs = parse(t, pos, p + 1, lane, reg);
                lhs = match op.as_str() {
                    "*" => lhs * rhs,
                    "/" => lhs / rhs,
                    "%" => lhs % rhs,
                    "+" => lhs + rhs,
                    ">>" => lhs >> rhs,
                    _ => lhs & rhs,
                };
            }
            lhs
        }
        let mut pos = 0;
        let v = parse(&toks, &mut pos, 0, lane, reg);
        assert_eq!(pos, toks.len(), "trailing tokens in {expr}");
        v
    }

    /// The emitted C++ index expressions select the same element as the layout tables, for
    /// every lane and register of every instruction (the tables themselves are checked against
    /// a plain GEMM in `simulate`).
    #[test]
    fn emitted_index_expressions_evaluate_to_the_layouts() {
        for f in ALL.iter().flat_map(|&i| [Some(fragment(i)), fragment(i).with_row_pairs()]).flatten() {
            let instr = f.instr;
            for (name, l) in [("A", f.a), ("B", f.b), ("C", f.c)] {
                for axis in [l.row, l.col] {
                    let text = axis.cpp("lane", "r", f.lanes);
                    for lane in 0..f.lanes {
                        for r in 0..l.regs {
                            assert_eq!(eval_cpp(&text, lane, r), axis.at(lane, r), "{instr:?} {name}: `{text}` at lane {lane}, reg {r}");
                        }
                    }
                }
            }
        }
    }

    /// The sm_90 shapes against the PTX ISA's tables, element by element for a few lanes
    /// (groupID = lane >> 2, threadID_in_group = lane % 4), written out by hand.
    #[test]
    fn m16n8_layouts_follow_the_ptx_isa() {
        let f = fragment(MmaSyncM16n8k4F64);
        // lane 13: groupID 3, threadID_in_group 1.
        assert_eq!([0, 1].map(|r| (f.a.row.at(13, r), f.a.col.at(13, r))), [(3, 1), (11, 1)]);
        assert_eq!((f.b.row.at(13, 0), f.b.col.at(13, 0)), (1, 3));
        assert_eq!([0, 1, 2, 3].map(|r| (f.c.row.at(13, r), f.c.col.at(13, r))), [(3, 2), (3, 3), (11, 2), (11, 3)]);
        let g = fragment(MmaSyncM16n8k8F64);
        // lane 30: groupID 7, threadID_in_group 2.
        assert_eq!([0, 1, 2, 3].map(|r| (g.a.row.at(30, r), g.a.col.at(30, r))), [(7, 2), (15, 2), (7, 6), (15, 6)]);
        assert_eq!([0, 1].map(|r| (g.b.row.at(30, r), g.b.col.at(30, r))), [(2, 7), (6, 7)]);
        assert_eq!([0, 1, 2, 3].map(|r| (g.c.row.at(30, r), g.c.col.at(30, r))), [(7, 4), (7, 5), (15, 4), (15, 5)]);
    }

    /// The sm_90 f64 shapes against a second transcription: CUTLASS's CuTe MMA traits
    /// (`SM90_16x8x{4,8,16}_F64F64F64F64_TN`) give each operand as a layout (thread, value) ->
    /// index, column-major over the operand (A: m + 16·k, B: n + 8·k, C: m + 16·n):
    /// A ((4,8),(2,V)):((16,1),(8,64)), B ((4,8),V):((8,1),32), C ((4,8),(2,2)):((32,1),(16,8)).
    #[test]
    fn m16n8_f64_layouts_agree_with_cute() {
        for (instr, k) in [(MmaSyncM16n8k4F64, 4), (MmaSyncM16n8k8F64, 8), (MmaSyncM16n8k16F64, 16)] {
            let f = fragment(instr);
            assert_eq!((f.m, f.n, f.k, f.a.regs, f.b.regs, f.c.regs), (16, 8, k, k / 2, k / 4, 4), "{instr:?}");
            for t in 0..32 {
                let thr = |s0: u32, s1: u32| (t % 4) * s0 + (t / 4) * s1;
                for v in 0..f.a.regs {
                    let idx = thr(16, 1) + (v % 2) * 8 + (v / 2) * 64;
                    assert_eq!((f.a.row.at(t, v), f.a.col.at(t, v)), (idx % 16, idx / 16), "{instr:?} A thread {t} value {v}");
                }
                for v in 0..f.b.regs {
                    let idx = thr(8, 1) + v * 32;
                    assert_eq!((f.b.row.at(t, v), f.b.col.at(t, v)), (idx / 8, idx % 8), "{instr:?} B thread {t} value {v}");
                }
                for v in 0..4 {
                    let idx = thr(32, 1) + (v % 2) * 16 + (v / 2) * 8;
                    assert_eq!((f.c.row.at(t, v), f.c.col.at(t, v)), (idx % 16, idx / 16), "{instr:?} C thread {t} value {v}");
                }
            }
        }
    }

    /// `fuse_k`: m16n8k8 and m16n8k16 take the m16n8k4 fragments of 2 and 4 consecutive
    /// k-steps side by side (registers 2s, 2s + 1 of A and s of B are k-step s's), with row
    /// pairs or without; the model then computes with one deep instruction what the chain of
    /// shallow ones computes. Instructions of another family, or a depth that is not a whole
    /// multiple, have no step map.
    #[test]
    fn deep_instructions_take_consecutive_k_steps_side_by_side() {
        let base = fragment(MmaSyncM16n8k4F64);
        for depth in [2u32, 4] {
            let deep = fragment(deeper(MmaSyncM16n8k4F64, depth).unwrap());
            let map = base.step_operands(&deep).unwrap();
            assert_eq!(map.a, (0..2 * depth).map(|r| (r / 2, r % 2)).collect::<Vec<_>>());
            assert_eq!(map.b, (0..depth).map(|r| (r, 0)).collect::<Vec<_>>());
            let (paired, deep_paired) = (base.with_row_pairs().unwrap(), deep.with_row_pairs().unwrap());
            assert_eq!(paired.step_operands(&deep_paired), Some(map.clone()));
            // One deep instruction from the shallow fragments of `depth` k-steps = the chain.
            let (am, bm, cm) = (matrix(16, 4 * depth, 7), matrix(4 * depth, 8, 8), matrix(16, 8, 9));
            let step = |s: u32| {
                let a_s: Vec<f64> = (0..16).flat_map(|i| (0..4).map(move |kk| (i, kk))).map(|(i, kk)| am[(i * 4 * depth + 4 * s + kk) as usize]).collect();
                let b_s: Vec<f64> = bm[(32 * s) as usize..(32 * (s + 1)) as usize].to_vec();
                (scatter(&base.a, 32, 4, &a_s), scatter(&base.b, 32, 8, &b_s))
            };
            let mut chain = scatter(&base.c, 32, 8, &cm);
            for s in 0..depth {
                let (a, b) = step(s);
                chain = execute(&base, &a, &b, &chain).unwrap();
            }
            let steps: Vec<_> = (0..depth).map(step).collect();
            let a: Registers = (0..32).map(|l| map.a.iter().map(|&(s, q)| steps[s as usize].0[l][q as usize]).collect()).collect();
            let b: Registers = (0..32).map(|l| map.b.iter().map(|&(s, q)| steps[s as usize].1[l][q as usize]).collect()).collect();
            assert_eq!(execute(&deep, &a, &b, &scatter(&base.c, 32, 8, &cm)).unwrap(), chain, "depth {depth}");
        }
        assert!(deeper(MmaSyncM8n8k4F64, 2).is_none() && deeper(MfmaF64_16x16x4, 2).is_none() && deeper(MmaSyncM16n8k4F64, 3).is_none());
        assert!(fragment(MmaSyncM16n8k8F64).step_operands(&fragment(MmaSyncM16n8k4F64)).is_none());
        assert!(fragment(MmaSyncM8n8k4F64).step_operands(&fragment(MmaSyncM16n8k8F64)).is_none());
        // A deep layout with two of its A registers swapped is no side-by-side copy's map.
        let deep = fragment(MmaSyncM16n8k8F64);
        let swapped = Fragment { a: OperandLayout { col: Axis::new(1, 4, 1, 0).with_reg(1, 2, 4), ..deep.a }, ..deep };
        let map = base.step_operands(&swapped);
        assert_ne!(map.map(|m| m.a), Some(vec![(0, 0), (0, 1), (1, 0), (1, 1)]));
    }

    #[test]
    fn cpp_expressions_match_the_tables() {
        // Spot checks of the text the emitter uses.
        let f = fragment(MmaSyncM8n8k4F64);
        assert_eq!(f.a.row.cpp("lane", "0", 32), "(lane >> 2)");
        assert_eq!(f.c.col.cpp("lane", "r", 32), "(lane & 3) * 2 + r");
        let g = fragment(MfmaF64_16x16x4);
        assert_eq!(g.c.row.cpp("lane", "r", 64), "(lane >> 4) + r * 4");
        let h = fragment(WmmaF32_16x16x16Gfx12);
        assert_eq!(h.a.col.cpp("lane", "r", 32), "(lane >> 4) * 4 + (r & 3) + (r >> 2) * 8");
        assert_eq!(h.a.col.cpp("lane", "0", 32), "(lane >> 4) * 4");
        assert_eq!(g.a.row.cpp("lane", "0", 64), "(lane & 15)");
    }
}

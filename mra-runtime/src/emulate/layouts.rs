//! The emulator's lane layouts of AMD's matrix instructions, written from AMD's Matrix
//! Instruction Calculator ("register to matrix element mapping" and its per-lane tables,
//! `tests/data/amd-matrix-layouts/`), on purpose without `mra_codegen::fragment`: the code
//! generator and the emulator meet only at AMD's data (`tests/tests/amd_layouts.rs` checks
//! both against it), so one wrong table cannot agree with itself.
//!
//! A "register" here is one operand element of a lane, in the order the lane's vector holds
//! them: for the f64 MFMA one 64-bit register pair each; for RDNA's 16-bit A/B operands one
//! half of a VGPR each (element h is VGPR h / 2, bits [16·(h % 2) + 15 : 16·(h % 2)]).

/// The AMD matrix instructions the generated kernels call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// `v_mfma_f64_16x16x4f64` (CDNA2 gfx90a; CDNA3 gfx942 calls it `v_mfma_f64_16x16x4_f64`), wave64.
    MfmaF64_16x16x4,
    /// `v_wmma_f32_16x16x16_{f16,bf16}` on RDNA3 (gfx1100, gfx1151), wave32.
    WmmaRdna3,
    /// `v_wmma_f32_16x16x16_{f16,bf16}` on RDNA4 (gfx1200, gfx1201), wave32.
    WmmaRdna4,
}

/// One operand of `D = A·B + C` (C has D's layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    A,
    B,
    D,
}

impl Instruction {
    pub const ALL: [Instruction; 3] = [Instruction::MfmaF64_16x16x4, Instruction::WmmaRdna3, Instruction::WmmaRdna4];

    /// Lanes of the wave the instruction runs on.
    pub fn lanes(self) -> u32 {
        match self {
            Instruction::MfmaF64_16x16x4 => 64,
            _ => 32,
        }
    }

    /// (M, N, K) of `D(M×N) = A(M×K) · B(K×N) + C`.
    pub fn shape(self) -> (u32, u32, u32) {
        match self {
            Instruction::MfmaF64_16x16x4 => (16, 16, 4),
            _ => (16, 16, 16),
        }
    }

    /// Elements of `op` each lane holds.
    pub fn regs(self, op: Operand) -> u32 {
        match (self, op) {
            (Instruction::MfmaF64_16x16x4, Operand::D) => 4,
            (Instruction::MfmaF64_16x16x4, _) => 1,
            (Instruction::WmmaRdna3, Operand::A | Operand::B) => 16,
            (Instruction::WmmaRdna4, Operand::A | Operand::B) => 8,
            (_, Operand::D) => 8,
        }
    }

    /// The (row, column) of the matrix element that `lane` holds in its element `reg` of `op`
    /// (A: (i, k), B: (k, j), D: (i, j)).
    pub fn element(self, op: Operand, lane: u32, reg: u32) -> (u32, u32) {
        match self {
            // CDNA2/CDNA3 calculator: A[i][k] in lane 16k + i; B[k][j] in lane 16k + j; C/D[i][j]
            // in GPR pair floor(i / 4), lane 16·(i % 4) + j. Inverted: lane l, pair r holds
            // D[4r + l/16][l % 16].
            Instruction::MfmaF64_16x16x4 => match op {
                Operand::A => (lane % 16, lane / 16),
                Operand::B => (lane / 16, lane % 16),
                Operand::D => (4 * reg + lane / 16, lane % 16),
            },
            // RDNA3 wave32: A i = lane % 16, k = 2·GPR_num + GPR_bits/16 (the half index, so
            // lanes 16-31 repeat lanes 0-15); B likewise by column; D i = 2·GPR_num + lane/16.
            Instruction::WmmaRdna3 => match op {
                Operand::A => (lane % 16, reg),
                Operand::B => (reg, lane % 16),
                Operand::D => (2 * reg + lane / 16, lane % 16),
            },
            // RDNA4 wave32: A k = 8·floor(GPR_num / 2) + 4·floor(lane / 16) + 2·(GPR_num % 2) +
            // GPR_bits/16, i = lane % 16; B likewise with j; D i = 8·floor(lane / 16) + GPR_num.
            Instruction::WmmaRdna4 => {
                let (gpr, half) = (reg / 2, reg % 2);
                let k = 8 * (gpr / 2) + 4 * (lane / 16) + 2 * (gpr % 2) + half;
                match op {
                    Operand::A => (lane % 16, k),
                    Operand::B => (k, lane % 16),
                    Operand::D => (8 * (lane / 16) + reg, lane % 16),
                }
            }
        }
    }
}

/// A deliberate error in the emulator's layouts, for tests that show a wrong layout fails
/// validation. `None` is the real emulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Sabotage {
    #[default]
    None,
    /// The f64 MFMA's D rows in the f32 MFMAs' order (lane l, reg r → row 4·(l/16) + r): the
    /// layout the code generator had before it was checked against AMD's calculator.
    SwapF64DRows,
}

impl Sabotage {
    /// `element`, wrong where this sabotage says so.
    pub fn element(self, instr: Instruction, op: Operand, lane: u32, reg: u32) -> (u32, u32) {
        match (self, instr, op) {
            (Sabotage::SwapF64DRows, Instruction::MfmaF64_16x16x4, Operand::D) => (4 * (lane / 16) + reg, lane % 16),
            _ => instr.element(op, lane, reg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_held_and_the_copies_are_even() {
        for instr in Instruction::ALL {
            let (m, n, k) = instr.shape();
            for (op, rows, cols) in [(Operand::A, m, k), (Operand::B, k, n), (Operand::D, m, n)] {
                let mut seen = vec![0; (rows * cols) as usize];
                for lane in 0..instr.lanes() {
                    for r in 0..instr.regs(op) {
                        let (i, j) = instr.element(op, lane, r);
                        assert!(i < rows && j < cols, "{instr:?} {op:?} lane {lane} reg {r}");
                        seen[(i * cols + j) as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&s| s == seen[0] && s > 0), "{instr:?} {op:?}: {seen:?}");
            }
        }
    }

    #[test]
    fn the_sabotage_changes_only_the_f64_d_rows() {
        let s = Sabotage::SwapF64DRows;
        assert_ne!(s.element(Instruction::MfmaF64_16x16x4, Operand::D, 16, 0), Instruction::MfmaF64_16x16x4.element(Operand::D, 16, 0));
        assert_eq!(s.element(Instruction::WmmaRdna4, Operand::D, 16, 0), Instruction::WmmaRdna4.element(Operand::D, 16, 0));
    }
}

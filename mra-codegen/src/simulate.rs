//! The tensorized GEMM pass executed on the CPU exactly as the generated code tiles it: the
//! same row tiles, the same zero padding and store masks, and each instruction executed by the
//! fragment model of [`crate::fragment`] from per-lane registers built with the same lane
//! layouts the emitter prints. A wrong layout, a missing guard or an unwritten element shows
//! up as a difference from a plain GEMM (or as a NaN left in the output).

use crate::fragment::{execute, Fragment, ModelError, Registers};
use crate::plan::TransformPlan;

/// One pass `out(i,j) = Σ_k input(k,i)·b(k,j)` of order `k` (input K×K², out K²×K, b K×K),
/// computed wave tile by wave tile with fragment `f`. Elements no lane stores stay NaN.
pub fn tile_pass(f: &Fragment, k: u32, input: &[f64], b: &[f64]) -> Result<Vec<f64>, ModelError> {
    tile_pass_indexed(f, f, k, input, b)
}

/// [`tile_pass`] with the elements indexed through `f` (the emitter's layout: e.g.
/// [`Fragment::with_row_pairs`] for `pair_rows(1)`) and each instruction executed by the model
/// of `hw`, the instruction as the hardware lays it out.
pub fn tile_pass_indexed(f: &Fragment, hw: &Fragment, k: u32, input: &[f64], b: &[f64]) -> Result<Vec<f64>, ModelError> {
    tile_pass_fused(f, hw, &|_| unreachable!("fuse_k(1) issues no deeper instruction"), 1, k, input, b)
}

/// [`tile_pass_indexed`] with `fuse_k(n)`: each tile's k-steps grouped as the emitter groups
/// them ([`crate::plan::k_step_groups`]), a group of `depth` steps run as one instruction of
/// `deep(depth)` (the hardware's layout) on the registers of the steps' fragments of `f`, taken
/// as [`Fragment::step_operands`] of `f` and `deep_indexed(depth)` (the emitter's layout) says.
pub fn tile_pass_fused(
    f: &Fragment,
    hw: &Fragment,
    deep: &dyn Fn(u32) -> (Fragment, Fragment),
    n: u32,
    k: u32,
    input: &[f64],
    b: &[f64],
) -> Result<Vec<f64>, ModelError> {
    let (k2, k3) = (k * k, k * k * k);
    let kp = TransformPlan::padded(k, f.k);
    let np = TransformPlan::padded(k, f.n);
    let mut out = vec![f64::NAN; k3 as usize];
    let b_padded = |kk: u32, j: u32| if kk < k && j < k { b[(kk * k + j) as usize] } else { 0.0 };
    for tile in 0..k2.div_ceil(f.m) {
        let i0 = tile * f.m;
        let a_step = |ks: u32| -> Registers {
            (0..f.lanes)
                .map(|lane| {
                    (0..f.a.regs)
                        .map(|r| {
                            let (ai, ak) = (i0 + f.a.row.at(lane, r), ks * f.k + f.a.col.at(lane, r));
                            if ak < k && ai < k2 { input[(ak * k2 + ai) as usize] } else { 0.0 }
                        })
                        .collect()
                })
                .collect()
        };
        let b_step = |ks: u32, nf: u32| -> Registers {
            (0..f.lanes).map(|lane| (0..f.b.regs).map(|r| b_padded(ks * f.k + f.b.row.at(lane, r), nf * f.n + f.b.col.at(lane, r))).collect()).collect()
        };
        let mut acc: Vec<Registers> = (0..np / f.n).map(|_| vec![vec![0.0; f.c.regs as usize]; f.lanes as usize]).collect();
        for g in crate::plan::k_step_groups(kp / f.k, n) {
            for i in 0..g.count {
                let ks0 = g.start + i * g.depth;
                for (nf, acc_nf) in acc.iter_mut().enumerate() {
                    if g.depth == 1 {
                        *acc_nf = execute(hw, &a_step(ks0), &b_step(ks0, nf as u32), acc_nf)?;
                        continue;
                    }
                    let (deep_hw, deep_indexed) = deep(g.depth);
                    let map = f.step_operands(&deep_indexed).expect("a step map");
                    let a_steps: Vec<Registers> = (0..g.depth).map(|s| a_step(ks0 + s)).collect();
                    let b_steps: Vec<Registers> = (0..g.depth).map(|s| b_step(ks0 + s, nf as u32)).collect();
                    let pick = |steps: &[Registers], at: &[(u32, u32)]| -> Registers {
                        (0..f.lanes as usize).map(|l| at.iter().map(|&(s, q)| steps[s as usize][l][q as usize]).collect()).collect()
                    };
                    *acc_nf = execute(&deep_hw, &pick(&a_steps, &map.a), &pick(&b_steps, &map.b), acc_nf)?;
                }
            }
        }
        for (nf, acc_nf) in acc.iter().enumerate() {
            for lane in 0..f.lanes {
                for r in 0..f.c.regs {
                    let (i, j) = (i0 + f.c.row.at(lane, r), nf as u32 * f.n + f.c.col.at(lane, r));
                    if i < k2 && j < k {
                        out[(i * k + j) as usize] = acc_nf[lane as usize][r as usize];
                    }
                }
            }
        }
    }
    Ok(out)
}

/// `swap_operands(1)`: the pass computed transposed as `emit/swapped.rs` tiles it,
/// D'(j, i) = Σ_k Bᵀ(j, k) input(k, i): Bᵀ as the instruction's A operand (fragments of FM rows
/// j), the input as its B operand (tiles of FN columns i, one register per lane), the k-steps
/// grouped as `fuse_k(n)` groups them (a group of `depth` steps as one instruction of
/// `deep(depth)`), D'(j, i) stored to out(i, j) under the emitter's guards. With `transpose_d`
/// false, D' is stored as if it were D (out(j, i)): the check that this model can fail.
pub fn swapped_pass(f: &Fragment, deep: &dyn Fn(u32) -> Fragment, n: u32, k: u32, input: &[f64], b: &[f64], transpose_d: bool) -> Result<Vec<f64>, ModelError> {
    assert_eq!(f.b.regs, 1, "planned: swap_operands(1) takes one-register B fragments");
    let (k2, k3) = (k * k, k * k * k);
    let kp = TransformPlan::padded(k, f.k);
    let mut out = vec![f64::NAN; k3 as usize];
    let bt_step = |ks: u32, mf: u32| -> Registers {
        (0..f.lanes)
            .map(|lane| {
                (0..f.a.regs)
                    .map(|r| {
                        let (j, kk) = (mf * f.m + f.a.row.at(lane, r), ks * f.k + f.a.col.at(lane, r));
                        if j < k && kk < k { b[(kk * k + j) as usize] } else { 0.0 }
                    })
                    .collect()
            })
            .collect()
    };
    for tile in 0..k2.div_ceil(f.n) {
        let i0 = tile * f.n;
        let in_step = |ks: u32| -> Registers {
            (0..f.lanes)
                .map(|lane| {
                    let (kk, i) = (ks * f.k + f.b.row.at(lane, 0), i0 + f.b.col.at(lane, 0));
                    vec![if kk < k && i < k2 { input[(kk * k2 + i) as usize] } else { 0.0 }]
                })
                .collect()
        };
        for mf in 0..k.div_ceil(f.m) {
            let mut acc: Registers = vec![vec![0.0; f.c.regs as usize]; f.lanes as usize];
            for g in crate::plan::k_step_groups(kp / f.k, n) {
                for c in 0..g.count {
                    let ks0 = g.start + c * g.depth;
                    if g.depth == 1 {
                        acc = execute(f, &bt_step(ks0, mf), &in_step(ks0), &acc)?;
                        continue;
                    }
                    let d = deep(g.depth);
                    let map = f.step_operands(&d).expect("a step map");
                    let a_steps: Vec<Registers> = (0..g.depth).map(|s| bt_step(ks0 + s, mf)).collect();
                    let b_steps: Vec<Registers> = (0..g.depth).map(|s| in_step(ks0 + s)).collect();
                    let pick = |steps: &[Registers], at: &[(u32, u32)]| -> Registers {
                        (0..f.lanes as usize).map(|l| at.iter().map(|&(s, q)| steps[s as usize][l][q as usize]).collect()).collect()
                    };
                    acc = execute(&d, &pick(&a_steps, &map.a), &pick(&b_steps, &map.b), &acc)?;
                }
            }
            for lane in 0..f.lanes {
                for r in 0..f.c.regs {
                    let (j, i) = (mf * f.m + f.c.row.at(lane, r), i0 + f.c.col.at(lane, r));
                    if j < k && i < k2 {
                        let at = if transpose_d { i * k + j } else { (j * k2 + i) % k3 };
                        out[at as usize] = acc[lane as usize][r as usize];
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::MatrixInstr::*;
    use crate::fragment::fragment;

    fn plain_pass(k: u32, input: &[f64], b: &[f64]) -> Vec<f64> {
        let (k, k2) = (k as usize, (k * k) as usize);
        let mut out = vec![0.0; k2 * k];
        for i in 0..k2 {
            for j in 0..k {
                out[i * k + j] = (0..k).map(|kk| input[kk * k2 + i] * b[kk * k + j]).sum();
            }
        }
        out
    }

    #[test]
    fn every_fragment_schedule_computes_the_pass_for_every_k() {
        for instr in [MmaSyncM8n8k4F64, MmaSyncM16n8k4F64, MmaSyncM16n8k8F64, MfmaF64_16x16x4, WmmaF32_16x16x16Gfx11, WmmaF32_16x16x16Gfx12] {
            let f = fragment(instr);
            for k in 1..=32u32 {
                // Small integers: every product and sum is exact, so equality is exact.
                let input: Vec<f64> = (0..k * k * k).map(|e| ((e * 5 + 3) % 7) as f64 - 3.0).collect();
                let b: Vec<f64> = (0..k * k).map(|e| ((e * 3 + 1) % 5) as f64 - 2.0).collect();
                let got = tile_pass(&f, k, &input, &b).unwrap();
                assert_eq!(got, plain_pass(k, &input, &b), "{instr:?} K={k}");
            }
        }
    }

    /// `pair_rows(1)`: the tiles indexed through the permuted rows (A read, D stored, the
    /// padding guards of the last tile) and executed by the instruction's own layout give the
    /// plain pass at every K; with A's rows permuted but D's not, they do not.
    #[test]
    fn row_pairs_compute_the_pass_for_every_k() {
        for instr in [MmaSyncM16n8k4F64, MmaSyncM16n8k8F64] {
            let f = fragment(instr);
            let p = f.with_row_pairs().unwrap();
            let half = crate::fragment::Fragment { c: f.c, ..p };
            for k in 1..=32u32 {
                let input: Vec<f64> = (0..k * k * k).map(|e| ((e * 5 + 3) % 7) as f64 - 3.0).collect();
                let b: Vec<f64> = (0..k * k).map(|e| ((e * 3 + 1) % 5) as f64 - 2.0).collect();
                let want = plain_pass(k, &input, &b);
                assert_eq!(tile_pass_indexed(&p, &f, k, &input, &b).unwrap(), want, "{instr:?} K={k}");
                if k >= 2 {
                    assert_ne!(tile_pass_indexed(&half, &f, k, &input, &b).unwrap(), want, "{instr:?} K={k}: A permuted alone passed");
                }
            }
        }
    }

    /// `fuse_k(2|4)`: the k loop as runs of m16n8k8 / m16n8k16 on the m16n8k4 steps' fragments
    /// (and m16n8k4 for what is left), with and without row pairs, gives the plain pass at every
    /// K; a deep instruction fed the steps in the wrong order does not.
    #[test]
    fn fused_k_steps_compute_the_pass_for_every_k() {
        use crate::fragment::deeper;
        let base = fragment(MmaSyncM16n8k4F64);
        for pairs in [false, true] {
            let f = if pairs { base.with_row_pairs().unwrap() } else { base };
            let deep = |d: u32| {
                let hw = fragment(deeper(MmaSyncM16n8k4F64, d).unwrap());
                (hw, if pairs { hw.with_row_pairs().unwrap() } else { hw })
            };
            for n in [2, 4] {
                for k in 1..=32u32 {
                    let input: Vec<f64> = (0..k * k * k).map(|e| ((e * 5 + 3) % 7) as f64 - 3.0).collect();
                    let b: Vec<f64> = (0..k * k).map(|e| ((e * 3 + 1) % 5) as f64 - 2.0).collect();
                    assert_eq!(tile_pass_fused(&f, &base, &deep, n, k, &input, &b).unwrap(), plain_pass(k, &input, &b), "fuse_k({n}) K={k} pairs {pairs}");
                }
            }
        }
        // m16n8k8's A registers assigned in another order (k, not the row, in register bit 0):
        // the step map follows that layout, the hardware does not, and the pass is wrong.
        let wrong = |d: u32| {
            let hw = fragment(deeper(MmaSyncM16n8k4F64, d).unwrap());
            let a = crate::fragment::OperandLayout { row: crate::fragment::fragment(MmaSyncM16n8k4F64).a.row, col: hw.a.col, ..hw.a };
            let a = crate::fragment::OperandLayout { row: crate::fragment::Axis { reg_div: 2, reg_mod: 0, ..a.row }, col: crate::fragment::Axis { reg_div: 1, reg_mod: 2, ..a.col }, ..a };
            (hw, crate::fragment::Fragment { a, ..hw })
        };
        let k = 8;
        let input: Vec<f64> = (0..k * k * k).map(|e| ((e * 5 + 3) % 7) as f64 - 3.0).collect();
        let b: Vec<f64> = (0..k * k).map(|e| ((e * 3 + 1) % 5) as f64 - 2.0).collect();
        assert_ne!(tile_pass_fused(&base, &base, &wrong, 2, k, &input, &b).unwrap(), plain_pass(k, &input, &b));
    }

    /// `swap_operands(1)`: the transposed tiling (Bᵀ as the A operand, the input as the B
    /// operand, D' stored transposed) gives the plain pass at every K on every instruction with
    /// a one-register B fragment, with fuse_k(2|4) on sm_90's m16n8k4; D' stored untransposed
    /// does not.
    #[test]
    fn swapped_operands_compute_the_pass_for_every_k() {
        use crate::fragment::deeper;
        for instr in [MmaSyncM8n8k4F64, MmaSyncM16n8k4F64, MfmaF64_16x16x4] {
            let f = fragment(instr);
            let deep = |d: u32| fragment(deeper(instr, d).unwrap());
            let depths: &[u32] = if instr == MmaSyncM16n8k4F64 { &[1, 2, 4] } else { &[1] };
            for &n in depths {
                for k in 1..=32u32 {
                    let input: Vec<f64> = (0..k * k * k).map(|e| ((e * 5 + 3) % 7) as f64 - 3.0).collect();
                    let b: Vec<f64> = (0..k * k).map(|e| ((e * 3 + 1) % 5) as f64 - 2.0).collect();
                    let want = plain_pass(k, &input, &b);
                    assert_eq!(swapped_pass(&f, &deep, n, k, &input, &b, true).unwrap(), want, "{instr:?} fuse_k({n}) K={k}");
                    if k >= 2 {
                        assert_ne!(swapped_pass(&f, &deep, n, k, &input, &b, false).unwrap(), want, "{instr:?} K={k}: D' stored untransposed passed");
                    }
                }
            }
        }
    }

    /// The f16/bf16 tolerance of `DType::tolerance` is what the tiled WMMA pass, with every
    /// pass output rounded to the storage type as the kernel stores it, stays under with a
    /// margin of 3, against the FP64 transform of the same rounded inputs.
    #[test]
    fn half_precision_tolerances_hold_on_the_cpu_model() {
        use crate::DType;
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for (dtype, instr) in [(DType::F16, WmmaF32_16x16x16Gfx11), (DType::Bf16, WmmaF32_16x16x16Gfx12)] {
            let round = |x: f64| match dtype {
                DType::F16 => half::f16::from_f64(x).to_f64(),
                _ => half::bf16::from_f64(x).to_f64(),
            };
            let f = fragment(instr);
            let mut worst = 0.0f64;
            for k in [1u32, 2, 5, 6, 8, 12, 16, 20, 32] {
                for _ in 0..2 {
                    let a: Vec<f64> = (0..k * k * k).map(|_| round(rng.random_range(-1.0..1.0))).collect();
                    let b: Vec<f64> = (0..k * k).map(|_| round(rng.random_range(-1.0..1.0))).collect();
                    let (mut x, mut exact) = (a.clone(), a.clone());
                    for _ in 0..3 {
                        x = tile_pass(&f, k, &x, &b).unwrap().into_iter().map(round).collect();
                        exact = plain_pass(k, &exact, &b);
                    }
                    let max_ref = exact.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    let max_err = x.iter().zip(&exact).fold(0.0f64, |m, (g, w)| m.max((g - w).abs()));
                    worst = worst.max(max_err / max_ref);
                }
            }
            println!("{dtype}: worst max rel error {worst:.3e}, tolerance {:.1e}", dtype.tolerance());
            assert!(worst * 3.0 < dtype.tolerance(), "{dtype}: {worst:e} leaves no margin under {:e}", dtype.tolerance());
        }
    }
}

//! Which operations a planned level lowers ([`crate::op::Operation`]): every transform level
//! whose kernel walks the batch one tensor per block (or per pipeline stage) with B loaded
//! once, since a matrix per dimension is three B loads and a batch layout is the address of
//! tensor n. What cannot: the copy floor, library levels, and the levels that split a tensor
//! between blocks or put several in one stage.

use super::{Body, Plan, PlanError, Request, TransformPlan};
use crate::ir::{Memory, Schedule};
use crate::op::{Layout, Matrices, Operation};

/// The level a refusal names instead: fused-pipe (tuned for every K it fits), else L3; for
/// a rank sum, fused (matrix cores; its three buffers fit in shared memory up to K = 21 in
/// f64 on sm_90, two with `restage_a(1)` up to 24), else L3 (thread-mapped, its accumulator in
/// the workspace).
fn instead(k: u32, op: Operation) -> &'static str {
    match op.matrices {
        Matrices::RankSum if k <= 24 => "fused or L3-regblk",
        Matrices::RankSum => "L3-regblk",
        _ if k <= 24 => "fused-pipe or L3-regblk",
        _ if k == 32 => "fused-split or L3-regblk",
        _ => "L3-regblk",
    }
}

/// Why a transform plan cannot walk a rank sum's terms, if it cannot: the terms need the whole
/// tensor staged once in shared memory beside the two intermediates, and each wave's output
/// tiles held in registers across the terms, so one tensor per block and plain fragment passes.
fn rank_sum_refusal(tp: &TransformPlan) -> Option<&'static str> {
    let f = tp.fragment?;
    match () {
        _ if tp.wmma || f.b.regs != 1 => Some("a rank sum scales B fragments of one register"),
        _ if !tp.stages_whole_tensor() || tp.shared_buffers != 2 => Some("a rank sum keeps A staged whole beside two shared intermediates"),
        _ if tp.pipeline >= 2 || tp.bulk_copy => Some("a rank sum walks its terms on one staged tensor, not a pipeline of tensors"),
        _ if tp.b.memory != Memory::Registers => Some("a rank sum loads each term's matrices into register fragments"),
        _ if tp.swap_operands || tp.fma_tail || tp.coalesce_c || tp.jam > 1 || tp.col_split > 1 => {
            Some("a rank sum holds each wave's output tiles in registers (no swap_operands, fma_tail, coalesce_c, unroll(rows), split_cols)")
        }
        _ => None,
    }
}

impl Schedule {
    /// [`Schedule::plan`] for `op`: the same plan with `op` recorded, or a one-line refusal
    /// naming a level that lowers it.
    pub fn plan_op(&self, req: Request, op: Operation) -> Result<Plan, PlanError> {
        let mut plan = self.plan(req)?;
        if let Body::Transform(tp) = plan.body {
            // A rank sum's own parameters are refused rather than ignored elsewhere, so that the
            // tuner times no duplicate kernels.
            if tp.stage_terms > 0 && op.matrices != Matrices::RankSum {
                return Err(PlanError::Malformed {
                    level: self.name.clone(),
                    what: format!("stage_terms({}) stages the matrices of a rank sum's terms; {} has none: use stage_terms(0)", tp.stage_terms, op.describe()),
                });
            }
            if tp.restage_a && op.matrices != Matrices::RankSum {
                return Err(PlanError::Malformed {
                    level: self.name.clone(),
                    what: format!("restage_a(1) copies A again for each of a rank sum's terms; {} has none: use restage_a(0)", op.describe()),
                });
            }
        }
        if op.is_seed() {
            return Ok(plan);
        }
        let refuse = |why: &str| PlanError::Operation { level: self.name.clone(), op: op.describe(), why: why.into(), instead: instead(req.k, op) };
        let tp: TransformPlan = match plan.body {
            Body::Transform(tp) => tp,
            Body::Copy { .. } => return Err(refuse("the copy floor computes no transform")),
            Body::Library(_) => return Err(refuse("its vendor BLAS calls take one matrix over a contiguous batch")),
        };
        let why = match () {
            _ if tp.cluster > 1 => Some("its blocks share a tensor through a cluster (cluster(N))"),
            // split_output(2): each block computes its half of the output from the whole tensor,
            // one tensor per pair of blocks; a rank sum would hold the half's output across terms.
            _ if tp.split_output > 1 && op.matrices == Matrices::RankSum => Some("its blocks split a tensor's output (split_output(N))"),
            _ if tp.tensors > 1 => Some("a stage holds several consecutive tensors (tensors(N))"),
            // stack(N): N consecutive tensors side by side in each pass, so one contiguous
            // batch; a rank sum keeps one tensor per block.
            _ if tp.stack > 1 && (op.layout != Layout::Contiguous || op.matrices == Matrices::RankSum) => Some("a stage holds several consecutive tensors (stack(N)); stack(N) takes a contiguous batch"),
            _ if tp.coalesce_c && op.scaled => Some("coalesce_c(1) stores C in vectors; beta needs C element by element"),
            _ if tp.wmma && op.scaled => Some("tensorize(wmma) stores C with the fragment API; beta needs C element by element"),
            _ if op.matrices == Matrices::RankSum && tp.fragment.is_none() && tp.stages_whole_tensor() => Some("a rank sum's thread-mapped passes read A where it lies"),
            _ if op.matrices == Matrices::RankSum && tp.fragment.is_some() => rank_sum_refusal(&tp),
            _ => None,
        };
        if let Some(why) = why {
            return Err(refuse(why));
        }
        // The operation's extra elements of shared memory (and of device workspace per block).
        let extra_elems: u64 = match op.matrices {
            // Three staged matrices where there was one.
            Matrices::PerDim if tp.b.memory == Memory::Shared => {
                let (rows, cols) = match tp.fragment {
                    Some(f) => (TransformPlan::padded(req.k, f.k), TransformPlan::padded(req.k, f.n)),
                    None => (req.k, req.k),
                };
                2 * rows as u64 * (cols + tp.b.pad) as u64
            }
            // The thread-mapped rank sum adds each term into a third K³ buffer beside the two
            // intermediates, in the workspace where they are.
            Matrices::RankSum if tp.fragment.is_none() && tp.workspace != Memory::Shared => {
                plan.workspace_elems_per_block += (req.k as u64).pow(3);
                0
            }
            Matrices::RankSum if tp.fragment.is_none() => (req.k as u64).pow(3),
            // A third buffer: the staged tensor, read by every term's pass 0; and
            // stage_terms(N)'s ring of N terms' matrices.
            // restage_a(1) has no third buffer: A goes to the free intermediate every term.
            Matrices::RankSum => (!tp.restage_a as u64) * req.k as u64 * tp.shared_row_elems(req.k) as u64 + tp.stage_terms as u64 * tp.staged_term_elems(req.k) as u64,
            _ => 0,
        };
        if extra_elems > 0 {
            let need = plan.shared_bytes as u64 + extra_elems * req.dtype.bytes() as u64;
            let two_buffers_fit = op.matrices == Matrices::RankSum && tp.fragment.is_some() && tp.stage_terms == 0 && plan.shared_bytes <= req.arch.shared_bytes_max;
            if need > req.arch.shared_bytes_max as u64 && two_buffers_fit {
                return Err(PlanError::Malformed {
                    level: self.name.clone(),
                    what: format!(
                        "a rank sum's A staged once in a third buffer takes K = {} ({}) to {need} bytes of shared memory per block; {} allows {}: restage_a(1) copies A into a free intermediate for every term instead",
                        req.k, req.dtype, req.arch.name, req.arch.shared_bytes_max
                    ),
                });
            }
            if need > req.arch.shared_bytes_max as u64 {
                return Err(PlanError::SharedTooLarge { level: self.name.clone(), k: req.k, dtype: req.dtype, need, max: req.arch.shared_bytes_max, arch: req.arch.name });
            }
            plan.shared_bytes = need as u32;
            plan.dynamic_shared = need > req.arch.shared_bytes_default as u64;
        }
        plan.op = op;
        Ok(plan)
    }
}

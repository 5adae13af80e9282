//! The steps that shape a transform level's passes beyond their operands, most of them the
//! whole-tensor fused form's (the tensor and both intermediates in shared memory): buffers,
//! pipelining, tensors per block, stacking, row jam, column split, deeper instructions, the FMA
//! tail, chaining, staged stores and swapped operands. Each is checked against the others, and
//! together they make the [`TransformPlan`].

use super::blocks_per_tensor::SplitRequest;
use super::error::PlanError;
use super::operands::Operands;
use super::transform::TransformPlan;
use crate::dtype::DType;
use crate::instr::fuse_k_max;
use crate::ir::{Loop, Memory, Schedule, Step};
use crate::request::Request;

impl Schedule {
    /// The decisions of a transform level for `req` with `threads` per block: its operands
    /// ([`Schedule::plan_operands`]), then every other step, checked.
    pub(super) fn plan_transform(&self, req: Request, threads: u32) -> Result<TransformPlan, PlanError> {
        let Request { k, arch, dtype } = req;
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        let Operands { map, a, b, register_tile, out, unroll_k, unroll_cols, unroll_k_by, unroll_cols_by, workspace, fragment, wmma } = self.plan_operands(req, threads)?;
        // The fused form: the tensor and both intermediates in shared memory, matrix fragments
        // indexed by lane (buffers(1), pipeline(N), cluster(N) build on it).
        let whole = a.memory == Memory::Shared && workspace == Memory::Shared && fragment.is_some() && !wmma;
        // Passes that read their input where it lies (not staged chunk by chunk).
        let direct = a.memory == Memory::Global || (a.memory == Memory::Shared && workspace == Memory::Shared);
        let shared_buffers = self.step_value(|s| match s {
            Step::Buffers(v) => Some(v),
            _ => None,
        })
        .unwrap_or(2);
        if shared_buffers == 1 && !whole {
            return Err(malformed("buffers(1) needs tensorize(mma), cache_read(A, shared) and workspace(shared)"));
        }
        if !(1..=9).contains(&shared_buffers) {
            return Err(malformed("buffers(N) takes 1 to 9"));
        }
        let pipeline = self.step_value(|s| match s {
            Step::Pipeline(v) => Some(v),
            _ => None,
        })
        .unwrap_or(1);
        if pipeline != 1 {
            // pipeline(2) with buffers(2): the next tensor goes to the buffer pass 2 does not
            // read; otherwise a ring of N input buffers plus one intermediate.
            let ring = shared_buffers == pipeline + 1;
            // cluster(N) gives its buffers their own roles (checked below).
            let clustered = self.iter_steps().any(|s| matches!(s, Step::Cluster(_)));
            if !(2..=8).contains(&pipeline) || !whole || !(ring || (pipeline == 2 && shared_buffers == 2) || clustered) {
                return Err(malformed("pipeline(N) needs tensorize(mma), cache_read(A, shared), workspace(shared) and buffers(N + 1) (or buffers(2) with pipeline(2)); 2 <= N <= 8"));
            }
            if arch.vendor != crate::Vendor::Nvidia {
                return Err(PlanError::ArchUnsupported {
                    level: self.name.clone(),
                    arch: arch.name,
                    why: "pipeline(2) copies the next tensor with cp.async (NVIDIA sm_80+); run level `fused` there".into(),
                });
            }
        }
        let tensors = self.step_value(|s| match s {
            Step::Tensors(v) => Some(v),
            _ => None,
        })
        .unwrap_or(1);
        if tensors != 1 {
            let lanes = fragment.map_or(32, |f| f.lanes);
            if !(2..=4).contains(&tensors) || pipeline != 2 || shared_buffers != 2 || threads % (tensors * lanes) != 0 {
                return Err(malformed("tensors(N) splits the warps of pipeline(2) with buffers(2) into N groups: 2 <= N <= 4, threads a multiple of N warps"));
            }
            if arch.vendor != crate::Vendor::Nvidia {
                return Err(PlanError::ArchUnsupported {
                    level: self.name.clone(),
                    arch: arch.name,
                    why: "tensors(N) synchronises its warp groups with PTX named barriers (bar.sync id, count) and copies with cp.async (NVIDIA); run level `fused` there".into(),
                });
            }
        }
        let cluster = self.plan_cluster(req, whole, pipeline, shared_buffers, tensors)?;
        let async_exchange = self.plan_async_exchange(req, cluster)?;
        let bulk_copy = self
            .switch(|s| if let Step::BulkCopy(v) = s { Some(v) } else { None }, "bulk_copy", "0 (cp.async by every thread) or 1 (bulk copies, one per row)")
            .map_err(|e| malformed(&e))?;
        let split_output = self.step_value(|s| match s {
            Step::SplitOutput(v) => Some(v),
            _ => None,
        })
        .unwrap_or(1);
        // split_output(2) loads its slices with bulk copies of its own (checked with it below).
        let splits = split_output > 1;
        if bulk_copy && !splits {
            if !whole || pipeline < 2 || tensors != 1 {
                return Err(malformed("bulk_copy(1) chooses how pipeline(N) copies whole tensors (or cluster(N) its slices) of fused passes: it needs pipeline(N), without tensors(N)"));
            }
            if !arch.bulk_async_copy {
                return Err(PlanError::ArchUnsupported {
                    level: self.name.clone(),
                    arch: arch.name,
                    why: "bulk_copy(1) uses cp.async.bulk (the TMA unit of NVIDIA sm_90); use bulk_copy(0)".into(),
                });
            }
            if dtype != DType::F64 {
                return Err(PlanError::DTypeUnsupported {
                    level: self.name.clone(),
                    dtype,
                    why: "bulk_copy(1) copies rows of K² f64 values in 16-byte units; use bulk_copy(0)".into(),
                });
            }
        }
        let late_wait = self.plan_late_wait(cluster)?;
        let align_runs = self
            .switch(|s| if let Step::AlignRuns(v) = s { Some(v) } else { None }, "align_runs", "0 (runs at stride K) or 1 (runs at an even stride at odd K)")
            .map_err(|e| malformed(&e))?;
        if align_runs && (!whole || cluster != 1) {
            return Err(malformed("align_runs(1) pads the runs of the whole-tensor shared intermediates of fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared), without cluster(N) (whose slices keep their layout)"));
        }
        let pair_rows = self
            .switch(|s| if let Step::PairRows(v) = s { Some(v) } else { None }, "pair_rows", "0 (rows as the instruction lays them) or 1 (row pairs per lane)")
            .map_err(|e| malformed(&e))?;
        if pair_rows && !whole {
            return Err(malformed("pair_rows(1) permutes the tile rows of fused passes: it needs tensorize(mma), cache_read(A, shared) and workspace(shared)"));
        }
        // pair_rows(1): the emitter indexes A and D through the permuted rows where the
        // instruction has them (NVIDIA m16n8k*), and through the instruction's own elsewhere.
        let row_pairs = if pair_rows { fragment.and_then(|f| f.with_row_pairs()) } else { None };
        let fragment = row_pairs.or(fragment);
        let jam = self.step_value(|s| match s {
            Step::Unroll(Loop::Rows, by) => Some(by),
            _ => None,
        })
        .unwrap_or(1);
        if jam != 1 && (!(1..=4).contains(&jam) || fragment.is_none() || wmma || shared_buffers == 1 || !direct) {
            return Err(malformed("unroll(rows, by = N) jams the row tiles of tensorize(mma) passes that read their input where it lies (not chunk-staged, not buffers(1)); 1 <= N <= 4"));
        }
        let col_split = self.step_value(|s| match s {
            Step::SplitCols(v) => Some(v),
            _ => None,
        })
        .unwrap_or(1);
        if col_split != 1 {
            let Some(f) = fragment.filter(|_| !wmma) else {
                return Err(malformed("split_cols(N) shares the row tiles of tensorize(mma) passes between warps"));
            };
            let frags = TransformPlan::padded(k, f.n) / f.n;
            let waves = threads / f.lanes;
            if !(1..=4).contains(&col_split) || b.memory != Memory::Registers || !direct || shared_buffers == 1 || tensors != 1 {
                return Err(malformed("split_cols(N) splits the B fragments held in registers (cache_read(B, registers)) of passes that read their input where it lies, without buffers(1) or tensors(..); 1 <= N <= 4"));
            }
            if !frags.is_multiple_of(col_split) || waves % col_split != 0 {
                return Err(PlanError::KUnsupported {
                    level: self.name.clone(),
                    k,
                    why: format!("split_cols({col_split}) needs the {frags} column fragments and the {waves} waves of a block to split evenly"),
                });
            }
        }
        let fuse_k = self.step_value(|s| match s {
            Step::FuseK(v) => Some(v),
            _ => None,
        })
        .unwrap_or(1);
        // split_output(2) checks its own instructions (sm_90's m16n8k8/k16), naming what
        // runs instead where the arch lacks them.
        if fuse_k != 1 && !splits {
            if ![2, 4].contains(&fuse_k) {
                return Err(malformed("fuse_k(N) takes 1, 2 or 4 (k-steps per instruction)"));
            }
            let Some(f) = fragment.filter(|_| !wmma) else {
                return Err(malformed("fuse_k(N) issues N k-steps of the matrix instruction as one: it needs tensorize(mma)"));
            };
            // Every depth the greedy split of the k loop may use must exist and be exact.
            for depth in (1..=fuse_k).filter(|d| d.is_power_of_two() && *d > 1) {
                let deep = crate::fragment::deeper(f.instr, depth).filter(|d| arch.has(*d)).map(crate::fragment::fragment);
                let deep = if row_pairs.is_some() { deep.and_then(|d| d.with_row_pairs()) } else { deep };
                if deep.and_then(|d| f.step_operands(&d)).is_none() {
                    return Err(PlanError::ArchUnsupported {
                        level: self.name.clone(),
                        arch: arch.name,
                        why: format!(
                            "fuse_k({fuse_k}): {} has no instruction {depth} k-steps deep there (fuse_k_max = {}); use fuse_k(1)",
                            f.instr.name(),
                            fuse_k_max(arch, dtype)
                        ),
                    });
                }
            }
        }
        let fma_tail = self
            .switch(|s| if let Step::FmaTail(v) = s { Some(v) } else { None }, "fma_tail", "0 (a zero-padded last column fragment) or 1 (the last K mod FN columns by FMA)")
            .map_err(|e| malformed(&e))?;
        if fma_tail {
            let Some(f) = fragment.filter(|_| !wmma) else {
                return Err(malformed("fma_tail(1) computes the columns past the last whole fragment of tensorize(mma) by FMA: it needs tensorize(mma)"));
            };
            if b.memory != Memory::Registers || !direct || cluster != 1 || jam != 1 || col_split != 1 {
                return Err(malformed("fma_tail(1) adds FMA columns to the tiles of passes that read their input where it lies, with cache_read(B, registers): not with cluster(N), unroll(rows) or split_cols(N)"));
            }
            if k < f.n || k % f.n == 0 {
                let why = if k < f.n {
                    format!("fma_tail(1) leaves whole column fragments to {}: K = {k} has none (FN = {}); use fma_tail(0)", f.instr.name(), f.n)
                } else {
                    format!("fma_tail(1): K = {k} is a whole number of column fragments (FN = {}), there is no tail; use fma_tail(0)", f.n)
                };
                return Err(PlanError::KUnsupported { level: self.name.clone(), k, why });
            }
        }
        let stack = self.step_value(|s| match s {
            Step::Stack(v) => Some(v),
            _ => None,
        })
        .unwrap_or(1);
        if stack != 1 {
            let plain = pipeline == 2 && shared_buffers == 2 && tensors == 1 && cluster == 1 && jam == 1 && col_split == 1 && !fma_tail;
            if !(1..=4).contains(&stack) || !whole || !plain {
                return Err(malformed("stack(N) widens the fused passes of pipeline(2) with buffers(2) to N tensors: tensorize(mma), cache_read(A, shared), workspace(shared), without tensors(..), cluster(..), unroll(rows), split_cols(..) or fma_tail(1); 1 <= N <= 4"));
            }
        }
        let chain = self
            .switch(|s| if let Step::Chain(v) = s { Some(v) } else { None }, "chain", "0 (pass 0's output stored) or 1 (pass 1 reads pass 0's accumulators in registers)")
            .map_err(|e| malformed(&e))?;
        let prefetch_l2 = self.step_value(|s| match s {
            Step::PrefetchL2(v) => Some(v),
            _ => None,
        })
        .unwrap_or(0);
        if split_output == 1 && (chain || prefetch_l2 > 0) {
            return Err(malformed("chain(1) and prefetch_l2(N) shape the passes of split_output(2): add split_output(2)"));
        }
        if split_output != 1 {
            self.check_split_output(SplitRequest { k, arch, dtype, threads, split_output, whole, others_plain: pipeline == 1 && cluster == 1 && tensors == 1 && stack == 1 && jam == 1 && col_split == 1 && shared_buffers == 2 && !fma_tail && !pair_rows && !align_runs, b, a, chain, bulk_copy, fuse_k, prefetch_l2 })?;
        }
        let co_schedule = self.plan_co_schedule(arch, split_output)?;
        let stage_terms = self.step_value(|s| match s {
            Step::StageTerms(v) => Some(v),
            _ => None,
        })
        .unwrap_or(0);
        if stage_terms == 1 || stage_terms > 4 || (stage_terms > 0 && (!whole || b.memory != Memory::Registers)) {
            return Err(malformed("stage_terms(N) stages a rank sum's matrices for fused passes that load B into registers (tensorize(mma), cache_read(A, shared), cache_read(B, registers), workspace(shared)): 0 (none) or 2 to 4 terms"));
        }
        let restage_a = self
            .switch(|s| if let Step::RestageA(v) = s { Some(v) } else { None }, "restage_a", "0 (a rank sum's A staged once) or 1 (copied again for every term)")
            .map_err(|e| malformed(&e))?;
        if restage_a && (!whole || stage_terms > 0) {
            return Err(malformed("restage_a(1) copies a rank sum's A into the free intermediate of fused passes (tensorize(mma), cache_read(A, shared), workspace(shared)), one asynchronous copy at a time: not with stage_terms(N)"));
        }
        if shared_buffers > 2 && pipeline == 1 {
            return Err(malformed("buffers(N > 2) hold the tensors in flight of pipeline(N - 1): add pipeline(..)"));
        }
        let coalesce_c = self
            .switch(|s| if let Step::CoalesceC(v) = s { Some(v) } else { None }, "coalesce_c", "0 (C stored from the fragments) or 1 (C staged in shared memory, stored in whole lines)")
            .map_err(|e| malformed(&e))?;
        // The last pass needs a K³ buffer it does not read: with buffers(2) and one tensor in
        // flight, pass 1's input. pipeline(N) fills that buffer with the next tensor, buffers(1)
        // has none, and the other layouts (tensors, cluster, stack, split_output) keep their own.
        if coalesce_c && (!whole || pipeline != 1 || shared_buffers != 2 || tensors != 1 || cluster != 1 || stack != 1 || split_output != 1) {
            return Err(malformed("coalesce_c(1) stages C in the shared buffer the fused passes' last pass does not read: it needs tensorize(mma), cache_read(A, shared), workspace(shared) and buffers(2), without pipeline(N), tensors(N), cluster(N), stack(N) or split_output(N)"));
        }
        let swap_operands = self
            .switch(|s| if let Step::SwapOperands(v) = s { Some(v) } else { None }, "swap_operands", "0 (the tensor as the instruction's A operand) or 1 (as its B operand, K² as N)")
            .map_err(|e| malformed(&e))?;
        // The transposed pass has one form: whole-tensor shared intermediates read where
        // they lie, B's fragments in registers, one tensor per pass, no row permutation.
        if swap_operands {
            let one_register_b = fragment.is_some_and(|f| f.b.regs == 1);
            let plain = pipeline <= 2 && tensors == 1 && cluster == 1 && stack == 1 && jam == 1 && col_split == 1 && split_output == 1 && shared_buffers >= 2;
            if !whole || wmma || !one_register_b || b.memory != Memory::Registers || !plain || pair_rows || fma_tail || coalesce_c {
                return Err(malformed("swap_operands(1) computes the fused passes transposed: it needs tensorize(mma) with a one-register B fragment (f64), cache_read(A, shared), cache_read(B, registers), workspace(shared) and two or more buffers, without pair_rows(1), fma_tail(1), coalesce_c(1), pipeline(N > 2), stack(N), tensors(N), cluster(N), split_cols(N), split_output(N) or unroll(rows)"));
            }
        }
        let plan = TransformPlan {
            swap_operands,
            coalesce_c,
            split_output,
            chain,
            prefetch_l2,
            stage_terms,
            restage_a,
            co_schedule,
            stack,
            fma_tail,
            bulk_copy,
            fuse_k,
            align_runs,
            row_pairs: row_pairs.is_some(),
            late_wait,
            async_exchange,
            col_split,
            jam,
            cluster,
            pipeline,
            tensors,
            shared_buffers,
            map,
            a,
            b,
            register_tile,
            out,
            unroll_k,
            unroll_cols,
            unroll_k_by,
            unroll_cols_by,
            workspace,
            fragment,
            wmma,
        };
        // Odd K: see TransformPlan::shifted_rows. The shift needs an odd row stride (so that
        // every row's 16-byte units line up in both memories) and the two-buffer loop.
        // An odd pad makes the intermediates' stride even; the staged tensor then keeps an odd
        // one of its own (TransformPlan::split_staged_stride).
        if plan.shifted_rows(k) && (plan.align_runs || plan.stack != 1 || plan.shared_buffers != 2) {
            return Err(PlanError::KUnsupported {
                level: self.name.clone(),
                k,
                why: "bulk_copy(1) at odd K shifts each tensor to the 16-byte boundary below it: it needs rows of K² values at an odd row stride (align_runs(0)), buffers(2) and stack(1); use bulk_copy(0)".to_string(),
            });
        }
        if plan.bulk_copy && !plan.shifted_rows(k) && !plan.shared_row_pad().is_multiple_of(2) {
            return Err(PlanError::KUnsupported {
                level: self.name.clone(),
                k,
                why: format!("bulk_copy(1) needs 16-byte aligned shared rows: an even row pad (pad {} here); use bulk_copy(0)", plan.shared_row_pad()),
            });
        }
        Ok(plan)
    }
}

//! Where a transform kernel's shared memory goes: its arrays in layout order, their
//! declarations (static, or one dynamic allocation above the static limit), the scratch the
//! passes take, and the pitch from one intermediate buffer to the next.

use super::Emitter;
use crate::ir::Memory;
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// The shared arrays of a transform plan, in the order they are laid out: (name, element
    /// count as a C++ expression over the kernel's constants).
    pub(super) fn shared_arrays(&self, tp: &TransformPlan) -> Vec<(&'static str, &'static str)> {
        // `buffers(N)` K-row buffers of the padded layout (N <= 9, checked by the planner).
        const RING: [&str; 10] = [
            "0",
            "K * W_STRIDE",
            "2 * K * W_STRIDE",
            "3 * K * W_STRIDE",
            "4 * K * W_STRIDE",
            "5 * K * W_STRIDE",
            "6 * K * W_STRIDE",
            "7 * K * W_STRIDE",
            "8 * K * W_STRIDE",
            "9 * K * W_STRIDE",
        ];
        const RING_BARS: [&str; 10] = [
            "0",
            "K * W_STRIDE + 1",
            "2 * K * W_STRIDE + 2",
            "3 * K * W_STRIDE + 3",
            "4 * K * W_STRIDE + 4",
            "5 * K * W_STRIDE + 5",
            "6 * K * W_STRIDE + 6",
            "7 * K * W_STRIDE + 7",
            "8 * K * W_STRIDE + 8",
            "9 * K * W_STRIDE + 9",
        ];
        let mut arrays: Vec<(&str, &str)> = Vec::new();
        if tp.b.memory == Memory::Shared {
            let per_dim = self.plan.op.matrices == crate::op::Matrices::PerDim;
            let rows = match (tp.fragment.is_some(), per_dim) {
                (true, false) => "KP * B_STRIDE",
                (false, false) => "K * B_STRIDE",
                (true, true) => "3 * KP * B_STRIDE",
                (false, true) => "3 * K * B_STRIDE",
            };
            arrays.push(("b_shared", rows));
        }
        if tp.out.is_some() {
            arrays.push(("out_tile", "THREADS * OUT_STRIDE"));
        }
        if tp.a.memory == Memory::Shared && !tp.stages_whole_tensor() {
            arrays.push(("a_stage", "KP * A_STRIDE"));
        }
        if tp.wmma_stages_c(self.plan.request.k) {
            arrays.push(("c_stage", "WAVES * FM * NP"));
        }
        if tp.workspace == Memory::Shared && tp.cluster > 1 {
            // Three or four buffers, then one element (8 bytes) per mbarrier: the bulk copies',
            // and with async_exchange(1) one per gather buffer.
            const THREE: [&str; 4] = ["3 * SLICE", "3 * SLICE + 1", "3 * SLICE + 2", "3 * SLICE + 3"];
            const FOUR: [&str; 4] = ["4 * SLICE", "4 * SLICE + 1", "4 * SLICE + 2", "4 * SLICE + 3"];
            let mbarriers = tp.cluster_mbarriers(self.plan.request.arch) as usize;
            arrays.push(("w_shared", if tp.shared_buffers == 4 { FOUR[mbarriers] } else { THREE[mbarriers] }));
        } else if tp.workspace == Memory::Shared {
            let buffers = match tp.shared_buffers {
                // A thread-mapped rank sum: its accumulator beside the two intermediates.
                2 if !tp.stages_whole_tensor() && self.plan.op.matrices == crate::op::Matrices::RankSum => "3 * K3",
                2 if !tp.stages_whole_tensor() => "2 * K3",
                // tensors(N): two buffers per warp group.
                2 if tp.tensors > 1 => "GROUPS * 2 * K * W_STRIDE",
                // bulk_copy(1): one element (8 bytes) per buffer for its mbarrier, after them; at odd
                // K two buffers of BUF (the planner allows no other count there).
                2 if tp.shifted_rows(self.plan.request.k) => "2 * BUF + 2",
                n if tp.bulk_copy => RING_BARS[n as usize],
                // A rank sum keeps the staged tensor in a third buffer (restage_a(1): in the
                // intermediates).
                n if self.plan.op.matrices == crate::op::Matrices::RankSum && !tp.restage_a => RING[n as usize + 1],
                n => RING[n as usize],
            };
            arrays.push(("w_shared", buffers));
        }
        if self.plan.op.matrices == crate::op::Matrices::RankSum && tp.stage_terms > 0 {
            arrays.push(("term_slots", "STAGE_TERMS * TERM_SLOT"));
        }
        arrays
    }

    /// The shared-memory arrays this plan needs, as declarations: static `__shared__` arrays,
    /// or, above the static limit, pointers into one dynamic allocation (the runtime raises
    /// the kernel's dynamic shared-memory limit to match).
    pub(super) fn shared_declarations(&self, tp: &TransformPlan) -> String {
        let t = self.t();
        let arrays = self.shared_arrays(tp);
        let mut out = String::new();
        if self.plan.dynamic_shared {
            out += &format!(
                "// {} bytes of shared memory: more than a static array may have, so one dynamic allocation.\n",
                self.plan.shared_bytes
            );
            out += &format!("extern __shared__ {} {t} mra_smem[];\n", self.d.align32());
            let mut offset = String::from("0");
            for (name, count) in arrays {
                out += &format!("{t}* {name} = mra_smem + {offset};\n");
                offset = if offset == "0" { format!("({count})") } else { format!("{offset} + ({count})") };
            }
        } else {
            for (name, count) in arrays {
                out += &format!("__shared__ {} {t} {name}[{count}];\n", self.d.align32());
            }
        }
        out
    }
}

/// The passes' shared scratch arrays, in parameter order (what `transform_tensor` takes
/// besides B and the intermediates).
pub(super) fn scratch_names(tp: &TransformPlan, k: u32) -> Vec<&'static str> {
    let mut names = Vec::new();
    if tp.out.is_some() {
        names.push("out_tile");
    }
    if tp.a.memory == Memory::Shared && !tp.stages_whole_tensor() {
        names.push("a_stage");
    }
    if tp.wmma_stages_c(k) {
        names.push("c_stage");
    }
    names
}

/// `, out_tile, a_stage`: the scratch arguments of a `transform_tensor` call.
pub(super) fn scratch_args(tp: &TransformPlan, k: u32) -> String {
    scratch_names(tp, k).iter().map(|n| format!(", {n}")).collect()
}

/// The elements from one shared buffer of the fused passes to the next: K rows of W_STRIDE, or
/// BUF where bulk copies shift odd-K tensors (`TransformPlan::shifted_rows`); two K³
/// intermediates where the input is not staged whole.
pub(super) fn buffer_pitch(tp: &TransformPlan, k: u32) -> &'static str {
    if !tp.stages_whole_tensor() {
        "K3"
    } else if tp.shifted_rows(k) {
        "BUF"
    } else {
        "K * W_STRIDE"
    }
}

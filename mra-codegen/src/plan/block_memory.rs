//! The memory a block of a transform level uses: shared memory for its staged operands,
//! intermediates and barriers, or device-memory workspace for intermediates that stay there.

use super::transform::TransformPlan;
use crate::arch::Arch;
use crate::ir::Memory;

impl TransformPlan {
    /// Bytes of shared memory per block and elements of device-memory workspace per block, at
    /// order `k` on `arch` with `threads` per block and `elem` bytes per value.
    pub(super) fn block_memory(&self, k: u32, arch: &Arch, threads: u32, elem: u64) -> (u64, u64) {
        let TransformPlan { a, b, out, workspace, fragment, .. } = *self;
        let k3 = (k as u64).pow(3);
        // A fragment level keeps B zero-padded to whole fragments in shared memory.
        let (b_rows, b_cols) = match fragment {
            Some(f) => (TransformPlan::padded(k, f.k), TransformPlan::padded(k, f.n)),
            None => (k, k),
        };
        let b_shared = if b.memory == Memory::Shared { b_rows as u64 * (b_cols + b.pad) as u64 * elem } else { 0 };
        let (w_shared, w_global) = if self.split_output > 1 {
            (self.split_shared_bytes(k, threads / 32, elem), 0)
        } else if workspace == Memory::Shared && self.cluster > 1 {
            // Three or four buffers, and the 8-byte mbarriers (bulk copies, gather buffers).
            let mbarriers = 8 * self.cluster_mbarriers(arch) as u64;
            (self.shared_buffers as u64 * self.cluster_slice_elems(k) * elem + mbarriers, 0)
        } else if workspace == Memory::Shared {
            let buffers = if self.stages_whole_tensor() { self.shared_buffers } else { 2 } as u64;
            // K rows of W_STRIDE elements (the runs K or K + 1 apart, then the row pad).
            let row = if self.stages_whole_tensor() { self.shared_row_elems(k) } else { k * k };
            // bulk_copy(1): one 8-byte mbarrier per buffer, after the buffers; at odd K one more
            // element per buffer (BUF = K · W_STRIDE + 1, room for the shift; the staged rows at
            // WS_STRIDE = W_STRIDE + 1 with split strides).
            let mbarriers = if self.bulk_copy { 8 * buffers } else { 0 };
            let shift = if self.shifted_rows(k) { buffers * elem } else { 0 };
            let row = if self.stages_whole_tensor() { self.staged_row_elems(k) } else { row };
            (self.tensors as u64 * buffers * k as u64 * row as u64 * elem + shift + mbarriers, 0)
        } else {
            (0, 2 * k3)
        };
        let out_shared = out.map_or(0, |o| threads as u64 * (k + o.pad) as u64 * elem);
        // cache_read(A, shared): K rows of one chunk (WAVES tiles of FM rows), padded.
        let a_shared = match (a.memory, fragment) {
            _ if self.stages_whole_tensor() => 0,
            // KP rows: the contraction's padding rows are staged as zeros.
            (Memory::Shared, Some(f)) => TransformPlan::padded(k, f.k) as u64 * ((threads / f.lanes) * f.m + a.pad) as u64 * elem,
            _ => 0,
        };
        let c_shared = match fragment {
            Some(f) if self.wmma_stages_c(k) => (threads / f.lanes * f.m * TransformPlan::padded(k, f.n)) as u64 * elem,
            _ => 0,
        };
        (b_shared + w_shared + out_shared + a_shared + c_shared, w_global)
    }
}

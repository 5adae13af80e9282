//! The decisions of a level that computes the transform as three GEMM passes
//! ([`TransformPlan`]), and the quantities the emitter derives from them: shared-memory
//! layouts, the slices of `cluster(N)` and `split_output(N)`, the columns of the instructions.

use crate::fragment::Fragment;
use crate::arch::Arch;
use crate::ir::{Memory, ThreadMap};
use serde::Serialize;

/// How one operand reaches the GEMM loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Staging {
    pub memory: Memory,
    /// Extra elements per row in shared memory.
    pub pad: u32,
}

/// The decisions for a level that computes the transform as three GEMM passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TransformPlan {
    pub map: ThreadMap,
    /// The pass input: read where it lies (`Global`: device memory or the shared workspace),
    /// or staged through shared memory a chunk of row tiles at a time (`cache_read(A, shared)`).
    pub a: Staging,
    pub b: Staging,
    pub register_tile: bool,
    /// Output rows staged in shared memory for coalesced stores (`cache_write`), if asked.
    pub out: Option<Staging>,
    pub unroll_k: bool,
    pub unroll_cols: bool,
    /// `unroll(k, by = N)`: the factor (0: fully), when `unroll_k`.
    pub unroll_k_by: u32,
    /// `unroll(cols, by = N)`, when `unroll_cols`.
    pub unroll_cols_by: u32,
    /// Where the two intermediates (pass 0 → 1, pass 1 → 2) live.
    pub workspace: Memory,
    /// The matrix fragment of a tensorized level (`bind(warps, tiles)` + `tensorize(..)`).
    pub fragment: Option<Fragment>,
    /// `tensorize(wmma)`: fragments go through NVIDIA's load/store API instead of lane indexing.
    pub wmma: bool,
    /// K³-sized shared buffers of fused passes (`buffers(N)`, default 2); 1: passes 0 and 1
    /// write over their input, holding their output tiles in registers until a barrier.
    pub shared_buffers: u32,
    /// Tensors in flight per block (`pipeline(N)`, default 1); 2: the next tensor is copied
    /// asynchronously (cp.async) while the current one's last pass runs.
    pub pipeline: u32,
    /// Tensors a block transforms at once (`tensors(N)`, default 1): one per warp group, each
    /// group with its own buffers and named barrier.
    pub tensors: u32,
    /// Blocks per thread-block cluster sharing one tensor (`cluster(N)`, default 1: none).
    pub cluster: u32,
    /// Row tiles a wave computes at once (`unroll(rows, by = N)`, default 1): their k loops
    /// are interleaved, so N times the independent matrix instructions and loads per k-step.
    pub jam: u32,
    /// Warps sharing one row tile, each with 1/N of its column fragments (`split_cols(N)`,
    /// default 1): 1/N of the B fragments and accumulators per thread.
    pub col_split: u32,
    /// `async_exchange(1)`: `cluster(N)`'s pass 0 sends with `st.async`, completing on an
    /// mbarrier of the receiving block (one per gather buffer), instead of stores and a
    /// cluster barrier.
    pub async_exchange: bool,
    /// `align_runs(1)`: at odd K the K-long output runs of the shared intermediates lie
    /// K + 1 apart (see [`TransformPlan::run_stride`]).
    pub align_runs: bool,
    /// `pair_rows(1)` on an instruction that has row pairs: `fragment` is
    /// [`Fragment::with_row_pairs`] of the instruction's layout.
    pub row_pairs: bool,
    /// `late_wait(1)`: `cluster(N)`'s pass 0 waits at the cluster barrier after each wave's
    /// first tile instead of before pass 0 (where it waits at all).
    pub late_wait: bool,
    /// `fuse_k(N)`: k-steps of `fragment`'s instruction issued as one deeper instruction (1:
    /// none). Checked at planning: the arch has the deeper instructions, and their registers
    /// are the steps' fragments side by side ([`crate::fragment::Fragment::step_operands`]).
    pub fuse_k: u32,
    /// `bulk_copy(1)`: `pipeline(N)` copies tensors with bulk asynchronous copies completing
    /// on one mbarrier per buffer (8 bytes each, after the buffers).
    pub bulk_copy: bool,
    /// `fma_tail(1)`: the instructions cover the whole column fragments only
    /// ([`TransformPlan::fragment_cols`]); the K mod FN columns after them are computed by FMA,
    /// each lane holding its tail column of B in registers.
    pub fma_tail: bool,
    /// `stack(N)`: tensors side by side in the rows of every fused pass (1: one). The shared
    /// buffers are N tensors wide and the block walks groups of N consecutive tensors.
    pub stack: u32,
    /// `split_output(N)`: blocks per tensor, each computing its 1/N of the output's last index
    /// z with no data exchanged (1: none; see [`TransformPlan::split_z`]).
    pub split_output: u32,
    /// `chain(1)`: pass 1's B operand is pass 0's accumulators, in registers.
    pub chain: bool,
    /// `prefetch_l2(N)`: slices of A a warp asks L2 for ahead of its bulk copies (0: none).
    pub prefetch_l2: u32,
    /// `stage_terms(N)`: a rank sum's terms whose matrices sit in a shared ring (0: none, the
    /// passes load them from device memory); refused for other operations in `plan_op`.
    pub stage_terms: u32,
    /// `restage_a(1)`: a rank sum copies A again for every term into the free intermediate
    /// instead of keeping it in a third buffer; refused for other operations in `plan_op`.
    pub restage_a: bool,
    /// `co_schedule(1)`: a tensor's `split_output` blocks launch as one thread-block cluster
    /// (see [`Plan::cluster_blocks`](super::Plan::cluster_blocks)); they exchange nothing.
    pub co_schedule: bool,
    /// `coalesce_c(1)`: the last pass writes C's layout into `w0` (free: pass 1 read it, pass 2
    /// reads `w1`), and the block stores the tensor from there in one coalesced sweep.
    pub coalesce_c: bool,
    /// `swap_operands(1)`: the fused passes computed transposed, the tensor as the matrix
    /// instruction's B operand (K² columns in tiles of FN) and Bᵀ in registers as its A operand
    /// (K rows in fragments of FM); lowered in `emit/swapped.rs`.
    pub swap_operands: bool,
}

impl TransformPlan {
    /// One slot of `stage_terms(N)`'s ring: a term's X, Y, Z (3·K² elements), rounded up to 4
    /// elements so that every slot starts 16-byte aligned.
    pub fn staged_term_elems(&self, k: u32) -> u32 {
        (3 * k * k).next_multiple_of(4)
    }

    /// `split_output(N)`: the values of z one block computes (ZH): K / N.
    pub fn split_z(&self, k: u32) -> u32 {
        k / self.split_output.max(1)
    }

    /// `split_output(N)`: the row pitch of the last pass's input T2(a, (y, z)) in shared memory,
    /// K·ZH values plus 2, so that an 8-byte load of rows a = 2t, 2t + 1 (t = 0..3) by a
    /// half-warp covers 16 distinct banks (pitch ≡ 2 mod 16 elements).
    pub fn split_t2_pitch(&self, k: u32) -> u32 {
        k * self.split_z(k) + 2
    }

    /// `split_output(N)`: shared memory per block: T2 (K rows of [`TransformPlan::split_t2_pitch`]),
    /// one slot of K² values per warp for its slice of A, one 8-byte mbarrier per warp.
    pub fn split_shared_bytes(&self, k: u32, warps: u32, elem: u64) -> u64 {
        (k as u64 * self.split_t2_pitch(k) as u64 + warps as u64 * (k as u64 * k as u64)) * elem + 8 * warps as u64
    }

    /// `cluster(N)`: the values of the tensor's second index b (and, after the exchange, of
    /// the new first index x) one block holds: ceil(K / N), rounded up to even, so that pass 0's
    /// stores into other blocks stay 16-byte pairs instead of twice as many 8-byte stores; the
    /// last block may hold fewer.
    pub fn cluster_slice_width(&self, k: u32) -> u32 {
        slice_width(k, self.cluster.max(1))
    }

    /// `cluster(N)`: elements of one of a block's three buffers: K rows of K·CL values, padded
    /// (SLICE_STRIDE apart); with [`TransformPlan::cluster_shifted`], K rows of the odd stride
    /// SLICE_STRIDE + 1 and the shift's element (SLICE = K · WS_STRIDE + 1: even, as K is odd).
    pub fn cluster_slice_elems(&self, k: u32) -> u64 {
        let stride = k as u64 * self.cluster_slice_width(k) as u64 + self.shared_row_pad() as u64;
        if self.cluster_shifted(k) { k as u64 * (stride + 1) + 1 } else { k as u64 * stride }
    }

    /// `cluster(N)` with `bulk_copy(1)` on an arch with bulk asynchronous copies (sm_90 TMA):
    /// each row of a block's slice is one contiguous run of CL·K values, copied by one
    /// `cp.async.bulk` (at odd K shifted, [`TransformPlan::cluster_shifted`]), and the block's
    /// rows of C leave by one bulk store; else `cp.async` by every thread and stores from pass 2.
    pub fn cluster_bulk_copies(&self, arch: &Arch) -> bool {
        self.cluster > 1 && arch.bulk_async_copy && self.bulk_copy
    }

    /// `cluster(N)` with `bulk_copy(1)` at odd K: a slice's row a starts at A + n·K³ + a·K² + b0·K,
    /// off the 16-byte grid where n + a + b0 (plus the base's own parity) is odd. So pass 0's
    /// input buffer holds the slice from element sh (the parity of row 0's address) on at an odd
    /// row stride WS_STRIDE = SLICE_STRIDE + 1 (CL and the pad are even), where every row lies at
    /// the same offsets mod 16 bytes in both memories: a row's first value (if off the grid) and
    /// last (if one is left over) go by 8-byte `cp.async`, the rest by one bulk copy. The block's
    /// range of C is staged the same way (from element (C's address / 8) mod 2 of the gather
    /// buffer) and leaves by one bulk store and at most two 8-byte stores.
    pub fn cluster_shifted(&self, k: u32) -> bool {
        self.cluster > 1 && self.bulk_copy && k % 2 == 1
    }

    /// `cluster(N)`: the 8-byte mbarriers after the buffers: one for the bulk copies of the
    /// slice, and with `async_exchange(1)` one per gather buffer.
    pub fn cluster_mbarriers(&self, arch: &Arch) -> u32 {
        let bulk = self.cluster_bulk_copies(arch) as u32;
        let gather = if self.async_exchange { self.shared_buffers - 2 } else { 0 };
        bulk + gather
    }

    /// `cluster(N)` with `async_exchange(1)`: the bytes block `rank` receives per tensor, which
    /// its gather mbarrier expects: every (b, c) row of T1 for the values x0 .. x0 + CL of x
    /// it owns (fewer in the last block when CL does not divide K).
    pub fn cluster_gather_bytes(&self, k: u32, rank: u32, elem_bytes: u32) -> u32 {
        let cl = self.cluster_slice_width(k);
        let owned = cl.min(k.saturating_sub(rank * cl));
        k * k * owned * elem_bytes
    }

    /// A WMMA level whose K is not a multiple of the fragment's 8 columns stages each tile's
    /// result in shared memory and stores it masked (the API stores whole 8×8 fragments).
    pub fn wmma_stages_c(&self, k: u32) -> bool {
        self.wmma && !k.is_multiple_of(8)
    }

    /// `cache_read(A, shared)` with `workspace(shared)`: the whole input tensor is staged into
    /// the second intermediate buffer (free until pass 1 writes it) in one coalesced sweep,
    /// instead of chunk by chunk; every pass then reads shared memory.
    pub fn stages_whole_tensor(&self) -> bool {
        self.a.memory == Memory::Shared && self.workspace == Memory::Shared
    }

    /// `bulk_copy(1)` at odd K: tensor n starts at an 8-byte boundary when n is odd (K³ odd), so a
    /// buffer holds it from element `sh` = (its address / 8) mod 2 on, and at an odd row stride
    /// every row's values but one lie in whole 16-byte units at the same offsets in device and
    /// shared memory: one bulk copy of K² - 1 values per row and one 8-byte `cp.async` for the
    /// other. A buffer's pitch is then BUF = K · W_STRIDE + 1 (even: the next buffer stays
    /// 16-byte aligned; K · WS_STRIDE + 1 with split strides, [`TransformPlan::split_staged_stride`]),
    /// and pass 0 reads the tensor from its buffer + sh.
    pub fn shifted_rows(&self, k: u32) -> bool {
        self.bulk_copy && k % 2 == 1 && self.cluster <= 1
    }

    /// Extra elements after each K²-long row of a shared intermediate: with whole-tensor
    /// staging, `cache_read(A, shared, pad = P)` pads the layout every pass reads, so that the
    /// rows a fragment load touches fall in different banks.
    pub fn shared_row_pad(&self) -> u32 {
        if self.stages_whole_tensor() { self.a.pad } else { 0 }
    }

    /// KR: the distance between two K-long output runs (fixed i, j = 0..K-1) in a shared
    /// intermediate. K, or with `align_runs(1)` at odd K, K + 1: even, so that every column
    /// pair (j, j + 1) with j even starts 16 bytes aligned (slot K of a run is padding).
    pub fn run_stride(&self, k: u32) -> u32 {
        if self.runs_padded(k) { k + 1 } else { k }
    }

    /// Whether the shared intermediates (passes 0 → 1 and 1 → 2) hold padded runs at this K;
    /// the first pass's input, copied in as it lies in device memory, never does.
    pub fn runs_padded(&self, k: u32) -> bool {
        self.align_runs && self.stages_whole_tensor() && k % 2 == 1
    }

    /// Elements of one row of a shared buffer (W_STRIDE): K runs of KR for each of the
    /// `stack(N)` tensors, then the row pad.
    pub fn shared_row_elems(&self, k: u32) -> u32 {
        self.stack.max(1) * k * self.run_stride(k) + self.shared_row_pad()
    }

    /// `bulk_copy(1)` at odd K with an even intermediate row stride (an odd pad): the staged
    /// tensor keeps the odd stride its shifted copies need, WS_STRIDE = W_STRIDE + 1, and pass 0
    /// reads it there, while passes 1 and 2 read the intermediates at W_STRIDE, which the pad can
    /// make conflict-free for the A-fragment loads (4 mod 8 doubles: no odd stride is).
    pub fn split_staged_stride(&self, k: u32) -> bool {
        self.shifted_rows(k) && self.shared_row_elems(k).is_multiple_of(2)
    }

    /// The row stride of the staged tensor in a buffer: W_STRIDE, or WS_STRIDE
    /// ([`TransformPlan::split_staged_stride`]).
    pub fn staged_row_elems(&self, k: u32) -> u32 {
        self.shared_row_elems(k) + self.split_staged_stride(k) as u32
    }

    /// The rows of one fused pass: K² for each of the `stack(N)` tensors.
    pub fn pass_rows(&self, k: u32) -> u32 {
        self.stack.max(1) * k * k
    }

    /// K rounded up to a multiple of `m`: fragments pad the contraction and the columns.
    pub fn padded(k: u32, m: u32) -> u32 {
        k.div_ceil(m) * m
    }

    /// The columns the matrix instructions cover (NP): K rounded up to whole fragments of `n`
    /// columns, or with `fma_tail(1)` down to them (the rest is the FMA tail).
    pub fn fragment_cols(&self, k: u32, n: u32) -> u32 {
        if self.fma_tail { k / n * n } else { TransformPlan::padded(k, n) }
    }

    /// `fma_tail(1)`: the columns after the fragments', computed by FMA (0 without it).
    pub fn tail_cols(&self, k: u32, n: u32) -> u32 {
        k - self.fragment_cols(k, n).min(k)
    }
}

/// See [`TransformPlan::cluster_slice_width`].
pub(super) fn slice_width(k: u32, cluster: u32) -> u32 {
    k.div_ceil(cluster).div_ceil(2) * 2
}

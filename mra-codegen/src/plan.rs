//! Checking a schedule against one request (K, arch, dtype) and resolving it into a [`Plan`]:
//! the decisions the C++ emitter follows. Every reason a level cannot run as asked is a
//! [`PlanError`] with a message a user can act on; nothing is silently substituted.

use crate::arch::{Arch, MatrixInstr};
use crate::fragment::{fragment, Fragment};
use crate::dtype::DType;
use crate::ir::{LibraryCall, Loop, Memory, Operand, Schedule, Step, ThreadMap};
use serde::Serialize;

pub use crate::instr::{fuse_k_max, matrix_instr, mma_computes, row_pairs, wmma_instr};
pub use crate::request::{Request, K_MAX};

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
    /// `co_schedule(1)`: a tensor's `split_output` blocks launch as one thread-block cluster
    /// (see [`Plan::cluster_blocks`]); they exchange nothing.
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
    /// the new first index x) one block holds: ceil(K / N), rounded up to even (so pass 0's
    /// stores into other blocks stay 16-byte pairs: 8-byte ones made K = 28's pass 0 2.6x
    /// slower, NOTES run 22, and odd K 25..31 1.1-1.2x slower overall, runs 46-47); the last
    /// block may hold fewer.
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

    /// `fuse_k(N)`: a tile's `k_steps` k-steps as runs of instructions: `count` instructions
    /// `depth` steps deep from step `start` on. As many N deep as fit, then what is left at the
    /// largest power of two that fits (N = 4, 7 steps: one 4 deep, one 2, one 1), so the
    /// contraction is never padded past the shallow instruction's k.
    pub fn k_step_groups(&self, k_steps: u32) -> Vec<KStepGroup> {
        k_step_groups(k_steps, self.fuse_k)
    }
}

/// [`TransformPlan::k_step_groups`] for `fuse_k(n)`.
pub fn k_step_groups(k_steps: u32, n: u32) -> Vec<KStepGroup> {
    let n = n.max(1);
    let mut groups = Vec::new();
    if k_steps / n > 0 {
        groups.push(KStepGroup { start: 0, depth: n, count: k_steps / n });
    }
    let (mut start, mut left) = (k_steps / n * n, k_steps % n);
    let mut depth = n / 2;
    while left > 0 {
        if left >= depth {
            groups.push(KStepGroup { start, depth, count: 1 });
            start += depth;
            left -= depth;
        }
        depth = (depth / 2).max(1);
    }
    groups
}

/// See [`TransformPlan::k_step_groups`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KStepGroup {
    pub start: u32,
    pub depth: u32,
    pub count: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// The floor: read each tensor once, write it once; with `shadow`, the `bound` level's
    /// matrix instructions beside the copy.
    Copy { vector: u32, shadow: Option<Shadow> },
    Transform(TransformPlan),
    /// Vendor BLAS calls; the generated kernel (if any) is a one-time setup kernel.
    Library(LibraryCall),
}

/// `shadow_mma(..)`: the matrix instructions the `bound` level issues beside its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shadow {
    /// The arch's instruction for the dtype, as `tensorize(mma)` picks it for the transforms.
    pub fragment: Fragment,
    /// Instructions per tensor: [`fewest_mma_per_tensor`].
    pub per_tensor: u64,
    /// `shadow_mma(1)`: half of each block's waves copy, half multiply.
    pub split: bool,
}

/// The fewest instructions of `f`'s shape one tensor's transform needs at `k`: each of the
/// three passes is a GEMM of K² rows by K columns, depth K, padded to whole fragments, with
/// the rows on the instruction's M and the columns on its N or the other way round, whichever
/// pads less (bench/NOTES.md run 92: K = 10 117, K = 12 162, K = 32 6144 for m16n8k4).
pub fn fewest_mma_per_tensor(k: u32, f: &Fragment) -> u64 {
    let (k, m, n, depth) = (k as u64, f.m as u64, f.n as u64, f.k as u64);
    let rows_on_m = (k * k).div_ceil(m) * k.div_ceil(n);
    let rows_on_n = k.div_ceil(m) * (k * k).div_ceil(n);
    3 * rows_on_m.min(rows_on_n) * k.div_ceil(depth)
}

/// A schedule resolved for one request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub request: Request,
    pub threads: u32,
    pub body: Body,
    /// Static shared memory / LDS per block, bytes.
    pub shared_bytes: u32,
    /// Elements of device-memory workspace each block needs (0 if none).
    pub workspace_elems_per_block: u64,
    /// Elements of device-memory workspace per tensor of a task (library levels whose
    /// intermediates are whole batches), per stream.
    pub workspace_elems_per_tensor: u64,
    /// Shared memory above the static limit: one dynamic allocation of `shared_bytes`, for
    /// which the runtime raises the kernel's limit (NVIDIA only; AMD's LDS limit is static).
    pub dynamic_shared: bool,
    /// `launch_bounds(min_blocks = N)` with N > 1: blocks the compiler must fit on one SM/CU.
    pub min_blocks: Option<u32>,
    /// `persistent(1)`: the runtime launches at most the blocks the device holds at once
    /// (resident blocks per SM/CU × SMs/CUs), not min(N, M); see [`Plan::persistent_grid`].
    pub persistent: bool,
    /// The tunable parameters with the values this plan used (defaults resolved for the
    /// request, or a tuned configuration's).
    pub parameters: crate::tune::Config,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("K={0} is out of range: levels support 1 <= K <= {K_MAX}")]
    KOutOfRange(u32),
    #[error("level {level}: threads({threads}) is not a multiple of the {wave}-wide {unit} on {arch}")]
    ThreadsNotWaveMultiple { level: String, threads: u32, wave: u32, unit: &'static str, arch: &'static str },
    #[error("level {level}: threads({threads}) exceeds the {max} threads a block may have on {arch}")]
    TooManyThreads { level: String, threads: u32, max: u32, arch: &'static str },
    #[error("level {level} at K={k} ({dtype}) needs {need} bytes of shared memory per block; {arch} allows {max}")]
    SharedTooLarge { level: String, k: u32, dtype: DType, need: u64, max: u32, arch: &'static str },
    #[error("level {level}: {what}")]
    Malformed { level: String, what: String },
    #[error("level {level} cannot compute in {dtype}: {why}")]
    DTypeUnsupported { level: String, dtype: DType, why: String },
    #[error("level {level}: {why}")]
    Constraint { level: String, why: String },
    #[error("level {level} cannot run at K={k}: {why}")]
    KUnsupported { level: String, k: u32, why: String },
    #[error("level {level} cannot run on {arch}: {why}")]
    ArchUnsupported { level: String, arch: &'static str, why: String },
    /// A tensorized level without an instruction for (arch, dtype): either the arch lacks such
    /// matrix cores, or it has them and this level has no lowering onto them. The message
    /// says which, and what runs instead (see [`crate::matrix_support`]).
    #[error("{}", crate::matrix_support::explain(level, arch, *dtype, *k, *wmma))]
    NoMatrixCore { level: String, arch: &'static Arch, dtype: DType, k: u32, wmma: bool },
}

impl Schedule {
    /// Checks this schedule against `req` and resolves the decisions the emitter follows.
    pub fn plan(&self, req: Request) -> Result<Plan, PlanError> {
        if self.has_open_defaults() {
            return self.at(req).plan(req);
        }
        let Request { k, arch, dtype } = req;
        if !(1..=K_MAX).contains(&k) {
            return Err(PlanError::KOutOfRange(k));
        }
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        let threads = self
            .iter_steps()
            .find_map(|s| match s {
                Step::Threads(v) => Some(v.default_value()),
                _ => None,
            })
            .ok_or_else(|| malformed("no threads(..) step"))?;
        if threads > arch.max_threads_per_block {
            return Err(PlanError::TooManyThreads {
                level: self.name.clone(),
                threads,
                max: arch.max_threads_per_block,
                arch: arch.name,
            });
        }
        if threads == 0 || threads % arch.wave_size != 0 {
            return Err(PlanError::ThreadsNotWaveMultiple {
                level: self.name.clone(),
                threads,
                wave: arch.wave_size,
                unit: if arch.vendor == crate::Vendor::Nvidia { "warp" } else { "wavefront" },
                arch: arch.name,
            });
        }

        let elem = dtype.bytes() as u64;
        let k3 = (k as u64).pow(3);
        let copy = self.iter_steps().find_map(|s| match s {
            Step::Copy { vector } => Some(*vector),
            _ => None,
        });
        let library = self.iter_steps().find_map(|s| match s {
            Step::Library(call) => Some(*call),
            _ => None,
        });
        // Half-width types are matrix-core inputs: generated for the tensorized levels (and the
        // copy floor) on AMD, whose RDNA WMMA takes them.
        if dtype.is_matrix_input() {
            let unsupported = |why: &str| PlanError::DTypeUnsupported { level: self.name.clone(), dtype, why: why.into() };
            if arch.vendor != crate::Vendor::Amd {
                return Err(unsupported(&format!(
                    "f16/bf16 are generated for AMD RDNA matrix cores (gfx1100, gfx1151, gfx1201), not for {}",
                    arch.name
                )));
            }
            if library.is_some() {
                return Err(unsupported("the library levels are f64/f32 BLAS calls"));
            }
            let tensorized = self.iter_steps().any(|s| matches!(s, Step::Tensorize(_)));
            if copy.is_none() && !tensorized {
                return Err(unsupported("it is thread-mapped; f16/bf16 run only on matrix-core levels (tensorize)"));
            }
        }
        let mut per_tensor = 0;
        let (body, shared, workspace) = if let Some(call) = library {
            if call == LibraryCall::ThreeGemm {
                per_tensor = 2 * k3;
            }
            (Body::Library(call), 0, 0)
        } else if let Some(vector) = copy {
            // Wider than 16 bytes is not one access on any target.
            let vector = vector.clamp(1, 16 / dtype.bytes());
            fn shadow_step(s: &Step) -> Option<&crate::ir::Value> {
                if let Step::ShadowMma(v) = s { Some(v) } else { None }
            }
            let shadow = match self.iter_steps().any(|s| shadow_step(s).is_some()) {
                false => None,
                true => {
                    let split = self
                        .switch(shadow_step, "shadow_mma", "0 (every warp copies and multiplies) or 1 (half the warps copy, half multiply)")
                        .map_err(|e| malformed(&e))?;
                    if dtype != DType::F64 {
                        return Err(PlanError::DTypeUnsupported {
                            level: self.name.clone(),
                            dtype,
                            why: "shadow_mma issues the FP64 matrix instructions of the f64 transform levels".into(),
                        });
                    }
                    let instr = matrix_instr(arch, dtype).ok_or_else(|| PlanError::NoMatrixCore { level: self.name.clone(), arch, dtype, k, wmma: false })?;
                    let f = fragment(instr);
                    let waves = threads / f.lanes;
                    if threads % f.lanes != 0 || (split && waves < 2) {
                        return Err(malformed(&format!("shadow_mma({}) needs whole {}-lane waves{}", split as u32, f.lanes, if split { ", at least two (one copies, one multiplies)" } else { "" })));
                    }
                    Some(Shadow { fragment: f, per_tensor: fewest_mma_per_tensor(k, &f), split })
                }
            };
            (Body::Copy { vector, shadow }, 0u64, 0u64)
        } else {
            let map = self
                .iter_steps()
                .find_map(|s| match s {
                    Step::Bind(m) => Some(*m),
                    _ => None,
                })
                .ok_or_else(|| malformed("no bind(threads, ..) step"))?;
            let a = self
                .iter_steps()
                .find_map(|s| match s {
                    Step::CacheRead { operand: Operand::A, into, pad } => Some(Staging { memory: *into, pad: pad.default_value() }),
                    _ => None,
                })
                .unwrap_or(Staging { memory: Memory::Global, pad: 0 });
            if a.memory != Memory::Global && map != ThreadMap::Tiles {
                return Err(malformed("cache_read(A, shared) stages chunks of row tiles: it needs bind(warps, tiles)"));
            }
            if a.memory == Memory::Registers {
                return Err(malformed("cache_read(A, registers): only B can be held in registers"));
            }
            let b = self
                .iter_steps()
                .find_map(|s| match s {
                    Step::CacheRead { operand: Operand::B, into, pad } => Some(Staging { memory: *into, pad: pad.default_value() }),
                    _ => None,
                })
                .unwrap_or(Staging { memory: Memory::Global, pad: 0 });
            let core = self.iter_steps().find_map(|s| match s {
                Step::Tensorize(c) => Some(*c),
                _ => None,
            });
            let tensorize = core.is_some();
            let wmma = core == Some(crate::ir::MatrixCore::Wmma);
            if tensorize != (map == ThreadMap::Tiles) {
                return Err(malformed("tensorize(mma) and bind(warps, tiles) go together"));
            }
            let fragment = if tensorize {
                let find = |a: &Arch| if wmma { wmma_instr(a, dtype) } else { matrix_instr(a, dtype) };
                let instr = find(arch).ok_or_else(|| PlanError::NoMatrixCore { level: self.name.clone(), arch, dtype, k, wmma })?;
                let f = fragment(instr);
                if threads % f.lanes != 0 {
                    return Err(malformed(&format!("threads({threads}) is not a whole number of {}-lane waves", f.lanes)));
                }
                if wmma {
                    // The API loads whole fragments from memory with 32-byte aligned rows.
                    let workspace_shared = self.iter_steps().any(|s| matches!(s, Step::Workspace(Memory::Shared)));
                    if a.memory != Memory::Shared || workspace_shared {
                        return Err(malformed("tensorize(wmma) loads A fragments from staged chunks: it needs cache_read(A, shared) and workspace(global)"));
                    }
                    if b.memory != Memory::Shared {
                        return Err(malformed("tensorize(wmma) loads B fragments from shared memory: it needs cache_read(B, shared)"));
                    }
                    let chunk = (threads / f.lanes) * f.m;
                    if !(chunk + a.pad).is_multiple_of(4) || b.pad % 4 != 0 {
                        return Err(malformed("tensorize(wmma) needs 32-byte aligned rows: pad by a multiple of 4 elements"));
                    }
                }
                Some(f)
            } else {
                if b.memory == Memory::Registers {
                    return Err(malformed("cache_read(B, registers) needs tensorize(mma)"));
                }
                None
            };
            let unroll_by = |l: Loop| {
                self.iter_steps()
                    .find_map(|s| match s {
                        Step::Unroll(x, by) if *x == l => Some(by.default_value()),
                        _ => None,
                    })
                    .unwrap_or(0)
            };
            let register_tile = self.iter_steps().any(|s| matches!(s, Step::RegisterTile(Loop::Cols)));
            if register_tile && map != ThreadMap::Rows {
                return Err(malformed("register_tile(cols) needs bind(threads, rows)"));
            }
            let out = self.iter_steps().find_map(|s| match s {
                Step::CacheWrite { into: Memory::Shared, pad, .. } => Some(Staging { memory: Memory::Shared, pad: pad.default_value() }),
                _ => None,
            });
            if out.is_some() && !register_tile {
                return Err(malformed("cache_write(C, ..) needs register_tile(cols)"));
            }
            let workspace = self
                .iter_steps()
                .find_map(|s| match s {
                    Step::Workspace(m) => Some(*m),
                    _ => None,
                })
                .unwrap_or(Memory::Global);
            if workspace == Memory::Registers {
                return Err(malformed("workspace(registers) cannot hold a K^3 intermediate"));
            }
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
            let cluster = self.step_value(|s| match s {
                Step::Cluster(v) => Some(v),
                _ => None,
            })
            .unwrap_or(1);
            if cluster != 1 {
                if !(2..=8).contains(&cluster) || !whole || pipeline != 2 || !(3..=4).contains(&shared_buffers) || tensors != 1 {
                    return Err(malformed("cluster(N) splits the fused passes of pipeline(2) with buffers(3) (slice, intermediate, gather buffer) or buffers(4) (two gather buffers) over N blocks: tensorize(mma), cache_read(A, shared), workspace(shared), no tensors(..); 2 <= N <= 8"));
                }
                if arch.max_cluster_blocks < cluster {
                    let why = if arch.max_cluster_blocks <= 1 {
                        format!("cluster({cluster}) needs thread-block clusters with distributed shared memory (NVIDIA sm_90+); run fused-pipe (K <= 24) or L7-breg there")
                    } else {
                        format!("cluster({cluster}) exceeds the {} blocks a cluster may have", arch.max_cluster_blocks)
                    };
                    return Err(PlanError::ArchUnsupported { level: self.name.clone(), arch: arch.name, why });
                }
                // Every block of the cluster must hold part of the second index.
                let width = slice_width(k, cluster);
                if (cluster - 1) * width >= k {
                    return Err(PlanError::KUnsupported {
                        level: self.name.clone(),
                        k,
                        why: format!(
                            "cluster({cluster}) splits the index into slices of {width}, so block {} would hold none; a smaller cluster (e.g. `mra-bench tune` it) or another level runs there",
                            cluster - 1
                        ),
                    });
                }
            }
            let async_exchange = self
                .switch(|s| if let Step::AsyncExchange(v) = s { Some(v) } else { None }, "async_exchange", "0 (stores and a cluster barrier) or 1 (asynchronous stores)")
                .map_err(|e| malformed(&e))?;
            if async_exchange {
                if cluster == 1 {
                    return Err(malformed("async_exchange(1) is how the blocks of cluster(N) exchange pass 0's output: it needs cluster(N) with N >= 2"));
                }
                // The emitter sends f64 (st.async has 32- and 64-bit types; the mbarriers are
                // elements of the f64 buffers); a phase's tx-count must stay under 2^20 bytes.
                if dtype != DType::F64 || k * k * slice_width(k, cluster) * dtype.bytes() >= 1 << 20 {
                    return Err(PlanError::KUnsupported {
                        level: self.name.clone(),
                        k,
                        why: format!("async_exchange(1) sends f64 values with st.async, at most 2^20 - 1 bytes per mbarrier phase ({dtype} here); use async_exchange(0)"),
                    });
                }
            }
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
            let late_wait = self
                .switch(|s| if let Step::LateWait(v) = s { Some(v) } else { None }, "late_wait", "0 (the block waits before pass 0) or 1 (each wave after its first tile)")
                .map_err(|e| malformed(&e))?;
            if late_wait && cluster == 1 {
                return Err(malformed("late_wait(1) places the cluster barrier wait of cluster(N)'s pass 0: it needs cluster(N) with N >= 2"));
            }
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
            let co_schedule = self
                .switch(|s| if let Step::CoSchedule(v) = s { Some(v) } else { None }, "co_schedule", "0 (a tensor's blocks launch independently) or 1 (as one thread-block cluster, starting together)")
                .map_err(|e| malformed(&e))?;
            if co_schedule && split_output == 1 {
                return Err(malformed("co_schedule(1) launches the blocks of split_output(N) together: add split_output(2)"));
            }
            if co_schedule && arch.max_cluster_blocks < split_output {
                return Err(PlanError::ArchUnsupported {
                    level: self.name.clone(),
                    arch: arch.name,
                    why: format!("co_schedule(1) launches a tensor's {split_output} blocks as a thread-block cluster (NVIDIA sm_90+); use co_schedule(0)"),
                });
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
                unroll_k: self.iter_steps().any(|s| matches!(s, Step::Unroll(Loop::K, _))),
                unroll_cols: self.iter_steps().any(|s| matches!(s, Step::Unroll(Loop::Cols, _))),
                unroll_k_by: unroll_by(Loop::K),
                unroll_cols_by: unroll_by(Loop::Cols),
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
            // A fragment level keeps B zero-padded to whole fragments in shared memory.
            let (b_rows, b_cols) = match fragment {
                Some(f) => (TransformPlan::padded(k, f.k), TransformPlan::padded(k, f.n)),
                None => (k, k),
            };
            let b_shared = if b.memory == Memory::Shared { b_rows as u64 * (b_cols + b.pad) as u64 * elem } else { 0 };
            let (w_shared, w_global) = if plan.split_output > 1 {
                (plan.split_shared_bytes(k, threads / 32, elem), 0)
            } else if workspace == Memory::Shared && plan.cluster > 1 {
                // Three or four buffers, and the 8-byte mbarriers (bulk copies, gather buffers).
                let mbarriers = 8 * plan.cluster_mbarriers(arch) as u64;
                (plan.shared_buffers as u64 * plan.cluster_slice_elems(k) * elem + mbarriers, 0)
            } else if workspace == Memory::Shared {
                let buffers = if plan.stages_whole_tensor() { plan.shared_buffers } else { 2 } as u64;
                // K rows of W_STRIDE elements (the runs K or K + 1 apart, then the row pad).
                let row = if plan.stages_whole_tensor() { plan.shared_row_elems(k) } else { k * k };
                // bulk_copy(1): one 8-byte mbarrier per buffer, after the buffers; at odd K one more
                // element per buffer (BUF = K · W_STRIDE + 1, room for the shift; the staged rows at
                // WS_STRIDE = W_STRIDE + 1 with split strides).
                let mbarriers = if plan.bulk_copy { 8 * buffers } else { 0 };
                let shift = if plan.shifted_rows(k) { buffers * elem } else { 0 };
                let row = if plan.stages_whole_tensor() { plan.staged_row_elems(k) } else { row };
                (plan.tensors as u64 * buffers * k as u64 * row as u64 * elem + shift + mbarriers, 0)
            } else {
                (0, 2 * k3)
            };
            let out_shared = out.map_or(0, |o| threads as u64 * (k + o.pad) as u64 * elem);
            // cache_read(A, shared): K rows of one chunk (WAVES tiles of FM rows), padded.
            let a_shared = match (a.memory, fragment) {
                _ if plan.stages_whole_tensor() => 0,
                // KP rows: the contraction's padding rows are staged as zeros.
                (Memory::Shared, Some(f)) => TransformPlan::padded(k, f.k) as u64 * ((threads / f.lanes) * f.m + a.pad) as u64 * elem,
                _ => 0,
            };
            let c_shared = match fragment {
                Some(f) if plan.wmma_stages_c(k) => (threads / f.lanes * f.m * TransformPlan::padded(k, f.n)) as u64 * elem,
                _ => 0,
            };
            (Body::Transform(plan), b_shared + w_shared + out_shared + a_shared + c_shared, w_global)
        };
        if shared > arch.shared_bytes_max as u64 {
            return Err(PlanError::SharedTooLarge {
                level: self.name.clone(),
                k,
                dtype,
                need: shared,
                max: arch.shared_bytes_max,
                arch: arch.name,
            });
        }
        let dynamic_shared = shared > arch.shared_bytes_default as u64;
        self.check_constraints(k, arch, dtype).map_err(|why| PlanError::Constraint { level: self.name.clone(), why })?;
        let min_blocks = self.step_value(|s| match s {
            Step::LaunchBounds { min_blocks } => Some(min_blocks),
            _ => None,
        })
        .filter(|&m| m > 1);
        let persistent = self
            .switch(|s| if let Step::Persistent(v) = s { Some(v) } else { None }, "persistent", "0 (min(N, M) blocks) or 1 (at most the blocks the GPU holds at once)")
            .map_err(|e| malformed(&e))?;
        if persistent {
            match &body {
                Body::Library(_) => return Err(malformed("persistent(1) sizes the grid of the level's kernel: a library level launches none per task")),
                Body::Transform(tp) if tp.cluster > 1 || tp.co_schedule => {
                    return Err(malformed("persistent(1) counts resident blocks per SM; cluster(N) and co_schedule(1) place their blocks by cluster (NOTES.md run 70): use one or the other"))
                }
                _ => {}
            }
        }
        Ok(Plan {
            request: req,
            threads,
            body,
            shared_bytes: shared as u32,
            workspace_elems_per_block: workspace,
            workspace_elems_per_tensor: per_tensor,
            dynamic_shared,
            min_blocks,
            persistent,
            parameters: self.defaults(),
        })
    }
}

/// What [`Schedule::check_split_output`] checks: the request and the other steps' values.
struct SplitRequest {
    k: u32,
    arch: &'static Arch,
    dtype: DType,
    threads: u32,
    split_output: u32,
    /// The fused form: tensorize(mma), cache_read(A, shared), workspace(shared).
    whole: bool,
    /// No pipeline, cluster, tensors, stack, row jam, column split, FMA tail, row pairs,
    /// aligned runs, and the default buffers: steps that shape another layout of the work.
    others_plain: bool,
    a: Staging,
    b: Staging,
    chain: bool,
    bulk_copy: bool,
    fuse_k: u32,
    prefetch_l2: u32,
}

impl Schedule {
    /// `split_output(N)`'s requirements. The emitter (`emit/split.rs`) writes one layout of the
    /// work: N = 2 at K = 32 (a block's z is one 16-row tile), 8 warps with 4 slices of a each,
    /// every pass's A operand Bᵀ in registers in the chain's k order, the slices copied by bulk
    /// copies (sm_90). Anything else is refused here, naming what runs instead.
    fn check_split_output(&self, r: SplitRequest) -> Result<(), PlanError> {
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        if r.split_output != 2 {
            return Err(malformed("split_output(N) takes 1 (none) or 2 (halves of z)"));
        }
        if !r.whole || !r.others_plain {
            return Err(malformed("split_output(2) is its own layout of the fused passes: tensorize(mma), cache_read(A, shared), workspace(shared), without pipeline, buffers, cluster, tensors, stack, unroll(rows), split_cols, fma_tail, pair_rows or align_runs"));
        }
        if r.b.memory != Memory::Registers || r.a.pad != 0 {
            return Err(malformed("split_output(2) holds Bᵀ in registers for all three passes and copies each slice of A as it lies: cache_read(B, registers) and cache_read(A, shared) without a pad"));
        }
        if !r.chain || !r.bulk_copy {
            return Err(malformed("split_output(2) keeps pass 0's output in registers and loads slices with bulk copies: it needs chain(1) and bulk_copy(1)"));
        }
        if r.prefetch_l2 == 1 || r.prefetch_l2 > 4 {
            return Err(malformed("prefetch_l2(N) takes 0 (none) or 2 to 4 slices ahead of the one read (1 is the slice the bulk copy is loading)"));
        }
        let instead = "fused-cluster runs at K = 25..32 on sm_90 (`mra-bench levels` lists every level's K)";
        if r.arch.vendor != crate::Vendor::Nvidia || !r.arch.bulk_async_copy || !r.arch.has(MatrixInstr::MmaSyncM16n8k8F64) {
            return Err(PlanError::ArchUnsupported {
                level: self.name.clone(),
                arch: r.arch.name,
                why: "split_output(2) chains passes through the m16n8k8 f64 accumulator layout and loads slices with bulk copies (NVIDIA sm_90); at K = 32 L7-breg runs there".into(),
            });
        }
        if r.dtype != DType::F64 {
            return Err(PlanError::DTypeUnsupported { level: self.name.clone(), dtype: r.dtype, why: "split_output(2) is written for the f64 m16n8k8 layouts".into() });
        }
        if r.k != 32 {
            return Err(PlanError::KUnsupported {
                level: self.name.clone(),
                k: r.k,
                why: format!("split_output(2) gives each block 16 values of z, one m16 tile: K = 32 only; {instead}"),
            });
        }
        if r.threads != 256 {
            return Err(malformed("split_output(2) gives each of 8 warps 4 slices of a: threads(256)"));
        }
        if ![2, 4].contains(&r.fuse_k) {
            return Err(malformed("chain(1) reads m16n8k8 accumulator columns as k-slots: fuse_k(2) (m16n8k8) or fuse_k(4) (m16n8k16)"));
        }
        Ok(())
    }
}

/// See [`TransformPlan::cluster_slice_width`].
fn slice_width(k: u32, cluster: u32) -> u32 {
    k.div_ceil(cluster).div_ceil(2) * 2
}

impl Schedule {
    /// The default value of the first step `pick` takes a numeric argument from.
    fn step_value(&self, pick: impl Fn(&Step) -> Option<&crate::ir::Value>) -> Option<u32> {
        self.iter_steps().find_map(pick).map(|v| v.default_value())
    }

    /// A 0|1 step (`async_exchange`, `align_runs`, `pair_rows`, `late_wait`): false where the
    /// schedule does not name it; another number is refused, `meaning` saying what 0 and 1 are.
    fn switch(&self, pick: impl Fn(&Step) -> Option<&crate::ir::Value>, name: &str, meaning: &str) -> Result<bool, String> {
        match self.step_value(pick).unwrap_or(0) {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(format!("{name}(N) takes {meaning}")),
        }
    }
}

impl Plan {
    /// Useful flops per tensor: 3 passes × 2·K²·K·K. The copy level does none.
    pub fn flops_per_tensor(&self) -> u64 {
        match self.body {
            Body::Copy { .. } => 0,
            Body::Transform(_) | Body::Library(_) => transform_flops(self.request.k),
        }
    }

    /// Flops the level actually executes per tensor: the Kronecker GEMM does 2·K⁶ (the seed
    /// reports L6 with this count); every other level its useful flops.
    pub fn executed_flops_per_tensor(&self) -> u64 {
        match self.body {
            Body::Library(LibraryCall::Kronecker) => 2 * (self.request.k as u64).pow(6),
            _ => self.flops_per_tensor(),
        }
    }

    /// Blocks per thread-block cluster (1: the level launches no clusters). The grid must be
    /// a multiple of it.
    pub fn cluster_blocks(&self) -> u32 {
        match self.body {
            Body::Transform(tp) if tp.co_schedule => tp.split_output.max(1),
            Body::Transform(tp) => tp.cluster.max(1),
            _ => 1,
        }
    }

    /// Blocks that have work in a batch of `nfuncs` tensors: one per tensor, with `stack(N)`
    /// one per group of N (the last group possibly partial), with `split_output(N)` N per
    /// tensor. A launch uses at most this many (and at most M).
    pub fn work_blocks(&self, nfuncs: usize) -> usize {
        match self.body {
            Body::Transform(tp) => nfuncs.div_ceil(tp.stack.max(1) as usize) * tp.split_output.max(1) as usize,
            _ => nfuncs,
        }
    }

    /// What the grid must be a multiple of: the blocks of a cluster, or with `split_output(N)`
    /// the N blocks that share a tensor (blocks b..b + N, b a multiple of N).
    pub fn grid_multiple(&self) -> u32 {
        match self.body {
            Body::Transform(tp) => tp.cluster.max(1).max(tp.split_output.max(1)),
            _ => 1,
        }
    }

    /// The grid for `blocks` requested blocks: rounded up to a multiple of
    /// [`Plan::grid_multiple`] (whole clusters, whole split tensors).
    pub fn grid_blocks(&self, blocks: usize) -> usize {
        blocks.div_ceil(self.grid_multiple() as usize) * self.grid_multiple() as usize
    }

    /// The grid of one launch for `blocks` requested blocks (min(N, M)) on a device that holds
    /// `resident` of this kernel's blocks at once (`None`: not known): with `persistent(1)`
    /// no more than `resident`, rounded down to whole split tensors (and at least one tensor's
    /// blocks: a split tensor's blocks share nothing, so they need not be resident together),
    /// else [`Plan::grid_blocks`].
    pub fn persistent_grid(&self, blocks: usize, resident: Option<usize>) -> usize {
        let whole = self.grid_multiple() as usize;
        match resident {
            Some(r) if self.persistent => self.grid_blocks(blocks).min((r / whole).max(1) * whole),
            _ => self.grid_blocks(blocks),
        }
    }

    /// Whether this level is a plain copy (validated against its input, no flops).
    pub fn is_copy(&self) -> bool {
        matches!(self.body, Body::Copy { .. })
    }
}

/// Useful flops of one transform of order `k` (the seed's count, 6·K⁴).
pub fn transform_flops(k: u32) -> u64 {
    6 * (k as u64).pow(4)
}

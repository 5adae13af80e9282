//! The schedule IR: the MRA algorithm is fixed, a level is a list of small named steps.
//!
//! The algorithm every level computes (three passes of one small GEMM):
//!
//! ```text
//! for n in tensors:                       loop `tensors`
//!   for p in 0..3:                        loop `passes`
//!     for i in 0..K*K:                    loop `rows`     (output rows)
//!       for j in 0..K:                    loop `cols`     (output columns)
//!         out(i,j) = sum_k in(k,i)*B(k,j) loop `k`        (contraction)
//! ```
//!
//! A [`Schedule`] says how that loop nest maps onto the GPU: what a thread owns ([`Step::Bind`]),
//! what is staged into shared memory/LDS ([`Step::CacheRead`]), what lives in registers
//! ([`Step::RegisterTile`]), what is unrolled ([`Step::Unroll`]), where the intermediates of
//! passes 1 and 2 live ([`Step::Workspace`]). Matrix fragments (`tensorize`), fused passes and
//! tunable parameters are added as further steps; the IR is serde-serializable and printable.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One optimization level: a named, printable list of schedule steps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// Level number for `-l N` (`None` for levels selected only by name).
    pub number: Option<u32>,
    /// The name printed in `Transform;level=...` lines, e.g. `L3-regblk`.
    pub name: String,
    /// One-paragraph description (the doc comment of the schedule).
    pub summary: String,
    /// The steps, in the order written.
    pub steps: Vec<Located<Step>>,
    /// Source file of the schedule (for traceability comments in generated code).
    pub file: String,
}

/// A step together with where it was written (file is the schedule's, line is the step's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Located<T> {
    pub item: T,
    /// 1-based line in [`Schedule::file`].
    pub line: u32,
}

/// The loops of the fixed algorithm (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loop {
    Tensors,
    Rows,
    Cols,
    K,
}

/// The operands of one GEMM pass: `in` (A or an intermediate), `B`, and `out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    /// The pass input: the tensor A in pass 0, an intermediate afterwards.
    A,
    /// The K×K transform matrix.
    B,
    /// The pass output (an intermediate, or C in the last pass).
    C,
}

/// Where data lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Memory {
    /// Device (global) memory.
    Global,
    /// Shared memory (NVIDIA) / LDS (AMD).
    Shared,
    /// Per-thread registers.
    Registers,
}

/// What one thread owns in a GEMM pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadMap {
    /// One output element `(i, j)` at a time, threads striding over all K³ of them.
    Elements,
    /// One output row `i` (all K columns) at a time, threads striding over the K² rows.
    Rows,
    /// Warps/wavefronts own tiles of output rows, as many rows as the matrix fragment has,
    /// all K columns; used with [`Step::Tensorize`].
    Tiles,
}

/// A vendor BLAS formulation of the whole transform (cuBLAS on NVIDIA, hipBLAS on AMD).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LibraryCall {
    /// One GEMM per task with the K³×K³ matrix Bᵀ⊗Bᵀ⊗Bᵀ (built once on the GPU by a
    /// generated kernel): C[K³×N] = M·A[K³×N]. Memory grows as K⁶, work as 2·K⁶·N.
    Kronecker,
    /// The three passes as three strided-batched GEMMs over the N tensors (what PyTorch does).
    ThreeGemm,
}

/// Which matrix-core instruction family a tensorized level uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatrixCore {
    /// The arch's native register-fragment instruction for the dtype: PTX `mma.sync` m8n8k4
    /// f64 on NVIDIA, `v_mfma_f64_16x16x4f64` on CDNA, `v_wmma_f32_16x16x16_*` on RDNA3/4.
    Mma,
    /// NVIDIA's warp-level matrix API (`nvcuda::wmma` f64 8×8×4 fragments, sm_80+): fragments
    /// are loaded from and stored to shared memory by the API; their lane layout is opaque.
    Wmma,
}

/// A value written in a schedule: fixed, or a tunable parameter with its choices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    Fixed(u32),
    /// A parameter an auto-tuner may set: `name`, the allowed values, the default.
    Tunable {
        name: String,
        choices: Vec<u32>,
        /// The default: the `else` value where `default_when` is not empty.
        default: u32,
        /// `default = if K <= 16 { 128 } else { 384 }`: the first condition that holds (over
        /// K, bytes and the arch's limits, never over parameters) gives the default; see
        /// [`Schedule::at`](crate::Schedule::at).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        default_when: Vec<DefaultWhen>,
        /// The default is settled: chosen by a configuration, or resolved for one request by
        /// [`Schedule::at`](crate::Schedule::at). An open one (false) takes the arch's tuned
        /// default, else the rule, else the plain default, when the schedule is planned.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        chosen: bool,
    },
}

/// One `if COND { N }` branch of a default that depends on the request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefaultWhen {
    pub when: crate::expr::Constraint,
    pub value: u32,
}

/// `128` or `if K <= 16 { 128 } else { 384 }`, as written in the DSL.
pub struct DefaultText<'a>(pub u32, pub &'a [DefaultWhen]);

impl fmt::Display for DefaultText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for w in self.1 {
            write!(f, "if {} {{ {} }} else ", w.when.text, w.value)?;
        }
        if self.1.is_empty() {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{{ {} }}", self.0)
        }
    }
}

impl Value {
    /// The value used when no tuner has chosen one.
    pub fn default_value(&self) -> u32 {
        match self {
            Value::Fixed(v) => *v,
            Value::Tunable { default, .. } => *default,
        }
    }
}

/// One named schedule primitive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// `threads(N)`: threads per block (one-dimensional).
    Threads(Value),
    /// `bind(threads, elements|rows)` or `bind(warps, tiles)`: what one thread (or one warp)
    /// computes in a GEMM pass.
    Bind(ThreadMap),
    /// `cache_read(B, shared, pad = P)`: stage an operand in faster memory before use.
    /// `pad` extra elements per row avoid bank conflicts.
    CacheRead { operand: Operand, into: Memory, pad: Value },
    /// `tensorize(mma)`: each warp computes its tile with matrix-core instructions.
    Tensorize(MatrixCore),
    /// `cache_write(C, shared, pad = P)`: output rows pass through shared memory so the block
    /// stores them to device memory coalesced. `pad` extra elements per staged row.
    CacheWrite { operand: Operand, into: Memory, pad: Value },
    /// `register_tile(cols)`: the thread keeps the whole output row in registers (acc[K]).
    RegisterTile(Loop),
    /// `unroll(k|cols)` / `unroll(k, by = N)`: unroll a loop by N (0: fully; K is a
    /// compile-time constant).
    Unroll(Loop, Value),
    /// `workspace(global|shared)`: where the intermediates of passes 0→1 and 1→2 live.
    Workspace(Memory),
    /// `library(kronecker|three_gemm)`: the transform as vendor BLAS calls.
    Library(LibraryCall),
    /// `copy(vector = V)`: the floor level; each tensor is read once and written once,
    /// V elements per access (a 16-byte access for f64 is V = 2).
    Copy { vector: u32 },
    /// `launch_bounds(min_blocks = N)`: ask the compiler to fit N blocks on one SM/CU (it
    /// caps registers accordingly): CUDA `__launch_bounds__(THREADS, N)`, HIP
    /// `amdgpu_waves_per_eu`. 1 leaves the compiler's default.
    LaunchBounds { min_blocks: Value },
    /// `constraint(lhs <= rhs)`: a condition on the tunable parameters, K, the dtype and the
    /// arch; a configuration (defaults included) that breaks it is not planned.
    Constraint(crate::expr::Constraint),
    /// `buffers(N)`: K³-sized shared buffers the fused passes use. 2: a pass reads one and
    /// writes the other. 1: a pass writes its output over its input — each warp holds its
    /// output tiles in registers until every warp has read the input (a barrier), then stores.
    /// 3 (with `pipeline(2)`): the third receives the next tensor during all three passes.
    Buffers(Value),
    /// `pipeline(N)`: tensors in flight per block. 2: while a tensor's last pass runs, the
    /// next tensor of the block is copied asynchronously into the buffer that pass does not read.
    Pipeline(Value),
    /// `tensors(N)`: tensors a block transforms at once. The block's warps split into N
    /// groups; each group walks its own tensors and synchronises on its own named barrier, so
    /// the barrier waits of one group overlap the passes of another.
    Tensors(Value),
    /// `cluster(N)`: each tensor is split over the N blocks of a thread-block cluster (NVIDIA
    /// sm_90): a block holds about K/N values of the tensor's second index, and after the first
    /// pass as many of the new first index. The first pass stores its output into the shared
    /// memory of the block that owns it (distributed shared memory); every pass is then a GEMM
    /// on the block's own slice. A tensor needs about 1/N of the shared memory per block, so
    /// K = 25..32 fit. `buffers(3)` or `buffers(4)` (two gather buffers, one cluster barrier
    /// per tensor).
    Cluster(Value),
    /// `split_cols(N)`: the columns of a row tile are split over N warps (waves w with the
    /// same w / N share a tile); each holds the B fragments and accumulators of its columns
    /// only (1/N of the registers) and loads the tile's A fragments itself.
    SplitCols(Value),
    /// `async_exchange(0|1)`: how `cluster(N)`'s pass 0 hands each output element to the block
    /// owning it. 0: stores to distributed shared memory, then a cluster barrier (release/acquire)
    /// before pass 1. 1: asynchronous stores (`st.async`, sm_90) that complete on an mbarrier
    /// of the receiving block, which expects the bytes it will receive and waits on that
    /// mbarrier alone: no cluster barrier between pass 0 and pass 1.
    AsyncExchange(Value),
    /// `align_runs(0|1)`: the layout of the shared intermediates of whole-tensor fused passes.
    /// A pass's output element (i, j) lies in row i / K, run i % K, column j of the next pass's
    /// input; 1: at odd K the K-long runs are KR = K + 1 apart (slot K is padding nobody reads),
    /// so every column pair (j, j + 1), j even, is 16-byte aligned and stored as one access
    /// (NVIDIA f64), and the next pass reads element a_i of its row at (a_i / K)·KR + a_i % K.
    /// At even K, and with 0, the runs are K apart (KR = K). The first pass's input (the tensor
    /// as copied in) keeps the plain layout.
    AlignRuns(Value),
    /// `pair_rows(0|1)`: the rows of each tile of the fused passes, permuted. 1: on matrix
    /// instructions whose A fragment gives a lane rows g and g + 8 of a 16-row tile (NVIDIA
    /// `mma.m16n8k4/k8 .f64`), tile row g is placed at 2g and row g + 8 at 2g + 1, in A and in
    /// D alike (a GEMM computes each row alone, so any row permutation applied to both is
    /// exact). A lane's two A registers are then adjacent elements of one shared-memory row,
    /// read as one 16-byte access where the row stride is even. Other instructions (one A
    /// register per lane: m8n8k4, AMD MFMA f64) keep their rows.
    PairRows(Value),
    /// `swap_operands(0|1)`: which operand of the matrix instruction the fused passes' tensor
    /// is. 0: its K² index is the instruction's M (row tiles of FM) and B the B operand (K
    /// columns in fragments of FN). 1: the pass is computed transposed, D'(j, i) = Σ_k Bᵀ(j, k)
    /// in(k, i): Bᵀ the A operand in registers (K rows in fragments of FM), the tensor the B
    /// operand (K² columns in tiles of FN). Where FM ≠ FN the padding differs (m16n8k4 at K = 10:
    /// 13 tiles of 8 instead of 7 of 16) and so do the stores (one element per register).
    SwapOperands(Value),
    /// `fuse_k(N)`: N consecutive k-steps of the tensorized instruction issued as one
    /// instruction N times as deep, where the arch has it (sm_90 f64: `mma.m16n8k4` ×2 →
    /// `m16n8k8`, ×4 → `m16n8k16`), whose A and B registers are the N steps' fragments side by
    /// side (`Fragment::step_operands`). Same arithmetic, same layouts, same zero padding:
    /// fewer instructions and accumulator round trips. Steps left over at the end of the
    /// k loop (K_STEPS not a multiple of N) issue at the largest depth that fits (a K = 20
    /// pass with N = 2: two m16n8k8 and one m16n8k4), so no k is padded beyond the shallow
    /// instruction's. 1: every step its own instruction.
    FuseK(Value),
    /// `bulk_copy(0|1)`: how `pipeline(N)` copies the block's next tensors into shared memory.
    /// 0: 16-byte `cp.async` by every thread (one commit group per tensor). 1: bulk
    /// asynchronous copies (`cp.async.bulk`, the TMA unit of NVIDIA sm_90), one per row of K²
    /// values issued by the lanes of warp 0, completing on an mbarrier per buffer that every
    /// thread waits on. Needs rows of whole 16-byte units (f64: even K and an even row pad).
    BulkCopy(Value),
    /// `fma_tail(0|1)`: the output columns past the last whole column fragment (K mod FN of
    /// them, FN the instruction's N) computed by plain FMA instead of one more fragment padded
    /// with zero columns. 1: each wave's lanes take one tail column each (lane % TAIL) and
    /// consecutive rows of the tile, the column of B held in registers (K values); the
    /// instructions cover NP = FN·floor(K / FN) columns. At K = 10 on an m16n8 instruction the
    /// padded fragment is 6/8 zeros: half of a pass's instructions multiply them.
    FmaTail(Value),
    /// `shadow_mma(0|1)`: beside `copy(..)`, per tensor the fewest matrix instructions any
    /// tensorized transform needs at K (three passes of whole fragments of the arch's
    /// instruction, in the operand roles that pad least), on operands held in registers and
    /// results never stored: the `bound` level, a measured lower bound for the transform
    /// levels (each does at least this work and moves at least this data). 1: half of each
    /// block's warps copy and half multiply; 0: every warp does its share of both, interleaved.
    ShadowMma(Value),
    /// `persistent(0|1)`: 1: the runtime launches no more blocks than the device holds at once
    /// (the driver's resident blocks per SM/CU for the loaded kernel × SMs/CUs, and at most
    /// min(N, M)), so each block walks more tensors and a block's pipeline fills and drains
    /// fewer times per task. The kernel is the same: every level's blocks stride over the
    /// tensors. A launch decision, so it names no thread-block cluster (their placement is not
    /// per SM).
    Persistent(Value),
    /// `coalesce_c(0|1)`: how the fused passes' last pass stores C. 0: straight from its D
    /// fragments (a warp's store covers 8 rows × 64 bytes at the row pitch K, so unless K is a
    /// multiple of 8 a request writes parts of several lines). 1: into the shared buffer that pass does
    /// not read, in C's layout; after the barrier the block stores the tensor as consecutive
    /// vectors, every warp-wide store whole lines. One more shared write and read of C per
    /// tensor, no more barriers. Needs a buffer free during the last pass: `buffers(2)`
    /// without `pipeline(N)` (whose free buffer receives the next tensor).
    CoalesceC(Value),
    /// `late_wait(0|1)`: where `cluster(N)`'s pass 0 waits at the cluster barrier (every block
    /// done with the gather buffer it is about to write). 0: the whole block, before pass 0.
    /// 1: each wave after computing its first tile, before its first store, so a late block's
    /// skew overlaps that work. Only where pass 0 waits at all (one gather buffer, or the
    /// asynchronous exchange).
    LateWait(Value),
    /// `stack(N)`: the rows of every whole-tensor fused pass span N tensors. A pass is
    /// out(i, j) = Σ_k in(k, i) B(k, j) with i over one tensor's K² rows, padded to whole
    /// fragments (K = 10: 112 rows for 100); B is the same for every tensor and each row is
    /// computed alone, so N tensors side by side in a shared buffer (tensor t's in(k, i) at
    /// column t·K² + i of row k) are one GEMM of N·K² rows (K = 10, N = 2: 208 rows for 200;
    /// N = 4: 400, no padding). An output row t·K² + x·K + y goes to row x, column
    /// t·K² + y·K + j of the next pass's input: tensors never mix, a tile may straddle two.
    /// The block walks groups of N consecutive tensors (the last one possibly partial: its
    /// empty slots are computed on stale data and never stored), so a launch has at most
    /// ceil(N_tensors / N) blocks of work. Shared buffers are N times as wide.
    Stack(Value),
    /// `split_output(N)`: each tensor's output is split along its last index z over N blocks
    /// that share nothing: block h of a tensor computes C(·, ·, z) for its 1/N of z. Pass 0
    /// contracts c into z, so the N parts are independent through all three passes; each block
    /// reads the whole tensor (the second read from L2) and no DMMA is repeated. With N = 2 at
    /// K = 32, a block's z is one 16-row tile of the m16n8 instructions, and what the block
    /// keeps is the last pass's input for its half (K · K · 16 values in shared memory): no
    /// exchange and no cluster, so every block slot of the GPU is usable.
    /// A launch has N blocks per tensor (min(N·nfuncs, M), rounded up to a multiple of N).
    SplitOutput(Value),
    /// `chain(0|1)`: 1: pass 1 takes pass 0's accumulators as its B operand where they lie in
    /// registers. An m16n8 accumulator gives lane (g, t) the columns 2t and 2t + 1, which are
    /// the k-slots t and t + 4 of an m16n8k8 operand once every k order within a group of 8 is
    /// (0, 2, 4, 6, 1, 3, 5, 7) (the A operands' columns follow), so pass 0's output is never
    /// stored. 0: it is (not planned with `split_output`, which has no buffer for it).
    Chain(Value),
    /// `prefetch_l2(N)`: each warp asks L2 for the slice of A N slices after the one it is
    /// reading (`cp.async.bulk.prefetch.L2`, sm_90), while its bulk copy loads the next one, so
    /// that slice's copy later reads L2, not DRAM. 0: no prefetch; 1 is refused (the slice being
    /// copied).
    PrefetchL2(Value),
    /// `co_schedule(0|1)`: 1: the N blocks of a `split_output(N)` tensor launch as one
    /// thread-block cluster (`__cluster_dims__(N, 1, 1)`, sm_90), which the hardware starts
    /// together, so the tensor's second read comes from L2 even when several launches share
    /// the GPU (scheduled on their own, concurrent launches can start a pair's blocks far apart,
    /// and the second read then misses L2). Nothing crosses between the blocks. 0: each block is
    /// scheduled on its own.
    CoSchedule(Value),
    /// `stage_terms(N)`: where a rank sum's matrices X_μ, Y_μ, Z_μ live on their way to the
    /// register fragments each pass loads. 0: read from device memory (through L1 and L2) right
    /// after the pass before, so every block's first use waits for them across a barrier.
    /// N ≥ 2: a ring of N terms' matrices in shared memory, term μ + N - 1's copied
    /// asynchronously (`cp.async`, NVIDIA sm_80+; plain loads and stores elsewhere) while term μ
    /// runs, so each pass's fragments come from shared memory. Other operations refuse N > 0.
    StageTerms(Value),
    /// `restage_a(0|1)`: where a rank sum keeps A. 0: staged once in a third shared buffer
    /// beside the two intermediates. 1: copied again for every term, asynchronously during the
    /// last pass, into the intermediate that pass does not read; the two buffers then swap roles,
    /// so the kernel needs two buffers, not three (K up to 24 in f64 on sm_90), for one more
    /// barrier and one read of A from L2 per term. Not with `stage_terms(N)`.
    RestageA(Value),
}

/// The one match behind [`Step::value`] and [`Step::value_mut`]: matched through `&` or
/// `&mut`, the bindings are shared or mutable references alike.
macro_rules! step_value {
    ($step:expr) => {
        match $step {
            Step::Threads(v) | Step::Unroll(_, v) | Step::Buffers(v) | Step::Pipeline(v) | Step::Tensors(v) | Step::Cluster(v) | Step::SplitCols(v) => Some(v),
            Step::AsyncExchange(v) | Step::AlignRuns(v) | Step::PairRows(v) | Step::SwapOperands(v) | Step::FuseK(v) | Step::BulkCopy(v) | Step::FmaTail(v) | Step::Persistent(v) | Step::LateWait(v) | Step::Stack(v) | Step::ShadowMma(v) | Step::CoalesceC(v) => Some(v),
            Step::SplitOutput(v) | Step::Chain(v) | Step::PrefetchL2(v) | Step::CoSchedule(v) | Step::StageTerms(v) | Step::RestageA(v) => Some(v),
            Step::CacheRead { pad, .. } | Step::CacheWrite { pad, .. } => Some(pad),
            Step::LaunchBounds { min_blocks } => Some(min_blocks),
            Step::Bind(_) | Step::Tensorize(_) | Step::RegisterTile(_) | Step::Workspace(_) | Step::Library(_) | Step::Copy { .. } | Step::Constraint(_) => None,
        }
    };
}

impl Step {
    /// The step's numeric argument, fixed or tunable, if it has one (every step has at most
    /// one). Exhaustive on purpose: a new step with a value must say so here, or its
    /// parameter would be invisible to `tune` and to `with_config`.
    pub fn value(&self) -> Option<&Value> {
        step_value!(self)
    }

    /// [`Step::value`], to change it.
    pub fn value_mut(&mut self) -> Option<&mut Value> {
        step_value!(self)
    }

    /// The primitive's name as written in the DSL.
    pub fn primitive(&self) -> &'static str {
        match self {
            Step::Threads(_) => "threads",
            Step::Bind(_) => "bind",
            Step::CacheRead { .. } => "cache_read",
            Step::CacheWrite { .. } => "cache_write",
            Step::Tensorize(_) => "tensorize",
            Step::RegisterTile(_) => "register_tile",
            Step::Unroll(..) => "unroll",
            Step::Workspace(_) => "workspace",
            Step::Copy { .. } => "copy",
            Step::Library(_) => "library",
            Step::LaunchBounds { .. } => "launch_bounds",
            Step::Constraint(_) => "constraint",
            Step::Buffers(_) => "buffers",
            Step::Pipeline(_) => "pipeline",
            Step::Tensors(_) => "tensors",
            Step::Cluster(_) => "cluster",
            Step::SplitCols(_) => "split_cols",
            Step::AsyncExchange(_) => "async_exchange",
            Step::AlignRuns(_) => "align_runs",
            Step::PairRows(_) => "pair_rows",
            Step::SwapOperands(_) => "swap_operands",
            Step::FuseK(_) => "fuse_k",
            Step::BulkCopy(_) => "bulk_copy",
            Step::FmaTail(_) => "fma_tail",
            Step::Persistent(_) => "persistent",
            Step::CoalesceC(_) => "coalesce_c",
            Step::LateWait(_) => "late_wait",
            Step::Stack(_) => "stack",
            Step::ShadowMma(_) => "shadow_mma",
            Step::SplitOutput(_) => "split_output",
            Step::Chain(_) => "chain",
            Step::PrefetchL2(_) => "prefetch_l2",
            Step::StageTerms(_) => "stage_terms",
            Step::RestageA(_) => "restage_a",
            Step::CoSchedule(_) => "co_schedule",
        }
    }
}

impl fmt::Display for Loop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Loop::Tensors => "tensors",
            Loop::Rows => "rows",
            Loop::Cols => "cols",
            Loop::K => "k",
        })
    }
}

impl fmt::Display for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Memory::Global => "global",
            Memory::Shared => "shared",
            Memory::Registers => "registers",
        })
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::C => "C",
        })
    }
}

impl fmt::Display for ThreadMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ThreadMap::Elements => "elements",
            ThreadMap::Rows => "rows",
            ThreadMap::Tiles => "tiles",
        })
    }
}

/// `N` or `tune([..], default = N)`; `name = ..` is added by the step where it is not the
/// positional name.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Fixed(v) => write!(f, "{v}"),
            Value::Tunable { choices, default, default_when, .. } => {
                let c: Vec<String> = choices.iter().map(u32::to_string).collect();
                write!(f, "tune([{}], default = {})", c.join(", "), DefaultText(*default, default_when))
            }
        }
    }
}

/// A value as written at a position whose parameter is conventionally named `positional`.
struct Arg<'a>(&'a Value, String);

impl fmt::Display for Arg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Tunable { name, choices, default, default_when, .. } if *name != self.1 => {
                let c: Vec<String> = choices.iter().map(u32::to_string).collect();
                write!(f, "tune([{}], default = {}, name = {name})", c.join(", "), DefaultText(*default, default_when))
            }
            v => write!(f, "{v}"),
        }
    }
}

fn lower(x: impl fmt::Display) -> String {
    x.to_string().to_ascii_lowercase()
}

/// Prints a step exactly as it is written in the DSL, e.g. `cache_read(B, shared, pad = 1)`.
impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Threads(Value::Tunable { name, choices, default, default_when, .. }) if name == "threads" && default_when.is_empty() => {
                let c: Vec<String> = choices.iter().map(u32::to_string).collect();
                write!(f, "threads(tune = [{}], default = {default})", c.join(", "))
            }
            Step::Threads(v) => write!(f, "threads({})", Arg(v, "threads".into())),
            Step::Bind(m @ ThreadMap::Tiles) => write!(f, "bind(warps, {m})"),
            Step::Bind(m) => write!(f, "bind(threads, {m})"),
            Step::Tensorize(MatrixCore::Mma) => write!(f, "tensorize(mma)"),
            Step::Tensorize(MatrixCore::Wmma) => write!(f, "tensorize(wmma)"),
            Step::CacheRead { operand, into, pad: Value::Fixed(0) } => write!(f, "cache_read({operand}, {into})"),
            Step::CacheRead { operand, into, pad } => {
                write!(f, "cache_read({operand}, {into}, pad = {})", Arg(pad, format!("pad_{}", lower(operand))))
            }
            Step::CacheWrite { operand, into, pad: Value::Fixed(0) } => write!(f, "cache_write({operand}, {into})"),
            Step::CacheWrite { operand, into, pad } => {
                write!(f, "cache_write({operand}, {into}, pad = {})", Arg(pad, format!("pad_{}", lower(operand))))
            }
            Step::RegisterTile(l) => write!(f, "register_tile({l})"),
            Step::Unroll(l, Value::Fixed(0)) => write!(f, "unroll({l})"),
            Step::Unroll(l, by) => write!(f, "unroll({l}, by = {})", Arg(by, format!("unroll_{l}"))),
            Step::LaunchBounds { min_blocks } => write!(f, "launch_bounds(min_blocks = {})", Arg(min_blocks, "min_blocks".into())),
            Step::Constraint(c) => write!(f, "constraint({})", c.text),
            Step::Workspace(m) => write!(f, "workspace({m})"),
            Step::Copy { vector } => write!(f, "copy(vector = {vector})"),
            Step::Library(LibraryCall::Kronecker) => write!(f, "library(kronecker)"),
            Step::Library(LibraryCall::ThreeGemm) => write!(f, "library(three_gemm)"),
            Step::Buffers(v) => write!(f, "buffers({v})"),
            Step::Pipeline(v) => write!(f, "pipeline({v})"),
            Step::Tensors(v) => write!(f, "tensors({v})"),
            Step::Cluster(v) => write!(f, "cluster({v})"),
            Step::SplitCols(v) => write!(f, "split_cols({v})"),
            Step::AsyncExchange(v) => write!(f, "async_exchange({v})"),
            Step::AlignRuns(v) => write!(f, "align_runs({v})"),
            Step::PairRows(v) => write!(f, "pair_rows({v})"),
            Step::SwapOperands(v) => write!(f, "swap_operands({v})"),
            Step::FuseK(v) => write!(f, "fuse_k({v})"),
            Step::BulkCopy(v) => write!(f, "bulk_copy({v})"),
            Step::FmaTail(v) => write!(f, "fma_tail({v})"),
            Step::Persistent(v) => write!(f, "persistent({v})"),
            Step::CoalesceC(v) => write!(f, "coalesce_c({v})"),
            Step::LateWait(v) => write!(f, "late_wait({v})"),
            Step::Stack(v) => write!(f, "stack({v})"),
            Step::ShadowMma(v) => write!(f, "shadow_mma({v})"),
            Step::SplitOutput(v) => write!(f, "split_output({v})"),
            Step::Chain(v) => write!(f, "chain({v})"),
            Step::PrefetchL2(v) => write!(f, "prefetch_l2({v})"),
            Step::StageTerms(v) => write!(f, "stage_terms({v})"),
            Step::RestageA(v) => write!(f, "restage_a({v})"),
            Step::CoSchedule(v) => write!(f, "co_schedule({v})"),
        }
    }
}

/// What a level measures (see [`Schedule::role`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The copy floor: every tensor read once and written once.
    Floor,
    /// The floor's traffic plus the fewest matrix instructions of the transform.
    Bound,
    /// The transform itself.
    Transform,
}

impl Schedule {
    /// What the level measures: the floor (`copy`), the bound (`copy` with `shadow_mma`), or
    /// a transform.
    pub fn role(&self) -> Role {
        match (self.iter_steps().any(|s| matches!(s, Step::Copy { .. })), self.iter_steps().any(|s| matches!(s, Step::ShadowMma(_)))) {
            (false, _) => Role::Transform,
            (true, false) => Role::Floor,
            (true, true) => Role::Bound,
        }
    }

    /// Whether the level computes the transform: not `copy` (the floor) nor `bound` (the copy
    /// with shadow instructions), whose output is their input.
    pub fn is_transform(&self) -> bool {
        self.role() == Role::Transform
    }

    /// Steps in order, without locations.
    pub fn iter_steps(&self) -> impl Iterator<Item = &Step> {
        self.steps.iter().map(|s| &s.item)
    }

    /// The located step matching `pred`, if any (schedules hold each primitive kind at most once
    /// except `unroll`).
    pub fn find(&self, pred: impl Fn(&Step) -> bool) -> Option<&Located<Step>> {
        self.steps.iter().find(|s| pred(&s.item))
    }

    /// `L3` for numbered levels, the name otherwise.
    pub fn short_id(&self) -> String {
        match self.number {
            Some(n) => format!("L{n}"),
            None => self.name.clone(),
        }
    }
}

/// Prints the schedule as it reads in the DSL, one step per line.
impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "level {} \"{}\" {{", self.short_id(), self.name)?;
        for s in &self.steps {
            writeln!(f, "    {};", s.item)?;
        }
        write!(f, "}}")
    }
}

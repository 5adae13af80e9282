//! The vocabulary of the DSL: which words each argument position accepts.
//!
//! Kept in one place so that the parser's "expected one of: ..." messages and the accepted
//! words can never disagree.

use crate::ast::{BindUnit, LibraryCall, Loop, MatrixCore, Memory, Operand, ThreadMap};

/// Every primitive, in the order the error message lists them.
pub const PRIMITIVES: &[&str] = &[
    "threads",
    "bind",
    "cache_read",
    "cache_write",
    "tensorize",
    "register_tile",
    "unroll",
    "workspace",
    "copy",
    "library",
    "launch_bounds",
    "constraint",
    "buffers",
    "pipeline",
    "tensors",
    "cluster",
    "split_cols",
    "async_exchange",
    "align_runs",
    "pair_rows",
    "swap_operands",
    "late_wait",
    "fuse_k",
    "bulk_copy",
    "fma_tail",
    "persistent",
    "coalesce_c",
    "stack",
    "shadow_mma",
    "split_output",
    "chain",
    "co_schedule",
    "prefetch_l2",
    "stage_terms",
    "restage_a",
];

/// How each primitive is written, for "missing/extra argument" messages.
pub fn signature(prim: &str) -> &'static str {
    match prim {
        "threads" => "threads(N) or threads(tune([N, ...], default = N))",
        "bind" => "bind(threads, elements|rows) or bind(warps, tiles)",
        "tensorize" => "tensorize(mma|wmma)",
        "cache_read" => "cache_read(A|B, shared|registers) or cache_read(A|B, shared, pad = N|tune([N, ...], default = N))",
        "cache_write" => "cache_write(C, shared) or cache_write(C, shared, pad = N|tune([N, ...], default = N))",
        "register_tile" => "register_tile(cols)",
        "unroll" => "unroll(k|cols) or unroll(k|cols, by = N|tune([N, ...], default = N)) (by = 0: fully), or unroll(rows, by = 1..=4) (tiles a wave computes at once)",
        "workspace" => "workspace(global|shared)",
        "copy" => "copy(vector = 1|2|4)",
        "library" => "library(kronecker|three_gemm)",
        "launch_bounds" => "launch_bounds(min_blocks = N|tune([N, ...], default = N))",
        "constraint" => "constraint(expr <= expr), e.g. constraint(threads * min_blocks <= 1024)",
        "tune" => "tune([N, ...], default = N) or tune([N, ...], default = N, name = ident)",
        "buffers" => "buffers(N), 1 <= N <= 9, or buffers(tune([N, ...], default = N))",
        "pipeline" => "pipeline(N), 1 <= N <= 8, or pipeline(tune([N, ...], default = N))",
        "tensors" => "tensors(N), 1 <= N <= 4, or tensors(tune([N, ...], default = N))",
        "cluster" => "cluster(N), 1 <= N <= 8, or cluster(tune([N, ...], default = N))",
        "split_cols" => "split_cols(N), 1 <= N <= 4, or split_cols(tune([N, ...], default = N))",
        "async_exchange" => "async_exchange(0|1) or async_exchange(tune([0, 1], default = N))",
        "align_runs" => "align_runs(0|1) or align_runs(tune([0, 1], default = N))",
        "pair_rows" => "pair_rows(0|1) or pair_rows(tune([0, 1], default = N))",
        "swap_operands" => "swap_operands(0|1) or swap_operands(tune([0, 1], default = N))",
        "late_wait" => "late_wait(0|1) or late_wait(tune([0, 1], default = N))",
        "fuse_k" => "fuse_k(1|2|4) or fuse_k(tune([1, 2, 4], default = N))",
        "bulk_copy" => "bulk_copy(0|1) or bulk_copy(tune([0, 1], default = N))",
        "fma_tail" => "fma_tail(0|1) or fma_tail(tune([0, 1], default = N))",
        "persistent" => "persistent(0|1) or persistent(tune([0, 1], default = N))",
        "coalesce_c" => "coalesce_c(0|1) or coalesce_c(tune([0, 1], default = N))",
        "stack" => "stack(N), 1 <= N <= 4, or stack(tune([N, ...], default = N))",
        "shadow_mma" => "shadow_mma(0|1) or shadow_mma(tune([0, 1], default = N))",
        "split_output" => "split_output(N), 1 <= N <= 2, or split_output(tune([N, ...], default = N))",
        "chain" => "chain(0|1) or chain(tune([0, 1], default = N))",
        "co_schedule" => "co_schedule(0|1) or co_schedule(tune([0, 1], default = N))",
        "prefetch_l2" => "prefetch_l2(N), 0 <= N <= 4, or prefetch_l2(tune([N, ...], default = N))",
        "stage_terms" => "stage_terms(0) or stage_terms(N), 2 <= N <= 4, or stage_terms(tune([N, ...], default = N))",
        "restage_a" => "restage_a(0|1) or restage_a(tune([0, 1], default = N))",
        _ => unreachable!("not a primitive: {prim}"),
    }
}

/// The 0|1 steps and what each value means, for the parser's and the checker's messages.
pub const SWITCHES: Table<&str> = &[
    ("async_exchange", "0 (stores and a cluster barrier) or 1 (asynchronous stores)"),
    ("align_runs", "0 (runs at stride K) or 1 (runs at an even stride at odd K)"),
    ("late_wait", "0 (the block waits before pass 0) or 1 (each wave after its first tile)"),
    ("pair_rows", "0 (rows as the instruction lays them) or 1 (row pairs per lane)"),
    ("swap_operands", "0 (the tensor as the instruction's A operand) or 1 (as its B operand, K² as N)"),
    ("bulk_copy", "0 (cp.async by every thread) or 1 (bulk copies, one per row)"),
    ("fma_tail", "0 (a zero-padded last column fragment) or 1 (the last K mod FN columns by FMA)"),
    ("persistent", "0 (min(N, M) blocks) or 1 (at most the blocks the GPU holds at once)"),
    ("coalesce_c", "0 (C stored from the fragments) or 1 (C staged in shared memory, stored in whole lines)"),
    ("shadow_mma", "0 (every warp copies and multiplies) or 1 (half the warps copy, half multiply)"),
    ("chain", "0 (pass 0's output stored) or 1 (pass 1 reads pass 0's accumulators in registers)"),
    ("co_schedule", "0 (a tensor's blocks launch independently) or 1 (as one thread-block cluster, starting together)"),
    ("restage_a", "0 (a rank sum's A staged once) or 1 (copied again for every term)"),
];

/// What `0` and `1` mean for the 0|1 step `prim`.
pub fn switch_meaning(prim: &str) -> &'static str {
    SWITCHES.iter().find(|(name, _)| *name == prim).map(|(_, meaning)| *meaning).unwrap_or_else(|| unreachable!("not a 0|1 step: {prim}"))
}

/// The most threads a block may have on every supported GPU.
pub const MAX_THREADS: u32 = 1024;

/// Elements per access that `copy` can generate: f64 scalars, one 16-byte access (2), or two
/// of them per thread (4). Other widths have no vector type to load into.
pub const COPY_VECTORS: &[u32] = &[1, 2, 4];

/// A table from the accepted words of one argument position to their meaning.
pub type Table<T> = &'static [(&'static str, T)];

/// `bind(<unit>, ..)`. Later issues add `warps`.
pub const BIND_UNITS: Table<BindUnit> = &[("threads", BindUnit::Threads), ("warps", BindUnit::Warps)];
/// `bind(threads, <map>)`.
pub const THREAD_MAPS: Table<ThreadMap> =
    &[("elements", ThreadMap::Elements), ("rows", ThreadMap::Rows)];
/// `bind(warps, <map>)`: warps own tiles of the matrix fragment's rows.
pub const WARP_MAPS: Table<ThreadMap> = &[("tiles", ThreadMap::Tiles)];
/// `library(<call>)`: the transform as vendor BLAS calls.
pub const LIBRARY_CALLS: Table<LibraryCall> = &[("kronecker", LibraryCall::Kronecker), ("three_gemm", LibraryCall::ThreeGemm)];
/// `tensorize(<core>)`.
pub const MATRIX_CORES: Table<MatrixCore> = &[("mma", MatrixCore::Mma), ("wmma", MatrixCore::Wmma)];
/// `cache_read(<operand>, ..)`.
pub const OPERANDS: Table<Operand> = &[("A", Operand::A), ("B", Operand::B)];
/// `cache_write(<operand>, ..)`: only the pass output is written.
pub const WRITE_OPERANDS: Table<Operand> = &[("C", Operand::C)];
/// `cache_write(C, <into>)`: output rows are staged in shared memory for coalesced stores.
pub const WRITE_INTO: Table<Memory> = &[("shared", Memory::Shared)];
/// `cache_read(.., <into>)`. `global` is recognised separately to say why it is wrong.
pub const CACHE_INTO: Table<Memory> =
    &[("shared", Memory::Shared), ("registers", Memory::Registers)];
/// `register_tile(<loop>)`: a row of the output in registers; only the column loop so far.
pub const REGISTER_TILE_LOOPS: Table<Loop> = &[("cols", Loop::Cols)];
/// `unroll(<loop>)`: the loops whose trip count is the compile-time K.
pub const UNROLL_LOOPS: Table<Loop> = &[("k", Loop::K), ("cols", Loop::Cols), ("rows", Loop::Rows)];
/// `workspace(<memory>)`: where the intermediates between passes live.
pub const WORKSPACES: Table<Memory> = &[("global", Memory::Global), ("shared", Memory::Shared)];

/// `a, b, c` for messages.
pub fn list<T>(table: Table<T>) -> String {
    table.iter().map(|(w, _)| *w).collect::<Vec<_>>().join(", ")
}

/// The meaning of `word` in `table`, if it is one of its words.
pub fn lookup<T: Copy>(table: Table<T>, word: &str) -> Option<T> {
    table.iter().find(|(w, _)| *w == word).map(|(_, v)| *v)
}

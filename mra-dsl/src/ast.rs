//! The parsed schedule: a small mirror of `mra_codegen::ir` that keeps the span of every token.
//!
//! The macro cannot use the IR types themselves (mra-codegen depends on this crate), and the
//! checks need spans to point at the offending token, so the AST keeps its own enums and
//! [`expand`](crate::expand) maps them onto `::mra_codegen::ir` paths.

use proc_macro2::{Ident, Span};
use syn::{Attribute, LitStr};

/// Everything inside one `schedule! { ... }`.
pub struct Levels(pub Vec<Level>);

/// `/// doc` `level L3 "L3-regblk" { steps }`.
pub struct Level {
    /// Outer attributes, doc comments included; they are put on the generated fn as written.
    pub attrs: Vec<Attribute>,
    /// The doc comment lines, trimmed, blank ones dropped, joined with spaces.
    pub summary: String,
    /// `L3` or a plain name such as `copy`.
    pub ident: Ident,
    /// `Some(3)` for `L3`, `None` for a named level.
    pub number: Option<u32>,
    /// The printed name, e.g. `"L3-regblk"`.
    pub name: LitStr,
    /// The primitives in the order written.
    pub prims: Vec<Prim>,
}

impl Level {
    /// The name of the generated function: `l3` for `L3`, the identifier itself otherwise.
    pub fn fn_name(&self) -> String {
        match self.number {
            Some(n) => format!("l{n}"),
            None => self.ident.to_string(),
        }
    }
}

/// A value together with the span of the token it was read from.
#[derive(Clone, Copy, Debug)]
pub struct Sp<T> {
    pub value: T,
    pub span: Span,
}

/// One `primitive(args);` statement.
pub struct Prim {
    /// The primitive's identifier: errors about the whole primitive point here and the IR
    /// records its line.
    pub ident: Ident,
    pub kind: PrimKind,
}

impl Prim {
    /// The tunable-or-fixed numeric arguments of this primitive with the name each one has
    /// as a parameter (an explicit `name = ..` wins over the positional name).
    pub fn values(&self) -> Vec<(String, &Val)> {
        let named = |pos: String, v: &'_ Val| match v {
            Val::Tune { name: Some(n), .. } => n.to_string(),
            _ => pos,
        };
        let mut out = Vec::new();
        match &self.kind {
            PrimKind::Threads(v) => out.push((named("threads".into(), v), v)),
            PrimKind::CacheRead { operand, pad: Some((_, v)), .. } | PrimKind::CacheWrite { operand, pad: Some((_, v)), .. } => {
                let o = match operand.value {
                    Operand::A => "a",
                    Operand::B => "b",
                    Operand::C => "c",
                };
                out.push((named(format!("pad_{o}"), v), v))
            }
            PrimKind::Unroll { loop_, by: Some((_, v)) } => {
                let l = match loop_.value {
                    Loop::K => "k",
                    Loop::Cols => "cols",
                    Loop::Rows => "rows",
                };
                out.push((named(format!("unroll_{l}"), v), v))
            }
            PrimKind::LaunchBounds { min_blocks } => out.push((named("min_blocks".into(), min_blocks), min_blocks)),
            PrimKind::Buffers(v) => out.push((named("buffers".into(), v), v)),
            PrimKind::Pipeline(v) => out.push((named("pipeline".into(), v), v)),
            PrimKind::Tensors(v) => out.push((named("tensors".into(), v), v)),
            PrimKind::Cluster(v) => out.push((named("cluster".into(), v), v)),
            PrimKind::SplitCols(v) => out.push((named("split_cols".into(), v), v)),
            PrimKind::AsyncExchange(v) => out.push((named("async_exchange".into(), v), v)),
            PrimKind::AlignRuns(v) => out.push((named("align_runs".into(), v), v)),
            PrimKind::PairRows(v) => out.push((named("pair_rows".into(), v), v)),
            PrimKind::SwapOperands(v) => out.push((named("swap_operands".into(), v), v)),
            PrimKind::LateWait(v) => out.push((named("late_wait".into(), v), v)),
            PrimKind::FuseK(v) => out.push((named("fuse_k".into(), v), v)),
            PrimKind::BulkCopy(v) => out.push((named("bulk_copy".into(), v), v)),
            PrimKind::FmaTail(v) => out.push((named("fma_tail".into(), v), v)),
            PrimKind::Persistent(v) => out.push((named("persistent".into(), v), v)),
            PrimKind::CoalesceC(v) => out.push((named("coalesce_c".into(), v), v)),
            PrimKind::Stack(v) => out.push((named("stack".into(), v), v)),
            PrimKind::ShadowMma(v) => out.push((named("shadow_mma".into(), v), v)),
            PrimKind::SplitOutput(v) => out.push((named("split_output".into(), v), v)),
            PrimKind::Chain(v) => out.push((named("chain".into(), v), v)),
            PrimKind::CoSchedule(v) => out.push((named("co_schedule".into(), v), v)),
            PrimKind::PrefetchL2(v) => out.push((named("prefetch_l2".into(), v), v)),
            PrimKind::StageTerms(v) => out.push((named("stage_terms".into(), v), v)),
            PrimKind::RestageA(v) => out.push((named("restage_a".into(), v), v)),
            _ => {}
        }
        out
    }

    /// The primitive's name as written (`threads`, `cache_read`, ...).
    pub fn name(&self) -> &'static str {
        match self.kind {
            PrimKind::Threads(_) => "threads",
            PrimKind::Bind { .. } => "bind",
            PrimKind::CacheRead { .. } => "cache_read",
            PrimKind::CacheWrite { .. } => "cache_write",
            PrimKind::Tensorize(_) => "tensorize",
            PrimKind::RegisterTile(_) => "register_tile",
            PrimKind::Unroll { .. } => "unroll",
            PrimKind::Workspace(_) => "workspace",
            PrimKind::Copy { .. } => "copy",
            PrimKind::Library(_) => "library",
            PrimKind::LaunchBounds { .. } => "launch_bounds",
            PrimKind::Constraint(_) => "constraint",
            PrimKind::Buffers(_) => "buffers",
            PrimKind::Pipeline(_) => "pipeline",
            PrimKind::Tensors(_) => "tensors",
            PrimKind::Cluster(_) => "cluster",
            PrimKind::SplitCols(_) => "split_cols",
            PrimKind::AsyncExchange(_) => "async_exchange",
            PrimKind::AlignRuns(_) => "align_runs",
            PrimKind::PairRows(_) => "pair_rows",
            PrimKind::SwapOperands(_) => "swap_operands",
            PrimKind::LateWait(_) => "late_wait",
            PrimKind::FuseK(_) => "fuse_k",
            PrimKind::BulkCopy(_) => "bulk_copy",
            PrimKind::FmaTail(_) => "fma_tail",
            PrimKind::Persistent(_) => "persistent",
            PrimKind::CoalesceC(_) => "coalesce_c",
            PrimKind::Stack(_) => "stack",
            PrimKind::ShadowMma(_) => "shadow_mma",
            PrimKind::SplitOutput(_) => "split_output",
            PrimKind::Chain(_) => "chain",
            PrimKind::CoSchedule(_) => "co_schedule",
            PrimKind::PrefetchL2(_) => "prefetch_l2",
            PrimKind::StageTerms(_) => "stage_terms",
            PrimKind::RestageA(_) => "restage_a",
        }
    }
}

/// The arguments of each primitive, already mapped from words to enums.
pub enum PrimKind {
    Threads(Val),
    Bind {
        /// The map implies the unit: `tiles` go to warps, `elements`/`rows` to threads.
        map: Sp<ThreadMap>,
    },
    CacheRead {
        operand: Sp<Operand>,
        into: Sp<Memory>,
        /// `pad = N` if written: the span of the word `pad` and the value.
        pad: Option<(Span, Val)>,
    },
    Tensorize(Sp<MatrixCore>),
    CacheWrite {
        operand: Sp<Operand>,
        into: Sp<Memory>,
        pad: Option<(Span, Val)>,
    },
    RegisterTile(Sp<Loop>),
    /// `unroll(k)` or `unroll(k, by = N)`: the factor (0, the default, unrolls fully).
    Unroll {
        loop_: Sp<Loop>,
        by: Option<(Span, Val)>,
    },
    Workspace(Sp<Memory>),
    Copy {
        vector: Sp<u32>,
    },
    Library(Sp<LibraryCall>),
    /// `launch_bounds(min_blocks = N)`: blocks that must fit on one SM/CU at once.
    LaunchBounds {
        min_blocks: Val,
    },
    /// `constraint(expr <= expr)`: a condition every tuned configuration must meet.
    Constraint(Cond),
    /// `buffers(N)`: shared intermediate buffers of the fused passes (1: a pass writes over
    /// its input). Same value forms as `threads`.
    Buffers(Val),
    /// `pipeline(N)`: tensors in flight per block (2: the next one loads while this one computes).
    Pipeline(Val),
    /// `tensors(N)`: tensors a block works on at once, one per warp group with its own named
    /// barrier, so one group's barrier waits overlap another group's work.
    Tensors(Val),
    /// `cluster(N)`: each tensor is split over the N blocks of a thread-block cluster, which
    /// exchange through distributed shared memory.
    Cluster(Val),
    /// `split_cols(N)`: the columns of a row tile are split over N warps, each holding the B
    /// fragments of its columns only.
    SplitCols(Val),
    /// `async_exchange(0|1)`: 1: `cluster(N)`'s exchange uses asynchronous stores that
    /// complete on an mbarrier of the receiving block, instead of stores and a cluster barrier.
    AsyncExchange(Val),
    /// `align_runs(0|1)`: 1: at odd K each K-long output run of the shared intermediates
    /// starts at an even offset (run stride K + 1), so column pairs are 16-byte stores.
    AlignRuns(Val),
    /// `pair_rows(0|1)`: 1: the rows of each matrix-fragment tile interleaved so that a lane's
    /// A registers are pairs of adjacent rows, loaded from shared memory as one 16-byte access.
    PairRows(Val),
    /// `swap_operands(0|1)`: 1: the fused passes computed transposed, the tensor as the matrix
    /// instruction's B operand (its K² index as N) and Bᵀ, in registers, as its A operand.
    SwapOperands(Val),
    /// `late_wait(0|1)`: 1: `cluster(N)`'s pass 0 waits at the cluster barrier after each
    /// wave's first tile, before its first store, instead of the whole block before pass 0.
    LateWait(Val),
    /// `fuse_k(1|2|4)`: consecutive k-steps of the matrix instruction issued as one deeper
    /// instruction (sm_90 f64: m16n8k8, m16n8k16).
    FuseK(Val),
    /// `bulk_copy(0|1)`: 1: `pipeline(N)`'s tensor copies as bulk asynchronous copies (TMA).
    BulkCopy(Val),
    /// `fma_tail(0|1)`: 1: the columns past the last whole column fragment by FMA instead of
    /// a zero-padded fragment.
    FmaTail(Val),
    /// `persistent(0|1)`: 1: launch at most the blocks the GPU holds at once.
    Persistent(Val),
    /// `coalesce_c(0|1)`: 1: the fused passes' last pass writes C's rows into the shared buffer
    /// it does not read, and the block stores the tensor as one run of consecutive vectors.
    CoalesceC(Val),
    /// `stack(N)`: the rows of every whole-tensor fused pass span N tensors side by side (one
    /// GEMM of N·K² rows: less row padding, fewer barriers per tensor).
    Stack(Val),
    /// `shadow_mma(0|1)`: beside `copy(..)`, the fewest matrix instructions a tensorized
    /// transform needs per tensor, on operands in registers, their results discarded (the
    /// `bound` level); 1: half the warps copy and half multiply, 0: every warp does both.
    ShadowMma(Val),
    /// `split_output(N)`: each tensor's output split along its last index over N blocks that
    /// share nothing (each computes its part of z through all three passes).
    SplitOutput(Val),
    /// `chain(0|1)`: 1: pass 1 takes pass 0's accumulators as its B operand in registers.
    Chain(Val),
    /// `co_schedule(0|1)`: 1: a tensor's `split_output(N)` blocks launch as one thread-block
    /// cluster, so they start together (and share the tensor's reads through L2).
    CoSchedule(Val),
    /// `prefetch_l2(N)`: each warp asks L2 for the slice of A N slices after the one it reads.
    PrefetchL2(Val),
    /// `stage_terms(N)`: where a rank sum's matrices live. 0: each pass loads its matrix into
    /// register fragments from device memory (through the caches); N ≥ 2: the matrices of N
    /// terms in a ring of shared memory, each term's copied N - 1 terms ahead of its passes.
    StageTerms(Val),
    /// `restage_a(0|1)`: where a rank sum keeps A. 0: staged once in a third shared buffer; 1:
    /// copied again for every term into the intermediate the last pass does not read (two
    /// buffers: larger K).
    RestageA(Val),
}

/// A numeric argument: `N`, or `tune([N, ...], default = D[, name = ident])` (for threads
/// also the older `tune = [N, ...], default = N`), where the default D is `N` or depends on
/// the request: `if K <= 16 { 128 } else { 384 }` (any number of `else if`).
pub enum Val {
    Fixed(Sp<u32>),
    Tune {
        /// The word `tune`: errors about the whole declaration point here.
        word: Span,
        /// The whole `[..]` list, for errors about the list as a whole (e.g. empty).
        list: Span,
        choices: Vec<Sp<u32>>,
        /// The default: the final `else` value where `default_when` is not empty.
        default: Sp<u32>,
        /// The `if COND { N } else` branches of the default, in order (first match wins).
        default_when: Vec<(Cond, Sp<u32>)>,
        /// `name = ident` if written; otherwise the parameter is named after its position
        /// (`threads`, `pad_a`, `unroll_k`, `min_blocks`, ...: see [`Prim::param_names`]).
        name: Option<Ident>,
    },
}

impl Val {
    /// The value used when nothing is tuned.
    pub fn default_value(&self) -> u32 {
        match self {
            Val::Fixed(v) => v.value,
            Val::Tune { default, .. } => default.value,
        }
    }

    /// The span of the value's token(s) (the literal, or the word `tune`).
    pub fn span(&self) -> Span {
        match self {
            Val::Fixed(v) => v.span,
            Val::Tune { word, .. } => *word,
        }
    }
}

/// A constraint: `lhs op rhs` over parameter names, `K`, `bytes` and the arch's limits.
pub struct Cond {
    pub lhs: Term,
    pub op: Sp<CmpOp>,
    pub rhs: Term,
    /// The condition as written, for messages.
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Le,
    Lt,
    Ge,
    Gt,
    Eq,
    Ne,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

/// An arithmetic expression of a constraint.
pub enum Term {
    Int(Sp<u32>),
    Name(Ident),
    Bin(Box<Term>, Sp<BinOp>, Box<Term>),
}

/// What a `bind` distributes over (the first argument of `bind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindUnit {
    Threads,
    Warps,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibraryCall {
    Kronecker,
    ThreeGemm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixCore {
    Mma,
    Wmma,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadMap {
    Elements,
    Rows,
    Tiles,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    A,
    B,
    C,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    Global,
    Shared,
    Registers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    Cols,
    K,
    /// `unroll(rows, by = N)` with bind(warps, tiles): each wave computes N row tiles at once.
    Rows,
}

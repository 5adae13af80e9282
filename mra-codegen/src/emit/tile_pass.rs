//! The shape of a tile pass, shared by the whole-tensor passes (`tensor.rs`) and the slice
//! passes of `cluster(N)` (`cluster.rs`): which pass function a [`Variant`] is, which part of
//! a tile's work a body emits ([`TileMode`]), how the waves walk the row tiles
//! ([`tile_walk`]), and whether pass 0 of a cluster waits inside its tile loop ([`waits_late`]).

use crate::plan::TransformPlan;

/// Where a tile pass reads its A fragments.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum ASource {
    /// Straight from the pass input (device memory, or the shared workspace).
    Direct,
    /// From the chunk the block staged in shared memory (`cache_read(A, shared)`).
    Staged,
}

/// One pass function: where A comes from, and whether its input and output are shared
/// intermediates in the padded layout (row x of the K x K² view at x · W_STRIDE).
/// `in_place`: the output overwrites the input (`buffers(1)`), so tiles wait in registers.
/// `slice`: a pass of `cluster(N)`, on one block's slice of the tensor.
/// `in_runs`, `out_runs`: the input, the output is a shared intermediate whose K-long runs lie
/// KR apart (`align_runs(1)` at odd K); the first pass's input (the copied tensor) never is.
/// `c_staged`: the last pass writes C's layout into shared memory (`coalesce_c(1)`), the same
/// stores as into C, under a name that says where they go.
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Variant {
    pub(super) src: ASource,
    pub(super) in_shared: bool,
    pub(super) out_shared: bool,
    pub(super) c_staged: bool,
    pub(super) in_place: bool,
    pub(super) slice: Option<SlicePass>,
    pub(super) in_runs: bool,
    pub(super) out_runs: bool,
    /// Pass 0 reading the staged tensor at WS_STRIDE ([`TransformPlan::split_staged_stride`]).
    pub(super) in_staged_stride: bool,
}

/// The three passes of `cluster(N)` (lowered in `cluster.rs`), each on K rows of K·CL values
/// (stride SLICE_STRIDE) in this block's shared memory. The block holds the values b0 .. b0 + CL
/// of the tensor's second index, and, from pass 0's output on, x0 .. x0 + CL of the new first.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum SlicePass {
    /// Pass 0: the slice of A (rows a, columns (b, c)) to T1(b, c, x), each element stored into
    /// the gather buffer of the block owning x (distributed shared memory): rows b, columns
    /// (c, x - x0) there.
    First,
    /// Pass 1: the gather buffer (rows b, columns (c, x)) to T2: rows c, columns (x, y).
    Second,
    /// Pass 2: T2 to this block's rows x0 .. x0 + CL of C (out = C + x0·K²), or, with bulk
    /// copies, to those rows laid out as in C in the gather buffer, stored to C by one bulk copy.
    Third,
}

impl Variant {
    pub(super) fn slice(pass: SlicePass) -> Variant {
        Variant { src: ASource::Direct, in_shared: true, out_shared: pass != SlicePass::Third, c_staged: false, in_place: false, slice: Some(pass), in_runs: false, out_runs: false, in_staged_stride: false }
    }
}

/// Which part of one tile's work a body emits: all of it, or (for an in-place pass) the
/// computation into held registers `acc_all[t]`, or the store of those registers; or (for a
/// rank sum's last pass) the computation added to what `acc_all[t]` holds.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum TileMode {
    Whole,
    Compute,
    Store,
    Accumulate,
}

impl Variant {
    pub(super) fn name(&self) -> &'static str {
        match self.slice {
            Some(SlicePass::First) => return "gemm_pass_scatter",
            Some(SlicePass::Second) => return "gemm_pass_slice",
            Some(SlicePass::Third) => return "gemm_pass_slice_out",
            None => {}
        }
        // align_runs(1): the first pass reads the tensor as copied in and writes padded runs,
        // unlike the second (padded runs to padded runs): two functions.
        let from_plain = self.out_runs && !self.in_runs;
        if self.in_place {
            return if from_plain { "gemm_pass_in_place_from_plain" } else { "gemm_pass_in_place" };
        }
        if from_plain && self.src == ASource::Direct {
            return "gemm_pass_shared_from_plain";
        }
        if self.in_staged_stride {
            return "gemm_pass_shared_from_copy";
        }
        match (self.src, self.in_shared, self.out_shared) {
            (ASource::Staged, _, _) => "gemm_pass_staged",
            (ASource::Direct, true, false) if self.c_staged => "gemm_pass_to_staged_c",
            (ASource::Direct, true, true) => "gemm_pass_shared",
            (ASource::Direct, true, false) => "gemm_pass_to_global",
            (ASource::Direct, false, _) => "gemm_pass",
        }
    }
}

/// `stack(N)`'s last pass, into C: it stores the rows of the tensors the group has, which
/// the caller passes (`rows`, a multiple of K²).
pub(super) fn stacked_to_global(tp: &TransformPlan, v: Variant) -> bool {
    tp.stack > 1 && v.slice.is_none() && !v.out_shared
}

/// A wave's first row tile and the step to its next, as C++ expressions: waves stride over the
/// tiles, JAM tiles at a time with `unroll(rows)`, SPLIT waves per tile with `split_cols`.
pub(super) fn tile_walk(tp: &TransformPlan) -> (&'static str, &'static str) {
    match (tp.jam, tp.col_split) {
        (j, s) if j > 1 && s > 1 => ("wave / SPLIT", "JAM * TILE_WAVES"),
        (j, _) if j > 1 => ("wave", "JAM * WAVES"),
        (_, s) if s > 1 => ("wave / SPLIT", "TILE_WAVES"),
        _ => ("wave", "WAVES"),
    }
}

/// Does each tensor's pass 0 wait at the cluster barrier (pairing the "done reading" arrive of
/// the previous tensor, or the first "started" arrive) before its stores into other blocks? Not
/// with two gather buffers and plain stores, where the barrier after pass 0 orders the reuse.
/// Every wave waits once, before its first store (or after its tiles, if it has none), so the
/// wait overlaps the first tile's computation instead of preceding it.
pub(super) fn waits_in_pass0(tp: &TransformPlan) -> bool {
    tp.shared_buffers != 4 || tp.async_exchange
}

/// Is that wait inside pass 0, after each wave's first tile (so a late block's skew overlaps
/// it), rather than before pass 0? `late_wait(1)`: whether hiding the skew is worth a wait in
/// the middle of the pass depends on K and the layout (a few percent faster at some K, up to
/// 42% slower at others), so it is a tuning choice and the tuned defaults set it per K.
pub(super) fn waits_late(tp: &TransformPlan) -> bool {
    waits_in_pass0(tp) && tp.late_wait
}

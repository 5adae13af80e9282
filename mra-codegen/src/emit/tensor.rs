//! Lowering of tensorized levels (`bind(warps, tiles)` + `tensorize(mma)`): each warp or
//! wavefront owns tiles of FM output rows × all K columns and computes them with the arch's
//! matrix instruction. The lane → element index expressions come from the fragment tables in
//! [`crate::fragment`], the same tables the CPU model in the tests executes
//! ([`crate::simulate`]).
//!
//! K not a multiple of the fragment shape is handled by padding: the contraction and the
//! columns run to KP/NP (multiples of FK/FN) with zeros, and stores are masked.
//!
//! Here: the constants, B made available to the passes, and the pass functions; the body of
//! one tile is `tile_body.rs`.

use super::tile_pass::{stacked_to_global, tile_walk, ASource, TileMode, Variant};
use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::{Loop, Memory, Operand, Step};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    pub(super) fn tile_constants(&mut self, tp: &TransformPlan, f: &Fragment) {
        let k = self.k();
        let note = self.step_comment(|s| matches!(s, Step::Tensorize(_)));
        self.w.line(format!("{note}: {}, {} lanes", f.instr.name(), f.lanes));
        self.w.line(format!("constexpr int FM = {}, FN = {}, FK = {};  // fragment: D(FM x FN) += A(FM x FK) B(FK x FN)", f.m, f.n, f.k));
        self.w.line(format!("constexpr int LANES = {};", f.lanes));
        if tp.tensors > 1 {
            let tensors = self.step_comment(|s| matches!(s, Step::Tensors(_)));
            self.w.line(format!("constexpr int GROUPS = {};  {tensors}: one tensor per warp group", tp.tensors));
            self.w.line("constexpr int GROUP_THREADS = THREADS / GROUPS;");
            self.w.line("constexpr int WAVES = GROUP_THREADS / LANES;  // the waves of one group share out a tensor's tiles");
        } else {
            self.w.line("constexpr int WAVES = THREADS / LANES;");
        }
        self.w.line(format!("constexpr int KP = {};  // contraction padded to whole fragments (zeros)", TransformPlan::padded(k, f.k)));
        if tp.fma_tail {
            let note = self.step_comment(|s| matches!(s, Step::FmaTail(_)));
            self.w.line(format!("constexpr int NP = {};  // columns in whole fragments", tp.fragment_cols(k, f.n)));
            self.w.line(format!("constexpr int TAIL = K - NP;  {note}: columns NP .. K - 1 by FMA, not a zero-padded fragment"));
            self.w.line("constexpr int TAIL_LANES = LANES / TAIL;  // lanes per tail column (the rest idle in the tail)");
            self.w.line("constexpr int TAIL_ROWS = (FM + TAIL_LANES - 1) / TAIL_LANES;  // consecutive tile rows per lane");
        } else {
            self.w.line(format!("constexpr int NP = {};  // columns padded to whole fragments (not stored)", TransformPlan::padded(k, f.n)));
            let note = self.step_comment(|s| matches!(s, Step::FmaTail(_)));
            if !note.is_empty() {
                self.w.line(format!("{note}: off: every column in fragments"));
            }
        }
        let note = self.step_comment(|s| matches!(s, Step::Stack(_)));
        if tp.stack > 1 {
            self.w.line(format!("constexpr int STACK = {};  {note}: tensors side by side in every pass's rows", tp.stack));
            self.w.line("constexpr int ROWS = STACK * K2;  // rows of one pass: tensor t's row i is row t * K2 + i");
            self.w.line("constexpr int ROW_TILES = (ROWS + FM - 1) / FM;");
        } else {
            if !note.is_empty() {
                self.w.line(format!("{note}: one tensor per pass"));
            }
            self.w.line("constexpr int ROW_TILES = (K2 + FM - 1) / FM;");
        }
        let jam_note = self.step_comment(|s| matches!(s, Step::Unroll(Loop::Rows, _)));
        if tp.jam > 1 {
            self.w.line(format!("constexpr int JAM = {};  {jam_note}: row tiles a wave computes at once", tp.jam));
        } else if !jam_note.is_empty() {
            self.w.line(format!("{jam_note}: one row tile per wave at a time"));
        }
        self.w.line("constexpr int K_STEPS = KP / FK;");
        self.w.line("constexpr int N_FRAGS = NP / FN;");
        if tp.swap_operands {
            self.swapped_constants();
        } else {
            let note = self.step_comment(|s| matches!(s, Step::SwapOperands(_)));
            if !note.is_empty() {
                self.w.line(format!("{note}: off: the tensor's K2 rows as the instruction's M, B as its B operand"));
            }
        }
        let restage_note = self.step_comment(|s| matches!(s, Step::RestageA(_)));
        if !tp.restage_a && !restage_note.is_empty() {
            if self.op().matrices == crate::op::Matrices::RankSum {
                self.w.line(format!("{restage_note}: off: A is staged once, in a third buffer every term's pass 0 reads"));
            } else {
                self.w.line(format!("{restage_note}: off: only a rank sum reads A more than once"));
            }
        }
        let stage_note = self.step_comment(|s| matches!(s, Step::StageTerms(_)));
        if tp.stage_terms == 0 && !stage_note.is_empty() {
            if self.op().matrices == crate::op::Matrices::RankSum {
                self.w.line(format!("{stage_note}: off: each pass loads its matrix from device memory into the fragments"));
            } else {
                self.w.line(format!("{stage_note}: off: only a rank sum has terms whose matrices to stage"));
            }
        }
        let pair_note = self.step_comment(|s| matches!(s, Step::PairRows(_)));
        if tp.row_pairs {
            self.w.line(format!("{pair_note}: tile row g + 8x of the instruction (g = lane >> 2, x = 0, 1) is row 2g + x of"));
            self.w.line("// the tile, in A and in D alike (exact: D's rows depend on A's rows one by one), so a lane's A");
            self.w.line("// registers are adjacent rows of one column.");
        } else if !pair_note.is_empty() {
            self.w.line(format!("{pair_note}: rows as {} lays them", f.instr.name()));
        }
        let split_note = self.step_comment(|s| matches!(s, Step::SplitCols(_)));
        if tp.col_split == 1 && !split_note.is_empty() {
            self.w.line(format!("{split_note}: one wave per row tile"));
        }
        if tp.col_split > 1 {
            let note = split_note;
            self.w.line(format!("constexpr int SPLIT = {};  {note}: waves sharing one row tile", tp.col_split));
            self.w.line("constexpr int WARP_FRAGS = N_FRAGS / SPLIT;  // column fragments (and B fragments) per wave");
            self.w.line("constexpr int TILE_WAVES = WAVES / SPLIT;  // row tiles in flight per block");
        }
        if tp.b.memory == Memory::Shared {
            let cache = self.step_comment(|s| matches!(s, Step::CacheRead { operand: Operand::B, .. }));
            self.w.line(format!("constexpr int B_STRIDE = NP + {};  {cache}: row stride of the padded B in shared memory", tp.b.pad));
        } else {
            self.w.line("constexpr int B_STRIDE = K;");
        }
        if tp.stages_whole_tensor() {
            let cache = self.step_comment(|s| matches!(s, Step::CacheRead { operand: Operand::A, .. }));
            if tp.runs_padded(k) {
                let align = self.step_comment(|s| matches!(s, Step::AlignRuns(_)));
                self.w.line(format!("constexpr int KR = K + 1;  {align}: the K-long output runs of the shared intermediates lie KR apart"));
                self.w.line("// (even: every column pair j, j + 1 with j even is 16-byte aligned; slot K of a run is padding).");
                let width = if tp.stack > 1 { "STACK * K * KR" } else { "K * KR" };
                self.w.line(format!("constexpr int W_STRIDE = {width} + {};  {cache}: row stride of the shared intermediates", tp.shared_row_pad()));
            } else {
                let width = if tp.stack > 1 { "STACK * K2" } else { "K2" };
                self.w.line(format!("constexpr int W_STRIDE = {width} + {};  {cache}: row stride of the shared intermediates", tp.shared_row_pad()));
                if tp.split_staged_stride(k) {
                    let bulk = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
                    self.w.line(format!("constexpr int WS_STRIDE = W_STRIDE + 1;  {bulk}: the staged tensor's rows, odd (its shifted copies), read by pass 0"));
                    self.w.line("constexpr int BUF = K * WS_STRIDE + 1;  // a buffer's pitch, even, with room for a tensor shifted by one element");
                } else if tp.shifted_rows(k) {
                    let bulk = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
                    self.w.line(format!("constexpr int BUF = K * W_STRIDE + 1;  {bulk}: a buffer's pitch, even, with room for a tensor shifted by one element"));
                }
                let align = self.step_comment(|s| matches!(s, Step::AlignRuns(_)));
                if !align.is_empty() {
                    self.w.line(if k.is_multiple_of(2) {
                        format!("{align}: K is even, so the output runs lie K apart and their column pairs are 16-byte aligned as they are")
                    } else {
                        format!("{align}: off: the output runs lie K apart, so at odd K the stores are element by element")
                    });
                }
            }
            if tp.shared_buffers == 1 {
                let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
                self.w.line(format!("constexpr int TILES_PER_WAVE = (ROW_TILES + WAVES - 1) / WAVES;  {buffers}: tiles a wave holds"));
            }
        }
        if tp.a.memory == Memory::Shared && !tp.stages_whole_tensor() {
            let cache = self.step_comment(|s| matches!(s, Step::CacheRead { operand: Operand::A, .. }));
            self.w.line("constexpr int CHUNK = WAVES * FM;  // rows staged per chunk: one tile per wave");
            self.w.line(format!("constexpr int A_STRIDE = CHUNK + {};  {cache}: row stride of a staged chunk", tp.a.pad));
        }
        self.w.line("");
        self.w.lines(&self.d.mma_prelude(f, self.plan.request.dtype));
        let note = self.step_comment(|s| matches!(s, Step::FuseK(_)));
        if tp.fuse_k == 1 && !note.is_empty() {
            self.w.line(format!("{note}: one {} per k-step", f.instr.name()));
        }
        for depth in fused_depths(tp, f, k) {
            let (deep, map) = deep_instruction(tp, f, depth);
            self.w.line("");
            self.w.lines(&self.d.mma_steps_prelude(f, &deep, &map, &note).0);
        }
    }

    /// Kernel-entry code that makes B available to the passes (after the shared declarations).
    pub(super) fn tile_b_setup(&self, tp: &TransformPlan, f: &Fragment) -> String {
        let t = self.t();
        let zero = self.plan.request.dtype.zero();
        let cache = self.step_comment(|s| matches!(s, Step::CacheRead { operand: Operand::B, .. }));
        let k = self.k();
        let mut s = String::new();
        match tp.b.memory {
            Memory::Registers if tp.swap_operands => s += &self.swapped_b_setup(f),
            Memory::Registers => {
                let mut guard = Vec::new();
                if !k.is_multiple_of(f.k) {
                    guard.push("k < K");
                }
                if !k.is_multiple_of(f.n) && !tp.fma_tail {
                    guard.push("j < K");
                }
                let dtype = self.plan.request.dtype;
                let (reg, slot) = if f.b.regs == 1 { ("0", "b_frag[ks][nf]") } else { ("r", "b_frag[ks][nf][r]") };
                let value = self.d.mma_operand_elem(dtype, "b[k * K + j]");
                let value = if guard.is_empty() { value } else { format!("({}) ? {value} : 0", guard.join(" && ")) };
                // `b_frag` is declared by the caller (kernel or transform_block) and passed in.
                s += &format!("{cache}: each lane keeps its B fragments for the whole kernel.\n");
                let (nfr, col0) = if tp.col_split > 1 {
                    let note = self.step_comment(|s| matches!(s, Step::SplitCols(_)));
                    s += &format!("const int nf0 = (tid / LANES % SPLIT) * WARP_FRAGS;  {note}: this wave's column fragments only\n");
                    ("WARP_FRAGS", "(nf0 + nf) * FN")
                } else {
                    ("N_FRAGS", "nf * FN")
                };
                s += "#pragma unroll\nfor (int ks = 0; ks < K_STEPS; ++ks) {\n";
                s += &format!("    #pragma unroll\n    for (int nf = 0; nf < {nfr}; ++nf) {{\n");
                let mut body = String::new();
                body += &format!("const int k = ks * FK + {};\n", f.b.row.cpp("lane", reg, f.lanes));
                body += &format!("const int j = {col0} + {};\n", f.b.col.cpp("lane", reg, f.lanes));
                body += &format!("{slot} = {value};\n");
                if f.b.regs == 1 {
                    s += &indent(&body, 2);
                } else {
                    s += &format!("        #pragma unroll\n        for (int r = 0; r < {}; ++r) {{\n", f.b.regs);
                    s += &indent(&body, 3);
                    s += "        }\n";
                }
                s += "    }\n}\n";
                if tp.fma_tail {
                    let note = self.step_comment(|s| matches!(s, Step::FmaTail(_)));
                    s += &format!("{note}: the lane's tail column NP + lane % TAIL of B (every lane loads one).\n");
                    s += "#pragma unroll\nfor (int k = 0; k < K; ++k) b_tail[k] = b[k * K + NP + lane % TAIL];\n";
                }
            }
            Memory::Shared => {
                s += &format!("{cache}: B, zero-padded to KP x NP, staged once per block.\n");
                s += "for (int e = tid; e < KP * B_STRIDE; e += THREADS) {\n";
                s += "    const int k = e / B_STRIDE, j = e % B_STRIDE;\n";
                s += &format!("    b_shared[e] = (k < K && j < K) ? b[k * K + j] : {zero};\n");
                s += "}\n";
                s += &format!("{}\n", self.d.barrier());
                s += &format!("const {t}* bm = b_shared;\n");
            }
            Memory::Global => s += &format!("const {t}* bm = b;\n"),
        }
        s
    }

    /// Emits the pass function(s) a tensorized level needs and returns the three calls (with
    /// `{in}` and `{out}` placeholders): passes whose input lies in device memory stage it
    /// when the schedule says `cache_read(A, shared)`; a pass reading the shared workspace
    /// reads it directly.
    pub(super) fn tile_gemm_passes(&mut self, tp: &TransformPlan, f: &Fragment) -> [String; 3] {
        let b = super::load_b::b_args(tp);
        let variants = self.tile_variants(tp);
        let mut emitted: Vec<Variant> = Vec::new();
        for v in &variants {
            if !emitted.contains(v) && tp.swap_operands {
                self.swapped_pass_function(tp, f, *v);
                emitted.push(*v);
            } else if !emitted.contains(v) {
                self.tile_pass_function(tp, f, *v);
                emitted.push(*v);
            }
        }
        [0, 1, 2].map(|p| {
            let v = variants[p];
            match v.src {
                ASource::Direct if v.in_place => format!("{}({{in}}, {b}, lane, wave);", v.name()),
                ASource::Direct if stacked_to_global(tp, v) => format!("{}({{in}}, {b}, {{out}}, {{rows}}, lane, wave);", v.name()),
                ASource::Direct => format!("{}({{in}}, {b}, {{out}}, lane, wave);", v.name()),
                ASource::Staged if tp.wmma_stages_c(self.k()) => format!("{}({{in}}, {b}, {{out}}, tid, lane, wave, a_stage, c_stage);", v.name()),
                ASource::Staged => format!("{}({{in}}, {b}, {{out}}, tid, lane, wave, a_stage);", v.name()),
            }
        })
    }

    /// The three passes' functions: where each reads A and whether its input and output are
    /// shared intermediates (padded rows, padded runs) or written in place.
    pub(super) fn tile_variants(&self, tp: &TransformPlan) -> [Variant; 3] {
        // Whole-tensor staging happens in the kernel, before pass 0; chunk staging in the pass.
        let staged = |pass: usize| tp.a.memory == Memory::Shared && !tp.stages_whole_tensor() && (pass == 0 || tp.workspace != Memory::Shared);
        // The padded layout applies to the shared intermediates of whole-tensor staging: every
        // pass reads one, passes 0 and 1 write one, pass 2 writes C.
        let padded = tp.stages_whole_tensor();
        // align_runs(1) at odd K: the intermediates (outputs of passes 0, 1) hold padded runs.
        let runs = tp.runs_padded(self.k());
        [0, 1, 2].map(|p| Variant {
            src: if staged(p) { ASource::Staged } else { ASource::Direct },
            in_shared: padded,
            out_shared: padded && p < 2,
            c_staged: tp.coalesce_c && p == 2,
            in_place: tp.shared_buffers == 1 && p < 2,
            slice: None,
            in_runs: runs && p > 0,
            out_runs: runs && p < 2,
            in_staged_stride: tp.split_staged_stride(self.k()) && p == 0,
        })
    }

    pub(super) fn tile_pass_function(&mut self, tp: &TransformPlan, f: &Fragment, v: Variant) {
        let src = v.src;
        let t = self.t();
        let k = self.k();
        let b_param = self.pass_b_param(tp, f);
        let bind = self.step_comment(|s| matches!(s, Step::Bind(_)));
        let barrier = self.d.barrier();
        let zero = self.plan.request.dtype.zero();
        self.w.line("");
        match src {
            ASource::Direct if v.in_place => {
                let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
                self.w.line("// One GEMM pass that writes its output over its input (one shared buffer): each wave");
                self.w.line("// computes all its tiles into registers, the block waits until every wave has read the");
                self.w.line("// input, then the waves store.");
                let head = format!("{} void {}({t}* buf, {b_param}, int lane, int wave)", self.d.inline_device(), v.name());
                let compute = self.tile_body(tp, f, v, TileMode::Compute);
                let store = self.tile_body(tp, f, v, TileMode::Store);
                let held = self.d.mma_acc_decl(f, "acc_all", "TILES_PER_WAVE][N_FRAGS");
                let held = if tp.fma_tail { format!("{held}\n{t} tail_all[TILES_PER_WAVE][TAIL_ROWS];  // fma_tail(1): the tail columns' values") } else { held };
                self.w.block(head, "", |w| {
                    w.line(format!("{buffers}: this wave's output tiles wait in registers."));
                    w.line(format!("const {t}* in = buf;"));
                    w.line(format!("{t}* out = buf;"));
                    w.line(&held);
                    w.line(format!("{bind}: wave w owns row tiles w, w + WAVES, ... (FM rows x all columns each)"));
                    w.line("#pragma unroll");
                    w.block("for (int t = 0; t < TILES_PER_WAVE; ++t)", "", |w| {
                        w.line("const int tile = wave + t * WAVES;");
                        w.block("if (tile < ROW_TILES)", "", |w| compute(w));
                    });
                    w.line(format!("{barrier}  // every wave has read the input: the outputs may overwrite it"));
                    w.line("#pragma unroll");
                    w.block("for (int t = 0; t < TILES_PER_WAVE; ++t)", "", |w| {
                        w.line("const int tile = wave + t * WAVES;");
                        w.block("if (tile < ROW_TILES)", "", |w| store(w));
                    });
                });
            }
            ASource::Direct => {
                self.w.line(match (v.in_shared, v.out_shared) {
                    (false, _) => "// One GEMM pass: out(i,j) = sum_k in(k,i) * B(k,j), on matrix fragments.",
                    (true, true) if v.out_runs && !v.in_runs => "// The first GEMM pass: the tensor as copied in (padded rows) to a shared intermediate (padded rows and runs).",
                    (true, true) if v.in_runs => "// One GEMM pass on matrix fragments, shared intermediate to shared intermediate (padded rows and runs).",
                    (true, true) => "// One GEMM pass on matrix fragments, shared intermediate to shared intermediate (padded rows).",
                    (true, false) if v.c_staged && v.in_runs => "// The last GEMM pass: shared intermediate (padded rows and runs) to C's layout in shared memory.",
                    (true, false) if v.c_staged => "// The last GEMM pass: shared intermediate (padded rows) to C's layout in shared memory.",
                    (true, false) if v.in_runs => "// The last GEMM pass: shared intermediate (padded rows and runs) to C in device memory.",
                    (true, false) => "// The last GEMM pass: shared intermediate (padded rows) to C in device memory.",
                });
                // stack(N) into C: `rows` of the group's N·K² are stored (a partial last group).
                let rows = if stacked_to_global(tp, v) { ", int rows" } else { "" };
                let head = self.out_head(format!("{} void {}(const {t}* in, {b_param}, {t}* out{rows}, int lane, int wave)", self.d.inline_device(), v.name()));
                let body = self.tile_body(tp, f, v, TileMode::Whole);
                let (first, step) = tile_walk(tp);
                self.w.block(head, "", |w| {
                    w.line(format!("{bind}: wave w owns row tiles w, w + WAVES, ... (FM rows x all columns each)"));
                    if tp.jam > 1 {
                        w.line("const int end = ROW_TILES;");
                    }
                    w.block(format!("for (int tile = {first}; tile < ROW_TILES; tile += {step})"), "", |w| body(w));
                });
            }
            ASource::Staged => {
                let cache = self.step_comment(|s| matches!(s, Step::CacheRead { operand: Operand::A, .. }));
                let rows_guard = !(k * k).is_multiple_of((self.plan.threads / f.lanes) * f.m);
                let k_pad = !k.is_multiple_of(f.k);
                let tiles_guard = !(k * k).div_ceil(f.m).is_multiple_of(self.plan.threads / f.lanes);
                self.w.line("// One GEMM pass on matrix fragments, its input staged through shared memory.");
                let c_param = if tp.wmma_stages_c(k) { format!(", {t}* c_stage") } else { String::new() };
                let head = self.out_head(format!(
                    "{} void gemm_pass_staged(const {t}* in, {b_param}, {t}* out, int tid, int lane, int wave, {t}* a_stage{c_param})",
                    self.d.inline_device()
                ));
                let body = self.tile_body(tp, f, v, TileMode::Whole);
                self.w.block(head, "", |w| {
                    w.line(format!("{cache}: the block stages the input rows of one tile per wave"));
                    w.line("// (coalesced, every thread loading), then each wave computes its tile from shared memory.");
                    w.block("for (int c0 = 0; c0 < ROW_TILES; c0 += WAVES)", "", |w| {
                        w.line("const int r0 = c0 * FM;");
                        w.line("// KP rows: the contraction's padding rows (k >= K) are staged as zeros.");
                        w.block("for (int e = tid; e < KP * CHUNK; e += THREADS)", "", |w| {
                            w.line("const int kk = e / CHUNK, ii = e % CHUNK;");
                            let mut guard = Vec::new();
                            if k_pad {
                                guard.push("kk < K");
                            }
                            if rows_guard {
                                guard.push("r0 + ii < K2");
                            }
                            if guard.is_empty() {
                                w.line("a_stage[kk * A_STRIDE + ii] = in[kk * K2 + r0 + ii];");
                            } else {
                                w.line(format!("a_stage[kk * A_STRIDE + ii] = ({}) ? in[kk * K2 + r0 + ii] : {zero};  // zero padding", guard.join(" && ")));
                            }
                        });
                        w.line(format!("{barrier}  // the chunk is staged"));
                        w.line(format!("{bind}: wave w computes tile c0 + w of this chunk."));
                        w.line("const int tile = c0 + wave;");
                        if tiles_guard {
                            w.block("if (tile < ROW_TILES)", "", |w| body(w));
                        } else {
                            body(w);
                        }
                        w.line(format!("{barrier}  // a_stage is free for the next chunk"));
                    });
                });
            }
        }
    }

    /// The B parameter of a pass function: the lane's B fragments (its columns' only with
    /// `split_cols`), or a pointer to B.
    pub(super) fn pass_b_param(&self, tp: &TransformPlan, f: &Fragment) -> String {
        match tp.b.memory {
            Memory::Registers if tp.swap_operands => format!("const {} (&b_frag)[K_STEPS][M_FRAGS]", self.swapped_b_type(f)),
            Memory::Registers => {
                let frags = if tp.col_split > 1 { "WARP_FRAGS" } else { "N_FRAGS" };
                let tail = if tp.fma_tail { format!(", const {} (&b_tail)[K]", self.t()) } else { String::new() };
                format!("const {} (&b_frag)[K_STEPS][{frags}]{tail}", self.d.mma_operand_type(f, self.plan.request.dtype, f.b.regs))
            }
            _ => format!("const {}* bm", self.t()),
        }
    }
}

/// The depths above 1 of the instructions `fuse_k(N)` issues in a tile's k loop at order `k`.
fn fused_depths(tp: &TransformPlan, f: &Fragment, k: u32) -> Vec<u32> {
    let mut depths: Vec<u32> = tp.k_step_groups(TransformPlan::padded(k, f.k) / f.k).iter().map(|g| g.depth).filter(|&d| d > 1).collect();
    depths.sort_unstable_by(|a, b| b.cmp(a));
    depths.dedup();
    depths
}

/// The instruction `depth` k-steps of `f` deep, laid out as the plan indexes (row pairs or
/// not), and how it takes the steps' registers. The plan checked that it exists.
pub(super) fn deep_instruction(tp: &TransformPlan, f: &Fragment, depth: u32) -> (Fragment, crate::fragment::StepOperands) {
    let deep = crate::fragment::deeper(f.instr, depth).map(crate::fragment::fragment).expect("planned: the arch has the deeper instruction");
    let deep = if tp.row_pairs { deep.with_row_pairs().expect("planned: row pairs of the deeper instruction") } else { deep };
    let map = f.step_operands(&deep).expect("planned: the deeper instruction takes the steps side by side");
    (deep, map)
}

/// `text` with every line indented by `levels` × 4 spaces.
pub(super) fn indent(text: &str, levels: usize) -> String {
    text.lines().map(|l| format!("{}{l}\n", "    ".repeat(levels))).collect()
}

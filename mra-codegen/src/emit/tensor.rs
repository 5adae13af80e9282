//! Lowering of tensorized levels (`bind(warps, tiles)` + `tensorize(mma)`): each warp or
//! wavefront owns tiles of FM output rows × all K columns and computes them with the arch's
//! matrix instruction. The lane → element index expressions come from the fragment tables in
//! [`crate::fragment`], the same tables the CPU model in the tests executes
//! ([`crate::simulate`]).
//!
//! K not a multiple of the fragment shape is handled by padding: the contraction and the
//! columns run to KP/NP (multiples of FK/FN) with zeros, and stores are masked.

use super::tile_pass::{stacked_to_global, tile_walk, waits_late, ASource, SlicePass, TileMode, Variant};
use super::writer::Writer;
use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::{Loop, Memory, Operand, Step};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    fn k(&self) -> u32 {
        self.plan.request.k
    }

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
        let b = super::b_args(tp);
        // Whole-tensor staging happens in the kernel, before pass 0; chunk staging in the pass.
        let staged = |pass: usize| tp.a.memory == Memory::Shared && !tp.stages_whole_tensor() && (pass == 0 || tp.workspace != Memory::Shared);
        // The padded layout applies to the shared intermediates of whole-tensor staging: every
        // pass reads one, passes 0 and 1 write one, pass 2 writes C.
        let padded = tp.stages_whole_tensor();
        // align_runs(1) at odd K: the intermediates (outputs of passes 0, 1) hold padded runs.
        let runs = tp.runs_padded(self.k());
        let variants: Vec<Variant> = (0..3)
            .map(|p| Variant {
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
            .collect();
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

    fn tile_pass_function(&mut self, tp: &TransformPlan, f: &Fragment, v: Variant) {
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
                let head = format!("{} void {}(const {t}* in, {b_param}, {t}* out{rows}, int lane, int wave)", self.d.inline_device(), v.name());
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
                let head = format!(
                    "{} void gemm_pass_staged(const {t}* in, {b_param}, {t}* out, int tid, int lane, int wave, {t}* a_stage{c_param})",
                    self.d.inline_device()
                );
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

    /// The body computing one tile `tile` (rows i0 .. i0 + FM): A and B fragments, the
    /// instructions, the masked stores. A one-register operand (f64 fragments) is a scalar
    /// load; a multi-register one (RDNA WMMA) is a vector filled register by register.
    pub(super) fn tile_body(&self, tp: &TransformPlan, f: &Fragment, v: Variant, mode: TileMode) -> Box<dyn Fn(&mut Writer)> {
        let src = v.src;
        let dtype = self.plan.request.dtype;
        let zero = dtype.zero();
        let k = self.k();
        // split_cols(N): this wave's WARP_FRAGS column fragments, from nf0 on.
        let split = tp.col_split > 1;
        let nfr = if split { "WARP_FRAGS" } else { "N_FRAGS" };
        let col0 = if split { "(nf0 + nf) * FN" } else { "nf * FN" };
        let unroll = if tp.unroll_k { format!("{}  {}", super::pragma_unroll(tp.unroll_k_by), self.step_comment(|s| matches!(s, Step::Unroll(Loop::K, _)))) } else { String::new() };
        if tp.wmma {
            return Box::new(wmma_body(k, tp.wmma_stages_c(k), unroll, zero));
        }
        // The output rows of the pass: K² (the slice passes of cluster(N): K·CL; stack(N): N·K²).
        let (rows, rows_name) = match v.slice {
            Some(_) => (k * tp.cluster_slice_width(k), "SLICE_ROWS"),
            _ if tp.stack > 1 => (tp.pass_rows(k), "ROWS"),
            _ => (k * k, "K2"),
        };
        // stack(N) into C: the group's last tensors may not exist (a partial group): the
        // caller says how many rows are stored.
        let stacked_out = stacked_to_global(tp, v);
        // stack(N) into a shared intermediate: where each D row starts in the next pass's input
        // (the divisions once per row, not per store: an H100 ran the per-store form 17% slower,
        // NOTES.md run 83).
        let stacked_rows = (tp.stack > 1 && v.slice.is_none() && v.out_shared).then(|| {
            let run = if v.out_runs { "KR" } else { "K" };
            let tensor = if v.out_runs { "(K * KR)" } else { "K2" };
            format!("((i % K2) / K) * W_STRIDE + (i / K2) * {tensor} + (i % K) * {run}")
        });
        let rows_pad = rows % f.m != 0;
        let acc_decl = self.d.mma_acc_decl(f, "acc", nfr);
        let mma = self.d.mma_call(f, dtype, "acc[nf]", "a", "b");
        // unroll(rows, by = J): J tiles at once, each with its own accumulators and A fragments.
        let jam = if mode == TileMode::Whole { tp.jam } else { 1 };
        let jam_mma = self.d.mma_call(f, dtype, "acc_all[u][nf]", "a_all[u]", "b");
        let jam_note = self.step_comment(|s| matches!(s, Step::Unroll(Loop::Rows, _)));
        let (a_ty, b_ty) = (self.d.mma_operand_type(f, dtype, f.a.regs), self.d.mma_operand_type(f, dtype, f.b.regs));
        let reg = |n: u32| if n == 1 { "0" } else { "r" };
        let a_i = f.a.row.cpp("lane", reg(f.a.regs), f.lanes);
        let a_k = f.a.col.cpp("lane", reg(f.a.regs), f.lanes);
        let (b_k, b_j) = (f.b.row.cpp("lane", reg(f.b.regs), f.lanes), f.b.col.cpp("lane", reg(f.b.regs), f.lanes));
        let (c_i, c_j) = (f.c.row.cpp("lane", "r", f.lanes), f.c.col.cpp("lane", "r", f.lanes));
        let mut a_guard = Vec::new();
        // Staged chunks hold zero rows for k >= K; a direct read guards them.
        if !k.is_multiple_of(f.k) && src == ASource::Direct {
            a_guard.push("a_k < K");
        }
        // Staged chunks are zero-padded already; a direct read guards the last tile's rows.
        let (a_rows_guard, c_rows_guard) = match rows_name {
            "K2" => ("a_i < K2", "i < K2"),
            "ROWS" => ("a_i < ROWS", "i < ROWS"),
            _ => ("a_i < SLICE_ROWS", "i < SLICE_ROWS"),
        };
        if rows_pad && src == ASource::Direct {
            a_guard.push(a_rows_guard);
        }
        let mut c_guard = Vec::new();
        if stacked_out {
            c_guard.push("i < rows");
        } else if rows_pad {
            c_guard.push(c_rows_guard);
        }
        if !k.is_multiple_of(f.n) && !tp.fma_tail {
            c_guard.push("j < K");
        }
        // The last block's slice may run past K - 1: those rows (b or x) have no place to go.
        if tp.cluster * tp.cluster_slice_width(k) > k {
            match v.slice {
                Some(SlicePass::First) => c_guard.push("b0 + i / K < K"),
                Some(SlicePass::Third) => c_guard.push("x0 + i / K < K"),
                _ => {}
            }
        }
        let a_src = match src {
            // Row c = a_k of the gathered input lies in block (ks * FK) / CL (a k-step never
            // straddles two blocks: CL is a whole number of k-steps), row a_k % CL there.
            // bulk_copy(1) at odd K: pass 0's input rows lie at the odd stride WS_STRIDE.
            _ if v.slice == Some(SlicePass::First) && tp.cluster_shifted(k) => "in[a_k * WS_STRIDE + a_i]",
            _ if v.slice.is_some() => "in[a_k * SLICE_STRIDE + a_i]",
            // Padded runs: element a_i of row a_k is run a_i / K, slot a_i % K. The column is
            // computed once per tile (a_col, before the k loop), except for jammed tiles.
            ASource::Direct if v.in_runs && jam > 1 => "in[a_k * W_STRIDE + (a_i / K) * KR + a_i % K]",
            ASource::Direct if v.in_runs && f.a.regs == 1 => "in[a_k * W_STRIDE + a_col[0]]",
            ASource::Direct if v.in_runs => "in[a_k * W_STRIDE + a_col[r]]",
            ASource::Direct if v.in_staged_stride => "in[a_k * WS_STRIDE + a_i]",
            ASource::Direct if v.in_shared => "in[a_k * W_STRIDE + a_i]",
            ASource::Direct => "in[a_k * K2 + a_i]",
            ASource::Staged => "a_stage[a_k * A_STRIDE + wave * FM + (a_i - i0)]",
        };
        let a_value = self.d.mma_operand_elem(dtype, a_src);
        let a_value = if a_guard.is_empty() { a_value } else { format!("({}) ? {a_value} : 0", a_guard.join(" && ")) };
        let b_src = format!("bm[(ks * FK + {b_k}) * B_STRIDE + nf * FN + {b_j}]");
        let b_value = self.d.mma_operand_elem(dtype, &b_src);
        let store = self.d.mma_store_value(dtype, "acc[nf][r]");
        // Output element (i, j) is element i·K + j of the K x K² view of the next pass's input:
        // row (i / K), column (i % K)·K + j; padded rows when the output is shared.
        let out_at = match v.slice {
            // Row (b, c) of the first pass's output is element (c, x) of row b of the next input.
            // Row (b, c) = (b0 + i / K, i % K), column x = j: block j / CL, row b, column
            // (c, j % CL) of its gather buffer (a pair j, j + 1 stays in one block: CL even).
            Some(SlicePass::First) => "(*mra_cluster_map_rw(&out[(b0 + i / K) * SLICE_STRIDE + (i % K) * CL + j % CL], j / CL))",
            // Row (c, x) = (i / CL, i % CL), column y = j: row c, column (x, y) of T2.
            Some(SlicePass::Second) => "out[(i / CL) * SLICE_STRIDE + (i % CL) * K + j]",
            // (stack(N)'s shared outputs are placed by the store block of `store_tile`.)
            _ if v.out_runs => "out[(i / K) * W_STRIDE + (i % K) * KR + j]",
            _ if v.out_shared => "out[(i / K) * W_STRIDE + (i % K) * K + j]",
            _ => "out[i * K + j]",
        };
        // async_exchange(1): pass 0 sends each element (pair) to the same offset of block j / CL's
        // gather buffer with st.async, completing on that block's gather mbarrier `bar`.
        let send_at = (v.slice == Some(SlicePass::First) && tp.async_exchange).then_some("&out[(b0 + i / K) * SLICE_STRIDE + (i % K) * CL + j % CL], j / CL");
        let b_in_registers = tp.b.memory == Memory::Registers;
        let (a_regs, b_regs, c_regs) = (f.a.regs, f.b.regs, f.c.regs);
        // NVIDIA f64 D fragments hold column pairs (j, j + 1) in registers 2q, 2q + 1 of one
        // row: stored as one 16-byte access (half the store instructions; the 8-byte stores of a
        // shared intermediate were 8-way bank conflicts at K = 16, ncu run 7). Needs even K so
        // that j < K implies j + 1 < K and every pair is 16-byte aligned; or, into a shared
        // intermediate of padded runs (align_runs(1), odd K), the even run stride KR = K + 1:
        // a pair starting at j < K ends at j + 1 <= K, slot K being the run's padding.
        // Into a shared intermediate the row stride K·KR + pad must be even too, or odd rows'
        // pairs are 8-byte aligned only (a tuned odd pad hit CUDA_ERROR_MISALIGNED_ADDRESS).
        // cluster(N)'s pass 0 with plain stores at odd K: the gather buffers' offsets
        // (b, c)·SLICE_STRIDE-rows + c·CL + x % CL are even for even x when CL and the stride are
        // even, whatever K; a pair (K - 1, K) stays in one block (K odd, CL even: CL does not
        // divide K) and its second value lands in the padding column x = K, which pass 1 reads
        // only into rows that are never stored. (st.async counts the bytes it sends: not there.)
        let odd_pairs = k % 2 == 1 && v.slice == Some(SlicePass::First) && !tp.async_exchange;
        let paired = dtype == crate::DType::F64
            && self.d.vendor() == crate::Vendor::Nvidia
            && (k.is_multiple_of(2) || v.out_runs || odd_pairs)
            && (!v.out_shared || tp.shared_row_pad().is_multiple_of(2))
            && (v.slice != Some(SlicePass::First) || tp.cluster_slice_width(k).is_multiple_of(2))
            && f.c.regs.is_multiple_of(2)
            && (0..f.lanes).all(|l| (0..f.c.regs / 2).all(|q| f.c.row.at(l, 2 * q) == f.c.row.at(l, 2 * q + 1) && f.c.col.at(l, 2 * q) + 1 == f.c.col.at(l, 2 * q + 1)));
        let pair_guard = c_guard.clone();
        let into_runs = v.out_runs && k % 2 == 1;
        let (pi, pj) = (f.c.row.cpp("lane", "(2 * q)", f.lanes), f.c.col.cpp("lane", "(2 * q)", f.lanes));
        let late_wait = v.slice == Some(SlicePass::First) && waits_late(tp);
        let f_n = f.n;
        let stack_note = self.step_comment(|s| matches!(s, Step::Stack(_)));
        let store_tile = move |w: &mut Writer| {
            if let Some(row_at) = &stacked_rows {
                // stack(N) into a shared intermediate: rows outside, each row's start computed
                // under its own guard, columns inside (the form whose stores an H100 ran as
                // fast as the prototype's, NOTES.md run 83).
                let (count, unit, row, col) = if paired { (c_regs / 2, "q", &pi, &pj) } else { (c_regs, "r", &c_i, &c_j) };
                let what = if paired { "registers 2q, 2q + 1: one row, adjacent columns, one 16-byte store" } else { "register r" };
                w.line(format!("// D fragment, {what}; {stack_note}: row i = t * K2 + x * K + y of tensor t goes to row x, column t * K2 + y * K."));
                w.line("#pragma unroll");
                w.block(format!("for (int {unit} = 0; {unit} < {count}; ++{unit})"), "", |w| {
                    w.line(format!("const int i = i0 + {row};"));
                    let body = |w: &mut Writer| {
                        w.line(format!("const int at = {row_at};"));
                        w.line("#pragma unroll");
                        w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                            w.line(format!("const int j = {col0} + {col};"));
                            let st = if paired {
                                "*reinterpret_cast<double2*>(&out[at + j]) = make_double2(acc[nf][2 * q], acc[nf][2 * q + 1]);".to_string()
                            } else {
                                format!("out[at + j] = {store};")
                            };
                            if !k.is_multiple_of(f_n) {
                                w.line(format!("if (j < K) {st}  // padding is not stored"));
                            } else {
                                w.line(st);
                            }
                        });
                    };
                    if rows_pad {
                        w.block("if (i < ROWS)", "", body);
                    } else {
                        body(w);
                    }
                });
                return;
            }
            if late_wait {
                w.line("if (!waited) {  // this wave's first store into another block: the cluster may go on");
                w.line("    mra_cluster_wait();");
                w.line("    waited = true;");
                w.line("}");
            }
            if paired {
                w.line(format!("// D fragment: registers 2q, 2q + 1 of this lane are D(i0 + {c_i}, {col0} + {c_j}) for r = 2q, 2q + 1:"));
                w.line("// adjacent columns of one row, stored as one 16-byte access.");
                w.line("#pragma unroll");
                w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                    w.line("#pragma unroll");
                    w.block(format!("for (int q = 0; q < {}; ++q)", c_regs / 2), "", |w| {
                        w.line(format!("const int i = i0 + {pi};"));
                        w.line(format!("const int j = {col0} + {pj};"));
                        let st = match send_at {
                            Some(at) => format!("mra_send_pair({at}, acc[nf][2 * q], acc[nf][2 * q + 1], bar);"),
                            None => format!("*reinterpret_cast<double2*>(&{out_at}) = make_double2(acc[nf][2 * q], acc[nf][2 * q + 1]);"),
                        };
                        if pair_guard.is_empty() {
                            w.line(st);
                        } else {
                            let why = if into_runs { "pairs start at j < K; the pair (K - 1, K) fills the run's padding slot" } else { "padding is not stored" };
                            w.line(format!("if ({}) {st}  // {why}", pair_guard.join(" && ")));
                        }
                    });
                });
                return;
            }
            w.line(format!("// D fragment: register r of this lane is D(i0 + {c_i}, {col0} + {c_j})."));
            w.line("#pragma unroll");
            w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                w.line("#pragma unroll");
                w.block(format!("for (int r = 0; r < {c_regs}; ++r)"), "", |w| {
                    w.line(format!("const int i = i0 + {c_i};"));
                    w.line(format!("const int j = {col0} + {c_j};"));
                    let st = match send_at {
                        Some(at) => format!("mra_send({at}, {store}, bar);"),
                        None => format!("{out_at} = {store};"),
                    };
                    if c_guard.is_empty() {
                        w.line(st);
                    } else {
                        w.line(format!("if ({}) {st}  // padding is not stored", c_guard.join(" && ")));
                    }
                });
            });
        };
        let b_steps_ty = b_ty.clone();
        let b_fragment = move |w: &mut Writer| {
            if b_in_registers {
                w.line(format!("const {b_ty}& b = b_frag[ks][nf];  // B fragment, kept in registers"));
            } else if b_regs == 1 {
                w.line(format!("const {b_ty} b = {b_value};  // B fragment: B(ks * FK + {b_k}, nf * FN + {b_j})"));
            } else {
                w.line(format!("{b_ty} b;  // B fragment: register r is B(ks * FK + {b_k}, nf * FN + {b_j})"));
                w.line("#pragma unroll");
                w.line(format!("for (int r = 0; r < {b_regs}; ++r) b[r] = {b_value};"));
            }
        };
        let b_fragment = std::rc::Rc::new(b_fragment);
        // align_runs(1): the input column of each A register depends on the tile and the lane,
        // not on the k-step: computed once per tile, so the k loop does not divide by K.
        let a_cols = (v.in_runs && jam == 1).then(|| {
            let note = self.step_comment(|s| matches!(s, Step::AlignRuns(_)));
            let mut s = format!("int a_col[{a_regs}];  {note}: input element a_i lies in run a_i / K, slot a_i % K (once per tile)\n", a_regs = f.a.regs);
            if f.a.regs == 1 {
                s += &format!("{{\n    const int a_i = i0 + {a_i};\n    a_col[0] = (a_i / K) * KR + a_i % K;\n}}\n");
            } else {
                s += "#pragma unroll\n";
                s += &format!("for (int r = 0; r < {}; ++r) {{\n    const int a_i = i0 + {a_i};\n    a_col[r] = (a_i / K) * KR + a_i % K;\n}}\n", f.a.regs);
            }
            s
        });
        // pair_rows(1) (NVIDIA f64 m16n8k*): a lane's A registers 2q, 2q + 1 are rows 2g, 2g + 1
        // of one column, adjacent in a shared row of the pass's input: one 16-byte load where
        // that row's stride is even (and so every pair 16-byte aligned) and the rows are an even
        // count (a pair is all valid or all padding). Padded runs (align_runs(1)) may split a pair.
        let in_stride = match v.slice {
            Some(SlicePass::First) if tp.cluster_shifted(k) => k * tp.cluster_slice_width(k) + tp.shared_row_pad() + 1,
            Some(_) => k * tp.cluster_slice_width(k) + tp.shared_row_pad(),
            None if v.in_staged_stride => tp.staged_row_elems(k),
            None => tp.shared_row_elems(k),
        };
        let a_pairs = tp.row_pairs
            && dtype == crate::DType::F64
            && self.d.vendor() == crate::Vendor::Nvidia
            && src == ASource::Direct
            && v.in_shared
            && !v.in_runs
            && in_stride % 2 == 0
            && rows % 2 == 0
            && f.a.regs.is_multiple_of(2)
            && (0..f.lanes).all(|l| {
                (0..f.a.regs / 2).all(|q| {
                    let (r0, r1) = (2 * q, 2 * q + 1);
                    f.a.row.at(l, r0).is_multiple_of(2) && f.a.row.at(l, r1) == f.a.row.at(l, r0) + 1 && f.a.col.at(l, r1) == f.a.col.at(l, r0)
                })
            });
        let pair_note = self.step_comment(|s| matches!(s, Step::PairRows(_)));
        let (pair_i, pair_k) = (f.a.row.cpp("lane", "(2 * q)", f.lanes), f.a.col.cpp("lane", "(2 * q)", f.lanes));
        let pair_load = format!("*reinterpret_cast<const double2*>(&{a_src})");
        let pair_load = if a_guard.is_empty() { pair_load } else { format!("({}) ? {pair_load} : make_double2(0, 0)", a_guard.join(" && ")) };
        // The A fragment's registers: `one` receives a one-register fragment, `each` register r.
        let (frag_i, frag_k) = (a_i.clone(), a_k.clone());
        let a_fragment = std::rc::Rc::new(move |w: &mut Writer, one: &str, each: &str| {
            let (a_i, a_k) = (&frag_i, &frag_k);
            if a_pairs {
                w.line(format!("{pair_note}: registers 2q, 2q + 1 are rows i0 + {pair_i} and the next, one 16-byte load"));
                w.line("#pragma unroll");
                w.block(format!("for (int q = 0; q < {}; ++q)", a_regs / 2), "", |w| {
                    w.line(format!("const int a_i = i0 + {pair_i};"));
                    w.line(format!("const int a_k = ks * FK + {pair_k};"));
                    w.line(format!("const double2 pair = {pair_load};"));
                    w.line(format!("{} = pair.x;", each.replace("[r]", "[2 * q]")));
                    w.line(format!("{} = pair.y;", each.replace("[r]", "[2 * q + 1]")));
                });
            } else if a_regs == 1 {
                w.line(format!("const int a_i = i0 + {a_i};"));
                w.line(format!("const int a_k = ks * FK + {a_k};"));
                w.line(format!("{one} = {a_value};"));
            } else {
                w.line("#pragma unroll");
                w.block(format!("for (int r = 0; r < {a_regs}; ++r)"), "", |w| {
                    w.line(format!("const int a_i = i0 + {a_i};"));
                    w.line(format!("const int a_k = ks * FK + {a_k};"));
                    w.line(format!("{each} = {a_value};"));
                });
            }
        });
        // fuse_k(N): the k loop as runs of instructions, with the helper each depth calls.
        let fused = (tp.fuse_k > 1).then(|| {
            let groups = tp.k_step_groups(TransformPlan::padded(k, f.k) / f.k);
            groups
                .into_iter()
                .map(|g| {
                    let call = if g.depth == 1 { String::new() } else {
                        let (deep, map) = deep_instruction(tp, f, g.depth);
                        self.d.mma_steps_prelude(f, &deep, &map, "").1
                    };
                    (g, call)
                })
                .collect::<Vec<_>>()
        });
        let unroll_note = if tp.unroll_k { self.step_comment(|s| matches!(s, Step::Unroll(Loop::K, _))) } else { String::new() };
        let fuse_note = {
            let note = self.step_comment(|s| matches!(s, Step::FuseK(_)));
            let runs: Vec<String> = fused.iter().flatten().map(|(g, _)| format!("{} x {} deep from step {}", g.count, g.depth, g.start)).collect();
            format!("{note}: the k-steps as {}", runs.join(", then "))
        };
        let tail_code = tp.fma_tail.then(|| {
            assert!(src == ASource::Direct && v.slice.is_none() && jam == 1, "planned: fma_tail(1) only on direct passes");
            let in_at = match () {
                _ if v.in_runs => "in[a_k * W_STRIDE + (a_i / K) * KR + a_i % K]",
                _ if v.in_staged_stride => "in[a_k * WS_STRIDE + a_i]",
                _ if v.in_shared => "in[a_k * W_STRIDE + a_i]",
                _ => "in[a_k * K2 + a_i]",
            };
            self.fma_tail_code(tp, f, in_at, out_at, rows_pad, in_stride_even_rows(tp, v, k, rows), mode)
        });
        if jam > 1 {
            // The tiles tile, tile + STRIDE, ..., tile + (JAM - 1) * STRIDE of this wave (STRIDE:
            // WAVES, or TILE_WAVES where split_cols(N) gives each tile N waves); one past `end`
            // recomputes the first tile (same addresses, no guards) and is not stored.
            let (b_fragment, a_fragment) = (b_fragment.clone(), a_fragment.clone());
            let stride = if split { "TILE_WAVES" } else { "WAVES" };
            let jam_acc_decl = self.d.mma_acc_decl(f, "acc_all", &format!("JAM][{nfr}"));
            let fused = fused.clone();
            let (unroll, fuse_note, unroll_note) = (unroll.clone(), fuse_note.clone(), unroll_note.clone());
            let a_frag_doc = format!("register {} of this lane is A(i0 + {a_i}, ks * FK + {a_k}) = in(k, i)", reg(a_regs));
            return Box::new(move |w: &mut Writer| {
                w.line(format!("{jam_note}: this wave's tiles tile + u * {stride}, u < JAM, at once."));
                if split {
                    w.line("const int nf0 = (wave % SPLIT) * WARP_FRAGS;  // this wave's column fragments, in every tile");
                }
                w.line("int i0s[JAM];");
                w.line("bool live[JAM];");
                w.line("#pragma unroll");
                w.block("for (int u = 0; u < JAM; ++u)", "", |w| {
                    w.line(format!("live[u] = tile + u * {stride} < end;"));
                    w.line(format!("i0s[u] = (live[u] ? tile + u * {stride} : tile) * FM;"));
                });
                w.line(&jam_acc_decl);
                w.line("#pragma unroll");
                w.line(format!("for (int u = 0; u < JAM; ++u) for (int nf = 0; nf < {nfr}; ++nf) for (int r = 0; r < {c_regs}; ++r) acc_all[u][nf][r] = 0;"));
                // One k-step `ks` of every jammed tile: their A fragments, then per column
                // fragment one instruction per tile.
                let one_step = |w: &mut Writer| {
                    w.line(format!("// A fragments: {a_frag_doc} for each tile."));
                    w.line(format!("{a_ty} a_all[JAM];"));
                    w.line("#pragma unroll");
                    w.block("for (int u = 0; u < JAM; ++u)", "", |w| {
                        w.line("const int i0 = i0s[u];");
                        a_fragment(w, "a_all[u]", "a_all[u][r]");
                    });
                    w.line("#pragma unroll");
                    w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                        b_fragment(w);
                        w.line("#pragma unroll");
                        w.line(format!("for (int u = 0; u < JAM; ++u) {jam_mma}"));
                    });
                };
                // fuse_k(N): the A fragments of every jammed tile's steps first, then per column
                // fragment one deep instruction per tile.
                let deep = |w: &mut Writer, d: u32, call: &str| {
                    w.line(format!("// A fragments of k-steps ks0 .. ks0 + {} for each tile: {a_frag_doc}, ks = ks0 + s.", d - 1));
                    w.line(format!("{a_ty} a_steps_all[JAM][{d}];"));
                    w.line("#pragma unroll");
                    w.block("for (int u = 0; u < JAM; ++u)", "", |w| {
                        w.line("const int i0 = i0s[u];");
                        w.line("#pragma unroll");
                        w.block(format!("for (int s = 0; s < {d}; ++s)"), "", |w| {
                            w.line("const int ks = ks0 + s;");
                            a_fragment(w, "a_steps_all[u][s]", "a_steps_all[u][s][r]");
                        });
                    });
                    deep_b_steps(w, nfr, d, &b_steps_ty, &*b_fragment, &format!("#pragma unroll\nfor (int u = 0; u < JAM; ++u) {call}(acc_all[u][nf], a_steps_all[u], b_steps);"));
                };
                k_loop(w, fused.as_deref(), &unroll, &unroll_note, &fuse_note, &one_step, &deep);
                w.line("#pragma unroll");
                w.block("for (int u = 0; u < JAM; ++u)", "", |w| {
                    w.block("if (live[u])", "", |w| {
                        w.line("const int i0 = i0s[u];");
                        w.line("auto& acc = acc_all[u];");
                        store_tile(w);
                    });
                });
            });
        }
        Box::new(move |w: &mut Writer| {
            w.line("const int i0 = tile * FM;");
            if split {
                w.line("const int nf0 = (wave % SPLIT) * WARP_FRAGS;  // this wave's column fragments");
            }
            if mode != TileMode::Whole {
                w.line("auto& acc = acc_all[t];  // this tile's held accumulators");
            }
            if mode == TileMode::Store {
                store_tile(w);
                if let Some(tail) = &tail_code {
                    w.lines(tail);
                }
                return;
            }
            if let Some(a_cols) = &a_cols {
                w.lines(a_cols);
            }
            if mode == TileMode::Whole {
                w.line(&acc_decl);
            }
            w.line("#pragma unroll");
            w.line(format!("for (int nf = 0; nf < {nfr}; ++nf) for (int r = 0; r < {c_regs}; ++r) acc[nf][r] = 0;"));
            // One k-step `ks`: its A fragment, then one instruction per column fragment.
            let one_step = |w: &mut Writer| {
                w.line(format!("// A fragment: register {} of this lane is A(i0 + {a_i}, ks * FK + {a_k}) = in(k, i).", reg(a_regs)));
                if a_regs > 1 {
                    w.line(format!("{a_ty} a;"));
                }
                a_fragment(w, &format!("const {a_ty} a"), "a[r]");
                w.line("#pragma unroll");
                w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
                    b_fragment(w);
                    w.line(&mma);
                });
            };
            // fuse_k(N): the A fragments of the run's steps, then per column fragment one deep
            // instruction.
            let deep = |w: &mut Writer, d: u32, call: &str| {
                w.line(format!("// A fragments of k-steps ks0 .. ks0 + {}: register {} of step s is A(i0 + {a_i}, ks * FK + {a_k}), ks = ks0 + s.", d - 1, reg(a_regs)));
                w.line(format!("{a_ty} a_steps[{d}];"));
                w.line("#pragma unroll");
                w.block(format!("for (int s = 0; s < {d}; ++s)"), "", |w| {
                    w.line("const int ks = ks0 + s;");
                    a_fragment(w, "a_steps[s]", "a_steps[s][r]");
                });
                deep_b_steps(w, nfr, d, &b_steps_ty, &*b_fragment, &format!("{call}(acc[nf], a_steps, b_steps);"));
            };
            k_loop(w, fused.as_deref(), &unroll, &unroll_note, &fuse_note, &one_step, &deep);
            if let Some(tail) = &tail_code {
                w.lines(tail);
            }
            if mode == TileMode::Whole {
                store_tile(w);
            }
        })
    }

    /// `fma_tail(1)`: the tile's columns NP .. K - 1 by FMA. Lane l takes column NP + l % TAIL
    /// and TAIL_ROWS consecutive tile rows from (l / TAIL) · TAIL_ROWS, each the dot product of
    /// its input row (read at `in_at`, of `a_i` and `a_k`) with the lane's column of B
    /// (`b_tail`); stores go to `out_at` (of `i` and `j`). With `pairs`, two adjacent rows of
    /// one input row are one 16-byte load. `mode` as the tile's: an in-place pass computes into
    /// the held `tail_all[t]` and stores it after the block barrier.
    fn fma_tail_code(&self, tp: &TransformPlan, f: &Fragment, in_at: &str, out_at: &str, rows_pad: bool, pairs: bool, mode: TileMode) -> String {
        let k = self.k();
        let t = self.t();
        let zero = self.plan.request.dtype.zero();
        let note = self.step_comment(|s| matches!(s, Step::FmaTail(_)));
        let tail = tp.tail_cols(k, f.n);
        let lanes_per_col = f.lanes / tail;
        let rows = f.m.div_ceil(lanes_per_col);
        // Guards the shapes need: idle lanes (LANES not a multiple of TAIL), rows past the
        // tile (TAIL_LANES · TAIL_ROWS > FM), rows past the pass's last (K² not whole tiles).
        let idle = !f.lanes.is_multiple_of(tail);
        let over = lanes_per_col * rows > f.m;
        let pairs = pairs && rows.is_multiple_of(2) && self.plan.request.dtype == crate::DType::F64 && self.d.vendor() == crate::Vendor::Nvidia;
        let guard = |row: &str, i: &str| {
            let mut g = Vec::new();
            if over {
                g.push(format!("r0 + {row} < FM"));
            }
            if rows_pad {
                g.push(format!("{i} < K2"));
            }
            g.join(" && ")
        };
        let mut b = String::new();
        b += "const int jt = lane % TAIL;\n";
        b += "const int r0 = (lane / TAIL) * TAIL_ROWS;\n";
        if mode != TileMode::Store {
            if mode == TileMode::Whole {
                b += &format!("{t} tail_acc[TAIL_ROWS];\n");
            } else {
                b += "auto& tail_acc = tail_all[t];  // held until the block barrier\n";
            }
            b += &format!("#pragma unroll\nfor (int s = 0; s < TAIL_ROWS; ++s) tail_acc[s] = {zero};\n");
            b += "#pragma unroll\nfor (int a_k = 0; a_k < K; ++a_k) {\n";
            if pairs {
                let g = guard("2 * q", "a_i");
                let load = format!("*reinterpret_cast<const double2*>(&{in_at})");
                let load = if g.is_empty() { load } else { format!("({g}) ? {load} : make_double2(0, 0)") };
                b += "    // rows r0 + 2q and the next: adjacent in the input row, one 16-byte load\n";
                b += "    #pragma unroll\n    for (int q = 0; q < TAIL_ROWS / 2; ++q) {\n";
                b += "        const int a_i = i0 + r0 + 2 * q;\n";
                b += &format!("        const double2 pair = {load};\n");
                b += "        tail_acc[2 * q] += pair.x * b_tail[a_k];\n";
                b += "        tail_acc[2 * q + 1] += pair.y * b_tail[a_k];\n";
                b += "    }\n";
            } else {
                let g = guard("s", "a_i");
                let load = if g.is_empty() { in_at.to_string() } else { format!("({g}) ? {in_at} : {zero}") };
                b += "    #pragma unroll\n    for (int s = 0; s < TAIL_ROWS; ++s) {\n";
                b += "        const int a_i = i0 + r0 + s;\n";
                b += &format!("        tail_acc[s] += ({load}) * b_tail[a_k];\n");
                b += "    }\n";
            }
            b += "}\n";
        }
        if mode != TileMode::Compute {
            if mode == TileMode::Store {
                b += "const auto& tail_acc = tail_all[t];\n";
            }
            b += "#pragma unroll\nfor (int s = 0; s < TAIL_ROWS; ++s) {\n";
            b += "    const int i = i0 + r0 + s;\n";
            b += "    const int j = NP + jt;\n";
            let g = guard("s", "i");
            let store = self.d.mma_store_value(self.plan.request.dtype, "tail_acc[s]");
            if g.is_empty() {
                b += &format!("    {out_at} = {store};\n");
            } else {
                b += &format!("    if ({g}) {out_at} = {store};  // rows of this tile only\n");
            }
            b += "}\n";
        }
        let mut s = match mode {
            TileMode::Store => format!("{note}: this lane's tail values of the tile\n"),
            _ => format!("{note}: columns NP .. K - 1 by FMA: lane l computes column NP + l % TAIL of tile rows\n// (l / TAIL) * TAIL_ROWS + s, s < TAIL_ROWS, from its column of B in registers.\n"),
        };
        if idle {
            s += "if (lane < TAIL * TAIL_LANES) {  // the lanes of whole columns\n";
        } else {
            s += "{\n";
        }
        s += &indent(&b, 1);
        s += "}\n";
        s
    }
}

/// Whether a pass's input rows allow 16-byte loads of two adjacent elements at even offsets
/// (the FMA tail's row pairs): a shared input of plain runs with an even row stride, at even K.
fn in_stride_even_rows(tp: &TransformPlan, v: Variant, k: u32, rows: u32) -> bool {
    v.in_shared && !v.in_runs && v.slice.is_none() && k.is_multiple_of(2) && rows.is_multiple_of(2) && tp.shared_row_elems(k).is_multiple_of(2)
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

/// A tile through NVIDIA's WMMA API (f64 8×8×4, sm_80+): A fragments from the staged chunk
/// (column-major, ld A_STRIDE), B from the padded B in shared memory (row-major, ld B_STRIDE),
/// D stored row-major straight to `out` when K is a multiple of 8, else through `c_stage`.
/// The `__dmma_m8n8k4_*` built-ins are what `nvcuda::wmma::load_matrix_sync`, `mma_sync` and
/// `store_matrix_sync` call for these fragment types (CUDA's crt/mma.hpp); NVRTC provides them
/// without headers.
fn wmma_body(k: u32, stage_c: bool, unroll: String, zero: &'static str) -> impl Fn(&mut Writer) {
    move |w: &mut Writer| {
        w.line("const int i0 = tile * FM;");
        w.line("double acc[N_FRAGS][2];");
        w.line("#pragma unroll");
        w.line(format!("for (int nf = 0; nf < N_FRAGS; ++nf) acc[nf][0] = acc[nf][1] = {zero};"));
        if !unroll.is_empty() {
            w.line(&unroll);
        }
        w.block("for (int ks = 0; ks < K_STEPS; ++ks)", "", |w| {
            w.line("double a_frag[1];  // wmma::fragment<matrix_a, 8, 8, 4, double, col_major>");
            w.line("__dmma_m8n8k4_ld_a(a_frag, a_stage + ks * FK * A_STRIDE + wave * FM, A_STRIDE, 1);");
            w.line("#pragma unroll");
            w.block("for (int nf = 0; nf < N_FRAGS; ++nf)", "", |w| {
                w.line("double b_frag[1];  // wmma::fragment<matrix_b, 8, 8, 4, double, row_major>");
                w.line("__dmma_m8n8k4_ld_b(b_frag, bm + ks * FK * B_STRIDE + nf * FN, B_STRIDE, 0);");
                w.line("__dmma_m8n8k4_mma_f64(acc[nf], a_frag, b_frag, acc[nf], 2, 0);  // mma_sync, col x row");
            });
        });
        if stage_c {
            w.line(format!("// K = {k} is not a multiple of 8: whole fragments go to this wave's c_stage, then"));
            w.line("// the lanes store the valid rows and columns.");
            w.line("double* c_tile = c_stage + wave * FM * NP;");
            w.line("#pragma unroll");
            w.line("for (int nf = 0; nf < N_FRAGS; ++nf) __dmma_m8n8k4_st_c_f64(c_tile + nf * FN, acc[nf], NP, 0);");
            w.line("__syncwarp();");
            w.block("for (int e = lane; e < FM * NP; e += LANES)", "", |w| {
                w.line("const int i = i0 + e / NP, j = e % NP;");
                w.line("if (i < K2 && j < K) out[i * K + j] = c_tile[e];");
            });
            w.line("__syncwarp();  // c_tile is reused by this wave's next tile");
        } else {
            w.line("#pragma unroll");
            w.line("for (int nf = 0; nf < N_FRAGS; ++nf) __dmma_m8n8k4_st_c_f64(out + i0 * K + nf * FN, acc[nf], K, 0);  // store_matrix_sync, row-major");
        }
    }
}

/// The k loop of a tile (or of jammed tiles): `step` per k-step, or with `fuse_k(N)` the runs
/// of k-steps as the plan groups them (`fused`: each run with the helper its depth calls),
/// `deep(w, depth, call)` emitting one instruction run from `ks0`; the unroll pragma where
/// there is a loop to unroll.
fn k_loop(w: &mut Writer, fused: Option<&[(crate::plan::KStepGroup, String)]>, unroll: &str, unroll_note: &str, fuse_note: &str, step: &dyn Fn(&mut Writer), deep: &dyn Fn(&mut Writer, u32, &str)) {
    let Some(groups) = fused else {
        if !unroll.is_empty() {
            w.line(unroll);
        }
        w.block("for (int ks = 0; ks < K_STEPS; ++ks)", "", step);
        return;
    };
    w.line(fuse_note);
    for (i, (g, call)) in groups.iter().enumerate() {
        let last = g.start + g.depth * g.count;
        if i == 0 && g.count == 1 && !unroll_note.is_empty() {
            w.line(format!("{unroll_note}: one instruction run, no loop to unroll"));
        }
        let head = if g.count > 1 {
            if i == 0 && !unroll.is_empty() {
                w.line(unroll);
            }
            format!("for (int ks0 = {}; ks0 < {last}; ks0 += {})", g.start, g.depth)
        } else {
            String::new()
        };
        let body = |w: &mut Writer| {
            if g.count == 1 {
                let steps = if g.depth == 1 { format!("k-step {}", g.start) } else { format!("k-steps {} .. {}", g.start, last - 1) };
                w.line(format!("const int ks0 = {};  // {steps}", g.start));
            }
            if g.depth == 1 {
                w.line("const int ks = ks0;");
                step(w);
            } else {
                deep(w, g.depth, call);
            }
        };
        if head.is_empty() {
            w.block("", "", body);
        } else {
            w.block(head, "", body);
        }
    }
}

/// Per column fragment of the wave (`nfr` of them), the B fragments of `depth` k-steps from
/// `ks0` side by side, then `issue` (the deep instruction(s) on them).
fn deep_b_steps(w: &mut Writer, nfr: &str, depth: u32, b_ty: &str, b_fragment: &dyn Fn(&mut Writer), issue: &str) {
    w.line("#pragma unroll");
    w.block(format!("for (int nf = 0; nf < {nfr}; ++nf)"), "", |w| {
        w.line(format!("{b_ty} b_steps[{depth}];"));
        w.line("#pragma unroll");
        w.block(format!("for (int s = 0; s < {depth}; ++s)"), "", |w| {
            w.line("const int ks = ks0 + s;");
            b_fragment(w);
            w.line("b_steps[s] = b;");
        });
        w.lines(issue);
    });
}

/// `text` with every line indented by `levels` × 4 spaces.
pub(super) fn indent(text: &str, levels: usize) -> String {
    text.lines().map(|l| format!("{}{l}\n", "    ".repeat(levels))).collect()
}

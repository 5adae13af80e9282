//! Lowering of `swap_operands(1)`: the fused passes computed transposed. A pass
//! out(i, j) = Σ_k in(k, i) B(k, j) is the transpose of D'(j, i) = Σ_k Bᵀ(j, k) in(k, i), so the
//! matrix instruction may take Bᵀ as its A operand (K rows, in M_FRAGS fragments of FM, held in
//! registers for the whole kernel) and the tensor as its B operand (K² columns, in COL_TILES
//! tiles of FN, read from the shared intermediate). Where the instruction is not square (NVIDIA
//! m16n8k*: FM = 16, FN = 8) the two layouts pad differently: at K = 10, 13 column tiles of 8
//! (104 of K² = 100) instead of 7 row tiles of 16 (112), and 16 rows j instead of 16 columns.
//! D' leaves one element per register (rows j of D' are output columns, K apart in memory).
//!
//! The lane → element expressions come from the same fragment tables as the untransposed
//! passes ([`crate::fragment`]); [`crate::simulate::swapped_pass`] executes this tiling on the
//! CPU model. The plan allows this form only with whole-tensor shared intermediates, B in
//! registers, a one-register B fragment and one tensor per pass.

use super::tensor::{deep_instruction, indent};
use super::tile_pass::Variant;
use super::writer::Writer;
use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::Step;
use crate::plan::TransformPlan;

/// Column tiles a wave computes at once, adjacent (2w, 2w + 1): two independent accumulator
/// chains per wave (the untransposed passes get theirs from two column fragments at K <= 16).
/// One tile at a time, each tile's loads, two dependent instructions and stores run in turn
/// with nothing to overlap the chain's latency: 19% slower than the untransposed pass at
/// K = 10; two at a time, each chain hides the other's, 3.6% faster than it. Adjacent tiles,
/// not WAVES apart: the strided grouping measured 4.7% slower.
const TILE_GROUP: u32 = 2;

impl Emitter<'_> {
    /// The constants of the transposed layout (after the untransposed ones, which the kernel's
    /// staging still uses).
    pub(super) fn swapped_constants(&mut self) {
        let note = self.step_comment(|s| matches!(s, Step::SwapOperands(_)));
        self.w.line(format!("{note}: the passes computed transposed, D'(j, i) = sum_k B^T(j, k) in(k, i):"));
        self.w.line("// B^T is the instruction's A operand (K rows in fragments of FM, in registers), the tensor its");
        self.w.line("// B operand (K2 columns in tiles of FN, from shared memory).");
        self.w.line("constexpr int M_FRAGS = (K + FM - 1) / FM;  // fragments of B^T's rows j");
        self.w.line("constexpr int COL_TILES = (K2 + FN - 1) / FN;  // column tiles of the tensor's K2 columns i");
        self.w.line(format!("constexpr int TILE_GROUP = {TILE_GROUP};  // column tiles a wave computes at once: two independent accumulator chains"));
    }

    /// The type of the lane's Bᵀ fragments (`BFrags`): the A operand's.
    pub(super) fn swapped_b_type(&self, f: &Fragment) -> String {
        self.d.mma_operand_type(f, self.plan.request.dtype, f.a.regs)
    }

    /// `load_b`'s body: each lane's fragments of Bᵀ as the instruction's A operand,
    /// A'(j, k) = B(k, j), zero where j or k passes K.
    pub(super) fn swapped_b_setup(&self, f: &Fragment) -> String {
        let k = self.plan.request.k;
        let note = self.step_comment(|s| matches!(s, Step::SwapOperands(_)));
        let reg = if f.a.regs == 1 { "0" } else { "r" };
        let (a_j, a_k) = (f.a.row.cpp("lane", reg, f.lanes), f.a.col.cpp("lane", reg, f.lanes));
        let mut guard = Vec::new();
        if !k.is_multiple_of(f.k) {
            guard.push("k < K");
        }
        if !k.is_multiple_of(f.m) {
            guard.push("j < K");
        }
        let value = self.d.mma_operand_elem(self.plan.request.dtype, "b[k * K + j]");
        let value = if guard.is_empty() { value } else { format!("({}) ? {value} : 0", guard.join(" && ")) };
        let slot = if f.a.regs == 1 { "b_frag[ks][mf]" } else { "b_frag[ks][mf][r]" };
        let mut body = String::new();
        body += &format!("const int k = ks * FK + {a_k};\n");
        body += &format!("const int j = mf * FM + {a_j};\n");
        body += &format!("{slot} = {value};  // A'(j, k) = B(k, j)\n");
        let cache = self.step_comment(|s| matches!(s, Step::CacheRead { operand: crate::ir::Operand::B, .. }));
        let mut s = format!("{cache}: each lane keeps its fragments for the whole kernel,\n");
        s += &format!("{note}: fragments of B^T, the instruction's A operand.\n");
        s += "#pragma unroll\nfor (int ks = 0; ks < K_STEPS; ++ks) {\n";
        s += "    #pragma unroll\n    for (int mf = 0; mf < M_FRAGS; ++mf) {\n";
        if f.a.regs == 1 {
            s += &indent(&body, 2);
        } else {
            s += &format!("        #pragma unroll\n        for (int r = 0; r < {}; ++r) {{\n", f.a.regs);
            s += &indent(&body, 3);
            s += "        }\n";
        }
        s += "    }\n}\n";
        s
    }

    /// One transposed pass function, named and called as the untransposed one of the same
    /// variant ([`Variant::name`]).
    pub(super) fn swapped_pass_function(&mut self, tp: &TransformPlan, f: &Fragment, v: Variant) {
        let k = self.plan.request.k;
        let t = self.t();
        let dtype = self.plan.request.dtype;
        let bind = self.step_comment(|s| matches!(s, Step::Bind(_)));
        let b_ty = self.swapped_b_type(f);
        let (b_k, b_i) = (f.b.row.cpp("lane", "0", f.lanes), f.b.col.cpp("lane", "0", f.lanes));
        let (c_j, c_i) = (f.c.row.cpp("lane", "r", f.lanes), f.c.col.cpp("lane", "r", f.lanes));
        let col_tiles = (k * k).div_ceil(f.n);
        // Columns past K² (the last tile's padding, or a group's tile past the last) read as zeros
        // and are not stored; rows past K likewise.
        let i_guard = !(k * k).is_multiple_of(f.n) || !col_tiles.is_multiple_of(TILE_GROUP);
        let tile_guard = !col_tiles.is_multiple_of(TILE_GROUP);
        let (in_stride, runs_in) = match () {
            _ if v.in_staged_stride => ("WS_STRIDE", false),
            _ => ("W_STRIDE", v.in_runs),
        };
        let mut load_guard = Vec::new();
        if i_guard {
            load_guard.push("i < K2");
        }
        if !k.is_multiple_of(f.k) {
            load_guard.push("k < K");
        }
        let in_at = if runs_in { format!("in[k * {in_stride} + col]") } else { format!("in[k * {in_stride} + i]") };
        let load = self.d.mma_operand_elem(dtype, &in_at);
        let load = if load_guard.is_empty() { load } else { format!("({}) ? {load} : 0", load_guard.join(" && ")) };
        // Output element (i, j) is element i·K + j of the K x K² view of the next pass's input.
        let plain_rows = tp.shared_row_pad() == 0 && !tp.runs_padded(k);
        let out_at = match () {
            _ if !v.out_shared => "out[i * K + j]",
            _ if v.out_runs => "out[(i / K) * W_STRIDE + (i % K) * KR + j]",
            // Rows of exactly K² values: row i / K, column (i % K)·K + j is element i·K + j. (Computed
            // per value, four single stores per tile, the division form cost 21% at K = 10; the
            // untransposed passes compute it once per row, where it costs nothing.)
            _ if plain_rows => "out[i * K + j]",
            _ => "out[(i / K) * W_STRIDE + (i % K) * K + j]",
        };
        let mut store_guard = Vec::new();
        if !k.is_multiple_of(f.m) {
            store_guard.push("j < K");
        }
        if i_guard {
            store_guard.push("i < K2");
        }
        let store = format!("{out_at} = {};", self.d.mma_store_value(dtype, "acc[t][mf][r]"));
        let store = if store_guard.is_empty() { store } else { format!("if ({}) {store}  // padding is not stored", store_guard.join(" && ")) };
        let acc_decl = self.d.mma_acc_decl(f, "acc", "TILE_GROUP][M_FRAGS");
        let c_regs = f.c.regs;
        let groups: Vec<(crate::plan::KStepGroup, String)> = tp
            .k_step_groups(TransformPlan::padded(k, f.k) / f.k)
            .into_iter()
            .map(|g| {
                let call = if g.depth == 1 {
                    String::new()
                } else {
                    let (deep, map) = deep_instruction(tp, f, g.depth);
                    self.d.mma_steps_prelude(f, &deep, &map, "").1
                };
                (g, call)
            })
            .collect();
        let fuse_note = self.step_comment(|s| matches!(s, Step::FuseK(_)));
        let unroll_note = self.step_comment(|s| matches!(s, Step::Unroll(crate::ir::Loop::K, _)));
        let mma = self.d.mma_call(f, dtype, "acc[t][mf]", "b_frag[ks][mf]", "bt[t][ks]");
        let live = if tile_guard { "if (tile0 + t < COL_TILES) " } else { "" };
        let what = match (v.out_shared, v.in_runs, v.out_runs) {
            (false, true, _) => "// The last GEMM pass, transposed: shared intermediate (padded rows and runs) to C in device memory.",
            (false, false, _) => "// The last GEMM pass, transposed: shared intermediate (padded rows) to C in device memory.",
            (true, false, true) => "// The first GEMM pass, transposed: the tensor as copied in (padded rows) to a shared intermediate (padded rows and runs).",
            (true, true, _) => "// One GEMM pass, transposed, shared intermediate to shared intermediate (padded rows and runs).",
            (true, false, false) => "// One GEMM pass, transposed, shared intermediate to shared intermediate (padded rows).",
        };
        let align = self.step_comment(|s| matches!(s, Step::AlignRuns(_)));
        let head = self.out_head(format!("{} void {}(const {t}* in, {}, {t}* out, int lane, int wave)", self.d.inline_device(), v.name(), self.pass_b_param(tp, f)));
        self.w.line("");
        self.w.line(what);
        self.w.block(head, "", |w: &mut Writer| {
            w.line(format!("{bind}: wave w owns column tiles TILE_GROUP * w .. TILE_GROUP * w + TILE_GROUP - 1,"));
            w.line("// then the same WAVES * TILE_GROUP further on (swap_operands(1): tiles of the tensor's K2 columns).");
            w.block("for (int tile0 = wave * TILE_GROUP; tile0 < COL_TILES; tile0 += WAVES * TILE_GROUP)", "", |w| {
                w.line(format!("// B operand (the tensor): register 0 of step ks of tile t is in(ks * FK + {b_k}, (tile0 + t) * FN + {b_i})."));
                w.line(format!("{t} bt[TILE_GROUP][K_STEPS];"));
                w.line("#pragma unroll");
                w.block("for (int t = 0; t < TILE_GROUP; ++t)", "", |w| {
                    w.line(format!("const int i = (tile0 + t) * FN + {b_i};"));
                    if runs_in {
                        w.line(format!("const int col = (i / K) * KR + i % K;  {align}: column i lies in run i / K, slot i % K"));
                    }
                    w.line("#pragma unroll");
                    w.block("for (int ks = 0; ks < K_STEPS; ++ks)", "", |w| {
                        w.line(format!("const int k = ks * FK + {b_k};"));
                        w.line(format!("bt[t][ks] = {load};"));
                    });
                });
                w.line(&acc_decl);
                w.line("#pragma unroll");
                w.line(format!("for (int t = 0; t < TILE_GROUP; ++t) for (int mf = 0; mf < M_FRAGS; ++mf) for (int r = 0; r < {c_regs}; ++r) acc[t][mf][r] = 0;"));
                if !unroll_note.is_empty() {
                    w.line(format!("{unroll_note}: the k loop runs unrolled (the transposed pass's only form)"));
                }
                for (g, call) in &groups {
                    if g.depth == 1 {
                        if tp.fuse_k > 1 {
                            w.line(format!("{fuse_note}: k-steps {} .. {} one deep", g.start, g.start + g.count - 1));
                        }
                        w.line("#pragma unroll");
                        w.block(format!("for (int ks = {}; ks < {}; ++ks)", g.start, g.start + g.count), "", |w| {
                            w.line("#pragma unroll");
                            w.block("for (int t = 0; t < TILE_GROUP; ++t)", "", |w| {
                                w.line("#pragma unroll");
                                w.line(format!("for (int mf = 0; mf < M_FRAGS; ++mf) {live}{mma}"));
                            });
                        });
                        continue;
                    }
                    let d = g.depth;
                    let a_steps = (0..d).map(|s| format!("b_frag[ks0 + {s}][mf]")).collect::<Vec<_>>().join(", ");
                    let b_steps = (0..d).map(|s| format!("bt[t][ks0 + {s}]")).collect::<Vec<_>>().join(", ");
                    w.line(format!("{fuse_note}: k-steps {} .. {} as {} instruction(s) {d} deep", g.start, g.start + g.count * d - 1, g.count));
                    w.line("#pragma unroll");
                    w.block(format!("for (int ks0 = {}; ks0 < {}; ks0 += {d})", g.start, g.start + g.count * d), "", |w| {
                        w.line("#pragma unroll");
                        w.block("for (int t = 0; t < TILE_GROUP; ++t)", "", |w| {
                            w.line("#pragma unroll");
                            w.block(format!("for (int mf = 0; mf < M_FRAGS; ++mf) {}", live.trim_end()), "", |w| {
                                w.line(format!("const {b_ty} a_steps[{d}] = {{{a_steps}}};"));
                                w.line(format!("const {t} b_steps[{d}] = {{{b_steps}}};"));
                                w.line(format!("{call}(acc[t][mf], a_steps, b_steps);"));
                            });
                        });
                    });
                }
                w.line(format!("// D'(j, i): register r of tile t, fragment mf is row j = mf * FM + {c_j}, column i = (tile0 + t) * FN + {c_i}."));
                w.line("#pragma unroll");
                w.block("for (int t = 0; t < TILE_GROUP; ++t)", "", |w| {
                    w.line("#pragma unroll");
                    w.block("for (int mf = 0; mf < M_FRAGS; ++mf)", "", |w| {
                        w.line("#pragma unroll");
                        w.block(format!("for (int r = 0; r < {c_regs}; ++r)"), "", |w| {
                            w.line(format!("const int j = mf * FM + {c_j};"));
                            w.line(format!("const int i = (tile0 + t) * FN + {c_i};"));
                            w.line(&store);
                        });
                    });
                });
            });
        });
    }
}

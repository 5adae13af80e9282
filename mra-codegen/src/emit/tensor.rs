//! Lowering of tensorized levels (`bind(warps, tiles)` + `tensorize(mma)`): each warp or
//! wavefront owns tiles of FM output rows × all K columns and computes them with the arch's
//! matrix instruction. The lane → element index expressions come from the fragment tables in
//! [`crate::fragment`], the same tables the CPU model in the tests executes.
//!
//! K not a multiple of the fragment shape is handled by padding: the contraction and the
//! columns run to KP/NP (multiples of FK/FN) with zeros, and stores are masked.

use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::{Loop, Memory, Step};
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
        self.w.line("constexpr int WAVES = THREADS / LANES;");
        self.w.line(format!("constexpr int KP = {};  // contraction padded to whole fragments (zeros)", TransformPlan::padded(k, f.k)));
        self.w.line(format!("constexpr int NP = {};  // columns padded to whole fragments (not stored)", TransformPlan::padded(k, f.n)));
        self.w.line("constexpr int ROW_TILES = (K2 + FM - 1) / FM;");
        self.w.line("constexpr int K_STEPS = KP / FK;");
        self.w.line("constexpr int N_FRAGS = NP / FN;");
        if tp.b.memory == Memory::Shared {
            let cache = self.step_comment(|s| matches!(s, Step::CacheRead { .. }));
            self.w.line(format!("constexpr int B_STRIDE = NP + {};  {cache}: row stride of the padded B in shared memory", tp.b.pad));
        } else {
            self.w.line("constexpr int B_STRIDE = K;");
        }
        self.w.line("");
        self.w.lines(&self.d.mma_prelude(f));
    }

    /// Kernel-entry code that makes B available to the passes, and the pass arguments after
    /// `(in, B, out`.
    pub(super) fn tile_b_setup(&self, tp: &TransformPlan, f: &Fragment) -> (String, String) {
        let t = self.t();
        let barrier = self.d.barrier();
        let cache = self.step_comment(|s| matches!(s, Step::CacheRead { .. }));
        let mut s = String::from("const int lane = tid % LANES;\nconst int wave = tid / LANES;\n");
        let k = self.k();
        let guard = |row: &str, col: &str| -> String {
            let mut c = Vec::new();
            if k % f.k != 0 {
                c.push(format!("{row} < K"));
            }
            if k % f.n != 0 {
                c.push(format!("{col} < K"));
            }
            c.join(" && ")
        };
        match tp.b.memory {
            Memory::Registers => {
                s += &format!("{cache}: each lane keeps its B fragments for the whole kernel.\n");
                s += &format!("{t} b_frag[K_STEPS][N_FRAGS];\n");
                s += "#pragma unroll\nfor (int ks = 0; ks < K_STEPS; ++ks) {\n";
                s += "    #pragma unroll\n    for (int nf = 0; nf < N_FRAGS; ++nf) {\n";
                s += &format!("        const int k = ks * FK + {};\n", f.b.row.cpp("lane", "0", f.lanes));
                s += &format!("        const int j = nf * FN + {};\n", f.b.col.cpp("lane", "0", f.lanes));
                let g = guard("k", "j");
                if g.is_empty() {
                    s += "        b_frag[ks][nf] = b[k * K + j];\n";
                } else {
                    s += &format!("        b_frag[ks][nf] = ({g}) ? b[k * K + j] : {};\n", self.plan.request.dtype.zero());
                }
                s += "    }\n}\n";
            }
            Memory::Shared => {
                s += &format!("{cache}: B, zero-padded to KP x NP, staged once per block.\n");
                s += &format!("__shared__ {t} b_shared[KP * B_STRIDE];\n");
                s += "for (int e = tid; e < KP * B_STRIDE; e += THREADS) {\n";
                s += "    const int k = e / B_STRIDE, j = e % B_STRIDE;\n";
                s += &format!("    b_shared[e] = (k < K && j < K) ? b[k * K + j] : {};\n", self.plan.request.dtype.zero());
                s += "}\n";
                s += &format!("{barrier}\n");
                s += &format!("const {t}* bm = b_shared;\n");
            }
            Memory::Global => {
                s += &format!("const {t}* bm = b;\n");
            }
        }
        (s, ", lane, wave".into())
    }

    /// The tensorized GEMM pass.
    pub(super) fn tile_gemm_pass(&mut self, tp: &TransformPlan, f: &Fragment) {
        let t = self.t();
        let zero = self.plan.request.dtype.zero();
        let k = self.k();
        let bind = self.step_comment(|s| matches!(s, Step::Bind(_)));
        let unroll = if tp.unroll_k { format!("#pragma unroll  {}", self.step_comment(|s| matches!(s, Step::Unroll(Loop::K)))) } else { String::new() };
        let b_param = match tp.b.memory {
            Memory::Registers => format!("const {t} (&b_frag)[K_STEPS][N_FRAGS]"),
            _ => format!("const {t}* bm"),
        };
        let rows_pad = (k * k) % f.m != 0;
        let head = format!("{} void gemm_pass(const {t}* in, {b_param}, {t}* out, int lane, int wave)", self.d.inline_device());
        let acc_decl = self.d.mma_acc_decl(f, "acc", "N_FRAGS");
        let mma = self.d.mma_call(f, "acc[nf]", "a", "b");
        let a_i = f.a.row.cpp("lane", "0", f.lanes);
        let a_k = f.a.col.cpp("lane", "0", f.lanes);
        let (b_k, b_j) = (f.b.row.cpp("lane", "0", f.lanes), f.b.col.cpp("lane", "0", f.lanes));
        let (c_i, c_j) = (f.c.row.cpp("lane", "r", f.lanes), f.c.col.cpp("lane", "r", f.lanes));
        let mut a_guard = Vec::new();
        if k % f.k != 0 {
            a_guard.push("a_k < K");
        }
        if rows_pad {
            a_guard.push("a_i < K2");
        }
        let mut c_guard = Vec::new();
        if rows_pad {
            c_guard.push("i < K2");
        }
        if k % f.n != 0 {
            c_guard.push("j < K");
        }
        let c_regs = f.c.regs;
        self.w.line("");
        self.w.line("// One GEMM pass: out(i,j) = sum_k in(k,i) * B(k,j), on matrix fragments.");
        self.w.block(head, "", |w| {
            w.line(format!("{bind}: wave w owns row tiles w, w + WAVES, ... (FM rows x all columns each)"));
            w.block("for (int tile = wave; tile < ROW_TILES; tile += WAVES)", "", |w| {
                w.line("const int i0 = tile * FM;");
                w.line(acc_decl);
                w.line("#pragma unroll");
                w.line(format!("for (int nf = 0; nf < N_FRAGS; ++nf) for (int r = 0; r < {c_regs}; ++r) acc[nf][r] = {zero};"));
                if !unroll.is_empty() {
                    w.line(&unroll);
                }
                w.block("for (int ks = 0; ks < K_STEPS; ++ks)", "", |w| {
                    w.line(format!("// A fragment: this lane holds A(i0 + {a_i}, ks * FK + {a_k}) = in(k, i)."));
                    w.line(format!("const int a_i = i0 + {a_i};"));
                    w.line(format!("const int a_k = ks * FK + {a_k};"));
                    if a_guard.is_empty() {
                        w.line(format!("const {t} a = in[a_k * K2 + a_i];"));
                    } else {
                        w.line(format!("const {t} a = ({}) ? in[a_k * K2 + a_i] : {zero};  // zero padding", a_guard.join(" && ")));
                    }
                    w.line("#pragma unroll");
                    w.block("for (int nf = 0; nf < N_FRAGS; ++nf)", "", |w| {
                        match tp.b.memory {
                            Memory::Registers => w.line(format!("const {t} b = b_frag[ks][nf];")),
                            _ => w.line(format!("const {t} b = bm[(ks * FK + {b_k}) * B_STRIDE + nf * FN + {b_j}];  // B fragment")),
                        };
                        w.line(&mma);
                    });
                });
                w.line(format!("// D fragment: register r of this lane is D(i0 + {c_i}, nf * FN + {c_j})."));
                w.line("#pragma unroll");
                w.block("for (int nf = 0; nf < N_FRAGS; ++nf)", "", |w| {
                    w.line("#pragma unroll");
                    w.block(format!("for (int r = 0; r < {c_regs}; ++r)"), "", |w| {
                        w.line(format!("const int i = i0 + {c_i};"));
                        w.line(format!("const int j = nf * FN + {c_j};"));
                        if c_guard.is_empty() {
                            w.line("out[i * K + j] = acc[nf][r];");
                        } else {
                            w.line(format!("if ({}) out[i * K + j] = acc[nf][r];  // padding is not stored", c_guard.join(" && ")));
                        }
                    });
                });
            });
        });
    }
}

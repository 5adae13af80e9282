//! `split_output(2)` with `chain(1)`: each tensor's output split along z over two blocks that
//! share nothing: no exchange between them, so neither waits for the other.
//!
//! Block h of a pair computes C(·, ·, z) for z in [ZH·h, ZH·h + ZH), ZH = 16 at K = 32:
//! - phase 1, per slice a of A (warp w takes a = w, w + WARPS, ..): pass 0
//!   T1ᵀ(z, b) = Σ_c Bᵀ(z, c) A(a, b, c) on the warp's slice, then pass 1
//!   T2(a, y, z) = Σ_b Bᵀ(y, b) T1(b, z) with pass 0's accumulators as its B operand where they
//!   lie (`chain(1)`), stored to shared memory;
//! - phase 2: the last pass C(x, y, z) = Σ_a Bᵀ(x, a) T2(a, y, z), stored from the accumulators.
//!
//! All three passes' A operands are the same registers: Bᵀ(m, k) = B(k, m) for the two 16-row
//! m-tiles and every k-step, in the chain's k order within each group of 8, (0, 2, 4, 6, 1, 3,
//! 5, 7). A warp's slice arrives in its own slot by one bulk copy, refilled with the warp's
//! next slice as soon as it has been read into registers.
//!
//! Other operations ([`crate::op::Operation`]): with a matrix per dimension, pass 0 contracts c
//! with Z (its one m-tile of Zᵀ held apart), pass 1 b with Y and the last pass a with X: the
//! shared registers hold Yᵀ through phase 1 and are reloaded with Xᵀ for phase 2 (and Yᵀ again
//! after it), where a barrier stands anyway. A strided or pointer batch changes the address of
//! tensor n; α and β the last pass's stores, chosen once per call (a template flag), and with
//! β ≠ 0 the block's half of C is asked of L2 as the tensor's phase 1 begins.

use super::Emitter;
use crate::fragment::{deeper, fragment};
use crate::ir::Step;
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// The constants, helpers and kernel of a `split_output(2)` level.
    pub(super) fn split_kernel(&mut self, entry: &str, tp: &TransformPlan) {
        let k = self.plan.request.k;
        let split = self.step_comment(|s| matches!(s, Step::SplitOutput(_)));
        let chain = self.step_comment(|s| matches!(s, Step::Chain(_)));
        let fuse = self.step_comment(|s| matches!(s, Step::FuseK(_)));
        let bulk = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
        let prefetch = self.step_comment(|s| matches!(s, Step::PrefetchL2(_)));
        let b_regs = self.step_comment(|s| matches!(s, Step::CacheRead { operand: crate::ir::Operand::B, .. }));
        let a_slot = self.step_comment(|s| matches!(s, Step::CacheRead { operand: crate::ir::Operand::A, .. }));
        let ws = self.step_comment(|s| matches!(s, Step::Workspace(_)));
        let bind = self.step_comment(|s| matches!(s, Step::Bind(_)));
        let tensorize = self.step_comment(|s| matches!(s, Step::Tensorize(_)));
        let op = self.op();
        let per_dim = op.matrices == crate::op::Matrices::PerDim;
        let a_n = self.tensor_at('a', "n");
        let c_n = self.tensor_at('c', "n");
        let w = &mut self.w;
        w.line(format!("constexpr int ZH = {};  {split}: values of z per block (one m16 tile)", tp.split_z(k)));
        w.line("constexpr int WARPS = THREADS / 32;");
        w.line("constexpr int MT = K / 16;  // m-tiles of Bᵀ (rows x, y or z)");
        w.line("constexpr int KS = K / 8;  // k-steps of 8 (groups of the chain's k order)");
        w.line(format!("constexpr int SLICES = K / WARPS;  {bind}: warp w's slices of A, a = w + WARPS·i, i < SLICES"));
        w.line(format!("constexpr int TP = {};  {ws}: T2's row pitch (a row per a; ≡ 2 mod 16: conflict-free last-pass loads)", tp.split_t2_pitch(k)));
        w.line(format!("constexpr int SLOT = K2;  {a_slot}: a warp's slot, one slice A(a, ·, ·) as it lies"));
        w.line("constexpr int LAST_FRAGS = K * ZH / 8 / WARPS;  // last-pass column fragments per warp");
        w.line("static_assert(ZH == 16, \"a last-pass column fragment f is (y, z) = (f >> 1, 8 (f & 1) + g)\");");
        w.line(format!("constexpr int PREFETCH = {};  {prefetch}: slices ahead of the one read (0: none)", tp.prefetch_l2));
        w.line("");
        w.lines(&super::tma::mbarrier_helpers());
        w.lines(&super::tma::bulk_load_helpers());
        w.lines(&super::tma::bulk_prefetch_helper());
        w.lines(
            "// C(p), C(p + 1) as one 16-byte store (p 16-byte aligned). Written out: NVRTC split the\n\
             // equivalent double2 store into two 8-byte ones in this kernel, 30% slower.\n\
             __device__ __forceinline__ void mra_store_pair(double* p, double x, double y) {\n\
             \x20   asm volatile(\"{ .reg .u64 g; cvta.to.global.u64 g, %0; st.global.v2.f64 [g], {%1, %2}; }\" :: \"l\"(p), \"d\"(x), \"d\"(y) : \"memory\");\n\
             }",
        );
        if op.scaled {
            w.lines(
                "// C(p), C(p + 1) = alpha (x, y) + beta C(p), C(p + 1) as it was; without ADD (beta == 0) C is\n\
                 // not read, so whatever it held, NaN included, is harmless. ADD is chosen once per call. The\n\
                 // old values of a tile are loaded before its first store: no load may pass the asm store.\n\
                 template <bool ADD>\n\
                 __device__ __forceinline__ void mra_store_c(double* p, double x, double y, double alpha, double beta) {\n\
                 \x20   if (ADD) {\n\
                 \x20       const double2 old = __ldg(reinterpret_cast<const double2*>(p));\n\
                 \x20       mra_store_pair(p, alpha * x + beta * old.x, alpha * y + beta * old.y);\n\
                 \x20   } else {\n\
                 \x20       mra_store_pair(p, alpha * x, alpha * y);\n\
                 \x20   }\n\
                 }",
            );
        }
        // The k-step of this kernel is the arch's instruction two steps deep (m16n8k8 on sm_90);
        // fuse_k(4) takes two of them side by side (m16n8k16), as the fragment tables say.
        let base = tp.fragment.expect("split_output is a tensorize(mma) level");
        let shallow = deeper(base.instr, 2).map(fragment).expect("planned: sm_90 f64 has the 8-deep instruction");
        let deep = tp.fuse_k == 4;
        w.line("");
        w.line(format!("{tensorize}: every pass is m16n8 fragments of f64 DMMA, one warp's tiles at a time."));
        w.lines(&self.d.mma_prelude(&shallow, self.plan.request.dtype));
        w.line("// Its fragments (PTX ISA), which the chain below relies on: A a0 (g, t), a1 (g+8, t), a2 (g, t+4),");
        w.line("// a3 (g+8, t+4); B b0 (t, g), b1 (t+4, g); D d0 (g, 2t), d1 (g, 2t+1), d2 (g+8, 2t), d3 (g+8, 2t+1).");
        let dtype = self.plan.request.dtype;
        let (a_ty, b_ty) = (self.d.mma_operand_type(&shallow, dtype, shallow.a.regs), self.d.mma_operand_type(&shallow, dtype, shallow.b.regs));
        let deep_name = if deep {
            let deep_f = deeper(base.instr, 4).map(fragment).expect("planned: sm_90 f64 has the 16-deep instruction");
            let map = shallow.step_operands(&deep_f).expect("m16n8k16 takes two m16n8k8 steps side by side");
            let (text, name) = self.d.mma_steps_prelude(&shallow, &deep_f, &map, &fuse);
            w.line("");
            w.lines(&text);
            name
        } else {
            w.line(format!("{fuse}: one {} per k-step of 8, in the chain's k order.", shallow.instr.name()));
            String::new()
        };
        // One instruction per k-step of 8 (fuse_k(2)) or per pair of them (fuse_k(4)): `mma(d, a, j, b)`
        // with the A registers a(js) of k-step js and the B values b(js, h, slot), slot = 0, 1, of
        // k-step js, the h-th of the instruction's steps.
        let mma = |d: &str, a: &dyn Fn(&str) -> String, j: &str, b: &dyn Fn(&str, u32, u32) -> String| -> String {
            if deep {
                let (j0, j1) = (format!("2 * {j}"), format!("2 * {j} + 1"));
                format!(
                    "{{ const {a_ty} a_steps[2] = {{{}, {}}}; const {b_ty} b_steps[2] = {{{{{{{}, {}}}}}, {{{{{}, {}}}}}}}; {deep_name}({d}, a_steps, b_steps); }}",
                    a(&j0),
                    a(&j1),
                    b(&j0, 0, 0),
                    b(&j0, 0, 1),
                    b(&j1, 1, 0),
                    b(&j1, 1, 1)
                )
            } else {
                self.d.mma_call(&shallow, dtype, d, &a(j), &format!("{b_ty}{{{{{}, {}}}}}", b(j, 0, 0), b(j, 0, 1)))
            }
        };
        let steps = if deep { "KS / 2" } else { "KS" };
        w.line("");
        w.line("// T2's column of (y, z local): 16-byte units of z XOR-ed by 4 (y & 1), so that a quarter warp's");
        w.line("// 16-byte stores of rows y, y + 1 cover all 32 banks.");
        w.line("__device__ __forceinline__ int t2_col(int y, int zl) { return y * ZH + ((((zl >> 1) ^ ((y & 1) << 2))) << 1) + (zl & 1); }");
        w.line("");
        w.line(format!("{chain}: pass 1 of one slice from pass 0's accumulators d1, then its T2 stores."));
        w.line("// B operand (k = b, n = z local): z-fragment zf is d1's rows g (zf = 0: d1[..][0], [1]) or g + 8 (zf = 1: [2], [3]);");
        w.line("// d1[j] holds b = 8j + 2t, 8j + 2t + 1: the k-slots t, t + 4 of k-step j in the chain's order.");
        w.line(format!("__device__ __forceinline__ void pass1_store(const {a_ty} (&bt)[MT][KS], const double (&d1)[KS][4], double* t2, int a, int g, int t) {{"));
        w.indent();
        w.line("double* row = t2 + a * TP;");
        w.line("#pragma unroll");
        w.block("for (int mt = 0; mt < MT; ++mt)", "", |w| {
            w.line("double d2[ZH / 8][4];");
            w.line("#pragma unroll");
            w.block("for (int zf = 0; zf < ZH / 8; ++zf)", "", |w| {
                w.line("#pragma unroll");
                w.line("for (int r = 0; r < 4; ++r) d2[zf][r] = 0;");
                w.line("#pragma unroll");
                let a = |j: &str| format!("bt[mt][{j}]");
                let b = |j: &str, _: u32, slot: u32| format!("d1[{j}][2 * zf + {slot}]");
                w.line(format!("for (int j = 0; j < {steps}; ++j) {}", mma("d2[zf]", &a, "j", &b)));
            });
            w.line("#pragma unroll");
            w.block("for (int zf = 0; zf < ZH / 8; ++zf)", "", |w| {
                w.line("const int y = 16 * mt + g, zl = 8 * zf + 2 * t;");
                w.line("*reinterpret_cast<double2*>(row + t2_col(y, zl)) = make_double2(d2[zf][0], d2[zf][1]);");
                w.line("*reinterpret_cast<double2*>(row + t2_col(y + 8, zl)) = make_double2(d2[zf][2], d2[zf][3]);");
            });
        });
        w.dedent();
        w.line("}");
        w.line("");
        // One k-step's A fragment of Mᵀ: Mᵀ(m, k) = M(k, m) at k = 8j + 2t, k + 1 and rows m, m + 8.
        fn frag_loads(w: &mut super::writer::Writer, dst: &str, src: &str) {
            w.line(format!("{dst}[0] = {src}[k * K + m];"));
            w.line(format!("{dst}[1] = {src}[k * K + m + 8];"));
            w.line(format!("{dst}[2] = {src}[(k + 1) * K + m];"));
            w.line(format!("{dst}[3] = {src}[(k + 1) * K + m + 8];"));
        }
        // Every m-tile and k-step of Mᵀ into bt, M at `src`.
        fn bt_loads(w: &mut super::writer::Writer, src: &str) {
            w.line("#pragma unroll");
            w.line("for (int mt = 0; mt < MT; ++mt)");
            w.line("#pragma unroll");
            w.block("for (int j = 0; j < KS; ++j)", "", |w| {
                w.line("const int k = 8 * j + 2 * t, m = 16 * mt + g;");
                frag_loads(w, "bt[mt][j]", src);
            });
        }
        if per_dim {
            w.line(format!("{b_regs}: Mᵀ(m, k) = M(k, m) for one matrix M, m-tile mt, k-step j, k-slots t, t + 4."));
            w.line(format!("__device__ __forceinline__ void load_bt({a_ty} (&bt)[MT][KS], const double* __restrict__ m_, int g, int t) {{"));
            w.indent();
            bt_loads(w, "m_");
            w.dedent();
            w.line("}");
            w.line("");
        }
        // The per-half body: the half is a template parameter, so pass 0 names its m-tile of Bᵀ.
        w.line(format!("{split}: the work of block h of a pair, for every tensor n = blockIdx / 2, += gridDim / 2."));
        if op.is_seed() {
            w.line("template <int H>");
            w.line("__device__ __forceinline__ void split_half(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, int nfuncs, double* smem) {");
        } else {
            let (a, c) = match op.layout {
                crate::op::Layout::Pointers => ("const double* const* __restrict__ a", "double* const* __restrict__ c"),
                _ => ("const double* __restrict__ a", "double* __restrict__ c"),
            };
            w.line(format!("template <int H{}>", if op.scaled { ", bool ADD" } else { "" }));
            w.line(format!("__device__ __forceinline__ void split_half({a}, const double* __restrict__ b, {c}, int nfuncs, long long a_stride, long long c_stride, double alpha, double beta, double* smem) {{"));
        }
        w.indent();
        w.line("double* t2 = smem;");
        w.line("const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, t = lane & 3;");
        w.line("double* slot = smem + K * TP + w * SLOT;");
        w.line("unsigned long long* bar = reinterpret_cast<unsigned long long*>(smem + K * TP + WARPS * SLOT) + w;");
        w.line("const int first = blockIdx.x >> 1, stride = gridDim.x >> 1;");
        w.line(format!("{b_regs}: Bᵀ(m, k) = B(k, m), m-tile mt, k-step j, k-slots t, t + 4 -> k = 8j + 2t, 8j + 2t + 1."));
        w.line(format!("{a_ty} bt[MT][KS];"));
        if per_dim {
            w.line("// A matrix per dimension (X, Y, Z at b, b + K2, b + 2 K2): bt holds Yᵀ for phase 1 and Xᵀ for phase 2,");
            w.line("// reloaded after each phase's barrier; pass 0's m-tile H of Zᵀ is held apart, in bz.");
            w.line(format!("{a_ty} bz[KS];"));
            w.line("load_bt(bt, b + K2, g, t);");
            w.line("#pragma unroll");
            w.block("for (int j = 0; j < KS; ++j)", "", |w| {
                w.line("const int k = 8 * j + 2 * t, m = 16 * H + g;");
                w.line("const double* z = b + 2 * K2;");
                frag_loads(w, "bz[j]", "z");
            });
        } else {
            bt_loads(w, "b");
        }
        w.line("if (lane == 0) mra_mbar_init(bar);");
        w.line("__syncwarp();");
        w.line("// The warp's q-th slice after (tensor n, slice i): tensors advance by `stride` every SLICES slices.");
        w.block("auto slice = [&](int n, int i, int q) -> const double*", ";", |w| {
            w.line("i += q;");
            w.line("while (i >= SLICES) { i -= SLICES; n += stride; }");
            w.line(format!("return n < nfuncs ? {a_n} + (long long)(w + WARPS * i) * K2 : nullptr;"));
        });
        w.line(format!("{bulk}: one bulk copy of the slice into the warp's slot, completing on its mbarrier."));
        w.block("auto load_slice = [&](const double* src)", ";", |w| {
            w.line("if (lane == 0) { mra_mbar_expect(bar, K2 * 8); mra_bulk_copy(slot, src, K2 * 8, bar); }");
        });
        w.line("unsigned phase = 0;");
        w.block("if (first < nfuncs)", "", |w| {
            w.line("load_slice(slice(first, 0, 0));");
            w.line("if (lane == 0) for (int q = 1; q < PREFETCH; ++q) if (const double* p = slice(first, 0, q)) mra_prefetch_l2(p, K2 * 8);");
        });
        w.block("for (int n = first; n < nfuncs; n += stride)", "", |w| {
            if op.scaled {
                w.block("if (ADD)", "", |w| {
                    w.line("// C's half of tensor n asked of L2 while phase 1 runs: the last pass's loads of it, with 8 warps");
                    w.line("// per SM and every warp in the same phase, would otherwise wait on DRAM (128 bytes per (x, y)).");
                    w.line(format!("const double* cq = {c_n} + ZH * H;"));
                    w.line("for (int r = tid; r < K2; r += THREADS) mra_prefetch_l2(cq + r * K, ZH * 8);");
                });
            }
            w.line("double d1o[KS][4];  // the previous slice's pass 0, for its pass 1");
            w.line("#pragma unroll 1");
            w.block("for (int i = 0; i < SLICES; ++i)", "", |w| {
                w.line("mra_mbar_wait(bar, phase);");
                w.line("phase ^= 1;");
                w.line("// Pass 0's B operand: b0 = A(a, b = 8 nf + g, c = 8j + 2t), b1 = c + 1 (k-slots t, t + 4).");
                w.line("double2 s[KS][KS];");
                w.line("#pragma unroll");
                w.line("for (int nf = 0; nf < KS; ++nf)");
                w.line("#pragma unroll");
                w.line("for (int j = 0; j < KS; ++j) s[nf][j] = *reinterpret_cast<const double2*>(slot + (8 * nf + g) * K + 8 * j + 2 * t);");
                w.line("mra_fence_proxy_async();  // the slot's reads before the bulk copy that refills it");
                w.line("__syncwarp();");
                w.line("if (const double* p = slice(n, i, 1)) load_slice(p);");
                w.line(format!("if (PREFETCH > 0 && lane == 0) if (const double* p = slice(n, i, PREFETCH)) mra_prefetch_l2(p, K2 * 8);  {prefetch}"));
                w.line("// Pass 0: T1ᵀ(z, b), z = ZH·H + (g, g + 8), b = 8 nf + (2t, 2t + 1).");
                w.line("double d1[KS][4];");
                w.line("#pragma unroll");
                w.block("for (int nf = 0; nf < KS; ++nf)", "", |w| {
                    w.line("#pragma unroll");
                    w.line("for (int r = 0; r < 4; ++r) d1[nf][r] = 0;");
                    w.line("#pragma unroll");
                    let a = |j: &str| if per_dim { format!("bz[{j}]") } else { format!("bt[H][{j}]") };
                    let b = |j: &str, _: u32, slot: u32| format!("s[nf][{j}].{}", if slot == 0 { "x" } else { "y" });
                    w.line(format!("for (int j = 0; j < {steps}; ++j) {}", mma("d1[nf]", &a, "j", &b)));
                });
                w.line("// Pass 1 of the previous slice: its chains overlap this slice's pass 0.");
                w.line("if (i > 0) pass1_store(bt, d1o, t2, w + WARPS * (i - 1), g, t);");
                w.line("#pragma unroll");
                w.line("for (int nf = 0; nf < KS; ++nf)");
                w.line("#pragma unroll");
                w.line("for (int r = 0; r < 4; ++r) d1o[nf][r] = d1[nf][r];");
            });
            w.line("pass1_store(bt, d1o, t2, w + WARPS * (SLICES - 1), g, t);");
            w.line("__syncthreads();  // T2 complete");
            if per_dim {
                w.line("load_bt(bt, b, g, t);  // Xᵀ for the last pass");
            }
            w.line("// Phase 2: C(x, n') = Σ_a Bᵀ(x, a) T2(a, n'), n' = (y, z local) = 8f + g; warp w takes");
            w.line("// f in [LAST_FRAGS·w, LAST_FRAGS·(w + 1)), four at a time.");
            w.line(format!("double* out = {c_n} + ZH * H;"));
            w.line("#pragma unroll 1");
            w.block("for (int round = 0; round < LAST_FRAGS / 4; ++round)", "", |w| {
                w.line("const int f0 = LAST_FRAGS * w + 4 * round;");
                w.line("double acc[MT][4][4];");
                w.line("#pragma unroll");
                w.line("for (int mt = 0; mt < MT; ++mt)");
                w.line("#pragma unroll");
                w.line("for (int q = 0; q < 4; ++q)");
                w.line("#pragma unroll");
                w.line("for (int r = 0; r < 4; ++r) acc[mt][q][r] = 0;");
                w.line("#pragma unroll");
                w.block(format!("for (int j = 0; j < {steps}; ++j)"), "", |w| {
                    w.line("#pragma unroll");
                    w.block("for (int q = 0; q < 4; ++q)", "", |w| {
                        w.line("const int f = f0 + q, y = f >> 1, zl = 8 * (f & 1) + g;");
                        w.line("const int col = t2_col(y, zl);");
                        if deep {
                            w.line("const int ar = 16 * j + 2 * t;  // k-slots t, t + 4, t + 8, t + 12: a = ar, ar + 1, ar + 8, ar + 9");
                            w.line("const double b0 = t2[ar * TP + col], b1 = t2[(ar + 1) * TP + col], b2 = t2[(ar + 8) * TP + col], b3 = t2[(ar + 9) * TP + col];");
                            w.line("#pragma unroll");
                            let a = |j: &str| format!("bt[mt][{j}]");
                            let b = |_: &str, h: u32, slot: u32| format!("b{}", 2 * h + slot);
                            w.line(format!("for (int mt = 0; mt < MT; ++mt) {}", mma("acc[mt][q]", &a, "j", &b)));
                        } else {
                            w.line("const int ar = 8 * j + 2 * t;  // k-slots t, t + 4: a = ar, ar + 1");
                            w.line("const double b0 = t2[ar * TP + col], b1 = t2[(ar + 1) * TP + col];");
                            w.line("#pragma unroll");
                            let a = |j: &str| format!("bt[mt][{j}]");
                            let b = |_: &str, _: u32, slot: u32| format!("b{slot}");
                            w.line(format!("for (int mt = 0; mt < MT; ++mt) {}", mma("acc[mt][q]", &a, "j", &b)));
                        }
                    });
                });
                let (store, scale) = if op.scaled { ("mra_store_c<ADD>", ", alpha, beta") } else { ("mra_store_pair", "") };
                w.line("#pragma unroll");
                w.line("for (int mt = 0; mt < MT; ++mt)");
                w.line("#pragma unroll");
                w.block("for (int q = 0; q < 4; ++q)", "", |w| {
                    w.line("const int f = f0 + q, y = f >> 1, zl = 8 * (f & 1) + 2 * t, x = 16 * mt + g;");
                    w.line(format!("{store}(out + x * K2 + y * K + zl, acc[mt][q][0], acc[mt][q][1]{scale});"));
                    w.line(format!("{store}(out + (x + 8) * K2 + y * K + zl, acc[mt][q][2], acc[mt][q][3]{scale});"));
                });
            });
            w.line("__syncthreads();  // T2 read before the next tensor's phase 1 writes it");
            if per_dim {
                w.line("load_bt(bt, b + K2, g, t);  // Yᵀ again for the next tensor's pass 1");
            }
        });
        w.dedent();
        w.line("}");
        if tp.co_schedule {
            let co = self.step_comment(|s| matches!(s, Step::CoSchedule(_)));
            self.w.line(format!("{co}: a tensor's two blocks are one thread-block cluster (__cluster_dims__ below), started together so"));
            self.w.line("// that the second block's read of the tensor finds it in L2; they exchange nothing.");
        }
        let using = self.begin_kernel();
        let signature = self.kernel_signature(entry);
        self.w.block(signature, "", |w| {
            w.line(using);
            w.line("extern __shared__ __align__(128) double mra_smem[];");
            w.line(format!("(void)workspace; (void)nblocks;  {split}: the grid is a multiple of 2, block b's half is b & 1"));
            if op.is_seed() {
                w.line("if (blockIdx.x & 1) split_half<1>(a, b, c, nfuncs, mra_smem);");
                w.line("else split_half<0>(a, b, c, nfuncs, mra_smem);");
            } else {
                let args = "(a, b, c, nfuncs, a_stride, c_stride, alpha, beta, mra_smem)";
                if op.scaled {
                    w.line("// beta == 0: C is written, never read (chosen once per call).");
                    w.line(format!("if (blockIdx.x & 1) {{ if (beta == 0) split_half<1, false>{args}; else split_half<1, true>{args}; }}"));
                    w.line(format!("else {{ if (beta == 0) split_half<0, false>{args}; else split_half<0, true>{args}; }}"));
                } else {
                    w.line(format!("if (blockIdx.x & 1) split_half<1>{args};"));
                    w.line(format!("else split_half<0>{args};"));
                }
            }
        });
    }
}

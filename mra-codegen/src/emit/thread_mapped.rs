//! The thread-mapped passes (`bind(threads, ..)`, no matrix instructions): each thread
//! computes output elements or whole output rows with FMAs, B staged or read from device
//! memory.

use super::writer::Writer;
use super::{pragma_unroll, Emitter};
use crate::ir::{Loop, Memory, Step, ThreadMap};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// Kernel-entry code that stages B for the thread-mapped passes.
    pub(super) fn thread_b_setup(&self, tp: &TransformPlan) -> String {
        let t = self.t();
        if tp.b.memory != Memory::Shared {
            return format!("const {t}* bm = b;\n");
        }
        let note = self.step_comment(|s| matches!(s, Step::CacheRead { .. }));
        format!(
            "{note}: B is the same for every GEMM, so it is staged once per block.\n\
             for (int e = tid; e < K2; e += THREADS) b_shared[(e / K) * B_STRIDE + e % K] = b[e];\n\
             {}\n\
             const {t}* bm = b_shared;\n",
            self.d.barrier()
        )
    }

    /// The GEMM pass helper: out(i,j) = sum_k in(k,i) * B(k,j), as the thread mapping says.
    pub(super) fn gemm_pass(&mut self, tp: &TransformPlan) {
        let t = self.t();
        let zero = self.plan.request.dtype.zero();
        let fma = self.d.fma(self.plan.request.dtype);
        let bind_note = self.step_comment(|s| matches!(s, Step::Bind(_)));
        let unroll_k = if tp.unroll_k {
            format!("{}  {}", pragma_unroll(tp.unroll_k_by), self.step_comment(|s| matches!(s, Step::Unroll(Loop::K, _))))
        } else {
            String::new()
        };
        let unroll_cols = if tp.unroll_cols {
            format!("{}  {}", pragma_unroll(tp.unroll_cols_by), self.step_comment(|s| matches!(s, Step::Unroll(Loop::Cols, _))))
        } else {
            String::new()
        };
        let tile_note = self.step_comment(|s| matches!(s, Step::RegisterTile(_)));
        let fence = self.d.compiler_fence();
        self.w.line("// One GEMM pass: out(i,j) = sum_k in(k,i) * B(k,j).");
        let tile_param = if tp.out.is_some() { format!(", {t}* tile") } else { String::new() };
        let head = self.out_head(format!(
            "{} void gemm_pass(const {t}* in, const {t}* bm, {t}* out, int tid{tile_param})",
            self.d.inline_device()
        ));
        let barrier = self.d.barrier();
        let write_note = self.step_comment(|s| matches!(s, Step::CacheWrite { .. }));
        let k = self.plan.request.k;
        let threads = self.plan.threads;
        self.w.block(head, "", |w| match (tp.map, tp.register_tile) {
            (ThreadMap::Elements, _) => {
                w.line(format!("{bind_note}: thread tid computes elements tid, tid + THREADS, ..."));
                w.block("for (int e = tid; e < K3; e += THREADS)", "", |w| {
                    w.line("const int i = e / K;  // output row");
                    w.line("const int j = e % K;  // output column: consecutive threads, consecutive stores");
                    w.line(format!("{t} sum = {zero};"));
                    if !unroll_k.is_empty() {
                        w.line(&unroll_k);
                    }
                    w.line(format!("for (int k = 0; k < K; ++k) sum = {fma}(in[k * K2 + i], bm[k * B_STRIDE + j], sum);"));
                    w.line("out[e] = sum;");
                });
            }
            (ThreadMap::Rows, true) => {
                w.line(format!("{bind_note}: thread tid owns output rows tid, tid + THREADS, ..."));
                let row_body = |w: &mut Writer, store: &str| {
                    w.line("// B is loop-invariant here; left free, the compiler hoists all K*K B loads into");
                    w.line("// registers and spills from K = 12 on. This fence keeps them inside the row loop.");
                    w.line(fence);
                    w.line(format!("{tile_note}: the whole output row accumulates in registers;"));
                    w.line("// the column loops are unrolled so acc[] is indexed by constants only.");
                    w.line(format!("{t} acc[K];"));
                    w.line("#pragma unroll");
                    w.line(format!("for (int j = 0; j < K; ++j) acc[j] = {zero};"));
                    if !unroll_k.is_empty() {
                        w.line(&unroll_k);
                    }
                    w.block("for (int k = 0; k < K; ++k)", "", |w| {
                        w.line(format!("const {t} a_ki = in[k * K2 + i];  // read once, used K times"));
                        w.line("#pragma unroll");
                        w.line(format!("for (int j = 0; j < K; ++j) acc[j] = {fma}(a_ki, bm[k * B_STRIDE + j], acc[j]);"));
                    });
                    w.line("#pragma unroll");
                    w.line(store);
                };
                if tp.out.is_none() {
                    w.block("for (int i = tid; i < K2; i += THREADS)", "", |w| {
                        row_body(w, "for (int j = 0; j < K; ++j) out[i * K + j] = acc[j];");
                    });
                    return;
                }
                // cache_write: a block-wide chunk of THREADS rows at a time goes through shared
                // memory; the chunk is contiguous in `out`, so the block stores it coalesced.
                let full_chunks = (k * k).is_multiple_of(threads);
                w.line(format!("{write_note}: rows are staged in shared memory, then stored"));
                w.line("// as one contiguous chunk: consecutive threads write consecutive addresses.");
                w.block("for (int i0 = 0; i0 < K2; i0 += THREADS)", "", |w| {
                    w.line("const int i = i0 + tid;");
                    let store = "for (int j = 0; j < K; ++j) tile[tid * OUT_STRIDE + j] = acc[j];";
                    if full_chunks {
                        row_body(w, store);
                    } else {
                        w.block("if (i < K2)", "", |w| row_body(w, store));
                    }
                    w.line(format!("{barrier}  // the chunk is complete in shared memory"));
                    if full_chunks {
                        // Left rolled on purpose: unrolled (trip count K), clang schedules all K
                        // LDS loads first and spills VGPRs on gfx1100 at K = 16.
                        w.line("for (int e = tid; e < THREADS * K; e += THREADS) out[i0 * K + e] = tile[(e / K) * OUT_STRIDE + e % K];");
                    } else {
                        w.line("const int rows = K2 - i0 < THREADS ? K2 - i0 : THREADS;");
                        w.line("for (int e = tid; e < rows * K; e += THREADS) out[i0 * K + e] = tile[(e / K) * OUT_STRIDE + e % K];");
                    }
                    w.line(format!("{barrier}  // the tile is free for the next chunk"));
                });
            }
            (ThreadMap::Tiles, _) => unreachable!("tensorized passes are emitted by tile_gemm_pass"),
            (ThreadMap::Rows, false) => {
                w.line(format!("{bind_note}: thread tid owns output rows tid, tid + THREADS, ..."));
                w.block("for (int i = tid; i < K2; i += THREADS)", "", |w| {
                    if !unroll_cols.is_empty() {
                        w.line(&unroll_cols);
                    }
                    w.block("for (int j = 0; j < K; ++j)", "", |w| {
                        w.line(format!("{t} sum = {zero};"));
                        if !unroll_k.is_empty() {
                            w.line(&unroll_k);
                        }
                        w.line(format!("for (int k = 0; k < K; ++k) sum = {fma}(in[k * K2 + i], bm[k * B_STRIDE + j], sum);"));
                        w.line("out[i * K + j] = sum;");
                    });
                });
            }
        });
    }
}

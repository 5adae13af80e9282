//! The rank sum of operator application (MADNESS's `SeparatedConvolution::apply`): per tensor,
//! C = α·Σ_μ s_μ · A ×₁ X_μ ×₂ Y_μ ×₃ Z_μ + β·C over the kernel's `ranks` terms.
//!
//! A is staged once, into a third shared buffer beside `fused`'s two intermediates. Each term
//! runs passes 0 and 1 through the intermediates as `fused` does; its pass 2 adds into output
//! tiles that each wave holds in registers across the terms (s_μ folded into Z_μ's fragments),
//! so C is stored once per tensor. One set of B fragments per lane: each pass's matrix is
//! loaded right after the pass before it, across the barrier between them.

use super::shared_layout::buffer_pitch;
use super::tile_pass::{TileMode, Variant};
use super::Emitter;
use crate::fragment::Fragment;
use crate::ir::Step;
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// The kernel of a rank sum, after [`Emitter::tile_constants`]: the pass functions, B's
    /// loader and scaling, `rank_sum_tensor`, `rank_sum_block` and the batch loop.
    pub(super) fn rank_sum_kernel(&mut self, entry: &str, tp: &TransformPlan, f: &Fragment) {
        let t = self.t();
        if tp.shared_buffers != 1 {
            self.w.line("constexpr int TILES_PER_WAVE = (ROW_TILES + WAVES - 1) / WAVES;  // output tiles a wave holds across the terms");
        }
        let v = self.tile_variants(tp);
        self.tile_pass_function(tp, f, v[0]);
        if v[1] != v[0] {
            self.tile_pass_function(tp, f, v[1]);
        }
        self.accumulating_pass(tp, f, v[2]);
        self.w.line("");
        self.b_loader(tp);
        self.scale_b_function(f);
        if tp.stage_terms > 0 {
            self.term_stage_helpers(tp);
        }
        if tp.restage_a {
            self.restage_helpers(tp);
        }
        let calls = [0, 1].map(|p| format!("{}({}, bm, {}, lane, wave);", v[p].name(), ["wa", "w0"][p], ["w0", "w1"][p]));
        let terms = if tp.restage_a {
            self.restaged_terms_loop(tp, v.map(|x| x.name()))
        } else if tp.stage_terms > 0 {
            self.staged_terms_loop(&calls)
        } else {
            self.loaded_terms_loop(&calls)
        };
        self.rank_sum_tensor_function(tp, &terms);
        self.rank_sum_block_function(tp);
        let ws_note = self.step_comment(|s| matches!(s, Step::Workspace(_)));
        let pitch = buffer_pitch(tp, self.plan.request.k);
        let (a_n, c_n) = (self.tensor_at('a', "n"), self.c_out("n"));
        let prologue = self.kernel_prologue(tp);
        let buffers = rank_sum_buffers(tp);
        self.w.block(self.kernel_signature(entry), "", |w| {
            w.lines(&prologue);
            if tp.restage_a {
                w.line(format!("{ws_note}: the two intermediates stay in shared memory, A in one of them."));
            } else {
                w.line(format!("{ws_note}: the two intermediates and the staged tensor stay in shared memory."));
            }
            w.line(format!("{t}* w0 = w_shared;"));
            w.line(format!("{t}* w1 = w0 + {pitch};"));
            if !tp.restage_a {
                w.line(format!("{t}* wa = w1 + {pitch};"));
            }
            w.line("// Blocks walk the batch: block b transforms tensors b, b + nblocks, b + 2 nblocks, ...");
            w.block("for (int n = block; n < nfuncs; n += nblocks)", "", |w| {
                w.line(format!("rank_sum_tensor({a_n}, b, ranks, {c_n}, {buffers}, tid);"));
            });
        });
    }

    /// Pass 2 of a term, adding into the held tiles (`gemm_pass_accumulate`), and the store of
    /// those tiles into C once every term is in (`store_accumulated`).
    fn accumulating_pass(&mut self, tp: &TransformPlan, f: &Fragment, v: Variant) {
        let t = self.t();
        let inline = self.d.inline_device();
        let b_param = self.pass_b_param(tp, f);
        let bind = self.step_comment(|s| matches!(s, Step::Bind(_)));
        let acc = self.d.mma_acc_decl(f, "Acc", "TILES_PER_WAVE][N_FRAGS");
        let add = self.tile_body(tp, f, v, TileMode::Accumulate);
        let store = self.tile_body(tp, f, v, TileMode::Store);
        let walk = |w: &mut super::writer::Writer, body: &dyn Fn(&mut super::writer::Writer)| {
            w.line("#pragma unroll");
            w.block("for (int t = 0; t < TILES_PER_WAVE; ++t)", "", |w| {
                w.line("const int tile = wave + t * WAVES;");
                w.block("if (tile < ROW_TILES)", "", body);
            });
        };
        self.w.line("");
        self.w.line("// The output tiles one wave holds across the terms: tile wave + t * WAVES in acc_all[t].");
        self.w.line(format!("typedef {acc}"));
        self.w.line("");
        self.w.line("// The last pass of one term: the shared intermediate (padded rows) times s_mu Z_mu, added");
        self.w.line("// to the output tiles this wave holds.");
        self.w.block(format!("{inline} void gemm_pass_accumulate(const {t}* in, {b_param}, Acc& acc_all, int lane, int wave)"), "", |w| {
            w.line(format!("{bind}: wave w owns row tiles w, w + WAVES, ... (FM rows x all columns each)"));
            walk(w, &*add);
        });
        self.w.line("");
        self.w.line("// Every term is in: the held tiles go to C.");
        let head = self.out_head(format!("{inline} void store_accumulated(const Acc& acc_all, {t}* out, int lane, int wave)"));
        self.w.block(head, "", |w| walk(w, &*store));
    }

    /// `scale_b`: s_μ folded into a term's Z fragments, so the accumulation adds s_μ·T_μ.
    fn scale_b_function(&mut self, f: &Fragment) {
        let t = self.t();
        let ty = self.d.mma_operand_type(f, self.plan.request.dtype, f.b.regs);
        self.w.block(format!("{} void scale_b(BFrags& b_frag, {t} s)", self.d.inline_device()), "", |w| {
            w.line("#pragma unroll");
            w.line(format!("for (int ks = 0; ks < K_STEPS; ++ks) for (int nf = 0; nf < N_FRAGS; ++nf) b_frag[ks][nf] = ({ty})(s * b_frag[ks][nf]);"));
        });
    }

    /// `rank_sum_tensor`: one tensor, every term (`terms`: the loop over them and what it
    /// declares), with the calling block's threads.
    fn rank_sum_tensor_function(&mut self, tp: &TransformPlan, terms: &[String]) {
        let t = self.t();
        let barrier = self.d.barrier();
        let staged = tp.stage_terms > 0;
        let stage = self.whole_tensor_stage(if tp.restage_a { "w0" } else { "wa" });
        let c_type = self.c_param_type();
        let zero = self.plan.request.dtype.zero();
        let c_regs = match self.plan.body {
            crate::plan::Body::Transform(tp) => tp.fragment.map_or(1, |f| f.c.regs),
            _ => 1,
        };
        let buffers = match () {
            _ if tp.restage_a => format!("{t}* w0, {t}* w1"),
            _ if staged => format!("{t}* w0, {t}* w1, {t}* wa, {t}* ts"),
            _ => format!("{t}* w0, {t}* w1, {t}* wa"),
        };
        let head = format!("{} void rank_sum_tensor(const {t}* a_n, const {t}* b, int ranks, {c_type} c_n, {buffers}, int tid)", self.d.inline_device());
        let first_terms = if staged { self.first_terms_stage() } else { Vec::new() };
        let next = if tp.restage_a { "w0, which the last pass 2 may have read" } else { "wa; its pass 1 writes w1, which the last pass 2 read" };
        self.w.line("");
        self.w.line("// One tensor, every term, with the calling block's THREADS threads: a_n -> c_n. b holds,");
        self.w.line("// per term mu, X_mu, Y_mu, Z_mu (K2 each), then the ranks weights s_mu.");
        self.w.block(head, "", |w| {
            w.line("const int lane = tid % LANES;");
            w.line("const int wave = tid / LANES;");
            w.lines(&first_terms.join("\n"));
            w.lines(&stage);
            w.line(format!("const {t}* s = b + (long long)ranks * 3 * K2;  // the weights"));
            w.line("Acc acc_all;");
            w.line("#pragma unroll");
            w.line(format!("for (int t = 0; t < TILES_PER_WAVE; ++t) for (int nf = 0; nf < N_FRAGS; ++nf) for (int r = 0; r < {c_regs}; ++r) acc_all[t][nf][r] = {zero};"));
            w.lines(&terms.join("\n"));
            w.line(super::operation::beta_dispatch("store_accumulated(acc_all, {out}, lane, wave);").replace("{out}", "c_n"));
            w.line(format!("{barrier}  // the next tensor is staged into {next}"));
        });
    }

    /// The terms' loop of `rank_sum_tensor` without `stage_terms(N)`: each pass's matrix read
    /// from device memory into the one set of fragments. `calls` are passes 0 and 1.
    fn loaded_terms_loop(&self, calls: &[String; 2]) -> Vec<String> {
        let t = self.t();
        let barrier = self.d.barrier();
        vec![
            "// One set of B fragments: each pass's matrix is loaded as soon as the pass before has".to_string(),
            "// used the set, so the load overlaps the barrier's wait (every block reads the same".to_string(),
            "// matrices: they stay in the caches).".to_string(),
            "BFrags bm;".to_string(),
            "if (ranks > 0) load_b(b, tid, bm);  // X_0".to_string(),
            "for (int mu = 0; mu < ranks; ++mu) {".to_string(),
            format!("    const {t}* m = b + (long long)mu * 3 * K2;  // X_mu, Y_mu, Z_mu"),
        ]
        .into_iter()
        .chain(self.first_passes_of_a_term(calls))
        .chain([
            format!("    {barrier}  // pass 2 reads w1; the next term's pass 0 writes w0, which nothing reads now"),
            "    gemm_pass_accumulate(w1, bm, acc_all, lane, wave);  // pass 2: w1 -> the held tiles".to_string(),
            "    if (mu + 1 < ranks) load_b(m + 3 * K2, tid, bm);  // X_mu+1".to_string(),
            "}".to_string(),
        ])
        .collect()
    }

    /// A term's passes 0 and 1 (`calls`, wa -> w0 -> w1) in the terms' loop, with the loads of
    /// Y_mu and s_mu Z_mu from `m` after the pass before each, up to pass 2's barrier.
    pub(super) fn first_passes_of_a_term(&self, calls: &[String; 2]) -> [String; 6] {
        let barrier = self.d.barrier();
        [
            format!("    {}  // pass 0: A (staged in wa) -> w0", calls[0]),
            "    load_b(m + K2, tid, bm);  // Y_mu".to_string(),
            format!("    {barrier}  // pass 1 reads rows other threads wrote"),
            format!("    {}  // pass 1: w0 -> w1", calls[1]),
            "    load_b(m + 2 * K2, tid, bm);  // Z_mu, scaled by s_mu".to_string(),
            "    scale_b(bm, s[mu]);".to_string(),
        ]
    }

    /// `rank_sum_block`: the block-level entry for callers' own kernels, as `transform_block`.
    fn rank_sum_block_function(&mut self, tp: &TransformPlan) {
        let t = self.t();
        let pitch = buffer_pitch(tp, self.plan.request.k);
        let mut body = vec![format!("{t}* w0 = static_cast<{t}*>(smem) + W_SHARED_AT;"), format!("{t}* w1 = w0 + {pitch};")];
        if !tp.restage_a {
            body.push(format!("{t}* wa = w1 + {pitch};"));
        }
        body.push("(void)workspace;".to_string());
        let slots = if tp.stage_terms > 0 { vec![format!("{t}* term_slots = static_cast<{t}*>(smem) + TERM_SLOTS_AT;")] } else { Vec::new() };
        let call = format!("rank_sum_tensor(a_n, b, ranks, COut{{c_n, alpha, beta}}, {}, tid);", rank_sum_buffers(tp));
        let body = [&body[..], &slots, &[call]].concat();
        self.rank_sum_block_with(tp, "0", &body);
    }

    /// `rank_sum_block` around `body` (which has `tid`, `a_n`, `b`, `ranks`, `c_n`, `workspace`,
    /// `smem`, `alpha`, `beta`): the shared layout's constants, then the function.
    pub(super) fn rank_sum_block_with(&mut self, tp: &TransformPlan, workspace_elems: &str, body: &[String]) {
        let t = self.t();
        let arrays = self.shared_arrays(tp);
        let tid = self.d.thread_index();
        self.block_needs("rank_sum_block", &arrays, workspace_elems);
        self.w.line("");
        self.w.line("// c_n = alpha * sum_mu s_mu a_n x1 X_mu x2 Y_mu x3 Z_mu + beta * c_n (K^3 elements each, device or");
        if tp.restage_a && self.plan.request.arch.vendor == crate::Vendor::Nvidia {
            self.w.line("// shared memory, but a_n in device memory: it is copied with cp.async for every term; a_n");
            self.w.line("// 16-byte aligned) with the calling block: every thread of a 1-D block of");
        } else {
            self.w.line("// shared memory; a_n 16-byte aligned) with the calling block: every thread of a 1-D block of");
        }
        self.w.line("// exactly THREADS threads calls it. b: per term X_mu, Y_mu, Z_mu (K x K, row-major), then the");
        self.w.line("// ranks weights. smem: SHARED_BYTES bytes, 32-byte aligned; workspace: WORKSPACE_ELEMS elements.");
        self.w.line("// Ends with a barrier.");
        let head = format!(
            "{} void rank_sum_block(const {t}* a_n, const {t}* b, int ranks, {t}* c_n, {t}* workspace, void* smem, double alpha, double beta)",
            self.d.inline_device()
        );
        self.w.block(head, "", |w| {
            w.line(format!("const int tid = {tid};"));
            for line in body {
                w.line(line);
            }
        });
    }
}

/// The shared buffers a kernel passes to `rank_sum_tensor`.
fn rank_sum_buffers(tp: &TransformPlan) -> &'static str {
    match () {
        _ if tp.restage_a => "w0, w1",
        _ if tp.stage_terms > 0 => "w0, w1, wa, term_slots",
        _ => "w0, w1, wa",
    }
}

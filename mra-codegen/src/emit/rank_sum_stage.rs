//! Where a rank sum's operands wait in shared memory, the schedule's choices:
//! - `stage_terms(N)`: its matrices in a ring of N slots. Term j's X, Y and Z go to slot j % N,
//!   copied N - 1 terms ahead of the passes that read them (PTX `cp.async` on NVIDIA, one commit
//!   group per term; plain loads and stores on AMD), so a pass's fragments come from shared
//!   memory instead of waiting on L2 across the barrier before it.
//! - `restage_a(1)`: A copied again for every term, during the term before's last pass, into the
//!   intermediate that pass does not read; the two intermediates swap roles every term, and no
//!   third buffer holds A (larger K fit).

use super::Emitter;
use crate::ir::Step;
use crate::plan::TransformPlan;
use crate::Vendor;

impl Emitter<'_> {
    /// The ring's constants, its copy helpers and `stage_term` (before `rank_sum_tensor`).
    pub(super) fn term_stage_helpers(&mut self, tp: &TransformPlan) {
        let t = self.t();
        let note = self.step_comment(|s| matches!(s, Step::StageTerms(_)));
        let inline = self.d.inline_device();
        let nvidia = self.plan.request.arch.vendor == Vendor::Nvidia;
        self.w.line("");
        self.w.line(format!("{note}: the matrices of STAGE_TERMS terms in shared memory, one slot each."));
        self.w.line(format!("constexpr int STAGE_TERMS = {};", tp.stage_terms));
        self.w.line(format!("constexpr int TERM_SLOT = {};  // X, Y, Z: 3 K2 elements, rounded up to 4 (16-byte aligned slots)", tp.staged_term_elems(self.plan.request.k)));
        if nvidia {
            self.w.line("// Asynchronous global -> shared copies of one element (PTX cp.async, sm_80+): a term's");
            self.w.line("// matrices start at an odd element at odd K, so no wider access is aligned for every term.");
            for line in super::pipeline::cp_async_helpers("mra_cp_async", self.plan.request.dtype.bytes()).lines() {
                self.w.line(line);
            }
            self.w.line("// All but the newest STAGE_TERMS - 2 commit groups complete: the next term's copies are in.");
            self.w.line(format!("{inline} void mra_wait_next_term() {{ asm volatile(\"cp.async.wait_group {};\" ::: \"memory\"); }}", tp.stage_terms - 2));
            self.w.line("// All but the newest STAGE_TERMS - 1: the first term's copies are in.");
            self.w.line(format!("{inline} void mra_wait_first_term() {{ asm volatile(\"cp.async.wait_group {};\" ::: \"memory\"); }}", tp.stage_terms - 1));
        }
        self.w.line("");
        self.w.line("// Term j's X, Y, Z (from = b + j * 3 * K2) into its slot, by the calling block's threads;");
        if nvidia {
            self.w.line("// one commit group per call, so the waits count terms.");
        } else {
            self.w.line("// the barrier after a pass publishes them (AMD: plain loads and stores).");
        }
        self.w.block(format!("{inline} void stage_term(const {t}* from, {t}* to, int tid)"), "", |w| {
            if nvidia {
                w.line("for (int e = tid; e < 3 * K2; e += THREADS) mra_cp_async(to + e, from + e);");
            } else {
                w.line("for (int e = tid; e < 3 * K2; e += THREADS) to[e] = from[e];");
            }
        });
        if nvidia {
            self.w.line("// An empty group where no term is left, so every iteration commits one.");
            self.w.line(format!("{inline} void end_term_group() {{ mra_cp_async_commit(); }}"));
        } else {
            self.w.line(format!("{inline} void end_term_group() {{}}"));
            self.w.line(format!("{inline} void mra_wait_next_term() {{}}"));
            self.w.line(format!("{inline} void mra_wait_first_term() {{}}"));
        }
    }

    /// The copies of the first STAGE_TERMS terms, issued before A is staged so they overlap it.
    pub(super) fn first_terms_stage(&self) -> Vec<String> {
        vec![
            "// The first STAGE_TERMS terms' matrices go to their slots while A is staged; each term then".to_string(),
            "// refills the slot it has finished reading with the term STAGE_TERMS after it.".to_string(),
            "for (int j = 0; j < STAGE_TERMS; ++j) {".to_string(),
            "    if (j < ranks) stage_term(b + (long long)j * 3 * K2, ts + j * TERM_SLOT, tid);".to_string(),
            "    end_term_group();".to_string(),
            "}".to_string(),
        ]
    }

    /// The terms' loop of `rank_sum_tensor` with the ring, after A is staged: `calls` are
    /// passes 0 and 1.
    pub(super) fn staged_terms_loop(&self, calls: &[String; 2]) -> Vec<String> {
        let t = self.t();
        let barrier = self.d.barrier();
        vec![
            "mra_wait_first_term();".to_string(),
            format!("{barrier}  // term 0's slot is complete"),
            "BFrags bm;".to_string(),
            "if (ranks > 0) load_b(ts, tid, bm);  // X_0".to_string(),
            "for (int mu = 0; mu < ranks; ++mu) {".to_string(),
            format!("    const {t}* m = ts + (mu % STAGE_TERMS) * TERM_SLOT;  // X_mu, Y_mu, Z_mu in shared memory"),
        ]
        .into_iter()
        .chain(self.first_passes_of_a_term(calls))
        .chain([
            "    mra_wait_next_term();  // this thread's copies of term mu + 1".to_string(),
            format!("    {barrier}  // pass 2 reads w1; term mu + 1's slot is complete; nothing reads term mu's any more"),
            "    if (mu + STAGE_TERMS < ranks) stage_term(b + (long long)(mu + STAGE_TERMS) * 3 * K2, ts + (mu % STAGE_TERMS) * TERM_SLOT, tid);".to_string(),
            "    end_term_group();".to_string(),
            "    gemm_pass_accumulate(w1, bm, acc_all, lane, wave);  // pass 2: w1 -> the held tiles".to_string(),
            "    if (mu + 1 < ranks) load_b(ts + ((mu + 1) % STAGE_TERMS) * TERM_SLOT, tid, bm);  // X_mu+1".to_string(),
            "}".to_string(),
        ])
        .collect()
    }

    /// The helpers of `restage_a(1)`'s copies of A (before `rank_sum_tensor`): NVIDIA's
    /// `cp.async` (none on AMD, whose copies are loads and stores).
    pub(super) fn restage_helpers(&mut self, tp: &TransformPlan) {
        if self.plan.request.arch.vendor != Vendor::Nvidia {
            return;
        }
        let note = self.step_comment(|s| matches!(s, Step::RestageA(_)));
        let bytes = self.async_width(tp) * self.plan.request.dtype.bytes();
        self.w.line("");
        self.w.line(format!("{note}: asynchronous global -> shared copies of A (PTX cp.async, sm_80+)."));
        for line in super::pipeline::cp_async_helpers("mra_cp_async", bytes).lines() {
            self.w.line(line);
        }
    }

    /// `rank_sum_tensor`'s body from A's first staging on, with `restage_a(1)`: `p` holds the
    /// term's A, pass 0 writes `q`, pass 1 `p`, pass 2 reads `p` while A goes to `q`.
    pub(super) fn restaged_terms_loop(&self, tp: &TransformPlan, names: [&str; 3]) -> Vec<String> {
        let t = self.t();
        let barrier = self.d.barrier();
        let note = self.step_comment(|s| matches!(s, Step::RestageA(_)));
        let copy = if self.plan.request.arch.vendor == Vendor::Nvidia {
            self.async_tensor_copies(tp, "a_n", "q") + "mra_cp_async_commit();\n"
        } else {
            self.whole_tensor_copy("q")
        };
        let wait = if self.plan.request.arch.vendor == Vendor::Nvidia { "mra_cp_async_wait_all();  // this thread's copies of A" } else { "// (AMD: the copies were loads and stores)" };
        let [pass0, pass1, _] = names;
        let mut s = vec![
            format!("{note}: A is copied again before every term, during the last pass of the"),
            "// term before, into the intermediate that pass does not read; the two swap roles.".to_string(),
            format!("{t}* p = w0;  // A for this term's pass 0, then pass 1's output, read by pass 2"),
            format!("{t}* q = w1;  // pass 0's output, then the next term's A"),
            "BFrags bm;".to_string(),
            "if (ranks > 0) load_b(b, tid, bm);  // X_0".to_string(),
            "for (int mu = 0; mu < ranks; ++mu) {".to_string(),
            format!("    const {t}* m = b + (long long)mu * 3 * K2;  // X_mu, Y_mu, Z_mu"),
            format!("    {pass0}(p, bm, q, lane, wave);  // pass 0: A -> q"),
            "    load_b(m + K2, tid, bm);  // Y_mu".to_string(),
            format!("    {barrier}  // pass 1 reads rows other threads wrote, and writes p, which pass 0 read"),
            format!("    {pass1}(q, bm, p, lane, wave);  // pass 1: q -> p"),
            "    load_b(m + 2 * K2, tid, bm);  // Z_mu, scaled by s_mu".to_string(),
            "    scale_b(bm, s[mu]);".to_string(),
            format!("    {barrier}  // pass 2 reads p; nothing reads q now"),
            "    if (mu + 1 < ranks) {  // the next term's A, while pass 2 runs".to_string(),
        ];
        s.extend(copy.lines().map(|l| format!("        {l}")));
        s.extend([
            "    }".to_string(),
            "    gemm_pass_accumulate(p, bm, acc_all, lane, wave);  // pass 2: p -> the held tiles".to_string(),
            "    if (mu + 1 < ranks) load_b(m + 3 * K2, tid, bm);  // X_mu+1".to_string(),
            format!("    {wait}"),
            format!("    {barrier}  // q holds A; the next pass 0 writes p, which this pass 2 read"),
            format!("    {t}* r = p; p = q; q = r;"),
            "}".to_string(),
        ]);
        s
    }
}

//! The rank sum on the thread-mapped levels (L1, L2, L3: FMAs, no matrix instructions, so also
//! archs without FP64 matrix cores): each term runs the level's three passes as the transform
//! does, A read where it lies, B (X_μ, Y_μ, Z_μ) loaded or staged by each pass; pass 2 adds s_μ
//! times its output into an accumulator of K³ values beside the two intermediates (in the
//! workspace where they are), and C = α·(the sum) + β·C is written once per tensor.

use super::shared_layout::{scratch_args, scratch_names};
use super::Emitter;
use crate::ir::{Memory, Step};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// The kernel of a thread-mapped rank sum, after `gemm_pass` and `load_b`: `passes` are the
    /// three calls with `{in}`/`{out}` placeholders.
    pub(super) fn rank_sum_thread_kernel(&mut self, entry: &str, tp: &TransformPlan, passes: &[String; 3]) {
        let t = self.t();
        let k = self.plan.request.k;
        let inline = self.d.inline_device();
        let barrier = self.d.barrier();
        self.w.line("");
        self.w.line("// The sum of the terms: pass 2 of term mu stores s_mu times its output added to it.");
        self.w.lines(&super::operation::output_type("AccOut", t, inline, &format!("{t} s"), "s", "*q += s * v;"));
        self.w.line("");
        self.w.line("// Every term is in: the sum goes to C.");
        self.w.block(format!("template <class Out>\n{inline} void store_sum(const {t}* acc, Out out, int tid)"), "", |w| {
            w.line("for (int e = tid; e < K3; e += THREADS) out[e] = acc[e];");
        });
        let scratch: String = scratch_names(tp, k).iter().map(|n| format!(", {t}* {n}")).collect();
        let scratch_call = scratch_args(tp, k);
        let call = |p: usize, input: &str, out: &str| passes[p].replace("{in}", input).replace("{out}", out);
        let store = super::operation::beta_dispatch("store_sum(wacc, {out}, tid);").replace("{out}", "c_n");
        self.w.line("");
        self.w.line("// One tensor, every term, with the calling block's THREADS threads: a_n -> c_n. b holds,");
        self.w.line("// per term mu, X_mu, Y_mu, Z_mu (K2 each), then the ranks weights s_mu.");
        let head = format!(
            "{inline} void rank_sum_tensor(const {t}* a_n, const {t}* b, {t}* b_shared, int ranks, COut c_n, {t}* w0, {t}* w1, {t}* wacc, int tid{scratch})"
        );
        self.w.block(head, "", |w| {
            w.line("for (int e = tid; e < K3; e += THREADS) wacc[e] = 0;  // added to after two barriers");
            w.line(format!("const {t}* s = b + (long long)ranks * 3 * K2;  // the weights"));
            w.block("for (int mu = 0; mu < ranks; ++mu)", "", |w| {
                w.line(format!("const {t}* m = b + (long long)mu * 3 * K2;  // X_mu, Y_mu, Z_mu"));
                w.line(format!("const {t}* bm = load_b(m, b_shared, tid);"));
                w.line(format!("{}  // pass 0: A -> w0", call(0, "a_n", "w0")));
                w.line(format!("{barrier}  // pass 1 reads rows other threads wrote; B may be restaged"));
                w.line("bm = load_b(m + K2, b_shared, tid);");
                w.line(format!("{}  // pass 1: w0 -> w1", call(1, "w0", "w1")));
                w.line(barrier);
                w.line("bm = load_b(m + 2 * K2, b_shared, tid);");
                w.line(format!("{}  // pass 2: w1 -> the sum, times s_mu", call(2, "w1", "AccOut{wacc, s[mu]}")));
                w.line(format!("{barrier}  // the next term's pass 0 writes w0; B may be restaged"));
            });
            w.line(store.as_str());
            w.line(format!("{barrier}  // the next tensor zeroes the sum this store reads"));
        });
        // The block-level entry: the caller's workspace or shared memory holds the buffers.
        let shared_ws = tp.workspace == Memory::Shared;
        let ws = if shared_ws { "0" } else { "3 * K3" };
        let b_shared = if tp.b.memory == Memory::Shared { "b_shared" } else { "nullptr" };
        let mut body = Vec::new();
        body.push(format!("{t}* sm = static_cast<{t}*>(smem);"));
        body.push("(void)sm;".to_string());
        for (name, _) in self.shared_arrays(tp) {
            body.push(format!("{t}* {name} = sm + {}_AT;", name.to_uppercase()));
        }
        body.push(if shared_ws { format!("{t}* w0 = w_shared;") } else { format!("{t}* w0 = workspace;") });
        if shared_ws {
            body.push("(void)workspace;".into());
        }
        body.push(format!("rank_sum_tensor(a_n, b, {b_shared}, ranks, COut{{c_n, alpha, beta}}, w0, w0 + K3, w0 + 2 * K3, tid{scratch_call});"));
        self.rank_sum_block_with(tp, ws, &body);
        let ws_note = self.step_comment(|s| matches!(s, Step::Workspace(_)));
        let (a_n, c_n) = (self.tensor_at('a', "n"), self.c_out("n"));
        let prologue = self.kernel_prologue(tp);
        self.w.block(self.kernel_signature(entry), "", |w| {
            w.lines(&prologue);
            if shared_ws {
                w.line(format!("{ws_note}: the two intermediates and the sum stay in shared memory."));
                w.line(format!("{t}* w0 = w_shared;"));
            } else {
                let why = if ws_note.is_empty() { "// workspace(global), the default".to_string() } else { ws_note.clone() };
                w.line(format!("{why}: this block's two K^3 intermediates and the sum in device memory."));
                w.line(format!("{t}* w0 = workspace + (long long)block * 3 * K3;"));
            }
            w.line("// Blocks walk the batch: block b transforms tensors b, b + nblocks, b + 2 nblocks, ...");
            w.block("for (int n = block; n < nfuncs; n += nblocks)", "", |w| {
                w.line(format!("rank_sum_tensor({a_n}, b, {b_shared}, ranks, {c_n}, w0, w0 + K3, w0 + 2 * K3, tid{scratch_call});"));
            });
        });
    }
}

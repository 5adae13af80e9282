//! `pipeline(2)`: the block's next tensor is copied into shared memory asynchronously
//! (PTX `cp.async`, NVIDIA sm_80+) while the current tensor's last pass runs. The two shared
//! buffers swap roles every tensor: pass 2 reads only the buffer pass 1 wrote, so the other
//! one is free from the barrier after pass 1 on.

use super::Emitter;
use crate::ir::Step;
use crate::plan::TransformPlan;

impl Emitter<'_> {
    /// The elements per asynchronous copy: 16 bytes where the tensors and padded rows keep
    /// every vector aligned and inside one row, else one element (`cp.async` takes 4, 8, 16).
    fn async_width(&self, tp: &TransformPlan) -> u32 {
        let k = self.plan.request.k;
        let width = 16 / self.plan.request.dtype.bytes();
        let aligned = (k * k * k) % width == 0 && (k * k) % width == 0 && tp.shared_row_pad() % width == 0;
        if aligned { width } else { 1 }
    }

    /// Device helpers for the asynchronous copies (before the kernel).
    pub(super) fn async_copy_helpers(&self, tp: &TransformPlan) -> String {
        let note = self.step_comment(|s| matches!(s, Step::Pipeline(_)));
        let bytes = self.async_width(tp) * self.plan.request.dtype.bytes();
        let cache = if bytes == 16 { "cg" } else { "ca" };
        format!(
            "{note}: asynchronous global -> shared copies (PTX cp.async, sm_80+).\n\
             __device__ __forceinline__ void mra_cp_async(void* dst, const void* src) {{\n\
             \x20   asm volatile(\"{{ .reg .u64 s, g; .reg .u32 d;\\n\\t\"\n\
             \x20                \"cvta.to.shared.u64 s, %0; cvt.u32.u64 d, s; cvta.to.global.u64 g, %1;\\n\\t\"\n\
             \x20                \"cp.async.{cache}.shared.global [d], [g], {bytes}; }}\" :: \"l\"(dst), \"l\"(src) : \"memory\");\n\
             }}\n\
             __device__ __forceinline__ void mra_cp_async_commit() {{ asm volatile(\"cp.async.commit_group;\" ::: \"memory\"); }}\n\
             __device__ __forceinline__ void mra_cp_async_wait_all() {{ asm volatile(\"cp.async.wait_all;\" ::: \"memory\"); }}\n"
        )
    }

    /// Issues the copies of the tensor at `src` into the padded buffer `dst` (one commit group).
    fn async_tensor_stage(&self, tp: &TransformPlan, src: &str, dst: &str) -> String {
        let width = self.async_width(tp);
        let mut s = if width == 1 {
            "for (int x = tid; x < K3; x += THREADS) {  // element x goes to row x / K2 of the padded layout\n".to_string()
        } else {
            format!("for (int e = tid; e < K3 / {width}; e += THREADS) {{\n    const int x = e * {width};  // element x goes to row x / K2 of the padded layout\n")
        };
        s += &format!("    mra_cp_async({dst} + (x / K2) * W_STRIDE + x % K2, {src} + x);\n}}\n");
        s += "mra_cp_async_commit();\n";
        s
    }

    /// The batch loop of a pipelined fused level; `passes` are the three pass calls with
    /// `{in}`/`{out}` placeholders.
    pub(super) fn pipelined_batch_loop(&self, tp: &TransformPlan, passes: &[String; 3]) -> String {
        let t = self.t();
        let barrier = self.d.barrier();
        let note = self.step_comment(|s| matches!(s, Step::Pipeline(_)));
        let call = |i: usize, input: &str, out: &str| passes[i].replace("{in}", input).replace("{out}", out);
        let indent = |text: String, spaces: usize| text.lines().map(|l| format!("{}{l}\n", " ".repeat(spaces))).collect::<String>();
        // buffers(3): the next tensor has a buffer of its own (wn), so its copy is issued before
        // pass 0; with two, it goes to wb once pass 1 has read it.
        let third = tp.shared_buffers == 3;
        let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
        let mut s = format!("{note}: two tensors in flight per block; wa holds the current one, wb receives the next.\n");
        s += &format!("{t}* wa = w1;\n{t}* wb = w0;\n");
        if third {
            s = format!("{note}: two tensors in flight per block; wa holds the current one, wn receives the next.\n");
            s += &format!("{t}* wa = w1;\n{t}* wb = w0;\n{t}* wn = w1 + K * W_STRIDE;  {buffers}: the third buffer\n");
        }
        s += "// Blocks walk the batch: block b transforms tensors b, b + nblocks, b + 2 nblocks, ...\n";
        s += "if (block < nfuncs) {\n";
        s += &indent(self.async_tensor_stage(tp, "(a + (long long)block * K3)", "wa"), 4);
        s += "    mra_cp_async_wait_all();\n}\n";
        s += &format!("{barrier}  // the first tensor is staged\n");
        s += "for (int n = block; n < nfuncs; n += nblocks) {\n";
        s += &format!("    {t}* c_n = c + (long long)n * K3;\n");
        if third {
            s += "    if (n + nblocks < nfuncs) {  // wn was last read before the barrier ending the previous tensor\n";
            s += &indent(self.async_tensor_stage(tp, "(a + (long long)(n + nblocks) * K3)", "wn"), 8);
            s += "    }\n";
        }
        s += &format!("    {}  // pass 0: A (in wa) -> wb\n", call(0, "wa", "wb"));
        s += &format!("    {barrier}\n");
        s += &format!("    {}  // pass 1: wb -> wa\n", call(1, "wb", "wa"));
        if third {
            s += &format!("    {barrier}\n");
        } else {
            s += &format!("    {barrier}  // wb is free: pass 2 reads only wa\n");
            s += "    if (n + nblocks < nfuncs) {\n";
            s += &indent(self.async_tensor_stage(tp, "(a + (long long)(n + nblocks) * K3)", "wb"), 8);
            s += "    }\n";
        }
        s += &format!("    {}  // pass 2: wa -> C, while the next tensor arrives\n", call(2, "wa", "c_n"));
        s += "    mra_cp_async_wait_all();\n";
        if third {
            s += &format!("    {barrier}  // the next tensor is in wn for every thread; pass 2 is done with wa\n");
            s += &format!("    {t}* swap = wa;\n    wa = wn;\n    wn = swap;\n");
        } else {
            s += &format!("    {barrier}  // the next tensor is in wb for every thread; pass 2 is done with wa\n");
            s += &format!("    {t}* swap = wa;\n    wa = wb;\n    wb = swap;\n");
        }
        s += "}\n";
        s
    }
}

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
    pub(super) fn async_width(&self, tp: &TransformPlan) -> u32 {
        let k = self.plan.request.k;
        let width = 16 / self.plan.request.dtype.bytes();
        let aligned = (k * k * k).is_multiple_of(width) && (k * k).is_multiple_of(width) && tp.shared_row_pad().is_multiple_of(width);
        if aligned { width } else { 1 }
    }

    /// Device helpers for the asynchronous copies (before the kernel).
    pub(super) fn async_copy_helpers(&self, tp: &TransformPlan) -> String {
        if tp.bulk_copy {
            return self.bulk_copy_helpers();
        }
        let bulk_note = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
        let bulk_note = if bulk_note.is_empty() { bulk_note } else { format!("{bulk_note}: 16-byte cp.async by every thread\n") };
        let note = self.step_comment(|s| matches!(s, Step::Pipeline(_)));
        let bytes = self.async_width(tp) * self.plan.request.dtype.bytes();
        format!(
            "{bulk_note}{note}: asynchronous global -> shared copies (PTX cp.async, sm_80+).\n{}\
             // All but the newest {ahead} commit groups complete.\n\
             __device__ __forceinline__ void mra_cp_async_wait_ahead() {{ asm volatile(\"cp.async.wait_group {ahead};\" ::: \"memory\"); }}\n{groups}",
            cp_async_helpers("mra_cp_async", bytes),
            ahead = tp.pipeline - 1,
            groups = if tp.tensors > 1 { self.group_barrier_helper() } else { String::new() }
        )
    }

    /// `bulk_copy(1)`: bulk asynchronous copies completing on an mbarrier per buffer.
    fn bulk_copy_helpers(&self) -> String {
        let note = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
        let mut s = format!("{note}: bulk asynchronous copies (PTX cp.async.bulk, the TMA unit of sm_90),\n");
        if self.shifted() {
            s += "// one per row of K² - 1 values (odd K: the row's one value off the 16-byte grid goes by an\n";
            s += "// 8-byte cp.async), completing on the mbarrier of the buffer they fill.\n";
        } else {
            s += "// one per row of K² values, completing on the mbarrier of the buffer they fill.\n";
        }
        s += &super::tma::mbarrier_helpers();
        s += &super::tma::bulk_load_helpers();
        if self.shifted() {
            s += &cp_async_helpers("mra_cp_async8", 8);
        }
        s
    }

    /// `bulk_copy(1)` at odd K ([`TransformPlan::shifted_rows`]).
    fn shifted(&self) -> bool {
        matches!(self.plan.body, crate::plan::Body::Transform(tp) if tp.shifted_rows(self.plan.request.k))
    }

    /// The staged tensor at its own odd stride ([`TransformPlan::split_staged_stride`]).
    fn split_staged(&self) -> bool {
        matches!(self.plan.body, crate::plan::Body::Transform(tp) if tp.split_staged_stride(self.plan.request.k))
    }

    /// `bulk_copy(1)`: warp 0 starts the copy of the tensor at `src` into buffer `dst`, one
    /// bulk copy per row, on mbarrier `bar` (after the barrier that freed `dst`: the fence orders
    /// the block's generic accesses of it before the copies' writes). With `stack(N)`: the `cnt`
    /// tensors of a group, one bulk copy per tensor and row (tensor t's row r at r · W_STRIDE + t · K2).
    fn bulk_tensor_stage(&self, tp: &TransformPlan, src: &str, dst: &str, bar: &str) -> String {
        let row = format!("(unsigned)(K2 * sizeof(*{src})), {bar});");
        let (tensors, copies) = if tp.stack > 1 {
            (
                "cnt * K3",
                format!(
                    "    for (int e = lane; e < cnt * K; e += LANES) {{\n        const int t = e / K, r = e % K;  // tensor t of the group, row r\n        mra_bulk_copy({dst} + r * W_STRIDE + t * K2, {src} + (long long)t * K3 + (long long)r * K2, {row}\n    }}\n"
                ),
            )
        } else {
            ("K3", format!("    for (int r = lane; r < K; r += LANES) mra_bulk_copy({dst} + r * W_STRIDE, {src} + (long long)r * K2, {row}\n"))
        };
        let mut s = "if (wave == 0) {\n".to_string();
        s += "    mra_fence_proxy_async();\n";
        s += &format!("    if (lane == 0) mra_mbar_expect({bar}, (unsigned)({tensors} * sizeof(*{src})));\n");
        s += "    __syncwarp();\n";
        s += &copies;
        s += "}\n";
        s
    }

    /// `bulk_copy(1)` at odd K ([`TransformPlan::shifted_rows`]): the tensor at `src` into buffer
    /// `dst` from element `sh` on (its address / 8 mod 2, set here), each row's K² - 1 values on the
    /// 16-byte grid by one bulk copy on `bar` and the other value by an 8-byte `cp.async`, one
    /// commit group from warp 0 (waited for with `mra_cp_async_wait_all` before a block barrier).
    fn shifted_tensor_stage(&self, src: &str, dst: &str, bar: &str, sh: &str) -> String {
        let mut s = format!("{sh} = (int)((reinterpret_cast<unsigned long long>({src}) >> 3) & 1);  // 1: the tensor starts off the 16-byte grid\n");
        s += "if (wave == 0) {\n";
        s += "    mra_fence_proxy_async();\n";
        s += &format!("    if (lane == 0) mra_mbar_expect({bar}, (unsigned)(K * (K2 - 1) * sizeof(*{src})));\n");
        s += "    __syncwarp();\n";
        s += "    for (int r = lane; r < K; r += LANES) {\n";
        s += &format!("        // Row r starts off the grid where {sh} + r is odd (K² is odd): then its first value goes\n");
        s += "        // by cp.async and the rest by the bulk copy, else its last value. The row stride is odd,\n";
        s += "        // so the bulk copy's two ends are 16-byte aligned in both memories.\n";
        s += &format!("        const int off = ({sh} + r) & 1;\n");
        let stride = if self.split_staged() { "WS_STRIDE" } else { "W_STRIDE" };
        s += &format!("        {}* to = {dst} + {sh} + r * {stride};\n", self.t());
        s += &format!("        const {}* from = {src} + (long long)r * K2;\n", self.t());
        s += &format!("        mra_bulk_copy(to + off, from + off, (unsigned)((K2 - 1) * sizeof(*{src})), {bar});\n");
        s += "        const int single = off ? 0 : K2 - 1;\n";
        s += "        mra_cp_async8(to + single, from + single);\n";
        s += "    }\n";
        s += "    mra_cp_async_commit();\n";
        s += "}\n";
        s
    }

    /// `bulk_copy(1)`: every thread waits for the phase of buffer `i`'s mbarrier (`bars[i]`)
    /// that its copies complete, then flips its parity bit.
    fn bulk_wait(&self, i: &str) -> String {
        format!("mra_mbar_wait(&bars[{i}], (phases >> {i}) & 1u);  // the copies into buffer {i} have landed\nphases ^= 1u << {i};\n")
    }

    /// `bulk_copy(1)`: the mbarriers (one per buffer, after the buffers), initialised by thread 0.
    fn bulk_barriers(&self, tp: &TransformPlan, buffers: u32) -> String {
        let note = self.step_comment(|s| matches!(s, Step::BulkCopy(_)));
        let pitch = super::shared_layout::buffer_pitch(tp, self.plan.request.k);
        let mut s = format!("unsigned long long* bars = reinterpret_cast<unsigned long long*>(w0 + {buffers} * {pitch});  {note}: one mbarrier per buffer\n");
        s += &format!("if (tid == 0) {{\n    for (int i = 0; i < {buffers}; ++i) mra_mbar_init(&bars[i]);\n    mra_fence_proxy_async();\n}}\n");
        s += &format!("{}  // the mbarriers are initialised\n", self.d.barrier());
        s += "unsigned phases = 0;  // bit i: the parity of the next phase of buffer i's mbarrier\n";
        s
    }

    /// `tensors(N)`: the barrier of one warp group, PTX named barrier `group + 1` over the
    /// group's threads (barrier 0 is the block's `__syncthreads`). Like `__syncthreads` it
    /// orders the shared-memory accesses of the threads taking part.
    fn group_barrier_helper(&self) -> String {
        let note = self.step_comment(|s| matches!(s, Step::Tensors(_)));
        format!(
            "{note}: each warp group waits only for its own warps.\n\
             __device__ __forceinline__ void mra_group_barrier(int group) {{\n\
             \x20   asm volatile(\"bar.sync %0, %1;\" :: \"r\"(group + 1), \"r\"(GROUP_THREADS) : \"memory\");\n\
             }}\n"
        )
    }

    /// Issues the copies of the tensor at `src` into the padded buffer `dst` (not committed),
    /// by the threads that copy it: the block, or one warp group of `tensors(N)`.
    pub(super) fn async_tensor_copies(&self, tp: &TransformPlan, src: &str, dst: &str) -> String {
        let width = self.async_width(tp);
        if tp.stack > 1 {
            // stack(N): the group's cnt tensors; element e of tensor t goes to row e / K2,
            // column t · K2 + e % K2 (whole vectors: K3 and K2 are multiples of the width).
            let mut s = format!("for (int v = tid; v < cnt * K3 / {width}; v += THREADS) {{\n");
            s += &format!("    const int x = v * {width}, t = x / K3, e = x % K3;\n");
            s += &format!("    mra_cp_async({dst} + (e / K2) * W_STRIDE + t * K2 + e % K2, {src} + x);\n}}\n");
            return s;
        }
        let (tid, threads) = if tp.tensors > 1 { ("gtid", "GROUP_THREADS") } else { ("tid", "THREADS") };
        let mut s = if width == 1 {
            format!("for (int x = {tid}; x < K3; x += {threads}) {{  // element x goes to row x / K2 of the padded layout\n")
        } else {
            format!("for (int e = {tid}; e < K3 / {width}; e += {threads}) {{\n    const int x = e * {width};  // element x goes to row x / K2 of the padded layout\n")
        };
        s += &format!("    mra_cp_async({dst} + (x / K2) * W_STRIDE + x % K2, {src} + x);\n}}\n");
        s
    }

    /// The copies of one tensor as one commit group.
    fn async_tensor_stage(&self, tp: &TransformPlan, src: &str, dst: &str) -> String {
        self.async_tensor_copies(tp, src, dst) + "mra_cp_async_commit();\n"
    }

    /// The batch loop of a pipelined fused level; `passes` are the three pass calls with
    /// `{in}`/`{out}` placeholders. `b_setup` (B into registers or shared memory) runs after the
    /// first tensors' copies are issued and before they are waited for: every block starts with
    /// both, and B's loads (L2 hits, one round trip) hide under the copies' DRAM time.
    pub(super) fn pipelined_batch_loop(&self, tp: &TransformPlan, passes: &[String; 3], b_setup: &str) -> String {
        if tp.shared_buffers == tp.pipeline + 1 {
            return self.ring_batch_loop(tp, passes, b_setup);
        }
        let b_setup = format!("// B is loaded while the first tensor's copies are in flight.\n{b_setup}");
        let t = self.t();
        let grouped = tp.tensors > 1;
        let barrier = if grouped { "mra_group_barrier(group);" } else { self.d.barrier() };
        let note = self.step_comment(|s| matches!(s, Step::Pipeline(_)));
        let call = |i: usize, input: &str, out: &str| passes[i].replace("{in}", input).replace("{out}", out);
        let mut s = "const int lane = tid % LANES;\n".to_string();
        let (first, stride) = if grouped {
            let tensors = self.step_comment(|s| matches!(s, Step::Tensors(_)));
            s += &format!("{tensors}: warp group `group` transforms its own tensors in its own two buffers.\n");
            s += "const int group = tid / GROUP_THREADS;\nconst int gtid = tid % GROUP_THREADS;  // thread index within the group\n";
            s += "const int wave = gtid / LANES;  // wave index within the group\n";
            ("block + group * nblocks", "GROUPS * nblocks")
        } else {
            s += "const int wave = tid / LANES;\n";
            ("block", "nblocks")
        };
        let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
        s += &format!("{note}: two tensors in flight per {}; wa holds the current one, wb receives the next.\n", if grouped { "group" } else { "block" });
        if !buffers.is_empty() {
            s += &format!("{buffers}: two buffers, which swap roles every tensor.\n");
        }
        if grouped {
            s += &format!("{t}* wa = w1 + group * 2 * K * W_STRIDE;\n{t}* wb = w0 + group * 2 * K * W_STRIDE;\n");
            s += "// Groups walk the batch: group g of block b transforms tensors b + g nblocks, then every\n// GROUPS nblocks further.\n";
            s += &format!("const int first = {first};\n");
        } else {
            s += &format!("{t}* wa = w1;\n{t}* wb = w0;\n");
            s += "// Blocks walk the batch: block b transforms tensors b, b + nblocks, b + 2 nblocks, ...\n";
            s += "const int first = block;\n";
        }
        s += &format!("const int stride = {stride};\n");
        // stack(N): the block walks groups of STACK consecutive tensors (group g: tensors
        // g·STACK ..), each stage one group; `cnt` is the tensors a group has (the last may
        // be partial) and `rows` the pass-2 rows stored.
        let stacked = tp.stack > 1;
        let limit = if stacked { "groups" } else { "nfuncs" };
        if stacked {
            let note = self.step_comment(|s| matches!(s, Step::Stack(_)));
            s += &format!("{note}: the block walks groups of STACK consecutive tensors: group g is tensors g * STACK, ...\n");
            s += "const int groups = (nfuncs + STACK - 1) / STACK;\n";
        }
        // The source of the stage of the tensor (group) at index `at`, and what the stage needs declared.
        let src = |at: &str| if stacked { format!("(a + (long long)({at}) * STACK * K3)") } else { format!("({})", self.tensor_at('a', at)) };
        let count = |at: &str| if stacked { format!("const int cnt = min(STACK, nfuncs - ({at}) * STACK);  // tensors in this group\n") } else { String::new() };
        let shifted = tp.shifted_rows(self.plan.request.k);
        let stage = |at: &str, dst: &str, bar: &str, sh: &str| {
            let copies = if shifted {
                self.shifted_tensor_stage(&src(at), dst, bar, sh)
            } else if tp.bulk_copy {
                self.bulk_tensor_stage(tp, &src(at), dst, bar)
            } else {
                self.async_tensor_stage(tp, &src(at), dst)
            };
            count(at) + &copies
        };
        if tp.bulk_copy {
            s += &self.bulk_barriers(tp, 2);
            s += "int ia = 1, ib = 0;  // the buffers' indices: wa = w1, wb = w0\n";
            if shifted {
                s += "int sha = 0, shb = 0;  // odd K: where the tensor in wa, wb starts (element 0 or 1)\n";
            }
            s += &format!("if (first < {limit}) {{\n");
            s += &indent(stage("first", "wa", "&bars[ia]", "sha"), 4);
            s += "}\n";
            s += &b_setup;
            s += &format!("if (first < {limit}) {{\n");
            s += &indent(self.bulk_wait("ia"), 4);
            s += "}\n";
            if shifted {
                s += "mra_cp_async_wait_all();\n";
                s += &format!("{barrier}  // every row's cp.async value is in wa for every thread\n");
            }
        } else {
            s += &format!("if (first < {limit}) {{\n");
            s += &indent(stage("first", "wa", "", ""), 4);
            s += "}\n";
            s += &b_setup;
            s += "mra_cp_async_wait_all();\n";
            s += &format!("{barrier}  // the first tensor is staged\n");
        }
        let call = |i: usize, input: &str, out: &str| call(i, input, out).replace("{rows}", "rows");
        if stacked {
            s += "for (int g = first; g < groups; g += stride) {\n";
            s += "    const int n = g * STACK;  // the group's first tensor\n";
            s += "    const int rows = min(STACK, nfuncs - n) * K2;  // the rows of the group's tensors, stored by pass 2\n";
        } else {
            s += "for (int n = first; n < nfuncs; n += stride) {\n";
        }
        let next = if stacked { "g + stride" } else { "n + stride" };
        s += &self.c_n_decl();
        if let Some(prefetch) = self.c_prefetch().filter(|_| !stacked) {
            s += &format!("    {prefetch}\n");
        }
        if shifted {
            s += &format!("    {}  // pass 0: A (in wa, from element sha) -> wb\n", call(0, "wa + sha", "wb"));
        } else {
            s += &format!("    {}  // pass 0: A (in wa) -> wb\n", call(0, "wa", "wb"));
        }
        s += &format!("    {barrier}\n");
        s += &format!("    {}  // pass 1: wb -> wa\n", call(1, "wb", "wa"));
        s += &format!("    {barrier}  // wb is free: pass 2 reads only wa\n");
        s += &format!("    if ({next} < {limit}) {{\n");
        s += &indent(stage(if stacked { "g + stride" } else { "(n + stride)" }, "wb", "&bars[ib]", "shb"), 8);
        s += "    }\n";
        s += &format!("    {}  // pass 2: wa -> C, while the next tensor arrives in wb\n", call(2, "wa", "c_n"));
        if tp.bulk_copy {
            s += &format!("    if ({next} < {limit}) {{\n");
            s += &indent(self.bulk_wait("ib"), 8);
            s += "    }\n";
            if shifted {
                s += "    mra_cp_async_wait_all();  // this thread's cp.async values of the next tensor (if any) have landed\n";
                s += &format!("    {barrier}  // pass 2 is done with wa; the next tensor is in wb for every thread\n");
                s += "    const int swap_s = sha;\n    sha = shb;\n    shb = swap_s;\n";
            } else {
                s += &format!("    {barrier}  // pass 2 is done with wa\n");
            }
            s += "    const int swap_i = ia;\n    ia = ib;\n    ib = swap_i;\n";
        } else {
            s += "    mra_cp_async_wait_all();\n";
            s += &format!("    {barrier}  // the next tensor is in wb for every thread; pass 2 is done with wa\n");
        }
        s += &format!("    {t}* swap = wa;\n    wa = wb;\n    wb = swap;\n");
        s += "}\n";
        s
    }

    /// `pipeline(P)` with `buffers(P + 1)`: a ring of P input slots and one intermediate. The
    /// copies of the block's next P - 1 tensors are in flight while a tensor's three passes run.
    fn ring_batch_loop(&self, tp: &TransformPlan, passes: &[String; 3], b_setup: &str) -> String {
        let t = self.t();
        let p = tp.pipeline;
        let barrier = self.d.barrier();
        let note = self.step_comment(|s| matches!(s, Step::Pipeline(_)));
        let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
        let call = |i: usize, input: &str, out: &str| passes[i].replace("{in}", input).replace("{out}", out);
        let a_m = format!("({})", self.tensor_at('a', "m"));
        let mut s = "const int lane = tid % LANES;\nconst int wave = tid / LANES;\n".to_string();
        s += &format!("{note}: {p} tensors in flight per block.\n");
        s += &format!("{buffers}: the intermediate wb and a ring of {p} input slots.\n");
        s += &format!("constexpr int SLOTS = {p};\n{t}* wb = w0;\n{t}* ring = w1;  // slot s at ring + s * K * W_STRIDE\n");
        s += "// Blocks walk the batch: block b transforms tensors b, b + nblocks, b + 2 nblocks, ...\n";
        s += "// The copies of the first SLOTS - 1 tensors, one commit group each (empty past the end).\n";
        if tp.bulk_copy {
            // Slot s's mbarrier is bars[s]; the intermediate's (bars[SLOTS]) is never used.
            s += &self.bulk_barriers(tp, p + 1);
        }
        s += "for (int s = 0; s < SLOTS - 1; ++s) {\n";
        s += "    const int m = block + s * nblocks;\n";
        s += "    if (m < nfuncs) {\n";
        if tp.bulk_copy {
            s += &indent(self.bulk_tensor_stage(tp, &a_m, "(ring + s * K * W_STRIDE)", "&bars[s]"), 8);
            s += "    }\n}\n";
        } else {
            s += &indent(self.async_tensor_copies(tp, &a_m, "(ring + s * K * W_STRIDE)"), 8);
            s += "    }\n    mra_cp_async_commit();\n}\n";
        }
        s += &format!("// B is loaded while the first tensors' copies are in flight.\n{b_setup}");
        s += "int slot = 0;  // the slot of tensor n\n";
        s += "for (int n = block; n < nfuncs; n += nblocks) {\n";
        s += &self.c_n_decl();
        if let Some(prefetch) = self.c_prefetch() {
            s += &format!("    {prefetch}\n");
        }
        s += "    // The tensor SLOTS - 1 ahead goes to the slot the previous tensor freed.\n";
        s += "    const int m = n + (SLOTS - 1) * nblocks;\n";
        s += "    const int ahead = slot + SLOTS - 1 < SLOTS ? slot + SLOTS - 1 : slot - 1;\n";
        s += "    if (m < nfuncs) {\n";
        if tp.bulk_copy {
            s += &indent(self.bulk_tensor_stage(tp, &a_m, "(ring + ahead * K * W_STRIDE)", "&bars[ahead]"), 8);
            s += "    }\n";
            s += &indent(self.bulk_wait("slot"), 4);
        } else {
            s += &indent(self.async_tensor_copies(tp, &a_m, "(ring + ahead * K * W_STRIDE)"), 8);
            s += "    }\n    mra_cp_async_commit();\n";
            s += "    mra_cp_async_wait_ahead();  // every group but the newest SLOTS - 1 is complete: tensor n is in\n";
            s += &format!("    {barrier}  // ... for every thread\n");
        }
        s += &format!("    {t}* wa = ring + slot * K * W_STRIDE;\n");
        s += &format!("    {}  // pass 0: A (in wa) -> wb\n", call(0, "wa", "wb"));
        s += &format!("    {barrier}\n");
        s += &format!("    {}  // pass 1: wb -> wa\n", call(1, "wb", "wa"));
        s += &format!("    {barrier}\n");
        s += &format!("    {}  // pass 2: wa -> C\n", call(2, "wa", "c_n"));
        s += &format!("    {barrier}  // pass 2 is done with wa, which the next copy overwrites\n");
        s += "    slot = slot + 1 < SLOTS ? slot + 1 : 0;\n";
        s += "}\n";
        s
    }
}

/// `name(dst, src)`: one `cp.async` of `bytes` (4, 8 or 16; 16 bypasses L1), and the commit and
/// wait-all of its groups.
pub(super) fn cp_async_helpers(name: &str, bytes: u32) -> String {
    let cache = if bytes == 16 { "cg" } else { "ca" };
    format!(
        "__device__ __forceinline__ void {name}(void* dst, const void* src) {{\n\
         \x20   asm volatile(\"{{ .reg .u64 s, g; .reg .u32 d;\\n\\t\"\n\
         \x20                \"cvta.to.shared.u64 s, %0; cvt.u32.u64 d, s; cvta.to.global.u64 g, %1;\\n\\t\"\n\
         \x20                \"cp.async.{cache}.shared.global [d], [g], {bytes}; }}\" :: \"l\"(dst), \"l\"(src) : \"memory\");\n\
         }}\n\
         __device__ __forceinline__ void mra_cp_async_commit() {{ asm volatile(\"cp.async.commit_group;\" ::: \"memory\"); }}\n\
         __device__ __forceinline__ void mra_cp_async_wait_all() {{ asm volatile(\"cp.async.wait_all;\" ::: \"memory\"); }}\n"
    )
}

/// `text` with every line indented by `spaces`.
fn indent(text: String, spaces: usize) -> String {
    text.lines().map(|l| format!("{}{l}\n", " ".repeat(spaces))).collect()
}

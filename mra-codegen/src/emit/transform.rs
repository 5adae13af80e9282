//! A transform level's kernel: the parts in order (constants, pass functions, `load_b`), the
//! per-tensor function `transform_tensor` that the kernel's batch loop calls, and the
//! block-level entry `transform_block` for callers' own kernels.

use super::shared_layout::{buffer_pitch, scratch_args, scratch_names};
use super::Emitter;
use crate::ir::{Memory, Step};
use crate::plan::TransformPlan;

impl Emitter<'_> {
    pub(super) fn transform_kernel(&mut self, entry: &str, tp: &TransformPlan) {
        let t = self.t();
        if tp.split_output > 1 {
            self.split_kernel(entry, tp);
            return;
        }
        if let (Some(f), true) = (tp.fragment, tp.cluster > 1) {
            self.tile_constants(tp, &f);
            self.cluster_constants(tp);
            let passes = self.cluster_passes(tp, &f);
            self.w.line("");
            self.b_loader(tp);
            self.cluster_kernel(entry, tp, &passes);
            return;
        }
        if let Some(f) = tp.fragment {
            self.tile_constants(tp, &f);
            if self.op().matrices == crate::op::Matrices::RankSum {
                self.rank_sum_kernel(entry, tp, &f);
                return;
            }
        } else {
            if let Some(out) = tp.out {
                let note = self.step_comment(|s| matches!(s, Step::CacheWrite { .. }));
                self.w.line(format!("constexpr int OUT_STRIDE = K + {};  {note}: row stride of the staged output rows", out.pad));
            }
            if tp.b.memory == Memory::Shared {
                let note = self.step_comment(|s| matches!(s, Step::CacheRead { .. }));
                self.w.line(format!("constexpr int B_STRIDE = K + {};  {note}: row stride of B in shared memory", tp.b.pad));
            } else {
                self.w.line("constexpr int B_STRIDE = K;  // B is read from global memory as it is stored");
            }
        }
        self.w.line("");
        let passes = match tp.fragment {
            Some(f) => self.tile_gemm_passes(tp, &f),
            None => {
                self.gemm_pass(tp);
                let args = if tp.out.is_some() { ", tid, out_tile" } else { ", tid" };
                ["gemm_pass", "gemm_pass", "gemm_pass"].map(|name| format!("{name}({{in}}, bm, {{out}}{args});"))
            }
        };
        if tp.fragment.is_none() && self.op().matrices == crate::op::Matrices::RankSum {
            self.w.line("");
            self.b_loader(tp);
            self.rank_sum_thread_kernel(entry, tp, &passes);
            return;
        }
        let mut passes = [0, 1, 2].map(|p| self.pass_for_dim(tp, &passes[p], p));
        if self.op().scaled {
            passes[2] = super::operation::beta_dispatch(&passes[2]);
        }
        self.w.line("");
        self.b_loader(tp);
        self.tensor_function(tp, &passes);
        self.block_function(tp);
        let ws_note = self.step_comment(|s| matches!(s, Step::Workspace(_)));
        let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
        let b_setup = self.b_setup_call(tp, if tp.b.memory == Memory::Shared { "b_shared" } else { "nullptr" });
        let pipelined = if tp.pipeline >= 2 {
            self.w.lines(&self.async_copy_helpers(tp));
            Some(self.pipelined_batch_loop(tp, &passes, &b_setup))
        } else {
            None
        };
        let b_arg = self.b_args_op(tp);
        let scratch = scratch_args(tp, self.plan.request.k);
        let pitch = buffer_pitch(tp, self.plan.request.k);
        let (a_n, c_n) = (self.tensor_at('a', "n"), self.c_out("n"));
        let prologue = self.kernel_prologue(tp);
        let prefetch = self.c_prefetch();
        self.w.block(self.kernel_signature(entry), "", |w| {
            w.lines(&prologue);
            // A pipelined loop loads B itself, after issuing its first copies.
            if pipelined.is_none() {
                w.lines(&b_setup);
            }
            match tp.workspace {
                Memory::Shared => {
                    w.line(format!("{ws_note}: the two intermediates stay in shared memory."));
                    w.line(format!("{t}* w0 = w_shared;"));
                }
                _ => {
                    let why = if ws_note.is_empty() { "// workspace(global), the default".to_string() } else { ws_note.clone() };
                    w.line(format!("{why}: this block's two K^3 intermediates in device memory."));
                    w.line(format!("{t}* w0 = workspace + (long long)block * 2 * K3;"));
                }
            }
            if tp.shared_buffers == 1 {
                w.line(format!("{t}* w1 = w0;  {buffers}: one buffer; passes 0 and 1 write over their input"));
            } else {
                w.line(format!("{t}* w1 = w0 + {pitch};"));
            }
            if let Some(pipelined) = &pipelined {
                w.lines(pipelined);
                return;
            }
            w.line("// Blocks walk the batch: block b transforms tensors b, b + nblocks, b + 2 nblocks, ...");
            w.block("for (int n = block; n < nfuncs; n += nblocks)", "", |w| {
                if let Some(prefetch) = &prefetch {
                    w.line(prefetch);
                }
                w.line(format!("transform_tensor({a_n}, {b_arg}, {c_n}, w0, w1, tid{scratch});"));
            });
        });
    }

    /// What a block-level function (`name`) needs, as constants: where each shared array
    /// starts (`<NAME>_AT`), `SHARED_BYTES` and `WORKSPACE_ELEMS` (`workspace_elems` per block).
    pub(super) fn block_needs(&mut self, name: &str, arrays: &[(&str, &str)], workspace_elems: &str) {
        let t = self.t();
        self.w.line("");
        self.w.line(format!("// What {name} needs: SHARED_BYTES of shared memory, laid out as the kernel's"));
        self.w.line("// dynamic allocation is, and WORKSPACE_ELEMS elements of device memory per block (0: none).");
        let mut end = String::new();
        for (array, count) in arrays {
            let at = format!("{}_AT", array.to_uppercase());
            self.w.line(format!("constexpr int {at} = {};", if end.is_empty() { "0" } else { &end }));
            end = format!("{at} + {count}");
        }
        if end.is_empty() {
            self.w.line("constexpr int SHARED_BYTES = 0;");
        } else {
            self.w.line(format!("constexpr int SHARED_BYTES = ({end}) * (int)sizeof({t});"));
        }
        self.w.line(format!("constexpr long long WORKSPACE_ELEMS = {workspace_elems};"));
    }

    /// A transform kernel's first statements (after closing the namespace): the namespace
    /// brought into scope, the thread and block index, the shared arrays.
    pub(super) fn kernel_prologue(&mut self, tp: &TransformPlan) -> String {
        let (tid, bid) = (self.d.thread_index(), self.d.block_index());
        let shared = self.shared_declarations(tp);
        let using = self.begin_kernel();
        format!("{using}\nconst int tid = {tid};\nconst int block = {bid};\n{shared}")
    }

    /// `transform_tensor`: one tensor's three passes with the calling block's threads, B already
    /// loaded, the intermediates `w0`/`w1` and the passes' shared scratch given. The kernel's
    /// batch loop calls it once per tensor.
    fn tensor_function(&mut self, tp: &TransformPlan, passes: &[String; 3]) {
        let t = self.t();
        let barrier = self.d.barrier();
        let whole_stage = if tp.stages_whole_tensor() { self.whole_tensor_stage("w1") } else { String::new() };
        let c_store = if tp.coalesce_c { self.coalesced_c_store() } else { String::new() };
        let coalesce_note = self.step_comment(|s| matches!(s, Step::CoalesceC(_)));
        let b_param = self.b_params_op(tp);
        let c_type = self.c_param_type();
        let scratch: String = scratch_names(tp, self.plan.request.k).iter().map(|n| format!(", {t}* {n}")).collect();
        let head = format!(
            "{} void transform_tensor(const {t}* a_n, {b_param}, {c_type} c_n, {t}* w0, {t}* w1, int tid{scratch})",
            self.d.inline_device()
        );
        self.w.line("");
        self.w.line("// One tensor, all three passes, with the calling block's THREADS threads: a_n -> c_n.");
        let tensors_note = self.step_comment(|s| matches!(s, Step::Tensors(_)));
        self.w.block(head, "", |w| {
            if tp.fragment.is_some() {
                w.line("const int lane = tid % LANES;");
                w.line("const int wave = tid / LANES;");
            }
            // tensors(N): WAVES counts one group's waves; for a single tensor the first group's
            // waves compute and the others only stage and wait.
            let grouped = tp.tensors > 1;
            if grouped {
                w.line(format!("{tensors_note}: one tensor here, the first group's waves compute it."));
            }
            let call = |i: usize, input: &str, out: &str| {
                // stack(N): one tensor here, in the first slot; the others are computed on
                // whatever the buffers hold and not stored.
                let c = passes[i].replace("{in}", input).replace("{out}", out).replace("{rows}", "K2");
                if grouped { format!("if (wave < WAVES) {c}") } else { c }
            };
            if tp.stages_whole_tensor() {
                w.lines(&whole_stage);
                w.line(format!("{}  // pass 0: A (staged in w1) -> w0", call(0, "w1", "w0")));
            } else {
                w.line(format!("{}  // pass 0: A -> w0", call(0, "a_n", "w0")));
            }
            w.line(format!("{barrier}  // pass 1 reads rows other threads wrote"));
            w.line(format!("{}  // pass 1: w0 -> w1", call(1, "w0", "w1")));
            w.line(barrier);
            if tp.coalesce_c {
                w.line(format!("{}  // pass 2: w1 -> C's layout in w0, which pass 1 has read", call(2, "w1", "w0")));
                w.line(format!("{barrier}  // C is whole in w0; w1 is free for the next tensor"));
                w.lines(&c_store);
                w.line("// No barrier here: the next tensor is staged into w1, which nothing reads now, and the");
                w.line("// barrier after the staging orders the next pass 0's writes of w0 after these reads.");
                return;
            }
            if !coalesce_note.is_empty() {
                w.line(format!("{coalesce_note}: pass 2 stores C from its fragments (8 rows of up to 64 bytes per warp-wide store)"));
            }
            w.line(format!("{}  // pass 2: w1 -> C", call(2, "w1", "c_n")));
            if tp.stages_whole_tensor() {
                w.line(format!("{barrier}  // the next tensor is staged into w1, which pass 2 reads"));
            } else {
                w.line("// No barrier here: the next pass 0 writes w0, which pass 2 does not read, and the");
                w.line("// barrier after it orders the next pass 1's writes of w1 after these reads.");
            }
        });
    }

    /// `transform_block`: the block-level entry for callers' own kernels (what MRA-TTG's
    /// compress/reconstruct kernels call): one tensor, the caller's shared memory and workspace,
    /// B loaded on every call. `SHARED_BYTES` and `WORKSPACE_ELEMS` say what it needs.
    fn block_function(&mut self, tp: &TransformPlan) {
        let t = self.t();
        let arrays = self.shared_arrays(tp);
        let inline = self.d.inline_device();
        let (tid, barrier) = (self.d.thread_index(), self.d.barrier());
        let ws = if tp.workspace == Memory::Shared { "0" } else { "2 * K3" };
        self.block_needs("transform_block", &arrays, ws);
        self.w.line("");
        self.w.line("// Transforms one tensor a_n -> c_n (K^3 elements each, device or shared memory; a_n 16-byte");
        self.w.line("// aligned) with the calling block: every thread of a 1-D block of exactly THREADS threads");
        self.w.line("// calls it. smem: SHARED_BYTES bytes of shared memory, 32-byte aligned; workspace: this");
        self.w.line("// block's WORKSPACE_ELEMS elements in device memory. B (K x K, row-major) is loaded on every");
        self.w.line("// call. On return c_n is complete and smem, workspace may be reused (it ends with a barrier).");
        let scaled = if self.op().scaled { ", double alpha, double beta" } else { "" };
        let head = format!("{inline} void transform_block(const {t}* a_n, const {t}* b, {t}* c_n, {t}* workspace, void* smem{scaled})");
        let b_shared = if tp.b.memory == Memory::Shared { "b_shared" } else { "nullptr" };
        let b_setup = self.b_setup_call(tp, b_shared);
        let b_arg = self.b_args_op(tp);
        let c_arg = if self.op().scaled { "COut{c_n, alpha, beta}" } else { "c_n" };
        let scratch = scratch_args(tp, self.plan.request.k);
        // coalesce_c(1) ends with the block's reads of w0 (C's store), so a barrier follows.
        let ends_with_barrier = tp.stages_whole_tensor() && !tp.coalesce_c;
        let pitch = buffer_pitch(tp, self.plan.request.k);
        self.w.block(head, "", |w| {
            w.line(format!("const int tid = {tid};"));
            if arrays.is_empty() {
                w.line("(void)smem;");
            } else {
                w.line(format!("{t}* s = static_cast<{t}*>(smem);"));
            }
            for (name, _) in &arrays {
                w.line(format!("{t}* {name} = s + {}_AT;", name.to_uppercase()));
            }
            if tp.workspace == Memory::Shared {
                w.line("(void)workspace;");
                w.line(format!("{t}* w0 = w_shared;"));
            } else {
                w.line(format!("{t}* w0 = workspace;"));
            }
            if tp.shared_buffers == 1 {
                w.line(format!("{t}* w1 = w0;  // buffers(1): passes 0 and 1 write over their input"));
            } else {
                w.line(format!("{t}* w1 = w0 + {pitch};"));
            }
            w.lines(&b_setup);
            w.line(format!("transform_tensor(a_n, {b_arg}, {c_arg}, w0, w1, tid{scratch});"));
            if !ends_with_barrier {
                w.line(format!("{barrier}  // c_n complete; smem, workspace and B free for the next call"));
            }
        });
    }

    /// Staging of the whole input tensor into `into` (`w1`, free until pass 1 writes it): every
    /// thread loads, 16 bytes at a time where the tensor's alignment allows, then one barrier.
    pub(super) fn whole_tensor_stage(&self, into: &str) -> String {
        self.whole_tensor_copy(into) + &format!("{}  // the tensor is staged\n", self.d.barrier())
    }

    /// [`Emitter::whole_tensor_stage`] without its barrier.
    pub(super) fn whole_tensor_copy(&self, into: &str) -> String {
        let cache = self.step_comment(|s| matches!(s, Step::CacheRead { operand: crate::ir::Operand::A, .. }));
        let k = self.plan.request.k;
        let dtype = self.plan.request.dtype;
        let width = 16 / dtype.bytes();
        let mut s = format!("{cache}: the whole tensor goes to {into} in one coalesced sweep.\n");
        // Tensor n starts n·K³ elements in: 16-byte aligned for every n only if K³ is a
        // multiple of the vector width; a vector must not straddle a padded row either.
        let pad = match self.plan.body {
            crate::plan::Body::Transform(tp) => tp.shared_row_pad(),
            _ => 0,
        };
        // Pass 0 reads the staged tensor at its own odd stride where the intermediates' is even
        // (TransformPlan::split_staged_stride).
        let stride = match self.plan.body {
            crate::plan::Body::Transform(tp) if tp.split_staged_stride(k) => "WS_STRIDE",
            _ => "W_STRIDE",
        };
        if (k * k * k).is_multiple_of(width) && (k * k).is_multiple_of(width) && pad % width == 0 {
            let (vec_t, decl) = self.d.vector_type(dtype, width);
            if let Some(decl) = decl {
                s += &format!("{decl}\n");
            }
            s += &format!("const {vec_t}* a_vec = reinterpret_cast<const {vec_t}*>(a_n);\n");
            s += &format!("{vec_t}* {into}_vec = reinterpret_cast<{vec_t}*>({into});\n");
            s += &format!("for (int e = tid; e < K3 / {width}; e += THREADS) {{\n");
            s += &format!("    const int x = e * {width};  // element x of A goes to row x / K2 of the padded layout\n");
            s += &format!("    {into}_vec[((x / K2) * {stride} + x % K2) / {width}] = a_vec[e];\n}}\n");
        } else {
            s += "// No 16-byte accesses: the tensors or the padded rows are not 16-byte aligned.\n";
            s += &format!("for (int e = tid; e < K3; e += THREADS) {into}[(e / K2) * {stride} + e % K2] = a_n[e];\n");
        }
        s
    }

    /// `coalesce_c(1)`: C, whole in `w0` in its own layout, leaves in one sweep of the block's
    /// threads, consecutive threads at consecutive vectors (16 bytes where every tensor's C is
    /// 16-byte aligned, the element elsewhere), so every warp-wide store writes whole lines.
    fn coalesced_c_store(&self) -> String {
        let note = self.step_comment(|s| matches!(s, Step::CoalesceC(_)));
        let k = self.plan.request.k;
        let dtype = self.plan.request.dtype;
        let width = 16 / dtype.bytes();
        let t = self.t();
        let mut s = format!("{note}: C leaves in one coalesced sweep.\n");
        if (k * k * k).is_multiple_of(width) {
            let (vec_t, decl) = self.d.vector_type(dtype, width);
            if let Some(decl) = decl {
                s += &format!("{decl}\n");
            }
            s += &format!("const {vec_t}* c_staged = reinterpret_cast<const {vec_t}*>(w0);\n");
            s += &format!("{vec_t}* c_vec = reinterpret_cast<{vec_t}*>(c_n);\n");
            s += &format!("for (int e = tid; e < K3 / {width}; e += THREADS) c_vec[e] = c_staged[e];\n");
        } else {
            s += "// No 16-byte accesses: K³ is odd, so every other tensor's C starts between vectors.\n";
            s += &format!("for (int e = tid; e < K3; e += THREADS) c_n[e] = static_cast<const {t}*>(w0)[e];\n");
        }
        s
    }
}

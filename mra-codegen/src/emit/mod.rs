//! Lowering a [`Plan`] to C++ source for one (level, K, arch, dtype).
//!
//! One generator serves both vendors; vendor differences go through [`dialect::Dialect`].
//! Each part of the output carries a comment naming the schedule step (and its line in the
//! schedule's source file) that produced it.

mod cluster;
pub mod dialect;
mod fma_tail;
mod library;
mod pipeline;
mod shadow;
mod split;
mod swapped;
mod tensor;
mod tile_body;
mod tile_pass;
mod tma;
mod unused;
mod wmma;
mod writer;

use crate::ir::{Loop, Memory, Schedule, Step, ThreadMap};
use crate::plan::{Body, Plan, PlanError, Request, Shadow, TransformPlan};
use dialect::Dialect;
use serde::Serialize;
use writer::Writer;

/// A generated kernel and what the runtime needs to launch it. For a library level the kernel
/// is its one-time setup kernel, or none (`entry` empty, `source` documents the BLAS calls).
#[derive(Clone, Debug, Serialize)]
pub struct Kernel {
    /// The level's name (`L3-regblk`).
    pub level: String,
    /// The `extern "C"` entry point.
    pub entry: String,
    /// Complete, self-contained C++ source (no #include).
    pub source: String,
    pub plan: Plan,
    /// The attribute on the kernel that bounds its threads and registers, if any
    /// (`__launch_bounds__(256, 2)`, `__maxnreg__(128)`, AMD's `amdgpu_flat_work_group_size`).
    pub bounds: Option<String>,
}

impl Kernel {
    pub fn threads(&self) -> u32 {
        self.plan.threads
    }
}

/// The line before a dialect's prelude in generated source: what lies between it and
/// [`PRELUDE_END`] is all a CPU emulator replaces (the kernel body calls the hardware only
/// through functions defined there).
pub const PRELUDE_BEGIN: &str = "// ---- prelude: the hardware interface (an emulator replaces this part only) ----";
/// The line after a dialect's prelude.
pub const PRELUDE_END: &str = "// ---- end of prelude ----";

/// The kernel's parameter list, the same for every level so the runtime launches them alike:
/// `(a, b, c, workspace, nfuncs, nblocks)`.
pub const KERNEL_PARAMS: &str = "a, b, c, workspace, nfuncs, nblocks";

/// Generates the kernel for `schedule` at `req`, or says why the level cannot run as asked.
pub fn generate(schedule: &Schedule, req: Request) -> Result<Kernel, PlanError> {
    // The plan resolves defaults written `if K <= 16 { .. } else { .. }` for this request; the
    // comments keep quoting the schedule as written.
    let plan = schedule.plan(req)?;
    let dialect = dialect::for_vendor(req.arch.vendor);
    let entry = entry_name(schedule, &req);
    let mut e = Emitter { s: schedule, plan: &plan, d: dialect, w: Writer::default(), namespace: namespace_name(schedule, &req), namespace_open: true };
    e.header();
    let entry = match plan.body {
        Body::Copy { vector, shadow } => {
            e.copy_kernel(&entry, vector, shadow);
            entry
        }
        Body::Transform(t) => {
            e.transform_kernel(&entry, &t);
            entry
        }
        Body::Library(call) => e.library(&entry, call),
    };
    e.close_namespace();
    let bounds = e.kernel_bounds();
    Ok(Kernel { level: schedule.name.clone(), entry, source: unused::mark_unused_kernel_parameters(&unused::mark_unused_constants(&e.w.finish())), plan, bounds })
}

/// `mra_l3_regblk_k16_f64`: level name, K and dtype, so one module may hold several kernels.
pub fn entry_name(schedule: &Schedule, req: &Request) -> String {
    let level: String = schedule
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect();
    format!("mra_{level}_k{}_{}", req.k, req.dtype)
}

/// `mra::l3_regblk_k16_f64`: the C++ namespace holding a kernel's constants and device
/// functions (its block-level `transform_block`), so several kernels can share one
/// translation unit. The `__global__` entry point itself stays at global scope.
pub fn namespace_name(schedule: &Schedule, req: &Request) -> String {
    format!("mra::{}", &entry_name(schedule, req)["mra_".len()..])
}

/// The line that closes a kernel's namespace: everything before it (prelude, constants, device
/// functions) can be included into a caller's translation unit without the `__global__` kernel.
pub fn namespace_end(namespace: &str) -> String {
    format!("}} }}  // namespace {namespace}")
}

struct Emitter<'a> {
    s: &'a Schedule,
    plan: &'a Plan,
    d: &'a dyn Dialect,
    w: Writer,
    /// The namespace opened after the prelude (constants, helpers, device functions); the
    /// `__global__` kernel after it is at global scope and brings it in with `using namespace`.
    namespace: String,
    namespace_open: bool,
}

impl Emitter<'_> {
    /// `// [l3.rs:12] cache_read(B, shared)` for the first step matching `pred`.
    fn step_comment(&self, pred: impl Fn(&Step) -> bool) -> String {
        match self.s.find(pred) {
            Some(step) => format!("// [{}:{}] {}", short_file(&self.s.file), step.line, step.item),
            None => String::new(),
        }
    }

    fn t(&self) -> &'static str {
        self.plan.request.dtype.cpp()
    }

    fn k(&self) -> u32 {
        self.plan.request.k
    }

    fn header(&mut self) {
        let req = self.plan.request;
        self.w.line(format!(
            "// Generated by mra-codegen: level {}, K = {}, {}, {} ({}).",
            self.s.name,
            req.k,
            req.dtype,
            req.arch.name,
            self.d.language()
        ));
        self.w.line(format!("// Schedule, from {}:", self.s.file));
        for l in self.s.to_string().lines() {
            self.w.line(format!("//   {l}"));
        }
        self.w.lines(
            "// The operation: C_n(i,j,k) = sum_{a,b,c} A_n(a,b,c) B(a,i) B(b,j) B(c,k), computed as three\n\
             // passes of out(i,j) = sum_k in(k,i) * B(k,j), in: K x K^2, out: K^2 x K row-major.",
        );
        self.w.line("");
        if !self.d.prelude().is_empty() {
            let matrix = match self.plan.body {
                Body::Transform(TransformPlan { fragment: Some(f), .. }) => self.d.matrix_prelude(&f, req.dtype),
                Body::Copy { shadow: Some(sh), .. } => self.d.matrix_prelude(&sh.fragment, req.dtype),
                _ => String::new(),
            };
            self.w.line(PRELUDE_BEGIN);
            self.w.lines(self.d.prelude());
            self.w.lines(&matrix);
            self.w.line(PRELUDE_END);
            self.w.line("");
        }
        let (outer, inner) = self.namespace.split_once("::").expect("mra::name");
        self.w.line(format!("namespace {outer} {{ namespace {inner} {{"));
        self.w.line("");
        let threads_note = self.step_comment(|s| matches!(s, Step::Threads(_)));
        self.w.line(format!("constexpr int K = {};  // transform order: every loop bound below is a constant", req.k));
        self.w.line("constexpr int K2 = K * K;");
        self.w.line("constexpr int K3 = K * K * K;");
        self.w.line(format!("constexpr int THREADS = {};  {threads_note}", self.plan.threads));
        if !self.plan.parameters.is_empty() {
            self.w.line(format!("// tunable parameters of this kernel: {}", crate::tune::describe(&self.plan.parameters)));
        }
        for s in &self.s.steps {
            match &s.item {
                Step::LaunchBounds { .. } => {
                    let attribute = match self.kernel_bounds() {
                        Some(b) => format!("`{b}` on the kernel"),
                        None => "no attribute, the compiler's default".into(),
                    };
                    let what = match self.plan.min_blocks {
                        Some(m) => format!("at least {m} blocks per multiprocessor ({attribute})"),
                        None => format!("1 block per multiprocessor: {attribute}"),
                    };
                    self.w.line(format!("// [{}:{}] {}: {what}", short_file(&self.s.file), s.line, s.item));
                }
                Step::Constraint(_) => {
                    self.w.line(format!("// [{}:{}] {}: holds", short_file(&self.s.file), s.line, s.item));
                }
                // A launch decision: the kernel is the same, its blocks stride over the tensors.
                Step::Persistent(_) => {
                    let what = if self.plan.persistent {
                        "launched with at most the blocks the GPU holds at once (each walks more tensors)"
                    } else {
                        "launched with min(N, M) blocks"
                    };
                    self.w.line(format!("// [{}:{}] {}: {what}", short_file(&self.s.file), s.line, s.item));
                }
                _ => {}
            }
        }
    }

    /// Closes the kernel's namespace (once; kernels are at global scope).
    fn close_namespace(&mut self) {
        if self.namespace_open {
            self.namespace_open = false;
            self.w.line("");
            self.w.line(namespace_end(&self.namespace));
        }
    }

    /// Closes the namespace before a `__global__` kernel; returns the kernel's first statement,
    /// which brings the namespace's constants and functions into scope.
    fn begin_kernel(&mut self) -> String {
        self.close_namespace();
        self.w.line("");
        format!("using namespace {};", self.namespace)
    }

    /// The attribute that bounds the kernel's threads and registers, if any.
    fn kernel_bounds(&self) -> Option<String> {
        match self.plan.body {
            // In-place passes hold a wave's output tiles in registers: without a bound the
            // compiler takes more registers than a block of THREADS may have (168 at K = 20).
            // An explicit launch_bounds(min_blocks = ..) of the schedule wins.
            Body::Transform(tp) if tp.shared_buffers == 1 && self.plan.min_blocks.is_none() => {
                self.d.launch_bounds_min_blocks(self.plan.threads, (65536 / (self.plan.threads * 128)).max(1), self.plan.request.arch)
            }
            _ => self.d.launch_bounds(self.plan.threads, self.plan.min_blocks, self.plan.request.arch),
        }
    }

    fn kernel_signature(&self, entry: &str) -> String {
        let t = self.t();
        let bounds = self.kernel_bounds().map(|b| b + " ").unwrap_or_default();
        let bounds = match self.plan.body {
            Body::Transform(_) if self.plan.cluster_blocks() > 1 => format!("__cluster_dims__({}, 1, 1) {bounds}", self.plan.cluster_blocks()),
            _ => bounds,
        };
        format!(
            "extern \"C\" __global__ void {bounds}{entry}(const {t}* __restrict__ a, const {t}* __restrict__ b, \
             {t}* __restrict__ c, {t}* workspace, int nfuncs, int nblocks)"
        )
    }

    fn copy_kernel(&mut self, entry: &str, vector: u32, shadow: Option<Shadow>) {
        let note = self.step_comment(|s| matches!(s, Step::Copy { .. }));
        self.w.line("");
        match shadow {
            None => {
                self.w.line("// The floor: the same harness as the transform levels, but each tensor is only read once");
                self.w.line("// and written once. `b` and `workspace` are unused; they keep the parameter list common.");
            }
            Some(_) => {
                self.w.line("// The bound: the copy level's reads and writes, and beside them the fewest matrix instructions");
                self.w.line("// the transform needs, whose results are discarded. C receives a copy of A (validated as the");
                self.w.line("// copy level is); `b` and `workspace` are unused.");
            }
        }
        let (vec_t, decl) = self.d.vector_type(self.plan.request.dtype, vector);
        if vector > 1 {
            if let Some(decl) = decl {
                self.w.line(decl);
            }
            self.w.line(format!("constexpr int VEC = {vector};"));
        }
        let copy = CopyLoops { vector, vec_t, dtype: self.plan.request.dtype };
        if let Some(sh) = shadow {
            self.bound_kernel(entry, &sh, &copy);
            return;
        }
        let using = self.begin_kernel();
        let (tid, bid) = (self.d.thread_index(), self.d.block_index());
        self.w.block(self.kernel_signature(entry), "", |w| {
            w.line(using);
            w.line(format!("{note}: the batch is one flat array, walked by all blocks together."));
            w.line("const long long total = (long long)nfuncs * K3;");
            w.line("const long long stride = (long long)nblocks * THREADS;");
            w.line(format!("const long long first = (long long){bid} * THREADS + {tid};"));
            copy.write(w, None);
        });
    }

    fn transform_kernel(&mut self, entry: &str, tp: &TransformPlan) {
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
        self.w.line("");
        self.b_loader(tp);
        self.tensor_function(tp, &passes);
        self.block_function(tp);
        let (tid, bid) = (self.d.thread_index(), self.d.block_index());
        let shared = self.shared_declarations(tp);
        let ws_note = self.step_comment(|s| matches!(s, Step::Workspace(_)));
        let buffers = self.step_comment(|s| matches!(s, Step::Buffers(_)));
        let b_setup = self.b_setup_call(tp, if tp.b.memory == Memory::Shared { "b_shared" } else { "nullptr" });
        let pipelined = if tp.pipeline >= 2 {
            self.w.lines(&self.async_copy_helpers(tp));
            Some(self.pipelined_batch_loop(tp, &passes, &b_setup))
        } else {
            None
        };
        let b_arg = b_args(tp);
        let scratch = scratch_args(tp, self.plan.request.k);
        let pitch = buffer_pitch(tp, self.plan.request.k);
        let using = self.begin_kernel();
        self.w.block(self.kernel_signature(entry), "", |w| {
            w.line(using);
            w.line(format!("const int tid = {tid};"));
            w.line(format!("const int block = {bid};"));
            w.lines(&shared);
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
                w.line(format!("transform_tensor(a + (long long)n * K3, {b_arg}, c + (long long)n * K3, w0, w1, tid{scratch});"));
            });
        });
    }

    /// The shared arrays of a transform plan, in the order they are laid out: (name, element
    /// count as a C++ expression over the kernel's constants).
    fn shared_arrays(&self, tp: &TransformPlan) -> Vec<(&'static str, &'static str)> {
        // `buffers(N)` K-row buffers of the padded layout (N <= 9, checked by the planner).
        const RING: [&str; 10] = [
            "0",
            "K * W_STRIDE",
            "2 * K * W_STRIDE",
            "3 * K * W_STRIDE",
            "4 * K * W_STRIDE",
            "5 * K * W_STRIDE",
            "6 * K * W_STRIDE",
            "7 * K * W_STRIDE",
            "8 * K * W_STRIDE",
            "9 * K * W_STRIDE",
        ];
        const RING_BARS: [&str; 10] = [
            "0",
            "K * W_STRIDE + 1",
            "2 * K * W_STRIDE + 2",
            "3 * K * W_STRIDE + 3",
            "4 * K * W_STRIDE + 4",
            "5 * K * W_STRIDE + 5",
            "6 * K * W_STRIDE + 6",
            "7 * K * W_STRIDE + 7",
            "8 * K * W_STRIDE + 8",
            "9 * K * W_STRIDE + 9",
        ];
        let mut arrays: Vec<(&str, &str)> = Vec::new();
        if tp.b.memory == Memory::Shared {
            arrays.push(("b_shared", if tp.fragment.is_some() { "KP * B_STRIDE" } else { "K * B_STRIDE" }));
        }
        if tp.out.is_some() {
            arrays.push(("out_tile", "THREADS * OUT_STRIDE"));
        }
        if tp.a.memory == Memory::Shared && !tp.stages_whole_tensor() {
            arrays.push(("a_stage", "KP * A_STRIDE"));
        }
        if tp.wmma_stages_c(self.plan.request.k) {
            arrays.push(("c_stage", "WAVES * FM * NP"));
        }
        if tp.workspace == Memory::Shared && tp.cluster > 1 {
            // Three or four buffers, then one element (8 bytes) per mbarrier: the bulk copies',
            // and with async_exchange(1) one per gather buffer.
            const THREE: [&str; 4] = ["3 * SLICE", "3 * SLICE + 1", "3 * SLICE + 2", "3 * SLICE + 3"];
            const FOUR: [&str; 4] = ["4 * SLICE", "4 * SLICE + 1", "4 * SLICE + 2", "4 * SLICE + 3"];
            let mbarriers = tp.cluster_mbarriers(self.plan.request.arch) as usize;
            arrays.push(("w_shared", if tp.shared_buffers == 4 { FOUR[mbarriers] } else { THREE[mbarriers] }));
        } else if tp.workspace == Memory::Shared {
            let buffers = match tp.shared_buffers {
                2 if !tp.stages_whole_tensor() => "2 * K3",
                // tensors(N): two buffers per warp group.
                2 if tp.tensors > 1 => "GROUPS * 2 * K * W_STRIDE",
                // bulk_copy(1): one element (8 bytes) per buffer for its mbarrier, after them; at odd
                // K two buffers of BUF (the planner allows no other count there).
                2 if tp.shifted_rows(self.plan.request.k) => "2 * BUF + 2",
                n if tp.bulk_copy => RING_BARS[n as usize],
                n => RING[n as usize],
            };
            arrays.push(("w_shared", buffers));
        }
        arrays
    }

    /// `load_b`: B made available to the passes, once per block (staged into shared memory,
    /// loaded into register fragments, or read where it lies). The kernel calls it before its
    /// batch loop, `transform_block` before its one tensor.
    fn b_loader(&mut self, tp: &TransformPlan) {
        let t = self.t();
        let inline = self.d.inline_device();
        let body = match tp.fragment {
            Some(f) => self.tile_b_setup(tp, &f),
            None => self.thread_b_setup(tp),
        };
        if tp.b.memory == Memory::Registers {
            let f = tp.fragment.expect("B in registers is a fragment level");
            if tp.swap_operands {
                let note = self.step_comment(|s| matches!(s, Step::SwapOperands(_)));
                self.w.line(format!("// B^T fragments in registers ({}): one set per lane, for every pass of every tensor.", note.trim_start_matches("// ")));
                self.w.line(format!("typedef {} BFrags[K_STEPS][M_FRAGS];", self.swapped_b_type(&f)));
            } else {
                let b_ty = self.d.mma_operand_type(&f, self.plan.request.dtype, f.b.regs);
                self.w.line("// B fragments in registers: one set per lane, for every pass of every tensor.");
                self.w.line(format!("typedef {b_ty} BFrags[K_STEPS][{}];", if tp.col_split > 1 { "WARP_FRAGS" } else { "N_FRAGS" }));
            }
            let tail = if tp.fma_tail {
                let note = self.step_comment(|s| matches!(s, Step::FmaTail(_)));
                self.w.line(format!("typedef {t} BTail[K];  {note}: this lane's tail column of B, every row k"));
                ", BTail& b_tail"
            } else {
                ""
            };
            self.w.block(format!("{inline} void load_b(const {t}* b, int tid, BFrags& b_frag{tail})"), "", |w| {
                w.line("const int lane = tid % LANES;");
                w.lines(&body);
            });
        } else {
            self.w.line("// B as the passes read it; `b_shared` is used only when B is staged in shared memory.");
            self.w.block(format!("{inline} const {t}* load_b(const {t}* b, {t}* b_shared, int tid)"), "", |w| {
                if tp.b.memory != Memory::Shared {
                    w.line("(void)b_shared;");
                    w.line("(void)tid;");
                }
                w.lines(&body);
                w.line("return bm;");
            });
        }
    }

    /// The statement(s) that call `load_b` at the top of a kernel or of `transform_block`.
    fn b_setup_call(&self, tp: &TransformPlan, b_shared: &str) -> String {
        let t = self.t();
        if tp.b.memory == Memory::Registers {
            if tp.fma_tail {
                "BFrags b_frag;\nBTail b_tail;\nload_b(b, tid, b_frag, b_tail);\n".to_string()
            } else {
                "BFrags b_frag;\nload_b(b, tid, b_frag);\n".to_string()
            }
        } else {
            format!("const {t}* bm = load_b(b, {b_shared}, tid);\n")
        }
    }

    /// `transform_tensor`: one tensor's three passes with the calling block's threads, B already
    /// loaded, the intermediates `w0`/`w1` and the passes' shared scratch given. The kernel's
    /// batch loop calls it once per tensor.
    fn tensor_function(&mut self, tp: &TransformPlan, passes: &[String; 3]) {
        let t = self.t();
        let barrier = self.d.barrier();
        let whole_stage = if tp.stages_whole_tensor() { self.whole_tensor_stage() } else { String::new() };
        let c_store = if tp.coalesce_c { self.coalesced_c_store() } else { String::new() };
        let coalesce_note = self.step_comment(|s| matches!(s, Step::CoalesceC(_)));
        let b_param = b_params(tp, t);
        let scratch: String = scratch_names(tp, self.plan.request.k).iter().map(|n| format!(", {t}* {n}")).collect();
        let head = format!(
            "{} void transform_tensor(const {t}* a_n, {b_param}, {t}* c_n, {t}* w0, {t}* w1, int tid{scratch})",
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
        self.w.line("");
        self.w.line("// What transform_block needs: SHARED_BYTES of shared memory, laid out as the kernel's");
        self.w.line("// dynamic allocation is, and WORKSPACE_ELEMS elements of device memory per block (0: none).");
        let mut end = String::new();
        for (name, count) in &arrays {
            let at = format!("{}_AT", name.to_uppercase());
            self.w.line(format!("constexpr int {at} = {};", if end.is_empty() { "0" } else { &end }));
            end = format!("{at} + {count}");
        }
        if end.is_empty() {
            self.w.line("constexpr int SHARED_BYTES = 0;");
        } else {
            self.w.line(format!("constexpr int SHARED_BYTES = ({end}) * (int)sizeof({t});"));
        }
        let ws = if tp.workspace == Memory::Shared { "0" } else { "2 * K3" };
        self.w.line(format!("constexpr long long WORKSPACE_ELEMS = {ws};"));
        self.w.line("");
        self.w.line("// Transforms one tensor a_n -> c_n (K^3 elements each, device or shared memory; a_n 16-byte");
        self.w.line("// aligned) with the calling block: every thread of a 1-D block of exactly THREADS threads");
        self.w.line("// calls it. smem: SHARED_BYTES bytes of shared memory, 32-byte aligned; workspace: this");
        self.w.line("// block's WORKSPACE_ELEMS elements in device memory. B (K x K, row-major) is loaded on every");
        self.w.line("// call. On return c_n is complete and smem, workspace may be reused (it ends with a barrier).");
        let head = format!("{inline} void transform_block(const {t}* a_n, const {t}* b, {t}* c_n, {t}* workspace, void* smem)");
        let b_shared = if tp.b.memory == Memory::Shared { "b_shared" } else { "nullptr" };
        let b_setup = self.b_setup_call(tp, b_shared);
        let b_arg = b_args(tp);
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
            w.line(format!("transform_tensor(a_n, {b_arg}, c_n, w0, w1, tid{scratch});"));
            if !ends_with_barrier {
                w.line(format!("{barrier}  // c_n complete; smem, workspace and B free for the next call"));
            }
        });
    }

    /// The shared-memory arrays this plan needs, as declarations: static `__shared__` arrays,
    /// or, above the static limit, pointers into one dynamic allocation (the runtime raises
    /// the kernel's dynamic shared-memory limit to match).
    fn shared_declarations(&self, tp: &TransformPlan) -> String {
        let t = self.t();
        let arrays = self.shared_arrays(tp);
        let mut out = String::new();
        if self.plan.dynamic_shared {
            out += &format!(
                "// {} bytes of shared memory: more than a static array may have, so one dynamic allocation.\n",
                self.plan.shared_bytes
            );
            out += &format!("extern __shared__ {} {t} mra_smem[];\n", self.d.align32());
            let mut offset = String::from("0");
            for (name, count) in arrays {
                out += &format!("{t}* {name} = mra_smem + {offset};\n");
                offset = if offset == "0" { format!("({count})") } else { format!("{offset} + ({count})") };
            }
        } else {
            for (name, count) in arrays {
                out += &format!("__shared__ {} {t} {name}[{count}];\n", self.d.align32());
            }
        }
        out
    }

    /// Staging of the whole input tensor into `w1` (free until pass 1 writes it): every thread
    /// loads, 16 bytes at a time where the tensor's alignment allows, then one barrier.
    fn whole_tensor_stage(&self) -> String {
        let cache = self.step_comment(|s| matches!(s, Step::CacheRead { operand: crate::ir::Operand::A, .. }));
        let k = self.plan.request.k;
        let dtype = self.plan.request.dtype;
        let width = 16 / dtype.bytes();
        let mut s = format!("{cache}: the whole tensor goes to w1 in one coalesced sweep.\n");
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
            s += &format!("{vec_t}* w1_vec = reinterpret_cast<{vec_t}*>(w1);\n");
            s += &format!("for (int e = tid; e < K3 / {width}; e += THREADS) {{\n");
            s += &format!("    const int x = e * {width};  // element x of A goes to row x / K2 of the padded layout\n");
            s += &format!("    w1_vec[((x / K2) * {stride} + x % K2) / {width}] = a_vec[e];\n}}\n");
        } else {
            s += "// No 16-byte accesses: the tensors or the padded rows are not 16-byte aligned.\n";
            s += &format!("for (int e = tid; e < K3; e += THREADS) w1[(e / K2) * {stride} + e % K2] = a_n[e];\n");
        }
        s += &format!("{}  // the tensor is staged\n", self.d.barrier());
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

    /// Kernel-entry code that stages B for the thread-mapped passes.
    fn thread_b_setup(&self, tp: &TransformPlan) -> String {
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
    fn gemm_pass(&mut self, tp: &TransformPlan) {
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
        let head = format!(
            "{} void gemm_pass(const {t}* in, const {t}* bm, {t}* out, int tid{tile_param})",
            self.d.inline_device()
        );
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

/// The passes' shared scratch arrays, in parameter order (what `transform_tensor` takes
/// besides B and the intermediates).
fn scratch_names(tp: &TransformPlan, k: u32) -> Vec<&'static str> {
    let mut names = Vec::new();
    if tp.out.is_some() {
        names.push("out_tile");
    }
    if tp.a.memory == Memory::Shared && !tp.stages_whole_tensor() {
        names.push("a_stage");
    }
    if tp.wmma_stages_c(k) {
        names.push("c_stage");
    }
    names
}

/// `, out_tile, a_stage`: the scratch arguments of a `transform_tensor` call.
fn scratch_args(tp: &TransformPlan, k: u32) -> String {
    scratch_names(tp, k).iter().map(|n| format!(", {n}")).collect()
}

/// `mra-codegen/src/levels/l3.rs` → `levels/l3.rs`: enough to find the step, short in comments.
fn short_file(path: &str) -> &str {
    path.find("levels/").map(|i| &path[i..]).unwrap_or(path)
}

/// `#pragma unroll` (fully, `by` = 0) or `#pragma unroll N`.
pub(crate) fn pragma_unroll(by: u32) -> String {
    if by == 0 { "#pragma unroll".into() } else { format!("#pragma unroll {by}") }
}

/// The B arguments the kernel passes on to `transform_tensor` and the passes: the lane's B
/// fragments (and with `fma_tail(1)` its tail column), or the pointer to B.
pub(super) fn b_args(tp: &TransformPlan) -> &'static str {
    match tp.b.memory {
        Memory::Registers if tp.fma_tail => "b_frag, b_tail",
        Memory::Registers => "b_frag",
        _ => "bm",
    }
}

/// The parameters that receive [`b_args`] (element type `t`), with the `load_b` typedefs.
fn b_params(tp: &TransformPlan, t: &str) -> String {
    match tp.b.memory {
        Memory::Registers if tp.fma_tail => "const BFrags& b_frag, const BTail& b_tail".to_string(),
        Memory::Registers => "const BFrags& b_frag".to_string(),
        _ => format!("const {t}* bm"),
    }
}

/// The copy level's loops over the flat batch (`total` elements from `first`, `stride` apart),
/// also the bound's copying part.
struct CopyLoops {
    vector: u32,
    /// The `vector`-element type the accesses use.
    vec_t: String,
    dtype: crate::dtype::DType,
}

impl CopyLoops {
    /// With `each`: every lane runs its wave's lane 0's iterations and runs `each` after each
    /// one (the bound's interleaved instructions, which need the whole wave), `per` of `count`.
    fn write(&self, w: &mut Writer, each: Option<&str>) {
        let (vector, vec_t) = (self.vector, &self.vec_t);
        if vector == 1 {
            w.line(format!("for (long long e = first; e < total; e += stride) c[e] = a[e];  // {}", self.dtype.cpp()));
            return;
        }
        w.line(format!("// {}-byte accesses for all but the last total % VEC elements.", vector * self.dtype.bytes()));
        w.line("const long long nvec = total / VEC;");
        w.line(format!("const {vec_t}* a_vec = reinterpret_cast<const {vec_t}*>(a);"));
        w.line(format!("{vec_t}* c_vec = reinterpret_cast<{vec_t}*>(c);"));
        match each {
            None => {
                w.line("// Unrolled so that each thread has several loads in flight (small K is latency-bound).");
                w.line("#pragma unroll 4");
                w.line("for (long long v = first; v < nvec; v += stride) c_vec[v] = a_vec[v];");
            }
            Some(each) => {
                w.line("// Every lane of a wave runs its lane 0's iterations: the matrix instructions need the whole wave.");
                w.line("const long long iters = first - lane < nvec ? (nvec - 1 - (first - lane)) / stride + 1 : 0;");
                w.line("const long long per = iters > 0 ? count / iters : 0;  // instructions per iteration");
                w.block("for (long long i = 0; i < iters; ++i)", "", |w| {
                    w.line("const long long v = first + i * stride;");
                    w.line("if (v < nvec) c_vec[v] = a_vec[v];");
                    w.line(each);
                });
                w.line("count -= per * iters;");
            }
        }
        w.line("for (long long e = nvec * VEC + first; e < total; e += stride) c[e] = a[e];");
    }
}

/// The elements from one shared buffer of the fused passes to the next: K rows of W_STRIDE, or
/// BUF where bulk copies shift odd-K tensors (`TransformPlan::shifted_rows`); two K³
/// intermediates where the input is not staged whole.
fn buffer_pitch(tp: &TransformPlan, k: u32) -> &'static str {
    if !tp.stages_whole_tensor() {
        "K3"
    } else if tp.shifted_rows(k) {
        "BUF"
    } else {
        "K * W_STRIDE"
    }
}

//! Lowering a [`Plan`] to C++ source for one (level, K, arch, dtype).
//!
//! One generator serves both vendors; vendor differences go through [`dialect::Dialect`].
//! Each part of the output carries a comment naming the schedule step (and its line in the
//! schedule's source file) that produced it.
//!
//! Here: the entry point, the header and the kernel signature every level shares. A transform
//! level's kernel is put together in `transform.rs` from its pass functions (thread-mapped:
//! `thread_mapped.rs`; tensorized: `tensor.rs` and `tile_body.rs`, with `cluster.rs`,
//! `split.rs`, `swapped.rs` and `pipeline.rs` for the schedules that change their shape),
//! `load_b.rs` and `shared_layout.rs`. The other levels: `copy.rs`, `shadow.rs`, `library.rs`.

mod cluster;
mod copy;
pub mod dialect;
mod fma_tail;
mod library;
mod load_b;
mod operation;
mod pipeline;
mod rank_sum;
mod rank_sum_stage;
mod rank_sum_thread;
mod shadow;
mod shared_layout;
mod split;
mod swapped;
mod tensor;
mod thread_mapped;
mod tile_body;
mod tile_pass;
mod tma;
mod transform;
mod unused;
mod wmma;
mod writer;

use crate::ir::{Schedule, Step};
use crate::plan::{Body, Plan, PlanError, Request, TransformPlan};
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
    generate_op(schedule, req, crate::op::Operation::SEED)
}

/// Generates the kernel for `schedule` at `req` computing `op` ([`Schedule::plan_op`]).
pub fn generate_op(schedule: &Schedule, req: Request, op: crate::op::Operation) -> Result<Kernel, PlanError> {
    let plan = schedule.plan_op(req, op)?;
    let dialect = dialect::for_vendor(req.arch.vendor);
    let entry = entry_name(schedule, &req) + &op.suffix();
    let mut e = Emitter { s: schedule, plan: &plan, d: dialect, w: Writer::default(), namespace: namespace_name(schedule, &req) + &op.suffix(), namespace_open: true };
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

/// The namespace of the kernel whose entry point is `entry` (`mra_fused_k10_f64_oprab` →
/// `mra::fused_k10_f64_oprab`): [`namespace_name`] with the operation's suffix.
pub fn namespace_of(kernel: &Kernel) -> String {
    format!("mra::{}", kernel.entry.strip_prefix("mra_").unwrap_or(&kernel.entry))
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
        if self.op().is_seed() {
            self.w.lines(
                "// The operation: C_n(i,j,k) = sum_{a,b,c} A_n(a,b,c) B(a,i) B(b,j) B(c,k), computed as three\n\
                 // passes of out(i,j) = sum_k in(k,i) * B(k,j), in: K x K^2, out: K^2 x K row-major.",
            );
        } else {
            self.w.lines(&self.operation_comment());
        }
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
        self.scaled_output();
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
            // A rank sum holds them across its terms; where shared memory admits fewer blocks
            // than that bound assumes, the registers of the blocks that cannot be there are free.
            Body::Transform(_) if self.plan.op.matrices == crate::op::Matrices::RankSum && self.plan.min_blocks.is_none() => {
                let arch = self.plan.request.arch;
                let by_shared = (arch.shared_bytes_max / self.plan.shared_bytes.max(1)).max(1);
                self.d.launch_bounds_min_blocks(self.plan.threads, (65536 / (self.plan.threads * 128)).clamp(1, by_shared), arch)
            }
            Body::Transform(tp) if tp.shared_buffers == 1 && self.plan.min_blocks.is_none() => {
                self.d.launch_bounds_min_blocks(self.plan.threads, (65536 / (self.plan.threads * 128)).max(1), self.plan.request.arch)
            }
            _ => self.d.launch_bounds(self.plan.threads, self.plan.min_blocks, self.plan.request.arch),
        }
    }

    fn kernel_signature(&self, entry: &str) -> String {
        let bounds = self.kernel_bounds().map(|b| b + " ").unwrap_or_default();
        let bounds = match self.plan.body {
            Body::Transform(_) if self.plan.cluster_blocks() > 1 => format!("__cluster_dims__({}, 1, 1) {bounds}", self.plan.cluster_blocks()),
            _ => bounds,
        };
        format!("extern \"C\" __global__ void {bounds}{entry}({})", self.kernel_params())
    }
}

/// `mra-codegen/src/levels/l3_regblk.rs` → `levels/l3_regblk.rs`: enough to find the step, short in comments.
fn short_file(path: &str) -> &str {
    path.find("levels/").map(|i| &path[i..]).unwrap_or(path)
}

/// `#pragma unroll` (fully, `by` = 0) or `#pragma unroll N`.
pub(crate) fn pragma_unroll(by: u32) -> String {
    if by == 0 { "#pragma unroll".into() } else { format!("#pragma unroll {by}") }
}

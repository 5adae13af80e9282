//! The seed's benchmark harness on one GPU, and the validation run, written once against the
//! [`Backend`] trait (CUDA: [`CudaSession`]; HIP: [`HipSession`]).
//!
//! A timed repetition submits `tasks` kernel launches, each transforming all N tensors with
//! at most M blocks, round-robin over S streams; it is timed with device events from a start
//! event on stream 0 (that all streams wait for) to an end event after all streams joined.
//! Untimed repetitions come first. Each stream has its own workspace so concurrent tasks
//! never share intermediates.

pub use crate::backend::{Backend, Gemm, LaunchArgs};
use crate::cache::KernelCache;
use crate::error::{Result, RuntimeError};
use crate::reference;
use crate::validate::Comparison;
pub use crate::warmup::{Warmup, WarmupDone};
use mra_codegen::ir::LibraryCall;
use mra_codegen::plan::Body;
use mra_codegen::{DType, Kernel, Plan, Request, Schedule};
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::rc::Rc;

/// Upper bounds of -n, -s and -r (see [`HarnessConfig::check`]).
pub const MAX_TASKS: usize = 1_000_000_000;
pub const MAX_STREAMS: usize = 1024;
pub const MAX_REPS: usize = 1_000_000;

/// The harness parameters (the seed's -N, -M, -n, -s, -r, and our --warmup).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct HarnessConfig {
    pub nfuncs: usize,
    pub max_blocks: usize,
    pub tasks: usize,
    pub streams: usize,
    pub reps: usize,
    /// The untimed repetitions before the timed ones (`--warmup`).
    #[serde(skip)]
    pub warmup: Warmup,
    /// Whether the streams share one A and C (the seed's harness) or each has its own
    /// (`--stream-data`).
    #[serde(skip)]
    pub stream_data: StreamData,
}

/// The data the harness's streams transform. The seed's harness gives every stream the same
/// A and C, so tasks running side by side read (and write) the same lines and can hit in L2
/// where N·K³ values in and out fit in or near it: the copy floor then runs above the DRAM
/// rate (bench/NOTES.md runs 31, 80). A code whose streams transform different functions
/// never sees that; `Private` gives each stream its own A and C to measure what it does see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamData {
    /// One A and one C for every stream (the seed's harness).
    #[default]
    Shared,
    /// An A and a C per stream, each stream's A holding the same values.
    Private,
}

impl StreamData {
    /// `shared` or `private` (the command line's spelling).
    pub fn parse(s: &str) -> std::result::Result<StreamData, String> {
        match s {
            "shared" => Ok(StreamData::Shared),
            "private" => Ok(StreamData::Private),
            _ => Err(format!("'{s}' is not shared or private (shared: every stream transforms the same A into the same C, the seed's harness; private: each stream has its own)")),
        }
    }

    /// How many copies of A and of C a configuration with `streams` streams holds.
    pub fn copies(self, streams: usize) -> usize {
        match self {
            StreamData::Shared => 1,
            StreamData::Private => streams,
        }
    }
}

impl HarnessConfig {
    /// Blocks per launch: min(N, M).
    pub fn nblocks(&self) -> usize {
        self.nfuncs.min(self.max_blocks)
    }

    pub fn check(&self) -> Result<()> {
        let bad = |what: &str| Err(RuntimeError::Invalid(what.to_string()));
        if self.nfuncs == 0 {
            return bad("-N must be at least 1 (the number of tensors per task)");
        }
        if self.nfuncs > i32::MAX as usize {
            return bad("-N must fit in a 32-bit int");
        }
        if self.max_blocks == 0 {
            return bad("-M must be at least 1 (the maximum number of blocks per launch)");
        }
        if self.tasks == 0 {
            return bad("-n must be at least 1 (tasks per timed repetition)");
        }
        if self.streams == 0 {
            return bad("-s must be at least 1 (streams)");
        }
        if self.reps == 0 {
            return bad("-r must be at least 1 (timed repetitions)");
        }
        // Upper bounds far above any real run, so that no size or count computed from them wraps.
        if self.max_blocks > i32::MAX as usize {
            return bad("-M must fit in a 32-bit int (it is a launch's grid size)");
        }
        if self.tasks > MAX_TASKS {
            return Err(RuntimeError::Invalid(format!("-n must be at most {MAX_TASKS} (tasks per timed repetition)")));
        }
        if self.streams > MAX_STREAMS {
            return Err(RuntimeError::Invalid(format!("-s must be at most {MAX_STREAMS} (streams)")));
        }
        if self.reps > MAX_REPS {
            return Err(RuntimeError::Invalid(format!("-r must be at most {MAX_REPS} (timed repetitions)")));
        }
        Ok(())
    }
}

/// A GPU with its compiler and the kernel cache: what running a level needs.
pub struct Session<B: Backend> {
    pub gpu: B,
    pub compiler: B::Compiler,
    pub cache: KernelCache,
}

/// The CUDA session: driver API, NVRTC, cuBLAS.
pub type CudaSession = Session<crate::cuda::Gpu>;
/// The HIP session: libamdhip64, hiprtc or clang, hipBLAS.
pub type HipSession = Session<crate::hip::runtime::Gpu>;

/// The CPU wave emulator's session: the generated HIP run on host threads, host clang++.
pub type EmulatorSession = Session<crate::emulate::Emulator>;

impl EmulatorSession {
    /// The emulator for an AMD `arch`, with the host clang++ (one line saying what is missing
    /// when there is none).
    pub fn open_emulator(emulator: crate::emulate::Emulator, cache: KernelCache) -> Result<EmulatorSession> {
        let compiler = crate::emulate::HostClang::find()?;
        let checker = emulator.checker();
        if checker == crate::emulate::Checker::Races && !crate::emulate::compile::links_with(&compiler.path, checker) {
            return Err(crate::error::RuntimeError::Invalid(format!(
                "--races needs a clang++ that links with ThreadSanitizer; {} does not (Debian: `apt-get install libclang-rt-19-dev`, or point MRA_CLANG at another clang++)",
                compiler.describe()
            )));
        }
        Ok(Session { gpu: emulator, compiler, cache })
    }
}

/// A level compiled and loaded for one (K, dtype) on this GPU.
pub struct Prepared<B: Backend> {
    pub kernel: Kernel,
    /// The compiled kernel, if the level has one (the three-GEMM level has none).
    pub compiled: Option<B::Compiled>,
    pub task: Task<B>,
    /// With `persistent(1)`: how many of the kernel's blocks the device holds at once (the
    /// backend's occupancy for the loaded kernel), which caps every launch's grid.
    pub resident_blocks: Option<usize>,
    /// For a thread-block-cluster kernel: how many clusters the device holds at once against
    /// its block slots (`None`: not a cluster kernel, or the backend cannot tell).
    pub clusters: Option<crate::residency::ClusterResidency>,
}

/// What one task of a level submits.
pub enum Task<B: Backend> {
    /// One launch of the generated kernel.
    Kernel(B::Function),
    /// One GEMM with the Kronecker matrix, which `build` makes from B (untimed, whenever B
    /// changes: see [`Prepared::set_b`]).
    Kronecker { build: B::Function, matrix: B::Buffer, blas: BlasPerStream<B> },
    /// Three strided-batched GEMMs through the stream's two batch workspaces.
    ThreeGemm { blas: BlasPerStream<B> },
}

/// One BLAS handle per stream: a handle's workspace must not be shared by GEMMs running
/// concurrently on different streams (cuBLAS documentation, "Thread safety" / streams; the
/// same holds for hipBLAS over rocBLAS). Handles are made on first use by a stream (the
/// harness's warm-up covers that).
pub struct BlasPerStream<B: Backend>(RefCell<Vec<Rc<B::Blas>>>);

impl<B: Backend> Default for BlasPerStream<B> {
    fn default() -> Self {
        BlasPerStream(RefCell::new(Vec::new()))
    }
}

impl<B: Backend> BlasPerStream<B> {
    fn get(&self, gpu: &B, s: usize) -> Result<Rc<B::Blas>> {
        let mut v = self.0.borrow_mut();
        while v.len() <= s {
            v.push(Rc::new(gpu.blas()?));
        }
        Ok(v[s].clone())
    }
}

impl<B: Backend> Prepared<B> {
    /// Work that depends on B alone, done once after B is uploaded and before any task: the
    /// Kronecker level builds its K⁶ matrix here (the seed does the same, untimed).
    pub fn set_b(&self, gpu: &B, bufs: &Buffers<B>) -> Result<()> {
        if let Task::Kronecker { build, matrix, .. } = &self.task {
            let stream = gpu.stream()?;
            let args = LaunchArgs { c: B::device_ptr(matrix), nblocks: 1024, ..bufs.args(0) };
            gpu.launch(build, &stream, self.kernel.plan.threads, &args)?;
            gpu.synchronize(&stream)?;
        }
        Ok(())
    }

    /// The blocks one launch of the kernel uses when the buffers were sized for `nblocks`
    /// (min(N, M), whole clusters): fewer with `persistent(1)` where the device holds fewer.
    pub fn grid_blocks(&self, nblocks: usize) -> usize {
        self.kernel.plan.persistent_grid(nblocks, self.resident_blocks)
    }

    /// Submits one task (all N tensors) on `stream`, the `s`-th stream of the harness.
    pub fn launch(&self, gpu: &B, stream: &B::Stream, bufs: &Buffers<B>, s: usize) -> Result<()> {
        let plan = &self.kernel.plan;
        let (k, dtype) = (plan.request.k as i64, plan.request.dtype);
        let (k3, n) = (k * k * k, bufs.nfuncs as i64);
        match &self.task {
            Task::Kernel(f) => gpu.launch(f, stream, plan.threads, &LaunchArgs { nblocks: self.grid_blocks(bufs.nblocks) as i32, ..bufs.args(s) }),
            Task::Kronecker { matrix, blas, .. } => gpu.gemm(
                &*blas.get(gpu, s)?,
                stream,
                dtype,
                &Gemm {
                    transa: false, transb: false, m: k3 as i32, n: n as i32, k: k3 as i32,
                    a: B::device_ptr(matrix), lda: k3 as i32, stride_a: 0,
                    b: B::device_ptr(bufs.a_of(s)), ldb: k3 as i32, stride_b: 0,
                    c: B::device_ptr(bufs.c_of(s)), ldc: k3 as i32, stride_c: 0, batch: 1,
                },
            ),
            Task::ThreeGemm { blas } => {
                let blas = blas.get(gpu, s)?;
                // out_n (K² x K row-major) = in_n^T B is, column-major, X (K x K²) =
                // B (K x K, ld K) * in_n^T (in_n viewed K² x K, ld K², transposed).
                let e = dtype.bytes() as u64;
                let s0 = B::device_ptr(&bufs.workspaces[s]);
                let s1 = s0 + (n * k3) as u64 * e;
                for (input, out) in [(B::device_ptr(bufs.a_of(s)), s0), (s0, s1), (s1, B::device_ptr(bufs.c_of(s)))] {
                    gpu.gemm(
                        &blas,
                        stream,
                        dtype,
                        &Gemm {
                            transa: false, transb: true, m: k as i32, n: (k * k) as i32, k: k as i32,
                            a: B::device_ptr(&bufs.b), lda: k as i32, stride_a: 0,
                            b: input, ldb: (k * k) as i32, stride_b: k3,
                            c: out, ldc: k as i32, stride_c: k3, batch: n as i32,
                        },
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// Device buffers for one harness configuration, in the kernel's element type.
pub struct Buffers<B: Backend> {
    /// Stream 0's A and C (every stream's, unless `--stream-data private`).
    pub a: B::Buffer,
    pub b: B::Buffer,
    pub c: B::Buffer,
    /// With `--stream-data private`: the A and C of streams 1, 2, ... (empty otherwise).
    pub private: Vec<(B::Buffer, B::Buffer)>,
    /// One per stream (may be empty allocations for levels without a workspace).
    pub workspaces: Vec<B::Buffer>,
    pub dtype: DType,
    pub nfuncs: usize,
    pub nblocks: usize,
}

impl CudaSession {
    /// Opens GPU 0 (driver first, so a machine without one gets that message), then NVRTC.
    pub fn open(cache: KernelCache) -> Result<CudaSession> {
        let gpu = crate::cuda::Gpu::open(0)?;
        let compiler = crate::cuda::nvrtc::Nvrtc::load()?;
        Ok(Session { gpu, compiler, cache })
    }
}

impl HipSession {
    /// AMD GPU 0 (opened by the caller, which words the no-GPU case) with the compiler for its
    /// arch: hiprtc where the installed ROCm's hiprtc supports it, else clang (`choice`).
    pub fn open(gpu: crate::hip::runtime::Gpu, choice: crate::hip::compile::Choice, cache: KernelCache) -> Result<HipSession> {
        let compiler = crate::hip::compile::AmdCompiler::choose(gpu.arch.name, choice)?;
        Ok(Session { gpu, compiler, cache })
    }
}

/// Elements of workspace one stream needs for `plan` under `cfg`.
pub fn workspace_elems_per_stream(cfg: &HarnessConfig, plan: &Plan) -> u64 {
    (cfg.nblocks() as u64)
        .saturating_mul(plan.workspace_elems_per_block)
        .saturating_add((cfg.nfuncs as u64).saturating_mul(plan.workspace_elems_per_tensor))
}

/// Device bytes a configuration needs: A, C (one pair per stream with `--stream-data
/// private`), B and one workspace per stream. Saturates at
/// `u64::MAX` (which no device has) rather than wrapping to a small number.
pub fn bytes_needed(cfg: &HarnessConfig, plan: &Plan) -> u64 {
    let e = plan.request.dtype.bytes() as u64;
    let k = plan.request.k as u64;
    let copies = cfg.stream_data.copies(cfg.streams) as u64;
    let tensors = (cfg.nfuncs as u64).saturating_mul(k.pow(3)).saturating_mul(e).saturating_mul(2).saturating_mul(copies);
    let workspaces = (cfg.streams as u64).saturating_mul(workspace_elems_per_stream(cfg, plan)).saturating_mul(e);
    tensors.saturating_add(k.pow(2) * e).saturating_add(workspaces)
}

impl<B: Backend> Session<B> {
    /// Generates, compiles (through the cache) and loads a level; a library level also gets
    /// its BLAS handles (made on first use) and, for the Kronecker level, its K⁶ matrix.
    pub fn prepare(&self, schedule: &Schedule, k: u32, dtype: DType) -> Result<Prepared<B>> {
        self.prepare_kernel(mra_codegen::generate(schedule, Request { k, arch: self.gpu.arch(), dtype })?)
    }

    /// [`Session::prepare`] for a kernel already generated, whose source the caller may have
    /// replaced (`--source`: a hand-edited kernel launched as the level's plan says).
    pub fn prepare_kernel(&self, kernel: mra_codegen::Kernel) -> Result<Prepared<B>> {
        let (k, dtype) = (kernel.plan.request.k, kernel.plan.request.dtype);
        let what = format!("{} at K={k} ({dtype})", kernel.level);
        let (compiled, function) = if kernel.entry.is_empty() {
            (None, None)
        } else {
            let compiled = self.gpu.compile(&self.compiler, &kernel.source, &kernel.entry, &self.cache)?;
            if let Some(r) = B::resources(&compiled) {
                crate::residency::check_one_block_fits(self.gpu.arch(), &r, &kernel.plan, &what)?;
            }
            let dynamic = if kernel.plan.dynamic_shared { kernel.plan.shared_bytes } else { 0 };
            let function = self.gpu.load(&compiled, &kernel.entry, dynamic)?;
            (Some(compiled), Some(function))
        };
        let task = match (kernel.plan.body, function) {
            (Body::Library(LibraryCall::Kronecker), Some(build)) => {
                let bytes = (k as u64).pow(6) * dtype.bytes() as u64;
                let (free, _) = self.gpu.memory()?;
                if bytes as f64 > free as f64 * 0.9 {
                    return Err(RuntimeError::OutOfMemory {
                        what: format!("{} at K={k} ({dtype}): the K^6 Kronecker matrix", kernel.level),
                        need_mib: bytes as f64 / 1048576.0,
                        free_mib: free as f64 / 1048576.0,
                    });
                }
                Task::Kronecker { build, matrix: self.gpu.alloc(bytes as usize)?, blas: BlasPerStream::default() }
            }
            (Body::Library(_), _) => Task::ThreeGemm { blas: BlasPerStream::default() },
            (_, Some(f)) => Task::Kernel(f),
            (_, None) => unreachable!("every non-library level has a kernel"),
        };
        let (threads, cluster_blocks) = (kernel.plan.threads, kernel.plan.cluster_blocks());
        let resident_blocks = match &task {
            Task::Kernel(f) if kernel.plan.persistent => self.gpu.resident_blocks(f, threads)?,
            _ => None,
        };
        // A cluster kernel: how much of the device its clusters can hold, or a one-line refusal
        // where not one cluster fits (the driver would fail every launch).
        let clusters = match &task {
            Task::Kernel(f) if cluster_blocks > 1 => {
                let resources = compiled.as_ref().and_then(B::resources).map(|r| crate::residency::describe_resources(&r, &kernel.plan)).unwrap_or_else(|| "its registers and shared memory".into());
                let refusal = || RuntimeError::ClusterDoesNotFit { what: format!("{what} on {}", self.gpu.device_name()), cluster_blocks, threads, resources };
                crate::residency::cluster_residency(self.gpu.resident_clusters(f, threads, cluster_blocks)?, self.gpu.resident_blocks(f, threads)?, cluster_blocks, refusal)?
            }
            _ => None,
        };
        Ok(Prepared { kernel, compiled, task, resident_blocks, clusters })
    }

    /// How a prepared level's kernel was compiled (` compiled with NVRTC 13.0 in ...`), or
    /// that it has none (`: cuBLAS calls, no kernel to compile`): what follows the level in
    /// the run's log line.
    pub fn compile_note(&self, p: &Prepared<B>) -> String {
        match &p.compiled {
            Some(c) => format!(" {}", B::compile_note(&self.compiler, c)),
            None => format!(": {} calls, no kernel to compile", B::BLAS_NAME),
        }
    }

    /// `n` streams for [`time_reps`].
    pub fn streams(&self, n: usize) -> Result<Vec<B::Stream>> {
        (0..n).map(|_| self.gpu.stream()).collect()
    }

    /// Checks that the buffers for `cfg` and `plan` fit in free device memory.
    pub fn check_memory(&self, cfg: &HarnessConfig, plan: &Plan) -> Result<()> {
        let need = bytes_needed(cfg, plan);
        let (free, _) = self.gpu.memory()?;
        // Leave headroom for the context, modules and the driver's own allocations.
        if need as f64 > free as f64 * 0.95 {
            let (k, dtype) = (plan.request.k, plan.request.dtype);
            return Err(RuntimeError::OutOfMemory {
                what: match cfg.stream_data {
                    StreamData::Shared => format!("N={} tensors of K={k} ({dtype}) with {} streams of workspace", cfg.nfuncs, cfg.streams),
                    StreamData::Private => format!("N={} tensors of K={k} ({dtype}) with {} streams of private A, C and workspace", cfg.nfuncs, cfg.streams),
                },
                need_mib: need as f64 / 1048576.0,
                free_mib: free as f64 / 1048576.0,
            });
        }
        Ok(())
    }

    /// Allocates the buffers for `cfg` and `plan`, after checking they fit in free device memory.
    pub fn allocate(&self, cfg: &HarnessConfig, plan: &Plan) -> Result<Buffers<B>> {
        self.check_memory(cfg, plan)?;
        let (k, dtype) = (plan.request.k, plan.request.dtype);
        let e = dtype.bytes() as usize;
        let k3 = (k as usize).pow(3);
        let ws = workspace_elems_per_stream(cfg, plan) as usize * e;
        let gpu = &self.gpu;
        Ok(Buffers {
            a: gpu.alloc(cfg.nfuncs * k3 * e)?,
            b: gpu.alloc((k as usize).pow(2) * e)?,
            c: gpu.alloc(cfg.nfuncs * k3 * e)?,
            private: (1..cfg.stream_data.copies(cfg.streams))
                .map(|_| Ok((gpu.alloc(cfg.nfuncs * k3 * e)?, gpu.alloc(cfg.nfuncs * k3 * e)?)))
                .collect::<Result<_>>()?,
            workspaces: (0..cfg.streams).map(|_| gpu.alloc(ws)).collect::<Result<_>>()?,
            dtype,
            nfuncs: cfg.nfuncs,
            // A cluster level's grid is whole clusters (min(N, M) rounded up); a stack(N) level
            // has work for ceil(N / stack) blocks.
            nblocks: plan.grid_blocks(plan.work_blocks(cfg.nfuncs).min(cfg.max_blocks)),
        })
    }
}

/// Host values converted to the device element type's bytes.
pub fn to_device_bytes(dtype: DType, v: &[f64]) -> Vec<u8> {
    match dtype {
        DType::F64 => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        DType::F32 => v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect(),
        DType::F16 => v.iter().flat_map(|x| half::f16::from_f64(*x).to_le_bytes()).collect(),
        DType::Bf16 => v.iter().flat_map(|x| half::bf16::from_f64(*x).to_le_bytes()).collect(),
    }
}

/// Device bytes back to f64 values.
pub fn from_device_bytes(dtype: DType, b: &[u8]) -> Vec<f64> {
    match dtype {
        DType::F64 => b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect(),
        DType::F32 => b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64).collect(),
        DType::F16 => b.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64()).collect(),
        DType::Bf16 => b.chunks_exact(2).map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64()).collect(),
    }
}

/// `x` rounded to what `dtype` holds.
pub fn round_to(dtype: DType, x: f64) -> f64 {
    match dtype {
        DType::F64 => x,
        DType::F32 => x as f32 as f64,
        DType::F16 => half::f16::from_f64(x).to_f64(),
        DType::Bf16 => half::bf16::from_f64(x).to_f64(),
    }
}

/// `n` uniform values in [-1, 1), rounded to what `dtype` can hold so that the FP64
/// reference sees exactly the inputs the GPU sees.
pub fn random_inputs(dtype: DType, n: usize, rng: &mut impl Rng) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let x: f64 = rng.random_range(-1.0..1.0);
            round_to(dtype, x)
        })
        .collect()
}

impl<B: Backend> Buffers<B> {
    /// The A that stream `s` reads.
    pub fn a_of(&self, s: usize) -> &B::Buffer {
        if s == 0 || self.private.is_empty() { &self.a } else { &self.private[s - 1].0 }
    }

    /// The C that stream `s` writes.
    pub fn c_of(&self, s: usize) -> &B::Buffer {
        if s == 0 || self.private.is_empty() { &self.c } else { &self.private[s - 1].1 }
    }

    #[inline]
    fn args(&self, stream: usize) -> LaunchArgs {
        LaunchArgs {
            a: B::device_ptr(self.a_of(stream)),
            b: B::device_ptr(&self.b),
            c: B::device_ptr(self.c_of(stream)),
            workspace: B::device_ptr(&self.workspaces[stream]),
            nfuncs: self.nfuncs as i32,
            nblocks: self.nblocks as i32,
        }
    }

    /// Uploads A and B.
    pub fn upload_inputs(&self, gpu: &B, inputs: &Inputs) -> Result<()> {
        self.upload_a(gpu, &to_device_bytes(self.dtype, &inputs.a))?;
        gpu.upload(&self.b, &to_device_bytes(self.dtype, &inputs.b))
    }

    /// Uploads `bytes` as A, into every stream's A where the streams have their own.
    pub fn upload_a(&self, gpu: &B, bytes: &[u8]) -> Result<()> {
        gpu.upload(&self.a, bytes)?;
        self.private.iter().try_for_each(|(a, _)| gpu.upload(a, bytes))
    }
}

/// Fresh random inputs for one validation case and their FP64 CPU reference.
pub struct Inputs {
    pub k: u32,
    pub seed: u64,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    /// The transform of `a` by `b`, computed in FP64 on the CPU.
    pub reference: Vec<f64>,
}

impl Inputs {
    /// Host bytes a validation at (`k`, `nfuncs`) holds at its peak: A and the reference as
    /// f64, then C as downloaded and C converted to f64 (the upload copy of A is freed before):
    /// at most 4 arrays of N·K³ doubles, plus B. `None` if that does not fit in 64 bits.
    pub fn host_bytes(k: u32, nfuncs: usize) -> Option<u64> {
        let k3 = (k as u64).checked_pow(3)?;
        (nfuncs as u64).checked_mul(k3)?.checked_mul(4 * 8)?.checked_add((k as u64).pow(2) * 8)
    }

    /// Uniform values in [-1, 1) from `seed`, rounded to `dtype`.
    pub fn random(dtype: DType, k: u32, nfuncs: usize, seed: u64) -> Inputs {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let a = random_inputs(dtype, nfuncs * (k as usize).pow(3), &mut rng);
        let b = random_inputs(dtype, (k as usize).pow(2), &mut rng);
        let reference = reference::transform_batch(k as usize, &a, &b);
        Inputs { k, seed, a, b, reference }
    }
}

/// Runs a prepared level once on poisoned outputs and workspaces; returns C as f64.
pub fn run_once<B: Backend>(gpu: &B, p: &Prepared<B>, bufs: &Buffers<B>, stream: &B::Stream) -> Result<Vec<f64>> {
    gpu.poison(&bufs.c)?;
    for w in &bufs.workspaces {
        gpu.poison(w)?;
    }
    p.launch(gpu, stream, bufs, 0)?;
    gpu.synchronize(stream)?;
    Ok(from_device_bytes(bufs.dtype, &gpu.download(&bufs.c)?))
}

/// Validates a prepared level on `inputs` against the FP64 CPU reference (the copy level
/// against its input, which it must reproduce exactly).
pub fn validate<B: Backend>(gpu: &B, p: &Prepared<B>, bufs: &Buffers<B>, inputs: &Inputs) -> Result<Comparison> {
    bufs.upload_inputs(gpu, inputs)?;
    p.set_b(gpu, bufs)?;
    let got = run_once(gpu, p, bufs, &gpu.stream()?)?;
    let want = if p.kernel.plan.is_copy() { &inputs.a } else { &inputs.reference };
    Ok(Comparison::of_in(&got, want, bufs.dtype))
}

/// Runs the timed harness: untimed repetitions as `cfg.warmup` asks (at least one; by default
/// at least 200 ms), then `cfg.reps` timed ones. Returns microseconds per repetition (all
/// `cfg.tasks` tasks).
pub fn time_reps<B: Backend>(gpu: &B, p: &Prepared<B>, bufs: &Buffers<B>, streams: &[B::Stream], cfg: &HarnessConfig) -> Result<Vec<f64>> {
    time_reps_clocked(gpu, p, bufs, streams, cfg, None).map(|t| t.times)
}

/// A repetition counts as host-bound when submitting its tasks took at least this share of
/// the device time it measured: the GPU then waited for launches, and the time is the host's.
pub const HOST_BOUND_SHARE: f64 = 0.9;

/// What "host-bound" means, for the notes that name such repetitions.
pub fn host_bound_rule() -> String {
    format!("submitting the tasks took >= {:.0}% of the time measured, so the GPU waited for launches", HOST_BOUND_SHARE * 100.0)
}

/// What [`time_reps_clocked`] measured.
#[derive(Clone, Debug)]
pub struct Timing {
    /// Microseconds per timed repetition (device events).
    pub times: Vec<f64>,
    /// Host microseconds each timed repetition took to submit (events, launches and joins).
    pub submit_us: Vec<f64>,
    /// The SM clock during the timed repetitions (not the warm-up), where it could be read.
    pub clock: Option<crate::clocks::ClockStats>,
    pub warmup: WarmupDone,
}

/// [`time_reps`], with the SM clock read by `clocks` every 10 ms during the timed repetitions
/// (and during a `settle` warm-up, to see when it stops moving).
pub fn time_reps_clocked<B: Backend>(
    gpu: &B,
    p: &Prepared<B>,
    bufs: &Buffers<B>,
    streams: &[B::Stream],
    cfg: &HarnessConfig,
    clocks: Option<&std::sync::Arc<dyn crate::clocks::ClockSource>>,
) -> Result<Timing> {
    let events = RepEvents { start: gpu.event()?, end: gpu.event()?, joins: streams.iter().map(|_| gpu.event()).collect::<Result<_>>()? };
    p.set_b(gpu, bufs)?;
    let warmup = crate::warmup::run(cfg.warmup, clocks, || one_rep(gpu, p, bufs, streams, cfg, &events).map(|r| r.device_ms))?;
    let sampler = clocks.map(|c| crate::clocks::Sampler::start(c.clone(), std::time::Duration::from_millis(10)));
    let timed = (0..cfg.reps).map(|_| one_rep(gpu, p, bufs, streams, cfg, &events)).collect::<Result<Vec<Rep>>>();
    let clock = sampler.and_then(|s| s.finish());
    let timed = timed?;
    Ok(Timing {
        times: timed.iter().map(|r| r.device_ms * 1000.0).collect(),
        submit_us: timed.iter().map(|r| r.submit_ms * 1000.0).collect(),
        clock,
        warmup,
    })
}

impl Timing {
    /// Whether timed repetition `i` was host-bound (see [`HOST_BOUND_SHARE`]).
    pub fn host_bound(&self, i: usize) -> bool {
        self.submit_us[i] >= HOST_BOUND_SHARE * self.times[i]
    }

    /// How many timed repetitions were host-bound.
    pub fn host_bound_reps(&self) -> usize {
        (0..self.times.len()).filter(|&i| self.host_bound(i)).count()
    }

    /// `3 of 5 repetitions were host-bound: submitting took 2610 µs of the 2623 µs measured
    /// (median)`, or None when none was.
    pub fn host_bound_note(&self) -> Option<String> {
        let n = self.host_bound_reps();
        (n > 0).then(|| {
            format!(
                "{n} of {} repetitions were host-bound: submitting the tasks took {:.0} µs of the {:.0} µs measured (median), so the GPU waited for launches and the time is the host's, not the kernel's",
                self.times.len(),
                median(&self.submit_us),
                median(&self.times)
            )
        })
    }
}

/// One repetition: its device time (events) and the host time its submission took, in ms.
struct Rep {
    device_ms: f64,
    submit_ms: f64,
}

/// The events of a repetition: start, end, and one join per stream (the first unused).
struct RepEvents<B: Backend> {
    start: B::Event,
    end: B::Event,
    joins: Vec<B::Event>,
}

/// One repetition: `cfg.tasks` tasks round-robin over the streams, timed from an event on
/// stream 0 (that every stream waits for) to an event after all streams joined, and the host
/// time from the first event's record to the last's (submission only: the wait is not in it).
fn one_rep<B: Backend>(gpu: &B, p: &Prepared<B>, bufs: &Buffers<B>, streams: &[B::Stream], cfg: &HarnessConfig, ev: &RepEvents<B>) -> Result<Rep> {
    let submit = std::time::Instant::now();
    gpu.record(&ev.start, &streams[0])?;
    for s in &streams[1..] {
        gpu.wait(s, &ev.start)?;
    }
    for t in 0..cfg.tasks {
        let s = t % streams.len();
        p.launch(gpu, &streams[s], bufs, s)?;
    }
    for (s, j) in streams.iter().zip(&ev.joins).skip(1) {
        gpu.record(j, s)?;
        gpu.wait(&streams[0], j)?;
    }
    gpu.record(&ev.end, &streams[0])?;
    let submit_ms = submit.elapsed().as_secs_f64() * 1000.0;
    Ok(Rep { device_ms: gpu.elapsed_ms(&ev.start, &ev.end)? as f64, submit_ms })
}

/// The median of a non-empty list.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 { s[n / 2] } else { 0.5 * (s[n / 2 - 1] + s[n / 2]) }
}

/// Measured FP64 GEMM rate in TFLOP/s through the backend's BLAS: an n×n×n DGEMM on fixed
/// pseudo-random data, one warm-up, then the median of `reps` timed with events.
pub fn gemm_peak_tflops<B: Backend>(gpu: &B, n: usize, reps: usize) -> Result<f64> {
    let blas = gpu.blas()?;
    let stream = gpu.stream()?;
    let init: Vec<f64> = (0..n * n).map(|e| ((e * 2654435761usize) % 1000) as f64 / 1000.0 - 0.5).collect();
    let init = to_device_bytes(DType::F64, &init);
    let (a, b, c) = (gpu.alloc(init.len())?, gpu.alloc(init.len())?, gpu.alloc(init.len())?);
    gpu.upload(&a, &init)?;
    gpu.upload(&b, &init)?;
    let g = Gemm {
        transa: false, transb: false, m: n as i32, n: n as i32, k: n as i32,
        a: B::device_ptr(&a), lda: n as i32, stride_a: 0,
        b: B::device_ptr(&b), ldb: n as i32, stride_b: 0,
        c: B::device_ptr(&c), ldc: n as i32, stride_c: 0, batch: 1,
    };
    let (start, end) = (gpu.event()?, gpu.event()?);
    let mut times = Vec::new();
    for rep in 0..=reps {
        gpu.record(&start, &stream)?;
        gpu.gemm(&blas, &stream, DType::F64, &g)?;
        gpu.record(&end, &stream)?;
        let ms = gpu.elapsed_ms(&start, &end)? as f64;
        if rep > 0 {
            times.push(ms);
        }
    }
    let ms = median(&times);
    Ok(2.0 * (n as f64).powi(3) / (ms * 1e-3) / 1e12)
}

#[cfg(test)]
pub(crate) mod tests {
    //! The harness on a fake backend that runs on the host: it records every call and
    //! executes kernels and GEMMs with the FP64 CPU reference, so the round-robin, the
    //! warm-up, the repetitions, the poisoning and the GEMM formulations of the library levels
    //! are checked without a GPU.

    use super::*;
    use mra_codegen::Arch;
    use std::cell::Cell;

    #[derive(Clone, Debug, PartialEq)]
    enum Op {
        Upload(usize),
        Poison(usize),
        Launch { stream: usize, entry: String, args: LaunchArgs },
        Gemm { stream: usize, handle: usize },
        NewBlas(usize),
        Record { event: usize, stream: usize },
        Wait { stream: usize, event: usize },
        Sync(usize),
    }

    /// Buffers are host byte vectors at address (index + 1) << 32; streams, events and BLAS
    /// handles are numbers; every repetition takes `rep_ms`.
    pub(crate) struct Fake {
        arch: &'static Arch,
        mem: RefCell<Vec<Vec<u8>>>,
        ops: RefCell<Vec<Op>>,
        ids: Cell<usize>,
        rep_ms: f32,
        /// Kernels write nothing: what poisoning must catch.
        lazy: Cell<bool>,
        /// Kernels launched with this many threads write nothing (0: none): a wrong candidate.
        pub(crate) wrong_threads: Cell<u32>,
        /// Blocks of any kernel the fake device holds at once (None: it cannot tell).
        resident: Cell<Option<usize>>,
        /// Host time each launch takes to submit (a slow host).
        pub(crate) launch_delay: Cell<std::time::Duration>,
        /// Clusters of any cluster kernel the fake device holds at once (None: it cannot tell).
        clusters: Cell<Option<usize>>,
    }

    impl Fake {
        pub(crate) fn new(rep_ms: f32) -> Fake {
            let arch = mra_codegen::arch::find("sm_90").unwrap();
            Fake { arch, mem: RefCell::default(), ops: RefCell::default(), ids: Cell::new(0), rep_ms, lazy: Cell::new(false), wrong_threads: Cell::new(0), resident: Cell::new(None), launch_delay: Cell::new(std::time::Duration::ZERO), clusters: Cell::new(None) }
        }

        /// The launches (thread counts) and downloads in order: validation must come first.
        pub(crate) fn launch_count(&self) -> usize {
            self.launches().len()
        }

        fn id(&self) -> usize {
            self.ids.set(self.ids.get() + 1);
            self.ids.get()
        }

        fn log(&self, op: Op) {
            self.ops.borrow_mut().push(op);
        }

        fn read(&self, ptr: u64, n: usize) -> Vec<f64> {
            let mem = self.mem.borrow();
            let (buf, off) = (&mem[(ptr >> 32) as usize - 1], (ptr & 0xffff_ffff) as usize);
            from_device_bytes(DType::F64, &buf[off..off + 8 * n])
        }

        fn write(&self, ptr: u64, v: &[f64]) {
            let mut mem = self.mem.borrow_mut();
            let (buf, off) = (&mut mem[(ptr >> 32) as usize - 1], (ptr & 0xffff_ffff) as usize);
            buf[off..off + 8 * v.len()].copy_from_slice(&to_device_bytes(DType::F64, v));
        }

        pub(crate) fn launches(&self) -> Vec<(usize, LaunchArgs)> {
            self.ops.borrow().iter().filter_map(|o| if let Op::Launch { stream, args, .. } = o { Some((*stream, *args)) } else { None }).collect()
        }
    }

    impl Backend for Fake {
        type Buffer = usize;
        type Stream = usize;
        type Event = usize;
        type Function = String;
        type Blas = usize;
        type Compiler = ();
        type Compiled = String;
        const BLAS_NAME: &'static str = "fakeBLAS";

        fn device_name(&self) -> &str {
            "host"
        }
        fn arch(&self) -> &'static Arch {
            self.arch
        }
        fn memory(&self) -> Result<(usize, usize)> {
            Ok((1 << 30, 1 << 30))
        }
        fn alloc(&self, bytes: usize) -> Result<usize> {
            let mut mem = self.mem.borrow_mut();
            mem.push(vec![0x5a; bytes]);
            Ok(mem.len() - 1)
        }
        fn device_ptr(buf: &usize) -> u64 {
            (*buf as u64 + 1) << 32
        }
        fn upload(&self, buf: &usize, bytes: &[u8]) -> Result<()> {
            self.log(Op::Upload(*buf));
            self.mem.borrow_mut()[*buf].copy_from_slice(bytes);
            Ok(())
        }
        fn download(&self, buf: &usize) -> Result<Vec<u8>> {
            Ok(self.mem.borrow()[*buf].clone())
        }
        fn poison(&self, buf: &usize) -> Result<()> {
            self.log(Op::Poison(*buf));
            self.mem.borrow_mut()[*buf].fill(0xff);
            Ok(())
        }
        fn stream(&self) -> Result<usize> {
            Ok(self.id())
        }
        fn synchronize(&self, stream: &usize) -> Result<()> {
            self.log(Op::Sync(*stream));
            Ok(())
        }
        fn event(&self) -> Result<usize> {
            Ok(self.id())
        }
        fn record(&self, event: &usize, stream: &usize) -> Result<()> {
            self.log(Op::Record { event: *event, stream: *stream });
            Ok(())
        }
        fn wait(&self, stream: &usize, event: &usize) -> Result<()> {
            self.log(Op::Wait { stream: *stream, event: *event });
            Ok(())
        }
        fn elapsed_ms(&self, _: &usize, _: &usize) -> Result<f32> {
            Ok(self.rep_ms)
        }
        fn compile(&self, _: &(), _: &str, entry: &str, _: &KernelCache) -> Result<String> {
            Ok(entry.to_string())
        }
        fn compile_note(_: &(), entry: &String) -> String {
            format!("{entry} compiled by nobody")
        }
        fn load(&self, entry: &String, _: &str, _: u32) -> Result<String> {
            Ok(entry.clone())
        }
        fn resident_blocks(&self, _: &String, _: u32) -> Result<Option<usize>> {
            Ok(self.resident.get())
        }
        fn resident_clusters(&self, _: &String, _: u32, _: u32) -> Result<Option<usize>> {
            Ok(self.clusters.get())
        }
        /// Runs the copy level, the Kronecker matrix build (as the generated kernel documents
        /// it: M[alpha * K^3 + beta] = B(a,i) B(b,j) B(c,k)) or any other level as the transform.
        fn launch(&self, entry: &String, stream: &usize, threads: u32, args: &LaunchArgs) -> Result<()> {
            self.log(Op::Launch { stream: *stream, entry: entry.clone(), args: *args });
            std::thread::sleep(self.launch_delay.get());
            if self.lazy.get() || self.wrong_threads.get() == threads {
                return Ok(());
            }
            let k = (self.mem.borrow()[(args.b >> 32) as usize - 1].len() as f64 / 8.0).sqrt() as usize;
            let (b, k3, n) = (self.read(args.b, k * k), k * k * k, args.nfuncs as usize);
            if entry.ends_with("_build") {
                let m: Vec<f64> = (0..k3 * k3)
                    .map(|e| {
                        let (alpha, beta) = (e / k3, e % k3);
                        let at = |x: usize, y: usize| b[x * k + y];
                        at(alpha / (k * k), beta / (k * k)) * at(alpha / k % k, beta / k % k) * at(alpha % k, beta % k)
                    })
                    .collect();
                self.write(args.c, &m);
            } else if entry.starts_with("mra_copy") {
                self.write(args.c, &self.read(args.a, n * k3));
            } else {
                self.write(args.c, &reference::transform_batch(k, &self.read(args.a, n * k3), &b));
            }
            Ok(())
        }
        fn blas(&self) -> Result<usize> {
            let h = self.id();
            self.log(Op::NewBlas(h));
            Ok(h)
        }
        /// Column-major `C = op(A) op(B)` for each batch entry, in f64.
        fn gemm(&self, handle: &usize, stream: &usize, dtype: DType, g: &Gemm) -> Result<()> {
            assert_eq!(dtype, DType::F64);
            self.log(Op::Gemm { stream: *stream, handle: *handle });
            let (m, n, k) = (g.m as usize, g.n as usize, g.k as usize);
            let span = |ld: i32, cols: usize| ld as usize * (cols - 1) + ld as usize;
            for e in 0..g.batch as u64 {
                let at = |p: u64, stride: i64| p + e * stride as u64 * 8;
                let a = self.read(at(g.a, g.stride_a), span(g.lda, if g.transa { m } else { k }));
                let b = self.read(at(g.b, g.stride_b), span(g.ldb, if g.transb { k } else { n }));
                let op_a = |i: usize, p: usize| if g.transa { a[p + i * g.lda as usize] } else { a[i + p * g.lda as usize] };
                let op_b = |p: usize, j: usize| if g.transb { b[j + p * g.ldb as usize] } else { b[p + j * g.ldb as usize] };
                let c_ptr = at(g.c, g.stride_c);
                let mut c = self.read(c_ptr, span(g.ldc, n));
                for j in 0..n {
                    for i in 0..m {
                        c[i + j * g.ldc as usize] = (0..k).map(|p| op_a(i, p) * op_b(p, j)).sum();
                    }
                }
                self.write(c_ptr, &c);
            }
            Ok(())
        }
    }

    pub(crate) fn session(rep_ms: f32) -> Session<Fake> {
        Session { gpu: Fake::new(rep_ms), compiler: (), cache: KernelCache::disabled() }
    }

    fn level(name: &str) -> Schedule {
        mra_codegen::levels::find(name).unwrap()
    }

    fn cfg(nfuncs: usize, tasks: usize, streams: usize, reps: usize) -> HarnessConfig {
        HarnessConfig { nfuncs, max_blocks: 512, tasks, streams, reps, warmup: Warmup::default(), stream_data: StreamData::Shared }
    }

    /// Level `name` at K = `k` in f64, prepared, with its buffers for `c`.
    fn prepared(s: &Session<Fake>, name: &str, k: u32, c: &HarnessConfig) -> (Prepared<Fake>, Buffers<Fake>) {
        let p = s.prepare(&level(name), k, DType::F64).unwrap();
        let bufs = s.allocate(c, &p.kernel.plan).unwrap();
        (p, bufs)
    }

    /// [`validate`] on fresh inputs from `seed`.
    fn validated(s: &Session<Fake>, p: &Prepared<Fake>, bufs: &Buffers<Fake>, seed: u64) -> Comparison {
        let inputs = Inputs::random(DType::F64, p.kernel.plan.request.k, bufs.nfuncs, seed);
        validate(&s.gpu, p, bufs, &inputs).unwrap()
    }

    #[test]
    fn a_persistent_level_launches_no_more_blocks_than_the_device_holds() {
        // fused-pipe declares persistent(1) from K = 20 (not at 16); L1 does not declare it.
        // Expected grids by hand: min(N, M) = min(300, 512) = 300, capped at what the device
        // holds for the persistent plan only.
        let c = cfg(300, 1, 2, 1);
        for (name, k, resident, want) in [
            ("fused-pipe", 20, Some(132), 132),
            ("fused-pipe", 20, Some(1000), 300),
            ("fused-pipe", 20, None, 300),
            ("fused-pipe", 20, Some(0), 1),
            ("fused-pipe", 16, Some(132), 300),
            ("L1", 20, Some(132), 300),
        ] {
            let s = session(1.0);
            s.gpu.resident.set(resident);
            s.gpu.lazy.set(true);
            let (p, bufs) = prepared(&s, name, k, &c);
            assert_eq!(bufs.nblocks, 300, "the buffers (workspaces) are sized for min(N, M)");
            let streams = s.streams(2).unwrap();
            p.launch(&s.gpu, &streams[1], &bufs, 1).unwrap();
            let launches = s.gpu.launches();
            assert_eq!(launches.len(), 1);
            assert_eq!(launches[0].1.nblocks, want, "{name} K={k}, device holds {resident:?}");
            assert_eq!(p.grid_blocks(bufs.nblocks), want as usize, "what run and sweep report");
        }
    }

    #[test]
    fn a_cluster_level_says_how_much_of_the_device_its_clusters_hold_and_refuses_when_none_fit() {
        // The driver's counts are the fake's; what prepare must do with them is by hand: fused-
        // cluster K = 32 is planned as clusters of 8 (its default); 30 of them against 264 block
        // slots leave 24 idle (run 90's H200). No cluster at all: refused in one line naming the
        // cluster and the device, before any launch. fused-pipe (no clusters) asks nothing.
        let s = session(1.0);
        s.gpu.resident.set(Some(264));
        s.gpu.clusters.set(Some(30));
        let p = s.prepare(&level("fused-cluster"), 32, DType::F64).unwrap();
        assert_eq!(p.kernel.plan.cluster_blocks(), 8);
        let r = p.clusters.expect("a cluster kernel on a device that can tell");
        assert_eq!((r.clusters, r.blocks(), r.block_slots), (30, 240, Some(264)));
        assert!(s.prepare(&level("fused-pipe"), 20, DType::F64).unwrap().clusters.is_none());
        s.gpu.clusters.set(None);
        assert!(s.prepare(&level("fused-cluster"), 32, DType::F64).unwrap().clusters.is_none(), "unknown is not refused");
        s.gpu.clusters.set(Some(0));
        let e = s.prepare(&level("fused-cluster"), 32, DType::F64).err().expect("no cluster fits").to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("fused-cluster at K=32 (f64) on "), "{e}");
        assert!(e.contains("not one cluster of 8 blocks (256 threads"), "{e}");
        assert!(e.contains("mra-bench tune"), "{e}");
        assert_eq!(s.gpu.launch_count(), 0);
    }

    #[test]
    fn a_stacked_level_launches_one_block_per_group_of_tensors() {
        // stack(N) walks groups of N consecutive tensors: a launch has work for ceil(N_tensors / N)
        // blocks, at most M. Expected grids by hand: N = 300 tensors, M = 512 and M = 100.
        for (stack, max_blocks, want) in [(1u32, 512usize, 300i32), (2, 512, 150), (3, 512, 100), (4, 512, 75), (2, 100, 100)] {
            let s = session(1.0);
            s.gpu.lazy.set(true);
            // (swap_operands(1), K = 10's default on sm_90, takes one tensor per pass: off here.)
            let sched = level("fused-pipe").with_config(&[("stack".to_string(), stack), ("swap_operands".to_string(), 0)].into_iter().collect()).unwrap();
            let p = s.prepare(&sched, 10, DType::F64).unwrap();
            let c = HarnessConfig { max_blocks, ..cfg(300, 1, 1, 1) };
            let bufs = s.allocate(&c, &p.kernel.plan).unwrap();
            assert_eq!(bufs.nblocks, want as usize, "stack({stack}), M = {max_blocks}");
            let streams = s.streams(1).unwrap();
            p.launch(&s.gpu, &streams[0], &bufs, 0).unwrap();
            let launches = s.gpu.launches();
            assert_eq!((launches[0].1.nfuncs, launches[0].1.nblocks), (300, want), "stack({stack}), M = {max_blocks}");
        }
    }

    #[test]
    fn private_stream_data_gives_each_stream_its_own_a_and_c_and_each_c_its_transform() {
        // Three streams, three tasks per rep: stream s runs task s. With private data each
        // stream reads its own A (every one holding the uploaded values) and writes its own
        // C, which must then hold the FP64 reference transform of A; shared data keeps one of
        // each. vendor-3gemm goes through the fake's column-major GEMMs (not the reference),
        // fused-pipe through its launch.
        for name in ["fused-pipe", "vendor-3gemm"] {
            for data in [StreamData::Shared, StreamData::Private] {
                let s = session(300.0);
                let c = HarnessConfig { stream_data: data, ..cfg(7, 3, 3, 1) };
                let (p, bufs) = prepared(&s, name, 5, &c);
                assert_eq!(bufs.private.len(), if data == StreamData::Private { 2 } else { 0 }, "{name} {data:?}");
                let inputs = Inputs::random(DType::F64, 5, 7, 11);
                bufs.upload_inputs(&s.gpu, &inputs).unwrap();
                for st in 0..3 {
                    s.gpu.poison(bufs.c_of(st)).unwrap();
                }
                let streams = s.streams(c.streams).unwrap();
                time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap();
                let a: Vec<u64> = (0..3).map(|st| Fake::device_ptr(bufs.a_of(st))).collect();
                let distinct = a.iter().collect::<std::collections::BTreeSet<_>>().len();
                assert_eq!(distinct, if data == StreamData::Private { 3 } else { 1 }, "{name} {data:?}: the streams' A");
                for (stream, args) in s.gpu.launches() {
                    let st = streams.iter().position(|x| *x == stream).unwrap();
                    if name == "fused-pipe" {
                        assert_eq!((args.a, args.c), (a[st], Fake::device_ptr(bufs.c_of(st))), "{data:?}: stream {st}'s launch");
                    }
                }
                for st in 0..3 {
                    let got = from_device_bytes(DType::F64, &s.gpu.download(bufs.c_of(st)).unwrap());
                    let cmp = Comparison::of_in(&got, &inputs.reference, DType::F64);
                    assert!(cmp.passes(1e-12), "{name} {data:?}: stream {st}'s C: {cmp:?}");
                }
            }
        }
    }

    #[test]
    fn private_stream_data_needs_a_and_c_once_per_stream() {
        // K = 4, N = 10, f64: A and C are 10 · 64 · 8 = 5120 B each; B 128 B; copy has no workspace.
        let plan = level("copy").plan(Request { k: 4, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap();
        let shared = cfg(10, 1, 4, 1);
        assert_eq!(bytes_needed(&shared, &plan), 2 * 5120 + 128);
        assert_eq!(bytes_needed(&HarnessConfig { stream_data: StreamData::Private, ..shared }, &plan), 4 * 2 * 5120 + 128);
    }

    #[test]
    fn stream_data_parses_its_two_names_and_refuses_others() {
        assert_eq!(StreamData::parse("shared"), Ok(StreamData::Shared));
        assert_eq!(StreamData::parse("private"), Ok(StreamData::Private));
        assert!(StreamData::parse("own").unwrap_err().contains("not shared or private"));
        assert_eq!(StreamData::default(), StreamData::Shared, "the seed's harness by default");
    }

    #[test]
    fn a_repetition_whose_submission_takes_as_long_as_its_device_time_is_host_bound() {
        // The fake's events say 50 ms per repetition of 4 tasks. Launches that take 20 ms each
        // to submit (80 ms per repetition) are a host the GPU waits for; instant ones (a few µs
        // of host work, far below 45 ms even on a loaded machine) are not.
        for (delay_ms, bound) in [(0, 0), (20, 3)] {
            let s = session(50.0);
            let c = cfg(3, 4, 2, 3);
            let (p, bufs) = prepared(&s, "copy", 4, &c);
            let streams = s.streams(c.streams).unwrap();
            s.gpu.launch_delay.set(std::time::Duration::from_millis(delay_ms));
            let t = time_reps_clocked(&s.gpu, &p, &bufs, &streams, &c, None).unwrap();
            assert_eq!(t.submit_us.len(), 3);
            assert_eq!(t.host_bound_reps(), bound, "{delay_ms} ms per launch: {:?} µs submitting, {:?} µs measured", t.submit_us, t.times);
            assert_eq!(t.host_bound_note().is_some(), bound > 0);
            if bound > 0 {
                assert!(t.submit_us.iter().all(|&u| u >= 80_000.0), "four launches of 20 ms: {:?}", t.submit_us);
                assert!(t.host_bound_note().unwrap().starts_with("3 of 3 repetitions were host-bound: submitting the tasks took "), "{:?}", t.host_bound_note());
            }
        }
    }

    #[test]
    fn time_reps_warms_up_for_200_ms_then_times_each_rep_round_robin() {
        for (rep_ms, warm_reps) in [(60.0, 4), (500.0, 1), (200.0, 1)] {
            let s = session(rep_ms);
            let c = cfg(3, 6, 4, 3);
            let (p, bufs) = prepared(&s, "L1", 4, &c);
            let streams = s.streams(c.streams).unwrap();
            s.gpu.ops.borrow_mut().clear();
            let times = time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap();
            assert_eq!(times, vec![rep_ms as f64 * 1000.0; 3], "µs per timed rep");
            let launches = s.gpu.launches();
            assert_eq!(launches.len(), (warm_reps + c.reps) * c.tasks, "{rep_ms} ms per rep: {warm_reps} untimed reps");
            for (t, (stream, args)) in launches.iter().enumerate() {
                let si = t % c.tasks % c.streams;
                assert_eq!(*stream, streams[si], "task {t} on stream {si}");
                assert_eq!(args.workspace, Fake::device_ptr(&bufs.workspaces[si]), "each stream its own workspace");
                assert_eq!((args.a, args.c, args.nfuncs, args.nblocks), (Fake::device_ptr(&bufs.a), Fake::device_ptr(&bufs.c), 3, 3));
            }
        }
    }

    #[test]
    fn a_rep_starts_on_stream_0_and_ends_after_every_stream_joined() {
        let s = session(300.0);
        let c = cfg(2, 5, 3, 1);
        let (p, bufs) = prepared(&s, "copy", 2, &c);
        let streams = s.streams(c.streams).unwrap();
        s.gpu.ops.borrow_mut().clear();
        time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap();
        let ops = s.gpu.ops.borrow();
        // Two reps (one untimed), the same events in both.
        let rep: Vec<Op> = ops[..ops.len() / 2].to_vec();
        assert_eq!(rep, ops[ops.len() / 2..].to_vec());
        let Op::Record { event: start, stream } = rep[0] else { panic!("{rep:?}") };
        assert_eq!(stream, streams[0]);
        assert_eq!(rep[1..3], [Op::Wait { stream: streams[1], event: start }, Op::Wait { stream: streams[2], event: start }]);
        let streams_of_launches: Vec<usize> = rep[3..8].iter().map(|o| if let Op::Launch { stream, .. } = o { *stream } else { panic!("{o:?}") }).collect();
        assert_eq!(streams_of_launches, [0, 1, 2, 0, 1].map(|i| streams[i]));
        let &[Op::Record { event: j1, stream: s1 }, Op::Wait { stream: w1, event: e1 }, Op::Record { event: j2, stream: s2 }, Op::Wait { stream: w2, event: e2 }, Op::Record { event: end, stream: s_end }] =
            &rep[8..]
        else {
            panic!("{rep:?}")
        };
        assert_eq!((s1, w1, e1, s2, w2, e2, s_end), (streams[1], streams[0], j1, streams[2], streams[0], j2, streams[0]));
        assert!(start != end && j1 != j2 && ![start, end].contains(&j1));
    }

    #[test]
    fn validation_poisons_the_output_so_an_unwritten_element_fails() {
        let s = session(1.0);
        let c = cfg(5, 1, 2, 1);
        for name in ["copy", "L1"] {
            let (p, bufs) = prepared(&s, name, 3, &c);
            let cmp = validated(&s, &p, &bufs, 7);
            let tol = if p.kernel.plan.is_copy() { f64::MIN_POSITIVE } else { 1e-12 };
            assert!(cmp.passes(tol), "{name}: {cmp:?}");
            // C still holds the right answer; a kernel that writes nothing must fail anyway.
            s.gpu.lazy.set(true);
            s.gpu.ops.borrow_mut().clear();
            let cmp = validated(&s, &p, &bufs, 7);
            s.gpu.lazy.set(false);
            assert_eq!(cmp.non_finite, c.nfuncs * 27, "{name}: {cmp:?}");
            let ops = s.gpu.ops.borrow();
            let at = |want: &dyn Fn(&Op) -> bool| ops.iter().position(want).unwrap();
            let poison_c = at(&|o| *o == Op::Poison(bufs.c));
            let launch = at(&|o| matches!(o, Op::Launch { .. }));
            assert!(at(&|o| *o == Op::Upload(bufs.a)) < poison_c && poison_c < launch, "{ops:?}");
            assert!(bufs.workspaces.iter().all(|w| ops[..launch].contains(&Op::Poison(*w))), "{ops:?}");
            assert!(matches!(ops[launch + 1], Op::Sync(_)), "{ops:?}");
        }
    }

    #[test]
    fn three_gemm_level_is_the_transform_with_one_blas_handle_per_stream() {
        let s = session(250.0);
        let c = cfg(3, 4, 2, 2);
        let (p, bufs) = prepared(&s, "vendor-3gemm", 4, &c);
        assert!(p.compiled.is_none());
        assert_eq!(s.compile_note(&p), ": fakeBLAS calls, no kernel to compile");
        let cmp = validated(&s, &p, &bufs, 11);
        assert!(cmp.passes(1e-12), "{cmp:?}");
        let streams = s.streams(c.streams).unwrap();
        s.gpu.ops.borrow_mut().clear();
        time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap();
        let ops = s.gpu.ops.borrow();
        // The handle of stream 0 was made during validation; stream 1's on its first task.
        let new: Vec<usize> = ops.iter().filter_map(|o| if let Op::NewBlas(h) = o { Some(*h) } else { None }).collect();
        assert_eq!(new.len(), 1, "{ops:?}");
        let gemms: Vec<(usize, usize)> = ops.iter().filter_map(|o| if let Op::Gemm { stream, handle } = o { Some((*stream, *handle)) } else { None }).collect();
        assert_eq!(gemms.len(), 3 * c.tasks * (1 + c.reps), "three GEMMs a task");
        let handle_of = |st: usize| gemms.iter().find(|g| g.0 == st).unwrap().1;
        assert_ne!(handle_of(streams[0]), handle_of(streams[1]));
        assert!(gemms.iter().all(|&(st, h)| h == handle_of(st)), "{gemms:?}");
        assert_eq!(handle_of(streams[1]), new[0]);
    }

    #[test]
    fn kronecker_level_is_one_gemm_with_the_matrix_built_from_b() {
        let s = session(250.0);
        let (p, bufs) = prepared(&s, "L6", 3, &cfg(4, 2, 2, 1));
        assert!(matches!(p.task, Task::Kronecker { .. }));
        assert_eq!(s.compile_note(&p), " mra_l6_kron_k3_f64_build compiled by nobody");
        let cmp = validated(&s, &p, &bufs, 5);
        assert!(cmp.passes(1e-12), "{cmp:?}");
        // The build kernel wrote the matrix once (set_b), then one GEMM read it.
        let ops = s.gpu.ops.borrow();
        let launches: Vec<&Op> = ops.iter().filter(|o| matches!(o, Op::Launch { .. } | Op::Gemm { .. })).collect();
        let Task::Kronecker { matrix, .. } = &p.task else { unreachable!() };
        assert!(matches!(launches[..], [Op::Launch { args, .. }, Op::Gemm { .. }] if args.c == Fake::device_ptr(matrix) && args.nblocks == 1024), "{launches:?}");
    }

    #[test]
    fn the_gemm_peak_times_reps_after_one_warm_up() {
        let gpu = Fake::new(2.0);
        // 2·64³ flop in 2 ms.
        let tflops = gemm_peak_tflops(&gpu, 64, 3).unwrap();
        assert!((tflops - 2.0 * 64f64.powi(3) / 2e-3 / 1e12).abs() < 1e-12, "{tflops}");
        let gemms = gpu.ops.borrow().iter().filter(|o| matches!(o, Op::Gemm { .. })).count();
        assert_eq!(gemms, 4);
    }
}

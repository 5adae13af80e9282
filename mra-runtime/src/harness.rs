//! The seed's benchmark harness on one GPU, and the validation run.
//!
//! A timed repetition submits `tasks` kernel launches, each transforming all N tensors with
//! at most M blocks, round-robin over S streams; it is timed with device events from a start
//! event on stream 0 (that all streams wait for) to an end event after all streams joined.
//! One untimed repetition comes first. Each stream has its own workspace so concurrent tasks
//! never share intermediates.

use crate::cache::KernelCache;
use crate::cuda::nvrtc::{Compiled, Nvrtc};
use crate::cuda::blas::{Blas, Gemm};
use crate::cuda::{DeviceBuffer, Event, Function, Gpu, LaunchArgs, Stream};
use crate::error::{Result, RuntimeError};
use crate::reference;
use crate::validate::Comparison;
use mra_codegen::ir::LibraryCall;
use mra_codegen::plan::Body;
use mra_codegen::{DType, Kernel, Plan, Request, Schedule};
use rand::{Rng, SeedableRng};

/// The harness parameters (the seed's -N, -M, -n, -s, -r).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct HarnessConfig {
    pub nfuncs: usize,
    pub max_blocks: usize,
    pub tasks: usize,
    pub streams: usize,
    pub reps: usize,
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
        Ok(())
    }
}

/// A GPU with the compiler and the kernel cache: what running a level needs.
pub struct CudaSession {
    pub gpu: Gpu,
    pub nvrtc: Nvrtc,
    pub cache: KernelCache,
}

/// A level compiled and loaded for one (K, dtype) on this GPU.
pub struct Prepared {
    pub kernel: Kernel,
    /// The compiled kernel, if the level has one (the three-GEMM level has none).
    pub compiled: Option<Compiled>,
    pub task: Task,
}

/// What one task of a level submits.
pub enum Task {
    /// One launch of the generated kernel.
    Kernel(Function),
    /// One GEMM with the Kronecker matrix, which `build` makes from B (untimed, whenever B
    /// changes: see [`Prepared::set_b`]).
    Kronecker { build: Function, matrix: DeviceBuffer<u8>, blas: BlasPerStream },
    /// Three strided-batched GEMMs through the stream's two batch workspaces.
    ThreeGemm { blas: BlasPerStream },
}

/// One cuBLAS handle per stream: a handle's workspace must not be shared by GEMMs running
/// concurrently on different streams (cuBLAS documentation, "Thread safety" / streams).
/// Handles are made on first use by a stream (the harness's warm-up covers that).
#[derive(Default)]
pub struct BlasPerStream(std::cell::RefCell<Vec<std::rc::Rc<Blas>>>);

impl BlasPerStream {
    fn get(&self, s: usize) -> Result<std::rc::Rc<Blas>> {
        let mut v = self.0.borrow_mut();
        while v.len() <= s {
            v.push(std::rc::Rc::new(Blas::new()?));
        }
        Ok(v[s].clone())
    }
}

impl Prepared {
    /// Work that depends on B alone, done once after B is uploaded and before any task: the
    /// Kronecker level builds its K⁶ matrix here (the seed does the same, untimed).
    pub fn set_b(&self, bufs: &Buffers) -> Result<()> {
        if let Task::Kronecker { build, matrix, .. } = &self.task {
            let stream = Stream::new()?;
            let args = LaunchArgs { c: matrix.device_ptr(), nblocks: 1024, ..bufs.args(0) };
            build.launch(&stream, self.kernel.plan.threads, &args)?;
            stream.synchronize()?;
        }
        Ok(())
    }

    /// Submits one task (all N tensors) on `stream`, the `s`-th stream of the harness.
    pub fn launch(&self, stream: &Stream, bufs: &Buffers, s: usize) -> Result<()> {
        let plan = &self.kernel.plan;
        let (k, dtype) = (plan.request.k as i64, plan.request.dtype);
        let (k3, n) = (k * k * k, bufs.nfuncs as i64);
        match &self.task {
            Task::Kernel(f) => f.launch(stream, plan.threads, &bufs.args(s)),
            Task::Kronecker { matrix, blas, .. } => blas.get(s)?.gemm(
                stream,
                dtype,
                &Gemm {
                    transa: false, transb: false, m: k3 as i32, n: n as i32, k: k3 as i32,
                    a: matrix.device_ptr(), lda: k3 as i32, stride_a: 0,
                    b: bufs.a.device_ptr(), ldb: k3 as i32, stride_b: 0,
                    c: bufs.c.device_ptr(), ldc: k3 as i32, stride_c: 0, batch: 1,
                },
            ),
            Task::ThreeGemm { blas } => {
                let blas = blas.get(s)?;
                // out_n (K² x K row-major) = in_n^T B is, column-major, X (K x K²) =
                // B (K x K, ld K) * in_n^T (in_n viewed K² x K, ld K², transposed).
                let e = dtype.bytes() as u64;
                let s0 = bufs.workspaces[s].device_ptr();
                let s1 = s0 + (n * k3) as u64 * e;
                for (input, out) in [(bufs.a.device_ptr(), s0), (s0, s1), (s1, bufs.c.device_ptr())] {
                    blas.gemm(
                        stream,
                        dtype,
                        &Gemm {
                            transa: false, transb: true, m: k as i32, n: (k * k) as i32, k: k as i32,
                            a: bufs.b.device_ptr(), lda: k as i32, stride_a: 0,
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
pub struct Buffers {
    pub a: DeviceBuffer<u8>,
    pub b: DeviceBuffer<u8>,
    pub c: DeviceBuffer<u8>,
    /// One per stream (may be empty allocations for levels without a workspace).
    pub workspaces: Vec<DeviceBuffer<u8>>,
    pub dtype: DType,
    pub nfuncs: usize,
    pub nblocks: usize,
}

impl CudaSession {
    /// Opens GPU 0 (driver first, so a machine without one gets that message), then NVRTC.
    pub fn open(cache: KernelCache) -> Result<CudaSession> {
        let gpu = Gpu::open(0)?;
        let nvrtc = Nvrtc::load()?;
        Ok(CudaSession { gpu, nvrtc, cache })
    }

    /// Generates, compiles (through the cache) and loads a level; a library level also gets
    /// its BLAS handle and, for the Kronecker level, its K⁶ matrix (built here, untimed).
    pub fn prepare(&self, schedule: &Schedule, k: u32, dtype: DType) -> Result<Prepared> {
        let kernel = mra_codegen::generate(schedule, Request { k, arch: self.gpu.arch, dtype })?;
        let (compiled, function) = if kernel.entry.is_empty() {
            (None, None)
        } else {
            let compiled = self.nvrtc.compile(&kernel.source, &kernel.entry, self.gpu.arch.name, &self.cache)?;
            let dynamic = if kernel.plan.dynamic_shared { kernel.plan.shared_bytes } else { 0 };
            let function = self.gpu.load(&compiled.cubin, &kernel.entry, dynamic)?;
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
                Task::Kronecker { build, matrix: DeviceBuffer::alloc(bytes as usize)?, blas: BlasPerStream::default() }
            }
            (Body::Library(_), _) => Task::ThreeGemm { blas: BlasPerStream::default() },
            (_, Some(f)) => Task::Kernel(f),
            (_, None) => unreachable!("every non-library level has a kernel"),
        };
        Ok(Prepared { kernel, compiled, task })
    }

    /// Elements of workspace one stream needs for `plan` under `cfg`.
    pub fn workspace_elems_per_stream(cfg: &HarnessConfig, plan: &Plan) -> u64 {
        cfg.nblocks() as u64 * plan.workspace_elems_per_block + cfg.nfuncs as u64 * plan.workspace_elems_per_tensor
    }

    /// Device bytes a configuration needs: A, C, B and one workspace per stream.
    pub fn bytes_needed(cfg: &HarnessConfig, plan: &Plan) -> u64 {
        let e = plan.request.dtype.bytes() as u64;
        let k = plan.request.k as u64;
        2 * cfg.nfuncs as u64 * k.pow(3) * e + k.pow(2) * e + cfg.streams as u64 * Self::workspace_elems_per_stream(cfg, plan) * e
    }

    /// Checks that the buffers for `cfg` and `plan` fit in free device memory.
    pub fn check_memory(&self, cfg: &HarnessConfig, plan: &Plan) -> Result<()> {
        let need = Self::bytes_needed(cfg, plan);
        let (free, _) = self.gpu.memory()?;
        // Leave headroom for the context, modules and the driver's own allocations.
        if need as f64 > free as f64 * 0.95 {
            let (k, dtype) = (plan.request.k, plan.request.dtype);
            return Err(RuntimeError::OutOfMemory {
                what: format!("N={} tensors of K={k} ({dtype}) with {} streams of workspace", cfg.nfuncs, cfg.streams),
                need_mib: need as f64 / 1048576.0,
                free_mib: free as f64 / 1048576.0,
            });
        }
        Ok(())
    }

    /// Allocates the buffers for `cfg` and `plan`, after checking they fit in free device memory.
    pub fn allocate(&self, cfg: &HarnessConfig, plan: &Plan) -> Result<Buffers> {
        self.check_memory(cfg, plan)?;
        let (k, dtype) = (plan.request.k, plan.request.dtype);
        let e = dtype.bytes() as usize;
        let k3 = (k as usize).pow(3);
        let ws = Self::workspace_elems_per_stream(cfg, plan) as usize * e;
        Ok(Buffers {
            a: DeviceBuffer::alloc(cfg.nfuncs * k3 * e)?,
            b: DeviceBuffer::alloc((k as usize).pow(2) * e)?,
            c: DeviceBuffer::alloc(cfg.nfuncs * k3 * e)?,
            workspaces: (0..cfg.streams).map(|_| DeviceBuffer::alloc(ws)).collect::<Result<_>>()?,
            dtype,
            nfuncs: cfg.nfuncs,
            nblocks: cfg.nblocks(),
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

impl Buffers {
    fn args(&self, stream: usize) -> LaunchArgs {
        LaunchArgs {
            a: self.a.device_ptr(),
            b: self.b.device_ptr(),
            c: self.c.device_ptr(),
            workspace: self.workspaces[stream].device_ptr(),
            nfuncs: self.nfuncs as i32,
            nblocks: self.nblocks as i32,
        }
    }

    /// Uploads A and B.
    pub fn upload_inputs(&self, inputs: &Inputs) -> Result<()> {
        self.a.upload(&to_device_bytes(self.dtype, &inputs.a))?;
        self.b.upload(&to_device_bytes(self.dtype, &inputs.b))
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
pub fn run_once(p: &Prepared, bufs: &Buffers, stream: &Stream) -> Result<Vec<f64>> {
    bufs.c.poison()?;
    for w in &bufs.workspaces {
        w.poison()?;
    }
    p.launch(stream, bufs, 0)?;
    stream.synchronize()?;
    Ok(from_device_bytes(bufs.dtype, &bufs.c.download()?))
}

/// Validates a prepared level on `inputs` against the FP64 CPU reference (the copy level
/// against its input, which it must reproduce exactly).
pub fn validate(p: &Prepared, bufs: &Buffers, inputs: &Inputs) -> Result<Comparison> {
    bufs.upload_inputs(inputs)?;
    p.set_b(bufs)?;
    let got = run_once(p, bufs, &Stream::new()?)?;
    let want = if p.kernel.plan.is_copy() { &inputs.a } else { &inputs.reference };
    Ok(Comparison::of(&got, want))
}

/// Untimed repetitions run until at least this long has passed, so the GPU has left its idle
/// clocks before the first timed one (one repetition of a small K lasts well under 1 ms).
pub const WARM_UP_MS: f64 = 200.0;

/// Runs the timed harness: untimed repetitions (at least one, and at least [`WARM_UP_MS`]),
/// then `cfg.reps` timed ones. Returns microseconds per repetition (all `cfg.tasks` tasks).
pub fn time_reps(p: &Prepared, bufs: &Buffers, streams: &[Stream], cfg: &HarnessConfig) -> Result<Vec<f64>> {
    let start = Event::new()?;
    let end = Event::new()?;
    let joins: Vec<Event> = streams.iter().map(|_| Event::new()).collect::<Result<_>>()?;
    p.set_b(bufs)?;
    let mut times = Vec::with_capacity(cfg.reps);
    let mut warm_ms = 0.0;
    let mut warm_reps = 0;
    while warm_reps == 0 || warm_ms < WARM_UP_MS {
        warm_ms += one_rep(p, bufs, streams, cfg, &start, &end, &joins)?;
        warm_reps += 1;
    }
    for _ in 0..cfg.reps {
        times.push(one_rep(p, bufs, streams, cfg, &start, &end, &joins)? * 1000.0);
    }
    Ok(times)
}

/// One repetition: `cfg.tasks` tasks round-robin over the streams, timed from an event on
/// stream 0 (that every stream waits for) to an event after all streams joined. Milliseconds.
fn one_rep(p: &Prepared, bufs: &Buffers, streams: &[Stream], cfg: &HarnessConfig, start: &Event, end: &Event, joins: &[Event]) -> Result<f64> {
    start.record(&streams[0])?;
    for s in &streams[1..] {
        s.wait(start)?;
    }
    for t in 0..cfg.tasks {
        let s = t % streams.len();
        p.launch(&streams[s], bufs, s)?;
    }
    for (s, j) in streams.iter().zip(joins).skip(1) {
        j.record(s)?;
        streams[0].wait(j)?;
    }
    end.record(&streams[0])?;
    Ok(start.elapsed_ms(end)? as f64)
}

/// The median of a non-empty list.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 { s[n / 2] } else { 0.5 * (s[n / 2 - 1] + s[n / 2]) }
}

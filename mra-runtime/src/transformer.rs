//! Transforming your own tensors from Rust: [`Transformer`] compiles one level for one K on the
//! GPU found (CUDA if an NVIDIA driver is present, else HIP) and applies it to host slices,
//! runs that level's generated HIP kernel for an AMD arch on the CPU wave emulator
//! ([`Target::Emulate`], no GPU needed: clang++ with AddressSanitizer), or computes with the FP64
//! CPU reference ([`Target::Reference`]), with the same checks and errors as `mra-bench transform`.
//!
//! ```
//! use mra_runtime::transformer::{Target, Transformer};
//! // K = 2, one tensor: A = 0, 1, ..., 7; B = [[1, 2], [3, 4]] (row-major).
//! let a: Vec<f64> = (0..8).map(|x| x as f64).collect();
//! let b = [1.0, 2.0, 3.0, 4.0];
//! let t = Transformer::with_target(2, "default", Target::Reference)?;
//! let c = t.apply(&a, &b)?;
//! // C(0,0,0) = sum_{x,y,z} A(x,y,z) B(x,0) B(y,0) B(z,0)
//! let direct: f64 = (0..8).map(|e| a[e] * b[(e >> 2) * 2] * b[((e >> 1) & 1) * 2] * b[(e & 1) * 2]).sum();
//! assert_eq!(c[0], direct);
//! // A length that is not a whole number of K^3 tensors is refused with a sentence.
//! let err = t.apply(&a[..7], &b).unwrap_err().to_string();
//! assert!(err.contains("not a multiple of K^3 = 8"), "{err}");
//! # Ok::<(), mra_runtime::RuntimeError>(())
//! ```
//!
//! The generated gfx90a kernel of level `fused`, executed on the CPU wave emulator (`no_run`:
//! it needs clang++ with AddressSanitizer; small N only, it runs each block's threads on the CPU):
//!
//! ```no_run
//! use mra_codegen::{arch, DType};
//! use mra_runtime::transformer::{Target, Transformer};
//! let (k, n) = (5, 3);
//! let a = vec![0.5f64; n * k * k * k];
//! let b = vec![0.25f64; k * k];
//! let t = Transformer::with_options(k as u32, "fused", DType::F64, Target::Emulate { arch: arch::find("gfx90a")? })?;
//! let c = t.apply(&a, &b)?;
//! assert_eq!(c.len(), a.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! On a GPU (`no_run`: the doc tests run without one):
//!
//! ```no_run
//! use mra_runtime::transformer::Transformer;
//! let (k, n) = (16, 2048);
//! let a = vec![0.5f64; n * k * k * k];
//! let b = vec![0.25f64; k * k];
//! let c = Transformer::new(k as u32, "fused")?.apply(&a, &b)?;
//! assert_eq!(c.len(), a.len());
//! # Ok::<(), mra_runtime::RuntimeError>(())
//! ```

use crate::error::{Result, RuntimeError};
use crate::emulate::Emulator;
use crate::harness::{self, Backend, EmulatorSession, HarnessConfig, Prepared, Session};
use crate::{reference, KernelCache};
use mra_codegen::plan::Body;
use mra_codegen::{Arch, DType, Operation, Request, Schedule};

/// Where a [`Transformer`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// GPU 0: CUDA if an NVIDIA driver is present, else HIP.
    Gpu,
    /// The FP64 CPU reference (any K, no GPU).
    Reference,
    /// The level's generated HIP kernel for `arch` (gfx90a, gfx942, gfx1100, gfx1151 or
    /// gfx1201; `mra_codegen::arch::find`) executed on the CPU wave emulator: no GPU, but
    /// clang++ with AddressSanitizer, and slow (meant for small N). Library levels (vendor BLAS
    /// calls, no generated kernel) are refused.
    Emulate { arch: &'static Arch },
}

/// An element type the transform takes from and gives back to host memory.
pub trait Element: Copy + Send + Sync + 'static {
    const DTYPE: DType;
    fn to_f64(self) -> f64;
    fn from_f64(x: f64) -> Self;
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

/// One level compiled for one K (or the CPU reference), ready to transform batches.
pub struct Transformer {
    pub(crate) k: u32,
    pub(crate) dtype: DType,
    level: String,
    pub(crate) max_blocks: usize,
    pub(crate) engine: Engine,
    /// What the compiled kernel computes ([`Transformer::apply_op`] for the others than the seed's).
    pub(crate) op: Operation,
}

pub(crate) enum Engine {
    Reference,
    Cuda(Box<(harness::CudaSession, Prepared<crate::cuda::Gpu>)>),
    Hip(Box<(harness::HipSession, Prepared<crate::hip::runtime::Gpu>)>),
    Emulate(Box<(EmulatorSession, Prepared<Emulator>)>),
}

impl Transformer {
    /// `level` (a number or name, `default`, or `best`) for order `k` in f64 on the GPU found.
    pub fn new(k: u32, level: &str) -> Result<Transformer> {
        Transformer::with_options(k, level, DType::F64, Target::Gpu)
    }

    /// As [`Transformer::new`], on `target`.
    pub fn with_target(k: u32, level: &str, target: Target) -> Result<Transformer> {
        Transformer::with_options(k, level, DType::F64, target)
    }

    /// `level` for order `k` computing in `dtype` (f64 or f32) on `target`. `default` picks the
    /// export default (the first of `mra_codegen::export::DEFAULT_CHAIN` that fits); `best` the tuned one.
    pub fn with_options(k: u32, level: &str, dtype: DType, target: Target) -> Result<Transformer> {
        Transformer::with_operation(k, level, dtype, target, Operation::SEED)
    }

    /// As [`Transformer::with_options`], compiling the kernel of `op` (a matrix per dimension,
    /// one direction, a rank sum; C = α·T(A) + β·C), applied with [`Transformer::apply_op`].
    /// `default` picks the first level of `mra_codegen::export::OP_CHAIN` that lowers `op`.
    pub fn with_operation(k: u32, level: &str, dtype: DType, target: Target, op: Operation) -> Result<Transformer> {
        check_k(k)?;
        if op.layout != mra_codegen::Layout::Contiguous {
            return Err(invalid(format!("{}: host data is one contiguous batch; strided and pointer batches are the export's", op.describe())));
        }
        if !matches!(dtype, DType::F64 | DType::F32) {
            return Err(invalid(format!("dtype {dtype}: the transform of host data is f64 or f32")));
        }
        let cache = KernelCache::from_env();
        let (engine, level) = match target {
            Target::Reference => {
                // A level would be ignored here: refuse it rather than compute something else.
                if !matches!(level.trim().to_ascii_lowercase().as_str(), "default" | "reference") {
                    return Err(invalid(format!(
                        "level `{level}` runs on a GPU; the reference target computes with the FP64 CPU reference (omit the level)"
                    )));
                }
                (Engine::Reference, "reference (FP64 CPU)".to_string())
            }
            Target::Emulate { arch } => {
                let emulator = Emulator::new(arch)?;
                let schedule = resolve_level_op(level, k, arch, dtype, op)?;
                // Refused before looking for clang: a level the arch cannot run, a library
                // level (the emulator has no BLAS to call), and the copy floor.
                match schedule.plan_tuned(Request { k, arch, dtype }, op, mra_codegen::tuned_defaults::Regime::Api)?.body {
                    Body::Library(_) => {
                        return Err(invalid(format!(
                            "level {} is a library level (vendor BLAS calls, no generated kernel): the emulator runs only generated kernels; choose another level",
                            schedule.name
                        )))
                    }
                    Body::Copy { .. } => return Err(copy_is_no_transform(&schedule)),
                    Body::Transform(_) => {}
                }
                let s = EmulatorSession::open_emulator(emulator, cache)?;
                let p = prepare_schedule(&s, &schedule, k, dtype, op)?;
                let name = p.kernel.level.clone();
                (Engine::Emulate(Box::new((s, p))), name)
            }
            Target::Gpu => match open_gpu(cache)? {
                Opened::Cuda(s) => {
                    let p = prepare(&s, k, level, dtype, op)?;
                    let name = p.kernel.level.clone();
                    (Engine::Cuda(Box::new((s, p))), name)
                }
                Opened::Hip(s) => {
                    let p = prepare(&s, k, level, dtype, op)?;
                    let name = p.kernel.level.clone();
                    (Engine::Hip(Box::new((s, p))), name)
                }
            },
        };
        Ok(Transformer { k, dtype, level, max_blocks: crate::harness::AUTO_BLOCKS, engine, op })
    }

    /// At most `m` blocks per launch. By default ([`crate::harness::AUTO_BLOCKS`]) a launch has
    /// as many blocks as the GPU holds of the kernel at once, each walking the batch.
    pub fn max_blocks(mut self, m: usize) -> Transformer {
        self.max_blocks = m.max(1);
        self
    }

    pub fn k(&self) -> u32 {
        self.k
    }

    /// The level that computes (`fused`, `L7-breg`, `reference (FP64 CPU)`).
    pub fn level(&self) -> &str {
        &self.level
    }

    /// The GPU's name, the emulator's (`CPU wave emulator (gfx90a, wave64)`), or `CPU` for the reference.
    pub fn device(&self) -> String {
        match &self.engine {
            Engine::Reference => "CPU".into(),
            Engine::Cuda(e) => format!("{} ({})", e.0.gpu.device_name(), e.0.gpu.arch().name),
            Engine::Hip(e) => format!("{} ({})", e.0.gpu.device_name(), e.0.gpu.arch().name),
            Engine::Emulate(e) => e.0.gpu.device_name().to_string(),
        }
    }

    /// C for every tensor of `a` (N·K³ elements, N ≥ 1) by `b` (K×K, row-major):
    /// `C_n(i,j,k) = Σ A_n(a,b,c) B(a,i) B(b,j) B(c,k)`, in `a`'s layout.
    pub fn apply<T: Element>(&self, a: &[T], b: &[T]) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype {
            return Err(invalid(format!("this transformer computes in {}, but the data is {}", self.dtype, T::DTYPE)));
        }
        if !self.op.is_seed() {
            return Err(invalid(format!("this transformer computes {}: use apply_op", self.op.describe())));
        }
        let nfuncs = check_shapes(self.k, a.len(), b.len())?;
        // Host copies as large as the data: allocated fallibly (one error, not an abort).
        let mut a64 = crate::memory::try_vec(a.len(), "the tensors as f64")?;
        a64.extend(a.iter().map(|x| x.to_f64()));
        let b64: Vec<f64> = b.iter().map(|x| x.to_f64()).collect();
        let c = match &self.engine {
            Engine::Reference => reference::transform_batch(self.k as usize, &a64, &b64)?,
            Engine::Cuda(e) => run(&e.0, &e.1, nfuncs, self.max_blocks, &a64, &b64)?,
            Engine::Hip(e) => run(&e.0, &e.1, nfuncs, self.max_blocks, &a64, &b64)?,
            Engine::Emulate(e) => run(&e.0, &e.1, nfuncs, self.max_blocks, &a64, &b64)?,
        };
        let mut out = crate::memory::try_vec(c.len(), "the transformed tensors")?;
        out.extend(c.into_iter().map(T::from_f64));
        Ok(out)
    }
}

/// Order K must be one the levels support.
pub fn check_k(k: u32) -> Result<()> {
    if !(1..=mra_codegen::K_MAX).contains(&k) {
        return Err(mra_codegen::PlanError::KOutOfRange(k).into());
    }
    Ok(())
}

/// The number of tensors in `a_len` elements of order `k` with a `b_len`-element B, or why not.
pub fn check_shapes(k: u32, a_len: usize, b_len: usize) -> Result<usize> {
    let (k2, k3) = ((k as usize).pow(2), (k as usize).pow(3));
    if b_len != k2 {
        return Err(invalid(format!("B has {b_len} elements; a K x K matrix for K = {k} has {k2}")));
    }
    if a_len == 0 || !a_len.is_multiple_of(k3) {
        return Err(invalid(format!("A has {a_len} elements, not a multiple of K^3 = {k3} (N >= 1 tensors of K x K x K)")));
    }
    let n = a_len / k3;
    if n > i32::MAX as usize {
        return Err(invalid(format!("A holds {n} tensors; a launch takes at most {}", i32::MAX)));
    }
    Ok(n)
}

/// The level `sel` names for `k` on `arch`: `default`, `best`, or a number or name.
pub fn resolve_level(sel: &str, k: u32, arch: &'static Arch, dtype: DType) -> Result<Schedule> {
    match sel.trim().to_ascii_lowercase().as_str() {
        "default" => mra_codegen::export::default_level(k, arch, dtype).map_err(|e| invalid(e.to_string())),
        "best" => crate::configure::Tuning::open(None, false, true)?.in_regime(mra_codegen::tuned_defaults::Regime::Api).best(&crate::configure::any_gpu_of(arch), k, dtype, |_| true).map(|c| c.schedule),
        _ => mra_codegen::levels::find(sel).map_err(|e| invalid(e.to_string())),
    }
}

/// [`resolve_level`] for `op`: `default` is the first level that lowers it.
pub fn resolve_level_op(sel: &str, k: u32, arch: &'static Arch, dtype: DType, op: Operation) -> Result<Schedule> {
    match sel.trim().to_ascii_lowercase().as_str() {
        "default" if !op.is_seed() => mra_codegen::export::default_op_level(k, arch, dtype, op).map_err(|e| invalid(e.to_string())),
        _ => resolve_level(sel, k, arch, dtype),
    }
}

pub(crate) fn invalid(msg: String) -> RuntimeError {
    RuntimeError::Invalid(msg)
}

enum Opened {
    Cuda(harness::CudaSession),
    Hip(harness::HipSession),
}

/// GPU 0: CUDA when an NVIDIA driver loads, else HIP; one sentence naming both when neither.
fn open_gpu(cache: KernelCache) -> Result<Opened> {
    match crate::cuda::probe_driver() {
        Ok(()) => Ok(Opened::Cuda(harness::CudaSession::open(cache)?)),
        Err(no_nvidia) => match crate::hip::runtime::Gpu::open(0) {
            Ok(gpu) => Ok(Opened::Hip(harness::HipSession::open(gpu, crate::hip::compile::Choice::Auto, cache)?)),
            Err(hip) => Err(invalid(format!("no GPU found: {no_nvidia}; {hip}"))),
        },
    }
}

fn prepare<B: Backend>(s: &Session<B>, k: u32, level: &str, dtype: DType, op: Operation) -> Result<Prepared<B>> {
    prepare_schedule(s, &resolve_level_op(level, k, s.gpu.arch(), dtype, op)?, k, dtype, op)
}

fn prepare_schedule<B: Backend>(s: &Session<B>, schedule: &Schedule, k: u32, dtype: DType, op: Operation) -> Result<Prepared<B>> {
    // One launch over the caller's batch: the tuned defaults timed that way, where there are.
    let req = mra_codegen::Request { k, arch: s.gpu.arch(), dtype };
    let regime = mra_codegen::tuned_defaults::Regime::Api;
    let p = if op.is_seed() { s.prepare(&schedule.at_in(req, regime), k, dtype)? } else { s.prepare_kernel(schedule.generate_tuned(req, op, regime)?)? };
    if p.kernel.plan.is_copy() {
        return Err(copy_is_no_transform(&schedule));
    }
    Ok(p)
}

/// The copy and bound levels only copy A: they have kernels, but are no transform to apply.
fn copy_is_no_transform(level: &Schedule) -> RuntimeError {
    let what = match level.role() {
        mra_codegen::ir::Role::Bound => "a measured bound (the floor's copy and discarded matrix instructions)",
        _ => "the benchmark's floor",
    };
    invalid(format!("level {} is {what}: it copies A; choose a transform level", level.name))
}

/// One launch over all tensors on poisoned outputs; C as f64.
fn run<B: Backend>(s: &Session<B>, p: &Prepared<B>, nfuncs: usize, max_blocks: usize, a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    let cfg = HarnessConfig { nfuncs, max_blocks, tasks: 1, streams: 1, reps: 1, warmup: Default::default(), stream_data: Default::default() };
    cfg.check()?;
    // -M auto: waves of what the device holds of the kernel at once (Prepared::auto_grid).
    let cfg = cfg.with_grid(p.auto_grid(), 512);
    let bufs = s.allocate(&cfg, &p.kernel.plan).map_err(|e| too_many_at_once(e, nfuncs, p.kernel.plan.request.k))?;
    let gpu = &s.gpu;
    gpu.upload(&bufs.a, &harness::to_device_bytes(bufs.dtype, a)?)?;
    gpu.upload(&bufs.b, &harness::to_device_bytes(bufs.dtype, b)?)?;
    p.set_b(gpu, &bufs)?;
    harness::run_once(gpu, p, &bufs, &gpu.stream()?)
}

/// The harness's device-memory refusal names the benchmark's flags (-N, -M, -s); a transform
/// needs less with fewer tensors at once (its A and C) or fewer blocks (their workspace).
fn too_many_at_once(e: RuntimeError, nfuncs: usize, k: u32) -> RuntimeError {
    match e {
        RuntimeError::OutOfMemory { need_mib, free_mib, .. } => invalid(format!(
            "transforming {nfuncs} tensors of K={k} at once needs {need_mib:.1} MiB of device memory but only {free_mib:.1} MiB are free; transform fewer tensors at a time, or with fewer blocks (`mra-bench transform`: split the --input file, or lower -M)"
        )),
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_little_device_memory_says_what_a_transform_can_do() {
        let e = too_many_at_once(RuntimeError::OutOfMemory { what: "N=9 tensors".into(), need_mib: 100.0, free_mib: 64.0 }, 9, 16).to_string();
        assert_eq!(e, "transforming 9 tensors of K=16 at once needs 100.0 MiB of device memory but only 64.0 MiB are free; transform fewer tensors at a time, or with fewer blocks (`mra-bench transform`: split the --input file, or lower -M)");
        assert!(!e.contains("-N") && !e.contains("-s"), "{e}");
        assert!(matches!(too_many_at_once(invalid("x".into()), 9, 16), RuntimeError::Invalid(m) if m == "x"));
    }

    #[test]
    fn shapes_that_do_not_fit_are_refused_with_the_numbers() {
        assert_eq!(check_shapes(3, 54, 9).unwrap(), 2);
        let e = check_shapes(3, 53, 9).unwrap_err().to_string();
        assert!(e.contains("53 elements") && e.contains("K^3 = 27"), "{e}");
        assert!(check_shapes(3, 0, 9).unwrap_err().to_string().contains("N >= 1"));
        let e = check_shapes(3, 27, 8).unwrap_err().to_string();
        assert!(e.contains("B has 8 elements") && e.contains("has 9"), "{e}");
        assert!(check_k(0).is_err() && check_k(33).is_err() && check_k(32).is_ok());
    }

    #[test]
    fn the_reference_target_checks_dtype_and_level_and_computes_f32() {
        let t = Transformer::with_options(2, "default", DType::F32, Target::Reference).unwrap();
        let e = t.apply(&[0.0f64; 8], &[0.0f64; 4]).unwrap_err().to_string();
        assert!(e.contains("computes in f32, but the data is f64"), "{e}");
        // B = identity: the transform is the identity.
        let a: Vec<f32> = (0..16).map(|x| x as f32 - 7.5).collect();
        assert_eq!(t.apply(&a, &[1.0f32, 0.0, 0.0, 1.0]).unwrap(), a);
        let e = Transformer::with_target(2, "L3", Target::Reference).err().unwrap().to_string();
        assert!(e.contains("runs on a GPU"), "{e}");
        let sm90 = mra_codegen::arch::find("sm_90").unwrap();
        let e = Transformer::with_target(2, "default", Target::Emulate { arch: sm90 }).err().unwrap().to_string();
        assert!(e.contains("sm_90 is NVIDIA"), "{e}");
        assert!(Transformer::with_options(2, "default", DType::F16, Target::Reference).is_err());
    }

    #[test]
    fn the_emulator_refuses_library_levels_and_levels_the_arch_cannot_run_before_compiling() {
        let gfx90a = mra_codegen::arch::find("gfx90a").unwrap();
        let emulate = Target::Emulate { arch: gfx90a };
        // A library level is refused by name (without clang: no compile is attempted).
        let library = mra_codegen::levels::all()
            .into_iter()
            .find(|s| matches!(s.plan(Request { k: 5, arch: gfx90a, dtype: DType::F64 }), Ok(p) if matches!(p.body, Body::Library(_))))
            .expect("a library level");
        let e = Transformer::with_target(5, &library.name, emulate).err().unwrap().to_string();
        assert!(e.contains("library level") && e.contains(&library.name), "{e}");
        // A level/dtype the arch has no instruction for: the plan's own sentence, one line.
        let unrunnable = mra_codegen::levels::all()
            .into_iter()
            .find(|s| s.plan(Request { k: 5, arch: gfx90a, dtype: DType::F32 }).is_err())
            .expect("a level gfx90a cannot run in f32");
        let e = Transformer::with_options(5, &unrunnable.name, DType::F32, emulate).err().unwrap().to_string();
        assert!(!e.is_empty() && e.lines().count() == 1 && !e.contains("clang"), "{e}");
    }
}

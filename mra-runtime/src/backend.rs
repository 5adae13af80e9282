//! What the benchmark harness needs from a GPU: the [`Backend`] trait, implemented by the CUDA
//! backend (`crate::cuda::Gpu`: driver API, NVRTC, cuBLAS) and by the HIP backend
//! (`crate::hip::runtime::Gpu`: libamdhip64, hiprtc or clang, hipBLAS). The harness
//! (`crate::harness`) is written once against it.
//!
//! Handles are associated types the harness only passes back to the backend; every operation
//! is a method of the opened device, so a backend may keep state there (the test backend in
//! `harness/fake.rs` records what the harness asked for). Device addresses cross the trait as raw
//! `u64` (a `CUdeviceptr` is one; a HIP `void*` is converted), so the kernel parameters
//! ([`LaunchArgs`]) and GEMM operands ([`Gemm`]) are plain data shared by both backends.

use crate::cache::KernelCache;
use crate::error::{Result, RuntimeError};
use mra_codegen::{Arch, DType};

/// The common kernel parameters `(a, b, c, workspace, nfuncs, nblocks)` of every generated
/// kernel (`mra_codegen::emit::KERNEL_PARAMS`), then for an operation other than the seed's
/// its four more (five for a rank sum: [`OpParams`]); the grid is `nblocks` blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchArgs {
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub workspace: u64,
    pub nfuncs: i32,
    pub nblocks: i32,
    /// `None` for the seed's kernels, which take six parameters.
    pub op: Option<OpParams>,
}

/// The parameters an operation's kernel takes after the six: `(a_stride, c_stride, alpha,
/// beta)` (`mra_codegen::Operation`). α and β are kept as their bits so the arguments compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpParams {
    pub a_stride: i64,
    pub c_stride: i64,
    pub alpha_bits: u64,
    pub beta_bits: u64,
    /// `a` and `c` are device arrays of tensor pointers (the emulator translates them).
    pub pointers: bool,
    /// A rank sum's terms: its kernels take them as an eleventh parameter.
    pub ranks: Option<i32>,
}

impl OpParams {
    pub fn new(a_stride: i64, c_stride: i64, alpha: f64, beta: f64) -> OpParams {
        OpParams { a_stride, c_stride, alpha_bits: alpha.to_bits(), beta_bits: beta.to_bits(), pointers: false, ranks: None }
    }
    pub fn alpha(&self) -> f64 {
        f64::from_bits(self.alpha_bits)
    }
    pub fn beta(&self) -> f64 {
        f64::from_bits(self.beta_bits)
    }
}

impl LaunchArgs {
    /// Calls `launch` with the kernel-parameter array both drivers take: one pointer per
    /// parameter, each to a copy that lives until `launch` returns (6, or 10 with `op`, 11 for
    /// a rank sum).
    pub fn with_params<R>(&self, launch: impl FnOnce(&mut [*mut std::ffi::c_void]) -> R) -> R {
        use std::ffi::c_void;
        let (mut a, mut b, mut c, mut w) = (self.a, self.b, self.c, self.workspace);
        let (mut n, mut nb) = (self.nfuncs, self.nblocks);
        let op = self.op.unwrap_or(OpParams::new(0, 0, 1.0, 0.0));
        let (mut sa, mut sc, mut alpha, mut beta) = (op.a_stride, op.c_stride, op.alpha(), op.beta());
        let mut ranks = op.ranks.unwrap_or(0);
        let mut params: [*mut c_void; 11] = [
            &mut a as *mut _ as *mut c_void,
            &mut b as *mut _ as *mut c_void,
            &mut c as *mut _ as *mut c_void,
            &mut w as *mut _ as *mut c_void,
            &mut n as *mut _ as *mut c_void,
            &mut nb as *mut _ as *mut c_void,
            &mut sa as *mut _ as *mut c_void,
            &mut sc as *mut _ as *mut c_void,
            &mut alpha as *mut _ as *mut c_void,
            &mut beta as *mut _ as *mut c_void,
            &mut ranks as *mut _ as *mut c_void,
        ];
        let count = match self.op {
            None => 6,
            Some(OpParams { ranks: None, .. }) => 10,
            Some(_) => 11,
        };
        launch(&mut params[..count])
    }
}

/// Column-major GEMM operands: `C(m×n) = op(A)(m×k) · op(B)(k×n)`, each batch entry `stride`
/// elements after the previous one (0: the same matrix for every entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gemm {
    pub transa: bool,
    pub transb: bool,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub a: u64,
    pub lda: i32,
    pub stride_a: i64,
    pub b: u64,
    pub ldb: i32,
    pub stride_b: i64,
    pub c: u64,
    pub ldc: i32,
    pub stride_c: i64,
    pub batch: i32,
}

/// A compiled kernel's resources as its compiler reported them, vendor-neutral.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Resources {
    /// Registers per thread (AMD: VGPRs, AGPRs included).
    pub registers: u32,
    /// Bytes spilled (NVIDIA: spill stores + loads; AMD: scratch) and spill counts: 0 if none.
    pub spill_bytes: u32,
    /// Static shared memory / LDS per block.
    pub shared_bytes: u32,
    /// Scalar registers per wave (AMD SGPRs; 0 on NVIDIA).
    #[serde(default)]
    pub scalar_registers: u32,
}

/// One opened GPU of some vendor, as the harness uses it.
///
/// Ordering contract (the harness relies on it): `upload` and `poison` are complete, and
/// visible to every stream, when they return (both vendors run such calls on the legacy/null
/// stream, which the harness's non-blocking streams do not wait for); a `launch` or `gemm`
/// only enqueues; `synchronize` and `elapsed_ms` wait.
pub trait Backend: Sized {
    /// Device memory (bytes).
    type Buffer;
    /// A non-blocking stream.
    type Stream;
    /// A timing event.
    type Event;
    /// A loaded kernel.
    type Function;
    /// A BLAS handle (one per stream: a handle's workspace must not serve concurrent GEMMs).
    type Blas;
    /// The run-time compiler (NVRTC; hiprtc or clang).
    type Compiler;
    /// A compiled kernel image with what is known about it.
    type Compiled;

    /// `cuBLAS` or `hipBLAS`, for messages.
    const BLAS_NAME: &'static str;

    /// The device's name as its driver gives it (`NVIDIA A100-SXM4-80GB`, `AMD Instinct MI250X`).
    fn device_name(&self) -> &str;
    /// The arch table entry of the device.
    fn arch(&self) -> &'static Arch;
    /// (free, total) device memory in bytes.
    fn memory(&self) -> Result<(usize, usize)>;

    fn alloc(&self, bytes: usize) -> Result<Self::Buffer>;
    fn device_ptr(buf: &Self::Buffer) -> u64;
    /// Copies exactly the buffer's size; complete when this returns.
    fn upload(&self, buf: &Self::Buffer, bytes: &[u8]) -> Result<()>;
    fn download(&self, buf: &Self::Buffer) -> Result<Vec<u8>>;
    /// Fills every byte with 0xFF (NaN in f16, bf16, f32, f64); complete when this returns.
    fn poison(&self, buf: &Self::Buffer) -> Result<()>;
    /// Queues a device-to-device copy of `bytes` bytes from `src` at byte `src_at` to `dst` at
    /// byte `dst_at` on `stream`: the floor of the API regime (what `cudaMemcpyAsync` of the
    /// same bytes costs), and how a large batch is filled from a small one.
    fn copy_device(&self, dst: &Self::Buffer, dst_at: usize, src: &Self::Buffer, src_at: usize, bytes: usize, stream: &Self::Stream) -> Result<()>;

    fn stream(&self) -> Result<Self::Stream>;
    fn synchronize(&self, stream: &Self::Stream) -> Result<()>;
    fn event(&self) -> Result<Self::Event>;
    fn record(&self, event: &Self::Event, stream: &Self::Stream) -> Result<()>;
    /// Work enqueued on `stream` after this waits for `event`.
    fn wait(&self, stream: &Self::Stream, event: &Self::Event) -> Result<()>;
    /// Milliseconds from `start` to `end`, waiting for `end` first.
    fn elapsed_ms(&self, start: &Self::Event, end: &Self::Event) -> Result<f32>;

    /// Compiles `source` for this device's arch, through the kernel cache.
    fn compile(&self, compiler: &Self::Compiler, source: &str, entry: &str, cache: &KernelCache) -> Result<Self::Compiled>;
    /// How it was compiled, for the run's log: `compiled with NVRTC 13.0 in 180.2 ms: 40
    /// registers, 0 B spilled, 2048 B shared`.
    fn compile_note(compiler: &Self::Compiler, compiled: &Self::Compiled) -> String;
    /// Loads `entry` from a compiled image; it launches with `dynamic_shared_bytes`.
    fn load(&self, compiled: &Self::Compiled, entry: &str, dynamic_shared_bytes: u32) -> Result<Self::Function>;
    /// Enqueues `args.nblocks × threads` on `stream`. The hot path: no allocation.
    fn launch(&self, f: &Self::Function, stream: &Self::Stream, threads: u32, args: &LaunchArgs) -> Result<()>;

    /// A new BLAS handle.
    fn blas(&self) -> Result<Self::Blas>;

    /// How many blocks of `f` with `threads` threads the whole device holds at once: the
    /// driver's resident blocks per SM/CU for the loaded kernel (its registers and shared
    /// memory) times the SMs/CUs. `persistent(1)` launches no more than this. `None` where the
    /// backend has no such limit (the CPU emulator runs blocks one after another).
    fn resident_blocks(&self, _f: &Self::Function, _threads: u32) -> Result<Option<usize>> {
        Ok(None)
    }

    /// How many clusters of `f` (a kernel compiled for clusters of `cluster_blocks` blocks of
    /// `threads` threads) the whole device holds at once, where the backend can tell (`None`:
    /// no clusters on this backend, or the driver cannot say). A cluster's blocks must share one
    /// GPC, so this can be fewer than [`Backend::resident_blocks`] / `cluster_blocks`.
    fn resident_clusters(&self, _f: &Self::Function, _threads: u32, _cluster_blocks: u32) -> Result<Option<usize>> {
        Ok(None)
    }

    /// What the compiler reported about a compiled kernel (registers, spills, shared memory),
    /// if it reported anything: the tuner rejects spilling or non-fitting candidates from it.
    fn resources(_compiled: &Self::Compiled) -> Option<Resources> {
        None
    }
    /// The driver/runtime version (`CUDA driver 13000`), part of a tuning result's key.
    fn driver_version(&self) -> String {
        String::new()
    }
    /// The run-time compiler with its version (`NVRTC 13.0`), part of a tuning result's key.
    fn compiler_version(_compiler: &Self::Compiler) -> String {
        String::new()
    }
    /// What reads this device's SM clock while levels are timed ([`crate::clocks`]), or why
    /// nothing can (one line, for the report).
    fn clock_source(&self) -> std::result::Result<std::sync::Arc<dyn crate::clocks::ClockSource>, String> {
        Err("no clock source for this backend".into())
    }
    /// Enqueues `g` (strided-batched) on `stream` in `dtype` (f64 or f32).
    fn gemm(&self, blas: &Self::Blas, stream: &Self::Stream, dtype: DType, g: &Gemm) -> Result<()>;
}

/// The [`Backend`] items that only forward to the backend's own types, written once for both:
/// the CUDA (`crate::cuda`) and HIP (`crate::hip::runtime`) modules give their `Gpu` (with
/// `name`, `arch`, `memory`), `DeviceBuffer`, `Stream`, `Event` and `Function` the same
/// methods on purpose. Expands inside `impl Backend for Gpu`, with those names in scope; each
/// error converts into [`crate::error::RuntimeError`].
macro_rules! forward_to_handles {
    () => {
        type Buffer = DeviceBuffer<u8>;
        type Stream = Stream;
        type Event = Event;
        type Function = Function;

        fn device_name(&self) -> &str {
            &self.name
        }
        fn arch(&self) -> &'static mra_codegen::Arch {
            self.arch
        }
        fn memory(&self) -> $crate::error::Result<(usize, usize)> {
            $crate::backend::lift(Gpu::memory(self))
        }
        fn alloc(&self, bytes: usize) -> $crate::error::Result<DeviceBuffer<u8>> {
            $crate::backend::lift(DeviceBuffer::alloc(bytes))
        }
        fn device_ptr(buf: &DeviceBuffer<u8>) -> u64 {
            buf.device_ptr()
        }
        fn upload(&self, buf: &DeviceBuffer<u8>, bytes: &[u8]) -> $crate::error::Result<()> {
            $crate::backend::lift(buf.upload(bytes))
        }
        fn download(&self, buf: &DeviceBuffer<u8>) -> $crate::error::Result<Vec<u8>> {
            $crate::backend::lift(buf.download())
        }
        fn poison(&self, buf: &DeviceBuffer<u8>) -> $crate::error::Result<()> {
            $crate::backend::lift(buf.poison())
        }
        fn copy_device(&self, dst: &DeviceBuffer<u8>, dst_at: usize, src: &DeviceBuffer<u8>, src_at: usize, bytes: usize, stream: &Stream) -> $crate::error::Result<()> {
            $crate::backend::lift(dst.copy_from(dst_at, src, src_at, bytes, stream))
        }
        fn stream(&self) -> $crate::error::Result<Stream> {
            $crate::backend::lift(Stream::new())
        }
        fn synchronize(&self, stream: &Stream) -> $crate::error::Result<()> {
            $crate::backend::lift(stream.synchronize())
        }
        fn event(&self) -> $crate::error::Result<Event> {
            $crate::backend::lift(Event::new())
        }
        fn record(&self, event: &Event, stream: &Stream) -> $crate::error::Result<()> {
            $crate::backend::lift(event.record(stream))
        }
        fn wait(&self, stream: &Stream, event: &Event) -> $crate::error::Result<()> {
            $crate::backend::lift(stream.wait(event))
        }
        fn elapsed_ms(&self, start: &Event, end: &Event) -> $crate::error::Result<f32> {
            $crate::backend::lift(start.elapsed_ms(end))
        }
        #[inline]
        fn launch(&self, f: &Function, stream: &Stream, threads: u32, args: &$crate::backend::LaunchArgs) -> $crate::error::Result<()> {
            $crate::backend::lift(f.launch(stream, threads, args))
        }
        #[inline]
        fn gemm(&self, blas: &Self::Blas, stream: &Stream, dtype: mra_codegen::DType, g: &$crate::backend::Gemm) -> $crate::error::Result<()> {
            $crate::backend::lift(blas.gemm(stream, dtype, g))
        }
    };
}
pub(crate) use forward_to_handles;

/// A backend's own result as the harness's (unchanged for CUDA; `HipError` → `RuntimeError`).
#[inline]
pub(crate) fn lift<T, E: Into<RuntimeError>>(r: std::result::Result<T, E>) -> Result<T> {
    r.map_err(Into::into)
}

//! hipBLAS, loaded lazily with libloading: the handle, its stream, and the strided-batched
//! GEMMs the GEMM-based levels need (`hipblasDgemmStridedBatched`, `hipblasSgemmStridedBatched`;
//! a single GEMM is a batch of one, as on the cuBLAS side). Nothing links against ROCm;
//! [`HipBlas::is_present`] tells whether the library can be used at all.
//!
//! Signatures as in `hipblas.h` (ROCm/hipBLAS `library/include/hipblas.h`; the same in hipBLAS
//! 0.x of ROCm 5 and 2.x of ROCm 6 for the real-valued calls; Debian ships no hipBLAS header):
//! column-major, `hipblasOperation_t` HIPBLAS_OP_N = 111, HIPBLAS_OP_T = 112, HIPBLAS_OP_C =
//! 113 (the CBLAS values, not cuBLAS's 0/1/2), strides `long long` (`hipblasStride`), status 0
//! = success. hipBLAS depends on libamdhip64, so loading
//! it loads the HIP runtime too.

use super::runtime::Stream;
use super::{HipError, Result};
use crate::backend::Gemm;
use mra_codegen::DType;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

/// Library names tried, in order.
pub const HIPBLAS_CANDIDATES: &[&str] = &["libhipblas.so", "libhipblas.so.2", "libhipblas.so.0"];

pub type HipblasHandle = *mut c_void;
pub type HipblasStatus = c_int;
pub type HipblasOperation = c_int;
pub const HIPBLAS_OP_N: HipblasOperation = 111;
pub const HIPBLAS_OP_T: HipblasOperation = 112;

/// `hipblas{D,S}gemmStridedBatched` for `T` = f64, f32 (`hipblasStride` is `int64_t`).
type GemmStridedBatchedFn<T> = unsafe extern "C" fn(
    HipblasHandle,
    HipblasOperation,
    HipblasOperation,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    i64,
    *const T,
    c_int,
    i64,
    *const T,
    *mut T,
    c_int,
    i64,
    c_int,
) -> HipblasStatus;

#[derive(Clone, Copy, Debug)]
struct Fns {
    create: unsafe extern "C" fn(*mut HipblasHandle) -> HipblasStatus,
    destroy: unsafe extern "C" fn(HipblasHandle) -> HipblasStatus,
    set_stream: unsafe extern "C" fn(HipblasHandle, *mut c_void) -> HipblasStatus,
    dgemm_strided_batched: GemmStridedBatchedFn<f64>,
    sgemm_strided_batched: GemmStridedBatchedFn<f32>,
    status_to_string: Option<unsafe extern "C" fn(HipblasStatus) -> *const c_char>,
}

/// A loaded hipBLAS (kept loaded for the life of the process).
#[derive(Debug)]
pub struct HipBlas {
    /// The name it was opened by (`libhipblas.so.2`).
    pub library: String,
    fns: Fns,
    _lib: libloading::Library,
}

static LOADED: OnceLock<std::result::Result<HipBlas, HipError>> = OnceLock::new();

impl HipBlas {
    /// The process-wide hipBLAS, loaded on first use (a failure is remembered too).
    pub fn get() -> Result<&'static HipBlas> {
        LOADED.get_or_init(Self::load).as_ref().map_err(|e| match e {
            HipError::BlasNotFound { tried } => HipError::BlasNotFound { tried: tried.clone() },
            HipError::BlasSymbol { library, symbol, message } => HipError::BlasSymbol { library: library.clone(), symbol, message: message.clone() },
            other => HipError::Runtime(other.to_string()),
        })
    }

    /// Can hipBLAS be loaded (with every function used here)?
    pub fn is_present() -> bool {
        Self::get().is_ok()
    }

    fn load() -> Result<HipBlas> {
        let mut symbol_error = None;
        for &name in HIPBLAS_CANDIDATES {
            // SAFETY: opening hipBLAS runs its (and the HIP runtime's) initialisers, which have
            // no preconditions.
            let Ok(lib) = (unsafe { libloading::Library::new(name) }) else { continue };
            match Self::resolve(name, &lib) {
                Ok(fns) => return Ok(HipBlas { library: name.to_string(), fns, _lib: lib }),
                Err(e) => symbol_error = Some(e),
            }
        }
        Err(symbol_error.unwrap_or_else(|| HipError::BlasNotFound { tried: HIPBLAS_CANDIDATES.join(", ") }))
    }

    fn resolve(name: &str, lib: &libloading::Library) -> Result<Fns> {
        fn sym<T: Copy>(lib: &libloading::Library, library: &str, symbol: &'static str) -> Result<T> {
            let c = CString::new(symbol).expect("symbol names hold no NUL");
            // SAFETY: T is the C signature of `symbol` as declared in hipblas.h.
            unsafe { lib.get::<T>(c.as_bytes_with_nul()) }
                .map(|s| *s)
                .map_err(|e| HipError::BlasSymbol { library: library.to_string(), symbol, message: e.to_string() })
        }
        Ok(Fns {
            create: sym(lib, name, "hipblasCreate")?,
            destroy: sym(lib, name, "hipblasDestroy")?,
            set_stream: sym(lib, name, "hipblasSetStream")?,
            dgemm_strided_batched: sym(lib, name, "hipblasDgemmStridedBatched")?,
            sgemm_strided_batched: sym(lib, name, "hipblasSgemmStridedBatched")?,
            status_to_string: sym(lib, name, "hipblasStatusToString").ok(),
        })
    }

    fn check(&self, call: &'static str, status: HipblasStatus) -> Result<()> {
        if status == 0 {
            return Ok(());
        }
        let text = self.fns.status_to_string.and_then(|f| {
            // SAFETY: returns a static string or NULL.
            let p = unsafe { f(status) };
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
        let message = match text {
            Some(t) => format!("{t} (status {status})"),
            None => format!("status {status}"),
        };
        Err(HipError::BlasCall { call, code: status, message })
    }

    /// A new handle (on the current device).
    pub fn create(&'static self) -> Result<BlasHandle> {
        let mut raw: HipblasHandle = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        self.check("hipblasCreate", unsafe { (self.fns.create)(&mut raw) })?;
        Ok(BlasHandle { raw, blas: self })
    }
}

/// A hipBLAS handle, destroyed when dropped.
pub struct BlasHandle {
    raw: HipblasHandle,
    blas: &'static HipBlas,
}

impl BlasHandle {
    /// Runs this handle's calls on `stream`.
    pub fn set_stream(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live handle and stream.
        self.blas.check("hipblasSetStream", unsafe { (self.blas.fns.set_stream)(self.raw, stream.raw) })
    }

    /// Enqueues `g` (`g.batch` problems, operands `stride_*` elements apart) on `stream`:
    /// `C = op(A) · op(B)`, column-major, in `dtype` (f64 or f32), as the CUDA backend's
    /// `Blas::gemm` does with cuBLAS.
    pub fn gemm(&self, stream: &Stream, dtype: DType, g: &Gemm) -> Result<()> {
        let op = |t: bool| if t { HIPBLAS_OP_T } else { HIPBLAS_OP_N };
        self.set_stream(stream)?;
        let f = &self.blas.fns;
        // SAFETY: the handle is live; the pointers are device allocations large enough for the
        // shapes (the callers size them from the same K and N), alive until the stream is done.
        unsafe {
            match dtype {
                DType::F64 => self.blas.check(
                    "hipblasDgemmStridedBatched",
                    (f.dgemm_strided_batched)(
                        self.raw, op(g.transa), op(g.transb), g.m, g.n, g.k, &1.0, g.a as *const f64, g.lda, g.stride_a,
                        g.b as *const f64, g.ldb, g.stride_b, &0.0, g.c as *mut f64, g.ldc, g.stride_c, g.batch,
                    ),
                ),
                DType::F32 => self.blas.check(
                    "hipblasSgemmStridedBatched",
                    (f.sgemm_strided_batched)(
                        self.raw, op(g.transa), op(g.transb), g.m, g.n, g.k, &1.0, g.a as *const f32, g.lda, g.stride_a,
                        g.b as *const f32, g.ldb, g.stride_b, &0.0, g.c as *mut f32, g.ldc, g.stride_c, g.batch,
                    ),
                ),
                d @ (DType::F16 | DType::Bf16) => Err(HipError::Runtime(format!("no {d} GEMM in the library levels"))),
            }
        }
    }
}

impl Drop for BlasHandle {
    fn drop(&mut self) {
        // SAFETY: created by hipblasCreate, destroyed once.
        unsafe {
            (self.blas.fns.destroy)(self.raw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Present or not, the loader answers without crashing, and a missing library names the
    /// files it looked for.
    #[test]
    fn the_loader_reports_presence() {
        match HipBlas::get() {
            Ok(b) => {
                assert!(HipBlas::is_present());
                println!("hipBLAS: {}", b.library);
            }
            Err(e) => {
                assert!(!HipBlas::is_present());
                let msg = e.to_string();
                assert!(msg.contains("libhipblas.so") || msg.contains("lacks the function"), "{msg}");
                println!("{msg}");
            }
        }
    }
}

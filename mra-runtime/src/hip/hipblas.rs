//! hipBLAS, loaded lazily with libloading: the handle, its stream, and the FP64 GEMMs the
//! GEMM-based levels need (`hipblasDgemm`, `hipblasDgemmStridedBatched`). Nothing links against
//! ROCm; [`HipBlas::is_present`] tells whether the library can be used at all.
//!
//! Signatures as in `hipblas.h` (the same in hipBLAS 0.x of ROCm 5 and 2.x of ROCm 6 for the
//! real-valued calls): column-major, `hipblasOperation_t` 111 = N, 112 = T, 113 = C,
//! `hipblasStride` = `int64_t`, status 0 = success. hipBLAS depends on libamdhip64, so loading
//! it loads the HIP runtime too.

use super::runtime::Stream;
use super::{HipError, Result};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

/// Library names tried, in order.
pub const HIPBLAS_CANDIDATES: &[&str] = &["libhipblas.so", "libhipblas.so.2", "libhipblas.so.0"];

pub type HipblasHandle = *mut c_void;
pub type HipblasStatus = c_int;
pub type HipblasOperation = c_int;
pub const HIPBLAS_OP_N: HipblasOperation = 111;
pub const HIPBLAS_OP_T: HipblasOperation = 112;

type DgemmFn = unsafe extern "C" fn(
    HipblasHandle,
    HipblasOperation,
    HipblasOperation,
    c_int,
    c_int,
    c_int,
    *const f64,
    *const f64,
    c_int,
    *const f64,
    c_int,
    *const f64,
    *mut f64,
    c_int,
) -> HipblasStatus;

type DgemmStridedBatchedFn = unsafe extern "C" fn(
    HipblasHandle,
    HipblasOperation,
    HipblasOperation,
    c_int,
    c_int,
    c_int,
    *const f64,
    *const f64,
    c_int,
    i64,
    *const f64,
    c_int,
    i64,
    *const f64,
    *mut f64,
    c_int,
    i64,
    c_int,
) -> HipblasStatus;

#[derive(Clone, Copy, Debug)]
struct Fns {
    create: unsafe extern "C" fn(*mut HipblasHandle) -> HipblasStatus,
    destroy: unsafe extern "C" fn(HipblasHandle) -> HipblasStatus,
    set_stream: unsafe extern "C" fn(HipblasHandle, *mut c_void) -> HipblasStatus,
    dgemm: DgemmFn,
    dgemm_strided_batched: DgemmStridedBatchedFn,
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
            dgemm: sym(lib, name, "hipblasDgemm")?,
            dgemm_strided_batched: sym(lib, name, "hipblasDgemmStridedBatched")?,
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

    /// `C = alpha · op(A) · op(B) + beta · C`, column-major, device pointers.
    ///
    /// # Safety
    /// `a`, `b`, `c` must be device allocations large enough for the shapes and leading
    /// dimensions given, alive until the call completes on the handle's stream.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn dgemm(
        &self,
        trans_a: HipblasOperation,
        trans_b: HipblasOperation,
        m: i32,
        n: i32,
        k: i32,
        alpha: f64,
        a: u64,
        lda: i32,
        b: u64,
        ldb: i32,
        beta: f64,
        c: u64,
        ldc: i32,
    ) -> Result<()> {
        self.blas.check(
            "hipblasDgemm",
            (self.blas.fns.dgemm)(self.raw, trans_a, trans_b, m, n, k, &alpha, a as *const f64, lda, b as *const f64, ldb, &beta, c as *mut f64, ldc),
        )
    }

    /// `batch` GEMMs whose operands are `stride_*` elements apart.
    ///
    /// # Safety
    /// As [`BlasHandle::dgemm`], for every one of the `batch` problems.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn dgemm_strided_batched(
        &self,
        trans_a: HipblasOperation,
        trans_b: HipblasOperation,
        m: i32,
        n: i32,
        k: i32,
        alpha: f64,
        a: u64,
        lda: i32,
        stride_a: i64,
        b: u64,
        ldb: i32,
        stride_b: i64,
        beta: f64,
        c: u64,
        ldc: i32,
        stride_c: i64,
        batch: i32,
    ) -> Result<()> {
        self.blas.check(
            "hipblasDgemmStridedBatched",
            (self.blas.fns.dgemm_strided_batched)(
                self.raw,
                trans_a,
                trans_b,
                m,
                n,
                k,
                &alpha,
                a as *const f64,
                lda,
                stride_a,
                b as *const f64,
                ldb,
                stride_b,
                &beta,
                c as *mut f64,
                ldc,
                stride_c,
                batch,
            ),
        )
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

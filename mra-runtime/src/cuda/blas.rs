//! cuBLAS through cudarc (loaded dynamically): the GEMMs of the library levels and of the FP64
//! GEMM peak measurement (`crate::harness::gemm_peak_tflops`). libcublas is probed first,
//! since cudarc panics when it is missing.

use super::Stream;
pub use crate::backend::Gemm;
use crate::error::{Result, RuntimeError};
use cudarc::cublas::{result as blas, sys};
use mra_codegen::DType;

/// cuBLAS functions the library levels and the peak measurement call.
const BLAS_SYMBOLS: &[&str] = &["cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasDgemmStridedBatched", "cublasSgemmStridedBatched"];

/// A cuBLAS handle.
pub struct Blas {
    handle: sys::cublasHandle_t,
}

fn fail(call: &'static str) -> impl Fn(blas::CublasError) -> RuntimeError {
    move |e| RuntimeError::Driver { call, message: format!("{:?}", e.0) }
}

impl Blas {
    pub fn new() -> Result<Blas> {
        let tried = super::lib_candidates("cublas");
        super::probe_library(&tried, BLAS_SYMBOLS).map_err(|e| match e {
            super::LibraryProbe::NotFound => RuntimeError::Invalid(format!("cuBLAS not found (looked for {}); the library levels need it", tried.join(", "))),
            super::LibraryProbe::MissingSymbol { name, symbol, detail } => RuntimeError::BrokenLibrary { what: "cuBLAS", name, symbol, detail },
        })?;
        let handle = blas::create_handle().map_err(fail("cublasCreate"))?;
        Ok(Blas { handle })
    }

    /// Runs `g` (batched when `g.batch > 1`) on `stream`, in `dtype`.
    pub fn gemm(&self, stream: &Stream, dtype: DType, g: &Gemm) -> Result<()> {
        let op = |t: bool| if t { sys::cublasOperation_t::CUBLAS_OP_T } else { sys::cublasOperation_t::CUBLAS_OP_N };
        // SAFETY: the handle is live; pointers are device allocations large enough for the
        // shapes (the callers size them from the same K and N).
        unsafe {
            blas::set_stream(self.handle, stream.0 as _).map_err(fail("cublasSetStream"))?;
            match dtype {
                DType::F64 => {
                    let (one, zero) = (1.0f64, 0.0f64);
                    blas::dgemm_strided_batched(
                        self.handle, op(g.transa), op(g.transb), g.m, g.n, g.k, &one,
                        g.a as *const f64, g.lda, g.stride_a, g.b as *const f64, g.ldb, g.stride_b,
                        &zero, g.c as *mut f64, g.ldc, g.stride_c, g.batch,
                    )
                    .map_err(fail("cublasDgemmStridedBatched"))
                }
                d @ (DType::F16 | DType::Bf16) => Err(RuntimeError::Invalid(format!("no {d} GEMM in the library levels"))),
                DType::F32 => {
                    let (one, zero) = (1.0f32, 0.0f32);
                    blas::sgemm_strided_batched(
                        self.handle, op(g.transa), op(g.transb), g.m, g.n, g.k, &one,
                        g.a as *const f32, g.lda, g.stride_a, g.b as *const f32, g.ldb, g.stride_b,
                        &zero, g.c as *mut f32, g.ldc, g.stride_c, g.batch,
                    )
                    .map_err(fail("cublasSgemmStridedBatched"))
                }
            }
        }
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: created by cublasCreate, destroyed once.
        unsafe {
            let _ = blas::destroy_handle(self.handle);
        }
    }
}

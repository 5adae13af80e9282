//! cuBLAS through cudarc (loaded dynamically): the GEMMs of the library levels and the FP64
//! GEMM peak measurement. libcublas is probed first, since cudarc panics when it is missing.

use super::{DeviceBuffer, Event, Stream};
use crate::error::{Result, RuntimeError};
use cudarc::cublas::{result as blas, sys};
use mra_codegen::DType;

/// A cuBLAS handle.
pub struct Blas {
    handle: sys::cublasHandle_t,
}

fn fail(call: &'static str) -> impl Fn(blas::CublasError) -> RuntimeError {
    move |e| RuntimeError::Driver { call, message: format!("{:?}", e.0) }
}

/// Column-major GEMM operands: `C(m×n) = op(A)(m×k) · op(B)(k×n)`, each batch entry `stride`
/// elements after the previous one (0: the same matrix for every entry).
#[derive(Clone, Copy, Debug)]
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

impl Blas {
    pub fn new() -> Result<Blas> {
        let tried = super::lib_candidates("cublas");
        // SAFETY: loading libcublas runs no initialisers with preconditions.
        if !tried.iter().any(|n| unsafe { libloading::Library::new(n) }.is_ok()) {
            return Err(RuntimeError::Invalid(format!("cuBLAS not found (looked for {}); the library levels need it", tried.join(", "))));
        }
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

    /// Measured FP64 GEMM rate in TFLOP/s: an n×n×n DGEMM on random data, one warm-up, then
    /// the median of `reps` timed with events.
    pub fn dgemm_peak_tflops(&self, n: usize, reps: usize) -> Result<f64> {
        let stream = Stream::new()?;
        let init: Vec<f64> = (0..n * n).map(|e| ((e * 2654435761usize) % 1000) as f64 / 1000.0 - 0.5).collect();
        let a = DeviceBuffer::from_host(&init)?;
        let b = DeviceBuffer::from_host(&init)?;
        let c = DeviceBuffer::<f64>::alloc(n * n)?;
        let g = Gemm {
            transa: false, transb: false, m: n as i32, n: n as i32, k: n as i32,
            a: a.device_ptr(), lda: n as i32, stride_a: 0,
            b: b.device_ptr(), ldb: n as i32, stride_b: 0,
            c: c.device_ptr(), ldc: n as i32, stride_c: 0, batch: 1,
        };
        let (start, end) = (Event::new()?, Event::new()?);
        let mut times = Vec::new();
        for rep in 0..=reps {
            start.record(&stream)?;
            self.gemm(&stream, DType::F64, &g)?;
            end.record(&stream)?;
            let ms = start.elapsed_ms(&end)? as f64;
            if rep > 0 {
                times.push(ms);
            }
        }
        let ms = crate::harness::median(&times);
        Ok(2.0 * (n as f64).powi(3) / (ms * 1e-3) / 1e12)
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

//! mra-runtime: run-time compilation (NVRTC; hiprtc or clang), the on-disk kernel cache, device
//! memory, launch, event timing and validation against the FP64 CPU reference, on CUDA or HIP
//! through one [`backend::Backend`] trait.

pub mod configure;
pub mod backend;
pub mod cache;
pub mod clocks;
pub mod cuda;
pub mod emulate;
pub mod error;
pub mod harness;
pub mod memory;
pub mod hip;
pub mod interrupt;
pub mod process;
pub mod read_file;
pub mod reference;
pub mod reference_op;
pub mod replace_file;
pub mod residency;
pub mod transformer;
pub mod transformer_op;
pub mod scratch;
pub mod tuning;
pub mod validate;
pub mod warmup;

pub use cache::KernelCache;
pub use error::{Result, RuntimeError};

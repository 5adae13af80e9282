//! mra-codegen: the schedule IR, the arch tables, and the lowering of MRA-transform schedules
//! to CUDA or HIP C++ for one (level, K, arch, dtype). Pure Rust; needs no GPU and no toolkit.
//!
//! ```
//! use mra_codegen::{arch, levels, DType, Request};
//! let l3 = levels::find("3").unwrap();
//! let req = Request { k: 16, arch: arch::find("gfx90a").unwrap(), dtype: DType::F64 };
//! let kernel = mra_codegen::generate(&l3, req).unwrap();
//! assert!(kernel.source.contains("constexpr int K = 16;"));
//! ```

// The schedule! macro expands to `::mra_codegen::...` paths; this lets the levels in this
// crate use it too.
extern crate self as mra_codegen;

pub mod arch;
pub mod config;
pub mod dtype;
pub mod emit;
pub mod export;
pub mod expr;
pub mod fragment;
pub mod instr;
pub mod ir;
pub mod levels;
pub mod matrix_support;
pub mod op;
pub mod plan;
mod quote;
pub mod request;
pub mod simulate;
pub mod tune;
pub mod tuned_defaults;

pub use arch::{Arch, MatrixInstr, Vendor};
pub use dtype::DType;
pub use emit::{generate, generate_op, Kernel};
pub use op::{Layout, Matrices, Operation};
pub use ir::Schedule;
pub use plan::{Plan, PlanError};
pub use request::{Request, K_MAX};
pub use quote::quote;

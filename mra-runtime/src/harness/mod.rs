//! The seed's benchmark harness on one GPU, and the validation run, written once against the
//! [`Backend`] trait (CUDA: [`CudaSession`]; HIP: [`HipSession`]).
//!
//! A timed repetition submits `tasks` kernel launches, each transforming all N tensors with
//! at most M blocks, round-robin over S streams; it is timed with device events from a start
//! event on stream 0 (that all streams wait for) to an end event after all streams joined.
//! Untimed repetitions come first. Each stream has its own workspace so concurrent tasks
//! never share intermediates.
//!
//! The parts: the parameters ([`HarnessConfig`]), a [`Session`] that prepares a level into a
//! [`Prepared`] kernel or BLAS task, the device [`Buffers`], host [`Inputs`] with their FP64
//! reference, the validation run ([`validate`]) and the timed repetitions ([`time_reps`]).

pub mod api_regime;
mod buffers;
mod config;
mod device_bytes;
#[cfg(test)]
pub(crate) mod fake;
mod inputs;
pub mod op_case;
mod prepared;
mod session;
mod timing;
mod validation;

pub use crate::backend::{Backend, Gemm, LaunchArgs};
pub use crate::warmup::{Warmup, WarmupDone};
pub use buffers::Buffers;
pub use config::{HarnessConfig, StreamData, AUTO_BLOCKS, MAX_REPS, MAX_STREAMS, MAX_TASKS};
pub use device_bytes::{from_device_bytes, round_to, to_device_bytes};
pub use inputs::{random_inputs, Inputs};
pub use prepared::{BlasPerStream, Prepared, Task, AUTO_WAVES};
pub use session::{bytes_needed, workspace_elems_per_stream, CudaSession, EmulatorSession, HipSession, Session};
pub use timing::{gemm_peak_tflops, host_bound_rule, median, time_reps, time_reps_clocked, Timing, HOST_BOUND_SHARE};
pub use validation::{run_once, validate};

//! `sweep --launch api`: one level at one K as a code calls it (see
//! `mra_runtime::harness::api_regime`): validated on a slice of the batch against the FP64 CPU
//! reference, then timed as one launch per repetition over the whole batch (tiled on the device
//! from the validated slice), its grid what the GPU holds of the kernel at once. The `copy` row
//! is a device-to-device copy of the same bytes.

use crate::sweep_report::Measured;
use mra_codegen::{DType, Request, Schedule};
use mra_runtime::clocks::ClockSource;
use mra_runtime::harness::{self, api_regime, Backend, HarnessConfig, Inputs, Session};
use std::sync::Arc;

/// Prepares, validates and times `s` at `k` over `cfg`'s batch (`cfg.nfuncs` tensors).
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure<B: Backend>(
    session: &Session<B>,
    s: &Schedule,
    k: u32,
    dtype: DType,
    cfg: &HarnessConfig,
    inputs: &Inputs,
    stream: &B::Stream,
    clocks: Option<&Arc<dyn ClockSource>>,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let gpu = &session.gpu;
    // The tuned defaults timed in this regime, where the arch has them.
    let s = &s.at_in(Request { k, arch: gpu.arch(), dtype }, mra_codegen::tuned_defaults::Regime::Api);
    let plan = s.plan(Request { k, arch: gpu.arch(), dtype })?;
    let n_valid = inputs.a.len() / (k as usize).pow(3);
    let mut p = session.prepare(s, k, dtype)?;
    // The slice that is validated (and then tiled over the batch): the seed's -M.
    let small = HarnessConfig { nfuncs: n_valid, max_blocks: 512, tasks: 1, streams: 1, reps: 1, ..*cfg };
    let vbufs = session.allocate(&small, &plan)?;
    let cmp = harness::validate(gpu, &p, &vbufs, inputs)?;
    let tol = if plan.is_copy() { f64::MIN_POSITIVE } else { dtype.tolerance() };
    if !cmp.passes(tol) {
        return Err(format!("validation failed: max rel {:.2e}, {} non-finite (seed {})", cmp.max_rel, cmp.non_finite, inputs.seed).into());
    }
    let cfg = session.grid_for(cfg, &mut [&mut p]);
    let bufs = session.allocate(&cfg, &plan)?;
    let slice = n_valid * (k as usize).pow(3) * dtype.bytes() as usize;
    gpu.copy_device(&bufs.a, 0, &vbufs.a, 0, slice, stream)?;
    gpu.copy_device(&bufs.b, 0, &vbufs.b, 0, (k as usize).pow(2) * dtype.bytes() as usize, stream)?;
    drop(vbufs);
    api_regime::tile_a(gpu, &bufs, k, n_valid, stream)?;
    if s.role() == mra_codegen::ir::Role::Floor {
        // The floor of the API regime: the runtime's copy of the same bytes, not a kernel.
        let times = api_regime::time_copy(gpu, &bufs, k, cfg.reps, cfg.warmup, stream)?;
        let warmup = mra_runtime::harness::WarmupDone { ms: 0.0, reps: 0, settled: None, sm_mhz: None };
        return Ok(Measured { us: harness::median(&times), tasks: 1, max_rel: 0.0, clock: None, nblocks: 0, warmup, host_bound_reps: 0, clusters: None });
    }
    let t = harness::time_reps_clocked(gpu, &p, &bufs, std::slice::from_ref(stream), &cfg, clocks)?;
    let host_bound_reps = t.host_bound_reps();
    Ok(Measured { us: harness::median(&t.times), tasks: 1, max_rel: cmp.max_rel, clock: t.clock, nblocks: p.grid_blocks(bufs.nblocks), warmup: t.warmup, host_bound_reps, clusters: p.clusters })
}

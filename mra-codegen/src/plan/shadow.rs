//! The copy floor's `shadow_mma(..)`: the matrix instructions the `bound` level issues beside
//! its copy, as many as one tensor's transform needs at the fewest.

use super::error::PlanError;
use crate::dtype::DType;
use crate::fragment::{fragment, Fragment};
use crate::instr::matrix_instr;
use crate::ir::{Schedule, Step, Value};
use crate::request::Request;
use serde::Serialize;

/// `shadow_mma(..)`: the matrix instructions the `bound` level issues beside its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shadow {
    /// The arch's instruction for the dtype, as `tensorize(mma)` picks it for the transforms.
    pub fragment: Fragment,
    /// Instructions per tensor: [`fewest_mma_per_tensor`].
    pub per_tensor: u64,
    /// `shadow_mma(1)`: half of each block's waves copy, half multiply.
    pub split: bool,
}

/// The fewest instructions of `f`'s shape one tensor's transform needs at `k`: each of the
/// three passes is a GEMM of K² rows by K columns, depth K, padded to whole fragments, with
/// the rows on the instruction's M and the columns on its N or the other way round, whichever
/// pads less (for m16n8k4: 117 at K = 10, 162 at K = 12, 6144 at K = 32).
pub fn fewest_mma_per_tensor(k: u32, f: &Fragment) -> u64 {
    let (k, m, n, depth) = (k as u64, f.m as u64, f.n as u64, f.k as u64);
    let rows_on_m = (k * k).div_ceil(m) * k.div_ceil(n);
    let rows_on_n = k.div_ceil(m) * (k * k).div_ceil(n);
    3 * rows_on_m.min(rows_on_n) * k.div_ceil(depth)
}

impl Schedule {
    /// The `shadow_mma(..)` of a copy level, checked for `req` with `threads` per block; `None`
    /// where the schedule has no such step.
    pub(super) fn plan_shadow(&self, req: Request, threads: u32) -> Result<Option<Shadow>, PlanError> {
        let Request { k, arch, dtype } = req;
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        fn shadow_step(s: &Step) -> Option<&Value> {
            if let Step::ShadowMma(v) = s { Some(v) } else { None }
        }
        if !self.iter_steps().any(|s| shadow_step(s).is_some()) {
            return Ok(None);
        }
        let split = self
            .switch(shadow_step, "shadow_mma", "0 (every warp copies and multiplies) or 1 (half the warps copy, half multiply)")
            .map_err(|e| malformed(&e))?;
        if dtype != DType::F64 {
            return Err(PlanError::DTypeUnsupported {
                level: self.name.clone(),
                dtype,
                why: "shadow_mma issues the FP64 matrix instructions of the f64 transform levels".into(),
            });
        }
        let instr = matrix_instr(arch, dtype).ok_or_else(|| PlanError::NoMatrixCore { level: self.name.clone(), arch, dtype, k, wmma: false })?;
        let f = fragment(instr);
        let waves = threads / f.lanes;
        if threads % f.lanes != 0 || (split && waves < 2) {
            return Err(malformed(&format!("shadow_mma({}) needs whole {}-lane waves{}", split as u32, f.lanes, if split { ", at least two (one copies, one multiplies)" } else { "" })));
        }
        Ok(Some(Shadow { fragment: f, per_tensor: fewest_mma_per_tensor(k, &f), split }))
    }
}

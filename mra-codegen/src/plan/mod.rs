//! Checking a schedule against one request (K, arch, dtype) and resolving it into a [`Plan`]:
//! the decisions the C++ emitter follows. Every reason a level cannot run as asked is a
//! [`PlanError`] with a message a user can act on; nothing is silently substituted.
//!
//! [`Schedule::plan`] checks what every level has (threads, dtype), then plans the level's
//! body: a library call, the copy floor (with `shadow.rs`'s `shadow_mma`), or a transform,
//! whose operands (`operands.rs`), other steps (`fused.rs`, with `blocks_per_tensor.rs` for
//! `cluster(N)` and `split_output(N)`) and memory (`block_memory.rs`) make a
//! [`TransformPlan`] (`transform.rs`; `k_steps.rs` groups its k-steps for `fuse_k(N)`).

mod block_memory;
mod blocks_per_tensor;
mod error;
mod fused;
mod k_steps;
mod operands;
mod operation;
mod shadow;
mod steps;
mod transform;

use crate::ir::{LibraryCall, Schedule, Step};
use serde::Serialize;

pub use crate::instr::{fuse_k_max, matrix_instr, mma_computes, row_pairs, wmma_instr};
pub use crate::request::{Request, K_MAX};
pub use error::PlanError;
pub use k_steps::{k_step_groups, KStepGroup};
pub use shadow::{fewest_mma_per_tensor, Shadow};
pub use transform::{Staging, TransformPlan};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// The floor: read each tensor once, write it once; with `shadow`, the `bound` level's
    /// matrix instructions beside the copy.
    Copy { vector: u32, shadow: Option<Shadow> },
    Transform(TransformPlan),
    /// Vendor BLAS calls; the generated kernel (if any) is a one-time setup kernel.
    Library(LibraryCall),
}

/// A schedule resolved for one request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub request: Request,
    pub threads: u32,
    pub body: Body,
    /// Static shared memory / LDS per block, bytes.
    pub shared_bytes: u32,
    /// Elements of device-memory workspace each block needs (0 if none).
    pub workspace_elems_per_block: u64,
    /// Elements of device-memory workspace per tensor of a task (library levels whose
    /// intermediates are whole batches), per stream.
    pub workspace_elems_per_tensor: u64,
    /// Shared memory above the static limit: one dynamic allocation of `shared_bytes`, for
    /// which the runtime raises the kernel's limit (NVIDIA only; AMD's LDS limit is static).
    pub dynamic_shared: bool,
    /// `launch_bounds(min_blocks = N)` with N > 1: blocks the compiler must fit on one SM/CU.
    pub min_blocks: Option<u32>,
    /// `persistent(1)`: the runtime launches at most the blocks the device holds at once
    /// (resident blocks per SM/CU × SMs/CUs), not min(N, M); see [`Plan::persistent_grid`].
    pub persistent: bool,
    /// The tunable parameters with the values this plan used (defaults resolved for the
    /// request, or a tuned configuration's).
    pub parameters: crate::tune::Config,
    /// The operation the kernel computes ([`Schedule::plan_op`]; the seed's unless asked).
    pub op: crate::op::Operation,
}

impl Schedule {
    /// Checks this schedule against `req` and resolves the decisions the emitter follows.
    pub fn plan(&self, req: Request) -> Result<Plan, PlanError> {
        if self.has_open_defaults() {
            return self.at(req).plan(req);
        }
        let Request { k, arch, dtype } = req;
        if !(1..=K_MAX).contains(&k) {
            return Err(PlanError::KOutOfRange(k));
        }
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        let threads = self
            .iter_steps()
            .find_map(|s| match s {
                Step::Threads(v) => Some(v.default_value()),
                _ => None,
            })
            .ok_or_else(|| malformed("no threads(..) step"))?;
        if threads > arch.max_threads_per_block {
            return Err(PlanError::TooManyThreads {
                level: self.name.clone(),
                threads,
                max: arch.max_threads_per_block,
                arch: arch.name,
            });
        }
        if threads == 0 || threads % arch.wave_size != 0 {
            return Err(PlanError::ThreadsNotWaveMultiple {
                level: self.name.clone(),
                threads,
                wave: arch.wave_size,
                unit: if arch.vendor == crate::Vendor::Nvidia { "warp" } else { "wavefront" },
                arch: arch.name,
            });
        }

        let elem = dtype.bytes() as u64;
        let k3 = (k as u64).pow(3);
        let copy = self.iter_steps().find_map(|s| match s {
            Step::Copy { vector } => Some(*vector),
            _ => None,
        });
        let library = self.iter_steps().find_map(|s| match s {
            Step::Library(call) => Some(*call),
            _ => None,
        });
        // Half-width types are matrix-core inputs: generated for the tensorized levels (and the
        // copy floor) on AMD, whose RDNA WMMA takes them.
        if dtype.is_matrix_input() {
            let unsupported = |why: &str| PlanError::DTypeUnsupported { level: self.name.clone(), dtype, why: why.into() };
            if arch.vendor != crate::Vendor::Amd {
                return Err(unsupported(&format!(
                    "f16/bf16 are generated for AMD RDNA matrix cores (gfx1100, gfx1151, gfx1201), not for {}",
                    arch.name
                )));
            }
            if library.is_some() {
                return Err(unsupported("the library levels are f64/f32 BLAS calls"));
            }
            let tensorized = self.iter_steps().any(|s| matches!(s, Step::Tensorize(_)));
            if copy.is_none() && !tensorized {
                return Err(unsupported("it is thread-mapped; f16/bf16 run only on matrix-core levels (tensorize)"));
            }
        }
        let mut per_tensor = 0;
        let (body, shared, workspace) = if let Some(call) = library {
            if call == LibraryCall::ThreeGemm {
                per_tensor = 2 * k3;
            }
            (Body::Library(call), 0, 0)
        } else if let Some(vector) = copy {
            // Wider than 16 bytes is not one access on any target.
            let vector = vector.clamp(1, 16 / dtype.bytes());
            let shadow = self.plan_shadow(req, threads)?;
            (Body::Copy { vector, shadow }, 0u64, 0u64)
        } else {
            let plan = self.plan_transform(req, threads)?;
            let (shared, workspace) = plan.block_memory(k, arch, threads, elem);
            (Body::Transform(plan), shared, workspace)
        };
        if shared > arch.shared_bytes_max as u64 {
            return Err(PlanError::SharedTooLarge {
                level: self.name.clone(),
                k,
                dtype,
                need: shared,
                max: arch.shared_bytes_max,
                arch: arch.name,
            });
        }
        let dynamic_shared = shared > arch.shared_bytes_default as u64;
        self.check_constraints(k, arch, dtype).map_err(|why| PlanError::Constraint { level: self.name.clone(), why })?;
        let min_blocks = self.step_value(|s| match s {
            Step::LaunchBounds { min_blocks } => Some(min_blocks),
            _ => None,
        })
        .filter(|&m| m > 1);
        let persistent = self
            .switch(|s| if let Step::Persistent(v) = s { Some(v) } else { None }, "persistent", "0 (min(N, M) blocks) or 1 (at most the blocks the GPU holds at once)")
            .map_err(|e| malformed(&e))?;
        if persistent {
            match &body {
                Body::Library(_) => return Err(malformed("persistent(1) sizes the grid of the level's kernel: a library level launches none per task")),
                Body::Transform(tp) if tp.cluster > 1 || tp.co_schedule => {
                    return Err(malformed("persistent(1) counts resident blocks per SM; cluster(N) and co_schedule(1) place their blocks by cluster: use one or the other"))
                }
                _ => {}
            }
        }
        Ok(Plan {
            request: req,
            threads,
            body,
            shared_bytes: shared as u32,
            workspace_elems_per_block: workspace,
            workspace_elems_per_tensor: per_tensor,
            dynamic_shared,
            min_blocks,
            persistent,
            parameters: self.defaults(),
            op: crate::op::Operation::SEED,
        })
    }
}

impl Plan {
    /// Useful flops per tensor: 3 passes × 2·K²·K·K. The copy level does none.
    pub fn flops_per_tensor(&self) -> u64 {
        match self.body {
            Body::Copy { .. } => 0,
            Body::Transform(_) | Body::Library(_) => transform_flops(self.request.k),
        }
    }

    /// Flops the level actually executes per tensor: the Kronecker GEMM does 2·K⁶ (the seed
    /// reports L6 with this count); every other level its useful flops.
    pub fn executed_flops_per_tensor(&self) -> u64 {
        match self.body {
            Body::Library(LibraryCall::Kronecker) => 2 * (self.request.k as u64).pow(6),
            _ => self.flops_per_tensor(),
        }
    }

    /// Blocks per thread-block cluster (1: the level launches no clusters). The grid must be
    /// a multiple of it.
    pub fn cluster_blocks(&self) -> u32 {
        match self.body {
            Body::Transform(tp) if tp.co_schedule => tp.split_output.max(1),
            Body::Transform(tp) => tp.cluster.max(1),
            _ => 1,
        }
    }

    /// Blocks that have work in a batch of `nfuncs` tensors: one per tensor, with `stack(N)`
    /// one per group of N (the last group possibly partial), with `split_output(N)` N per
    /// tensor. A launch uses at most this many (and at most M).
    pub fn work_blocks(&self, nfuncs: usize) -> usize {
        match self.body {
            Body::Transform(tp) => nfuncs.div_ceil(tp.stack.max(1) as usize) * tp.split_output.max(1) as usize,
            _ => nfuncs,
        }
    }

    /// What the grid must be a multiple of: the blocks of a cluster, or with `split_output(N)`
    /// the N blocks that share a tensor (blocks b..b + N, b a multiple of N).
    pub fn grid_multiple(&self) -> u32 {
        match self.body {
            Body::Transform(tp) => tp.cluster.max(1).max(tp.split_output.max(1)),
            _ => 1,
        }
    }

    /// The grid for `blocks` requested blocks: rounded up to a multiple of
    /// [`Plan::grid_multiple`] (whole clusters, whole split tensors).
    pub fn grid_blocks(&self, blocks: usize) -> usize {
        blocks.div_ceil(self.grid_multiple() as usize) * self.grid_multiple() as usize
    }

    /// The grid of one launch for `blocks` requested blocks (min(N, M)) on a device that holds
    /// `resident` of this kernel's blocks at once (`None`: not known): with `persistent(1)`
    /// no more than `resident`, rounded down to whole split tensors (and at least one tensor's
    /// blocks: a split tensor's blocks share nothing, so they need not be resident together),
    /// else [`Plan::grid_blocks`].
    pub fn persistent_grid(&self, blocks: usize, resident: Option<usize>) -> usize {
        let whole = self.grid_multiple() as usize;
        match resident {
            Some(r) if self.persistent => self.grid_blocks(blocks).min((r / whole).max(1) * whole),
            _ => self.grid_blocks(blocks),
        }
    }

    /// Whether this level is a plain copy (validated against its input, no flops).
    pub fn is_copy(&self) -> bool {
        matches!(self.body, Body::Copy { .. })
    }
}

/// Useful flops of one transform of order `k` (the seed's count, 6·K⁴).
pub fn transform_flops(k: u32) -> u64 {
    6 * (k as u64).pow(4)
}

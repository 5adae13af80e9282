//! The levels that spread one tensor over several blocks: `cluster(N)` (a thread-block cluster
//! exchanging slices through distributed shared memory, with `async_exchange` and `late_wait`)
//! and `split_output(N)` (blocks computing their share of the output, exchanging nothing, and
//! with `co_schedule(1)` launched together as one cluster).

use super::error::PlanError;
use super::transform::{slice_width, Staging};
use crate::arch::{Arch, MatrixInstr};
use crate::dtype::DType;
use crate::ir::{Memory, Schedule, Step};
use crate::request::Request;

/// What [`Schedule::check_split_output`] checks: the request and the other steps' values.
pub(super) struct SplitRequest {
    pub(super) k: u32,
    pub(super) arch: &'static Arch,
    pub(super) dtype: DType,
    pub(super) threads: u32,
    pub(super) split_output: u32,
    /// The fused form: tensorize(mma), cache_read(A, shared), workspace(shared).
    pub(super) whole: bool,
    /// No pipeline, cluster, tensors, stack, row jam, column split, FMA tail, row pairs,
    /// aligned runs, and the default buffers: steps that shape another layout of the work.
    pub(super) others_plain: bool,
    pub(super) a: Staging,
    pub(super) b: Staging,
    pub(super) chain: bool,
    pub(super) bulk_copy: bool,
    pub(super) fuse_k: u32,
    pub(super) prefetch_l2: u32,
}

impl Schedule {
    /// `cluster(N)`: the blocks of one thread-block cluster that share a tensor (1: none),
    /// checked against the fused form (`whole`) and the other steps' values.
    pub(super) fn plan_cluster(&self, req: Request, whole: bool, pipeline: u32, shared_buffers: u32, tensors: u32) -> Result<u32, PlanError> {
        let Request { k, arch, .. } = req;
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        let cluster = self.step_value(|s| match s {
            Step::Cluster(v) => Some(v),
            _ => None,
        })
        .unwrap_or(1);
        if cluster != 1 {
            if !(2..=8).contains(&cluster) || !whole || pipeline != 2 || !(3..=4).contains(&shared_buffers) || tensors != 1 {
                return Err(malformed("cluster(N) splits the fused passes of pipeline(2) with buffers(3) (slice, intermediate, gather buffer) or buffers(4) (two gather buffers) over N blocks: tensorize(mma), cache_read(A, shared), workspace(shared), no tensors(..); 2 <= N <= 8"));
            }
            if arch.max_cluster_blocks < cluster {
                let why = if arch.max_cluster_blocks <= 1 {
                    format!("cluster({cluster}) needs thread-block clusters with distributed shared memory (NVIDIA sm_90+); run fused-pipe (K <= 24) or L7-breg there")
                } else {
                    format!("cluster({cluster}) exceeds the {} blocks a cluster may have", arch.max_cluster_blocks)
                };
                return Err(PlanError::ArchUnsupported { level: self.name.clone(), arch: arch.name, why });
            }
            // Every block of the cluster must hold part of the second index.
            let width = slice_width(k, cluster);
            if (cluster - 1) * width >= k {
                return Err(PlanError::KUnsupported {
                    level: self.name.clone(),
                    k,
                    why: format!(
                        "cluster({cluster}) splits the index into slices of {width}, so block {} would hold none; a smaller cluster (e.g. `mra-bench tune` it) or another level runs there",
                        cluster - 1
                    ),
                });
            }
        }
        Ok(cluster)
    }

    /// `async_exchange(1)`: whether `cluster(N)`'s blocks send pass 0's output with `st.async`.
    pub(super) fn plan_async_exchange(&self, req: Request, cluster: u32) -> Result<bool, PlanError> {
        let Request { k, dtype, .. } = req;
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        let async_exchange = self
            .switch(|s| if let Step::AsyncExchange(v) = s { Some(v) } else { None }, "async_exchange", "0 (stores and a cluster barrier) or 1 (asynchronous stores)")
            .map_err(|e| malformed(&e))?;
        if async_exchange {
            if cluster == 1 {
                return Err(malformed("async_exchange(1) is how the blocks of cluster(N) exchange pass 0's output: it needs cluster(N) with N >= 2"));
            }
            // The emitter sends f64 (st.async has 32- and 64-bit types; the mbarriers are
            // elements of the f64 buffers); a phase's tx-count must stay under 2^20 bytes.
            if dtype != DType::F64 || k * k * slice_width(k, cluster) * dtype.bytes() >= 1 << 20 {
                return Err(PlanError::KUnsupported {
                    level: self.name.clone(),
                    k,
                    why: format!("async_exchange(1) sends f64 values with st.async, at most 2^20 - 1 bytes per mbarrier phase ({dtype} here); use async_exchange(0)"),
                });
            }
        }
        Ok(async_exchange)
    }

    /// `late_wait(1)`: whether `cluster(N)`'s pass 0 waits at the cluster barrier after each
    /// wave's first tile.
    pub(super) fn plan_late_wait(&self, cluster: u32) -> Result<bool, PlanError> {
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        let late_wait = self
            .switch(|s| if let Step::LateWait(v) = s { Some(v) } else { None }, "late_wait", "0 (the block waits before pass 0) or 1 (each wave after its first tile)")
            .map_err(|e| malformed(&e))?;
        if late_wait && cluster == 1 {
            return Err(malformed("late_wait(1) places the cluster barrier wait of cluster(N)'s pass 0: it needs cluster(N) with N >= 2"));
        }
        Ok(late_wait)
    }

    /// `split_output(N)`'s requirements. The emitter (`emit/split.rs`) writes one layout of the
    /// work: N = 2 at K = 32 (a block's z is one 16-row tile), 8 warps with 4 slices of a each,
    /// every pass's A operand Bᵀ in registers in the chain's k order, the slices copied by bulk
    /// copies (sm_90). Anything else is refused here, naming what runs instead.
    pub(super) fn check_split_output(&self, r: SplitRequest) -> Result<(), PlanError> {
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        if r.split_output != 2 {
            return Err(malformed("split_output(N) takes 1 (none) or 2 (halves of z)"));
        }
        if !r.whole || !r.others_plain {
            return Err(malformed("split_output(2) is its own layout of the fused passes: tensorize(mma), cache_read(A, shared), workspace(shared), without pipeline, buffers, cluster, tensors, stack, unroll(rows), split_cols, fma_tail, pair_rows or align_runs"));
        }
        if r.b.memory != Memory::Registers || r.a.pad != 0 {
            return Err(malformed("split_output(2) holds Bᵀ in registers for all three passes and copies each slice of A as it lies: cache_read(B, registers) and cache_read(A, shared) without a pad"));
        }
        if !r.chain || !r.bulk_copy {
            return Err(malformed("split_output(2) keeps pass 0's output in registers and loads slices with bulk copies: it needs chain(1) and bulk_copy(1)"));
        }
        if r.prefetch_l2 == 1 || r.prefetch_l2 > 4 {
            return Err(malformed("prefetch_l2(N) takes 0 (none) or 2 to 4 slices ahead of the one read (1 is the slice the bulk copy is loading)"));
        }
        let instead = "fused-cluster runs at K = 25..32 on sm_90 (`mra-bench levels` lists every level's K)";
        if r.arch.vendor != crate::Vendor::Nvidia || !r.arch.bulk_async_copy || !r.arch.has(MatrixInstr::MmaSyncM16n8k8F64) {
            return Err(PlanError::ArchUnsupported {
                level: self.name.clone(),
                arch: r.arch.name,
                why: "split_output(2) chains passes through the m16n8k8 f64 accumulator layout and loads slices with bulk copies (NVIDIA sm_90); at K = 32 L7-breg runs there".into(),
            });
        }
        if r.dtype != DType::F64 {
            return Err(PlanError::DTypeUnsupported { level: self.name.clone(), dtype: r.dtype, why: "split_output(2) is written for the f64 m16n8k8 layouts".into() });
        }
        if r.k != 32 {
            return Err(PlanError::KUnsupported {
                level: self.name.clone(),
                k: r.k,
                why: format!("split_output(2) gives each block 16 values of z, one m16 tile: K = 32 only; {instead}"),
            });
        }
        if r.threads != 256 {
            return Err(malformed("split_output(2) gives each of 8 warps 4 slices of a: threads(256)"));
        }
        if ![2, 4].contains(&r.fuse_k) {
            return Err(malformed("chain(1) reads m16n8k8 accumulator columns as k-slots: fuse_k(2) (m16n8k8) or fuse_k(4) (m16n8k16)"));
        }
        Ok(())
    }

    /// `co_schedule(1)`: whether a tensor's `split_output` blocks launch as one cluster.
    pub(super) fn plan_co_schedule(&self, arch: &Arch, split_output: u32) -> Result<bool, PlanError> {
        let malformed = |what: &str| PlanError::Malformed { level: self.name.clone(), what: what.into() };
        let co_schedule = self
            .switch(|s| if let Step::CoSchedule(v) = s { Some(v) } else { None }, "co_schedule", "0 (a tensor's blocks launch independently) or 1 (as one thread-block cluster, starting together)")
            .map_err(|e| malformed(&e))?;
        if co_schedule && split_output == 1 {
            return Err(malformed("co_schedule(1) launches the blocks of split_output(N) together: add split_output(2)"));
        }
        if co_schedule && arch.max_cluster_blocks < split_output {
            return Err(PlanError::ArchUnsupported {
                level: self.name.clone(),
                arch: arch.name,
                why: format!("co_schedule(1) launches a tensor's {split_output} blocks as a thread-block cluster (NVIDIA sm_90+); use co_schedule(0)"),
            });
        }
        Ok(co_schedule)
    }
}

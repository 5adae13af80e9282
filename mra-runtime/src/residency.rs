//! Whether a compiled kernel's blocks fit a multiprocessor at all, from the compiler's resource
//! report and the arch's occupancy tables (the same tables `--compile-only` and `tune` use).
//! A kernel none of whose blocks fits compiles and loads, and then every launch fails with the
//! driver's bare CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (fused at K = 23 with 512 threads and 130
//! registers on sm_90); [`check_one_block_fits`] says why before that.

use crate::backend::Resources;
use crate::error::{Result, RuntimeError};
use mra_codegen::{Arch, Plan, Vendor};

/// Resident blocks per SM/CU of the planned kernel with resources `r` (registers a thread, static
/// shared memory; the plan adds its dynamic shared memory and gives the block size), from the
/// arch's occupancy tables (`None`: no table for the arch).
pub fn blocks_per_multiprocessor(arch: &Arch, r: &Resources, plan: &Plan) -> Option<u32> {
    let threads = plan.threads;
    let shared_bytes = r.shared_bytes + if plan.dynamic_shared { plan.shared_bytes } else { 0 };
    match arch.vendor {
        Vendor::Nvidia => crate::cuda::occupancy::limits(arch.name).map(|l| l.occupancy(r.registers, shared_bytes, threads).blocks_per_sm),
        Vendor::Amd => crate::hip::occupancy::limits(arch.name).map(|l| {
            let use_ = crate::hip::occupancy::KernelUse { vgprs: r.registers, sgprs: r.scalar_registers, lds_bytes: shared_bytes, workgroup_size: threads };
            l.occupancy(use_).workgroups_per_cu
        }),
    }
}

/// An error naming `what` (the level, K and dtype) when not one block of the planned kernel fits
/// a multiprocessor of `arch` with resources `r` (registers a thread, static shared memory, plus
/// the plan's dynamic shared memory); Ok where it fits or where the arch has no table.
pub fn check_one_block_fits(arch: &Arch, r: &Resources, plan: &Plan, what: &str) -> Result<()> {
    if blocks_per_multiprocessor(arch, r, plan) != Some(0) {
        return Ok(());
    }
    Err(RuntimeError::BlockDoesNotFit { what: format!("{what} on {}", arch.name), threads: plan.threads, resources: describe_resources(r, plan) })
}

/// `123 registers a thread, 101392 B of shared memory (101392 B dynamic)`.
pub fn describe_resources(r: &Resources, plan: &Plan) -> String {
    let dynamic = if plan.dynamic_shared { plan.shared_bytes } else { 0 };
    let shared = match dynamic {
        0 => format!("{} B of shared memory", r.shared_bytes),
        d => format!("{} B of shared memory ({d} B dynamic)", r.shared_bytes + d),
    };
    format!("{} registers a thread, {shared}", r.registers)
}

/// How much of the device a thread-block-cluster kernel can use at once: its blocks go to the
/// GPU in whole clusters, each within one GPC, so a GPC whose block slots are not a multiple
/// of the cluster leaves the rest idle (fused-cluster K = 32 on a 132-SM sm_90 GPU: 30 clusters
/// of 8 = 240 of 264 slots).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ClusterResidency {
    /// Blocks a cluster.
    pub cluster_blocks: u32,
    /// Clusters the device holds at once (the driver's count; at least 1).
    pub clusters: usize,
    /// Blocks of the kernel the device would hold at once without clusters (`None`: unknown).
    pub block_slots: Option<usize>,
}

impl ClusterResidency {
    /// Blocks in resident clusters.
    pub fn blocks(&self) -> usize {
        self.clusters * self.cluster_blocks as usize
    }

    /// The share of block slots no cluster can use (0 where unknown).
    pub fn idle_fraction(&self) -> f64 {
        match self.block_slots {
            Some(slots) if slots > self.blocks() => (slots - self.blocks()) as f64 / slots as f64,
            _ => 0.0,
        }
    }

    /// `30 clusters of 8 at once = 240 of 264 block slots (9.1% idle: a cluster's blocks share one GPC)`.
    pub fn describe(&self) -> String {
        let head = format!("{} clusters of {} at once", self.clusters, self.cluster_blocks);
        match self.block_slots {
            Some(slots) if slots > self.blocks() => format!(
                "{head} = {} of {slots} block slots ({:.1}% idle: a cluster's blocks share one GPC)",
                self.blocks(),
                100.0 * self.idle_fraction()
            ),
            Some(slots) => format!("{head} = all {slots} block slots"),
            None => format!("{head} = {} blocks", self.blocks()),
        }
    }
}

/// The residency of a cluster kernel from the driver's counts, or the one-line refusal when not
/// one cluster fits (`clusters` = 0: every launch would fail). `None` where the driver cannot tell.
pub fn cluster_residency(clusters: Option<usize>, block_slots: Option<usize>, cluster_blocks: u32, refusal: impl FnOnce() -> RuntimeError) -> Result<Option<ClusterResidency>> {
    match clusters {
        None => Ok(None),
        Some(0) => Err(refusal()),
        Some(clusters) => Ok(Some(ClusterResidency { cluster_blocks, clusters, block_slots })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mra_codegen::{arch, levels, DType, Request};

    fn plan(level: &str, k: u32, arch_name: &str) -> Plan {
        mra_codegen::generate(&levels::find(level).unwrap(), Request { k, arch: arch::find(arch_name).unwrap(), dtype: DType::F64 }).unwrap().plan
    }

    fn with_threads(mut p: Plan, threads: u32) -> Plan {
        p.threads = threads;
        p
    }

    fn res(registers: u32, shared_bytes: u32) -> Resources {
        Resources { registers, spill_bytes: 0, shared_bytes, scalar_registers: 0 }
    }

    #[test]
    fn a_block_whose_registers_exceed_the_sm_is_refused_in_one_line() {
        // fused K = 23, 512 threads, 130 registers a thread fails every launch
        // (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES); with 128 (fused K = 24) it runs. By the CUDA
        // occupancy rule: 16 warps x ceil(130 * 32 / 256) * 256 = 69632 > 65536; 128 gives 65536.
        let sm90 = arch::find("sm_90").unwrap();
        let p = with_threads(plan("fused", 23, "sm_90"), 512);
        let shared = if p.dynamic_shared { 0 } else { p.shared_bytes };
        let e = check_one_block_fits(sm90, &res(130, shared), &p, "fused at K=23 (f64)").unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("fused at K=23 (f64) on sm_90: no block of 512 threads fits a multiprocessor (130 registers a thread, "), "{e}");
        assert!(e.contains("mra-bench tune"), "{e}");
        assert!(check_one_block_fits(sm90, &res(128, shared), &p, "fused").is_ok());
        // 256 threads never run out of registers (255 x 256 = 65280).
        assert!(check_one_block_fits(sm90, &res(255, 0), &with_threads(plan("L3", 16, "sm_90"), 256), "L3").is_ok());
    }

    #[test]
    fn cluster_residency_counts_the_slots_no_cluster_can_use() {
        // What cudaOccupancyMaxActiveClusters answers at fused-cluster K = 32's footprint on a
        // 132-SM sm_90 GPU: 30 clusters of 8 against 2 blocks x 132 SMs = 264 slots: 24 idle,
        // 24 / 264 = 9.09%.
        let r = ClusterResidency { cluster_blocks: 8, clusters: 30, block_slots: Some(264) };
        assert_eq!(r.blocks(), 240);
        assert!((r.idle_fraction() - 24.0 / 264.0).abs() < 1e-12);
        assert_eq!(r.describe(), "30 clusters of 8 at once = 240 of 264 block slots (9.1% idle: a cluster's blocks share one GPC)");
        // Clusters of 2 used all 264 there.
        let r = ClusterResidency { cluster_blocks: 2, clusters: 132, block_slots: Some(264) };
        assert_eq!((r.idle_fraction(), r.describe()), (0.0, "132 clusters of 2 at once = all 264 block slots".to_string()));
        let r = ClusterResidency { cluster_blocks: 4, clusters: 62, block_slots: None };
        assert_eq!((r.idle_fraction(), r.describe()), (0.0, "62 clusters of 4 at once = 248 blocks".to_string()));
    }

    #[test]
    fn a_cluster_that_cannot_be_resident_is_refused_and_an_unknown_count_is_not() {
        let refuse = || RuntimeError::Invalid("refused".into());
        assert!(matches!(cluster_residency(Some(0), Some(264), 8, refuse), Err(RuntimeError::Invalid(_))));
        assert_eq!(cluster_residency(None, Some(264), 8, refuse).unwrap(), None);
        assert_eq!(cluster_residency(Some(30), Some(264), 8, refuse).unwrap().map(|r| r.blocks()), Some(240));
    }

    #[test]
    fn a_block_whose_shared_memory_exceeds_the_sm_is_refused() {
        // sm_80 gives a block at most 163 KiB of shared memory (CUDA programming guide, compute
        // capability 8.0): 166912 B fits, one byte more does not.
        let sm80 = arch::find("sm_80").unwrap();
        let p = plan("L3", 16, "sm_80");
        assert!(check_one_block_fits(sm80, &res(32, 166912), &p, "L3").is_ok());
        let e = check_one_block_fits(sm80, &res(32, 166913), &p, "L3 at K=16 (f64)").unwrap_err().to_string();
        assert!(e.contains("166913 B of shared memory"), "{e}");
        // AMD: a workgroup needs at most the CU's 64 KiB of LDS.
        let gfx90a = arch::find("gfx90a").unwrap();
        let p = plan("L3", 16, "gfx90a");
        assert!(check_one_block_fits(gfx90a, &res(32, 65536), &p, "L3").is_ok());
        assert!(check_one_block_fits(gfx90a, &res(32, 65537), &p, "L3").is_err());
    }
}

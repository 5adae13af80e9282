//! How many blocks (and warps) of a kernel an NVIDIA SM holds at once, from the ptxas report
//! (registers per thread, static shared memory) and the block size.
//!
//! Limits per compute capability: CUDA C++ Programming Guide, "Technical Specifications per
//! Compute Capability" (max resident blocks, warps and threads per SM, 64K 32-bit registers per
//! SM and per block, at most 255 registers per thread, shared memory per SM and per block) and
//! "Shared Memory" for 8.x/9.0 (1 KB of shared memory per block is reserved by the system).
//! The way they combine is the CUDA occupancy calculator's (`cuda_occupancy.h` in the toolkit,
//! `cudaOccMaxBlocksPerSMRegsLimit` / `cudaOccMaxBlocksPerSMSmemLimit`): registers are allocated
//! per warp in units of 256, from four SM sub-partitions of 16K registers each; shared memory in
//! units of 128 bytes. Shared memory per SM is taken at its largest carveout (the driver picks
//! the carveout per kernel; a smaller one can only lower occupancy).

use serde::Serialize;

/// The occupancy-relevant facts of one NVIDIA arch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NvLimits {
    pub arch: &'static str,
    pub max_blocks_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub registers_per_sm: u32,
    pub registers_per_block: u32,
    pub max_registers_per_thread: u32,
    /// Registers are allocated per warp in units of this many.
    pub register_unit: u32,
    pub sub_partitions: u32,
    /// Shared memory per SM at the largest carveout, bytes.
    pub shared_per_sm: u32,
    /// Shared memory one block may use (opt-in maximum), bytes.
    pub shared_per_block_max: u32,
    /// Shared memory the system reserves per block, bytes.
    pub shared_reserved_per_block: u32,
    pub shared_unit: u32,
}

const AMPERE: NvLimits = NvLimits {
    arch: "sm_80",
    max_blocks_per_sm: 32,
    max_warps_per_sm: 64,
    registers_per_sm: 65536,
    registers_per_block: 65536,
    max_registers_per_thread: 255,
    register_unit: 256,
    sub_partitions: 4,
    shared_per_sm: 164 * 1024,
    shared_per_block_max: 163 * 1024,
    shared_reserved_per_block: 1024,
    shared_unit: 128,
};

/// Every NVIDIA arch of the codegen table.
pub const NV_LIMITS: &[NvLimits] = &[
    // A100: 164 KB shared per SM, 32 blocks, 64 warps.
    AMPERE,
    // GA10x: 100 KB per SM (99 KB per block), 16 blocks, 48 warps (1536 threads).
    NvLimits { arch: "sm_86", max_blocks_per_sm: 16, max_warps_per_sm: 48, shared_per_sm: 100 * 1024, shared_per_block_max: 99 * 1024, ..AMPERE },
    // Ada: as 8.6 but 24 blocks per SM.
    NvLimits { arch: "sm_89", max_blocks_per_sm: 24, max_warps_per_sm: 48, shared_per_sm: 100 * 1024, shared_per_block_max: 99 * 1024, ..AMPERE },
    // Hopper: 228 KB per SM (227 KB per block), 32 blocks, 64 warps.
    NvLimits { arch: "sm_90", shared_per_sm: 228 * 1024, shared_per_block_max: 227 * 1024, ..AMPERE },
];

pub fn limits(arch: &str) -> Option<&'static NvLimits> {
    NV_LIMITS.iter().find(|l| l.arch == arch)
}

/// What limits occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NvLimiter {
    /// Resident warps per SM (or the block count limit).
    Warps,
    Blocks,
    Registers,
    SharedMemory,
    /// One block does not fit at all (too many registers or too much shared memory).
    DoesNotFit,
}

impl NvLimiter {
    pub fn describe(self) -> &'static str {
        match self {
            NvLimiter::Warps => "warps per SM",
            NvLimiter::Blocks => "blocks per SM",
            NvLimiter::Registers => "registers",
            NvLimiter::SharedMemory => "shared memory",
            NvLimiter::DoesNotFit => "one block does not fit",
        }
    }
}

/// The occupancy one kernel reaches on one arch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NvOccupancy {
    pub warps_per_block: u32,
    pub blocks_by_warps: u32,
    pub blocks_by_registers: u32,
    pub blocks_by_shared: u32,
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    pub max_warps_per_sm: u32,
    /// warps_per_sm / max_warps_per_sm.
    pub occupancy: f64,
    pub limited_by: NvLimiter,
}

fn align_up(x: u32, unit: u32) -> u32 {
    x.div_ceil(unit) * unit
}

impl NvLimits {
    /// Occupancy of a kernel with `registers` per thread, `shared_bytes` of static + dynamic
    /// shared memory per block and `threads` per block.
    pub fn occupancy(&self, registers: u32, shared_bytes: u32, threads: u32) -> NvOccupancy {
        let warps = threads.max(1).div_ceil(32);
        let by_warps = (self.max_warps_per_sm / warps).min(self.max_blocks_per_sm);

        let regs_per_warp = align_up(registers * 32, self.register_unit);
        // The hardware checks a block against the per-block limit as if its warps were spread
        // over all sub-partitions (cuda_occupancy.h).
        let regs_checked = regs_per_warp * align_up(warps, self.sub_partitions);
        let by_regs = if registers > self.max_registers_per_thread || regs_checked > self.registers_per_block {
            0
        } else {
            // No registers at all: no register limit.
            ((self.registers_per_sm / self.sub_partitions).checked_div(regs_per_warp)).map_or(u32::MAX, |per_partition| per_partition * self.sub_partitions / warps)
        };

        let smem = align_up(shared_bytes + self.shared_reserved_per_block, self.shared_unit);
        let by_shared = if shared_bytes > self.shared_per_block_max { 0 } else { self.shared_per_sm.checked_div(smem).unwrap_or(u32::MAX) };

        let blocks = by_warps.min(by_regs).min(by_shared);
        let limited_by = if blocks == 0 {
            NvLimiter::DoesNotFit
        } else if by_regs == blocks && by_regs < by_warps {
            NvLimiter::Registers
        } else if by_shared == blocks && by_shared < by_warps {
            NvLimiter::SharedMemory
        } else if by_warps == self.max_blocks_per_sm && by_warps * warps < self.max_warps_per_sm {
            NvLimiter::Blocks
        } else {
            NvLimiter::Warps
        };
        NvOccupancy {
            warps_per_block: warps,
            blocks_by_warps: by_warps,
            blocks_by_registers: by_regs,
            blocks_by_shared: by_shared,
            blocks_per_sm: blocks,
            warps_per_sm: blocks * warps,
            max_warps_per_sm: self.max_warps_per_sm,
            occupancy: (blocks * warps) as f64 / self.max_warps_per_sm as f64,
            limited_by,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nvidia_arch_of_the_codegen_table_has_limits() {
        for a in mra_codegen::arch::ARCHS.iter().filter(|a| a.vendor == mra_codegen::Vendor::Nvidia) {
            let l = limits(a.name).unwrap_or_else(|| panic!("{} has no occupancy limits", a.name));
            assert_eq!(l.shared_per_block_max, a.shared_bytes_max, "{}", a.name);
        }
    }

    /// CUDA C++ Best Practices Guide, "Calculating Occupancy": on compute capability 7.0, a
    /// kernel with 128-thread blocks and 37 registers per thread reaches 75% occupancy (12
    /// blocks per SM); with 320-thread blocks only four blocks fit (63%).
    #[test]
    fn the_best_practices_guide_example() {
        // 7.0: 64K registers, 64 warps, 32 blocks, 96 KB shared per SM.
        let volta = NvLimits { arch: "sm_70", shared_per_sm: 96 * 1024, shared_per_block_max: 96 * 1024, shared_reserved_per_block: 0, ..AMPERE };
        let o = volta.occupancy(37, 0, 128);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.occupancy), (12, 48, 0.75));
        assert_eq!(o.limited_by, NvLimiter::Registers);
        let o = volta.occupancy(37, 0, 320);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (4, 40));
        assert!((o.occupancy - 0.625).abs() < 1e-12);
    }

    #[test]
    fn ampere_and_hopper() {
        let a100 = limits("sm_80").unwrap();
        // 32 registers, 256 threads, no shared memory: 8 blocks = 64 warps = 100%.
        let o = a100.occupancy(32, 0, 256);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.occupancy, o.limited_by), (8, 64, 1.0, NvLimiter::Warps));
        // 64 registers: 2048 per warp, 8 warps per sub-partition, 32 per SM: 4 blocks.
        let o = a100.occupancy(64, 0, 256);
        assert_eq!((o.blocks_per_sm, o.limited_by), (4, NvLimiter::Registers));
        // 255 registers: 8192 per warp, 2 per sub-partition, 8 warps: two 4-warp blocks.
        assert_eq!(a100.occupancy(255, 0, 128).blocks_per_sm, 2);
        // 255 registers x 1024 threads exceeds the 64K registers of a block.
        assert_eq!(a100.occupancy(255, 0, 1024).limited_by, NvLimiter::DoesNotFit);
        // 32-thread blocks: the 32-block limit binds at 32 warps.
        let o = a100.occupancy(16, 0, 32);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm, o.limited_by), (32, 32, NvLimiter::Blocks));
        // 48 KB of static shared memory (+1 KB reserved): 228 KB / 49 KB = 4 blocks on sm_90.
        let h100 = limits("sm_90").unwrap();
        let o = h100.occupancy(32, 48 * 1024, 128);
        assert_eq!((o.blocks_per_sm, o.limited_by), (4, NvLimiter::SharedMemory));
        // L3 at K=16 (19456 B shared, 128 threads): 11 blocks by shared memory on sm_90.
        assert_eq!(h100.occupancy(40, 19456, 128).blocks_by_shared, 11);
        // sm_86 holds 48 warps: six 256-thread blocks.
        assert_eq!(limits("sm_86").unwrap().occupancy(32, 0, 256).blocks_per_sm, 6);
        // sm_89 holds 24 blocks: 24 one-warp blocks.
        assert_eq!(limits("sm_89").unwrap().occupancy(16, 0, 32).blocks_per_sm, 24);
        // More shared memory than a block may have.
        assert_eq!(limits("sm_86").unwrap().occupancy(32, 100 * 1024, 128).limited_by, NvLimiter::DoesNotFit);
    }
}

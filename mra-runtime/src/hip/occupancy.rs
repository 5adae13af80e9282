//! How many waves of a kernel an AMD compute unit holds at once, from what the code object
//! says the kernel uses (VGPRs, SGPRs, LDS) and its workgroup size.
//!
//! The limits per arch, and the way they combine, are the ones AMD's own compiler uses for its
//! occupancy estimate (LLVM `llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp`, namespace
//! `IsaInfo`: `getMaxWavesPerEU`, `getEUsPerCU`, `getTotalNumVGPRs`, `getVGPRAllocGranule`,
//! `getMaxWorkGroupsPerCU`, `getLocalMemorySize`, `getOccupancyWithNumSGPRs`), which in turn
//! follow the ISA guides:
//!
//! - **CDNA2 (gfx90a, MI200)** and **CDNA3 (gfx942, MI300)**: a CU has 4 SIMDs; each SIMD has a
//!   unified register file of 512 VGPRs per lane shared by arch VGPRs and AGPRs (CDNA2/CDNA3
//!   ISA guides, "Vector GPRs" / "Accumulation VGPRs": AGPRs are allocated from the same file,
//!   `.vgpr_count` in the metadata is the unified total), allocated in blocks of 8; at most 8
//!   waves per SIMD; 800 SGPRs per SIMD, so more than 80 SGPRs per wave costs occupancy (the
//!   GFX8/GFX9 SGPR table below); 64 KiB of LDS per CU. AMD's MI200/MI300 tuning guides give the
//!   resulting VGPR table: ≤64 VGPRs → 8 waves/SIMD, ≤72 → 7, ≤80 → 6, ≤96 → 5, ≤128 → 4,
//!   ≤168 → 3, ≤256 → 2, ≤512 → 1 (checked in the tests).
//! - **RDNA3 (gfx1100), RDNA3.5 (gfx1151), RDNA4 (gfx1201)**, wave32: HIP compiles for WGP mode
//!   (clang's default without `-mcumode`), where the unit a workgroup lives on is a WGP of 2 CUs
//!   = 4 SIMD32s sharing 128 KiB of LDS; at most 16 waves per SIMD; these three have the "1.5x"
//!   register file (LLVM `Feature1_5xVGPRs`; RDNA3 ISA guide: 1536 VGPRs per SIMD in wave32,
//!   192 KiB), allocated in blocks of 24 in wave32; SGPRs never limit occupancy on GFX10+.
//! - Workgroups per CU (WGP): a workgroup of more than one wave needs a barrier slot: 16 per CU
//!   on GFX9, 32 per WGP on GFX10+ in WGP mode; and no more waves than the SIMDs hold.
//! - LDS is allocated in blocks of 128 dwords (512 bytes) (AMDGPUUsage, `COMPUTE_PGM_RSRC2`
//!   `LDS_SIZE` granularity for GFX7 and later); LLVM's estimate does not round, which makes
//!   no difference for the sizes our levels use.
//!
//! Scratch (private memory) can also limit occupancy at run time (the runtime's scratch pool);
//! that is not modelled: a kernel that spills is reported as spilling instead.

use serde::Serialize;

/// What limits occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// Nothing but the hardware's maximum waves per SIMD.
    MaxWaves,
    Vgprs,
    Sgprs,
    Lds,
    /// Barrier slots / workgroups per CU.
    WorkgroupSlots,
    /// The workgroup needs more waves than one CU can hold with these registers.
    DoesNotFit,
}

impl Limiter {
    pub fn describe(self) -> &'static str {
        match self {
            Limiter::MaxWaves => "the hardware maximum",
            Limiter::Vgprs => "VGPRs",
            Limiter::Sgprs => "SGPRs",
            Limiter::Lds => "LDS",
            Limiter::WorkgroupSlots => "workgroup slots",
            Limiter::DoesNotFit => "registers: one workgroup does not fit",
        }
    }
}

/// The occupancy-relevant facts of one AMD arch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AmdLimits {
    pub arch: &'static str,
    pub family: &'static str,
    pub wave_size: u32,
    /// SIMDs sharing a workgroup's resources: 4 per CU on CDNA, 4 per WGP on RDNA (WGP mode).
    pub simds_per_cu: u32,
    pub max_waves_per_simd: u32,
    /// VGPRs per lane in one SIMD's register file (unified with AGPRs on CDNA).
    pub vgprs_per_simd: u32,
    pub vgpr_granule: u32,
    /// GFX9: 800 SGPRs per SIMD make SGPR use an occupancy limit; GFX10+: no SGPR limit.
    pub sgprs_limit_occupancy: bool,
    /// LDS bytes per CU (CDNA) or WGP (RDNA in WGP mode).
    pub lds_bytes_per_cu: u32,
    pub lds_granule: u32,
    /// Barrier slots: workgroups of more than one wave per CU (WGP).
    pub max_barriers_per_cu: u32,
    /// What "CU" means in the output for this arch: "CU" or "WGP".
    pub cu_name: &'static str,
}

const CDNA: AmdLimits = AmdLimits {
    arch: "",
    family: "",
    wave_size: 64,
    simds_per_cu: 4,
    max_waves_per_simd: 8,
    vgprs_per_simd: 512,
    vgpr_granule: 8,
    sgprs_limit_occupancy: true,
    lds_bytes_per_cu: 64 * 1024,
    lds_granule: 512,
    max_barriers_per_cu: 16,
    cu_name: "CU",
};

const RDNA_1_5X: AmdLimits = AmdLimits {
    arch: "",
    family: "",
    wave_size: 32,
    simds_per_cu: 4,
    max_waves_per_simd: 16,
    vgprs_per_simd: 1536,
    vgpr_granule: 24,
    sgprs_limit_occupancy: false,
    lds_bytes_per_cu: 128 * 1024,
    lds_granule: 512,
    max_barriers_per_cu: 32,
    cu_name: "WGP",
};

/// Every AMD arch of the codegen table.
pub const AMD_LIMITS: &[AmdLimits] = &[
    AmdLimits { arch: "gfx90a", family: "CDNA2", ..CDNA },
    AmdLimits { arch: "gfx942", family: "CDNA3", ..CDNA },
    AmdLimits { arch: "gfx1100", family: "RDNA3", ..RDNA_1_5X },
    AmdLimits { arch: "gfx1151", family: "RDNA3.5", ..RDNA_1_5X },
    AmdLimits { arch: "gfx1201", family: "RDNA4", ..RDNA_1_5X },
];

/// The limits of `arch` (`gfx90a`; a target-feature suffix like `:sramecc+:xnack-` is ignored).
pub fn limits(arch: &str) -> Option<&'static AmdLimits> {
    let base = arch.split(':').next().unwrap_or(arch);
    AMD_LIMITS.iter().find(|l| l.arch == base)
}

/// What a kernel uses, as the code object's metadata says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelUse {
    /// `.vgpr_count` (on CDNA the unified count, AGPRs included).
    pub vgprs: u32,
    pub sgprs: u32,
    /// `.group_segment_fixed_size` plus any dynamic LDS.
    pub lds_bytes: u32,
    /// Threads per workgroup the kernel is launched with.
    pub workgroup_size: u32,
}

/// The occupancy one kernel reaches on one arch.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AmdOccupancy {
    pub waves_per_workgroup: u32,
    /// Waves per SIMD the registers alone allow (min of the VGPR and SGPR limits).
    pub waves_per_simd_by_vgprs: u32,
    pub waves_per_simd_by_sgprs: u32,
    /// Workgroups per CU the LDS allows (`None`: the kernel uses no LDS).
    pub workgroups_by_lds: Option<u32>,
    pub workgroups_by_slots: u32,
    /// Resident workgroups per CU (WGP on RDNA).
    pub workgroups_per_cu: u32,
    pub waves_per_cu: u32,
    /// waves_per_cu / SIMDs: the average per SIMD (may be fractional).
    pub waves_per_simd: f64,
    pub max_waves_per_simd: u32,
    pub limited_by: Limiter,
    /// "CU" or "WGP".
    pub per: &'static str,
}

/// LLVM `getOccupancyWithNumSGPRs` for GFX8/GFX9 (VOLCANIC_ISLANDS and later, before GFX10):
/// waves per SIMD with `sgprs` SGPRs per wave (800 per SIMD, allocated in blocks of 16,
/// minus the trap handler's).
pub fn gfx9_waves_with_sgprs(sgprs: u32) -> u32 {
    match sgprs {
        0..=80 => 10,
        81..=88 => 9,
        89..=100 => 8,
        _ => 7,
    }
}

fn align_up(x: u32, granule: u32) -> u32 {
    x.div_ceil(granule) * granule
}

impl AmdLimits {
    /// LLVM `getNumWavesPerEUWithNumVGPRs`: fewer VGPRs than one block cost nothing.
    pub fn waves_with_vgprs(&self, vgprs: u32) -> u32 {
        if vgprs < self.vgpr_granule {
            return self.max_waves_per_simd;
        }
        (self.vgprs_per_simd / align_up(vgprs, self.vgpr_granule)).clamp(1, self.max_waves_per_simd)
    }

    pub fn waves_with_sgprs(&self, sgprs: u32) -> u32 {
        if self.sgprs_limit_occupancy {
            gfx9_waves_with_sgprs(sgprs).min(self.max_waves_per_simd)
        } else {
            self.max_waves_per_simd
        }
    }

    /// LLVM `getMaxWorkGroupsPerCU`: single-wave workgroups need no barrier.
    pub fn workgroup_slots(&self, waves_per_workgroup: u32) -> u32 {
        let max_waves = self.max_waves_per_simd * self.simds_per_cu;
        if waves_per_workgroup <= 1 {
            max_waves
        } else {
            (max_waves / waves_per_workgroup).min(self.max_barriers_per_cu)
        }
    }

    /// Workgroups per CU that the LDS holds (`None` without LDS).
    pub fn workgroups_with_lds(&self, lds_bytes: u32) -> Option<u32> {
        (lds_bytes > 0).then(|| self.lds_bytes_per_cu / align_up(lds_bytes, self.lds_granule))
    }

    /// The occupancy of a kernel.
    pub fn occupancy(&self, k: KernelUse) -> AmdOccupancy {
        let n = k.workgroup_size.max(1).div_ceil(self.wave_size);
        let by_vgprs = self.waves_with_vgprs(k.vgprs);
        let by_sgprs = self.waves_with_sgprs(k.sgprs);
        let reg_waves = by_vgprs.min(by_sgprs);
        // Workgroups the registers hold: all the CU's SIMDs together, whole workgroups only.
        let by_regs = reg_waves * self.simds_per_cu / n;
        let by_lds = self.workgroups_with_lds(k.lds_bytes);
        let by_slots = self.workgroup_slots(n);
        let wgs = by_regs.min(by_lds.unwrap_or(u32::MAX)).min(by_slots);
        let limited_by = if wgs == 0 && by_regs == 0 {
            Limiter::DoesNotFit
        } else if by_lds == Some(wgs) && wgs < by_regs.min(by_slots) {
            Limiter::Lds
        } else if by_regs == wgs && reg_waves < self.max_waves_per_simd {
            if by_sgprs < by_vgprs { Limiter::Sgprs } else { Limiter::Vgprs }
        } else if by_slots == wgs && wgs * n < self.max_waves_per_simd * self.simds_per_cu {
            Limiter::WorkgroupSlots
        } else if by_lds == Some(wgs) {
            Limiter::Lds
        } else {
            Limiter::MaxWaves
        };
        let waves_per_cu = wgs * n;
        AmdOccupancy {
            waves_per_workgroup: n,
            waves_per_simd_by_vgprs: by_vgprs,
            waves_per_simd_by_sgprs: by_sgprs,
            workgroups_by_lds: by_lds,
            workgroups_by_slots: by_slots,
            workgroups_per_cu: wgs,
            waves_per_cu,
            waves_per_simd: waves_per_cu as f64 / self.simds_per_cu as f64,
            max_waves_per_simd: self.max_waves_per_simd,
            limited_by,
            per: self.cu_name,
        }
    }

    /// The number LLVM prints as `; Occupancy: N` in `clang -S` output (waves per SIMD): the
    /// register limits and the LDS limit taken separately, the latter rounded *up* to whole
    /// waves per SIMD (`AMDGPUSubtarget::getOccupancyWithLocalMemSize`). Kept to check the
    /// per-resource limits above against the compiler; [`AmdLimits::occupancy`] is what we report.
    pub fn llvm_occupancy(&self, k: KernelUse) -> u32 {
        let n = k.workgroup_size.max(1).div_ceil(self.wave_size);
        let groups = self.lds_bytes_per_cu.checked_div(k.lds_bytes).unwrap_or(u32::MAX);
        let by_lds = if groups == 0 {
            1
        } else {
            (groups.min(self.workgroup_slots(n)) * n).div_ceil(self.simds_per_cu).min(self.max_waves_per_simd)
        };
        self.waves_with_vgprs(k.vgprs).min(self.waves_with_sgprs(k.sgprs)).min(by_lds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn use_(vgprs: u32, sgprs: u32, lds_bytes: u32, workgroup_size: u32) -> KernelUse {
        KernelUse { vgprs, sgprs, lds_bytes, workgroup_size }
    }

    #[test]
    fn every_amd_arch_of_the_codegen_table_has_limits() {
        for a in mra_codegen::arch::ARCHS.iter().filter(|a| a.vendor == mra_codegen::Vendor::Amd) {
            let l = limits(a.name).unwrap_or_else(|| panic!("{} has no occupancy limits", a.name));
            assert_eq!(l.wave_size, a.wave_size, "{}", a.name);
        }
        assert_eq!(limits("gfx90a:sramecc+:xnack-").unwrap().arch, "gfx90a");
        assert!(limits("sm_90").is_none());
    }

    /// AMD's MI200/MI300 VGPR table (the "VGPRs → waves per SIMD" table of the CDNA tuning
    /// guides): ≤64 → 8, ≤72 → 7, ≤80 → 6, ≤96 → 5, ≤128 → 4, ≤168 → 3, ≤256 → 2, ≤512 → 1.
    #[test]
    fn cdna_vgpr_table() {
        for arch in ["gfx90a", "gfx942"] {
            let l = limits(arch).unwrap();
            for (vgprs, waves) in [(1, 8), (64, 8), (65, 7), (72, 7), (80, 6), (96, 5), (128, 4), (129, 3), (168, 3), (256, 2), (257, 1), (512, 1)] {
                assert_eq!(l.waves_with_vgprs(vgprs), waves, "{arch} {vgprs} VGPRs");
            }
        }
    }

    /// RDNA3 with the 1.5x register file: 1536 VGPRs per SIMD in wave32, blocks of 24, 16 waves.
    #[test]
    fn rdna_vgpr_steps() {
        let l = limits("gfx1100").unwrap();
        for (vgprs, waves) in [(24, 16), (96, 16), (97, 12), (120, 12), (128, 10), (192, 8), (256, 5)] {
            assert_eq!(l.waves_with_vgprs(vgprs), waves, "{vgprs} VGPRs");
        }
    }

    /// LLVM `getOccupancyWithNumSGPRs` for GFX9, capped at 8 waves on gfx90a/gfx942; no SGPR
    /// limit on GFX10+.
    #[test]
    fn sgpr_limits() {
        let cdna = limits("gfx90a").unwrap();
        assert_eq!(cdna.waves_with_sgprs(80), 8);
        assert_eq!(cdna.waves_with_sgprs(102), 7);
        assert_eq!(gfx9_waves_with_sgprs(80), 10);
        assert_eq!(gfx9_waves_with_sgprs(88), 9);
        assert_eq!(gfx9_waves_with_sgprs(100), 8);
        assert_eq!(gfx9_waves_with_sgprs(101), 7);
        assert_eq!(limits("gfx1201").unwrap().waves_with_sgprs(106), 16);
        let o = cdna.occupancy(use_(32, 106, 0, 256));
        assert_eq!((o.waves_per_cu, o.limited_by), (28, Limiter::Sgprs));
    }

    /// What clang-19 itself prints as `; Occupancy:` (`clang++-19 -x hip --offload-arch=<arch>
    /// --cuda-device-only -nogpulib -nogpuinc -O3 -S`) for a kernel whose VGPR use is forced with
    /// an inline-asm clobber of `v<N-1>`, LDS with a `__shared__` array and the workgroup size
    /// with `amdgpu_flat_work_group_size(1, WG)`. Columns: arch, .vgpr_count, .sgpr_count,
    /// LDS bytes, workgroup size, occupancy.
    const CLANG19_OCCUPANCY: &str = "
        gfx90a 24 10 0 64 8 | gfx90a 24 10 0 1024 8 | gfx90a 24 10 8192 64 2 | gfx90a 24 10 8192 128 4
        gfx90a 24 10 8192 256 8 | gfx90a 24 10 19456 64 1 | gfx90a 24 10 19456 128 2 | gfx90a 24 10 19456 256 3
        gfx90a 24 10 19456 1024 8 | gfx90a 24 10 40000 256 1 | gfx90a 24 10 40000 1024 4 | gfx90a 101 10 0 256 4
        gfx90a 101 10 8192 64 2 | gfx90a 101 10 19456 256 3 | gfx90a 101 10 40000 1024 4 | gfx90a 201 10 0 64 2
        gfx90a 201 10 19456 64 1 | gfx90a 201 10 19456 128 2 | gfx90a 201 10 40000 1024 2
        gfx942 24 8 0 64 8 | gfx942 24 9 8192 64 2 | gfx942 24 9 19456 256 3 | gfx942 24 9 40000 1024 4
        gfx942 101 8 0 1024 4 | gfx942 101 9 8192 128 4 | gfx942 201 9 19456 256 2 | gfx942 201 9 40000 64 1
        gfx1100 24 2 0 64 16 | gfx1100 24 3 8192 64 8 | gfx1100 24 3 8192 128 16 | gfx1100 24 3 19456 64 3
        gfx1100 24 3 19456 128 6 | gfx1100 24 3 19456 256 12 | gfx1100 24 3 19456 1024 16 | gfx1100 24 3 40000 64 2
        gfx1100 24 3 40000 128 3 | gfx1100 24 3 40000 256 6 | gfx1100 101 2 0 64 12 | gfx1100 101 3 8192 64 8
        gfx1100 101 3 19456 256 12 | gfx1100 201 2 0 256 7 | gfx1100 201 3 19456 128 6 | gfx1100 201 3 40000 1024 7
        gfx1201 24 2 0 1024 16 | gfx1201 24 3 19456 64 3 | gfx1201 24 3 40000 256 6 | gfx1201 101 2 0 128 12
        gfx1201 101 3 8192 64 8 | gfx1201 201 2 0 64 7 | gfx1201 201 3 19456 256 7 | gfx1201 201 3 40000 64 2
    ";

    #[test]
    fn per_resource_limits_agree_with_clang19() {
        let mut n = 0;
        for row in CLANG19_OCCUPANCY.split(['|', '\n']).map(str::trim).filter(|r| !r.is_empty()) {
            let f: Vec<&str> = row.split_whitespace().collect();
            let num = |i: usize| f[i].parse::<u32>().unwrap();
            let l = limits(f[0]).unwrap();
            let k = use_(num(1), num(2), num(3), num(4));
            assert_eq!(l.llvm_occupancy(k), num(5), "{row}");
            n += 1;
        }
        assert_eq!(n, 51);
    }

    #[test]
    fn whole_workgroups_per_cu() {
        // L3 at K=16 on gfx90a as clang-19 compiles it: 134 VGPRs, 100 SGPRs, 19456 B LDS,
        // 128 threads: 3 waves/SIMD by VGPRs, but only 3 workgroups (6 waves) fit the 64 KiB LDS.
        let o = limits("gfx90a").unwrap().occupancy(use_(134, 100, 19456, 128));
        assert_eq!((o.waves_per_workgroup, o.waves_per_simd_by_vgprs, o.workgroups_by_lds), (2, 3, Some(3)));
        assert_eq!((o.workgroups_per_cu, o.waves_per_cu, o.waves_per_simd), (3, 6, 1.5));
        assert_eq!(o.limited_by, Limiter::Lds);
        // No LDS, few registers, 256 threads: 8 waves/SIMD = 32 per CU = 8 workgroups.
        let o = limits("gfx942").unwrap().occupancy(use_(32, 20, 0, 256));
        assert_eq!((o.workgroups_per_cu, o.waves_per_cu, o.limited_by), (8, 32, Limiter::MaxWaves));
        // 64-thread workgroups on gfx90a: one wave each, no barrier slot needed: 32 per CU.
        let o = limits("gfx90a").unwrap().occupancy(use_(32, 20, 0, 64));
        assert_eq!((o.workgroups_per_cu, o.waves_per_cu), (32, 32));
        // 64-thread workgroups on RDNA: two wave32s each; 32 barrier slots x 2 waves fill the WGP.
        let o = limits("gfx1100").unwrap().occupancy(use_(24, 20, 0, 64));
        assert_eq!((o.workgroups_per_cu, o.waves_per_cu, o.limited_by), (32, 64, Limiter::MaxWaves));
        // 32-thread workgroups (one wave32, no barrier slot) with 8 KiB of LDS: 16 per WGP.
        let o = limits("gfx1100").unwrap().occupancy(use_(24, 20, 8192, 32));
        assert_eq!((o.workgroups_per_cu, o.limited_by), (16, Limiter::Lds));
        // Registers: 201 VGPRs on RDNA3 allow 7 waves/SIMD = 28 per WGP, which holds three
        // 256-thread (8-wave) workgroups.
        let o = limits("gfx1100").unwrap().occupancy(use_(201, 20, 0, 256));
        assert_eq!((o.workgroups_per_cu, o.waves_per_cu, o.limited_by), (3, 24, Limiter::Vgprs));
        // 1024 threads = 16 wave64s need 4 waves on every SIMD: 201 VGPRs allow 2.
        let o = limits("gfx90a").unwrap().occupancy(use_(201, 20, 0, 1024));
        assert_eq!((o.workgroups_per_cu, o.limited_by), (0, Limiter::DoesNotFit));
        // Barrier slots: 16 workgroups of 2 waves on gfx90a with tiny LDS.
        let o = limits("gfx90a").unwrap().occupancy(use_(32, 20, 512, 128));
        assert_eq!((o.workgroups_per_cu, o.waves_per_cu, o.limited_by), (16, 32, Limiter::MaxWaves));
        let o = limits("gfx90a").unwrap().occupancy(use_(32, 20, 512, 192));
        assert_eq!((o.workgroups_per_cu, o.waves_per_cu, o.limited_by), (10, 30, Limiter::WorkgroupSlots));
    }
}

//! Target architectures: the facts about each GPU generation that lowering and checking need.
//!
//! Values are per block / per thread limits from the vendors' programming guides
//! (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability";
//! AMD CDNA2/CDNA3/RDNA3/RDNA4 ISA guides). The multiprocessor count is not here: it is
//! queried from the device at run time.

use serde::Serialize;
use std::fmt;

/// GPU vendor, which decides the C++ dialect and the runtime backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Amd,
}

/// A matrix-core instruction a level may tensorize onto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatrixInstr {
    /// PTX `mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64` (sm_80+), one warp.
    MmaSyncM8n8k4F64,
    /// PTX `mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64` (sm_90+, PTX ISA 7.8): one
    /// SASS DMMA at full rate on Hopper (twice the FP64 throughput of m8n8k4 there).
    MmaSyncM16n8k4F64,
    /// PTX `mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64` (sm_90+), full rate on Hopper.
    MmaSyncM16n8k8F64,
    /// PTX `mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64` (sm_90+), full rate on Hopper.
    MmaSyncM16n8k16F64,
    /// `nvcuda::wmma` double fragments 8×8×4 (sm_80+).
    WmmaM8n8k4F64,
    /// `__builtin_amdgcn_mfma_f64_16x16x4f64` (CDNA2/CDNA3), one wave64.
    MfmaF64_16x16x4,
    /// `__builtin_amdgcn_wmma_f32_16x16x16_{f16,bf16}_w32`, RDNA3 operand layout (lane replication).
    WmmaF32_16x16x16Gfx11,
    /// The same instruction family with the RDNA4 (gfx12) operand layout.
    WmmaF32_16x16x16Gfx12,
}

impl MatrixInstr {
    pub fn name(self) -> &'static str {
        match self {
            MatrixInstr::MmaSyncM8n8k4F64 => "mma.sync.m8n8k4.f64",
            MatrixInstr::MmaSyncM16n8k4F64 => "mma.sync.m16n8k4.f64",
            MatrixInstr::MmaSyncM16n8k8F64 => "mma.sync.m16n8k8.f64",
            MatrixInstr::MmaSyncM16n8k16F64 => "mma.sync.m16n8k16.f64",
            MatrixInstr::WmmaM8n8k4F64 => "wmma.m8n8k4.f64",
            MatrixInstr::MfmaF64_16x16x4 => "v_mfma_f64_16x16x4f64",
            MatrixInstr::WmmaF32_16x16x16Gfx11 => "v_wmma_f32_16x16x16_{f16,bf16} (gfx11)",
            MatrixInstr::WmmaF32_16x16x16Gfx12 => "v_wmma_f32_16x16x16_{f16,bf16} (gfx12)",
        }
    }
}

/// One target architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Arch {
    /// As given on the command line: `sm_90`, `gfx90a`, ...
    pub name: &'static str,
    /// Marketing examples, for messages.
    pub example_gpus: &'static str,
    pub vendor: Vendor,
    /// The family whose archs share a programming model, for listings: `NVIDIA`, `CDNA`
    /// (AMD data-center: 64-wide waves, FP64 MFMA) or `RDNA` (AMD client: 32-wide waves, WMMA).
    pub family: &'static str,
    /// Warp (NVIDIA) / wavefront (AMD) width the generated code is written for.
    pub wave_size: u32,
    pub max_threads_per_block: u32,
    /// Shared memory / LDS a block may use without opting in (static arrays).
    pub shared_bytes_default: u32,
    /// Shared memory / LDS a block may use at most (NVIDIA: after raising the dynamic limit).
    pub shared_bytes_max: u32,
    /// 32-bit registers one thread may hold before spilling (AMD: arch VGPRs, without AGPRs).
    pub max_registers_per_thread: u32,
    /// Blocks a thread-block cluster may have (portable limit; 1: the arch has no clusters).
    /// NVIDIA sm_90+: 8, sharing distributed shared memory; AMD and sm_80/86/89: none.
    pub max_cluster_blocks: u32,
    /// Bulk asynchronous copies global -> shared completing on an mbarrier (`cp.async.bulk`,
    /// the TMA unit of NVIDIA sm_90+): one instruction per contiguous run.
    pub bulk_async_copy: bool,
    /// Matrix instructions the hardware has, preferred first (a tensorized level whose
    /// schedule names no shape takes the first one that computes its dtype).
    pub matrix: &'static [MatrixInstr],
}

use MatrixInstr::*;

/// Every architecture `--arch` accepts.
pub const ARCHS: &[Arch] = &[
    Arch {
        name: "sm_80",
        example_gpus: "A100",
        vendor: Vendor::Nvidia,
        family: "NVIDIA",
        wave_size: 32,
        max_threads_per_block: 1024,
        shared_bytes_default: 48 * 1024,
        shared_bytes_max: 163 * 1024,
        max_registers_per_thread: 255,
        max_cluster_blocks: 1,
        bulk_async_copy: false,
        matrix: &[MmaSyncM8n8k4F64, WmmaM8n8k4F64],
    },
    Arch {
        name: "sm_86",
        example_gpus: "RTX 30xx, A40",
        vendor: Vendor::Nvidia,
        family: "NVIDIA",
        wave_size: 32,
        max_threads_per_block: 1024,
        shared_bytes_default: 48 * 1024,
        shared_bytes_max: 99 * 1024,
        max_registers_per_thread: 255,
        max_cluster_blocks: 1,
        bulk_async_copy: false,
        matrix: &[MmaSyncM8n8k4F64, WmmaM8n8k4F64],
    },
    Arch {
        name: "sm_89",
        example_gpus: "RTX 40xx, L40S",
        vendor: Vendor::Nvidia,
        family: "NVIDIA",
        wave_size: 32,
        max_threads_per_block: 1024,
        shared_bytes_default: 48 * 1024,
        shared_bytes_max: 99 * 1024,
        max_registers_per_thread: 255,
        max_cluster_blocks: 1,
        bulk_async_copy: false,
        matrix: &[MmaSyncM8n8k4F64, WmmaM8n8k4F64],
    },
    Arch {
        name: "sm_90",
        example_gpus: "H100, H200",
        vendor: Vendor::Nvidia,
        family: "NVIDIA",
        wave_size: 32,
        max_threads_per_block: 1024,
        shared_bytes_default: 48 * 1024,
        shared_bytes_max: 227 * 1024,
        max_registers_per_thread: 255,
        // Full-rate shapes first: a tensorized level takes the first f64 shape listed.
        max_cluster_blocks: 8,
        bulk_async_copy: true,
        matrix: &[MmaSyncM16n8k4F64, MmaSyncM16n8k8F64, MmaSyncM16n8k16F64, MmaSyncM8n8k4F64, WmmaM8n8k4F64],
    },
    Arch {
        name: "gfx90a",
        example_gpus: "MI210, MI250X",
        vendor: Vendor::Amd,
        family: "CDNA",
        wave_size: 64,
        max_threads_per_block: 1024,
        shared_bytes_default: 64 * 1024,
        shared_bytes_max: 64 * 1024,
        max_registers_per_thread: 256,
        max_cluster_blocks: 1,
        bulk_async_copy: false,
        matrix: &[MfmaF64_16x16x4],
    },
    Arch {
        name: "gfx942",
        example_gpus: "MI300X, MI300A",
        vendor: Vendor::Amd,
        family: "CDNA",
        wave_size: 64,
        max_threads_per_block: 1024,
        shared_bytes_default: 64 * 1024,
        shared_bytes_max: 64 * 1024,
        max_registers_per_thread: 256,
        max_cluster_blocks: 1,
        bulk_async_copy: false,
        matrix: &[MfmaF64_16x16x4],
    },
    Arch {
        name: "gfx1100",
        example_gpus: "RX 7900 XTX, W7900",
        vendor: Vendor::Amd,
        family: "RDNA",
        wave_size: 32,
        max_threads_per_block: 1024,
        shared_bytes_default: 64 * 1024,
        shared_bytes_max: 64 * 1024,
        max_registers_per_thread: 256,
        max_cluster_blocks: 1,
        bulk_async_copy: false,
        matrix: &[WmmaF32_16x16x16Gfx11],
    },
    Arch {
        name: "gfx1151",
        example_gpus: "Ryzen AI Max (Strix Halo)",
        vendor: Vendor::Amd,
        family: "RDNA",
        wave_size: 32,
        max_threads_per_block: 1024,
        shared_bytes_default: 64 * 1024,
        shared_bytes_max: 64 * 1024,
        max_registers_per_thread: 256,
        max_cluster_blocks: 1,
        bulk_async_copy: false,
        matrix: &[WmmaF32_16x16x16Gfx11],
    },
    Arch {
        name: "gfx1201",
        example_gpus: "RX 9070 XT",
        vendor: Vendor::Amd,
        family: "RDNA",
        wave_size: 32,
        max_threads_per_block: 1024,
        shared_bytes_default: 64 * 1024,
        shared_bytes_max: 64 * 1024,
        max_registers_per_thread: 256,
        max_cluster_blocks: 1,
        bulk_async_copy: false,
        matrix: &[WmmaF32_16x16x16Gfx12],
    },
];

/// An `--arch` value that is not in [`ARCHS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown arch `{given}`; known: {}", names().join(", "))]
pub struct UnknownArch {
    pub given: String,
}

/// Names of all known archs, in table order.
pub fn names() -> Vec<&'static str> {
    ARCHS.iter().map(|a| a.name).collect()
}

/// Looks an arch up by its `--arch` name (`sm_90`, `gfx90a`; `sm90` and `90` are accepted too).
pub fn find(name: &str) -> Result<&'static Arch, UnknownArch> {
    let lower = name.trim().to_ascii_lowercase();
    let normal = if let Some(cc) = lower.strip_prefix("sm").map(|s| s.trim_start_matches('_')) {
        format!("sm_{cc}")
    } else if lower.chars().all(|c| c.is_ascii_digit()) && !lower.is_empty() {
        format!("sm_{lower}")
    } else {
        lower
    };
    ARCHS
        .iter()
        .find(|a| a.name == normal)
        .ok_or_else(|| UnknownArch { given: crate::quote(name) })
}

/// The arch for an NVIDIA compute capability as the driver reports it (`9, 0` → sm_90).
pub fn from_compute_capability(major: i32, minor: i32) -> Result<&'static Arch, UnknownArch> {
    find(&format!("sm_{major}{minor}"))
}

impl Arch {
    pub fn has(&self, instr: MatrixInstr) -> bool {
        self.matrix.contains(&instr)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_arch_by_name_and_aliases() {
        for a in ARCHS {
            assert_eq!(find(a.name).unwrap().name, a.name);
        }
        assert_eq!(find("sm90").unwrap().name, "sm_90");
        assert_eq!(find("90").unwrap().name, "sm_90");
        assert_eq!(find("GFX90A").unwrap().name, "gfx90a");
        assert_eq!(from_compute_capability(8, 6).unwrap().name, "sm_86");
    }

    #[test]
    fn unknown_arch_lists_the_known_ones() {
        let e = find("gfx9000").unwrap_err().to_string();
        assert!(e.contains("gfx9000") && e.contains("sm_90") && e.contains("gfx1201"), "{e}");
        assert!(from_compute_capability(7, 0).is_err());
    }

    #[test]
    fn wave_sizes_follow_the_hardware() {
        for a in ARCHS {
            let expect = if a.name == "gfx90a" || a.name == "gfx942" { 64 } else { 32 };
            assert_eq!(a.wave_size, expect, "{}", a.name);
        }
    }
}

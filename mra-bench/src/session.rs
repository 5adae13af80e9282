//! Which GPU a command runs on. An NVIDIA `--arch`, or no `--arch` on a machine with an NVIDIA
//! driver: the CUDA backend. An AMD `--arch`, or no `--arch` and no NVIDIA driver: the HIP
//! backend (the ROCm runtime loaded with libloading, gcnArchName detected, hiprtc or clang).
//! Both run the same harness (`mra_runtime::harness`, generic over the backend).
//!
//! Where ROCm is installed but there is no AMD GPU (our machines), this is one line naming the
//! library, the ROCm version and what hipGetDeviceCount said; without either vendor's runtime,
//! one line naming both.

use crate::select::CmdResult;
use mra_codegen::{Arch, Vendor};
use mra_runtime::harness::{CudaSession, HipSession};
use mra_runtime::hip::compile::Choice;
use mra_runtime::hip::HipError;
use mra_runtime::hip::runtime::Gpu as HipGpu;
use mra_runtime::{KernelCache, RuntimeError};

/// An opened GPU of either vendor; commands match on it and call their generic body.
pub enum Opened {
    Cuda(CudaSession),
    Hip(HipSession),
}

/// What the command that asks for a GPU can do without one: the no-GPU error says it.
#[derive(Clone, Copy, Debug)]
pub enum GpuFree {
    /// The default mode (a benchmark run).
    Run,
    Validate,
    Sweep,
    Tune,
    /// `tune --op`: times on a GPU only.
    TuneOp,
    Transform,
}

impl GpuFree {
    fn hint(self) -> &'static str {
        match self {
            GpuFree::Run => "--emit-src prints the generated source, --compile-only compiles it (both with --arch)",
            GpuFree::Validate => "validate --emulate --arch gfx90a (or another AMD arch) runs the generated HIP on the CPU wave emulator",
            GpuFree::Sweep => "a sweep times kernels and needs one; --compile-only -l all --arch ARCH compiles every level offline",
            GpuFree::Tune => "tune --compile-only --arch ARCH compiles every candidate offline and keeps those that fit",
            GpuFree::TuneOp => "tune --op times kernels and needs one; validate --op ... --emulate --arch gfx90a checks an operation's kernels on the CPU wave emulator",
            GpuFree::Transform => "transform --reference (the FP64 CPU reference) or --emulate --arch ARCH (the generated HIP, emulated)",
        }
    }
}

/// Opens GPU 0 on the backend `arch` (if given) or the machine calls for. `compiler` is
/// `--compiler` (hiprtc or clang pick the AMD compiler; nvrtc is the only NVIDIA one); `mode`:
/// what the command can do without a GPU, for the error when there is none.
pub fn open(arch: Option<&'static Arch>, compiler: Option<&str>, cache: KernelCache, mode: GpuFree) -> CmdResult<Opened> {
    crate::select::compiler(compiler, arch)?;
    match arch {
        Some(a) => {
            compiler_fits(compiler, a)?;
            if a.vendor == Vendor::Amd {
                return open_hip(Some(a), compiler, cache, None, mode).map(Opened::Hip);
            }
        }
        // No NVIDIA driver: try AMD's HIP runtime before giving up.
        None => {
            if let Err(no_nvidia) = mra_runtime::cuda::probe_driver() {
                return open_hip(None, compiler, cache, Some(no_nvidia), mode).map(Opened::Hip);
            }
        }
    }
    let session = CudaSession::open(cache).map_err(|e| match e {
        RuntimeError::NoDriver { tried } => no_gpu(&format!("no NVIDIA driver found (no {} on the library path)", DRIVER_LIB), &tried, None, mode),
        e => e.to_string(),
    })?;
    let gpu = &session.gpu;
    if let Some(a) = arch {
        if a.name != gpu.arch.name {
            return Err(format!("--arch {} was given but GPU 0 ({}) is {}; omit --arch to use the GPU's", a.name, gpu.name, gpu.arch.name).into());
        }
    }
    compiler_fits(compiler, gpu.arch)?;
    Ok(Opened::Cuda(session))
}

/// Refuses a `--compiler` of the other vendor.
fn compiler_fits(compiler: Option<&str>, arch: &Arch) -> CmdResult<()> {
    match (compiler, arch.vendor) {
        (Some(c @ ("hiprtc" | "clang")), Vendor::Nvidia) => Err(format!("--compiler {c} compiles HIP for AMD archs, and {} is NVIDIA; use --compiler nvrtc", arch.name).into()),
        (Some("nvrtc"), Vendor::Amd) => Err(format!("--compiler nvrtc compiles CUDA for NVIDIA archs, and {} is AMD; use --compiler hiprtc or clang", arch.name).into()),
        _ => Ok(()),
    }
}

/// `arch`: the AMD arch asked for, if any. `no_nvidia`: why the CUDA backend was not used when
/// no arch was given (folded into the message if there is no AMD GPU either).
fn open_hip(arch: Option<&'static Arch>, compiler: Option<&str>, cache: KernelCache, no_nvidia: Option<RuntimeError>, mode: GpuFree) -> CmdResult<HipSession> {
    let gpu = match HipGpu::open(0) {
        Ok(gpu) => gpu,
        Err(hip) => {
            return Err(match no_nvidia {
                Some(RuntimeError::NoDriver { tried }) => {
                    let amd = match &hip {
                        HipError::NoGpu { runtime, .. } => format!("the HIP runtime ({runtime}) sees no AMD GPU"),
                        HipError::RuntimeNotFound { .. } => "no ROCm HIP runtime (libamdhip64)".to_string(),
                        other => other.to_string(),
                    };
                    no_gpu(&format!("no GPU found: no NVIDIA driver ({DRIVER_LIB}), and {amd}"), &tried, Some(&hip), mode)
                }
                Some(nv) => format!("no GPU found: {nv}; {hip}"),
                None => hip.to_string(),
            }
            .into())
        }
    };
    if let Some(a) = arch {
        if a.name != gpu.arch.name {
            return Err(format!("--arch {} was given but AMD GPU 0 ({}) is {}; omit --arch to use the GPU's", a.name, gpu.name, gpu.gcn_arch_name).into());
        }
    }
    compiler_fits(compiler, gpu.arch)?;
    let choice = match compiler {
        Some("hiprtc") => Choice::Hiprtc,
        Some("clang") => Choice::Clang,
        _ => Choice::Auto,
    };
    if !gpu.arch_from_documented_offset {
        eprintln!("# note: gcnArchName was not at its documented place in hipDeviceProp_t ({}); found {} by searching", gpu.runtime, gpu.gcn_arch_name);
    }
    eprintln!("# AMD GPU 0: {} ({}, {} CUs; {})", gpu.name, gpu.gcn_arch_name, gpu.multiprocessors, gpu.runtime);
    Ok(HipSession::open(gpu, choice, cache)?)
}

/// The driver library a CUDA machine has (the first name a user would look for).
const DRIVER_LIB: &str = "libcuda.so.1";

/// The no-GPU error: what was looked for, what works without a GPU, how to point at a driver,
/// in three short lines; with --verbose, also every library file name tried and the HIP detail.
fn no_gpu(first: &str, nvidia_tried: &str, hip: Option<&HipError>, mode: GpuFree) -> String {
    let mut text = format!(
        "{first}\n  without a GPU: {}\n  \
         a driver outside the loader's path: put its directory on LD_LIBRARY_PATH{}",
        mode.hint(),
        if crate::select::verbose() { "" } else { " (--verbose lists what was looked for)" }
    );
    if crate::select::verbose() {
        text += &format!("\n  NVIDIA driver: looked for {nvidia_tried}");
        if let Some(h) = hip {
            text += &format!("\n  AMD: {h}");
        }
    }
    text
}

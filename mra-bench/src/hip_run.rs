//! Run mode on AMD: open the GPU through the HIP runtime (loaded with libloading). Reached for
//! an AMD `--arch`, and without `--arch` when no NVIDIA driver is found.
//!
//! Where ROCm is installed but there is no AMD GPU (our machines), this is one line naming the
//! library, the ROCm version and what hipGetDeviceCount said. The benchmark loop on the HIP
//! backend is not built yet: with a GPU present this says so, after detecting it.

use crate::cli::RunArgs;
use crate::select::CmdResult;
use mra_codegen::Arch;
use mra_runtime::hip::runtime::Gpu;
use mra_runtime::RuntimeError;

/// `arch`: the AMD arch asked for, if any. `no_nvidia`: why the CUDA backend was not used when
/// no arch was given (folded into the message if there is no AMD GPU either).
pub fn run(_args: &RunArgs, arch: Option<&'static Arch>, no_nvidia: Option<RuntimeError>) -> CmdResult {
    let gpu = match Gpu::open(0) {
        Ok(gpu) => gpu,
        Err(hip) => {
            return Err(match no_nvidia {
                Some(RuntimeError::NoDriver { tried }) => format!("no GPU found: no NVIDIA driver found (looked for {tried}); {hip}"),
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
    Err(format!(
        "found AMD GPU 0: {} ({}, {} CUs; {}), but the benchmark loop on the HIP backend is not built yet; --compile-only reports what the compiler made of a level",
        gpu.name, gpu.gcn_arch_name, gpu.multiprocessors, gpu.runtime
    )
    .into())
}

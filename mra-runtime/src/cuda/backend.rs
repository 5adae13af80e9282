//! The CUDA backend as the harness sees it: [`Backend`] for [`Gpu`], each method one call of
//! this module's thin driver/NVRTC/cuBLAS layer.

use super::blas::Blas;
use super::nvrtc::{Compiled, Nvrtc};
use super::{DeviceBuffer, Event, Function, Gpu, Stream};
use crate::backend::{forward_to_handles, Backend};
use crate::cache::KernelCache;
use crate::error::Result;

impl Backend for Gpu {
    type Blas = Blas;
    type Compiler = Nvrtc;
    type Compiled = Compiled;
    const BLAS_NAME: &'static str = "cuBLAS";

    forward_to_handles!();

    fn compile(&self, nvrtc: &Nvrtc, source: &str, entry: &str, cache: &KernelCache) -> Result<Compiled> {
        nvrtc.compile(source, entry, self.arch.name, cache)
    }

    fn compile_note(nvrtc: &Nvrtc, c: &Compiled) -> String {
        let how = if c.from_cache { "loaded from the kernel cache".to_string() } else { format!("compiled with NVRTC {}.{}", nvrtc.version.0, nvrtc.version.1) };
        let res = c.resources.map(|r| format!(": {} registers, {} B spilled, {} B shared", r.registers, r.spill_store_bytes, r.shared_bytes)).unwrap_or_default();
        format!("{how} in {:.1} ms{res}", c.seconds * 1e3)
    }

    fn load(&self, c: &Compiled, entry: &str, dynamic_shared_bytes: u32) -> Result<Function> {
        Gpu::load(self, &c.cubin, entry, dynamic_shared_bytes)
    }

    fn blas(&self) -> Result<Blas> {
        Blas::new()
    }

    fn resident_blocks(&self, f: &Function, threads: u32) -> Result<Option<usize>> {
        Gpu::resident_blocks(self, f, threads).map(Some)
    }

    fn resident_clusters(&self, f: &Function, threads: u32, cluster_blocks: u32) -> Result<Option<usize>> {
        Gpu::resident_clusters(self, f, threads, cluster_blocks)
    }

    fn resources(c: &Compiled) -> Option<crate::backend::Resources> {
        c.resources.map(|r| crate::backend::Resources {
            registers: r.registers,
            spill_bytes: r.spill_store_bytes + r.spill_load_bytes,
            shared_bytes: r.shared_bytes,
            scalar_registers: 0,
        })
    }

    fn driver_version(&self) -> String {
        format!("CUDA driver {}", self.driver_version)
    }

    fn clock_source(&self) -> std::result::Result<std::sync::Arc<dyn crate::clocks::ClockSource>, String> {
        super::nvml::Nvml::open(&self.pci_bus_id).map(|n| std::sync::Arc::new(n) as std::sync::Arc<dyn crate::clocks::ClockSource>)
    }

    fn compiler_version(nvrtc: &Nvrtc) -> String {
        format!("NVRTC {}.{}", nvrtc.version.0, nvrtc.version.1)
    }
}

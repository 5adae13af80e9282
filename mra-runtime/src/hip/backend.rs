//! The HIP backend as the harness sees it: [`Backend`] for [`Gpu`], each method one call of
//! the runtime (`libamdhip64`), the compiler choice (hiprtc or clang) or hipBLAS.

use super::compile::{AmdCompiler, Compiled};
use super::hipblas::{BlasHandle, HipBlas};
use super::runtime::{DeviceBuffer, Event, Function, Gpu, Stream};
use crate::backend::{forward_to_handles, Backend};
use crate::cache::KernelCache;
use crate::error::Result;

impl Backend for Gpu {
    type Blas = BlasHandle;
    type Compiler = AmdCompiler;
    type Compiled = Compiled;
    const BLAS_NAME: &'static str = "hipBLAS";

    forward_to_handles!();

    fn compile(&self, compiler: &AmdCompiler, source: &str, entry: &str, cache: &KernelCache) -> Result<Compiled> {
        compiler.compile_cached(source, entry, self.arch.name, cache)
    }

    fn compile_note(_: &AmdCompiler, c: &Compiled) -> String {
        let how = if c.from_cache { "loaded from the kernel cache".to_string() } else { format!("compiled with {}", c.compiler) };
        let res = c
            .resources
            .as_ref()
            .map(|r| format!(": {} VGPRs, {} AGPRs, {} SGPRs, {} B LDS, {} B scratch", r.vgpr_count, r.agpr_count, r.sgpr_count, r.lds_bytes, r.scratch_bytes))
            .unwrap_or_default();
        format!("{how} in {:.1} ms{res}", c.seconds * 1e3)
    }

    fn load(&self, c: &Compiled, entry: &str, dynamic_shared_bytes: u32) -> Result<Function> {
        Ok(Gpu::load(self, &c.code_object, entry, dynamic_shared_bytes)?)
    }

    fn blas(&self) -> Result<BlasHandle> {
        Ok(HipBlas::get()?.create()?)
    }

    fn resident_blocks(&self, f: &Function, threads: u32) -> Result<Option<usize>> {
        Ok(Some(f.resident_blocks(threads, self.multiprocessors)?))
    }

    fn resources(c: &Compiled) -> Option<crate::backend::Resources> {
        c.resources.as_ref().map(|r| crate::backend::Resources {
            registers: r.vgpr_count,
            spill_bytes: r.scratch_bytes + r.vgpr_spill_count + r.sgpr_spill_count,
            shared_bytes: r.lds_bytes,
            scalar_registers: r.sgpr_count,
        })
    }

    fn driver_version(&self) -> String {
        self.runtime.clone()
    }

    fn compiler_version(compiler: &AmdCompiler) -> String {
        compiler.describe()
    }
}

//! A GPU with its compiler and the kernel cache, and what it does before a level runs:
//! generate, compile and load the level, check that its buffers fit, allocate them.

use super::buffers::Buffers;
use super::config::{HarnessConfig, StreamData};
use super::prepared::{BlasPerStream, Prepared, Task};
use crate::backend::Backend;
use crate::cache::KernelCache;
use crate::error::{Result, RuntimeError};
use mra_codegen::ir::LibraryCall;
use mra_codegen::plan::Body;
use mra_codegen::{DType, Plan, Request, Schedule};

/// A GPU with its compiler and the kernel cache: what running a level needs.
pub struct Session<B: Backend> {
    pub gpu: B,
    pub compiler: B::Compiler,
    pub cache: KernelCache,
}

/// The CUDA session: driver API, NVRTC, cuBLAS.
pub type CudaSession = Session<crate::cuda::Gpu>;
/// The HIP session: libamdhip64, hiprtc or clang, hipBLAS.
pub type HipSession = Session<crate::hip::runtime::Gpu>;

/// The CPU wave emulator's session: the generated HIP run on host threads, host clang++.
pub type EmulatorSession = Session<crate::emulate::Emulator>;

impl EmulatorSession {
    /// The emulator for an AMD `arch`, with the host clang++ (one line saying what is missing
    /// when there is none).
    pub fn open_emulator(emulator: crate::emulate::Emulator, cache: KernelCache) -> Result<EmulatorSession> {
        let compiler = crate::emulate::HostClang::find()?;
        let checker = emulator.checker();
        if checker == crate::emulate::Checker::Races && !crate::emulate::compile::links_with(&compiler.path, checker) {
            return Err(crate::error::RuntimeError::Invalid(format!(
                "--races needs a clang++ that links with ThreadSanitizer; {} does not (Debian: `apt-get install libclang-rt-19-dev`, or point MRA_CLANG at another clang++)",
                compiler.describe()
            )));
        }
        Ok(Session { gpu: emulator, compiler, cache })
    }
}

impl CudaSession {
    /// Opens GPU 0 (driver first, so a machine without one gets that message), then NVRTC.
    pub fn open(cache: KernelCache) -> Result<CudaSession> {
        let gpu = crate::cuda::Gpu::open(0)?;
        let compiler = crate::cuda::nvrtc::Nvrtc::load()?;
        Ok(Session { gpu, compiler, cache })
    }
}

impl HipSession {
    /// AMD GPU 0 (opened by the caller, which words the no-GPU case) with the compiler for its
    /// arch: hiprtc where the installed ROCm's hiprtc supports it, else clang (`choice`).
    pub fn open(gpu: crate::hip::runtime::Gpu, choice: crate::hip::compile::Choice, cache: KernelCache) -> Result<HipSession> {
        let compiler = crate::hip::compile::AmdCompiler::choose(gpu.arch.name, choice)?;
        Ok(Session { gpu, compiler, cache })
    }
}

/// Elements of workspace one stream needs for `plan` under `cfg`.
pub fn workspace_elems_per_stream(cfg: &HarnessConfig, plan: &Plan) -> u64 {
    (cfg.nblocks() as u64)
        .saturating_mul(plan.workspace_elems_per_block)
        .saturating_add((cfg.nfuncs as u64).saturating_mul(plan.workspace_elems_per_tensor))
}

/// Device bytes a configuration needs: A, C (one pair per stream with `--stream-data
/// private`), B and one workspace per stream. Saturates at
/// `u64::MAX` (which no device has) rather than wrapping to a small number.
pub fn bytes_needed(cfg: &HarnessConfig, plan: &Plan) -> u64 {
    let e = plan.request.dtype.bytes() as u64;
    let k = plan.request.k as u64;
    let copies = cfg.stream_data.copies(cfg.streams) as u64;
    let tensors = (cfg.nfuncs as u64).saturating_mul(k.pow(3)).saturating_mul(e).saturating_mul(2).saturating_mul(copies);
    let workspaces = (cfg.streams as u64).saturating_mul(workspace_elems_per_stream(cfg, plan)).saturating_mul(e);
    tensors.saturating_add(k.pow(2) * e).saturating_add(workspaces)
}

impl<B: Backend> Session<B> {
    /// Generates, compiles (through the cache) and loads a level; a library level also gets
    /// its BLAS handles (made on first use) and, for the Kronecker level, its K⁶ matrix.
    pub fn prepare(&self, schedule: &Schedule, k: u32, dtype: DType) -> Result<Prepared<B>> {
        self.prepare_kernel(mra_codegen::generate(schedule, Request { k, arch: self.gpu.arch(), dtype })?)
    }

    /// [`Session::prepare`] for a kernel already generated, whose source the caller may have
    /// replaced (`--source`: a hand-edited kernel launched as the level's plan says).
    pub fn prepare_kernel(&self, kernel: mra_codegen::Kernel) -> Result<Prepared<B>> {
        let (k, dtype) = (kernel.plan.request.k, kernel.plan.request.dtype);
        let what = format!("{} at K={k} ({dtype})", kernel.level);
        let (compiled, function) = if kernel.entry.is_empty() {
            (None, None)
        } else {
            let compiled = self.gpu.compile(&self.compiler, &kernel.source, &kernel.entry, &self.cache)?;
            if let Some(r) = B::resources(&compiled) {
                crate::residency::check_one_block_fits(self.gpu.arch(), &r, &kernel.plan, &what)?;
            }
            let dynamic = if kernel.plan.dynamic_shared { kernel.plan.shared_bytes } else { 0 };
            let function = self.gpu.load(&compiled, &kernel.entry, dynamic)?;
            (Some(compiled), Some(function))
        };
        let task = match (kernel.plan.body, function) {
            (Body::Library(LibraryCall::Kronecker), Some(build)) => {
                let bytes = (k as u64).pow(6) * dtype.bytes() as u64;
                let (free, _) = self.gpu.memory()?;
                if bytes as f64 > free as f64 * 0.9 {
                    return Err(RuntimeError::OutOfMemory {
                        what: format!("{} at K={k} ({dtype}): the K^6 Kronecker matrix", kernel.level),
                        need_mib: bytes as f64 / 1048576.0,
                        free_mib: free as f64 / 1048576.0,
                    });
                }
                Task::Kronecker { build, matrix: self.gpu.alloc(bytes as usize)?, blas: BlasPerStream::default() }
            }
            (Body::Library(_), _) => Task::ThreeGemm { blas: BlasPerStream::default() },
            (_, Some(f)) => Task::Kernel(f),
            (_, None) => unreachable!("every non-library level has a kernel"),
        };
        let (threads, cluster_blocks) = (kernel.plan.threads, kernel.plan.cluster_blocks());
        // Asked of every kernel: `persistent(1)` caps its grid by it, and `-M auto` sizes any
        // kernel's grid by it.
        let resident_blocks = match &task {
            Task::Kernel(f) => self.gpu.resident_blocks(f, threads)?,
            _ => None,
        };
        // A cluster kernel: how much of the device its clusters can hold, or a one-line refusal
        // where not one cluster fits (the driver would fail every launch).
        let clusters = match &task {
            Task::Kernel(f) if cluster_blocks > 1 => {
                let resources = compiled.as_ref().and_then(B::resources).map(|r| crate::residency::describe_resources(&r, &kernel.plan)).unwrap_or_else(|| "its registers and shared memory".into());
                let refusal = || RuntimeError::ClusterDoesNotFit { what: format!("{what} on {}", self.gpu.device_name()), cluster_blocks, threads, resources };
                crate::residency::cluster_residency(self.gpu.resident_clusters(f, threads, cluster_blocks)?, self.gpu.resident_blocks(f, threads)?, cluster_blocks, refusal)?
            }
            _ => None,
        };
        Ok(Prepared { kernel, compiled, task, resident_blocks, clusters, fill_device: false })
    }

    /// How a prepared level's kernel was compiled (` compiled with NVRTC 13.0 in ...`), or
    /// that it has none (`: cuBLAS calls, no kernel to compile`): what follows the level in
    /// the run's log line.
    pub fn compile_note(&self, p: &Prepared<B>) -> String {
        match &p.compiled {
            Some(c) => format!(" {}", B::compile_note(&self.compiler, c)),
            None => format!(": {} calls, no kernel to compile", B::BLAS_NAME),
        }
    }

    /// `n` streams for [`time_reps`](super::time_reps).
    pub fn streams(&self, n: usize) -> Result<Vec<B::Stream>> {
        (0..n).map(|_| self.gpu.stream()).collect()
    }

    /// Checks that the buffers for `cfg` and `plan` fit in free device memory.
    pub fn check_memory(&self, cfg: &HarnessConfig, plan: &Plan) -> Result<()> {
        let need = bytes_needed(cfg, plan);
        let (free, _) = self.gpu.memory()?;
        // Leave headroom for the context, modules and the driver's own allocations.
        if need as f64 > free as f64 * 0.95 {
            let (k, dtype) = (plan.request.k, plan.request.dtype);
            return Err(RuntimeError::OutOfMemory {
                what: match cfg.stream_data {
                    StreamData::Shared => format!("N={} tensors of K={k} ({dtype}) with {} streams of workspace", cfg.nfuncs, cfg.streams),
                    StreamData::Private => format!("N={} tensors of K={k} ({dtype}) with {} streams of private A, C and workspace", cfg.nfuncs, cfg.streams),
                },
                need_mib: need as f64 / 1048576.0,
                free_mib: free as f64 / 1048576.0,
            });
        }
        Ok(())
    }

    /// `cfg` for buffers that the levels `ps` launch on: with `-M auto`, each level's launches
    /// are marked to use [`Prepared::auto_grid`] (waves of what the device holds of its kernel at
    /// once, whole clusters, at most the work), and the buffers are sized for the largest of
    /// them; else `cfg` itself. A backend that cannot tell (the CPU emulator) or a library level gets 512 blocks,
    /// the seed's -M.
    pub fn grid_for(&self, cfg: &HarnessConfig, ps: &mut [&mut Prepared<B>]) -> HarnessConfig {
        if !cfg.auto_grid() {
            return *cfg;
        }
        let mut largest = None;
        for p in ps.iter_mut() {
            p.fill_device = true;
            largest = largest.max(p.auto_grid());
        }
        cfg.with_grid(largest, 512)
    }

    /// Allocates the buffers for `cfg` and `plan`, after checking they fit in free device memory.
    pub fn allocate(&self, cfg: &HarnessConfig, plan: &Plan) -> Result<Buffers<B>> {
        self.check_memory(cfg, plan)?;
        let (k, dtype) = (plan.request.k, plan.request.dtype);
        let e = dtype.bytes() as usize;
        let k3 = (k as usize).pow(3);
        let ws = workspace_elems_per_stream(cfg, plan) as usize * e;
        let gpu = &self.gpu;
        Ok(Buffers {
            a: gpu.alloc(cfg.nfuncs * k3 * e)?,
            b: gpu.alloc((k as usize).pow(2) * e)?,
            c: gpu.alloc(cfg.nfuncs * k3 * e)?,
            private: (1..cfg.stream_data.copies(cfg.streams))
                .map(|_| Ok((gpu.alloc(cfg.nfuncs * k3 * e)?, gpu.alloc(cfg.nfuncs * k3 * e)?)))
                .collect::<Result<_>>()?,
            workspaces: (0..cfg.streams).map(|_| gpu.alloc(ws)).collect::<Result<_>>()?,
            dtype,
            nfuncs: cfg.nfuncs,
            // A cluster level's grid is whole clusters (min(N, M) rounded up); a stack(N) level
            // has work for ceil(N / stack) blocks.
            nblocks: plan.grid_blocks(plan.work_blocks(cfg.nfuncs).min(cfg.max_blocks)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::fake::{cfg, level, session};

    #[test]
    fn a_cluster_level_says_how_much_of_the_device_its_clusters_hold_and_refuses_when_none_fit() {
        // The driver's counts are the fake's; what prepare must do with them is by hand: fused-
        // cluster K = 32 is planned as clusters of 8 (its default); 30 of them against 264 block
        // slots leave 24 idle (the counts cudaOccupancyMaxActiveClusters gives on a 132-SM sm_90
        // GPU at two blocks per SM). No cluster at all: refused in one line naming the
        // cluster and the device, before any launch. fused-pipe (no clusters) asks nothing.
        let s = session(1.0);
        s.gpu.resident.set(Some(264));
        s.gpu.clusters.set(Some(30));
        let p = s.prepare(&level("fused-cluster"), 32, DType::F64).unwrap();
        assert_eq!(p.kernel.plan.cluster_blocks(), 8);
        let r = p.clusters.expect("a cluster kernel on a device that can tell");
        assert_eq!((r.clusters, r.blocks(), r.block_slots), (30, 240, Some(264)));
        assert!(s.prepare(&level("fused-pipe"), 20, DType::F64).unwrap().clusters.is_none());
        s.gpu.clusters.set(None);
        assert!(s.prepare(&level("fused-cluster"), 32, DType::F64).unwrap().clusters.is_none(), "unknown is not refused");
        s.gpu.clusters.set(Some(0));
        let e = s.prepare(&level("fused-cluster"), 32, DType::F64).err().expect("no cluster fits").to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("fused-cluster at K=32 (f64) on "), "{e}");
        assert!(e.contains("not one cluster of 8 blocks (256 threads"), "{e}");
        assert!(e.contains("mra-bench tune"), "{e}");
        assert_eq!(s.gpu.launch_count(), 0);
    }

    #[test]
    fn a_stacked_level_launches_one_block_per_group_of_tensors() {
        // stack(N) walks groups of N consecutive tensors: a launch has work for ceil(N_tensors / N)
        // blocks, at most M. Expected grids by hand: N = 300 tensors, M = 512 and M = 100.
        for (stack, max_blocks, want) in [(1u32, 512usize, 300i32), (2, 512, 150), (3, 512, 100), (4, 512, 75), (2, 100, 100)] {
            let s = session(1.0);
            s.gpu.lazy.set(true);
            // (swap_operands(1), K = 10's default on sm_90, takes one tensor per pass: off here.)
            let sched = level("fused-pipe").with_config(&[("stack".to_string(), stack), ("swap_operands".to_string(), 0)].into_iter().collect()).unwrap();
            let p = s.prepare(&sched, 10, DType::F64).unwrap();
            let c = HarnessConfig { max_blocks, ..cfg(300, 1, 1, 1) };
            let bufs = s.allocate(&c, &p.kernel.plan).unwrap();
            assert_eq!(bufs.nblocks, want as usize, "stack({stack}), M = {max_blocks}");
            let streams = s.streams(1).unwrap();
            p.launch(&s.gpu, &streams[0], &bufs, 0).unwrap();
            let launches = s.gpu.launches();
            assert_eq!((launches[0].1.nfuncs, launches[0].1.nblocks), (300, want), "stack({stack}), M = {max_blocks}");
        }
    }

    /// `-M auto`: a launch has AUTO_WAVES times the blocks the device holds of its kernel at
    /// once (the fake's resident count), twice for a level with a device workspace per block, at
    /// most one per tensor; buffers shared by two levels are sized for the larger grid and each
    /// launches its own. Expected grids by hand: L3 (a global workspace) 2 × 264; copy 32 × 1056
    /// is more than the 20,000 tensors, so 20,000.
    #[test]
    fn auto_blocks_launch_waves_of_what_the_device_holds_of_each_kernel() {
        let s = session(1.0);
        s.gpu.lazy.set(true);
        s.gpu.resident.set(Some(264));
        let mut l3 = s.prepare(&level("L3"), 10, DType::F64).unwrap();
        assert!(l3.kernel.plan.workspace_elems_per_block > 0, "L3's passes go through a workspace in device memory");
        s.gpu.resident.set(Some(1056));
        let mut floor = s.prepare(&level("copy"), 10, DType::F64).unwrap();
        let auto = HarnessConfig { max_blocks: crate::harness::AUTO_BLOCKS, ..cfg(20_000, 1, 1, 1) };
        let c = s.grid_for(&auto, &mut [&mut l3, &mut floor]);
        assert_eq!(c.max_blocks, 32 * 1056, "sized for the larger grid");
        let bufs = s.allocate(&c, &l3.kernel.plan).unwrap();
        assert_eq!(bufs.nblocks, 20_000, "at most one block per tensor");
        let streams = s.streams(1).unwrap();
        l3.launch(&s.gpu, &streams[0], &bufs, 0).unwrap();
        floor.launch(&s.gpu, &streams[0], &bufs, 0).unwrap();
        let grids: Vec<i32> = s.gpu.launches().iter().map(|l| l.1.nblocks).collect();
        assert_eq!(grids, [2 * 264, 20_000]);
        // A number is left alone.
        assert_eq!(s.grid_for(&cfg(20_000, 1, 1, 1), &mut [&mut l3]).max_blocks, cfg(20_000, 1, 1, 1).max_blocks);
    }

    #[test]
    fn private_stream_data_needs_a_and_c_once_per_stream() {
        // K = 4, N = 10, f64: A and C are 10 · 64 · 8 = 5120 B each; B 128 B; copy has no workspace.
        let plan = level("copy").plan(Request { k: 4, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap();
        let shared = cfg(10, 1, 4, 1);
        assert_eq!(bytes_needed(&shared, &plan), 2 * 5120 + 128);
        assert_eq!(bytes_needed(&HarnessConfig { stream_data: StreamData::Private, ..shared }, &plan), 4 * 2 * 5120 + 128);
    }
}

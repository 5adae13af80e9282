//! A level compiled and loaded for one (K, dtype): what one task of it submits (a kernel
//! launch, or the library levels' GEMMs with a BLAS handle per stream).

use super::buffers::Buffers;
use crate::backend::{Backend, Gemm, LaunchArgs};
use crate::error::Result;
use mra_codegen::Kernel;
use std::cell::RefCell;
use std::rc::Rc;

/// A level compiled and loaded for one (K, dtype) on this GPU.
pub struct Prepared<B: Backend> {
    pub kernel: Kernel,
    /// The compiled kernel, if the level has one (the three-GEMM level has none).
    pub compiled: Option<B::Compiled>,
    pub task: Task<B>,
    /// How many of the kernel's blocks the device holds at once (the backend's occupancy for the
    /// loaded kernel; `None` where it cannot tell): caps every launch's grid with `persistent(1)`,
    /// and is the grid of `-M auto`.
    pub resident_blocks: Option<usize>,
    /// For a thread-block-cluster kernel: how many clusters the device holds at once against
    /// its block slots (`None`: not a cluster kernel, or the backend cannot tell).
    pub clusters: Option<crate::residency::ClusterResidency>,
    /// `-M auto`: every launch has at most [`Prepared::full_grid`] blocks, each walking the
    /// batch (set by [`Session::grid_for`](super::Session::grid_for)).
    pub fill_device: bool,
}

/// Waves of resident blocks a `-M auto` launch has: many short-lived blocks keep every SM busy
/// to the end of the batch, where a grid of one wave walking the batch idles SMs on its tail
/// (measured in docs/performance.md, "The API regime").
pub const AUTO_WAVES: usize = 32;

/// What one task of a level submits.
pub enum Task<B: Backend> {
    /// One launch of the generated kernel.
    Kernel(B::Function),
    /// One GEMM with the Kronecker matrix, which `build` makes from B (untimed, whenever B
    /// changes: see [`Prepared::set_b`]).
    Kronecker { build: B::Function, matrix: B::Buffer, blas: BlasPerStream<B> },
    /// Three strided-batched GEMMs through the stream's two batch workspaces.
    ThreeGemm { blas: BlasPerStream<B> },
}

/// One BLAS handle per stream: a handle's workspace must not be shared by GEMMs running
/// concurrently on different streams (cuBLAS documentation, "Thread safety" / streams; the
/// same holds for hipBLAS over rocBLAS). Handles are made on first use by a stream (the
/// harness's warm-up covers that).
pub struct BlasPerStream<B: Backend>(RefCell<Vec<Rc<B::Blas>>>);

impl<B: Backend> Default for BlasPerStream<B> {
    fn default() -> Self {
        BlasPerStream(RefCell::new(Vec::new()))
    }
}

impl<B: Backend> BlasPerStream<B> {
    fn get(&self, gpu: &B, s: usize) -> Result<Rc<B::Blas>> {
        let mut v = self.0.borrow_mut();
        while v.len() <= s {
            v.push(Rc::new(gpu.blas()?));
        }
        Ok(v[s].clone())
    }
}

impl<B: Backend> Prepared<B> {
    /// Work that depends on B alone, done once after B is uploaded and before any task: the
    /// Kronecker level builds its K⁶ matrix here (the seed does the same, untimed).
    pub fn set_b(&self, gpu: &B, bufs: &Buffers<B>) -> Result<()> {
        if let Task::Kronecker { build, matrix, .. } = &self.task {
            let stream = gpu.stream()?;
            let args = LaunchArgs { c: B::device_ptr(matrix), nblocks: 1024, ..bufs.args(0) };
            gpu.launch(build, &stream, self.kernel.plan.threads, &args)?;
            gpu.synchronize(&stream)?;
        }
        Ok(())
    }

    /// The largest grid whose blocks the device holds all at once: resident clusters' blocks for
    /// a cluster kernel, else resident blocks in whole multiples of what the grid must be a
    /// multiple of (a tensor's blocks). `None` where the backend cannot tell.
    pub fn full_grid(&self) -> Option<usize> {
        if let Some(c) = &self.clusters {
            return Some(c.blocks());
        }
        let whole = self.kernel.plan.grid_multiple() as usize;
        self.resident_blocks.map(|r| (r / whole).max(1) * whole)
    }

    /// The grid of `-M auto`: [`AUTO_WAVES`] times what the device holds at once, 2 times for a
    /// level with a workspace per block in device memory (whose size grows with the grid).
    pub fn auto_grid(&self) -> Option<usize> {
        let waves = if self.kernel.plan.workspace_elems_per_block > 0 { 2 } else { AUTO_WAVES };
        self.full_grid().map(|g| g * waves)
    }

    /// The blocks one launch of the kernel uses when the buffers were sized for `nblocks`
    /// (min(N, M), whole clusters): fewer with `persistent(1)` where the device holds fewer.
    pub fn grid_blocks(&self, nblocks: usize) -> usize {
        let grid = self.kernel.plan.persistent_grid(nblocks, self.resident_blocks);
        match self.auto_grid() {
            Some(auto) if self.fill_device => grid.min(auto),
            _ => grid,
        }
    }

    /// Submits one task (all N tensors) on `stream`, the `s`-th stream of the harness.
    pub fn launch(&self, gpu: &B, stream: &B::Stream, bufs: &Buffers<B>, s: usize) -> Result<()> {
        let plan = &self.kernel.plan;
        let (k, dtype) = (plan.request.k as i64, plan.request.dtype);
        let (k3, n) = (k * k * k, bufs.nfuncs as i64);
        match &self.task {
            Task::Kernel(f) => gpu.launch(f, stream, plan.threads, &LaunchArgs { nblocks: self.grid_blocks(bufs.nblocks) as i32, ..bufs.args(s) }),
            Task::Kronecker { matrix, blas, .. } => gpu.gemm(
                &*blas.get(gpu, s)?,
                stream,
                dtype,
                &Gemm {
                    transa: false, transb: false, m: k3 as i32, n: n as i32, k: k3 as i32,
                    a: B::device_ptr(matrix), lda: k3 as i32, stride_a: 0,
                    b: B::device_ptr(bufs.a_of(s)), ldb: k3 as i32, stride_b: 0,
                    c: B::device_ptr(bufs.c_of(s)), ldc: k3 as i32, stride_c: 0, batch: 1,
                },
            ),
            Task::ThreeGemm { blas } => {
                let blas = blas.get(gpu, s)?;
                // out_n (K² x K row-major) = in_n^T B is, column-major, X (K x K²) =
                // B (K x K, ld K) * in_n^T (in_n viewed K² x K, ld K², transposed).
                let e = dtype.bytes() as u64;
                let s0 = B::device_ptr(&bufs.workspaces[s]);
                let s1 = s0 + (n * k3) as u64 * e;
                for (input, out) in [(B::device_ptr(bufs.a_of(s)), s0), (s0, s1), (s1, B::device_ptr(bufs.c_of(s)))] {
                    gpu.gemm(
                        &blas,
                        stream,
                        dtype,
                        &Gemm {
                            transa: false, transb: true, m: k as i32, n: (k * k) as i32, k: k as i32,
                            a: B::device_ptr(&bufs.b), lda: k as i32, stride_a: 0,
                            b: input, ldb: (k * k) as i32, stride_b: k3,
                            c: out, ldc: k as i32, stride_c: k3, batch: n as i32,
                        },
                    )?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::fake::{cfg, prepared, session, validated, Fake, Op};
    use crate::harness::time_reps;

    #[test]
    fn a_persistent_level_launches_no_more_blocks_than_the_device_holds() {
        // fused-pipe declares persistent(1) from K = 20 (not at 16); L1 does not declare it.
        // Expected grids by hand: min(N, M) = min(300, 512) = 300, capped at what the device
        // holds for the persistent plan only.
        let c = cfg(300, 1, 2, 1);
        for (name, k, resident, want) in [
            ("fused-pipe", 20, Some(132), 132),
            ("fused-pipe", 20, Some(1000), 300),
            ("fused-pipe", 20, None, 300),
            ("fused-pipe", 20, Some(0), 1),
            ("fused-pipe", 16, Some(132), 300),
            ("L1", 20, Some(132), 300),
        ] {
            let s = session(1.0);
            s.gpu.resident.set(resident);
            s.gpu.lazy.set(true);
            let (p, bufs) = prepared(&s, name, k, &c);
            assert_eq!(bufs.nblocks, 300, "the buffers (workspaces) are sized for min(N, M)");
            let streams = s.streams(2).unwrap();
            p.launch(&s.gpu, &streams[1], &bufs, 1).unwrap();
            let launches = s.gpu.launches();
            assert_eq!(launches.len(), 1);
            assert_eq!(launches[0].1.nblocks, want, "{name} K={k}, device holds {resident:?}");
            assert_eq!(p.grid_blocks(bufs.nblocks), want as usize, "what run and sweep report");
        }
    }

    #[test]
    fn three_gemm_level_is_the_transform_with_one_blas_handle_per_stream() {
        let s = session(250.0);
        let c = cfg(3, 4, 2, 2);
        let (p, bufs) = prepared(&s, "vendor-3gemm", 4, &c);
        assert!(p.compiled.is_none());
        assert_eq!(s.compile_note(&p), ": fakeBLAS calls, no kernel to compile");
        let cmp = validated(&s, &p, &bufs, 11);
        assert!(cmp.passes(1e-12), "{cmp:?}");
        let streams = s.streams(c.streams).unwrap();
        s.gpu.ops.borrow_mut().clear();
        time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap();
        let ops = s.gpu.ops.borrow();
        // The handle of stream 0 was made during validation; stream 1's on its first task.
        let new: Vec<usize> = ops.iter().filter_map(|o| if let Op::NewBlas(h) = o { Some(*h) } else { None }).collect();
        assert_eq!(new.len(), 1, "{ops:?}");
        let gemms: Vec<(usize, usize)> = ops.iter().filter_map(|o| if let Op::Gemm { stream, handle } = o { Some((*stream, *handle)) } else { None }).collect();
        assert_eq!(gemms.len(), 3 * c.tasks * (1 + c.reps), "three GEMMs a task");
        let handle_of = |st: usize| gemms.iter().find(|g| g.0 == st).unwrap().1;
        assert_ne!(handle_of(streams[0]), handle_of(streams[1]));
        assert!(gemms.iter().all(|&(st, h)| h == handle_of(st)), "{gemms:?}");
        assert_eq!(handle_of(streams[1]), new[0]);
    }

    #[test]
    fn kronecker_level_is_one_gemm_with_the_matrix_built_from_b() {
        let s = session(250.0);
        let (p, bufs) = prepared(&s, "L6", 3, &cfg(4, 2, 2, 1));
        assert!(matches!(p.task, Task::Kronecker { .. }));
        assert_eq!(s.compile_note(&p), " mra_l6_kron_k3_f64_build compiled by nobody");
        let cmp = validated(&s, &p, &bufs, 5);
        assert!(cmp.passes(1e-12), "{cmp:?}");
        // The build kernel wrote the matrix once (set_b), then one GEMM read it.
        let ops = s.gpu.ops.borrow();
        let launches: Vec<&Op> = ops.iter().filter(|o| matches!(o, Op::Launch { .. } | Op::Gemm { .. })).collect();
        let Task::Kronecker { matrix, .. } = &p.task else { unreachable!() };
        assert!(matches!(launches[..], [Op::Launch { args, .. }, Op::Gemm { .. }] if args.c == Fake::device_ptr(matrix) && args.nblocks == 1024), "{launches:?}");
    }
}

//! One operation ([`mra_codegen::Operation`]) run on a device and checked: random inputs and
//! their FP64 reference from the operation's definition ([`crate::reference_op`]), the batch
//! laid out as the operation says (strided with gaps, or pointers in a scrambled order),
//! C's tensors NaN where β = 0 (a kernel that reads them fails), every gap between tensors
//! holding a sentinel that must survive, one launch, then the comparison. And the same
//! launch timed over a batch far larger than L2 against a copy of the same bytes (the API
//! regime).

use super::device_bytes::{from_device_bytes, to_device_bytes};
use super::prepared::{Prepared, Task};
use crate::backend::{Backend, LaunchArgs, OpParams};
use crate::error::{Result, RuntimeError};
use crate::reference_op as r;
use crate::validate::Comparison;
use mra_codegen::{Layout, Matrices, Operation};
use rand::{Rng, SeedableRng};

/// What one case computes: the kernel's operation, for a per-dimension kernel whether it
/// runs one direction (`dir`: the identity in the other two), for a rank sum its terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpCase {
    pub op: Operation,
    pub k: u32,
    pub nfuncs: usize,
    pub dir: Option<usize>,
    /// Terms of a rank sum (ignored by the other operations).
    pub ranks: usize,
    pub alpha: f64,
    pub beta: f64,
    pub seed: u64,
}

/// A gap value no transform produces by chance: the gaps must hold it after the launch.
const SENTINEL: f64 = 7.125e300;

/// The reference of one tensor (A in, C out), before α and β.
type OneTensor = Box<dyn Fn(&[f64]) -> Vec<f64> + Sync>;

/// Host inputs of a case and the reference, tensor by tensor in batch order.
pub struct OpData {
    pub a: Vec<f64>,
    /// What the kernel's `b` holds: B, or X, Y, Z (for `dir`, the identity around M), or per
    /// term X_μ, Y_μ, Z_μ and then the weights.
    pub b: Vec<f64>,
    pub c0: Vec<f64>,
    pub reference: Vec<f64>,
}

impl OpCase {
    /// Elements between tensor starts of A and of C (the contiguous K³, else a gap that
    /// keeps 16-byte alignment where K³ has it and breaks it where K³ is odd, and differs
    /// between A and C so a kernel that mixes them up fails).
    pub fn strides(&self) -> (usize, usize) {
        let k3 = (self.k as usize).pow(3);
        match self.op.layout {
            Layout::Contiguous => (k3, k3),
            _ if k3 % 2 == 1 => (k3 + 3, k3 + 5),
            _ => (k3 + 2, k3 + 6),
        }
    }

    /// Where tensor n lies in A's and C's allocation (elements): by the stride, or with
    /// pointers in a scrambled order (A reversed, C rotated by one), every tensor apart.
    pub fn slots(&self) -> (Vec<usize>, Vec<usize>) {
        let (sa, sc) = self.strides();
        let n = self.nfuncs;
        match self.op.layout {
            Layout::Pointers => ((0..n).map(|i| (n - 1 - i) * sa).collect(), (0..n).map(|i| ((i + 1) % n) * sc).collect()),
            _ => ((0..n).map(|i| i * sa).collect(), (0..n).map(|i| i * sc).collect()),
        }
    }

    pub fn data(&self) -> OpData {
        let k = self.k as usize;
        let (k2, k3) = (k * k, k * k * k);
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed);
        let mut random = |n: usize| -> Vec<f64> { (0..n).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let a = random(self.nfuncs * k3);
        let c0 = random(self.nfuncs * k3);
        let (b, one): (Vec<f64>, OneTensor) = match (self.op.matrices, self.dir) {
            (Matrices::One, _) => {
                let b = random(k2);
                let m = b.clone();
                (b, Box::new(move |t| r::general_one(k, t, &m, &m, &m)))
            }
            (Matrices::PerDim, Some(d)) => {
                let m = random(k2);
                (r::dir_matrices(k, &m, d), Box::new(move |t| r::dir_one(k, t, &m, d)))
            }
            (Matrices::RankSum, _) => {
                let r = self.ranks;
                let (xs, ys, zs, w) = (random(r * k2), random(r * k2), random(r * k2), random(r));
                let b = rank_sum_b(k, &xs, &ys, &zs, &w);
                (b, Box::new(move |t| r::ranksum_one(k, t, &xs, &ys, &zs, &w)))
            }
            (Matrices::PerDim, None) => {
                let b = random(3 * k2);
                let m = b.clone();
                (b, Box::new(move |t| r::general_one(k, t, &m[..k2], &m[k2..2 * k2], &m[2 * k2..])))
            }
        };
        use rayon::prelude::*;
        let t: Vec<f64> = a.par_chunks(k3).flat_map_iter(&one).collect();
        let reference = r::scale(self.alpha, &t, self.beta, &c0);
        OpData { a, b, c0, reference }
    }
}

/// A rank sum's `b` as its kernels read it: per term X_μ, Y_μ, Z_μ, then the weights (`xs`,
/// `ys`, `zs` hold the R matrices of each dimension, term after term).
pub fn rank_sum_b(k: usize, xs: &[f64], ys: &[f64], zs: &[f64], weights: &[f64]) -> Vec<f64> {
    let k2 = k * k;
    let mut b = Vec::with_capacity(weights.len() * (3 * k2 + 1));
    for mu in 0..weights.len() {
        for m in [xs, ys, zs] {
            b.extend_from_slice(&m[mu * k2..][..k2]);
        }
    }
    b.extend_from_slice(weights);
    b
}

/// The outcome: C against the reference, and whether every gap kept its sentinel.
#[derive(Debug)]
pub struct OpOutcome {
    pub cmp: Comparison,
    pub gaps_intact: bool,
}

/// Device copies of a case's batch: A and C laid out as the operation says, the workspace,
/// and the launch's arguments (B and the pointer arrays are held until the case is done).
struct Placed<B: Backend> {
    a: B::Buffer,
    c: B::Buffer,
    workspace: B::Buffer,
    args: LaunchArgs,
    _held: (B::Buffer, Option<(B::Buffer, B::Buffer)>),
}

/// The rest of a launch around A and C already in place: B uploaded, the workspace of `grid`
/// blocks, with tensor pointers their two arrays, and the kernel's arguments.
fn bind<B: Backend>(gpu: &B, p: &Prepared<B>, case: &OpCase, a: B::Buffer, b_host: &[f64], c: B::Buffer, grid: usize) -> Result<Placed<B>> {
    let dtype = p.kernel.plan.request.dtype;
    let e = dtype.bytes() as usize;
    let b = gpu.alloc(b_host.len() * e)?;
    gpu.upload(&b, &to_device_bytes(dtype, b_host)?)?;
    let workspace = gpu.alloc(((p.kernel.plan.workspace_elems_per_block as usize) * grid).max(1) * e)?;
    let (slot_a, slot_c) = case.slots();
    let ptr_array = |base: u64, slots: &[usize]| -> Result<B::Buffer> {
        let bytes: Vec<u8> = slots.iter().flat_map(|s| (base + (*s * e) as u64).to_le_bytes()).collect();
        let buf = gpu.alloc(bytes.len())?;
        gpu.upload(&buf, &bytes)?;
        Ok(buf)
    };
    let ptrs = match case.op.layout {
        Layout::Pointers => Some((ptr_array(B::device_ptr(&a), &slot_a)?, ptr_array(B::device_ptr(&c), &slot_c)?)),
        _ => None,
    };
    let (a_arg, c_arg) = match &ptrs {
        Some((pa, pc)) => (B::device_ptr(pa), B::device_ptr(pc)),
        None => (B::device_ptr(&a), B::device_ptr(&c)),
    };
    let (sa, sc) = case.strides();
    let ranks = (case.op.matrices == Matrices::RankSum).then_some(case.ranks as i32);
    let op = (!case.op.is_seed()).then(|| OpParams { pointers: case.op.layout == Layout::Pointers, ranks, ..OpParams::new(sa as i64, sc as i64, case.alpha, case.beta) });
    let args = LaunchArgs { a: a_arg, b: B::device_ptr(&b), c: c_arg, workspace: B::device_ptr(&workspace), nfuncs: case.nfuncs as i32, nblocks: grid as i32, op };
    Ok(Placed { a, c, workspace, args, _held: (b, ptrs) })
}

/// A case's inputs on the device: A's tensors at their slots with NaN in the gaps, C's tensors
/// NaN (β = 0) or C0, the sentinel in C's gaps.
fn place<B: Backend>(gpu: &B, p: &Prepared<B>, case: &OpCase, data: &OpData, grid: usize) -> Result<Placed<B>> {
    let dtype = p.kernel.plan.request.dtype;
    let k3 = (case.k as usize).pow(3);
    let (sa, sc) = case.strides();
    let (slot_a, slot_c) = case.slots();
    let span = |stride: usize| stride * (case.nfuncs - 1) + k3;
    let mut a_host = vec![f64::NAN; span(sa)];
    let mut c_host = vec![SENTINEL; span(sc)];
    for n in 0..case.nfuncs {
        a_host[slot_a[n]..][..k3].copy_from_slice(&data.a[n * k3..][..k3]);
        let c = &mut c_host[slot_c[n]..][..k3];
        if case.beta == 0.0 { c.fill(f64::NAN) } else { c.copy_from_slice(&data.c0[n * k3..][..k3]) }
    }
    let upload = |v: &[f64]| -> Result<B::Buffer> {
        let buf = gpu.alloc(v.len() * dtype.bytes() as usize)?;
        gpu.upload(&buf, &to_device_bytes(dtype, v)?)?;
        Ok(buf)
    };
    bind(gpu, p, case, upload(&a_host)?, &data.b, upload(&c_host)?, grid)
}

fn kernel_of<B: Backend>(p: &Prepared<B>) -> Result<&B::Function> {
    match &p.task {
        Task::Kernel(f) => Ok(f),
        _ => Err(RuntimeError::Invalid(format!("{}: an operation needs a generated kernel", p.kernel.level))),
    }
}

/// The grid of one launch over `nfuncs` tensors: at most `max_blocks`, at most what fills the
/// device ([`Prepared::auto_grid`]), at most one block per tensor, and with `persistent(1)` no
/// more than the device holds at once ([`Prepared::grid_blocks`]), as the seed's launches.
pub fn grid<B: Backend>(p: &Prepared<B>, nfuncs: usize, max_blocks: Option<usize>) -> usize {
    let mut g = p.kernel.plan.work_blocks(nfuncs);
    if let Some(auto) = p.auto_grid() {
        g = g.min(auto);
    }
    if let Some(m) = max_blocks {
        g = g.min(m);
    }
    p.grid_blocks(g.max(1))
}

/// Runs `case` once with `p` (prepared for `case.op`) and checks it.
pub fn check<B: Backend>(gpu: &B, p: &Prepared<B>, case: &OpCase, max_blocks: Option<usize>) -> Result<OpOutcome> {
    if p.kernel.plan.op != case.op {
        return Err(RuntimeError::Invalid(format!("{} was generated for {}, not {}", p.kernel.entry, p.kernel.plan.op.describe(), case.op.describe())));
    }
    let data = case.data();
    let placed = place(gpu, p, case, &data, grid(p, case.nfuncs, max_blocks))?;
    gpu.poison(&placed.workspace)?;
    let stream = gpu.stream()?;
    gpu.launch(kernel_of(p)?, &stream, p.kernel.plan.threads, &placed.args)?;
    gpu.synchronize(&stream)?;
    let dtype = p.kernel.plan.request.dtype;
    let c_all = from_device_bytes(dtype, &gpu.download(&placed.c)?)?;
    let k3 = (case.k as usize).pow(3);
    let (_, slot_c) = case.slots();
    let mut got = Vec::with_capacity(case.nfuncs * k3);
    let mut inside = vec![false; c_all.len()];
    for s in &slot_c {
        got.extend_from_slice(&c_all[*s..][..k3]);
        inside[*s..][..k3].fill(true);
    }
    let gaps_intact = c_all.iter().zip(&inside).all(|(v, t)| *t || *v == SENTINEL);
    Ok(OpOutcome { cmp: Comparison::of_in(&got, &data.reference, dtype), gaps_intact })
}

/// The check a timed operation kernel passes first: `case` (a few tensors) with β = 0 over a C
/// of NaN, then with α = 1.5, β = -0.75 over a given C, each on inputs from `seed(i)`
/// (`i` = 0, 1); the worse relative error, or an error saying which case failed and why.
pub fn check_before_timing<B: Backend>(gpu: &B, p: &Prepared<B>, case: OpCase, seed: impl Fn(usize) -> u64) -> Result<f64> {
    let mut worst: f64 = 0.0;
    for (i, (alpha, beta)) in [(1.0, 0.0), (1.5, -0.75)].into_iter().enumerate() {
        let small = OpCase { alpha, beta, seed: seed(i), ..case };
        let o = check(gpu, p, &small, None)?;
        let tolerance = p.kernel.plan.request.dtype.tolerance();
        if !o.cmp.passes(tolerance) || !o.gaps_intact {
            return Err(RuntimeError::Invalid(format!("validation failed: max rel {:.2e}, {} non-finite (seed {})", o.cmp.max_rel, o.cmp.non_finite, small.seed)));
        }
        worst = worst.max(o.cmp.max_rel);
    }
    Ok(worst)
}

/// One launch of `p` (prepared for `op`) over host data: `nfuncs` contiguous tensors of `a`,
/// the kernel's `b` ([`mra_codegen::Operation::b_elems`]), C = α·T(A) + β·`c0` (`c0` read
/// only where β ≠ 0), at most `max_blocks` blocks; C as f64. What `Transformer::apply_op`
/// runs on a device or the emulator.
#[allow(clippy::too_many_arguments)]
pub fn run_host<B: Backend>(gpu: &B, p: &Prepared<B>, nfuncs: usize, a: &[f64], b: &[f64], c0: Option<&[f64]>, alpha: f64, beta: f64, ranks: usize, max_blocks: usize) -> Result<Vec<f64>> {
    let op = p.kernel.plan.op;
    if op.layout != Layout::Contiguous {
        return Err(RuntimeError::Invalid(format!("{}: host data is one contiguous batch", op.describe())));
    }
    let dtype = p.kernel.plan.request.dtype;
    let upload = |v: &[f64]| -> Result<B::Buffer> {
        let buf = gpu.alloc(v.len().max(1) * dtype.bytes() as usize)?;
        gpu.upload(&buf, &to_device_bytes(dtype, v)?)?;
        Ok(buf)
    };
    let k3 = (p.kernel.plan.request.k as usize).pow(3);
    let (a_buf, c_buf) = (upload(a)?, gpu.alloc(nfuncs * k3 * dtype.bytes() as usize)?);
    match c0 {
        Some(c0) if beta != 0.0 => gpu.upload(&c_buf, &to_device_bytes(dtype, c0)?)?,
        // β = 0 does not read C: NaN there shows a kernel that does.
        _ => gpu.poison(&c_buf)?,
    }
    let case = OpCase { op, k: p.kernel.plan.request.k, nfuncs, dir: None, ranks, alpha, beta, seed: 0 };
    let placed = bind(gpu, p, &case, a_buf, b, c_buf, grid(p, nfuncs, Some(max_blocks)))?;
    let stream = gpu.stream()?;
    gpu.launch(kernel_of(p)?, &stream, p.kernel.plan.threads, &placed.args)?;
    gpu.synchronize(&stream)?;
    from_device_bytes(dtype, &gpu.download(&placed.c)?)
}

/// The API regime for an operation: `case` (its batch far larger than L2, laid out as the
/// operation says, values tiled on the device from a random slice) launched once per
/// repetition, and a device-to-device copy of the batch's bytes, each timed with events after
/// the warm-up; returns the medians in µs (kernel, copy) and the grid.
pub fn time_api<B: Backend>(gpu: &B, p: &Prepared<B>, case: &OpCase, reps: usize, warmup: crate::warmup::Warmup) -> Result<(f64, f64, usize)> {
    let dtype = p.kernel.plan.request.dtype;
    let e = dtype.bytes() as usize;
    let k3 = (case.k as usize).pow(3);
    let (sa, sc) = case.strides();
    let span = |stride: usize| stride * (case.nfuncs - 1) + k3;
    let stream = gpu.stream()?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(case.seed);
    let seed_elems = (1 << 17).min(span(sa));
    let values: Vec<f64> = (0..seed_elems).map(|_| rng.random_range(-1.0..1.0)).collect();
    let (a, c) = (gpu.alloc(span(sa) * e)?, gpu.alloc(span(sc) * e)?);
    let seed_buf = gpu.alloc(seed_elems * e)?;
    gpu.upload(&seed_buf, &to_device_bytes(dtype, &values)?)?;
    for (buf, n) in [(&a, span(sa)), (&c, span(sc))] {
        gpu.copy_device(buf, 0, &seed_buf, 0, seed_elems.min(n) * e, &stream)?;
        super::api_regime::tile(gpu, buf, e, seed_elems.min(n), n, &stream)?;
    }
    drop(seed_buf);
    let b_host: Vec<f64> = (0..case.op.b_elems(case.k, case.ranks)).map(|_| rng.random_range(-1.0..1.0)).collect();
    let g = grid(p, case.nfuncs, None);
    let placed = bind(gpu, p, case, a, &b_host, c, g)?;
    let (a, c, args) = (&placed.a, &placed.c, placed.args);
    let f = kernel_of(p)?;
    let (start, end) = (gpu.event()?, gpu.event()?);
    let timed = |what: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        gpu.record(&start, &stream)?;
        what()?;
        gpu.record(&end, &stream)?;
        gpu.synchronize(&stream)?;
        Ok(gpu.elapsed_ms(&start, &end)? as f64 * 1000.0)
    };
    let mut kernel = || gpu.launch(f, &stream, p.kernel.plan.threads, &args);
    crate::warmup::run(warmup, None, &mut || timed(&mut kernel).map(|us| us / 1000.0))?;
    let kernel_us: Vec<f64> = (0..reps).map(|_| timed(&mut kernel)).collect::<Result<_>>()?;
    let bytes = case.nfuncs * k3 * e;
    let mut copy = || gpu.copy_device(c, 0, a, 0, bytes, &stream);
    crate::warmup::run(warmup, None, &mut || timed(&mut copy).map(|us| us / 1000.0))?;
    let copy_us: Vec<f64> = (0..reps).map(|_| timed(&mut copy)).collect::<Result<_>>()?;
    Ok((super::median(&kernel_us), super::median(&copy_us), g))
}

/// `case` timed as the seed's harness times a level (`cfg`: `-N`, `-M`, `-s`, `-n`, `-r`,
/// `--warmup`, `--stream-data`): per repetition `cfg.tasks` launches round-robin over
/// `streams`, which share one A and one C (or each has its own with `--stream-data private`)
/// and each its own workspace, timed from an event on stream 0 to one after every stream
/// joined; after the warm-up, the median repetition's µs per task, and the grid.
pub fn time_harness<B: Backend>(gpu: &B, p: &Prepared<B>, case: &OpCase, cfg: &super::HarnessConfig, streams: &[B::Stream]) -> Result<(f64, usize)> {
    let dtype = p.kernel.plan.request.dtype;
    let e = dtype.bytes() as usize;
    let k3 = (case.k as usize).pow(3);
    let (sa, sc) = case.strides();
    let span = |stride: usize| stride * (case.nfuncs - 1) + k3;
    let mut rng = rand::rngs::StdRng::seed_from_u64(case.seed);
    let seed_elems = (1 << 17).min(span(sa));
    let values: Vec<f64> = (0..seed_elems).map(|_| rng.random_range(-1.0..1.0)).collect();
    let seed_buf = gpu.alloc(seed_elems * e)?;
    gpu.upload(&seed_buf, &to_device_bytes(dtype, &values)?)?;
    let b_host: Vec<f64> = (0..case.op.b_elems(case.k, case.ranks)).map(|_| rng.random_range(-1.0..1.0)).collect();
    let g = grid(p, case.nfuncs, Some(cfg.max_blocks));
    let sets = if cfg.stream_data == super::config::StreamData::Private { streams.len() } else { 1 };
    let mut placed = Vec::new();
    for _ in 0..sets {
        let (a, c) = (gpu.alloc(span(sa) * e)?, gpu.alloc(span(sc) * e)?);
        for (buf, n) in [(&a, span(sa)), (&c, span(sc))] {
            gpu.copy_device(buf, 0, &seed_buf, 0, seed_elems.min(n) * e, &streams[0])?;
            super::api_regime::tile(gpu, buf, e, seed_elems.min(n), n, &streams[0])?;
        }
        placed.push(bind(gpu, p, case, a, &b_host, c, g)?);
    }
    gpu.synchronize(&streams[0])?;
    drop(seed_buf);
    // Shared stream data: the other streams launch on set 0's A, B and C with a workspace each.
    let mut workspaces = Vec::new();
    let mut args = Vec::new();
    for s in 0..streams.len() {
        match placed.get(s) {
            Some(pl) => args.push(pl.args),
            None => {
                let ws = gpu.alloc(((p.kernel.plan.workspace_elems_per_block as usize) * g).max(1) * e)?;
                args.push(LaunchArgs { workspace: B::device_ptr(&ws), ..placed[0].args });
                workspaces.push(ws);
            }
        }
    }
    let f = kernel_of(p)?;
    let ms = super::timing::time_launches(gpu, streams, cfg, &|s| gpu.launch(f, &streams[s], p.kernel.plan.threads, &args[s]))?;
    Ok((super::median(&ms) * 1000.0 / cfg.tasks as f64, g))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::fake::{level, session};
    use mra_codegen::{arch, DType, Request};

    /// An operation's launch sizes its grid as the seed's launches do: `persistent(1)` (fused-pipe
    /// from K = 20) no more blocks than the device holds, else min(N, what fills the device).
    /// Expected grids by hand.
    #[test]
    fn an_operations_grid_is_persistent_where_its_kernel_is() {
        let op = Operation { matrices: Matrices::PerDim, layout: Layout::Contiguous, scaled: true };
        for (k, resident, nfuncs, want) in [(20, Some(132), 30000, 132), (20, Some(132), 100, 100), (16, Some(132), 30000, 30000.min(132 * crate::harness::AUTO_WAVES))] {
            let s = session(1.0);
            s.gpu.resident.set(resident);
            let req = Request { k, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 };
            let kernel = mra_codegen::generate_op(&level("fused-pipe").at(req), req, op).unwrap();
            assert_eq!(kernel.plan.persistent, k == 20, "the shipped values: persistent(1) at K = 20");
            let p = s.prepare_kernel(kernel).unwrap();
            assert_eq!(grid(&p, nfuncs, None), want, "K={k} N={nfuncs}");
        }
    }

    /// `sweep --op` in the seed harness: per repetition `tasks` launches round-robin over the
    /// streams, each stream its own workspace; with shared stream data every stream on stream
    /// 0's A and C (the seed harness's), with private data each its own; the operation's
    /// strides, α and β in every launch; µs per task from the median repetition.
    #[test]
    fn an_operation_is_timed_as_the_harness_times_a_level() {
        use crate::harness::config::StreamData;
        let op = Operation { matrices: Matrices::PerDim, layout: Layout::Strided, scaled: true };
        for data in [StreamData::Shared, StreamData::Private] {
            let s = session(500.0);
            s.gpu.lazy.set(true); // timing only: the fake computes the seed's operation, not this one
            let req = Request { k: 6, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 };
            let p = s.prepare_kernel(mra_codegen::generate_op(&level("L3").at(req), req, op).unwrap()).unwrap();
            let cfg = crate::harness::HarnessConfig { stream_data: data, ..crate::harness::fake::cfg(9, 5, 3, 2) };
            let streams = s.streams(cfg.streams).unwrap();
            let case = OpCase { op, k: 6, nfuncs: 9, dir: None, ranks: 1, alpha: 1.0, beta: 1.0, seed: 3 };
            s.gpu.ops.borrow_mut().clear();
            let (us, grid) = time_harness(&s.gpu, &p, &case, &cfg, &streams).unwrap();
            assert_eq!(us, 500.0 * 1000.0 / 5.0, "µs per task");
            assert_eq!(grid, 9, "one block per tensor, under -M");
            let launches = s.gpu.launches();
            assert_eq!(launches.len(), (1 + 2) * 5, "one untimed repetition of 500 ms, two timed, 5 tasks each");
            for (t, (stream, args)) in launches.iter().enumerate() {
                let si = t % 5 % 3;
                assert_eq!(*stream, streams[si], "task {t} on stream {si}");
                let first = &launches[si].1;
                assert_eq!((args.a, args.c, args.workspace), (first.a, first.c, first.workspace), "a stream's buffers stay its own");
                let op = args.op.expect("the operation's parameters");
                assert_eq!((op.a_stride, op.c_stride, op.alpha(), op.beta()), (6 * 36 + 2, 6 * 36 + 6, 1.0, 1.0));
                assert_eq!((args.nfuncs, args.nblocks), (9, 9));
            }
            let (s0, s1, s2) = (&launches[0].1, &launches[1].1, &launches[2].1);
            assert!(s0.workspace != s1.workspace && s1.workspace != s2.workspace && s0.workspace != s2.workspace, "a workspace per stream");
            assert_eq!(s0.a == s1.a && s0.c == s2.c, data == StreamData::Shared, "{data:?}: shared A and C, or each stream its own");
        }
    }
}


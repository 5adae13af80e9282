//! The harness on a fake backend that runs on the host: it records every call and
//! executes kernels and GEMMs with the FP64 CPU reference, so the round-robin, the
//! warm-up, the repetitions, the poisoning and the GEMM formulations of the library levels
//! are checked without a GPU.

use super::{from_device_bytes, to_device_bytes, validate, Backend, Buffers, Gemm, HarnessConfig, Inputs, LaunchArgs, Prepared, Session, StreamData, Warmup};
use crate::cache::KernelCache;
use crate::error::Result;
use crate::reference;
use crate::validate::Comparison;
use mra_codegen::{Arch, DType, Schedule};
use std::cell::{Cell, RefCell};

/// One call the fake recorded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    Upload(usize),
    Poison(usize),
    Copy { dst: usize, src: usize, bytes: usize, stream: usize },
    Launch { stream: usize, entry: String, args: LaunchArgs },
    Gemm { stream: usize, handle: usize },
    NewBlas(usize),
    Record { event: usize, stream: usize },
    Wait { stream: usize, event: usize },
    Sync(usize),
}

/// Buffers are host byte vectors at address (index + 1) << 32; streams, events and BLAS
/// handles are numbers; every repetition takes `rep_ms`.
pub(crate) struct Fake {
    arch: &'static Arch,
    mem: RefCell<Vec<Vec<u8>>>,
    pub(crate) ops: RefCell<Vec<Op>>,
    ids: Cell<usize>,
    rep_ms: f32,
    /// Kernels write nothing: what poisoning must catch.
    pub(crate) lazy: Cell<bool>,
    /// Kernels launched with this many threads write nothing (0: none): a wrong candidate.
    pub(crate) wrong_threads: Cell<u32>,
    /// Blocks of any kernel the fake device holds at once (None: it cannot tell).
    pub(crate) resident: Cell<Option<usize>>,
    /// Host time each launch takes to submit (a slow host).
    pub(crate) launch_delay: Cell<std::time::Duration>,
    /// Clusters of any cluster kernel the fake device holds at once (None: it cannot tell).
    pub(crate) clusters: Cell<Option<usize>>,
}

impl Fake {
    pub(crate) fn new(rep_ms: f32) -> Fake {
        let arch = mra_codegen::arch::find("sm_90").unwrap();
        Fake { arch, mem: RefCell::default(), ops: RefCell::default(), ids: Cell::new(0), rep_ms, lazy: Cell::new(false), wrong_threads: Cell::new(0), resident: Cell::new(None), launch_delay: Cell::new(std::time::Duration::ZERO), clusters: Cell::new(None) }
    }

    /// The launches (thread counts) and downloads in order: validation must come first.
    pub(crate) fn launch_count(&self) -> usize {
        self.launches().len()
    }

    fn id(&self) -> usize {
        self.ids.set(self.ids.get() + 1);
        self.ids.get()
    }

    fn log(&self, op: Op) {
        self.ops.borrow_mut().push(op);
    }

    fn read(&self, ptr: u64, n: usize) -> Vec<f64> {
        let mem = self.mem.borrow();
        let (buf, off) = (&mem[(ptr >> 32) as usize - 1], (ptr & 0xffff_ffff) as usize);
        from_device_bytes(DType::F64, &buf[off..off + 8 * n]).unwrap()
    }

    fn write(&self, ptr: u64, v: &[f64]) {
        let mut mem = self.mem.borrow_mut();
        let (buf, off) = (&mut mem[(ptr >> 32) as usize - 1], (ptr & 0xffff_ffff) as usize);
        buf[off..off + 8 * v.len()].copy_from_slice(&to_device_bytes(DType::F64, v).unwrap());
    }

    pub(crate) fn launches(&self) -> Vec<(usize, LaunchArgs)> {
        self.ops.borrow().iter().filter_map(|o| if let Op::Launch { stream, args, .. } = o { Some((*stream, *args)) } else { None }).collect()
    }
}

impl Backend for Fake {
    type Buffer = usize;
    type Stream = usize;
    type Event = usize;
    type Function = String;
    type Blas = usize;
    type Compiler = ();
    type Compiled = String;
    const BLAS_NAME: &'static str = "fakeBLAS";

    fn device_name(&self) -> &str {
        "host"
    }
    fn arch(&self) -> &'static Arch {
        self.arch
    }
    fn memory(&self) -> Result<(usize, usize)> {
        Ok((1 << 30, 1 << 30))
    }
    fn alloc(&self, bytes: usize) -> Result<usize> {
        let mut mem = self.mem.borrow_mut();
        mem.push(vec![0x5a; bytes]);
        Ok(mem.len() - 1)
    }
    fn device_ptr(buf: &usize) -> u64 {
        (*buf as u64 + 1) << 32
    }
    fn upload(&self, buf: &usize, bytes: &[u8]) -> Result<()> {
        self.log(Op::Upload(*buf));
        self.mem.borrow_mut()[*buf].copy_from_slice(bytes);
        Ok(())
    }
    fn download(&self, buf: &usize) -> Result<Vec<u8>> {
        Ok(self.mem.borrow()[*buf].clone())
    }
    fn copy_device(&self, dst: &usize, dst_at: usize, src: &usize, src_at: usize, bytes: usize, stream: &usize) -> Result<()> {
        self.log(Op::Copy { dst: *dst, src: *src, bytes, stream: *stream });
        let from = self.mem.borrow()[*src][src_at..src_at + bytes].to_vec();
        self.mem.borrow_mut()[*dst][dst_at..dst_at + bytes].copy_from_slice(&from);
        Ok(())
    }
    fn poison(&self, buf: &usize) -> Result<()> {
        self.log(Op::Poison(*buf));
        self.mem.borrow_mut()[*buf].fill(0xff);
        Ok(())
    }
    fn stream(&self) -> Result<usize> {
        Ok(self.id())
    }
    fn synchronize(&self, stream: &usize) -> Result<()> {
        self.log(Op::Sync(*stream));
        Ok(())
    }
    fn event(&self) -> Result<usize> {
        Ok(self.id())
    }
    fn record(&self, event: &usize, stream: &usize) -> Result<()> {
        self.log(Op::Record { event: *event, stream: *stream });
        Ok(())
    }
    fn wait(&self, stream: &usize, event: &usize) -> Result<()> {
        self.log(Op::Wait { stream: *stream, event: *event });
        Ok(())
    }
    fn elapsed_ms(&self, _: &usize, _: &usize) -> Result<f32> {
        Ok(self.rep_ms)
    }
    fn compile(&self, _: &(), _: &str, entry: &str, _: &KernelCache) -> Result<String> {
        Ok(entry.to_string())
    }
    fn compile_note(_: &(), entry: &String) -> String {
        format!("{entry} compiled by nobody")
    }
    fn load(&self, entry: &String, _: &str, _: u32) -> Result<String> {
        Ok(entry.clone())
    }
    fn resident_blocks(&self, _: &String, _: u32) -> Result<Option<usize>> {
        Ok(self.resident.get())
    }
    fn resident_clusters(&self, _: &String, _: u32, _: u32) -> Result<Option<usize>> {
        Ok(self.clusters.get())
    }
    /// Runs the copy level, the Kronecker matrix build (as the generated kernel documents
    /// it: M[alpha * K^3 + beta] = B(a,i) B(b,j) B(c,k)) or any other level as the transform.
    fn launch(&self, entry: &String, stream: &usize, threads: u32, args: &LaunchArgs) -> Result<()> {
        self.log(Op::Launch { stream: *stream, entry: entry.clone(), args: *args });
        std::thread::sleep(self.launch_delay.get());
        if self.lazy.get() || self.wrong_threads.get() == threads {
            return Ok(());
        }
        let k = (self.mem.borrow()[(args.b >> 32) as usize - 1].len() as f64 / 8.0).sqrt() as usize;
        let (b, k3, n) = (self.read(args.b, k * k), k * k * k, args.nfuncs as usize);
        if entry.ends_with("_build") {
            let m: Vec<f64> = (0..k3 * k3)
                .map(|e| {
                    let (alpha, beta) = (e / k3, e % k3);
                    let at = |x: usize, y: usize| b[x * k + y];
                    at(alpha / (k * k), beta / (k * k)) * at(alpha / k % k, beta / k % k) * at(alpha % k, beta % k)
                })
                .collect();
            self.write(args.c, &m);
        } else if entry.starts_with("mra_copy") {
            self.write(args.c, &self.read(args.a, n * k3));
        } else {
            self.write(args.c, &reference::transform_batch(k, &self.read(args.a, n * k3), &b).unwrap());
        }
        Ok(())
    }
    fn blas(&self) -> Result<usize> {
        let h = self.id();
        self.log(Op::NewBlas(h));
        Ok(h)
    }
    /// Column-major `C = op(A) op(B)` for each batch entry, in f64.
    fn gemm(&self, handle: &usize, stream: &usize, dtype: DType, g: &Gemm) -> Result<()> {
        assert_eq!(dtype, DType::F64);
        self.log(Op::Gemm { stream: *stream, handle: *handle });
        let (m, n, k) = (g.m as usize, g.n as usize, g.k as usize);
        let span = |ld: i32, cols: usize| ld as usize * (cols - 1) + ld as usize;
        for e in 0..g.batch as u64 {
            let at = |p: u64, stride: i64| p + e * stride as u64 * 8;
            let a = self.read(at(g.a, g.stride_a), span(g.lda, if g.transa { m } else { k }));
            let b = self.read(at(g.b, g.stride_b), span(g.ldb, if g.transb { k } else { n }));
            let op_a = |i: usize, p: usize| if g.transa { a[p + i * g.lda as usize] } else { a[i + p * g.lda as usize] };
            let op_b = |p: usize, j: usize| if g.transb { b[j + p * g.ldb as usize] } else { b[p + j * g.ldb as usize] };
            let c_ptr = at(g.c, g.stride_c);
            let mut c = self.read(c_ptr, span(g.ldc, n));
            for j in 0..n {
                for i in 0..m {
                    c[i + j * g.ldc as usize] = (0..k).map(|p| op_a(i, p) * op_b(p, j)).sum();
                }
            }
            self.write(c_ptr, &c);
        }
        Ok(())
    }
}

pub(crate) fn session(rep_ms: f32) -> Session<Fake> {
    Session { gpu: Fake::new(rep_ms), compiler: (), cache: KernelCache::disabled() }
}

pub(crate) fn level(name: &str) -> Schedule {
    mra_codegen::levels::find(name).unwrap()
}

pub(crate) fn cfg(nfuncs: usize, tasks: usize, streams: usize, reps: usize) -> HarnessConfig {
    HarnessConfig { nfuncs, max_blocks: 512, tasks, streams, reps, warmup: Warmup::default(), stream_data: StreamData::Shared }
}

/// Level `name` at K = `k` in f64, prepared, with its buffers for `c`.
pub(crate) fn prepared(s: &Session<Fake>, name: &str, k: u32, c: &HarnessConfig) -> (Prepared<Fake>, Buffers<Fake>) {
    let p = s.prepare(&level(name), k, DType::F64).unwrap();
    let bufs = s.allocate(c, &p.kernel.plan).unwrap();
    (p, bufs)
}

/// [`validate`] on fresh inputs from `seed`.
pub(crate) fn validated(s: &Session<Fake>, p: &Prepared<Fake>, bufs: &Buffers<Fake>, seed: u64) -> Comparison {
    let inputs = Inputs::random(DType::F64, p.kernel.plan.request.k, bufs.nfuncs, seed);
    validate(&s.gpu, p, bufs, &inputs).unwrap()
}

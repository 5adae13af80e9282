//! The CPU wave emulator as a [`Backend`]: the harness and `validate` run on it exactly as on a
//! GPU. "Device memory" is host memory; a launch writes the kernel's buffers to files, runs the
//! emulated kernel's executable on them and reads the outputs back; streams and events are
//! trivial (every launch completes before it returns). BLAS calls are refused: library levels
//! are not emulated.

use super::compile::{Built, Checker, CompileError, HostClang};
use super::layouts::Sabotage;
use super::source::emulated_source;
use crate::backend::{Backend, Gemm, LaunchArgs};
use crate::cache::KernelCache;
use crate::error::{Result, RuntimeError};
use crate::hip::ScratchDir;
use mra_codegen::{Arch, DType};
use std::cell::RefCell;
use std::collections::HashMap;
use std::process::Command;
use std::rc::{Rc, Weak};

/// One "device" allocation: host bytes, addressed by the allocation's own address.
pub struct EmuBuffer {
    bytes: RefCell<Vec<u8>>,
    /// Its emulated device address: allocations get disjoint ranges, so an address inside
    /// one (a tensor pointer) names it.
    addr: u64,
}

/// The emulated GPU of one AMD arch.
pub struct Emulator {
    arch: &'static Arch,
    name: String,
    sabotage: Sabotage,
    checker: Checker,
    /// Every live allocation by its address, so launch arguments (raw addresses) find theirs.
    buffers: RefCell<HashMap<u64, Weak<EmuBuffer>>>,
    /// The address the next allocation gets (each a 256-byte-aligned range after the last).
    next_addr: std::cell::Cell<u64>,
    /// Executables built while the kernel cache is off, and the buffer files of launches.
    scratch: ScratchDir,
    /// Matrix instructions the launches so far executed (one per wave and instruction), as
    /// the emulated executables count them.
    matrix_instructions: std::cell::Cell<u64>,
}

impl Emulator {
    /// An emulator for `arch` (AMD only: the generated HIP is what it executes).
    pub fn new(arch: &'static Arch) -> Result<Emulator> {
        Emulator::with_sabotage(arch, Sabotage::None)
    }

    /// An emulator whose layouts carry a deliberate error (tests only: shows a wrong layout fails).
    pub fn with_sabotage(arch: &'static Arch, sabotage: Sabotage) -> Result<Emulator> {
        if arch.vendor != mra_codegen::Vendor::Amd {
            return Err(RuntimeError::Invalid(format!("--emulate runs the generated HIP of AMD archs; {} is NVIDIA", arch.name)));
        }
        let scratch = ScratchDir::new("emulate")?;
        let name = format!("CPU wave emulator ({}, wave{})", arch.name, arch.wave_size);
        Ok(Emulator { arch, name, sabotage, checker: Checker::Bounds, buffers: RefCell::new(HashMap::new()), next_addr: std::cell::Cell::new(1 << 40), scratch, matrix_instructions: std::cell::Cell::new(0) })
    }

    /// The same emulator with `checker`'s sanitizer in its executables (ThreadSanitizer for
    /// `validate --emulate --races`).
    pub fn checking(mut self, checker: Checker) -> Emulator {
        self.checker = checker;
        if checker == Checker::Races {
            self.name = format!("CPU wave emulator ({}, wave{}, race check)", self.arch.name, self.arch.wave_size);
        }
        self
    }

    fn buffer_at(&self, addr: u64) -> Result<Rc<EmuBuffer>> {
        self.buffers
            .borrow()
            .get(&addr)
            .and_then(Weak::upgrade)
            .ok_or_else(|| RuntimeError::Invalid(format!("emulator: launch argument {addr:#x} is not a live allocation")))
    }

    /// A pointer-array launch: the A and C arrays (`buffers[0]`, `[2]`) rewritten as byte
    /// offsets into the one live allocation each points into (their files), those two pools
    /// written beside them; returns C's pool and the pools' files.
    fn pointer_pools(&self, buffers: &[Rc<EmuBuffer>], files: &[std::path::PathBuf], nfuncs: usize) -> Result<(Rc<EmuBuffer>, [std::path::PathBuf; 2])> {
        let mut c_pool = None;
        let paths = [self.scratch.path.join("a_pool.bin"), self.scratch.path.join("c_pool.bin")];
        for (i, which) in [0usize, 2].into_iter().enumerate() {
            let ptrs: Vec<u64> = buffers[which].bytes.borrow().chunks_exact(8).take(nfuncs).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
            let first = *ptrs.first().ok_or_else(|| RuntimeError::Invalid("emulator: an empty tensor-pointer array".into()))?;
            let (start, pool) = self
                .buffers
                .borrow()
                .iter()
                .filter_map(|(&at, b)| Some((at, b.upgrade()?)))
                .find(|(at, b)| first >= *at && first < at + b.bytes.borrow().len() as u64)
                .ok_or_else(|| RuntimeError::Invalid(format!("emulator: tensor pointer {first:#x} is in no live allocation")))?;
            let len = pool.bytes.borrow().len() as u64;
            let mut offsets = Vec::with_capacity(ptrs.len() * 8);
            for p in &ptrs {
                if *p < start || *p >= start + len {
                    return Err(RuntimeError::Invalid(format!("emulator: the tensor pointers of one array must lie in one allocation ({p:#x} does not)")));
                }
                offsets.extend_from_slice(&(p - start).to_le_bytes());
            }
            let write = |path: &std::path::Path, bytes: &[u8]| std::fs::write(path, bytes).map_err(|e| RuntimeError::Invalid(format!("emulator: writing {}: {e}", path.display())));
            write(&files[which], &offsets)?;
            write(&paths[i], &pool.bytes.borrow())?;
            if which == 2 {
                c_pool = Some(pool);
            }
        }
        Ok((c_pool.expect("C's pool"), paths))
    }

    /// Builds the emulated executables of `kernels` into the kernel cache (or this emulator's
    /// scratch directory) with `jobs` parallel compiles, so later [`Backend::compile`] calls
    /// find them built. Library levels' kernels are skipped.
    pub fn prebuild(&self, clang: &HostClang, kernels: &[mra_codegen::Kernel], cache: &KernelCache, jobs: usize) -> Result<()> {
        let sources: Vec<(String, String)> = kernels
            .iter()
            .filter(|k| !k.entry.is_empty() && !matches!(k.plan.body, mra_codegen::plan::Body::Library(_)))
            .map(|k| Ok((self.source(&k.source, &k.entry)?, k.entry.clone())))
            .collect::<Result<_>>()?;
        let next = std::sync::atomic::AtomicUsize::new(0);
        let scratch = self.scratch.path.clone();
        let first_error = std::sync::Mutex::new(None);
        let checker = self.checker;
        std::thread::scope(|scope| {
            for _ in 0..jobs.max(1) {
                scope.spawn(|| loop {
                    // Interrupted: no new compile starts (one in flight is stopped by its wait).
                    if crate::interrupt::pending().is_some() {
                        break;
                    }
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((src, entry)) = sources.get(i) else { break };
                    if let Err(e) = clang.build(src, entry, cache, &scratch, checker) {
                        first_error.lock().unwrap().get_or_insert(e);
                        break;
                    }
                });
            }
        });
        crate::interrupt::check()?;
        match first_error.into_inner().unwrap() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// What its executables check besides the results.
    pub fn checker(&self) -> Checker {
        self.checker
    }

    /// Matrix instructions executed by every launch on this emulator so far, each counted once
    /// per wave (what a GPU's instruction counters would report).
    pub fn matrix_instructions(&self) -> u64 {
        self.matrix_instructions.get()
    }

    /// The emulated source of a generated kernel, as this emulator compiles it.
    pub fn source(&self, gpu_source: &str, entry: &str) -> Result<String> {
        emulated_source(gpu_source, entry, self.arch.wave_size, self.sabotage).map_err(|e| RuntimeError::Invalid(format!("emulator: {e}")))
    }
}

/// An emulated kernel ready to run.
#[derive(Clone, Debug)]
pub struct EmuFunction {
    built: Built,
    entry: String,
}

impl From<CompileError> for RuntimeError {
    fn from(e: CompileError) -> RuntimeError {
        RuntimeError::Invalid(e.to_string())
    }
}

fn not_emulated<T>(what: &str) -> Result<T> {
    Err(RuntimeError::Invalid(format!("{what} is not emulated (library levels run only on a GPU)")))
}

impl Backend for Emulator {
    type Buffer = Rc<EmuBuffer>;
    type Stream = ();
    type Event = ();
    type Function = EmuFunction;
    type Blas = ();
    type Compiler = HostClang;
    type Compiled = EmuFunction;

    const BLAS_NAME: &'static str = "BLAS (not emulated)";

    fn device_name(&self) -> &str {
        &self.name
    }
    fn arch(&self) -> &'static Arch {
        self.arch
    }
    fn memory(&self) -> Result<(usize, usize)> {
        // The emulator is for small N; say there is room and let the allocator decide.
        Ok((1 << 34, 1 << 34))
    }
    fn alloc(&self, bytes: usize) -> Result<Rc<EmuBuffer>> {
        // The emulator's device memory is host memory: allocated fallibly, as the host buffers.
        let mut zeros = crate::memory::try_vec(bytes, "an emulated device buffer")?;
        zeros.resize(bytes, 0u8);
        let addr = self.next_addr.get();
        self.next_addr.set(addr + (bytes as u64).div_ceil(256).max(1) * 256 + 256);
        let buf = Rc::new(EmuBuffer { bytes: RefCell::new(zeros), addr });
        let mut map = self.buffers.borrow_mut();
        map.retain(|_, w| w.strong_count() > 0);
        map.insert(Self::device_ptr(&buf), Rc::downgrade(&buf));
        Ok(buf)
    }
    fn device_ptr(buf: &Rc<EmuBuffer>) -> u64 {
        buf.addr
    }
    fn upload(&self, buf: &Rc<EmuBuffer>, bytes: &[u8]) -> Result<()> {
        let mut b = buf.bytes.borrow_mut();
        if b.len() != bytes.len() {
            return Err(RuntimeError::Invalid(format!("emulator: upload of {} bytes into a buffer of {}", bytes.len(), b.len())));
        }
        b.copy_from_slice(bytes);
        Ok(())
    }
    fn download(&self, buf: &Rc<EmuBuffer>) -> Result<Vec<u8>> {
        let bytes = buf.bytes.borrow();
        let mut copy = crate::memory::try_vec(bytes.len(), "a downloaded emulated buffer")?;
        copy.extend_from_slice(&bytes);
        Ok(copy)
    }
    fn copy_device(&self, dst: &Rc<EmuBuffer>, dst_at: usize, src: &Rc<EmuBuffer>, src_at: usize, bytes: usize, _stream: &()) -> Result<()> {
        let from = src.bytes.borrow()[src_at..src_at + bytes].to_vec();
        dst.bytes.borrow_mut()[dst_at..dst_at + bytes].copy_from_slice(&from);
        Ok(())
    }
    fn poison(&self, buf: &Rc<EmuBuffer>) -> Result<()> {
        buf.bytes.borrow_mut().fill(0xFF);
        Ok(())
    }
    fn stream(&self) -> Result<()> {
        Ok(())
    }
    fn synchronize(&self, _: &()) -> Result<()> {
        Ok(())
    }
    fn event(&self) -> Result<()> {
        Ok(())
    }
    fn record(&self, _: &(), _: &()) -> Result<()> {
        Ok(())
    }
    fn wait(&self, _: &(), _: &()) -> Result<()> {
        Ok(())
    }
    fn elapsed_ms(&self, _: &(), _: &()) -> Result<f32> {
        Err(RuntimeError::Invalid("the CPU wave emulator does not time kernels (use it with `validate --emulate`)".into()))
    }

    fn compile(&self, clang: &HostClang, source: &str, entry: &str, cache: &KernelCache) -> Result<EmuFunction> {
        let emu = self.source(source, entry)?;
        let built = clang.build(&emu, entry, cache, &self.scratch.path, self.checker)?;
        Ok(EmuFunction { built, entry: entry.to_string() })
    }
    fn compile_note(clang: &HostClang, f: &EmuFunction) -> String {
        match f.built.cached {
            true => format!("emulated (CPU executable from the kernel cache, {})", clang.describe()),
            false => format!("emulated (compiled for the CPU with {} in {:.1} s)", clang.describe(), f.built.seconds),
        }
    }
    fn load(&self, compiled: &EmuFunction, entry: &str, _dynamic_shared_bytes: u32) -> Result<EmuFunction> {
        if entry != compiled.entry {
            return Err(RuntimeError::Invalid(format!("emulator: {entry} is not in the executable of {}", compiled.entry)));
        }
        Ok(compiled.clone())
    }
    fn launch(&self, f: &EmuFunction, _: &(), threads: u32, args: &LaunchArgs) -> Result<()> {
        let buffers = [args.a, args.b, args.c, args.workspace].map(|a| self.buffer_at(a));
        let buffers: Vec<Rc<EmuBuffer>> = buffers.into_iter().collect::<Result<_>>()?;
        let files: Vec<std::path::PathBuf> = ["a", "b", "c", "workspace"].iter().map(|n| self.scratch.path.join(format!("{n}.bin"))).collect();
        for (buf, path) in buffers.iter().zip(&files) {
            std::fs::write(path, &*buf.bytes.borrow()).map_err(|e| RuntimeError::Invalid(format!("emulator: writing {}: {e}", path.display())))?;
        }
        // Tensor pointers become byte offsets into the one buffer each array points into.
        let pools = match args.op {
            Some(op) if op.pointers => Some(self.pointer_pools(&buffers, &files, args.nfuncs.max(0) as usize)?),
            _ => None,
        };
        let mut run = Command::new(&f.built.exe);
        run.arg(threads.to_string())
            .arg(args.nblocks.to_string())
            .arg(args.nfuncs.to_string())
            .args(&files);
        if let Some(op) = args.op {
            run.args([op.a_stride.to_string(), op.c_stride.to_string(), op.alpha_bits.to_string(), op.beta_bits.to_string()]);
            if let Some(ranks) = op.ranks {
                run.arg(format!("ranks={ranks}"));
            }
        }
        if let Some((_, paths)) = &pools {
            run.args(paths);
        }
        run
            // Leaks at exit are not kernel errors; any other ASan report stops the run.
            .env("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0:exitcode=4")
            // The first race stops the run (it is the kernel's error, like an ASan report).
            .env("TSAN_OPTIONS", "halt_on_error=1:exitcode=66:report_signal_unsafe=0");
        // No time limit (a kernel is not a tool that hangs), but an interrupt stops it.
        let out = crate::process::output_within(&mut run, None).map_err(|e| match e.kind() {
            std::io::ErrorKind::Interrupted => RuntimeError::Interrupted,
            _ => RuntimeError::Invalid(format!("emulator: running {}: {e}", f.built.exe.display())),
        })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            // ASan warns once that fibers may confuse it; that is not the kernel's fault.
            let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty() && !l.contains("makecontext/swapcontext")).collect();
            let report: Vec<&str> = match lines.len() {
                0..=16 => lines.clone(),
                n => lines[..10].iter().chain(["..."].iter()).chain(lines[n - 5..].iter()).copied().collect(),
            };
            // The first line says what went wrong (reports show only it); the rest follows.
            let what = lines
                .iter()
                .find(|l| l.contains("ERROR: AddressSanitizer") || l.contains("WARNING: ThreadSanitizer"))
                .or_else(|| lines.iter().rev().find(|l| l.starts_with("emulator:")))
                .or(lines.first())
                .map_or("no message", |l| l.trim());
            return Err(RuntimeError::Invalid(format!(
                "emulated kernel {} ({threads} threads, {} blocks) failed ({}): {what}\n{}",
                f.entry,
                args.nblocks,
                out.status,
                report.join("\n")
            )));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let executed = stdout.lines().find_map(|l| l.strip_prefix("matrix instructions ")?.trim().parse::<u64>().ok());
        let executed = executed.ok_or_else(|| RuntimeError::Invalid(format!("emulated kernel {} did not report its matrix instructions", f.entry)))?;
        self.matrix_instructions.set(self.matrix_instructions.get() + executed);
        // With tensor pointers, C's pool comes back (the pointer array is as it was).
        let written: Vec<(&Rc<EmuBuffer>, &std::path::PathBuf)> = match &pools {
            Some((c_pool, paths)) => vec![(c_pool, &paths[1]), (&buffers[3], &files[3])],
            None => buffers[2..].iter().zip(&files[2..]).collect(),
        };
        for (buf, path) in written {
            let bytes = std::fs::read(path).map_err(|e| RuntimeError::Invalid(format!("emulator: reading {}: {e}", path.display())))?;
            let mut b = buf.bytes.borrow_mut();
            if bytes.len() != b.len() {
                return Err(RuntimeError::Invalid(format!("emulator: {} came back with {} bytes, not {}", path.display(), bytes.len(), b.len())));
            }
            b.copy_from_slice(&bytes);
        }
        Ok(())
    }

    fn blas(&self) -> Result<()> {
        not_emulated("BLAS")
    }
    fn gemm(&self, _: &(), _: &(), _: DType, _: &Gemm) -> Result<()> {
        not_emulated("a BLAS GEMM")
    }
}

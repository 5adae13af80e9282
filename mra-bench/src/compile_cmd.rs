//! `--compile-only`: generate a level for --arch, compile it with the compiler found (no GPU
//! needed) and report per kernel what the compiler made of it: registers, LDS / shared memory,
//! scratch and spills, the occupancy this allows on the arch, and the matrix-core instructions
//! in the code (counted in the disassembly, not estimated). One line (or, with --json, one JSON
//! object) per level and K; `-l all` compiles every level, `-K 10,12,32` each K in turn.
//!
//! AMD: hiprtc from the installed ROCm where its version supports the arch, else clang with the
//! AMDGPU target (`--compiler hiprtc|clang` forces one; a forced compiler that cannot do the
//! arch is refused, never called). Resources from the code object's metadata note, MFMA/WMMA
//! counts from `llvm-objdump -d`. NVIDIA: NVRTC with the ptxas report; DMMA/HMMA counted in
//! `cuobjdump -sass` (or `nvdisasm`) output where one is on PATH. The kernel cache is not used:
//! the point is to watch the compiler.

use crate::cli::RunArgs;
use crate::select::{self, CmdResult};
use mra_codegen::plan::Body;
use mra_codegen::{Arch, DType, Kernel, Request, Vendor};
use mra_runtime::cuda::nvrtc::{Nvrtc, ResourceReport};
use mra_runtime::cuda::occupancy::{self as nv_occ, NvOccupancy};
use mra_runtime::hip::compile::{AmdCompiler, Choice};
use mra_runtime::hip::occupancy::{self as amd_occ, AmdOccupancy, KernelUse};
use mra_runtime::hip::report::{self, KernelResources, MatrixCounts, Objdump};
use mra_runtime::KernelCache;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn run(args: &RunArgs) -> CmdResult {
    // -o is --emit-src's (clap's `requires` does not fire once --compile-only is given); the
    // report goes to standard output, so say so rather than ignore the file.
    if let Some(file) = &args.output {
        return Err(format!("-o {} is for --emit-src; --compile-only prints its report on standard output (redirect it: > FILE)", select::quote(file)).into());
    }
    let arch = match &args.arch {
        Some(a) => select::arch(a)?,
        None => return Err(format!("--compile-only needs --arch (one of: {})", mra_codegen::arch::names().join(", ")).into()),
    };
    let dtype = select::dtype(&args.dtype)?;
    select::compiler(args.compiler.as_deref(), Some(arch))?;
    // A list of levels or of K: a pair the planner refuses is a report line, not the end of
    // the run (as `-l all` has always done); one level at one K refused is the error.
    let all = select::is_list(&args.level) || args.ks.len() > 1;
    if args.source.is_some() && select::is_list(&args.level) {
        return Err(select::usage(format!("--source replaces one level's kernel: give one level (got -l {})", select::quote(&args.level))));
    }
    if args.source.is_some() && args.ks.len() > 1 {
        return Err(select::usage(format!("--source holds the kernel of one K: give one K (got -K {})", k_list(&args.ks))));
    }
    let hand = args.source.as_deref().map(crate::hand_source::HandSource::read).transpose()?;
    let schedules = select::level_list(&args.level)?;
    if let Some(h) = &hand {
        h.check_level(&schedules[0])?;
    }
    // The configuration each line compiles is the one --emit-src and a run would use: the
    // tuning database's for this arch (unless --untuned), else the tuned defaults, else the
    // schedule's; each line names it.
    let tuning = mra_runtime::configure::Tuning::open(None, args.untuned, false)?;
    let any = mra_runtime::configure::any_gpu_of(arch);

    // Plan every (K, level) first: a single level that cannot run on this arch is the
    // planner's error, before any compiler is looked for.
    let mut jobs = Vec::new();
    for &k in &args.ks {
        for s in &schedules {
            let c = tuning.configure_op(s, &any, k, dtype, args.op.operation())?;
            if let Some(note) = &c.note {
                eprintln!("{note}");
            }
            let config = config_note(&c, Request { k, arch, dtype }, args.op.operation());
            match args.op.generate(&c.schedule, Request { k, arch, dtype }) {
                Ok(kernel) => jobs.push((k, Ok((
                    match &hand {
                        Some(h) => h.apply(kernel)?,
                        None => kernel,
                    },
                    config,
                )))),
                Err(e) if all => jobs.push((k, Err((s.name.clone(), e.to_string())))),
                Err(e) => return Err(e.into()),
            }
        }
    }
    // Something must be compiled, or the run says why not (every level refused, for instance),
    // whether or not a compiler is installed.
    if jobs.iter().all(|(_, j)| j.is_err()) {
        let why = jobs.iter().find_map(|(_, j)| j.as_ref().err()).map(|(_, e)| e.clone()).unwrap_or_default();
        return Err(format!("nothing to compile: no level chosen can be generated for K={} {dtype} on {} (e.g. {why})", k_list(&args.ks), arch.name).into());
    }
    let compiler = Compiler::choose(arch, args.compiler.as_deref())?;
    eprintln!("# {}", mra_codegen::tuned_defaults::describe_source(arch.name));
    let mut failed = 0;
    for (k, job) in jobs {
        // Safe points of an interrupt: before each compile, and before its line (a compiler
        // the interrupt stopped is no compile error).
        mra_runtime::interrupt::check()?;
        let line = match job {
            // A level that is vendor BLAS calls only has nothing to compile.
            Ok((kernel, _)) if kernel.entry.is_empty() => Line::NoKernel {
                level: kernel.level.clone(),
                k,
                dtype: dtype.to_string(),
                arch: arch.name,
                note: format!("no generated kernel: the level is {} calls", blas_name(arch)),
            },
            Ok((kernel, config)) => match compiler.report(&kernel, arch, dtype, k) {
                Ok(r) => Line::Compiled(Box::new(
                    match &hand {
                        Some(h) => r.from_source(&h.path),
                        None => r,
                    }
                    .with_note(config),
                )),
                Err(e) if all => {
                    failed += 1;
                    Line::Failed { level: kernel.level.clone(), k, dtype: dtype.to_string(), arch: arch.name, error: e.to_string() }
                }
                Err(e) => return Err(e),
            },
            Err((level, error)) => Line::Refused { level, k, dtype: dtype.to_string(), arch: arch.name, error },
        };
        mra_runtime::interrupt::check()?;
        if args.json {
            crate::outln!("{}", serde_json::to_string(&line)?)?;
        } else {
            crate::outln!("{}", line.text())?;
        }
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

/// `config threads=128 pad_a=0 (tuned defaults, sm_90.json)`: the values a line's kernel was
/// generated with and where they came from (`None` for a level without parameters).
fn config_note(c: &mra_runtime::configure::Configured, req: Request, op: mra_codegen::Operation) -> Option<String> {
    use mra_codegen::tuned_defaults::{self, Regime};
    if c.schedule.params().is_empty() {
        return None;
    }
    // An operation other than the seed's is generated as `validate --op` runs it: the API
    // regime's values and the operation's own (`OpArgs::generate`).
    let regime = if op == mra_codegen::Operation::SEED { Regime::Harness } else { Regime::Api };
    let values = mra_codegen::tune::describe(&c.schedule.at_for(req, regime, op.tuned_as()).defaults());
    let tuned = (!op.tuned_as().is_empty() && tuned_defaults::lookup_op(&c.schedule.name, req, Regime::Api, op.tuned_as()).is_some()) || tuned_defaults::lookup(&c.schedule.name, req, regime).is_some();
    let from = if c.record.is_some() {
        "tuning database".to_string()
    } else if let Some(f) = tuned.then(|| tuned_defaults::for_arch(req.arch.name)).flatten() {
        format!("tuned defaults, {}", f.path())
    } else {
        "the schedule's defaults".to_string()
    };
    Some(format!("config {values} ({from})"))
}

/// `10,12,32`, as the -K list was given.
fn k_list(ks: &[u32]) -> String {
    ks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",")
}

/// The compiler (and disassembler) for one arch.
pub(crate) enum Compiler {
    Amd { compiler: AmdCompiler, objdump: Result<Objdump, String> },
    Nvidia { nvrtc: Nvrtc, sass: Option<PathBuf> },
}

impl Compiler {
    pub(crate) fn choose(arch: &'static Arch, forced: Option<&str>) -> CmdResult<Compiler> {
        let forced = forced.map(|c| c.trim().to_ascii_lowercase());
        match (arch.vendor, forced.as_deref()) {
            (_, Some(c)) if !["hiprtc", "clang", "nvrtc"].contains(&c) => {
                Err(format!("unknown --compiler `{c}`; known: hiprtc, clang (AMD), nvrtc (NVIDIA)").into())
            }
            (Vendor::Amd, Some("nvrtc")) => {
                Err(format!("--compiler nvrtc compiles CUDA for NVIDIA archs, and {} is AMD; use --compiler hiprtc or clang", arch.name).into())
            }
            (Vendor::Nvidia, Some(c @ ("hiprtc" | "clang"))) => {
                Err(format!("--compiler {c} compiles HIP for AMD archs, and {} is NVIDIA; use --compiler nvrtc", arch.name).into())
            }
            (Vendor::Amd, forced) => {
                let choice = match forced {
                    Some("hiprtc") => Choice::Hiprtc,
                    Some("clang") => Choice::Clang,
                    _ => Choice::Auto,
                };
                let compiler = AmdCompiler::choose(arch.name, choice)?;
                Ok(Compiler::Amd { compiler, objdump: Objdump::find().map_err(|e| e.to_string()) })
            }
            (Vendor::Nvidia, _) => Ok(Compiler::Nvidia { nvrtc: Nvrtc::load()?, sass: sass_tool() }),
        }
    }

    pub(crate) fn report(&self, kernel: &Kernel, arch: &'static Arch, dtype: DType, k: u32) -> CmdResult<Report> {
        let threads = kernel.threads();
        let note = matches!(kernel.plan.body, Body::Library(_))
            .then(|| format!("a one-time setup kernel; the transform itself is {} calls", blas_name(arch)));
        let common = |compiler: String, seconds: f64| Common {
            level: kernel.level.clone(),
            k,
            dtype: dtype.to_string(),
            arch: arch.name,
            kernel: kernel.entry.clone(),
            threads,
            compiler,
            compile_ms: seconds * 1e3,
            note: note.clone(),
        };
        match self {
            Compiler::Amd { compiler, objdump } => {
                let co = compiler.compile(&kernel.source, &kernel.entry, arch.name)?;
                let meta = report::read_metadata(&co.bytes)?;
                let res = meta
                    .kernel(&kernel.entry)
                    .cloned()
                    .ok_or_else(|| format!("{}: no kernel {} in the code object's metadata", co.compiler, kernel.entry))?;
                let limits = amd_occ::limits(arch.name).ok_or_else(|| format!("no occupancy limits for {}", arch.name))?;
                // Static LDS from the metadata, plus a dynamic allocation if the plan has one.
                let dynamic = if kernel.plan.dynamic_shared { kernel.plan.shared_bytes } else { 0 };
                let occupancy = limits.occupancy(KernelUse {
                    vgprs: res.vgpr_count,
                    sgprs: res.sgpr_count,
                    lds_bytes: res.lds_bytes + dynamic,
                    workgroup_size: threads,
                });
                let (matrix, matrix_note) = match objdump {
                    Ok(o) => match report::count_matrix_instructions(&o.disassemble(&co.bytes, arch.name)?) {
                        Some(m) => (Some(m), None),
                        None => (None, Some(report::MATRIX_NOT_UNDERSTOOD.to_string())),
                    },
                    Err(e) => (None, Some(format!("not counted (no llvm-objdump: {e})"))),
                };
                Ok(Report::Amd {
                    common: common(co.compiler.clone(), co.seconds),
                    resources: res,
                    occupancy,
                    occupancy_limits: *limits,
                    matrix,
                    matrix_note,
                })
            }
            Compiler::Nvidia { nvrtc, sass } => {
                let compiled = nvrtc.compile(&kernel.source, &kernel.entry, arch.name, &KernelCache::disabled())?;
                let res = compiled.resources.ok_or_else(|| {
                    // Say what the log held instead, on one line: its last few lines.
                    let tail: Vec<&str> = compiled.log.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
                    let tail = tail[tail.len().saturating_sub(3)..].join(" | ");
                    let tail = if tail.is_empty() { "an empty log".to_string() } else { format!("its log ends: {tail}") };
                    format!("NVRTC returned no ptxas report (--ptxas-options=-v); {tail}")
                })?;
                let limits = nv_occ::limits(arch.name).ok_or_else(|| format!("no occupancy limits for {}", arch.name))?;
                // ptxas reports static shared memory; a level above the static limit has one
                // dynamic allocation of the plan's size instead (the runtime passes it at launch).
                let dynamic_shared_bytes = if kernel.plan.dynamic_shared { kernel.plan.shared_bytes } else { 0 };
                let occupancy = limits.occupancy(res.registers, res.shared_bytes + dynamic_shared_bytes, threads);
                let (matrix, matrix_note) = match sass {
                    Some(tool) => match count_mma(tool, &compiled.cubin) {
                        Ok(m) => (Some(m), None),
                        Err(e) => (None, Some(format!("not counted ({e})"))),
                    },
                    None => (None, Some("not counted (no cuobjdump or nvdisasm on PATH)".to_string())),
                };
                let version = format!("NVRTC {}.{} with the ptxas report", nvrtc.version.0, nvrtc.version.1);
                Ok(Report::Nvidia { common: common(version, compiled.seconds), resources: res, dynamic_shared_bytes, occupancy, matrix, matrix_note })
            }
        }
    }
}

#[derive(Serialize)]
pub(crate) struct Common {
    level: String,
    k: u32,
    dtype: String,
    arch: &'static str,
    /// The kernel's entry point.
    kernel: String,
    threads: u32,
    /// Which compiler, with its version.
    compiler: String,
    compile_ms: f64,
    /// What the kernel is, where it is not the whole level.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// What the tuner needs from a compile report: resources, occupancy, blocks per SM/CU.
pub(crate) struct Fit {
    pub resources: mra_runtime::backend::Resources,
    /// Resident warps (waves) over the most the SM/CU holds.
    pub occupancy: f64,
    /// Resident blocks (workgroups) per SM/CU.
    pub blocks: u32,
}

impl Report {
    pub(crate) fn fit(&self) -> Fit {
        match self {
            Report::Amd { resources: r, occupancy, .. } => Fit {
                resources: mra_runtime::backend::Resources {
                    registers: r.vgpr_count,
                    spill_bytes: r.scratch_bytes + r.vgpr_spill_count + r.sgpr_spill_count,
                    shared_bytes: r.lds_bytes,
                    scalar_registers: r.sgpr_count,
                },
                occupancy: occupancy.waves_per_simd / occupancy.max_waves_per_simd.max(1) as f64,
                blocks: occupancy.workgroups_per_cu,
            },
            Report::Nvidia { resources: r, dynamic_shared_bytes, occupancy, .. } => Fit {
                resources: mra_runtime::backend::Resources {
                    registers: r.registers,
                    spill_bytes: r.spill_store_bytes + r.spill_load_bytes,
                    shared_bytes: r.shared_bytes + dynamic_shared_bytes,
                    scalar_registers: 0,
                },
                occupancy: occupancy.occupancy,
                blocks: occupancy.blocks_per_sm,
            },
        }
    }
}

fn blas_name(arch: &Arch) -> &'static str {
    match arch.vendor {
        Vendor::Amd => "hipBLAS",
        Vendor::Nvidia => "cuBLAS",
    }
}

/// Matrix-core instructions in NVIDIA SASS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct SassCounts {
    dmma: u32,
    hmma: u32,
}

#[derive(Serialize)]
#[serde(tag = "vendor", rename_all = "lowercase")]
pub(crate) enum Report {
    Amd {
        #[serde(flatten)]
        common: Common,
        resources: KernelResources,
        occupancy: AmdOccupancy,
        occupancy_limits: amd_occ::AmdLimits,
        /// `None` when llvm-objdump is missing (then `matrix_note` says so).
        matrix: Option<MatrixCounts>,
        #[serde(skip_serializing_if = "Option::is_none")]
        matrix_note: Option<String>,
    },
    Nvidia {
        #[serde(flatten)]
        common: Common,
        resources: ResourceReport,
        /// Dynamic shared memory per block (on top of `resources.shared_bytes`, the static).
        dynamic_shared_bytes: u32,
        occupancy: NvOccupancy,
        matrix: Option<SassCounts>,
        #[serde(skip_serializing_if = "Option::is_none")]
        matrix_note: Option<String>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum Line {
    Compiled(Box<Report>),
    /// The planner refused the level on this arch (with `-l all`).
    Refused { level: String, k: u32, dtype: String, arch: &'static str, error: String },
    /// The compiler failed (with `-l all`).
    Failed { level: String, k: u32, dtype: String, arch: &'static str, error: String },
    /// Nothing to compile (a level made of vendor BLAS calls).
    NoKernel { level: String, k: u32, dtype: String, arch: &'static str, note: String },
}

impl Line {
    fn text(&self) -> String {
        match self {
            Line::Compiled(r) => r.text(),
            Line::Refused { level, k, dtype, arch, error } => format!("{level} K={k} {dtype} {arch}: not compiled: {error}"),
            Line::NoKernel { level, k, dtype, arch, note } => format!("{level} K={k} {dtype} {arch}: {note}"),
            Line::Failed { level, k, dtype, arch, error } => {
                format!("{level} K={k} {dtype} {arch}: error: {}", error.lines().next().unwrap_or_default())
            }
        }
    }
}

impl Report {
    /// This report, noting that its kernel was compiled from a `--source` file.
    fn from_source(mut self, path: &str) -> Report {
        let (Report::Amd { common, .. } | Report::Nvidia { common, .. }) = &mut self;
        let from = format!("kernel source from {path}, hand-edited");
        common.note = Some(match common.note.take() {
            Some(n) => format!("{from}; {n}"),
            None => from,
        });
        self
    }

    /// This report with `note` (if any) added to its notes.
    fn with_note(mut self, note: Option<String>) -> Report {
        let Some(add) = note else { return self };
        let (Report::Amd { common, .. } | Report::Nvidia { common, .. }) = &mut self;
        common.note = Some(match common.note.take() {
            Some(n) => format!("{n}; {add}"),
            None => add,
        });
        self
    }

    fn text(&self) -> String {
        match self {
            Report::Amd { common: c, resources: r, occupancy: o, occupancy_limits: l, matrix, matrix_note } => {
                let spills = if r.vgpr_spill_count + r.sgpr_spill_count == 0 {
                    "no spills".to_string()
                } else {
                    format!("spills: {} VGPRs, {} SGPRs", r.vgpr_spill_count, r.sgpr_spill_count)
                };
                let matrix = match (matrix, matrix_note) {
                    (Some(m), _) => format!("{} MFMA, {} WMMA", m.mfma, m.wmma),
                    (None, Some(note)) => format!("MFMA/WMMA {note}"),
                    (None, None) => String::new(),
                };
                format!(
                    "{} K={} {} {}: {} by {} in {:.0} ms: {} VGPRs, {} AGPRs, {} SGPRs, {} B LDS, {} B scratch, {spills}; {} threads = {} wave{} of {}; occupancy {} workgroups = {} waves per {}, {} per SIMD of {} (limited by {}); {matrix}{}",
                    c.level,
                    c.k,
                    c.dtype,
                    c.arch,
                    c.kernel,
                    c.compiler,
                    c.compile_ms,
                    r.vgpr_count,
                    r.agpr_count,
                    r.sgpr_count,
                    r.lds_bytes,
                    r.scratch_bytes,
                    c.threads,
                    o.waves_per_workgroup,
                    if o.waves_per_workgroup == 1 { "" } else { "s" },
                    r.wavefront_size,
                    o.workgroups_per_cu,
                    o.waves_per_cu,
                    l.cu_name,
                    trim_float(o.waves_per_simd),
                    o.max_waves_per_simd,
                    o.limited_by.describe(),
                    c.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default(),
                )
            }
            Report::Nvidia { common: c, resources: r, dynamic_shared_bytes, occupancy: o, matrix, matrix_note } => {
                let shared = if *dynamic_shared_bytes > 0 {
                    format!("{} B shared ({} B dynamic)", r.shared_bytes + dynamic_shared_bytes, dynamic_shared_bytes)
                } else {
                    format!("{} B shared", r.shared_bytes)
                };
                let spills = if r.spills() {
                    format!("spills: {} B stored, {} B loaded", r.spill_store_bytes, r.spill_load_bytes)
                } else {
                    "no spills".to_string()
                };
                let matrix = match (matrix, matrix_note) {
                    (Some(m), _) => format!("{} DMMA, {} HMMA", m.dmma, m.hmma),
                    (None, Some(note)) => format!("DMMA/HMMA {note}"),
                    (None, None) => String::new(),
                };
                format!(
                    "{} K={} {} {}: {} by {} in {:.0} ms: {} registers, {shared}, {} B stack, {spills}; {} threads = {} warp{}; occupancy {} blocks = {} warps per SM of {} ({:.0}%, limited by {}); {matrix}{}",
                    c.level,
                    c.k,
                    c.dtype,
                    c.arch,
                    c.kernel,
                    c.compiler,
                    c.compile_ms,
                    r.registers,
                    r.stack_frame_bytes,
                    c.threads,
                    o.warps_per_block,
                    if o.warps_per_block == 1 { "" } else { "s" },
                    o.blocks_per_sm,
                    o.warps_per_sm,
                    o.max_warps_per_sm,
                    o.occupancy * 100.0,
                    o.limited_by.describe(),
                    c.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default(),
                )
            }
        }
    }
}

/// `1.5`, `8`.
fn trim_float(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `$MRA_CUOBJDUMP` if set, else `nvdisasm`, else `cuobjdump` on PATH. (`cuobjdump -sass`
/// itself runs nvdisasm, so nvdisasm alone is enough and is tried first.)
fn sass_tool() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MRA_CUOBJDUMP").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["nvdisasm", "cuobjdump"]
        .iter()
        .find_map(|name| std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file()))
}

/// Counts DMMA and HMMA instructions in the SASS of a cubin.
fn count_mma(tool: &Path, cubin: &[u8]) -> Result<SassCounts, String> {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = std::env::temp_dir().join(format!("mra-sass-{}-{n}.cubin", std::process::id()));
    std::fs::write(&file, cubin).map_err(|e| format!("writing {}: {e}", file.display()))?;
    let is_nvdisasm = tool.file_name().is_some_and(|f| f.to_string_lossy().contains("nvdisasm"));
    let mut cmd = Command::new(tool);
    if !is_nvdisasm {
        cmd.arg("-sass");
    }
    let out = mra_runtime::process::output(cmd.arg(&file));
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| format!("running {}: {e}", tool.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed: {}", tool.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let name = tool.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| tool.display().to_string());
    count_sass_mma(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| format!("{name} output not understood: no SASS instructions in it"))
}

/// Lines whose opcode is DMMA or HMMA (`/*0120*/  DMMA.884 R4, R8, R10, R4 ;`); `None` when no
/// line is a SASS instruction at all (every kernel has at least EXIT): a count of 0 from output
/// that is no disassembly would be a false statement.
fn count_sass_mma(sass: &str) -> Option<SassCounts> {
    let mut c = SassCounts::default();
    let mut instructions = 0u32;
    for line in sass.lines() {
        // The opcode is the first word after the address comment and an optional predicate.
        let (addr, code) = line.split_once("*/").unwrap_or(("", line));
        let is_address = addr.trim_start().strip_prefix("/*").is_some_and(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_hexdigit()));
        let op = code.split_whitespace().find(|w| !w.starts_with('@')).unwrap_or("");
        if is_address && op.starts_with(|c: char| c.is_ascii_uppercase()) {
            instructions += 1;
        }
        if op.starts_with("DMMA") {
            c.dmma += 1;
        } else if op.starts_with("HMMA") {
            c.hmma += 1;
        }
    }
    (instructions > 0 || c.dmma + c.hmma > 0).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_mma_in_sass() {
        let sass = "        /*0120*/                   DMMA.884 R4, R8, R10, R4 ;                 /* 0x... */\n\
                    /*0130*/              @P0 HMMA.16816.F32 R12, R16, R20, R12 ;\n\
                    /*0140*/                   DFMA R2, R4, R6, R2 ;\n\
                    /*0150*/                   MOV R1, c[0x0][0x28] ;  // DMMA in a comment\n";
        assert_eq!(count_sass_mma(sass), Some(SassCounts { dmma: 1, hmma: 1 }));
        assert_eq!(count_sass_mma("        /*0000*/                   EXIT ;\n"), Some(SassCounts::default()));
    }

    #[test]
    fn sass_without_instructions_is_not_a_count_of_zero() {
        for garbage in ["", "hello world\nnot SASS at all\n", "\t.headerflags\t@\"EF_CUDA_SM90\"\n/* comment */ text\n"] {
            assert_eq!(count_sass_mma(garbage), None, "{garbage:?}");
        }
    }

    #[test]
    fn floats_print_short() {
        assert_eq!(trim_float(1.5), "1.5");
        assert_eq!(trim_float(8.0), "8");
        assert_eq!(trim_float(0.25), "0.25");
    }
}

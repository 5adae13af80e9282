//! `mra-bench validate`: every level × K × N against the FP64 CPU reference, on a GPU or
//! (`--emulate`) on the CPU wave emulator, which executes the generated HIP itself.

use crate::cli::ValidateArgs;
use crate::hand_source::HandSource;
use crate::select::{self, CmdResult};
use crate::session::{self, Opened};
use mra_codegen::plan::Body;
use mra_codegen::{DType, Request, Schedule, Vendor};
use mra_runtime::emulate::{Checker, Emulator};
use mra_runtime::harness::{self, Backend, EmulatorSession, HarnessConfig, Inputs, Session};
use serde::Serialize;

#[derive(Serialize)]
struct Case {
    level: String,
    #[serde(rename = "K")]
    k: u32,
    nfuncs: usize,
    dtype: &'static str,
    max_abs_err: f64,
    max_rel_err: f64,
    non_finite: usize,
    tolerance: f64,
    pass: bool,
    seed: u64,
    /// `--source`: the hand-edited kernel file validated in place of the generated one.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
}

pub fn run(args: &ValidateArgs) -> CmdResult {
    let levels = select::level_list(&args.levels)?;
    let ks = select::k_list(&args.ks)?;
    let default_ns = if args.emulate { "1,3" } else { "1,3,2048" };
    let ns: Vec<usize> = select::numbers("-N", args.ns.as_deref().unwrap_or(default_ns))?;
    let dtypes: Vec<DType> = args.dtype.iter().map(|d| select::dtype(d.trim())).collect::<Result<_, _>>()?;
    // The same case twice would be run and counted twice (K and levels: in their lists).
    select::no_repeats("-N", &ns)?;
    select::no_repeats("--dtype", &dtypes)?;
    for &n in &ns {
        HarnessConfig { nfuncs: n, max_blocks: args.max_blocks, tasks: 1, streams: 1, reps: 1, warmup: Default::default(), stream_data: Default::default() }.check()?;
    }
    for &k in &ks {
        // Reject K out of range before any work, with the planner's message.
        if !(1..=mra_codegen::K_MAX).contains(&k) {
            return Err(mra_codegen::PlanError::KOutOfRange(k).into());
        }
        for &n in &ns {
            select::check_host_memory(k, n)?;
        }
    }
    let hand = match args.source.as_deref() {
        Some(path) => {
            if levels.len() != 1 || ks.len() != 1 || dtypes.len() != 1 {
                return Err(select::usage(format!(
                    "--source replaces one kernel: give one level, one K and one dtype (got -l {}, -K {}, --dtype {})",
                    select::quote(&args.levels),
                    select::quote(&args.ks),
                    args.dtype.join(",")
                )));
            }
            let hand = HandSource::read(path)?;
            hand.check_level(&levels[0])?;
            Some(hand)
        }
        None => None,
    };
    let arch = args.arch.as_deref().map(select::arch).transpose()?;
    let cache = select::cache(args.no_cache);
    let op = args.op.operation();
    if !op.is_seed() && (hand.is_some() || dtypes != [DType::F64]) {
        return Err(select::usage("--op and --layout validate the generated f64 kernels: without --source, --dtype f64"));
    }
    if args.emulate {
        let Some(arch) = arch else {
            return Err("--emulate needs --arch (gfx90a, gfx942, gfx1100, gfx1151 or gfx1201): it runs the kernels generated for that arch".into());
        };
        if arch.vendor != Vendor::Amd {
            return Err(format!("--emulate executes the generated HIP of AMD archs (gfx90a, gfx942, gfx1100, gfx1151, gfx1201); {} is NVIDIA", arch.name).into());
        }
        let checker = if args.races { Checker::Races } else { Checker::Bounds };
        let session = EmulatorSession::open_emulator(Emulator::new(arch)?.checking(checker), cache)?;
        if !op.is_seed() {
            crate::validate_op::prebuild(&session, &levels, &ks, op)?;
            return crate::validate_op::validate_on(&session, args, &levels, &ks, &ns);
        }
        prebuild(&session, &levels, &ks, &dtypes, hand.as_ref())?;
        return validate_on(&session, args, &levels, &ks, &ns, &dtypes, hand.as_ref());
    }
    if !op.is_seed() {
        return match session::open(arch, None, cache, crate::session::GpuFree::Validate)? {
            Opened::Cuda(s) => crate::validate_op::validate_on(&s, args, &levels, &ks, &ns),
            Opened::Hip(s) => crate::validate_op::validate_on(&s, args, &levels, &ks, &ns),
        };
    }
    match session::open(arch, None, cache, crate::session::GpuFree::Validate)? {
        Opened::Cuda(s) => validate_on(&s, args, &levels, &ks, &ns, &dtypes, hand.as_ref()),
        Opened::Hip(s) => validate_on(&s, args, &levels, &ks, &ns, &dtypes, hand.as_ref()),
    }
}

/// A library level (vendor BLAS): the emulator does not run it.
fn is_library(s: &Schedule, k: u32, arch: &'static mra_codegen::Arch, dtype: DType) -> bool {
    matches!(s.plan(Request { k, arch, dtype }), Ok(p) if matches!(p.body, Body::Library(_)))
}

/// Compiles every emulated kernel the run needs, in parallel, into the kernel cache, so the
/// validation loop finds each one built (once per level, K and dtype, for every N).
fn prebuild(session: &EmulatorSession, levels: &[Schedule], ks: &[u32], dtypes: &[DType], hand: Option<&HandSource>) -> CmdResult<()> {
    let arch = session.gpu.arch();
    let mut kernels = Vec::new();
    for s in levels {
        for &k in ks {
            for &dtype in dtypes {
                if is_library(s, k, arch, dtype) {
                    continue;
                }
                if let Ok(kernel) = mra_codegen::generate(s, Request { k, arch, dtype }) {
                    kernels.push(match hand {
                        Some(h) => h.apply_emulated(kernel)?,
                        None => kernel,
                    });
                }
            }
        }
    }
    let start = std::time::Instant::now();
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    session.gpu.prebuild(&session.compiler, &kernels, &session.cache, jobs).map_err(|e| match (hand, kernels.first()) {
        (Some(h), Some(kernel)) => h.locate(&e.to_string(), &kernel.entry).into(),
        _ => Box::<dyn std::error::Error>::from(e),
    })?;
    eprintln!("# emulator: {} kernels built for the CPU in {:.1} s ({jobs} jobs, {})", kernels.len(), start.elapsed().as_secs_f64(), session.compiler.describe());
    Ok(())
}

/// Every level × K × N (× dtype) on one opened GPU or the emulator; exit status 1 if any case
/// failed.
fn validate_on<B: Backend>(session: &Session<B>, args: &ValidateArgs, levels: &[Schedule], ks: &[u32], ns: &[usize], dtypes: &[DType], hand: Option<&HandSource>) -> CmdResult {
    let gpu = &session.gpu;
    // Nothing to validate on this GPU: say why before any work, and fail.
    let plans = |s: &Schedule, k, dtype| s.plan(Request { k, arch: gpu.arch(), dtype });
    let all = || levels.iter().flat_map(|s| ks.iter().flat_map(move |&k| dtypes.iter().map(move |&d| (s, k, d))));
    if !all().any(|(s, k, d)| plans(s, k, d).is_ok()) {
        let why = all().find_map(|(s, k, d)| plans(s, k, d).err()).map(|e| format!(" (e.g. {e})")).unwrap_or_default();
        return Err(format!("nothing to validate: no level chosen can run in {} on {} for -K {}{why}", args.dtype.join(","), gpu.arch().name, select::quote(&args.ks)).into());
    }
    if args.emulate {
        eprintln!("# validating on the {}: the generated HIP, executed on host threads", gpu.device_name());
    } else {
        eprintln!("# validating on GPU 0: {} ({})", gpu.device_name(), gpu.arch().name);
    }
    // Tuned configurations are measured on a GPU: the emulator validates the defaults (as
    // with --untuned), which are also what its prebuild compiled.
    // --untuned: the database is not read at all (a broken one must not stop the defaults).
    let tuning = if args.emulate { mra_runtime::configure::Tuning::none() } else { mra_runtime::configure::Tuning::open(None, args.untuned, false)? };
    let device = mra_runtime::configure::device_of(session);
    let configure = |s: &Schedule, k: u32, dtype: DType| -> CmdResult<Schedule> {
        let c = tuning.configure(s, &device, k, dtype)?;
        if let Some(note) = &c.note {
            eprintln!("{note}");
        }
        Ok(c.schedule)
    };
    // The source for the one (level, K, dtype) given, applied to the configuration the loop
    // runs: a file that does not fit it is the command's error, before any case.
    let hand_kernel = |s: &Schedule, k, dtype| -> CmdResult<Option<mra_codegen::Kernel>> {
        match hand {
            Some(h) => Ok(Some(h.apply(mra_codegen::generate(s, Request { k, arch: gpu.arch(), dtype })?)?)),
            None => Ok(None),
        }
    };
    if hand.is_some() {
        let s = configure(&levels[0], ks[0], dtypes[0])?;
        if s.plan(Request { k: ks[0], arch: gpu.arch(), dtype: dtypes[0] }).is_ok() {
            hand_kernel(&s, ks[0], dtypes[0])?;
        }
    }
    let mut failures = 0;
    let mut cases = 0;
    let mut not_emulated = 0;
    // Cases the planner refuses on this arch (SKIP lines), counted as the library levels are.
    let mut cannot_run = 0;
    for (dtype, k) in dtypes.iter().flat_map(|&d| ks.iter().map(move |&k| (d, k))) {
        // Text lines name the dtype unless it is the default, f64 (as before lists of dtypes).
        let dt = if dtype == DType::F64 { String::new() } else { format!(" dtype={dtype}") };
        for &n in ns {
            let seed = args.seed.unwrap_or_else(rand::random);
            let inputs = Inputs::try_random(dtype, k, n, seed)?;
            let cfg = HarnessConfig { nfuncs: n, max_blocks: args.max_blocks, tasks: 1, streams: 1, reps: 1, warmup: Default::default(), stream_data: Default::default() };
            for s in levels {
                mra_runtime::interrupt::check()?;
                // The configuration the other commands run: tuned where the database has one.
                let s = &configure(s, k, dtype)?;
                if let Err(e) = s.plan(Request { k, arch: gpu.arch(), dtype }) {
                    cannot_run += 1;
                    if args.json {
                        crate::outln!("{}", serde_json::json!({"level": s.name, "K": k, "nfuncs": n, "dtype": dtype.name(), "skipped": e.to_string()}))?;
                    } else {
                        crate::outln!("K={k} nfuncs={n} level={}{dt} SKIP ({e})", s.name)?;
                    }
                    continue;
                }
                if args.emulate && is_library(s, k, gpu.arch(), dtype) {
                    not_emulated += 1;
                    let why = "not emulated (a library level: vendor BLAS calls, no generated kernel to execute)";
                    if args.json {
                        crate::outln!("{}", serde_json::json!({"level": s.name, "K": k, "nfuncs": n, "dtype": dtype.name(), "skipped": why}))?;
                    } else {
                        crate::outln!("K={k} nfuncs={n} level={}{dt} SKIP ({why})", s.name)?;
                    }
                    continue;
                }
                // A level that cannot be prepared or run (its library missing, say; on the
                // emulator, an out-of-bounds access, a divergent barrier or a deadlock) is that
                // case's failure: report it and go on with the others.
                let prepared = match hand_kernel(s, k, dtype)? {
                    Some(kernel) => session.prepare_kernel(kernel),
                    None => session.prepare(s, k, dtype),
                };
                let outcome = prepared.and_then(|p| {
                    let bufs = session.allocate(&cfg, &p.kernel.plan)?;
                    let cmp = harness::validate(gpu, &p, &bufs, &inputs)?;
                    Ok((p, cmp))
                });
                // A case the interrupt stopped is no failure of it.
                mra_runtime::interrupt::check()?;
                let (p, cmp) = match outcome {
                    Ok(done) => done,
                    Err(e) => {
                        cases += 1;
                        failures += 1;
                        // One line: a failed compile's first line ends with its first error.
                        let e = match hand {
                            Some(h) => h.locate(&e.to_string(), &mra_codegen::emit::entry_name(s, &Request { k, arch: gpu.arch(), dtype })),
                            None => e.to_string(),
                        };
                        let e = e.lines().next().unwrap_or_default();
                        if args.json {
                            crate::outln!("{}", serde_json::json!({"level": s.name, "K": k, "nfuncs": n, "dtype": dtype.name(), "error": e, "pass": false}))?;
                        } else {
                            crate::outln!("K={k} nfuncs={n} level={}{dt} ERROR ({e})", s.name)?;
                        }
                        continue;
                    }
                };
                // The copy level must reproduce its input exactly.
                let tol = if p.kernel.plan.is_copy() { f64::MIN_POSITIVE } else { dtype.tolerance() };
                let pass = cmp.passes(tol);
                cases += 1;
                failures += usize::from(!pass);
                let case = Case {
                    level: p.kernel.level.clone(),
                    k,
                    nfuncs: n,
                    dtype: dtype.name(),
                    max_abs_err: cmp.max_abs,
                    max_rel_err: cmp.max_rel,
                    non_finite: cmp.non_finite,
                    tolerance: tol,
                    pass,
                    seed,
                    source: hand.map(|h| h.path.clone()),
                };
                if args.json {
                    crate::outln!("{}", serde_json::to_string(&case)?)?;
                } else {
                    let nf = if cmp.non_finite > 0 { format!(" non_finite={}", cmp.non_finite) } else { String::new() };
                    let src = hand.map(|h| format!(" source={}", h.path)).unwrap_or_default();
                    crate::outln!(
                        "K={k} nfuncs={n} level={}{dt}{src} max_abs_err={:.2e} max_rel_err={:.2e}{nf} {}",
                        case.level,
                        cmp.max_abs,
                        cmp.max_rel,
                        if pass { "PASS" } else { "FAIL" }
                    )?;
                }
            }
        }
    }
    // Every SKIP line counted by its reason, so the summary adds up to the lines printed.
    let mut skipped = Vec::new();
    if not_emulated > 0 {
        skipped.push(format!("{not_emulated} not emulated (library levels)"));
    }
    if cannot_run > 0 {
        skipped.push(format!("{cannot_run} cannot run on {}", gpu.arch().name));
    }
    // Every case skipped: nothing was checked, which must not read as success.
    if cases == 0 {
        return Err(format!("nothing validated: every case was skipped ({})", skipped.join(", ")).into());
    }
    let skipped: String = skipped.iter().map(|s| format!(", {s}")).collect();
    eprintln!("# {} passed, {failures} failed{skipped}", cases - failures);
    Ok(if failures == 0 { 0 } else { 1 })
}

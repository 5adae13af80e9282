//! The default mode: validate once and benchmark one level against the
//! `copy` floor in the seed's harness, on the CUDA or the HIP backend (see `session`).

use crate::cli::RunArgs;
use crate::hand_source::HandSource;
use crate::output::RepResult;
use crate::select::{self, CmdResult};
use crate::session::{self, Opened};
use mra_codegen::{levels, DType, Request, Schedule};
use mra_runtime::configure::{self, Tuning};
use mra_runtime::harness::{self, Backend, HarnessConfig, Inputs, Prepared, Session};

pub fn run(args: &RunArgs) -> CmdResult {
    if select::is_list(&args.level) {
        return Err(select::usage(format!(
            "-l {}: a run times one level against the floor; give one level, or use `sweep -l all` (time every level), `validate -l all`, `--compile-only -l all` or `--emit-src -l all`",
            select::quote(&args.level)
        )));
    }
    let best = configure::is_best(&args.level);
    if best && args.source.is_some() {
        return Err(select::usage("--source replaces one level's kernel: name the level with -l (`-l best` picks one per GPU)"));
    }
    // `-l best` is resolved once the device is known; a placeholder until then.
    let schedule = if best { levels::find("copy")? } else { select::level(&args.level)? };
    let dtype = select::dtype(&args.dtype)?;
    let k = args.k;
    // --compiler is checked here too, though a run picks its own (one rule in every mode).
    let named_arch = args.arch.as_deref().map(select::arch).transpose()?;
    select::compiler(args.compiler.as_deref(), named_arch)?;
    let cfg = HarnessConfig { nfuncs: args.nfuncs, max_blocks: args.max_blocks, tasks: args.tasks, streams: args.streams, reps: args.reps, warmup: args.timing.warmup, stream_data: args.timing.stream_data };
    cfg.check()?;
    select::check_host_memory(k, cfg.nfuncs)?;
    let hand = args.source.as_deref().map(HandSource::read).transpose()?;
    if let Some(h) = &hand {
        h.check_level(&schedule)?;
    }
    let arch = match &args.arch {
        Some(a) => {
            let arch = select::arch(a)?;
            // Catch a level that cannot run on the named arch before looking for a GPU.
            if !best {
                schedule.plan(Request { k, arch, dtype })?;
                // A --source that does not fit the level is refused before looking for a GPU too.
                if let Some(h) = &hand {
                    h.apply(mra_codegen::generate(&schedule, Request { k, arch, dtype })?)?;
                }
            }
            Some(arch)
        }
        None => None,
    };
    match session::open(arch, args.compiler.as_deref(), select::cache(args.no_cache), session::GpuFree::Run)? {
        Opened::Cuda(s) => bench(&s, args, &for_device(&s, args, &schedule, dtype)?, dtype, &cfg, hand.as_ref()),
        Opened::Hip(s) => bench(&s, args, &for_device(&s, args, &schedule, dtype)?, dtype, &cfg, hand.as_ref()),
    }
}

/// The level to run on this GPU: its tuned configuration if the database has one (unless
/// --untuned), or with `-l best` the fastest tuned level at this K.
fn for_device<B: Backend>(session: &Session<B>, args: &RunArgs, schedule: &Schedule, dtype: DType) -> CmdResult<Schedule> {
    let best = configure::is_best(&args.level);
    let tuning = Tuning::open(None, args.untuned, best)?;
    let device = configure::device_of(session);
    let c = if best { tuning.best(&device, args.k, dtype, |_| true)? } else { tuning.configure(schedule, &device, args.k, dtype)? };
    if let Some(note) = &c.note {
        eprintln!("{note}");
    }
    Ok(c.schedule)
}

/// Validates `schedule` (its kernel from `hand` where given) and the copy floor once, then
/// times both in the seed's harness.
fn bench<B: Backend>(session: &Session<B>, args: &RunArgs, schedule: &Schedule, dtype: DType, cfg: &HarnessConfig, hand: Option<&HandSource>) -> CmdResult {
    let (gpu, k) = (&session.gpu, args.k);
    let cfg = *cfg;
    // Planning is cheap and tells the workspace size: refuse an N that cannot fit before compiling.
    let plan = schedule.plan(Request { k, arch: gpu.arch(), dtype })?;
    // With -M auto the grid (and a global workspace's size) is known once the kernel is loaded:
    // checked now with the seed's 512 blocks (A and C, the bulk, do not depend on it), and
    // again when the buffers are allocated.
    session.check_memory(&cfg.with_grid(None, 512), &plan)?;
    let floor_schedule = levels::find("copy")?;
    let report = |p: Prepared<B>, from: &str| -> Prepared<B> {
        eprintln!("# {} (K={k}, {dtype}, {}){from}{}", p.kernel.level, gpu.arch().name, session.compile_note(&p));
        p
    };
    let mut level = match hand {
        Some(h) => {
            let kernel = h.apply(mra_codegen::generate(schedule, Request { k, arch: gpu.arch(), dtype })?)?;
            report(session.prepare_kernel(kernel)?, &format!(": kernel source from {} (hand-edited), launched as the level's plan;", h.path))
        }
        None => report(session.prepare(schedule, k, dtype)?, ""),
    };
    let mut floor = report(session.prepare(&floor_schedule, k, dtype)?, "");
    // -M auto: each launches what the GPU holds of its kernel at once.
    let cfg = session.grid_for(&cfg, &mut [&mut level, &mut floor]);
    // Every line about the level says where its kernel came from.
    let name = match hand {
        Some(h) => format!("{} (--source {})", level.kernel.level, h.path),
        None => level.kernel.level.clone(),
    };
    let bufs = session.allocate(&cfg, &level.kernel.plan)?;
    if let Some(c) = level.clusters {
        eprintln!("# {}: {}", level.kernel.level, c.describe());
    }
    match level.resident_blocks {
        Some(resident) if level.fill_device => eprintln!("# -M auto: {} blocks per launch (the GPU holds {resident} of them at once), each walking the batch; -M 512 for the seed's harness", level.grid_blocks(bufs.nblocks)),
        Some(resident) if level.kernel.plan.persistent => {
            eprintln!("# persistent(1): {} blocks per launch (the GPU holds {resident} of them at once; min(N, M) = {})", level.grid_blocks(bufs.nblocks), bufs.nblocks)
        }
        _ => {}
    }

    // Validate once, on fresh random inputs, before timing.
    let seed = args.seed.unwrap_or_else(rand::random);
    let inputs = Inputs::try_random(dtype, k, cfg.nfuncs, seed)?;
    for (p, what) in [(&level, name.as_str()), (&floor, "copy")] {
        let cmp = harness::validate(gpu, p, &bufs, &inputs)?;
        let tol = if p.kernel.plan.is_copy() { f64::MIN_POSITIVE } else { dtype.tolerance() };
        if !cmp.passes(tol) {
            return Err(format!(
                "{what} failed validation (K={k}, N={}, seed {seed}): max abs {:.3e}, max rel {:.3e} (limit {tol:e}), {} non-finite",
                cfg.nfuncs, cmp.max_abs, cmp.max_rel, cmp.non_finite
            )
            .into());
        }
        eprintln!("# validated {what}: max abs {:.2e}, max rel {:.2e} (seed {seed})", cmp.max_abs, cmp.max_rel);
    }

    let streams = session.streams(cfg.streams)?;
    if cfg.stream_data == harness::StreamData::Private && cfg.streams > 1 {
        eprintln!("# --stream-data private: each of the {} streams transforms its own A into its own C (the copy floor too); the seed's harness shares one", cfg.streams);
    }
    // The SM clock while each is timed, where NVML can read it (stderr: the seed's lines stay as they are).
    let clocks = gpu.clock_source();
    let floor_timing = harness::time_reps_clocked(gpu, &floor, &bufs, &streams, &cfg, clocks.as_ref().ok())?;
    let floor_us = harness::median(&floor_timing.times) / cfg.tasks as f64;
    let timing = harness::time_reps_clocked(gpu, &level, &bufs, &streams, &cfg, clocks.as_ref().ok())?;
    let (times, clock, floor_clock) = (&timing.times, timing.clock.clone(), floor_timing.clock.clone());
    // GFlop counts what the level executes (the Kronecker GEMM's 2·K⁶, as the seed reports it).
    let gflop = level.kernel.plan.executed_flops_per_tensor() as f64 * cfg.nfuncs as f64 * cfg.tasks as f64 / 1e9;
    for (rep, &t) in times.iter().enumerate() {
        let us_per_task = t / cfg.tasks as f64;
        let r = RepResult {
            level: level.kernel.level.clone(),
            nfuncs: cfg.nfuncs,
            nblocks: level.grid_blocks(bufs.nblocks),
            k,
            tasks: cfg.tasks,
            streams: cfg.streams,
            threads: level.kernel.threads(),
            smem: level.kernel.plan.shared_bytes,
            time_us: t,
            gflop,
            gflops: gflop / (t * 1e-6),
            us_per_task,
            floor_us_per_task: floor_us,
            fraction_of_floor: floor_us / us_per_task,
            rep: rep + 1,
            dtype: dtype.to_string(),
            arch: gpu.arch().name.to_string(),
            device: gpu.device_name().to_string(),
            warmup_ms: timing.warmup.ms,
            warmup_settled: timing.warmup.settled,
            stream_data: cfg.stream_data,
            submit_us: timing.submit_us[rep],
            host_bound: timing.host_bound(rep),
            source: hand.map(|h| h.path.clone()),
        };
        if args.json {
            crate::outln!("{}", serde_json::to_string(&r)?)?;
        } else {
            crate::outln!("{}", r.seed_line())?;
        }
    }
    let med = harness::median(times) / cfg.tasks as f64;
    eprintln!(
        "# {name}: median {med:.2} us/task; floor (copy, same run) {floor_us:.2} us/task; fraction of floor {:.3}",
        floor_us / med
    );
    match (&clocks, clock, floor_clock) {
        (Err(why), _, _) => eprintln!("# SM clock not read: {why}"),
        (Ok(source), Some(c), Some(f)) => {
            eprintln!("# SM clock while timed: {} {}; copy {}", level.kernel.level, c.describe_with_power(), f.describe_with_power());
            let limit_w = source.power_limit_w();
            if let (Some(w), Some(limit)) = (mra_runtime::clocks::above_limit(&c, limit_w), limit_w) {
                let why = mra_runtime::clocks::above_limit_why(cfg.warmup == harness::Warmup::Settle);
                eprintln!("# warning: {} drew {w:.0} W while timed, above the board's {limit:.0} W power limit: {why}", level.kernel.level);
            }
        }
        (Ok(_), _, _) => eprintln!("# SM clock: NVML gave no reading while timing"),
    }
    for (name, t) in [(level.kernel.level.as_str(), &timing), ("copy", &floor_timing)] {
        if let Some(note) = t.host_bound_note() {
            eprintln!("# warning: {name}: {note}");
        }
    }
    if cfg.warmup != harness::Warmup::default() {
        eprintln!("# warm-up ({}): {} {}, copy {}", cfg.warmup.describe(), level.kernel.level, timing.warmup.describe(), floor_timing.warmup.describe());
    }
    Ok(0)
}

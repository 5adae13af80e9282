//! `mra-bench sweep`: every level that can run × a list of K, in the seed's harness, with the
//! copy floor and an FP64 GEMM peak measured in the same process; one table, JSON/CSV.

use crate::cli::SweepArgs;
use crate::select::{self, CmdResult};
use crate::session::{self, Opened};
use indicatif::{ProgressBar, ProgressStyle};
use mra_codegen::{levels, plan::transform_flops, DType, Request, Schedule};
use mra_runtime::clocks::ClockSource;
use mra_runtime::harness::{self, Backend, HarnessConfig, Inputs, Session, StreamData, Warmup};
use std::sync::Arc;
use crate::outfile::Target;
use crate::sweep_report::{csv_text, json_text, mark_fastest, plot_data, table, Measured, Progress, Report, Row, Targets};

pub fn run(args: &SweepArgs) -> CmdResult {
    if !args.op.operation().is_seed() {
        return crate::sweep_op::run(args);
    }
    let ks = select::k_list(&args.ks)?;
    let dtype = select::dtype(&args.dtype)?;
    let copy = levels::find("copy")?;
    // `best` (alone or in a list): per K, the fastest level tuned on this GPU, as a row of its own.
    let with_best = args.levels.split(',').any(mra_runtime::configure::is_best);
    let others: Vec<&str> = args.levels.split(',').filter(|l| !mra_runtime::configure::is_best(l)).collect();
    let mut chosen: Vec<Schedule> = if others.is_empty() { Vec::new() } else { select::level_list(&others.join(","))? };
    chosen.retain(|s| s.name != copy.name);
    if with_best {
        // A placeholder resolved per K in sweep_on.
        chosen.push(Schedule { name: BEST.into(), number: None, summary: String::new(), steps: Vec::new(), file: String::new() });
    }
    chosen.insert(0, copy.clone());
    let api = args.launch == "api";
    if api && (args.tasks != 100 || args.streams != 4 || args.timing.stream_data != StreamData::Shared) {
        return Err(select::usage("--launch api times one launch per repetition on one stream over its own data: -n, -s and --stream-data are the harness's"));
    }
    let base = if api {
        harness::api_regime::config(args.nfuncs.unwrap_or(1), args.max_blocks, args.reps, args.timing.warmup)
    } else {
        HarnessConfig { nfuncs: args.nfuncs.unwrap_or(2048), max_blocks: args.max_blocks.unwrap_or(512), tasks: args.tasks, streams: args.streams, reps: args.reps, warmup: args.timing.warmup, stream_data: args.timing.stream_data }
    };
    base.check()?;
    for &k in &ks {
        // The API regime validates on a slice of its batch; only that slice is on the host.
        select::check_host_memory(k, if api { VALIDATION_N } else { base.nfuncs })?;
    }
    // The result files are checked before anything is measured: a bad path must not cost a sweep.
    let targets = Targets {
        json: args.json.as_deref().map(|p| Target::check("--json", p)).transpose()?,
        csv: args.csv.as_deref().map(|p| Target::check("--csv", p)).transpose()?,
        plot: args.plot.as_deref().map(crate::plot::check_target).transpose()?,
    };
    targets.check_distinct()?;
    match session::open(None, None, select::cache(args.no_cache), session::GpuFree::Sweep)? {
        Opened::Cuda(s) => sweep_on(&s, args, &ks, dtype, &chosen, &base, &targets),
        Opened::Hip(s) => sweep_on(&s, args, &ks, dtype, &chosen, &base, &targets),
    }
}

/// Tensors the API regime validates each level on (its batch is then tiled from them).
const VALIDATION_N: usize = 2048;

/// The harness of one K: the seed's as given, or the API regime's batch at `k` (2 GiB of input
/// unless -N).
fn config_at(args: &SweepArgs, base: &HarnessConfig, k: u32, dtype: DType) -> HarnessConfig {
    if args.launch != "api" {
        return *base;
    }
    let n = args.nfuncs.unwrap_or_else(|| harness::api_regime::batch_for_bytes(k, dtype, harness::api_regime::DEFAULT_BATCH_BYTES));
    HarnessConfig { nfuncs: n, ..*base }
}

/// The name of the `-l best` placeholder in the list of levels.
const BEST: &str = "best";

/// The sweep on one opened GPU: the JSON and CSV files asked for, then the table.
fn sweep_on<B: Backend>(session: &Session<B>, args: &SweepArgs, ks: &[u32], dtype: DType, chosen: &[Schedule], base: &HarnessConfig, targets: &Targets) -> CmdResult {
    let gpu = &session.gpu;
    let copy = &chosen[0];
    // Nothing to compare with the floor: say so before measuring anything.
    let runnable = chosen[1..].iter().any(|s| s.name == BEST || ks.iter().any(|&k| s.plan(Request { k, arch: gpu.arch(), dtype }).is_ok()));
    if !runnable {
        let why = chosen[1..]
            .iter()
            .find_map(|s| ks.iter().find_map(|&k| s.plan(Request { k, arch: gpu.arch(), dtype }).err()))
            .map(|e| format!(" (e.g. {e})"))
            .unwrap_or_default();
        return Err(format!("nothing to sweep: no level chosen can run in {dtype} on {} for -K {}{why}", gpu.arch().name, select::quote(&args.ks)).into());
    }
    let api = args.launch == "api";
    if api {
        eprintln!("# sweep on {} ({}), API regime: one launch per repetition over N tensors (2 GiB of input unless -N), M={}, -r {}; floor: a device-to-device copy of the same bytes", gpu.device_name(), gpu.arch().name, base.describe_max_blocks(), base.reps);
    } else {
        eprintln!("# sweep on {} ({}), N={}, M={}, {} streams, -n {}, -r {}", gpu.device_name(), gpu.arch().name, base.nfuncs, base.max_blocks, base.streams, base.tasks, base.reps);
    }
    let peak = if args.no_peak {
        None
    } else {
        let p = harness::gemm_peak_tflops(gpu, 8192, 5)?;
        eprintln!("# FP64 GEMM peak ({} DGEMM 8192^3, median of 5): {p:.1} TFLOP/s", B::BLAS_NAME);
        Some(p)
    };

    let clocks = gpu.clock_source();
    let clock_note = match &clocks {
        Ok(_) => "NVML, every 10 ms while each level's timed repetitions run".to_string(),
        Err(why) => format!("not read: {why}"),
    };
    eprintln!("# SM clock: {clock_note}");
    let clocks = clocks.ok();
    let power_limit_w = clocks.as_ref().and_then(|c| c.power_limit_w());
    let bar = ProgressBar::new((ks.len() * chosen.len()) as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").expect("valid template"));
    let streams = session.streams(base.streams)?;
    let mut rows = Vec::new();
    // The report's fields but the rows (and the time it was written).
    let head = Report {
        device: gpu.device_name().to_string(),
        arch: gpu.arch().name,
        commit: env!("MRA_COMMIT"),
        date_unix: 0,
        launch: if api { "api" } else { "harness" },
        nfuncs: if api { 0 } else { base.nfuncs },
        max_blocks: (!base.auto_grid()).then_some(base.max_blocks),
        streams: base.streams,
        reps: base.reps,
        dtype: dtype.to_string(),
        fp64_gemm_peak_tflops: peak,
        sm_clock_source: clock_note,
        power_limit_w,
        warmup: base.warmup.describe(),
        stream_data: base.stream_data,
        complete: false,
        rows: &[],
    };
    let mut progress = Progress::new(targets);
    let regime = if api { mra_codegen::tuned_defaults::Regime::Api } else { mra_codegen::tuned_defaults::Regime::Harness };
    let tuning = mra_runtime::configure::Tuning::open(None, args.untuned, chosen.iter().any(|s| s.name == BEST))?.in_regime(regime);
    let device = mra_runtime::configure::device_of(session);
    for &k in ks {
        let seed = args.seed.unwrap_or_else(rand::random);
        let at = config_at(args, base, k, dtype);
        let inputs = Inputs::try_random(dtype, k, if api { VALIDATION_N.min(at.nfuncs) } else { at.nfuncs }, seed)?;
        let mut floor_us = None;
        // Each level with its tuned configuration for this GPU at this K (unless --untuned).
        let mut tuned_levels = Vec::new();
        for s in chosen {
            if s.name == BEST {
                match tuning.best(&device, k, dtype, |_| true) {
                    Ok(c) => {
                        if let Some(note) = &c.note {
                            eprintln!("{note}");
                        }
                        let mut b = c.schedule;
                        b.name = format!("best:{}", b.name);
                        tuned_levels.push(b);
                    }
                    // Said, not hidden: the other levels of this K still run.
                    Err(e) => eprintln!("# K={k}: no `best` row: {e}"),
                }
            } else {
                let c = tuning.configure(s, &device, k, dtype)?;
                if let Some(note) = &c.note {
                    eprintln!("{note}");
                }
                tuned_levels.push(c.schedule);
            }
        }
        for s in &tuned_levels {
            mra_runtime::interrupt::check()?;
            bar.set_message(format!("K={k} {}", s.name));
            let mut row = Row::unmeasured(&s.name, k, s.role(), at.nfuncs);
            let measured = if api { crate::api_sweep::measure(session, s, k, dtype, &at, &inputs, &streams[0], clocks.as_ref()) } else { measure(session, s, k, dtype, &at, &inputs, &streams, clocks.as_ref()) };
            match measured {
                Ok(Measured { us, tasks, max_rel: rel, clock, nblocks, warmup, host_bound_reps, clusters }) => {
                    row.sm_clock = clock;
                    row.clusters = clusters;
                    row.warmup = Some(warmup);
                    row.host_bound_reps = host_bound_reps;
                    row.nblocks = Some(nblocks);
                    if nblocks < at.nblocks() && !api {
                        row.note = format!("persistent: {nblocks} blocks per launch");
                    } else if api && s.name == copy.name {
                        row.note = "device-to-device copy of the same bytes".into();
                    }
                    if s.name == copy.name {
                        floor_us = Some(us);
                    }
                    let bytes = 2.0 * at.nfuncs as f64 * (k as f64).powi(3) * dtype.bytes() as f64;
                    let useful = if !s.is_transform() { 0.0 } else { transform_flops(k) as f64 * at.nfuncs as f64 / (us * 1e3) };
                    row.us_per_task = Some(us);
                    row.useful_gflops = Some(useful);
                    row.effective_gbps = Some(bytes / (us * 1e3));
                    row.fraction_of_floor = floor_us.map(|f| f / us);
                    row.fraction_of_fp64_peak = peak.map(|p| useful / (p * 1e3));
                    row.max_rel_err = Some(rel);
                    row.tasks = tasks;
                }
                Err(e) => row.note = e.to_string(),
            }
            // A level the interrupt stopped is no row.
            mra_runtime::interrupt::check()?;
            rows.push(row);
            progress.save(&head.with(&rows, false));
            bar.inc(1);
        }
        mark_fastest(&mut rows, k);
        progress.save(&head.with(&rows, false));
    }
    bar.finish_and_clear();
    let report = head.with(&rows, true);
    // Files first (each on its own: one failing never keeps the other from being written),
    // then the table, so that a closed pipe on standard output cannot lose them.
    let mut write_errors = Vec::new();
    if let Some(t) = &targets.json {
        if let Err(e) = t.write(&json_text(&report)?) {
            write_errors.push(e);
        }
    }
    if let Some(t) = &targets.csv {
        if let Err(e) = t.write(&csv_text(&rows)) {
            write_errors.push(e);
        }
    }
    if let Some(path) = &targets.plot {
        match plot_data(&report) {
            Ok(data) => match crate::plot::render(&data, path) {
                Ok(()) => eprintln!("# chart written to {}", path.display()),
                Err(e) => write_errors.push(format!("--plot: {e}")),
            },
            Err(e) => write_errors.push(format!("--plot: {e}")),
        }
    }
    // `--json` alone puts the JSON on stdout, so the table goes to stderr there.
    let table = table(&rows, peak.map(|p| (p, B::BLAS_NAME)), base.stream_data, power_limit_w);
    if matches!(targets.json, Some(Target::Stdout)) {
        eprint!("{table}");
    } else {
        crate::out!("{table}")?;
    }
    if !write_errors.is_empty() {
        return Err(write_errors.join("; ").into());
    }
    if !rows.iter().any(|r| r.level != copy.name && r.us_per_task.is_some()) {
        return Err("nothing was measured: every level failed at every K (see the notes in the table)".into());
    }
    Ok(if rows.iter().any(|r| r.note.starts_with("validation failed")) { 1 } else { 0 })
}


/// Prepares, validates and times one level.
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure<B: Backend>(
    session: &Session<B>,
    s: &Schedule,
    k: u32,
    dtype: DType,
    base: &HarnessConfig,
    inputs: &Inputs,
    streams: &[B::Stream],
    clocks: Option<&Arc<dyn ClockSource>>,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let gpu = &session.gpu;
    let plan = s.plan(Request { k, arch: gpu.arch(), dtype })?;
    session.check_memory(base, &plan)?;
    let p = session.prepare(s, k, dtype)?;
    let bufs = session.allocate(base, &plan)?;
    let cmp = harness::validate(gpu, &p, &bufs, inputs)?;
    let tol = if plan.is_copy() { f64::MIN_POSITIVE } else { dtype.tolerance() };
    if !cmp.passes(tol) {
        return Err(format!("validation failed: max rel {:.2e}, {} non-finite (seed {})", cmp.max_rel, cmp.non_finite, inputs.seed).into());
    }
    // One task alone tells how long a task takes; slow levels run fewer tasks per repetition
    // (at least 3) so that a sweep ends. µs per task stays comparable.
    let probe = harness::time_reps(gpu, &p, &bufs, streams, &HarnessConfig { tasks: 1, reps: 1, warmup: Warmup::default(), ..*base })?;
    let tasks = if probe[0] > 10_000.0 { ((1e6 / probe[0]) as usize).clamp(3, base.tasks) } else { base.tasks };
    let cfg = HarnessConfig { tasks, ..*base };
    let t = harness::time_reps_clocked(gpu, &p, &bufs, streams, &cfg, clocks)?;
    let host_bound_reps = t.host_bound_reps();
    Ok(Measured { us: harness::median(&t.times) / tasks as f64, tasks, max_rel: cmp.max_rel, clock: t.clock, nblocks: p.grid_blocks(bufs.nblocks), warmup: t.warmup, host_bound_reps, clusters: p.clusters })
}


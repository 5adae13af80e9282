//! `mra-bench sweep`: every level that can run × a list of K, in the seed's harness, with the
//! copy floor and an FP64 GEMM peak measured in the same process; one table, JSON/CSV.

use crate::cli::SweepArgs;
use crate::select::{self, CmdResult};
use crate::session::{self, Opened};
use indicatif::{ProgressBar, ProgressStyle};
use mra_codegen::{ir::Role, levels, plan::transform_flops, DType, Request, Schedule};
use mra_runtime::clocks::{ClockSource, ClockStats};
use mra_runtime::harness::{self, Backend, HarnessConfig, Inputs, Session, StreamData, Warmup, WarmupDone};
use mra_runtime::residency::ClusterResidency;
use std::sync::Arc;
use serde::Serialize;
use crate::outfile::Target;

/// One level at one K.
#[derive(Clone, Debug, Serialize)]
struct Row {
    level: String,
    #[serde(rename = "K")]
    k: u32,
    /// What the level measures: `floor` (copy), `bound` (the copy and the fewest matrix
    /// instructions), or `transform`.
    role: Role,
    /// Median µs per task; None when the level did not run (see `note`).
    us_per_task: Option<f64>,
    useful_gflops: Option<f64>,
    /// Bytes a task must move (read A, write C) over its time.
    effective_gbps: Option<f64>,
    /// copy µs/task (same process, same K) / this level's µs/task.
    fraction_of_floor: Option<f64>,
    /// Useful flop rate over the measured FP64 GEMM peak.
    fraction_of_fp64_peak: Option<f64>,
    max_rel_err: Option<f64>,
    tasks: usize,
    /// Tensors per task (the API regime's batch depends on K).
    nfuncs: usize,
    /// Blocks per launch: min(N, M), or fewer for a `persistent(1)` level (what the GPU
    /// holds at once); None when the level did not run.
    nblocks: Option<usize>,
    best: bool,
    note: String,
    /// The SM clock while this level was timed (None where nothing could read it).
    sm_clock: Option<ClockStats>,
    /// What the untimed repetitions before the timed ones did (None where it did not run).
    warmup: Option<WarmupDone>,
    /// Timed repetitions whose submission took ≥ 90% of their device time: the GPU waited for
    /// the host's launches (0 where it did not run).
    host_bound_reps: usize,
    /// A cluster level: the clusters the GPU holds at once against its block slots (None:
    /// not a cluster level, or the driver cannot tell).
    clusters: Option<ClusterResidency>,
}

#[derive(Clone, Serialize)]
struct Report<'a> {
    device: String,
    arch: &'static str,
    commit: &'static str,
    date_unix: u64,
    /// `harness` (the seed's: tasks over streams) or `api` (one launch over a batch far larger
    /// than L2; the `copy` row is then a device-to-device copy of the same bytes).
    launch: &'static str,
    /// The seed's N (api: 0, each row says its own).
    nfuncs: usize,
    /// -M (None: `auto`, what the GPU holds of each kernel at once).
    max_blocks: Option<usize>,
    streams: usize,
    reps: usize,
    dtype: String,
    fp64_gemm_peak_tflops: Option<f64>,
    /// How `sm_clock` was read, or why it was not.
    sm_clock_source: String,
    /// The board's enforced power limit (NVML), where it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    power_limit_w: Option<f64>,
    /// `--warmup`: `200 ms`, `until the SM clock settles`.
    warmup: String,
    /// `--stream-data`: `shared` (the seed's harness) or `private` (an A and a C per stream).
    stream_data: StreamData,
    /// False while the sweep runs: the --json file is rewritten after every row (see
    /// [`Progress`]), so a file left by an interrupted sweep says it holds part of it.
    complete: bool,
    rows: &'a [Row],
}

pub fn run(args: &SweepArgs) -> CmdResult {
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

/// The files `--json`, `--csv` and `--plot` asked for, already checked.
struct Targets {
    json: Option<Target>,
    csv: Option<Target>,
    /// `--plot`: an .svg or .png path, checked like the others.
    plot: Option<std::path::PathBuf>,
}

impl Targets {
    /// Two results into one place would leave one of them lost or both garbled: refused before
    /// measuring. Standard output takes at most one; two flags naming one file (under any
    /// names: `outfile::same_file`) are refused.
    fn check_distinct(&self) -> Result<(), String> {
        if let (Some(Target::Stdout), Some(Target::Stdout)) = (&self.json, &self.csv) {
            return Err("--json - and --csv -: both would go to standard output, mixed; write one of them to a file".into());
        }
        let file = |t: &Option<Target>| match t {
            Some(Target::File { path, .. }) => Some(path.clone()),
            _ => None,
        };
        let named = [("--json", file(&self.json)), ("--csv", file(&self.csv)), ("--plot", self.plot.clone())];
        let named: Vec<(&str, std::path::PathBuf)> = named.into_iter().filter_map(|(f, p)| p.map(|p| (f, p))).collect();
        for (i, (fa, a)) in named.iter().enumerate() {
            for (fb, b) in &named[i + 1..] {
                if crate::outfile::same_file(a, b) {
                    return Err(format!("{fa} {} and {fb} {} are the same file: one would overwrite the other; give each its own path", a.display(), b.display()));
                }
            }
        }
        Ok(())
    }
}

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
    let tuning = mra_runtime::configure::Tuning::open(None, args.untuned, chosen.iter().any(|s| s.name == BEST))?;
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
            let mut row = Row {
                level: s.name.clone(),
                k,
                role: s.role(),
                us_per_task: None,
                useful_gflops: None,
                effective_gbps: None,
                fraction_of_floor: None,
                fraction_of_fp64_peak: None,
                max_rel_err: None,
                tasks: 0,
                nfuncs: at.nfuncs,
                nblocks: None,
                best: false,
                note: String::new(),
                sm_clock: None,
                warmup: None,
                host_bound_reps: 0,
                clusters: None,
            };
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

impl Report<'static> {
    /// This report's fields (its rows none: a head) with `rows`, written now.
    fn with<'r>(&self, rows: &'r [Row], complete: bool) -> Report<'r> {
        let date_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        Report { rows, complete, date_unix, ..self.clone() }
    }
}

/// The --json text of a report.
fn json_text(report: &Report) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(report)? + "\n")
}

/// The --csv text of the rows: a header, then one line per row.
fn csv_text(rows: &[Row]) -> String {
    let mut csv = String::from("level,K,us_per_task,useful_gflops,effective_gbps,fraction_of_floor,fraction_of_fp64_peak,max_rel_err,tasks,best,note,sm_mhz_min,sm_mhz_median,sm_clock_reasons,power_w_median\n");
    let f = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
    for r in rows {
        let clock = |g: fn(&ClockStats) -> String| r.sm_clock.as_ref().map(g).unwrap_or_default();
        csv += &format!(
            "{},{},{},{},{},{},{},{},{},{},\"{}\",{},{},\"{}\",{}\n",
            r.level, r.k, f(r.us_per_task), f(r.useful_gflops), f(r.effective_gbps), f(r.fraction_of_floor),
            f(r.fraction_of_fp64_peak), r.max_rel_err.map(|x| format!("{x:.3e}")).unwrap_or_default(), r.tasks, r.best,
            r.note.replace('"', "'"),
            clock(|c| c.sm_mhz_min.to_string()), clock(|c| c.sm_mhz_median.to_string()), clock(|c| c.reasons.join("; ")),
            clock(|c| c.power_w_median.map(|w| format!("{w:.1}")).unwrap_or_default()),
        );
    }
    csv
}

/// The --json and --csv files while the sweep runs: each rewritten after every row (atomically,
/// by `Target::write`: a reader, or an interrupt, finds the old file or the new one, never half
/// of one), so that an interrupted sweep keeps what it measured, in files that parse (the JSON
/// says `"complete": false`). Standard output (`-`) gets its text once, at the end. A file that
/// cannot be written costs one warning; the last word is the final write's.
struct Progress<'a> {
    targets: &'a Targets,
    warned: bool,
}

impl<'a> Progress<'a> {
    fn new(targets: &'a Targets) -> Progress<'a> {
        Progress { targets, warned: false }
    }

    fn save(&mut self, report: &Report) {
        let mut errors = Vec::new();
        if let Some(t @ Target::File { .. }) = &self.targets.json {
            if let Err(e) = json_text(report).map_err(|e| e.to_string()).and_then(|text| t.write(&text)) {
                errors.push(e);
            }
        }
        if let Some(t @ Target::File { .. }) = &self.targets.csv {
            if let Err(e) = t.write(&csv_text(report.rows)) {
                errors.push(e);
            }
        }
        // A comment line, not a second error line: the final write's error is the one that counts.
        if !errors.is_empty() && !self.warned {
            self.warned = true;
            eprintln!("# {} (the sweep goes on, and writes it again after each level)", errors.join("; "));
        }
    }
}

/// What [`measure`] found for one level at one K.
pub(crate) struct Measured {
    /// Median µs per task.
    pub us: f64,
    /// Tasks per timed repetition.
    pub tasks: usize,
    pub max_rel: f64,
    /// The SM clock while it was timed.
    pub clock: Option<ClockStats>,
    /// Blocks per launch.
    pub nblocks: usize,
    pub warmup: WarmupDone,
    pub host_bound_reps: usize,
    pub clusters: Option<ClusterResidency>,
}

/// Prepares, validates and times one level.
#[allow(clippy::too_many_arguments)]
fn measure<B: Backend>(
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

/// Marks the fastest transform level at `k` (not the copy floor, not the bound).
fn mark_fastest(rows: &mut [Row], k: u32) {
    if let Some(best) = rows
        .iter_mut()
        .filter(|r| r.k == k && r.role == Role::Transform && r.us_per_task.is_some())
        .min_by(|a, b| a.us_per_task.partial_cmp(&b.us_per_task).unwrap())
    {
        best.best = true;
    }
}

/// The table; `peak`: the FP64 GEMM peak and the BLAS that measured it.
fn table(rows: &[Row], peak: Option<(f64, &str)>, stream_data: StreamData, power_limit_w: Option<f64>) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "{:<14} {:>3} {:>12} {:>13} {:>10} {:>9} {:>9} {:>10} {:>5}  note", "level", "K", "us/task", "useful Gflop/s", "GB/s", "of floor", "of peak", "SM MHz", "W");
    let mut last_k = None;
    for r in rows {
        if last_k.is_some_and(|k| k != r.k) {
            out.push('\n');
        }
        last_k = Some(r.k);
        let mark = if r.best { " *" } else { "" };
        match r.us_per_task {
            Some(us) => writeln!(
                out,
                "{:<14} {:>3} {:>12.1} {:>13.0} {:>10.0} {:>9.3} {:>9} {:>10} {:>5}{mark}",
                r.level,
                r.k,
                us,
                r.useful_gflops.unwrap_or(0.0),
                r.effective_gbps.unwrap_or(0.0),
                r.fraction_of_floor.unwrap_or(f64::NAN),
                r.fraction_of_fp64_peak.map(|f| format!("{f:.3}")).unwrap_or_else(|| "-".into()),
                r.sm_clock.as_ref().map(clock_cell).unwrap_or_else(|| "-".into()),
                r.sm_clock.as_ref().and_then(|c| c.power_w_median).map(|w| format!("{w:.0}")).unwrap_or_else(|| "-".into()),
            ),
            None => writeln!(out, "{:<14} {:>3} {:>12}  {}", r.level, r.k, "-", r.note),
        }
        .expect("writing to a String");
    }
    if let Some((p, blas)) = peak {
        let _ = writeln!(out, "\n* fastest at that K. Floor: copy level, same process. FP64 GEMM peak: {p:.1} TFLOP/s ({blas}).");
    }
    if rows.iter().any(|r| r.sm_clock.is_some()) {
        let _ = writeln!(out, "SM MHz: the SM clock while the level was timed, median (lowest/median where it moved).");
    }
    if rows.iter().any(|r| r.sm_clock.as_ref().is_some_and(|c| c.power_w_median.is_some())) {
        let _ = writeln!(out, "W: the board power while the level was timed, median of NVML's instantaneous readings; at the board's power limit a level's time is its energy per task over that limit.");
    }
    // A lowered clock slows compute-heavy levels more than the copy: name where it happened.
    let lowered: Vec<String> = rows
        .iter()
        .filter_map(|r| r.sm_clock.as_ref().filter(|c| !c.reasons.is_empty()).map(|c| format!("{} K={} ({})", r.level, r.k, c.describe())))
        .collect();
    if !lowered.is_empty() {
        let _ = writeln!(out, "SM clock lowered by the driver while timing: {}.", lowered.join(", "));
    }
    // Whether the levels were warmed up with `--warmup settle` (and the clock read).
    let settled = rows.iter().any(|r| r.warmup.is_some_and(|w| w.settled.is_some()));
    // Power drawn above the board's limit: a first-second rate the level cannot keep.
    let above: Vec<String> = rows
        .iter()
        .filter_map(|r| r.sm_clock.as_ref().and_then(|c| mra_runtime::clocks::above_limit(c, power_limit_w)).map(|w| format!("{} K={} ({w:.0} W)", r.level, r.k)))
        .collect();
    if let (false, Some(limit)) = (above.is_empty(), power_limit_w) {
        let _ = writeln!(out, "Above the board's {limit:.0} W power limit while timed: {}; {}.", above.join(", "), mra_runtime::clocks::above_limit_why(settled));
    }
    // The bound per K: how far the copy's traffic plus the fewest matrix instructions is
    // from the copy, and the fastest level from it.
    let bounds: Vec<String> = rows
        .iter()
        .filter(|b| b.role == Role::Bound)
        .filter_map(|b| {
            let (us, floor) = (b.us_per_task?, b.fraction_of_floor?);
            // Where the host's launches bounded the copy or the bound, the ratio is partly the host's.
            let host = rows.iter().any(|r| r.k == b.k && r.role != Role::Transform && r.host_bound_reps > 0);
            let host = if host { " (host-bound repetitions: partly the host's launch rate)" } else { "" };
            let fastest = rows.iter().find(|r| r.k == b.k && r.best).and_then(|r| Some(format!("; {} {:.2}× the bound", r.level, r.us_per_task? / us)));
            Some(format!("K={} {:.2}× the copy{host}{}", b.k, 1.0 / floor, fastest.unwrap_or_default()))
        })
        .collect();
    if !bounds.is_empty() {
        let _ = writeln!(
            out,
            "Bound (one kernel: the copy's traffic and the fewest matrix instructions of the transform, results discarded): {}.",
            bounds.join(", ")
        );
    }
    // Repetitions the host's launches bounded: their time is not the kernel's.
    let host: Vec<String> = rows.iter().filter(|r| r.host_bound_reps > 0).map(|r| format!("{} K={} ({} of its repetitions)", r.level, r.k, r.host_bound_reps)).collect();
    if !host.is_empty() {
        let _ = writeln!(out, "Host-bound ({}): {}.", harness::host_bound_rule(), host.join(", "));
    }
    // Cluster levels whose clusters cannot fill the GPU: the rest of its SMs idle while they run.
    let idle: Vec<String> = rows
        .iter()
        .filter_map(|r| r.clusters.filter(|c| r.us_per_task.is_some() && c.idle_fraction() > 0.0).map(|c| format!("{} K={}: {}", r.level, r.k, c.describe())))
        .collect();
    if !idle.is_empty() {
        let _ = writeln!(out, "Clusters: {}.", idle.join("; "));
    }
    if stream_data == StreamData::Private {
        let _ = writeln!(out, "Stream data: private (each stream its own A and C, the copy floor too): no L2 lines shared between tasks, unlike the seed's harness.");
    }
    // --warmup settle: say so, and name where the clock was still moving when timing began.
    if settled {
        use mra_runtime::warmup::{SETTLE_MAX_MS, SETTLE_MHZ, SETTLE_WINDOW_MS};
        let _ = writeln!(
            out,
            "Warm-up: until the SM clock settled ({} s windows within {SETTLE_MHZ} MHz, and the board power within {:.0}% of its limit where read; at most {} s).",
            SETTLE_WINDOW_MS / 1000.0,
            mra_runtime::clocks::POWER_TOLERANCE * 100.0,
            SETTLE_MAX_MS / 1000.0
        );
        let moving: Vec<String> = rows.iter().filter(|r| r.warmup.is_some_and(|w| w.settled == Some(false))).map(|r| format!("{} K={}", r.level, r.k)).collect();
        if !moving.is_empty() {
            let _ = writeln!(out, "Still moving after {} s (timed as it was): {}.", SETTLE_MAX_MS / 1000.0, moving.join(", "));
        }
    }
    out
}

/// The SM MHz column: the median, with the lowest reading where the clock moved.
fn clock_cell(c: &ClockStats) -> String {
    if c.sm_mhz_min == c.sm_mhz_median { format!("{}", c.sm_mhz_median) } else { format!("{}/{}", c.sm_mhz_min, c.sm_mhz_median) }
}

/// The chart's view of a report: the same JSON `mra-bench plot` reads from the --json file.
fn plot_data(report: &Report) -> serde_json::Result<crate::plot::SweepData> {
    serde_json::from_value(serde_json::to_value(report)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of `level` at K = `k` taking `us` µs per task, nothing else measured.
    fn row_at(level: &str, k: u32, us: Option<f64>) -> Row {
        Row {
            level: level.into(),
            k,
            role: levels::find(level).map_or(Role::Transform, |s| s.role()),
            us_per_task: us,
            useful_gflops: None,
            effective_gbps: None,
            fraction_of_floor: None,
            fraction_of_fp64_peak: None,
            max_rel_err: None,
            tasks: 3,
            nfuncs: 8,
            nblocks: Some(512),
            best: false,
            note: String::new(),
            sm_clock: None,
            warmup: None,
            host_bound_reps: 0,
            clusters: None,
        }
    }

    #[test]
    fn sweep_plot_reads_the_report_as_the_plot_command_reads_the_file() {
        let row = |level: &str, us: Option<f64>| row_at(level, 7, us);
        let rows = [row("copy", Some(2.0)), row("L3-regblk", Some(5.0)), row("L4-mma", None)];
        let report = Report {
            device: "GPU".into(),
            arch: "sm_90",
            commit: "abc",
            date_unix: 0,
            launch: "harness",
            nfuncs: 8,
            max_blocks: Some(512),
            streams: 4,
            reps: 1,
            dtype: "f64".into(),
            fp64_gemm_peak_tflops: None,
            sm_clock_source: "not read: test".into(),
            power_limit_w: None,
            warmup: "200 ms".into(),
            stream_data: StreamData::Private,
            complete: true,
            rows: &rows,
        };
        let data = plot_data(&report).expect("the report reads as plot data");
        assert_eq!((data.rows.len(), data.rows[1].k, data.rows[1].us_per_task, data.rows[2].us_per_task), (3, 7, Some(5.0), None));
        assert_eq!(data.stream_data.as_deref(), Some("private"), "the chart's title can say the floor had private stream data");
        let text = serde_json::to_string(&report).unwrap();
        let file = std::env::temp_dir().join(format!("mra-sweep-unit-{}.json", std::process::id()));
        std::fs::write(&file, text).unwrap();
        assert!(crate::plot::load(file.to_str().unwrap()).is_ok(), "a --json file loads for `mra-bench plot`");
    }

    /// An interrupted sweep keeps what it measured: after every row the --json and --csv files
    /// hold every row so far and parse (the JSON as `plot` reads it, saying it is not complete),
    /// and no temporary file is left beside them; standard output waits for the end.
    #[test]
    fn the_result_files_are_rewritten_whole_after_every_row() {
        let dir = std::env::temp_dir().join(format!("mra-sweep-progress-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (json, csv) = (dir.join("s.json"), dir.join("s.csv"));
        std::fs::write(&json, "an older sweep").unwrap();
        let targets = Targets {
            json: Some(Target::check("--json", json.to_str().unwrap()).unwrap()),
            csv: Some(Target::check("--csv", csv.to_str().unwrap()).unwrap()),
            plot: None,
        };
        let head = Report {
            device: "GPU".into(),
            arch: "sm_90",
            commit: "abc",
            date_unix: 0,
            launch: "harness",
            nfuncs: 8,
            max_blocks: Some(512),
            streams: 4,
            reps: 1,
            dtype: "f64".into(),
            fp64_gemm_peak_tflops: None,
            sm_clock_source: "not read: test".into(),
            power_limit_w: None,
            warmup: "200 ms".into(),
            stream_data: StreamData::Shared,
            complete: false,
            rows: &[],
        };
        let all = [row_at("copy", 6, Some(2.0)), Row { note: "a \"quoted\" failure, with a comma".into(), ..row_at("L3-regblk", 6, None) }, row_at("fused", 6, Some(5.0))];
        let mut progress = Progress::new(&targets);
        for n in 1..=all.len() {
            progress.save(&head.with(&all[..n], false));
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("valid JSON after every row");
            assert_eq!((v["rows"].as_array().unwrap().len(), v["complete"].as_bool()), (n, Some(false)), "after row {n}");
            assert_eq!(v["rows"][n - 1]["level"], all[n - 1].level);
            assert!(crate::plot::load(json.to_str().unwrap()).is_ok(), "`mra-bench plot` reads the file after row {n}");
            let text = std::fs::read_to_string(&csv).unwrap();
            assert_eq!(text.lines().count(), n + 1, "the header and {n} rows:\n{text}");
            assert!(text.lines().all(|l| l.matches('"').count() % 2 == 0), "every quote closed:\n{text}");
        }
        assert!(!progress.warned);
        let left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(left.len(), 2, "no temporary file left: {left:?}");
        // Standard output is written once, at the end: rewriting it would repeat the rows.
        let stdout_only = Targets { json: Some(Target::Stdout), csv: None, plot: None };
        let mut quiet = Progress::new(&stdout_only);
        quiet.save(&head.with(&all, false));
        assert!(!quiet.warned);
        // A file that cannot be written any more costs one warning, not the sweep.
        std::fs::remove_dir_all(&dir).unwrap();
        progress.save(&head.with(&all, false));
        assert!(progress.warned);
    }

    #[test]
    fn the_table_shows_the_clock_and_power_each_level_ran_at_and_names_where_the_driver_lowered_it() {
        use mra_runtime::clocks::{ClockSample, ClockStats};
        let stats = |samples: &[(u32, u64, Option<u32>)]| {
            ClockStats::from_samples(&samples.iter().map(|&(sm_mhz, reasons, power_mw)| ClockSample { sm_mhz, reasons, power_mw }).collect::<Vec<_>>())
        };
        let row = |level: &str, sm_clock: Option<ClockStats>| Row {
            useful_gflops: Some(1.0),
            effective_gbps: Some(1.0),
            fraction_of_floor: Some(1.0),
            max_rel_err: Some(0.0),
            sm_clock,
            ..row_at(level, 24, Some(100.0))
        };
        let rows = [
            row("copy", stats(&[(1980, 0x1, Some(560_400)), (1980, 0, Some(571_000))])),
            row("fused-pipe", stats(&[(1980, 0, Some(640_000)), (1470, 0x4, Some(698_600)), (1965, 0x4, Some(697_200))])),
            row("fused", stats(&[(1905, 0, None)])),
            row("L7-breg", None),
        ];
        let t = table(&rows, None, StreamData::Shared, None);
        let lines: Vec<&str> = t.lines().collect();
        let tail = |line: &str| line.split_whitespace().rev().take(2).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(" ");
        assert!(lines[0].contains("SM MHz") && lines[0].trim_end().ends_with("W  note"), "{t}");
        assert_eq!(tail(lines[1]), "1980 560", "steady clock: one number; power: the lower middle of 560.4, 571.0 W\n{t}");
        assert_eq!(tail(lines[2]), "1470/1965 697", "moved: lowest/median; power: the median 697.2 W\n{t}");
        assert_eq!(tail(lines[3]), "1905 -", "clock without power: a dash\n{t}");
        assert!(lines[4].trim_end().ends_with(" -"), "not read: a dash\n{t}");
        assert!(t.contains("SM clock lowered by the driver while timing: fused-pipe K=24 (1470-1980 MHz (median 1965; sw power cap))."), "{t}");
        assert!(t.contains("W: the board power while the level was timed"), "{t}");
        assert!(!t.contains("copy K=24 ("), "idle between repetitions is not a lowered clock\n{t}");
        let plain = table(&[row("copy", None)], None, StreamData::Shared, None);
        assert!(!plain.contains("SM MHz:") && !plain.contains("lowered") && !plain.contains("W: the board"), "no clock, no footnote\n{plain}");
        assert!(!t.contains("Above the board's"), "no limit read, nothing said about it\n{t}");
        // A limit of 680 W: fused-pipe's 697.2 W median is more than 2% above it (693.6 W), the
        // copy's 560.4 W not; at 690 W it is within 2% (703.8 W) and counts as at the limit.
        let hot = table(&rows, None, StreamData::Shared, Some(680.0));
        assert!(hot.contains("Above the board's 680 W power limit while timed: fused-pipe K=24 (697 W); the driver holds the limit on average over seconds"), "{hot}");
        assert!(!table(&rows, None, StreamData::Shared, Some(690.0)).contains("Above the board's"), "697 W is within 2% of 690 W");
        assert!(hot.contains("(`--warmup settle` times it sustained)"), "{hot}");
        // After `--warmup settle` the advice would be circular: the table says what it means instead.
        let settled_rows: Vec<Row> = rows.iter().cloned().map(|r| Row { warmup: Some(WarmupDone { ms: 3000.0, reps: 30, settled: Some(true), sm_mhz: Some(1425) }), ..r }).collect();
        let after_settle = table(&settled_rows, None, StreamData::Shared, Some(680.0));
        assert!(after_settle.contains("fused-pipe K=24 (697 W); the driver holds the limit on average over seconds, and the power was within it when timing began"), "{after_settle}");
        assert!(!after_settle.contains("times it sustained"), "{after_settle}");
        let unpowered = table(&[row("fused", stats(&[(1905, 0, None)]))], None, StreamData::Shared, None);
        assert!(unpowered.contains("SM MHz:") && !unpowered.contains("W: the board"), "no power read, no power footnote\n{unpowered}");
    }

    #[test]
    fn with_warmup_settle_the_table_says_so_and_names_where_the_clock_was_still_moving() {
        let row = |level: &str, settled: Option<bool>| Row {
            warmup: Some(WarmupDone { ms: 4000.0, reps: 10, settled, sm_mhz: settled.map(|_| 1710) }),
            ..row_at(level, 32, Some(400.0))
        };
        let t = table(&[row("copy", Some(true)), row("fused-cluster", Some(false))], None, StreamData::Shared, None);
        assert!(t.contains("Warm-up: until the SM clock settled (1 s windows within 15 MHz, and the board power within 2% of its limit where read; at most 30 s)."), "{t}");
        assert!(t.contains("Still moving after 30 s (timed as it was): fused-cluster K=32."), "{t}");
        let settled = table(&[row("copy", Some(true))], None, StreamData::Shared, None);
        assert!(settled.contains("Warm-up: until") && !settled.contains("Still moving"), "{settled}");
        let fixed = table(&[row("copy", None)], None, StreamData::Shared, None);
        assert!(!fixed.contains("Warm-up"), "a fixed warm-up is the harness's usual: no footnote\n{fixed}");
    }

    #[test]
    fn with_private_stream_data_the_table_says_the_floor_shares_no_l2_lines() {
        let rows = [row_at("copy", 12, Some(20.0))];
        let t = table(&rows, None, StreamData::Private, None);
        assert!(t.contains("Stream data: private (each stream its own A and C, the copy floor too)"), "{t}");
        assert!(!table(&rows, None, StreamData::Shared, None).contains("Stream data"), "the seed's harness needs no footnote");
    }

    #[test]
    fn the_table_names_levels_whose_repetitions_were_host_bound() {
        let rows = [row_at("copy", 6, Some(26.2)), Row { host_bound_reps: 3, ..row_at("fused-pipe", 6, Some(26.2)) }];
        let t = table(&rows, None, StreamData::Shared, None);
        assert!(t.contains("Host-bound (submitting the tasks took >= 90% of the time measured, so the GPU waited for launches): fused-pipe K=6 (3 of its repetitions)."), "{t}");
        assert!(!table(&rows[..1], None, StreamData::Shared, None).contains("Host-bound"), "{t}");
    }

    #[test]
    fn the_table_names_cluster_levels_whose_clusters_leave_block_slots_idle() {
        // A 132-SM sm_90 GPU's counts: 30 clusters of 8 against 264 slots (24 idle); clusters of 4
        // filling all 132 slots of another kernel need no footnote, nor does a level that did
        // not run.
        let res = |cluster_blocks, clusters, slots| Some(ClusterResidency { cluster_blocks, clusters, block_slots: Some(slots) });
        let rows = [
            row_at("copy", 32, Some(264.0)),
            Row { clusters: res(8, 30, 264), ..row_at("fused-cluster", 32, Some(395.0)) },
            Row { clusters: res(4, 33, 132), ..row_at("fused-cluster", 28, Some(250.0)) },
            Row { clusters: res(8, 30, 264), ..row_at("fused-cluster", 10, None) },
        ];
        let t = table(&rows, None, StreamData::Shared, None);
        assert!(t.contains("Clusters: fused-cluster K=32: 30 clusters of 8 at once = 240 of 264 block slots (9.1% idle: a cluster's blocks share one GPC)."), "{t}");
        assert!(!t.contains("K=28:") && !t.contains("K=10:"), "{t}");
        assert!(!table(&rows[..1], None, StreamData::Shared, None).contains("Clusters:"));
    }

    /// The bound: never the fastest level, and its footnote gives bound / copy and the
    /// fastest level / bound (expected values by hand: 5.4 / 4.1 = 1.317, 7.0 / 5.4 = 1.296,
    /// 3.0 / 3.2 = 0.9375), saying where repetitions were host-bound.
    #[test]
    fn the_bound_is_not_marked_fastest_and_its_footnote_gives_both_ratios() {
        let floor = |r: Row, copy: f64| Row { fraction_of_floor: r.us_per_task.map(|us| copy / us), ..r };
        let mut rows = vec![
            floor(row_at("copy", 10, Some(4.1)), 4.1),
            floor(row_at("bound", 10, Some(5.4)), 4.1),
            floor(row_at("fused-pipe", 10, Some(7.0)), 4.1),
            floor(row_at("fused", 10, Some(7.5)), 4.1),
        ];
        assert_eq!(rows[1].role, Role::Bound, "the bound level's role");
        assert_eq!(rows[0].role, Role::Floor, "the copy level's role");
        mark_fastest(&mut rows, 10);
        let marked: Vec<&str> = rows.iter().filter(|r| r.best).map(|r| r.level.as_str()).collect();
        assert_eq!(marked, ["fused-pipe"], "the fastest transform, not the copy or the bound");
        rows.extend([row_at("copy", 6, Some(3.2)), Row { host_bound_reps: 5, fraction_of_floor: Some(3.2 / 3.0), ..row_at("bound", 6, Some(3.0)) }]);
        let t = table(&rows, None, StreamData::Shared, None);
        assert!(t.contains("Bound (one kernel: the copy's traffic and the fewest matrix instructions of the transform, results discarded): K=10 1.32× the copy; fused-pipe 1.30× the bound, K=6 0.94× the copy (host-bound repetitions: partly the host's launch rate)."), "{t}");
    }
}

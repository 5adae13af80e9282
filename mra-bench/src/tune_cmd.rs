//! `mra-bench tune`: search the parameters the levels declare, per (level, K), on the GPU found
//! (either vendor, through the `Backend` trait) or offline with `--compile-only`; every result
//! goes to the tuning database as it is measured (see `mra_runtime::tuning`).

use crate::cli::TuneArgs;
use crate::compile_cmd::Compiler;
use crate::outfile::Target;
use crate::select::{self, CmdResult};
use crate::session::{self, Opened};
use indicatif::{ProgressBar, ProgressStyle};
use mra_codegen::op::Operation;
use mra_codegen::tune::{describe, Config};
use mra_codegen::{levels, Arch, DType, Request, Schedule};
use mra_runtime::harness::{self, Backend, HarnessConfig, Session};
use mra_runtime::tuning::{self, gpu::GpuEvaluator, Db, Device, Evaluate, Harness, Limits, Outcome, Record, Strategy};
use std::time::{Duration, Instant};

pub fn run(args: &TuneArgs) -> CmdResult {
    let dtype = select::dtype(&args.dtype)?;
    // In range (1..=32) and none twice, as the other commands' -K lists.
    let ks = select::k_list(&args.ks)?;
    let schedules = tunable_levels(&args.levels)?;
    let arch = args.arch.as_deref().map(select::arch).transpose()?;
    // An empty --db would fail only when the first record is written, after the work.
    if args.db.as_deref().is_some_and(|p| p.trim().is_empty()) {
        return Err(select::usage("--db: the path is empty; give the tuning database's file, or leave --db out for the default ($MRA_TUNING_DB, else ~/.local/share/mra-dsl/tuning.json)"));
    }
    let fix = match &args.fix {
        Some(f) => {
            no_name_twice(f)?;
            mra_codegen::tune::parse_config(f).map_err(|e| select::usage(format!("--fix: {e}")))?
        }
        None => Config::new(),
    };
    for s in &schedules {
        // Names the level does not declare, or values not among its choices.
        s.with_config(&fix).map_err(|e| select::usage(format!("--fix: {e}")))?;
    }
    let op = args.op.operation();
    if args.list {
        list(&schedules, &ks, arch, dtype, &fix, op)?;
        return Ok(0);
    }
    if !op.is_seed() {
        let budget = args.budget.as_deref().map(parse_duration).transpose()?;
        let t = crate::tune_op::OpTune { levels: &schedules, ks: &ks, op, fix: &fix, max_configs: args.max_configs, budget };
        return crate::tune_op::run(args, t);
    }
    if let Some(path) = &args.write_defaults {
        if !fix.is_empty() || args.compile_only {
            return Err(select::usage("--write-defaults writes what the database holds; it takes neither --fix nor --compile-only"));
        }
        return crate::write_defaults::run(args, path, &schedules, &ks, dtype);
    }
    let strategy = Strategy::parse(&args.strategy).ok_or_else(|| select::usage(format!("unknown --strategy `{}`; known: exhaustive, random, anneal", args.strategy)))?;
    let budget = args.budget.as_deref().map(parse_duration).transpose()?;
    // Limits that let nothing run would end a run with nothing tuned: refused before any work.
    if budget.is_some_and(|b| b.is_zero()) {
        return Err(format!("--budget {}: nothing can be tuned in no time; give a positive budget (e.g. 90s, 10m)", select::quote(args.budget.as_deref().unwrap_or_default())).into());
    }
    if args.max_configs == Some(0) {
        return Err("--max-configs 0: nothing would be tuned; give at least 1".into());
    }
    // The --out file is checked now: a bad path must not cost the whole run (outfile.rs).
    let out = args.out.as_deref().map(|p| Target::check("--out", p)).transpose()?;
    let mut db = match &args.db {
        Some(p) => Db::open(p)?,
        None => Db::open_default()?,
    };
    let plan = Plan { schedules, ks, dtype, strategy, budget, max_configs: args.max_configs, seed: args.seed, top: args.top, start: Instant::now(), fix, out };
    if args.compile_only {
        let arch = arch.ok_or_else(|| select::usage(format!("tune --compile-only needs --arch (one of: {})", mra_codegen::arch::names().join(", "))))?;
        return compile_only(args, &plan, arch, &mut db);
    }
    let harness = HarnessConfig { nfuncs: args.nfuncs, max_blocks: args.max_blocks, tasks: args.tasks, streams: args.streams, reps: args.reps, warmup: args.timing.warmup, stream_data: args.timing.stream_data };
    harness.check()?;
    match session::open(arch, args.compiler.as_deref(), select::cache(args.no_cache), session::GpuFree::Tune)? {
        Opened::Cuda(s) => tune_on(&s, &plan, &harness, &mut db),
        Opened::Hip(s) => tune_on(&s, &plan, &harness, &mut db),
    }
}

/// What to tune and how, from the command line.
struct Plan {
    schedules: Vec<Schedule>,
    ks: Vec<u32>,
    dtype: DType,
    strategy: Strategy,
    budget: Option<Duration>,
    max_configs: Option<usize>,
    /// `--fix`: the parameter values every candidate must have (empty: the whole space).
    fix: Config,
    seed: Option<u64>,
    top: usize,
    start: Instant,
    /// `--out`, checked before any work.
    out: Option<Target>,
}

impl Plan {
    /// The limits of case `i` of `n`: the budget is shared evenly, what a case leaves unused
    /// goes to the next ones.
    fn limits(&self, i: usize, n: usize) -> Limits {
        let deadline = self.budget.map(|b| self.start + b.mul_f64((i + 1) as f64 / n as f64));
        Limits { max_configs: self.max_configs, deadline }
    }

    /// The candidates of `s` at `k` that `--fix` keeps, the defaults at `k` (`None` where they
    /// cannot run there; `--fix` may leave them out of the candidates), and how many
    /// configurations the level declares.
    fn space(&self, s: &Schedule, k: u32, arch: &'static Arch) -> (Vec<Config>, Option<Config>, usize) {
        let (space, declared) = tuning::space(s, k, arch, self.dtype, Operation::SEED);
        // The space holds the defaults first when they plan; they are not its first otherwise.
        let defaults = s.at(mra_codegen::Request { k, arch, dtype: self.dtype }).defaults();
        let defaults = (space.first() == Some(&defaults)).then_some(defaults);
        let space: Vec<Config> = space.into_iter().filter(|c| keeps(&self.fix, c)).collect();
        (space, defaults, declared)
    }

    /// The search seed: --seed, else 0 so that a rerun retraces (and skips) the same steps.
    fn search_seed(&self) -> u64 {
        self.seed.unwrap_or(0)
    }

    /// Refuses a run in which no (level, K) has a candidate on `arch`, before anything is
    /// compiled or measured: it would end with nothing tuned.
    fn check_some_space(&self, arch: &'static Arch) -> CmdResult<()> {
        if self.ks.iter().any(|&k| self.schedules.iter().any(|s| !self.space(s, k, arch).0.is_empty())) {
            return Ok(());
        }
        let k = self.ks[0];
        let s = &self.schedules[0];
        let why = match s.plan(Request { k, arch, dtype: self.dtype }) {
            Err(e) => format!(" (e.g. {} at K={k}: {e})", s.name),
            Ok(_) if !self.fix.is_empty() => format!(" with --fix {}", describe(&self.fix)),
            Ok(_) => String::new(),
        };
        let levels: Vec<&str> = self.schedules.iter().map(|s| s.name.as_str()).collect();
        let ks: Vec<String> = self.ks.iter().map(u32::to_string).collect();
        Err(format!("nothing to tune: no configuration of {} at K={} can run on {} in {}{why}", levels.join(","), ks.join(","), arch.name, self.dtype).into())
    }
}

/// `-l` for tuning: `all` is every level with parameters; a named level without any is an error.
fn tunable_levels(sel: &str) -> CmdResult<Vec<Schedule>> {
    if sel.trim().eq_ignore_ascii_case("all") {
        return Ok(levels::all().into_iter().filter(|s| !s.params().is_empty()).collect());
    }
    let chosen = select::level_list(sel)?;
    for s in &chosen {
        if s.params().is_empty() {
            let have: Vec<String> = levels::all().into_iter().filter(|s| !s.params().is_empty()).map(|s| s.name).collect();
            return Err(select::usage(format!("level {} declares no tunable parameters; levels that do: {}", s.name, have.join(", "))));
        }
    }
    Ok(chosen)
}

/// `90s`, `10m`, `1h`, or plain seconds.
fn parse_duration(s: &str) -> CmdResult<Duration> {
    let s = s.trim();
    let (num, unit) = s.find(|c: char| !c.is_ascii_digit() && c != '.').map_or((s, ""), |i| s.split_at(i));
    let n: f64 = num.parse().map_err(|_| select::usage(format!("--budget `{}`: expected e.g. 90s, 10m, 1h", select::quote(s))))?;
    let secs = match unit {
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(select::usage(format!("--budget `{}`: unknown unit `{}`; use s, m or h", select::quote(s), select::quote(unit)))),
    };
    // `try_`: a budget of 1e30 hours (or a number too long for f64) would panic in from_secs_f64.
    Duration::try_from_secs_f64(secs).map_err(|_| select::usage(format!("--budget `{}` is too large", select::quote(s))))
}

/// `tune --list`: each level's parameters, constraints and candidates per K and arch; with `--fix`,
/// the candidates it keeps out of all; with `--op`, the candidates that lower that operation and
/// its own tuned defaults.
fn list(schedules: &[Schedule], ks: &[u32], arch: Option<&'static Arch>, dtype: DType, fix: &Config, op: Operation) -> CmdResult<()> {
    for s in schedules {
        let params = s.params();
        let product: usize = params.iter().map(|p| p.choices.len()).product();
        crate::outln!("{} ({} parameters, {product} combinations):", s.name, params.len())?;
        for p in &params {
            let c: Vec<String> = p.choices.iter().map(u32::to_string).collect();
            crate::outln!("  {:<12} [{}] default {}   ({}, line {})", p.name, c.join(", "), mra_codegen::tune::default_text(p), p.step, p.line)?;
        }
        for st in s.iter_steps() {
            if let mra_codegen::ir::Step::Constraint(c) = st {
                crate::outln!("  constraint   {c}")?;
            }
        }
        let archs: Vec<&'static Arch> = match arch {
            Some(a) => vec![a],
            None => mra_codegen::arch::ARCHS.iter().collect(),
        };
        for a in archs {
            let per_k: Vec<String> = ks
                .iter()
                .map(|&k| {
                    let space = tuning::space(s, k, a, dtype, op).0;
                    let kept = space.iter().filter(|c| keeps(fix, c)).count();
                    if fix.is_empty() { format!("K={k}: {kept}") } else { format!("K={k}: {kept} of {}", space.len()) }
                })
                .collect();
            let with = if fix.is_empty() { String::new() } else { format!(" with --fix {}", describe(fix)) };
            let with = if op.is_seed() { with } else { format!("{with} of {}", op.tuned_as()) };
            crate::outln!("  {:<8} candidates{with}  {}", a.name, per_k.join(", "))?;
            // The arch's tuned defaults (the first candidate at each K where the file has one).
            if mra_codegen::tuned_defaults::for_arch(a.name).is_some() {
                let tuned: Vec<String> = ks
                    .iter()
                    .map(|&k| match tuned_entry(&s.name, Request { k, arch: a, dtype }, op) {
                        Some(e) => format!("K={k}: {}", describe(&e.config)),
                        None => format!("K={k}: -"),
                    })
                    .collect();
                crate::outln!("  {:<8} tuned defaults  {}", a.name, tuned.join(", "))?;
            }
        }
    }
    Ok(())
}

/// The arch's tuned-defaults entry `tune --list` shows: the seed harness's for the transform, the
/// operation's own (API regime) for another operation.
fn tuned_entry(level: &str, req: Request, op: Operation) -> Option<&'static mra_codegen::tuned_defaults::Entry> {
    use mra_codegen::tuned_defaults::{lookup, lookup_op, Regime};
    if op.is_seed() {
        lookup(level, req, Regime::Harness)
    } else {
        lookup_op(level, req, Regime::Api, op.tuned_as())
    }
}

/// `--fix threads=128,threads=256` would keep the last value silently (parse_config lets a later
/// value override an earlier one, which callers pinning defaults rely on): say which was meant.
fn no_name_twice(fix: &str) -> CmdResult<()> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (name, value) in fix.split([',', ' ']).filter_map(|p| p.split_once('=')).map(|(n, v)| (n.trim(), v.trim())) {
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
            return Err(select::usage(format!("--fix: `{name}` is given twice ({first} and {value}); give each parameter once")));
        }
        seen.push((name, value));
    }
    Ok(())
}

/// Whether `--fix` (`fix`) keeps candidate `c`: every value it names is `c`'s.
fn keeps(fix: &Config, c: &Config) -> bool {
    fix.iter().all(|(n, v)| c.get(n) == Some(v))
}

/// The error of a run that ended with no candidate tried (the --budget spent before the first).
fn nothing_tuned(plan: &Plan) -> Box<dyn std::error::Error> {
    // In seconds, the unit --budget takes (Debug would print `1ms`, which --budget refuses).
    let budget = plan.budget.map(|b| format!(" within --budget {}s", b.as_secs_f64())).unwrap_or_default();
    format!("nothing tuned: no candidate could be tried{budget}; give a larger --budget").into()
}

/// One line per result under the progress bar.
fn outcome_text(o: &Outcome, copy_us: Option<f64>) -> String {
    match o {
        Outcome::Timed { us_per_task, sm_clock, .. } => {
            let at = sm_clock.as_ref().map(|c| format!(" at {}", c.describe_with_power())).unwrap_or_default();
            match copy_us {
                Some(c) => format!("{us_per_task:.2} us/task ({:.2} of copy){at}", c / us_per_task),
                None => format!("{us_per_task:.2} us/task{at}"),
            }
        }
        Outcome::Compiled { resources, occupancy } => format!(
            "fits: {} registers, {} B shared, occupancy {:.2}",
            resources.map_or(0, |r| r.registers),
            resources.map_or(0, |r| r.shared_bytes),
            occupancy.unwrap_or(f64::NAN)
        ),
        Outcome::Rejected { why } => format!("rejected: {why}"),
        Outcome::Invalid { why } => format!("WRONG ANSWER, never chosen: {why}"),
    }
}

fn progress(len: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    bar.set_style(ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {elapsed} {msg}").expect("valid template").progress_chars("=> "));
    bar.set_prefix(what.to_string());
    bar
}

/// One result line on stderr, above the bar (which is hidden when stderr is not a terminal,
/// and then prints nothing itself).
fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// How many of a case's timed candidates had host-bound repetitions.
fn host_bound_candidates<T>(tried: &[(Record, T)]) -> usize {
    tried.iter().filter(|(r, _)| matches!(r.outcome, Outcome::Timed { host_bound_reps: Some(n), .. } if n > 0)).count()
}

/// Tunes every (level, K) on an opened GPU, the copy floor measured once per K.
fn tune_on<B: Backend>(session: &Session<B>, plan: &Plan, harness: &HarnessConfig, db: &mut Db) -> CmdResult {
    let device = mra_runtime::configure::device_of(session);
    let arch = session.gpu.arch();
    plan.check_some_space(arch)?;
    eprintln!("# tuning on {} ({}; {}; {}), database {}", device.gpu, device.arch, device.driver, device.compiler, db.path().display());
    if harness.stream_data == harness::StreamData::Private {
        eprintln!("# --stream-data private: each stream its own A and C (the copy floor too); these records do not compare with the seed's shared-data ones");
    }
    let n_cases = plan.ks.len() * plan.schedules.len();
    let mut case_i = 0;
    let mut failures = 0;
    let mut tried = 0;
    let mut summary_rows = Vec::new();
    for &k in &plan.ks {
        let copy_us = copy_floor(session, k, plan.dtype, harness)?;
        for s in &plan.schedules {
            let i = case_i;
            case_i += 1;
            let (space, defaults, declared) = plan.space(s, k, arch);
            if space.is_empty() {
                let why = match s.plan(Request { k, arch, dtype: plan.dtype }) {
                    Err(e) => e.to_string(),
                    Ok(_) if !plan.fix.is_empty() => format!("no configuration with --fix {} meets the constraints and plans", describe(&plan.fix)),
                    Ok(_) => "no configuration meets the constraints".into(),
                };
                crate::outln!("{} K={k}: not tuned: none of the {declared} configurations can run on {}: {why}", s.name, arch.name)?;
                summary_rows.push(serde_json::json!({
                    "level": s.name, "k": k, "candidates": 0, "declared": declared, "tried": 0, "measured": 0, "seconds": 0.0,
                    "copy_us_per_task": copy_us, "default_us_per_task": null, "best": null, "not_tuned": why,
                }));
                continue;
            }
            let case = Record {
                device: device.clone(),
                level: s.name.clone(),
                k,
                dtype: plan.dtype.to_string(),
                harness: Some(Harness::from(*harness)),
                config: Config::new(),
                outcome: Outcome::Rejected { why: String::new() },
                at: 0,
                op: String::new(),
            };
            let seed = plan.seed.unwrap_or_else(rand::random);
            let mut eval = GpuEvaluator::new(session, s, k, plan.dtype, *harness, seed)?;
            eval.copy_us = Some(copy_us);
            let started = Instant::now();
            // With --fix leaving the defaults out, they are timed first in the same process:
            // the baseline the candidates are compared with (not a candidate).
            let baseline_config = defaults.as_ref().filter(|d| space.first() != Some(*d));
            let candidates = plan.max_configs.map_or(space.len(), |m| m.min(space.len()));
            let bar = progress(candidates + usize::from(baseline_config.is_some()), &format!("{} K={k}", s.name));
            let mut on_result = |r: &Record, cached: bool| {
                bar.inc(1);
                let from = if cached { " (database)" } else { "" };
                say(&bar, format!("  {} K={k} {}: {}{from}", s.name, describe(&r.config), outcome_text(&r.outcome, Some(copy_us))));
            };
            // The baseline, then the candidates; the bar is cleared before either's error is returned.
            let result = baseline_config
                .map(|d| tuning::time_baseline(db, &case, d, &mut eval, &mut on_result))
                .transpose()
                .and_then(|b| tuning::tune_case(db, &case, &space, plan.strategy, plan.search_seed(), plan.limits(i, n_cases), &mut eval, &mut on_result).map(|s| (b, s)));
            bar.finish_and_clear();
            let (baseline, summary) = result?;
            tried += summary.tried.len();
            let secs = started.elapsed().as_secs_f64();
            let ranked = summary.ranked();
            let invalid = summary.tried.iter().filter(|(r, _)| matches!(r.outcome, Outcome::Invalid { .. })).count();
            let rejected = summary.tried.iter().filter(|(r, _)| matches!(r.outcome, Outcome::Rejected { .. })).count();
            crate::outln!(
                "{} K={k}: {} candidates ({declared} declared), {} tried ({} measured now, {} from the database), {rejected} rejected, {invalid} wrong, {secs:.1} s; copy floor {copy_us:.2} us/task",
                s.name,
                space.len(),
                summary.tried.len(),
                summary.measured(),
                summary.tried.len() - summary.measured()
            )?;
            let default_record = match &baseline {
                Some((r, _)) => Some(r),
                None => defaults.as_ref().and_then(|d| summary.tried.iter().map(|(r, _)| r).find(|r| r.config == *d)),
            };
            let default_us = default_record.and_then(|r| r.outcome.us());
            for (rank, r) in ranked.iter().take(plan.top).enumerate() {
                let us = r.outcome.us().unwrap();
                crate::outln!("  #{} {:<50} {us:>9.2} us/task  copy/level {:.3}", rank + 1, describe(&r.config), copy_us / us)?;
            }
            let baseline_note = match &baseline {
                Some((_, true)) => "  (baseline, not a candidate of --fix; from the database)",
                Some((_, false)) => "  (baseline, not a candidate of --fix)",
                None => "",
            };
            match (&defaults, default_us, default_record) {
                (Some(c), Some(d), _) => crate::outln!("  defaults {:<46} {d:>9.2} us/task  copy/level {:.3}{baseline_note}", describe(c), copy_us / d)?,
                (Some(c), None, Some(r)) => crate::outln!("  defaults {}: {}{baseline_note}", describe(c), outcome_text(&r.outcome, Some(copy_us)))?,
                (Some(c), None, None) => crate::outln!("  defaults {}: not reached within the limits", describe(c))?,
                (None, _, _) => crate::outln!("  defaults: cannot run on {} at K={k}", arch.name)?,
            }
            let host_bound = host_bound_candidates(&summary.tried);
            if host_bound > 0 {
                crate::outln!(
                    "  warning: {host_bound} of the {} timed candidates had host-bound repetitions ({}), so their ranking is partly the host's launch rate; a larger -N makes each task long enough to time the GPU",
                    summary.tried.iter().filter(|(r, _)| r.outcome.us().is_some()).count(),
                    harness::host_bound_rule()
                )?;
            }
            if ranked.is_empty() {
                failures += 1;
                crate::outln!("  no valid configuration found for {} at K={k}", s.name)?;
            }
            // What a later run takes from the database is the fastest record: the baseline where
            // it beats every candidate of --fix (a --fix run never makes the level slower).
            let best = match (&baseline, ranked.first()) {
                (Some((b, _)), Some(r)) if b.outcome.us().is_some_and(|d| d < r.outcome.us().unwrap()) => {
                    crate::outln!("  the defaults beat every candidate --fix kept: they stay the tuned configuration")?;
                    Some(b)
                }
                (Some((b, _)), None) if b.outcome.us().is_some() => Some(b),
                (_, r) => r.copied(),
            };
            summary_rows.push(serde_json::json!({
                "level": s.name, "k": k, "candidates": space.len(), "declared": declared, "tried": summary.tried.len(),
                "measured": summary.measured(), "seconds": secs, "copy_us_per_task": copy_us, "default_us_per_task": default_us,
                "default_is_baseline": baseline.is_some(), "default_from_database": baseline.as_ref().is_some_and(|(_, cached)| *cached),
                "host_bound_candidates": host_bound,
                "best": best.map(|r| serde_json::json!({"config": r.config, "us_per_task": r.outcome.us()})),
            }));
        }
    }
    // The budget ran out before the first candidate: say so and fail, with no --out written
    // (no candidate was measured, so the database has no record of this run either).
    if tried == 0 {
        return Err(nothing_tuned(plan));
    }
    print_table(&device, &summary_rows)?;
    if let Some(out) = &plan.out {
        out.write(&serde_json::to_string_pretty(&summary_rows)?)?;
    }
    eprintln!("# results in {}", db.path().display());
    Ok(if failures > 0 { 1 } else { 0 })
}

/// The before/after table of the run: defaults and best, both measured in this process with
/// the same copy floor.
fn print_table(device: &Device, rows: &[serde_json::Value]) -> CmdResult<()> {
    crate::outln!()?;
    crate::outln!("Tuning on {} ({}, {}, {}): µs per task, (copy / level) in parentheses; default and tuned measured in this process", device.gpu, device.arch, device.driver, device.compiler)?;
    crate::outln!()?;
    crate::outln!("| level | K | candidates (declared) | tried (measured now) | tuning s | copy µs | default µs | tuned µs | default/tuned | tuned parameters |")?;
    crate::outln!("|---|---|---|---|---|---|---|---|---|---|")?;
    for r in rows {
        let copy = r["copy_us_per_task"].as_f64().unwrap_or(f64::NAN);
        let cell = |us: Option<f64>| us.map_or("–".to_string(), |u| format!("{u:.2} ({:.2})", copy / u));
        let default = r["default_us_per_task"].as_f64();
        let tuned = r["best"]["us_per_task"].as_f64();
        let ratio = match (default, tuned) {
            (Some(d), Some(t)) => format!("{:.2}x", d / t),
            _ => "–".into(),
        };
        let params = r["best"]["config"].as_object().map_or("–".to_string(), |m| m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "));
        crate::outln!(
            "| {} | {} | {} ({}) | {} ({}) | {:.1} | {copy:.2} | {} | {} | {ratio} | {params} |",
            r["level"].as_str().unwrap_or(""),
            r["k"],
            r["candidates"],
            r["declared"],
            r["tried"],
            r["measured"],
            r["seconds"].as_f64().unwrap_or(0.0),
            cell(default),
            cell(tuned)
        )?;
    }
    Ok(())
}

/// The copy floor at `k` in the same harness, µs per task (on random inputs; the copy level's
/// validation is `validate`'s and `run`'s job).
fn copy_floor<B: Backend>(session: &Session<B>, k: u32, dtype: DType, cfg: &HarnessConfig) -> CmdResult<f64> {
    let copy = levels::find("copy")?;
    let p = session.prepare(&copy, k, dtype)?;
    let bufs = session.allocate(cfg, &p.kernel.plan)?;
    let mut rng = rand::rng();
    let a = harness::random_inputs(dtype, cfg.nfuncs * (k as usize).pow(3), &mut rng)?;
    session.gpu.upload(&bufs.a, &harness::to_device_bytes(dtype, &a)?)?;
    let streams = session.streams(cfg.streams)?;
    let times = harness::time_reps(&session.gpu, &p, &bufs, &streams, cfg)?;
    Ok(harness::median(&times) / cfg.tasks as f64)
}

/// Offline: compile every candidate for `arch`, keep the ones that fit.
struct OfflineEvaluator<'a> {
    compiler: &'a Compiler,
    schedule: &'a Schedule,
    arch: &'static Arch,
    k: u32,
    dtype: DType,
}

impl Evaluate for OfflineEvaluator<'_> {
    fn evaluate(&mut self, config: &Config) -> mra_runtime::Result<Outcome> {
        let invalid = |e: String| mra_runtime::RuntimeError::Invalid(e);
        let s = self.schedule.with_config(config).map_err(|e| invalid(e.to_string()))?;
        let kernel = mra_codegen::generate(&s, Request { k: self.k, arch: self.arch, dtype: self.dtype }).map_err(|e| invalid(e.to_string()))?;
        let report = match self.compiler.report(&kernel, self.arch, self.dtype, self.k) {
            Ok(r) => r,
            Err(e) => return Ok(Outcome::Rejected { why: format!("does not compile: {}", tuning::brief(&e.to_string())) }),
        };
        let fit = report.fit();
        let r = fit.resources;
        let why = if r.spill_bytes > 0 {
            Some(format!("spills or uses scratch memory ({} B; {} registers)", r.spill_bytes, r.registers))
        } else if r.registers > self.arch.max_registers_per_thread {
            Some(format!("{} registers per thread, {} allows {}", r.registers, self.arch.name, self.arch.max_registers_per_thread))
        } else if r.shared_bytes > self.arch.shared_bytes_max {
            Some(format!("{} B shared memory, {} allows {}", r.shared_bytes, self.arch.name, self.arch.shared_bytes_max))
        } else if fit.blocks == 0 {
            Some("no block fits on a multiprocessor (occupancy 0)".into())
        } else {
            kernel.plan.min_blocks.filter(|&m| fit.blocks < m).map(|m| format!("launch_bounds asks {m} blocks per multiprocessor, resources allow {}", fit.blocks))
        };
        Ok(match why {
            Some(why) => Outcome::Rejected { why },
            None => Outcome::Compiled { resources: Some(r), occupancy: Some(fit.occupancy) },
        })
    }
}

/// `tune --compile-only`: every candidate compiled offline; survivors into the database.
fn compile_only(args: &TuneArgs, plan: &Plan, arch: &'static Arch, db: &mut Db) -> CmdResult {
    // Before a compiler is looked for: no candidate anywhere is the run's error.
    plan.check_some_space(arch)?;

    let compiler = Compiler::choose(arch, args.compiler.as_deref())?;
    let version = match &compiler {
        Compiler::Nvidia { nvrtc, .. } => format!("NVRTC {}.{}", nvrtc.version.0, nvrtc.version.1),
        Compiler::Amd { compiler, .. } => compiler.describe(),
    };
    let device = Device { gpu: String::new(), arch: arch.name.to_string(), driver: String::new(), compiler: version };
    eprintln!("# compiling every candidate for {} with {} (no GPU); database {}", arch.name, device.compiler, db.path().display());
    let mut survivors = Vec::new();
    let mut tried = 0;
    let n_cases = plan.ks.len() * plan.schedules.len();
    let mut i = 0;
    for &k in &plan.ks {
        for s in &plan.schedules {
            let (space, _, declared) = plan.space(s, k, arch);
            i += 1;
            if space.is_empty() {
                crate::outln!("{} K={k}: none of the {declared} configurations can run on {}", s.name, arch.name)?;
                continue;
            }
            let case = Record {
                device: device.clone(),
                level: s.name.clone(),
                k,
                dtype: plan.dtype.to_string(),
                harness: None,
                config: Config::new(),
                outcome: Outcome::Rejected { why: String::new() },
                at: 0,
                op: String::new(),
            };
            let mut eval = OfflineEvaluator { compiler: &compiler, schedule: s, arch, k, dtype: plan.dtype };
            let bar = progress(space.len(), &format!("{} K={k}", s.name));
            let mut on_result = |r: &Record, cached: bool| {
                bar.inc(1);
                let from = if cached { " (database)" } else { "" };
                say(&bar, format!("  {} K={k} {}: {}{from}", s.name, describe(&r.config), outcome_text(&r.outcome, None)));
            };
            // Every candidate: the point is the full list of survivors.
            let limits = Limits { max_configs: plan.max_configs, deadline: plan.limits(i - 1, n_cases).deadline };
            let summary = tuning::tune_case(db, &case, &space, Strategy::Exhaustive, 0, limits, &mut eval, &mut on_result);
            bar.finish_and_clear();
            let summary = summary?;
            tried += summary.tried.len();
            let ok: Vec<&Record> = summary.tried.iter().map(|(r, _)| r).filter(|r| matches!(r.outcome, Outcome::Compiled { .. })).collect();
            crate::outln!("{} K={k} on {}: {} candidates ({declared} declared), {} compiled, {} survive", s.name, arch.name, space.len(), summary.tried.len(), ok.len())?;
            for r in &ok {
                crate::outln!("  {:<50} {}", describe(&r.config), outcome_text(&r.outcome, None))?;
            }
            survivors.extend(ok.into_iter().cloned());
        }
    }
    if tried == 0 {
        return Err(nothing_tuned(plan));
    }
    if let Some(out) = &plan.out {
        out.write(&serde_json::to_string_pretty(&survivors)?)?;
        if let Target::File { path, .. } = out {
            eprintln!("# {} survivors written to {}", survivors.len(), path.display());
        }
    }
    eprintln!("# results in {}", db.path().display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fix_naming_a_parameter_twice_is_refused() {
        let e = no_name_twice("threads=128,threads=256").unwrap_err();
        assert!(e.downcast_ref::<select::Usage>().is_some());
        assert_eq!(e.to_string(), "--fix: `threads` is given twice (128 and 256); give each parameter once");
        assert!(no_name_twice("threads=128 pad_a=4").is_ok());
        assert!(no_name_twice("cluster").is_ok(), "not name=value: parse_config's own error");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("42").unwrap(), Duration::from_secs(42));
        assert!(parse_duration("10 parsecs").is_err());
        assert!(parse_duration("m").is_err());
    }

    #[test]
    fn host_bound_candidates_counts_the_timed_ones_with_host_bound_repetitions() {
        let timed = |host_bound_reps| Outcome::Timed { us_per_task: 3.0, copy_us_per_task: None, max_rel_err: 0.0, resources: None, sm_clock: None, host_bound_reps };
        let rec = |outcome| Record {
            device: Device { gpu: "G".into(), arch: "sm_90".into(), driver: String::new(), compiler: String::new() },
            level: "fused".into(),
            k: 6,
            dtype: "f64".into(),
            harness: None,
            config: Config::new(),
            outcome,
            at: 0,
            op: String::new(),
        };
        let tried = vec![(rec(timed(Some(5))), true), (rec(timed(None)), true), (rec(timed(Some(2))), false), (rec(Outcome::Invalid { why: String::new() }), true)];
        assert_eq!(host_bound_candidates(&tried), 2);
        assert_eq!(host_bound_candidates(&tried[1..2]), 0);
    }
}

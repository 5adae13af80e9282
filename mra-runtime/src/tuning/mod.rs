//! Auto-tuning the parameters a schedule declares (`tune([..], default = N)` in the DSL).
//!
//! - [`space`]: the declared product, filtered by the schedule's constraints and the arch (the
//!   planner refuses what does not fit: shared memory, warp/wave multiples, thread limits);
//! - [`search`]: exhaustive, random and annealing strategies over it, GPU-free;
//! - [`tune_case`]: runs a strategy with an [`Evaluate`]r, skipping what the database already
//!   holds and writing every new result to it at once ([`db`]); [`time_baseline`] measures the
//!   defaults the same way where the candidates leave them out;
//! - [`gpu::GpuEvaluator`]: the evaluator on any [`Backend`](crate::backend::Backend): compile
//!   through the kernel cache, reject from the compile report, validate against the FP64
//!   reference on poisoned outputs, then time in the seed's harness;
//! - [`lookup`]: the tuned configuration for a device, for every command that runs a level.

pub mod db;
pub mod gpu;
pub mod search;

pub use db::{Db, Device, Harness, Outcome, Record};
pub use search::{Limits, Strategy};

use crate::error::{Result, RuntimeError};
use mra_codegen::tune::describe;
use mra_codegen::tune::Config;
use mra_codegen::tuned_defaults::Regime;
use mra_codegen::op::Operation;
use mra_codegen::{Arch, DType, Request, Schedule};

/// The configurations of `schedule` that plan `op` for `k`, `arch` and `dtype` (constraints and
/// arch limits hold, and the operation's own refusals: a rank sum's parameters are not the
/// transform's), the defaults first (the schedule's, or the arch's tuned defaults at `k`); and
/// how many the declared product had.
pub fn space(schedule: &Schedule, k: u32, arch: &'static Arch, dtype: DType, op: Operation) -> (Vec<Config>, usize) {
    let all = schedule.at(Request { k, arch, dtype }).space();
    let n = all.len();
    let ok = all
        .into_iter()
        .filter(|c| schedule.with_config(c).is_ok_and(|s| s.plan_op(Request { k, arch, dtype }, op).is_ok()))
        .collect();
    (ok, n)
}

/// A compiler's log in one short line: its error lines (at most three), else its first line. A
/// line already said by an earlier one is left out (a compile error's first line ends with the
/// compiler's first error, which its log then repeats).
pub fn brief(log: &str) -> String {
    let mut errors: Vec<&str> = Vec::new();
    for l in log.lines().map(str::trim).filter(|l| l.contains("error")) {
        if errors.len() < 3 && !errors.iter().any(|e| e.contains(l)) {
            errors.push(l);
        }
    }
    let line = if errors.is_empty() { log.lines().next().unwrap_or("").to_string() } else { errors.join("; ") };
    line.chars().take(400).collect()
}

/// Measures one configuration.
pub trait Evaluate {
    /// The outcome of `config`; `Err` ends the run (nothing is recorded for it).
    fn evaluate(&mut self, config: &Config) -> Result<Outcome>;
}

/// What [`tune_case`] did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Every configuration tried, in order, with its record (new or from the database).
    pub tried: Vec<(Record, bool)>,
}

impl Summary {
    /// Configurations measured in this run (not taken from the database).
    pub fn measured(&self) -> usize {
        self.tried.iter().filter(|(_, cached)| !cached).count()
    }

    /// Timed results, fastest first.
    pub fn ranked(&self) -> Vec<&Record> {
        let mut r: Vec<&Record> = self.tried.iter().map(|(r, _)| r).filter(|r| r.outcome.us().is_some()).collect();
        r.sort_by(|a, b| a.outcome.us().unwrap().total_cmp(&b.outcome.us().unwrap()));
        r
    }
}

/// Tunes one case (`case`: device, level, K, dtype, harness; its config and outcome are
/// ignored) over `space` with `strategy`: a configuration the database holds for this case is
/// not measured again; every new result is written to the database before the next starts.
/// `progress` sees each result (`true`: from the database).
pub fn tune_case(
    db: &mut Db,
    case: &Record,
    space: &[Config],
    strategy: Strategy,
    seed: u64,
    limits: Limits,
    eval: &mut dyn Evaluate,
    progress: &mut dyn FnMut(&Record, bool),
) -> Result<Summary> {
    let mut summary = Summary::default();
    let mut cost = |cfg: &Config| -> Result<Option<f64>> {
        let (record, cached) = evaluate_one(db, case, cfg, eval)?;
        progress(&record, cached);
        let us = match &record.outcome {
            Outcome::Timed { us_per_task, .. } => Some(*us_per_task),
            // Offline: every survivor is as good as another; compile-only searches exhaustively.
            Outcome::Compiled { .. } => Some(0.0),
            Outcome::Rejected { .. } | Outcome::Invalid { .. } => None,
        };
        summary.tried.push((record, cached));
        Ok(us)
    };
    search::search(space, strategy, seed, limits, &mut cost)?;
    Ok(summary)
}

/// The defaults of a case whose candidates leave them out (`tune --fix`), measured before the
/// candidates as the baseline they are compared with: through the database as a candidate is
/// (`true`: from it), but not one of the candidates, so never among a [`Summary`]'s results.
pub fn time_baseline(db: &mut Db, case: &Record, defaults: &Config, eval: &mut dyn Evaluate, progress: &mut dyn FnMut(&Record, bool)) -> Result<(Record, bool)> {
    let (record, cached) = evaluate_one(db, case, defaults, eval)?;
    progress(&record, cached);
    Ok((record, cached))
}

/// One configuration's record: the database's if it holds one for `case`, else measured now
/// and written to the database (`true`: from the database).
fn evaluate_one(db: &mut Db, case: &Record, cfg: &Config, eval: &mut dyn Evaluate) -> Result<(Record, bool)> {
    if let Some(r) = db.find(case, cfg) {
        return Ok((r.clone(), true));
    }
    // Between candidates: a safe point of an interrupt.
    crate::interrupt::check()?;
    // Recorded as failed before it runs: a candidate that kills the process (a sticky GPU
    // fault such as a misaligned access poisons the whole context) stays marked, so a rerun
    // skips it and it is never chosen. Its real outcome replaces this record when the
    // evaluation returns.
    let pending = Outcome::Invalid { why: "did not finish: the candidate crashed the process (a GPU fault), or the process was killed".into() };
    db.put(Record { config: cfg.clone(), outcome: pending, at: db::now(), ..case.clone() })?;
    let timeouts = crate::process::timeouts();
    let outcome = eval.evaluate(cfg);
    // An interrupt, or a tool stopped at MRA_TOOL_TIMEOUT, during the evaluation makes its
    // outcome no verdict on the candidate (a compiler stopped either way reads as "does not
    // compile"): the pending record goes, so that a rerun (with a longer limit) tries it again.
    let interrupted = crate::interrupt::pending().is_some() || matches!(outcome, Err(RuntimeError::Interrupted));
    let timed_out = crate::process::timeouts() != timeouts;
    if interrupted || timed_out {
        db.remove(case, cfg)?;
        if interrupted {
            return Err(RuntimeError::Interrupted);
        }
        let why = match &outcome {
            Ok(Outcome::Rejected { why } | Outcome::Invalid { why }) => format!(" ({why})"),
            Ok(_) => String::new(),
            Err(e) => format!(" ({})", brief(&e.to_string())),
        };
        return Err(RuntimeError::Invalid(format!(
            "{} K={} {}: not recorded, as a tool was stopped at its time limit: rerun with a larger {} to try it{why}",
            case.level,
            case.k,
            describe(cfg),
            crate::process::TIMEOUT_ENV
        )));
    }
    let outcome = outcome.map_err(|e| {
        RuntimeError::Invalid(format!(
            "{} K={} {}: {e}; the candidate is recorded as failed in {}, rerun `mra-bench tune` to go on without it",
            case.level,
            case.k,
            describe(cfg),
            db.path().display()
        ))
    })?;
    let r = Record { config: cfg.clone(), outcome, at: db::now(), ..case.clone() };
    db.put(r.clone())?;
    Ok((r, false))
}

/// The tuned configuration of `schedule` at `k` for `device` (or, with an empty `device.gpu`,
/// for any GPU of `device.arch`): the fastest valid timed record of `regime` (an API command
/// falls back on a harness one), if the database has one.
/// The database is the default one ([`db::default_path`]); `Ok(None)` if it does not exist.
/// For the commands that run or export a level: apply it with `Schedule::with_config`.
pub fn lookup(device: &Device, level: &str, k: u32, dtype: DType, harness: Option<Harness>, regime: Regime) -> Result<Option<Record>> {
    let Some(path) = db::default_path() else { return Ok(None) };
    if !path.exists() {
        return Ok(None);
    }
    let db = Db::open(path)?;
    Ok(lookup_in(&db, device, level, k, dtype, harness, regime))
}

/// [`lookup`] in a given database.
pub fn lookup_in(db: &Db, device: &Device, level: &str, k: u32, dtype: DType, harness: Option<Harness>, regime: Regime) -> Option<Record> {
    let dtype = dtype.to_string();
    if device.gpu.is_empty() {
        db.best_for_arch(&device.arch, level, k, &dtype, regime).cloned()
    } else {
        db.best(device, level, k, &dtype, harness, regime).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::db::tests::{record, timed};
    use super::*;
    use mra_codegen::tune::parse_config;
    use std::collections::BTreeSet;
    use std::time::Duration;

    /// A compile error whose first line ends with the first error (error::first_error) says it
    /// once in a rejection.
    #[test]
    fn brief_says_each_error_once() {
        let e = crate::RuntimeError::Compile { entry: "k".into(), arch: "sm_90".into(), log: "k.cu(3): error: expected an expression\n1 error detected\n".into() };
        assert_eq!(brief(&e.to_string()), "NVRTC could not compile k for sm_90: k.cu(3): error: expected an expression; 1 error detected");
    }

    /// A cost function over the fused level's space on sm_90: µs from the parameters; one
    /// configuration (the fastest) is wrong and must fail validation; `delay` per evaluation.
    struct Fake {
        wrong: Config,
        delay: Duration,
        calls: Vec<Config>,
    }

    impl Evaluate for Fake {
        fn evaluate(&mut self, c: &Config) -> Result<Outcome> {
            std::thread::sleep(self.delay);
            self.calls.push(c.clone());
            if *c == self.wrong {
                return Ok(Outcome::Invalid { why: "max rel err 3.1e-1 (limit 1e-10)".into() });
            }
            let us = 10.0 + (c["threads"] as f64 - 256.0).abs() / 64.0 + c["pad_a"] as f64 * 0.5 + c["unroll_k"] as f64 + c["min_blocks"] as f64 * 0.25;
            let us = us + c.get("coalesce_c").copied().unwrap_or(0) as f64 * 0.125 + c.get("pair_rows").copied().unwrap_or(0) as f64 * 0.0625;
            let us = us + c.get("swap_operands").copied().unwrap_or(0) as f64 * 0.09375;
            Ok(timed(us))
        }
    }

    fn fused_space() -> Vec<Config> {
        let fused = mra_codegen::levels::find("fused").unwrap();
        space(&fused, 8, mra_codegen::arch::find("sm_90").unwrap(), DType::F64, Operation::SEED).0
    }

    fn temp_db(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("mra-tune-{name}-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&p);
        p
    }

    #[test]
    fn the_arch_and_constraints_filter_the_space() {
        let fused = mra_codegen::levels::find("fused").unwrap();
        let sm90 = mra_codegen::arch::find("sm_90").unwrap();
        let (ok, all) = space(&fused, 20, sm90, DType::F64, Operation::SEED);
        // min_blocks * 2 * K * (K*K + pad) * 8 <= 227 KiB: at K = 20 only min_blocks = 1 fits;
        // align_runs <= K % 2: at even K only align_runs = 0. (threads, min_blocks, pad_a,
        // unroll_k, align_runs, coalesce_c, pair_rows, swap_operands, stage_terms, restage_a.)
        // swap_operands = 1 takes pair_rows, coalesce_c and unroll_k at 0: 180 + 3 · 5. The
        // transform refuses stage_terms 2, 3 and restage_a 1 (a rank sum's), so it times no
        // copies of one kernel.
        assert_eq!(all, 3 * 2 * 5 * 3 * 2 * 2 * 2 * 2 * 3 * 2);
        assert_eq!(ok.len(), 3 * 5 * 3 * 2 * 2 + 3 * 5, "{ok:?}");
        assert!(ok.iter().all(|c| c["min_blocks"] == 1 && c["align_runs"] == 0 && c["stage_terms"] == 0 && c["restage_a"] == 0));
        // The rank sum's space has all three (pad 4 at K = 10: its three buffers and a ring of
        // three slots fit in shared memory beside one another).
        let rank_sum = Operation { matrices: mra_codegen::Matrices::RankSum, layout: mra_codegen::Layout::Contiguous, scaled: true };
        let (ok, _) = space(&fused, 10, sm90, DType::F64, rank_sum);
        let stages: std::collections::BTreeSet<u32> = ok.iter().map(|c| c["stage_terms"]).collect();
        assert_eq!(stages, [0, 2, 3].into());
        // K = 32 does not fit in shared memory at all. On gfx90a's 64 KiB LDS, K = 16 fits
        // only unpadded (2 * 16 * 256 * 8 = 65536 bytes) and with one block per CU; its MFMA
        // has no row pairs, so pair_rows stays 0 (pair_rows <= row_pairs); swap_operands = 1 adds
        // the three block sizes at unroll_k 0, coalesce_c 0.
        assert!(space(&fused, 32, sm90, DType::F64, Operation::SEED).0.is_empty());
        let (ok, _) = space(&fused, 16, mra_codegen::arch::find("gfx90a").unwrap(), DType::F64, Operation::SEED);
        assert_eq!(ok.len(), 3 * 3 * 2 + 3, "{ok:?}");
        assert!(ok.iter().all(|c| c["pad_a"] == 0 && c["min_blocks"] == 1 && c["pair_rows"] == 0));
        // 64-thread blocks are a wave64 multiple, so all of L7's threads choices stay on gfx90a.
        let l7 = mra_codegen::levels::find("L7").unwrap();
        let (ok, all) = space(&l7, 16, mra_codegen::arch::find("gfx90a").unwrap(), DType::F64, Operation::SEED);
        // threads * min_blocks <= 2048 keeps (512, 4): exactly an SM's 2048 threads.
        assert_eq!((ok.len(), all), (all, 4 * 3 * 3));
    }

    #[test]
    fn a_failing_candidate_is_recorded_and_never_chosen() {
        let space = fused_space();
        let wrong = parse_config("threads=256 pad_a=0 unroll_k=0 min_blocks=1 align_runs=0 coalesce_c=0 pair_rows=0 swap_operands=0 stage_terms=0 restage_a=0").unwrap();
        assert!(space.contains(&wrong));
        let path = temp_db("invalid");
        let mut db = Db::open(&path).unwrap();
        let case = record(&[], timed(0.0));
        let mut fake = Fake { wrong: wrong.clone(), delay: Duration::ZERO, calls: vec![] };
        let s = tune_case(&mut db, &case, &space, Strategy::Exhaustive, 0, Limits::default(), &mut fake, &mut |_, _| {}).unwrap();
        assert_eq!(s.measured(), space.len());
        let best = &s.ranked()[0];
        assert_ne!(best.config, wrong);
        // By hand from the fake's formula: 10 + 0.25·min_blocks + 0.5·pad_a + 0.125·coalesce_c +
        // 0.0625·pair_rows + 0.09375·swap_operands at threads=256, unroll_k=0; with (pad 0,
        // min_blocks 1, coalesce_c 0, pair_rows 0, swap_operands 0) wrong, next is the same with
        // pair_rows 1: 10.3125 (then swap_operands 1: 10.34375, coalesce_c 1: 10.375).
        assert_eq!(best.config, parse_config("threads=256 pad_a=0 unroll_k=0 min_blocks=1 align_runs=0 coalesce_c=0 pair_rows=1 swap_operands=0 stage_terms=0 restage_a=0").unwrap());
        assert!(matches!(db.find(&case, &wrong).unwrap().outcome, Outcome::Invalid { .. }));
        assert_eq!(lookup_in(&db, &case.device, "fused", 8, DType::F64, None, Regime::Harness).unwrap().config, best.config);
        let _ = std::fs::remove_file(&path);
    }

    /// `tune --fix` leaving the defaults out: they are measured first, as the baseline, kept out
    /// of the candidates' results, and taken from the database on a rerun as a candidate is.
    #[test]
    fn the_baseline_is_measured_first_and_is_not_a_candidate() {
        let all = fused_space();
        let defaults = all[0].clone();
        let fix = parse_config("threads=512").unwrap();
        assert_ne!(defaults["threads"], 512, "the fused level's default at K = 8 is not 512 threads");
        let space: Vec<Config> = all.iter().filter(|c| c["threads"] == 512).cloned().collect();
        assert!(!space.contains(&defaults) && !space.is_empty());
        let path = temp_db("baseline");
        let mut db = Db::open(&path).unwrap();
        let case = record(&[], timed(0.0));
        let mut fake = Fake { wrong: fix.clone(), delay: Duration::ZERO, calls: vec![] };
        let mut seen = vec![];
        let (base, cached) = time_baseline(&mut db, &case, &defaults, &mut fake, &mut |r, _| seen.push(r.config.clone())).unwrap();
        let s = tune_case(&mut db, &case, &space, Strategy::Exhaustive, 0, Limits::default(), &mut fake, &mut |_, _| {}).unwrap();
        assert_eq!(fake.calls[0], defaults, "the baseline runs before any candidate");
        assert_eq!(fake.calls.len(), 1 + space.len());
        assert_eq!((seen, cached), (vec![defaults.clone()], false));
        // The fake's formula at the defaults: 10 + |threads - 256| / 64 + 0.5·pad_a + unroll_k + 0.25·min_blocks (+ 0.125·coalesce_c + 0.0625·pair_rows + 0.09375·swap_operands).
        let d = |n: &str| defaults[n] as f64;
        let want = 10.0 + (d("threads") - 256.0).abs() / 64.0 + 0.5 * d("pad_a") + d("unroll_k") + 0.25 * d("min_blocks") + 0.125 * d("coalesce_c") + 0.0625 * d("pair_rows") + 0.09375 * d("swap_operands");
        assert_eq!(base.outcome.us(), Some(want));
        assert!(s.tried.iter().all(|(r, _)| r.config["threads"] == 512), "the baseline is not among the candidates' results");
        // A rerun takes it from the database, measuring nothing.
        let mut again = Fake { wrong: fix, delay: Duration::ZERO, calls: vec![] };
        let (base2, cached2) = time_baseline(&mut db, &case, &defaults, &mut again, &mut |_, _| {}).unwrap();
        assert!(cached2 && again.calls.is_empty());
        assert_eq!(base2.outcome.us(), Some(want));
        // By the fake's formula the defaults (256 threads) beat every 512-thread candidate (by 2 µs
        // at least): a later run takes them from the database, not the best candidate.
        assert!(s.ranked()[0].outcome.us().unwrap() > want);
        assert_eq!(lookup_in(&db, &case.device, "fused", 8, DType::F64, None, Regime::Harness).unwrap().config, defaults);
        let _ = std::fs::remove_file(&path);
    }

    /// A candidate whose evaluation fails outright (as a sticky GPU fault does: the context is
    /// gone, the process must stop) ends the run with its configuration named, stays recorded
    /// as failed, and the rerun goes on without evaluating it again.
    #[test]
    fn a_candidate_that_crashes_the_run_is_skipped_on_rerun() {
        struct Crashing(Config, Vec<Config>);
        impl Evaluate for Crashing {
            fn evaluate(&mut self, c: &Config) -> Result<Outcome> {
                self.1.push(c.clone());
                if *c == self.0 {
                    return Err(RuntimeError::Invalid("CUDA_ERROR_MISALIGNED_ADDRESS: misaligned address".into()));
                }
                Ok(timed(10.0 + c["pad_a"] as f64))
            }
        }
        let space = fused_space();
        let bad = space[space.len() / 2].clone();
        let path = temp_db("crash");
        let case = record(&[], timed(0.0));
        let mut db = Db::open(&path).unwrap();
        let mut first = Crashing(bad.clone(), vec![]);
        let err = tune_case(&mut db, &case, &space, Strategy::Exhaustive, 0, Limits::default(), &mut first, &mut |_, _| {}).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&describe(&bad)) && msg.contains("misaligned") && msg.contains("rerun"), "{msg}");
        // On disk (a fresh open, as a new process would see it): recorded as failed.
        let mut db = Db::open(&path).unwrap();
        assert!(matches!(db.find(&case, &bad).unwrap().outcome, Outcome::Invalid { .. }));
        let mut second = Crashing(Config::new(), vec![]);
        let s = tune_case(&mut db, &case, &space, Strategy::Exhaustive, 0, Limits::default(), &mut second, &mut |_, _| {}).unwrap();
        assert!(!second.1.contains(&bad), "the crashing candidate was run again");
        assert_eq!(first.1.len() - 1 + second.1.len(), space.len() - 1, "something was measured twice");
        assert_ne!(s.ranked()[0].config, bad);
        let _ = std::fs::remove_file(&path);
    }

    /// What is no verdict on a candidate: the one in flight at an interrupt, and one whose
    /// compiler was stopped at MRA_TOOL_TIMEOUT (which reads as "does not compile"). Neither is
    /// recorded (the pending record goes), the run stops with the reason, and the rerun tries it.
    #[test]
    fn an_interrupted_or_timed_out_candidate_is_not_recorded_and_a_rerun_tries_it() {
        /// Fails on `transient` the first time it meets it; the fake's times otherwise.
        struct Transient {
            transient: Config,
            timeout: bool,
            calls: Vec<Config>,
        }
        impl Evaluate for Transient {
            fn evaluate(&mut self, c: &Config) -> Result<Outcome> {
                self.calls.push(c.clone());
                if *c != self.transient {
                    return Ok(timed(10.0 + c["pad_a"] as f64));
                }
                if !self.timeout {
                    return Err(RuntimeError::Interrupted);
                }
                // A compiler that hangs, as the offline evaluator sees it: "does not compile".
                let e = crate::process::output_within(&mut std::process::Command::new("sleep").arg("10"), Some(Duration::from_millis(50))).unwrap_err();
                Ok(Outcome::Rejected { why: format!("does not compile: running clang: {e}") })
            }
        }
        let space = fused_space();
        let transient = space[space.len() / 3].clone();
        for timeout in [false, true] {
            let path = temp_db(if timeout { "timeout" } else { "interrupted" });
            let case = record(&[], timed(0.0));
            let mut db = Db::open(&path).unwrap();
            let mut first = Transient { transient: transient.clone(), timeout, calls: vec![] };
            let err = tune_case(&mut db, &case, &space, Strategy::Exhaustive, 0, Limits::default(), &mut first, &mut |_, _| {}).unwrap_err();
            if timeout {
                let msg = err.to_string();
                assert!(msg.contains(&describe(&transient)) && msg.contains("not recorded") && msg.contains(crate::process::TIMEOUT_ENV) && !msg.contains('\n'), "{msg}");
            } else {
                assert!(matches!(err, RuntimeError::Interrupted), "{err}");
            }
            // On disk, as a rerun sees it: what was measured before it, and nothing for it.
            let mut db = Db::open(&path).unwrap();
            assert_eq!(db.records().len(), first.calls.len() - 1, "timeout {timeout}");
            assert!(db.find(&case, &transient).is_none(), "timeout {timeout}: {:?}", db.find(&case, &transient));
            let mut second = Transient { transient: Config::new(), timeout, calls: vec![] };
            tune_case(&mut db, &case, &space, Strategy::Exhaustive, 0, Limits::default(), &mut second, &mut |_, _| {}).unwrap();
            assert_eq!(second.calls[0], transient, "timeout {timeout}: the rerun starts with it");
            assert_eq!(first.calls.len() - 1 + second.calls.len(), space.len(), "nothing measured twice");
            assert_eq!(db.find(&case, &transient).unwrap().outcome.us(), Some(10.0 + transient["pad_a"] as f64));
            let _ = std::fs::remove_file(&path);
        }
    }

    /// Run by [`an_interrupted_run_resumes_without_measuring_anything_twice`] in a child
    /// process, which it kills mid-run.
    #[test]
    fn child_tuning_run() {
        let Ok(path) = std::env::var("MRA_TEST_TUNE_CHILD_DB") else { return };
        let mut db = Db::open(&path).unwrap();
        let mut fake = Fake { wrong: Config::new(), delay: Duration::from_millis(20), calls: vec![] };
        tune_case(&mut db, &record(&[], timed(0.0)), &fused_space(), Strategy::Anneal, 7, Limits::default(), &mut fake, &mut |_, _| {}).unwrap();
    }

    #[test]
    fn an_interrupted_run_resumes_without_measuring_anything_twice() {
        let path = temp_db("resume");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tuning::tests::child_tuning_run", "--nocapture", "--test-threads=1"])
            .env("MRA_TEST_TUNE_CHILD_DB", &path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Kill it once a few results are on disk (each takes 20 ms), long before it finishes.
        let start = std::time::Instant::now();
        let wrote = loop {
            std::thread::sleep(Duration::from_millis(5));
            if Db::open(&path).map(|db| db.records().len()).unwrap_or(0) >= 5 {
                break true;
            }
            if start.elapsed() >= Duration::from_secs(60) {
                break false;
            }
        };
        // Kill and reap the child either way: a failed test must not leave it running.
        let _ = child.kill();
        child.wait().unwrap();
        assert!(wrote, "the child run wrote nothing");
        let measured_before = Db::open(&path).unwrap().records().to_vec();
        let space = fused_space();
        assert!(measured_before.len() < space.len(), "killed mid-run: {} of {}", measured_before.len(), space.len());
        // The rerun: the same strategy and seed, everything measured so far is skipped.
        let mut db = Db::open(&path).unwrap();
        let mut fake = Fake { wrong: Config::new(), delay: Duration::ZERO, calls: vec![] };
        let s = tune_case(&mut db, &record(&[], timed(0.0)), &space, Strategy::Anneal, 7, Limits::default(), &mut fake, &mut |_, _| {}).unwrap();
        let before: BTreeSet<&Config> = measured_before.iter().map(|r| &r.config).collect();
        assert!(fake.calls.iter().all(|c| !before.contains(c)), "a configuration was measured twice");
        let calls: BTreeSet<&Config> = fake.calls.iter().collect();
        assert_eq!(calls.len(), fake.calls.len());
        assert_eq!(before.len() + calls.len(), space.len(), "together the two runs measured the whole space once");
        assert_eq!(s.tried.len(), space.len());
        assert_eq!(db.records().len(), space.len());
        let _ = std::fs::remove_file(&path);
    }
}

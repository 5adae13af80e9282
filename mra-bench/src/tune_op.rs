//! `tune --op general|dir|ranksum`: a level's candidates for an operation, each validated on a
//! few tensors against the operation's FP64 reference (β = 0 over NaN, β ≠ 0), then timed as
//! one launch over the API regime's batch against a copy of the same bytes
//! ([`mra_runtime::harness::op_case`]), ranked. Every timed candidate is a record of the
//! tuning database marked with the operation (`"op"`), which `validate --op`, `sweep --op`,
//! `--emit-src` and `--compile-only` then take on this GPU; the best is also printed as the
//! entry of `mra-codegen/tuned/<arch>.json` that makes it the operation's shipped default
//! (`"op": ...`), data a person reviews and commits.

use crate::cli::TuneArgs;
use crate::select::{self, CmdResult};
use crate::session::{self, Opened};
use mra_codegen::config::Config;
use mra_codegen::tuned_defaults::Regime;
use mra_codegen::{DType, Operation, Request, Schedule};
use mra_runtime::harness::op_case::{check_before_timing, time_api, OpCase};
use mra_runtime::harness::{api_regime, Backend, Session};
use mra_runtime::tuning::{db, Db, Harness, Outcome, Record};
use std::time::{Duration, Instant};

/// What `tune --op` tunes and within which limits.
pub struct OpTune<'a> {
    pub levels: &'a [Schedule],
    pub ks: &'a [u32],
    pub op: Operation,
    pub fix: &'a Config,
    pub max_configs: Option<usize>,
    pub budget: Option<Duration>,
}

pub fn run(args: &TuneArgs, t: OpTune) -> CmdResult {
    if args.compile_only || args.write_defaults.is_some() {
        return Err(select::usage("tune --op times candidates on a GPU and prints the tuned-defaults entry; it takes neither --compile-only nor --write-defaults"));
    }
    if select::dtype(&args.dtype)? != DType::F64 {
        return Err(select::usage("tune --op tunes the f64 kernels"));
    }
    let out = args.out.as_deref().map(|p| crate::outfile::Target::check("--out", p)).transpose()?;
    let arch = args.arch.as_deref().map(select::arch).transpose()?;
    match session::open(arch, args.compiler.as_deref(), select::cache(args.no_cache), session::GpuFree::TuneOp)? {
        Opened::Cuda(s) => tune_on(&s, args, &t, out),
        Opened::Hip(s) => tune_on(&s, args, &t, out),
    }
}

/// The parameters of `config` that differ from the schedule's own defaults: what an entry of
/// the tuned defaults names.
pub fn changed(s: &Schedule, config: &Config) -> Config {
    let defaults = s.defaults();
    config.iter().filter(|(name, value)| defaults.get(*name) != Some(*value)).map(|(n, v)| (n.clone(), *v)).collect()
}

/// The tuned-defaults line that makes `config` the operation's values of `level` at `k`.
pub fn entry_line(level: &Schedule, k: u32, op: Operation, config: &Config, source: &str) -> String {
    let config = changed(level, config);
    let body: Vec<String> = config.iter().map(|(n, v)| format!("\"{n}\": {v}")).collect();
    format!(
        "{{\"level\": \"{}\", \"dtype\": \"f64\", \"k\": [{k}], \"config\": {{{}}}, \"regime\": \"api\", \"op\": \"{}\", \"source\": {}}}",
        level.name,
        body.join(", "),
        op.tuned_as(),
        serde_json::to_string(source).expect("a string serializes")
    )
}

fn tune_on<B: Backend>(session: &Session<B>, args: &TuneArgs, t: &OpTune, out: Option<crate::outfile::Target>) -> CmdResult {
    let gpu = &session.gpu;
    let op = t.op;
    let ranks = args.op.ranks as usize;
    let mut db = match &args.db {
        Some(path) => Db::open(path)?,
        None => Db::open_default()?,
    };
    let device = mra_runtime::configure::device_of(session);
    eprintln!("# tuning {} ({}) on {}: each candidate validated, then one launch over the API regime's batch (2 GiB per K; -N, -n, -s do not apply)", args.op.op, op.describe(), gpu.device_name());
    let start = Instant::now();
    let cases = (t.ks.len() * t.levels.len()).max(1);
    let (mut summary, mut tuned) = (Vec::new(), 0);
    for (i, &k) in t.ks.iter().enumerate() {
        let nfuncs = api_regime::batch_for_bytes(k, DType::F64, api_regime::DEFAULT_BATCH_BYTES);
        let req = Request { k, arch: gpu.arch(), dtype: DType::F64 };
        for (j, s) in t.levels.iter().enumerate() {
            // The budget shared evenly over the cases, as tune without --op.
            let deadline = t.budget.map(|b| start + b.mul_f64((i * t.levels.len() + j + 1) as f64 / cases as f64));
            let defaults = s.at_for(req, Regime::Api, op.tuned_as()).defaults();
            let (space, _) = mra_runtime::tuning::space(s, k, req.arch, DType::F64, op);
            let mut candidates: Vec<Config> = std::iter::once(defaults.clone()).chain(space.into_iter().filter(|c| *c != defaults)).filter(|c| t.fix.iter().all(|(n, v)| c.get(n) == Some(v))).collect();
            candidates.retain(|c| s.with_config(c).is_ok_and(|s| s.plan_op(req, op).is_ok()));
            if let Some(m) = t.max_configs {
                candidates.truncate(m);
            }
            if candidates.is_empty() {
                crate::outln!("{} K={k}: not tuned: no configuration lowers {}", s.name, op.describe())?;
                continue;
            }
            let mut timed: Vec<(Config, f64, f64)> = Vec::new();
            for c in &candidates {
                mra_runtime::interrupt::check()?;
                if deadline.is_some_and(|d| Instant::now() >= d) && !timed.is_empty() {
                    break;
                }
                let tuned_s = s.with_config(c).expect("a candidate of the space");
                let kernel = mra_codegen::generate_op(&tuned_s, req, op)?;
                let measured = session.prepare_kernel(kernel).and_then(|p| {
                    let small = OpCase { op, k, nfuncs: 7, dir: (args.op.op == "dir").then_some(1), ranks, alpha: 1.0, beta: 0.0, seed: 0 };
                    let worst = check_before_timing(gpu, &p, small, |_| rand::random())?;
                    let big = OpCase { op, k, nfuncs, dir: None, ranks, alpha: 1.0, beta: 0.0, seed: 1 };
                    let (us, copy_us, _) = time_api(gpu, &p, &big, args.reps, args.timing.warmup)?;
                    Ok((us, copy_us, worst))
                });
                let what = mra_codegen::tune::describe(&changed(s, c));
                let what = if what.is_empty() { "(the schedule's defaults)".to_string() } else { what };
                match measured {
                    Ok((us, copy_us, worst)) => {
                        crate::outln!("  {} K={k} {what}: {us:.1} us, {:.3} of the copy", s.name, us / copy_us)?;
                        timed.push((c.clone(), us, copy_us));
                        // The API regime's harness (one launch, one stream, private data), so the
                        // record answers the API lookups of the commands that take it.
                        let harness = Harness::from(api_regime::config(nfuncs, None, args.reps, args.timing.warmup));
                        let outcome = Outcome::Timed { us_per_task: us, copy_us_per_task: Some(copy_us), max_rel_err: worst, resources: None, sm_clock: None, host_bound_reps: None };
                        db.put(Record { device: device.clone(), level: s.name.clone(), k, dtype: DType::F64.to_string(), harness: Some(harness), config: c.clone(), outcome, at: db::now(), op: op.tuned_as().into() })?;
                    }
                    Err(e) => crate::outln!("  {} K={k} {what}: {}", s.name, e.to_string().lines().next().unwrap_or_default())?,
                }
            }
            let Some((best, us, copy_us)) = timed.iter().min_by(|a, b| a.1.total_cmp(&b.1)).cloned() else {
                crate::outln!("{} K={k}: no candidate ran correctly", s.name)?;
                continue;
            };
            tuned += 1;
            let default_us = timed.iter().find(|(c, ..)| *c == defaults).map(|t| t.1);
            let source = format!("{}: {us:.1} us (copy {copy_us:.1}), one launch over 2 GiB (tune --op {}), {}", gpu.device_name(), args.op.op, env!("MRA_COMMIT"));
            crate::outln!(
                "{} K={k}: {} of {} candidates timed; best {us:.1} us ({:.3} of the copy){}",
                s.name,
                timed.len(),
                candidates.len(),
                us / copy_us,
                default_us.map(|d| format!(", the current values {d:.1} us")).unwrap_or_default()
            )?;
            if best != defaults {
                crate::outln!("  entry for mra-codegen/tuned/{}.json: {}", req.arch.name, entry_line(s, k, op, &best, &source))?;
            }
            summary.push(serde_json::json!({"level": s.name, "K": k, "op": args.op.op, "best": changed(s, &best), "us": us, "copy_us": copy_us, "current_us": default_us, "timed": timed.len()}));
        }
    }
    if let Some(out) = out {
        out.write(&serde_json::to_string_pretty(&summary)?)?;
    }
    if tuned == 0 {
        return Err("nothing tuned: no level and K had a candidate that lowers the operation and ran correctly".into());
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry names only what differs from the schedule's defaults, with the operation's
    /// name, and reads back as an entry of the tuned defaults (checked by hand: fused's
    /// default block is 256 threads).
    #[test]
    fn the_entry_line_names_what_differs_and_reads_back() {
        let fused = mra_codegen::levels::find("fused").unwrap();
        let op = Operation { matrices: mra_codegen::Matrices::RankSum, layout: mra_codegen::Layout::Contiguous, scaled: true };
        let mut c = fused.defaults();
        c.insert("threads".into(), 128);
        let line = entry_line(&fused, 16, op, &c, "test");
        assert_eq!(line, "{\"level\": \"fused\", \"dtype\": \"f64\", \"k\": [16], \"config\": {\"threads\": 128}, \"regime\": \"api\", \"op\": \"ranksum\", \"source\": \"test\"}");
        let e: mra_codegen::tuned_defaults::Entry = serde_json::from_str(&line).unwrap();
        assert_eq!((e.op.as_str(), e.config.len()), ("ranksum", 1));
        assert!(changed(&fused, &fused.defaults()).is_empty());
    }
}

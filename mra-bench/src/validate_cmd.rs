//! `mra-bench validate`: every level × K × N against the FP64 CPU reference.

use crate::cli::ValidateArgs;
use crate::select::{self, CmdResult};
use crate::session::{self, Opened};
use mra_codegen::{DType, Request, Schedule};
use mra_runtime::harness::{self, Backend, HarnessConfig, Inputs, Session};
use serde::Serialize;

#[derive(Serialize)]
struct Case {
    level: String,
    #[serde(rename = "K")]
    k: u32,
    nfuncs: usize,
    max_abs_err: f64,
    max_rel_err: f64,
    non_finite: usize,
    tolerance: f64,
    pass: bool,
    seed: u64,
}

pub fn run(args: &ValidateArgs) -> CmdResult {
    let levels = select::level_list(&args.levels)?;
    let ks = select::k_list(&args.ks)?;
    let ns: Vec<usize> = select::numbers("-N", &args.ns)?;
    let dtype = select::dtype(&args.dtype)?;
    for &n in &ns {
        HarnessConfig { nfuncs: n, max_blocks: args.max_blocks, tasks: 1, streams: 1, reps: 1 }.check()?;
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
    match session::open(None, None, select::cache(args.no_cache))? {
        Opened::Cuda(s) => validate_on(&s, args, &levels, &ks, &ns, dtype),
        Opened::Hip(s) => validate_on(&s, args, &levels, &ks, &ns, dtype),
    }
}

/// Every level × K × N on one opened GPU; exit status 1 if any case failed.
fn validate_on<B: Backend>(session: &Session<B>, args: &ValidateArgs, levels: &[Schedule], ks: &[u32], ns: &[usize], dtype: DType) -> CmdResult {
    let gpu = &session.gpu;
    // Nothing to validate on this GPU: say why before any work, and fail.
    let plans = |s: &Schedule, k| s.plan(Request { k, arch: gpu.arch(), dtype });
    if !levels.iter().any(|s| ks.iter().any(|&k| plans(s, k).is_ok())) {
        let why = levels.iter().find_map(|s| ks.iter().find_map(|&k| plans(s, k).err())).map(|e| format!(" (e.g. {e})")).unwrap_or_default();
        return Err(format!("nothing to validate: no level chosen can run in {dtype} on {} for -K {}{why}", gpu.arch().name, select::quote(&args.ks)).into());
    }
    eprintln!("# validating on GPU 0: {} ({})", gpu.device_name(), gpu.arch().name);
    let db = crate::tuned::open_db(None)?;
    let device = crate::tuned::device_of(session);
    let mut failures = 0;
    let mut cases = 0;
    for &k in ks {
        for &n in ns {
            let seed = args.seed.unwrap_or_else(rand::random);
            let inputs = Inputs::random(dtype, k, n, seed);
            let cfg = HarnessConfig { nfuncs: n, max_blocks: args.max_blocks, tasks: 1, streams: 1, reps: 1 };
            for s in levels {
                // The configuration the other commands run: tuned where the database has one.
                let s = &crate::tuned::apply(db.as_ref(), s, &device, k, dtype, args.untuned)?;
                if let Err(e) = s.plan(Request { k, arch: gpu.arch(), dtype }) {
                    if args.json {
                        crate::outln!("{}", serde_json::json!({"level": s.name, "K": k, "nfuncs": n, "skipped": e.to_string()}))?;
                    } else {
                        crate::outln!("K={k} nfuncs={n} level={} SKIP ({e})", s.name)?;
                    }
                    continue;
                }
                // A level that cannot be prepared or run (its library missing, say) is that
                // case's failure: report it and go on with the others.
                let outcome = session.prepare(s, k, dtype).and_then(|p| {
                    let bufs = session.allocate(&cfg, &p.kernel.plan)?;
                    let cmp = harness::validate(gpu, &p, &bufs, &inputs)?;
                    Ok((p, cmp))
                });
                let (p, cmp) = match outcome {
                    Ok(done) => done,
                    Err(e) => {
                        cases += 1;
                        failures += 1;
                        let e = e.to_string();
                        let e = e.lines().next().unwrap_or_default();
                        if args.json {
                            crate::outln!("{}", serde_json::json!({"level": s.name, "K": k, "nfuncs": n, "error": e, "pass": false}))?;
                        } else {
                            crate::outln!("K={k} nfuncs={n} level={} ERROR ({e})", s.name)?;
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
                    max_abs_err: cmp.max_abs,
                    max_rel_err: cmp.max_rel,
                    non_finite: cmp.non_finite,
                    tolerance: tol,
                    pass,
                    seed,
                };
                if args.json {
                    crate::outln!("{}", serde_json::to_string(&case)?)?;
                } else {
                    let nf = if cmp.non_finite > 0 { format!(" non_finite={}", cmp.non_finite) } else { String::new() };
                    crate::outln!(
                        "K={k} nfuncs={n} level={} max_abs_err={:.2e} max_rel_err={:.2e}{nf} {}",
                        case.level,
                        cmp.max_abs,
                        cmp.max_rel,
                        if pass { "PASS" } else { "FAIL" }
                    )?;
                }
            }
        }
    }
    eprintln!("# {} passed, {failures} failed", cases - failures);
    Ok(if failures == 0 { 0 } else { 1 })
}

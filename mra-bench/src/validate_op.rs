//! `mra-bench validate --op general|dir` and `--layout strided|pointers`: every level × K × N
//! of an operation other than the seed's against its FP64 reference
//! ([`mra_runtime::harness::op_case`]), with β = 0 over a C full of NaN and β ≠ 0 over a given
//! C, on a GPU or the CPU wave emulator.

use crate::cli::ValidateArgs;
use crate::select::CmdResult;
use mra_codegen::{DType, Operation, Request, Schedule};
use mra_runtime::harness::op_case::{check, OpCase};
use mra_runtime::harness::{Backend, EmulatorSession, Session};

/// The (α, β, direction) cases of one level, K and N: C overwritten (β = 0, C NaN), and C
/// accumulated; `dir` once per dimension.
fn variants(args: &ValidateArgs) -> Vec<(f64, f64, Option<usize>)> {
    match args.op.op.as_str() {
        "dir" => (0..3).map(|d| (1.0, if d == 1 { 0.0 } else { -0.75 }, Some(d))).collect(),
        _ => vec![(1.0, 0.0, None), (1.5, -0.75, None)],
    }
}

/// The kernel of `op` that the sweeps time and the export ships.
fn kernel_for(s: &Schedule, req: Request, op: Operation) -> Result<mra_codegen::Kernel, mra_codegen::PlanError> {
    s.generate_tuned(req, op, mra_codegen::tuned_defaults::Regime::Api)
}

/// Compiles the emulated kernels of the operation in parallel before the cases run.
pub fn prebuild(session: &EmulatorSession, levels: &[Schedule], ks: &[u32], op: Operation) -> CmdResult<()> {
    let arch = session.gpu.arch();
    let kernels: Vec<_> = levels.iter().flat_map(|s| ks.iter().filter_map(move |&k| kernel_for(s, Request { k, arch, dtype: DType::F64 }, op).ok())).collect();
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    session.gpu.prebuild(&session.compiler, &kernels, &session.cache, jobs)?;
    Ok(())
}

pub fn validate_on<B: Backend>(session: &Session<B>, args: &ValidateArgs, levels: &[Schedule], ks: &[u32], ns: &[usize]) -> CmdResult {
    let gpu = &session.gpu;
    let op = args.op.operation();
    let dtype = DType::F64;
    eprintln!("# validating {} ({}) on {}", args.op.op, op.describe(), gpu.device_name());
    let (mut cases, mut failures, mut refused) = (0usize, 0usize, 0usize);
    let tuning = mra_runtime::configure::Tuning::open(None, args.untuned, false)?;
    for &k in ks {
        for s in levels {
            let s = &args.op.configured(session, &tuning, s, k)?;
            let kernel = match kernel_for(s, Request { k, arch: gpu.arch(), dtype }, op) {
                Ok(kernel) => kernel,
                Err(e) => {
                    refused += 1;
                    crate::outln!("K={k} level={} SKIP ({e})", s.name)?;
                    continue;
                }
            };
            let prepared = match session.prepare_kernel(kernel) {
                Ok(p) => p,
                Err(e) => {
                    cases += 1;
                    failures += 1;
                    crate::outln!("K={k} level={} ERROR ({})", s.name, e.to_string().lines().next().unwrap_or_default())?;
                    continue;
                }
            };
            for &n in ns {
                for (alpha, beta, dir) in variants(args) {
                    mra_runtime::interrupt::check()?;
                    let seed = args.seed.unwrap_or_else(rand::random);
                    let case = OpCase { op, k, nfuncs: n, dir, ranks: args.op.ranks as usize, alpha, beta, seed };
                    let outcome = check(gpu, &prepared, &case, Some(args.max_blocks));
                    mra_runtime::interrupt::check()?;
                    cases += 1;
                    let what = format!(
                        "K={k} nfuncs={n} level={} op={}{} layout={} alpha={alpha} beta={beta}",
                        s.name,
                        args.op.op,
                        dir.map(|d| format!(" dim={d}")).unwrap_or_default(),
                        args.op.layout
                    );
                    let (pass, line) = match outcome {
                        Ok(o) => {
                            let pass = o.cmp.passes(dtype.tolerance()) && o.gaps_intact;
                            let nf = if o.cmp.non_finite > 0 { format!(" non_finite={}", o.cmp.non_finite) } else { String::new() };
                            let gaps = if o.gaps_intact { "" } else { " gaps=WRITTEN" };
                            (pass, format!("{what} max_rel_err={:.2e}{nf}{gaps} {} (seed {seed})", o.cmp.max_rel, if pass { "PASS" } else { "FAIL" }))
                        }
                        Err(e) => (false, format!("{what} ERROR ({})", e.to_string().lines().next().unwrap_or_default())),
                    };
                    failures += usize::from(!pass);
                    if args.json {
                        crate::outln!("{}", serde_json::json!({"level": s.name, "K": k, "nfuncs": n, "op": args.op.op, "dim": dir, "layout": args.op.layout, "alpha": alpha, "beta": beta, "pass": pass, "seed": seed, "line": line}))?;
                    } else {
                        crate::outln!("{line}")?;
                    }
                }
            }
        }
    }
    if cases == 0 {
        return Err(format!("nothing validated: no level chosen lowers {} on {} ({refused} refused)", op.describe(), gpu.arch().name).into());
    }
    let skipped = if refused > 0 { format!(", {refused} level/K pairs skipped (their SKIP lines say why)") } else { String::new() };
    eprintln!("# {} passed, {failures} failed{skipped}", cases - failures);
    Ok(if failures == 0 { 0 } else { 1 })
}

//! `sweep --launch api --op general|dir|transform --layout ...`: per K and level, the
//! operation's kernel validated on a small batch (β = 0 over NaN, β ≠ 0), then timed as one
//! launch over a batch far larger than L2 against a copy of the same bytes
//! ([`mra_runtime::harness::op_case::time_api`]). The seed harness's regime, for every
//! operation: `sweep_op_harness`; the rank sum in the API regime: `sweep_ranksum`.

use crate::cli::SweepArgs;
use crate::select::{self, CmdResult};
use crate::session::{self, Opened};
use mra_codegen::tuned_defaults::Regime;
use mra_codegen::{DType, Request, Schedule};
use mra_runtime::harness::op_case::{check_before_timing, time_api, OpCase};
use mra_runtime::harness::{api_regime, Backend, Session};
use serde::Serialize;

/// One level and K of an operation sweep (either regime).
#[derive(Serialize)]
pub(crate) struct Row {
    level: String,
    #[serde(rename = "K")]
    k: u32,
    op: String,
    layout: String,
    nfuncs: usize,
    nblocks: usize,
    /// β = 0: C written only.
    us: f64,
    copy_us: f64,
    ratio_to_copy: f64,
    /// β = 1: C read and written, half again the copy's bytes.
    us_accumulate: f64,
    accumulate_ratio_to_copy_bytes: f64,
    max_rel_err: f64,
    /// The rank sum: useful TFLOP/s (6·K⁴·R per tensor) at β = 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    useful_tflops: Option<f64>,
}

pub fn run(args: &SweepArgs) -> CmdResult {
    let rank_sum = args.op.operation().matrices == mra_codegen::Matrices::RankSum;
    let harness = args.launch != "api";
    let ks = select::k_list(&args.ks)?;
    if select::dtype(&args.dtype)? != DType::F64 {
        return Err(select::usage("--op and --layout time the f64 kernels"));
    }
    let levels: Vec<Schedule> = select::level_list(&args.levels)?
        .into_iter()
        .filter(|s| s.name != "copy")
        .collect();
    let json = args
        .json
        .as_deref()
        .map(|p| crate::outfile::Target::check("--json", p))
        .transpose()?;
    match session::open(
        None,
        None,
        select::cache(args.no_cache),
        crate::session::GpuFree::Sweep,
    )? {
        Opened::Cuda(s) if harness => crate::sweep_op_harness::sweep_on(&s, args, &levels, &ks, json),
        Opened::Hip(s) if harness => crate::sweep_op_harness::sweep_on(&s, args, &levels, &ks, json),
        Opened::Cuda(s) if rank_sum => crate::sweep_ranksum::sweep_on(&s, args, &levels, &ks, json),
        Opened::Hip(s) if rank_sum => crate::sweep_ranksum::sweep_on(&s, args, &levels, &ks, json),
        Opened::Cuda(s) => sweep_on(&s, args, &levels, &ks, json),
        Opened::Hip(s) => sweep_on(&s, args, &levels, &ks, json),
    }
}

fn sweep_on<B: Backend>(
    session: &Session<B>,
    args: &SweepArgs,
    levels: &[Schedule],
    ks: &[u32],
    json: Option<crate::outfile::Target>,
) -> CmdResult {
    let gpu = &session.gpu;
    let op = args.op.operation();
    let dir = (args.op.op == "dir").then_some(1);
    eprintln!(
        "# {} ({}) on {}, one launch per repetition against a copy of the same bytes",
        args.op.op,
        op.describe(),
        gpu.device_name()
    );
    let mut rows = Vec::new();
    let mut failures = 0;
    let tuning = mra_runtime::configure::Tuning::open(None, args.untuned, false)?;
    for &k in ks {
        let nfuncs = args.nfuncs.unwrap_or_else(|| {
            api_regime::batch_for_bytes(k, DType::F64, api_regime::DEFAULT_BATCH_BYTES)
        });
        for s in levels {
            let s = &args.op.configured(session, &tuning, s, k)?;
            mra_runtime::interrupt::check()?;
            let req = Request {
                k,
                arch: gpu.arch(),
                dtype: DType::F64,
            };
            // The API regime's tuned values, else the harness's (the schedule's own where the
            // arch has none): the first the operation lowers (a tuned stack(N) does not).
            let Some(kernel) = kernel_or_skip(s, req, op, Regime::Api)? else { continue };
            let measured = session.prepare_kernel(kernel).and_then(|p| {
                let small = OpCase { op, k, nfuncs: 7, dir, ranks: args.op.ranks as usize, alpha: 1.0, beta: 0.0, seed: 0 };
                let worst = check_before_timing(gpu, &p, small, |_| args.seed.unwrap_or_else(rand::random))?;
                let big = OpCase {
                    op,
                    k,
                    nfuncs,
                    dir,
                    ranks: args.op.ranks as usize,
                    alpha: 1.0,
                    beta: 0.0,
                    seed: 1,
                };
                let (us, copy_us, grid) = time_api(gpu, &p, &big, args.reps, args.timing.warmup)?;
                let (us_acc, _, _) = time_api(
                    gpu,
                    &p,
                    &OpCase { beta: 1.0, ..big },
                    args.reps,
                    args.timing.warmup,
                )?;
                Ok((us, copy_us, us_acc, grid, worst))
            });
            match measured {
                Ok((us, copy_us, us_accumulate, nblocks, max_rel_err)) => {
                    rows.push(report(s, k, args, nfuncs, nblocks, [us, copy_us, us_accumulate], max_rel_err)?);
                }
                Err(e) => {
                    failures += 1;
                    crate::outln!(
                        "K={k} level={} ERROR ({})",
                        s.name,
                        e.to_string().lines().next().unwrap_or_default()
                    )?;
                }
            }
        }
    }
    if let Some(target) = json {
        let doc = serde_json::json!({"device": gpu.device_name(), "arch": gpu.arch().name, "commit": env!("MRA_COMMIT"), "regime": "api", "op": args.op.op, "layout": args.op.layout, "rows": rows});
        target.write(&serde_json::to_string_pretty(&doc)?)?;
    }
    if rows.is_empty() {
        return Err("nothing measured: no level chosen lowers the operation here".into());
    }
    Ok(if failures == 0 { 0 } else { 1 })
}

/// The row of `level` at `k` (µs of β = 0, of the copy, of β = 1), its line printed.
pub(crate) fn report(level: &Schedule, k: u32, args: &SweepArgs, nfuncs: usize, nblocks: usize, [us, copy_us, us_accumulate]: [f64; 3], max_rel_err: f64) -> CmdResult<Row> {
    let acc = us_accumulate / (1.5 * copy_us);
    let ranks = args.op.ranks as usize;
    let useful_tflops = (args.op.operation().matrices == mra_codegen::Matrices::RankSum).then(|| crate::sweep_ranksum::useful_tflops(k, ranks, nfuncs, us));
    crate::outln!(
        "K={k} level={} op={} layout={} N={nfuncs} blocks={nblocks} beta=0: {us:.2} us, copy {copy_us:.2} us, {:.3} of the copy{}; beta=1: {us_accumulate:.2} us, {acc:.3} of 1.5 copies",
        level.name,
        args.op.op,
        args.op.layout,
        us / copy_us,
        useful_tflops.map(|t| format!(", {t:.1} useful TFLOP/s (R = {ranks})")).unwrap_or_default()
    )?;
    Ok(Row {
        level: level.name.clone(),
        k,
        op: args.op.op.clone(),
        layout: args.op.layout.clone(),
        nfuncs,
        nblocks,
        us,
        copy_us,
        ratio_to_copy: us / copy_us,
        us_accumulate,
        accumulate_ratio_to_copy_bytes: acc,
        max_rel_err,
        useful_tflops,
    })
}

/// The kernel of `op` at `req` with `regime`'s tuned values, or its SKIP line printed (a level
/// that does not lower the operation here) and `None`.
pub(crate) fn kernel_or_skip(s: &Schedule, req: Request, op: mra_codegen::Operation, regime: Regime) -> CmdResult<Option<mra_codegen::Kernel>> {
    match s.generate_tuned(req, op, regime) {
        Ok(kernel) => Ok(Some(kernel)),
        Err(e) => {
            crate::outln!("K={} level={} SKIP ({e})", req.k, s.name)?;
            Ok(None)
        }
    }
}

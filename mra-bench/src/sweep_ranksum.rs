//! `sweep --launch api --op ranksum --ranks R`: per K and level, the rank-sum kernel validated
//! on a small batch (β = 0 over NaN, β ≠ 0), then timed as one launch over the API regime's
//! batch, against the two things it replaces or approaches in the same process: R separate
//! `general` transforms accumulated with β = 1 (the best level that lowers `general` at K,
//! timed once and counted R times: the R calls are the same kernel on the same bytes), and
//! the FP64 matrix-core rate of the vendor BLAS's DGEMM.

use crate::cli::SweepArgs;
use crate::select::CmdResult;
use mra_codegen::tuned_defaults::Regime;
use mra_codegen::{DType, Layout, Matrices, Operation, Request, Schedule};
use mra_runtime::harness::op_case::{check_before_timing, time_api, OpCase};
use mra_runtime::harness::{api_regime, gemm_peak_tflops, Backend, Session};
use serde::Serialize;

#[derive(Serialize)]
struct Row {
    level: String,
    #[serde(rename = "K")]
    k: u32,
    ranks: usize,
    nfuncs: usize,
    nblocks: usize,
    us: f64,
    /// 6·K⁴·R per tensor (padding not counted).
    useful_tflops: f64,
    fraction_of_dgemm: f64,
    /// R × one `general` launch with β = 1 over the same batch.
    separate_us: f64,
    separate_level: String,
    speedup: f64,
    max_rel_err: f64,
}

/// The `general` kernel the R separate calls run: fused-pipe, else L3-regblk (the levels
/// `plan_op` names), with the API regime's tuned values where there are some.
fn general_kernel(req: Request, op: Operation) -> Option<mra_codegen::Kernel> {
    ["fused-pipe", "L3-regblk"].iter().find_map(|name| {
        let s = mra_codegen::levels::find(name).ok()?;
        s.generate_tuned(req, op, Regime::Api).ok()
    })
}

/// The rank sum's useful rate in TFLOP/s: 6·K⁴ flops per term and tensor (three passes of
/// 2·K⁴, padding not counted), `nfuncs` tensors in `us` µs.
pub(crate) fn useful_tflops(k: u32, ranks: usize, nfuncs: usize, us: f64) -> f64 {
    6.0 * (k as f64).powi(4) * ranks as f64 * nfuncs as f64 / (us * 1e6)
}

pub fn sweep_on<B: Backend>(session: &Session<B>, args: &SweepArgs, levels: &[Schedule], ks: &[u32], json: Option<crate::outfile::Target>) -> CmdResult {
    let gpu = &session.gpu;
    let op = args.op.operation();
    let ranks = args.op.ranks as usize;
    let general = Operation { matrices: Matrices::PerDim, layout: Layout::Contiguous, scaled: true };
    let dgemm = gemm_peak_tflops(gpu, 8192, 5)?;
    eprintln!("# ranksum, R = {ranks} ({}) on {}: FP64 DGEMM {dgemm:.1} TFLOP/s in this process", op.describe(), gpu.device_name());
    let (mut rows, mut failures) = (Vec::new(), 0);
    let tuning = mra_runtime::configure::Tuning::open(None, args.untuned, false)?;
    for &k in ks {
        let nfuncs = args.nfuncs.unwrap_or_else(|| api_regime::batch_for_bytes(k, DType::F64, api_regime::DEFAULT_BATCH_BYTES));
        let req = Request { k, arch: gpu.arch(), dtype: DType::F64 };
        for s in levels {
            let s = &args.op.configured(session, &tuning, s, k)?;
            mra_runtime::interrupt::check()?;
            let Some(kernel) = crate::sweep_op::kernel_or_skip(s, req, op, Regime::Api)? else { continue };
            let Some(separate) = general_kernel(req, general) else {
                crate::outln!("K={k} level={} SKIP (no level lowers general at K={k} to compare with)", s.name)?;
                continue;
            };
            let separate_level = separate.level.clone();
            let measured = session.prepare_kernel(kernel).and_then(|p| {
                let small = OpCase { op, k, nfuncs: 7, dir: None, ranks, alpha: 1.0, beta: 0.0, seed: 0 };
                let worst = check_before_timing(gpu, &p, small, |_| args.seed.unwrap_or_else(rand::random))?;
                let big = OpCase { op, k, nfuncs, dir: None, ranks, alpha: 1.0, beta: 0.0, seed: 1 };
                let (us, _, grid) = time_api(gpu, &p, &big, args.reps, args.timing.warmup)?;
                let g = session.prepare_kernel(separate)?;
                let (one_us, _, _) = time_api(gpu, &g, &OpCase { op: general, beta: 1.0, ..big }, args.reps, args.timing.warmup)?;
                Ok((us, one_us * ranks as f64, grid, worst))
            });
            match measured {
                Ok((us, separate_us, nblocks, max_rel_err)) => {
                    let useful_tflops = useful_tflops(k, ranks, nfuncs, us);
                    let row = Row {
                        level: s.name.clone(),
                        k,
                        ranks,
                        nfuncs,
                        nblocks,
                        us,
                        useful_tflops,
                        fraction_of_dgemm: useful_tflops / dgemm,
                        separate_us,
                        separate_level: separate_level.clone(),
                        speedup: separate_us / us,
                        max_rel_err,
                    };
                    crate::outln!(
                        "K={k} level={} R={ranks} N={nfuncs} blocks={nblocks}: {us:.1} us, {useful_tflops:.2} useful TFLOP/s = {:.3} of DGEMM; {ranks} x {separate_level} with beta=1: {separate_us:.1} us, {:.2}x",
                        s.name,
                        row.fraction_of_dgemm,
                        row.speedup
                    )?;
                    rows.push(row);
                }
                Err(e) => {
                    failures += 1;
                    crate::outln!("K={k} level={} ERROR ({})", s.name, e.to_string().lines().next().unwrap_or_default())?;
                }
            }
        }
    }
    if let Some(target) = json {
        let doc = serde_json::json!({"device": gpu.device_name(), "arch": gpu.arch().name, "commit": env!("MRA_COMMIT"), "regime": "api", "op": "ranksum", "ranks": ranks, "dgemm_tflops": dgemm, "rows": rows});
        target.write(&serde_json::to_string_pretty(&doc)?)?;
    }
    if rows.is_empty() {
        return Err("nothing measured: no level chosen lowers the rank sum here (fused does, where its three buffers fit)".into());
    }
    Ok(if failures == 0 { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    /// By hand: K = 10, R = 16, 2048 tensors in 1000 µs is 6·10⁴·16·2048 = 1.96608e9 flops per
    /// ms, 1.96608 TFLOP/s.
    #[test]
    fn the_useful_rate_counts_six_k_to_the_fourth_per_term_and_tensor() {
        assert!((super::useful_tflops(10, 16, 2048, 1000.0) - 1.96608).abs() < 1e-12);
    }
}

//! `sweep --op general|dir|ranksum|transform --layout ...` in the seed's harness (`-N 2048
//! -M 512 -s 4 -n 100` unless given): per K and level, the operation's kernel validated on a
//! small batch (β = 0 over NaN, β ≠ 0), then timed as the harness times the seed's levels
//! ([`mra_runtime::harness::op_case::time_harness`]), beside the `copy` level timed in the
//! same harness and process.

use crate::cli::SweepArgs;
use crate::select::CmdResult;
use mra_codegen::tuned_defaults::Regime;
use mra_codegen::{levels, DType, Request, Schedule};
use mra_runtime::harness::op_case::{check_before_timing, time_harness, OpCase};
use mra_runtime::harness::{Backend, HarnessConfig, Inputs, Session};

pub fn sweep_on<B: Backend>(session: &Session<B>, args: &SweepArgs, levels: &[Schedule], ks: &[u32], json: Option<crate::outfile::Target>) -> CmdResult {
    let gpu = &session.gpu;
    let op = args.op.operation();
    let dir = (args.op.op == "dir").then_some(1);
    let cfg = HarnessConfig {
        nfuncs: args.nfuncs.unwrap_or(2048),
        max_blocks: args.max_blocks.unwrap_or(512),
        tasks: args.tasks,
        streams: args.streams,
        reps: args.reps,
        warmup: args.timing.warmup,
        stream_data: args.timing.stream_data,
    };
    cfg.check()?;
    eprintln!(
        "# {} ({}) on {}, seed harness: N={}, M={}, {} streams ({} data), -n {}, -r {}; floor: the copy level in the same harness",
        args.op.op,
        op.describe(),
        gpu.device_name(),
        cfg.nfuncs,
        cfg.max_blocks,
        cfg.streams,
        format!("{:?}", cfg.stream_data).to_lowercase(),
        cfg.tasks,
        cfg.reps
    );
    let streams = session.streams(cfg.streams)?;
    let copy = levels::find("copy")?;
    let (mut rows, mut failures) = (Vec::new(), 0);
    let tuning = mra_runtime::configure::Tuning::open(None, args.untuned, false)?;
    for &k in ks {
        let req = Request { k, arch: gpu.arch(), dtype: DType::F64 };
        let seed = args.seed.unwrap_or_else(rand::random);
        let inputs = Inputs::try_random(DType::F64, k, cfg.nfuncs, seed)?;
        let copy_us = match crate::sweep_cmd::measure(session, &copy, k, DType::F64, &cfg, &inputs, &streams, None) {
            Ok(m) => m.us,
            Err(e) => {
                failures += 1;
                crate::outln!("K={k} level=copy ERROR ({})", e.to_string().lines().next().unwrap_or_default())?;
                continue;
            }
        };
        for s in levels {
            let s = &args.op.configured(session, &tuning, s, k)?;
            mra_runtime::interrupt::check()?;
            // The seed harness's tuned values (and the operation's own), as `validate --op`
            // takes the API regime's: the harness is the regime measured here.
            let Some(kernel) = crate::sweep_op::kernel_or_skip(s, req, op, Regime::Harness)? else { continue };
            let measured = session.prepare_kernel(kernel).and_then(|p| {
                let small = OpCase { op, k, nfuncs: 7, dir, ranks: args.op.ranks as usize, alpha: 1.0, beta: 0.0, seed: 0 };
                let worst = check_before_timing(gpu, &p, small, |_| seed)?;
                let case = OpCase { nfuncs: cfg.nfuncs, seed: 1, ..small };
                let (us, grid) = time_harness(gpu, &p, &case, &cfg, &streams)?;
                let (us_acc, _) = time_harness(gpu, &p, &OpCase { beta: 1.0, ..case }, &cfg, &streams)?;
                Ok((us, us_acc, grid, worst))
            });
            match measured {
                Ok((us, us_accumulate, nblocks, max_rel_err)) => {
                    rows.push(crate::sweep_op::report(s, k, args, cfg.nfuncs, nblocks, [us, copy_us, us_accumulate], max_rel_err)?);
                }
                Err(e) => {
                    failures += 1;
                    crate::outln!("K={k} level={} ERROR ({})", s.name, e.to_string().lines().next().unwrap_or_default())?;
                }
            }
        }
    }
    if let Some(target) = json {
        let doc = serde_json::json!({"device": gpu.device_name(), "arch": gpu.arch().name, "commit": env!("MRA_COMMIT"), "regime": "harness", "harness": cfg, "op": args.op.op, "layout": args.op.layout, "rows": rows});
        target.write(&serde_json::to_string_pretty(&doc)?)?;
    }
    if rows.is_empty() {
        return Err("nothing measured: no level chosen lowers the operation here".into());
    }
    Ok(if failures == 0 { 0 } else { 1 })
}

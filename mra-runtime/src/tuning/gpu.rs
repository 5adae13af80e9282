//! The evaluator on a GPU of any vendor: written against the [`Backend`] trait only.
//!
//! Per candidate: plan (the constraints and arch limits were checked by the space already),
//! generate, compile through the kernel cache and load; reject it from the compile report if
//! it spills, needs more registers than a thread has, or more shared memory than a block may
//! have; run it once on poisoned outputs and compare with the FP64 CPU reference (fresh random
//! inputs, odd N; a wrong answer is `Invalid` and never timed); then time it in the seed's
//! harness (untimed warm-up, `reps` timed repetitions, `tasks` round-robin over the streams).

use super::Evaluate;
use super::Outcome;
use crate::backend::Backend;
use crate::harness::{self, Buffers, HarnessConfig, Inputs, Session};
use mra_codegen::tune::Config;
use mra_codegen::{DType, Schedule};

/// Tensors in the validation run: odd, and more than one block's worth of tensors per launch.
pub const VALIDATION_N: usize = 67;
/// At most this many blocks validate a candidate, so each block transforms several of the
/// VALIDATION_N tensors (67 over 16 blocks: 4 or 5): a pipelined level's later tensors (the
/// buffer swaps, the copies issued during a pass, the mbarrier phases of `bulk_copy(1)`) are
/// checked too, not only every block's first tensor.
pub const VALIDATION_BLOCKS: usize = 16;

pub struct GpuEvaluator<'a, B: Backend> {
    pub session: &'a Session<B>,
    pub schedule: &'a Schedule,
    pub k: u32,
    pub dtype: DType,
    pub harness: HarnessConfig,
    /// The copy floor's µs per task, measured in this process.
    pub copy_us: Option<f64>,
    /// Validation inputs (VALIDATION_N tensors) with their FP64 reference.
    inputs: Inputs,
    /// Random timing inputs (`harness.nfuncs` tensors, device bytes) and B.
    timing_a: Vec<u8>,
    timing_b: Vec<u8>,
    streams: Vec<B::Stream>,
    /// Reads the SM clock while candidates are timed (None where nothing can).
    clocks: Option<std::sync::Arc<dyn crate::clocks::ClockSource>>,
}

impl<'a, B: Backend> GpuEvaluator<'a, B> {
    pub fn new(session: &'a Session<B>, schedule: &'a Schedule, k: u32, dtype: DType, harness: HarnessConfig, seed: u64) -> crate::Result<Self> {
        let inputs = Inputs::try_random(dtype, k, VALIDATION_N, seed)?;
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed ^ 0x5eed);
        let timing_a = harness::to_device_bytes(dtype, &harness::random_inputs(dtype, harness.nfuncs * (k as usize).pow(3), &mut rng)?)?;
        let timing_b = harness::to_device_bytes(dtype, &inputs.b)?;
        let streams = session.streams(harness.streams)?;
        let clocks = session.gpu.clock_source().ok();
        Ok(GpuEvaluator { session, schedule, k, dtype, harness, copy_us: None, inputs, timing_a, timing_b, streams, clocks })
    }

    fn run(&mut self, config: &Config) -> crate::Result<Outcome> {
        let (gpu, arch) = (&self.session.gpu, self.session.gpu.arch());
        let schedule = self.schedule.with_config(config).map_err(|e| crate::RuntimeError::Invalid(e.to_string()))?;
        let mut p = match self.session.prepare(&schedule, self.k, self.dtype) {
            Ok(p) => p,
            // prepare checks that one block fits (the occupancy tables used below) and, for a
            // cluster kernel, that one cluster fits the device.
            Err(e @ (crate::RuntimeError::BlockDoesNotFit { .. } | crate::RuntimeError::ClusterDoesNotFit { .. })) => return Ok(Outcome::Rejected { why: super::brief(&e.to_string()) }),
            Err(e) => return Ok(Outcome::Rejected { why: format!("does not compile or load: {}", super::brief(&e.to_string())) }),
        };
        let resources = p.compiled.as_ref().and_then(B::resources);
        if let Some(r) = resources {
            if r.spill_bytes > 0 {
                return Ok(Outcome::Rejected { why: format!("spills or uses scratch memory ({} B; {} registers)", r.spill_bytes, r.registers) });
            }
            if r.registers > arch.max_registers_per_thread {
                return Ok(Outcome::Rejected { why: format!("{} registers per thread, {} allows {}", r.registers, arch.name, arch.max_registers_per_thread) });
            }
            if r.shared_bytes > arch.shared_bytes_max {
                return Ok(Outcome::Rejected { why: format!("{} B shared memory per block, {} allows {}", r.shared_bytes, arch.name, arch.shared_bytes_max) });
            }
            // (prepare has refused a kernel of which no block fits.)
            let plan = &p.kernel.plan;
            if let (Some(m), Some(b)) = (plan.min_blocks, crate::residency::blocks_per_multiprocessor(arch, &r, plan)) {
                if b < m {
                    return Ok(Outcome::Rejected { why: format!("launch_bounds asks {m} blocks per multiprocessor, resources allow {b}") });
                }
            }
        }
        // Validation first, on its own small odd-N buffers.
        let vcfg = HarnessConfig { nfuncs: VALIDATION_N, max_blocks: self.harness.max_blocks.min(VALIDATION_BLOCKS), streams: 1, reps: 1, tasks: 1, ..self.harness };
        let vbufs = self.session.allocate(&vcfg, &p.kernel.plan)?;
        let cmp = harness::validate(gpu, &p, &vbufs, &self.inputs)?;
        let tol = self.dtype.tolerance();
        if !cmp.passes(tol) {
            return Ok(Outcome::Invalid {
                why: format!("max rel err {:.3e} (limit {tol:e}), {} non-finite, seed {}", cmp.max_rel, cmp.non_finite, self.inputs.seed),
            });
        }
        drop(vbufs);
        // -M auto: the grid of waves of what the device holds of this candidate's kernel.
        let harness = self.session.grid_for(&self.harness, &mut [&mut p]);
        let bufs: Buffers<B> = self.session.allocate(&harness, &p.kernel.plan)?;
        bufs.upload_a(gpu, &self.timing_a)?;
        gpu.upload(&bufs.b, &self.timing_b)?;
        let timing = harness::time_reps_clocked(gpu, &p, &bufs, &self.streams, &harness, self.clocks.as_ref())?;
        let sm_clock = timing.clock.clone();
        let host_bound_reps = Some(timing.host_bound_reps()).filter(|&n| n > 0);
        Ok(Outcome::Timed {
            us_per_task: harness::median(&timing.times) / self.harness.tasks as f64,
            copy_us_per_task: self.copy_us,
            max_rel_err: cmp.max_rel,
            resources,
            sm_clock,
            host_bound_reps,
        })
    }
}

impl<B: Backend> Evaluate for GpuEvaluator<'_, B> {
    /// A candidate that does not compile, or fails when run while the GPU stays usable (a
    /// launch refused for resources), is `Rejected` with the message. If the GPU is no longer
    /// usable after the failure (a sticky error such as an illegal address), the tuning run
    /// ends and nothing is recorded for the candidate, so that a rerun tries it again.
    fn evaluate(&mut self, config: &Config) -> crate::Result<Outcome> {
        match self.run(config) {
            Ok(o) => Ok(o),
            Err(e) => {
                let alive = self.session.gpu.memory().is_ok() && self.streams.iter().all(|s| self.session.gpu.synchronize(s).is_ok());
                if alive {
                    Ok(Outcome::Rejected { why: format!("fails at run time: {e}") })
                } else {
                    Err(e)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The evaluator on the harness's host backend, which runs every kernel with the FP64
    //! reference; kernels of one thread count write nothing (a wrong candidate).
    use super::*;
    use crate::harness::fake::session;
    use crate::tuning::db::tests::record;
    use crate::tuning::{space, tune_case, Db, Limits, Strategy};
    use mra_codegen::Operation;

    #[test]
    fn a_wrong_candidate_is_caught_by_validation_before_timing_and_never_chosen() {
        let s = session(2.0);
        s.gpu.wrong_threads.set(512);
        let fused = mra_codegen::levels::find("fused").unwrap();
        let (k, dtype) = (5, DType::F64);
        // Both block sizes of the space, at one value of the parameters that do not decide it:
        // each candidate costs the fake a host execution of the kernel's semantics.
        let (space, _) = space(&fused, k, s.gpu.arch(), dtype, Operation::SEED);
        let space: Vec<_> = space.into_iter().filter(|c| c["pad_a"] == 4 && c["unroll_k"] == 0 && c["min_blocks"] == 1).collect();
        assert!(space.iter().any(|c| c["threads"] == 512) && space.iter().any(|c| c["threads"] != 512));
        let h = HarnessConfig { nfuncs: 9, max_blocks: 4, tasks: 3, streams: 2, reps: 2, warmup: Default::default(), stream_data: Default::default() };
        let mut eval = GpuEvaluator::new(&s, &fused, k, dtype, h, 42).unwrap();
        // One wrong candidate: validation runs it once (one launch) and nothing is timed.
        let wrong = mra_codegen::tune::parse_config("threads=512 pad_a=4 unroll_k=0 min_blocks=1").unwrap();
        let before = s.gpu.launch_count();
        let o = eval.evaluate(&wrong).unwrap();
        assert!(matches!(&o, Outcome::Invalid { why } if why.contains("non-finite")), "{o:?}");
        assert_eq!(s.gpu.launch_count() - before, 1, "validated once, never timed");
        // Validation runs VALIDATION_N tensors on at most VALIDATION_BLOCKS blocks (several
        // tensors per block) whatever -M the timing uses.
        let (_, args) = *s.gpu.launches().last().unwrap();
        assert_eq!((args.nfuncs, args.nblocks), (VALIDATION_N as i32, 4), "the harness's -M 4 is below the cap");
        let h512 = HarnessConfig { max_blocks: 512, ..h };
        let mut wide = GpuEvaluator::new(&s, &fused, k, dtype, h512, 42).unwrap();
        let _ = wide.evaluate(&wrong).unwrap();
        let (_, args) = *s.gpu.launches().last().unwrap();
        assert_eq!((args.nfuncs, args.nblocks), (67, 16), "at -M 512 validation still uses 16 blocks: 4-5 tensors each");
        // A right one: validated, then timed (the fake's 2 ms per repetition of 3 tasks).
        let o = eval.evaluate(&space[0]).unwrap();
        let Outcome::Timed { us_per_task, max_rel_err, .. } = o else { panic!("{o:?}") };
        assert!((us_per_task - 2000.0 / 3.0).abs() < 1e-9 && max_rel_err < 1e-12, "{us_per_task} {max_rel_err}");

        let path = std::env::temp_dir().join(format!("mra-gpu-eval-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut db = Db::open(&path).unwrap();
        let sum = tune_case(&mut db, &record(&[], Outcome::Rejected { why: String::new() }), &space, Strategy::Exhaustive, 0, Limits::default(), &mut eval, &mut |_, _| {}).unwrap();
        let invalid = sum.tried.iter().filter(|(r, _)| matches!(r.outcome, Outcome::Invalid { .. })).count();
        assert_eq!(invalid, space.iter().filter(|c| c["threads"] == 512).count());
        assert!(sum.ranked().iter().all(|r| r.config["threads"] != 512));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn with_private_stream_data_each_stream_times_its_own_a_and_c() {
        let s = session(2.0);
        let fused = mra_codegen::levels::find("fused").unwrap();
        let (k, dtype) = (5, DType::F64);
        let (space, _) = space(&fused, k, s.gpu.arch(), dtype, Operation::SEED);
        for (data, distinct) in [(crate::harness::StreamData::Shared, 1), (crate::harness::StreamData::Private, 3)] {
            let h = HarnessConfig { nfuncs: 9, max_blocks: 4, tasks: 3, streams: 3, reps: 2, warmup: Default::default(), stream_data: data };
            let mut eval = GpuEvaluator::new(&s, &fused, k, dtype, h, 42).unwrap();
            let before = s.gpu.launch_count();
            let o = eval.evaluate(&space[0]).unwrap();
            assert!(matches!(o, Outcome::Timed { .. }), "{o:?}");
            // The first launch is validation (one stream); the rest are timing, round-robin.
            let timing: Vec<_> = s.gpu.launches()[before + 1..].to_vec();
            let a: std::collections::BTreeSet<u64> = timing.iter().map(|(_, args)| args.a).collect();
            let c: std::collections::BTreeSet<u64> = timing.iter().map(|(_, args)| args.c).collect();
            assert_eq!((a.len(), c.len()), (distinct, distinct), "{data:?}: the A and C the timed launches used");
        }
    }

    #[test]
    fn a_candidate_timed_behind_a_slow_host_records_its_host_bound_repetitions() {
        // 50 ms per repetition by the fake's events; 3 launches of 20 ms each to submit.
        let fused = mra_codegen::levels::find("fused").unwrap();
        let (k, dtype) = (5, DType::F64);
        for (delay_ms, want) in [(0, None), (20, Some(2))] {
            let s = session(50.0);
            let (space, _) = space(&fused, k, s.gpu.arch(), dtype, Operation::SEED);
            let h = HarnessConfig { nfuncs: 9, max_blocks: 4, tasks: 3, streams: 2, reps: 2, warmup: Default::default(), stream_data: Default::default() };
            let mut eval = GpuEvaluator::new(&s, &fused, k, dtype, h, 42).unwrap();
            s.gpu.launch_delay.set(std::time::Duration::from_millis(delay_ms));
            let Outcome::Timed { host_bound_reps, .. } = eval.evaluate(&space[0]).unwrap() else { panic!() };
            assert_eq!(host_bound_reps, want, "{delay_ms} ms per launch");
        }
    }
}

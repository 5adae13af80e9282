//! The timed repetitions: untimed ones first, then each timed with device events from a start
//! on stream 0 to an end after every stream joined, with the host time its submission took;
//! and the BLAS GEMM rate that the results are set against.

use super::buffers::Buffers;
use super::config::HarnessConfig;
use super::device_bytes::to_device_bytes;
use super::prepared::Prepared;
use crate::backend::{Backend, Gemm};
use crate::error::Result;
use crate::warmup::WarmupDone;
use mra_codegen::DType;

/// Runs the timed harness: untimed repetitions as `cfg.warmup` asks (at least one; by default
/// at least 200 ms), then `cfg.reps` timed ones. Returns microseconds per repetition (all
/// `cfg.tasks` tasks).
pub fn time_reps<B: Backend>(gpu: &B, p: &Prepared<B>, bufs: &Buffers<B>, streams: &[B::Stream], cfg: &HarnessConfig) -> Result<Vec<f64>> {
    time_reps_clocked(gpu, p, bufs, streams, cfg, None).map(|t| t.times)
}

/// A repetition counts as host-bound when submitting its tasks took at least this share of
/// the device time it measured: the GPU then waited for launches, and the time is the host's.
pub const HOST_BOUND_SHARE: f64 = 0.9;

/// What "host-bound" means, for the notes that name such repetitions.
pub fn host_bound_rule() -> String {
    format!("submitting the tasks took >= {:.0}% of the time measured, so the GPU waited for launches", HOST_BOUND_SHARE * 100.0)
}

/// What [`time_reps_clocked`] measured.
#[derive(Clone, Debug)]
pub struct Timing {
    /// Microseconds per timed repetition (device events).
    pub times: Vec<f64>,
    /// Host microseconds each timed repetition took to submit (events, launches and joins).
    pub submit_us: Vec<f64>,
    /// The SM clock during the timed repetitions (not the warm-up), where it could be read.
    pub clock: Option<crate::clocks::ClockStats>,
    pub warmup: WarmupDone,
}

/// [`time_reps`], with the SM clock read by `clocks` every 10 ms during the timed repetitions
/// (and during a `settle` warm-up, to see when it stops moving).
pub fn time_reps_clocked<B: Backend>(
    gpu: &B,
    p: &Prepared<B>,
    bufs: &Buffers<B>,
    streams: &[B::Stream],
    cfg: &HarnessConfig,
    clocks: Option<&std::sync::Arc<dyn crate::clocks::ClockSource>>,
) -> Result<Timing> {
    let events = RepEvents { start: gpu.event()?, end: gpu.event()?, joins: streams.iter().map(|_| gpu.event()).collect::<Result<_>>()? };
    p.set_b(gpu, bufs)?;
    // Each repetition, untimed or timed, is a safe point of an interrupt (a `settle` warm-up or
    // many long repetitions take minutes).
    let launch = |s: usize| p.launch(gpu, &streams[s], bufs, s);
    let rep = || crate::interrupt::check().and_then(|()| one_rep(gpu, streams, cfg, &events, &launch));
    let warmup = crate::warmup::run(cfg.warmup, clocks, || rep().map(|r| r.device_ms))?;
    let sampler = clocks.map(|c| crate::clocks::Sampler::start(c.clone(), std::time::Duration::from_millis(10)));
    let timed = (0..cfg.reps).map(|_| rep()).collect::<Result<Vec<Rep>>>();
    let clock = sampler.and_then(|s| s.finish());
    let timed = timed?;
    Ok(Timing {
        times: timed.iter().map(|r| r.device_ms * 1000.0).collect(),
        submit_us: timed.iter().map(|r| r.submit_ms * 1000.0).collect(),
        clock,
        warmup,
    })
}

impl Timing {
    /// Whether timed repetition `i` was host-bound (see [`HOST_BOUND_SHARE`]).
    pub fn host_bound(&self, i: usize) -> bool {
        self.submit_us[i] >= HOST_BOUND_SHARE * self.times[i]
    }

    /// How many timed repetitions were host-bound.
    pub fn host_bound_reps(&self) -> usize {
        (0..self.times.len()).filter(|&i| self.host_bound(i)).count()
    }

    /// `3 of 5 repetitions were host-bound: submitting took 2610 µs of the 2623 µs measured
    /// (median)`, or None when none was.
    pub fn host_bound_note(&self) -> Option<String> {
        let n = self.host_bound_reps();
        (n > 0).then(|| {
            format!(
                "{n} of {} repetitions were host-bound: submitting the tasks took {:.0} µs of the {:.0} µs measured (median), so the GPU waited for launches and the time is the host's, not the kernel's",
                self.times.len(),
                median(&self.submit_us),
                median(&self.times)
            )
        })
    }
}

/// One repetition: its device time (events) and the host time its submission took, in ms.
struct Rep {
    device_ms: f64,
    submit_ms: f64,
}

/// The harness's repetitions of `launch(stream index)` (`cfg.tasks` per repetition, round-robin
/// over `streams`) for a kernel launched with arguments of its own (an operation's): after the
/// warm-up, the milliseconds of each timed repetition.
pub(crate) fn time_launches<B: Backend>(gpu: &B, streams: &[B::Stream], cfg: &HarnessConfig, launch: &dyn Fn(usize) -> Result<()>) -> Result<Vec<f64>> {
    let events = RepEvents { start: gpu.event()?, end: gpu.event()?, joins: streams.iter().map(|_| gpu.event()).collect::<Result<_>>()? };
    let rep = || crate::interrupt::check().and_then(|()| one_rep(gpu, streams, cfg, &events, launch));
    crate::warmup::run(cfg.warmup, None, || rep().map(|r| r.device_ms))?;
    (0..cfg.reps).map(|_| rep().map(|r| r.device_ms)).collect()
}

/// The events of a repetition: start, end, and one join per stream (the first unused).
struct RepEvents<B: Backend> {
    start: B::Event,
    end: B::Event,
    joins: Vec<B::Event>,
}

/// One repetition: `cfg.tasks` tasks round-robin over the streams, timed from an event on
/// stream 0 (that every stream waits for) to an event after all streams joined, and the host
/// time from the first event's record to the last's (submission only: the wait is not in it).
fn one_rep<B: Backend>(gpu: &B, streams: &[B::Stream], cfg: &HarnessConfig, ev: &RepEvents<B>, launch: &dyn Fn(usize) -> Result<()>) -> Result<Rep> {
    let submit = std::time::Instant::now();
    gpu.record(&ev.start, &streams[0])?;
    for s in &streams[1..] {
        gpu.wait(s, &ev.start)?;
    }
    for t in 0..cfg.tasks {
        let s = t % streams.len();
        launch(s)?;
    }
    for (s, j) in streams.iter().zip(&ev.joins).skip(1) {
        gpu.record(j, s)?;
        gpu.wait(&streams[0], j)?;
    }
    gpu.record(&ev.end, &streams[0])?;
    let submit_ms = submit.elapsed().as_secs_f64() * 1000.0;
    Ok(Rep { device_ms: gpu.elapsed_ms(&ev.start, &ev.end)? as f64, submit_ms })
}

/// The median of a non-empty list.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 { s[n / 2] } else { 0.5 * (s[n / 2 - 1] + s[n / 2]) }
}

/// Measured FP64 GEMM rate in TFLOP/s through the backend's BLAS: an n×n×n DGEMM on fixed
/// pseudo-random data, one warm-up, then the median of `reps` timed with events.
pub fn gemm_peak_tflops<B: Backend>(gpu: &B, n: usize, reps: usize) -> Result<f64> {
    let blas = gpu.blas()?;
    let stream = gpu.stream()?;
    let init: Vec<f64> = (0..n * n).map(|e| ((e * 2654435761usize) % 1000) as f64 / 1000.0 - 0.5).collect();
    let init = to_device_bytes(DType::F64, &init)?;
    let (a, b, c) = (gpu.alloc(init.len())?, gpu.alloc(init.len())?, gpu.alloc(init.len())?);
    gpu.upload(&a, &init)?;
    gpu.upload(&b, &init)?;
    let g = Gemm {
        transa: false, transb: false, m: n as i32, n: n as i32, k: n as i32,
        a: B::device_ptr(&a), lda: n as i32, stride_a: 0,
        b: B::device_ptr(&b), ldb: n as i32, stride_b: 0,
        c: B::device_ptr(&c), ldc: n as i32, stride_c: 0, batch: 1,
    };
    let (start, end) = (gpu.event()?, gpu.event()?);
    let mut times = Vec::new();
    for rep in 0..=reps {
        gpu.record(&start, &stream)?;
        gpu.gemm(&blas, &stream, DType::F64, &g)?;
        gpu.record(&end, &stream)?;
        let ms = gpu.elapsed_ms(&start, &end)? as f64;
        if rep > 0 {
            times.push(ms);
        }
    }
    let ms = median(&times);
    Ok(2.0 * (n as f64).powi(3) / (ms * 1e-3) / 1e12)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::fake::{cfg, prepared, session, Fake, Op};

    #[test]
    fn a_repetition_whose_submission_takes_as_long_as_its_device_time_is_host_bound() {
        // The fake's events say 50 ms per repetition of 4 tasks. Launches that take 20 ms each
        // to submit (80 ms per repetition) are a host the GPU waits for; instant ones (a few µs
        // of host work, far below 45 ms even on a loaded machine) are not.
        for (delay_ms, bound) in [(0, 0), (20, 3)] {
            let s = session(50.0);
            let c = cfg(3, 4, 2, 3);
            let (p, bufs) = prepared(&s, "copy", 4, &c);
            let streams = s.streams(c.streams).unwrap();
            s.gpu.launch_delay.set(std::time::Duration::from_millis(delay_ms));
            let t = time_reps_clocked(&s.gpu, &p, &bufs, &streams, &c, None).unwrap();
            assert_eq!(t.submit_us.len(), 3);
            assert_eq!(t.host_bound_reps(), bound, "{delay_ms} ms per launch: {:?} µs submitting, {:?} µs measured", t.submit_us, t.times);
            assert_eq!(t.host_bound_note().is_some(), bound > 0);
            if bound > 0 {
                assert!(t.submit_us.iter().all(|&u| u >= 80_000.0), "four launches of 20 ms: {:?}", t.submit_us);
                assert!(t.host_bound_note().unwrap().starts_with("3 of 3 repetitions were host-bound: submitting the tasks took "), "{:?}", t.host_bound_note());
            }
        }
    }

    #[test]
    fn time_reps_warms_up_for_200_ms_then_times_each_rep_round_robin() {
        for (rep_ms, warm_reps) in [(60.0, 4), (500.0, 1), (200.0, 1)] {
            let s = session(rep_ms);
            let c = cfg(3, 6, 4, 3);
            let (p, bufs) = prepared(&s, "L1", 4, &c);
            let streams = s.streams(c.streams).unwrap();
            s.gpu.ops.borrow_mut().clear();
            let times = time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap();
            assert_eq!(times, vec![rep_ms as f64 * 1000.0; 3], "µs per timed rep");
            let launches = s.gpu.launches();
            assert_eq!(launches.len(), (warm_reps + c.reps) * c.tasks, "{rep_ms} ms per rep: {warm_reps} untimed reps");
            for (t, (stream, args)) in launches.iter().enumerate() {
                let si = t % c.tasks % c.streams;
                assert_eq!(*stream, streams[si], "task {t} on stream {si}");
                assert_eq!(args.workspace, Fake::device_ptr(&bufs.workspaces[si]), "each stream its own workspace");
                assert_eq!((args.a, args.c, args.nfuncs, args.nblocks), (Fake::device_ptr(&bufs.a), Fake::device_ptr(&bufs.c), 3, 3));
            }
        }
    }

    #[test]
    fn a_rep_starts_on_stream_0_and_ends_after_every_stream_joined() {
        let s = session(300.0);
        let c = cfg(2, 5, 3, 1);
        let (p, bufs) = prepared(&s, "copy", 2, &c);
        let streams = s.streams(c.streams).unwrap();
        s.gpu.ops.borrow_mut().clear();
        time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap();
        let ops = s.gpu.ops.borrow();
        // Two reps (one untimed), the same events in both.
        let rep: Vec<Op> = ops[..ops.len() / 2].to_vec();
        assert_eq!(rep, ops[ops.len() / 2..].to_vec());
        let Op::Record { event: start, stream } = rep[0] else { panic!("{rep:?}") };
        assert_eq!(stream, streams[0]);
        assert_eq!(rep[1..3], [Op::Wait { stream: streams[1], event: start }, Op::Wait { stream: streams[2], event: start }]);
        let streams_of_launches: Vec<usize> = rep[3..8].iter().map(|o| if let Op::Launch { stream, .. } = o { *stream } else { panic!("{o:?}") }).collect();
        assert_eq!(streams_of_launches, [0, 1, 2, 0, 1].map(|i| streams[i]));
        let &[Op::Record { event: j1, stream: s1 }, Op::Wait { stream: w1, event: e1 }, Op::Record { event: j2, stream: s2 }, Op::Wait { stream: w2, event: e2 }, Op::Record { event: end, stream: s_end }] =
            &rep[8..]
        else {
            panic!("{rep:?}")
        };
        assert_eq!((s1, w1, e1, s2, w2, e2, s_end), (streams[1], streams[0], j1, streams[2], streams[0], j2, streams[0]));
        assert!(start != end && j1 != j2 && ![start, end].contains(&j1));
    }

    /// Run by [`an_interrupt_stops_the_timing_at_the_next_repetition`] in a child process (the
    /// interrupt flag is global to the process).
    #[test]
    fn child_interrupted_timing() {
        if std::env::var_os("MRA_TEST_TIMING_CHILD").is_none() {
            return;
        }
        crate::interrupt::install().unwrap();
        // One untimed repetition (500 ms by the fake's events), then 100 timed ones of 3
        // launches of 10 ms each: 3 s, far more than the 100 ms before the signal.
        let s = session(500.0);
        let c = cfg(3, 3, 1, 100);
        let (p, bufs) = prepared(&s, "copy", 4, &c);
        let streams = s.streams(c.streams).unwrap();
        s.gpu.launch_delay.set(std::time::Duration::from_millis(10));
        s.gpu.ops.borrow_mut().clear();
        std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            signal_hook::low_level::raise(signal_hook::consts::SIGINT).unwrap();
        });
        let start = std::time::Instant::now();
        let e = time_reps(&s.gpu, &p, &bufs, &streams, &c).unwrap_err();
        assert!(matches!(e, crate::RuntimeError::Interrupted), "{e}");
        assert!(start.elapsed() < std::time::Duration::from_secs(1), "stopped at the next repetition: {:?}", start.elapsed());
        let launches = s.gpu.launches().len();
        assert!(launches > 0 && launches < 300, "{launches} launches");
    }

    #[test]
    fn an_interrupt_stops_the_timing_at_the_next_repetition() {
        let o = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "harness::timing::tests::child_interrupted_timing", "--nocapture", "--test-threads=1"])
            .env("MRA_TEST_TIMING_CHILD", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    }

    #[test]
    fn the_gemm_peak_times_reps_after_one_warm_up() {
        let gpu = Fake::new(2.0);
        // 2·64³ flop in 2 ms.
        let tflops = gemm_peak_tflops(&gpu, 64, 3).unwrap();
        assert!((tflops - 2.0 * 64f64.powi(3) / 2e-3 / 1e12).abs() < 1e-12, "{tflops}");
        let gemms = gpu.ops.borrow().iter().filter(|o| matches!(o, Op::Gemm { .. })).count();
        assert_eq!(gemms, 4);
    }
}

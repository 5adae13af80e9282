//! The untimed repetitions before the timed ones (`--warmup`).
//!
//! The seed's harness runs one; ours runs at least 200 ms of them so that an idle GPU has
//! reached its clocks. That is not where a power-capped level stays: the SM clock under
//! fused-cluster K = 32 can keep falling for seconds (1980 → 1800 → 1710 MHz, +5.4% in µs per
//! task after 6 s), and a level timed right after another compute-heavy one in the same
//! process starts from its predecessor's lowered clock (+20%).
//! [`Warmup::Settle`] runs repetitions until the clock has stopped moving, and where the board
//! power and its limit are read, until the power is within the limit too (the driver holds the
//! limit on average over seconds: fused-cluster K = 32 can still draw 739 W against a 700 W
//! limit after its clock has settled for two windows, 702 W a second later), so that a level
//! is timed as a long MRA run sees it and whatever ran before it no longer matters.

use crate::clocks::{ClockSample, ClockSource, ClockStats};
use crate::error::Result;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// How long the untimed repetitions last.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Warmup {
    /// At least this long (device time), and at least one repetition.
    For(Duration),
    /// Until the SM clock has settled: repetitions in windows of [`SETTLE_WINDOW_MS`] until two
    /// windows in a row have median clocks within [`SETTLE_MHZ`] of each other and, where the
    /// source reads the power and the board's limit, the second window's median power is within
    /// [`crate::clocks::POWER_TOLERANCE`] of the limit; at most [`SETTLE_MAX_MS`]. Without clock
    /// readings, [`SETTLE_FALLBACK_MS`] of repetitions.
    Settle,
}

/// The default warm-up: long enough for an idle GPU to reach its clocks.
pub const DEFAULT_MS: u64 = 200;
/// Device time per settle window.
pub const SETTLE_WINDOW_MS: f64 = 1000.0;
/// Two windows whose median SM clocks differ by at most this are settled (one NVML step).
pub const SETTLE_MHZ: u32 = 15;
/// A clock still moving after this long is timed as it is (and said so).
pub const SETTLE_MAX_MS: f64 = 30_000.0;
/// `settle` without clock readings (no NVML): a fixed warm-up this long.
pub const SETTLE_FALLBACK_MS: f64 = 5_000.0;
/// The clock is read at most this often during a settle window (device time).
const SAMPLE_EVERY_MS: f64 = 10.0;

impl Default for Warmup {
    fn default() -> Warmup {
        Warmup::For(Duration::from_millis(DEFAULT_MS))
    }
}

impl Warmup {
    /// `settle`, or a duration: `200ms`, `3s`, `1.5s`, `1m` (a plain number is seconds).
    pub fn parse(s: &str) -> std::result::Result<Warmup, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("settle") {
            return Ok(Warmup::Settle);
        }
        let expected = || "expected a duration (200ms, 3s, 1m) or `settle` (until the SM clock stops moving)".to_string();
        let at = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
        let (num, unit) = t.split_at(at);
        let n: f64 = num.parse().map_err(|_| expected())?;
        let secs = match unit.trim() {
            "ms" => n / 1000.0,
            "" | "s" => n,
            "m" | "min" => n * 60.0,
            _ => return Err(expected()),
        };
        let d = Duration::try_from_secs_f64(secs).map_err(|_| format!("`{t}` is too long a warm-up"))?;
        if d > Duration::from_secs(3600) {
            return Err(format!("`{t}` is too long a warm-up (at most an hour)"));
        }
        Ok(Warmup::For(d))
    }

    /// For messages: `200 ms`, `3 s`, `until the SM clock settles`.
    pub fn describe(&self) -> String {
        match self {
            Warmup::For(d) if d.as_millis() < 1000 => format!("{} ms", d.as_millis()),
            Warmup::For(d) => format!("{} s", d.as_secs_f64()),
            Warmup::Settle => "until the SM clock settles".to_string(),
        }
    }
}

/// What a warm-up did.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WarmupDone {
    /// Device time of the untimed repetitions.
    pub ms: f64,
    pub reps: usize,
    /// With `settle` and clock readings: whether the clock settled within [`SETTLE_MAX_MS`];
    /// None for a fixed warm-up or without readings.
    pub settled: Option<bool>,
    /// With `settle` and clock readings: the median SM clock of the last window.
    pub sm_mhz: Option<u32>,
}

impl WarmupDone {
    /// `0.2 s (4 repetitions)`, `4.0 s until the SM clock settled at 1710 MHz`, ...
    pub fn describe(&self) -> String {
        let s = self.ms / 1000.0;
        match (self.settled, self.sm_mhz) {
            (Some(true), Some(m)) => format!("{s:.1} s until the SM clock settled at {m} MHz"),
            (Some(false), Some(m)) => format!("{s:.1} s: the SM clock had not settled (last {m} MHz)"),
            _ => format!("{s:.1} s ({} repetitions)", self.reps),
        }
    }
}

/// Runs untimed repetitions (`rep` runs one and returns its device milliseconds) as `spec`
/// asks; `clocks` is read for `settle`.
pub fn run(spec: Warmup, clocks: Option<&Arc<dyn ClockSource>>, mut rep: impl FnMut() -> Result<f64>) -> Result<WarmupDone> {
    let mut done = WarmupDone { ms: 0.0, reps: 0, settled: None, sm_mhz: None };
    let mut one = |done: &mut WarmupDone| -> Result<()> {
        done.ms += rep()?;
        done.reps += 1;
        Ok(())
    };
    let src = match (spec, clocks) {
        (Warmup::For(d), _) => {
            until(&mut done, d.as_secs_f64() * 1000.0, &mut one)?;
            return Ok(done);
        }
        (Warmup::Settle, None) => {
            until(&mut done, SETTLE_FALLBACK_MS, &mut one)?;
            return Ok(done);
        }
        (Warmup::Settle, Some(src)) => src,
    };
    let mut previous: Option<u32> = None;
    loop {
        let start = done.ms;
        let mut seen: Vec<ClockSample> = Vec::new();
        let mut read_at = f64::NEG_INFINITY;
        while done.ms - start < SETTLE_WINDOW_MS {
            one(&mut done)?;
            if done.ms - read_at >= SAMPLE_EVERY_MS {
                seen.extend(src.sample());
                read_at = done.ms;
            }
        }
        let Some(stats) = ClockStats::from_samples(&seen) else {
            // No readings after all: what `settle` does without a clock.
            until(&mut done, SETTLE_FALLBACK_MS, &mut one)?;
            return Ok(done);
        };
        let median = stats.sm_mhz_median;
        done.sm_mhz = Some(median);
        let within_limit = crate::clocks::above_limit(&stats, src.power_limit_w()).is_none();
        if within_limit && previous.is_some_and(|p| p.abs_diff(median) <= SETTLE_MHZ) {
            done.settled = Some(true);
            return Ok(done);
        }
        if done.ms >= SETTLE_MAX_MS {
            done.settled = Some(false);
            return Ok(done);
        }
        previous = Some(median);
    }
}

/// Repetitions until at least one has run and `ms` of device time have passed.
fn until(done: &mut WarmupDone, ms: f64, one: &mut impl FnMut(&mut WarmupDone) -> Result<()>) -> Result<()> {
    while done.reps == 0 || done.ms < ms {
        one(done)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Readings as a function of how many were taken: `per_window` readings at each of
    /// `windows` (SM clock, board power), then the last for ever; `limit_mw` the board's limit.
    struct Scripted {
        windows: Vec<(u32, Option<u32>)>,
        per_window: usize,
        limit_mw: Option<u32>,
        reads: Mutex<usize>,
    }
    impl ClockSource for Scripted {
        fn sample(&self) -> Option<ClockSample> {
            let mut n = self.reads.lock().unwrap();
            let (sm_mhz, power_mw) = self.windows[(*n / self.per_window).min(self.windows.len() - 1)];
            *n += 1;
            Some(ClockSample { sm_mhz, reasons: 0x4, power_mw })
        }
        fn power_limit_mw(&self) -> Option<u32> {
            self.limit_mw
        }
    }
    /// The clock falling through `mhz`, no power read.
    fn falling(mhz: Vec<u32>, per_window: usize) -> Scripted {
        Scripted { windows: mhz.into_iter().map(|m| (m, None)).collect(), per_window, limit_mw: None, reads: Mutex::new(0) }
    }
    /// A steady clock and a board power falling through `mw`, under a 700 W limit.
    fn cooling(mw: Vec<u32>, per_window: usize) -> Scripted {
        Scripted { windows: mw.into_iter().map(|w| (1770, Some(w))).collect(), per_window, limit_mw: Some(700_000), reads: Mutex::new(0) }
    }
    struct Silent;
    impl ClockSource for Silent {
        fn sample(&self) -> Option<ClockSample> {
            None
        }
    }

    fn source(s: impl ClockSource + 'static) -> Arc<dyn ClockSource> {
        Arc::new(s)
    }

    #[test]
    fn durations_and_settle_parse_and_bad_words_are_refused() {
        assert_eq!(Warmup::parse("200ms"), Ok(Warmup::For(Duration::from_millis(200))));
        assert_eq!(Warmup::parse("3s"), Ok(Warmup::For(Duration::from_secs(3))));
        assert_eq!(Warmup::parse("1.5"), Ok(Warmup::For(Duration::from_millis(1500))));
        assert_eq!(Warmup::parse("2m"), Ok(Warmup::For(Duration::from_secs(120))));
        assert_eq!(Warmup::parse("0"), Ok(Warmup::For(Duration::ZERO)));
        assert_eq!(Warmup::parse(" Settle "), Ok(Warmup::Settle));
        for bad in ["", "fast", "3x", "-1s", "1e999s", "2h", "ms"] {
            assert!(Warmup::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Warmup::parse("3x").unwrap_err().contains("`settle`"));
        assert_eq!(Warmup::default().describe(), "200 ms");
        assert_eq!(Warmup::parse("3s").unwrap().describe(), "3 s");
    }

    #[test]
    fn a_fixed_warm_up_runs_at_least_one_repetition_and_at_least_its_duration() {
        // Expected counts by hand: ceil(200 / 60) = 4; one 500 ms repetition; zero still runs one.
        for (spec, rep_ms, reps) in [(Warmup::default(), 60.0, 4), (Warmup::default(), 500.0, 1), (Warmup::For(Duration::ZERO), 1.0, 1)] {
            let done = run(spec, Some(&source(Silent)), || Ok(rep_ms)).unwrap();
            assert_eq!((done.reps, done.settled, done.sm_mhz), (reps, None, None), "{spec:?} at {rep_ms} ms");
        }
    }

    #[test]
    fn settle_stops_once_two_windows_agree_on_the_clock() {
        // 100 ms repetitions: 10 per 1 s window, one reading each. The clock falls 1980 -> 1800
        // -> 1710 and stays: windows 1980, 1800, 1710, 1710 -> settled after the fourth (40 reps).
        let src = source(falling(vec![1980, 1800, 1710], 10));
        let done = run(Warmup::Settle, Some(&src), || Ok(100.0)).unwrap();
        assert_eq!((done.reps, done.settled, done.sm_mhz), (40, Some(true), Some(1710)));
        assert_eq!(done.describe(), "4.0 s until the SM clock settled at 1710 MHz");
        // A steady clock settles after two windows.
        let steady = run(Warmup::Settle, Some(&source(falling(vec![1980], 1))), || Ok(100.0)).unwrap();
        assert_eq!((steady.reps, steady.settled), (20, Some(true)));
    }

    #[test]
    fn settle_also_waits_for_the_power_to_come_within_the_limit() {
        // The clock is steady from the start (it alone would settle after 2 windows, 20 reps);
        // the power reads 780, 739, 716, 702 W per window: 714 W (700 W + 2%) is first met in the
        // fourth window -> settled after 40 repetitions.
        let src = source(cooling(vec![780_000, 739_000, 716_000, 702_000], 10));
        let done = run(Warmup::Settle, Some(&src), || Ok(100.0)).unwrap();
        assert_eq!((done.reps, done.settled, done.sm_mhz), (40, Some(true), Some(1770)));
        // Power that never comes down: timed as it is after the limit, and said so.
        let hot = run(Warmup::Settle, Some(&source(cooling(vec![760_000], 10))), || Ok(100.0)).unwrap();
        assert_eq!((hot.reps, hot.settled), (300, Some(false)));
    }

    #[test]
    fn settle_gives_up_after_its_limit_and_falls_back_without_readings() {
        // Down 30 MHz per window for longer than 30 windows: not settled at the limit (300 reps).
        let mhz: Vec<u32> = (0..40).map(|w| 1980 - 30 * w).collect();
        let done = run(Warmup::Settle, Some(&source(falling(mhz, 10))), || Ok(100.0)).unwrap();
        assert_eq!((done.reps, done.settled, done.sm_mhz), (300, Some(false), Some(1980 - 30 * 29)));
        assert!(done.describe().contains("had not settled"), "{}", done.describe());
        // No clock at all, or a clock that never answers: the fixed fallback (5 s = 50 reps).
        for clocks in [None, Some(source(Silent))] {
            let done = run(Warmup::Settle, clocks.as_ref(), || Ok(100.0)).unwrap();
            assert_eq!((done.reps, done.settled, done.sm_mhz), (50, None, None));
        }
    }

    #[test]
    fn a_failing_repetition_ends_the_warm_up_with_its_error() {
        let mut n = 0;
        let e = run(Warmup::Settle, None, || {
            n += 1;
            if n == 3 { Err(crate::error::RuntimeError::Invalid("launch failed".into())) } else { Ok(100.0) }
        });
        assert!(e.is_err());
        assert_eq!(n, 3);
    }
}

//! The SM clock and the board power while levels are timed. A GPU that lowers its clock under a
//! power or thermal limit runs compute-heavy levels slower and leaves a memory-bound copy nearly
//! as fast, so the same binary's time / copy floor differs between machines of one pool; at
//! the power limit a level's time is its energy per task over the limit, so the board power
//! says which levels are there. A [`Sampler`] polls a [`ClockSource`] on its own thread while
//! the timed repetitions run and reports the clocks it saw, why the driver said they were
//! lowered, and the power it read.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// One reading: the SM clock, the driver's bit mask of reasons it is below the maximum, and the
/// board power in milliwatts where the source reads it (NVML's instantaneous reading; None
/// where the driver does not give one: a one-second average would lag a level timed for less).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockSample {
    pub sm_mhz: u32,
    pub reasons: u64,
    pub power_mw: Option<u32>,
}

/// Where readings come from (NVML on NVIDIA; none on AMD yet). Called from the sampler's thread.
pub trait ClockSource: Send + Sync {
    /// The current reading, or None when the query failed (that sample is skipped).
    fn sample(&self) -> Option<ClockSample>;

    /// The board's enforced power limit in milliwatts, where the source reads it.
    fn power_limit_mw(&self) -> Option<u32> {
        None
    }

    /// [`ClockSource::power_limit_mw`] in watts, as [`above_limit`] takes it.
    fn power_limit_w(&self) -> Option<f64> {
        self.power_limit_mw().map(|mw| f64::from(mw) / 1000.0)
    }
}

/// Why a level that drew more than the board's power limit while it was timed is faster than it
/// can stay: the driver holds the limit on average over seconds (a sweep's first second can
/// read 771-791 W against a 700 W limit, 688-702 W sustained). After `--warmup settle`
/// (`settled`) the power was within the limit when timing began, and a few short repetitions
/// can still read above it.
pub fn above_limit_why(settled: bool) -> &'static str {
    if settled {
        "the driver holds the limit on average over seconds, and the power was within it when timing began: short timed repetitions can read above it"
    } else {
        "the driver holds the limit on average over seconds, so a longer run is slower (`--warmup settle` times it sustained)"
    }
}

/// How far above the enforced limit a median of instantaneous readings may sit and still count
/// as at the limit: sustained, power-capped levels read 684-702 W against a 700 W limit.
pub const POWER_TOLERANCE: f64 = 0.02;

/// The median power of `stats` where it is above `limit_w` by more than [`POWER_TOLERANCE`]
/// (None where it is not, or either is unknown).
pub fn above_limit(stats: &ClockStats, limit_w: Option<f64>) -> Option<f64> {
    let (w, limit) = (stats.power_w_median?, limit_w?);
    (w > limit * (1.0 + POWER_TOLERANCE)).then_some(w)
}

/// What a [`Sampler`] saw while the repetitions ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockStats {
    pub samples: usize,
    pub sm_mhz_min: u32,
    pub sm_mhz_median: u32,
    pub sm_mhz_max: u32,
    /// The reasons the driver gave for a lowered clock in any sample, by name (NVML's
    /// `nvmlClocksEventReason*`), without "idle": between repetitions the GPU is.
    pub reasons: Vec<String>,
    /// The board power, median of the samples that read it, in watts (absent in records written
    /// before it was read, and where the driver gives no instantaneous reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w_median: Option<f64>,
}

impl ClockStats {
    /// From readings; None without any.
    pub fn from_samples(samples: &[ClockSample]) -> Option<ClockStats> {
        let mut mhz: Vec<u32> = samples.iter().map(|s| s.sm_mhz).collect();
        if mhz.is_empty() {
            return None;
        }
        mhz.sort_unstable();
        let bits = samples.iter().fold(0, |acc, s| acc | s.reasons);
        let mut mw: Vec<u32> = samples.iter().filter_map(|s| s.power_mw).collect();
        mw.sort_unstable();
        Some(ClockStats {
            samples: mhz.len(),
            sm_mhz_min: mhz[0],
            // The lower middle for an even count: a clock that was there, not an average.
            sm_mhz_median: mhz[(mhz.len() - 1) / 2],
            sm_mhz_max: mhz[mhz.len() - 1],
            reasons: reason_names(bits & !IDLE),
            power_w_median: (!mw.is_empty()).then(|| f64::from(mw[(mw.len() - 1) / 2]) / 1000.0),
        })
    }

    /// [`ClockStats::describe`] and the board power where it was read: `1680 MHz (sw power
    /// cap), 697 W`.
    pub fn describe_with_power(&self) -> String {
        match self.power_w_median {
            Some(w) => format!("{}, {w:.0} W", self.describe()),
            None => self.describe(),
        }
    }

    /// `1980 MHz`, `1680 MHz (sw power cap)`, or `1470-1980 MHz (median 1965; sw power cap)`
    /// when it moved.
    pub fn describe(&self) -> String {
        let why = self.reasons.join(", ");
        match (self.sm_mhz_min == self.sm_mhz_max, why.is_empty()) {
            (true, true) => format!("{} MHz", self.sm_mhz_max),
            (true, false) => format!("{} MHz ({why})", self.sm_mhz_max),
            (false, true) => format!("{}-{} MHz (median {})", self.sm_mhz_min, self.sm_mhz_max, self.sm_mhz_median),
            (false, false) => format!("{}-{} MHz (median {}; {why})", self.sm_mhz_min, self.sm_mhz_max, self.sm_mhz_median),
        }
    }
}

const IDLE: u64 = 0x1;

/// The reason bits of nvml.h (`nvmlClocksEventReason*`, formerly `nvmlClocksThrottleReason*`),
/// CUDA 12/13 toolkits.
const REASONS: [(u64, &str); 9] = [
    (0x1, "idle"),
    (0x2, "application clocks setting"),
    (0x4, "sw power cap"),
    (0x8, "hw slowdown"),
    (0x10, "sync boost"),
    (0x20, "sw thermal slowdown"),
    (0x40, "hw thermal slowdown"),
    (0x80, "hw power brake"),
    (0x100, "display clock setting"),
];

/// The names of the set bits of `bits`, in nvml.h's order; a bit nvml.h (as of CUDA 13) does not
/// define is named by its value.
pub fn reason_names(bits: u64) -> Vec<String> {
    let mut out: Vec<String> = REASONS.iter().filter(|(b, _)| bits & b != 0).map(|(_, n)| n.to_string()).collect();
    let known = REASONS.iter().fold(0, |acc, (b, _)| acc | b);
    if bits & !known != 0 {
        out.push(format!("reason bits {:#x}", bits & !known));
    }
    out
}

/// Polls a source every `period` on its own thread until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<ClockSample>>,
}

impl Sampler {
    pub fn start(source: Arc<dyn ClockSource>, period: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                seen.extend(source.sample());
                std::thread::sleep(period);
            }
            seen
        });
        Sampler { stop, thread }
    }

    /// Stops polling (one more reading first) and summarises; None when nothing was read.
    pub fn finish(self) -> Option<ClockStats> {
        self.stop.store(true, Ordering::Relaxed);
        let seen = self.thread.join().unwrap_or_default();
        ClockStats::from_samples(&seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn s(sm_mhz: u32, reasons: u64) -> ClockSample {
        ClockSample { sm_mhz, reasons, power_mw: None }
    }

    fn p(sm_mhz: u32, power_mw: Option<u32>) -> ClockSample {
        ClockSample { sm_mhz, reasons: 0, power_mw }
    }

    #[test]
    fn a_level_is_above_the_limit_only_when_its_median_power_is() {
        let at = |mw: u32| ClockStats::from_samples(&[p(1905, Some(mw))]).unwrap();
        assert_eq!(above_limit(&at(771_000), Some(700.0)), Some(771.0));
        assert_eq!(above_limit(&at(715_000), Some(700.0)), Some(715.0), "2% is 714 W");
        assert_eq!(above_limit(&at(714_000), Some(700.0)), None, "within 2% of the limit is at it");
        assert_eq!(above_limit(&at(700_000), Some(700.0)), None, "at the limit is not above it");
        assert_eq!(above_limit(&at(771_000), None), None, "no limit read: nothing said");
        assert_eq!(above_limit(&ClockStats::from_samples(&[p(1905, None)]).unwrap(), Some(700.0)), None);
    }

    #[test]
    fn power_is_the_median_of_the_readings_that_have_it() {
        // By hand: 697 500, 560 000, 698 900 mW sorted 560.0, 697.5, 698.9 W -> lower middle 697.5 W;
        // the reading without power is not a zero.
        let st = ClockStats::from_samples(&[p(1680, Some(697_500)), p(1980, Some(560_000)), p(1680, None), p(1665, Some(698_900))]).unwrap();
        assert_eq!(st.power_w_median, Some(697.5));
        assert_eq!(st.describe_with_power(), "1665-1980 MHz (median 1680), 698 W");
        // Two readings: the lower middle, a reading that was there.
        assert_eq!(ClockStats::from_samples(&[p(1980, Some(560_000)), p(1980, Some(600_000))]).unwrap().power_w_median, Some(560.0));
        let none = ClockStats::from_samples(&[p(1980, None)]).unwrap();
        assert_eq!((none.power_w_median, none.describe_with_power()), (None, "1980 MHz".to_string()));
        // Records written before power was read have no key and still parse; none is written when unread.
        let old: ClockStats = serde_json::from_str(r#"{"samples":3,"sm_mhz_min":1470,"sm_mhz_median":1500,"sm_mhz_max":1980,"reasons":["sw power cap"]}"#).unwrap();
        assert_eq!(old.power_w_median, None);
        assert!(!serde_json::to_string(&old).unwrap().contains("power_w_median"));
    }

    #[test]
    fn stats_are_the_order_statistics_of_the_readings() {
        // Expected values by hand: sorted 1470, 1905, 1980, 1980 -> min 1470, lower middle 1905, max 1980.
        let st = ClockStats::from_samples(&[s(1980, 0), s(1470, 0x4), s(1980, 0x1), s(1905, 0x4)]).unwrap();
        assert_eq!((st.samples, st.sm_mhz_min, st.sm_mhz_median, st.sm_mhz_max), (4, 1470, 1905, 1980));
        assert_eq!(st.reasons, vec!["sw power cap"], "idle is not a reason worth reporting while timing");
        assert_eq!(st.describe(), "1470-1980 MHz (median 1905; sw power cap)");
        let steady = ClockStats::from_samples(&[s(1980, 0), s(1980, 0x1)]).unwrap();
        assert_eq!(steady.describe(), "1980 MHz");
        let capped = ClockStats::from_samples(&[s(1680, 0x4)]).unwrap();
        assert_eq!(capped.describe(), "1680 MHz (sw power cap)");
        let moved = ClockStats::from_samples(&[s(1965, 0), s(1980, 0)]).unwrap();
        assert_eq!(moved.describe(), "1965-1980 MHz (median 1965)");
        assert_eq!(ClockStats::from_samples(&[]), None);
    }

    #[test]
    fn reason_bits_decode_as_nvml_h_defines_them() {
        // nvml.h: nvmlClocksEventReasonGpuIdle 0x1, ...ApplicationsClocksSetting 0x2,
        // ...SwPowerCap 0x4, nvmlClocksThrottleReasonHwSlowdown 0x8, ...SyncBoost 0x10,
        // ...SwThermalSlowdown 0x20, ...HwThermalSlowdown 0x40, ...HwPowerBrakeSlowdown 0x80,
        // ...DisplayClockSetting 0x100.
        assert_eq!(reason_names(0x4), vec!["sw power cap"]);
        assert_eq!(reason_names(0x48), vec!["hw slowdown", "hw thermal slowdown"]);
        assert_eq!(reason_names(0x1a0), vec!["sw thermal slowdown", "hw power brake", "display clock setting"]);
        assert_eq!(reason_names(0x2), vec!["application clocks setting"]);
        assert_eq!(reason_names(0x10 | 0x1000), vec!["sync boost", "reason bits 0x1000"]);
        assert!(reason_names(0).is_empty());
    }

    /// Hands out the readings it was given, then none.
    struct Scripted(Mutex<Vec<ClockSample>>);
    impl ClockSource for Scripted {
        fn sample(&self) -> Option<ClockSample> {
            self.0.lock().unwrap().pop()
        }
    }

    #[test]
    fn the_sampler_collects_what_its_source_reads_and_skips_failed_reads() {
        let src = Arc::new(Scripted(Mutex::new(vec![s(1755, 0x4), s(1980, 0)])));
        let sampler = Sampler::start(src.clone(), Duration::from_millis(1));
        while !src.0.lock().unwrap().is_empty() {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(5));
        let st = sampler.finish().unwrap();
        assert_eq!((st.samples, st.sm_mhz_min, st.sm_mhz_max), (2, 1755, 1980));
        let none = Sampler::start(Arc::new(Scripted(Mutex::new(vec![]))), Duration::from_millis(1)).finish();
        assert_eq!(none, None);
    }
}

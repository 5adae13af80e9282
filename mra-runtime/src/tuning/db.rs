//! The tuning database: one JSON file of every configuration measured (or compiled offline),
//! each keyed by where and how it was measured. Written atomically after every result (a
//! temporary file in the same directory, then a rename), so an interrupted tuning run loses
//! nothing and a rerun skips what is in it.
//!
//! Location: `$MRA_TUNING_DB`, else `$XDG_DATA_HOME/mra-dsl/tuning.json`, else
//! `~/.local/share/mra-dsl/tuning.json`. One process writes a file at a time.

use crate::error::{Result, RuntimeError};
use mra_codegen::tune::Config;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a result was measured: the device and the software that made and ran the kernel.
/// Offline (compile-only) results have an empty `gpu` and `driver`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Device {
    /// The device's name as its driver gives it (`NVIDIA A100-SXM4-80GB`); empty for an offline
    /// compile.
    pub gpu: String,
    pub arch: String,
    /// `CUDA driver 13000`, `libamdhip64.so.6, ROCm 6.2`; empty offline.
    pub driver: String,
    /// `NVRTC 13.0`, `hiprtc 5.2`, `clang 19`.
    pub compiler: String,
}

/// The harness settings a time was measured with (the seed's -N -M -n -s -r).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Harness {
    pub nfuncs: usize,
    pub max_blocks: usize,
    pub tasks: usize,
    pub streams: usize,
    pub reps: usize,
    /// `--warmup` where it was not the default 200 ms (`settle`, `3 s`): a steady-state time
    /// does not compare with one taken in the first second of load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupKey>,
    /// `--stream-data private` (an A and a C per stream): a time against per-stream data does
    /// not compare with one where the streams share them in L2. Absent: the seed's shared data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_data: Option<crate::harness::StreamData>,
}

/// A warm-up as the database records it: `{"ms": 3000}` or `"settle"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarmupKey {
    Ms(u64),
    Settle,
}

impl From<crate::harness::HarnessConfig> for Harness {
    fn from(c: crate::harness::HarnessConfig) -> Harness {
        use crate::warmup::Warmup;
        let warmup = match c.warmup {
            w if w == Warmup::default() => None,
            Warmup::For(d) => Some(WarmupKey::Ms(d.as_millis() as u64)),
            Warmup::Settle => Some(WarmupKey::Settle),
        };
        let stream_data = (c.stream_data != crate::harness::StreamData::Shared).then_some(c.stream_data);
        Harness { nfuncs: c.nfuncs, max_blocks: c.max_blocks, tasks: c.tasks, streams: c.streams, reps: c.reps, warmup, stream_data }
    }
}

/// What became of one candidate configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Validated, then timed: the median repetition over the tasks.
    Timed {
        us_per_task: f64,
        /// The copy floor in the same process, µs per task (copy / level is the fraction).
        copy_us_per_task: Option<f64>,
        max_rel_err: f64,
        resources: Option<crate::backend::Resources>,
        /// The SM clock while it was timed (absent in results from before it was read).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sm_clock: Option<crate::clocks::ClockStats>,
        /// Timed repetitions that were host-bound (the GPU waited for launches: the time is the
        /// host's launch rate); absent where none was, and in results from before it was counted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host_bound_reps: Option<usize>,
    },
    /// Compiled offline and fits (no spills, within shared memory): a survivor a tuning run
    /// on that arch starts from.
    Compiled { resources: Option<crate::backend::Resources>, occupancy: Option<f64> },
    /// Refused before running: compile error, spills, does not fit.
    Rejected { why: String },
    /// Ran, but its answer differs from the FP64 reference: never chosen.
    Invalid { why: String },
}

impl Outcome {
    /// The time, if this result has one.
    pub fn us(&self) -> Option<f64> {
        match self {
            Outcome::Timed { us_per_task, .. } => Some(*us_per_task),
            _ => None,
        }
    }
}

/// One result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub device: Device,
    pub level: String,
    pub k: u32,
    pub dtype: String,
    /// `None` for offline results (nothing was timed).
    pub harness: Option<Harness>,
    pub config: Config,
    pub outcome: Outcome,
    /// Seconds since the Unix epoch when it was recorded.
    pub at: u64,
}

impl Record {
    /// Same device, level, K, dtype and harness as `other`: results that compare.
    pub fn same_case(&self, other: &Record) -> bool {
        self.device == other.device && self.level == other.level && self.k == other.k && self.dtype == other.dtype && self.harness == other.harness
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct File {
    /// Format version of this file.
    version: u32,
    records: Vec<Record>,
}

const VERSION: u32 = 1;

/// The database: its file and the records in it.
#[derive(Debug)]
pub struct Db {
    path: PathBuf,
    records: Vec<Record>,
}

/// `$MRA_TUNING_DB`, else `$XDG_DATA_HOME/mra-dsl/tuning.json`, else
/// `~/.local/share/mra-dsl/tuning.json`.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MRA_TUNING_DB").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(d).join("mra-dsl").join("tuning.json"));
    }
    std::env::var_os("HOME").filter(|p| !p.is_empty()).map(|h| PathBuf::from(h).join(".local/share/mra-dsl/tuning.json"))
}

impl Db {
    /// Opens (reads) the database at `path`; a missing file is an empty database.
    pub fn open(path: impl Into<PathBuf>) -> Result<Db> {
        let path = path.into();
        let records = match std::fs::read(&path) {
            Ok(bytes) => {
                let f: File = serde_json::from_slice(&bytes).map_err(|e| {
                    RuntimeError::Invalid(format!("tuning database {} is not valid JSON ({e}); move it away or set MRA_TUNING_DB", path.display()))
                })?;
                if f.version != VERSION {
                    return Err(RuntimeError::Invalid(format!("tuning database {} has format version {}, this build reads {VERSION}", path.display(), f.version)));
                }
                f.records
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(RuntimeError::Invalid(format!("cannot read tuning database {}: {e}", path.display()))),
        };
        Ok(Db { path, records })
    }

    /// The database at [`default_path`].
    pub fn open_default() -> Result<Db> {
        let path = default_path().ok_or_else(|| RuntimeError::Invalid("no tuning database location: set MRA_TUNING_DB or HOME".into()))?;
        Db::open(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The recorded result of `config` for the case of `like` (its config is ignored), if any.
    pub fn find(&self, like: &Record, config: &Config) -> Option<&Record> {
        self.records.iter().find(|r| r.same_case(like) && &r.config == config)
    }

    /// Adds (or replaces the result of the same case and config) and writes the file at once.
    pub fn put(&mut self, record: Record) -> Result<()> {
        match self.records.iter_mut().find(|r| r.same_case(&record) && r.config == record.config) {
            Some(old) => *old = record,
            None => self.records.push(record),
        }
        self.flush()
    }

    /// Removes the record of `config` for the case of `like` (its config is ignored), if any,
    /// and writes the file at once: the pending record of a candidate whose evaluation was no
    /// verdict (interrupted, a tool stopped at its time limit).
    pub fn remove(&mut self, like: &Record, config: &Config) -> Result<()> {
        self.records.retain(|r| !(r.same_case(like) && &r.config == config));
        self.flush()
    }

    /// Writes the whole file atomically (`replace_file`: a temporary file beside it, then a rename).
    pub fn flush(&self) -> Result<()> {
        let io = |what: &str, e: std::io::Error| RuntimeError::Invalid(format!("cannot {what} tuning database {}: {e}", self.path.display()));
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io("create the directory of the", e))?;
        }
        let json = serde_json::to_vec_pretty(&File { version: VERSION, records: self.records.clone() }).expect("records serialize");
        // Through a symbolic link to a shared database, keeping the link and the file's mode.
        crate::replace_file::replace(&self.path, &json).map_err(|e| io("write", e))
    }

    /// The fastest valid timed configuration of `level` at `k` in `dtype` on `device`
    /// (a record of the same harness settings preferred when `harness` is given).
    pub fn best(&self, device: &Device, level: &str, k: u32, dtype: &str, harness: Option<Harness>) -> Option<&Record> {
        let timed = |r: &&Record| r.device == *device && r.level == level && r.k == k && r.dtype == dtype && r.outcome.us().is_some();
        let same_harness = harness.and_then(|h| fastest(self.records.iter().filter(timed).filter(|r| r.harness == Some(h))));
        same_harness.or_else(|| fastest(self.records.iter().filter(timed)))
    }

    /// The fastest timed configuration of `level` at `k` in `dtype` on any GPU of `arch`
    /// (for `--emit-src`, which has an arch and no GPU).
    pub fn best_for_arch(&self, arch: &str, level: &str, k: u32, dtype: &str) -> Option<&Record> {
        fastest(self.records.iter().filter(|r| r.device.arch == arch && r.level == level && r.k == k && r.dtype == dtype && r.outcome.us().is_some()))
    }
}

/// The timed record with the least µs per task.
fn fastest<'a>(records: impl Iterator<Item = &'a Record>) -> Option<&'a Record> {
    records.filter(|r| r.outcome.us().is_some()).min_by(|a, b| a.outcome.us().unwrap().total_cmp(&b.outcome.us().unwrap()))
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn device() -> Device {
        Device { gpu: "Fake GPU".into(), arch: "sm_90".into(), driver: "driver 1".into(), compiler: "NVRTC 13.0".into() }
    }

    pub fn record(cfg: &[(&str, u32)], outcome: Outcome) -> Record {
        Record {
            device: device(),
            level: "fused".into(),
            k: 8,
            dtype: "f64".into(),
            harness: Some(Harness { nfuncs: 2048, max_blocks: 512, tasks: 100, streams: 4, reps: 3, warmup: None, stream_data: None }),
            config: cfg.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            outcome,
            at: 1,
        }
    }

    pub fn timed(us: f64) -> Outcome {
        Outcome::Timed { us_per_task: us, copy_us_per_task: Some(3.0), max_rel_err: 1e-15, resources: None, sm_clock: None, host_bound_reps: None }
    }

    #[test]
    fn round_trip_and_best() {
        let dir = std::env::temp_dir().join(format!("mra-tuning-db-{}", std::process::id()));
        let path = dir.join("sub/tuning.json");
        let _ = std::fs::remove_dir_all(&dir);
        let mut db = Db::open(&path).unwrap();
        assert!(db.records().is_empty());
        db.put(record(&[("threads", 128)], timed(5.0))).unwrap();
        db.put(record(&[("threads", 256)], timed(4.0))).unwrap();
        db.put(record(&[("threads", 512)], Outcome::Invalid { why: "max rel err 0.3".into() })).unwrap();
        // A second result for the same config replaces the first.
        db.put(record(&[("threads", 128)], timed(6.0))).unwrap();
        let again = Db::open(&path).unwrap();
        assert_eq!(again.records(), db.records());
        assert_eq!(again.records().len(), 3);
        let best = again.best(&device(), "fused", 8, "f64", None).unwrap();
        assert_eq!(best.config["threads"], 256);
        assert!(again.best(&device(), "fused", 16, "f64", None).is_none());
        let other = Device { gpu: "Other".into(), ..device() };
        assert!(again.best(&other, "fused", 8, "f64", None).is_none(), "another GPU's result is not this one's");
        assert_eq!(again.best_for_arch("sm_90", "fused", 8, "f64").unwrap().config["threads"], 256);
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("tuning.json")]);
        std::fs::write(&path, b"{ not json").unwrap();
        assert!(Db::open(&path).unwrap_err().to_string().contains("is not valid JSON"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_timed_result_keeps_its_clock_and_one_from_before_the_clock_still_reads() {
        // Written by a build before the clock was read: no `sm_clock` key.
        let old = r#"{"status":"timed","us_per_task":12.5,"copy_us_per_task":9.8,"max_rel_err":1e-15,"resources":null}"#;
        let o: Outcome = serde_json::from_str(old).unwrap();
        assert_eq!(o, Outcome::Timed { us_per_task: 12.5, copy_us_per_task: Some(9.8), max_rel_err: 1e-15, resources: None, sm_clock: None, host_bound_reps: None });
        assert!(!serde_json::to_string(&o).unwrap().contains("sm_clock"), "nothing read, nothing written");
        assert!(!serde_json::to_string(&o).unwrap().contains("host_bound_reps"), "none host-bound, nothing written");
        let Outcome::Timed { host_bound_reps, .. } = serde_json::from_str(&serde_json::to_string(&Outcome::Timed {
            us_per_task: 3.1, copy_us_per_task: None, max_rel_err: 0.0, resources: None, sm_clock: None, host_bound_reps: Some(5),
        }).unwrap()).unwrap() else { panic!() };
        assert_eq!(host_bound_reps, Some(5), "a host-bound count survives the database");
        let clock = crate::clocks::ClockStats::from_samples(&[crate::clocks::ClockSample { sm_mhz: 1470, reasons: 0x4, power_mw: None }]);
        let timed = Outcome::Timed { us_per_task: 13.1, copy_us_per_task: None, max_rel_err: 0.0, resources: None, sm_clock: clock, host_bound_reps: None };
        let back: Outcome = serde_json::from_str(&serde_json::to_string(&timed).unwrap()).unwrap();
        assert_eq!(back, timed);
        let Outcome::Timed { sm_clock: Some(c), .. } = back else { panic!() };
        assert_eq!((c.sm_mhz_median, c.reasons.as_slice()), (1470, ["sw power cap".to_string()].as_slice()));
    }

    #[test]
    fn a_non_default_warm_up_is_part_of_the_harness_key_and_old_records_read_as_the_default() {
        use crate::harness::{HarnessConfig, Warmup};
        let cfg = |warmup| HarnessConfig { nfuncs: 2048, max_blocks: 512, tasks: 100, streams: 4, reps: 3, warmup, stream_data: Default::default() };
        let usual = Harness::from(cfg(Warmup::default()));
        let settled = Harness::from(cfg(Warmup::Settle));
        let longer = Harness::from(cfg(Warmup::For(std::time::Duration::from_secs(3))));
        assert_eq!((usual.warmup, settled.warmup, longer.warmup), (None, Some(WarmupKey::Settle), Some(WarmupKey::Ms(3000))));
        assert!(usual != settled && settled != longer, "times taken after different warm-ups do not compare");
        // A record written before --warmup existed has no `warmup` key: it was the 200 ms one.
        let old: Harness = serde_json::from_str(r#"{"nfuncs":2048,"max_blocks":512,"tasks":100,"streams":4,"reps":3}"#).unwrap();
        assert_eq!(old, usual);
        assert_eq!(serde_json::to_string(&usual).unwrap(), r#"{"nfuncs":2048,"max_blocks":512,"tasks":100,"streams":4,"reps":3}"#, "the usual warm-up writes the key it always wrote");
        assert!(serde_json::to_string(&settled).unwrap().ends_with(r#""warmup":"settle"}"#));
    }

    #[test]
    fn private_stream_data_is_part_of_the_harness_key_and_old_records_read_as_shared() {
        use crate::harness::{HarnessConfig, StreamData, Warmup};
        let cfg = |stream_data| HarnessConfig { nfuncs: 2048, max_blocks: 512, tasks: 100, streams: 4, reps: 3, warmup: Warmup::default(), stream_data };
        let shared = Harness::from(cfg(StreamData::Shared));
        let private = Harness::from(cfg(StreamData::Private));
        assert_eq!((shared.stream_data, private.stream_data), (None, Some(StreamData::Private)));
        assert_ne!(shared, private, "a floor with and without L2 shared between tasks do not compare");
        let old: Harness = serde_json::from_str(r#"{"nfuncs":2048,"max_blocks":512,"tasks":100,"streams":4,"reps":3}"#).unwrap();
        assert_eq!(old, shared, "a record from before --stream-data was the seed's shared data");
        assert_eq!(serde_json::to_string(&shared).unwrap(), r#"{"nfuncs":2048,"max_blocks":512,"tasks":100,"streams":4,"reps":3}"#);
        assert!(serde_json::to_string(&private).unwrap().ends_with(r#""stream_data":"private"}"#));
    }
}

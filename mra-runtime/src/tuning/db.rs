//! The tuning database: one JSON file of every configuration measured (or compiled offline),
//! each keyed by where and how it was measured. Written atomically after every result (a
//! temporary file in the same directory, then a rename), so an interrupted tuning run loses
//! nothing and a rerun skips what is in it.
//!
//! Several processes may tune into one file at once: every write takes an exclusive lock, reads
//! the file again and merges it with this process's records (the newer result of a case and
//! config wins), so none loses another's records.
//!
//! Location: `$MRA_TUNING_DB`, else `$XDG_DATA_HOME/mra-dsl/tuning.json`, else
//! `~/.local/share/mra-dsl/tuning.json`.

use crate::error::{Result, RuntimeError};
use crate::harness::{StreamData, AUTO_BLOCKS};
use mra_codegen::tune::Config;
use mra_codegen::tuned_defaults::Regime;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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
    /// The operation the configuration was timed for (`general`, `ranksum`: `tune --op`, as
    /// [`mra_codegen::Operation::tuned_as`] names them); empty for the seed's transform. The
    /// transform's lookups never take an operation's record, nor the other way round.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub op: String,
}

impl Harness {
    /// The regime a time was measured in: one launch on one stream over private data, with the
    /// grid the GPU holds (`tune -M auto -n 1 -s 1 --stream-data private`), is the API's (a
    /// time per launch over the whole batch); anything else is the harness's (concurrent
    /// launches of `-N` tensors). Times of the two do not compare.
    pub fn regime(&self) -> Regime {
        let api = self.max_blocks == AUTO_BLOCKS && self.streams == 1 && self.tasks == 1 && self.stream_data == Some(StreamData::Private);
        if api {
            Regime::Api
        } else {
            Regime::Harness
        }
    }
}

impl Record {
    /// The regime it was timed in ([`Harness::regime`]); an offline result counts as the harness's.
    pub fn regime(&self) -> Regime {
        self.harness.map_or(Regime::Harness, |h| h.regime())
    }

    /// Same device, level, K, dtype and harness as `other`: results that compare.
    pub fn same_case(&self, other: &Record) -> bool {
        self.device == other.device && self.level == other.level && self.k == other.k && self.dtype == other.dtype && self.harness == other.harness && self.op == other.op
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
    /// Records this process removed ([`Db::remove`]): the merge of every write leaves them out.
    removed: Vec<Record>,
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
        let records = read_records(&path)?;
        Ok(Db { path, records, removed: Vec::new() })
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
    /// verdict (interrupted, a tool stopped at its time limit). The removal holds against the
    /// merge with the file (which still has the record).
    pub fn remove(&mut self, like: &Record, config: &Config) -> Result<()> {
        let gone = |r: &Record| r.same_case(like) && &r.config == config;
        if let Some(r) = self.records.iter().find(|r| gone(r)) {
            self.removed.push(r.clone());
        }
        self.records.retain(|r| !gone(r));
        self.flush()
    }

    /// Writes the whole file atomically (`replace_file`: a temporary file beside it, then a
    /// rename), merged with the file as it is now: under an exclusive lock, the records another
    /// process wrote since this one read it are kept, and this one's are added (of two results
    /// for one case and config, the newer), less the ones this process removed. This process's
    /// view becomes the merged file.
    pub fn flush(&mut self) -> Result<()> {
        let io = |what: &str, e: std::io::Error| RuntimeError::Invalid(format!("cannot {what} tuning database {}: {e}", self.path.display()));
        // Through a symbolic link to a shared database: the link's target is the file, and its
        // directory the one locked.
        let target = crate::replace_file::follow_links(&self.path).map_err(|e| io("write", e))?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|e| io("create the directory of the", e))?;
        let _lock = lock_dir(&dir).map_err(|e| io("lock", e))?;
        let mut merged = read_records(&self.path)?;
        merge(&mut merged, std::mem::take(&mut self.records));
        merged.retain(|r| !self.removed.iter().any(|x| x.same_case(r) && x.config == r.config && x.at == r.at));
        self.records = merged;
        let json = serde_json::to_vec_pretty(&File { version: VERSION, records: self.records.clone() }).expect("records serialize");
        // Keeping the link and the file's mode.
        crate::replace_file::replace(&self.path, &json).map_err(|e| io("write", e))
    }

    /// The fastest valid timed configuration of `level` at `k` in `dtype` on `device`: a record
    /// of the same harness settings when `harness` is given and has one, else of `regime`
    /// ([`in_regime`]).
    pub fn best(&self, device: &Device, level: &str, k: u32, dtype: &str, harness: Option<Harness>, regime: Regime) -> Option<&Record> {
        self.best_op(device, level, k, dtype, harness, regime, "")
    }

    /// [`Db::best`] among the records of operation `op` (`""`: the seed's transform).
    #[allow(clippy::too_many_arguments)]
    pub fn best_op(&self, device: &Device, level: &str, k: u32, dtype: &str, harness: Option<Harness>, regime: Regime, op: &str) -> Option<&Record> {
        let timed = |r: &&Record| r.device == *device && r.level == level && r.k == k && r.dtype == dtype && r.op == op && r.outcome.us().is_some();
        let same_harness = harness.and_then(|h| fastest(self.records.iter().filter(timed).filter(|r| r.harness == Some(h))));
        same_harness.or_else(|| in_regime(regime, |g| fastest(self.records.iter().filter(timed).filter(|r| r.regime() == g))))
    }

    /// The fastest timed configuration of `level` at `k` in `dtype` on any GPU of `arch`, of
    /// `regime` ([`in_regime`]): for the commands with an arch and no GPU (`--emit-src`, `export`).
    pub fn best_for_arch(&self, arch: &str, level: &str, k: u32, dtype: &str, regime: Regime) -> Option<&Record> {
        self.best_for_arch_op(arch, level, k, dtype, regime, "")
    }

    /// [`Db::best_for_arch`] among the records of operation `op` (`""`: the seed's transform).
    pub fn best_for_arch_op(&self, arch: &str, level: &str, k: u32, dtype: &str, regime: Regime, op: &str) -> Option<&Record> {
        in_regime(regime, |g| fastest(self.records.iter().filter(|r| r.device.arch == arch && r.level == level && r.k == k && r.dtype == dtype && r.op == op && r.regime() == g)))
    }
}

/// The records of the file at `path`; a missing file holds none.
fn read_records(path: &Path) -> Result<Vec<Record>> {
    let bytes = match crate::read_file::read_bounded(path, crate::read_file::MAX_DATA) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(RuntimeError::Invalid(format!("cannot read tuning database {}: {e}", path.display()))),
    };
    let f: File = serde_json::from_slice(&bytes)
        .map_err(|e| RuntimeError::Invalid(format!("tuning database {} is not valid JSON ({e}); move it away or set MRA_TUNING_DB", path.display())))?;
    if f.version != VERSION {
        return Err(RuntimeError::Invalid(format!("tuning database {} has format version {}, this build reads {VERSION}", path.display(), f.version)));
    }
    Ok(f.records)
}

/// What identifies a result: its case ([`Record::same_case`]) and its config.
type Key<'a> = (&'a Device, &'a str, u32, &'a str, Option<Harness>, &'a Config, &'a str);

fn key(r: &Record) -> Key<'_> {
    (&r.device, r.level.as_str(), r.k, r.dtype.as_str(), r.harness, &r.config, r.op.as_str())
}

/// Adds `ours` to `file`'s records: a result `file` lacks is appended, one it has replaces it
/// unless the file's is newer (another process measured it again since). Order is kept.
fn merge(file: &mut Vec<Record>, ours: Vec<Record>) {
    let at: HashMap<Key, usize> = file.iter().enumerate().map(|(i, r)| (key(r), i)).collect();
    let (mut replace, mut add) = (Vec::new(), Vec::new());
    for r in ours {
        match at.get(&key(&r)) {
            Some(&i) if file[i].at <= r.at => replace.push((i, r)),
            Some(_) => {}
            None => add.push(r),
        }
    }
    for (i, r) in replace {
        file[i] = r;
    }
    file.extend(add);
}

/// An exclusive lock on the database's directory, held until the File is dropped. The
/// directory, not the file: the file is replaced by a rename at every write, so a lock on it
/// would be on the old inode that the next writer no longer opens; and a lock file of its own
/// would be left beside the user's database.
fn lock_dir(dir: &Path) -> std::io::Result<std::fs::File> {
    let d = std::fs::File::open(dir)?;
    // Fully qualified: std's own File::lock (Rust 1.89) would otherwise shadow it on newer compilers.
    fs4::FileExt::lock(&d)?;
    Ok(d)
}

/// `pick` of `regime`; a command of the API regime takes a harness result where no API one
/// exists (as the shipped tuned defaults do), a harness command never an API one.
fn in_regime<'a>(regime: Regime, pick: impl Fn(Regime) -> Option<&'a Record>) -> Option<&'a Record> {
    match regime {
        Regime::Harness => pick(Regime::Harness),
        Regime::Api => pick(Regime::Api).or_else(|| pick(Regime::Harness)),
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
            op: String::new(),
        }
    }

    pub fn timed(us: f64) -> Outcome {
        Outcome::Timed { us_per_task: us, copy_us_per_task: Some(3.0), max_rel_err: 1e-15, resources: None, sm_clock: None, host_bound_reps: None }
    }

    /// A time per launch over 2 GiB (µs per task of one launch) is not a harness time (µs per
    /// task of 2048 tensors): each regime answers from its own records, an API lookup falling
    /// back on harness records where it has none, a harness lookup never taking an API one.
    #[test]
    fn each_regime_answers_from_its_own_records() {
        let api = Harness { nfuncs: 65536, max_blocks: AUTO_BLOCKS, tasks: 1, streams: 1, reps: 3, warmup: None, stream_data: Some(StreamData::Private) };
        let harness_fast = record(&[("threads", 128)], timed(12.0));
        let api_slow = Record { harness: Some(api), ..record(&[("threads", 256)], timed(1100.0)) };
        let api_fast = Record { harness: Some(api), ..record(&[("threads", 512)], timed(1000.0)) };
        // Any other harness (several streams, a capped grid, shared data) is the harness's.
        for other in [Harness { streams: 4, ..api }, Harness { max_blocks: 512, ..api }, Harness { stream_data: None, ..api }] {
            assert_eq!(other.regime(), Regime::Harness, "{other:?}");
        }
        assert_eq!(api.regime(), Regime::Api);
        let db_of = |records: Vec<Record>| Db { path: PathBuf::from("/nonexistent"), records, removed: Vec::new() };
        let db = db_of(vec![harness_fast.clone(), api_slow, api_fast.clone()]);
        let threads = |r: Option<&Record>| r.map(|r| r.config["threads"]);
        for (regime, want) in [(Regime::Harness, 128), (Regime::Api, 512)] {
            assert_eq!(threads(db.best(&device(), "fused", 8, "f64", None, regime)), Some(want), "{regime}");
            assert_eq!(threads(db.best_for_arch("sm_90", "fused", 8, "f64", regime)), Some(want), "{regime}");
        }
        let harness_only = db_of(vec![harness_fast]);
        assert_eq!(threads(harness_only.best_for_arch("sm_90", "fused", 8, "f64", Regime::Api)), Some(128), "API falls back on the harness");
        let api_only = db_of(vec![api_fast]);
        assert_eq!(threads(api_only.best(&device(), "fused", 8, "f64", None, Regime::Harness)), None, "a harness command never takes an API time");
    }

    /// An operation's records (`tune --op`) answer that operation's lookups only, on the GPU
    /// and for the arch; the transform's never take them, though faster; and they survive a
    /// save and a reload.
    #[test]
    fn an_operations_records_are_apart_from_the_transforms() {
        let api = Harness { nfuncs: 65536, max_blocks: AUTO_BLOCKS, tasks: 1, streams: 1, reps: 3, warmup: None, stream_data: Some(StreamData::Private) };
        let transform = Record { harness: Some(api), ..record(&[("threads", 256)], timed(1100.0)) };
        let general = Record { harness: Some(api), op: "general".into(), ..record(&[("threads", 128)], timed(900.0)) };
        let path = std::env::temp_dir().join(format!("mra-db-op-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut db = Db::open(&path).unwrap();
        db.put(transform).unwrap();
        db.put(general).unwrap();
        let db = Db::open(&path).unwrap();
        let threads = |r: Option<&Record>| r.map(|r| r.config["threads"]);
        assert_eq!(threads(db.best(&device(), "fused", 8, "f64", None, Regime::Api)), Some(256));
        assert_eq!(threads(db.best_for_arch("sm_90", "fused", 8, "f64", Regime::Api)), Some(256));
        assert_eq!(threads(db.best_op(&device(), "fused", 8, "f64", None, Regime::Api, "general")), Some(128));
        assert_eq!(threads(db.best_for_arch_op("sm_90", "fused", 8, "f64", Regime::Api, "general")), Some(128));
        assert_eq!(threads(db.best_op(&device(), "fused", 8, "f64", None, Regime::Api, "ranksum")), None);
        let _ = std::fs::remove_file(&path);
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
        let best = again.best(&device(), "fused", 8, "f64", None, Regime::Harness).unwrap();
        assert_eq!(best.config["threads"], 256);
        assert!(again.best(&device(), "fused", 16, "f64", None, Regime::Harness).is_none());
        let other = Device { gpu: "Other".into(), ..device() };
        assert!(again.best(&other, "fused", 8, "f64", None, Regime::Harness).is_none(), "another GPU's result is not this one's");
        assert_eq!(again.best_for_arch("sm_90", "fused", 8, "f64", Regime::Harness).unwrap().config["threads"], 256);
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("tuning.json")]);
        std::fs::write(&path, b"{ not json").unwrap();
        assert!(Db::open(&path).unwrap_err().to_string().contains("is not valid JSON"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn two_writers_at_once_keep_every_record() {
        // Two tunes on one database, each with its own view read at the start: each write must
        // merge the other's records rather than replace the file with its own view.
        let dir = std::env::temp_dir().join(format!("mra-tuning-db-writers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("tuning.json");
        const N: u32 = 40;
        std::thread::scope(|s| {
            for writer in 0..2 {
                let path = &path;
                s.spawn(move || {
                    let mut db = Db::open(path).unwrap();
                    for i in 0..N {
                        db.put(record(&[("writer", writer), ("i", i)], timed(1.0 + i as f64))).unwrap();
                    }
                });
            }
        });
        let db = Db::open(&path).unwrap();
        assert_eq!(db.records().len(), 2 * N as usize, "both writers' records are kept");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("tuning.json")], "no temporary or lock file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn of_two_results_for_one_config_the_newer_is_kept() {
        let dir = std::env::temp_dir().join(format!("mra-tuning-db-newer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("tuning.json");
        let (mut a, mut b) = (Db::open(&path).unwrap(), Db::open(&path).unwrap());
        let at = |at, us| Record { at, ..record(&[("threads", 128)], timed(us)) };
        b.put(at(5, 2.0)).unwrap();
        // Measured earlier, written later: the newer result (b's) stays, and a sees it.
        a.put(at(3, 9.0)).unwrap();
        a.put(record(&[("threads", 256)], timed(4.0))).unwrap();
        assert_eq!(a.find(&at(0, 0.0), &at(0, 0.0).config).unwrap().outcome.us(), Some(2.0));
        // A newer result replaces an older one.
        b.put(at(7, 3.0)).unwrap();
        let again = Db::open(&path).unwrap();
        assert_eq!(again.records().len(), 2);
        assert_eq!(again.find(&at(0, 0.0), &at(0, 0.0).config).unwrap().outcome.us(), Some(3.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_database_that_is_not_a_regular_file_is_refused_in_one_line() {
        for path in ["/dev/full", "/dev/zero"] {
            let e = Db::open(path).unwrap_err().to_string();
            assert!(e.contains(path) && e.contains("not a regular file") && !e.contains('\n'), "{e}");
        }
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

//! Tuned defaults: the parameter values that measurement chose per arch, level, dtype and K,
//! kept as data apart from the schedules (as Tensile's logic files and cuBLAS's heuristics keep
//! theirs apart from the kernels). A schedule declares each parameter with one plain default;
//! `tuned/<arch>.json` says where a measured value differs from it, and where it came from.
//!
//! Resolution order for one request, each overriding the one before: the schedule's default,
//! this data ([`Schedule::at`](crate::Schedule::at)), a tuning database record and `--fix`
//! (both applied by the caller with [`Schedule::with_config`](crate::Schedule::with_config)).
//! An arch without a file runs the schedules' own defaults.

use crate::dtype::DType;
use crate::request::Request;
use crate::config::Config;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/tuned_files.rs"));

/// One `tuned/<arch>.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultsFile {
    pub arch: String,
    /// What the file is, for a reader who opens it.
    pub about: String,
    pub provenance: Provenance,
    pub entries: Vec<Entry>,
}

/// Where a file's values came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The GPU(s) and the harness, or why the values were not measured on this arch.
    pub measured_on: String,
    pub date: String,
    pub commit: String,
    /// The command that produced the values.
    pub command: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// The values of some parameters of one level at some K, for one dtype.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub level: String,
    pub dtype: String,
    pub k: Vec<u32>,
    /// Only the parameters named here change; the others keep the schedule's defaults.
    pub config: Config,
    /// The harness the values were timed in.
    pub regime: Regime,
    /// The operation the values were tuned for (`ranksum`), where its kernel differs enough
    /// from the transform's that the transform's values do not carry over; empty: the
    /// transform's values, used by every operation without entries of its own.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub op: String,
    /// The measurement behind the entry (GPU, time per task, date), where one was recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// Where a configuration was timed (MISSION.md's two regimes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    /// The seed's harness: many tasks on several streams, one A and C shared by them.
    Harness,
    /// One launch over a batch far larger than L2, as the export and `Transformer` run.
    Api,
}

impl std::fmt::Display for Regime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Regime::Harness => "harness",
            Regime::Api => "api",
        })
    }
}

impl DefaultsFile {
    /// The entry for `level` at `k` in `dtype` timed in `regime`; for the API regime, where it
    /// has none, the one timed in the seed's harness (a value measured there is a better guess
    /// than none), never the other way round.
    pub fn lookup(&self, level: &str, k: u32, dtype: DType, regime: Regime) -> Option<&Entry> {
        self.lookup_op(level, k, dtype, regime, "")
    }

    /// [`DefaultsFile::lookup`] among the entries tuned for the operation `op` (empty: the
    /// transform's).
    pub fn lookup_op(&self, level: &str, k: u32, dtype: DType, regime: Regime, op: &str) -> Option<&Entry> {
        let find = |r: Regime| self.entries.iter().find(|e| e.level == level && e.dtype == dtype.name() && e.k.contains(&k) && e.regime == r && e.op == op);
        match regime {
            Regime::Harness => find(Regime::Harness),
            Regime::Api => find(Regime::Api).or_else(|| find(Regime::Harness)),
        }
    }

    /// `tuned/sm_90.json`: where the file lives in the repository.
    pub fn path(&self) -> String {
        format!("mra-codegen/tuned/{}.json", self.arch)
    }
}

impl DefaultsFile {
    /// A file for `arch` with no entries yet.
    pub fn new(arch: &str, provenance: Provenance) -> DefaultsFile {
        DefaultsFile { arch: arch.to_string(), about: ABOUT.to_string(), provenance, entries: Vec::new() }
    }

    /// Sets the values of `level` at `k` in `dtype` timed in `regime` to `config` (the parameters
    /// that differ from the schedule's defaults), replacing what the file said of that case.
    pub fn set(&mut self, level: &str, dtype: DType, k: u32, regime: Regime, config: Config, source: String) {
        self.set_op(level, dtype, k, regime, "", config, source)
    }

    /// [`DefaultsFile::set`] for the values of operation `op` (`""`: the transform's).
    #[allow(clippy::too_many_arguments)]
    pub fn set_op(&mut self, level: &str, dtype: DType, k: u32, regime: Regime, op: &str, config: Config, source: String) {
        for e in self.entries.iter_mut().filter(|e| e.level == level && e.dtype == dtype.name() && e.regime == regime && e.op == op) {
            e.k.retain(|&x| x != k);
        }
        self.entries.retain(|e| !e.k.is_empty());
        self.entries.push(Entry { level: level.to_string(), dtype: dtype.name().to_string(), k: vec![k], config, regime, op: op.to_string(), source });
        self.entries.sort_by(|a, b| (&a.level, &a.dtype, a.k.first()).cmp(&(&b.level, &b.dtype, b.k.first())));
    }

    /// The file's text: the head pretty-printed, one entry per line (a diff shows which changed).
    pub fn to_text(&self) -> String {
        fn line(v: &impl Serialize) -> String {
            serde_json::to_string(v).expect("plain data serializes")
        }
        let entries: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                let ks = e.k.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
                let config = e.config.iter().map(|(n, v)| format!("{}: {v}", line(n))).collect::<Vec<_>>().join(", ");
                let source = if e.source.is_empty() { String::new() } else { format!(", \"source\": {}", line(&e.source)) };
                let op = if e.op.is_empty() { String::new() } else { format!(", \"op\": {}", line(&e.op)) };
                format!("    {{\"level\": {}, \"dtype\": {}, \"k\": [{ks}], \"config\": {{{config}}}, \"regime\": {}{op}{source}}}", line(&e.level), line(&e.dtype), line(&e.regime))
            })
            .collect();
        let provenance = serde_json::to_string_pretty(&self.provenance).expect("plain data serializes").replace('\n', "\n  ");
        format!(
            "{{\n  \"arch\": {},\n  \"about\": {},\n  \"provenance\": {provenance},\n  \"entries\": [\n{}\n  ]\n}}\n",
            line(&self.arch),
            line(&self.about),
            entries.join(",\n")
        )
    }
}

/// What every file says of itself.
pub const ABOUT: &str = "Tuned defaults: per level, dtype and K, the parameter values that differ from the schedule's own defaults (the rest keep them). Every command and the export read this file; a tuning database or --fix overrides it. See docs/tuning.md.";

/// Every shipped file, parsed once. The files are checked by this crate's tests (names, levels,
/// parameters, choices, that each entry plans); a malformed one is a build that must not ship.
pub fn shipped() -> &'static [DefaultsFile] {
    static PARSED: OnceLock<Vec<DefaultsFile>> = OnceLock::new();
    PARSED.get_or_init(|| {
        FILES
            .iter()
            .map(|(name, text)| serde_json::from_str(text).unwrap_or_else(|e| panic!("mra-codegen/tuned/{name} is malformed: {e}")))
            .collect()
    })
}

/// The shipped file of `arch`, if that arch was tuned.
pub fn for_arch(arch: &str) -> Option<&'static DefaultsFile> {
    shipped().iter().find(|f| f.arch == arch)
}

/// The shipped values for `level` at `req` (timed in `regime` where there are both).
pub fn lookup(level: &str, req: Request, regime: Regime) -> Option<&'static Entry> {
    lookup_op(level, req, regime, "")
}

/// [`lookup`] among the entries tuned for the operation `op` (empty: the transform's).
pub fn lookup_op(level: &str, req: Request, regime: Regime, op: &str) -> Option<&'static Entry> {
    for_arch(req.arch.name)?.lookup_op(level, req.k, req.dtype, regime, op)
}

/// One line for `levels` and `--compile-only`: whose defaults a command uses on `arch`.
pub fn describe_source(arch: &str) -> String {
    match for_arch(arch) {
        Some(f) => format!("tuned defaults for {arch}: {} ({})", f.path(), f.provenance.measured_on),
        None => format!("no tuned defaults for {arch}: the schedules' own defaults (`mra-bench tune --write-defaults` makes them)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{arch, levels};

    /// Every shipped file parses, is named after an arch, and every entry names a level, one of
    /// its parameters and one of that parameter's choices, at K in range, once per (level,
    /// dtype, K, regime); and the level plans with the entry's values (where it runs at all).
    #[test]
    fn every_shipped_file_names_real_levels_parameters_and_choices() {
        assert_eq!(shipped().len(), FILES.len());
        assert!(!FILES.is_empty(), "at least the measured arch ships a file");
        for (file, (name, _)) in shipped().iter().zip(FILES) {
            assert_eq!(*name, format!("{}.json", file.arch), "a file is named after its arch");
            let arch = arch::find(&file.arch).unwrap_or_else(|_| panic!("{name}: unknown arch"));
            let mut seen = std::collections::HashSet::new();
            for e in &file.entries {
                let level = levels::find(&e.level).unwrap_or_else(|_| panic!("{name}: no level {}", e.level));
                let dtype = DType::parse(&e.dtype).unwrap_or_else(|| panic!("{name}: no dtype {}", e.dtype));
                let tuned = level.with_config(&e.config).unwrap_or_else(|err| panic!("{name}: {err}"));
                for &k in &e.k {
                    assert!((1..=crate::K_MAX).contains(&k), "{name}: K={k}");
                    assert!(seen.insert((e.level.clone(), e.dtype.clone(), k, e.regime, e.op.clone())), "{name}: {} K={k} listed twice", e.level);
                    assert!(["", "ranksum", "general"].contains(&e.op.as_str()), "{name}: no operation {}", e.op);
                    if let Err(err) = tuned.plan(Request { k, arch, dtype }) {
                        panic!("{name}: {} K={k} does not plan with its tuned values: {err}", e.level);
                    }
                }
            }
        }
    }

    /// An entry tuned for an operation applies to that operation only: the rank sum's block size
    /// at K = 16 on sm_90 is its own, the transform's stays the schedule's; an operation without
    /// entries of its own takes the transform's.
    #[test]
    fn an_operations_entries_apply_to_it_alone() {
        let fused = levels::find("fused").unwrap();
        let req = Request { k: 16, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 };
        let threads = |s: crate::Schedule| s.defaults().into_iter().find(|(n, _)| n == "threads").unwrap().1;
        let own = lookup_op("fused", req, Regime::Api, "ranksum").expect("sm_90 ships the rank sum's fused at K = 16");
        assert_eq!(own.op, "ranksum");
        assert_eq!(threads(fused.at_for(req, Regime::Api, "ranksum")), own.config["threads"]);
        assert!(lookup("fused", req, Regime::Api).is_none_or(|e| e.op.is_empty()));
        assert_eq!(threads(fused.at_for(req, Regime::Api, "")), threads(fused.at_in(req, Regime::Api)));
        assert_ne!(threads(fused.at_for(req, Regime::Api, "ranksum")), threads(fused.at_in(req, Regime::Api)));
        let none = Request { k: 13, ..req };
        assert!(lookup_op("fused", none, Regime::Api, "ranksum").is_none());
        assert_eq!(threads(fused.at_for(none, Regime::Api, "ranksum")), threads(fused.at_in(none, Regime::Api)));
    }

    /// A shipped file printed by `to_text` reads back equal, and `set` replaces one K of an
    /// entry without touching its other K.
    #[test]
    fn a_file_round_trips_and_set_replaces_one_case() {
        for (f, (name, text)) in shipped().iter().zip(FILES) {
            assert_eq!(&serde_json::from_str::<DefaultsFile>(&f.to_text()).unwrap(), f, "{name}");
            assert_eq!(f.to_text(), *text, "{name} is written as `tune --write-defaults` writes it");
        }
        let mut f = for_arch("sm_90").unwrap().clone();
        let before = f.lookup("fused-pipe", 12, DType::F64, Regime::Harness).unwrap().clone();
        let shared = f.entries.iter().find(|e| e.level == "fused-pipe" && e.k.contains(&12)).unwrap().k.clone();
        f.set("fused-pipe", DType::F64, 12, Regime::Harness, Config::from([("threads".into(), 256)]), "test".into());
        assert_eq!(f.lookup("fused-pipe", 12, DType::F64, Regime::Harness).unwrap().config, Config::from([("threads".into(), 256)]));
        for k in shared.into_iter().filter(|&k| k != 12) {
            assert_eq!(f.lookup("fused-pipe", k, DType::F64, Regime::Harness).unwrap().config, before.config, "K={k} kept");
        }
        assert_eq!(serde_json::from_str::<DefaultsFile>(&f.to_text()).unwrap(), f);
    }

    /// An entry changes only the parameters it names; a request without an entry keeps the
    /// schedule's defaults; a configuration chosen by the caller wins over the data.
    #[test]
    fn the_data_applies_to_its_request_only_and_a_chosen_value_wins() {
        let pipe = levels::find("fused-pipe").unwrap();
        let sm90 = arch::find("sm_90").unwrap();
        let req = |k| Request { k, arch: sm90, dtype: DType::F64 };
        let entry = lookup("fused-pipe", req(10), Regime::Harness).expect("sm_90 ships fused-pipe at K = 10");
        let at = pipe.at(req(10)).defaults();
        for (name, value) in pipe.defaults() {
            assert_eq!(at[&name], *entry.config.get(&name).unwrap_or(&value), "{name}");
        }
        let chosen = pipe.with_config(&Config::from([("swap_operands".to_string(), 0)])).unwrap();
        assert_eq!(chosen.at(req(10)).defaults()["swap_operands"], 0);
        // A value timed in one launch never stands in for the seed's harness; the other way
        // round it does (K = 8: only an api entry; K = 20: only a harness one).
        assert!(lookup("fused-pipe", req(8), Regime::Harness).is_none() && lookup("fused-pipe", req(8), Regime::Api).is_some());
        assert_eq!(pipe.at(req(8)).defaults(), pipe.defaults(), "the harness plan at K = 8 is the schedule's");
        assert_eq!(lookup("fused-pipe", req(20), Regime::Api).map(|e| e.regime), Some(Regime::Harness));
        let gfx = Request { k: 10, arch: arch::find("gfx90a").unwrap(), dtype: DType::F64 };
        assert!(for_arch("gfx90a").is_none());
        assert_eq!(levels::find("fused").unwrap().at(gfx).defaults(), levels::find("fused").unwrap().defaults());
    }
}

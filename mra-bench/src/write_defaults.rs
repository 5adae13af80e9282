//! `tune --write-defaults FILE`: the tuning database's fastest timed configuration per level and
//! K for `--arch`, written as that arch's tuned-defaults file (`mra-codegen/tuned/<arch>.json`):
//! the data every command and the export read. Nothing is tuned and no GPU is needed; the file
//! is merged (its other entries stay) and written atomically.

use crate::cli::TuneArgs;
use crate::select::{self, CmdResult};
use mra_codegen::tuned_defaults::{DefaultsFile, Provenance, Regime};
use mra_codegen::tune::Config;
use mra_codegen::{Arch, DType, Schedule};
use mra_runtime::tuning::{Db, Harness, Record};
use std::collections::BTreeSet;
use std::path::Path;

pub fn run(args: &TuneArgs, path: &str, schedules: &[Schedule], ks: &[u32], dtype: DType) -> CmdResult {
    let arch = match &args.arch {
        Some(a) => select::arch(a)?,
        None => return Err(select::usage(format!("--write-defaults needs --arch: the file holds one arch's values (one of: {})", mra_codegen::arch::names().join(", ")))),
    };
    let file_name = Path::new(path).file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    if file_name != format!("{}.json", arch.name) {
        return Err(select::usage(format!("--write-defaults {}: a tuned-defaults file is named after its arch ({}.json), as the build reads it", select::quote(path), arch.name)));
    }
    let db = match &args.db {
        Some(p) => Db::open(p)?,
        None => Db::open_default()?,
    };
    // A file that exists keeps its provenance (what measured its other entries); each entry
    // written says where it came from in its `source`.
    let mut existed = true;
    let mut file = match mra_runtime::read_file::read_bounded_to_string(Path::new(path), mra_runtime::read_file::MAX_DATA) {
        Ok(text) => {
            let f: DefaultsFile = serde_json::from_str(&text).map_err(|e| format!("--write-defaults {}: not a tuned-defaults file ({e}); move it away or name another", select::quote(path)))?;
            if f.arch != arch.name {
                return Err(format!("--write-defaults {}: the file is for {}, not {}", select::quote(path), f.arch, arch.name).into());
            }
            f
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            existed = false;
            DefaultsFile::new(arch.name, provenance(&[], arch))
        }
        Err(e) => return Err(format!("cannot read {}: {e}", select::quote(path)).into()),
    };
    let mut used: Vec<Record> = Vec::new();
    let mut missing = Vec::new();
    for s in schedules {
        for &k in ks {
            // Each regime's fastest: times per launch over a whole batch do not compare with the
            // harness's, and a command of one regime reads that regime's entry.
            let mut found = false;
            for regime in [Regime::Harness, Regime::Api] {
                if let Some(r) = db.best_for_arch(arch.name, &s.name, k, dtype.name(), regime).filter(|r| r.regime() == regime) {
                    file.set(&s.name, dtype, k, regime, differences(s, &r.config), source(r));
                    used.push(r.clone());
                    found = true;
                }
            }
            // The operations' own values (`tune --op`, timed in one launch), as `"op"` entries.
            for op in ["general", "ranksum"] {
                if let Some(r) = db.best_for_arch_op(arch.name, &s.name, k, dtype.name(), Regime::Api, op).filter(|r| r.regime() == Regime::Api) {
                    file.set_op(&s.name, dtype, k, Regime::Api, op, differences(s, &r.config), source(r));
                    used.push(r.clone());
                    found = true;
                }
            }
            if !found {
                missing.push(format!("{} K={k}", s.name));
            }
        }
    }
    if !missing.is_empty() {
        eprintln!("# no timed {dtype} record on {} in {} for: {} (left as the file had them)", arch.name, db.path().display(), missing.join(", "));
    }
    if used.is_empty() {
        return Err(format!("nothing written to {}: the tuning database {} has no timed {dtype} result on {} for these levels and K; run `mra-bench tune` on such a GPU first", select::quote(path), db.path().display(), arch.name).into());
    }
    if !existed {
        file.provenance = provenance(&used, arch);
    }
    crate::outfile::write_atomically(Path::new(path), file.to_text().as_bytes()).map_err(|e| format!("cannot write {}: {e}", select::quote(path)))?;
    eprintln!("# wrote {} tuned default{} for {} to {path}; rebuild to ship them", used.len(), if used.len() == 1 { "" } else { "s" }, arch.name);
    Ok(0)
}

/// The parameters of `config` whose value is not the schedule's own default.
fn differences(s: &Schedule, config: &Config) -> Config {
    let plain = s.defaults();
    config.iter().filter(|(n, v)| plain.get(*n) != Some(v)).map(|(n, v)| (n.clone(), *v)).collect()
}

/// `NVIDIA H200: 12.30 us/task (copy 11.80), harness -N 2048 -M 512 -s 4, 2026-11-29`.
fn source(r: &Record) -> String {
    let copy = match r.outcome {
        mra_runtime::tuning::Outcome::Timed { copy_us_per_task: Some(c), .. } => format!(" (copy {c:.2})"),
        _ => String::new(),
    };
    let how = r.harness.map(|h| format!(", {}", harness(&h))).unwrap_or_default();
    format!("{}: {:.2} us/task{copy}{how}, {}", r.device.gpu, r.outcome.us().unwrap_or(f64::NAN), date(r.at))
}

/// `harness -N 2048 -M 512 -s 4`, or `api: one launch over N = 79536 (-M auto -n 1 -s 1 --stream-data private)`.
fn harness(h: &Harness) -> String {
    match h.regime() {
        Regime::Api => format!("api: one launch over N = {} (-M auto -n 1 -s 1 --stream-data private)", h.nfuncs),
        Regime::Harness => {
            let m = if h.max_blocks == mra_runtime::harness::AUTO_BLOCKS { "auto".to_string() } else { h.max_blocks.to_string() };
            format!("harness -N {} -M {m} -s {}", h.nfuncs, h.streams)
        }
    }
}

/// Where the values came from: the GPUs of the records, their harness, today, this build.
fn provenance(used: &[Record], arch: &Arch) -> Provenance {
    let gpus: BTreeSet<&str> = used.iter().map(|r| r.device.gpu.as_str()).collect();
    let harnesses: BTreeSet<String> = used.iter().filter_map(|r| r.harness).map(|h| harness(&h)).collect();
    let command: Vec<String> = std::env::args().map(|a| if a.contains(' ') { format!("'{a}'") } else { a }).collect();
    Provenance {
        measured_on: format!("{} ({}), {}", gpus.into_iter().collect::<Vec<_>>().join(", "), arch.name, harnesses.into_iter().collect::<Vec<_>>().join("; ")),
        date: date(mra_runtime::tuning::db::now()),
        commit: env!("MRA_COMMIT").to_string(),
        command: format!("{} (from the tuning database)", command.join(" ")),
        note: String::new(),
    }
}

/// `2026-11-29` (UTC) from seconds since the Unix epoch.
fn date(secs: u64) -> String {
    crate::plot::date_of(secs).unwrap_or_else(|| "an unknown date".into())
}

#[cfg(test)]
mod tests {
    /// Dates checked against `date -u -d @SECS +%F`.
    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(super::date(951_782_400), "2000-02-29");
        assert_eq!(super::date(1_795_920_000), "2026-11-29");
    }
}

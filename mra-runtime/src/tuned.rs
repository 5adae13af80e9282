//! `best`: the tuned level for one (K, arch, dtype) from the tuning database, and the tuned
//! configuration of a named level. The one place the lookup plugs in for the GPU-free users:
//! `mra-bench export`, `mra-bench transform -l best` and [`crate::transformer::Transformer`]
//! all come through here. It reads the database exactly as `run`/`validate`/`--emit-src` do
//! ([`crate::tuning::lookup_in`] for "any GPU of this arch": [`Db::best_for_arch`]).

use crate::error::{Result, RuntimeError};
use crate::tuning::{self, db, Db, Device, Record};
use mra_codegen::{levels, Arch, DType, Schedule};

/// The default tuning database ([`db::default_path`]), if it exists.
fn open_default() -> Result<Option<Db>> {
    match db::default_path() {
        Some(path) if path.exists() => Ok(Some(Db::open(path)?)),
        _ => Ok(None),
    }
}

/// Any GPU of `arch`: the key [`tuning::lookup_in`] answers with the fastest record of the arch.
fn any_gpu_of(arch: &Arch) -> Device {
    Device { gpu: String::new(), arch: arch.name.to_string(), driver: String::new(), compiler: String::new() }
}

/// `schedule` with the configuration of `r`, or why the database's entry no longer fits.
fn apply(schedule: &Schedule, r: &Record, db: &Db) -> Result<Schedule> {
    schedule.with_config(&r.config).map_err(|e| {
        RuntimeError::Invalid(format!(
            "the tuning database {} has a configuration of {} the schedule no longer accepts ({e}); run `mra-bench tune` again",
            db.path().display(),
            schedule.name
        ))
    })
}

/// The tuned level for `k` on `arch` in `dtype`: of every level with a timed record at `k` on
/// some GPU of `arch`, the fastest, with its tuned configuration applied.
pub fn best_level(k: u32, arch: &'static Arch, dtype: DType) -> Result<Schedule> {
    best(k, arch, dtype).map(|(schedule, _)| schedule)
}

/// [`best_level`] with the database record it came from.
pub fn best(k: u32, arch: &'static Arch, dtype: DType) -> Result<(Schedule, Record)> {
    best_among(k, arch, dtype, |_| true)
}

/// [`best`] among the transform levels `keep` accepts (export: those with a kernel of their own).
pub fn best_among(k: u32, arch: &'static Arch, dtype: DType, keep: impl Fn(&Schedule) -> bool) -> Result<(Schedule, Record)> {
    let Some(db) = open_default()? else {
        return Err(RuntimeError::Invalid(format!(
            "-l best: no tuning database ({}); run `mra-bench tune -K {k}` on a GPU first, name a level with -l, or omit -l for the default levels",
            db::default_path().map_or("no location: set MRA_TUNING_DB or HOME".into(), |p| p.display().to_string())
        )));
    };
    let device = any_gpu_of(arch);
    let best = levels::all()
        .iter()
        .filter(|s| s.is_transform() && keep(s))
        .filter_map(|s| tuning::lookup_in(&db, &device, &s.name, k, dtype, None))
        .min_by(|a, b| a.outcome.us().unwrap_or(f64::INFINITY).total_cmp(&b.outcome.us().unwrap_or(f64::INFINITY)));
    let Some(r) = best else {
        return Err(RuntimeError::Invalid(format!(
            "-l best: no tuned level at K={k} ({dtype}) for {} in the tuning database {}; run `mra-bench tune -K {k}` on such a GPU first",
            arch.name,
            db.path().display()
        )));
    };
    let schedule = levels::find(&r.level).map_err(|e| RuntimeError::Invalid(format!("the tuning database {} names a level this build lacks: {e}", db.path().display())))?;
    Ok((apply(&schedule, &r, &db)?, r))
}

/// `schedule` with its tuned configuration at `k` for any GPU of `arch`, with the record it
/// came from; `None` if the database does not exist, has none, or the schedule declares no
/// parameters.
pub fn tuned_config(schedule: &Schedule, k: u32, arch: &'static Arch, dtype: DType) -> Result<Option<(Schedule, Record)>> {
    if schedule.params().is_empty() {
        return Ok(None);
    }
    let Some(db) = open_default()? else { return Ok(None) };
    match tuning::lookup_in(&db, &any_gpu_of(arch), &schedule.name, k, dtype, None) {
        Some(r) => Ok(Some((apply(schedule, &r, &db)?, r))),
        None => Ok(None),
    }
}

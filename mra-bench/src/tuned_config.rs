//! The tuned configuration of a level, for the commands that run or print one: `run`,
//! `validate`, `sweep` (on this GPU) and `--emit-src` (for this arch). Each use is said on
//! stderr; `--untuned` keeps the schedule's defaults; `-l best` picks per K the fastest tuned
//! level on this GPU.

use crate::select::CmdResult;
use mra_codegen::{levels, DType, Schedule};
use mra_runtime::harness::{Backend, Session};
use mra_runtime::tuning::{self, db, Db, Device, Record};

/// The tuning database if it exists (`None`: nothing tuned yet).
pub fn open_db(path: Option<&str>) -> CmdResult<Option<Db>> {
    let path = match path {
        Some(p) => std::path::PathBuf::from(p),
        None => match db::default_path() {
            Some(p) => p,
            None => return Ok(None),
        },
    };
    if !path.exists() {
        return Ok(None);
    }
    Ok(Some(Db::open(path)?))
}

/// The key of results measured on this session's GPU with its driver and compiler.
pub fn device_of<B: Backend>(session: &Session<B>) -> Device {
    let gpu = &session.gpu;
    Device { gpu: gpu.device_name().to_string(), arch: gpu.arch().name.to_string(), driver: gpu.driver_version(), compiler: B::compiler_version(&session.compiler) }
}

/// Any GPU of `arch` (for --emit-src).
pub fn device_of_arch(arch: &str) -> Device {
    Device { gpu: String::new(), arch: arch.to_string(), driver: String::new(), compiler: String::new() }
}

/// `schedule` with its tuned configuration for `device` at `k`, if the database has one and
/// `untuned` is not set; says which on stderr.
pub fn apply(db: Option<&Db>, schedule: &Schedule, device: &Device, k: u32, dtype: DType, untuned: bool) -> CmdResult<Schedule> {
    if untuned || schedule.params().is_empty() {
        return Ok(schedule.clone());
    }
    let Some(db) = db else { return Ok(schedule.clone()) };
    match tuning::lookup_in(db, device, &schedule.name, k, dtype, None) {
        Some(r) => with_record(schedule, &r, db),
        None => Ok(schedule.clone()),
    }
}

fn with_record(schedule: &Schedule, r: &Record, db: &Db) -> CmdResult<Schedule> {
    let tuned = schedule.with_config(&r.config).map_err(|e| {
        format!("the tuning database {} has a configuration the schedule no longer accepts ({e}); run `mra-bench tune` again or pass --untuned", db.path().display())
    })?;
    let on = if r.device.gpu.is_empty() { r.device.arch.clone() } else { r.device.gpu.clone() };
    // A parameter declared after the record was tuned takes the schedule's default: say which.
    let missing: Vec<String> = schedule.params().into_iter().map(|p| p.name).filter(|n| !r.config.contains_key(n)).collect();
    let missing = match missing.len() {
        0 => String::new(),
        1 => format!("; {} at the schedule's default (the record predates it)", missing[0]),
        _ => format!("; {} at the schedule's defaults (the record predates them)", missing.join(", ")),
    };
    eprintln!(
        "# {} K={}: tuned configuration {} ({:.2} us/task when tuned on {on}; {}){missing}; --untuned for the defaults",
        schedule.name,
        r.k,
        mra_codegen::tune::describe(&r.config),
        r.outcome.us().unwrap_or(f64::NAN),
        db.path().display()
    );
    Ok(tuned)
}

/// `-l best`: the fastest level tuned at `k` on `device`, with its configuration.
pub fn best(db: Option<&Db>, device: &Device, k: u32, dtype: DType) -> CmdResult<Schedule> {
    let none = || format!("-l best: no tuned level at K={k} ({dtype}) for {} in the tuning database; run `mra-bench tune -K {k}` first", if device.gpu.is_empty() { &device.arch } else { &device.gpu });
    let db = db.ok_or_else(none)?;
    let mut best: Option<Record> = None;
    for s in levels::all().into_iter().filter(|s| s.is_transform()) {
        if let Some(r) = tuning::lookup_in(db, device, &s.name, k, dtype, None) {
            if best.as_ref().is_none_or(|b| r.outcome.us() < b.outcome.us()) {
                best = Some(r);
            }
        }
    }
    let r = best.ok_or_else(none)?;
    let schedule = levels::find(&r.level)?;
    eprintln!("# -l best at K={k}: {} is the fastest tuned level on this device", r.level);
    with_record(&schedule, &r, db)
}

/// Whether a `-l` value asks for the best tuned level.
pub fn is_best(sel: &str) -> bool {
    sel.trim().eq_ignore_ascii_case("best")
}

//! The one place a command's configuration is decided, up front, before any code is generated:
//! a level's tuned configuration from the tuning database (unless `--untuned`), or with
//! `-l best` the fastest tuned level. What is left open takes the arch's shipped tuned defaults
//! ([`mra_codegen::tuned_defaults`]) and then the schedule's own when the schedule is planned.
//!
//! Every user of a configuration comes through here: `run`, `validate`, `sweep`, `--emit-src`,
//! `export`, `transform` and [`crate::transformer::Transformer`]. Nothing here prints: each
//! [`Configured`] carries the line a command says on stderr.

use crate::backend::Backend;
use crate::error::{Result, RuntimeError};
use crate::harness::Session;
use crate::tuning::{self, db, Db, Device, Record};
use mra_codegen::tuned_defaults::Regime;
use mra_codegen::{levels, tune, Arch, DType, Operation, Schedule};

/// The tuning database a command reads (if any), and whether it ignores it for named levels.
pub struct Tuning {
    db: Option<Db>,
    untuned: bool,
    /// Which records answer: those timed as the command runs (see [`Tuning::in_regime`]).
    regime: Regime,
}

/// A level in the configuration a command runs, and where that configuration came from.
#[derive(Clone, Debug)]
pub struct Configured {
    pub schedule: Schedule,
    /// The database record whose configuration it is (`None`: the defaults).
    pub record: Option<Record>,
    /// What a command says about it on stderr (`None`: nothing to say, the defaults).
    pub note: Option<String>,
}

impl Configured {
    fn defaults(schedule: &Schedule) -> Configured {
        Configured { schedule: schedule.clone(), record: None, note: None }
    }
}

impl Tuning {
    /// The database at `path` (else the default location) if it exists. With `untuned` it is not
    /// read at all, so a broken one cannot stop the defaults, unless `needs_db` (`-l best`).
    pub fn open(path: Option<&str>, untuned: bool, needs_db: bool) -> Result<Tuning> {
        if untuned && !needs_db {
            return Ok(Tuning { db: None, untuned, regime: Regime::Harness });
        }
        let path = match path {
            Some(p) => Some(std::path::PathBuf::from(p)),
            None => db::default_path(),
        };
        let db = match path {
            Some(p) if p.exists() => Some(Db::open(p)?),
            _ => None,
        };
        Ok(Tuning { db, untuned, regime: Regime::Harness })
    }

    /// No database: every level at its defaults.
    pub fn none() -> Tuning {
        Tuning { db: None, untuned: true, regime: Regime::Harness }
    }

    /// Records of `regime` answer (the harness's by default): a command that launches once over
    /// a batch (`export`, `transform`, `sweep --launch api`) takes `Regime::Api`, and falls back on
    /// harness records where the database has no API one.
    pub fn in_regime(self, regime: Regime) -> Tuning {
        Tuning { regime, ..self }
    }

    /// `schedule` in its tuned configuration for `device` at `k` where the database has one
    /// (a `device` with an empty `gpu` means any GPU of its arch), else at its defaults.
    pub fn configure(&self, schedule: &Schedule, device: &Device, k: u32, dtype: DType) -> Result<Configured> {
        if self.untuned || schedule.params().is_empty() {
            return Ok(Configured::defaults(schedule));
        }
        let Some(db) = &self.db else { return Ok(Configured::defaults(schedule)) };
        match tuning::lookup_in(db, device, &schedule.name, k, dtype, None, self.regime) {
            Some(r) => with_record(schedule, r, db),
            None => Ok(Configured::defaults(schedule)),
        }
    }

    /// [`Tuning::configure`] for the kernel of `op`: the fastest record `tune --op` left for
    /// that operation (`"op"`, as [`Operation::tuned_as`] names it, timed in the API regime) for
    /// `device` at `k`; without one the schedule's open defaults, which
    /// [`Schedule::generate_tuned`] fills from the tuned-defaults data. An operation tuned as the
    /// transform (one matrix, another layout or α, β) takes the transform's records.
    pub fn configure_op(&self, schedule: &Schedule, device: &Device, k: u32, dtype: DType, op: Operation) -> Result<Configured> {
        let name = op.tuned_as();
        if name.is_empty() {
            return self.configure(schedule, device, k, dtype);
        }
        if self.untuned || schedule.params().is_empty() {
            return Ok(Configured::defaults(schedule));
        }
        let Some(db) = &self.db else { return Ok(Configured::defaults(schedule)) };
        let dt = dtype.to_string();
        let record = match device.gpu.is_empty() {
            true => db.best_for_arch_op(&device.arch, &schedule.name, k, &dt, Regime::Api, name),
            false => db.best_op(device, &schedule.name, k, &dt, None, Regime::Api, name),
        };
        match record.cloned() {
            Some(r) => with_record(schedule, r, db),
            None => Ok(Configured::defaults(schedule)),
        }
    }

    /// `-l best`: of the transform levels `keep` accepts, the fastest tuned at `k` on `device`,
    /// in its tuned configuration.
    pub fn best(&self, device: &Device, k: u32, dtype: DType, keep: impl Fn(&Schedule) -> bool) -> Result<Configured> {
        let on = if device.gpu.is_empty() { device.arch.clone() } else { device.gpu.clone() };
        let Some(db) = &self.db else {
            return Err(RuntimeError::Invalid(format!(
                "-l best: no tuned level at K={k} ({dtype}) for {on}: no tuning database ({}); run `mra-bench tune -K {k}` on a GPU first, or name a level with -l",
                db::default_path().map_or("no location: set MRA_TUNING_DB or HOME".into(), |p| p.display().to_string())
            )));
        };
        let best = levels::all()
            .iter()
            .filter(|s| s.is_transform() && keep(s))
            .filter_map(|s| tuning::lookup_in(db, device, &s.name, k, dtype, None, self.regime))
            .min_by(|a, b| a.outcome.us().unwrap_or(f64::INFINITY).total_cmp(&b.outcome.us().unwrap_or(f64::INFINITY)));
        let Some(r) = best else {
            return Err(RuntimeError::Invalid(format!(
                "-l best: no tuned level at K={k} ({dtype}) for {on} in the tuning database {}; run `mra-bench tune -K {k}` on such a GPU first",
                db.path().display()
            )));
        };
        let schedule = levels::find(&r.level).map_err(|e| RuntimeError::Invalid(format!("the tuning database {} names a level this build lacks: {e}", db.path().display())))?;
        let mut c = with_record(&schedule, r, db)?;
        c.note = Some(format!("# -l best at K={k}: {} is the fastest tuned level for {on} ({})", schedule.name, tune::describe(&c.record.as_ref().unwrap().config)));
        Ok(c)
    }
}

/// `schedule` with the configuration of `r`, and the line that says so.
fn with_record(schedule: &Schedule, r: Record, db: &Db) -> Result<Configured> {
    let tuned = schedule.with_config(&r.config).map_err(|e| {
        RuntimeError::Invalid(format!(
            "the tuning database {} has a configuration of {} the schedule no longer accepts ({e}); run `mra-bench tune` again or pass --untuned",
            db.path().display(),
            schedule.name
        ))
    })?;
    let on = if r.device.gpu.is_empty() { r.device.arch.clone() } else { r.device.gpu.clone() };
    // A parameter declared after the record was tuned takes the default: say which.
    let missing: Vec<String> = schedule.params().into_iter().map(|p| p.name).filter(|n| !r.config.contains_key(n)).collect();
    let missing = match missing.len() {
        0 => String::new(),
        1 => format!("; {} at its default (the record predates it)", missing[0]),
        _ => format!("; {} at their defaults (the record predates them)", missing.join(", ")),
    };
    let note = format!(
        "# {} K={}: tuned configuration {} ({:.2} us/task when tuned on {on}; {}){missing}; --untuned for the defaults",
        schedule.name,
        r.k,
        tune::describe(&r.config),
        r.outcome.us().unwrap_or(f64::NAN),
        db.path().display()
    );
    Ok(Configured { schedule: tuned, record: Some(r), note: Some(note) })
}

/// The key of results measured on this session's GPU with its driver and compiler.
pub fn device_of<B: Backend>(session: &Session<B>) -> Device {
    let gpu = &session.gpu;
    Device { gpu: gpu.device_name().to_string(), arch: gpu.arch().name.to_string(), driver: gpu.driver_version(), compiler: B::compiler_version(&session.compiler) }
}

/// Any GPU of `arch`: the key that answers with the fastest record of the arch (the GPU-free
/// commands: `--emit-src`, `export`).
pub fn any_gpu_of(arch: &Arch) -> Device {
    Device { gpu: String::new(), arch: arch.name.to_string(), driver: String::new(), compiler: String::new() }
}

/// Whether a `-l` value asks for the best tuned level.
pub fn is_best(sel: &str) -> bool {
    sel.trim().eq_ignore_ascii_case("best")
}

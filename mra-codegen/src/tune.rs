//! Tunable parameters: the named space a schedule declares, a [`Config`] that picks a value
//! for each, and the constraints between them.
//!
//! A parameter is any [`Value::Tunable`] in any step, whatever primitive it belongs to (threads,
//! pads, unroll factors, launch bounds, and the primitives later issues add): the steps are
//! walked through their serde form, so a new step that holds a `Value` is tunable without a
//! change here. `Schedule + Config` gives a schedule whose defaults are the chosen values
//! ([`Schedule::with_config`]); planning it ([`Schedule::plan`]) gives the concrete kernel.

use crate::arch::Arch;
use crate::dtype::DType;
use crate::ir::{DefaultText, DefaultWhen, Schedule, Step, Value};
use crate::request::Request;
use crate::tuned_defaults::{self, Regime};
use serde::Serialize;

pub use crate::config::{describe, parse_config, Config};
pub use crate::expr::{BinOp, CmpOp, Constraint, Expr};


/// One tunable parameter of a schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Param {
    pub name: String,
    pub choices: Vec<u32>,
    /// The default where no `default_when` condition holds.
    pub default: u32,
    /// `if COND { N }` branches of the default, first match wins (see [`Schedule::at`]);
    /// empty for a plain default.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub default_when: Vec<DefaultWhen>,
    /// The step that declares it, as written (`cache_read(A, shared, pad = tune(..))`).
    pub step: String,
    /// Its line in the schedule's file.
    pub line: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("level {level} has no tunable parameter `{name}`; it has: {have}")]
    Unknown { level: String, name: String, have: String },
    #[error("level {level}: {name}={value} is not among the declared choices {choices:?}")]
    NotAChoice { level: String, name: String, value: u32, choices: Vec<u32> },
}

impl Schedule {
    /// The tunable parameters, in the order their steps are written.
    pub fn params(&self) -> Vec<Param> {
        let mut out = Vec::new();
        for s in &self.steps {
            if let Some(Value::Tunable { name, choices, default, default_when, .. }) = s.item.value() {
                out.push(Param { name: name.clone(), choices: choices.clone(), default: *default, default_when: default_when.clone(), step: s.item.to_string(), line: s.line });
            }
        }
        out
    }

    /// The tunable values of the steps, in order: what [`Schedule::params`] gives without the
    /// printed step, for the paths that run once per candidate of a tuning space.
    fn tunables(&self) -> impl Iterator<Item = (&str, &[u32], u32, &[DefaultWhen])> {
        self.steps.iter().filter_map(|s| match s.item.value() {
            Some(Value::Tunable { name, choices, default, default_when, .. }) => Some((name.as_str(), choices.as_slice(), *default, default_when.as_slice())),
            _ => None,
        })
    }

    /// Every parameter at its default: the schedule's own, or the request's where [`Schedule::at`]
    /// has resolved them.
    pub fn defaults(&self) -> Config {
        self.tunables().map(|(name, _, default, _)| (name.to_string(), default)).collect()
    }

    /// This schedule with `cfg`'s values as the defaults of its parameters (the others keep
    /// theirs): planning the result plans the configuration. Names and values are checked.
    pub fn with_config(&self, cfg: &Config) -> Result<Schedule, ConfigError> {
        for (name, &value) in cfg {
            let Some((_, choices, _, _)) = self.tunables().find(|(n, ..)| n == name) else {
                let have = self.tunables().map(|(n, ..)| n).collect::<Vec<_>>();
                return Err(ConfigError::Unknown {
                    level: self.name.clone(),
                    name: name.clone(),
                    have: if have.is_empty() { "none".into() } else { have.join(", ") },
                });
            };
            if !choices.contains(&value) {
                return Err(ConfigError::NotAChoice { level: self.name.clone(), name: name.clone(), value, choices: choices.to_vec() });
            }
        }
        Ok(self.rewrite_defaults(|name, default, default_when, chosen| {
            let Some(&value) = cfg.get(name) else { return };
            // A chosen value replaces the whole default, conditions and tuned data included.
            *default = value;
            default_when.clear();
            *chosen = true;
        }))
    }

    /// This schedule with `f` applied to every tunable parameter (its name, default,
    /// conditional default and whether it was chosen); only the default may change.
    fn rewrite_defaults(&self, mut f: impl FnMut(&str, &mut u32, &mut Vec<DefaultWhen>, &mut bool)) -> Schedule {
        let mut out = self.clone();
        for s in &mut out.steps {
            if let Some(Value::Tunable { name, default, default_when, chosen, .. }) = s.item.value_mut() {
                f(name, default, default_when, chosen);
            }
        }
        out
    }

    /// Whether some parameter's value for a request is still open: neither chosen by a
    /// configuration nor resolved by [`Schedule::at`].
    pub fn has_open_defaults(&self) -> bool {
        self.steps.iter().any(|s| matches!(s.item.value(), Some(Value::Tunable { chosen: false, .. })))
    }

    /// This schedule with each parameter's default resolved for `req`: a value chosen by a
    /// configuration ([`Schedule::with_config`]) stays; else the arch's tuned defaults
    /// ([`crate::tuned_defaults`], timed in the seed harness where there are both) give it;
    /// else the schedule's rule (`default = if wave == 64 { 0 } else { 1 }`: the first
    /// condition that holds; one that cannot be evaluated counts as false), else its plain
    /// default. Planning and code generation see only resolved defaults.
    pub fn at(&self, req: Request) -> Schedule {
        self.at_in(req, Regime::Harness)
    }

    /// [`Schedule::at`] with the tuned defaults of `regime` preferred.
    pub fn at_in(&self, req: Request, regime: Regime) -> Schedule {
        self.at_for(req, regime, "")
    }

    /// The kernel of `op` at `req` with the tuned values of `regime` (and the operation's own,
    /// [`Schedule::at_for`]); where the operation does not lower those (a tuned stack(N)), the
    /// seed harness's values, else the schedule's own.
    pub fn generate_tuned(&self, req: Request, op: crate::op::Operation, regime: Regime) -> Result<crate::Kernel, crate::PlanError> {
        crate::generate_op(&self.tuned_for_op(req, op, regime)?.0, req, op)
    }

    /// The plan of [`Schedule::generate_tuned`]'s kernel: whether the level computes `op` at
    /// `req` with the values it would be generated with (a rank sum's K = 22..24 on sm_90 only
    /// with its own tuned `restage_a`).
    pub fn plan_tuned(&self, req: Request, op: crate::op::Operation, regime: Regime) -> Result<crate::Plan, crate::PlanError> {
        self.tuned_for_op(req, op, regime).map(|(_, plan)| plan)
    }

    /// The first of this schedule with `regime`'s tuned values (and `op`'s own), with the seed
    /// harness's, and as written that lowers `op` at `req`, with its plan; else the last one's
    /// refusal (the schedule's own words).
    fn tuned_for_op(&self, req: Request, op: crate::op::Operation, regime: Regime) -> Result<(Schedule, crate::Plan), crate::PlanError> {
        let mut refusal = None;
        for s in [self.at_for(req, regime, op.tuned_as()), self.at(req), self.clone()] {
            match s.plan_op(req, op) {
                Ok(plan) => return Ok((s, plan)),
                Err(e) => refusal = Some(e),
            }
        }
        Err(refusal.expect("three schedules were tried"))
    }

    /// [`Schedule::at_in`] with the values tuned for the operation `op` (`ranksum`), else the
    /// transform's: a rank sum holds its output tiles across the terms, so the transform's
    /// block size is no guide to its own.
    pub fn at_for(&self, req: Request, regime: Regime, op: &str) -> Schedule {
        if !self.has_open_defaults() {
            return self.clone();
        }
        // An operation's own values are timed where it is used, in one launch (compute-bound,
        // so either regime's harness would choose alike).
        let own = if op.is_empty() { None } else { tuned_defaults::lookup_op(&self.name, req, Regime::Api, op) };
        let tuned = own.or_else(|| tuned_defaults::lookup(&self.name, req, regime)).map(|e| &e.config);
        let env = |n: &str| builtin(n, req.k, req.arch, req.dtype);
        self.rewrite_defaults(|name, default, default_when, chosen| {
            if *chosen {
                return;
            }
            if let Some(&v) = tuned.and_then(|c| c.get(name)) {
                *default = v;
            } else if let Some(b) = default_when.iter().find(|b| b.when.holds(&env) == Some(true)) {
                *default = b.value;
            }
            default_when.clear();
            *chosen = true;
        })
    }

    /// Every combination of the declared choices (the defaults first), before any constraint
    /// or arch check: those are [`Schedule::plan`]'s job.
    pub fn space(&self) -> Vec<Config> {
        let params = self.params();
        let mut all = vec![Config::new()];
        for p in &params {
            // The default first, so that the first configuration is the defaults.
            let mut choices = vec![p.default];
            choices.extend(p.choices.iter().copied().filter(|&c| c != p.default));
            all = all
                .into_iter()
                .flat_map(|cfg| {
                    choices.iter().map(move |&c| {
                        let mut next = cfg.clone();
                        next.insert(p.name.clone(), c);
                        next
                    })
                })
                .collect();
        }
        all
    }

    /// The constraints that `plan` checks, with the values they see for `arch` and `dtype`
    /// at order `k`: `Err` names the first one broken.
    pub fn check_constraints(&self, k: u32, arch: &'static Arch, dtype: DType) -> Result<(), String> {
        let constraints: Vec<&Constraint> = self
            .iter_steps()
            .filter_map(|s| match s {
                Step::Constraint(c) => Some(c),
                _ => None,
            })
            .collect();
        if constraints.is_empty() {
            return Ok(());
        }
        let params = self.at(Request { k, arch, dtype }).defaults();
        let env = |n: &str| -> Option<i64> { builtin(n, k, arch, dtype).or_else(|| params.get(n).map(|&v| v as i64)) };
        for c in constraints {
            match c.holds(&env) {
                Some(true) => {}
                Some(false) => return Err(format!("constraint({}) does not hold for {} at K={k} on {} ({dtype})", c.text, describe(&params), arch.name)),
                None => return Err(format!("constraint({}) cannot be evaluated for {} at K={k} (overflow, division by zero or an unknown name)", c.text, describe(&params))),
            }
        }
        Ok(())
    }
}

/// The value of a built-in name of constraints and default conditions at order `k` on `arch`
/// for `dtype`; `None` for any other name (a parameter).
pub fn builtin(name: &str, k: u32, arch: &Arch, dtype: DType) -> Option<i64> {
    Some(match name {
        "K" => k as i64,
        "bytes" => dtype.bytes() as i64,
        "wave" => arch.wave_size as i64,
        "shared" => arch.shared_bytes_max as i64,
        "max_threads" => arch.max_threads_per_block as i64,
        "registers" => arch.max_registers_per_thread as i64,
        "fuse_k_max" => crate::instr::fuse_k_max(arch, dtype) as i64,
        "bulk_copies" => arch.bulk_async_copy as i64,
        "row_pairs" => crate::instr::row_pairs(arch, dtype) as i64,
        _ => return None,
    })
}

/// How `tune --list` shows a parameter's default: `128` or `if K <= 16 { 128 } else { 384 }`.
pub fn default_text(p: &Param) -> String {
    DefaultText(p.default, &p.default_when).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{arch, levels};

    /// `row_pairs`: the PTX ISA lays m16n8k4.f64's A rows and D rows of a lane at groupID and
    /// groupID + 8 (a pair for `pair_rows(1)` to make adjacent); m8n8k4.f64 (sm_80) has one row
    /// per lane, and AMD's MFMA/WMMA f64 fragments are not m16n8 (`../shared/reference`).
    #[test]
    fn row_pairs_is_one_where_the_instruction_has_rows_8_apart() {
        let at = |a: &str, d: DType| builtin("row_pairs", 12, arch::find(a).unwrap(), d);
        assert_eq!(at("sm_90", DType::F64), Some(1));
        assert_eq!(at("sm_80", DType::F64), Some(0));
        for amd in ["gfx90a", "gfx942", "gfx1100"] {
            assert_eq!(at(amd, DType::F64), Some(0), "{amd}");
        }
    }

    mra_dsl::schedule! {
        /// A synthetic level with three parameters and a constraint.
        level synth "synth" {
            threads(tune([64, 128, 256], default = 128));
            launch_bounds(min_blocks = tune([1, 2], default = 1));
            bind(threads, rows);
            cache_read(B, shared, pad = tune([0, 1], default = 1));
            register_tile(cols);
            unroll(k, by = 2);
            constraint(threads * min_blocks <= 256);
        }
    }

    #[test]
    fn params_are_found_in_any_step() {
        let s = synth();
        let names: Vec<(String, Vec<u32>, u32)> = s.params().into_iter().map(|p| (p.name, p.choices, p.default)).collect();
        assert_eq!(
            names,
            [("threads".to_string(), vec![64, 128, 256], 128), ("min_blocks".into(), vec![1, 2], 1), ("pad_b".into(), vec![0, 1], 1)]
        );
        assert_eq!(s.space().len(), 3 * 2 * 2);
        assert_eq!(s.space()[0], s.defaults(), "the defaults come first");
    }

    #[test]
    fn with_config_changes_only_the_defaults_and_checks_names_and_choices() {
        let s = synth();
        let cfg = parse_config("threads=256,pad_b=0").unwrap();
        let t = s.with_config(&cfg).unwrap();
        assert_eq!(t.defaults(), parse_config("threads=256 min_blocks=1 pad_b=0").unwrap());
        assert_eq!(t.params().iter().map(|p| p.choices.clone()).collect::<Vec<_>>(), s.params().iter().map(|p| p.choices.clone()).collect::<Vec<_>>());
        let plan = t.plan(crate::Request { k: 8, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap();
        assert_eq!(plan.threads, 256);
        let crate::plan::Body::Transform(tp) = plan.body else { panic!() };
        assert_eq!(tp.b.pad, 0);
        assert!(matches!(s.with_config(&parse_config("warps=2").unwrap()), Err(ConfigError::Unknown { .. })));
        assert!(matches!(s.with_config(&parse_config("threads=96").unwrap()), Err(ConfigError::NotAChoice { .. })));
    }

    #[test]
    fn constraints_filter_the_space_at_plan_time() {
        let s = synth();
        let req = crate::Request { k: 8, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 };
        let ok: Vec<Config> = s.space().into_iter().filter(|c| s.with_config(c).unwrap().plan(req).is_ok()).collect();
        // threads * min_blocks <= 256, counted by hand: (64,1) (64,2) (128,1) (128,2) (256,1), times two pads.
        assert_eq!(ok.len(), 10, "{ok:?}");
        assert!(ok.iter().all(|c| c["threads"] * c["min_blocks"] <= 256));
        let bad = s.with_config(&parse_config("threads=256,min_blocks=2").unwrap()).unwrap().plan(req).unwrap_err();
        assert!(bad.to_string().contains("constraint(threads * min_blocks <= 256) does not hold"), "{bad}");
    }

    #[test]
    fn expressions_follow_arithmetic_rules() {
        let e = Expr::Bin(Box::new(Expr::Name("K".into())), BinOp::Pow, Box::new(Expr::Int(3)));
        assert_eq!(e.eval(&|n| (n == "K").then_some(5)), Some(125));
        let div0 = Expr::Bin(Box::new(Expr::Int(1)), BinOp::Div, Box::new(Expr::Int(0)));
        assert_eq!(div0.eval(&|_| None), None);
    }

    #[test]
    fn every_level_prints_and_its_defaults_plan_as_before() {
        let sm90 = arch::find("sm_90").unwrap();
        for l in levels::all() {
            let d = l.with_config(&l.defaults()).unwrap();
            assert_eq!(d.defaults(), l.defaults(), "{}", l.name);
            assert!(!d.has_open_defaults());
            for k in [1, 8, 16, 17, 32] {
                let r = l.at(crate::Request { k, arch: sm90, dtype: DType::F64 });
                assert!(!r.has_open_defaults());
                assert_eq!(r.with_config(&r.defaults()).unwrap(), r, "{} K={k}", l.name);
            }
        }
    }

    mra_dsl::schedule! {
        /// Defaults that depend on the request.
        level cond "cond" {
            threads(tune([64, 128, 256], default = if K <= 8 { 64 } else if K * bytes >= 128 { 256 } else { 128 }));
            bind(threads, rows);
            cache_read(B, shared, pad = tune([0, 1], default = if wave == 64 { 0 } else { 1 }));
            register_tile(cols);
        }
    }

    #[test]
    fn conditional_defaults_take_the_first_branch_that_holds() {
        let s = cond();
        assert!(s.has_open_defaults());
        let (sm90, gfx90a) = (arch::find("sm_90").unwrap(), arch::find("gfx90a").unwrap());
        // Expected by hand from the conditions written above.
        for (k, dtype, arch, threads, pad) in [
            (8, DType::F64, sm90, 64, 1),
            (9, DType::F64, sm90, 128, 1),
            (15, DType::F64, sm90, 128, 1),
            (16, DType::F64, sm90, 256, 1),
            (16, DType::F32, sm90, 128, 1),
            (32, DType::F32, gfx90a, 256, 0),
        ] {
            let r = s.at(crate::Request { k, arch, dtype });
            assert_eq!(r.defaults(), Config::from([("threads".into(), threads), ("pad_b".into(), pad)]), "K={k} {dtype} {}", arch.name);
            // Planning and code generation see the same values without resolving first.
            let req = crate::Request { k, arch, dtype };
            assert_eq!(s.plan(req).unwrap().threads, threads);
            let src = crate::generate(&s, req).unwrap().source;
            assert!(src.contains(&format!("constexpr int THREADS = {threads};")), "K={k}");
            assert!(src.contains(&format!("pad_b={pad} threads={threads}")), "K={k}");
        }
        // A chosen value replaces the whole default, conditions included.
        let t = s.with_config(&parse_config("threads=128").unwrap()).unwrap();
        assert_eq!(t.at(crate::Request { k: 4, arch: sm90, dtype: DType::F64 }).defaults()["threads"], 128);
        assert_eq!(t.plan(crate::Request { k: 4, arch: sm90, dtype: DType::F64 }).unwrap().threads, 128);
        // Printed as written; the IR round-trips through serde.
        let printed = s.to_string();
        assert!(printed.contains("threads(tune([64, 128, 256], default = if K <= 8 { 64 } else if K * bytes >= 128 { 256 } else { 128 }))"), "{printed}");
        assert!(printed.contains("pad = tune([0, 1], default = if wave == 64 { 0 } else { 1 })"), "{printed}");
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Schedule>(&json).unwrap(), s);
        // A schedule without conditions serializes as before (no empty `default_when`).
        assert!(!serde_json::to_string(&synth()).unwrap().contains("default_when"));
        let p = &s.params()[0];
        assert_eq!(default_text(p), "if K <= 8 { 64 } else if K * bytes >= 128 { 256 } else { 128 }");
    }
}

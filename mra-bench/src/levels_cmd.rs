//! `mra-bench levels`: one line per level (what it is, where it runs, its K range);
//! `mra-bench levels NAME`: the level's schedule, its parameters with their defaults and the
//! arch's tuned defaults, and a table of arch × dtype → K range (or the short reason it
//! cannot run).

use crate::cli::LevelsArgs;
use crate::select::{self, CmdResult};
use mra_codegen::tuned_defaults::{self, Regime};
use mra_codegen::{levels, tune, Arch, DType, PlanError, Request, Schedule};
use serde::Serialize;

#[derive(Serialize)]
struct Support {
    arch: &'static str,
    dtype: DType,
    /// `1-32`, `1-24`, or `none`.
    ks: String,
    /// Why it cannot run at any K (absent when some K run).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// The shipped tuned values of one level for one arch and dtype at some K.
#[derive(Serialize)]
struct Tuned {
    arch: String,
    dtype: String,
    k: Vec<u32>,
    config: tune::Config,
    regime: Regime,
}

#[derive(Serialize)]
struct LevelInfo {
    number: Option<u32>,
    name: String,
    summary: String,
    schedule: Vec<String>,
    support: Vec<Support>,
    tolerance: Vec<(DType, f64)>,
    tuned_defaults: Vec<Tuned>,
}

pub fn run(args: &LevelsArgs) -> CmdResult {
    let archs: Vec<&'static Arch> = match &args.arch {
        Some(a) => vec![select::arch(a)?],
        None => levels::archs().iter().collect(),
    };
    let chosen = match &args.level {
        Some(sel) => vec![select::level(sel)?],
        None => levels::all(),
    };
    let infos: Vec<LevelInfo> = chosen
        .into_iter()
        .map(|s| {
            let support = archs
                .iter()
                .flat_map(|&a| DType::ALL.iter().map(move |&d| (a, d)))
                .map(|(a, d)| {
                    let ks = levels::supported_ks(&s, a, d);
                    let reason = if ks.is_empty() { Some(short_reason(&s, a, d)) } else { None };
                    Support { arch: a.name, dtype: d, ks: levels::describe_ks(&ks), reason }
                })
                .collect();
            LevelInfo {
                number: s.number,
                name: s.name.clone(),
                summary: s.summary.clone(),
                schedule: s.iter_steps().map(|st| st.to_string()).collect(),
                support,
                tolerance: DType::ALL.iter().map(|&d| (d, d.tolerance())).collect(),
                tuned_defaults: tuned_of(&s, &archs),
            }
        })
        .collect();
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&infos)?)?;
        return Ok(0);
    }
    let tolerances = infos[0].tolerance.iter().map(|(d, t)| format!("{d} < {t:e}")).collect::<Vec<_>>().join(", ");
    if let (Some(sel), [l]) = (&args.level, infos.as_slice()) {
        details(&select::level(sel)?, l, &archs)?;
        crate::outln!("K ranges are the K (1..32) each arch and dtype can run; validation passes at max rel error {tolerances}.")?;
        return Ok(0);
    }
    let width = infos.iter().map(|l| l.name.len()).max().unwrap_or(0);
    let wheres: Vec<String> = infos.iter().map(where_it_runs).collect();
    let where_width = wheres.iter().map(|w| w.chars().count()).max().unwrap_or(0);
    for (l, w) in infos.iter().zip(&wheres) {
        let id = l.number.map(|n| format!("L{n}")).unwrap_or_else(|| "-".into());
        crate::outln!("{id:<3} {:<width$}  {w:<where_width$}  {}", l.name, first_sentence(&l.summary))?;
    }
    crate::outln!()?;
    crate::outln!("Where each runs: its K range per arch family (f64 unless named). `mra-bench levels NAME` for a level's")?;
    crate::outln!("schedule, parameters and per-arch table; validation passes at max rel error {tolerances}.")?;
    for a in &archs {
        if args.arch.is_some() || tuned_defaults::for_arch(a.name).is_some() {
            crate::outln!("{}", tuned_defaults::describe_source(a.name))?;
        }
    }
    if args.arch.is_none() {
        let without: Vec<&str> = archs.iter().filter(|a| tuned_defaults::for_arch(a.name).is_none()).map(|a| a.name).collect();
        if !without.is_empty() {
            crate::outln!("no tuned defaults for {}: the schedules' own defaults", without.join(", "))?;
        }
    }
    Ok(0)
}

/// `levels NAME`: the summary, the schedule, the parameters with their defaults, the shipped
/// tuned defaults per arch, and the arch × dtype table.
fn details(s: &Schedule, l: &LevelInfo, archs: &[&'static Arch]) -> CmdResult<()> {
    let id = l.number.map(|n| format!("L{n}")).unwrap_or_else(|| "-".into());
    crate::outln!("{id:<4} {}", l.name)?;
    crate::outln!("     {}", l.summary)?;
    crate::outln!("     schedule: {}", l.schedule.join("; "))?;
    let params = s.params();
    if !params.is_empty() {
        crate::outln!("     parameters (default; choices): {}", params.iter().map(|p| format!("{}={} {:?}", p.name, tune::default_text(p), p.choices)).collect::<Vec<_>>().join(", "))?;
    }
    for a in archs {
        let mine: Vec<&Tuned> = l.tuned_defaults.iter().filter(|t| t.arch == a.name).collect();
        match (tuned_defaults::for_arch(a.name), mine.is_empty()) {
            (Some(f), false) => {
                crate::outln!("     tuned defaults for {} ({}):", a.name, f.path())?;
                for t in mine {
                    let ks = levels::describe_ks(&t.k);
                    crate::outln!("       {} K={ks}: {} ({})", t.dtype, tune::describe(&t.config), t.regime)?;
                }
            }
            (Some(_), true) if !params.is_empty() => crate::outln!("     tuned defaults for {}: none for this level (its own defaults)", a.name)?,
            _ => {}
        }
    }
    print_table(l)
}

/// The shipped tuned values of `s` on `archs`.
fn tuned_of(s: &Schedule, archs: &[&'static Arch]) -> Vec<Tuned> {
    archs
        .iter()
        .filter_map(|a| tuned_defaults::for_arch(a.name))
        .flat_map(|f| f.entries.iter().filter(|e| e.level == s.name).map(|e| Tuned { arch: f.arch.clone(), dtype: e.dtype.clone(), k: e.k.clone(), config: e.config.clone(), regime: e.regime }))
        .collect()
}

/// The summary up to its first colon or full stop, at most 60 characters.
fn first_sentence(summary: &str) -> String {
    let end = [": ", ". "].iter().filter_map(|p| summary.find(p)).min().unwrap_or(summary.len());
    let first = summary[..end].trim_end_matches('.');
    if first.chars().count() <= 60 {
        return first.to_string();
    }
    format!("{}…", first.chars().take(59).collect::<String>())
}

/// `NVIDIA 1-32, CDNA 1-15`: per arch family the K range of the first dtype that runs there
/// (named unless f64); archs of a family whose ranges differ are named with theirs.
fn where_it_runs(l: &LevelInfo) -> String {
    let mut families: Vec<&str> = mra_codegen::arch::ARCHS.iter().map(|a| a.family).collect();
    families.dedup();
    let mut parts = Vec::new();
    for family in families {
        let members: Vec<&str> = mra_codegen::arch::ARCHS.iter().filter(|a| a.family == family).map(|a| a.name).collect();
        let runs = |d: DType| -> Vec<(&str, &str)> {
            l.support.iter().filter(|s| s.dtype == d && members.contains(&s.arch) && s.reason.is_none()).map(|s| (s.arch, s.ks.as_str())).collect()
        };
        let Some((dtype, archs)) = DType::ALL.iter().map(|&d| (d, runs(d))).find(|(_, a)| !a.is_empty()) else { continue };
        let listed = l.support.iter().filter(|s| s.dtype == dtype && members.contains(&s.arch)).count();
        let suffix = if dtype == DType::F64 { String::new() } else { format!(" ({dtype})") };
        let mut ranges: Vec<(Vec<&str>, &str)> = Vec::new();
        for (arch, ks) in &archs {
            match ranges.iter_mut().find(|(_, r)| r == ks) {
                Some((a, _)) => a.push(arch),
                None => ranges.push((vec![arch], ks)),
            }
        }
        if ranges.len() == 1 && archs.len() == listed {
            parts.push(format!("{family} {}{suffix}", ranges[0].1));
        } else {
            parts.extend(ranges.iter().map(|(a, r)| format!("{} {r}{suffix}", a.join("/"))));
        }
    }
    if parts.is_empty() { "runs nowhere".into() } else { parts.join(", ") }
}

/// Rows of archs with the same cells are merged: `sm_80 sm_86 sm_89 sm_90 | 1-32 | ...`.
fn print_table(l: &LevelInfo) -> CmdResult<()> {
    let cell = |s: &Support| s.reason.clone().unwrap_or_else(|| s.ks.clone());
    let mut rows: Vec<(Vec<&str>, Vec<String>)> = Vec::new();
    let mut archs: Vec<&str> = l.support.iter().map(|s| s.arch).collect();
    archs.dedup();
    for arch in archs {
        let cells: Vec<String> = DType::ALL.iter().map(|&d| l.support.iter().find(|s| s.arch == arch && s.dtype == d).map(cell).unwrap_or_default()).collect();
        match rows.iter_mut().find(|(_, c)| *c == cells) {
            Some((a, _)) => a.push(arch),
            None => rows.push((vec![arch], cells)),
        }
    }
    let labels: Vec<String> = rows.iter().map(|(a, _)| a.join(" ")).collect();
    let header: Vec<String> = DType::ALL.iter().map(|d| d.to_string()).collect();
    let w0 = labels.iter().map(|s| s.len()).max().unwrap_or(0).max(4);
    let widths: Vec<usize> = (0..header.len()).map(|i| rows.iter().map(|(_, c)| c[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0)).collect();
    let line = |first: &str, cells: &[String]| {
        let mut s = format!("     {first:<w0$}");
        for (c, w) in cells.iter().zip(&widths) {
            s += &format!("  {c:<w$}");
        }
        crate::outln!("{}", s.trim_end())
    };
    line("arch", &header)?;
    for (label, (_, cells)) in labels.iter().zip(&rows) {
        line(label, cells)?;
    }
    Ok(())
}

/// Why `s` runs at no K on `arch` in `dtype`, in a few words (the full sentence is what
/// `--emit-src` or a run prints).
fn short_reason(s: &Schedule, arch: &'static Arch, dtype: DType) -> String {
    let err = (1..=mra_codegen::K_MAX).rev().find_map(|k| s.plan(Request { k, arch, dtype }).err());
    match err {
        Some(PlanError::NoMatrixCore { .. }) => format!("no {dtype} matrix cores"),
        Some(PlanError::DTypeUnsupported { why, .. }) => {
            if why.contains("for AMD RDNA") {
                "AMD only".into()
            } else if why.contains("library") {
                "BLAS: f64/f32 only".into()
            } else if why.contains("thread-mapped") {
                "thread-mapped: f64/f32 only".into()
            } else if why.contains("shadow_mma") {
                "f64 only".into()
            } else {
                why
            }
        }
        Some(PlanError::SharedTooLarge { .. }) => "shared memory too small".into(),
        Some(PlanError::ThreadsNotWaveMultiple { unit, .. }) => format!("threads not whole {unit}s"),
        Some(PlanError::TooManyThreads { .. }) => "too many threads".into(),
        Some(PlanError::ArchUnsupported { why, .. }) if why.contains("cluster") => "NVIDIA sm_90 clusters only".into(),
        Some(PlanError::ArchUnsupported { why, .. }) if why.contains("split_output") => "NVIDIA sm_90 only".into(),
        Some(PlanError::ArchUnsupported { .. }) => "NVIDIA cp.async only".into(),
        Some(PlanError::KUnsupported { .. }) => "no K fits its defaults".into(),
        Some(PlanError::Constraint { .. }) => "its constraints fail for the defaults".into(),
        Some(e @ (PlanError::Malformed { .. } | PlanError::KOutOfRange(_) | PlanError::Operation { .. })) => e.to_string(),
        None => "none".into(),
    }
}

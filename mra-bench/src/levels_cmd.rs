//! `mra-bench levels`: each level's name, schedule primitives, and where it can run: one
//! compact table per level (arch × dtype → K range, or the short reason it cannot run).

use crate::cli::LevelsArgs;
use crate::select::{self, CmdResult};
use mra_codegen::{levels, Arch, DType, PlanError, Request, Schedule};
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

#[derive(Serialize)]
struct LevelInfo {
    number: Option<u32>,
    name: String,
    summary: String,
    schedule: Vec<String>,
    support: Vec<Support>,
    tolerance: Vec<(DType, f64)>,
}

pub fn run(args: &LevelsArgs) -> CmdResult {
    let archs: Vec<&'static Arch> = match &args.arch {
        Some(a) => vec![select::arch(a)?],
        None => levels::archs().iter().collect(),
    };
    let infos: Vec<LevelInfo> = levels::all()
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
            }
        })
        .collect();
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&infos)?)?;
        return Ok(0);
    }
    for l in &infos {
        let id = l.number.map(|n| format!("L{n}")).unwrap_or_else(|| "-".into());
        crate::outln!("{id:<4} {}", l.name)?;
        crate::outln!("     {}", l.summary)?;
        crate::outln!("     schedule: {}", l.schedule.join("; "))?;
        print_table(l)?;
        crate::outln!()?;
    }
    crate::outln!(
        "K ranges are the K (1..32) each arch and dtype can run; validation passes at max rel error {}.",
        infos[0].tolerance.iter().map(|(d, t)| format!("{d} < {t:e}")).collect::<Vec<_>>().join(", ")
    )?;
    Ok(0)
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
        Some(e @ (PlanError::Malformed { .. } | PlanError::KOutOfRange(_))) => e.to_string(),
        None => "none".into(),
    }
}

//! `mra-bench levels`: each level's name, schedule primitives, and where it can run.

use crate::cli::LevelsArgs;
use crate::select::{self, CmdResult};
use mra_codegen::{levels, Arch, DType};
use serde::Serialize;

#[derive(Serialize)]
struct Support {
    arch: &'static str,
    dtype: DType,
    ks: String,
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
                .map(|(a, d)| Support { arch: a.name, dtype: d, ks: levels::describe_ks(&levels::supported_ks(&s, a, d)) })
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
        // Group archs with the same K support per dtype, so the listing stays short.
        for &d in DType::ALL {
            let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
            for s in l.support.iter().filter(|s| s.dtype == d) {
                match groups.iter_mut().find(|(ks, _)| *ks == s.ks) {
                    Some((_, a)) => a.push(s.arch),
                    None => groups.push((s.ks.clone(), vec![s.arch])),
                }
            }
            for (ks, a) in groups {
                crate::outln!("     {d}: K {ks} on {}", a.join(" "))?;
            }
        }
        crate::outln!(
            "     passes at: max rel error {}",
            l.tolerance.iter().map(|(d, t)| format!("{d} < {t:e}")).collect::<Vec<_>>().join(", ")
        )?;
        crate::outln!()?;
    }
    Ok(0)
}

//! `mra-bench report SWEEP_JSON...`: each sweep as a Markdown table, per K the fastest transform
//! level, its time and its ratios to the copy and to the bound of the same run. The README's
//! performance tables are this command's output on `bench/results/*.json` (a test holds them
//! equal), so the numbers a user reads are the committed proof's.

use crate::cli::ReportArgs;
use crate::plot::{self, SweepData};
use crate::select::CmdResult;

pub fn run(args: &ReportArgs) -> CmdResult {
    let mut text = String::new();
    for (i, path) in args.inputs.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text += &table(&plot::load(path)?).map_err(|e| format!("`{path}`: {e}"))?;
    }
    crate::out!("{text}")?;
    Ok(0)
}

/// One sweep's heading line and table.
pub fn table(data: &SweepData) -> Result<String, String> {
    let time = |level: &str, k: u32| data.rows.iter().find(|r| r.level == level && r.k == k).and_then(|r| r.us_per_task);
    let mut ks: Vec<u32> = data.rows.iter().map(|r| r.k).collect();
    ks.sort_unstable();
    ks.dedup();
    let harness = match (data.launch.as_deref(), data.max_blocks, data.streams) {
        (Some("api"), m, _) => format!("API regime: one launch per repetition over 2 GiB of input, -M {}, floor a device-to-device copy", m.map_or("auto".into(), |m| m.to_string())),
        (_, Some(m), Some(s)) => format!("seed harness: -N {} -M {m} -s {s}", data.nfuncs),
        _ => format!("-N {}", data.nfuncs),
    };
    let api = data.launch.as_deref() == Some("api");
    let data_kind = if data.stream_data.as_deref() == Some("private") && !api { ", private stream data" } else { "" };
    let date = plot::date_of(data.date_unix).map(|d| format!(", {d}")).unwrap_or_default();
    let mut out = format!("**{} ({})**, {harness}{data_kind}, {}, commit {}{date}\n\n", data.device, data.arch, data.dtype, data.commit);
    out += "| K | fastest level | µs/task | copy µs | fastest / copy | fastest / bound |\n|---:|---|---:|---:|---:|---:|\n";
    let mut rows = 0;
    for k in ks {
        let fastest = data
            .rows
            .iter()
            .filter(|r| r.k == k && r.role.as_deref().is_none_or(|role| role == "transform") && r.level != "copy")
            .filter_map(|r| r.us_per_task.map(|us| (r, us)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let (Some((best, us)), Some(copy)) = (fastest, time("copy", k)) else { continue };
        let bound = time("bound", k).map_or("–".to_string(), |b| format!("{:.2}", us / b));
        out += &format!("| {k} | {} | {us:.1} | {copy:.1} | {:.2} | {bound} |\n", best.level, us / copy);
        rows += 1;
    }
    if rows == 0 {
        return Err("no K with both a timed transform level and the copy floor".into());
    }
    Ok(out)
}

//! The sweep's results as they leave it: its rows and report, the JSON and CSV files (rewritten
//! after every level), the table, and the data `plot` draws.

use crate::outfile::Target;
use mra_codegen::ir::Role;
use mra_runtime::clocks::ClockStats;
use mra_runtime::harness::{self, StreamData, WarmupDone};
use mra_runtime::residency::ClusterResidency;
use serde::Serialize;

/// One level at one K.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) level: String,
    #[serde(rename = "K")]
    pub(crate) k: u32,
    /// What the level measures: `floor` (copy), `bound` (the copy and the fewest matrix
    /// instructions), or `transform`.
    pub(crate) role: Role,
    /// Median µs per task; None when the level did not run (see `note`).
    pub(crate) us_per_task: Option<f64>,
    pub(crate) useful_gflops: Option<f64>,
    /// Bytes a task must move (read A, write C) over its time.
    pub(crate) effective_gbps: Option<f64>,
    /// copy µs/task (same process, same K) / this level's µs/task.
    pub(crate) fraction_of_floor: Option<f64>,
    /// Useful flop rate over the measured FP64 GEMM peak.
    pub(crate) fraction_of_fp64_peak: Option<f64>,
    pub(crate) max_rel_err: Option<f64>,
    pub(crate) tasks: usize,
    /// Tensors per task (the API regime's batch depends on K).
    pub(crate) nfuncs: usize,
    /// Blocks per launch: min(N, M), or fewer for a `persistent(1)` level (what the GPU
    /// holds at once); None when the level did not run.
    pub(crate) nblocks: Option<usize>,
    pub(crate) best: bool,
    pub(crate) note: String,
    /// The SM clock while this level was timed (None where nothing could read it).
    pub(crate) sm_clock: Option<ClockStats>,
    /// What the untimed repetitions before the timed ones did (None where it did not run).
    pub(crate) warmup: Option<WarmupDone>,
    /// Timed repetitions whose submission took ≥ 90% of their device time: the GPU waited for
    /// the host's launches (0 where it did not run).
    pub(crate) host_bound_reps: usize,
    /// A cluster level: the clusters the GPU holds at once against its block slots (None:
    /// not a cluster level, or the driver cannot tell).
    pub(crate) clusters: Option<ClusterResidency>,
}

impl Row {
    /// `level` at `k` before it is measured: nothing timed, no note.
    pub(crate) fn unmeasured(level: &str, k: u32, role: Role, nfuncs: usize) -> Row {
        Row {
            level: level.into(),
            k,
            role,
            us_per_task: None,
            useful_gflops: None,
            effective_gbps: None,
            fraction_of_floor: None,
            fraction_of_fp64_peak: None,
            max_rel_err: None,
            tasks: 0,
            nfuncs,
            nblocks: None,
            best: false,
            note: String::new(),
            sm_clock: None,
            warmup: None,
            host_bound_reps: 0,
            clusters: None,
        }
    }
}

#[derive(Clone, Serialize)]
pub(crate) struct Report<'a> {
    pub(crate) device: String,
    pub(crate) arch: &'static str,
    pub(crate) commit: &'static str,
    pub(crate) date_unix: u64,
    /// `harness` (the seed's: tasks over streams) or `api` (one launch over a batch far larger
    /// than L2; the `copy` row is then a device-to-device copy of the same bytes).
    pub(crate) launch: &'static str,
    /// The seed's N (api: 0, each row says its own).
    pub(crate) nfuncs: usize,
    /// -M (None: `auto`, what the GPU holds of each kernel at once).
    pub(crate) max_blocks: Option<usize>,
    pub(crate) streams: usize,
    pub(crate) reps: usize,
    pub(crate) dtype: String,
    pub(crate) fp64_gemm_peak_tflops: Option<f64>,
    /// How `sm_clock` was read, or why it was not.
    pub(crate) sm_clock_source: String,
    /// The board's enforced power limit (NVML), where it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) power_limit_w: Option<f64>,
    /// `--warmup`: `200 ms`, `until the SM clock settles`.
    pub(crate) warmup: String,
    /// `--stream-data`: `shared` (the seed's harness) or `private` (an A and a C per stream).
    pub(crate) stream_data: StreamData,
    /// False while the sweep runs: the --json file is rewritten after every row (see
    /// [`Progress`]), so a file left by an interrupted sweep says it holds part of it.
    pub(crate) complete: bool,
    pub(crate) rows: &'a [Row],
}

/// The files `--json`, `--csv` and `--plot` asked for, already checked.
pub(crate) struct Targets {
    pub(crate) json: Option<Target>,
    pub(crate) csv: Option<Target>,
    /// `--plot`: an .svg or .png path, checked like the others.
    pub(crate) plot: Option<std::path::PathBuf>,
}

impl Targets {
    /// Two results into one place would leave one of them lost or both garbled: refused before
    /// measuring. Standard output takes at most one; two flags naming one file (under any
    /// names: `outfile::same_file`) are refused.
    pub(crate) fn check_distinct(&self) -> Result<(), String> {
        if let (Some(Target::Stdout), Some(Target::Stdout)) = (&self.json, &self.csv) {
            return Err("--json - and --csv -: both would go to standard output, mixed; write one of them to a file".into());
        }
        let file = |t: &Option<Target>| match t {
            Some(Target::File { path, .. }) => Some(path.clone()),
            _ => None,
        };
        let named = [("--json", file(&self.json)), ("--csv", file(&self.csv)), ("--plot", self.plot.clone())];
        let named: Vec<(&str, std::path::PathBuf)> = named.into_iter().filter_map(|(f, p)| p.map(|p| (f, p))).collect();
        for (i, (fa, a)) in named.iter().enumerate() {
            for (fb, b) in &named[i + 1..] {
                if crate::outfile::same_file(a, b) {
                    return Err(format!("{fa} {} and {fb} {} are the same file: one would overwrite the other; give each its own path", a.display(), b.display()));
                }
            }
        }
        Ok(())
    }
}

impl Report<'static> {
    /// This report's fields (its rows none: a head) with `rows`, written now.
    pub(crate) fn with<'r>(&self, rows: &'r [Row], complete: bool) -> Report<'r> {
        let date_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        Report { rows, complete, date_unix, ..self.clone() }
    }
}

/// The --json text of a report.
pub(crate) fn json_text(report: &Report) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(report)? + "\n")
}

/// The --csv text of the rows: a header, then one line per row.
pub(crate) fn csv_text(rows: &[Row]) -> String {
    let mut csv = String::from("level,K,us_per_task,useful_gflops,effective_gbps,fraction_of_floor,fraction_of_fp64_peak,max_rel_err,tasks,best,note,sm_mhz_min,sm_mhz_median,sm_clock_reasons,power_w_median\n");
    let f = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
    for r in rows {
        let clock = |g: fn(&ClockStats) -> String| r.sm_clock.as_ref().map(g).unwrap_or_default();
        csv += &format!(
            "{},{},{},{},{},{},{},{},{},{},\"{}\",{},{},\"{}\",{}\n",
            r.level, r.k, f(r.us_per_task), f(r.useful_gflops), f(r.effective_gbps), f(r.fraction_of_floor),
            f(r.fraction_of_fp64_peak), r.max_rel_err.map(|x| format!("{x:.3e}")).unwrap_or_default(), r.tasks, r.best,
            r.note.replace('"', "'"),
            clock(|c| c.sm_mhz_min.to_string()), clock(|c| c.sm_mhz_median.to_string()), clock(|c| c.reasons.join("; ")),
            clock(|c| c.power_w_median.map(|w| format!("{w:.1}")).unwrap_or_default()),
        );
    }
    csv
}

/// The --json and --csv files while the sweep runs: each rewritten after every row (atomically,
/// by `Target::write`: a reader, or an interrupt, finds the old file or the new one, never half
/// of one), so that an interrupted sweep keeps what it measured, in files that parse (the JSON
/// says `"complete": false`). Standard output (`-`) gets its text once, at the end. A file that
/// cannot be written costs one warning; the last word is the final write's.
pub(crate) struct Progress<'a> {
    pub(crate) targets: &'a Targets,
    pub(crate) warned: bool,
}

impl<'a> Progress<'a> {
    pub(crate) fn new(targets: &'a Targets) -> Progress<'a> {
        Progress { targets, warned: false }
    }

    pub(crate) fn save(&mut self, report: &Report) {
        let mut errors = Vec::new();
        if let Some(t @ Target::File { .. }) = &self.targets.json {
            if let Err(e) = json_text(report).map_err(|e| e.to_string()).and_then(|text| t.write(&text)) {
                errors.push(e);
            }
        }
        if let Some(t @ Target::File { .. }) = &self.targets.csv {
            if let Err(e) = t.write(&csv_text(report.rows)) {
                errors.push(e);
            }
        }
        // A comment line, not a second error line: the final write's error is the one that counts.
        if !errors.is_empty() && !self.warned {
            self.warned = true;
            eprintln!("# {} (the sweep goes on, and writes it again after each level)", errors.join("; "));
        }
    }
}

/// Marks the fastest transform level at `k` (not the copy floor, not the bound).
pub(crate) fn mark_fastest(rows: &mut [Row], k: u32) {
    if let Some(best) = rows
        .iter_mut()
        .filter(|r| r.k == k && r.role == Role::Transform && r.us_per_task.is_some())
        .min_by(|a, b| a.us_per_task.partial_cmp(&b.us_per_task).unwrap())
    {
        best.best = true;
    }
}

/// The table; `peak`: the FP64 GEMM peak and the BLAS that measured it.
pub(crate) fn table(rows: &[Row], peak: Option<(f64, &str)>, stream_data: StreamData, power_limit_w: Option<f64>) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "{:<14} {:>3} {:>12} {:>13} {:>10} {:>9} {:>9} {:>10} {:>5}  note", "level", "K", "us/task", "useful Gflop/s", "GB/s", "of floor", "of peak", "SM MHz", "W");
    let mut last_k = None;
    for r in rows {
        if last_k.is_some_and(|k| k != r.k) {
            out.push('\n');
        }
        last_k = Some(r.k);
        let mark = if r.best { " *" } else { "" };
        match r.us_per_task {
            Some(us) => writeln!(
                out,
                "{:<14} {:>3} {:>12.1} {:>13.0} {:>10.0} {:>9.3} {:>9} {:>10} {:>5}{mark}",
                r.level,
                r.k,
                us,
                r.useful_gflops.unwrap_or(0.0),
                r.effective_gbps.unwrap_or(0.0),
                r.fraction_of_floor.unwrap_or(f64::NAN),
                r.fraction_of_fp64_peak.map(|f| format!("{f:.3}")).unwrap_or_else(|| "-".into()),
                r.sm_clock.as_ref().map(clock_cell).unwrap_or_else(|| "-".into()),
                r.sm_clock.as_ref().and_then(|c| c.power_w_median).map(|w| format!("{w:.0}")).unwrap_or_else(|| "-".into()),
            ),
            None => writeln!(out, "{:<14} {:>3} {:>12}  {}", r.level, r.k, "-", r.note),
        }
        .expect("writing to a String");
    }
    if let Some((p, blas)) = peak {
        let _ = writeln!(out, "\n* fastest at that K. Floor: copy level, same process. FP64 GEMM peak: {p:.1} TFLOP/s ({blas}).");
    }
    if rows.iter().any(|r| r.sm_clock.is_some()) {
        let _ = writeln!(out, "SM MHz: the SM clock while the level was timed, median (lowest/median where it moved).");
    }
    if rows.iter().any(|r| r.sm_clock.as_ref().is_some_and(|c| c.power_w_median.is_some())) {
        let _ = writeln!(out, "W: the board power while the level was timed, median of NVML's instantaneous readings; at the board's power limit a level's time is its energy per task over that limit.");
    }
    // A lowered clock slows compute-heavy levels more than the copy: name where it happened.
    let lowered: Vec<String> = rows
        .iter()
        .filter_map(|r| r.sm_clock.as_ref().filter(|c| !c.reasons.is_empty()).map(|c| format!("{} K={} ({})", r.level, r.k, c.describe())))
        .collect();
    if !lowered.is_empty() {
        let _ = writeln!(out, "SM clock lowered by the driver while timing: {}.", lowered.join(", "));
    }
    // Whether the levels were warmed up with `--warmup settle` (and the clock read).
    let settled = rows.iter().any(|r| r.warmup.is_some_and(|w| w.settled.is_some()));
    // Power drawn above the board's limit: a first-second rate the level cannot keep.
    let above: Vec<String> = rows
        .iter()
        .filter_map(|r| r.sm_clock.as_ref().and_then(|c| mra_runtime::clocks::above_limit(c, power_limit_w)).map(|w| format!("{} K={} ({w:.0} W)", r.level, r.k)))
        .collect();
    if let (false, Some(limit)) = (above.is_empty(), power_limit_w) {
        let _ = writeln!(out, "Above the board's {limit:.0} W power limit while timed: {}; {}.", above.join(", "), mra_runtime::clocks::above_limit_why(settled));
    }
    // The bound per K: how far the copy's traffic plus the fewest matrix instructions is
    // from the copy, and the fastest level from it.
    let bounds: Vec<String> = rows
        .iter()
        .filter(|b| b.role == Role::Bound)
        .filter_map(|b| {
            let (us, floor) = (b.us_per_task?, b.fraction_of_floor?);
            // Where the host's launches bounded the copy or the bound, the ratio is partly the host's.
            let host = rows.iter().any(|r| r.k == b.k && r.role != Role::Transform && r.host_bound_reps > 0);
            let host = if host { " (host-bound repetitions: partly the host's launch rate)" } else { "" };
            let fastest = rows.iter().find(|r| r.k == b.k && r.best).and_then(|r| Some(format!("; {} {:.2}× the bound", r.level, r.us_per_task? / us)));
            Some(format!("K={} {:.2}× the copy{host}{}", b.k, 1.0 / floor, fastest.unwrap_or_default()))
        })
        .collect();
    if !bounds.is_empty() {
        let _ = writeln!(
            out,
            "Bound (one kernel: the copy's traffic and the fewest matrix instructions of the transform, results discarded): {}.",
            bounds.join(", ")
        );
    }
    // Repetitions the host's launches bounded: their time is not the kernel's.
    let host: Vec<String> = rows.iter().filter(|r| r.host_bound_reps > 0).map(|r| format!("{} K={} ({} of its repetitions)", r.level, r.k, r.host_bound_reps)).collect();
    if !host.is_empty() {
        let _ = writeln!(out, "Host-bound ({}): {}.", harness::host_bound_rule(), host.join(", "));
    }
    // Cluster levels whose clusters cannot fill the GPU: the rest of its SMs idle while they run.
    let idle: Vec<String> = rows
        .iter()
        .filter_map(|r| r.clusters.filter(|c| r.us_per_task.is_some() && c.idle_fraction() > 0.0).map(|c| format!("{} K={}: {}", r.level, r.k, c.describe())))
        .collect();
    if !idle.is_empty() {
        let _ = writeln!(out, "Clusters: {}.", idle.join("; "));
    }
    if stream_data == StreamData::Private {
        let _ = writeln!(out, "Stream data: private (each stream its own A and C, the copy floor too): no L2 lines shared between tasks, unlike the seed's harness.");
    }
    // --warmup settle: say so, and name where the clock was still moving when timing began.
    if settled {
        use mra_runtime::warmup::{SETTLE_MAX_MS, SETTLE_MHZ, SETTLE_WINDOW_MS};
        let _ = writeln!(
            out,
            "Warm-up: until the SM clock settled ({} s windows within {SETTLE_MHZ} MHz, and the board power within {:.0}% of its limit where read; at most {} s).",
            SETTLE_WINDOW_MS / 1000.0,
            mra_runtime::clocks::POWER_TOLERANCE * 100.0,
            SETTLE_MAX_MS / 1000.0
        );
        let moving: Vec<String> = rows.iter().filter(|r| r.warmup.is_some_and(|w| w.settled == Some(false))).map(|r| format!("{} K={}", r.level, r.k)).collect();
        if !moving.is_empty() {
            let _ = writeln!(out, "Still moving after {} s (timed as it was): {}.", SETTLE_MAX_MS / 1000.0, moving.join(", "));
        }
    }
    out
}

/// The SM MHz column: the median, with the lowest reading where the clock moved.
pub(crate) fn clock_cell(c: &ClockStats) -> String {
    if c.sm_mhz_min == c.sm_mhz_median { format!("{}", c.sm_mhz_median) } else { format!("{}/{}", c.sm_mhz_min, c.sm_mhz_median) }
}

/// The chart's view of a report: the same JSON `mra-bench plot` reads from the --json file.
pub(crate) fn plot_data(report: &Report) -> serde_json::Result<crate::plot::SweepData> {
    serde_json::from_value(serde_json::to_value(report)?)
}

/// What measuring one level at one K found (`sweep_cmd::measure`, `api_sweep::measure`).
pub(crate) struct Measured {
    /// Median µs per task.
    pub us: f64,
    /// Tasks per timed repetition.
    pub tasks: usize,
    pub max_rel: f64,
    /// The SM clock while it was timed.
    pub clock: Option<ClockStats>,
    /// Blocks per launch.
    pub nblocks: usize,
    pub warmup: WarmupDone,
    pub host_bound_reps: usize,
    pub clusters: Option<ClusterResidency>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use mra_codegen::levels;

    /// A row of `level` at K = `k` taking `us` µs per task, nothing else measured.
    fn row_at(level: &str, k: u32, us: Option<f64>) -> Row {
        let role = levels::find(level).map_or(Role::Transform, |s| s.role());
        Row { us_per_task: us, tasks: 3, nblocks: Some(512), ..Row::unmeasured(level, k, role, 8) }
    }

    /// A report of `rows` as a harness sweep on sm_90 writes it while it runs.
    fn report_of(rows: &[Row]) -> Report<'_> {
        Report {
            device: "GPU".into(),
            arch: "sm_90",
            commit: "abc",
            date_unix: 0,
            launch: "harness",
            nfuncs: 8,
            max_blocks: Some(512),
            streams: 4,
            reps: 1,
            dtype: "f64".into(),
            fp64_gemm_peak_tflops: None,
            sm_clock_source: "not read: test".into(),
            power_limit_w: None,
            warmup: "200 ms".into(),
            stream_data: StreamData::Shared,
            complete: false,
            rows,
        }
    }

    #[test]
    fn sweep_plot_reads_the_report_as_the_plot_command_reads_the_file() {
        let row = |level: &str, us: Option<f64>| row_at(level, 7, us);
        let rows = [row("copy", Some(2.0)), row("L3-regblk", Some(5.0)), row("L4-mma", None)];
        let report = Report { stream_data: StreamData::Private, complete: true, rows: &rows, ..report_of(&[]) };
        let data = plot_data(&report).expect("the report reads as plot data");
        assert_eq!((data.rows.len(), data.rows[1].k, data.rows[1].us_per_task, data.rows[2].us_per_task), (3, 7, Some(5.0), None));
        assert_eq!(data.stream_data.as_deref(), Some("private"), "the chart's title can say the floor had private stream data");
        let text = serde_json::to_string(&report).unwrap();
        let file = std::env::temp_dir().join(format!("mra-sweep-unit-{}.json", std::process::id()));
        std::fs::write(&file, text).unwrap();
        let loaded = crate::plot::load(file.to_str().unwrap());
        let _ = std::fs::remove_file(&file);
        assert!(loaded.is_ok(), "a --json file loads for `mra-bench plot`");
    }

    /// An interrupted sweep keeps what it measured: after every row the --json and --csv files
    /// hold every row so far and parse (the JSON as `plot` reads it, saying it is not complete),
    /// and no temporary file is left beside them; standard output waits for the end.
    #[test]
    fn the_result_files_are_rewritten_whole_after_every_row() {
        let dir = std::env::temp_dir().join(format!("mra-sweep-progress-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (json, csv) = (dir.join("s.json"), dir.join("s.csv"));
        std::fs::write(&json, "an older sweep").unwrap();
        let targets = Targets {
            json: Some(Target::check("--json", json.to_str().unwrap()).unwrap()),
            csv: Some(Target::check("--csv", csv.to_str().unwrap()).unwrap()),
            plot: None,
        };
        let head = report_of(&[]);
        let all = [row_at("copy", 6, Some(2.0)), Row { note: "a \"quoted\" failure, with a comma".into(), ..row_at("L3-regblk", 6, None) }, row_at("fused", 6, Some(5.0))];
        let mut progress = Progress::new(&targets);
        for n in 1..=all.len() {
            progress.save(&head.with(&all[..n], false));
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("valid JSON after every row");
            assert_eq!((v["rows"].as_array().unwrap().len(), v["complete"].as_bool()), (n, Some(false)), "after row {n}");
            assert_eq!(v["rows"][n - 1]["level"], all[n - 1].level);
            assert!(crate::plot::load(json.to_str().unwrap()).is_ok(), "`mra-bench plot` reads the file after row {n}");
            let text = std::fs::read_to_string(&csv).unwrap();
            assert_eq!(text.lines().count(), n + 1, "the header and {n} rows:\n{text}");
            assert!(text.lines().all(|l| l.matches('"').count() % 2 == 0), "every quote closed:\n{text}");
        }
        assert!(!progress.warned);
        let left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(left.len(), 2, "no temporary file left: {left:?}");
        // Standard output is written once, at the end: rewriting it would repeat the rows.
        let stdout_only = Targets { json: Some(Target::Stdout), csv: None, plot: None };
        let mut quiet = Progress::new(&stdout_only);
        quiet.save(&head.with(&all, false));
        assert!(!quiet.warned);
        // A file that cannot be written any more costs one warning, not the sweep.
        std::fs::remove_dir_all(&dir).unwrap();
        progress.save(&head.with(&all, false));
        assert!(progress.warned);
    }

    #[test]
    fn the_table_shows_the_clock_and_power_each_level_ran_at_and_names_where_the_driver_lowered_it() {
        use mra_runtime::clocks::{ClockSample, ClockStats};
        let stats = |samples: &[(u32, u64, Option<u32>)]| {
            ClockStats::from_samples(&samples.iter().map(|&(sm_mhz, reasons, power_mw)| ClockSample { sm_mhz, reasons, power_mw }).collect::<Vec<_>>())
        };
        let row = |level: &str, sm_clock: Option<ClockStats>| Row {
            useful_gflops: Some(1.0),
            effective_gbps: Some(1.0),
            fraction_of_floor: Some(1.0),
            max_rel_err: Some(0.0),
            sm_clock,
            ..row_at(level, 24, Some(100.0))
        };
        let rows = [
            row("copy", stats(&[(1980, 0x1, Some(560_400)), (1980, 0, Some(571_000))])),
            row("fused-pipe", stats(&[(1980, 0, Some(640_000)), (1470, 0x4, Some(698_600)), (1965, 0x4, Some(697_200))])),
            row("fused", stats(&[(1905, 0, None)])),
            row("L7-breg", None),
        ];
        let t = table(&rows, None, StreamData::Shared, None);
        let lines: Vec<&str> = t.lines().collect();
        let tail = |line: &str| line.split_whitespace().rev().take(2).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(" ");
        assert!(lines[0].contains("SM MHz") && lines[0].trim_end().ends_with("W  note"), "{t}");
        assert_eq!(tail(lines[1]), "1980 560", "steady clock: one number; power: the lower middle of 560.4, 571.0 W\n{t}");
        assert_eq!(tail(lines[2]), "1470/1965 697", "moved: lowest/median; power: the median 697.2 W\n{t}");
        assert_eq!(tail(lines[3]), "1905 -", "clock without power: a dash\n{t}");
        assert!(lines[4].trim_end().ends_with(" -"), "not read: a dash\n{t}");
        assert!(t.contains("SM clock lowered by the driver while timing: fused-pipe K=24 (1470-1980 MHz (median 1965; sw power cap))."), "{t}");
        assert!(t.contains("W: the board power while the level was timed"), "{t}");
        assert!(!t.contains("copy K=24 ("), "idle between repetitions is not a lowered clock\n{t}");
        let plain = table(&[row("copy", None)], None, StreamData::Shared, None);
        assert!(!plain.contains("SM MHz:") && !plain.contains("lowered") && !plain.contains("W: the board"), "no clock, no footnote\n{plain}");
        assert!(!t.contains("Above the board's"), "no limit read, nothing said about it\n{t}");
        // A limit of 680 W: fused-pipe's 697.2 W median is more than 2% above it (693.6 W), the
        // copy's 560.4 W not; at 690 W it is within 2% (703.8 W) and counts as at the limit.
        let hot = table(&rows, None, StreamData::Shared, Some(680.0));
        assert!(hot.contains("Above the board's 680 W power limit while timed: fused-pipe K=24 (697 W); the driver holds the limit on average over seconds"), "{hot}");
        assert!(!table(&rows, None, StreamData::Shared, Some(690.0)).contains("Above the board's"), "697 W is within 2% of 690 W");
        assert!(hot.contains("(`--warmup settle` times it sustained)"), "{hot}");
        // After `--warmup settle` the advice would be circular: the table says what it means instead.
        let settled_rows: Vec<Row> = rows.iter().cloned().map(|r| Row { warmup: Some(WarmupDone { ms: 3000.0, reps: 30, settled: Some(true), sm_mhz: Some(1425) }), ..r }).collect();
        let after_settle = table(&settled_rows, None, StreamData::Shared, Some(680.0));
        assert!(after_settle.contains("fused-pipe K=24 (697 W); the driver holds the limit on average over seconds, and the power was within it when timing began"), "{after_settle}");
        assert!(!after_settle.contains("times it sustained"), "{after_settle}");
        let unpowered = table(&[row("fused", stats(&[(1905, 0, None)]))], None, StreamData::Shared, None);
        assert!(unpowered.contains("SM MHz:") && !unpowered.contains("W: the board"), "no power read, no power footnote\n{unpowered}");
    }

    #[test]
    fn with_warmup_settle_the_table_says_so_and_names_where_the_clock_was_still_moving() {
        let row = |level: &str, settled: Option<bool>| Row {
            warmup: Some(WarmupDone { ms: 4000.0, reps: 10, settled, sm_mhz: settled.map(|_| 1710) }),
            ..row_at(level, 32, Some(400.0))
        };
        let t = table(&[row("copy", Some(true)), row("fused-cluster", Some(false))], None, StreamData::Shared, None);
        assert!(t.contains("Warm-up: until the SM clock settled (1 s windows within 15 MHz, and the board power within 2% of its limit where read; at most 30 s)."), "{t}");
        assert!(t.contains("Still moving after 30 s (timed as it was): fused-cluster K=32."), "{t}");
        let settled = table(&[row("copy", Some(true))], None, StreamData::Shared, None);
        assert!(settled.contains("Warm-up: until") && !settled.contains("Still moving"), "{settled}");
        let fixed = table(&[row("copy", None)], None, StreamData::Shared, None);
        assert!(!fixed.contains("Warm-up"), "a fixed warm-up is the harness's usual: no footnote\n{fixed}");
    }

    #[test]
    fn with_private_stream_data_the_table_says_the_floor_shares_no_l2_lines() {
        let rows = [row_at("copy", 12, Some(20.0))];
        let t = table(&rows, None, StreamData::Private, None);
        assert!(t.contains("Stream data: private (each stream its own A and C, the copy floor too)"), "{t}");
        assert!(!table(&rows, None, StreamData::Shared, None).contains("Stream data"), "the seed's harness needs no footnote");
    }

    #[test]
    fn the_table_names_levels_whose_repetitions_were_host_bound() {
        let rows = [row_at("copy", 6, Some(26.2)), Row { host_bound_reps: 3, ..row_at("fused-pipe", 6, Some(26.2)) }];
        let t = table(&rows, None, StreamData::Shared, None);
        assert!(t.contains("Host-bound (submitting the tasks took >= 90% of the time measured, so the GPU waited for launches): fused-pipe K=6 (3 of its repetitions)."), "{t}");
        assert!(!table(&rows[..1], None, StreamData::Shared, None).contains("Host-bound"), "{t}");
    }

    #[test]
    fn the_table_names_cluster_levels_whose_clusters_leave_block_slots_idle() {
        // A 132-SM sm_90 GPU's counts: 30 clusters of 8 against 264 slots (24 idle); clusters of 4
        // filling all 132 slots of another kernel need no footnote, nor does a level that did
        // not run.
        let res = |cluster_blocks, clusters, slots| Some(ClusterResidency { cluster_blocks, clusters, block_slots: Some(slots) });
        let rows = [
            row_at("copy", 32, Some(264.0)),
            Row { clusters: res(8, 30, 264), ..row_at("fused-cluster", 32, Some(395.0)) },
            Row { clusters: res(4, 33, 132), ..row_at("fused-cluster", 28, Some(250.0)) },
            Row { clusters: res(8, 30, 264), ..row_at("fused-cluster", 10, None) },
        ];
        let t = table(&rows, None, StreamData::Shared, None);
        assert!(t.contains("Clusters: fused-cluster K=32: 30 clusters of 8 at once = 240 of 264 block slots (9.1% idle: a cluster's blocks share one GPC)."), "{t}");
        assert!(!t.contains("K=28:") && !t.contains("K=10:"), "{t}");
        assert!(!table(&rows[..1], None, StreamData::Shared, None).contains("Clusters:"));
    }

    /// The bound: never the fastest level, and its footnote gives bound / copy and the
    /// fastest level / bound (expected values by hand: 5.4 / 4.1 = 1.317, 7.0 / 5.4 = 1.296,
    /// 3.0 / 3.2 = 0.9375), saying where repetitions were host-bound.
    #[test]
    fn the_bound_is_not_marked_fastest_and_its_footnote_gives_both_ratios() {
        let floor = |r: Row, copy: f64| Row { fraction_of_floor: r.us_per_task.map(|us| copy / us), ..r };
        let mut rows = vec![
            floor(row_at("copy", 10, Some(4.1)), 4.1),
            floor(row_at("bound", 10, Some(5.4)), 4.1),
            floor(row_at("fused-pipe", 10, Some(7.0)), 4.1),
            floor(row_at("fused", 10, Some(7.5)), 4.1),
        ];
        assert_eq!(rows[1].role, Role::Bound, "the bound level's role");
        assert_eq!(rows[0].role, Role::Floor, "the copy level's role");
        mark_fastest(&mut rows, 10);
        let marked: Vec<&str> = rows.iter().filter(|r| r.best).map(|r| r.level.as_str()).collect();
        assert_eq!(marked, ["fused-pipe"], "the fastest transform, not the copy or the bound");
        rows.extend([row_at("copy", 6, Some(3.2)), Row { host_bound_reps: 5, fraction_of_floor: Some(3.2 / 3.0), ..row_at("bound", 6, Some(3.0)) }]);
        let t = table(&rows, None, StreamData::Shared, None);
        assert!(t.contains("Bound (one kernel: the copy's traffic and the fewest matrix instructions of the transform, results discarded): K=10 1.32× the copy; fused-pipe 1.30× the bound, K=6 0.94× the copy (host-bound repetitions: partly the host's launch rate)."), "{t}");
    }
}

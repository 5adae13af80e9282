//! The sweep as a picture: panel 1 is each level's time over the copy floor against K (the
//! ≤ 1.25× target drawn, the fastest level per K ringed), panel 2 µs per task on a log axis.
//! SVG or PNG by the output's extension; `mra-bench plot FILE -o OUT` and `sweep --plot OUT`.

use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Deserialize;
use std::path::Path;

/// The part of a `sweep --json` file the chart needs (extra fields are ignored).
#[derive(Debug, Deserialize)]
pub struct SweepData {
    pub device: String,
    pub arch: String,
    pub commit: String,
    #[serde(default)]
    pub date_unix: u64,
    pub nfuncs: usize,
    #[serde(default)]
    pub max_blocks: Option<usize>,
    #[serde(default)]
    pub streams: Option<usize>,
    pub dtype: String,
    /// `private` where each stream had its own A and C (absent in older files: shared).
    #[serde(default)]
    pub stream_data: Option<String>,
    /// `api` for `sweep --launch api` (absent in older files: the seed's harness).
    #[serde(default)]
    pub launch: Option<String>,
    pub rows: Vec<SweepRow>,
}

#[derive(Debug, Deserialize)]
pub struct SweepRow {
    pub level: String,
    #[serde(rename = "K")]
    pub k: u32,
    pub us_per_task: Option<f64>,
    /// `floor`, `bound` or `transform` (sweeps before the bound level have none: transforms
    /// and the copy).
    #[serde(default)]
    pub role: Option<String>,
}

/// The MISSION's target: a level within 1.25× of the copy floor's time, 1.35× at K = 32.
pub const TARGET_TIMES_FLOOR: f64 = 1.25;
const TARGET_K32: f64 = 1.35;

/// The target line over a K axis from `lo` to `hi`: (x from, x to, times the copy time), 1.25×
/// up to halfway between K = 32 and the swept K before it, 1.35× from there (MISSION.md's table).
fn target_steps(ks: &[u32], lo: f64, hi: f64) -> Vec<(f64, f64, f64)> {
    match ks.iter().position(|&k| k == 32) {
        Some(0) => vec![(lo, hi, TARGET_K32)],
        Some(i) => {
            let mid = (ks[i - 1] as f64 + 32.0) / 2.0;
            vec![(lo, mid, TARGET_TIMES_FLOOR), (mid, hi, TARGET_K32)]
        }
        None => vec![(lo, hi, TARGET_TIMES_FLOOR)],
    }
}
const FLOOR_LEVEL: &str = "copy";
/// Panel 1's y axis stops here (times the copy time).
const RATIO_CAP: f64 = 24.0;
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");
const SIZE: (u32, u32) = (1280, 1040);
const LEGEND_WIDTH: u32 = 230;

/// Reads a sweep JSON file, with one-line errors naming the file.
pub fn load(path: &str) -> Result<SweepData, String> {
    let text = mra_runtime::read_file::read_bounded_to_string(Path::new(path), mra_runtime::read_file::MAX_DATA)
        .map_err(|e| format!("cannot read sweep results `{path}`: {e}"))?;
    let data: SweepData = serde_json::from_str(&text)
        .map_err(|e| format!("`{path}` is not a `mra-bench sweep --json` file: {e}"))?;
    // A time the sweep cannot have measured (zero, negative, beyond a year) would put the log
    // axes at 0 or infinity: refuse it by name rather than draw nonsense.
    for (i, r) in data.rows.iter().enumerate() {
        if let Some(us) = r.us_per_task {
            if !(us > 0.0 && us < MAX_US) {
                return Err(format!("`{path}`: row {} ({}, K={}) has us_per_task {us}: not a time a sweep measures (it must be > 0 and < {MAX_US:e})", i + 1, r.level, r.k));
            }
        }
    }
    Ok(data)
}

/// Longest time per task a chart takes (µs): a year. Anything larger is a corrupt file.
const MAX_US: f64 = 3.2e13;

/// One level's points, in K order: (K, µs per task, level time / copy time at that K).
struct Series {
    level: String,
    points: Vec<(u32, f64, f64)>,
    /// The bound level: drawn, never marked fastest.
    bound: bool,
}

/// Turns the rows into per-level series; refuses a sweep without the copy floor.
fn series(data: &SweepData) -> Result<(Vec<u32>, Series, Vec<Series>), String> {
    let mut ks: Vec<u32> = data.rows.iter().map(|r| r.k).collect();
    ks.sort_unstable();
    ks.dedup();
    let floor_at = |k: u32| data.rows.iter().find(|r| r.level == FLOOR_LEVEL && r.k == k).and_then(|r| r.us_per_task);
    if ks.is_empty() || ks.iter().all(|&k| floor_at(k).is_none()) {
        return Err(format!("the sweep has no `{FLOOR_LEVEL}` row with a time: nothing to measure the levels against (rerun `mra-bench sweep`, it always runs copy)"));
    }
    let mut names: Vec<&str> = Vec::new();
    for r in &data.rows {
        if !names.contains(&r.level.as_str()) {
            names.push(&r.level);
        }
    }
    let mut floor = None;
    let mut levels = Vec::new();
    for name in names {
        let mut points = Vec::new();
        for &k in &ks {
            let us = data.rows.iter().find(|r| r.level == name && r.k == k).and_then(|r| r.us_per_task);
            if let (Some(us), Some(f)) = (us, floor_at(k)) {
                points.push((k, us, us / f));
            }
        }
        let bound = data.rows.iter().any(|r| r.level == name && r.role.as_deref() == Some("bound"));
        let s = Series { level: name.to_string(), points, bound };
        if name == FLOOR_LEVEL {
            floor = Some(s);
        } else if !s.points.is_empty() {
            levels.push(s);
        }
    }
    Ok((ks, floor.expect("checked above"), levels))
}

/// Writes the chart to `out` (`.svg` or `.png`).
/// Checks a chart path before anything is drawn (or measured): .svg or .png, in a directory
/// that takes a new file.
pub fn check_target(out: &str) -> Result<std::path::PathBuf, String> {
    check_target_for("--plot", out)
}

/// [`check_target`] with the errors naming `flag` (`plot`'s own `-o`).
pub fn check_target_for(flag: &'static str, out: &str) -> Result<std::path::PathBuf, String> {
    format_of(out)?;
    match crate::outfile::Target::check(flag, out)? {
        crate::outfile::Target::File { path, .. } => Ok(path),
        crate::outfile::Target::Stdout => Err(format!("{flag} -: a chart is an image file; give a .svg or .png path")),
    }
}

fn format_of(out: &str) -> Result<&'static str, String> {
    let ext = Path::new(out).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") => Ok("svg"),
        Some("png") => Ok("png"),
        _ => Err(format!("cannot tell the image format of `{}`: name it .svg or .png", crate::select::quote(out))),
    }
}

/// Draws the chart to `out`, atomically (a failed draw leaves no half image, nor a lost old one).
pub fn render(data: &SweepData, out: impl AsRef<Path>) -> Result<(), String> {
    let out = out.as_ref();
    let shown = out.display().to_string();
    let format = format_of(&shown)?;
    // Registering twice (sweep --plot then plot) is harmless: it replaces the same font.
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).map_err(|_| "the embedded plot font is invalid".to_string())?;
    crate::outfile::write_atomically_with(out, |tmp| {
        let result = match format {
            "svg" => draw(SVGBackend::new(tmp, SIZE).into_drawing_area(), data),
            _ => draw(BitMapBackend::new(tmp, SIZE).into_drawing_area(), data),
        };
        result.map_err(|e| format!("cannot write the plot `{shown}`: {e}"))
    })
}

/// Twenty colours of one qualitative palette (Kelly's colours of maximum contrast, white and
/// black left out, black being the copy floor; three near pairs replaced by gold, navy, olive,
/// and teal and magenta added): no two closer than 45 in RGB, none within 80 of white or black.
/// A sweep of every level has 18 series; a 21st and later repeat a colour with a dashed line.
const COLORS: [RGBColor; 20] = [
    RGBColor(0, 103, 165),
    RGBColor(243, 132, 0),
    RGBColor(0, 136, 86),
    RGBColor(190, 0, 50),
    RGBColor(135, 86, 146),
    RGBColor(132, 132, 130),
    RGBColor(161, 202, 241),
    RGBColor(194, 178, 128),
    RGBColor(230, 143, 172),
    RGBColor(0, 0, 128),
    RGBColor(255, 215, 0),
    RGBColor(179, 68, 108),
    RGBColor(141, 182, 0),
    RGBColor(136, 45, 23),
    RGBColor(249, 147, 121),
    RGBColor(128, 128, 0),
    RGBColor(226, 88, 34),
    RGBColor(43, 61, 38),
    RGBColor(0, 150, 160),
    RGBColor(220, 0, 220),
];

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Series past the palette repeat a colour: they are drawn dashed, as the bound is.
fn dashed(i: usize, bound: bool) -> bool {
    bound || i >= COLORS.len()
}

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, data: &SweepData) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let (ks, floor, levels) = series(data)?;
    draw_all(&root, data, &ks, &floor, &levels).map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

fn draw_all<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, data: &SweepData, ks: &[u32], floor: &Series, levels: &[Series]) -> DrawResult<DB::ErrorType> {
    root.fill(&WHITE)?;
    let date = date_of(data.date_unix);
    let title = format!(
        "mra-bench sweep: {} ({}), {}, {}{}, commit {}{}",
        data.device,
        data.arch,
        data.dtype,
        if data.launch.as_deref() == Some("api") { "one launch over 2 GiB".to_string() } else { format!("N={}", data.nfuncs) },
        if data.stream_data.as_deref() == Some("private") { ", private stream data" } else { "" },
        data.commit,
        date.map(|d| format!(", {d}")).unwrap_or_default()
    );
    let root = root.titled(&title, ("sans-serif", 24))?;
    let (charts, legend) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let (top, bottom) = charts.split_vertically(charts.dim_in_pixel().1 / 2);

    let kmin = *ks.first().unwrap() as f64;
    let kmax = *ks.last().unwrap() as f64;
    let pad = ((kmax - kmin) * 0.03).max(0.5);
    let x_range = || KAxis { range: (kmin - pad)..(kmax + pad), ks: ks.iter().map(|&k| k as f64).collect() };
    let best = best_per_k(ks, levels);

    // Panel 1: time / floor, log axis from 1 (the floor) to the slowest level.
    // Capped so that a level hundreds of times slower (Kronecker at large K) does not squash the
    // region near the floor; points above the cap leave through the top edge, marked by a ▲.
    let worst = levels.iter().flat_map(|s| s.points.iter().map(|p| p.2)).fold(TARGET_TIMES_FLOOR, f64::max);
    let top_y = (worst * 1.3).min(RATIO_CAP);
    let mut chart = ChartBuilder::on(&top)
        .margin(12)
        .caption("level time / copy time (1 = the copy floor; lower is better)", ("sans-serif", 20))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range(), LogAxis::ratios(0.85, top_y))?;
    chart
        .configure_mesh()
        .x_desc("K")
        .y_desc("level µs / copy µs")
        .x_label_formatter(&|k| format!("{k:.0}"))
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    let x_ends = [kmin - pad, kmax + pad];
    chart.draw_series(LineSeries::new(x_ends.map(|x| (x, 1.0)), BLACK.stroke_width(2)))?;
    for (x0, x1, y) in target_steps(ks, x_ends[0], x_ends[1]) {
        chart.draw_series(DashedLineSeries::new([(x0, y), (x1, y)], 10, 6, RED.stroke_width(2)))?;
    }
    // Labels at the right end, where the lines have left the floor's neighbourhood.
    let label_x = kmax - (kmax - kmin) * 0.36;
    let label = |text: String, y: f64, c: &RGBColor| Text::new(text, (label_x, y), ("sans-serif", 15).into_font().color(c));
    chart.draw_series([if ks.contains(&32) {
        label(format!("target: ≤ {TARGET_TIMES_FLOOR}× the copy time, {TARGET_K32}× at K = 32"), TARGET_K32 * 1.09, &RED)
    } else {
        label(format!("target: ≤ {TARGET_TIMES_FLOOR}× the copy time"), TARGET_TIMES_FLOOR * 1.12, &RED)
    }, label("copy floor".into(), 0.98, &BLACK)])?;
    for (i, s) in levels.iter().enumerate() {
        draw_series(&mut chart, s.points.iter().map(|p| (p.0 as f64, p.2)), color(i), dashed(i, s.bound))?;
        let off_chart = s.points.iter().filter(|p| p.2 > top_y).map(|p| TriangleMarker::new((p.0 as f64, top_y / 1.04), 7, color(i).filled()));
        chart.draw_series(off_chart)?;
    }
    for &(k, li) in &best {
        let p = levels[li].points.iter().find(|p| p.0 == k).expect("best point exists");
        chart.draw_series(std::iter::once(Circle::new((k as f64, p.2), 9, BLACK.stroke_width(2))))?;
    }

    // Panel 2: µs per task, log axis, the copy floor in black.
    let all_us = levels.iter().chain(std::iter::once(floor)).flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = all_us.fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let mut chart = ChartBuilder::on(&bottom)
        .margin(12)
        .caption("time per task (N tensors), µs", ("sans-serif", 20))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range(), LogAxis::decades(lo / 1.3, hi * 1.3))?;
    chart
        .configure_mesh()
        .x_desc("K")
        .y_desc("µs / task")
        .x_label_formatter(&|k| format!("{k:.0}"))
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    draw_series(&mut chart, floor.points.iter().map(|p| (p.0 as f64, p.1)), BLACK, false)?;
    for (i, s) in levels.iter().enumerate() {
        draw_series(&mut chart, s.points.iter().map(|p| (p.0 as f64, p.1)), color(i), dashed(i, s.bound))?;
    }
    for &(k, li) in &best {
        let p = levels[li].points.iter().find(|p| p.0 == k).expect("best point exists");
        chart.draw_series(std::iter::once(Circle::new((k as f64, p.1), 9, BLACK.stroke_width(2))))?;
    }

    let off_chart = levels.iter().any(|s| s.points.iter().any(|p| p.2 > top_y));
    draw_legend(&legend, levels, off_chart)
}

/// A linear K axis whose ticks are exactly the swept K values (plotters' `with_key_points` on
/// f64 drops the mesh's label formatting, so this small axis type keeps it).
#[derive(Clone)]
struct KAxis {
    range: std::ops::Range<f64>,
    ks: Vec<f64>,
}

impl Ranged for KAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.range.start) / (self.range.end - self.range.start);
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() { Vec::new() } else { self.ks.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// A log axis ticked at the given round values (plotters' own log ticks crowd 1..10 and leave
/// ranges below 10 unlabelled).
#[derive(Clone)]
struct LogAxis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl LogAxis {
    /// Panel 1: ratios to the floor.
    fn ratios(lo: f64, hi: f64) -> Self {
        let ticks = [1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0].into_iter().filter(|v| (lo..=hi).contains(v)).collect();
        LogAxis { lo, hi, ticks }
    }

    /// 1-2-5 steps per decade, or only the powers of ten when that would crowd the axis.
    fn decades(lo: f64, hi: f64) -> Self {
        let mut ticks = Vec::new();
        let few = hi / lo > 1e3;
        let mut decade = 10f64.powf(lo.log10().floor());
        // Bounded by the number of decades a double has: never a loop without end, whatever
        // the range (0 or infinity would otherwise keep `decade` fixed).
        for _ in 0..700 {
            if !(decade > 0.0 && decade.is_finite() && decade <= hi) {
                break;
            }
            for m in if few { &[1.0][..] } else { &[1.0, 2.0, 5.0][..] } {
                let v = decade * m;
                if (lo..=hi).contains(&v) {
                    ticks.push(v);
                }
            }
            decade *= 10.0;
        }
        LogAxis { lo, hi, ticks }
    }
}

impl Ranged for LogAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v.max(1e-12).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln());
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() { Vec::new() } else { self.ticks.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// A line with a dot at each point; dashed for the bound, which is no kernel a user would run
/// for results (the chart's target line is dashed too, in red).
fn draw_series<DB: DrawingBackend, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    points: impl Iterator<Item = (f64, f64)> + Clone,
    c: RGBColor,
    dashed: bool,
) -> DrawResult<DB::ErrorType>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    if dashed {
        chart.draw_series(DashedLineSeries::new(points.clone(), 7, 5, c.stroke_width(2)))?;
    } else {
        chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?;
    }
    chart.draw_series(points.map(|p| Circle::new(p, 4, c.filled())))?;
    Ok(())
}

/// (K, index of the fastest level at K), the same rule as the sweep table's `*` (not the bound).
fn best_per_k(ks: &[u32], levels: &[Series]) -> Vec<(u32, usize)> {
    ks.iter()
        .filter_map(|&k| {
            levels
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.bound)
                .filter_map(|(i, s)| s.points.iter().find(|p| p.0 == k).map(|p| (i, p.1)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| (k, i))
        })
        .collect()
}

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, levels: &[Series], off_chart: bool) -> DrawResult<DB::ErrorType> {
    let font = ("sans-serif", 16).into_font();
    let mut y = 70;
    let row = 26;
    let entry = |y: i32, c: RGBColor, label: &str, dashed: bool| -> DrawResult<DB::ErrorType> {
        if dashed {
            for x in [10, 22, 34] {
                area.draw(&PathElement::new(vec![(x, y), (x + 7, y)], c.stroke_width(2)))?;
            }
        } else {
            area.draw(&PathElement::new(vec![(10, y), (44, y)], c.stroke_width(2)))?;
        }
        area.draw(&Circle::new((27, y), 4, c.filled()))?;
        area.draw(&Text::new(label.to_string(), (54, y - 9), font.clone()))
    };
    for (i, s) in levels.iter().enumerate() {
        let label = if s.bound { format!("{} (no transform)", s.level) } else { s.level.clone() };
        entry(y, color(i), &label, dashed(i, s.bound))?;
        y += row;
    }
    entry(y, BLACK, "copy (the floor)", false)?;
    y += row + 10;
    area.draw(&Circle::new((27, y), 9, BLACK.stroke_width(2)))?;
    area.draw(&Text::new("fastest at that K", (54, y - 9), font.clone()))?;
    y += row + 6;
    area.draw(&PathElement::new(vec![(10, y), (20, y)], RED.stroke_width(2)))?;
    area.draw(&PathElement::new(vec![(26, y), (36, y)], RED.stroke_width(2)))?;
    area.draw(&Text::new("target, × copy time".to_string(), (54, y - 9), font.clone()))?;
    if off_chart {
        y += row + 6;
        area.draw(&TriangleMarker::new((27, y), 7, BLACK.filled()))?;
        area.draw(&Text::new(format!("above {RATIO_CAP}× (top panel)"), (54, y - 9), font.clone()))?;
    }
    Ok(())
}

/// `YYYY-MM-DD` (UTC) of a Unix time; None for 0 (unknown).
pub fn date_of(unix: u64) -> Option<String> {
    if unix == 0 {
        return None;
    }
    // Civil-from-days (Howard Hinnant's algorithm), to avoid a date crate for one label.
    let z = (unix / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    Some(format!("{y:04}-{m:02}-{d:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_known_days() {
        // Independent values: `date -u -d @0`, `@951782400` (2000-02-29), `@1795301361`.
        assert_eq!(date_of(86_400), Some("1970-01-02".into()));
        assert_eq!(date_of(951_782_400), Some("2000-02-29".into()));
        assert_eq!(date_of(1_795_301_361), Some("2026-11-21".into()));
        assert_eq!(date_of(0), None);
    }

    /// A sweep file's JSON with these rows (level, K, µs per task, role; None: a file from
    /// before roles).
    fn sweep_of(rows: &[(&str, u32, f64, Option<&str>)]) -> SweepData {
        let rows: Vec<String> = rows
            .iter()
            .map(|(level, k, us, role)| {
                let role = role.map(|r| format!(r#", "role": "{r}""#)).unwrap_or_default();
                format!(r#"{{"level": "{level}", "K": {k}, "us_per_task": {us}{role}}}"#)
            })
            .collect();
        let json = format!(r#"{{"device": "d", "arch": "sm_90", "commit": "c", "nfuncs": 2048, "dtype": "f64", "rows": [{}]}}"#, rows.join(", "));
        serde_json::from_str(&json).unwrap()
    }

    /// The bound (faster than every transform by construction) is drawn but never marked
    /// fastest; a file from before the bound level (no `role`) still reads.
    #[test]
    fn the_bound_is_drawn_and_never_marked_fastest() {
        let data = sweep_of(&[("copy", 10, 4.1, Some("floor")), ("bound", 10, 5.4, Some("bound")), ("fused-pipe", 10, 7.0, Some("transform")), ("fused", 10, 7.5, None)]);
        let (ks, _, levels) = series(&data).unwrap();
        assert_eq!(levels.iter().map(|s| s.level.as_str()).collect::<Vec<_>>(), ["bound", "fused-pipe", "fused"]);
        let best: Vec<&str> = best_per_k(&ks, &levels).iter().map(|&(_, i)| levels[i].level.as_str()).collect();
        assert_eq!(best, ["fused-pipe"]);
    }

    /// The target line: 1.25× the copy, 1.35× at K = 32 (MISSION.md's table), the step halfway
    /// to the K before 32.
    #[test]
    fn the_target_is_1_35_at_k32_only() {
        assert_eq!(target_steps(&[10, 12, 16], 9.0, 17.0), [(9.0, 17.0, 1.25)]);
        assert_eq!(target_steps(&[10, 24, 32], 9.0, 33.0), [(9.0, 28.0, 1.25), (28.0, 33.0, 1.35)]);
        assert_eq!(target_steps(&[32], 31.5, 32.5), [(31.5, 32.5, 1.35)]);
    }

    /// The bound's line is dashed and the transforms' are not: counted in the SVG itself, as the
    /// line segments drawn in each level's colour (a solid line is one polyline per panel plus
    /// its legend entry; a dashed one is many short ones).
    /// The palette's rule, checked on its numbers: twenty colours, pairwise at least 45 apart
    /// in RGB, each at least 80 from the white background and the black floor; the 21st series
    /// repeats the first colour, dashed.
    #[test]
    fn twenty_distinct_colours_then_dashed_lines() {
        let dist = |a: RGBColor, b: RGBColor| (((a.0 as f64 - b.0 as f64).powi(2) + (a.1 as f64 - b.1 as f64).powi(2) + (a.2 as f64 - b.2 as f64).powi(2)) as f64).sqrt();
        for i in 0..20 {
            assert!(dist(color(i), RGBColor(255, 255, 255)) >= 80.0 && dist(color(i), RGBColor(0, 0, 0)) >= 80.0, "colour {i}");
            for j in 0..i {
                assert!(dist(color(i), color(j)) >= 45.0, "colours {j} and {i}");
            }
            assert!(!dashed(i, false), "series {i} solid");
        }
        assert_eq!(color(20), color(0));
        assert!(dashed(20, false) && dashed(0, true));
    }

    #[test]
    fn the_bound_is_drawn_dashed() {
        let data = sweep_of(&[
            ("copy", 10, 4.1, Some("floor")),
            ("copy", 32, 262.0, Some("floor")),
            ("bound", 10, 5.4, Some("bound")),
            ("bound", 32, 297.0, Some("bound")),
            ("fused-pipe", 10, 7.0, Some("transform")),
            ("fused-pipe", 32, 400.0, Some("transform")),
        ]);
        let out = std::env::temp_dir().join(format!("mra-plot-unit-{}.svg", std::process::id()));
        render(&data, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        std::fs::remove_file(&out).unwrap();
        let lines_in = |c: RGBColor| {
            let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
            svg.lines().filter(|l| (l.contains("<polyline") || l.contains("<line")) && l.contains(&stroke)).count()
        };
        // levels in file order: bound is colour 0, fused-pipe colour 1.
        let (bound, level) = (lines_in(color(0)), lines_in(color(1)));
        assert_eq!(level, 3, "fused-pipe: one line per panel and its legend entry");
        assert!(bound >= 10, "the bound's line is not dashed: {bound} segments");
    }
}

//! `mra-bench plot`: a chart from a small sweep JSON (SVG and PNG), and one-line errors for a
//! missing file, malformed JSON, a sweep without the copy floor and an unknown image format.

use std::process::{Command, Output};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sweep-small.json");

fn mra_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench")).args(args).output().expect("run mra-bench")
}

#[path = "support/scratch.rs"]
mod support_scratch;

fn scratch(name: &str) -> support_scratch::Scratch {
    support_scratch::Scratch::new("mra-plot-test", name)
}

fn assert_one_line_error(args: &[&str], needle: &str) {
    let o = mra_bench(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: expected one line: {err}");
    assert!(err.contains("error") && err.contains(needle), "{args:?}: expected `{needle}` in: {err}");
}

#[test]
fn draws_an_svg_chart_with_both_panels_and_the_target() {
    let out = scratch("sweep.svg");
    let o = mra_bench(&["plot", FIXTURE, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&out).expect("the SVG was written");
    assert!(svg.starts_with("<svg"), "not an SVG: {}", &svg[..svg.len().min(80)]);
    for needle in ["level time / copy time", "µs / task", "target: ≤ 1.25× the copy time", "L3-regblk", "L6-kron", "copy (the floor)", "Test GPU"] {
        assert!(svg.contains(needle), "`{needle}` missing from the chart");
    }
    // The K axis is ticked at exactly the swept K values (7, 9, 13; no y tick has these
    // values), in both panels.
    let ticks = |k: &str| svg.lines().filter(|l| l.trim() == k).count();
    assert_eq!((ticks("7"), ticks("9"), ticks("13")), (2, 2, 2), "K ticks");
}

#[test]
fn draws_a_png_chart_by_extension() {
    let out = scratch("sweep.png");
    let o = mra_bench(&["plot", FIXTURE, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = std::fs::read(&out).expect("the PNG was written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert!(png.len() > 10_000, "a chart, not an empty image ({} bytes)", png.len());
}

#[test]
fn bad_input_is_one_line() {
    let out = scratch("bad.svg");
    let out = out.to_str().unwrap();
    assert_one_line_error(&["plot", "/nonexistent/sweep.json", "-o", out], "cannot read sweep results `/nonexistent/sweep.json`");

    let bad = scratch("bad.json");
    std::fs::write(&bad, "{ \"rows\": [ ").unwrap();
    assert_one_line_error(&["plot", bad.to_str().unwrap(), "-o", out], "is not a `mra-bench sweep --json` file");

    let no_copy = scratch("no-copy.json");
    let text = std::fs::read_to_string(FIXTURE).unwrap().replace("\"copy\"", "\"L1-global\"");
    std::fs::write(&no_copy, text).unwrap();
    assert_one_line_error(&["plot", no_copy.to_str().unwrap(), "-o", out], "no `copy` row");

    assert_one_line_error(&["plot", FIXTURE, "-o", "sweep.pdf"], "name it .svg or .png");
}

#[test]
fn chart_paths_are_checked_before_any_work_and_written_whole() {
    // sweep --plot: a bad path is refused before any GPU is looked for (an hour of sweep must
    // not end in a chart that cannot be written).
    assert_one_line_error(&["sweep", "--plot", "/nonexistent-mra-dir/s.svg"], "--plot /nonexistent-mra-dir/s.svg: directory /nonexistent-mra-dir does not exist");
    assert_one_line_error(&["sweep", "--plot", "s.txt"], "name it .svg or .png");
    // plot: the output is checked before the input is read, and no temporary file is left.
    assert_one_line_error(&["plot", "/nonexistent-mra-input.json", "-o", "/nonexistent-mra-dir/s.svg"], "directory /nonexistent-mra-dir does not exist");
    // A directory of its own: the other tests of this file write charts beside theirs at once.
    let dir = scratch("whole");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("whole.svg");
    let o = mra_bench(&["plot", FIXTURE, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let leftovers: Vec<_> = std::fs::read_dir(out.parent().unwrap()).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().contains(".tmp")).collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// Runs `mra-bench args`, killing it after `secs` (a regression to an endless loop fails the
/// test instead of hanging the suite).
fn mra_bench_within(args: &[&str], secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mra-bench"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mra-bench");
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed().as_secs() >= secs {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still running after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn impossible_times_are_refused_by_row_not_drawn_or_looped_on() {
    // The fixture's L3-regblk row at K = 9 measures 4.5 µs; a zero there once made the log
    // axis's tick loop run forever (10^-inf = 0, and 0 × 10 stays 0), a huge one made it inf.
    let out = scratch("impossible.svg");
    let out = out.to_str().unwrap();
    for (bad, shown) in [("0.0", "us_per_task 0"), ("-1.0", "us_per_task -1"), ("1.5e308", "us_per_task 15")] {
        let file = scratch(&format!("impossible-{bad}.json"));
        let text = std::fs::read_to_string(FIXTURE).unwrap().replacen("\"us_per_task\": 4.5", &format!("\"us_per_task\": {bad}"), 1);
        assert!(text.contains(bad), "fixture changed: no 4.5 µs row");
        std::fs::write(&file, text).unwrap();
        let args = ["plot", file.to_str().unwrap(), "-o", out];
        let o = mra_bench_within(&args, 60);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{bad}: drew a chart");
        assert_eq!(err.lines().count(), 1, "{bad}: {err}");
        assert!(err.contains("(L3-regblk, K=9)") && err.contains(shown), "{bad}: {err}");
    }
    // plot's output flag is -o, and its errors say so (not sweep's --plot).
    assert_one_line_error(&["plot", FIXTURE, "-o", "/nonexistent-mra-dir/s.svg"], "-o /nonexistent-mra-dir/s.svg: directory");
}

#[test]
fn a_read_only_chart_is_refused_up_front_and_a_link_is_written_through() {
    use std::os::unix::fs::PermissionsExt;
    let ro = scratch("read-only.svg");
    std::fs::write(&ro, "mine").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let ro_s = ro.to_str().unwrap();
    // Before any GPU is looked for (sweep) and before the input is read (plot).
    assert_one_line_error(&["sweep", "--plot", ro_s], "is read-only");
    assert_one_line_error(&["plot", "/nonexistent-mra-input.json", "-o", ro_s], "is read-only");
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "mine");
    // A link to a chart elsewhere stays a link; its target is redrawn.
    let real = scratch("real-chart.svg");
    std::fs::write(&real, "old").unwrap();
    let link = scratch("link-chart.svg");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = mra_bench(&["plot", FIXTURE, "-o", link.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link became a file");
    assert!(std::fs::read_to_string(&real).unwrap().starts_with("<svg"), "the link's target was not redrawn");
}

//! `sweep --json/--csv/--plot` naming one destination twice: refused before anything is
//! measured (before a GPU is looked for), in one line, and no file is touched.

use std::process::{Command, Output, Stdio};

fn sweep(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench"))
        .arg("sweep")
        .args(["-K", "6", "--no-peak"])
        .args(args)
        .current_dir(dir)
        .env("MRA_KERNEL_CACHE", "off")
        .stdin(Stdio::null())
        .output()
        .expect("run mra-bench")
}

#[test]
fn two_results_into_one_place_are_refused_before_measuring() {
    let dir = std::env::temp_dir().join(format!("mra-sweep-outputs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("old.json"), "old").unwrap();
    std::os::unix::fs::symlink("old.json", dir.join("link.csv")).unwrap();
    let abs = format!("{}/r.json", dir.display());
    for (args, needle) in [
        (vec!["--json", "-", "--csv", "-"], "--json - and --csv -: both would go to standard output"),
        (vec!["--json", "r.json", "--csv", "r.json"], "--json r.json and --csv r.json are the same file"),
        (vec!["--json", "r.json", "--csv", "./r.json"], "--json r.json and --csv ./r.json are the same file"),
        (vec!["--json", "r.json", "--csv", &abs], "are the same file"),
        (vec!["--json", "old.json", "--csv", "link.csv"], "--json old.json and --csv link.csv are the same file"),
        (vec!["--csv", "r.svg", "--plot", "r.svg"], "--csv r.svg and --plot r.svg are the same file"),
        (vec!["--json", "-", "--csv", "c.svg", "--plot", "./c.svg"], "--csv c.svg and --plot ./c.svg are the same file"),
    ] {
        let o = sweep(&args, &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("mra-bench: error: ") && err.contains(needle), "{args:?}: `{needle}` missing: {err}");
        assert!(!err.contains("GPU"), "{args:?}: refused before looking for a GPU: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
    assert_eq!(std::fs::read_to_string(dir.join("old.json")).unwrap(), "old", "the existing file kept");
    let mut left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, ["link.csv", "old.json"], "nothing written, no temporary file left");
    // Distinct destinations pass the check (and fail later only for want of a GPU, if so).
    let o = sweep(&["--json", "-", "--csv", "r.csv", "--plot", "r.svg"], &dir);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("same file"), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--json /dev/stdout` into a pipe passes the up-front check (it used to be refused: "cannot
/// create a file in /proc/self/fd"): without a GPU the sweep then stops for want of one.
#[test]
fn dev_stdout_into_a_pipe_is_a_valid_destination() {
    let dir = std::env::temp_dir().join(format!("mra-sweep-dev-stdout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for flag in ["--json", "--csv"] {
        let o = sweep(&[flag, "/dev/stdout"], &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("/proc/self/fd") && !err.contains("cannot create"), "{flag}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

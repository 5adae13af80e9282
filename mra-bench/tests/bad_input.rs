//! Bad input found by a probe of the command line, end to end on the binary and without a GPU:
//! each must be one `mra-bench: error:` line and a non-zero exit (never a panic, never exit 0
//! when nothing was done), and a closed pipe must end the program as it ends `cat`.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary with no kernel cache and a tuning database that does not exist (unless `db`).
fn bin(db: Option<&Path>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mra-bench"));
    c.env("MRA_KERNEL_CACHE", "off").env("MRA_TUNING_DB", db.unwrap_or(Path::new("/nonexistent/mra-tuning.json"))).stdin(Stdio::null());
    c
}

fn run(args: &[&str]) -> Output {
    bin(None).args(args).output().expect("run mra-bench")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mra-bench-bad-input-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Exit status non-zero, no panic, and exactly one stderr line (besides `# ...` progress
/// comments): `mra-bench: error: ...` naming `needle`.
#[track_caller]
fn one_line_error(o: &Output, needle: &str) {
    let err = text(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(!o.status.success(), "succeeded; stdout: {}", text(&o.stdout));
    assert!(o.status.code().is_some(), "killed by a signal: {:?} {err}", o.status);
    assert_eq!(lines.len(), 1, "one line on stderr, got: {lines:#?}");
    assert!(lines[0].starts_with("mra-bench: error: ") && lines[0].contains(needle), "expected `{needle}` in: {}", lines[0]);
    assert!(!err.contains("panicked") && !err.contains("internal failure"), "{err}");
}

#[track_caller]
fn refused(args: &[&str], needle: &str) {
    let o = run(args);
    one_line_error(&o, needle);
}

/// Bug 1: `tune --list | head -1` was exit 1 with "failed printing to stdout: Broken pipe".
#[test]
fn tune_list_into_a_closed_pipe_ends_by_sigpipe_quietly() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = bin(None).args(["tune", "--list", "-l", "all"]).stdout(writer).stderr(Stdio::piped()).output().unwrap();
    assert_eq!(o.status.signal(), Some(13), "ends by SIGPIPE as `cat` does: {:?} {}", o.status, text(&o.stderr));
    assert!(o.stderr.is_empty(), "quietly: {}", text(&o.stderr));
}

/// Bug 2: tune's -K was not range-checked, and limits that tune nothing ended with status 0.
#[test]
fn tune_refuses_k_out_of_range_and_runs_that_tune_nothing() {
    let dir = scratch("tune-nothing");
    let db = dir.join("db.json");
    let out = dir.join("out.json");
    let (db_s, out_s) = (db.to_str().unwrap(), out.to_str().unwrap());
    for (args, needle) in [
        (&["tune", "--compile-only", "--arch", "gfx90a", "-K", "0"][..], "K=0 is out of range"),
        (&["tune", "--compile-only", "--arch", "gfx90a", "-K", "33"], "K=33 is out of range"),
        (&["tune", "--list", "-K", "4294967295"], "K=4294967295 is out of range"),
        (&["tune", "--compile-only", "--arch", "gfx90a", "-K", "6", "--max-configs", "0"], "--max-configs 0"),
        (&["tune", "--compile-only", "--arch", "gfx90a", "-K", "6", "--budget", "0s"], "--budget 0s"),
        (&["tune", "--compile-only", "--arch", "gfx90a", "-K", "6", "--budget", &"9".repeat(400)], "is too large"),
        // fused needs 526336 B of shared memory at K=32, gfx90a has 64 KiB: no candidate at all
        // (refused before a compiler is looked for).
        (&["tune", "--compile-only", "--arch", "gfx90a", "-K", "32", "-l", "fused"], "nothing to tune: no configuration of fused at K=32 can run on gfx90a"),
    ] {
        let args: Vec<&str> = args.iter().copied().chain(["--db", db_s, "--out", out_s]).collect();
        let o = bin(Some(&db)).args(&args).output().unwrap();
        one_line_error(&o, needle);
        assert!(!db.exists() && !out.exists(), "{args:?} wrote a record");
    }
    // A budget spent before the first candidate: nothing tried, so an error and no record.
    if mra_tests::require("NVRTC", mra_runtime::cuda::nvrtc::Nvrtc::load()).is_some() {
        let o = bin(Some(&db)).args(["tune", "--compile-only", "--arch", "sm_90", "-K", "6", "-l", "L7", "--budget", "0.000001s", "--db", db_s, "--out", out_s]).output().unwrap();
        // The budget is named in the unit --budget takes (it once said `1ms`, which it refuses).
        one_line_error(&o, "nothing tuned: no candidate could be tried within --budget 0.000001s;");
        assert!(!db.exists() && !out.exists(), "wrote a record");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bug 3: `tune --out` in a missing directory was noticed only after every candidate compiled.
#[test]
fn tune_checks_its_out_file_before_any_work() {
    // A database of this test's own: were the check missing, the run would write records.
    let dir = scratch("tune-out");
    let db = dir.join("db.json");
    let o = bin(Some(&db)).args(["tune", "--compile-only", "--arch", "gfx90a", "-K", "6", "-l", "L7", "--out", "/nonexistent/dir/out.json"]).output().unwrap();
    one_line_error(&o, "--out /nonexistent/dir/out.json: directory /nonexistent/dir does not exist");
    assert!(!text(&o.stderr).contains("compiling every candidate"), "checked before compiling: {}", text(&o.stderr));
    assert!(!db.exists(), "records written");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bug 4: a validation in which every case is skipped was exit 0, and the summary counted only
/// the library levels among the SKIP lines.
#[test]
fn validate_fails_when_nothing_is_validated_and_counts_every_skip() {
    if mra_tests::require("clang++ with AddressSanitizer (the CPU wave emulator)", mra_runtime::emulate::HostClang::find()).is_none() {
        return;
    }
    let emulate = ["validate", "--emulate", "--arch", "gfx90a", "-K", "32", "-N", "1"];
    // vendor-3gemm is a library level (not emulated); fused does not fit gfx90a at K=32.
    let o = run(&[&emulate[..], &["-l", "vendor-3gemm,fused"]].concat());
    one_line_error(&o, "nothing validated: every case was skipped (1 not emulated (library levels), 1 cannot run on gfx90a)");
    assert_eq!(text(&o.stdout).matches(" SKIP (").count(), 2, "{}", text(&o.stdout));
    // With one case run, the summary adds up to the lines printed.
    let o = run(&[&emulate[..], &["-l", "copy,vendor-3gemm,fused"]].concat());
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("# 1 passed, 0 failed, 1 not emulated (library levels), 1 cannot run on gfx90a"), "{}", text(&o.stderr));
}

/// Bug 5: a K, N or level given twice was done (and counted, or claimed written) twice.
#[test]
fn a_k_n_or_level_listed_twice_is_refused_everywhere() {
    let dir = scratch("repeats");
    let out = dir.join("kernels");
    let d = out.to_str().unwrap();
    for (args, needle) in [
        (&["--emit-src", "--arch", "gfx90a", "-K", "6,6", "-o", d][..], "-K 6 is listed twice"),
        (&["--emit-src", "--arch", "gfx90a", "-K", "6", "-l", "3,L3-regblk,L3", "-o", d], "-l L3-regblk is listed twice (as `3` and `L3-regblk`)"),
        (&["--compile-only", "--arch", "gfx90a", "-l", "fused,fused"], "-l fused is listed twice"),
        (&["validate", "-K", "1,1", "-N", "1"], "-K 1 is listed twice"),
        (&["validate", "-K", "1", "-N", "1,1"], "-N 1 is listed twice"),
        (&["validate", "-K", "1", "-N", "1", "-l", "L7,7"], "-l L7-breg is listed twice"),
        (&["sweep", "-K", "8,6,8"], "-K 8 is listed twice"),
        (&["sweep", "-K", "8", "-l", "3,L3"], "-l L3-regblk is listed twice"),
        (&["tune", "--list", "-K", "6,6"], "-K 6 is listed twice"),
        (&["tune", "--list", "-l", "fused,fused"], "-l fused is listed twice"),
    ] {
        refused(args, needle);
        assert!(!out.exists(), "{args:?} wrote {d}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bug 6: `--compile-only -o FILE` silently ignored -o.
#[test]
fn compile_only_refuses_an_output_file() {
    let dir = scratch("compile-only-o");
    let file = dir.join("report.txt");
    refused(&["--compile-only", "--arch", "gfx90a", "-l", "3", "-o", file.to_str().unwrap()], "is for --emit-src; --compile-only prints its report on standard output");
    assert!(!file.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bug 7: `man -o ""` wrote its pages into the current directory.
#[test]
fn man_refuses_an_empty_directory_name() {
    let dir = scratch("man-empty");
    let o = bin(None).args(["man", "-o", ""]).current_dir(&dir).output().unwrap();
    one_line_error(&o, "a value is required for '--output <DIR>'");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "pages written into the current directory");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bug 8: with --untuned the tuning database is not read, so a broken one does not matter.
#[test]
fn untuned_emit_src_does_not_read_the_tuning_database() {
    let dir = scratch("untuned");
    let db = dir.join("tuning.json");
    std::fs::write(&db, "{ not JSON").unwrap();
    let args = ["--emit-src", "--arch", "gfx90a", "-K", "8", "-l", "L7"];
    let o = bin(Some(&db)).args(args).arg("--untuned").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("constexpr int K = 8;"));
    // Without --untuned the database is read, and its error said.
    let o = bin(Some(&db)).args(args).output().unwrap();
    one_line_error(&o, "is not valid JSON");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bug 9: help and version that cannot be written were exit 0.
#[test]
fn help_and_version_that_cannot_be_written_are_an_error() {
    for flag in ["--help", "-h", "--version"] {
        let full = std::fs::File::create("/dev/full").unwrap();
        let o = bin(None).arg(flag).stdout(full).output().unwrap();
        one_line_error(&o, "writing to standard output");
        assert_eq!(o.status.code(), Some(1), "{flag}");
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        // The subcommand's help too (the pipe is closed before its first byte; `--version`
        // is the main command's only).
        let args: &[&str] = if flag == "--version" { &[flag] } else { &["tune", flag] };
        let o = bin(None).args(args).stdout(writer).stderr(Stdio::piped()).output().unwrap();
        assert_eq!((o.status.signal(), text(&o.stderr)), (Some(13), String::new()), "{flag} into a closed pipe");
    }
    // Written, they still succeed.
    let o = run(&["--version"]);
    assert!(o.status.success() && text(&o.stdout).starts_with("mra-bench "), "{}", text(&o.stdout));
}

/// A bad word inside a list (`validate -K 0`) is as malformed a command line as `-K 0` of the run
/// mode, which clap refuses with status 2: the README's exit statuses say 2 for both. Before,
/// the list parsers' refusals exited 1, like a failed validation.
#[test]
fn a_bad_value_in_a_list_exits_2_like_any_malformed_command_line() {
    for (args, needle) in [
        (&["validate", "-K", "0"][..], "K=0 is out of range"),
        (&["validate", "-K", "6,6"][..], "-K 6 is listed twice"),
        (&["validate", "-K", "6", "-N", "x"][..], "`x` is not a non-negative integer"),
        (&["sweep", "-K", "6", "-l", "nonesuch"][..], "unknown level `nonesuch`"),
        (&["--emit-src", "--arch", "sm_90", "-K", "6", "-l", "3,L3"][..], "is listed twice"),
        (&["export", "--arch", "sm_90", "-K", "6,40", "-o", "/nonexistent-mra-dir/x"][..], "K=40"),
        (&["-K", "0"][..], "out of range"),
    ] {
        let o = run(args);
        one_line_error(&o, needle);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
    // Not a usage error: a well-formed command that cannot be carried out here.
    let o = run(&["validate", "-K", "6", "-N", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
}

/// `--warmup` (run, sweep, tune) takes a duration or `settle`; anything else is a malformed
/// command line (status 2) naming what it expects, before a GPU is looked for, and a good value
/// gets as far as the GPU (none here: status 1, the no-GPU message).
#[test]
fn warmup_takes_a_duration_or_settle_and_refuses_anything_else() {
    for args in [&["-K", "8", "--warmup", "fast"][..], &["sweep", "-K", "8", "--warmup", "3x"], &["tune", "-K", "8", "--warmup=-1s"], &["-K", "8", "--warmup", "2h"]] {
        let o = run(args);
        one_line_error(&o, "--warmup");
        assert!(text(&o.stderr).contains("`settle`"), "{args:?}: {}", text(&o.stderr));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
    for w in ["settle", "3s", "500ms", "0"] {
        let o = bin(None).args(["-K", "8", "-N", "3", "--warmup", w]).env("LD_LIBRARY_PATH", "/nonexistent").output().unwrap();
        assert_eq!(o.status.code(), Some(1), "--warmup {w}: {}", text(&o.stderr));
        assert!(!text(&o.stderr).contains("--warmup"), "--warmup {w} accepted: {}", text(&o.stderr));
    }
}

/// `--stream-data` (run, sweep, tune) is `shared` or `private`; anything else is a malformed
/// command line (status 2) naming both, and a good value gets as far as the GPU.
#[test]
fn stream_data_is_shared_or_private() {
    for args in [&["-K", "8", "--stream-data", "own"][..], &["sweep", "-K", "8", "--stream-data", "Private "], &["tune", "-K", "8", "--stream-data="]] {
        let o = run(args);
        one_line_error(&o, "--stream-data");
        assert!(text(&o.stderr).contains("not shared or private"), "{args:?}: {}", text(&o.stderr));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
    for d in ["shared", "private"] {
        let o = bin(None).args(["-K", "8", "-N", "3", "--stream-data", d]).env("LD_LIBRARY_PATH", "/nonexistent").output().unwrap();
        assert_eq!(o.status.code(), Some(1), "--stream-data {d}: {}", text(&o.stderr));
        assert!(!text(&o.stderr).contains("--stream-data"), "--stream-data {d} accepted: {}", text(&o.stderr));
    }
}

/// Issue 49, item 9: a file read whole (the tuning database, sweep results, a tuned-defaults
/// file, `--source`) is a regular file of bounded size: /dev/zero or /dev/full grew the process
/// until it was killed, a FIFO waited forever. Each is one line naming the file, at once.
#[test]
fn files_read_whole_are_regular_and_bounded() {
    let dir = scratch("whole");
    let fifo = dir.join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // Sparse: 300 MiB long, nothing written.
    let big = dir.join("big.json");
    std::fs::File::create(&big).unwrap().set_len(300 << 20).unwrap();
    let defaults = dir.join("gfx90a.json");
    std::os::unix::fs::symlink("/dev/zero", &defaults).unwrap();
    let (fifo, big, defaults, d) = (fifo.to_str().unwrap(), big.to_str().unwrap(), defaults.to_str().unwrap(), dir.to_str().unwrap());
    let start = std::time::Instant::now();
    refused(&["plot", "/dev/zero"], "`/dev/zero`: it is a character device, not a regular file");
    refused(&["report", fifo], "it is a FIFO, not a regular file");
    refused(&["plot", d], "it is a directory, not a regular file");
    refused(&["report", big], "larger than 256 MiB");
    refused(&["tune", "--write-defaults", defaults, "--arch", "gfx90a", "--db", "/dev/full"], "tuning database /dev/full: it is a character device");
    refused(&["tune", "--write-defaults", defaults, "--arch", "gfx90a", "--db", fifo], "tuning database");
    refused(&["tune", "--write-defaults", defaults, "--arch", "gfx90a"], "it is a character device, not a regular file");
    refused(&["--compile-only", "--arch", "sm_90", "-l", "3", "-K", "8", "--source", fifo], "--source");
    assert!(start.elapsed().as_secs() < 10, "refused at once, not waited on");
    std::fs::remove_dir_all(&dir).unwrap();
}

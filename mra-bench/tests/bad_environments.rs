//! Bad input and bad environments (issue 8), end to end on the binary, without a GPU: each case
//! must exit with a status that means something, say what went wrong in ONE line on stderr
//! (never a panic), and leave the files it touches as they should be.
//!
//! GPU paths run against stub libraries built here from `tests/stubs/*.c` with clang or cc: a
//! libcuda.so.1 that lacks cuInit, a libnvrtc.so.13 that lacks nvrtcCompileProgram, and a
//! libcuda.so.1 with one "Stub GPU" (sm_90) that can be opened and asked for memory but runs
//! nothing. Tests that also need the real NVRTC (a session opens it) or clang for gfx942 skip
//! without them, unless MRA_REQUIRE_TOOLCHAINS=1.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mra-bench"));
    c.env("MRA_KERNEL_CACHE", "off").stdin(Stdio::null());
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run mra-bench")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// stderr without the `# ...` progress comments a run prints before it fails.
fn problems(o: &Output) -> Vec<String> {
    text(&o.stderr).lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect()
}

/// The command exited with `code` and said ONE line, an error naming every one of `needles`.
#[track_caller]
fn one_line_error(o: &Output, code: i32, needles: &[&str]) -> String {
    let lines = problems(o);
    assert_eq!(o.status.code(), Some(code), "exit status; stderr: {:?}", lines);
    assert_eq!(lines.len(), 1, "one line on stderr, got: {lines:#?}");
    let line = &lines[0];
    assert!(line.starts_with("mra-bench: error: "), "{line}");
    assert!(!line.contains("panicked"), "{line}");
    for n in needles {
        assert!(line.contains(n), "`{n}` missing from: {line}");
    }
    line.clone()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mra-bad-env-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ---- stub libraries ------------------------------------------------------------------------

/// A directory per stub kind, built once: `broken-cuda`, `broken-nvrtc`, `stub-gpu`,
/// `no-occupancy` (the stub GPU without cuOccupancyMaxActiveBlocksPerMultiprocessor).
fn stubs() -> Option<&'static Path> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = DIR.get_or_init(|| {
        let cc = ["clang-19", "clang", "cc"]
            .into_iter()
            .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
            .ok_or("no C compiler (clang-19, clang, cc)")?;
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stubs");
        // In the build's own scratch directory (target/tmp), not the system's: built once per
        // run and shared by the tests, so no test could remove them after the others.
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mra-stub-libs-{}", std::process::id()));
        for (dir, file, source, defines) in [
            ("broken-cuda", "libcuda.so.1", "fake_cuda.c", &["-DBROKEN"][..]),
            ("stub-gpu", "libcuda.so.1", "fake_cuda.c", &[][..]),
            ("no-occupancy", "libcuda.so.1", "fake_cuda.c", &["-DNO_OCCUPANCY"][..]),
            ("broken-nvrtc", "libnvrtc.so.13", "broken_nvrtc.c", &[][..]),
        ] {
            std::fs::create_dir_all(out.join(dir)).map_err(|e| e.to_string())?;
            let o = Command::new(cc)
                .args(["-shared", "-fPIC", "-o"])
                .arg(out.join(dir).join(file))
                .arg(src.join(source))
                .args(defines)
                .output()
                .map_err(|e| e.to_string())?;
            if !o.status.success() {
                return Err(format!("{cc} failed: {}", text(&o.stderr)));
            }
        }
        Ok(out)
    });
    mra_tests::require("a C compiler for the stub libraries", built.as_ref().map(|p| p.as_path()))
}

/// LD_LIBRARY_PATH with the stub directory `kind` first, then what the test runs with (so the
/// real NVRTC of `. /work/toolenv.sh` or CI stays reachable).
fn with_stub(kind: &str) -> Option<String> {
    let dir = stubs()?.join(kind);
    let rest = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    Some(format!("{}:{rest}", dir.display()))
}

/// The stub GPU needs the real NVRTC beside it (a CUDA session opens both).
fn stub_gpu() -> Option<String> {
    let path = with_stub("stub-gpu")?;
    mra_tests::require("NVRTC", mra_runtime::cuda::nvrtc::Nvrtc::load())?;
    Some(path)
}

// ---- 1. broken pipe and full disk -----------------------------------------------------------

/// `cat` itself, under the same closed pipe: the behaviour the test above holds mra-bench to.
#[test]
fn cat_ends_by_sigpipe_on_a_closed_pipe() {
    use std::os::unix::process::ExitStatusExt;
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new("cat").arg(env!("CARGO_MANIFEST_DIR").to_string() + "/Cargo.toml").stdout(writer).stderr(Stdio::piped()).output().unwrap();
    assert_eq!((o.status.signal(), o.stderr.len()), (Some(13), 0));
}

#[test]
fn a_closed_pipe_ends_quietly_and_a_full_disk_is_an_error() {
    for args in [&["levels"][..], &["levels", "--json"], &["--arch", "gfx90a", "-K", "16", "-l", "3", "--emit-src"]] {
        // The reader is gone before the first byte is written: every write fails with EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = bin().args(args).stdout(writer).stderr(Stdio::piped()).output().unwrap();
        // As `cat` ends: by SIGPIPE, no message (a shell reports nothing; pipefail sees 141).
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(o.status.signal(), Some(13), "{args:?} ends by SIGPIPE: {:?} {}", o.status, text(&o.stderr));
        assert!(o.stderr.is_empty(), "{args:?} must end quietly: {}", text(&o.stderr));
    }
    for args in [&["levels"][..], &["--arch", "sm_90", "-K", "8", "-l", "2", "--emit-src"]] {
        let full = std::fs::File::create("/dev/full").unwrap();
        let o = bin().args(args).stdout(full).output().unwrap();
        one_line_error(&o, 1, &["writing to standard output", "No space left on device"]);
    }
}

// ---- 2. host and device memory, sizes that must not wrap ------------------------------------

#[test]
fn host_memory_is_checked_before_allocating_and_sizes_never_wrap() {
    for args in [
        &["validate", "-K", "32", "-l", "3", "-N", "2147483647"][..],
        &["sweep", "-K", "32", "-l", "3", "-N", "2147483647", "--no-peak"],
        &["-K", "32", "-N", "250000", "-l", "3"],
    ] {
        let o = run(args);
        // MemAvailable, or a tighter limit of the machine that runs the test (a cgroup's).
        one_line_error(&o, 1, &["GiB of host memory", "GiB are available (", "lower -N"]);
    }
    one_line_error(&run(&["-s", "18446744073709551615"]), 1, &["-s must be at most 1024"]);
    one_line_error(&run(&["-n", "99999999999999"]), 1, &["-n must be at most"]);
    one_line_error(&run(&["-r", "99999999999999"]), 1, &["-r must be at most"]);
    one_line_error(&run(&["-M", "9999999999"]), 1, &["-M must fit in a 32-bit int"]);
    one_line_error(&run(&["-N", "2147483648"]), 1, &["-N must fit in a 32-bit int"]);
    // A value past u64 is clang's own one-line refusal, never a wrap.
    one_line_error(&run(&["-s", "18446744073709551616"]), 2, &["invalid value", "-s"]);
}

/// Issue 49, item 10: the check read only MemAvailable, so under `ulimit -v 4000000`
/// `validate -K 32 -l 3 -N 8000` (7.8 GiB) passed it and aborted (134, "memory allocation of
/// 2097152000 bytes failed"); and a buffer no check covers (npy-random's values) aborted too.
/// Now the address-space limit is checked, and the big buffers are allocated fallibly.
#[test]
fn a_memory_limit_is_one_line_and_exit_1_never_an_abort() {
    let exe = env!("CARGO_BIN_EXE_mra-bench");
    let limited = |args: &str| {
        let o = Command::new("sh").arg("-c").arg(format!("ulimit -v 4000000 && exec {exe} {args}")).env("MRA_KERNEL_CACHE", "off").stdin(Stdio::null()).output().unwrap();
        assert!(o.status.code().is_some(), "{args}: killed by a signal: {:?} {}", o.status, text(&o.stderr));
        o
    };
    let o = limited("validate -K 32 -l 3 -N 8000");
    one_line_error(&o, 1, &["N=8000 tensors of K=32", "GiB of host memory", "(the address-space limit, ulimit -v)", "lower -N"]);
    let dir = scratch("ulimit");
    let o = limited(&format!("npy-random --shape 600000000 -o {}", dir.join("x.npy").display()));
    one_line_error(&o, 1, &["cannot allocate 4.5 GiB of host memory for the random values"]);
    assert!(!dir.join("x.npy").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn device_memory_is_checked_with_the_figures() {
    let Some(path) = stub_gpu() else { return };
    let o = bin().args(["-K", "16", "-N", "2048", "-l", "3"]).env("LD_LIBRARY_PATH", path).env("STUB_FREE_MIB", "64").output().unwrap();
    one_line_error(&o, 1, &["MiB of device memory but only 64.0 MiB are free", "lower -N"]);
}

// ---- 3. sweep output files ------------------------------------------------------------------

#[test]
fn sweep_output_paths_are_checked_before_measuring() {
    let dir = scratch("paths");
    let file = dir.join("taken.csv");
    std::fs::write(&file, "old").unwrap();
    let not_a_dir = format!("{}/x.json", file.display());
    let missing = format!("{}/missing/x.json", dir.display());
    let d = dir.display().to_string();
    for (json, needle) in [
        ("/proc/x.json", "--json /proc/x.json: cannot create a file in /proc"),
        (d.as_str(), "is a directory"),
        ("", "--json: the path is empty"),
        (missing.as_str(), "does not exist"),
        (not_a_dir.as_str(), "does not exist"),
    ] {
        // Refused before any GPU is looked for: the message is about the path, not the GPU.
        let o = run(&["sweep", "-K", "6", "--no-peak", "--json", json, "--csv", &file.display().to_string()]);
        let line = one_line_error(&o, 1, &[needle]);
        assert!(!line.contains("GPU"), "{line}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old", "the valid file is untouched");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "no temporary file left behind: {left:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sweep_writes_each_file_even_when_the_other_fails() {
    let Some(path) = stub_gpu() else { return };
    let dir = scratch("sweep-files");
    let json = dir.join("sweep.json");
    std::fs::write(&json, "previous").unwrap();
    // /dev/full passes the up-front check (a device is written in place) and fails at the write.
    let o = bin()
        .args(["sweep", "-K", "6", "-l", "3", "--no-peak", "-n", "1", "-r", "1", "--json"])
        .arg(&json)
        .args(["--csv", "/dev/full"])
        .env("LD_LIBRARY_PATH", path)
        .output()
        .unwrap();
    one_line_error(&o, 1, &["--csv /dev/full", "No space left on device", "not saved"]);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("the JSON file was replaced whole");
    assert_eq!(v["device"], "Stub GPU");
    assert!(v["rows"].as_array().unwrap().iter().any(|r| r["level"] == "L3-regblk"));
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "no temporary file left behind: {left:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `validate --source` with a syntax error: the case's ERROR line (and its `--json` "error")
/// ends with NVRTC's first error, at the file's own line, not with the colon before the log.
/// On the stub GPU the compile is real (NVRTC), and the case fails there, before any launch.
#[test]
fn a_hand_edited_kernel_that_does_not_compile_says_nvrtcs_first_error() {
    let Some(path) = stub_gpu() else { return };
    let dir = scratch("source-syntax");
    let src = dir.join("l3.cu");
    let o = bin().args(["--emit-src", "-l", "L3", "-K", "8", "--arch", "sm_90", "--untuned", "-o"]).arg(&src).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let body = std::fs::read_to_string(&src).unwrap();
    let zero = "for (int j = 0; j < K; ++j) acc[j] = 0.0;";
    let line = body[..body.find(zero).unwrap()].matches('\n').count() + 1;
    std::fs::write(&src, body.replace(zero, "for (int j = 0; j < K; ++j) acc[j] = 0.0 +;")).unwrap();
    let want = format!("NVRTC could not compile mra_l3_regblk_k8_f64 for sm_90: {}({line}): error: expected an expression", src.display());
    let validate = |json: bool| {
        let mut c = bin();
        c.args(["validate", "-l", "L3", "-K", "8", "-N", "1", "--untuned", "--source"]).arg(&src).env("LD_LIBRARY_PATH", &path);
        if json {
            c.arg("--json");
        }
        c.output().unwrap()
    };
    let o = validate(false);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim_end(), format!("K=8 nfuncs=1 level=L3-regblk ERROR ({want})"));
    let o = validate(true);
    let v: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!((v["error"].as_str(), v["pass"].as_bool()), (Some(want.as_str()), Some(false)), "{v}");
    std::fs::remove_dir_all(dir).unwrap();
}

// ---- 4. broken libraries and the no-GPU message ---------------------------------------------

#[test]
fn a_library_without_its_functions_is_named_with_the_missing_symbol() {
    let Some(path) = with_stub("broken-cuda") else { return };
    let o = bin().args(["--arch", "sm_90", "-K", "8"]).env("LD_LIBRARY_PATH", &path).output().unwrap();
    one_line_error(&o, 1, &["NVIDIA driver library libcuda.so.1 is incomplete", "lacks cuInit", "LD_LIBRARY_PATH"]);
    // Only the broken NVRTC on the path: --compile-only names it and its missing function.
    let nvrtc = stubs().unwrap().join("broken-nvrtc");
    let o = bin().args(["--compile-only", "--arch", "sm_90", "-K", "8", "-l", "3"]).env("LD_LIBRARY_PATH", &nvrtc).output().unwrap();
    one_line_error(&o, 1, &["NVRTC library libnvrtc.so.13 is incomplete", "lacks nvrtc", "broken-nvrtc/libnvrtc.so.13"]);
    // A driver without the occupancy query the persistent and cluster levels size their grids
    // with: named by the probe, before any work, not cudarc's "Missing symbol" panic later.
    let Some(path) = with_stub("no-occupancy") else { return };
    let o = bin().args(["--arch", "sm_90", "-K", "8"]).env("LD_LIBRARY_PATH", &path).output().unwrap();
    one_line_error(&o, 1, &["NVIDIA driver library libcuda.so.1 is incomplete", "lacks cuOccupancyMaxActiveBlocksPerMultiprocessor"]);
}

#[test]
fn without_a_gpu_the_error_is_three_short_lines_and_verbose_lists_the_search() {
    if mra_runtime::cuda::probe_driver().is_ok() {
        println!("SKIPPED: this machine has an NVIDIA driver");
        return;
    }
    let o = run(&["-K", "8", "-n", "1"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() <= 3 && lines[0].starts_with("mra-bench: error: no GPU found"), "{err}");
    assert!(lines.iter().all(|l| l.chars().count() <= 140), "short lines: {err}");
    for needle in ["libcuda.so.1", "--emit-src", "--compile-only", "LD_LIBRARY_PATH", "--verbose"] {
        assert!(err.contains(needle), "`{needle}` missing: {err}");
    }
    assert!(!err.contains("libcuda64_130_0.so"), "the full search list only with --verbose: {err}");
    let v = text(&run(&["-K", "8", "-n", "1", "--verbose"]).stderr);
    assert!(v.contains("libcuda64_130_0.so") && v.lines().count() > 3, "{v}");
    // Each command names its own GPU-free mode.
    let a = std::env::temp_dir().join(format!("mra-nogpu-a-{}.npy", std::process::id()));
    let b = std::env::temp_dir().join(format!("mra-nogpu-b-{}.npy", std::process::id()));
    assert!(run(&["npy-random", "--shape", "2,3,3,3", "-o", a.to_str().unwrap()]).status.success());
    assert!(run(&["npy-random", "--shape", "3,3", "-o", b.to_str().unwrap()]).status.success());
    let c = std::env::temp_dir().join(format!("mra-nogpu-c-{}.npy", std::process::id()));
    for (args, needle) in [
        (vec!["validate", "-K", "8", "-l", "3", "-N", "3"], "validate --emulate --arch"),
        (vec!["sweep", "-K", "8"], "--compile-only -l all --arch"),
        (vec!["tune", "-K", "8", "-l", "L7"], "tune --compile-only --arch"),
        (vec!["transform", "--input", a.to_str().unwrap(), "--matrix", b.to_str().unwrap(), "--output", c.to_str().unwrap()], "transform --reference"),
    ] {
        let o = run(&args);
        let err = text(&o.stderr);
        assert!(!o.status.success() && err.lines().count() <= 3 && err.contains(needle) && !err.contains("--emit-src prints"), "{args:?}: {err}");
        assert!(err.lines().all(|l| l.chars().count() <= 140), "short lines: {err}");
    }
    assert!(!c.exists(), "nothing written without a GPU");
    let _ = (std::fs::remove_file(&a), std::fs::remove_file(&b));
}

// ---- 5. kernel cache ------------------------------------------------------------------------

#[test]
fn a_damaged_cache_entry_is_evicted_and_recompiled_and_an_unwritable_cache_is_no_error() {
    let Some(path) = stub_gpu() else { return };
    let dir = scratch("cache");
    let cache = dir.join("kernels");
    // The stub GPU gets as far as loading the compiled kernel (then refuses): far enough to see
    // the cache written, read, checked and replaced.
    let go = |cache: &Path| {
        bin().args(["-K", "7", "-N", "3", "-l", "2"]).env("LD_LIBRARY_PATH", &path).env("MRA_KERNEL_CACHE", cache).output().unwrap()
    };
    let o = go(&cache);
    one_line_error(&o, 1, &["cuModuleLoadData"]);
    let entry = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == "cubin")).expect("a cubin entry");
    let good = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, &good[..good.len() / 2]).unwrap();
    let o = go(&cache);
    let lines = problems(&o);
    let warnings: Vec<_> = lines.iter().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(warnings.len(), 1, "{lines:#?}");
    assert!(warnings[0].contains(&entry.display().to_string()) && warnings[0].contains("damaged") && warnings[0].contains("compiling again"), "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("cuModuleLoadData")), "the run went on to load the fresh kernel: {lines:#?}");
    assert_eq!(std::fs::read(&entry).unwrap(), good, "the entry was compiled again and rewritten whole");

    // A file where the directory should be, and /proc: one warning, and the run goes on past
    // the compile (to the stub's refusal to load).
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    for unwritable in [file.as_path(), Path::new("/proc/mra-kernel-cache")] {
        let lines = problems(&go(unwritable));
        let warnings: Vec<_> = lines.iter().filter(|l| l.starts_with("warning:")).collect();
        assert_eq!(warnings.len(), 1, "{lines:#?}");
        assert!(warnings[0].contains("going on without caching") && warnings[0].contains(&unwritable.display().to_string()), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("cuModuleLoadData")), "{lines:#?}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

// ---- 6. exit codes that mean something ------------------------------------------------------

#[test]
fn nothing_done_is_a_failure_that_says_why() {
    one_line_error(&run(&["--compile-only", "-l", "all", "-K", "0", "--arch", "sm_90"]), 2, &["K=0 is out of range"]);
    one_line_error(&run(&["--compile-only", "-l", "4,5", "--dtype", "f32", "--arch", "sm_90", "-K", "8"]), 1, &["nothing to compile", "f32"]);
    let Some(path) = stub_gpu() else { return };
    let o = bin().args(["validate", "--dtype", "f16", "-l", "3,4", "-K", "8", "-N", "1"]).env("LD_LIBRARY_PATH", &path).output().unwrap();
    one_line_error(&o, 1, &["nothing to validate", "f16 on sm_90"]);
    let o = bin().args(["sweep", "--dtype", "f16", "-K", "8", "--no-peak"]).env("LD_LIBRARY_PATH", &path).output().unwrap();
    one_line_error(&o, 1, &["nothing to sweep", "f16 on sm_90"]);
    // Every case fails on the stub (it loads no kernel): validate reports each, goes on to
    // the next level, prints the summary and exits non-zero.
    let o = bin().args(["validate", "-l", "2,6", "-K", "5", "-N", "1"]).env("LD_LIBRARY_PATH", &path).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.contains("level=L2-bshared ERROR") && out.contains("level=L6-kron ERROR"), "{out}");
    assert!(text(&o.stderr).contains("# 0 passed, 2 failed"), "{}", text(&o.stderr));
}

// ---- 7. interrupts: tests/interrupt.rs -----------------------------------------------------

// ---- 8. messages that blame the right party -------------------------------------------------

#[test]
fn refusals_blame_the_right_party_and_match_levels() {
    let line = one_line_error(&run(&["--arch", "gfx1100", "-l", "wmma", "--dtype", "f16", "-K", "16", "--emit-src"]), 1, &["no f16 lowering in this tool", "use L4-mma"]);
    assert!(!line.contains("does not have"), "{line}");
    let line = one_line_error(&run(&["--arch", "gfx90a", "-l", "wmma", "-K", "16", "--emit-src"]), 1, &["gfx90a has f64 matrix cores", "for f64 on gfx90a"]);
    assert!(line.contains("use L1-global") && line.contains("L4-mma"), "{line}");
    one_line_error(&run(&["--arch", "gfx1100", "-l", "4", "-K", "16", "--emit-src"]), 1, &["needs f64 matrix cores, which gfx1100 does not have", "use L1-global"]);
    let line = one_line_error(&run(&["--arch", "sm_90", "-l", "4", "--dtype", "f32", "-K", "16", "--emit-src"]), 1, &["no f32 lowering in this tool", "use L1-global"]);
    assert!(!line.contains(": ;") && !line.ends_with(": "), "{line}");

    // `levels --json` and --emit-src agree at K=16 for every level, arch and dtype.
    let v: serde_json::Value = serde_json::from_slice(&run(&["levels", "--json"]).stdout).unwrap();
    for level in v.as_array().unwrap() {
        let name = level["name"].as_str().unwrap();
        for s in level["support"].as_array().unwrap() {
            let (arch, dtype, ks) = (s["arch"].as_str().unwrap(), s["dtype"].as_str().unwrap(), s["ks"].as_str().unwrap());
            let listed = ks.split(", ").any(|r| match r.split_once('-') {
                Some((a, b)) => (a.parse::<u32>().unwrap()..=b.parse().unwrap()).contains(&16),
                None => r == "16",
            });
            let o = run(&["--arch", arch, "-l", name, "--dtype", dtype, "-K", "16", "--emit-src"]);
            assert_eq!(o.status.success(), listed, "{name} {arch} {dtype}: levels says K {ks}; emit-src: {}", text(&o.stderr));
            if !listed {
                let line = one_line_error(&o, 1, &[]);
                assert!(!line.trim_end().ends_with(':') && !line.contains(": ;"), "{line}");
            }
        }
    }
}

// ---- 9. argument hygiene --------------------------------------------------------------------

#[test]
fn arguments_are_checked_before_looking_for_a_gpu() {
    for k in ["0", "-1", "33", "x"] {
        let line = one_line_error(&run(&["-K", k]), 2, &["1 <= K <= 32"]);
        assert!(!line.contains("GPU") && !line.contains("unexpected argument"), "{line}");
    }
    for cmd in ["validate", "sweep"] {
        // Inside a list as on its own: a malformed command line, status 2.
        one_line_error(&run(&[cmd, "-K", "-1"]), 2, &["K=-1 is out of range"]);
        one_line_error(&run(&[cmd, "-K", "8,0"]), 2, &["K=0 is out of range"]);
    }
    // Flags that do not go together are a malformed command line too: status 2.
    one_line_error(&run(&["-l", "all", "-K", "8"]), 2, &["-l all", "sweep -l all"]);
    // --emit-src takes -l all and K lists (one file per kernel), so it asks for -o DIR.
    one_line_error(&run(&["-l", "all", "--arch", "gfx90a", "--emit-src"]), 2, &["writes one file per kernel", "-o DIR"]);
    for ks in ["8,-1", "-1,8"] {
        one_line_error(&run(&["-K", ks, "--arch", "gfx90a", "--emit-src"]), 2, &["K=-1 is out of range"]);
    }
    one_line_error(&run(&["--compiler", "gcc", "--arch", "sm_90", "--emit-src"]), 2, &["invalid value 'gcc' for '--compiler <COMPILER>'", "[possible values: hiprtc, clang, nvrtc]"]);
    one_line_error(&run(&["--compiler", "hiprtc", "--arch", "sm_90", "--emit-src"]), 2, &["--compiler hiprtc compiles HIP for AMD archs"]);
    one_line_error(&run(&["--compiler", "nvrtc", "--arch", "gfx90a", "--compile-only"]), 2, &["--compiler nvrtc compiles CUDA"]);
    // A huge or multi-line argument is quoted by a short prefix only.
    let huge = "y".repeat(100_000);
    for (flag, value) in [("--arch", huge.as_str()), ("-l", "3x\nsecond line"), ("--dtype", huge.as_str()), ("-K", huge.as_str())] {
        let mut args = vec![flag, value, "--emit-src"];
        if flag != "--arch" {
            args.extend(["--arch", "sm_90"]);
        }
        let o = run(&args);
        let lines = problems(&o);
        assert_eq!(lines.len(), 1, "{flag}: {lines:?}");
        assert!(lines[0].chars().count() < 400, "{flag}: {} characters", lines[0].chars().count());
        assert!(!lines[0].contains("second line"), "{}", lines[0]);
    }
}

// ---- 10. a tool that hangs ------------------------------------------------------------------

/// A clang that answers its probes but never finishes a compile (a stuck file system, a wrapper
/// waiting on a licence) is stopped after MRA_TOOL_TIMEOUT seconds with one line naming it; it
/// used to hang mra-bench for good. A malformed limit is refused up front.
#[test]
fn a_hung_compiler_is_stopped_after_the_tool_timeout() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("hung-clang");
    std::fs::create_dir_all(&dir).unwrap();
    let clang = dir.join("clang++");
    std::fs::write(&clang, "#!/bin/sh\ncase \"$1\" in\n  --print-targets) echo '    amdgcn - AMD GCN GPUs'; exit 0;;\n  --version) echo 'clang version 19 (hangs on compiles)'; exit 0;;\nesac\nexec sleep 60\n").unwrap();
    std::fs::set_permissions(&clang, std::fs::Permissions::from_mode(0o755)).unwrap();
    let start = std::time::Instant::now();
    let o = bin()
        .env("MRA_CLANG", &clang)
        .env("MRA_TOOL_TIMEOUT", "2")
        .args(["--compile-only", "--arch", "gfx942", "--compiler", "clang", "--no-cache", "-K", "6", "-l", "3"])
        .output()
        .unwrap();
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
    one_line_error(&o, 1, &["clang", "did not finish within 2 s", "MRA_TOOL_TIMEOUT"]);
    let o = bin().env("MRA_TOOL_TIMEOUT", "soon").args(["--emit-src", "--arch", "gfx942", "-K", "6", "-l", "3"]).output().unwrap();
    one_line_error(&o, 2, &["MRA_TOOL_TIMEOUT=`soon`", "seconds"]);
    let _ = std::fs::remove_dir_all(&dir);
}

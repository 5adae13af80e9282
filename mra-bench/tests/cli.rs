//! The command line end to end, without a GPU: source emission, the level listing, and a
//! clear one-line error (never a panic) for every kind of bad input.

use std::process::{Command, Output};

fn mra_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench"))
        .args(args)
        // A machine without a GPU must behave the same with or without a cache directory.
        .env("MRA_KERNEL_CACHE", "off")
        // Nothing tuned: the schedules' defaults, whatever this machine's database holds.
        .env("MRA_TUNING_DB", "/nonexistent/mra-tuning.json")
        .output()
        .expect("run mra-bench")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Fails the test unless the command exited non-zero with one `error:` line naming `needle`.
fn assert_clean_error(args: &[&str], needle: &str) {
    let o = mra_bench(args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} succeeded: {}", stdout(&o));
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.contains(needle), "{args:?}: expected `{needle}` in: {err}");
    let lines = err.lines().filter(|l| l.contains("error")).count();
    assert_eq!(lines, 1, "{args:?}: expected one error line: {err}");
}

#[test]
fn emits_complete_hip_for_gfx90a_without_a_gpu() {
    let o = mra_bench(&["--arch", "gfx90a", "-K", "16", "-l", "3", "--emit-src"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let src = stdout(&o);
    assert!(src.contains("constexpr int K = 16;"));
    assert!(src.contains("extern \"C\" __global__"));
    assert!(src.contains("__builtin_amdgcn_s_barrier"), "HIP barrier");
    assert!(src.contains("register_tile(cols)"), "step comments name the schedule");
    assert!(!src.contains("#include"), "self-contained");
}

#[test]
fn emits_complete_cuda_for_sm90_without_a_gpu() {
    let o = mra_bench(&["--arch", "sm_90", "-K", "7", "-l", "L2-bshared", "--emit-src"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let src = stdout(&o);
    assert!(src.contains("constexpr int K = 7;") && src.contains("__syncthreads();"));
    assert!(src.contains("mra_l2_bshared_k7_f64"));
    assert!(!src.contains("#include"));
}

#[test]
fn levels_lists_one_line_per_level_and_the_details_of_one() {
    let o = mra_bench(&["levels"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // One line per level, each with where it runs; nothing printed once per dtype and arch.
    let lines: Vec<&str> = out.lines().collect();
    for name in ["copy", "bound", "L1-global", "L2-bshared", "L3-regblk", "L4-mma", "fused-pipe", "fused-split", "wmma", "vendor-3gemm"] {
        assert_eq!(lines.iter().filter(|l| l.split_whitespace().nth(1) == Some(name)).count(), 1, "{name}: {out}");
    }
    assert!(lines.len() <= 30 && lines.iter().all(|l| l.chars().count() <= 200), "{out}");
    assert!(lines.iter().any(|l| l.starts_with("L4 ") && l.contains("NVIDIA 1-32, CDNA 1-32")), "{out}");
    assert!(lines.iter().any(|l| l.contains(" fused-split ") && l.contains("sm_90 32")), "{out}");
    assert!(out.contains("tuned defaults for sm_90: mra-codegen/tuned/sm_90.json") && out.contains("no tuned defaults for gfx90a"), "{out}");
    assert_eq!(out.matches("1e-10").count(), 1, "the tolerances once: {out}");
    // `levels L4`: the schedule and a table: a row of archs that run L4 at every K, and the
    // short reason where an arch has no FP64 matrix cores.
    let o = mra_bench(&["levels", "L4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let l4 = stdout(&o);
    assert!(l4.contains("cache_read(B, shared)") && l4.contains("1e-10") && !l4.contains("K none"), "{l4}");
    assert!(l4.lines().any(|l| l.trim_start().starts_with("gfx90a gfx942 ") && l.contains(" 1-32 ")), "{l4}");
    assert!(l4.lines().any(|l| l.trim_start().starts_with("gfx1100 gfx1151 gfx1201 ") && l.contains("no f64 matrix cores")), "{l4}");
    // fused-split runs at K = 32 on sm_90 only; elsewhere its reason names sm_90, not cp.async.
    let split = stdout(&mra_bench(&["levels", "fused-split"]));
    assert!(split.lines().any(|l| l.trim_start().starts_with("sm_90 ") && l.contains(" 32 ")), "{split}");
    assert!(split.lines().any(|l| l.trim_start().starts_with("sm_80 sm_86 sm_89 ") && l.contains("NVIDIA sm_90 only")), "{split}");
    assert!(!split.contains("cp.async only"), "{split}");
    // A level's tuned defaults, as the data file has them (the file, read here, is the truth).
    let pipe = stdout(&mra_bench(&["levels", "fused-pipe", "--arch", "sm_90"]));
    let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../mra-codegen/tuned/sm_90.json")).unwrap()).unwrap();
    let k10 = file["entries"].as_array().unwrap().iter().find(|e| e["level"] == "fused-pipe" && e["k"].as_array().unwrap().contains(&10.into())).expect("fused-pipe K=10 in sm_90.json");
    for (name, value) in k10["config"].as_object().unwrap() {
        assert!(pipe.lines().any(|l| l.contains("f64 K=10:") && l.contains(&format!("{name}={value}"))), "{name}={value}: {pipe}");
    }
    assert!(pipe.contains("parameters (default; choices): threads=128 [128, 256, 384, 416]"), "{pipe}");
    let gfx = stdout(&mra_bench(&["levels", "--arch", "gfx90a"]));
    assert!(gfx.contains("no tuned defaults for gfx90a"), "{gfx}");
    assert_clean_error(&["levels", "L99"], "unknown level `L99`");
    let o = mra_bench(&["levels", "--json", "--arch", "gfx942"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("levels --json is JSON");
    assert!(v.as_array().unwrap().len() >= 4);
    let l4 = v.as_array().unwrap().iter().find(|l| l["name"] == "L4-mma").expect("L4 in JSON");
    let f32_support = l4["support"].as_array().unwrap().iter().find(|s| s["dtype"] == "f32").unwrap();
    assert_eq!((f32_support["ks"].as_str(), f32_support["reason"].as_str()), (Some("none"), Some("no f32 matrix cores")));
}

#[test]
fn bad_input_is_one_clear_line_never_a_panic() {
    assert_clean_error(&["--arch", "sm_90", "-K", "0", "--emit-src"], "K=0 is out of range");
    assert_clean_error(&["--arch", "sm_90", "-K", "33", "--emit-src"], "K=33 is out of range");
    assert_clean_error(&["--arch", "sm_99", "--emit-src"], "invalid value 'sm_99' for '--arch <ARCH>' [possible values: sm_80");
    assert_clean_error(&["--arch", "sm_90", "-l", "9", "--emit-src"], "unknown level `9`");
    assert_clean_error(&["-K", "16", "--emit-src"], "--emit-src needs --arch");
    assert_clean_error(&["--arch", "sm_90", "--dtype", "f8", "--emit-src"], "invalid value 'f8' for '--dtype <DTYPE>' [possible values: f64, f32, f16, bf16]");
    assert_clean_error(&["--arch", "sm_90", "--dtype", "f16", "--emit-src"], "not for sm_90");
    assert_clean_error(&["--arch", "gfx1100", "-l", "3", "--dtype", "f16", "--emit-src"], "thread-mapped");
    assert_clean_error(&["-N", "0"], "-N must be at least 1");
    assert_clean_error(&["-M", "0"], "-M must be at least 1");
    assert_clean_error(&["-n", "0"], "-n must be at least 1");
    assert_clean_error(&["-s", "0"], "-s must be at least 1");
    assert_clean_error(&["validate", "-K", "0"], "K=0 is out of range");
    assert_clean_error(&["-K", "6,8", "-n", "1"], "-K takes one K here (got 6,8); a K list is for --emit-src and --compile-only");
    assert_clean_error(&["-o", "out.cu", "-K", "8"], "the following required arguments were not provided: --emit-src");
    assert_clean_error(&["--bogus"], "unexpected argument '--bogus' found");
    assert_clean_error(&["validate", "-N", "1,x"], "`x` is not a non-negative integer");
    // No AMD GPU here: with ROCm installed the HIP runtime says it sees none, without ROCm
    // that the runtime is missing; either way one line about the HIP runtime.
    assert_clean_error(&["--arch", "gfx90a", "-K", "16"], "HIP runtime");
    // Run mode picks the compiler with --compiler too, refused before any GPU is looked for.
    assert_clean_error(&["--compiler", "gcc", "-K", "8"], "invalid value 'gcc' for '--compiler <COMPILER>' [possible values: hiprtc, clang, nvrtc]");
    assert_clean_error(&["--arch", "gfx90a", "--compiler", "nvrtc"], "--compiler nvrtc compiles CUDA for NVIDIA archs");
    assert_clean_error(&["--arch", "sm_90", "--compiler", "hiprtc"], "--compiler hiprtc compiles HIP for AMD archs");
}

#[test]
fn without_a_driver_the_error_names_the_library_and_suggests_emit_src() {
    if mra_runtime::cuda::probe_driver().is_ok() {
        println!("SKIPPED: this machine has an NVIDIA driver; the no-driver message cannot be observed");
        return;
    }
    assert_clean_error(&["-K", "8", "-n", "1"], "no GPU found: no NVIDIA driver (libcuda.so.1)");
    let o = mra_bench(&["-K", "8", "-n", "1"]);
    let err = stderr(&o);
    assert!(err.contains("libcuda.so") && err.contains("--emit-src"), "{err}");
    // validate and sweep look for a GPU the same way (NVIDIA, then AMD) and say so alike.
    for args in [&["validate", "-K", "6", "-N", "1"][..], &["sweep", "-K", "6", "--no-peak"]] {
        assert_clean_error(args, "no GPU found: no NVIDIA driver (libcuda.so.1)");
    }
}

#[test]
fn validate_emulate_says_what_is_missing() {
    // No clang++ where MRA_CLANG points: one line naming what to install.
    let o = Command::new(env!("CARGO_BIN_EXE_mra-bench"))
        .args(["validate", "--arch", "gfx90a", "--emulate", "-K", "5", "-l", "3"])
        .env("MRA_KERNEL_CACHE", "off")
        .env("MRA_CLANG", "/nonexistent/clang++")
        .output()
        .expect("run mra-bench");
    let err = stderr(&o);
    assert!(!o.status.success() && !err.contains("panicked"), "{err}");
    assert!(err.contains("--emulate needs clang++") && err.contains("libclang-rt-19-dev"), "{err}");
    assert_eq!(err.lines().filter(|l| l.contains("error")).count(), 1, "{err}");
    assert_clean_error(&["validate", "--arch", "sm_90", "--emulate", "-K", "5"], "sm_90 is NVIDIA");
    let o = mra_bench(&["validate", "--emulate", "-K", "5"]);
    assert!(!o.status.success() && stderr(&o).contains("--arch"), "{}", stderr(&o));
}

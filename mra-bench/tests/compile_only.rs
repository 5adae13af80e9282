//! `mra-bench --compile-only` end to end, without a GPU: every arch of the table compiles a
//! level with the compiler found and reports plausible resources, occupancy and matrix-
//! instruction counts; forced compilers that cannot do an arch are refused in one line; and
//! run mode on AMD says in one line that the HIP runtime sees no GPU.
//!
//! Toolchain-dependent tests are `#[ignore]`d, so `cargo test` counts them as ignored; run them
//! with `cargo test -- --include-ignored` (`.ci/run` does). They print `SKIPPED: ...` when a
//! compiler is missing, unless `MRA_REQUIRE_TOOLCHAINS=1` (as `.ci/run` sets): then they fail.

use mra_runtime::cuda::nvrtc::Nvrtc;
use mra_runtime::hip::clang::Clang;
use mra_runtime::hip::hiprtc::Hiprtc;
use mra_runtime::hip::runtime;
use serde_json::Value;
use std::process::{Command, Output};

use mra_tests::require;

fn mra_bench_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mra-bench"));
    cmd.args(args).env("MRA_KERNEL_CACHE", "off");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run mra-bench")
}

fn mra_bench(args: &[&str]) -> Output {
    mra_bench_env(args, &[])
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The command failed with exactly one line on stderr, naming `needle`, and did not panic.
fn assert_one_line_error(o: &Output, args: &[&str], needle: &str) {
    let err = text(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded: {}", text(&o.stdout));
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.contains(needle), "{args:?}: expected `{needle}` in: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: expected one line: {err}");
    assert!(err.starts_with("mra-bench: error: "), "{args:?}: {err}");
}

/// The one JSON object `--compile-only --json` prints for one level.
fn compile_json(arch: &str, level: &str) -> Value {
    let args = ["--arch", arch, "-K", "16", "-l", level, "--compile-only", "--json"];
    let o = mra_bench(&args);
    assert!(o.status.success(), "{args:?} failed: {}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{args:?}: one object expected: {out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"))
}

fn num(v: &Value, path: &str) -> f64 {
    let mut cur = v;
    for key in path.split('.') {
        cur = cur.get(key).unwrap_or_else(|| panic!("no `{path}` in {v}"));
    }
    cur.as_f64().unwrap_or_else(|| panic!("`{path}` is not a number in {v}"))
}

#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn amd_archs_report_resources_occupancy_and_matrix_counts() {
    let Some(clang) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let hiprtc = Hiprtc::load().ok();
    let objdump = mra_runtime::hip::report::Objdump::find().is_ok();
    for arch in ["gfx90a", "gfx942", "gfx1100", "gfx1151", "gfx1201"] {
        let v = compile_json(arch, "3");
        let what = format!("{arch}: {v}");
        assert_eq!(v["vendor"], "amd", "{what}");
        assert_eq!(v["level"], "L3-regblk", "{what}");
        assert_eq!(v["kernel"], "mra_l3_regblk_k16_f64", "{what}");
        // The compiler is named with its version: hiprtc where this ROCm supports the arch.
        let compiler = v["compiler"].as_str().unwrap();
        match &hiprtc {
            Some(h) if h.supports(arch) => assert!(compiler.starts_with("hiprtc "), "{what}"),
            _ => assert_eq!(compiler, clang.describe(), "{what}"),
        }
        let wave = if arch.starts_with("gfx9") { 64.0 } else { 32.0 };
        assert_eq!(num(&v, "resources.wavefront_size"), wave, "{what}");
        let vgprs = num(&v, "resources.vgpr_count");
        assert!(vgprs > 0.0 && vgprs <= 512.0, "{what}");
        assert!(num(&v, "resources.sgpr_count") > 0.0, "{what}");
        assert!(num(&v, "resources.agpr_count") >= 0.0, "{what}");
        // L3 stages B and the output rows in LDS.
        assert!(num(&v, "resources.lds_bytes") > 0.0, "{what}");
        assert_eq!(num(&v, "resources.scratch_bytes"), 0.0, "L3 does not spill at K=16: {what}");
        let per_simd = num(&v, "occupancy.waves_per_simd");
        assert!(per_simd > 0.0 && per_simd <= num(&v, "occupancy.max_waves_per_simd"), "{what}");
        assert_eq!(num(&v, "occupancy.waves_per_workgroup"), 128.0 / wave, "{what}");
        assert!(v["occupancy"]["limited_by"].is_string(), "{what}");
        if objdump {
            // Counted in the disassembly: L3 is plain FMA code.
            assert_eq!((num(&v, "matrix.mfma"), num(&v, "matrix.wmma")), (0.0, 0.0), "{what}");
        } else {
            assert!(v["matrix_note"].as_str().unwrap().contains("not counted"), "{what}");
        }
    }
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; .ci/run does)"]
fn nvidia_archs_report_registers_shared_memory_and_occupancy() {
    let Some(nvrtc) = require("NVRTC", Nvrtc::load()) else { return };
    for arch in ["sm_80", "sm_90"] {
        let v = compile_json(arch, "3");
        let what = format!("{arch}: {v}");
        assert_eq!(v["vendor"], "nvidia", "{what}");
        assert_eq!(v["compiler"], format!("NVRTC {}.{} with the ptxas report", nvrtc.version.0, nvrtc.version.1), "{what}");
        let regs = num(&v, "resources.registers");
        assert!(regs > 0.0 && regs <= 255.0, "{what}");
        assert!(num(&v, "resources.shared_bytes") > 0.0, "{what}");
        assert_eq!(num(&v, "resources.spill_store_bytes"), 0.0, "{what}");
        let blocks = num(&v, "occupancy.blocks_per_sm");
        assert!((1.0..=32.0).contains(&blocks), "{what}");
        assert_eq!(num(&v, "occupancy.warps_per_sm"), blocks * 4.0, "{what}");
        assert!(num(&v, "occupancy.occupancy") <= 1.0, "{what}");
        // DMMA/HMMA are counted where cuobjdump or nvdisasm is on PATH, else said not to be.
        match v["matrix"].as_object() {
            Some(m) => assert_eq!(m["dmma"], 0, "L3 holds no DMMA: {what}"),
            None => assert!(v["matrix_note"].as_str().unwrap().starts_with("not counted"), "{what}"),
        }
    }
}

/// nvdisasm or cuobjdump as `--compile-only` finds it: `$MRA_CUOBJDUMP`, else on PATH.
fn sass_tool() -> Result<std::path::PathBuf, String> {
    if let Some(p) = std::env::var_os("MRA_CUOBJDUMP").filter(|v| !v.is_empty()) {
        return Ok(p.into());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["nvdisasm", "cuobjdump"]
        .iter()
        .find_map(|name| std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file()))
        .ok_or_else(|| "no nvdisasm or cuobjdump on PATH and MRA_CUOBJDUMP unset (`pip install nvidia-cuda-nvdisasm`)".into())
}

/// With nvdisasm present, the SASS of the FP64 matrix-core levels holds DMMA instructions and
/// the thread-mapped level none. Per pass an 8-row tile does (K/4 k-steps) x (K/8 column
/// fragments) m8n8k4 MMAs (the PTX ISA shape), so at K=16 the count is a positive multiple of
/// 3 x 4 x 2 = 24 however far the compiler unrolls the tile loop.
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn nvidia_compile_only_counts_dmma_in_the_sass() {
    let Some(_) = require("NVRTC", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm or cuobjdump", sass_tool()) else { return };
    for (level, tensorized) in [("4", true), ("7", true), ("3", false)] {
        let v = compile_json("sm_90", level);
        let dmma = num(&v, "matrix.dmma");
        if tensorized {
            assert!(dmma >= 24.0 && dmma % 24.0 == 0.0, "L{level} with {}: {dmma} DMMA: {v}", tool.display());
        } else {
            assert_eq!(dmma, 0.0, "L{level}: {v}");
        }
    }
}

#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn text_output_is_one_line_naming_the_compiler() {
    let Some(_) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let args = ["--arch", "gfx942", "-K", "16", "-l", "3", "--compile-only"];
    let o = mra_bench(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    for needle in ["L3-regblk K=16 f64 gfx942", " by clang", "VGPRs", "AGPRs", "SGPRs", "B LDS", "B scratch", "occupancy", "per SIMD of 8", "limited by"] {
        assert!(out.contains(needle), "`{needle}` missing from: {out}");
    }
}

#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn all_levels_one_object_each() {
    let Some(_) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let args = ["--arch", "gfx942", "-K", "16", "-l", "all", "--compile-only", "--json"];
    let o = mra_bench(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let levels = mra_codegen::levels::all();
    assert_eq!(out.lines().count(), levels.len(), "{out}");
    for (line, level) in out.lines().zip(&levels) {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["level"], level.name.as_str(), "{line}");
        // Compiled, refused by the planner with its reason, or nothing to compile (BLAS calls).
        assert!(v.get("resources").is_some() || v["error"].is_string() || v["note"].is_string(), "{line}");
        // A level that tensorizes onto MFMA holds MFMA instructions in the code object.
        let tensorized = mra_codegen::generate(level, mra_codegen::Request {
            k: 16,
            arch: mra_codegen::arch::find("gfx942").unwrap(),
            dtype: mra_codegen::DType::F64,
        })
        .map(|k| k.source.contains("__builtin_amdgcn_mfma"))
        .unwrap_or(false);
        if tensorized && v["matrix"].is_object() {
            assert!(num(&v, "matrix.mfma") > 0.0, "{} uses MFMA but none was found: {line}", level.name);
        }
    }
}

#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn a_k_list_reports_every_level_at_every_k_in_order() {
    let Some(_) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let args = ["--arch", "gfx942", "-K", "7,12,32", "-l", "3,fused", "--compile-only", "--json"];
    let o = mra_bench(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    // K by K, the levels in the order given.
    let expected = [(7, "L3-regblk"), (7, "fused"), (12, "L3-regblk"), (12, "fused"), (32, "L3-regblk"), (32, "fused")];
    assert_eq!(lines.len(), expected.len(), "{out}");
    for (v, (k, level)) in lines.iter().zip(expected) {
        assert_eq!((v["k"].as_u64(), v["level"].as_str()), (Some(k), Some(level)), "{v}");
        if level == "fused" && k == 32 {
            // Input and intermediate, 2·32³ doubles, are 512 KiB: past gfx942's 64 KiB of LDS.
            assert!(v["error"].as_str().unwrap().contains("shared memory"), "{v}");
            continue;
        }
        let ident = if level == "fused" { "fused" } else { "l3_regblk" };
        assert_eq!(v["kernel"].as_str(), Some(format!("mra_{ident}_k{k}_f64").as_str()), "{v}");
        if level == "fused" {
            // Each K compiled its own kernel: fused holds the tensor and one intermediate in LDS.
            assert!(num(v, "resources.lds_bytes") >= (2 * k * k * k * 8) as f64, "{v}");
        }
    }
}

#[test]
fn a_k_list_is_refused_with_source_and_must_compile_something() {
    let args = ["--arch", "sm_90", "-K", "10,12", "-l", "fused", "--source", "k.cu", "--compile-only"];
    assert_one_line_error(&mra_bench(&args), &args, "--source holds the kernel of one K: give one K (got -K 10,12)");
    let args = ["--arch", "sm_90", "-K", "10,10", "-l", "fused", "--compile-only"];
    assert_one_line_error(&mra_bench(&args), &args, "-K 10 is listed twice");
    let args = ["--arch", "sm_90", "-K", "30,31", "-l", "fused-split", "--compile-only"];
    assert_one_line_error(&mra_bench(&args), &args, "nothing to compile: no level chosen can be generated for K=30,31");
}

#[test]
#[ignore = "needs hiprtc (run with --include-ignored; .ci/run does)"]
fn hiprtc_is_refused_for_an_arch_it_would_abort_on() {
    // Debian's ROCm 5.2 hiprtc aborts the process for gfx942: it must be refused, not called.
    let Some(h) = require("hiprtc (libhiprtc or libamdhip64)", Hiprtc::load()) else { return };
    let args = ["--compiler", "hiprtc", "--arch", "gfx942", "-K", "16", "-l", "3", "--compile-only"];
    let o = mra_bench(&args);
    if h.supports("gfx942") {
        assert!(o.status.success(), "{}", text(&o.stderr));
    } else {
        assert_one_line_error(&o, &args, &format!("hiprtc {} is known to abort for gfx942; use clang", h.version_string()));
    }
}

#[test]
fn forced_compilers_that_cannot_do_the_arch_are_refused_in_one_line() {
    for (args, needle) in [
        (&["--compiler", "nvrtc", "--arch", "gfx90a", "--compile-only"][..], "--compiler nvrtc compiles CUDA for NVIDIA archs"),
        (&["--compiler", "clang", "--arch", "sm_90", "--compile-only"][..], "--compiler clang compiles HIP for AMD archs"),
        (&["--compiler", "hiprtc", "--arch", "sm_80", "--compile-only"][..], "--compiler hiprtc compiles HIP for AMD archs"),
        (&["--compiler", "gcc", "--arch", "gfx90a", "--compile-only"][..], "invalid value 'gcc' for '--compiler <COMPILER>'"),
        (&["-l", "3", "--compile-only"][..], "--compile-only needs --arch"),
        (&["--arch", "gfx90a", "-K", "33", "--compile-only"][..], "K=33 is out of range"),
    ] {
        assert_one_line_error(&mra_bench(args), args, needle);
    }
}

#[test]
fn run_mode_on_amd_without_a_gpu_is_one_line_about_the_hip_runtime() {
    if runtime::device_count().is_ok() {
        println!("SKIPPED: this machine has an AMD GPU; the no-GPU message cannot be observed");
        return;
    }
    let args = ["--arch", "gfx90a", "-K", "8", "-n", "1"];
    let o = mra_bench(&args);
    match require("the ROCm HIP runtime (libamdhip64)", runtime::probe_runtime()) {
        Some(lib) => {
            let needle = format!("ROCm HIP runtime loaded ({}) but it reports no AMD GPU (hipGetDeviceCount: ", lib.describe());
            assert_one_line_error(&o, &args, &needle);
            assert!(text(&o.stderr).contains("--compile-only and --emit-src work without one"), "{}", text(&o.stderr));
        }
        None => assert_one_line_error(&o, &args, "ROCm HIP runtime not found: could not load any of libamdhip64.so"),
    }
    // A library that is not there: one line naming what was tried.
    let o = mra_bench_env(&args, &[("MRA_HIP_RUNTIME", "/nonexistent/libamdhip64.so.6")]);
    assert_one_line_error(&o, &args, "ROCm HIP runtime not found: could not load any of /nonexistent/libamdhip64.so.6");
    // Without --arch and without an NVIDIA driver, both are named in the first of (at most
    // three) lines; the others say what works without a GPU and how to point at a driver.
    if mra_runtime::cuda::probe_driver().is_err() {
        let args = ["-K", "8", "-n", "1"];
        let o = mra_bench(&args);
        let err = text(&o.stderr);
        assert!(!o.status.success() && err.lines().count() <= 3, "{err}");
        let first = err.lines().next().unwrap_or_default();
        assert!(first.starts_with("mra-bench: error: no GPU found: no NVIDIA driver (libcuda.so.1)") && first.contains("HIP runtime"), "{err}");
    }
}

/// What a HIP run loads: the level compiled by the compiler the run picks (hiprtc where this
/// ROCm supports the arch, else clang), through the kernel cache; the second compile is a
/// cache hit with the same code object, and the kernel's resources come from its metadata.
#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn hip_runs_compile_through_the_kernel_cache() {
    use mra_runtime::hip::compile::{AmdCompiler, Choice};
    let Some(_) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let dir = std::env::temp_dir().join(format!("mra-hip-cache-test-{}", std::process::id()));
    let cache = mra_runtime::KernelCache::at(&dir);
    for arch in ["gfx90a", "gfx942"] {
        let request = mra_codegen::Request { k: 6, arch: mra_codegen::arch::find(arch).unwrap(), dtype: mra_codegen::DType::F64 };
        let kernel = mra_codegen::generate(&mra_codegen::levels::find("L4").unwrap(), request).unwrap();
        let compiler = AmdCompiler::choose(arch, Choice::Auto).unwrap();
        let first = compiler.compile_cached(&kernel.source, &kernel.entry, arch, &cache).unwrap();
        let again = compiler.compile_cached(&kernel.source, &kernel.entry, arch, &cache).unwrap();
        assert!(!first.from_cache && again.from_cache, "{arch}: {} then {}", first.from_cache, again.from_cache);
        assert_eq!(first.code_object, again.code_object, "{arch}");
        assert!(mra_runtime::hip::is_amdgpu_elf(&first.code_object), "{arch}");
        assert_eq!(first.compiler, compiler.describe(), "{arch}");
        let r = again.resources.unwrap_or_else(|| panic!("{arch}: no metadata for {}", kernel.entry));
        assert!(r.vgpr_count > 0 && r.wavefront_size == 64 && !r.spills(), "{arch}: {r:?}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

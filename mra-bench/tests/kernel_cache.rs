//! Issue 49, items 3 and 5: every kind of kernel cache entry is checked before use. A damaged
//! one (truncated, emptied, garbage, not executable, missing beside its sibling) is one warning
//! line, removed with the other entries of its compile, built again, and the result is right.
//!
//! Toolchain tests: `#[ignore]`d, run with `--include-ignored` (`.ci/run` does); they print
//! `SKIPPED: ...` when the toolchain is missing, unless MRA_REQUIRE_TOOLCHAINS=1.

use mra_codegen::{arch, levels, DType, Request};
use mra_runtime::cuda::nvrtc::Nvrtc;
use mra_runtime::emulate::compile::HostClang;
use mra_runtime::KernelCache;
use mra_tests::require;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mra-bench-kernel-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The one file in `dir` whose name ends in `ext`.
fn entry(dir: &Path, ext: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(ext)).collect();
    assert_eq!(found.len(), 1, "one {ext} entry in {}: {found:?}", dir.display());
    found[0].clone()
}

/// Ways a file in the cache gets damaged.
fn damages() -> Vec<(&'static str, fn(&Path))> {
    vec![
        ("truncated", |p| {
            let b = std::fs::read(p).unwrap();
            std::fs::write(p, &b[..b.len() / 2]).unwrap()
        }),
        ("empty", |p| std::fs::write(p, b"").unwrap()),
        ("garbage", |p| std::fs::write(p, vec![0x5a; std::fs::read(p).unwrap().len()]).unwrap()),
        ("not executable", |p| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap()),
        ("missing", |p| std::fs::remove_file(p).unwrap()),
    ]
}

/// `validate --emulate` with a cache whose executable is damaged: before, every rerun failed
/// (SIGSEGV, "Exec format error", "Permission denied"); now one warning, a rebuild, PASS.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn a_damaged_emulator_executable_is_rebuilt_and_validates() {
    let Some(_) = require("clang++ with AddressSanitizer", HostClang::find()) else { return };
    let dir = scratch("emu");
    let cache = dir.join("cache");
    let validate = || {
        let o = Command::new(env!("CARGO_BIN_EXE_mra-bench"))
            .args(["validate", "--emulate", "--arch", "gfx90a", "-l", "3", "-K", "4", "-N", "2"])
            .env("MRA_KERNEL_CACHE", &cache)
            .env("MRA_TUNING_DB", dir.join("none.json"))
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (code, out, err) = validate();
    assert_eq!(code, Some(0), "{out}{err}");
    let exe = entry(&cache, ".emu");
    for (how, damage) in damages() {
        for file in [exe.clone(), exe.with_extension("emu.sum")] {
            if how == "not executable" && file != exe || how == "missing" && file == exe {
                continue; // a sum is not run; a missing executable is a plain miss
            }
            damage(&file);
            let (code, out, err) = validate();
            let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
            assert_eq!(code, Some(0), "{how} {}: {out}{err}", file.display());
            assert!(out.contains("PASS"), "{how}: {out}");
            assert_eq!(warnings.len(), 1, "{how} {}: one warning: {err}", file.display());
            assert!(warnings[0].contains(&exe.display().to_string()) && warnings[0].contains("damaged") && warnings[0].contains("compiling again"), "{how}: {err}");
            assert!(err.contains("built for the CPU in"), "{how}: built again: {err}");
            // Rebuilt: the next run uses it without a word.
            let (code, out, err) = validate();
            assert!(code == Some(0) && out.contains("PASS") && !err.contains("warning"), "{how}: {out}{err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A cubin whose `.log` is damaged or missing: before, the cached cubin was used with an empty
/// log, so its register and spill report was gone for good (`tune` recorded `"resources":
/// null`) though the warning said "compiling again". Now both are evicted and compiled again.
#[test]
#[ignore = "needs NVRTC (run with --include-ignored; .ci/run does)"]
fn a_damaged_or_missing_compile_log_is_compiled_again_with_its_report() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let dir = scratch("nvrtc");
    let cache = KernelCache::at(&dir);
    let kernel = mra_codegen::generate(&levels::find("L3-regblk").unwrap(), Request { k: 8, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap();
    let compile = || nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap();
    let first = compile();
    let report = first.resources.clone().expect("a ptxas report");
    assert!(compile().from_cache);
    let log = entry(&dir, ".log");
    let mut warned = 0;
    for (how, damage) in damages() {
        if how == "not executable" {
            continue; // a log is read, not run
        }
        damage(&log);
        let again = compile();
        warned += 1;
        assert!(!again.from_cache, "{how}: compiled again");
        assert_eq!(again.resources.as_ref(), Some(&report), "{how}: the register report is back");
        assert_eq!(again.cubin, first.cubin, "{how}");
        let w = cache.warnings();
        assert_eq!(w.len(), warned, "{how}: one warning: {w:?}");
        assert!(w[warned - 1].contains(".cubin") && w[warned - 1].contains("its .log"), "{how}: {w:?}");
        let cached = compile();
        assert!(cached.from_cache && cached.resources.as_ref() == Some(&report), "{how}: stored again, with its log");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

//! `--source FILE`: a hand-edited kernel validated (and, on a GPU, timed) in place of the
//! level's generated one. Without a GPU: the refusals, and the whole path on the CPU wave
//! emulator, where an edit that breaks the kernel must fail validation.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The binary with no kernel cache and a tuning database that does not exist.
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench"))
        .env("MRA_KERNEL_CACHE", "off")
        .env("MRA_TUNING_DB", "/nonexistent/mra-tuning.json")
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("run mra-bench")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mra-bench-hand-source-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The generated source of `level` at `k` for `arch`, written to `dir/name`.
fn emit(dir: &std::path::Path, name: &str, level: &str, k: &str, arch: &str) -> PathBuf {
    let p = dir.join(name);
    let o = run(&["--emit-src", "-l", level, "-K", k, "--arch", arch, "--untuned", "-o", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    p
}

/// Exit status `code`, no panic, and one `mra-bench: error:` line naming `needle`.
#[track_caller]
fn refused(o: &Output, code: i32, needle: &str) {
    let err = text(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert_eq!(lines.len(), 1, "one line on stderr, got: {lines:#?}");
    assert!(lines[0].starts_with("mra-bench: error: ") && lines[0].contains(needle), "expected `{needle}` in: {}", lines[0]);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_source_that_cannot_be_the_levels_kernel_is_refused_before_any_gpu_work() {
    let dir = scratch("refusals");
    let missing = dir.join("missing.cu");
    let o = run(&["-l", "fused-pipe", "-K", "10", "--arch", "sm_90", "--source", missing.to_str().unwrap()]);
    refused(&o, 1, &format!("--source {}: cannot read it (", missing.display()));
    // Another K's kernel: with --arch the run checks the entry before it looks for a GPU.
    let k12 = emit(&dir, "k12.cu", "fused-pipe", "12", "sm_90");
    let o = run(&["-l", "fused-pipe", "-K", "10", "--arch", "sm_90", "--source", k12.to_str().unwrap()]);
    refused(&o, 1, "does not define mra_fused_pipe_k10_f64, the kernel of fused-pipe at K=10 (f64, sm_90); start from `mra-bench --emit-src -l fused-pipe -K 10 --arch sm_90 --dtype f64 -o ");
    // The same in validate, on the emulator (the file is checked before any kernel is built).
    let l3 = emit(&dir, "l3.hip", "L3", "5", "gfx90a");
    let o = run(&["validate", "--emulate", "--arch", "gfx90a", "-l", "L3", "-K", "6", "-N", "1", "--source", l3.to_str().unwrap()]);
    refused(&o, 1, "does not define mra_l3_regblk_k6_f64");
    // One kernel: one level, one K, one dtype; `-l best` names none.
    let o = run(&["validate", "-l", "L3,fused", "-K", "5", "--source", l3.to_str().unwrap()]);
    refused(&o, 2, "--source replaces one kernel: give one level, one K and one dtype (got -l L3,fused, -K 5, --dtype f64)");
    let o = run(&["validate", "-l", "L3", "-K", "5,6", "--source", l3.to_str().unwrap()]);
    refused(&o, 2, "give one level, one K and one dtype");
    let o = run(&["-l", "best", "-K", "5", "--source", l3.to_str().unwrap()]);
    refused(&o, 2, "--source replaces one level's kernel: name the level with -l");
    // A library level has no kernel to replace: one line, exit 2, before any GPU or compiler,
    // in every command that takes --source (L6-kron's Kronecker-building helper is no transform).
    for args in [
        vec!["validate", "-l", "L6", "-K", "5", "-N", "1"],
        vec!["validate", "--emulate", "--arch", "gfx90a", "-l", "L6", "-K", "5", "-N", "1"],
        vec!["validate", "-l", "vendor-3gemm", "-K", "5"],
        vec!["-l", "L6", "-K", "5"],
        vec!["-l", "vendor-3gemm", "-K", "5", "--arch", "sm_90"],
        vec!["--compile-only", "--arch", "gfx90a", "-l", "L6", "-K", "5"],
    ] {
        let o = run(&[&args[..], &["--source", l3.to_str().unwrap()]].concat());
        refused(&o, 2, "is a library level (vendor BLAS calls): it has no generated kernel to replace");
        assert!(!text(&o.stderr).contains("GPU"), "{args:?}: {}", text(&o.stderr));
    }
    // A refusal's advice never writes over the file given (which may hold the user's edits).
    let o = run(&["-l", "fused-pipe", "-K", "10", "--arch", "sm_90", "--source", k12.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert!(err.contains(&format!("-o {}`", dir.join("k12.generated.cu").display())) && !err.contains(&format!("-o {}`", k12.display())), "{err}");
    // It replaces the kernel of a run, not what --emit-src or --compile-only print.
    let o = run(&["-l", "L3", "-K", "5", "--arch", "gfx90a", "--emit-src", "--source", l3.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("cannot be used with"), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The emitted source validates as the generated kernel does; an edit that changes the
/// results fails validation, exit 1: the file, not the generated kernel, is what ran.
#[test]
fn an_edited_kernel_is_what_validate_runs_on_the_emulator() {
    if mra_tests::require("clang++ with AddressSanitizer (the CPU wave emulator)", mra_runtime::emulate::HostClang::find()).is_none() {
        return;
    }
    let dir = scratch("emulate");
    let src = emit(&dir, "l3.hip", "L3", "5", "gfx90a");
    let path = src.to_str().unwrap();
    let args = ["validate", "--emulate", "--arch", "gfx90a", "-l", "L3", "-K", "5", "-N", "1,3", "--source", path];
    let o = run(&args);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}{out}", text(&o.stderr));
    assert_eq!(out.matches(&format!("level=L3-regblk source={path} ")).count(), 2, "{out}");
    assert_eq!(out.matches(" PASS").count(), 2, "{out}");
    // B doubled where the kernel stages it: every output is 8 times the reference.
    let body = std::fs::read_to_string(&src).unwrap();
    let staged = "= b[e];";
    assert_eq!(body.matches(staged).count(), 1, "the generated L3 stages B once: {body}");
    std::fs::write(&src, body.replace(staged, "= 2.0 * b[e];")).unwrap();
    let o = run(&[&args[..], &["--json"]].concat());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{}{out}", text(&o.stderr));
    for line in out.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(case["pass"], false, "{line}");
        assert_eq!(case["source"], path, "{line}");
        assert!(case["max_rel_err"].as_f64().unwrap() > 6.0, "{line}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On the emulator the HIP prelude is replaced, so an edit there is refused, naming the lines
/// (a syntax error in it, or `mra_block_id()` returning 0, used to PASS); an error in the
/// kernel itself is clang's, at the file's own line, in one line per case or whole when the
/// build stops the command. No temporary file is named.
#[test]
fn on_the_emulator_an_edited_prelude_is_refused_and_a_syntax_error_names_the_files_line() {
    if mra_tests::require("clang++ with AddressSanitizer (the CPU wave emulator)", mra_runtime::emulate::HostClang::find()).is_none() {
        return;
    }
    let dir = scratch("emulate-errors");
    let src = emit(&dir, "l3.hip", "L3", "5", "gfx90a");
    let path = src.to_str().unwrap();
    let body = std::fs::read_to_string(&src).unwrap();
    let line_of = |needle: &str| body[..body.find(needle).unwrap()].matches('\n').count() + 1;
    let block = "return (int)__builtin_amdgcn_workgroup_id_x();";
    let args = ["validate", "--emulate", "--arch", "gfx90a", "-l", "L3", "-K", "5", "-N", "3", "--source", path];
    for edited in [body.replace(block, "return 0;"), body.replace(block, "return (int)__builtin_amdgcn_workgroup_id_x()")] {
        std::fs::write(&src, &edited).unwrap();
        let o = run(&args);
        refused(&o, 1, &format!("--source {path}: line {} differs from the generated one in the HIP prelude (lines ", line_of(block)));
        assert!(text(&o.stderr).contains("which the emulator replaces with its own CPU definitions"), "{}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "no case ran: {}", text(&o.stdout));
    }
    let zero = "for (int j = 0; j < K; ++j) acc[j] = 0.0;";
    std::fs::write(&src, body.replace(zero, "for (int j = 0; j < K; ++j) acc[j] = 0.0 +;")).unwrap();
    let o = run(&args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let first = err.lines().find(|l| l.starts_with("mra-bench: error: ")).unwrap_or_default();
    let at = format!("{path}:{}:", line_of(zero));
    assert!(first.contains("could not compile the emulated kernel mra_l3_regblk_k5_f64 (exit status: 1): ") && first.contains(&at) && first.contains("error: expected expression"), "{err}");
    assert!(!err.contains("exit status exit status") && !err.contains(".cpp") && !err.contains(".tmp"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--compile-only --source`: the file, not the generated kernel, is what NVRTC compiles, and
/// the report says so. Needs NVRTC (toolchain test: `cargo test -- --include-ignored`).
#[test]
#[ignore]
fn compile_only_compiles_and_reports_the_hand_edited_kernel() {
    if mra_tests::require("NVRTC", mra_runtime::cuda::nvrtc::Nvrtc::load()).is_none() {
        return;
    }
    let dir = scratch("compile-only");
    let src = emit(&dir, "fp10.cu", "fused-pipe", "10", "sm_90");
    let path = src.to_str().unwrap();
    let args = ["--compile-only", "--arch", "sm_90", "-l", "fused-pipe", "-K", "10", "--untuned", "--source", path];
    let o = run(&args);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(out.starts_with("fused-pipe K=10 f64 sm_90: mra_fused_pipe_k10_f64 by NVRTC"), "{out}");
    // The note names the file, then the configuration the level is launched with.
    assert!(out.contains(&format!("(kernel source from {path}, hand-edited; config ")) && out.trim_end().ends_with("(tuned defaults, mra-codegen/tuned/sm_90.json))"), "{out}");
    // A static array of 8 KB in the file: its shared memory grows by as much.
    let shared = |o: &Output| -> u64 {
        let v: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
        v["resources"]["shared_bytes"].as_u64().unwrap()
    };
    let before = shared(&run(&[&args[..], &["--json"]].concat()));
    let body = std::fs::read_to_string(&src).unwrap();
    let entry = "mra_fused_pipe_k10_f64(";
    let at = body.find(entry).unwrap();
    let open = at + body[at..].find('{').unwrap() + 1;
    let edited = format!("{}\n    __shared__ double mra_edit[1024]; if (nfuncs < 0) mra_edit[threadIdx.x] = 1.0, c[0] = mra_edit[threadIdx.x ^ 1];{}", &body[..open], &body[open..]);
    std::fs::write(&src, edited).unwrap();
    let o = run(&[&args[..], &["--json"]].concat());
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(shared(&o), before + 8192, "{}", text(&o.stdout));
    let v: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    assert!(v["note"].as_str().unwrap().starts_with(&format!("kernel source from {path}, hand-edited; config ")), "{v}");
    // -l all has no one kernel to replace.
    let o = run(&["--compile-only", "--arch", "sm_90", "-l", "all", "-K", "10", "--source", path]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--source replaces one level's kernel: give one level (got -l all)"), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

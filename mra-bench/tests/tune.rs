//! `mra-bench tune` without a GPU, and the tuned configuration in the other commands: the
//! space listing, offline compile-only pruning into the database, `--emit-src` with a tuned
//! configuration and `--untuned`, `-l best`, and one-line errors.

use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Output};

fn mra_bench(args: &[&str], db: &PathBuf) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench"))
        .args(args)
        .env("MRA_KERNEL_CACHE", "off")
        .env("MRA_TUNING_DB", db)
        .output()
        .expect("run mra-bench")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("mra-bench-tune-{name}-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// A new, empty directory of this process under the temp directory (the test removes it).
fn empty_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mra-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn list_prints_parameters_constraints_and_candidates_per_k() {
    let o = mra_bench(&["tune", "--list", "-l", "fused", "-K", "16,20,32", "--arch", "sm_90"], &temp("list"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // stage_terms and restage_a (a rank sum's) multiply the declared product by 3 · 2; the
    // transform's candidates below take both at 0 only.
    assert!(out.contains("fused (10 parameters, 8640 combinations)"), "{out}");
    assert!(out.contains("stage_terms  [0, 2, 3] default 0"), "{out}");
    assert!(out.contains("restage_a    [0, 1] default 0"), "{out}");
    assert!(out.contains("pair_rows    [0, 1] default 0"), "{out}");
    // The arch's tuned defaults per K, as mra-codegen/tuned/sm_90.json lists them for fused.
    assert!(out.contains("sm_90    tuned defaults  K=16: -, K=20: threads=512, K=32: -"), "{out}");
    assert!(out.contains("constraint   pair_rows <= row_pairs"), "{out}");
    assert!(out.contains("coalesce_c   [0, 1] default 0"), "{out}");
    assert!(out.contains("pad_a        [0, 1, 2, 3, 4] default 4"), "{out}");
    assert!(out.contains("align_runs   [0, 1] default 0"), "{out}");
    assert!(out.contains("constraint   min_blocks * 2 * K * (K * (K + align_runs) + pad_a) * bytes <= shared"), "{out}");
    assert!(out.contains("constraint   align_runs <= K % 2"), "{out}");
    // K=20: 2·20·(400+pad)·8 > 227 KiB / 2, so min_blocks=2 goes; K=32 fits in no configuration.
    // At even K align_runs is 0 only (the same kernel either way); coalesce_c doubles the rest,
    // five pads (0 to 4) make 3 · 2 · 5 · 3 · 2 = 180 at K = 16, and pair_rows (sm_90's
    // m16n8k4 has row pairs) doubles that; swap_operands(1) adds 3 · 2 · 5 = 30 (pair_rows,
    // coalesce_c and unroll_k at 0) at K = 16 and 3 · 5 = 15 at K = 20.
    assert!(out.contains("sm_90    candidates  K=16: 390, K=20: 195, K=32: 0"), "{out}");
    // At odd K both layouts are candidates: at K=17 the largest configuration (min_blocks=2,
    // pad 4, runs 18 apart) needs 2·2·17·(17·18 + 4)·8 = 168640 B <= 227 KiB, so all 180 × 2 × 2
    // (align_runs, pair_rows), and 2 · 3 · 2 · 5 = 60 with swap_operands(1).
    let o = mra_bench(&["tune", "--list", "-l", "fused-pipe,fused", "-K", "17", "--arch", "sm_90"], &temp("list-odd"));
    let out = text(&o.stdout);
    assert!(o.status.success() && out.contains("fused-pipe (12 parameters") && out.contains("sm_90    candidates  K=17: 780"), "{out}");
    // With --fix the list counts what a run with it would try: threads=256 is one of fused's
    // three block sizes, each of which plans at K = 16 and 20, so a third of 390 and 195.
    let o = mra_bench(&["tune", "--list", "-l", "fused", "-K", "16,20,32", "--arch", "sm_90", "--fix", "threads=256"], &temp("list-fix"));
    let out = text(&o.stdout);
    assert!(o.status.success() && out.contains("sm_90    candidates with --fix threads=256  K=16: 130 of 390, K=20: 65 of 195, K=32: 0 of 0"), "{out}");
    // With --op, the candidates that lower the operation and its own tuned entries: the rank sum
    // takes stage_terms and restage_a (K = 22: restage_a(1) only, the third buffer does not fit)
    // and no coalesce_c or swap_operands; at K = 32 nothing of fused fits. By hand at K = 22:
    // 3 block sizes x 5 pads x 3 unroll_k x 2 pair_rows = 90, min_blocks 1 and align_runs 0
    // only (two 171 KB blocks do not fit; K is even), stage_terms 0 (not with restage_a(1)).
    let o = mra_bench(&["tune", "--list", "--op", "ranksum", "-l", "fused", "-K", "22,32", "--arch", "sm_90", "--fix", "restage_a=0"], &temp("list-op"));
    let out = text(&o.stdout);
    assert!(o.status.success() && out.contains("sm_90    candidates with --fix restage_a=0 of ranksum  K=22: 0 of 90, K=32: 0 of 0"), "{out}");
    assert!(out.contains("sm_90    tuned defaults  K=22: restage_a=1 threads=256, K=32: -"), "{out}");
}

#[test]
fn refuses_levels_without_parameters_and_bad_flags_in_one_line() {
    let db = temp("errors");
    for (args, needle, code) in [
        // Exit 2: a malformed command line (README: exit status); 1: nothing tuned yet.
        (vec!["tune", "-l", "L3", "--list"], "level L3-regblk declares no tunable parameters; levels that do: bound, L7-breg, fused", 2),
        (vec!["tune", "--strategy", "genetic", "--arch", "sm_90", "--compile-only"], "unknown --strategy `genetic`", 2),
        (vec!["tune", "--budget", "10 parsecs", "--arch", "sm_90", "--compile-only"], "--budget", 2),
        (vec!["tune", "--budget", "1e400h", "--arch", "sm_90", "--compile-only"], "--budget", 2),
        (vec!["tune", "--compile-only", "-K", "8"], "tune --compile-only needs --arch", 2),
        (vec!["--arch", "sm_90", "-K", "8", "-l", "best", "--emit-src"], "-l best: no tuned level at K=8", 1),
        (vec!["tune", "-l", "fused-cluster", "--fix", "bogus=1", "--arch", "sm_90", "--compile-only"], "--fix: level fused-cluster has no tunable parameter `bogus`", 2),
        (vec!["tune", "-l", "fused-cluster", "--fix", "async_exchange=2", "--arch", "sm_90", "--compile-only"], "async_exchange=2 is not among the declared choices [0, 1]", 2),
        (vec!["tune", "-l", "fused-cluster", "--fix", "cluster", "--arch", "sm_90", "--compile-only"], "--fix: `cluster` is not name=value", 2),
        (vec!["tune", "-l", "fused-cluster", "--fix", "bogus=1", "--list"], "--fix: level fused-cluster has no tunable parameter `bogus`", 2),
        // A name twice kept the last value silently; an empty --db failed after the work.
        (vec!["tune", "-l", "fused", "--fix", "threads=128,threads=256", "--list"], "--fix: `threads` is given twice (128 and 256); give each parameter once", 2),
        (vec!["tune", "-l", "L7", "-K", "6", "--arch", "gfx90a", "--compile-only", "--db", ""], "--db: the path is empty", 2),
        (vec!["tune", "-l", "L7", "--arch", "gfx90a", "--write-defaults", "x.json", "--db", " "], "--db: the path is empty", 2),
        // tune --op times on a GPU and prints an entry: no offline compile, no database.
        (vec!["tune", "--op", "ranksum", "-l", "fused", "-K", "10", "--arch", "sm_90", "--compile-only"], "tune --op times candidates on a GPU", 2),
        (vec!["tune", "--op", "general", "-l", "fused-pipe", "-K", "10", "--write-defaults", "x.json"], "it takes neither --compile-only nor --write-defaults", 2),
        (vec!["tune", "--op", "general", "-l", "fused-pipe", "-K", "10", "--dtype", "f32"], "tune --op tunes the f64 kernels", 2),
    ] {
        let o = mra_bench(&args, &db);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o.stderr));
        assert!(err.contains(needle) && !err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(err.lines().filter(|l| l.contains("error")).count(), 1, "{err}");
    }
}

fn record(level: &str, k: u32, config: Value, us: f64) -> Value {
    json!({
        "device": {"gpu": "NVIDIA H200", "arch": "sm_90", "driver": "CUDA driver 13000", "compiler": "NVRTC 13.0"},
        "level": level, "k": k, "dtype": "f64",
        "harness": {"nfuncs": 2048, "max_blocks": 512, "tasks": 100, "streams": 4, "reps": 3},
        "config": config,
        "outcome": {"status": "timed", "us_per_task": us, "copy_us_per_task": 28.0, "max_rel_err": 1e-15, "resources": null},
        "at": 1
    })
}

#[test]
fn emit_src_uses_the_tuned_configuration_for_the_arch_and_says_so() {
    let db = temp("emit");
    let records = json!({"version": 1, "records": [
        record("fused", 16, json!({"threads": 512, "pad_a": 1, "min_blocks": 2, "unroll_k": 1}), 29.5),
        record("L7-breg", 16, json!({"threads": 256, "min_blocks": 1, "unroll_k": 0}), 40.0),
        // Slower than the one above: never the one used.
        record("fused", 16, json!({"threads": 128, "pad_a": 0, "min_blocks": 1, "unroll_k": 0}), 35.0),
    ]});
    std::fs::write(&db, serde_json::to_vec(&records).unwrap()).unwrap();
    let tuned = mra_bench(&["--arch", "sm_90", "-K", "16", "-l", "fused", "--emit-src"], &db);
    assert!(tuned.status.success(), "{}", text(&tuned.stderr));
    let (src, err) = (text(&tuned.stdout), text(&tuned.stderr));
    assert!(err.contains("# fused K=16: tuned configuration min_blocks=2 pad_a=1 threads=512 unroll_k=1 (29.50 us/task when tuned on NVIDIA H200"), "{err}");
    assert!(src.contains("constexpr int THREADS = 512;"), "{src}");
    assert!(src.contains("__launch_bounds__(512, 2)"), "{src}");
    assert!(src.contains("constexpr int W_STRIDE = K2 + 1;"), "{src}");
    assert!(src.contains("#pragma unroll 1  // [levels/fused.rs"), "{src}");

    let plain = mra_bench(&["--arch", "sm_90", "-K", "16", "-l", "fused", "--emit-src", "--untuned"], &db);
    let src = text(&plain.stdout);
    assert!(plain.status.success() && !text(&plain.stderr).contains("tuned configuration"));
    assert!(src.contains("constexpr int THREADS = 256;") && src.contains("constexpr int W_STRIDE = K2 + 4;") && !src.contains("__launch_bounds__"), "{src}");

    // Another K, another arch: nothing tuned there, the defaults without a word.
    let other = mra_bench(&["--arch", "sm_80", "-K", "16", "-l", "fused", "--emit-src"], &db);
    assert!(other.status.success() && !text(&other.stderr).contains("tuned"), "{}", text(&other.stderr));

    let best = mra_bench(&["--arch", "sm_90", "-K", "16", "-l", "best", "--emit-src"], &db);
    assert!(best.status.success(), "{}", text(&best.stderr));
    assert!(text(&best.stderr).contains("-l best at K=16: fused is the fastest tuned level"), "{}", text(&best.stderr));
    assert!(text(&best.stdout).contains("mra_fused_k16_f64"));

    // Parameters the schedule declared after the record was tuned take their defaults, and the
    // message says so (fused-pipe's stack, persistent and swap_operands, persistent on at K = 20,
    // in a record without any of them).
    let old = json!({"version": 1, "records": [record("fused-pipe", 20, json!({"threads": 416, "pad_a": 4, "min_blocks": 1, "unroll_k": 0, "buffers": 3, "align_runs": 0, "pair_rows": 1, "fuse_k": 2, "bulk_copy": 1}), 77.0)]});
    std::fs::write(&db, serde_json::to_vec(&old).unwrap()).unwrap();
    let o = mra_bench(&["--arch", "sm_90", "-K", "20", "-l", "fused-pipe", "--emit-src"], &db);
    let (src, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success() && err.contains("; stack, persistent, swap_operands at their defaults (the record predates them); --untuned for the defaults"), "{err}");
    assert!(src.contains("persistent=1 stack=1 swap_operands=0 threads=416"), "{src}");

    // A configuration the schedule no longer declares is an error, not a silent default.
    let stale = json!({"version": 1, "records": [record("fused", 16, json!({"threads": 96, "pad_a": 1, "min_blocks": 1, "unroll_k": 0}), 1.0)]});
    std::fs::write(&db, serde_json::to_vec(&stale).unwrap()).unwrap();
    let o = mra_bench(&["--arch", "sm_90", "-K", "16", "-l", "fused", "--emit-src"], &db);
    assert!(!o.status.success() && text(&o.stderr).contains("no longer accepts"), "{}", text(&o.stderr));
    let _ = std::fs::remove_file(&db);
}

/// `tune --write-defaults`: the database's fastest timed configuration per level and K becomes
/// the arch's tuned-defaults file, as the parameters that differ from the schedule's defaults
/// (fused-pipe declares threads=128, pad_a=4, fuse_k=1, ... in levels/fused_pipe.rs); other
/// entries of an existing file stay; nothing to write is an error.
#[test]
fn write_defaults_turns_the_fastest_records_into_the_arch_file() {
    let db = temp("write-defaults-db");
    let dir = empty_dir("write-defaults");
    let out = dir.join("sm_90.json");
    let fast = json!({"threads": 256, "pad_a": 4, "min_blocks": 1, "buffers": 2, "stack": 1, "unroll_k": 0, "align_runs": 0, "pair_rows": 0, "fuse_k": 2, "bulk_copy": 1, "persistent": 0, "swap_operands": 1});
    let slow = json!({"threads": 128, "pad_a": 0, "min_blocks": 1, "buffers": 2, "stack": 1, "unroll_k": 0, "align_runs": 0, "pair_rows": 0, "fuse_k": 1, "bulk_copy": 0, "persistent": 0, "swap_operands": 0});
    let mut offline = record("fused-pipe", 12, slow.clone(), 0.0);
    offline["outcome"] = json!({"status": "compiled", "resources": null});
    // Offline (compile-only) results were never timed: not a tuned default.
    let records = json!({"version": 1, "records": [record("fused-pipe", 10, slow, 9.0), record("fused-pipe", 10, fast, 7.5), offline]});
    std::fs::write(&db, serde_json::to_vec(&records).unwrap()).unwrap();
    let db_arg = db.to_str().unwrap();
    let o = mra_bench(&["tune", "--write-defaults", out.to_str().unwrap(), "--arch", "sm_90", "-l", "fused-pipe", "-K", "10,12", "--db", db_arg], &db);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no timed f64 record on sm_90") && text(&o.stderr).contains("fused-pipe K=12"), "{}", text(&o.stderr));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(file["arch"], "sm_90");
    let entries = file["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{file}");
    assert_eq!(entries[0]["k"], json!([10]));
    assert_eq!(entries[0]["config"], json!({"threads": 256, "fuse_k": 2, "bulk_copy": 1, "swap_operands": 1}), "the differences from the schedule's defaults");
    assert!(entries[0]["source"].as_str().unwrap().starts_with("NVIDIA H200: 7.50 us/task (copy 28.00)"), "{file}");
    assert!(file["provenance"]["measured_on"].as_str().unwrap().contains("NVIDIA H200 (sm_90), harness -N 2048 -M 512 -s 4"), "{file}");
    // A second level, and fused-pipe timed in the API regime (one launch over a batch, µs per
    // launch): both merge in as entries of their regimes; the first entry and the file's
    // provenance stay.
    let provenance = file["provenance"].clone();
    let mut api = record("fused-pipe", 10, json!({"threads": 128, "pad_a": 4, "min_blocks": 1, "buffers": 3, "stack": 1, "unroll_k": 0, "align_runs": 0, "pair_rows": 0, "fuse_k": 1, "bulk_copy": 1, "persistent": 0, "swap_operands": 0}), 1080.0);
    api["harness"] = json!({"nfuncs": 268435, "max_blocks": usize::MAX, "tasks": 1, "streams": 1, "reps": 3, "stream_data": "private"});
    let records = json!({"version": 1, "records": [record("fused", 12, json!({"threads": 128, "pad_a": 4, "min_blocks": 1, "unroll_k": 0, "align_runs": 0, "coalesce_c": 0, "pair_rows": 1, "swap_operands": 0}), 5.0), api]});
    std::fs::write(&db, serde_json::to_vec(&records).unwrap()).unwrap();
    let o = mra_bench(&["tune", "--write-defaults", out.to_str().unwrap(), "--arch", "sm_90", "-l", "fused,fused-pipe", "-K", "10,12", "--db", db_arg], &db);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let entries: Vec<(&str, &Value, &str)> = file["entries"].as_array().unwrap().iter().map(|e| (e["level"].as_str().unwrap(), &e["k"], e["regime"].as_str().unwrap())).collect();
    assert_eq!(entries, [("fused", &json!([12]), "harness"), ("fused-pipe", &json!([10]), "harness"), ("fused-pipe", &json!([10]), "api")], "{file}");
    let api_entry = &file["entries"][2];
    assert_eq!(api_entry["config"], json!({"buffers": 3, "bulk_copy": 1}), "{file}");
    assert!(api_entry["source"].as_str().unwrap().contains("1080.00 us/task (copy 28.00), api: one launch over N = 268435"), "{file}");
    assert_eq!(file["provenance"], provenance, "the file's provenance stays");
    // Refusals: a file not named after its arch, no arch, nothing in the database.
    for (args, needle) in [
        (vec!["tune", "--write-defaults", "x.json", "--arch", "sm_90", "-l", "fused", "-K", "12"], "named after its arch (sm_90.json)"),
        (vec!["tune", "--write-defaults", "sm_90.json", "-l", "fused", "-K", "12"], "--write-defaults needs --arch"),
        (vec!["tune", "--write-defaults", out.to_str().unwrap(), "--arch", "sm_90", "-l", "fused", "-K", "8", "--db", db_arg], "nothing written to"),
    ] {
        let o = mra_bench(&args, &db);
        let err = text(&o.stderr);
        assert!(!o.status.success() && err.contains(needle) && err.lines().count() <= 2, "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&db);
}

#[test]
fn export_uses_the_tuned_configuration_and_best_level_for_the_arch() {
    let db = temp("export");
    let records = json!({"version": 1, "records": [
        record("fused", 16, json!({"threads": 512, "pad_a": 1, "min_blocks": 2, "unroll_k": 1}), 29.5),
        record("L7-breg", 16, json!({"threads": 256, "min_blocks": 1, "unroll_k": 0}), 40.0),
    ]});
    std::fs::write(&db, serde_json::to_vec(&records).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("mra-bench-tune-export-{}", std::process::id()));
    let run = |extra: &[&str]| {
        let _ = std::fs::remove_dir_all(&dir);
        let mut args = vec!["export", "--arch", "sm_90", "-K", "16", "-o", dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = mra_bench(&args, &db);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let src: String = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "cu" || e == "hip" || e == "cuh" || e == "h")).map(|p| std::fs::read_to_string(p).unwrap()).collect();
        (text(&o.stderr), src)
    };
    let (err, src) = run(&["-l", "best"]);
    assert!(err.contains("-l best at K=16: fused is the fastest tuned level for sm_90 (min_blocks=2 pad_a=1 threads=512 unroll_k=1)"), "{err}");
    assert!(src.contains("constexpr int THREADS = 512;") && src.contains("__launch_bounds__(512, 2)"), "{src}");
    let (err, src) = run(&["-l", "fused"]);
    assert!(err.contains("# fused K=16: tuned configuration min_blocks=2 pad_a=1 threads=512 unroll_k=1"), "{err}");
    assert!(src.contains("constexpr int THREADS = 512;"), "{src}");
    let (err, src) = run(&["-l", "fused", "--untuned"]);
    assert!(!err.contains("tuned configuration") && src.contains("constexpr int THREADS = 256;"), "{err}");
    // Nothing tuned at K=16 on sm_80: -l best says so in one line.
    let _ = std::fs::remove_dir_all(&dir);
    let o = mra_bench(&["export", "--arch", "sm_80", "-K", "16", "-l", "best", "-o", dir.to_str().unwrap()], &db);
    assert!(!o.status.success() && text(&o.stderr).contains("no tuned level at K=16 (f64) for sm_80"), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&db);
}

/// `-l best` takes the fastest tuned level even where it spreads a tensor over several blocks
/// (it used to skip cluster levels and fail on split_output ones): the launcher runs it, and
/// the block-level function beside it is the first of the block chain that fits (L7-breg at 32).
#[test]
fn export_best_takes_a_multi_block_level_with_a_block_function_beside_it() {
    let db = temp("export-best-split");
    let records = json!({"version": 1, "records": [
        record("fused-split", 32, json!({"fuse_k": 4, "prefetch_l2": 3}), 350.0),
        record("fused-cluster", 32, json!({}), 390.0),
        record("L7-breg", 32, json!({"threads": 256, "min_blocks": 1, "unroll_k": 0}), 900.0),
    ]});
    std::fs::write(&db, serde_json::to_vec(&records).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("mra-bench-tune-export-best-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = mra_bench(&["export", "--arch", "sm_90", "-K", "32", "-l", "best", "-o", dir.to_str().unwrap()], &db);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("-l best at K=32: fused-split is the fastest tuned level for sm_90 (fuse_k=4 prefetch_l2=3)"), "{}", text(&o.stderr));
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!((manifest[0]["level"].as_str(), manifest[0]["block"]["level"].as_str()), (Some("fused-split"), Some("L7-breg")), "{manifest}");
    let src = std::fs::read_to_string(dir.join("mra_fused_split_k32_f64.cu")).unwrap();
    assert!(src.contains("fuse_k=4 prefetch_l2=3"), "the tuned configuration is exported");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&db);
}

/// Offline on NVIDIA: every candidate compiled by NVRTC + ptxas, the survivors in the database
/// and the --out file; a rerun compiles nothing again.
#[test]
fn compile_only_prunes_offline_and_resumes() {
    let Some(_) = mra_tests::require("NVRTC", mra_runtime::cuda::nvrtc::Nvrtc::load()) else { return };
    let db = temp("offline");
    let out = temp("offline-out");
    let args = ["tune", "--arch", "sm_90", "-K", "6", "-l", "L7", "--compile-only", "--out", out.to_str().unwrap()];
    let o = mra_bench(&args, &db);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(stdout.contains("L7-breg K=6 on sm_90: 36 candidates (36 declared), 36 compiled"), "{stdout}");
    let records: Value = serde_json::from_slice(&std::fs::read(&db).unwrap()).unwrap();
    let records = records["records"].as_array().unwrap();
    assert_eq!(records.len(), 36);
    assert!(records.iter().all(|r| r["device"]["arch"] == "sm_90" && r["device"]["gpu"] == "" && r["harness"].is_null()));
    // Launch bounds compile; the only compile failures are ptxas refusing a register cap too
    // low for the f64 mma fragments (512 threads x 4 blocks leaves 32 registers).
    for r in records {
        let why = r["outcome"]["why"].as_str().unwrap_or("");
        assert!(!why.contains("does not compile") || why.contains("register target constraints"), "{r}");
    }
    assert!(records.iter().any(|r| r["config"]["min_blocks"] == 4 && r["outcome"]["status"] == "compiled"), "{records:?}");
    let survivors: Vec<Value> = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(!survivors.is_empty());
    assert!(survivors.iter().all(|r| r["outcome"]["status"] == "compiled" && r["outcome"]["resources"]["spill_bytes"] == 0));
    let again = mra_bench(&args, &db);
    assert!(again.status.success());
    assert_eq!(text(&again.stderr).matches("(database)").count(), 36, "{}", text(&again.stderr));
    // --fix keeps the candidates with those values only: 36 / 4 thread counts = 9, 3 with unroll_k=0 too.
    let fix_db = temp("offline-fix");
    let fixed = mra_bench(&["tune", "--arch", "sm_90", "-K", "6", "-l", "L7", "--compile-only", "--fix", "threads=256,unroll_k=0"], &fix_db);
    let _ = std::fs::remove_file(&fix_db);
    assert!(fixed.status.success(), "{}", text(&fixed.stderr));
    assert!(text(&fixed.stdout).contains("L7-breg K=6 on sm_90: 3 candidates (36 declared), 3 compiled"), "{}", text(&fixed.stdout));
    let _ = std::fs::remove_file(&db);
    let _ = std::fs::remove_file(&out);
}

/// `tune --op` records are the operation's, marked `"op"`: `--emit-src --op general` takes the
/// fastest of them, the seed's operation never does, and an operation never takes the seed's
/// records (without its own it has the shipped `"op": "general"` entry's 256 threads).
#[test]
fn an_operations_records_answer_that_operation_only() {
    let db = temp("emit-op");
    let full = |threads: u32| json!({"threads": threads, "pad_a": 4, "min_blocks": 1, "unroll_k": 0, "buffers": 2, "align_runs": 0, "pair_rows": 0, "fuse_k": 2, "bulk_copy": 1, "stack": 1, "persistent": 1, "swap_operands": 0});
    let mut op_record = record("fused-pipe", 20, full(128), 1200.0);
    op_record["harness"] = json!({"nfuncs": 33554, "max_blocks": usize::MAX, "tasks": 1, "streams": 1, "reps": 5, "stream_data": "private"});
    op_record["op"] = json!("general");
    let seed_record = record("fused-pipe", 20, full(384), 70.0);
    let params = |o: &std::process::Output| text(&o.stdout).lines().find(|l| l.starts_with("// tunable parameters")).unwrap_or_default().to_string();

    std::fs::write(&db, serde_json::to_vec(&json!({"version": 1, "records": [op_record, seed_record.clone()]})).unwrap()).unwrap();
    let general = mra_bench(&["--arch", "sm_90", "-K", "20", "-l", "fused-pipe", "--op", "general", "--emit-src"], &db);
    assert!(general.status.success(), "{}", text(&general.stderr));
    assert!(params(&general).contains("threads=128") && text(&general.stderr).contains("tuned configuration"), "{}", params(&general));
    let seed = mra_bench(&["--arch", "sm_90", "-K", "20", "-l", "fused-pipe", "--emit-src"], &db);
    assert!(params(&seed).contains("threads=384"), "the seed's record: {}", params(&seed));

    std::fs::write(&db, serde_json::to_vec(&json!({"version": 1, "records": [seed_record]})).unwrap()).unwrap();
    let general = mra_bench(&["--arch", "sm_90", "-K", "20", "-l", "fused-pipe", "--op", "general", "--emit-src"], &db);
    assert!(params(&general).contains("threads=256") && !text(&general.stderr).contains("tuned configuration"), "{}", params(&general));
    let _ = std::fs::remove_file(&db);
}

/// `tune --write-defaults` turns an operation's records (`tune --op`) into `"op"` entries of
/// the arch's file, beside the transform's entry of the same level, K and regime.
#[test]
fn write_defaults_writes_an_operations_entries_apart() {
    let db = temp("write-defaults-op-db");
    let dir = empty_dir("write-defaults-op");
    let out = dir.join("sm_90.json");
    let config = |threads: u32| json!({"threads": threads, "pad_a": 4, "min_blocks": 1, "buffers": 2, "stack": 1, "unroll_k": 0, "align_runs": 0, "pair_rows": 0, "fuse_k": 1, "bulk_copy": 0, "persistent": 0, "swap_operands": 0});
    let api = json!({"nfuncs": 33554, "max_blocks": usize::MAX, "tasks": 1, "streams": 1, "reps": 3, "stream_data": "private"});
    let (mut transform, mut general) = (record("fused-pipe", 20, config(416), 1100.0), record("fused-pipe", 20, config(256), 1250.0));
    transform["harness"] = api.clone();
    general["harness"] = api;
    general["op"] = json!("general");
    std::fs::write(&db, serde_json::to_vec(&json!({"version": 1, "records": [transform, general]})).unwrap()).unwrap();
    let o = mra_bench(&["tune", "--write-defaults", out.to_str().unwrap(), "--arch", "sm_90", "-l", "fused-pipe", "-K", "20", "--db", db.to_str().unwrap()], &db);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let entries: Vec<(&Value, &Value)> = file["entries"].as_array().unwrap().iter().map(|e| (&e["config"]["threads"], &e["op"])).collect();
    assert_eq!(entries, [(&json!(416), &Value::Null), (&json!(256), &json!("general"))], "{file}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&db);
}

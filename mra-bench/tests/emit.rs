//! `--emit-src -o`: one kernel to a file, several levels × K into a directory with names
//! saying level, K, arch and dtype; levels that cannot run are reported on stderr and
//! skipped; nothing written is an error.

use std::path::PathBuf;
use std::process::{Command, Output};

fn mra_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench")).args(args).output().expect("run mra-bench")
}

#[path = "support/scratch.rs"]
mod support_scratch;

fn scratch(name: &str) -> support_scratch::Scratch {
    support_scratch::Scratch::new("mra-emit-test", name)
}

fn files(dir: &PathBuf) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn one_kernel_goes_to_the_file_named() {
    let out = scratch("one.cu");
    let o = mra_bench(&["--arch", "sm_90", "-K", "7", "-l", "2", "--emit-src", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty(), "nothing on stdout when -o is given");
    let src = std::fs::read_to_string(&out).unwrap();
    assert!(src.contains("constexpr int K = 7;") && src.contains("mra_l2_bshared_k7_f64"));
}

#[test]
fn a_k_list_and_several_levels_write_one_file_per_kernel() {
    let dir = scratch("dir");
    let o = mra_bench(&["--arch", "gfx90a", "-K", "5,16", "-l", "3,L4", "--emit-src", "-o", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        files(&dir),
        ["L3-regblk_k16_gfx90a_f64.hip", "L3-regblk_k5_gfx90a_f64.hip", "L4-mma_k16_gfx90a_f64.hip", "L4-mma_k5_gfx90a_f64.hip"]
    );
    let src = std::fs::read_to_string(dir.join("L4-mma_k5_gfx90a_f64.hip")).unwrap();
    assert!(src.contains("constexpr int K = 5;") && src.contains("level L4-mma"), "the file holds the kernel its name says");
}

#[test]
fn levels_that_cannot_run_are_skipped_one_line_each() {
    let dir = scratch("skip");
    // gfx1100 has no FP64 matrix cores: L4 and L7 are refused at every K, L3 is written.
    let o = mra_bench(&["--arch", "gfx1100", "-K", "6,8", "-l", "3,4,7", "--emit-src", "-o", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(files(&dir), ["L3-regblk_k6_gfx1100_f64.hip", "L3-regblk_k8_gfx1100_f64.hip"]);
    let skipped: Vec<&str> = err.lines().filter(|l| l.starts_with("mra-bench: skipped")).collect();
    assert_eq!(skipped.len(), 2, "one line per level: {err}");
    assert!(skipped[0].contains("L4-mma at K=6,8 on gfx1100") && skipped[0].contains("matrix cores"), "{err}");

    // Nothing that can run: an error, non-zero exit.
    let o = mra_bench(&["--arch", "gfx1100", "-K", "6,8", "-l", "4,7", "--emit-src", "-o", scratch("none").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("error: no kernel written"));

    // Several kernels without -o DIR: told what to add.
    let o = mra_bench(&["--arch", "sm_90", "-l", "all", "--emit-src"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("add -o DIR"));
}

/// A file that exists and holds something else (a kernel the user edited) is not overwritten
/// without --force, in one line naming it; the same bytes again are no loss and pass; into a
/// directory, every file is checked before any is written.
#[test]
fn an_existing_file_is_replaced_only_with_force() {
    let dir = scratch("force");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mine.hip");
    std::fs::write(&file, "// my edited kernel\n").unwrap();
    let f = file.to_str().unwrap();
    let o = mra_bench(&["--arch", "gfx90a", "-K", "5", "-l", "3", "--emit-src", "-o", f]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!("mra-bench: error: -o {f}: the file exists and holds something else")) && err.contains("pass --force to replace it"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "// my edited kernel\n", "the user's file kept");
    let o = mra_bench(&["--arch", "gfx90a", "-K", "5", "-l", "3", "--emit-src", "-o", f, "--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(&file).unwrap().contains("mra_l3_regblk_k5_f64"));
    // The same kernel again: nothing would be lost.
    let o = mra_bench(&["--arch", "gfx90a", "-K", "5", "-l", "3", "--emit-src", "-o", f]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A directory of kernels: one edited file stops the whole write, before anything is written.
    let kernels = dir.join("kernels");
    let o = mra_bench(&["--arch", "gfx90a", "-K", "5,6", "-l", "3", "--emit-src", "-o", kernels.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(kernels.join("L3-regblk_k6_gfx90a_f64.hip"), "edited").unwrap();
    let o = mra_bench(&["--arch", "gfx90a", "-K", "5,6,7", "-l", "3", "--emit-src", "-o", kernels.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("the file exists and holds something else") && err.contains("L3-regblk_k6_gfx90a_f64.hip"), "{err}");
    assert!(!kernels.join("L3-regblk_k7_gfx90a_f64.hip").exists(), "nothing written when one file is refused");
    assert_eq!(std::fs::read_to_string(kernels.join("L3-regblk_k6_gfx90a_f64.hip")).unwrap(), "edited");
    // --force needs -o (there is nothing to replace on standard output).
    let o = mra_bench(&["--arch", "gfx90a", "-K", "5", "-l", "3", "--emit-src", "--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-o /dev/stdout` into a pipe streams the kernel (a pipe has no directory to put a temporary
/// file in, and is no file to protect).
#[test]
fn dev_stdout_into_a_pipe_streams_the_kernel() {
    let o = mra_bench(&["--arch", "gfx90a", "-K", "5", "-l", "3", "--emit-src", "-o", "/dev/stdout"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("mra_l3_regblk_k5_f64"));
}

/// `--emit-src --op` shows the kernel `validate --op` and `sweep --op` run: every `"op"` entry
/// of the shipped tuned defaults, read here from the data file itself, is the configuration of
/// the emitted source (its "tunable parameters" line), not the seed's values for that level.
#[test]
fn an_operation_is_emitted_with_its_own_tuned_values() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../mra-codegen/tuned/sm_90.json");
    let data: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for e in data["entries"].as_array().unwrap().iter().filter(|e| e.get("op").is_some()) {
        let (level, op) = (e["level"].as_str().unwrap(), e["op"].as_str().unwrap());
        for k in e["k"].as_array().unwrap() {
            let k = k.to_string();
            let o = mra_bench(&["--arch", "sm_90", "-K", &k, "-l", level, "--op", op, "--emit-src"]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let src = String::from_utf8_lossy(&o.stdout);
            let params = src.lines().find(|l| l.starts_with("// tunable parameters of this kernel:")).expect("the parameters line");
            let values: Vec<&str> = params.split(':').nth(1).unwrap().split_whitespace().collect();
            for (name, value) in e["config"].as_object().unwrap() {
                let want = format!("{name}={value}");
                assert!(values.contains(&want.as_str()), "{level} --op {op} K={k}: {want} not in `{params}`");
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "the shipped tuned defaults have op entries for the rank sum and general ({checked} checked)");
}

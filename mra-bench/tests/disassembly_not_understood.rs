//! `--compile-only` with a disassembler whose output holds no instructions at all (a wrong tool,
//! a changed format): the MFMA/WMMA or DMMA/HMMA count is reported as not available, never as 0.

use std::process::Command;

/// A "disassembler" that succeeds and prints something that is no disassembly.
fn garbage_tool(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, "#!/bin/sh\necho 'garbage: this is not a disassembly'\necho '0 instructions, 0 problems'\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn compile_only(arch: &str, level: &str, k: &str, env: (&str, &std::path::Path)) -> (bool, String, serde_json::Value) {
    let o = Command::new(env!("CARGO_BIN_EXE_mra-bench"))
        .args(["--compile-only", "--arch", arch, "-l", level, "-K", k, "--json"])
        .env("MRA_KERNEL_CACHE", "off")
        .env(env.0, env.1)
        .output()
        .expect("run mra-bench");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let v = serde_json::from_str(out.trim()).unwrap_or(serde_json::Value::Null);
    (o.status.success(), format!("{out}{}", String::from_utf8_lossy(&o.stderr)), v)
}

#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn amd_matrix_count_from_garbage_is_not_available() {
    if mra_tests::require("clang with the AMDGPU target", mra_runtime::hip::clang::Clang::find()).is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("mra-garbage-objdump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tool = garbage_tool(&dir, "llvm-objdump");
    let (ok, all, v) = compile_only("gfx942", "4", "16", ("MRA_LLVM_OBJDUMP", &tool));
    assert!(ok, "{all}");
    assert!(v["matrix"].is_null(), "no count from garbage: {all}");
    assert!(v["matrix_note"].as_str().is_some_and(|n| n.starts_with("not counted: llvm-objdump output not understood")), "{all}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; .ci/run does)"]
fn nvidia_mma_count_from_garbage_is_not_available() {
    if mra_tests::require("NVRTC", mra_runtime::cuda::nvrtc::Nvrtc::load()).is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("mra-garbage-nvdisasm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tool = garbage_tool(&dir, "nvdisasm");
    let (ok, all, v) = compile_only("sm_90", "4", "8", ("MRA_CUOBJDUMP", &tool));
    assert!(ok, "{all}");
    assert!(v["matrix"].is_null(), "no count from garbage: {all}");
    assert!(v["matrix_note"].as_str().is_some_and(|n| n.contains("nvdisasm output not understood")), "{all}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A disassembler that fails (MRA_LLVM_OBJDUMP=/bin/false) is blamed, not the code object the
/// compiler just wrote.
#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn a_failing_disassembler_is_blamed() {
    if mra_tests::require("clang with the AMDGPU target", mra_runtime::hip::clang::Clang::find()).is_none() {
        return;
    }
    let (ok, all, _) = compile_only("gfx90a", "4", "8", ("MRA_LLVM_OBJDUMP", std::path::Path::new("/bin/false")));
    assert!(!ok, "{all}");
    assert!(all.contains("the disassembler /bin/false -d --mcpu=gfx90a failed on the code object for gfx90a (exit status: 1): no message; point MRA_LLVM_OBJDUMP at a working llvm-objdump"), "{all}");
    assert!(!all.contains("not readable as an AMDGPU ELF"), "{all}");
}

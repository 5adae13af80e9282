//! `mra-bench export` without a GPU: the directory it writes, its refusals, and that what it
//! writes compiles: every kernel for gfx90a and gfx942 with clang-19 (device-only, bare
//! prelude) and for sm_90 with NVRTC; a translation unit holding every block-level device
//! function (called from a kernel, its constants checked against manifest.json); the host
//! header with clang++ against a stub of the CUDA/HIP runtime API (tests/stubs/), linked and
//! run with a recording stub so its launches can be checked; and examples/export_demo.cu, host
//! and device sides, against the same stub. The toolchain tests are `#[ignore]`d like the other
//! toolchain tests: `cargo test -- --include-ignored` runs them (.ci/run does).

use mra_runtime::cuda::nvrtc::Nvrtc;
use mra_runtime::hip::clang::Clang;
use mra_runtime::KernelCache;
use mra_tests::require;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KS: &str = "5,8,9,10,11,13,16,20,28,32";
/// The recording stub runtime's device: 7 multiprocessors holding 3 blocks of any kernel each.
const STUB_MULTIPROCESSORS: u64 = 7;
const STUB_PER_MULTIPROCESSOR: u64 = 3;

fn mra_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mra-bench")).args(args).env("MRA_KERNEL_CACHE", "off").env("MRA_TUNING_DB", "/nonexistent/mra-tuning.json").output().expect("run mra-bench")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh, absent directory path under the system temp dir.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mra-export-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Exports `ks` for `arch` into a fresh directory; returns it and the manifest.
fn export(arch: &str, ks: &str, name: &str) -> (PathBuf, Vec<Value>) {
    let dir = scratch(name);
    let o = mra_bench(&["export", "--arch", arch, "-K", ks, "-o", dir.to_str().unwrap()]);
    assert!(o.status.success(), "export failed: {}", text(&o.stderr));
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    (dir, manifest.as_array().unwrap().clone())
}

fn assert_clean_error(args: &[&str], needle: &str) {
    let o = mra_bench(args);
    let err = text(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.contains(needle), "{args:?}: expected `{needle}` in: {err}");
    assert_eq!(err.lines().filter(|l| l.contains("error")).count(), 1, "{args:?}: one error line: {err}");
}

#[test]
fn export_writes_the_directory_and_does_not_clobber() {
    let (dir, manifest) = export("sm_90", KS, "layout");
    let ks: Vec<u64> = manifest.iter().map(|e| e["K"].as_u64().unwrap()).collect();
    assert_eq!(ks, [5, 8, 9, 10, 11, 13, 16, 20, 28, 32]);
    // K = 10's fused-pipe is the transposed one (swap_operands(1), its default on sm_90): its
    // transform_block, which a user's kernel calls, runs the same passes.
    let k10 = manifest.iter().find(|e| e["K"] == 10).unwrap();
    let k10_src = std::fs::read_to_string(dir.join(k10["source"].as_str().unwrap())).unwrap();
    assert!(k10_src.contains("constexpr int COL_TILES") && k10_src.contains("void transform_block("), "K = 10: not the transposed passes");
    for e in &manifest {
        for f in ["source", "device_header"] {
            assert!(dir.join(e[f].as_str().unwrap()).is_file(), "{e}");
        }
    }
    // The documented defaults on sm_90: the launcher runs fused-pipe up to K = 24, fused-cluster at
    // 25..31 and fused-split at 32; beside the last two (a tensor over several blocks, no
    // block-level function) transform_block is L7-breg's.
    let get = |k: u64| manifest.iter().find(|e| e["K"] == k).unwrap().clone();
    let level = |k: u64| get(k)["level"].as_str().unwrap().to_string();
    let block_level = |k: u64| get(k)["block"]["level"].as_str().unwrap().to_string();
    assert_eq!([13, 20, 28, 32].map(level), ["fused-pipe", "fused-pipe", "fused-cluster", "fused-split"]);
    assert_eq!([13, 20, 28, 32].map(block_level), ["fused-pipe", "fused-pipe", "L7-breg", "L7-breg"]);
    assert_eq!(get(32)["device_header"], "mra_l7_breg_k32_f64_device.h");
    assert_eq!(get(32)["block"]["namespace"], "mra::l7_breg_k32_f64");
    let device = std::fs::read_to_string(dir.join("mra_l7_breg_k32_f64_device.h")).unwrap();
    assert!(device.contains("The host\n// launcher runs fused-split (mra_fused_split_k32_f64.cu)") && device.contains("namespace k32_f64 = l7_breg_k32_f64;"), "{device}");
    // The cluster size the launcher must honour is the one compiled into the kernel.
    let cluster_src = std::fs::read_to_string(dir.join(get(28)["source"].as_str().unwrap())).unwrap();
    let dims = format!("__cluster_dims__({}, 1, 1)", get(28)["grid_multiple"]);
    assert!(cluster_src.contains(&dims), "K = 28: no `{dims}` in the kernel");
    // On sm_80 (no clusters, no split_output) K = 32 is L7-breg, launcher and block function alike.
    let (d80, m80) = export("sm_80", "32", "sm80");
    assert_eq!((m80[0]["level"].as_str(), m80[0]["block"]["level"].as_str()), (Some("L7-breg"), Some("L7-breg")));
    std::fs::remove_dir_all(&d80).unwrap();
    let header = std::fs::read_to_string(dir.join("mra_transform.h")).unwrap();
    for k in &ks {
        for f in [format!("inline int mra_transform_k{k}("), format!("inline size_t mra_transform_k{k}_workspace_bytes(int nfuncs)")] {
            assert!(header.contains(&f), "no `{f}`");
        }
    }
    assert!(header.contains("inline int mra_transform(int K,") && header.contains("return MRA_ERROR_UNSUPPORTED_K;"));
    assert!(header.contains("cudaFuncSetAttribute((const void*)mra_fused_pipe_k16_f64, cudaFuncAttributeMaxDynamicSharedMemorySize, 66576)"));
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(readme.contains("nvcc -arch=sm_90") && readme.contains("enable_language(CUDA)") && readme.contains("transform_block"));

    // Not again into the same directory; --force replaces the export's files and nothing else.
    let d = dir.to_str().unwrap();
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8", "-o", d], "is not empty");
    std::fs::write(dir.join("mine.txt"), "user file").unwrap();
    let o = mra_bench(&["export", "--arch", "sm_90", "-K", "8", "-l", "L3", "-o", d, "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("mine.txt")).unwrap(), "user file");
    assert!(std::fs::read_to_string(dir.join("mra_transform.h")).unwrap().contains("mra_l3_regblk_k8_f64"));
    assert!(!std::fs::read_dir(&dir).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().contains(".tmp")), "temporary files left");
    std::fs::remove_dir_all(&dir).unwrap();
    // An empty directory is fine; nothing is left beside it.
    let empty = scratch("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = mra_bench(&["export", "--arch", "gfx90a", "-K", "8", "-o", empty.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(empty.join("mra_fused_k8_f64.hip").is_file(), "gfx90a, K = 8: fused (fused-pipe is NVIDIA only)");
    let parent = empty.parent().unwrap();
    let stem = empty.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!std::fs::read_dir(parent).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with(&format!(".{stem}.mra-export"))));
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn export_refuses_what_it_cannot_write_with_one_line() {
    let d = scratch("refusals");
    let d = d.to_str().unwrap();
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8", "-l", "best", "-o", d], "no tuning database");
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8", "-l", "copy", "-o", d], "copy floor");
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8", "-l", "bound", "-o", d], "level bound is the measured bound (a copy beside discarded matrix instructions, no transform)");
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8", "-l", "6", "-o", d], "vendor BLAS calls");
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8,33", "-o", d], "K=33");
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8,8", "-o", d], "listed twice");
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "32", "-l", "fused", "-o", d], "shared memory");
    assert_clean_error(&["export", "--arch", "gfx1100", "-K", "8", "-l", "L7", "-o", d], "matrix cores");
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8", "-o", "/nonexistent-mra-dir/x"], "does not exist");
    // A path through a file: it names the export directory it cannot use.
    assert_clean_error(&["export", "--arch", "sm_90", "-K", "8", "-o", "/dev/null/x"], "cannot use /dev/null/x as the export directory");
    assert!(!Path::new(d).exists(), "a refused export wrote {d}");
}

#[test]
fn export_keeps_the_users_directory_links_and_protected_files() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // An existing empty directory is written into, not replaced: same inode, its mode (setgid
    // here) kept. It was once removed and recreated with the umask's mode.
    let dir = scratch("keep-mode");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o2750)).unwrap();
    let before = std::fs::metadata(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let o = mra_bench(&["export", "--arch", "gfx90a", "-K", "6", "-o", d]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let after = std::fs::metadata(&dir).unwrap();
    assert_eq!(after.ino(), before.ino(), "the directory was replaced");
    assert_eq!(after.mode() & 0o7777, 0o2750, "the directory's mode changed");
    assert!(dir.join("manifest.json").is_file());

    // --force: a name of the export taken by a directory, or by a read-only file, is refused
    // before anything is written (no half export), in one line.
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    std::fs::remove_file(dir.join("mra_transform.h")).unwrap();
    std::fs::create_dir(dir.join("mra_transform.h")).unwrap();
    assert_clean_error(&["export", "--arch", "gfx90a", "-K", "8", "-o", d, "--force"], "mra_transform.h is a directory");
    assert_eq!(std::fs::read_to_string(dir.join("README.md")).unwrap(), readme, "files were written before the refusal");
    std::fs::remove_dir(dir.join("mra_transform.h")).unwrap();
    std::fs::set_permissions(dir.join("README.md"), std::fs::Permissions::from_mode(0o444)).unwrap();
    assert_clean_error(&["export", "--arch", "gfx90a", "-K", "8", "-o", d, "--force"], "README.md is read-only");
    assert!(!dir.join("mra_transform.h").exists(), "the header was written before the refusal");
    std::fs::set_permissions(dir.join("README.md"), std::fs::Permissions::from_mode(0o644)).unwrap();

    // A symbolic link among the export's names is written through: the link stays, its
    // target gets the new text.
    let real = scratch("keep-mode-real.md");
    std::fs::write(&real, "old").unwrap();
    std::fs::remove_file(dir.join("README.md")).unwrap();
    std::os::unix::fs::symlink(&real, dir.join("README.md")).unwrap();
    let o = mra_bench(&["export", "--arch", "gfx90a", "-K", "8", "-o", d, "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(std::fs::symlink_metadata(dir.join("README.md")).unwrap().file_type().is_symlink(), "the link was replaced by a file");
    assert!(std::fs::read_to_string(&real).unwrap().contains("K = 8") || std::fs::read_to_string(&real).unwrap() != "old");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&real).unwrap();
}

/// `source` with each `#include "x"` of a file in `dir` replaced by that file, recursively:
/// NVRTC and the clang wrapper compile one string.
fn inline_includes(source: &str, dir: &Path) -> String {
    source
        .lines()
        .map(|l| match l.trim().strip_prefix("#include \"").and_then(|r| r.split('"').next()) {
            Some(f) if dir.join(f).is_file() => inline_includes(&std::fs::read_to_string(dir.join(f)).unwrap(), dir),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One translation unit with every block-level device function of an export, each called from a
/// kernel, and its constants checked against the manifest at compile time.
fn block_function_tu(dir: &Path, manifest: &[Value], hip: bool) -> String {
    let block = if hip { "(int)__builtin_amdgcn_workgroup_id_x()" } else { "(int)blockIdx.x" };
    let mut s = inline_includes("#include \"mra_transform_device.h\"\n", dir);
    for e in manifest {
        let (k, ns, dtype) = (e["K"].as_u64().unwrap(), e["block"]["namespace"].as_str().unwrap(), "f64");
        let alias = format!("mra::k{k}_{dtype}");
        s += &format!(
            "\nstatic_assert({ns}::SHARED_BYTES == {sb}, \"SHARED_BYTES of K={k}\");\n\
             static_assert({alias}::THREADS == {th}, \"THREADS of K={k}\");\n\
             static_assert({alias}::WORKSPACE_ELEMS == {ws}, \"WORKSPACE_ELEMS of K={k}\");\n\
             extern \"C\" __global__ void user_k{k}(const double* a, const double* b, double* c, double* workspace, int nfuncs, int nblocks) {{\n\
             \x20   extern __shared__ double smem_k{k}[];\n\
             \x20   const int block = {block};\n\
             \x20   for (int n = block; n < nfuncs; n += nblocks)\n\
             \x20       {alias}::transform_block(a + (long long)n * {k3}, b, c + (long long)n * {k3}, workspace + (long long)block * {alias}::WORKSPACE_ELEMS, smem_k{k});\n\
             }}\n",
            sb = e["block"]["shared_bytes"],
            th = e["block"]["threads"],
            ws = e["block"]["workspace_elems_per_block"],
            k3 = k * k * k,
        );
    }
    s
}

#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn exported_hip_compiles_with_clang_for_gfx90a_and_gfx942() {
    let Some(clang) = require("clang with the AMDGPU target", Clang::find()) else { return };
    for arch in ["gfx90a", "gfx942"] {
        let (dir, manifest) = export(arch, KS, arch);
        for e in &manifest {
            let src = std::fs::read_to_string(dir.join(e["source"].as_str().unwrap())).unwrap();
            let co = clang.compile(&src, arch).unwrap_or_else(|err| panic!("{arch} {e}: {err}"));
            assert!(mra_runtime::hip::is_amdgpu_elf(&co.bytes), "{arch} {e}: not a code object");
        }
        let tu = block_function_tu(&dir, &manifest, true);
        clang.compile(&tu, arch).unwrap_or_else(|err| panic!("{arch}: the block-function translation unit: {err}"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; .ci/run does)"]
fn exported_cuda_compiles_with_nvrtc_for_sm90() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let cache = KernelCache::disabled();
    let (dir, manifest) = export("sm_90", KS, "nvrtc");
    for e in &manifest {
        let src = std::fs::read_to_string(dir.join(e["source"].as_str().unwrap())).unwrap();
        let out = nvrtc.compile(&src, e["entry"].as_str().unwrap(), "sm_90", &cache).unwrap_or_else(|err| panic!("{e}: {err}"));
        let r = out.resources.expect("ptxas report");
        assert!(!r.spills(), "{e}: spills {r:?}");
    }
    let tu = block_function_tu(&dir, &manifest, false);
    let out = nvrtc.compile(&tu, "user_k5", "sm_90", &cache).unwrap_or_else(|err| panic!("the block-function translation unit: {err}"));
    assert!(out.cubin.starts_with(b"\x7fELF"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A host program over `mra_transform.h` with a recording stub runtime: it defines the kernel
/// symbols as plain functions, calls the dispatch, and prints what each launch asked for.
fn recording_program(manifest: &[Value], hip: bool) -> String {
    let (p, err, stream) = if hip { ("hip", "hipError_t", "hipStream_t") } else { ("cuda", "cudaError_t", "cudaStream_t") };
    let mut s = String::from("#include \"mra_transform.h\"\n#include <stdio.h>\n#include <string.h>\n\n");
    s += "static const void* last_func; static unsigned last_grid, last_block; static size_t last_shared; static int attr_value = -1;\n";
    s += &format!(
        "extern \"C\" {err} {p}LaunchKernel(const void* f, dim3 g, dim3 b, void** args, size_t shared, {stream} s) {{\n\
         \x20   (void)args; (void)s; last_func = f; last_grid = g.x; last_block = b.x; last_shared = shared; return ({err})0;\n}}\n\
         extern \"C\" {err} {p}FuncSetAttribute(const void* f, enum {p}FuncAttribute a, int v) {{ (void)f; (void)a; attr_value = v; return ({err})0; }}\n\
         extern \"C\" const char* {p}GetErrorString({err} e) {{ (void)e; return \"stub\"; }}\n"
    );
    // A device of STUB_MULTIPROCESSORS that holds STUB_PER_MULTIPROCESSOR blocks of any kernel
    // on each; the occupancy query must see the dynamic shared memory the launch uses.
    s += &format!(
        "static size_t occupancy_shared = (size_t)-1;\n\
         extern \"C\" {err} {p}GetDevice(int* d) {{ *d = 0; return ({err})0; }}\n\
         extern \"C\" {err} {p}DeviceGetAttribute(int* v, {attr} a, int d) {{ (void)a; (void)d; *v = {STUB_MULTIPROCESSORS}; return ({err})0; }}\n\
         extern \"C\" {err} {p}OccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void* f, int b, size_t shared) {{ (void)f; (void)b; occupancy_shared = shared; *n = {STUB_PER_MULTIPROCESSOR}; return ({err})0; }}\n",
        attr = if hip { "hipDeviceAttribute_t" } else { "enum cudaDeviceAttr" }
    );
    for e in manifest {
        s += &format!("extern \"C\" void {}(const double*, const double*, double*, double*, int, int) {{}}\n", e["entry"].as_str().unwrap());
    }
    s += "int main() {\n    double x = 0; double* p = &x;\n";
    s += "    printf(\"unsupported %d\\n\", mra_transform(7, p, p, p, p, 1, 0));\n";
    s += "    printf(\"negative %d\\n\", mra_transform(8, p, p, p, p, -1, 0));\n";
    s += "    printf(\"zero %d\\n\", mra_transform(8, p, p, p, p, 0, 0));\n";
    for e in manifest {
        let k = e["K"].as_u64().unwrap();
        let entry = e["entry"].as_str().unwrap();
        for n in [3, 1031] {
            s += &format!(
                "    attr_value = -1; last_func = 0; occupancy_shared = (size_t)-1;\n    {{ int rc = mra_transform({k}, p, p, p, p, {n}, 0);\n\
                 \x20     printf(\"K={k} N={n} rc=%d right_kernel=%d grid=%u block=%u shared=%zu attr=%d ws=%zu supported=%d occupancy_shared=%lld\\n\", rc, last_func == (const void*){entry}, last_grid, last_block, last_shared, attr_value, mra_transform_workspace_bytes({k}, {n}), mra_transform_supported({k}), (long long)occupancy_shared); }}\n"
            );
        }
        s += &format!("    printf(\"K={k} null_workspace rc=%d\\n\", mra_transform({k}, p, p, p, 0, 5, 0));\n");
    }
    s += "    return 0;\n}\n";
    s
}

/// Builds [`recording_program`] over the export in `dir` with `clang` against the stub runtime
/// (warnings are errors), runs it and returns what it printed.
fn run_recording(clang: &Path, dir: &Path, manifest: &[Value], hip: bool) -> String {
    let stubs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stubs");
    let prog = dir.join("recording.cpp");
    std::fs::write(&prog, recording_program(manifest, hip)).unwrap();
    let exe = dir.join("recording");
    let o = Command::new(clang)
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-I"])
        .arg(&stubs)
        .arg("-I")
        .arg(dir)
        .arg(&prog)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: the header does not compile:\n{}", dir.display(), text(&o.stderr));
    text(&Command::new(&exe).output().unwrap().stdout)
}

#[test]
#[ignore = "needs clang++ (run with --include-ignored; .ci/run does)"]
fn the_host_header_is_valid_cxx_and_launches_as_the_manifest_says() {
    let clang = match which("clang++-19").or_else(|| which("clang++")) {
        Some(c) => c,
        None => {
            require::<(), _>("clang++ (host C++)", Err("not on PATH"));
            return;
        }
    };
    for (arch, hip) in [("sm_90", false), ("gfx90a", true)] {
        let (dir, manifest) = export(arch, KS, &format!("host-{arch}"));
        let out = run_recording(&clang, &dir, &manifest, hip);
        assert!(out.contains("unsupported -1\n") && out.contains("negative -2\n") && out.contains("zero 0\n"), "{out}");
        for e in &manifest {
            let k = e["K"].as_u64().unwrap();
            let (threads, dynamic, ws) = (e["threads"].as_u64().unwrap(), e["dynamic_shared_bytes"].as_u64().unwrap(), e["workspace_elems_per_block"].as_u64().unwrap());
            let (per_tensor, multiple) = (e["blocks_per_tensor"].as_u64().unwrap(), e["grid_multiple"].as_u64().unwrap());
            for n in [3u64, 1031] {
                // A launch has waves of what the (stub) device holds of the kernel at once,
                // multiprocessors × blocks per multiprocessor, in whole groups, at most the blocks there is work for;
                // the workspace is sized for that grid. A level that spreads a tensor over blocks
                // launches them in whole groups, worked out here from the design: fused-split two
                // blocks per tensor, fused-cluster K = 28 clusters of 7 (as its source's
                // __cluster_dims__ says, checked above).
                match (arch, k, e["level"].as_str().unwrap()) {
                    ("sm_90", 32, "fused-split") => assert_eq!((per_tensor, multiple), (2, 2)),
                    ("sm_90", 28, "fused-cluster") => assert_eq!((per_tensor, multiple), (1, 7)),
                    (_, _, level) => assert!(per_tensor == 1 && multiple == 1, "{arch} K={k} {level}: a grid this test does not know"),
                }
                // Waves of what the device holds: 32, or 2 where each block has a device workspace.
                let waves = if e["persistent"] == true { 1 } else if ws > 0 { 2 } else { 32 };
                let held = (STUB_MULTIPROCESSORS * STUB_PER_MULTIPROCESSOR / multiple * multiple * waves).max(multiple);
                let grid = (n * per_tensor).min(held).div_ceil(multiple) * multiple;
                let attr = if dynamic > 0 { dynamic as i64 } else { -1 };
                // The occupancy is asked once per device and kernel: at the first launch (N = 3),
                // with the dynamic shared memory the launch uses; the second finds it known.
                let asked = if n == 3 { dynamic as i64 } else { -1 };
                let want = format!(
                    "K={k} N={n} rc=0 right_kernel=1 grid={grid} block={threads} shared={dynamic} attr={attr} ws={} supported=1 occupancy_shared={asked}",
                    grid * ws * 8
                );
                assert!(out.lines().any(|l| l == want), "{arch}: want `{want}` in:\n{out}");
            }
            let null_ws = if ws > 0 { -2 } else { 0 };
            assert!(out.contains(&format!("K={k} null_workspace rc={null_ws}\n")), "{arch} K={k}: {out}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A launcher of `persistent(1)` beside `split_output(2)` (no level declares it; a schedule built
/// through the library can) caps its grid at the resident blocks rounded down to whole pairs: the
/// stub device holds 7 × 3 = 21 blocks, so 20, never 21 (block 20 would be half a pair, repeating
/// half 0 of tensors that pair 0 already computes); N = 3 needs only its 6.
#[test]
#[ignore = "needs clang++ (run with --include-ignored; .ci/run does)"]
fn a_persistent_split_launcher_caps_its_grid_at_whole_pairs() {
    use mra_codegen::ir::{Located, Step, Value as V};
    let Some(clang) = which("clang++-19").or_else(|| which("clang++")) else {
        require::<(), _>("clang++ (host C++)", Err("not on PATH"));
        return;
    };
    let mut split = mra_codegen::levels::find("fused-split").unwrap();
    split.steps.retain(|st| !matches!(st.item, Step::CoSchedule(_) | Step::Persistent(_)));
    split.steps.push(Located { item: Step::CoSchedule(V::Fixed(0)), line: 0 });
    split.steps.push(Located { item: Step::Persistent(V::Fixed(1)), line: 0 });
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let entry = mra_codegen::export::entry_for(&split, 32, sm90, mra_codegen::DType::F64, "test".into()).unwrap();
    let dir = scratch("persistent-split");
    std::fs::create_dir_all(&dir).unwrap();
    for f in mra_codegen::export::bundle(&[entry], "test").unwrap() {
        std::fs::write(dir.join(&f.path), &f.text).unwrap();
    }
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let manifest = manifest.as_array().unwrap().clone();
    assert_eq!((manifest[0]["persistent"].as_bool(), manifest[0]["grid_multiple"].as_u64()), (Some(true), Some(2)));
    let out = run_recording(&clang, &dir, &manifest, false);
    for (n, grid) in [(3, 6), (1031, 20)] {
        assert!(out.contains(&format!("K=32 N={n} rc=0 right_kernel=1 grid={grid} block=256 ")), "N={n}: want grid={grid} in:\n{out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs clang++ with CUDA support (ptxas where installed) (run with --include-ignored; .ci/run does)"]
fn the_export_demo_compiles_against_the_stub_runtime() {
    let Some(clang) = which("clang++-19").or_else(|| which("clang++")) else {
        require::<(), _>("clang++ with CUDA support", Err("not on PATH"));
        return;
    };
    let stubs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stubs");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/export_demo.cu");
    let (dir, _) = export("sm_90", KS, "demo");
    let common = |side: &str| {
        let mut c = Command::new(&clang);
        c.args(["-x", "cuda", side, "--cuda-gpu-arch=sm_90", "-nocudainc", "-nocudalib", "-std=c++17", "-O3", "-I"]).arg(&stubs).arg("-I").arg(&dir);
        c
    };
    let host = common("--cuda-host-only").arg("-fsyntax-only").arg(&demo).output().unwrap();
    assert!(host.status.success(), "host side:\n{}", text(&host.stderr));
    // The API-regime timing program (scripts/export-check.sh runs it on a GPU) compiles too.
    let timing = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/export_timing.cu");
    let host = common("--cuda-host-only").arg("-fsyntax-only").arg(&timing).output().unwrap();
    assert!(host.status.success(), "export_timing.cu, host side:\n{}", text(&host.stderr));
    let ptx = dir.join("demo.ptx");
    let device = common("--cuda-device-only").arg("-S").arg("-o").arg(&ptx).arg(&demo).output().unwrap();
    assert!(device.status.success(), "device side:\n{}", text(&device.stderr));
    let ptx_text = std::fs::read_to_string(&ptx).unwrap();
    for k in [5, 8, 9, 11, 13, 16, 20, 28, 32] {
        assert!(ptx_text.contains(&format!("user_kernel_k{k}")), "K={k}: no kernel in the PTX");
    }
    assert!(ptx_text.contains("mma.sync.aligned.m"), "the block functions use a matrix instruction");
    // ptxas, where it is installed, turns the PTX into a cubin without spills.
    if let Some(ptxas) = which("ptxas") {
        let o = Command::new(ptxas).args(["-arch=sm_90", "-v", "-o"]).arg(dir.join("demo.cubin")).arg(&ptx).output().unwrap();
        let log = text(&o.stderr);
        assert!(o.status.success(), "ptxas:\n{log}");
        assert!(!log.lines().any(|l| l.contains("spill stores") && !l.contains(" 0 bytes spill stores")), "spills:\n{log}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `name` on PATH, if there.
fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(name)).find(|p| p.is_file())
}

/// `export --ops`: the operation kernels of every K in every layout, their device parts, the
/// direction kernels, mra_transform_ops.h and operations.json; the flag off, none of them.
fn export_ops(arch: &str, ks: &str, name: &str) -> (PathBuf, Vec<Value>) {
    let dir = scratch(name);
    let o = mra_bench(&["export", "--arch", arch, "-K", ks, "--ops", "general,dir,ranksum", "-o", dir.to_str().unwrap()]);
    assert!(o.status.success(), "export failed: {}", text(&o.stderr));
    let ops: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("operations.json")).unwrap()).unwrap();
    (dir, ops.as_array().unwrap().clone())
}

#[test]
fn export_ops_writes_each_operation_in_each_layout() {
    let (dir, ops) = export_ops("sm_90", "5,10", "ops-files");
    for k in [5, 10] {
        for (op, level) in [("general", "fused-pipe"), ("ranksum", "fused")] {
            for layout in ["contiguous", "strided", "pointers"] {
                let row = ops.iter().find(|r| r["K"] == k && r["op"] == op && r["layout"] == layout).unwrap_or_else(|| panic!("K={k} {op} {layout}"));
                assert_eq!(row["level"], level, "{row}");
                assert!(dir.join(format!("{}.cu", row["entry"].as_str().unwrap())).is_file(), "{row}");
            }
        }
        assert!(dir.join(format!("mra_dir_matrices_k{k}_f64.cu")).is_file());
    }
    let header = std::fs::read_to_string(dir.join("mra_transform_ops.h")).unwrap();
    for f in ["mra_transform_general_pointers(int K", "mra_transform_dir_strided(int K", "mra_transform_ranksum(int K", "mra_transform_ranksum_k10_strided_workspace_bytes"] {
        assert!(header.contains(f), "{f}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // K = 22: the rank sum is fused with its tuned restage_a(1), whose device part takes a_n in
    // device memory only (cp.async), and says so; K = 20 keeps A staged once and takes either.
    let (dir, ops) = export_ops("sm_90", "20,22", "ops-restaged");
    for (k, restaged) in [(20, false), (22, true)] {
        let row = ops.iter().find(|r| r["K"] == k && r["op"] == "ranksum" && r["layout"] == "contiguous").unwrap();
        assert_eq!(row["level"], "fused", "{row}");
        let device = std::fs::read_to_string(dir.join(format!("{}_device.h", row["entry"].as_str().unwrap()))).unwrap();
        assert_eq!(device.contains("// a_n must be in device memory here"), restaged, "K={k}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let (plain, _) = export("sm_90", "5", "ops-none");
    assert!(!plain.join("mra_transform_ops.h").exists() && !plain.join("operations.json").exists());
    std::fs::remove_dir_all(&plain).unwrap();
}

#[test]
#[ignore = "needs NVRTC and clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn exported_operations_compile_for_sm90_gfx90a_and_gfx942() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(clang) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let cache = KernelCache::disabled();
    let (dir, ops) = export_ops("sm_90", "5,10,16,20", "ops-nvrtc");
    for r in &ops {
        let entry = r["entry"].as_str().unwrap();
        let src = std::fs::read_to_string(dir.join(format!("{entry}.cu"))).unwrap();
        // Compiles (spills at K = 20, three B register sets, are a measured cost: docs/performance.md).
        let out = nvrtc.compile(&src, entry, "sm_90", &cache).unwrap_or_else(|e| panic!("{r}: {e}"));
        assert!(out.cubin.starts_with(b"\x7fELF"), "{r}");
    }
    for k in [5, 10, 16, 20] {
        let entry = format!("mra_dir_matrices_k{k}_f64");
        let src = std::fs::read_to_string(dir.join(format!("{entry}.cu"))).unwrap();
        nvrtc.compile(&src, &entry, "sm_90", &cache).unwrap_or_else(|e| panic!("{entry}: {e}"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
    for arch in ["gfx90a", "gfx942"] {
        let (dir, ops) = export_ops(arch, "5,10", &format!("ops-{arch}"));
        for r in &ops {
            let src = std::fs::read_to_string(dir.join(format!("{}.hip", r["entry"].as_str().unwrap()))).unwrap();
            clang.compile(&src, arch).unwrap_or_else(|e| panic!("{arch} {r}: {e}"));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
#[ignore = "needs clang++ (run with --include-ignored; .ci/run does)"]
fn the_ops_header_checks_its_arguments_and_launches_the_right_kernels() {
    let Some(clang) = which("clang++-19").or_else(|| which("clang++")) else {
        require::<(), _>("clang++ (host C++)", Err("not on PATH"));
        return;
    };
    let (dir, ops) = export_ops("sm_90", "10", "ops-host");
    let entry = |op: &str, layout: &str| ops.iter().find(|r| r["op"] == op && r["layout"] == layout).unwrap()["entry"].as_str().unwrap().to_string();
    let mut s = String::from("#include \"mra_transform_ops.h\"\n#include <stdio.h>\n\n");
    s += "static const void* funcs[4]; static int launches; static int ranks_seen = -7; static double alpha_seen, beta_seen; static long long stride_seen;\n";
    s += "extern \"C\" cudaError_t cudaLaunchKernel(const void* f, dim3 g, dim3 b, void** args, size_t shared, cudaStream_t s) {\n\
          \x20   (void)g; (void)b; (void)shared; (void)s; if (launches < 4) funcs[launches] = f; ++launches;\n\
          \x20   if (f != (const void*)mra_dir_matrices_k10_f64) { stride_seen = *(long long*)args[6]; alpha_seen = *(double*)args[8]; beta_seen = *(double*)args[9]; ranks_seen = *(int*)args[10]; }\n\
          \x20   return (cudaError_t)0;\n}\n";
    s += "extern \"C\" cudaError_t cudaFuncSetAttribute(const void* f, enum cudaFuncAttribute a, int v) { (void)f; (void)a; (void)v; return (cudaError_t)0; }\n";
    s += "extern \"C\" const char* cudaGetErrorString(cudaError_t e) { (void)e; return \"stub\"; }\n";
    s += "extern \"C\" cudaError_t cudaGetDevice(int* d) { *d = 0; return (cudaError_t)0; }\n";
    s += "extern \"C\" cudaError_t cudaDeviceGetAttribute(int* v, enum cudaDeviceAttr a, int d) { (void)a; (void)d; *v = 7; return (cudaError_t)0; }\n";
    s += "extern \"C\" cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void* f, int b, size_t shared) { (void)f; (void)b; (void)shared; *n = 3; return (cudaError_t)0; }\n";
    for r in &ops {
        let e = r["entry"].as_str().unwrap();
        let (a, c) = if r["layout"] == "pointers" { ("const double* const*", "double* const*") } else { ("const double*", "double*") };
        let ranks = if r["op"] == "ranksum" { ", int" } else { "" };
        s += &format!("extern \"C\" void {e}({a}, const double*, {c}, double*, int, int, long long, long long, double, double{ranks}) {{}}\n");
    }
    s += "extern \"C\" void mra_dir_matrices_k10_f64(const double*, int, double*) {}\n";
    s += "int main() {\n    double x[4096] = {0}; double* p = x;\n";
    s += "    printf(\"odd_stride %d\\n\", mra_transform_general_strided(10, p, 1001, p, 1002, p, 1.0, 0.0, p, 3, 0));\n";
    s += "    printf(\"short_stride %d\\n\", mra_transform_general_strided(10, p, 998, p, 1002, p, 1.0, 0.0, p, 3, 0));\n";
    s += "    printf(\"bad_dim %d\\n\", mra_transform_dir(10, p, p, p, 3, 1.0, 0.0, p, 3, 0));\n";
    s += "    printf(\"unsupported %d\\n\", mra_transform_ranksum(7, p, p, p, 2, 1.0, 0.0, p, 3, 0));\n";
    s += "    launches = 0; int rc = mra_transform_general_strided(10, p, 1002, p, 1006, p, 1.5, -0.75, p, 3, 0);\n";
    s += &format!("    printf(\"general rc=%d launches=%d right=%d stride=%lld alpha=%g beta=%g\\n\", rc, launches, funcs[0] == (const void*){}, stride_seen, alpha_seen, beta_seen);\n", entry("general", "strided"));
    s += "    launches = 0; rc = mra_transform_dir(10, p, p, p, 1, 2.0, 0.0, p, 3, 0);\n";
    s += &format!("    printf(\"dir rc=%d launches=%d fill_first=%d then_general=%d\\n\", rc, launches, funcs[0] == (const void*)mra_dir_matrices_k10_f64, funcs[1] == (const void*){});\n", entry("general", "contiguous"));
    s += "    launches = 0; rc = mra_transform_ranksum_pointers(10, (const double* const*)p, (double* const*)p, p, 16, 1.0, 0.5, p, 3, 0);\n";
    s += &format!("    printf(\"ranksum rc=%d launches=%d right=%d ranks=%d beta=%g\\n\", rc, launches, funcs[0] == (const void*){}, ranks_seen, beta_seen);\n", entry("ranksum", "pointers"));
    s += "    return 0;\n}\n";
    let prog = dir.join("ops.cpp");
    std::fs::write(&prog, s).unwrap();
    let exe = dir.join("ops");
    let stubs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stubs");
    let o = Command::new(&clang).args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-I"]).arg(&stubs).arg("-I").arg(&dir).arg(&prog).arg("-o").arg(&exe).output().unwrap();
    assert!(o.status.success(), "mra_transform_ops.h does not compile:\n{}", text(&o.stderr));
    let out = text(&Command::new(&exe).output().unwrap().stdout);
    for want in [
        "odd_stride -2",
        "short_stride -2",
        "bad_dim -2",
        "unsupported -1",
        "general rc=0 launches=1 right=1 stride=1002 alpha=1.5 beta=-0.75",
        "dir rc=0 launches=2 fill_first=1 then_general=1",
        "ranksum rc=0 launches=1 right=1 ranks=16 beta=0.5",
    ] {
        assert!(out.contains(want), "want `{want}` in:\n{out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

//! Every (level, K, dtype) lowers and compiles with NVRTC for sm_80 and sm_90, one block of each
//! fits an SM, and the register-blocked and fused levels do not spill up to K = 16 (ptxas
//! resource report).

use mra_codegen::{arch, levels, DType, Request};
use mra_runtime::cuda::nvrtc::Nvrtc;
use mra_runtime::KernelCache;
use mra_tests::{require, K_SPREAD};

/// Whether one block of `threads` fits the 65536 registers of an NVIDIA SM (sm_80 to sm_90) at
/// `registers` a thread: CUDA allocates a warp's registers in units of 256, so a thread's count
/// rounds up to a multiple of 8, and the hardware checks a block as if its warps were spread
/// evenly over the SM's 4 sub-partitions, so the warp count rounds up to a multiple of 4
/// (cuda_occupancy.h's per-block register check, not this project's code). So 134 registers ×
/// 416 threads (13 warps) does not fit, though 136 × 416 < 65536: the driver refuses its launch.
fn one_block_fits(registers: u32, threads: u32) -> bool {
    let per_warp = (registers * 32).div_ceil(256) * 256;
    threads.div_ceil(32).div_ceil(4) * 4 * per_warp <= 65536
}

/// Whether a kernel does not spill, or spills only because ptxas sits at the register cap the
/// CUDA dialect puts above 256 threads (the most for one block: 65536 / (warps rounded up to 4 ×
/// 32), down to a multiple of 8). Without the cap such a kernel takes more registers than one
/// block may have and never launches (fused-cluster K = 28 `pair_rows=1`: 168 at 512 threads),
/// so at the cap a spill is the price of launching at all. Every kernel must still fit.
fn no_spills_below_the_cap(r: &mra_runtime::cuda::nvrtc::ResourceReport, threads: u32) -> bool {
    let cap = 65536 / (threads.div_ceil(32).div_ceil(4) * 4 * 32) / 8 * 8;
    let clean = !r.spills() && r.stack_frame_bytes == 0;
    one_block_fits(r.registers, threads) && (clean || (threads > 256 && r.registers == cap))
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; .ci/run does)"]
fn every_level_compiles_with_nvrtc_for_sm80_and_sm90() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let cache = KernelCache::disabled();
    let mut compiled = 0;
    for arch_name in ["sm_80", "sm_90"] {
        let arch = arch::find(arch_name).unwrap();
        for level in levels::all() {
            for &k in K_SPREAD {
                for &dtype in DType::ALL {
                    let Ok(kernel) = mra_codegen::generate(&level, Request { k, arch, dtype }) else { continue };
                    if kernel.entry.is_empty() {
                        continue; // a library level without a kernel of its own
                    }
                    let out = nvrtc
                        .compile(&kernel.source, &kernel.entry, arch_name, &cache)
                        .unwrap_or_else(|e| panic!("{} K={k} {dtype} {arch_name}: {e}", level.name));
                    assert!(out.cubin.starts_with(b"\x7fELF"), "not a cubin");
                    // Nothing for a user's build to warn about (nvcc's front end is NVRTC's).
                    let warnings: Vec<&str> = out.log.lines().filter(|l| l.contains("warning")).collect();
                    assert!(warnings.is_empty(), "{} K={k} {dtype} {arch_name}: {warnings:?}", level.name);
                    let r = out.resources.expect("ptxas report in the NVRTC log");
                    // The register-blocked level, and the fused levels at their (per-K) defaults,
                    // keep everything in registers up to K = 16 (fused-groups' implicit
                    // 64-register cap once spilled at K = 9..16).
                    let no_spill = ["L3-regblk", "fused", "fused-pipe", "fused-groups", "fused-ring", "fused-1buf"];
                    if no_spill.contains(&level.name.as_str()) && k <= 16 {
                        assert!(!r.spills() && r.stack_frame_bytes == 0, "{} K={k} {dtype} {arch_name} spills: {r:?}", level.name);
                    }
                    // A kernel whose one block does not fit compiles and never launches.
                    assert!(one_block_fits(r.registers, kernel.threads()), "{} K={k} {dtype} {arch_name}: {} registers a thread, no block of {} threads fits", level.name, r.registers, kernel.threads());
                    compiled += 1;
                }
            }
        }
    }
    println!("compiled {compiled} kernels with NVRTC {}.{}", nvrtc.version.0, nvrtc.version.1);
    assert!(compiled >= 2 * 4 * K_SPREAD.len(), "too few kernels compiled: {compiled}");
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; .ci/run does)"]
fn the_kernel_cache_serves_the_second_compile() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let dir = std::env::temp_dir().join(format!("mra-nvrtc-cache-{}", std::process::id()));
    let cache = KernelCache::at(&dir);
    let l3 = levels::find("L3").unwrap();
    let kernel = mra_codegen::generate(&l3, Request { k: 7, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap();
    let cold = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap();
    let warm = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap();
    assert!(!cold.from_cache && warm.from_cache);
    assert_eq!(cold.cubin, warm.cubin);
    assert_eq!(cold.resources, warm.resources);
    println!("cold compile {:.1} ms, warm (cached) {:.2} ms", cold.seconds * 1e3, warm.seconds * 1e3);
    std::fs::remove_dir_all(dir).unwrap();
}

/// `fused` at its defaults from K = 17 to the largest K it plans (one or two blocks per SM; 512
/// threads where one block fills the SM, which uncapped took 130 registers at K = 23 on sm_90 so
/// that no block fitted). ptxas's report must show no spill and a register count at which one
/// block fits, on sm_80 (K ≤ 21) and sm_90 (K ≤ 24); the K ≤ 16 check above does not reach
/// these K.
#[test]
#[ignore = "needs NVRTC (run with --include-ignored; .ci/run does)"]
fn fused_at_its_defaults_does_not_spill_up_to_its_largest_k() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let cache = KernelCache::disabled();
    let fused = levels::find("fused").unwrap();
    let mut compiled = 0;
    for arch_name in ["sm_80", "sm_90"] {
        let arch = arch::find(arch_name).unwrap();
        for k in 17..=32u32 {
            let Ok(kernel) = mra_codegen::generate(&fused, Request { k, arch, dtype: DType::F64 }) else { continue };
            let what = format!("fused K={k} {arch_name} ({} threads)", kernel.threads());
            let out = nvrtc.compile(&kernel.source, &kernel.entry, arch_name, &cache).unwrap_or_else(|e| panic!("{what}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            assert!(!r.spills() && r.stack_frame_bytes == 0, "{what} spills: {r:?}");
            assert!(one_block_fits(r.registers, kernel.threads()), "{what}: {} registers a thread, no block fits", r.registers);
            compiled += 1;
        }
    }
    // sm_80 plans K = 17..21 and sm_90 K = 17..24 (shared memory): 13 kernels.
    assert_eq!(compiled, 13, "fused kernels planned from K = 17");
}

/// Every `cluster(N)` configuration the tuner may try (cluster size, three or four buffers,
/// threads, one or two tiles per wave) compiles for sm_90 at even and odd K (bulk copies and
/// their 8-byte `cp.async` fallback) without spilling at its launch bounds of one block.
#[test]
#[ignore = "needs NVRTC (run with --include-ignored; .ci/run does)"]
fn every_cluster_configuration_compiles_for_sm90() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let cache = KernelCache::disabled();
    let sm90 = arch::find("sm_90").unwrap();
    let level = levels::find("fused-cluster").unwrap();
    let mut compiled = 0;
    for k in [13, 28, 32] {
        // Every value of every parameter, at every cluster size, in at least one configuration
        // that plans: each configuration kept brings a (parameter, value) or a (cluster size,
        // parameter, value) pair not yet compiled. The full product repeats the same code
        // paths hundreds of times (ptxas takes seconds on each of these kernels).
        let mut seen = std::collections::HashSet::new();
        for cfg in level.space() {
            if cfg.get("min_blocks") != Some(&1) || cfg.get("pad_a") != Some(&4) || cfg.get("threads") == Some(&128) {
                continue; // the pad, launch bounds and a third block size change no code path
            }
            let s = level.with_config(&cfg).unwrap();
            let Ok(kernel) = mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 }) else { continue };
            let pairs: Vec<(u32, String, u32)> = cfg.iter().flat_map(|(n, &v)| [(0, n.clone(), v), (cfg["cluster"], n.clone(), v)]).collect();
            if pairs.iter().all(|p| seen.contains(p)) {
                continue;
            }
            seen.extend(pairs);
            let what = format!("K={k} {}", mra_codegen::tune::describe(&cfg));
            let out = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap_or_else(|e| panic!("{what}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            if cfg.get("unroll_rows") == Some(&1) {
                assert!(no_spills_below_the_cap(&r, kernel.threads()), "{what} spills or does not fit: {r:?}");
            }
            compiled += 1;
        }
    }
    assert!(compiled >= 20, "too few cluster kernels compiled: {compiled}");
    // The defaults themselves (the loop above skips 128 threads, which K = 25 and 28 now take):
    // every K from 25 to 32 without a spill, one block fitting.
    for k in 25..=32u32 {
        let kernel = mra_codegen::generate(&level, Request { k, arch: sm90, dtype: DType::F64 }).unwrap();
        let out = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap_or_else(|e| panic!("default K={k}: {e}"));
        let r = out.resources.expect("ptxas report in the NVRTC log");
        assert!(!r.spills() && r.stack_frame_bytes == 0 && one_block_fits(r.registers, kernel.threads()), "default K={k} ({} threads) spills or does not fit: {r:?}", kernel.threads());
    }
}

/// nvdisasm on PATH (`.ci/run` installs it from PyPI).
fn nvdisasm() -> Result<std::path::PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|d| d.join("nvdisasm")).find(|p| p.is_file()).ok_or_else(|| "no nvdisasm on PATH (`pip install nvidia-cuda-nvdisasm`)".into())
}

/// The opcodes of the SASS of `cubin` (nvdisasm), one per instruction: the first word after the
/// address comment and an optional predicate (`DMMA.16x8x4`, `LDS.128`, ...).
fn sass_opcodes(tool: &std::path::Path, cubin: &[u8], name: &str) -> Vec<String> {
    let file = std::env::temp_dir().join(format!("mra-sass-{}-{name}.cubin", std::process::id()));
    std::fs::write(&file, cubin).unwrap();
    let out = std::process::Command::new(tool).arg(&file).output().unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(out.status.success(), "nvdisasm: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let code = line.split("*/").nth(1)?;
            code.split_whitespace().find(|w| !w.starts_with('@')).map(str::to_string)
        })
        .collect()
}

/// Shared-memory store instructions in the SASS of `cubin`, by width: (STS.128, STS.64, other STS).
fn shared_stores(tool: &std::path::Path, cubin: &[u8], name: &str) -> (usize, usize, usize) {
    shared_accesses(tool, cubin, name, "STS")
}

/// Shared-memory instructions `op` (STS, LDS) in the SASS of `cubin`, by width: (op.128, op.64, other op).
fn shared_accesses(tool: &std::path::Path, cubin: &[u8], name: &str, op_name: &str) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    for op in sass_opcodes(tool, cubin, name) {
        match op.strip_prefix(op_name) {
            Some(".128") => counts.0 += 1,
            Some(".64") => counts.1 += 1,
            Some(w) if w.is_empty() || w.starts_with('.') => counts.2 += 1,
            _ => {}
        }
    }
    counts
}

/// Odd K in fused-pipe (sm_90, K = 5 to 23), as NVRTC and ptxas build it, without spills:
/// - `align_runs(1)` (the default at K = 15, 17, 21): every store into the shared intermediates
///   is one 16-byte STS.128 (a D column pair), none 8-byte; with align_runs(0) they are STS.64;
/// - `bulk_copy(1)` (the default at K = 9, 11, 13, 19; it needs align_runs(0)): the tensors
///   arrive by bulk copies (UBLKCP) plus one 8-byte LDGSTS per row; with bulk_copy(0) by LDGSTS
///   only. Either way the kernel has no other shared stores.
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn odd_k_fused_pipe_stores_pairs_and_copies_in_bulk_as_configured() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    let sm90 = arch::find("sm_90").unwrap();
    let pipe = levels::find("fused-pipe").unwrap();
    for k in [5u32, 7, 9, 11, 13, 15, 17, 19, 21, 23] {
        // The padded runs pair their stores at an even pad: K = 9 and 11 default to pad 3 (for their
        // bulk copies' split strides), so align_runs(1) takes the even pad below it there.
        let default_pad = mra_codegen::generate(&pipe, Request { k, arch: sm90, dtype: DType::F64 }).unwrap().plan.parameters["pad_a"];
        for (align, bulk) in [(1, 0), (0, 0), (0, 1)] {
            let what = format!("K={k} align_runs={align} bulk_copy={bulk}");
            let pad = if align == 1 { format!(",pad_a={}", default_pad & !1) } else { String::new() };
            let s = pipe.with_config(&mra_codegen::tune::parse_config(&format!("align_runs={align},bulk_copy={bulk}{pad}")).unwrap()).unwrap();
            let kernel = mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 }).unwrap();
            let out = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap_or_else(|e| panic!("{what}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            let ops = sass_opcodes(&tool, &out.cubin, &format!("k{k}-a{align}-b{bulk}"));
            let count = |op: &str| ops.iter().filter(|o| *o == op || o.starts_with(&format!("{op}."))).count();
            let (wide, narrow, sts) = (count("STS.128"), count("STS.64"), count("STS"));
            println!("{what}: {} registers, STS.128 {wide}, STS.64 {narrow}, UBLKCP {}, LDGSTS {}", r.registers, count("UBLKCP"), count("LDGSTS"));
            assert!(!r.spills() && r.stack_frame_bytes == 0, "{what} spills: {r:?}");
            assert_eq!(sts, wide + narrow, "{what}: other shared stores");
            if align == 1 {
                assert!(wide > 0 && narrow == 0, "{what}: {wide} STS.128, {narrow} STS.64");
            } else {
                assert!(wide == 0 && narrow > 0, "{what}: {wide} STS.128, {narrow} STS.64");
            }
            assert_eq!(count("UBLKCP") > 0, bulk == 1, "{what}");
            assert!(count("LDGSTS") > 0, "{what}: the rows' off-grid values (or every value) by cp.async");
        }
    }
}

/// Odd K in fused-cluster (sm_90, K = 23 to 31, each K's defaults), as NVRTC and ptxas build it,
/// the defaults without spills: with `bulk_copy(1)` (the default there) the slices arrive by
/// bulk copies (UBLKCP) plus 8-byte LDGSTS for the values off the 16-byte grid, and C leaves by a
/// bulk store: the only global stores left are the two values off its grid (STG). With
/// `bulk_copy(0)` the slices come by LDGSTS only and pass 2 stores C element by element.
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn odd_k_fused_cluster_copies_slices_and_c_in_bulk_as_configured() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    let sm90 = arch::find("sm_90").unwrap();
    let level = levels::find("fused-cluster").unwrap();
    for k in [23u32, 25, 27, 29, 31] {
        for bulk in [0, 1] {
            let what = format!("K={k} bulk_copy={bulk}");
            let s = level.with_config(&mra_codegen::tune::parse_config(&format!("bulk_copy={bulk}")).unwrap()).unwrap();
            let kernel = mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 }).unwrap();
            let out = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap_or_else(|e| panic!("{what}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            let ops = sass_opcodes(&tool, &out.cubin, &format!("cluster-k{k}-b{bulk}"));
            let count = |op: &str| ops.iter().filter(|o| *o == op || o.starts_with(&format!("{op}."))).count();
            println!("{what}: {} registers, UBLKCP {}, LDGSTS {}, STG {}", r.registers, count("UBLKCP"), count("LDGSTS"), count("STG"));
            // The defaults (bulk_copy(1)) do not spill; bulk_copy(0) at K = 31's layout does (28 B:
            // the tuner rejects it there).
            assert!(bulk == 0 || (!r.spills() && r.stack_frame_bytes == 0), "{what} spills: {r:?}");
            assert!(count("LDGSTS") > 0, "{what}: the values off the grid (or every value) by cp.async");
            if bulk == 1 {
                assert!(count("UBLKCP") >= 2, "{what}: bulk copies of the slices and the bulk store of C");
                assert!(count("STG") <= 2, "{what}: {} global stores (C's two values off the grid at most)", count("STG"));
            } else {
                assert_eq!(count("UBLKCP"), 0, "{what}");
                assert!(count("STG") > 2, "{what}: pass 2 stores C");
            }
        }
    }
}

/// `stack(N)` (fused-pipe, N = 2..4) compiles with NVRTC for sm_80 and sm_90 wherever it plans,
/// without spilling up to K = 16: cp.async staging (odd K, sm_80), bulk copies (even K on sm_90),
/// align_runs (K = 15), pair_rows (K = 12). Where the column pairs are 16-byte aligned (even K, or
/// align_runs at odd K) its shared stores are 16-byte STS.128 only, as unstacked: nvcc once split
/// them into STS.64 pairs, which this guards against for NVRTC's build.
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn every_stack_width_compiles_without_spills_and_stores_16_byte_pairs() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    let pipe = levels::find("fused-pipe").unwrap();
    let mut compiled = 0;
    for arch_name in ["sm_80", "sm_90"] {
        let arch = arch::find(arch_name).unwrap();
        for k in [3u32, 6, 7, 10, 12, 15, 16] {
            for n in 2..=4u32 {
                let s = pipe.with_config(&[("stack".to_string(), n)].into_iter().collect()).unwrap();
                let Ok(kernel) = mra_codegen::generate(&s, Request { k, arch, dtype: DType::F64 }) else { continue };
                let what = format!("stack({n}) K={k} {arch_name}");
                assert!(kernel.source.contains(&format!("constexpr int STACK = {n};")), "{what}");
                let out = nvrtc.compile(&kernel.source, &kernel.entry, arch_name, &cache).unwrap_or_else(|e| panic!("{what}: {e}"));
                let r = out.resources.expect("ptxas report in the NVRTC log");
                assert!(!r.spills() && r.stack_frame_bytes == 0, "{what} spills: {r:?}");
                if k % 2 == 0 || k == 15 {
                    let (wide, narrow, other) = shared_stores(&tool, &out.cubin, &format!("stack{n}-k{k}-{arch_name}"));
                    assert!(wide > 0 && narrow == 0 && other == 0, "{what}: STS.128 {wide}, STS.64 {narrow}, other {other}");
                }
                compiled += 1;
            }
        }
    }
    assert!(compiled >= 30, "too few stacked kernels compiled: {compiled}");
}

/// `pair_rows(1)` at even K: in the SASS, a lane's A fragment is one 16-byte LDS.128 per k-step
/// (none with pair_rows(0), whose A registers are two 8-byte LDS.64), the 8-byte loads drop by
/// at least the A fragments' share, and nothing spills below the register cap (fused-cluster K = 28 `pair_rows=1` spills at it;
/// uncapped it took 168 registers and could not launch): fused-pipe at K = 10, 12, 16, 20, 24 and
/// fused-cluster at K = 28, 29, 32 (slice passes, an even number of rows at every K). fused-pipe
/// at odd K: the rows are permuted but a pair can be 8-byte aligned only, so no LDS.128 there.
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn pair_rows_loads_a_fragments_as_16_byte_pairs() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    let sm90 = arch::find("sm_90").unwrap();
    let cases = [("fused-pipe", 10u32), ("fused-pipe", 12), ("fused-pipe", 16), ("fused-pipe", 20), ("fused-pipe", 24), ("fused-cluster", 28), ("fused-cluster", 32), ("fused-pipe", 13), ("fused-cluster", 29)];
    for (level, k) in cases {
        let mut loads = Vec::new();
        for pair in [0, 1] {
            // (fused-pipe: swap_operands(1), K = 10's default, has no row pairs.)
            let swap = if level == "fused-pipe" { ",swap_operands=0" } else { "" };
            let s = levels::find(level).unwrap().with_config(&mra_codegen::tune::parse_config(&format!("pair_rows={pair}{swap}")).unwrap()).unwrap();
            let kernel = mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 }).unwrap();
            let out = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap_or_else(|e| panic!("{level} K={k} pair_rows={pair}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            let counts = shared_accesses(&tool, &out.cubin, &format!("{level}-k{k}-p{pair}"), "LDS");
            println!("{level} K={k} pair_rows={pair}: {} registers, LDS.128 {}, LDS.64 {}, other LDS {}", r.registers, counts.0, counts.1, counts.2);
            assert!(no_spills_below_the_cap(&r, kernel.threads()), "{level} K={k} pair_rows={pair} spills or does not fit: {r:?}");
            loads.push(counts);
        }
        let (plain, paired) = (loads[0], loads[1]);
        // fused-cluster's slices hold an even number of values at every K (K·CL rows, CL even).
        if k % 2 == 0 || level == "fused-cluster" {
            assert!(plain.0 == 0 && paired.0 > 0, "{level} K={k}: LDS.128 {} -> {}", plain.0, paired.0);
            assert!(paired.1 < plain.1, "{level} K={k}: LDS.64 {} -> {} with {} LDS.128", plain.1, paired.1, paired.0);
        } else {
            assert_eq!(paired.0, plain.0, "{level} K={k}: odd K has no aligned pairs");
        }
    }
}

/// `swap_operands(1)` in fused-pipe, as NVRTC and ptxas build it: no spills on sm_90 (odd and even
/// K, up to K = 24) and sm_80; the transposed passes store single elements (STS.64, no STS.128),
/// where the untransposed ones store 16-byte column pairs at even K.
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn swap_operands_compiles_without_spills_and_stores_single_elements() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    let pipe = levels::find("fused-pipe").unwrap();
    let cases = [("sm_90", 5u32), ("sm_90", 7), ("sm_90", 10), ("sm_90", 11), ("sm_90", 13), ("sm_90", 16), ("sm_90", 20), ("sm_90", 24), ("sm_80", 10), ("sm_80", 12)];
    for (arch_name, k) in cases {
        let arch = arch::find(arch_name).unwrap();
        for swap in [1, 0] {
            let what = format!("{arch_name} K={k} swap_operands={swap}");
            let s = pipe.with_config(&mra_codegen::tune::parse_config(&format!("swap_operands={swap},pair_rows=0,unroll_k=0")).unwrap()).unwrap();
            let kernel = mra_codegen::generate(&s, Request { k, arch, dtype: DType::F64 }).unwrap();
            let out = nvrtc.compile(&kernel.source, &kernel.entry, arch_name, &cache).unwrap_or_else(|e| panic!("{what}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            let (wide, narrow, other) = shared_stores(&tool, &out.cubin, &format!("swap-{arch_name}-k{k}-{swap}"));
            println!("{what}: {} registers, STS.128 {wide}, STS.64 {narrow}, other STS {other}", r.registers);
            assert!(no_spills_below_the_cap(&r, kernel.threads()), "{what} spills or does not fit: {r:?}");
            if swap == 1 {
                assert!(wide == 0 && narrow > 0, "{what}: {wide} STS.128, {narrow} STS.64");
            } else if k % 2 == 0 && kernel.plan.parameters["align_runs"] == 0 {
                assert!(wide > 0, "{what}: the untransposed passes store column pairs");
            }
        }
    }
}

/// DMMA instructions in the SASS of `cubin`, by opcode (`DMMA.16x8x4`, `DMMA.16x8x8`, ...).
fn dmma_opcodes(tool: &std::path::Path, cubin: &[u8], name: &str) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for op in sass_opcodes(tool, cubin, name).into_iter().filter(|op| op.starts_with("DMMA")) {
        *counts.entry(op).or_insert(0) += 1;
    }
    counts
}

/// `fuse_k(N)` in the SASS: a tile's ceil(K/4) k-steps become the deep DMMAs the greedy split
/// promises (table written by hand from the rule: as many N deep as fit, the rest at the
/// largest power of two), in the same number of pass bodies as with fuse_k(1), and nothing
/// spills. E.g. K = 20 (5 steps) with fuse_k(2): two m16n8k8 and one m16n8k4 where fuse_k(1)
/// has five m16n8k4.
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn fuse_k_issues_the_deep_dmmas_the_split_promises() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    let sm90 = arch::find("sm_90").unwrap();
    // (level, K, fuse_k, per pass body and column fragment: [k4, k8, k16] instructions).
    let cases: [(&str, u32, u32, [usize; 3]); 8] = [
        ("fused-pipe", 12, 2, [1, 1, 0]),
        ("fused-pipe", 16, 2, [0, 2, 0]),
        ("fused-pipe", 16, 4, [0, 0, 1]),
        ("fused-pipe", 20, 2, [1, 2, 0]),
        ("fused-pipe", 20, 4, [1, 0, 1]),
        ("fused-pipe", 24, 4, [0, 1, 1]),
        ("fused-cluster", 32, 2, [0, 4, 0]),
        ("fused-cluster", 29, 4, [0, 0, 2]),
    ];
    for (level, k, n, want) in cases {
        let mut seen = Vec::new();
        for fuse in [1, n] {
            let s = levels::find(level).unwrap().with_config(&mra_codegen::tune::parse_config(&format!("fuse_k={fuse}")).unwrap()).unwrap();
            let kernel = mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 }).unwrap();
            let out = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap_or_else(|e| panic!("{level} K={k} fuse_k={fuse}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            assert!(!r.spills() && r.stack_frame_bytes == 0, "{level} K={k} fuse_k={fuse} spills: {r:?}");
            let ops = dmma_opcodes(&tool, &out.cubin, &format!("{level}-k{k}-f{fuse}"));
            println!("{level} K={k} fuse_k={fuse}: {} registers, {ops:?}", r.registers);
            seen.push(ops);
        }
        let get = |ops: &std::collections::BTreeMap<String, usize>, op: &str| ops.get(op).copied().unwrap_or(0);
        let steps = k.div_ceil(4) as usize;
        let plain = get(&seen[0], "DMMA.16x8x4");
        assert!(plain > 0 && plain % steps == 0 && seen[0].len() == 1, "{level} K={k} fuse_k=1: {:?}", seen[0]);
        let bodies = plain / steps;
        let got = [get(&seen[1], "DMMA.16x8x4"), get(&seen[1], "DMMA.16x8x8"), get(&seen[1], "DMMA.16x8x16")];
        assert_eq!(got, want.map(|c| c * bodies), "{level} K={k} fuse_k={n}: {:?}", seen[1]);
    }
}

/// `fma_tail(1)` in the SASS (fused-pipe with the step added, sm_90): the instructions cover floor(K / 8) column
/// fragments instead of ceil(K / 8), so each pass body has that many DMMAs per k-step, and
/// gains K · TAIL_ROWS DFMAs (a lane's rows times the contraction; TAIL_ROWS =
/// ceil(16 / floor(32 / (K mod 8))), written here from the mapping's definition) where fma_tail(0)
/// has none; nothing spills below the register cap (K = 20, 416 threads: 124 registers uncapped, 128 and a
/// spill with the cap).
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn fma_tail_trades_the_padded_fragment_for_dfmas() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    let sm90 = arch::find("sm_90").unwrap();
    // (K, TAIL_ROWS)
    for (k, tail_rows) in [(10u32, 1usize), (11, 2), (12, 2), (13, 3), (14, 4), (18, 1), (20, 2), (23, 4)] {
        let mut seen = Vec::new();
        for tail in [0, 1] {
            let cfg = format!("fma_tail={tail},fuse_k=1,bulk_copy=0");
            // (swap_operands(1), K = 10's default, has no FMA tail.)
            let mut s = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config("fuse_k=1,bulk_copy=0,swap_operands=0").unwrap()).unwrap();
            s.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::FmaTail(mra_codegen::ir::Value::Fixed(tail)), line: 0 });
            let kernel = mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 }).unwrap();
            let out = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap_or_else(|e| panic!("K={k} {cfg}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            assert!(no_spills_below_the_cap(&r, kernel.threads()), "K={k} {cfg} spills or does not fit: {r:?}");
            let ops = sass_opcodes(&tool, &out.cubin, &format!("tail-k{k}-{tail}"));
            let count = |name: &str| ops.iter().filter(|op| op.split('.').next() == Some(name)).count();
            println!("K={k} fma_tail={tail}: {} registers, {} DMMA, {} DFMA", r.registers, count("DMMA"), count("DFMA"));
            seen.push((count("DMMA"), count("DFMA")));
        }
        // Pass bodies: ptxas may duplicate one (a peeled tile loop), differently per kernel.
        let steps = k.div_ceil(4) as usize;
        for (i, frags) in [(0, k.div_ceil(8) as usize), (1, k as usize / 8)] {
            let bodies = seen[i].0 / (steps * frags);
            let dfma = if i == 0 { 0 } else { bodies * k as usize * tail_rows };
            assert!(bodies > 0 && seen[i] == (bodies * steps * frags, dfma), "K={k} fma_tail={i}: {:?}, {bodies} bodies of {steps} k-steps x {frags} fragments", seen[i]);
        }
    }
}

/// The bound in the SASS: the arch's f64 instruction and nothing else (sm_90: m16n8k4 as
/// DMMA.16x8x4, the shape the transform levels use; sm_80: m8n8k4, which nvdisasm writes DMMA.884), one per
/// accumulator chain in the loop plus one for an odd remainder, twice where every wave
/// interleaves them with its copy (shadow_mma(0): in the copy loop and after it); no spills,
/// and few registers: 40 split (12 blocks of 128 threads per SM), 48 where every wave holds
/// its copy and its accumulators at once (10 blocks).
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn the_bound_issues_the_archs_dmma_and_keeps_its_registers_low() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    for (arch_name, op) in [("sm_90", "DMMA.16x8x4"), ("sm_80", "DMMA.884")] {
        for (split, want, registers) in [(1, 3, 40), (0, 6, 48)] {
            for k in [7, 10, 32] {
                let s = levels::find("bound").unwrap().with_config(&mra_codegen::tune::parse_config(&format!("shadow_mma={split}")).unwrap()).unwrap();
                let kernel = mra_codegen::generate(&s, Request { k, arch: arch::find(arch_name).unwrap(), dtype: DType::F64 }).unwrap();
                let out = nvrtc.compile(&kernel.source, &kernel.entry, arch_name, &cache).unwrap_or_else(|e| panic!("bound K={k} {arch_name}: {e}"));
                let r = out.resources.expect("ptxas report in the NVRTC log");
                let ops = dmma_opcodes(&tool, &out.cubin, &format!("bound-{arch_name}-k{k}-s{split}"));
                println!("bound K={k} {arch_name} shadow_mma={split}: {} registers, {ops:?}", r.registers);
                assert_eq!(ops.into_iter().collect::<Vec<_>>(), vec![(op.to_string(), want)], "bound K={k} {arch_name} shadow_mma={split}");
                assert!(!r.spills() && r.stack_frame_bytes == 0 && r.registers <= registers, "bound K={k} {arch_name} shadow_mma={split}: {r:?}");
            }
        }
    }
}

/// fused-split (K = 32, sm_90) in the SASS NVRTC makes of it, at every tunable configuration (fuse_k 2, 4 ×
/// prefetch_l2 2, 3):
/// no spills and one block fits; only the deep DMMA its fuse_k asks for, as many as the passes
/// written out per half (the kernel is instantiated for both halves of z): pass 0 and pass 1 of
/// a slice KS·KS and MT·(ZH/8)·KS instructions at m16n8k8 (KS = 4 k-steps of 8, MT = 2
/// m-tiles, ZH = 16), pass 1 once more after the slice loop, the last pass MT·4·KS per round,
/// half as many at m16n8k16; and C's pairs as 16-byte STG.E.128 only, 2 halves × MT × 4
/// fragments × 2 rows = 32 (NVRTC once split the double2 stores of this kernel into 8-byte
/// STG.E.64: 30% slower).
#[test]
#[ignore = "needs NVRTC and nvdisasm (run with --include-ignored; .ci/run does)"]
fn fused_split_issues_deep_dmmas_and_16_byte_stores_of_c() {
    let Some(nvrtc) = require("NVRTC (libnvrtc)", Nvrtc::load()) else { return };
    let Some(tool) = require("nvdisasm", nvdisasm()) else { return };
    let cache = KernelCache::disabled();
    let sm90 = arch::find("sm_90").unwrap();
    let (ks, mt, zf) = (4usize, 2usize, 2usize);
    let per_half_k8 = ks * ks + mt * zf * ks + mt * zf * ks + mt * 4 * ks;
    for fuse in [2u32, 4] {
        for prefetch in [2u32, 3] {
            let cfg = format!("fuse_k={fuse},prefetch_l2={prefetch}");
            let s = levels::find("fused-split").unwrap().with_config(&mra_codegen::tune::parse_config(&cfg).unwrap()).unwrap();
            let kernel = mra_codegen::generate(&s, Request { k: 32, arch: sm90, dtype: DType::F64 }).unwrap();
            let out = nvrtc.compile(&kernel.source, &kernel.entry, "sm_90", &cache).unwrap_or_else(|e| panic!("{cfg}: {e}"));
            let r = out.resources.expect("ptxas report in the NVRTC log");
            assert!(!r.spills() && r.stack_frame_bytes == 0 && one_block_fits(r.registers, 256), "{cfg}: {r:?}");
            let ops = sass_opcodes(&tool, &out.cubin, &format!("split-{fuse}-{prefetch}"));
            let count = |op: &str| ops.iter().filter(|o| *o == op).count();
            let (deep, want) = if fuse == 2 { ("DMMA.16x8x8", 2 * per_half_k8) } else { ("DMMA.16x8x16", per_half_k8) };
            let dmmas = ops.iter().filter(|o| o.starts_with("DMMA")).count();
            println!("fused-split {cfg}: {} registers, {deep} {}, STG.E.128 {}, STG.E.64 {}", r.registers, count(deep), count("STG.E.128"), count("STG.E.64"));
            assert_eq!((count(deep), dmmas), (want, want), "{cfg}");
            assert_eq!((count("STG.E.128"), count("STG.E.64")), (2 * mt * 4 * 2, 0), "{cfg}");
        }
    }
}

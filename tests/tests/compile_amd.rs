//! Every (level, K, dtype) lowers to HIP and compiles offline for the AMD archs with clang
//! (gfx90a, gfx942, gfx1100, gfx1151, gfx1201), and with hiprtc for gfx90a. The code object's
//! metadata shows the register-blocked level does not spill up to K = 16, and the disassembly
//! checks the matrix instructions each level holds against its schedule.

use mra_codegen::{arch, levels, DType, Request};
use mra_runtime::hip::clang::Clang;
use mra_runtime::hip::hiprtc::Hiprtc;
use mra_runtime::hip::report::{self, Objdump};
use mra_runtime::hip::{is_amdgpu_elf, HipError, AMD_ARCHS};
use mra_tests::{require, K_SPREAD};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// One compiled kernel's line in the resource table.
struct Row {
    level: String,
    /// Matrix instructions the schedule implies per pass instance: K_STEPS × N_FRAGS for a
    /// tensorized level, 0 otherwise.
    implied_per_pass: u32,
    /// The bound level's shadow instructions in the code object: one per accumulator chain in
    /// its loop plus one for an odd remainder (3), twice where every wave interleaves them
    /// with its copy (`shadow_mma(0)`: 6); None for other levels.
    shadow: Option<u32>,
    k: u32,
    arch: &'static str,
    dtype: DType,
    res: report::KernelResources,
    matrix: report::MatrixCounts,
    seconds: f64,
}

/// K_STEPS × N_FRAGS of a tensorized kernel (0 for thread-mapped levels).
fn implied_per_pass(kernel: &mra_codegen::Kernel) -> u32 {
    match kernel.plan.body {
        mra_codegen::plan::Body::Transform(t) => t.fragment.map_or(0, |f| {
            let k = kernel.plan.request.k;
            mra_codegen::plan::TransformPlan::padded(k, f.k) / f.k * (mra_codegen::plan::TransformPlan::padded(k, f.n) / f.n)
        }),
        _ => 0,
    }
}

/// K values the printed table shows: the ones of interest.
const TABLE_KS: &[u32] = &[6, 8, 10, 12, 16, 20, 32];

/// What is compiled for an arch. gfx90a (CDNA2), gfx942 (CDNA3) and gfx1100 (RDNA3): every K
/// of K_SPREAD, f64 and f32. gfx1151 (RDNA3.5, near gfx1100) and gfx1201 (RDNA4): f64 at the
/// K of interest, which keeps the file near a minute and a half on 2 cores (~0.2 s per clang
/// call; all of K_SPREAD and both dtypes there would add ~40% to the time).
fn coverage(arch: &str) -> (&'static [u32], &'static [DType]) {
    match arch {
        "gfx1151" | "gfx1201" => (TABLE_KS, &[DType::F64, DType::F16, DType::Bf16]),
        _ => (K_SPREAD, DType::ALL),
    }
}

#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn every_level_compiles_with_clang_for_every_amd_arch() {
    let Some(clang) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let Some(objdump) = require("llvm-objdump", Objdump::find()) else { return };

    // Every (level, K, arch, dtype) the planner accepts; a level that cannot plan is skipped.
    let mut jobs = Vec::new();
    let mut refused = 0;
    for &arch_name in AMD_ARCHS {
        let arch = arch::find(arch_name).unwrap();
        let (ks, dtypes) = coverage(arch_name);
        for level in levels::all() {
            for &k in ks {
                for &dtype in dtypes {
                    match mra_codegen::generate(&level, Request { k, arch, dtype }) {
                        // A library level without a kernel of its own has nothing to compile.
                        Ok(kernel) if kernel.entry.is_empty() => {}
                        Ok(kernel) => jobs.push((arch_name, k, dtype, kernel)),
                        Err(_) => refused += 1,
                    }
                }
            }
        }
    }

    // Compile on every core: each clang call works in a temporary directory of its own.
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let rows = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(jobs.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((arch_name, k, dtype, kernel)) = jobs.get(i) else { break };
                let what = format!("{} K={k} {dtype} {arch_name}", kernel.level);
                let result = clang.compile(&kernel.source, arch_name).and_then(|co| {
                    if !is_amdgpu_elf(&co.bytes) {
                        return Err(HipError::BadCodeObject("clang wrote no AMDGPU ELF code object".into()));
                    }
                    let r = report::report(&co, &objdump)?;
                    Ok((co.seconds, r))
                });
                match result {
                    Err(e) => failures.lock().unwrap().push(format!("{what}: {e}")),
                    Ok((seconds, r)) => match r.kernel(&kernel.entry) {
                        None => failures.lock().unwrap().push(format!("{what}: no kernel {} in the code object metadata", kernel.entry)),
                        Some(res) => rows.lock().unwrap().push(Row {
                            level: kernel.level.clone(),
                            implied_per_pass: implied_per_pass(kernel),
                            shadow: match kernel.plan.body {
                                mra_codegen::plan::Body::Copy { shadow: Some(sh), .. } => Some(if sh.split { 3 } else { 6 }),
                                _ => None,
                            },
                            k: *k,
                            arch: arch_name,
                            dtype: *dtype,
                            res: res.clone(),
                            matrix: r.matrix,
                            seconds,
                        }),
                    },
                }
            });
        }
    });
    let wall = start.elapsed().as_secs_f64();
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} of {} kernels failed to compile:\n{}", failures.len(), jobs.len(), failures.join("\n\n"));
    let mut rows = rows.into_inner().unwrap();
    rows.sort_by_key(|r| (r.level.clone(), r.k, AMD_ARCHS.iter().position(|a| *a == r.arch), r.dtype.name()));

    print_table(&rows);
    let compile_seconds: f64 = rows.iter().map(|r| r.seconds).sum();
    println!(
        "compiled {} kernels with {} for {} in {wall:.1} s wall on {workers} threads ({compile_seconds:.1} s of clang time; {refused} combinations the planner refused, skipped)",
        rows.len(),
        clang.describe(),
        AMD_ARCHS.join(", "),
    );

    let mut problems = Vec::new();
    for r in &rows {
        let what = format!("{} K={} {} {}", r.level, r.k, r.dtype, r.arch);
        // A spill to memory (VGPR spills, scratch) fails every level up to K = 16. SGPR spills
        // go to VGPR lanes (v_writelane/v_readlane, no memory traffic) and are reported only.
        if r.k <= 16 && (r.res.vgpr_spill_count > 0 || r.res.scratch_bytes > 0) {
            problems.push(format!("{what} spills to memory: {:?}", r.res));
        }
        // The code object holds as many matrix instructions as the schedule implies: each of
        // the three inlined passes issues K_STEPS × N_FRAGS per tile; the compiler may unroll
        // the tile loop, which multiplies the count. Thread-mapped levels hold none.
        let held = r.matrix.mfma + r.matrix.wmma;
        if let Some(want) = r.shadow {
            if held != want {
                problems.push(format!("{what} holds {held} matrix instructions; its shadow_mma loop has {want}"));
            }
        } else if r.implied_per_pass == 0 {
            if held != 0 {
                problems.push(format!("{what} holds {held} matrix instructions but its schedule has no tensorize"));
            }
        } else if held < 3 * r.implied_per_pass || held % r.implied_per_pass != 0 {
            problems.push(format!(
                "{what} holds {held} matrix instructions; the schedule implies 3 passes x {} per tile",
                r.implied_per_pass
            ));
        }
        let wave = arch::find(r.arch).unwrap().wave_size;
        if r.res.wavefront_size != wave {
            problems.push(format!("{what}: compiled for wave{}, the arch table says wave{wave}", r.res.wavefront_size));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let expected_at_least: usize = AMD_ARCHS.iter().map(|a| coverage(a).0.len()).sum::<usize>() * 4;
    assert!(rows.len() >= expected_at_least, "too few kernels compiled: {} (expected at least {expected_at_least})", rows.len());
}

/// One line per (level, K) for f64 at the K of interest, one column group per arch:
/// `vgpr/sgpr lds scratch`, then the largest values over every K and dtype.
fn print_table(rows: &[Row]) {
    let mut head = format!("{:<14} {:>3}", "level", "K");
    for a in AMD_ARCHS {
        head += &format!(" | {:<22}", format!("{a} vgpr/sgpr lds scr"));
    }
    println!("\nAMD resources, f64 (vgpr includes AGPRs on gfx90a/gfx942; lds and scratch in bytes):\n{head}");
    let mut levels: Vec<&str> = rows.iter().map(|r| r.level.as_str()).collect();
    levels.dedup();
    for level in &levels {
        for &k in TABLE_KS {
            let mut line = format!("{level:<14} {k:>3}");
            for a in AMD_ARCHS {
                let cell = rows
                    .iter()
                    .find(|r| r.level == *level && r.k == k && r.arch == *a && r.dtype == DType::F64)
                    .map(|r| format!("{}/{} {} {}", r.res.vgpr_count, r.res.sgpr_count, r.res.lds_bytes, r.res.scratch_bytes))
                    .unwrap_or_else(|| "-".into());
                line += &format!(" | {cell:<22}");
            }
            println!("{line}");
        }
    }
    println!("largest over every K and dtype compiled (gfx90a, gfx942, gfx1100: K in {K_SPREAD:?}, f64 and f32; gfx1151, gfx1201: K in {TABLE_KS:?}, f64):");
    for level in &levels {
        for a in AMD_ARCHS {
            let of = |f: fn(&Row) -> u32| rows.iter().filter(|r| r.level == *level && r.arch == *a).map(f).max().unwrap_or(0);
            println!(
                "  {level:<14} {a:<8} vgpr {:>3}  agpr {:>3}  sgpr {:>3}  lds {:>5}  scratch {:>4}  vgpr spills {:>3}  sgpr spills {:>3}",
                of(|r| r.res.vgpr_count),
                of(|r| r.res.agpr_count),
                of(|r| r.res.sgpr_count),
                of(|r| r.res.lds_bytes),
                of(|r| r.res.scratch_bytes),
                of(|r| r.res.vgpr_spill_count),
                of(|r| r.res.sgpr_spill_count),
            );
        }
    }
}

#[test]
#[ignore = "needs hiprtc (run with --include-ignored; .ci/run does)"]
fn every_level_compiles_with_hiprtc_for_gfx90a() {
    let Some(hiprtc) = require("hiprtc (libhiprtc or libamdhip64)", Hiprtc::load()) else { return };
    let gfx90a = arch::find("gfx90a").unwrap();
    let start = Instant::now();
    let mut compiled = 0;
    for level in levels::all() {
        for k in [1, 7, 16, 32] {
            let Ok(kernel) = mra_codegen::generate(&level, Request { k, arch: gfx90a, dtype: DType::F64 }) else { continue };
            if kernel.entry.is_empty() {
                continue; // a library level without a kernel of its own
            }
            let co = hiprtc
                .compile(&kernel.source, &kernel.entry, "gfx90a")
                .unwrap_or_else(|e| panic!("{} K={k} f64 gfx90a: {e}", level.name));
            assert!(co.is_amdgpu_elf(), "{} K={k}: hiprtc returned no AMDGPU ELF code object", level.name);
            let meta = report::read_metadata(&co.bytes).unwrap_or_else(|e| panic!("{} K={k}: {e}", level.name));
            assert!(meta.target.ends_with("gfx90a"), "{} K={k}: target {}", level.name, meta.target);
            let r = meta.kernel(&kernel.entry).unwrap_or_else(|| panic!("{} K={k}: no kernel {} in the metadata", level.name, kernel.entry));
            println!("hiprtc {:<14} K={k:<2} vgpr {:>3} sgpr {:>3} lds {:>5} scratch {:>4}", level.name, r.vgpr_count, r.sgpr_count, r.lds_bytes, r.scratch_bytes);
            compiled += 1;
        }
    }
    println!("compiled {compiled} kernels with hiprtc {} in {:.1} s", hiprtc.version_string(), start.elapsed().as_secs_f64());
    assert!(compiled >= 4 * 4, "too few kernels compiled: {compiled}");

    // An arch this hiprtc would abort on is refused with a pointer to clang, never attempted.
    if !hiprtc.supports("gfx942") {
        let err = hiprtc.compile("", "k", "gfx942").unwrap_err().to_string();
        assert!(err.contains("gfx942") && err.contains("use clang"), "{err}");
    }
}

/// The generated HIP gives a user's `hipcc -Wall -Wextra` build nothing to warn about: every level at
/// every K of the spread, f64, for a wave-64 and a wave-32 arch (their dialects differ), checked
/// by clang's front end alone (`-fsyntax-only`: Sema is where the unused-variable, sign and
/// shadowing warnings live), each compile in parallel.
#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn generated_hip_compiles_without_warnings_under_wall_wextra() {
    let Some(clang) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let dir = std::env::temp_dir().join(format!("mra-wall-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut jobs = Vec::new();
    for arch_name in ["gfx942", "gfx1100"] {
        let arch = arch::find(arch_name).unwrap();
        for level in levels::all() {
            for &k in K_SPREAD {
                let Ok(kernel) = mra_codegen::generate(&level, Request { k, arch, dtype: DType::F64 }) else { continue };
                if kernel.entry.is_empty() {
                    continue;
                }
                let path = dir.join(format!("{}_{k}_{arch_name}.hip", kernel.entry));
                std::fs::write(&path, &kernel.source).unwrap();
                jobs.push((format!("{} K={k} {arch_name}", level.name), arch_name, path));
            }
        }
    }
    let next = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..std::thread::available_parallelism().map_or(2, |n| n.get()) {
            s.spawn(|| loop {
                let Some((what, arch_name, path)) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                if let Some(first) = wall_wextra_complaints(&clang, arch_name, path) {
                    found.lock().unwrap().push(format!("{what}: {first}"));
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let found = found.into_inner().unwrap();
    assert!(found.is_empty(), "{} of {} kernels warn under -Wall -Wextra:\n{}", found.len(), jobs.len(), found.join("\n"));
}

/// The rank sum's own schedule choices on the CDNA archs (`fused` with `stage_terms(2)`, `(3)` and
/// `restage_a(1)`, every layout, odd and even K up to what each fits in 64 KiB of LDS) compile
/// with clang to a code object holding the kernel, with no warning under -Wall -Wextra.
#[test]
#[ignore = "needs clang with the AMDGPU target (run with --include-ignored; .ci/run does)"]
fn rank_sum_schedule_choices_compile_for_cdna() {
    use mra_codegen::{Layout, Matrices, Operation};
    let Some(clang) = require("clang with the AMDGPU target", Clang::find()) else { return };
    let dir = std::env::temp_dir().join(format!("mra-ranksum-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut compiled = 0;
    for arch_name in ["gfx90a", "gfx942"] {
        let arch = arch::find(arch_name).unwrap();
        for (config, ks) in [("stage_terms=2", [7, 13]), ("stage_terms=3", [7, 12]), ("restage_a=1", [8, 15])] {
            let level = levels::find("fused").unwrap().with_config(&mra_codegen::config::parse_config(config).unwrap()).unwrap();
            for k in ks {
                for layout in [Layout::Contiguous, Layout::Strided, Layout::Pointers] {
                    let op = Operation { matrices: Matrices::RankSum, layout, scaled: true };
                    let what = format!("{config} K={k} {layout:?} {arch_name}");
                    let kernel = mra_codegen::generate_op(&level, Request { k, arch, dtype: DType::F64 }, op).unwrap();
                    match clang.compile(&kernel.source, arch_name) {
                        Ok(co) if is_amdgpu_elf(&co.bytes) => compiled += 1,
                        Ok(_) => failures.push(format!("{what}: no AMDGPU ELF code object")),
                        Err(e) => failures.push(format!("{what}: {e}")),
                    }
                    let path = dir.join(format!("{}_{arch_name}.hip", kernel.entry));
                    std::fs::write(&path, &kernel.source).unwrap();
                    if let Some(first) = wall_wextra_complaints(&clang, arch_name, &path) {
                        failures.push(format!("{what}: {first}"));
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(compiled, 2 * 3 * 2 * 3);
}

/// clang's front end on the HIP source at `path` for `arch_name` under -Wall -Wextra: its first
/// three warning or error lines, or None when it compiles without a word.
fn wall_wextra_complaints(clang: &Clang, arch_name: &str, path: &std::path::Path) -> Option<String> {
    let out = std::process::Command::new(&clang.path)
        .args(["-x", "hip", "--cuda-device-only", "-nogpulib", "-nogpuinc", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra"])
        .arg(format!("--offload-arch={arch_name}"))
        .arg(path)
        .output()
        .expect("run clang");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let quiet = out.status.success() && !stderr.contains("warning:");
    (!quiet).then(|| format!("{:?}", stderr.lines().filter(|l| l.contains("warning:") || l.contains("error:")).take(3).collect::<Vec<_>>()))
}

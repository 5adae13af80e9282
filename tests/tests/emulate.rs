//! The CPU wave emulator runs the generated HIP itself through the same harness as a GPU.

use mra_codegen::emit::PRELUDE_END;
use mra_codegen::{arch, levels, DType, Request};
use mra_runtime::emulate::{Checker, Emulator, HostClang, Sabotage};
use mra_runtime::harness::{self, EmulatorSession, HarnessConfig, Inputs, Session};
use mra_runtime::KernelCache;
use mra_tests::require;

fn session(arch: &str, sabotage: Sabotage) -> Option<EmulatorSession> {
    let clang = require("clang++ with AddressSanitizer (the CPU wave emulator)", HostClang::find())?;
    let emulator = Emulator::with_sabotage(arch::find(arch).unwrap(), sabotage).unwrap();
    Some(Session { gpu: emulator, compiler: clang, cache: KernelCache::from_env() })
}

/// The emulator with ThreadSanitizer's race check (`validate --emulate --races`).
fn race_session(arch: &str) -> Option<EmulatorSession> {
    require("clang++ with AddressSanitizer (the CPU wave emulator)", HostClang::find())?;
    let emulator = Emulator::new(arch::find(arch).unwrap()).unwrap().checking(Checker::Races);
    require("clang++ with ThreadSanitizer (the race check)", EmulatorSession::open_emulator(emulator, KernelCache::from_env()))
}

/// max relative error and pass/fail of one emulated validation.
fn validate(s: &EmulatorSession, level: &str, k: u32, dtype: DType, n: usize) -> (f64, bool) {
    let p = s.prepare(&levels::find(level).unwrap(), k, dtype).unwrap();
    let cfg = HarnessConfig { nfuncs: n, max_blocks: 512, tasks: 1, streams: 1, reps: 1, warmup: Default::default(), stream_data: Default::default() };
    let bufs = s.allocate(&cfg, &p.kernel.plan).unwrap();
    let inputs = Inputs::random(dtype, k, n, rand_seed());
    let cmp = harness::validate(&s.gpu, &p, &bufs, &inputs).unwrap();
    (cmp.max_rel, cmp.passes(dtype.tolerance()))
}

fn rand_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
}

#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn l4_on_gfx90a_passes() {
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    let t = std::time::Instant::now();
    for k in [5, 16] {
        let (rel, pass) = validate(&s, "4", k, DType::F64, 3);
        println!("K={k} rel {rel:e} {:.1}s", t.elapsed().as_secs_f64());
        assert!(pass, "K={k}: {rel}");
    }
}

/// RDNA4 (gfx1201, wave32): its WMMA's layout has no replicated lanes and splits k between the
/// half-waves (emulate/layouts.rs); the generated kernels pass on it in f16 and bf16.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn l7_and_l4_on_gfx1201_pass() {
    let Some(s) = session("gfx1201", Sabotage::None) else { return };
    let t = std::time::Instant::now();
    for (level, k, dtype) in [("L7", 7, DType::Bf16), ("4", 16, DType::F16)] {
        let (rel, pass) = validate(&s, level, k, dtype, 3);
        println!("{level} K={k} {dtype} rel {rel:e} {:.1}s", t.elapsed().as_secs_f64());
        assert!(pass, "{level} K={k} {dtype} on gfx1201: {rel}");
    }
}

#[test]
fn the_emulated_source_is_the_gpu_source_after_the_prelude() {
    for (arch, level, dtype) in [("gfx90a", "4", DType::F64), ("gfx1100", "4", DType::F16), ("gfx1201", "L7", DType::Bf16), ("gfx942", "fused", DType::F64), ("gfx1151", "3", DType::F32)] {
        let a = arch::find(arch).unwrap();
        let kernel = mra_codegen::generate(&levels::find(level).unwrap(), Request { k: 7, arch: a, dtype }).unwrap();
        let emu = Emulator::new(a).unwrap().source(&kernel.source, &kernel.entry).unwrap();
        let gpu_body = &kernel.source[kernel.source.find(PRELUDE_END).unwrap()..];
        let emu_body = &emu[emu.find(PRELUDE_END).unwrap()..];
        assert!(emu_body.starts_with(gpu_body), "{arch} {level}: the kernel text after the prelude changed");
        // After the `#line` directive that names the kernel's lines as its own.
        let header = &kernel.source[..kernel.source.find(mra_codegen::emit::PRELUDE_BEGIN).unwrap()];
        let (directive, emu_text) = emu.split_once('\n').unwrap();
        assert_eq!(directive, format!("#line 1 \"{}.hip\"", kernel.entry), "{arch} {level}");
        assert!(emu_text.starts_with(header), "{arch} {level}: the text before the prelude changed");
    }
}

#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn a_wrong_f64_d_layout_fails_emulated_validation() {
    // The D rows in the f32 MFMAs' order, as fragment.rs had them: every K >= 2 must fail.
    let Some(s) = session("gfx90a", Sabotage::SwapF64DRows) else { return };
    for (level, k) in [("4", 8), ("L7", 5)] {
        let (rel, pass) = validate(&s, level, k, DType::F64, 3);
        assert!(!pass, "{level} K={k} passed with swapped D rows (max rel err {rel:e})");
    }
}

/// Runs `source` (a generated kernel's text, altered by the test) for `level` on the emulator
/// and returns the launch's error, if any.
fn run_altered(s: &EmulatorSession, level: &str, k: u32, alter: impl Fn(&str) -> String) -> Option<String> {
    use mra_runtime::backend::Backend;
    use mra_runtime::harness::{Prepared, Task};
    let mut kernel = mra_codegen::generate(&levels::find(level).unwrap(), Request { k, arch: s.gpu.arch(), dtype: DType::F64 }).unwrap();
    let altered = alter(&kernel.source);
    assert!(altered != kernel.source, "the alteration changed nothing in {}", kernel.entry);
    kernel.source = altered;
    let compiled = s.gpu.compile(&s.compiler, &kernel.source, &kernel.entry, &s.cache).unwrap();
    let f = s.gpu.load(&compiled, &kernel.entry, 0).unwrap();
    let p = Prepared { kernel, compiled: Some(compiled), task: Task::Kernel(f), resident_blocks: None, clusters: None, fill_device: false };
    let cfg = HarnessConfig { nfuncs: 2, max_blocks: 512, tasks: 1, streams: 1, reps: 1, warmup: Default::default(), stream_data: Default::default() };
    let bufs = s.allocate(&cfg, &p.kernel.plan).unwrap();
    harness::validate(&s.gpu, &p, &bufs, &Inputs::random(DType::F64, k, 2, 1)).err().map(|e| e.to_string())
}

#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn out_of_bounds_lds_and_tensor_accesses_are_caught() {
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    // One element past the staged B in LDS.
    let err = run_altered(&s, "L2", 5, |src| src.replacen("b_shared[(e / K) * B_STRIDE + e % K] = b[e];", "b_shared[(e / K) * B_STRIDE + e % K + B_STRIDE] = b[e];", 1));
    let err = err.expect("an LDS overflow went unnoticed");
    println!("{err}");
    assert!(err.contains("AddressSanitizer") && err.contains("global-buffer-overflow"), "{err}");
    // A read past the end of the input tensors.
    let err = run_altered(&s, "L1", 5, |src| src.replacen("transform_tensor(a + (long long)n * K3,", "transform_tensor(a + (long long)n * K3 + 3,", 1));
    let err = err.expect("a tensor overflow went unnoticed");
    assert!(err.contains("AddressSanitizer") && err.contains("heap-buffer-overflow"), "{err}");
}

#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn a_barrier_some_threads_skip_is_reported() {
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    let err = run_altered(&s, "L4", 5, |src| src.replacen("    mra_sync_block();\n    const double* bm", "    if (tid != 3) mra_sync_block();\n    const double* bm", 1));
    let err = err.expect("a divergent barrier went unnoticed");
    println!("{err}");
    assert!(err.contains("divergent barrier") || err.contains("deadlock"), "{err}");
}

/// The race check: generated kernels whose barriers order every shared access pass under
/// ThreadSanitizer (levels staging B or the tensor in LDS, passes through LDS intermediates,
/// one buffer overwritten in place, wave32 and wave64), and fused without the barrier between
/// pass 0's writes and pass 1's reads of the intermediate fails as a data race, found by the
/// race check whatever the results. (The AddressSanitizer build checks results and bounds only:
/// what it says of the same kernel is printed, not asserted, since a fiber order may hide it.)
#[test]
#[ignore = "needs clang++ with ThreadSanitizer (run with --include-ignored; .ci/run does)"]
fn a_missing_barrier_is_a_data_race_under_the_race_check() {
    let Some(s) = race_session("gfx90a") else { return };
    for (level, k) in [("L1", 5), ("L2", 5), ("L3", 6), ("L4", 7), ("L5", 6), ("L7", 5), ("fused", 10), ("fused-1buf", 7)] {
        let (rel, pass) = validate(&s, level, k, DType::F64, 3);
        assert!(pass, "{level} K={k} failed under the race check (max rel err {rel:e})");
    }
    let Some(s32) = race_session("gfx1100") else { return };
    let (rel, pass) = validate(&s32, "fused", 10, DType::F16, 3);
    assert!(pass, "fused K=10 f16 on gfx1100 failed under the race check (max rel err {rel:e})");
    let drop_barrier = |src: &str| src.replacen("    mra_sync_block();  // pass 1 reads rows other threads wrote\n", "", 1);
    let err = run_altered(&s, "fused", 10, drop_barrier).expect("a missing barrier went unnoticed by the race check");
    println!("race check: {err}");
    assert!(err.contains("ThreadSanitizer: data race"), "{err}");
    if let Some(plain) = session("gfx90a", Sabotage::None) {
        println!("without the race check: {:?}", run_altered(&plain, "fused", 10, drop_barrier));
    }
}

/// Emulated validation of `schedule` (as given: tuned or altered) against the FP64 reference.
fn validate_schedule(s: &EmulatorSession, schedule: &mra_codegen::Schedule, k: u32, n: usize, alter: impl Fn(&str) -> String) -> (f64, bool) {
    let cmp = emulated_launch(s, schedule, k, n, 512, alter).unwrap();
    (cmp.max_rel, cmp.passes(DType::F64.tolerance()))
}

/// One emulated launch of `schedule`'s generated HIP (altered by `alter`) over `n` tensors with
/// at most `max_blocks` blocks, on NaN-poisoned output, compared with what the level must give
/// (the FP64 reference, or A for the copy and the bound).
fn emulated_launch(s: &EmulatorSession, schedule: &mra_codegen::Schedule, k: u32, n: usize, max_blocks: usize, alter: impl Fn(&str) -> String) -> Result<mra_runtime::validate::Comparison, String> {
    use mra_runtime::backend::Backend;
    use mra_runtime::harness::{Prepared, Task};
    let mut kernel = mra_codegen::generate(schedule, Request { k, arch: s.gpu.arch(), dtype: DType::F64 }).unwrap();
    kernel.source = alter(&kernel.source);
    let compiled = s.gpu.compile(&s.compiler, &kernel.source, &kernel.entry, &s.cache).unwrap();
    let f = s.gpu.load(&compiled, &kernel.entry, 0).unwrap();
    let p = Prepared { kernel, compiled: Some(compiled), task: Task::Kernel(f), resident_blocks: None, clusters: None, fill_device: false };
    let cfg = HarnessConfig { nfuncs: n, max_blocks, tasks: 1, streams: 1, reps: 1, warmup: Default::default(), stream_data: Default::default() };
    let bufs = s.allocate(&cfg, &p.kernel.plan).unwrap();
    harness::validate(&s.gpu, &p, &bufs, &Inputs::random(DType::F64, k, n, rand_seed())).map_err(|e| e.to_string())
}

/// `align_runs(1)` (a choice of the fused levels at odd K): the intermediates' K-long runs K + 1
/// apart, executed as generated HIP (level fused on gfx90a; fused-1buf with the step added,
/// whose passes write over their input; jammed row tiles) against the FP64 CPU reference at odd
/// K and N, and align_runs(0) beside it. A read of the padded layout as if it were plain must fail.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn padded_runs_of_the_fused_intermediates_pass_at_odd_k() {
    use mra_codegen::ir::{Located, Step, Value};
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    let fused = levels::find("fused").unwrap();
    let t = std::time::Instant::now();
    for k in [5, 7, 13] {
        for align in [1, 0] {
            let cfg = mra_codegen::tune::parse_config(&format!("align_runs={align}")).unwrap();
            let schedule = fused.with_config(&cfg).unwrap();
            let src = mra_codegen::generate(&schedule, Request { k, arch: arch::find("gfx90a").unwrap(), dtype: DType::F64 }).unwrap().source;
            assert_eq!(src.contains("constexpr int KR = K + 1;"), align == 1, "K={k} align_runs={align}");
            let (rel, pass) = validate_schedule(&s, &schedule, k, 3, |src| src.to_string());
            println!("fused K={k} align_runs={align}: rel {rel:e} {:.1}s", t.elapsed().as_secs_f64());
            assert!(pass, "fused K={k} align_runs={align}: {rel:e}");
        }
    }
    let mut one_buffer = levels::find("fused-1buf").unwrap();
    one_buffer.steps.push(Located { item: Step::AlignRuns(Value::Fixed(1)), line: 0 });
    let (rel, pass) = validate_schedule(&s, &one_buffer, 7, 3, |src| {
        assert!(src.contains("gemm_pass_in_place_from_plain(") && src.contains("constexpr int KR = K + 1;"), "{src}");
        src.to_string()
    });
    println!("fused-1buf + align_runs(1) K=7: rel {rel:e}");
    assert!(pass, "fused-1buf with align_runs(1) K=7: {rel:e}");
    // Fused's default is align_runs(0); the cases below name align_runs(1).
    let aligned = fused.with_config(&mra_codegen::tune::parse_config("align_runs=1").unwrap()).unwrap();
    // Jammed row tiles (unroll(rows, by = 2)) read the padded runs with the column inline.
    let mut jammed = aligned.clone();
    jammed.steps.push(Located { item: Step::Unroll(mra_codegen::ir::Loop::Rows, Value::Fixed(2)), line: 0 });
    let (rel, pass) = validate_schedule(&s, &jammed, 7, 3, |src| {
        assert!(src.contains("constexpr int JAM = 2;") && src.contains("in[a_k * W_STRIDE + (a_i / K) * KR + a_i % K]"), "{src}");
        src.to_string()
    });
    assert!(pass, "fused with unroll(rows, by = 2) and align_runs(1) K=7: {rel:e}");
    // The read mapping matters: padded runs read as plain ones give wrong results.
    let (rel, pass) = validate_schedule(&s, &aligned, 7, 3, |src| {
        let broken = src.replace("a_col[0] = (a_i / K) * KR + a_i % K;", "a_col[0] = a_i;");
        assert!(broken != src, "no per-tile column to break");
        broken
    });
    assert!(!pass, "padded runs read as plain runs passed (max rel err {rel:e})");
}

/// `swap_operands(1)` (a choice of `fused`): the passes computed transposed, Bᵀ as the MFMA's
/// A operand and the tensor's K² columns as its N (16 × 16 × 4 f64: FM = FN = 16), executed as
/// generated HIP on gfx90a against the FP64 CPU reference at odd and even K, with the padded runs
/// of align_runs(1) at odd K, N = 3. D' stored untransposed (out(j, i)) must fail.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn swapped_operands_pass_on_the_emulated_gfx90a() {
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    let fused = levels::find("fused").unwrap();
    let t = std::time::Instant::now();
    for (k, cfg) in [(5u32, "swap_operands=1"), (7, "swap_operands=1,align_runs=1"), (12, "swap_operands=1"), (13, "swap_operands=1,pad_a=1")] {
        let schedule = fused.with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        let (rel, pass) = validate_schedule(&s, &schedule, k, 3, |src| {
            assert!(src.contains("constexpr int COL_TILES = (K2 + FN - 1) / FN;") && src.contains("typedef double BFrags[K_STEPS][M_FRAGS];"), "K={k}: {src}");
            src.to_string()
        });
        println!("fused {cfg} K={k}: rel {rel:e} {:.1}s", t.elapsed().as_secs_f64());
        assert!(pass, "fused {cfg} K={k}: {rel:e}");
    }
    let swapped = fused.with_config(&mra_codegen::tune::parse_config("swap_operands=1").unwrap()).unwrap();
    let (rel, pass) = validate_schedule(&s, &swapped, 12, 3, |src| {
        let broken = src.replace("out[i * K + j] = acc[t][mf][r];", "out[j * K2 + i] = acc[t][mf][r];");
        assert!(broken != src, "no transposed store to break");
        broken
    });
    assert!(!pass, "D' stored untransposed passed (max rel err {rel:e})");
}

/// `coalesce_c(1)` (a choice of `fused`): pass 2 writes C's layout into w0 and the block stores
/// the tensor from there in one sweep, with no barrier after it (the next tensor's staging
/// barrier orders the reuse of w0). Executed as generated HIP on gfx90a against the FP64 CPU
/// reference at odd K (K³ odd: element stores) and even K (16-byte vectors), with one block
/// walking all N = 3 tensors so that the reuse is exercised, and under the race check. A store
/// that reads the staged C one element off, and the barrier before the store left out, must fail.
#[test]
#[ignore = "needs clang++ with AddressSanitizer and ThreadSanitizer (run with --include-ignored; .ci/run does)"]
fn coalesced_c_stores_pass_on_the_emulated_gfx90a() {
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    let staged = levels::find("fused").unwrap().with_config(&mra_codegen::tune::parse_config("coalesce_c=1").unwrap()).unwrap();
    let t = std::time::Instant::now();
    for (k, store) in [(5, "c_n[e] = static_cast<const double*>(w0)[e];"), (7, "c_n[e] = static_cast<const double*>(w0)[e];"), (12, "c_vec[e] = c_staged[e];")] {
        for max_blocks in [1, 512] {
            let cmp = emulated_launch(&s, &staged, k, 3, max_blocks, |src| {
                assert!(src.contains("gemm_pass_to_staged_c(w1, b_frag, w0, lane, wave);") && src.contains(store), "K={k}: {src}");
                src.to_string()
            })
            .unwrap();
            println!("fused coalesce_c(1) K={k} M={max_blocks}: rel {:e} {:.1}s", cmp.max_rel, t.elapsed().as_secs_f64());
            assert!(cmp.passes(DType::F64.tolerance()), "fused coalesce_c(1) K={k} M={max_blocks}: {:e}", cmp.max_rel);
        }
    }
    let (rel, pass) = validate_schedule(&s, &staged, 7, 3, |src| {
        let broken = src.replace("static_cast<const double*>(w0)[e];", "static_cast<const double*>(w0)[(e + 1) % K3];");
        assert!(broken != src, "no staged store to break");
        broken
    });
    assert!(!pass, "C stored one element off passed (max rel err {rel:e})");
    let Some(races) = race_session("gfx90a") else { return };
    let cmp = emulated_launch(&races, &staged, 5, 3, 1, |src| src.to_string()).unwrap();
    assert!(cmp.passes(DType::F64.tolerance()), "fused coalesce_c(1) K=5 under the race check: {:e}", cmp.max_rel);
    let err = emulated_launch(&races, &staged, 5, 3, 1, |src| {
        let broken = src.replacen("    mra_sync_block();  // C is whole in w0; w1 is free for the next tensor\n", "", 1);
        assert!(broken != src, "no barrier before the store to leave out");
        broken
    })
    .expect_err("C stored before every wave had written it went unnoticed by the race check");
    println!("race check: {err}");
    assert!(err.contains("ThreadSanitizer: data race"), "{err}");
}

/// `fma_tail(1)`: the columns after the whole column fragments (here 16-wide MFMA f64, so
/// K = 17, 18, 20 leave 1, 2, 4 columns) by FMA, executed as generated HIP (fused-1buf on
/// gfx90a: its passes hold tiles and tail values in registers until the block barrier) against
/// the FP64 CPU reference at odd K and N. Every lane reading the first tail column of B must fail.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn fma_tail_columns_pass_on_the_emulated_gfx90a() {
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    let tail = levels::find("fused-1buf").unwrap().with_config(&mra_codegen::tune::parse_config("fma_tail=1").unwrap()).unwrap();
    let t = std::time::Instant::now();
    for k in [17, 18, 20] {
        let (rel, pass) = validate_schedule(&s, &tail, k, 3, |src| {
            assert!(src.contains("constexpr int TAIL = K - NP;") && src.contains("constexpr int NP = 16;") && src.contains("tail_all[t]"), "K={k}");
            src.to_string()
        });
        println!("fused-1buf fma_tail(1) K={k}: rel {rel:e} {:.1}s", t.elapsed().as_secs_f64());
        assert!(pass, "fused-1buf fma_tail(1) K={k}: {rel:e}");
    }
    let (rel, pass) = validate_schedule(&s, &tail, 18, 3, |src| {
        let broken = src.replace("b_tail[k] = b[k * K + NP + lane % TAIL];", "b_tail[k] = b[k * K + NP];");
        assert!(broken != src, "no tail column load to break");
        broken
    });
    assert!(!pass, "every lane on the first tail column passed (max rel err {rel:e})");
}

/// `unroll(rows, by = 2)` with `split_cols(2)` (a jam of row tiles that keeps each wave to its
/// half of the columns; fused-cluster's on sm_90, here added to L7 on gfx90a, whose 16-wide
/// f64 fragments give K = 19, 23 two column fragments), executed as generated HIP against the
/// FP64 CPU reference at odd K and N: 23 and 33 row tiles, so the last jam has a dead tile.
/// Jammed tiles that step by WAVES instead of the waves per tile must fail.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn jammed_tiles_with_split_columns_pass_on_the_emulated_gfx90a() {
    use mra_codegen::ir::{Located, Loop, Step, Value};
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    let mut jammed = levels::find("L7").unwrap().with_config(&mra_codegen::tune::parse_config("threads=256").unwrap()).unwrap();
    jammed.steps.push(Located { item: Step::Unroll(Loop::Rows, Value::Fixed(2)), line: 0 });
    jammed.steps.push(Located { item: Step::SplitCols(Value::Fixed(2)), line: 0 });
    for k in [19, 23] {
        let (rel, pass) = validate_schedule(&s, &jammed, k, 3, |src| {
            assert!(src.contains("constexpr int JAM = 2;") && src.contains("constexpr int SPLIT = 2;") && src.contains("tile += JAM * TILE_WAVES"), "{src}");
            src.to_string()
        });
        println!("L7 + unroll(rows, 2) + split_cols(2) K={k}: rel {rel:e}");
        assert!(pass, "L7 with a jam of split tiles K={k}: {rel:e}");
    }
    let (rel, pass) = validate_schedule(&s, &jammed, 19, 3, |src| {
        let broken = src.replace("tile + u * TILE_WAVES", "tile + u * WAVES");
        assert!(broken != src, "no jam stride to break");
        broken
    });
    assert!(!pass, "jammed tiles stepping by WAVES passed (max rel err {rel:e})");
}

/// The bound (copy beside shadow_mma) as generated HIP: one launch's matrix instructions, as
/// the emulator counts them (once per wave), and whether C came back a copy of A.
fn bound_launch(s: &EmulatorSession, config: &str, k: u32, n: usize, max_blocks: usize, alter: impl Fn(&str) -> String) -> Result<(u64, bool), String> {
    let schedule = levels::find("bound").unwrap().with_config(&mra_codegen::tune::parse_config(config).unwrap()).unwrap();
    let before = s.gpu.matrix_instructions();
    let cmp = emulated_launch(s, &schedule, k, n, max_blocks, alter)?;
    Ok((s.gpu.matrix_instructions() - before, cmp.passes(f64::MIN_POSITIVE)))
}

/// The bound on the emulated gfx90a executes exactly N times the fewest 16x16x4 f64 MFMAs per
/// tensor (by hand: K = 7 24, K = 10 63; see codegen.rs) over however many blocks and waves the
/// launch has (M below N: uneven shares), in both arrangements, and copies A exactly. A kernel
/// that drops the remainder of the share, or copies one element short, must fail, and so must
/// one whose lanes split their instructions between the two calls of `mra_shadow` differently
/// (the same total per lane, but a divergent matrix instruction on a GPU: the emulator meets a
/// wave's lanes by call site).
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn the_bound_executes_the_fewest_mfmas_and_copies_a_on_the_emulated_gfx90a() {
    let Some(s) = session("gfx90a", Sabotage::None) else { return };
    let per_tensor = |k: u32| match k {
        7 => 24,
        10 => 63,
        _ => unreachable!(),
    };
    for config in ["shadow_mma=1 threads=128", "shadow_mma=0 threads=128", "shadow_mma=1 threads=256", "shadow_mma=0 threads=256"] {
        for (k, n, m) in [(7, 1, 512), (7, 17, 2), (10, 3, 512), (10, 17, 3)] {
            let (executed, copied) = bound_launch(&s, config, k, n, m, |src| src.to_string()).unwrap();
            println!("{config} K={k} N={n} M={m}: {executed} MFMAs, copy {copied}");
            assert_eq!(executed, n as u64 * per_tensor(k), "{config} K={k} N={n} M={m}");
            assert!(copied, "{config} K={k} N={n} M={m}: C is not A");
        }
    }
    // Without the remainder of the share (launch % waves), some instructions go missing:
    // 17 · 63 = 1071 over two waves is 536 + 535.
    let (executed, _) = bound_launch(&s, "shadow_mma=1 threads=128", 10, 17, 2, |src| src.replace("(index < launch % waves ? 1 : 0)", "0")).unwrap();
    assert_eq!(executed, 1070, "a share without its remainder went unnoticed");
    // A copy one element short leaves a poisoned value in C.
    let (_, copied) = bound_launch(&s, "shadow_mma=0 threads=128", 7, 3, 512, |src| src.replace("e < total; e += stride", "e < total - 1; e += stride")).unwrap();
    assert!(!copied, "a copy one element short went unnoticed");
    // Lane 5 of every wave issues two of its instructions from the remainder's call instead of
    // the loop's: every lane's total is unchanged, so only the call sites tell.
    for config in ["shadow_mma=0 threads=128", "shadow_mma=1 threads=128"] {
        let err = bound_launch(&s, config, 10, 3, 512, |src| {
            let altered = src.replace("for (; i + 2 <= count; i += 2)", "for (; i + 2 <= count - 2 * (mra_thread_id() % 64 == 5); i += 2)");
            assert_ne!(altered, src, "the alteration changed nothing");
            altered
        });
        let err = err.expect_err("a divergent matrix instruction went unnoticed");
        println!("{config}: {err}");
        assert!(err.contains("divergent matrix instruction"), "{config}: {err}");
    }
}

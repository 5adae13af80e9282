//! The operations beside the seed's (`mra_codegen::Operation`): which levels lower them, what
//! their kernels take, and (with clang++) their results on the CPU wave emulator against the
//! FP64 reference of each operation's definition.

use mra_codegen::{arch, levels, DType, Layout, Matrices, Operation, PlanError, Request};
use mra_runtime::emulate::{Emulator, HostClang, Sabotage};
use mra_runtime::harness::op_case::{check, OpCase};
use mra_runtime::harness::{Backend, EmulatorSession, Session};
use mra_runtime::KernelCache;
use mra_tests::require;

fn every_operation() -> Vec<Operation> {
    let mut ops = Vec::new();
    for matrices in [Matrices::One, Matrices::PerDim] {
        for layout in [Layout::Contiguous, Layout::Strided, Layout::Pointers] {
            for scaled in [false, true] {
                let op = Operation {
                    matrices,
                    layout,
                    scaled,
                };
                if !op.is_seed() {
                    ops.push(op);
                }
            }
        }
    }
    // A rank sum is always computed as C = alpha T(A) + beta C.
    for layout in [Layout::Contiguous, Layout::Strided, Layout::Pointers] {
        ops.push(Operation {
            matrices: Matrices::RankSum,
            layout,
            scaled: true,
        });
    }
    ops
}

/// Every level at every K on NVIDIA and AMD archs either lowers every operation (its kernel
/// taking the strides, alpha and beta, and tensor-pointer arrays for that layout) or refuses it
/// in one line naming the levels that do; the levels the issue names lower all of them.
#[test]
fn every_level_lowers_an_operation_or_names_one_that_does() {
    for arch_name in ["sm_90", "sm_80", "gfx90a", "gfx942"] {
        let arch = arch::find(arch_name).unwrap();
        for s in levels::all() {
            for k in [1, 5, 8, 13, 16, 24, 32] {
                let req = Request {
                    k,
                    arch,
                    dtype: DType::F64,
                };
                if s.plan(req).is_err() {
                    continue;
                }
                for op in every_operation() {
                    match mra_codegen::generate_op(&s, req, op) {
                        Ok(kernel) => {
                            assert!(kernel.entry.ends_with(&op.suffix()), "{}", kernel.entry);
                            assert_eq!(kernel.plan.op, op);
                            let head = kernel
                                .source
                                .lines()
                                .find(|l| l.contains("__global__ void"))
                                .unwrap()
                                .replace("[[maybe_unused]] ", "");
                            assert!(head.contains("long long a_stride, long long c_stride, double alpha, double beta"), "{head}");
                            assert_eq!(
                                head.contains("double beta, int ranks)"),
                                op.matrices == Matrices::RankSum,
                                "{head}"
                            );
                            assert_eq!(
                                head.contains("const double* const* __restrict__ a"),
                                op.layout == Layout::Pointers,
                                "{head}"
                            );
                        }
                        Err(e @ PlanError::Operation { .. }) => {
                            assert!(e.to_string().contains(" can"), "{e}");
                            let named: &[&str] = if op.matrices == Matrices::RankSum {
                                let instead = if k <= 24 { "; fused or L3-regblk can" } else { "; L3-regblk can" };
                                assert!(e.to_string().ends_with(instead), "{e}");
                                &["fused", "L1-global", "L2-bshared", "L3-regblk"]
                            } else {
                                &[
                                    "L1-global",
                                    "L2-bshared",
                                    "L3-regblk",
                                    "L7-breg",
                                    "fused",
                                    "fused-pipe",
                                    "fused-split",
                                ]
                            };
                            assert!(
                                !named.contains(&s.name.as_str()),
                                "{} at K={k} on {arch_name}: {e}",
                                s.name
                            );
                        }
                        Err(e @ PlanError::SharedTooLarge { .. }) => {
                            assert_ne!(op.matrices, Matrices::One, "{e}")
                        }
                        // A rank sum whose third buffer does not fit names the switch that drops it.
                        Err(e @ PlanError::Malformed { .. }) if op.matrices == Matrices::RankSum => {
                            assert!(e.to_string().ends_with("restage_a(1) copies A into a free intermediate for every term instead"), "{e}")
                        }
                        Err(e) => panic!("{} at K={k} on {arch_name}: {e}", s.name),
                    }
                }
            }
        }
    }
}

/// The seed's operation through `generate_op` is the seed's kernel, byte for byte.
#[test]
fn the_seed_operation_is_the_seed_kernel() {
    let req = Request {
        k: 10,
        arch: arch::find("sm_90").unwrap(),
        dtype: DType::F64,
    };
    for name in ["L3", "fused-pipe", "fused-split", "copy"] {
        let s = levels::find(name).unwrap();
        let seed = mra_codegen::generate(&s, req);
        let via_op = mra_codegen::generate_op(&s, req, Operation::SEED);
        assert_eq!(
            seed.map(|k| k.source).ok(),
            via_op.map(|k| k.source).ok(),
            "{name}"
        );
    }
}

fn emulator_session() -> Option<EmulatorSession> {
    let clang = require(
        "clang++ with AddressSanitizer (the CPU wave emulator)",
        HostClang::find(),
    )?;
    let emulator = Emulator::with_sabotage(arch::find("gfx90a").unwrap(), Sabotage::None).unwrap();
    Some(Session {
        gpu: emulator,
        compiler: clang,
        cache: KernelCache::from_env(),
    })
}

/// Each operation, every layout, odd and even K, one and several tensors, beta = 0 over NaN and
/// beta != 0, `dir` in each dimension: the emulated HIP against the FP64 reference.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn operations_match_their_reference_on_the_emulator() {
    let Some(session): Option<Session<Emulator>> = emulator_session() else {
        return;
    };
    for op in every_operation() {
        // The rank sum with three terms, thread-mapped and on matrix cores alike.
        for (level, k) in [("L3", 5), ("fused", 6)] {
            let s = levels::find(level).unwrap();
            let kernel = mra_codegen::generate_op(
                &s,
                Request {
                    k,
                    arch: session.gpu.arch(),
                    dtype: DType::F64,
                },
                op,
            )
            .unwrap();
            let p = session.prepare_kernel(kernel).unwrap();
            let dirs: Vec<Option<usize>> = if op.matrices == Matrices::PerDim {
                vec![None, Some(1)]
            } else {
                vec![None]
            };
            for dir in dirs {
                for (nfuncs, alpha, beta) in [(1, 1.0, 0.0), (3, 1.5, -0.75)] {
                    let (alpha, beta) = if op.scaled { (alpha, beta) } else { (1.0, 0.0) };
                    let case = OpCase {
                        op,
                        k,
                        nfuncs,
                        dir,
                        ranks: 3,
                        alpha,
                        beta,
                        seed: 7,
                    };
                    let o = check(&session.gpu, &p, &case, None).unwrap();
                    assert!(
                        o.cmp.passes(1e-12) && o.gaps_intact,
                        "{level} K={k} {op:?} {case:?}: {o:?}"
                    );
                }
            }
        }
    }
}

/// stack(N) (N consecutive tensors side by side in each pass, fused-pipe's tuned value at
/// K = 6 in one launch) lowers a contiguous batch of every operation but the rank sum, and the
/// kernel compiles; a strided or pointer batch, and the rank sum, are refused naming the levels
/// that lower them.
#[test]
fn stack_lowers_contiguous_operations_only() {
    let sm90 = arch::find("sm_90").unwrap();
    let req = Request {
        k: 6,
        arch: sm90,
        dtype: DType::F64,
    };
    let stacked = levels::find("fused-pipe")
        .unwrap()
        .with_config(&mra_codegen::tune::parse_config("stack=4").unwrap())
        .unwrap();
    for op in every_operation() {
        match mra_codegen::generate_op(&stacked, req, op) {
            Ok(kernel) => {
                assert!(op.layout == Layout::Contiguous && op.matrices != Matrices::RankSum, "{op:?}");
                assert!(kernel.source.contains("constexpr int STACK = 4;"), "{op:?}");
                if let Ok(nvrtc) = mra_runtime::cuda::nvrtc::Nvrtc::load() {
                    nvrtc
                        .compile(&kernel.source, &kernel.entry, "sm_90", &KernelCache::disabled())
                        .unwrap_or_else(|e| panic!("{op:?}: {e}"));
                }
            }
            Err(e) => {
                assert!(op.layout != Layout::Contiguous || op.matrices == Matrices::RankSum, "{op:?}: {e}");
                assert!(e.to_string().contains("stack(N)"), "{e}");
            }
        }
    }
}

/// With β ≠ 0, C's tensor is asked of L2 as its work begins where one block holds the SM
/// (fused-pipe at K = 20 and 24, fused-split at K = 32: a DRAM round trip per tile would stall
/// every warp there), and nowhere else: not where several blocks share an SM (K = 10, 16,
/// whose registers it would cost), not in the seed's kernel or the rank sum's, not for AMD.
#[test]
fn c_is_prefetched_only_where_one_block_holds_the_sm() {
    let general = Operation { matrices: Matrices::PerDim, layout: Layout::Strided, scaled: true };
    let source = |level: &str, k: u32, arch: &str, op: Operation| {
        let req = Request { k, arch: arch::find(arch).unwrap(), dtype: DType::F64 };
        mra_codegen::generate_op(&levels::find(level).unwrap().at_for(req, mra_codegen::tuned_defaults::Regime::Api, op.tuned_as()), req, op).unwrap().source
    };
    for k in [20, 24] {
        let src = source("fused-pipe", k, "sm_90", general);
        assert!(src.contains("if (beta != 0) for (int e = tid * (128 / sizeof(double)); e < K3;"), "fused-pipe K={k}: no prefetch of C");
        assert!(src.contains("mra_prefetch_line(c + (long long)n * c_stride + e)"), "fused-pipe K={k}: the prefetch's address");
        assert!(!source("fused-pipe", k, "sm_90", Operation::SEED).contains("mra_prefetch_line"), "the seed's kernel at K={k}");
    }
    let split = source("fused-split", 32, "sm_90", general);
    assert!(split.contains("if (ADD) {") && split.contains("mra_prefetch_l2(cq + r * K, ZH * 8)"), "fused-split: its half of C");
    for (level, k, arch) in [("fused-pipe", 10, "sm_90"), ("fused-pipe", 16, "sm_90"), ("L3-regblk", 32, "sm_90"), ("fused", 13, "gfx90a")] {
        assert!(!source(level, k, arch, general).contains("prefetch"), "{level} K={k} on {arch}");
    }
    // The rank sum reads C once, after its terms: nothing to prefetch at the tensor's start.
    let rank_sum = Operation { matrices: Matrices::RankSum, layout: Layout::Contiguous, scaled: true };
    assert!(!source("fused", 20, "sm_90", rank_sum).contains("prefetch"), "the rank sum at K = 20");
}

/// `fused` with the parameters `config` (`name=value ...`).
fn fused_with(config: &str) -> mra_codegen::Schedule {
    let config = mra_codegen::config::parse_config(config).unwrap();
    levels::find("fused").unwrap().with_config(&config).unwrap()
}

/// `stage_terms(N)`: the NVIDIA kernel copies each term's matrices with cp.async, one commit
/// group per term, waiting for N - 2 outstanding groups before the barrier that publishes the
/// next term; AMD's copies them with loads and stores; the ring's slots are in the kernel's
/// shared memory and the block function's layout; the transform and general refuse it.
#[test]
fn staged_terms_are_a_ring_in_shared_memory_of_the_rank_sum_only() {
    let rank_sum = Operation { matrices: Matrices::RankSum, layout: Layout::Strided, scaled: true };
    for (n, k) in [(2, 7), (3, 20)] {
        let req = Request { k, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 };
        let plain = mra_codegen::generate_op(&levels::find("fused").unwrap(), req, rank_sum).unwrap();
        let staged = mra_codegen::generate_op(&fused_with(&format!("stage_terms={n}")), req, rank_sum).unwrap();
        let slot_bytes = (3 * k * k).next_multiple_of(4) * 8;
        assert_eq!(staged.plan.shared_bytes, plain.plan.shared_bytes + n * slot_bytes, "K={k}: the ring of {n} slots");
        let src = &staged.source;
        assert!(src.contains(&format!("constexpr int STAGE_TERMS = {n};")), "K={k}");
        assert!(src.contains("cp.async.ca.shared.global [d], [g], 8;"), "K={k}: element copies (odd K: no aligned vectors)");
        assert!(src.contains(&format!("void mra_wait_next_term() {{ asm volatile(\"cp.async.wait_group {};\"", n - 2)), "K={k}");
        assert!(src.contains("if (mu + STAGE_TERMS < ranks) stage_term(b + (long long)(mu + STAGE_TERMS) * 3 * K2, ts + (mu % STAGE_TERMS) * TERM_SLOT, tid);"), "K={k}");
        assert!(src.contains("double* term_slots = static_cast<double*>(smem) + TERM_SLOTS_AT;"), "K={k}: the block function's slots");
        assert!(!plain.source.contains("STAGE_TERMS"), "K={k}: stage_terms(0) stages nothing");
    }
    let amd = Request { k: 7, arch: arch::find("gfx90a").unwrap(), dtype: DType::F64 };
    let src = mra_codegen::generate_op(&fused_with("stage_terms=2"), amd, rank_sum).unwrap().source;
    assert!(src.contains("for (int e = tid; e < 3 * K2; e += THREADS) to[e] = from[e];") && !src.contains("cp.async"), "gfx90a");
    let req = Request { k: 10, arch: arch::find("sm_90").unwrap(), dtype: DType::F64 };
    for op in [Operation::SEED, Operation { matrices: Matrices::PerDim, layout: Layout::Contiguous, scaled: true }] {
        match mra_codegen::generate_op(&fused_with("stage_terms=2"), req, op) {
            Err(PlanError::Malformed { what, .. }) => assert!(what.starts_with("stage_terms(2) stages the matrices of a rank sum's terms;") && what.ends_with("use stage_terms(0)"), "{op:?}: {what}"),
            other => panic!("{op:?}: stage_terms(2) planned: {:?}", other.map(|k| k.plan.shared_bytes)),
        }
    }
}

/// `stage_terms(2)` and `(3)` with fewer terms than slots, as many, and more (the ring wraps),
/// odd K, one and several tensors, beta = 0 over NaN and beta != 0: the emulated HIP against the
/// FP64 reference.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn staged_terms_match_their_reference_on_the_emulator() {
    let Some(session): Option<Session<Emulator>> = emulator_session() else {
        return;
    };
    let op = Operation { matrices: Matrices::RankSum, layout: Layout::Pointers, scaled: true };
    for (n, k) in [(2, 5), (3, 7)] {
        let cases: Vec<(usize, usize)> = [1, n as usize, 5].into_iter().flat_map(|ranks| [(ranks, 1), (ranks, 3)]).collect();
        assert_rank_sum_matches_its_reference(&session, &format!("stage_terms={n}"), k, op, &cases);
    }
}

/// `fused` with `config` computing the rank sum `op` at `k` on the emulator, for each (ranks,
/// nfuncs) of `cases` with beta = 0 over NaN and beta != 0, against the FP64 reference.
fn assert_rank_sum_matches_its_reference(session: &Session<Emulator>, config: &str, k: u32, op: Operation, cases: &[(usize, usize)]) {
    let kernel = mra_codegen::generate_op(&fused_with(config), Request { k, arch: session.gpu.arch(), dtype: DType::F64 }, op).unwrap();
    let p = session.prepare_kernel(kernel).unwrap();
    for &(ranks, nfuncs) in cases {
        for (alpha, beta) in [(1.0, 0.0), (1.5, -0.75)] {
            let case = OpCase { op, k, nfuncs, dir: None, ranks, alpha, beta, seed: 11 };
            let o = check(&session.gpu, &p, &case, None).unwrap();
            assert!(o.cmp.passes(1e-12) && o.gaps_intact, "{config} K={k} {case:?}: {o:?}");
        }
    }
}

/// `restage_a(1)`: the rank sum in two shared buffers (A copied into the free one for every term,
/// with cp.async on NVIDIA), so K = 22..24 run on sm_90's matrix cores, where `restage_a(0)`'s
/// third buffer is refused naming the switch; other operations and `stage_terms(N)` refuse it.
#[test]
fn restaged_a_takes_the_rank_sum_to_two_buffers() {
    let rank_sum = Operation { matrices: Matrices::RankSum, layout: Layout::Contiguous, scaled: true };
    let sm90 = arch::find("sm_90").unwrap();
    for k in [22, 24] {
        let req = Request { k, arch: sm90, dtype: DType::F64 };
        let kernel = mra_codegen::generate_op(&fused_with("restage_a=1"), req, rank_sum).unwrap();
        // Two K-row buffers of K^2 + 4 (pad_a 4) doubles: the transform's fused at the same K.
        assert_eq!(kernel.plan.shared_bytes, 2 * k * (k * k + 4) * 8, "K={k}");
        let src = &kernel.source;
        assert!(src.contains("mra_cp_async(q + (x / K2) * W_STRIDE + x % K2, a_n + x);") && src.contains("double* r = p; p = q; q = r;"), "K={k}");
        assert!(src.contains("void rank_sum_tensor(const double* a_n, const double* b, int ranks, COut c_n, double* w0, double* w1, int tid)"), "K={k}");
        match mra_codegen::generate_op(&levels::find("fused").unwrap(), req, rank_sum) {
            Err(e @ PlanError::Malformed { .. }) => assert!(e.to_string().contains("restage_a(1)"), "K={k}: {e}"),
            other => panic!("K={k}: three buffers planned: {:?}", other.map(|k| k.plan.shared_bytes)),
        }
    }
    // The default level (Transformer, `transform`, the export) takes fused there, with the
    // shipped rank-sum entries' restage_a(1); where no entry says so (gfx90a), the thread-mapped.
    for k in [21, 22, 24] {
        assert_eq!(mra_codegen::export::default_op_level(k, sm90, DType::F64, rank_sum).unwrap().name, "fused", "K={k}");
    }
    assert_eq!(mra_codegen::export::default_op_level(14, arch::find("gfx90a").unwrap(), DType::F64, rank_sum).unwrap().name, "L3-regblk");
    let gfx = Request { k: 15, arch: arch::find("gfx90a").unwrap(), dtype: DType::F64 };
    let src = mra_codegen::generate_op(&fused_with("restage_a=1"), gfx, rank_sum).unwrap().source;
    assert!(!src.contains("cp.async") && src.contains("q[(e / K2) * W_STRIDE + e % K2] = a_n[e];"), "gfx90a K=15");
    let req = Request { k: 10, arch: sm90, dtype: DType::F64 };
    let general = Operation { matrices: Matrices::PerDim, layout: Layout::Contiguous, scaled: false };
    let e = mra_codegen::generate_op(&fused_with("restage_a=1"), req, general).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.ends_with("has none: use restage_a(0)"), "{e}");
    let e = mra_codegen::generate_op(&fused_with("restage_a=1 stage_terms=2"), req, rank_sum).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("not with stage_terms(N)"), "{e}");
}

/// `restage_a(1)` at odd K (with and without align_runs(1)), one and several terms and
/// tensors, beta = 0 over NaN and beta != 0, and at K = 15, past the three buffers' K = 13 on
/// gfx90a's 64 KiB: the emulated HIP against the FP64 reference.
#[test]
#[ignore = "needs clang++ with AddressSanitizer (run with --include-ignored; .ci/run does)"]
fn restaged_a_matches_the_reference_on_the_emulator() {
    let Some(session): Option<Session<Emulator>> = emulator_session() else {
        return;
    };
    let op = Operation { matrices: Matrices::RankSum, layout: Layout::Strided, scaled: true };
    // align_runs(1): the intermediates' padded runs at odd K, A's copies in the plain rows.
    for (config, k, cases) in [("restage_a=1", 5, vec![(1, 1), (3, 3)]), ("restage_a=1 align_runs=1", 7, vec![(3, 3)]), ("restage_a=1", 15, vec![(2, 1)])] {
        assert_rank_sum_matches_its_reference(&session, config, k, op, &cases);
    }
}

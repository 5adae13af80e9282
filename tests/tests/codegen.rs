//! Lowering without any toolchain: every level × arch × K × dtype either generates
//! self-contained source that names its schedule steps, or says plainly why it cannot.

use mra_codegen::{arch::ARCHS, levels, DType, PlanError, Request, Vendor, K_MAX};

#[test]
fn every_level_lowers_for_every_arch_k_and_dtype() {
    let mut generated = 0;
    for level in levels::all() {
        for arch in ARCHS {
            for k in 1..=K_MAX {
                for &dtype in DType::ALL {
                    let kernel = match mra_codegen::generate(&level, Request { k, arch, dtype }) {
                        Ok(kernel) => kernel,
                        // Only a shared-memory limit, a missing matrix core, a dtype the level
                        // has no lowering for or an arch without a feature the level needs
                        // (cp.async) may stop a level here, and it says so.
                        Err(
                            PlanError::SharedTooLarge { .. }
                            | PlanError::NoMatrixCore { .. }
                            | PlanError::DTypeUnsupported { .. }
                            | PlanError::ArchUnsupported { .. }
                            | PlanError::KUnsupported { .. },
                        ) => continue,
                        Err(e) => panic!("{} K={k} {arch} {dtype}: {e}", level.name),
                    };
                    let src = &kernel.source;
                    assert!(!src.contains("#include"), "{}: not self-contained", kernel.entry);
                    assert!(src.contains(&format!("constexpr int K = {k};")), "{}", kernel.entry);
                    // A library level may have no kernel of its own (three-GEMM).
                    assert!(kernel.entry.is_empty() || src.contains(&format!(" {}(", kernel.entry)), "{}", kernel.entry);
                    // A transform level's per-tensor work is a block-level device function that
                    // callers' kernels can use, with what it needs as constants, in the kernel's
                    // namespace (closed before the __global__ entry point).
                    // (A cluster or split-output level's tensor spans several blocks: no block-level function.)
                    if let mra_codegen::plan::Body::Transform(tp) = kernel.plan.body {
                        if tp.cluster > 1 {
                            assert!(src.contains(&format!("__cluster_dims__({}, 1, 1)", tp.cluster)), "{}", kernel.entry);
                        }
                    }
                    if let mra_codegen::plan::Body::Transform(mra_codegen::plan::TransformPlan { cluster: 1, split_output: 1, .. }) = kernel.plan.body {
                        for part in ["void transform_block(", "constexpr int SHARED_BYTES", "constexpr long long WORKSPACE_ELEMS"] {
                            assert!(src.contains(part), "{}: no `{part}`", kernel.entry);
                        }
                        let ns = mra_codegen::emit::namespace_name(&level, &kernel.plan.request);
                        let end = src.find(&mra_codegen::emit::namespace_end(&ns)).expect("namespace end");
                        assert!(src[..end].contains("transform_block(") && !src[..end].contains("extern \"C\""), "{}", kernel.entry);
                    }
                    // Traceability: every step of the schedule is named in a comment.
                    for step in level.iter_steps() {
                        assert!(src.contains(&format!("] {step}")), "{}: no comment for `{step}`", kernel.entry);
                    }
                    match arch.vendor {
                        Vendor::Nvidia => assert!(!src.contains("__builtin_amdgcn"), "{}", kernel.entry),
                        Vendor::Amd => {
                            assert!(!src.contains("threadIdx") && !src.contains("__syncthreads"), "{}", kernel.entry);
                        }
                    }
                    generated += 1;
                }
            }
        }
    }
    // The thread-mapped levels fit every K on every arch in f64.
    assert!(generated >= 4 * ARCHS.len() * K_MAX as usize, "{generated}");
}

#[test]
fn generation_is_deterministic() {
    // The kernel cache is keyed by the source: the same request must give the same text.
    let l3 = levels::find("3").unwrap();
    let req = Request { k: 13, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 };
    assert_eq!(mra_codegen::generate(&l3, req).unwrap().source, mra_codegen::generate(&l3, req).unwrap().source);
}

#[test]
fn out_of_range_k_is_refused_with_the_range() {
    let l1 = levels::find("L1").unwrap();
    let arch = mra_codegen::arch::find("gfx90a").unwrap();
    for k in [0, 33, 1000] {
        let e = mra_codegen::generate(&l1, Request { k, arch, dtype: DType::F64 }).unwrap_err();
        assert_eq!(e, PlanError::KOutOfRange(k));
        assert!(e.to_string().contains("1 <= K <= 32"), "{e}");
    }
}

#[test]
fn no_dead_branches_when_rows_fill_whole_chunks() {
    // K = 16: K² = 256 rows = 2 chunks of 128 threads, so no bounds check is emitted.
    let l3 = levels::find("L3-regblk").unwrap();
    let arch = mra_codegen::arch::find("sm_90").unwrap();
    let even = mra_codegen::generate(&l3, Request { k: 16, arch, dtype: DType::F64 }).unwrap();
    assert!(!even.source.contains("if (i < K2)"), "{}", even.source);
    let odd = mra_codegen::generate(&l3, Request { k: 7, arch, dtype: DType::F64 }).unwrap();
    assert!(odd.source.contains("if (i < K2)"));
}

#[test]
fn levels_are_found_by_number_name_and_case() {
    for (sel, name) in [("1", "L1-global"), ("L2", "L2-bshared"), ("l3", "L3-regblk"), ("L3-REGBLK", "L3-regblk"), ("copy", "copy")] {
        assert_eq!(levels::find(sel).unwrap().name, name, "{sel}");
    }
    let e = levels::find("L9").unwrap_err().to_string();
    assert!(e.contains("unknown level `L9`") && e.contains("L3-regblk"), "{e}");
}

#[test]
fn a_level_that_does_not_fit_shared_memory_says_how_much_it_needs() {
    let wide = mra_dsl_free_schedule();
    let arch = mra_codegen::arch::find("sm_90").unwrap();
    let e = wide.plan(Request { k: 32, arch, dtype: DType::F64 }).unwrap_err().to_string();
    assert!(e.contains("shared memory") && e.contains("sm_90") && e.contains("232448"), "{e}");
}

#[test]
fn tensors_needs_whole_warps_per_group_and_the_two_buffer_pipeline() {
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let req = Request { k: 12, arch: sm90, dtype: DType::F64 };
    let with = |steps: &[mra_codegen::ir::Step]| {
        let mut s = levels::find("fused-groups").unwrap();
        s.steps.retain(|l| !steps.iter().any(|n| std::mem::discriminant(n) == std::mem::discriminant(&l.item)));
        s.steps.extend(steps.iter().cloned().map(|item| mra_codegen::ir::Located { item, line: 0 }));
        mra_codegen::generate(&s, req)
    };
    use mra_codegen::ir::{Step, Value};
    // 256 threads in 3 groups: not whole warps.
    let e = with(&[Step::Tensors(Value::Fixed(3))]).unwrap_err().to_string();
    assert!(e.contains("tensors(N)") && e.contains("multiple of N warps"), "{e}");
    // The ring (buffers(3)) is not split into groups.
    let e = with(&[Step::Buffers(Value::Fixed(3))]).unwrap_err().to_string();
    assert!(e.contains("tensors(N)"), "{e}");
    // The default: two groups of 4 warps, each on its own named barrier, twice the buffers.
    let k = with(&[]).unwrap();
    assert!(k.source.contains("constexpr int GROUPS = 2;") && k.source.contains("bar.sync %0, %1;") && k.source.contains("GROUPS * 2 * K * W_STRIDE"));
    // (fused-pipe with the same copies: bulk_copy(1) adds its mbarriers.)
    let single = mra_codegen::generate(&levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config("bulk_copy=0").unwrap()).unwrap(), req).unwrap();
    assert_eq!(k.plan.shared_bytes, 2 * single.plan.shared_bytes);
}

/// L3 with its intermediates in shared memory: 2·K³ doubles, too many at K = 32.
fn mra_dsl_free_schedule() -> mra_codegen::Schedule {
    let mut s = levels::find("L3").unwrap();
    s.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::Workspace(mra_codegen::ir::Memory::Shared), line: 0 });
    s
}

#[test]
fn the_schedule_ir_round_trips_through_json() {
    for level in levels::all() {
        let json = serde_json::to_string(&level).unwrap();
        let back: mra_codegen::Schedule = serde_json::from_str(&json).unwrap();
        assert_eq!(back, level);
    }
}

#[test]
fn sm_90_takes_the_full_rate_dmma_shape_and_older_archs_keep_m8n8k4() {
    let l7 = levels::find("7").unwrap();
    for (arch, want, not) in [("sm_90", "mma.sync.aligned.m16n8k4.row.col.f64", "mma.sync.aligned.m8n8k4"), ("sm_80", "mma.sync.aligned.m8n8k4.row.col.f64", "mma.sync.aligned.m16n8k4")] {
        let req = Request { k: 13, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 };
        let src = mra_codegen::generate(&l7, req).unwrap().source;
        assert!(src.contains(want) && !src.contains(not), "{arch}");
    }
}

#[test]
fn pipelined_levels_refuse_amd_naming_the_level_to_run() {
    for name in ["fused-pipe", "fused-ring", "fused-groups"] {
        let level = levels::find(name).unwrap();
        let req = Request { k: 8, arch: mra_codegen::arch::find("gfx942").unwrap(), dtype: DType::F64 };
        let e = mra_codegen::generate(&level, req).unwrap_err();
        assert!(matches!(e, PlanError::ArchUnsupported { .. }) && e.to_string().contains("run level `fused`"), "{e}");
    }
}

/// 16-byte pair stores into a shared intermediate need an even row stride K² + pad: with an odd
/// pad (a tuning choice) every other row's pairs are only 8-byte aligned, which the GPU answers
/// with CUDA_ERROR_MISALIGNED_ADDRESS (as it did during `mra-bench tune`). Odd pads store element
/// by element.
#[test]
fn pair_stores_into_shared_rows_only_with_an_even_stride() {
    let arch = mra_codegen::arch::find("sm_90").unwrap();
    let pipe = levels::find("fused-pipe").unwrap();
    let pair_into_shared = |pad: u32| {
        // (bulk_copy(1), the default at K = 6, needs an even pad: the 16-byte stores are the subject here.)
        let cfg = mra_codegen::tune::parse_config(&format!("pad_a={pad},bulk_copy=0")).unwrap();
        let s = pipe.with_config(&cfg).unwrap();
        let src = mra_codegen::generate(&s, Request { k: 6, arch, dtype: DType::F64 }).unwrap().source;
        src.lines().any(|l| l.contains("double2*>(&out[(i / K) * W_STRIDE"))
    };
    assert!(pair_into_shared(2) && pair_into_shared(4), "even pads keep the 16-byte stores");
    assert!(!pair_into_shared(1), "an odd pad must not pair stores into shared rows");
}

/// cluster(N)'s pass 0 pairs its remote stores at odd K too where that is sound: wherever the
/// emitted scatter uses 16-byte stores, every pair (j even) must lie in one block and start at an
/// even offset of that block's gather buffer, checked here by walking every output element of
/// pass 0 with the layout's formula; st.async (which counts bytes) keeps single stores at odd K.
#[test]
fn cluster_pass0_pairs_only_where_every_pair_is_aligned_in_one_block() {
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let level = levels::find("fused-cluster").unwrap();
    let mut paired_odd = 0;
    for k in [13u32, 25, 27, 29, 31] {
        for n in [2u32, 3, 4, 8] {
            for (pad, exchange) in [(4u32, 0u32), (2, 0), (0, 0), (4, 1)] {
                let cfg = mra_codegen::tune::parse_config(&format!("cluster={n},pad_a={pad},async_exchange={exchange},buffers=3,split_cols=1,threads=256")).unwrap();
                let Ok(kernel) = mra_codegen::generate(&level.with_config(&cfg).unwrap(), Request { k, arch: sm90, dtype: DType::F64 }) else { continue };
                let src = &kernel.source;
                let scatter = &src[src.find("void gemm_pass_scatter(").unwrap()..src.find("void gemm_pass_slice(").unwrap()];
                let paired = scatter.contains("make_double2") || scatter.contains("mra_send_pair(");
                let cl = k.div_ceil(n).div_ceil(2) * 2;  // ceil(K / N) rounded up to even
                let stride = k * cl + pad;
                // Every pair (j, j + 1), j even, j < K, of every row (b, c) of pass 0's output.
                let sound = (0..k).all(|b| {
                    (0..k).all(|c| {
                        (0..k).step_by(2).all(|j| {
                            let at = b * stride + c * cl + j % cl;
                            j / cl == (j + 1) / cl && at % 2 == 0 && j % cl + 1 < cl
                        })
                    })
                });
                if paired {
                    assert!(sound, "K={k} cluster={n} pad={pad}: pairs that straddle blocks or are 8-byte aligned");
                    assert_eq!(exchange, 0, "K={k} cluster={n}: st.async pairs would send padding it does not count");
                    paired_odd += 1;
                } else if exchange == 0 {
                    assert!(!sound, "K={k} cluster={n} pad={pad}: pairs would be sound here but were not used");
                }
            }
        }
    }
    assert!(paired_odd >= 4, "{paired_odd}");
}

/// `cluster(N)` (level fused-cluster): sm_90 only, and only where each block of the cluster
/// holds part of the tensor's second index; the slices (CL = ceil(K / N) values) set the
/// shared memory.
#[test]
fn cluster_levels_need_sm_90_and_a_slice_for_every_block() {
    let level = levels::find("fused-cluster").unwrap();
    for arch in ["sm_80", "sm_89", "gfx90a", "gfx942"] {
        let req = Request { k: 32, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 };
        let e = mra_codegen::generate(&level, req).unwrap_err();
        assert!(matches!(e, PlanError::ArchUnsupported { .. }), "{arch}: {e}");
    }
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    // The configurations below name what they vary; the rest is pinned here (the level's
    // defaults depend on K: async exchange, cluster(8) and split_cols(2) above K = 28).
    let with = |cfg: &str, k: u32| {
        let s = level.with_config(&mra_codegen::tune::parse_config(&format!("buffers=3,async_exchange=0,split_cols=1,threads=256,{cfg}")).unwrap()).unwrap();
        mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 })
    };
    // K = 5 over 4 blocks: slices of 2 leave block 3 empty.
    let e = with("cluster=4", 5).unwrap_err();
    assert!(matches!(e, PlanError::KUnsupported { k: 5, .. }) && e.to_string().contains("block 3 would hold none"), "{e}");
    assert!(with("cluster=3", 5).is_ok());
    // Shared memory: 3 buffers of K rows of K*CL + pad doubles, CL = ceil(K / N), and the
    // 8-byte mbarrier of the bulk copies: at even K, and at odd K from 25 (bulk_copy(1)'s
    // default there) with rows of the odd stride K*CL + pad + 1 and the shift's element.
    for (k, n, pad) in [(32u32, 4u32, 4u32), (32, 8, 8), (25, 4, 0), (13, 2, 2), (20, 3, 4), (28, 4, 2)] {
        // CL = ceil(K / N) rounded up to even (16-byte pairs in pass 0's remote stores).
        let cl = k.div_ceil(n).div_ceil(2) * 2;
        let shifted = k % 2 == 1 && k >= 25;
        let bulk = k % 2 == 0 || shifted;
        let slice = if shifted { k * (k * cl + pad + 1) + 1 } else { k * (k * cl + pad) };
        let kernel = with(&format!("cluster={n},pad_a={pad}"), k).unwrap();
        assert_eq!(kernel.plan.shared_bytes, 3 * slice * 8 + if bulk { 8 } else { 0 }, "K={k} cluster({n})");
        assert_eq!(kernel.source.contains("cp.async.bulk.shared::cluster.global"), bulk, "K={k}: bulk copies where bulk_copy(1)");
        assert_eq!(kernel.plan.cluster_blocks(), n);
        // The grid is whole clusters: min(N, M) rounded up.
        assert_eq!(kernel.plan.grid_blocks(1), n as usize);
        assert_eq!(kernel.plan.grid_blocks(4 * n as usize + 1), 5 * n as usize);
        for part in ["barrier.cluster.arrive", "barrier.cluster.wait", "mapa.u64", "%cluster_ctarank", &format!("constexpr int CL = {cl};")] {
            assert!(kernel.source.contains(part), "K={k}: no `{part}`");
        }
    }
    // buffers(4): a second gather buffer, swapped every tensor, one cluster barrier per tensor.
    let two = with("cluster=4,buffers=4", 28).unwrap();
    assert_eq!(two.plan.shared_bytes, 4 * 28 * (28 * 8 + 4) * 8 + 8);
    assert!(two.source.contains("wg_next") && !two.source.contains("mra_cluster_arrive_relaxed();"));
    assert!(matches!(with("cluster=4,buffers=4", 32).unwrap_err(), PlanError::SharedTooLarge { .. }));
    // Levels without clusters launch the grid they are given.
    let l7 = mra_codegen::generate(&levels::find("7").unwrap(), Request { k: 32, arch: sm90, dtype: DType::F64 }).unwrap();
    assert_eq!((l7.plan.cluster_blocks(), l7.plan.grid_blocks(5)), (1, 5));
}

/// `unroll(rows, by = N)`: N row tiles per wave at once, for passes that read their input
/// where it lies; chunk staging (one tile per wave per chunk) and WMMA refuse it.
#[test]
fn unroll_rows_jams_tiles_only_where_a_wave_reads_its_own_rows() {
    use mra_codegen::ir::{Located, Loop, Step, Value};
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let jammed = |name: &str, by: u32| {
        let mut s = levels::find(name).unwrap();
        s.steps.push(Located { item: Step::Unroll(Loop::Rows, Value::Fixed(by)), line: 0 });
        mra_codegen::generate(&s, Request { k: 13, arch: sm90, dtype: DType::F64 })
    };
    for name in ["L5-staged", "wmma", "fused-1buf"] {
        let e = jammed(name, 2).unwrap_err().to_string();
        assert!(e.contains("unroll(rows, by = N)"), "{name}: {e}");
    }
    let k = jammed("fused-pipe", 3).unwrap();
    assert!(k.source.contains("constexpr int JAM = 3;") && k.source.contains("tile += JAM * WAVES") && k.source.contains("if (live[u])"));
    let e = jammed("fused-pipe", 5).unwrap_err().to_string();
    assert!(e.contains("1 <= N <= 4"), "{e}");
}

/// `split_cols(N)`: N waves share a row tile, each with the B fragments of 1/N of the columns;
/// only where B is in registers and the fragments and waves split evenly; jammed tiles too.
#[test]
fn split_cols_shares_tiles_where_columns_and_waves_split_evenly() {
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let cluster = levels::find("fused-cluster").unwrap();
    let with = |cfg: &str, k: u32| {
        let s = cluster.with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 })
    };
    // K = 32: 4 column fragments of 8, 8 waves: two waves per tile, two fragments each.
    let k = with("cluster=8,split_cols=2,threads=256", 32).unwrap();
    for part in ["constexpr int SPLIT = 2;", "WARP_FRAGS = N_FRAGS / SPLIT", "BFrags[K_STEPS][WARP_FRAGS]", "tile = wave / SPLIT", "const int j = (nf0 + nf) * FN + (lane >> 2);", "const int j = (nf0 + nf) * FN + (lane & 3) * 2"] {
        assert!(k.source.contains(part), "no `{part}`");
    }
    // K = 20: 3 column fragments do not split in two.
    let e = with("cluster=4,split_cols=2", 20).unwrap_err();
    assert!(matches!(e, PlanError::KUnsupported { k: 20, .. }) && e.to_string().contains("split evenly"), "{e}");
    // With unroll(rows, by = 2) a wave's jammed tiles keep its column fragments: the jam steps
    // over the waves of other tiles (TILE_WAVES), not over every wave.
    let k = with("cluster=8,split_cols=2,unroll_rows=2,fuse_k=1,threads=256", 32).unwrap();
    for part in ["constexpr int JAM = 2;", "for (int tile = wave / SPLIT; tile < end; tile += JAM * TILE_WAVES)", "live[u] = tile + u * TILE_WAVES < end;", "double acc_all[JAM][WARP_FRAGS][4];", "for (int nf = 0; nf < WARP_FRAGS; ++nf)"] {
        assert!(k.source.contains(part), "no `{part}`");
    }
    // B in shared memory (L4) is refused.
    let mut l4 = levels::find("L4").unwrap();
    l4.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::SplitCols(mra_codegen::ir::Value::Fixed(2)), line: 0 });
    let e = mra_codegen::generate(&l4, Request { k: 32, arch: sm90, dtype: DType::F64 }).unwrap_err().to_string();
    assert!(e.contains("cache_read(B, registers)"), "{e}");
}

/// `async_exchange(1)`: pass 0 sends with `st.async` (16-byte pairs where CL is even, 8-byte
/// values at odd K) and each block arms its gather mbarrier with exactly the bytes it receives:
/// K·K rows (b, c) times the values of x it owns, min(CL, K - rank·CL), 8 bytes each; no
/// cluster barrier between pass 0 and pass 1. Without a cluster it is refused.
#[test]
fn async_exchange_expects_exactly_the_bytes_each_block_receives() {
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let cluster = levels::find("fused-cluster").unwrap();
    let with = |cfg: &str, k: u32| {
        let s = cluster.with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        mra_codegen::generate(&s, Request { k, arch: sm90, dtype: DType::F64 })
    };
    let mut checked = 0;
    for k in [32, 28, 25] {
        for blocks in [2u32, 3, 4, 8] {
            for buffers in [3, 4] {
                let kernel = match with(&format!("cluster={blocks},async_exchange=1,buffers={buffers},late_wait=1,pad_a=4"), k) {
                    Ok(kernel) => kernel,
                    // A block that would hold no value of b (K = 25, cluster 8: slices of 4).
                    Err(e @ PlanError::KUnsupported { .. }) => {
                        assert!(e.to_string().contains("would hold none"), "K={k} cluster={blocks}: {e}");
                        continue;
                    }
                    // Large slices (few blocks, four buffers) need more shared memory than a block has.
                    Err(PlanError::SharedTooLarge { .. }) => continue,
                    Err(e) => panic!("K={k} cluster={blocks}: {e}"),
                };
                let src = &kernel.source;
                // The slice width, independently: ceil(K / N), rounded up to even.
                let cl = k.div_ceil(blocks).div_ceil(2) * 2;
                assert!(src.contains(&format!("constexpr int CL = {cl};")), "K={k} cluster={blocks}");
                // The expected bytes, for every rank, from the source's own expression.
                let expr = "const unsigned gather_bytes = (unsigned)(K * K * (K - x0 < CL ? K - x0 : CL) * sizeof(double));";
                assert!(src.contains(expr), "K={k} cluster={blocks}: no `{expr}`");
                for rank in 0..blocks {
                    // Count the elements that land in block `rank` by walking every output
                    // element (b, c, x) of pass 0 and its owner x / CL.
                    let mut received = 0u32;
                    for _b in 0..k {
                        for _c in 0..k {
                            received += (0..k).filter(|x| x / cl == rank).count() as u32;
                        }
                    }
                    let x0 = rank * cl;
                    let formula = k * k * (if k - x0 < cl { k - x0 } else { cl }) * 8;
                    assert_eq!(formula, received * 8, "K={k} cluster={blocks} rank {rank}");
                    let tp = match &kernel.plan.body {
                        mra_codegen::plan::Body::Transform(tp) => *tp,
                        _ => unreachable!(),
                    };
                    assert_eq!(tp.cluster_gather_bytes(k, rank, 8), received * 8, "K={k} cluster={blocks} rank {rank}");
                }
                assert!(src.contains("if (tid == 0) mra_mbar_expect(gather_bar, gather_bytes);"), "K={k} cluster={blocks}: no arming");
                assert!(src.contains("mra_mbar_wait_cluster(gather_bar, gather_phase);"), "K={k} cluster={blocks}: no wait");
                assert!(src.contains("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"), "K={k}: not an acquire at cluster scope");
                // Pairs (16-byte st.async) exactly where CL is even; never a plain remote store.
                let pair = "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f64";
                let single = "st.async.shared::cluster.mbarrier::complete_tx::bytes.f64";
                assert!(src.contains(pair) && src.contains(single), "K={k}: st.async helpers");
                let body = &src[src.find("void gemm_pass_scatter(").unwrap()..src.find("void gemm_pass_slice(").unwrap()];
                assert_eq!(body.contains("mra_send_pair("), k % 2 == 0 && cl % 2 == 0, "K={k} cluster={blocks}");
                assert!(body.contains("mra_send") && !body.contains("mra_cluster_map_rw"), "K={k} cluster={blocks}");
                // Padding columns (j >= K) are not sent: they would not be counted.
                if k % 8 != 0 {
                    assert!(body.contains("j < K"), "K={k}: padding columns would be sent");
                }
                // No release cluster barrier between pass 0 and the wait for the gather buffer
                // (with two gather buffers, only the relaxed "done with the previous one").
                let loop_ = &src[src.find("for (int n = first;").unwrap()..];
                let between = &loop_[loop_.find("gemm_pass_scatter(").unwrap()..loop_.find("mra_mbar_wait_cluster(").unwrap()];
                assert!(!between.contains("mra_cluster_arrive()") && !between.contains("mra_cluster_wait"), "K={k} cluster={blocks}: {between}");
                assert_eq!(between.contains("mra_cluster_arrive_relaxed()"), buffers == 4, "K={k} cluster={blocks}: {between}");
                // One relaxed arrival per tensor in the loop; its wait is pass 0's, once per wave
                // before the wave's first send (after its first tile is computed), or after the
                // tile loop for a wave without tiles.
                let body = &loop_[..loop_.find("mra_cluster_wait();  // pairs the last arrive").unwrap()];
                assert_eq!((body.matches("mra_cluster_arrive_relaxed();").count(), body.matches("mra_cluster_wait();").count()), (1, 0), "K={k}: {body}");
                let scatter = &src[src.find("void gemm_pass_scatter(").unwrap()..src.find("void gemm_pass_slice(").unwrap()];
                let tiles = scatter.find("for (int tile =").unwrap();
                let wait = scatter.find("if (!waited) {").unwrap();
                let (first_mma, first_send) = (scatter.find("mma_m").unwrap(), scatter.find("mra_send").unwrap());
                assert!(tiles < wait && first_mma < wait && wait < first_send, "K={k}: the wait must follow the tile's MMAs and precede its sends: {scatter}");
                assert_eq!(scatter.matches("mra_cluster_wait();").count(), 2, "K={k}: {scatter}");
                assert!(scatter.contains("bool waited = false;") && scatter.contains("if (!waited) mra_cluster_wait();"), "K={k}: {scatter}");
                // The mbarriers (bulk copies: at every K here, bulk_copy(1) being the default from
                // K = 25; one per gather buffer) are in the shared bytes; at odd K a buffer has
                // rows of the odd stride K·CL + 4 + 1 and the shift's element.
                let slice = if k % 2 == 1 { k as u64 * (k * cl + 5) as u64 + 1 } else { k as u64 * (k * cl + 4) as u64 };
                let bars = 1 + (buffers - 2) as u64;
                assert_eq!(kernel.plan.shared_bytes as u64, buffers as u64 * slice * 8 + 8 * bars, "K={k} cluster={blocks} buffers={buffers}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked}");
    // late_wait(0), plain remote stores with one gather buffer: the whole block waits before pass 0
    // (the late wait made K=16 and 24 18% and 42% slower, so they default to this; K=25 and 29
    // default to the late wait, as mra-codegen/tuned/sm_90.json sets it), pass 0 has no wait of
    // its own.
    for k in [16u32, 24, 25, 29] {
        assert_eq!(with("", k).unwrap().plan.parameters["late_wait"], (k == 25 || k == 29) as u32, "K={k}: the measured default");
        let late = with("async_exchange=0,buffers=3,late_wait=1", k).unwrap().source;
        assert!(late.contains("if (!waited) mra_cluster_wait();"), "K={k}");
        let src = with("async_exchange=0,buffers=3,late_wait=0", k).unwrap().source;
        let loop_ = &src[src.find("for (int n = first;").unwrap()..];
        let wait = loop_.find("): every block of the cluster is done reading its gather buffer (previous tensor)").map(|at| loop_[..at].rfind("mra_cluster_wait();").unwrap()).unwrap_or_else(|| panic!("K={k}: {loop_}"));
        assert!(wait < loop_.find("gemm_pass_scatter(").unwrap(), "K={k}: the wait must precede pass 0");
        let scatter = &src[src.find("void gemm_pass_scatter(").unwrap()..src.find("void gemm_pass_slice(").unwrap()];
        assert!(!scatter.contains("waited") && !scatter.contains("mra_cluster_wait"), "K={k}: {scatter}");
    }
    // Where there is no cluster it is refused, in one line that says why.
    let mut fused = levels::find("fused-pipe").unwrap();
    fused.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::AsyncExchange(mra_codegen::ir::Value::Fixed(1)), line: 0 });
    let e = mra_codegen::generate(&fused, Request { k: 16, arch: sm90, dtype: DType::F64 }).unwrap_err().to_string();
    assert!(e.contains("async_exchange(1)") && e.contains("needs cluster(N)") && !e.contains('\n'), "{e}");
}

/// fused-pipe's block size and buffers follow K as its tuned defaults for sm_90 say (the table
/// is the measured winners: 128 threads up to K = 19 and at 21, 416 threads and three buffers at
/// K = 20, 384 threads from 22): the kernel and its tunable-parameter line agree, and the tuner
/// measures the defaults first (at one K: a level's whole tuning space is large).
#[test]
fn fused_pipe_default_threads_follow_k() {
    let pipe = mra_codegen::levels::find("fused-pipe").unwrap();
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    for k in 1..=24 {
        let (want, buffers) = match k {
            20 => (416, 3),
            ..=21 => (128, 2),
            _ => (384, 2),
        };
        let req = Request { k, arch: sm90, dtype: DType::F64 };
        let kernel = mra_codegen::generate(&pipe, req).unwrap();
        assert!(kernel.source.contains(&format!("constexpr int THREADS = {want};")), "K={k}");
        assert!(kernel.source.contains(&format!("buffers={buffers} ")) && kernel.source.contains(&format!(" threads={want} ")), "K={k}");
    }
    let (space, _) = mra_runtime::tuning::space(&pipe, 20, sm90, DType::F64, mra_codegen::op::Operation::SEED);
    assert_eq!((space[0]["threads"], space[0]["buffers"]), (416, 3), "K=20: the tuner measures the defaults first");
}

/// Every entry of mra-codegen/tuned/sm_90.json (read here as plain JSON, not through the
/// codegen's reader) reaches the kernel of its regime (the seed's harness: a plain plan; one
/// launch over a batch: the schedule resolved for the API regime, as the export, Transformer and
/// `sweep --launch api` do): its parameter line has each value the entry names and the
/// schedule's own default for every other parameter.
#[test]
fn every_tuned_default_of_sm_90_reaches_its_kernel() {
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../mra-codegen/tuned/sm_90.json")).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    for e in file["entries"].as_array().unwrap() {
        let level = levels::find(e["level"].as_str().unwrap()).unwrap();
        let dtype = DType::parse(e["dtype"].as_str().unwrap()).unwrap();
        for k in e["k"].as_array().unwrap().iter().map(|k| k.as_u64().unwrap() as u32) {
            let req = Request { k, arch: sm90, dtype };
            let api = mra_codegen::tuned_defaults::Regime::Api;
            // An operation's entries reach that operation's kernel.
            let (resolved, op) = match (e["regime"].as_str().unwrap(), e["op"].as_str()) {
                ("api", Some(op)) => {
                    let matrices = match op {
                        "ranksum" => mra_codegen::Matrices::RankSum,
                        "general" => mra_codegen::Matrices::PerDim,
                        other => panic!("an op entry names an operation this test does not know: {other}"),
                    };
                    (level.at_for(req, api, op), mra_codegen::Operation { matrices, layout: mra_codegen::Layout::Contiguous, scaled: true })
                }
                ("api", _) => (level.at_in(req, api), mra_codegen::Operation::SEED),
                _ => (level.clone(), mra_codegen::Operation::SEED),
            };
            let kernel = mra_codegen::generate_op(&resolved, req, op).unwrap();
            for p in level.params() {
                let want = e["config"].get(&p.name).map_or(p.default, |v| v.as_u64().unwrap() as u32);
                assert_eq!(kernel.plan.parameters[&p.name], want, "{} K={k} {}", level.name, p.name);
                assert!(kernel.source.contains(&format!("{}={want}", p.name)), "{} K={k}: {}={want} not in the kernel's parameter line", level.name, p.name);
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "{checked}");
}

/// The text of the device function `name` in `src`: from its signature to its closing brace.
fn function<'a>(src: &'a str, name: &str) -> &'a str {
    let start = src.find(&format!(" void {name}(")).unwrap_or_else(|| panic!("no function {name}"));
    let len = src[start..].find("\n}\n").expect("the function's end");
    &src[start..start + len]
}

/// `align_runs(1)` (fused-pipe's default at K = 15, 17, 21; a tuning choice at odd K elsewhere): each K-long output run of the
/// shared intermediates lies KR = K + 1 apart, so on NVIDIA (f64) passes 0 and 1 store every
/// D column pair (j, j + 1), j even, as one 16-byte access into them (slot K of a run is
/// padding), and passes 1 and 2 read through a column computed once per tile. The first pass
/// reads the tensor as copied in (plain runs); the last stores C element by element. At even
/// K, and with align_runs(0), the runs stay K apart. Shared memory follows the row stride.
#[test]
fn align_runs_pairs_the_intermediate_stores_at_odd_k() {
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let with = |level: &str, cfg: &str, k: u32, arch: &'static mra_codegen::arch::Arch| {
        let s = levels::find(level).unwrap();
        let s = if cfg.is_empty() { s } else { s.with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap() };
        mra_codegen::generate(&s, Request { k, arch, dtype: DType::F64 })
    };
    let paired = "*reinterpret_cast<double2*>(&out[(i / K) * W_STRIDE + (i % K) * KR + j]) = make_double2(acc[nf][2 * q], acc[nf][2 * q + 1]);";
    for k in [5u32, 7, 9, 13, 15, 17, 19, 21, 23] {
        // On by default where it measured faster (mra-codegen/tuned/sm_90.json), written here
        // by hand.
        let default = with("fused-pipe", "", k, sm90).unwrap();
        assert_eq!(default.plan.parameters["align_runs"], [15, 17, 21].contains(&k) as u32, "K={k}: the measured default");
        // (bulk_copy(0): at odd K the bulk copies need align_runs(0), and K = 9, 11, 13, 19 take them by default.)
        // The default pad made even (K = 9, 11 default to pad 3, for their bulk copies' split strides).
        let even_pad = default.plan.parameters["pad_a"] & !1;
        let kernel = with("fused-pipe", &format!("align_runs=1,bulk_copy=0,pad_a={even_pad}"), k, sm90).unwrap();
        let src = &kernel.source;
        let pad = kernel.plan.parameters["pad_a"];
        let buffers = kernel.plan.parameters["buffers"];
        // The row stride K·(K + 1) + pad is even (an even pad), so with the even run stride every
        // pair starts 16-byte aligned in every row of every buffer.
        assert!(src.contains("constexpr int KR = K + 1;") && src.contains(&format!("constexpr int W_STRIDE = K * KR + {pad};")), "K={k}");
        assert!(pad % 2 == 0 && (k * (k + 1) + pad) % 2 == 0, "K={k} pad {pad}");
        assert_eq!(kernel.plan.shared_bytes, buffers * k * (k * (k + 1) + pad) * 8, "K={k}: shared bytes follow W_STRIDE");
        let first = function(src, "gemm_pass_shared_from_plain");
        let middle = function(src, "gemm_pass_shared");
        let last = function(src, "gemm_pass_to_global");
        // Stores: pairs into the padded runs (guarded by the pair's start only), C element-wise.
        for (name, f) in [("first", first), ("middle", middle)] {
            assert!(f.contains(&format!("if (i < K2 && j < K) {paired}")), "K={k} {name} pass: {f}");
            assert!(!f.contains("= acc[nf][r];"), "K={k} {name} pass stores elements");
        }
        assert!(last.contains("if (i < K2 && j < K) out[i * K + j] = acc[nf][r];") && !last.contains("double2"), "K={k}: {last}");
        // Reads: the first pass the plain copy, the others through a_col, never dividing in the k loop.
        assert!(first.contains("in[a_k * W_STRIDE + a_i]") && !first.contains("a_col"), "K={k}: {first}");
        for f in [middle, last] {
            assert!(f.contains("a_col[r] = (a_i / K) * KR + a_i % K;") && f.contains("in[a_k * W_STRIDE + a_col[r]]"), "K={k}: {f}");
            // The k loop, or with fuse_k(N) its runs (at K = 9 a bare block: no loop).
            let k_loop = &f[f.find("for (int ks").or_else(|| f.find("const int ks0")).unwrap()..];
            let k_loop = &k_loop[..k_loop.find("// D fragment").unwrap()];
            assert!(!k_loop.contains("/ K") && !k_loop.contains("% K"), "K={k}: the k loop divides: {k_loop}");
        }
        assert!(!src.contains("(i % K) * K + j"), "K={k}: a store into plain runs is left");
        // align_runs(0): the plain runs, element by element (a pair is 8-byte aligned in every other row).
        let off = with("fused-pipe", &format!("align_runs=0,bulk_copy=0,pad_a={even_pad}"), k, sm90).unwrap();
        assert!(!off.source.contains("KR") && !off.source.contains("double2") && off.source.contains("out[(i / K) * W_STRIDE + (i % K) * K + j] = acc[nf][r];"), "K={k}");
        assert_eq!(off.plan.shared_bytes, buffers * k * (k * k + pad) * 8, "K={k}");
    }
    // Even K: the runs are K apart already; the pairs were there before (no KR, one pass function
    // for passes 0 and 1), and align_runs(1) is not a configuration (constraint align_runs <= K % 2).
    for k in [6u32, 8, 16, 20] {
        let kernel = with("fused-pipe", "", k, sm90).unwrap();
        assert!(!kernel.source.contains("KR") && !kernel.source.contains("from_plain") && kernel.source.contains("double2*>(&out[(i / K) * W_STRIDE + (i % K) * K + j])"), "K={k}");
        let e = with("fused-pipe", "align_runs=1", k, sm90).unwrap_err().to_string();
        assert!(e.contains("align_runs <= K % 2"), "K={k}: {e}");
    }
    // The other fused levels share the pass functions; on AMD the layout is the same, without
    // pairs (no 16-byte stores there).
    for level in ["fused", "fused-groups", "fused-ring"] {
        assert_eq!(with(level, "", 13, sm90).unwrap().plan.parameters["align_runs"], 0, "{level}: off by default (not measured)");
        let src = with(level, "align_runs=1", 13, sm90).unwrap().source;
        assert!(src.contains("constexpr int KR = K + 1;") && function(&src, "gemm_pass_shared").contains(paired), "{level}");
    }
    let hip = with("fused", "align_runs=1", 13, mra_codegen::arch::find("gfx90a").unwrap()).unwrap().source;
    assert!(hip.contains("out[(i / K) * W_STRIDE + (i % K) * KR + j] = acc[nf][r];") && !hip.contains("double2"), "{hip}");
    // The refusal names the bytes of the padded layout: fused-ring, five buffers of 17 rows of 17·18 + 4.
    let e = with("fused-ring", "align_runs=1", 17, mra_codegen::arch::find("sm_80").unwrap()).unwrap_err().to_string();
    assert!(e.contains(&format!("needs {} bytes", 5 * 17 * (17 * 18 + 4) * 8)), "{e}");
    // A constraint's text is one line (the compiler's token printer breaks long ones; each is
    // printed in a one-line C++ comment), e.g. fused-pipe's shared-memory constraint.
    for level in levels::all() {
        for step in level.iter_steps() {
            if let mra_codegen::ir::Step::Constraint(c) = step {
                assert!(!c.text.contains('\n'), "{}: `{}`", level.name, c.text);
            }
        }
    }
    // cluster(N) keeps its slices: refused there, in one line.
    let mut cluster = levels::find("fused-cluster").unwrap();
    cluster.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::AlignRuns(mra_codegen::ir::Value::Fixed(1)), line: 0 });
    let e = mra_codegen::generate(&cluster, Request { k: 27, arch: sm90, dtype: DType::F64 }).unwrap_err().to_string();
    assert!(e.contains("align_runs(1)") && e.contains("cluster(N)") && !e.contains('\n'), "{e}");
}

/// `pair_rows(1)`: on sm_90's m16n8k4 the tile rows are permuted in A and D alike (the CPU model
/// of that permutation is `fragment::tests` and `simulate::tests`) and, where a pass's input rows
/// have an even stride and count, a lane's A registers are one 16-byte load; instructions with
/// one A register per lane (sm_80's m8n8k4, gfx90a's MFMA) generate the same code as without it,
/// so the tuned levels do not offer it there (`row_pairs`).
/// `swap_operands(1)` (fused-pipe): the passes computed transposed, Bᵀ as the instruction's A
/// operand in registers and the tensor's K² columns as its N. The expected lines are the
/// transposed GEMM written out by hand for m16n8k4 (PTX ISA fragments: A rows g, g + 8, column t;
/// B row t, column g; D rows g, g + 8, columns 2t, 2t + 1, with g = lane >> 2, t = lane & 3).
#[test]
fn swap_operands_computes_the_passes_transposed_where_chosen() {
    use mra_codegen::ir::Step;
    let req = |k: u32, arch: &str| Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 };
    let with = |cfg: &str, k: u32, arch: &str| {
        let s = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        mra_codegen::generate(&s, req(k, arch))
    };
    // The defaults (mra-codegen/tuned/sm_90.json): on at K = 10 on sm_90 only.
    for (k, arch, want) in [(10u32, "sm_90", 1), (9, "sm_90", 0), (11, "sm_90", 0), (12, "sm_90", 0), (16, "sm_90", 0), (20, "sm_90", 0), (10, "sm_80", 0)] {
        let kernel = with("", k, arch).unwrap();
        assert_eq!(kernel.plan.parameters["swap_operands"], want, "K={k} {arch}");
        assert_eq!(kernel.source.contains("constexpr int COL_TILES"), want == 1, "K={k} {arch}");
    }
    let src = with("", 10, "sm_90").unwrap().source;
    for part in [
        "constexpr int M_FRAGS = (K + FM - 1) / FM;",
        "constexpr int COL_TILES = (K2 + FN - 1) / FN;",
        "typedef mra_f64x2 BFrags[K_STEPS][M_FRAGS];",
        "const int k = ks * FK + (lane & 3);",
        "const int j = mf * FM + (lane >> 2) + r * 8;",
        "b_frag[ks][mf][r] = (k < K && j < K) ? b[k * K + j] : 0;",
        "const int i = (tile0 + t) * FN + (lane >> 2);",
        "bt[t][ks] = (i < K2 && k < K) ? in[k * W_STRIDE + i] : 0;",
        "mma_m16n8k8_steps(acc[t][mf], a_steps, b_steps);",
        "mma_m16n8k4(acc[t][mf], b_frag[ks][mf], bt[t][ks]);",
        "const int j = mf * FM + (lane >> 2) + (r >> 1) * 8;",
        "const int i = (tile0 + t) * FN + (lane & 3) * 2 + (r & 1);",
    ] {
        assert!(src.contains(part), "no `{part}`");
    }
    // D'(j, i) is out(i, j): element i·K + j, into the shared intermediate (rows of exactly K²
    // values at pad 0) and into C alike.
    for name in ["gemm_pass_shared", "gemm_pass_to_global"] {
        let body = function(&src, name);
        assert!(body.contains("if (j < K && i < K2) out[i * K + j] = acc[t][mf][r];"), "{name}: {body}");
    }
    assert!(!src.contains("make_double2"), "the transposed passes store single elements");
    // A padded row stride stores through row i / K, column (i % K)·K + j; padded runs (align_runs(1),
    // odd K) read and store through theirs; bulk copies at odd K read pass 0 at the staged stride.
    let padded = with("pad_a=4", 10, "sm_90").unwrap().source;
    assert!(padded.contains("out[(i / K) * W_STRIDE + (i % K) * K + j] = acc[t][mf][r];"), "{padded}");
    let runs = with("swap_operands=1,align_runs=1,bulk_copy=0", 13, "sm_90").unwrap().source;
    assert!(runs.contains("const int col = (i / K) * KR + i % K;") && runs.contains("out[(i / K) * W_STRIDE + (i % K) * KR + j]"), "{runs}");
    let staged = with("swap_operands=1,bulk_copy=1,pad_a=3", 11, "sm_90").unwrap().source;
    assert!(staged.contains("in[k * WS_STRIDE + i]") && staged.contains("in[k * W_STRIDE + i]"), "{staged}");
    // sm_80 (m8n8k4, one A register): B^T in scalar fragments.
    let sm80 = with("swap_operands=1", 10, "sm_80").unwrap().source;
    assert!(sm80.contains("typedef double BFrags[K_STEPS][M_FRAGS];") && sm80.contains("mma_m8n8k4(acc[t][mf], b_frag[ks][mf], bt[t][ks]);"), "{sm80}");
    // Refused in one line with pair_rows(1): with the schedule's constraint (which keeps the pair
    // out of the tuning space) and without it.
    let e = with("swap_operands=1,pair_rows=1", 12, "sm_90").unwrap_err().to_string();
    assert!(e.contains("swap_operands") && !e.contains('\n'), "{e}");
    let mut bare = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config("swap_operands=1,pair_rows=1").unwrap()).unwrap();
    bare.steps.retain(|st| !matches!(&st.item, Step::Constraint(c) if c.text.contains("swap_operands")));
    let e = mra_codegen::generate(&bare, req(12, "sm_90")).unwrap_err().to_string();
    assert!(e.contains("swap_operands(1) computes the fused passes transposed") && e.contains("without pair_rows(1)") && !e.contains('\n'), "{e}");
}

#[test]
fn pair_rows_loads_a_fragment_pairs_where_rows_allow() {
    let with = |level: &str, cfg: &str, k: u32, arch: &str| {
        let s = levels::find(level).unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        mra_codegen::generate(&s, Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 })
    };
    let code = |src: &str| src.lines().filter(|l| !l.trim_start().starts_with("//")).map(|l| l.split("  //").next().unwrap().to_string()).collect::<Vec<_>>();
    let load = "*reinterpret_cast<const double2*>(&in[a_k * W_STRIDE + a_i])";
    let permuted = "const int i = i0 + (lane >> 2) * 2 + ((2 * q) >> 1);";
    for k in [6u32, 10, 12, 20, 24] {
        // (swap_operands(1), K = 10's default, has no row pairs.)
        let on = with("fused-pipe", "pair_rows=1,swap_operands=0", k, "sm_90").unwrap().source;
        let off = with("fused-pipe", "pair_rows=0,swap_operands=0", k, "sm_90").unwrap().source;
        assert!(on.contains("const double2 pair = ") && on.contains(load) && on.contains(permuted) && !on.contains("a[r] = in["), "K={k}");
        assert!(!off.contains("double2 pair") && !off.contains(permuted), "K={k}");
        // Rows with padding (K=6, 10: K² not a multiple of 16): the pair's guard is its first row's.
        if (k * k) % 16 != 0 {
            assert!(on.contains("(a_i < K2) ? *reinterpret_cast<const double2*>") || on.contains("(a_k < K && a_i < K2) ? *reinterpret_cast<const double2*>"), "K={k}");
        }
    }
    // The defaults, written here by hand from mra-codegen/tuned/sm_90.json: pairs where they
    // measured faster, and the pad that makes the row stride 4 mod 8 doubles (0 where K = 2 mod 4
    // but 6).
    for (k, pair, pad) in [(6u32, 0, 4), (10, 0, 0), (12, 1, 4), (14, 0, 0), (16, 0, 4), (18, 1, 0), (20, 1, 4), (22, 0, 0), (24, 0, 4)] {
        let s = levels::find("fused-pipe").unwrap();
        let kernel = mra_codegen::generate(&s, Request { k, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap();
        assert_eq!((kernel.plan.parameters["pair_rows"], kernel.plan.parameters["pad_a"]), (pair, pad), "K={k}");
        assert_eq!(kernel.source.contains("double2 pair"), pair == 1, "K={k}");
    }
    // Odd K: an odd row stride (or the padded runs) leaves pairs 8-byte aligned: rows permuted, loads single.
    let odd = with("fused-pipe", "pair_rows=1", 13, "sm_90").unwrap().source;
    assert!(odd.contains("const int a_i = i0 + (lane >> 2) * 2 + r;") && odd.contains("const int i = i0 + (lane >> 2) * 2 + (r >> 1);") && !odd.contains("double2 pair"), "{odd}");
    // fused-cluster's slices: pairs at every K (K·CL rows, CL even).
    for k in [25u32, 28, 32] {
        let src = with("fused-cluster", "pair_rows=1", k, "sm_90").unwrap().source;
        assert!(src.contains("*reinterpret_cast<const double2*>(&in[a_k * SLICE_STRIDE + a_i])"), "K={k}");
    }
    // One A register per lane (sm_80's m8n8k4, AMD's MFMA): the same code either way. The tuned
    // levels keep pair_rows at 0 there (constraint pair_rows <= row_pairs: one kernel per
    // configuration); a schedule that fixes pair_rows(1) gets the instruction's own rows.
    // (fused, the level AMD runs, with its tunable step replaced by a fixed one.)
    let fused_with = |pair: u32, arch: &str| {
        let mut s = levels::find("fused").unwrap();
        s.steps.retain(|st| !matches!(st.item, mra_codegen::ir::Step::PairRows(_)) && !matches!(&st.item, mra_codegen::ir::Step::Constraint(c) if c.text.contains("pair_rows")));
        s.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::PairRows(mra_codegen::ir::Value::Fixed(pair)), line: 0 });
        mra_codegen::generate(&s, Request { k: 12, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 }).unwrap().source
    };
    for arch in ["sm_80", "gfx90a", "gfx942"] {
        let (on, off) = (fused_with(1, arch), fused_with(0, arch));
        assert_eq!(code(&on), code(&off), "{arch}");
        assert!(on.contains("): rows as ") && !on.contains("double2 pair"), "{arch}: the comment says why nothing changed");
        for level in ["fused", "fused-pipe"] {
            let s = levels::find(level).unwrap();
            if arch != "sm_80" && level == "fused-pipe" {
                continue; // fused-pipe does not run on AMD (cp.async)
            }
            let e = with(level, "pair_rows=1", 12, arch).unwrap_err().to_string();
            assert!(e.contains("pair_rows <= row_pairs"), "{level} on {arch}: {e}");
            let d = mra_codegen::generate(&s, Request { k: 12, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 }).unwrap();
            assert_eq!(d.plan.parameters["pair_rows"], 0, "{level} on {arch}: the default follows row_pairs");
        }
    }
    // Only the fused passes take it: one line naming what it needs.
    let mut l7 = levels::find("L7").unwrap();
    l7.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::PairRows(mra_codegen::ir::Value::Fixed(1)), line: 0 });
    let e = mra_codegen::generate(&l7, Request { k: 12, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap_err().to_string();
    assert!(e.contains("pair_rows(1)") && e.contains("cache_read(A, shared)") && !e.contains('\n'), "{e}");
}

/// fused-cluster's defaults from K = 25 to 32 are the fastest configurations the tuning runs
/// measured (docs/performance.md, fused-cluster; the table below is copied from those runs'
/// winners, not from the data file): the kernel agrees with it, and the tuner measures the
/// defaults first (at one K: the space is large).
#[test]
fn fused_cluster_defaults_follow_k() {
    let level = mra_codegen::levels::find("fused-cluster").unwrap();
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    // K, cluster, split_cols, buffers, threads, async_exchange, min_blocks
    let table = [
        (25, 2, 2, 3, 512, 0, 1),
        (26, 2, 2, 3, 512, 0, 1),
        (27, 7, 1, 3, 128, 0, 1),
        (28, 7, 1, 4, 128, 1, 1),
        (29, 8, 1, 4, 128, 0, 1),
        (30, 8, 2, 3, 256, 1, 1),
        (31, 4, 2, 3, 512, 0, 1),
        (32, 8, 2, 3, 256, 1, 1),
    ];
    for (k, cluster, split, buffers, threads, exchange, min_blocks) in table {
        let kernel = mra_codegen::generate(&level, Request { k, arch: sm90, dtype: DType::F64 }).unwrap();
        assert!(kernel.source.contains(&format!("constexpr int CLUSTER = {cluster};")), "K={k}");
        assert!(kernel.source.contains(&format!("constexpr int THREADS = {threads};")), "K={k}");
        assert_eq!(kernel.source.contains("st.async"), exchange == 1, "K={k}");
        let p = &kernel.plan.parameters;
        assert_eq!((p["cluster"], p["split_cols"], p["buffers"], p["threads"], p["async_exchange"], p["min_blocks"]), (cluster, split, buffers, threads, exchange, min_blocks), "K={k}");
    }
    let (space, _) = mra_runtime::tuning::space(&level, 28, sm90, DType::F64, mra_codegen::op::Operation::SEED);
    assert_eq!((space[0]["cluster"], space[0]["buffers"], space[0]["threads"]), (7, 4, 128), "K=28: the tuner measures the defaults first");
}

/// `fuse_k(N)`: on sm_90 the k loop issues m16n8k8 / m16n8k16 on the steps' m16n8k4 fragments
/// (the layouts and the split are checked on the CPU model in `fragment::tests` and
/// `simulate::tests`, the SASS in `compile_nvidia`); where the arch has no deeper instruction
/// (sm_80's m8n8k4, AMD's MFMA) a fixed fuse_k(2) is refused in one line naming fuse_k_max,
/// the schedules' constraint keeps the tuner to fuse_k = 1 there, and fuse_k(1) changes nothing.
#[test]
fn fuse_k_issues_deeper_instructions_where_the_arch_has_them() {
    let with = |level: &str, cfg: &str, k: u32, arch: &str| {
        let s = levels::find(level).unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        mra_codegen::generate(&s, Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 })
    };
    let calls = |src: &str, name: &str| src.lines().filter(|l| l.trim_start().starts_with(&format!("{name}("))).count();
    // K = 20, fuse_k(2): a loop of two m16n8k8 (k-steps 0..3) and one m16n8k4 (step 4) per tile.
    let src = with("fused-pipe", "fuse_k=2", 20, "sm_90").unwrap().source;
    assert!(src.contains("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}"), "{src}");
    assert!(src.contains(": \"d\"(a[0][0]), \"d\"(a[0][1]), \"d\"(a[1][0]), \"d\"(a[1][1]), \"d\"(b[0]), \"d\"(b[1]));"), "{src}");
    assert!(src.contains("for (int ks0 = 0; ks0 < 4; ks0 += 2) {") && src.contains("const int ks0 = 4;  // k-step 4"), "{src}");
    assert!(calls(&src, "mma_m16n8k8_steps") > 0 && calls(&src, "mma_m16n8k8_steps") == calls(&src, "mma_m16n8k4"), "{src}");
    assert!(!src.contains("m16n8k16"), "{src}");
    // K = 24, fuse_k(4): one m16n8k16 (steps 0..3) and one m16n8k8 (steps 4, 5), no m16n8k4 call.
    let src = with("fused-pipe", "fuse_k=4", 24, "sm_90").unwrap().source;
    assert!(src.contains("const int ks0 = 0;  // k-steps 0 .. 3") && src.contains("const int ks0 = 4;  // k-steps 4 .. 5"), "{src}");
    assert!(calls(&src, "mma_m16n8k16_steps") > 0 && calls(&src, "mma_m16n8k16_steps") == calls(&src, "mma_m16n8k8_steps") && calls(&src, "mma_m16n8k4") == 0, "{src}");
    // fused-cluster's slice passes (K = 32, column splits) take it too.
    let src = with("fused-cluster", "fuse_k=2", 32, "sm_90").unwrap().source;
    assert!(src.contains("for (int ks0 = 0; ks0 < 8; ks0 += 2) {") && calls(&src, "mma_m16n8k8_steps") > 0, "{src}");
    // No deeper instruction: refused in one line; the schedule's constraint keeps the default at 1.
    for arch in ["sm_80", "sm_89"] {
        let e = with("fused-pipe", "fuse_k=2", 16, arch).unwrap_err().to_string();
        assert!(e.contains("fuse_k") && !e.contains('\n'), "{arch}: {e}");
        assert_eq!(with("fused-pipe", "", 16, arch).unwrap().plan.parameters["fuse_k"], 1, "{arch}");
    }
    let mut fused = levels::find("fused").unwrap();
    fused.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::FuseK(mra_codegen::ir::Value::Fixed(2)), line: 0 });
    for arch in ["sm_80", "gfx90a", "gfx942"] {
        let e = mra_codegen::generate(&fused, Request { k: 16, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 }).unwrap_err().to_string();
        assert!(e.contains("fuse_k(2)") && e.contains("fuse_k_max = 1") && e.contains("use fuse_k(1)") && !e.contains('\n'), "{arch}: {e}");
    }
    // Jammed tiles issue the deep instruction per tile, on each tile's own A fragments.
    let k = with("fused-cluster", "fuse_k=2,unroll_rows=2,split_cols=1", 32, "sm_90").unwrap();
    for part in ["mra_f64x2 a_steps_all[JAM][2];", "for (int u = 0; u < JAM; ++u) mma_m16n8k8_steps(acc_all[u][nf], a_steps_all[u], b_steps);"] {
        assert!(k.source.contains(part), "no `{part}`");
    }
}

/// `bulk_copy(1)` (fused-pipe's default at even K from 6 on but 8 and 24, sm_90): the next tensor
/// arrives by one `cp.async.bulk` per row from warp 0 on the buffer's mbarrier, which every thread
/// waits on with the buffer's own parity bit; the mbarriers follow the buffers (8 bytes each).
/// Refused in one line where the rows are not whole 16-byte units (an odd pad; at odd K an even
/// row stride) or the arch has no bulk copies; the schedule's constraints keep the tuner and
/// defaults off there. (Odd K: the next test.)
#[test]
fn bulk_copy_loads_rows_by_tma_where_rows_allow() {
    let with = |cfg: &str, k: u32, arch: &str| {
        let s = levels::find("fused-pipe").unwrap();
        let s = if cfg.is_empty() { s } else { s.with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap() };
        mra_codegen::generate(&s, Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 })
    };
    for (k, buffers) in [(12u32, 2u32), (20, 3)] {
        let kernel = with("bulk_copy=1", k, "sm_90").unwrap();
        let src = &kernel.source;
        assert!(src.contains("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes") && !src.contains("mra_cp_async("), "K={k}");
        assert!(src.contains("mra_bulk_copy(") && src.contains("mra_mbar_wait(&bars[") && src.contains("phases ^= 1u <<"), "K={k}");
        assert!(src.contains(&format!("reinterpret_cast<unsigned long long*>(w0 + {buffers} * K * W_STRIDE)")), "K={k}");
        let off = with("bulk_copy=0", k, "sm_90").unwrap();
        assert_eq!(kernel.plan.shared_bytes, off.plan.shared_bytes + 8 * buffers, "K={k}: one mbarrier per buffer");
        assert!(off.source.contains("mra_cp_async(") && !off.source.contains("cp.async.bulk"), "K={k}");
    }
    // The defaults, as mra-codegen/tuned/sm_90.json sets them; at odd K on at 9, 11, 13, 19.
    for (k, on) in [(6u32, 1u32), (8, 0), (9, 1), (10, 1), (11, 1), (12, 1), (13, 1), (15, 0), (16, 1), (17, 0), (19, 1), (20, 1), (21, 0), (22, 1), (23, 0), (24, 0)] {
        assert_eq!(with("", k, "sm_90").unwrap().plan.parameters["bulk_copy"], on, "K={k}");
    }
    for (cfg, k, arch, needle) in [
        ("bulk_copy=1,align_runs=1", 13u32, "sm_90", "odd row stride"),
        ("bulk_copy=1,pad_a=1", 12, "sm_90", "even row pad"),
        ("bulk_copy=1", 12, "sm_80", "cp.async.bulk"),
    ] {
        let s = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        // The constraints refuse first where the schedule's own values break them; a schedule
        // without them meets the planner's refusal.
        let mut bare = s.clone();
        bare.steps.retain(|st| !matches!(&st.item, mra_codegen::ir::Step::Constraint(c) if c.text.contains("bulk_copy")));
        for sched in [s, bare] {
            let e = mra_codegen::generate(&sched, Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 }).unwrap_err().to_string();
            assert!(e.contains("bulk_copy") && !e.contains('\n'), "{cfg} K={k} {arch}: {e}");
        }
        let e = mra_codegen::generate(&{
            let mut b = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
            b.steps.retain(|st| !matches!(&st.item, mra_codegen::ir::Step::Constraint(c) if c.text.contains("bulk_copy")));
            b
        }, Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 }).unwrap_err().to_string();
        assert!(e.contains(needle), "{cfg} K={k} {arch}: {e}");
    }
    assert_eq!(with("", 12, "sm_80").unwrap().plan.parameters["bulk_copy"], 0);
}

/// `bulk_copy(1)` at odd K (a tuning choice of fused-pipe, sm_90): tensor n starts off the 16-byte
/// grid when n is odd, so the buffer holds it from element sh = (address / 8) mod 2, each row's
/// K² - 1 values on the grid go by one bulk copy and the other by an 8-byte cp.async, pass 0
/// reads from the buffer + sh, and a buffer's pitch is BUF = K · W_STRIDE + 1. The alignment the
/// emitted offsets rely on is checked here by enumeration (every row of both tensor parities: the
/// bulk copy's ends 16-byte aligned in device and shared memory, the two parts covering the row
/// once); the GPU validates the kernel (`mra-bench validate`). Refused in one line without an odd
/// row stride, with stack(N) or a ring of buffers.
#[test]
fn bulk_copy_at_odd_k_shifts_each_tensor_onto_the_16_byte_grid() {
    let with = |cfg: &str, k: u32| {
        let s = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        mra_codegen::generate(&s, Request { k, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 })
    };
    // Even pads: one odd stride for the staged tensor and the intermediates. Odd pads (split
    // strides): the intermediates' stride K² + pad is even, the staged tensor's one more, pass 0
    // its own function reading it there, the copies and the export's staging writing it there.
    for (k, pad) in [(9u32, 2u32), (13, 0), (23, 4), (11, 3), (13, 3), (19, 1)] {
        let on = with(&format!("bulk_copy=1,pad_a={pad}"), k).unwrap();
        let off = with(&format!("bulk_copy=0,pad_a={pad}"), k).unwrap();
        let split = pad % 2 == 1;
        let stride = k * k + pad + split as u32;
        assert_eq!(stride % 2, 1, "K={k} pad {pad}: the staged row stride is odd");
        let (buf, staged_row) = if split { ("constexpr int BUF = K * WS_STRIDE + 1;", "r * WS_STRIDE;") } else { ("constexpr int BUF = K * W_STRIDE + 1;", "r * W_STRIDE;") };
        assert!(on.source.contains(staged_row), "K={k} pad {pad}: `{staged_row}`");
        assert_eq!(on.source.contains("constexpr int WS_STRIDE = W_STRIDE + 1;"), split, "K={k} pad {pad}");
        if split {
            let pass0 = &on.source[on.source.find("void gemm_pass_shared_from_copy(").unwrap()..on.source.find("void gemm_pass_shared(").unwrap()];
            assert!(pass0.contains("in[a_k * WS_STRIDE + a_i]") && !pass0.contains("in[a_k * W_STRIDE"), "K={k}: pass 0 reads the staged stride");
            let pass1 = &on.source[on.source.find("void gemm_pass_shared(").unwrap()..];
            assert!(pass1.contains("in[a_k * W_STRIDE + a_i]"), "K={k}: pass 1 reads the intermediates' stride");
            assert!(on.source.contains("gemm_pass_shared_from_copy(wa + sha, b_frag, wb, lane, wave);  // pass 0") && on.source.contains("gemm_pass_shared(wb, b_frag, wa, lane, wave);  // pass 1"), "K={k}");
            assert!(on.source.contains("w1[(e / K2) * WS_STRIDE + e % K2] = a_n[e];") && on.source.contains("gemm_pass_shared_from_copy(w1, b_frag, w0, lane, wave);"), "K={k}: the export's staging");
        }
        for part in [
            buf.to_string(),
            "double* w1 = w0 + BUF;".to_string(),
            "reinterpret_cast<unsigned long long*>(w0 + 2 * BUF)".to_string(),
            "sha = (int)((reinterpret_cast<unsigned long long>((a + (long long)first * K3)) >> 3) & 1);".to_string(),
            "mra_mbar_expect(&bars[ib], (unsigned)(K * (K2 - 1) * sizeof(*".to_string(),
            "mra_bulk_copy(to + off, from + off, (unsigned)((K2 - 1) * sizeof(*".to_string(),
            "mra_cp_async8(to + single, from + single);".to_string(),
            "(wa + sha, b_frag, wb, lane, wave);  // pass 0".to_string(),
            "const int swap_s = sha;".to_string(),
        ] {
            assert!(on.source.contains(&part), "K={k}: no `{part}`");
        }
        assert!(!on.source.contains("mra_cp_async("), "K={k}: the per-element copies are gone");
        // Two mbarriers and one element of shift room per buffer (and with split strides the
        // staged tensor's extra element per row).
        assert_eq!(on.plan.shared_bytes, off.plan.shared_bytes + 2 * 8 + 2 * 8 + split as u32 * 2 * k * 8, "K={k} pad {pad}");
        // The offsets, enumerated: tensor start parity sh, row r at sh + r·K² in device memory
        // and sh + r·stride in shared memory (both from 16-byte aligned bases).
        let k2 = k * k;
        for sh in 0..2u32 {
            for r in 0..k {
                let off = (sh + r) & 1;
                let (global, shared) = (sh + r * k2 + off, sh + r * stride + off);
                assert!(global % 2 == 0 && shared % 2 == 0 && (k2 - 1) % 2 == 0, "K={k} sh={sh} r={r}");
                let single = if off == 1 { 0 } else { k2 - 1 };
                let bulk: Vec<u32> = (off..off + k2 - 1).collect();
                assert!(!bulk.contains(&single) && bulk.len() as u32 + 1 == k2 && bulk.iter().all(|c| *c < k2), "K={k} sh={sh} r={r}");
            }
        }
    }
    for (cfg, needle) in [("bulk_copy=1,align_runs=1", "align_runs(0)"), ("bulk_copy=1,stack=2", "stack(1)"), ("bulk_copy=1,buffers=3", "buffers(2)")] {
        let mut s = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        s.steps.retain(|st| !matches!(&st.item, mra_codegen::ir::Step::Constraint(c) if c.text.contains("bulk_copy")));
        let e = mra_codegen::generate(&s, Request { k: 13, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("bulk_copy(1) at odd K") && !e.contains('\n'), "{cfg}: {e}");
    }
    // The defaults take it where it measured faster (K = 9, 11, 13, 19, as
    // mra-codegen/tuned/sm_90.json sets it): at 9 and 11 with pad 3 (split strides), at 13 and 19
    // with their odd strides.
    for (k, split) in [(9u32, true), (11, true), (13, false), (19, false)] {
        let d = with("", k).unwrap();
        let buf = if split { "constexpr int BUF = K * WS_STRIDE + 1;" } else { "constexpr int BUF = K * W_STRIDE + 1;" };
        assert!(d.plan.parameters["bulk_copy"] == 1 && d.source.contains(buf), "K={k}");
    }
}

/// `bulk_copy(1)` in fused-cluster at odd K: pass 0's buffer holds the block's slice from element
/// ws_sh (row 0's address / 8 mod 2) on at the odd stride WS_STRIDE, each row's values on the 16-byte
/// grid by one bulk copy and the others by 8-byte cp.async; C is staged from element c_sh of the
/// gather buffer and leaves by one bulk store plus its values off the grid. The rule the kernel
/// applies (a row's head is off the grid where ws_sh + a is odd) is checked by enumeration against
/// the parity of the row's actual address, for every block of every cluster size, both tensor
/// parities and both base alignments; so are the mbarrier's byte count and the coverage of every
/// row and of C. (Correctness on the GPU is for `mra-bench validate` and compute-sanitizer:
/// scripts/gpu-check.sh.)
#[test]
fn bulk_copy_at_odd_k_shifts_cluster_slices_and_c_onto_the_16_byte_grid() {
    let req = |k: u32| Request { k, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 };
    let with = |cfg: &str, k: u32| {
        let s = levels::find("fused-cluster").unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        mra_codegen::generate(&s, req(k))
    };
    // Every value of 0..len exactly once: the head (0) where off the grid, the bulk range, the tail.
    let covers = |len: u32, head: u32, body: u32| {
        let mut seen = vec![0u32; len as usize];
        if head == 1 {
            seen[0] += 1;
        }
        (head..head + body).for_each(|e| seen[e as usize] += 1);
        if head + body < len {
            seen[len as usize - 1] += 1;
        }
        seen.iter().all(|&c| c == 1)
    };
    for k in [23u32, 25, 27, 29, 31] {
        let on = with("bulk_copy=1", k).unwrap();
        let off = with("bulk_copy=0", k).unwrap();
        assert_eq!(on.plan.parameters["bulk_copy"], 1, "K={k}: the default at odd K from 23");
        for part in [
            "constexpr int WS_STRIDE = SLICE_STRIDE + 1;",
            "constexpr int SLICE = K * WS_STRIDE + 1;",
            "in[a_k * WS_STRIDE + a_i]",
            "(ws + ws_sh, b_frag, wg, lane, wave, b0);  // pass 0",
            "(wt, b_frag, wg + c_sh, lane, wave, x0);  // pass 2",
            "const int off_rows = (K + ws_sh) / 2;",
            "mra_bulk_copy(to + head, from + head, (unsigned)(body * sizeof(double)), mbar);",
            "if (head) mra_cp_async8(to, from);",
            "if (head + body < len) mra_cp_async8(to + len - 1, from + len - 1);",
            "mra_bulk_store(c_rows + c_sh, wg + 2 * c_sh, (unsigned)(body * sizeof(*c)));",
            "if (c_sh) c_rows[0] = wg[c_sh];",
            "if (c_sh + body < len) c_rows[len - 1] = wg[c_sh + len - 1];",
        ] {
            assert!(on.source.contains(part), "K={k}: no `{part}`");
        }
        assert!(!off.source.contains("WS_STRIDE") && off.source.contains("mra_cp_async(ws + r * SLICE_STRIDE + i,"), "K={k}");
        let mra_codegen::plan::Body::Transform(tp) = on.plan.body else { panic!("K={k}: a transform") };
        let (cl, pad, cluster) = (tp.cluster_slice_width(k), tp.shared_row_pad(), tp.cluster);
        let stride = k * cl + pad;
        let ws = stride + 1;
        assert!(cl % 2 == 0 && pad % 2 == 0 && ws % 2 == 1, "K={k}: CL {cl}, pad {pad}");
        let slice = k * ws + 1;
        // Each buffer grows by K + 1 elements (the odd stride and the shift), plus the copies' mbarrier.
        assert_eq!(on.plan.shared_bytes, off.plan.shared_bytes + tp.shared_buffers * (k + 1) * 8 + 8, "K={k}");
        let (k2, k3) = (k * k, k * k * k);
        for rank in 0..cluster {
            let b0 = rank * cl;
            if b0 >= k {
                continue;
            }
            let rows = cl.min(k - b0);
            for base in 0..2u32 {
                for n in 0..3u32 {
                    // The slice: row a of tensor n at element base + n·K³ + a·K² + b0·K of device memory.
                    let len = rows * k;
                    let sh = (base + n * k3 + b0 * k) % 2;
                    let mut tx = 0;
                    for a in 0..k {
                        let src = base + n * k3 + a * k2 + b0 * k;
                        let dst = sh + a * ws;
                        let head = (sh + a) & 1;
                        let body = (len - head) & !1;
                        let at = format!("K={k} rank {rank} base {base} n {n} row {a}");
                        assert_eq!(head, src % 2, "{at}: the head rule");
                        assert!((src + head) % 2 == 0 && (dst + head) % 2 == 0 && body % 2 == 0, "{at}: the bulk copy's ends");
                        assert!(covers(len, head, body) && dst + len <= slice, "{at}");
                        tx += body;
                    }
                    let off_rows = (k + sh) / 2;
                    assert_eq!(tx, (k - off_rows) * (len & !1) + off_rows * ((len - 1) & !1), "K={k} rank {rank}: the mbarrier's bytes");
                    // C: the block's rows x0 .. x0 + rows at base + n·K³ + x0·K², staged at wg + c_sh.
                    let len = rows * k2;
                    let c_sh = (base + n * k3 + b0 * k2) % 2;
                    let body = (len - c_sh) & !1;
                    assert!((base + n * k3 + b0 * k2 + c_sh) % 2 == 0 && (2 * c_sh) % 2 == 0, "K={k} rank {rank}: C's bulk store");
                    assert!(covers(len, c_sh, body) && c_sh + len <= slice, "K={k} rank {rank}: C");
                }
            }
        }
    }
    // Refused in one line: an odd pad (the constraint taken out).
    let mut s = levels::find("fused-cluster").unwrap().with_config(&mra_codegen::tune::parse_config("bulk_copy=1,pad_a=1").unwrap()).unwrap();
    s.steps.retain(|st| !matches!(&st.item, mra_codegen::ir::Step::Constraint(c) if c.text.contains("bulk_copy")));
    let e = mra_codegen::generate(&s, req(25)).unwrap_err().to_string();
    assert!(e.contains("even row pad") && !e.contains('\n'), "{e}");
    // Even K keep their bulk copies as before.
    for k in [26u32, 28, 30, 32] {
        let d = with("", k).unwrap();
        assert!(d.plan.parameters["bulk_copy"] == 1 && !d.source.contains("WS_STRIDE") && d.source.contains("mra_bulk_copy(ws + r * SLICE_STRIDE,"), "K={k}");
    }
}

/// `stack(N)` (fused-pipe, tunable, default 1): N tensors side by side in every pass's rows. The
/// source names the stacked rows, walks groups of N tensors and stores C by the group's row count;
/// shared memory is N tensors wide (sizes by hand); a launch has ceil(N_tensors / N) blocks of work;
/// refused in one line where the passes are not pipeline(2) with buffers(2); stack(1) is the
/// unstacked kernel. (Correctness is the GPU's to check, by `mra-bench validate`.)
#[test]
fn stack_puts_tensors_side_by_side_in_the_pass_rows() {
    let req = |k: u32| Request { k, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 };
    let with = |cfg: &str, k: u32| {
        let s = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config(cfg).unwrap()).unwrap();
        mra_codegen::generate(&s, req(k))
    };
    assert_eq!(with("", 10).unwrap().plan.parameters["stack"], 1, "default: one tensor per pass");
    for (cfg, k) in [("stack=2,pad_a=4,swap_operands=0", 10u32), ("stack=3", 7), ("stack=2,align_runs=1", 15), ("stack=4,pair_rows=1", 12)] {
        let kernel = with(cfg, k).unwrap();
        let src = &kernel.source;
        let n = cfg[6..7].to_string();
        for part in [
            format!("constexpr int STACK = {n};"),
            "constexpr int ROWS = STACK * K2;".to_string(),
            "constexpr int ROW_TILES = (ROWS + FM - 1) / FM;".to_string(),
            "const int groups = (nfuncs + STACK - 1) / STACK;".to_string(),
            "for (int g = first; g < groups; g += stride) {".to_string(),
            "const int rows = min(STACK, nfuncs - n) * K2;".to_string(),
            "gemm_pass_to_global(wa, b_frag, c_n, rows, lane, wave);".to_string(),
            // transform_block (one tensor) stores the first slot's rows only
            "gemm_pass_to_global(w1, b_frag, c_n, K2, lane, wave);".to_string(),
        ] {
            assert!(src.contains(&part), "{cfg} K={k}: no `{part}`");
        }
        // An output row t·K² + x·K + y goes to row x, column t·K² + y·K (runs: t·K·KR + y·KR).
        let at = if cfg.contains("align_runs=1") { "((i % K2) / K) * W_STRIDE + (i / K2) * (K * KR) + (i % K) * KR" } else { "((i % K2) / K) * W_STRIDE + (i / K2) * K2 + (i % K) * K" };
        assert!(src.contains(&format!("const int at = {at};")), "{cfg} K={k}");
        assert_eq!(kernel.plan.work_blocks(2048), 2048usize.div_ceil(n.parse().unwrap()), "{cfg}");
        assert_eq!(kernel.plan.work_blocks(67), 67usize.div_ceil(n.parse().unwrap()), "{cfg}");
    }
    // Shared memory by hand: 2 buffers of K rows of (N·K² + pad) doubles (+ an 8-byte mbarrier per
    // buffer with bulk copies, even K).
    assert_eq!(with("stack=2,pad_a=4,swap_operands=0", 10).unwrap().plan.shared_bytes, 2 * 10 * (2 * 100 + 4) * 8 + 16);
    assert_eq!(with("stack=3,pad_a=4", 7).unwrap().plan.shared_bytes, 2 * 7 * (3 * 49 + 4) * 8);
    assert_eq!(with("stack=1,pad_a=4", 7).unwrap().plan.shared_bytes, 2 * 7 * (49 + 4) * 8);
    // stack(1) is the unstacked kernel: without the step (and its constraints) the source differs
    // only in the schedule's comments.
    let body = |src: &str| src.lines().filter(|l| !l.contains("stack") && !l.contains("constraint(") && !l.contains("tunable parameters")).collect::<Vec<_>>().join("\n");
    let mut plain = levels::find("fused-pipe").unwrap();
    plain.steps.retain(|st| !matches!(&st.item, mra_codegen::ir::Step::Stack(_)) && !matches!(&st.item, mra_codegen::ir::Step::Constraint(c) if c.text.contains("stack")));
    for k in [7u32, 10, 13, 20] {
        let (one, none) = (with("stack=1", k).unwrap().source, mra_codegen::generate(&plain, req(k)).unwrap().source);
        assert!(body(&one) == body(&none), "K={k}: stack(1) differs from the unstacked kernel");
        // (K = 20's default is the ring of buffers(3), which stack(N > 1) does not take.)
        assert!(!one.contains("STACK") && !one.contains("const int groups"), "K={k}");
    }
    // Refused in one line: with buffers(3) (the schedule's constraint, then the planner's own).
    let s = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config("stack=2,buffers=3,swap_operands=0").unwrap()).unwrap();
    let e = mra_codegen::generate(&s, req(10)).unwrap_err().to_string();
    assert!(e.contains("stack") && !e.contains('\n'), "{e}");
    let mut bare = s.clone();
    bare.steps.retain(|st| !matches!(&st.item, mra_codegen::ir::Step::Constraint(c) if c.text.contains("(stack - 1)")));
    let e = mra_codegen::generate(&bare, req(10)).unwrap_err().to_string();
    assert!(e.contains("stack(N) widens the fused passes of pipeline(2) with buffers(2) to N tensors") && !e.contains('\n'), "{e}");
    // export: the launcher keeps stack(N) (one block per N tensors); the bundle's transform_block
    // is one tensor per call, so it comes from the same level with stack(1) (and says so); the
    // default is exported as is.
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let stacked = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config("stack=2,swap_operands=0,buffers=2").unwrap()).unwrap();
    let e = mra_codegen::export::entry_for(&stacked, 10, sm90, DType::F64, "-l fused-pipe".into()).unwrap();
    assert!(matches!(e.kernel.plan.body, mra_codegen::plan::Body::Transform(tp) if tp.stack == 2), "{:?}", e.kernel.plan.body);
    assert_eq!(e.tensors_per_block(), 2);
    let block = e.block.as_ref().expect("a stack(1) transform_block beside the stacked launcher");
    assert!(matches!(block.kernel.plan.body, mra_codegen::plan::Body::Transform(tp) if tp.stack == 1) && block.reason.contains("stack(1)"), "{}", block.reason);
    let plain = mra_codegen::export::entry_for(&levels::find("fused-pipe").unwrap(), 10, sm90, DType::F64, "default".into()).unwrap();
    assert_eq!(plain.reason, "default");
    // Too wide for shared memory: K = 20 with two tensors (2 · 20 · 800 · 8 B > 227 KB).
    let e = with("stack=2,buffers=2,persistent=0", 20).unwrap_err().to_string();
    assert!(e.contains("constraint") || e.contains("shared memory"), "{e}");
}

/// `fma_tail(1)`: the instructions cover the whole column fragments (NP = 8·floor(K/8) on
/// sm_90's m16n8), the K mod 8 columns after them come from FMA with the lane's column of B in
/// registers. Refused in one line where there is no tail, no whole fragment, or a pass shape it
/// does not lower for (cluster(N)).
#[test]
fn fma_tail_covers_the_columns_past_the_whole_fragments() {
    // fused-pipe with the step added (it is no choice of that level: each tile's DFMA chain
    // lengthens its dependent path, and it measured slower).
    let with_tail = |tail: Option<u32>, k: u32| {
        // (swap_operands(1), K = 10's default, has no FMA tail.)
        let mut s = levels::find("fused-pipe").unwrap().with_config(&mra_codegen::tune::parse_config("swap_operands=0").unwrap()).unwrap();
        if let Some(t) = tail {
            s.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::FmaTail(mra_codegen::ir::Value::Fixed(t)), line: 0 });
        }
        mra_codegen::generate(&s, Request { k, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 })
    };
    for (k, np) in [(10u32, 8u32), (13, 8), (20, 16), (23, 16)] {
        let src = with_tail(Some(1), k).unwrap().source;
        assert!(src.contains(&format!("constexpr int NP = {np};  // columns in whole fragments")) && src.contains("constexpr int TAIL = K - NP;"), "K={k}");
        assert!(src.contains("b_tail[k] = b[k * K + NP + lane % TAIL];") && src.contains("gemm_pass_to_global(wa, b_frag, b_tail, c_n, lane, wave);"), "K={k}");
        // No column guard on the fragments' stores: every fragment column is below K.
        assert!(!src.contains("j < K"), "K={k}");
        for off in [with_tail(Some(0), k).unwrap().source, with_tail(None, k).unwrap().source] {
            assert!(!off.contains("TAIL") && off.contains("j < K"), "K={k}");
        }
    }
    // Two rows per lane at even K: one 16-byte load of both.
    assert!(with_tail(Some(1), 12).unwrap().source.contains("const double2 pair = *reinterpret_cast<const double2*>(&in[a_k * W_STRIDE + a_i]);"));
    for (k, needle) in [(16u32, "no tail"), (6, "K = 6 has none")] {
        let e = with_tail(Some(1), k).unwrap_err().to_string();
        assert!(e.contains("fma_tail(1)") && e.contains(needle) && !e.contains('\n'), "K={k}: {e}");
    }
    // fused-1buf declares it: its constraints keep the tuner off K = 16 and K = 6.
    let one_buffer = levels::find("fused-1buf").unwrap().with_config(&mra_codegen::tune::parse_config("fma_tail=1").unwrap()).unwrap();
    for k in [6u32, 16] {
        let e = mra_codegen::generate(&one_buffer, Request { k, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap_err().to_string();
        assert!(e.contains("fma_tail"), "K={k}: {e}");
    }
    let mut cluster = levels::find("fused-cluster").unwrap();
    cluster.steps.push(mra_codegen::ir::Located { item: mra_codegen::ir::Step::FmaTail(mra_codegen::ir::Value::Fixed(1)), line: 0 });
    let e = mra_codegen::generate(&cluster, Request { k: 30, arch: mra_codegen::arch::find("sm_90").unwrap(), dtype: DType::F64 }).unwrap_err().to_string();
    assert!(e.contains("fma_tail(1)") && e.contains("cluster(N)") && !e.contains('\n'), "{e}");
}

/// `persistent(1)` is a launch decision: the kernel source differs only in its comment, the
/// plan says so, and it is refused where the grid is not counted per SM (clusters) or where
/// there is no per-task kernel (library levels); with `split_output(2)` the grid is whole pairs.
#[test]
fn persistent_marks_the_plan_and_is_refused_with_clusters_and_library_levels() {
    use mra_codegen::ir::{Located, Step, Value};
    let req = |arch: &str, k: u32| Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 };
    let with = |name: &str, v: u32| {
        let mut s = levels::find(name).unwrap();
        s.steps.retain(|st| !matches!(st.item, Step::Persistent(_)));
        s.steps.push(Located { item: Step::Persistent(Value::Fixed(v)), line: 0 });
        s
    };
    // fused-pipe's default (mra-codegen/tuned/sm_90.json): on from K = 20, off below.
    let pipe = levels::find("fused-pipe").unwrap();
    assert!(pipe.plan(req("sm_90", 20)).unwrap().persistent && pipe.plan(req("sm_90", 24)).unwrap().persistent);
    assert!(!pipe.plan(req("sm_90", 16)).unwrap().persistent && !pipe.plan(req("sm_90", 19)).unwrap().persistent);
    // Any kernel level can take it (L1 on AMD too); the kernel body is the same.
    let on = mra_codegen::generate(&with("L1", 1), req("gfx90a", 7)).unwrap();
    let off = mra_codegen::generate(&with("L1", 0), req("gfx90a", 7)).unwrap();
    assert!(on.plan.persistent && !off.plan.persistent);
    let body = |src: &str| src.lines().filter(|l| !l.contains("persistent(")).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&on.source), body(&off.source));
    assert!(on.source.contains("persistent(1): launched with at most the blocks the GPU holds at once"), "{}", on.source);
    // Refused in one line.
    for clustered in ["fused-cluster", "fused-split"] {
        let err = with(clustered, 1).plan(req("sm_90", 32)).unwrap_err().to_string();
        assert!(err.contains("persistent(1) counts resident blocks per SM; cluster(N) and co_schedule(1) place their blocks by cluster"), "{clustered}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
    let err = with("vendor-3gemm", 1).plan(req("sm_90", 8)).unwrap_err().to_string();
    assert!(err.contains("persistent(1) sizes the grid of the level's kernel: a library level launches none per task"), "{err}");
    let err = with("L1", 2).plan(req("sm_90", 8)).unwrap_err().to_string();
    assert!(err.contains("persistent(N) takes 0 (min(N, M) blocks) or 1 (at most the blocks the GPU holds at once)"), "{err}");
    // The grid: min(requested, resident) blocks, and with split_output(2) whole pairs (a tensor's
    // halves in blocks 2n, 2n + 1): the resident count rounded down to even, at least one pair.
    let l1 = with("L1", 1).plan(req("sm_90", 7)).unwrap();
    assert_eq!([l1.persistent_grid(512, Some(133)), l1.persistent_grid(100, Some(133)), l1.persistent_grid(512, None)], [133, 100, 512]);
    let mut split = with("fused-split", 1);
    split.steps.retain(|st| !matches!(st.item, Step::CoSchedule(_)));
    let split = split.plan(req("sm_90", 32)).unwrap();
    assert!(split.persistent);
    let grids = [(1024, Some(132)), (1024, Some(133)), (1024, Some(1)), (6, Some(132)), (1024, None)].map(|(b, r)| split.persistent_grid(b, r));
    assert_eq!(grids, [132, 132, 2, 6, 1024]);
    assert!(!levels::find("fused-split").unwrap().plan(req("sm_90", 32)).unwrap().persistent, "fused-split's default grid is min(N, M) pairs");
}

/// `coalesce_c(1)` (a choice of `fused`): pass 2 writes into w0 under its own function name,
/// the barrier that followed pass 2 now precedes the store of C (the same three barriers per
/// tensor after the staging one), the store is 16-byte vectors where every tensor's C is
/// 16-byte aligned (K³ even) and elements elsewhere, and `transform_block`, which no longer
/// ends on a barrier, gets one. Refused in one line where the last pass has no free buffer.
#[test]
fn coalesce_c_stages_c_in_the_free_buffer_and_is_refused_without_one() {
    use mra_codegen::ir::{Located, Step, Value};
    let req = |arch: &str, k: u32| Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 };
    let with = |name: &str, v: u32| {
        let mut s = levels::find(name).unwrap();
        // (and swap_operands' constraint, which names the tuned coalesce_c: swap_operands is 0 here)
        s.steps.retain(|st| !matches!(st.item, Step::CoalesceC(_)) && !matches!(&st.item, Step::Constraint(c) if c.text.contains("coalesce_c")));
        s.steps.push(Located { item: Step::CoalesceC(Value::Fixed(v)), line: 0 });
        s
    };
    let tensor_fn = |src: &str| function(src, "transform_tensor").to_string();
    for (arch, k, vector) in [("sm_90", 12, true), ("sm_90", 13, false), ("sm_80", 10, true), ("gfx942", 9, false)] {
        let on = mra_codegen::generate(&with("fused", 1), req(arch, k)).unwrap().source;
        let off = mra_codegen::generate(&with("fused", 0), req(arch, k)).unwrap().source;
        let (t_on, t_off) = (tensor_fn(&on), tensor_fn(&off));
        let barrier = if arch.starts_with("gfx") { "mra_sync_block();" } else { "__syncthreads();" };
        assert_eq!(t_on.matches(barrier).count(), t_off.matches(barrier).count(), "{arch} K={k}: {t_on}");
        assert!(t_on.contains("gemm_pass_to_staged_c(w1, b_frag, w0, lane, wave);") && !t_on.contains("c_n, lane, wave"), "{arch} K={k}: {t_on}");
        assert!(t_off.contains("gemm_pass_to_global(w1, b_frag, c_n, lane, wave);") && !off.contains("gemm_pass_to_staged_c"), "{arch} K={k}");
        assert_eq!(t_on.contains("c_vec[e] = c_staged[e];"), vector, "{arch} K={k}: {t_on}");
        assert_eq!(t_on.contains("c_n[e] = static_cast<const double*>(w0)[e];"), !vector, "{arch} K={k}: {t_on}");
        // The store is the last thing the tensor does; transform_block closes with the barrier.
        let last = t_on.lines().rev().find(|l| !l.trim_start().starts_with("//")).unwrap();
        assert!(last.contains("for (int e = tid;") && last.contains("[e] = "), "{arch} K={k}: {last}");
        let block_on = function(&on, "transform_block");
        let block_off = function(&off, "transform_block");
        assert!(block_on.contains(&format!("{barrier}  // c_n complete")) && !block_off.contains("// c_n complete"), "{arch} K={k}: {block_on}");
    }
    // No buffer is free during pass 2: pipeline(2) copies the next tensor into it; buffers(1) has one.
    for (level, k) in [("fused-pipe", 12), ("fused-1buf", 12), ("fused-cluster", 32), ("fused-groups", 10)] {
        let err = with(level, 1).plan(req("sm_90", k)).unwrap_err().to_string();
        assert!(err.contains("coalesce_c(1) stages C in the shared buffer the fused passes' last pass does not read") && !err.contains('\n'), "{level}: {err}");
        assert!(with(level, 0).plan(req("sm_90", k)).is_ok(), "{level}");
    }
    let err = with("fused", 2).plan(req("sm_90", 12)).unwrap_err().to_string();
    assert!(err.contains("coalesce_c(N) takes 0 (C stored from the fragments) or 1 (C staged in shared memory, stored in whole lines)"), "{err}");
}

/// `Step::value` (what `params`, `with_config` and the tuner read) finds every tunable value a
/// level declares: checked against the steps' serde form, where a tunable is any
/// `{"tunable": {..}}` object, whatever step holds it. A step left out of `value` would hide its
/// parameter from `tune` and leave a configured value unapplied.
#[test]
fn every_tunable_value_of_every_level_is_a_parameter() {
    fn tunables(v: &serde_json::Value, out: &mut Vec<(String, u64)>) {
        match v {
            serde_json::Value::Object(map) => {
                if let Some(t) = map.get("tunable") {
                    out.push((t["name"].as_str().unwrap().to_string(), t["default"].as_u64().unwrap()));
                }
                map.values().for_each(|x| tunables(x, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|x| tunables(x, out)),
            _ => {}
        }
    }
    let mut seen = 0;
    for level in levels::all() {
        let mut want = Vec::new();
        for s in &level.steps {
            tunables(&serde_json::to_value(&s.item).unwrap(), &mut want);
        }
        let have: Vec<(String, u64)> = level.params().into_iter().map(|p| (p.name, p.default as u64)).collect();
        assert_eq!(have, want, "{}", level.name);
        // A configured value lands in its step: every parameter at its first other choice.
        for p in level.params() {
            let Some(&other) = p.choices.iter().find(|&&c| c != p.default) else { continue };
            let cfg = mra_codegen::tune::Config::from([(p.name.clone(), other)]);
            let s = level.with_config(&cfg).unwrap();
            let mut got = Vec::new();
            for st in &s.steps {
                tunables(&serde_json::to_value(&st.item).unwrap(), &mut got);
            }
            assert!(got.contains(&(p.name.clone(), other as u64)), "{}: {}={other} not applied", level.name, p.name);
        }
        seen += want.len();
    }
    assert!(seen >= 30, "too few tunable values found: {seen}");
}

/// Above 256 threads a CUDA kernel carries the register cap that lets one block launch (65536
/// registers over the warps rounded up to the SM's 4 sub-partitions, whole multiples of 8; the
/// numbers worked by hand), on the kernel itself and in the export README; at 256 threads or
/// fewer, and on AMD, none.
#[test]
fn kernels_above_256_threads_carry_the_register_cap_on_nvidia_only() {
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let gfx90a = mra_codegen::arch::find("gfx90a").unwrap();
    let pipe = levels::find("fused-pipe").unwrap();
    let fused = levels::find("fused").unwrap();
    // (level, K, arch, threads expected, cap expected)
    for (level, k, arch, threads, cap) in [(&pipe, 20, sm90, 416, Some(128)), (&pipe, 22, sm90, 384, Some(168)), (&fused, 24, sm90, 512, Some(128)), (&pipe, 16, sm90, 128, None), (&fused, 16, sm90, 256, None), (&fused, 12, gfx90a, 256, None)] {
        let kernel = mra_codegen::generate(level, Request { k, arch, dtype: DType::F64 }).unwrap();
        assert_eq!(kernel.threads(), threads, "{} K={k} {}", level.name, arch.name);
        let signature = kernel.source.lines().find(|l| l.contains("__global__")).unwrap();
        match cap {
            Some(c) => assert!(signature.contains(&format!("__maxnreg__({c})")), "{signature}"),
            None => assert!(!signature.contains("__maxnreg__"), "{signature}"),
        }
    }
    let entry = |k| mra_codegen::export::entry_for(&pipe, k, sm90, DType::F64, "test".into()).unwrap();
    let files = mra_codegen::export::bundle(&[entry(16), entry(20)], "test").unwrap();
    let readme = &files.iter().find(|f| f.path == "README.md").unwrap().text;
    assert!(readme.contains("The kernels of K = 20 carry `__maxnreg__`"), "{readme}");
    let files = mra_codegen::export::bundle(&[entry(16)], "test").unwrap();
    assert!(!files.iter().find(|f| f.path == "README.md").unwrap().text.contains("__maxnreg__"));
}

/// The bound's matrix instructions per tensor, from sources outside the code generator: for
/// sm_90's m16n8k4 the counts an independent CUDA C++ program printed (K = 6 18, 8 24, 10 117,
/// 12 162, 16 384, 20 1125, 24 1944, 32 6144); for sm_80's m8n8k4 and AMD's f64 16x16x4 by
/// hand, min(ceil(K²/M)·ceil(K/N), ceil(K/M)·ceil(K²/N)) · ceil(K/4) · 3 passes.
#[test]
fn the_bound_issues_the_fewest_matrix_instructions_per_tensor() {
    let cases: [(&str, u32, u64); 14] = [
        ("sm_90", 6, 18),
        ("sm_90", 8, 24),
        ("sm_90", 10, 117),
        ("sm_90", 12, 162),
        ("sm_90", 16, 384),
        ("sm_90", 20, 1125),
        ("sm_90", 24, 1944),
        ("sm_90", 32, 6144),
        // K = 5: rows on M 2·1 = 2, swapped 1·4 = 4; 2 · 2 k-steps · 3 = 12.
        ("sm_90", 5, 12),
        // m8n8k4, K = 10: 13·2 = 26 either way; 26 · 3 · 3 = 234. K = 7: 7·1 = 7; 7 · 2 · 3 = 42.
        ("sm_80", 10, 234),
        ("sm_80", 7, 42),
        // 16x16x4 f64, K = 10: 7·1 = 7; 7 · 3 · 3 = 63. K = 7: 4 · 2 · 3 = 24. K = 32: 128 · 8 · 3.
        ("gfx90a", 10, 63),
        ("gfx90a", 7, 24),
        ("gfx942", 32, 3072),
    ];
    let bound = levels::find("bound").unwrap();
    for (arch, k, want) in cases {
        let kernel = mra_codegen::generate(&bound, Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype: DType::F64 }).unwrap();
        let mra_codegen::plan::Body::Copy { shadow: Some(sh), .. } = kernel.plan.body else { panic!("{arch} K={k}: no shadow instructions") };
        assert_eq!(sh.per_tensor, want, "{arch} K={k}");
        assert!(kernel.source.contains(&format!("constexpr long long MMA_PER_TENSOR = {want};")), "{arch} K={k}");
        assert!(sh.split, "{arch} K={k}: the default splits the waves");
    }
    // Where no f64 matrix instruction exists, or in another dtype, the bound says why.
    let refuse = |arch: &str, dtype| mra_codegen::generate(&bound, Request { k: 10, arch: mra_codegen::arch::find(arch).unwrap(), dtype }).unwrap_err().to_string();
    assert!(refuse("gfx1100", DType::F64).contains("matrix"), "{}", refuse("gfx1100", DType::F64));
    assert!(refuse("sm_90", DType::F32).contains("shadow_mma issues the FP64 matrix instructions"), "{}", refuse("sm_90", DType::F32));
}

/// `split_output(2)` (level fused-split): K = 32 on sm_90 only, f64 only, every other request
/// refused in one line naming what runs instead; two blocks per tensor (the grid a multiple of
/// 2); the shared memory written out by hand: T2 = 32 rows of 32·16 + 2 doubles, 8 warp slots
/// of 32·32 doubles, 8 mbarriers of 8 bytes; C's pairs as 16-byte stores; the steps that need
/// each other refused apart.
#[test]
fn fused_split_runs_at_k32_on_sm_90_in_two_blocks_per_tensor() {
    use mra_codegen::ir::{Located, Step, Value};
    let level = levels::find("fused-split").unwrap();
    let req = |arch: &str, k: u32, dtype: DType| Request { k, arch: mra_codegen::arch::find(arch).unwrap(), dtype };
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    assert_eq!(levels::supported_ks(&level, sm90, DType::F64), vec![32]);
    for arch in ["sm_80", "sm_86", "sm_89", "gfx90a", "gfx942", "gfx1100"] {
        assert!(levels::supported_ks(&level, mra_codegen::arch::find(arch).unwrap(), DType::F64).is_empty(), "{arch}");
    }
    let one_line = |e: PlanError, want: &str| {
        let e = e.to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{e}");
    };
    one_line(level.plan(req("sm_90", 31, DType::F64)).unwrap_err(), "K = 32 only; fused-cluster runs at K = 25..32 on sm_90");
    one_line(level.plan(req("sm_90", 16, DType::F64)).unwrap_err(), "K = 32 only");
    one_line(level.plan(req("sm_80", 32, DType::F64)).unwrap_err(), "cannot run on sm_80: split_output(2) chains passes through the m16n8k8 f64 accumulator layout");
    one_line(level.plan(req("gfx942", 32, DType::F64)).unwrap_err(), "cannot run on gfx942");
    for arch in ["sm_80", "gfx90a"] {
        // What the refusal names runs there at K = 32.
        assert!(levels::find("L7-breg").unwrap().plan(req(arch, 32, DType::F64)).is_ok(), "{arch}");
        one_line(level.plan(req(arch, 32, DType::F64)).unwrap_err(), "at K = 32 L7-breg runs there");
    }
    assert!(level.plan(req("sm_90", 32, DType::F32)).is_err());
    let plan = level.plan(req("sm_90", 32, DType::F64)).unwrap();
    assert_eq!(plan.shared_bytes, 32 * (32 * 16 + 2) * 8 + 8 * 32 * 32 * 8 + 8 * 8);
    assert_eq!(plan.shared_bytes, 197_184);
    assert!(plan.dynamic_shared && plan.threads == 256);
    // Two blocks per tensor: N = 1 needs 2 blocks, the grid rounds up to a multiple of 2.
    assert_eq!(plan.work_blocks(1), 2);
    assert_eq!(plan.work_blocks(2047), 4094);
    assert_eq!(plan.grid_multiple(), 2);
    assert_eq!(plan.grid_blocks(511), 512);
    assert_eq!(plan.grid_blocks(plan.work_blocks(3).min(5)), 6);
    // The source: each step's comment, B^T in registers for every pass, C stored in 16-byte pairs.
    let src = mra_codegen::generate(&level, req("sm_90", 32, DType::F64)).unwrap().source;
    for part in ["] split_output(2)", "] chain(1)", "] prefetch_l2(", "] bulk_copy(1)", "] fuse_k(", "constexpr int ZH = 16;", "constexpr int TP = 514;", "split_half<1>(", "mra_store_pair(out + x * K2", "cp.async.bulk.prefetch.L2"] {
        assert!(src.contains(part), "no `{part}`");
    }
    assert!(!src.contains("reinterpret_cast<double2*>(out"), "C's pairs go through mra_store_pair");
    // co_schedule(1), the default: the pair is one cluster of 2, the grid's multiple,
    // and the kernel says so; co_schedule(0) launches no clusters. A fused level without
    // split_output refuses it in one line.
    assert_eq!((plan.cluster_blocks(), plan.grid_multiple()), (2, 2));
    assert!(src.contains("extern \"C\" __global__ void __cluster_dims__(2, 1, 1) mra_fused_split_k32_f64(") && src.contains("] co_schedule("), "{src}");
    let apart = level.with_config(&mra_codegen::tune::parse_config("co_schedule=0").unwrap()).unwrap();
    let apart_kernel = mra_codegen::generate(&apart, req("sm_90", 32, DType::F64)).unwrap();
    assert_eq!((apart_kernel.plan.cluster_blocks(), apart_kernel.plan.grid_multiple()), (1, 2));
    assert!(!apart_kernel.source.contains("__cluster_dims__"));
    let mut fused = levels::find("fused").unwrap();
    fused.steps.push(Located { item: Step::CoSchedule(Value::Fixed(1)), line: 0 });
    one_line(fused.plan(req("sm_90", 16, DType::F64)).unwrap_err(), "co_schedule(1) launches the blocks of split_output(N) together: add split_output(2)");
    // Tunables outside what the emitter writes, and the steps that need each other, refused.
    let cfg = |c: &str| level.with_config(&mra_codegen::tune::parse_config(c).unwrap()).unwrap().plan(req("sm_90", 32, DType::F64));
    assert!(cfg("prefetch_l2=3").is_ok() && cfg("fuse_k=4").is_ok());
    let with_step = |item: Step| {
        let mut s = level.clone();
        s.steps.push(Located { item, line: 0 });
        s.plan(req("sm_90", 32, DType::F64)).unwrap_err()
    };
    let prefetch_1 = |s: &mut mra_codegen::ir::Schedule| s.steps.retain(|st| !matches!(st.item, Step::PrefetchL2(_)));
    let mut one = level.clone();
    prefetch_1(&mut one);
    one.steps.push(Located { item: Step::PrefetchL2(Value::Fixed(1)), line: 0 });
    one_line(one.plan(req("sm_90", 32, DType::F64)).unwrap_err(), "prefetch_l2(N) takes 0 (none) or 2 to 4 slices ahead");
    let without = |drop: fn(&Step) -> bool| {
        let mut s = level.clone();
        s.steps.retain(|st| !drop(&st.item));
        s.plan(req("sm_90", 32, DType::F64)).unwrap_err()
    };
    one_line(without(|s| matches!(s, Step::Chain(_))), "it needs chain(1) and bulk_copy(1)");
    one_line(without(|s| matches!(s, Step::BulkCopy(_))), "it needs chain(1) and bulk_copy(1)");
    one_line(without(|s| matches!(s, Step::CacheRead { operand: mra_codegen::ir::Operand::B, .. })), "cache_read(B, registers)");
    one_line(without(|s| matches!(s, Step::SplitOutput(_))), "bulk_copy(1) chooses how pipeline(N) copies whole tensors");
    one_line(without(|s| matches!(s, Step::SplitOutput(_) | Step::BulkCopy(_))), "chain(1) and prefetch_l2(N) shape the passes of split_output(2)");
    one_line(with_step(Step::Unroll(mra_codegen::ir::Loop::Rows, Value::Fixed(2))), "split_output(2) is its own layout of the fused passes");
}

/// Shared-memory wavefronts of one warp-wide load, from the bank model of the hardware (32 banks
/// of 4 bytes; the warp is served in phases of 128 bytes: half-warps for 8-byte loads, quarter-
/// warps for 16-byte ones; a phase takes as many wavefronts as the most distinct 4-byte words
/// any one bank serves). `addr[lane]` is the first double a lane reads, `width` doubles each.
fn shared_load_wavefronts(addr: &[usize; 32], width: usize) -> usize {
    let phase = 128 / (8 * width); // lanes per 128-byte phase
    let mut total = 0;
    for lanes in addr.chunks(phase) {
        let mut words: Vec<std::collections::BTreeSet<usize>> = vec![Default::default(); 32];
        for &d in lanes {
            for w in 2 * d..2 * (d + width) {
                words[w % 32].insert(w);
            }
        }
        total += words.iter().map(|s| s.len()).max().unwrap();
    }
    total
}

/// fused-cluster's passes 1 and 2 read their A fragments at the row stride S = K·CL + pad: at
/// every default layout from K = 23 to 32 on sm_90 the loads must take the fewest wavefronts the
/// hardware allows (at pad 4, K = 25, 27 and 29 had 2-way conflicts). Expected values from the
/// bank model above, not from the generator.
#[test]
fn fused_cluster_pass_loads_are_conflict_free_at_the_default_layouts() {
    let level = mra_codegen::levels::find("fused-cluster").unwrap();
    let sm90 = mra_codegen::arch::find("sm_90").unwrap();
    let number = |src: &str, prefix: &str| -> usize {
        let line = src.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no `{prefix}`"));
        line[prefix.len()..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    for k in 23..=32usize {
        let kernel = mra_codegen::generate(&level, Request { k: k as u32, arch: sm90, dtype: DType::F64 }).unwrap();
        let src = &kernel.source;
        let cl = number(src, "constexpr int CL = ");
        let pad = number(src, "constexpr int SLICE_STRIDE = K * CL + ");
        let stride = k * cl + pad;
        let pairs = src.contains("pair_rows=1");
        // Lane l reads row k = l & 3 (ks = 0) at column g = l >> 2 (one double), or columns 2g, 2g + 1
        // (pair_rows(1): one 16-byte load), as the emitted `in[a_k * SLICE_STRIDE + a_i]` does.
        let width = if pairs { 2 } else { 1 };
        let addr: [usize; 32] = std::array::from_fn(|l| (l & 3) * stride + (l >> 2) * width);
        let ideal = 32 * width * 8 / 128;
        assert_eq!(shared_load_wavefronts(&addr, width), ideal, "K={k}: stride {stride} (CL {cl}, pad {pad}) conflicts");
    }
}

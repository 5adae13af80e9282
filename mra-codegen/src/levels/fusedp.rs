mra_dsl::schedule! {
    /// Fused, pipelined: as `fused`, and while a tensor's last pass runs, the block's next
    /// tensor is copied into the shared buffer that pass does not read (cp.async, NVIDIA
    /// sm_80+), so the load of every tensor but a block's first overlaps computation. The
    /// buffers swap roles each tensor; no extra shared memory. AMD: run `fused`.
    /// Tunable (`mra-bench tune`): threads, the row pad, the k-loop unrolling, a minimum of
    /// resident blocks per SM, a third buffer (two tensors in flight), all within shared memory;
    /// `align_runs` (odd K), `pair_rows`, `fuse_k`, `bulk_copy`, `persistent` (a grid no
    /// larger than the GPU holds at once) and `swap_operands` (the passes transposed: on at K = 10).
    /// The defaults follow K as an H200 measured at every K from 10 to 24 (NOTES.md runs 29, 30,
    /// 37, 70): four warps up to K = 19 and at K = 21, twelve
    /// from K = 22; at K = 20 thirteen warps (25 row tiles, two each) and the third buffer.
    /// (Thirteen warps are no whole number of 64-wide wavefronts: `wave` keeps AMD's refusal cp.async.)
    level fused_pipe "fused-pipe" {
        threads(tune([128, 256, 384, 416], default = if K <= 19 { 128 } else if K >= 22 { 384 } else if K == 21 { 128 } else if wave == 32 { 416 } else { 384 }));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = tune([0, 1, 2, 3, 4], default = if K == 9 { 3 } else if K == 11 { 3 } else if K % 8 == 1 { 2 } else if K % 8 == 3 { 0 } else if K % 8 == 5 { 0 } else if K == 6 { 4 } else if K % 4 == 2 { 0 } else { 4 }));
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([2, 3], default = if K == 20 { 3 } else { 2 }));
        pipeline(2);
        // stack(N): N tensors side by side in every pass's rows, one GEMM of N·K² rows (K = 10:
        // 13 row tiles per two tensors instead of 14, 39 m16n8k4 per tensor and pass instead of
        // 42, and half the block barriers per tensor), N times the shared memory per block.
        // One by default: at K = 10 two measured no faster on an H100 when both are built by
        // NVRTC (a prototype +1%, the generated kernel +6%; NOTES.md run 83), and three, four and
        // other K from 9 to 18 slower; a choice for the tuner.
        stack(tune([1, 2, 3, 4], default = 1));
        constraint((stack - 1) * (buffers - 2) == 0);
        unroll(k, by = tune([0, 1, 2], default = 0));
        constraint(min_blocks * buffers * K * (stack * K * (K + align_runs) + pad_a) * bytes <= shared);
        // align_runs(1): at odd K each K-long output run of the shared intermediates lies K + 1
        // apart, so a lane's column pairs are 16-byte stores (NOTES.md runs 38, 42). At even K
        // they are already: the parameter is 0 there (one kernel to tune, not two identical
        // ones). On by default where it measured faster on an H200 (run 42: K = 15 -10%, 17
        // -3.5%, 21 -8%); at K = 13, 19, 23 the plain runs were 2-5% faster.
        // The pad makes the row stride 4 mod 8 doubles (A-fragment loads without bank
        // conflicts): 4 where K² is 0 mod 8, 0 where K = 2 mod 4 (K² = 4 mod 8: run 50 measured
        // pad 0 faster by 1-3% at K = 10, 14, 18, 22; K = 6, launch-bound, keeps 4). With
        // stack(N) the stride is N·K² + pad: stack(2) at K = 10 wants pad 4 (tune both).
        // With the runs K + 1 apart the row stride is K(K + 1) + pad_a; at odd K the pad's
        // default makes it 4 mod 8 doubles where an even pad can (A-fragment loads without
        // bank conflicts: K % 8 = 1, 3, 7) and keeps the blocks per SM where 4 would lose one
        // (K = 19: two blocks of 115520 B instead of one of 116736; K = 13: six, not five).
        // Pad 3 is the one that makes a plain odd-K stride K² + pad 4 mod 8 (K² ≡ 1 mod 8), where
        // the odd K's A loads had 6-100x the even K's bank conflicts (NOTES.md run 110); a choice
        // for the tuner, worth 2-3% at K = 9, 11 and nothing at K = 23 on an H100 (run 111).
        // With bulk_copy(1) at odd K an odd pad splits the strides: the intermediates at K² + pad
        // (pad 3: 4 mod 8, conflict-free), the staged tensor at one more (odd, as its shifted copies
        // need), read by pass 0 only. Pad 3 by default at K = 9 and 11, where an H100 measured it
        // 2-3% faster (NOTES.md runs 132-133); at K = 13 and 19 no faster.
        align_runs(tune([0, 1], default = if K == 15 { 1 } else if K == 17 { 1 } else if K == 21 { 1 } else { 0 }));
        constraint(align_runs <= K % 2);
        // pair_rows(1): a lane's two A registers are adjacent rows, one 16-byte shared load per
        // k-step instead of two 8-byte ones. On by default where an H200 measured it faster
        // (NOTES.md runs 49, 50: K = 12 -2.7%, 18 -2%, 20 -2.1%); slower at K = 10, 24.
        // Only where the arch's instruction has row pairs to give (sm_90's m16n8k*): on sm_80's
        // m8n8k4 pair_rows(1) would be the same kernel as 0, twice in the tuning space.
        pair_rows(tune([0, 1], default = if row_pairs == 0 { 0 } else if K == 12 { 1 } else if K == 18 { 1 } else if K == 20 { 1 } else { 0 }));
        constraint(pair_rows <= row_pairs);
        // fuse_k(N): N k-steps per instruction where the arch has the deeper shape (sm_90 f64:
        // m16n8k8, m16n8k16): the same products in fewer instructions and accumulator updates.
        // At most as many as a tile's k-steps (K_STEPS = ceil(K / 4)): beyond, the same kernel.
        // Two by default where an H200 measured it faster (NOTES.md run 60, K = 6..24: -1 to -4%,
        // K = 21 -10%); one at K <= 8, 11, 12, 18 (slower or equal there). Four was not better.
        fuse_k(tune([1, 2, 4], default = if fuse_k_max == 1 { 1 } else if K <= 8 { 1 } else if K == 11 { 1 } else if K == 12 { 1 } else if K == 18 { 1 } else { 2 }));
        constraint(fuse_k <= fuse_k_max);
        constraint(4 * fuse_k <= K + 3);
        // bulk_copy(1): the next tensor by bulk copies (TMA, sm_90), one per row, instead of
        // 16-byte cp.async by every thread; rows of whole 16-byte units: an even row pad. At odd K
        // (a tensor starts off the 16-byte grid when its index is odd) each buffer holds the tensor
        // shifted by that element, each row's K² - 1 values on the grid go by a bulk copy and the
        // other by an 8-byte cp.async: an odd row stride for the staged tensor (align_runs(0); with an
        // odd pad it is the intermediates' even one plus 1), two buffers, stack(1) (NOTES.md run 113).
        // On by default at even K where an H200 measured it faster (NOTES.md run 62: K = 20 -4.9%,
        // K = 10 -5.8%, 18, 22 -2.6%, 6, 12, 14, 16 -1.2 to -1.7%);
        // off at K = 8 (+0.9%), K = 24 (+1.3%), K <= 4 (not measured). At odd K on where an H100
        // measured it faster by >= 5% in two rounds (run 113: K = 9 -6%, 11 -13%, 13 -10..-12%,
        // 19 -10%); off at K = 15, 17 (-2..-3%, against their align_runs(1)), 21 (+20%), 23
        // (+7%) and K = 5, 7 (not measured).
        bulk_copy(tune([0, 1], default = if bulk_copies == 0 { 0 } else if K == 9 { 1 } else if K == 11 { 1 } else if K == 13 { 1 } else if K == 19 { 1 } else if K % 2 == 1 { 0 } else if K <= 4 { 0 } else if K == 8 { 0 } else if K == 24 { 0 } else { 1 }));
        constraint(bulk_copy <= bulk_copies);
        constraint(bulk_copy * (1 - K % 2) * (pad_a % 2) == 0);
        constraint(bulk_copy * (K % 2) * (align_runs + stack - 1 + buffers - 2) == 0);
        // persistent(1): the runtime launches no more blocks than the GPU holds at once (the
        // driver's occupancy for this kernel × SMs), so each block's pipeline fills and drains
        // once per ~N / grid tensors rather than per N / M. On from K = 20, where an H200
        // measured it faster (NOTES.md run 70: K = 20 -4.2%, 21 -3.6%, 22 -4.7%, 23 -3.1%, 24
        // -3.5%); K = 16, 17, 19 within ±1.2%, K = 18 +1.4%; at K <= 15 the GPU holds more
        // blocks than M = 512 (the same launch).
        persistent(tune([0, 1], default = if K >= 20 { 1 } else { 0 }));
        // swap_operands(1): the passes computed transposed, Bᵀ as the instruction's A operand
        // and the tensor's K² columns as its N. With sm_90's m16n8k4 (16 × 8; `row_pairs` is 1
        // on exactly the m16n8k* instructions) K = 10 pads to 13 column tiles of 8 instead of 7
        // row tiles of 16 (39 products' worth per pass, not 42) and its stores are free of bank
        // conflicts: 3.6% faster on an H100 (NOTES.md run 141). On sm_80's square m8n8k4 both
        // layouts pad alike: off by default there. The transposed pass has no row pairs, one
        // tensor per pass, and its k loop is always unrolled.
        swap_operands(tune([0, 1], default = if row_pairs == 0 { 0 } else if K == 10 { 1 } else { 0 }));
        constraint(swap_operands * (pair_rows + stack - 1 + unroll_k) == 0);
        // (fma_tail(1), the K mod 8 columns after the whole fragments by FMA, is not a choice
        // here: an H200 measured it 11-64% slower at every K from 10 to 22, NOTES.md runs 65-66.)
    }
}

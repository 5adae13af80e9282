mra_dsl::schedule! {
    /// Fused: the three passes of a tensor stay in shared memory; device memory sees one read
    /// of A (staged whole, coalesced) and one write of C. Matrix cores, B fragments in registers.
    /// Shared memory holds 2·K³ values, so K is bounded by the arch's limit (K ≤ 24 in f64 on
    /// sm_90, K ≤ 15 on AMD's 64 KiB LDS). The shared rows are padded by 4 so fragment loads
    /// spread over the banks. Threads: 128 at K = 9-14 on NVIDIA, where shared memory holds many
    /// blocks of this size; 512 where two blocks do not fit the SM's shared memory (K ≥ 20 in
    /// f64 on sm_90, K ≥ 18 on sm_80); 256 elsewhere and on AMD. `tune` on H100s (NOTES.md run
    /// 84) put 128 first at K = 10-14 (K = 11-13: -11..-17%: smaller blocks mean more of them per
    /// SM, each with its own barriers), 256 at K = 16 (128: +7%) and 17, a tie at K = 8; an H200's
    /// tune (a27a50e) agreed at K = 10 and 12. With one block per SM, 512 threads were faster on
    /// both GPUs (H200, run 88: K = 20 -15%, 22 -9%, 24 -14%); they need the CUDA dialect's
    /// register cap above 256 threads, without which ptxas took 130 registers at K = 23, more
    /// than a block of 512 threads may have (runs 86-88).
    /// sm_80/86/89 take the NVIDIA rule unmeasured; AMD (64 KiB LDS: two blocks per CU at K = 12
    /// whatever the block size) keeps 256, unmeasured either way.
    /// Tunable (`mra-bench tune`): threads, the shared-row pad, the k-loop unrolling and a
    /// minimum of resident blocks per SM/CU, which must all fit in shared memory; `align_runs`
    /// (odd K), `coalesce_c` (C stored through shared memory in whole lines), `pair_rows` (on
    /// at K = 12 on sm_90) and `swap_operands` (the passes transposed).
    level fused "fused" {
        threads(tune([128, 256, 512], default = if shared <= 65536 { 256 } else if K <= 8 { 256 } else if K <= 14 { 128 } else if 4 * K * (K * K + 4) * bytes > shared { 512 } else { 256 }));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
        bind(warps, tiles);
        tensorize(mma);
        // Pad 3: the one that makes an odd-K row stride K² + pad 4 mod 8 (NOTES.md runs 110-111).
        cache_read(A, shared, pad = tune([0, 1, 2, 3, 4], default = 4));
        cache_read(B, registers);
        workspace(shared);
        unroll(k, by = tune([0, 1, 2], default = 0));
        constraint(min_blocks * 2 * K * (K * (K + align_runs) + pad_a) * bytes <= shared);
        // align_runs(1): at odd K each K-long output run of the shared intermediates lies K + 1
        // apart, so a lane's column pairs are 16-byte stores (NOTES.md runs 38, 42). At even K
        // they are already: the parameter is 0 there (one kernel to tune, not two identical
        // ones). A tuning choice here (default off: not measured for this level).
        align_runs(tune([0, 1], default = 0));
        constraint(align_runs <= K % 2);
        // coalesce_c(1): pass 2 writes C's layout into w0 (free once pass 1 has read it) and the
        // block stores the tensor in whole lines, instead of 8 rows × 64 bytes per warp-wide store
        // straight from the fragments. Off by default: on an H100 it brought K = 12's L2 write
        // requests to the copy's and its time up 1% (K = 10 -3%, K = 14 +7%; NOTES.md run 108).
        coalesce_c(tune([0, 1], default = 0));
        // pair_rows(1): a lane's two A rows adjacent, one 16-byte shared load per k-step instead
        // of two 8-byte ones (fused-pipe's switch). On at K = 12, where an H100 measured it 4%
        // faster in two rounds (NOTES.md run 136: 15.6 → 15.0 µs; K = 10, 14, 16 no faster);
        // only where the arch's instruction has row pairs to give (NVIDIA m16n8k*), elsewhere it
        // would be the same kernel twice.
        pair_rows(tune([0, 1], default = if row_pairs == 0 { 0 } else if K == 12 { 1 } else { 0 }));
        constraint(pair_rows <= row_pairs);
        // swap_operands(1): the passes computed transposed, Bᵀ in registers as the instruction's
        // A operand and the tensor's K² columns as its N (fused-pipe's primitive: 3.6-7% faster
        // there at K = 10 on H100s, NOTES.md runs 141-142). A tuning choice here; it has no row
        // pairs, no staged C, and its k loop is always unrolled.
        swap_operands(tune([0, 1], default = 0));
        constraint(swap_operands * (pair_rows + coalesce_c + unroll_k) == 0);
    }
}

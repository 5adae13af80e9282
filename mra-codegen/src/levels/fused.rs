mra_dsl::schedule! {
    /// Fused: the three passes of a tensor stay in shared memory; device memory sees one read
    /// of A (staged whole, coalesced) and one write of C. Matrix cores, B fragments in
    /// registers. Shared memory holds 2·K³ values, so K is bounded by the arch's limit (K ≤ 24
    /// in f64 on sm_90, K ≤ 15 on AMD's 64 KiB LDS). Per-K values: mra-codegen/tuned/<arch>.json.
    level fused "fused" {
        // Smaller blocks where shared memory holds many; 512 where it holds one.
        threads(tune([128, 256, 512], default = 256));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
        bind(warps, tiles);
        tensorize(mma);
        // The pad sets the row stride mod 8 doubles: 4 spreads A-fragment loads over the banks.
        cache_read(A, shared, pad = tune([0, 1, 2, 3, 4], default = 4));
        cache_read(B, registers);
        workspace(shared);
        unroll(k, by = tune([0, 1, 2], default = 0));
        constraint(min_blocks * 2 * K * (K * (K + align_runs) + pad_a) * bytes <= shared);
        align_runs(tune([0, 1], default = 0)); // odd K: 16-byte pair stores
        constraint(align_runs <= K % 2);
        coalesce_c(tune([0, 1], default = 0)); // C stored through shared memory in whole lines
        pair_rows(tune([0, 1], default = 0)); // one 16-byte A load per k-step (m16n8k*)
        constraint(pair_rows <= row_pairs);
        // The passes transposed (Bᵀ as the A operand): less padding on a non-square fragment.
        swap_operands(tune([0, 1], default = 0));
        constraint(swap_operands * (pair_rows + coalesce_c + unroll_k) == 0);
        // A rank sum's matrices: loaded from device memory by each pass, or a ring of terms in
        // shared memory filled ahead (other operations refuse N > 0).
        stage_terms(tune([0, 2, 3], default = 0));
        // A rank sum's A: staged once (three buffers), or copied again per term (two: K <= 24).
        restage_a(tune([0, 1], default = 0));
    }
}

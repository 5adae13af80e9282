mra_dsl::schedule! {
    /// Fused, pipelined: as `fused`, and while a tensor's last pass runs, the block's next
    /// tensor is copied into the shared buffer that pass does not read (cp.async, or the TMA
    /// unit with `bulk_copy`), so every load but a block's first overlaps computation. NVIDIA
    /// sm_80+; AMD: run `fused`. Per-K values: mra-codegen/tuned/<arch>.json.
    level fused_pipe "fused-pipe" {
        threads(tune([128, 256, 384, 416], default = 128));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
        bind(warps, tiles);
        tensorize(mma);
        // The pad sets the row stride mod 8 doubles: 4 spreads A-fragment loads over the banks.
        cache_read(A, shared, pad = tune([0, 1, 2, 3, 4], default = 4));
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([2, 3], default = 2)); // a third buffer: two tensors in flight
        pipeline(2);
        // N tensors side by side in each pass's rows: less row padding, fewer barriers.
        stack(tune([1, 2, 3, 4], default = 1));
        constraint((stack - 1) * (buffers - 2) == 0);
        unroll(k, by = tune([0, 1, 2], default = 0));
        constraint(min_blocks * buffers * K * (stack * K * (K + align_runs) + pad_a) * bytes <= shared);
        align_runs(tune([0, 1], default = 0)); // odd K: 16-byte pair stores
        constraint(align_runs <= K % 2);
        pair_rows(tune([0, 1], default = 0)); // one 16-byte A load per k-step (m16n8k*)
        constraint(pair_rows <= row_pairs);
        fuse_k(tune([1, 2, 4], default = 1)); // deeper instructions where the arch has them
        constraint(fuse_k <= fuse_k_max);
        constraint(4 * fuse_k <= K + 3);
        bulk_copy(tune([0, 1], default = 0)); // the next tensor by TMA, not by every thread
        constraint(bulk_copy <= bulk_copies);
        constraint(bulk_copy * (1 - K % 2) * (pad_a % 2) == 0);
        constraint(bulk_copy * (K % 2) * (align_runs + stack - 1 + buffers - 2) == 0);
        persistent(tune([0, 1], default = 0)); // a grid the GPU holds at once
        // The passes transposed (Bᵀ as the A operand): less padding on a non-square fragment.
        swap_operands(tune([0, 1], default = 0));
        constraint(swap_operands * (pair_rows + stack - 1 + unroll_k) == 0);
    }
}

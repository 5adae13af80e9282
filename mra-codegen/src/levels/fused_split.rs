mra_dsl::schedule! {
    /// Fused with the output split over two blocks (NVIDIA sm_90, K = 32): block h of a pair
    /// computes C(·, ·, z) for its 16 values of z through all three passes, reading the whole
    /// tensor (the second read from L2) and exchanging nothing, so it needs no cluster and every
    /// block slot of the GPU is usable. Each warp takes 4 slices A(a, ·, ·), copied into its own
    /// slot by one bulk copy; pass 1 reads pass 0's accumulators where they lie (chain), every
    /// pass's A operand is Bᵀ held in registers, and only the last pass's input (K·K·16 values)
    /// goes through shared memory. 8 warps, one block per SM. Elsewhere: fused-cluster
    /// (K = 25..31), fused-pipe (K <= 24).
    level fused_split "fused-split" {
        threads(256);
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared);
        cache_read(B, registers);
        workspace(shared);
        split_output(2);
        chain(1);
        bulk_copy(1);
        // The slice two ahead is asked of L2 while the next one is copied (0 spills).
        prefetch_l2(tune([2, 3], default = 2));
        fuse_k(tune([2, 4], default = 2)); // m16n8k8 or m16n8k16
        // The pair as one cluster of 2, started together, so the second read hits L2 even
        // when several launches share the GPU.
        co_schedule(tune([0, 1], default = 1));
    }
}

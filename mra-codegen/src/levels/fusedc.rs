mra_dsl::schedule! {
    /// Fused across a thread-block cluster (NVIDIA sm_90): each tensor is split along its last
    /// index over the blocks of a cluster, so one block holds about K³/N values instead of
    /// 2·K³ and K = 25..32 fit in shared memory. Passes 0 and 1 are block-local; pass 2 reads
    /// the other blocks' slices through distributed shared memory after a cluster barrier.
    /// The next tensor's slice is copied (cp.async) during pass 2; with a third buffer the
    /// blocks need one cluster barrier per tensor instead of two. Elsewhere: run fused-pipe
    /// (K <= 24) or L7-breg.
    level fused_cluster "fused-cluster" {
        threads(tune([128, 256], default = 256));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = tune([0, 2, 4, 8], default = 4));
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([2, 3], default = 3));
        pipeline(2);
        unroll(rows, by = tune([1, 2], default = 2));
        cluster(tune([2, 3, 4, 8], default = 4));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
    }
}

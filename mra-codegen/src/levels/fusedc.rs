mra_dsl::schedule! {
    /// Fused across a thread-block cluster (NVIDIA sm_90): each tensor is split along its last
    /// index over the blocks of a cluster, so one block holds about K³/N values instead of
    /// 2·K³ and K = 25..32 fit in shared memory. Passes 0 and 1 work on the block's slice;
    /// pass 1 stores its output straight into the shared memory of the block whose rows of C
    /// need it (distributed shared memory), so pass 2 is block-local too. Three buffers: the
    /// slice (the next tensor's arrives by cp.async from the end of pass 0 on), the first
    /// intermediate, the gather buffer. Elsewhere: run fused-pipe (K <= 24) or L7-breg.
    level fused_cluster "fused-cluster" {
        threads(tune([128, 256], default = 256));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = tune([0, 2, 4, 8], default = 4));
        cache_read(B, registers);
        workspace(shared);
        buffers(3);
        pipeline(2);
        unroll(rows, by = tune([1, 2], default = 1));
        cluster(tune([2, 3, 4, 8], default = 4));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
    }
}

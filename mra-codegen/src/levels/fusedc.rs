mra_dsl::schedule! {
    /// Fused across a thread-block cluster (NVIDIA sm_90): each tensor is split over the
    /// blocks of a cluster along its second index, so a block holds about K³/N values and
    /// K = 25..32 fit in shared memory. A block's slice is K contiguous runs of A, loaded by bulk
    /// copies (TMA) during the previous tensor's passes 1 and 2; pass 0 stores its output into
    /// the shared memory of the block that owns it (distributed shared memory), passes 1 and 2
    /// are block-local, and one bulk copy stores the block's contiguous rows of C. buffers(4)
    /// alternates two gather buffers: one cluster barrier per tensor instead of two.
    /// async_exchange(1) sends pass 0's output with st.async, counted by an mbarrier of the
    /// receiving block, instead of stores and a cluster barrier.
    /// The defaults follow K as the H200 tuning runs found (NOTES.md runs 24-28): K = 29..32
    /// cluster(8) with split_cols(2), K = 25..28 four buffers (512 threads at K = 28), in f64
    /// the asynchronous exchange. Elsewhere: run fused-pipe (K <= 24) or L7-breg.
    level fused_cluster "fused-cluster" {
        threads(tune([128, 256, 512], default = if K >= 29 { 256 } else if K >= 28 { 512 } else { 256 }));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = tune([0, 2, 4, 8], default = 4));
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([3, 4], default = if K >= 29 { 3 } else if K >= 25 { 4 } else { 3 }));
        pipeline(2);
        unroll(rows, by = tune([1, 2], default = 1));
        split_cols(tune([1, 2, 4], default = if K >= 29 { 2 } else { 1 }));
        cluster(tune([2, 3, 4, 8], default = if K >= 29 { 8 } else { 4 }));
        async_exchange(tune([0, 1], default = if bytes != 8 { 0 } else if K >= 25 { 1 } else { 0 }));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
    }
}

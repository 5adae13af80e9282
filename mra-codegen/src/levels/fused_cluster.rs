mra_dsl::schedule! {
    /// Fused across a thread-block cluster (NVIDIA sm_90): each tensor is split over the
    /// blocks of a cluster along its second index, so a block holds about K³/N values and
    /// K = 25..32 fit in shared memory. A block's slice is K contiguous runs of A, loaded by
    /// bulk copies during the previous tensor's passes 1 and 2; pass 0 stores its output into
    /// the shared memory of the block that owns it (distributed shared memory), passes 1 and 2
    /// are block-local, and one bulk copy stores the block's rows of C. At odd K the slices are
    /// shifted by one element onto the 16-byte grid. Per-K values: mra-codegen/tuned/<arch>.json.
    level fused_cluster "fused-cluster" {
        threads(tune([128, 256, 512], default = 256));
        bind(warps, tiles);
        tensorize(mma);
        // The pad makes the slice's row stride 4 mod 8 doubles at each K's layout (bank-free A
        // loads); odd pads only at odd K, where even ones would break the bulk copies' grid.
        cache_read(A, shared, pad = tune([0, 1, 2, 3, 4, 5, 6, 7, 8], default = 4));
        constraint(pad_a % 2 <= K % 2);
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([3, 4], default = 3)); // 4: two gather buffers, one cluster barrier a tensor
        pipeline(2);
        unroll(rows, by = tune([1, 2], default = 1));
        split_cols(tune([1, 2, 4], default = 1)); // fewer registers per warp where they spill
        cluster(tune([2, 3, 4, 5, 6, 7, 8], default = 4));
        async_exchange(tune([0, 1], default = 0)); // st.async on an mbarrier, no cluster barrier
        launch_bounds(min_blocks = tune([1, 2], default = 1));
        late_wait(tune([0, 1], default = 0)); // wait after a wave's first tile: hides skew
        pair_rows(tune([0, 1], default = 0)); // one 16-byte A load per k-step
        fuse_k(tune([1, 2, 4], default = 1)); // deeper instructions where the arch has them
        constraint(fuse_k <= fuse_k_max);
        bulk_copy(tune([0, 1], default = 0)); // slices and C by TMA, not by every thread
        constraint(bulk_copy <= bulk_copies);
        constraint(bulk_copy * (pad_a % 2) == 0);
    }
}

mra_dsl::schedule! {
    /// Fused, pipelined, several tensors per block: as `fused-pipe`, but the block's warps
    /// split into groups that each transform their own tensors in their own two buffers and
    /// wait on their own named barrier (`bar.sync id, count`). A group's barrier waits overlap
    /// the other groups' passes, and each warp has more tiles between two barriers. AMD: run
    /// `fused`.
    level fused_groups "fused-groups" {
        threads(tune([128, 256, 512], default = 128));
        // Two blocks per SM cap the registers at 255 / 128 (by threads): no spills.
        launch_bounds(min_blocks = tune([1, 2, 4], default = 2));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = 4);
        cache_read(B, registers);
        workspace(shared);
        buffers(2);
        pipeline(2);
        tensors(tune = [2, 4], default = 2);
        unroll(k);
        align_runs(tune([0, 1], default = 0)); // odd K: 16-byte pair stores
        constraint(align_runs <= K % 2);
    }
}

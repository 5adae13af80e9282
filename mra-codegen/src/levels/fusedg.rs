mra_dsl::schedule! {
    /// Fused, pipelined, several tensors per block: as `fused-pipe`, but the block's warps
    /// split into groups that each transform their own tensors in their own two buffers and
    /// wait on their own named barrier (`bar.sync id, count`). A group's barrier waits overlap
    /// the other groups' passes, and each warp has more tiles between two barriers.
    /// Launch bounds of 2 blocks per SM cap the registers at 255 / 128 (by threads), which
    /// keeps the kernels free of spills (run 39: the earlier implicit 64-register cap spilled
    /// at K = 9..16; 128 threads, two groups of two warps, were also the fastest at K = 8..12).
    /// AMD: run `fused`.
    level fused_groups "fused-groups" {
        threads(tune([128, 256, 512], default = 128));
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
        // align_runs(1): at odd K each K-long output run of the shared intermediates lies K + 1
        // apart, so a lane's column pairs are 16-byte stores (NOTES.md runs 38, 42). At even K
        // they are already: the parameter is 0 there (one kernel to tune, not two identical
        // ones). A tuning choice here (default off: not measured for this level).
        align_runs(tune([0, 1], default = 0));
        constraint(align_runs <= K % 2);
    }
}

mra_dsl::schedule! {
    /// Fused, pipelined: as `fused`, and while a tensor's last pass runs, the block's next
    /// tensor is copied into the shared buffer that pass does not read (cp.async, NVIDIA
    /// sm_80+), so the load of every tensor but a block's first overlaps computation. The
    /// buffers swap roles each tensor; no extra shared memory. AMD: run `fused`.
    /// Tunable (`mra-bench tune`): threads, the shared-row pad, the k-loop unrolling, a minimum
    /// of resident blocks per SM and a third buffer (a ring of two tensors in flight), which
    /// must all fit in shared memory. The default block size follows K: on an H200 four warps
    /// are fastest up to K = 16 and twelve above (one block per SM), NOTES.md run 28.
    level fused_pipe "fused-pipe" {
        threads(tune([128, 256, 384], default = if K <= 16 { 128 } else { 384 }));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = tune([0, 1, 2, 4], default = 4));
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([2, 3], default = 2));
        pipeline(2);
        unroll(k, by = tune([0, 1, 2], default = 0));
        constraint(min_blocks * buffers * K * (K * K + pad_a) * bytes <= shared);
    }
}

mra_dsl::schedule! {
    /// Fused with a ring of input buffers: as `fused`, and the copies of the block's next three
    /// tensors (cp.async, NVIDIA sm_80+) are in flight while a tensor's passes run, so a block
    /// pays the device-memory latency once instead of once per tensor. For small K, where that
    /// latency dominates: shared memory holds five K³ buffers (K ≤ 16 on sm_90). The depth is
    /// tunable (pipeline(2..4), buffers one more); on an H200 the tuner picks the shallowest
    /// (NOTES.md run 33: the copies wait for bandwidth, not latency). AMD: run `fused`.
    level fused_ring "fused-ring" {
        threads(tune([128, 256], default = 256));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = 4);
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([3, 4, 5], default = 5));
        pipeline(tune([2, 3, 4], default = 4));
        constraint(buffers == pipeline + 1);
        unroll(k);
        // align_runs(1): at odd K each K-long output run of the shared intermediates lies K + 1
        // apart, so a lane's column pairs are 16-byte stores (NOTES.md runs 38, 42). At even K
        // they are already: the parameter is 0 there (one kernel to tune, not two identical
        // ones). A tuning choice here (default off: not measured for this level).
        align_runs(tune([0, 1], default = 0));
        constraint(align_runs <= K % 2);
    }
}

mra_dsl::schedule! {
    /// Fused with a ring of input buffers: as `fused`, and the copies of the block's next three
    /// tensors (cp.async, NVIDIA sm_80+) are in flight while a tensor's passes run, so a block
    /// pays the device-memory latency once instead of once per tensor. For small K, where that
    /// latency dominates: shared memory holds five K³ buffers (K ≤ 16 on sm_90). AMD: run
    /// `fused`.
    level fused_ring "fused-ring" {
        threads(tune([128, 256], default = 256));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = 4);
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([3, 4, 5], default = 5));
        pipeline(tune([2, 3, 4], default = 4)); // the ring's depth: one buffer fewer
        constraint(buffers == pipeline + 1);
        unroll(k);
        align_runs(tune([0, 1], default = 0)); // odd K: 16-byte pair stores
        constraint(align_runs <= K % 2);
    }
}

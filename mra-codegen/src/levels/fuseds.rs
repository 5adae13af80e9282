mra_dsl::schedule! {
    /// Fused with the output split over two blocks (NVIDIA sm_90, K = 32): block h of a pair
    /// computes C(·, ·, z) for its 16 values of z through all three passes, reading the whole
    /// tensor (the second read from L2) and exchanging nothing, so it needs no cluster and every
    /// block slot of the GPU is usable. Each warp takes 4 slices A(a, ·, ·), copied into its own
    /// slot by one bulk copy; pass 1 reads pass 0's accumulators where they lie (chain), every
    /// pass's A operand is Bᵀ held in registers for the whole kernel, and only the last pass's
    /// input (K·K·16 values) goes through shared memory. 8 warps, one block per SM
    /// (bench/NOTES.md run 101: 3-4% faster than fused-cluster on two H100s in the same harness,
    /// 389-391 against 401-406 µs; the prototype 14-17% faster in one launch alone). Elsewhere:
    /// fused-cluster (K = 25..31), fused-pipe (K <= 24).
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
        // prefetch_l2(2): run 101 measured the third version with it; 3 slices ahead was 23%
        // slower (an H100, with m16n8k16). 0 (none) spills 32 bytes under NVRTC 13.0: not tuned.
        prefetch_l2(tune([2, 3], default = 2));
        // fuse_k(2): m16n8k8; fuse_k(4): m16n8k16, within 0.5% on an H100 (run 101).
        fuse_k(tune([2, 4], default = 2));
        // co_schedule(1): the pair as one cluster of 2, started together, so the second read of
        // a tensor comes from L2 under the harness's four concurrent launches too (run 160, an
        // H100: -1.2..-1.8% in three rounds; persistent(1) without it +33%, with it no gain).
        co_schedule(tune([0, 1], default = 1));
    }
}

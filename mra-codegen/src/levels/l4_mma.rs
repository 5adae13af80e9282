mra_dsl::schedule! {
    /// FP64 matrix cores: each warp/wavefront computes tiles of output rows with the arch's
    /// matrix instruction (mma.sync m8n8k4 on NVIDIA sm_80+, MFMA 16x16x4 on gfx90a/gfx942);
    /// B zero-padded to whole fragments in shared memory, so every K in 1..32 runs on them.
    level L4 "L4-mma" {
        threads(128);
        bind(warps, tiles);
        tensorize(mma);
        cache_read(B, shared);
        unroll(k);
    }
}

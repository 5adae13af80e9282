mra_dsl::schedule! {
    /// Fused with one shared buffer: as `fused`, but passes 0 and 1 write their output over
    /// their input (each warp holds its output tiles in registers until every warp has read
    /// the input, then stores), so shared memory holds K³ values instead of 2·K³: twice the
    /// blocks per multiprocessor at K = 16..24 on sm_90, and K ≤ 20 on AMD's 64 KiB LDS.
    level fused1 "fused-1buf" {
        threads(tune = [256, 512], default = 512);
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = 4);
        cache_read(B, registers);
        workspace(shared);
        buffers(1);
        unroll(k);
    }
}

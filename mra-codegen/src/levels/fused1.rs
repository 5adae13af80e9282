mra_dsl::schedule! {
    /// Fused with one shared buffer: as `fused`, but passes 0 and 1 write their output over
    /// their input (each warp holds its output tiles in registers until every warp has read
    /// the input, then stores), so shared memory holds K³ values instead of 2·K³: twice the
    /// blocks per multiprocessor at K = 20 on sm_90, and K ≤ 20 on AMD's 64 KiB LDS (B stays in
    /// registers so K = 20 fits: 64640 B; gfx90a/gfx942 compile without spills). On an H200
    /// it is slower than `fused` except at K = 20 (NOTES.md, issue 9 run 2): the held tiles cost
    /// registers (occupancy) and the barrier between compute and stores serialises each pass.
    level fused1 "fused-1buf" {
        threads(tune = [256, 512], default = 256);
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = 4);
        cache_read(B, registers);
        workspace(shared);
        buffers(1);
        unroll(k);
        // fma_tail(1): the columns after the whole column fragments by FMA, held in registers
        // with the tiles until the barrier (a tuning choice, default off: not measured here).
        // The constraints keep it where there is a tail and a whole fragment at 8 columns
        // (NVIDIA m16n8, m8n8); with AMD's 16-column MFMA it plans at K = 17..20, where the
        // level fits the 64 KiB LDS.
        fma_tail(tune([0, 1], default = 0));
        constraint(fma_tail <= K % 8);
        constraint(8 * fma_tail <= K);
    }
}

mra_dsl::schedule! {
    /// Fused with one shared buffer: as `fused`, but passes 0 and 1 write their output over
    /// their input (each warp holds its output tiles in registers until every warp has read
    /// the input, then stores), so shared memory holds K³ values instead of 2·K³: twice the
    /// blocks per multiprocessor, and K ≤ 20 on AMD's 64 KiB LDS. The held tiles cost
    /// registers, and the barrier between compute and stores serialises each pass.
    level fused1 "fused-1buf" {
        threads(tune = [256, 512], default = 256);
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = 4);
        cache_read(B, registers);
        workspace(shared);
        buffers(1);
        unroll(k);
        // The columns after the whole column fragments by FMA, held with the tiles until the
        // barrier; only where there is a tail and a whole fragment of 8 columns.
        fma_tail(tune([0, 1], default = 0));
        constraint(fma_tail <= K % 8);
        constraint(8 * fma_tail <= K);
    }
}

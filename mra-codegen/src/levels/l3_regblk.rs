mra_dsl::schedule! {
    /// Register blocking: each thread accumulates a whole output row acc[K] in registers, K a
    /// compile-time constant, reading each A element once; B in shared memory. Rows leave
    /// through shared memory so the stores to device memory are coalesced.
    level L3 "L3-regblk" {
        threads(128);
        bind(threads, rows);
        cache_read(B, shared);
        register_tile(cols);
        cache_write(C, shared, pad = 1);
        unroll(k);
    }
}

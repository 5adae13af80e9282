mra_dsl::schedule! {
    /// Register blocking: each thread accumulates a whole output row acc[K] in registers, K a
    /// compile-time constant, reading each A element once; B in shared memory.
    level L3 "L3-regblk" {
        threads(128);
        bind(threads, rows);
        cache_read(B, shared);
        register_tile(cols);
        unroll(k);
    }
}

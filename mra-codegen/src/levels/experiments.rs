mra_dsl::schedule! {
    /// Experiment: L3 with output rows staged through shared memory.
    level l3s "L3s-staged" {
        threads(128);
        bind(threads, rows);
        cache_read(B, shared);
        register_tile(cols);
        cache_write(C, shared, pad = 1);
        unroll(k);
    }
    /// Experiment: as l3s with 256 threads.
    level l3t "L3t-staged256" {
        threads(256);
        bind(threads, rows);
        cache_read(B, shared);
        register_tile(cols);
        cache_write(C, shared, pad = 1);
        unroll(k);
    }
    /// Experiment: L2 with 256 threads.
    level l2t "L2t-256" {
        threads(256);
        bind(threads, elements);
        cache_read(B, shared);
        unroll(k);
    }
}

mra_dsl::schedule! {
    /// B staged: the K×K matrix is copied into shared memory / LDS once per block, so every
    /// GEMM reads B there instead of from global memory.
    level L2 "L2-bshared" {
        threads(128);
        bind(threads, elements);
        cache_read(B, shared);
    }
}

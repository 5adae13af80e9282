mra_dsl::schedule! {
    /// Staged matrix cores: as L4, but the block stages the pass input through shared memory
    /// one chunk of row tiles at a time (all threads loading, coalesced), and every wave then
    /// reads its A fragments from shared memory.
    level L5 "L5-staged" {
        threads(128);
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = 4);
        cache_read(B, shared);
        unroll(k);
    }
}

mra_dsl::schedule! {
    /// NVIDIA's warp matrix API (nvcuda::wmma, f64 8×8×4 fragments, sm_80+): as L5, but the
    /// fragments are loaded from the staged chunk and the padded B in shared memory, and stored,
    /// by the API. Rows padded to 32-byte multiples, as the API requires.
    level wmma "wmma" {
        threads(128);
        bind(warps, tiles);
        tensorize(wmma);
        cache_read(A, shared, pad = 4);
        cache_read(B, shared);
        unroll(k);
    }
}

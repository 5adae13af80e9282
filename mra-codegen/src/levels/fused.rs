mra_dsl::schedule! {
    /// Fused: the three passes of a tensor stay in shared memory; device memory sees one read
    /// of A (staged in chunks) and one write of C. Matrix cores with B fragments in registers.
    /// Shared memory holds 2·K³ values, so K is bounded by the arch's limit (K ≤ 24 in f64 on
    /// sm_90, K ≤ 15 on AMD's 64 KiB LDS).
    level fused "fused" {
        threads(128);
        bind(warps, tiles);
        tensorize(mma);
        cache_read(A, shared, pad = 4);
        cache_read(B, registers);
        workspace(shared);
        unroll(k);
    }
}

mra_dsl::schedule! {
    /// B in registers: as L4, but each lane loads its B fragments once per kernel and keeps
    /// them in registers across all three GEMMs of every tensor (no shared memory at all).
    level L7 "L7-breg" {
        threads(128);
        bind(warps, tiles);
        tensorize(mma);
        cache_read(B, registers);
        unroll(k);
    }
}

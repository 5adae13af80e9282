mra_dsl::schedule! {
    /// B in registers: as L4, but each lane loads its B fragments once per kernel and keeps
    /// them in registers across all three GEMMs of every tensor (no shared memory at all).
    /// Tunable: threads, a minimum of resident blocks per SM/CU (no more threads than an
    /// SM holds, 2048) and the k-loop unrolling.
    level L7 "L7-breg" {
        threads(tune([64, 128, 256, 512], default = 128));
        launch_bounds(min_blocks = tune([1, 2, 4], default = 1));
        bind(warps, tiles);
        tensorize(mma);
        cache_read(B, registers);
        unroll(k, by = tune([0, 1, 2], default = 0));
        constraint(threads * min_blocks <= 2 * max_threads);
    }
}

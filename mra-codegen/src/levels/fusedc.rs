mra_dsl::schedule! {
    /// Fused across a thread-block cluster (NVIDIA sm_90): each tensor is split over the
    /// blocks of a cluster along its second index, so a block holds about K³/N values and
    /// K = 25..32 fit in shared memory. A block's slice is K contiguous runs of A, loaded by bulk
    /// copies (TMA) during the previous tensor's passes 1 and 2; pass 0 stores its output into
    /// the shared memory of the block that owns it (distributed shared memory), passes 1 and 2
    /// are block-local, and one bulk copy stores the block's contiguous rows of C. At odd K a
    /// tensor starts at an 8-byte boundary, so the slices and C are shifted by one element onto the
    /// 16-byte grid (bulk_copy(1), NOTES.md run 115; before it 2.1-2.5x the copy at K = 25..31 on an
    /// H100, runs 109-110). buffers(4)
    /// alternates two gather buffers: one cluster barrier per tensor instead of two.
    /// async_exchange(1) sends pass 0's output with st.async, counted by an mbarrier of the
    /// receiving block, instead of stores and a cluster barrier.
    /// The defaults follow K as the H200 tuning runs found (NOTES.md runs 24-28, 34, 45, 47, 91),
    /// per K from 25 to 32: K = 26 cluster 2; 31 cluster 4; 28 cluster 7 with 128 threads
    /// (slices of 4, as K = 32's; run 91: -15%); 29, 30, 32 cluster 8; odd K and K = 26 plain
    /// remote stores, even K from 28 on the asynchronous exchange (f64); column splits and 512
    /// threads where registers ask for them. With the shifted bulk copies an H100 re-tuned the odd
    /// K (NOTES.md runs 116-118): K = 23 cluster 3 (1.40x the copy, fused-pipe 1.63x); K = 25 cluster
    /// 2, 512 threads, two column splits (-6%); K = 27 cluster 7, 128 threads, three buffers (-10%
    /// after -12% from two column splits); K = 31 two column splits instead of four (-13%). Tuned
    /// on an H100 (runs 123-124): K = 29 takes K = 28's layout (cluster 8, 128 threads, no column
    /// split, four buffers: -6%), K = 26 512 threads with two column splits (-4%). The row pads make
    /// the passes' row stride 4 mod 8 at every default layout (run 127: K = 25 -4%, 27 -4.6%). Where
    /// CL · CLUSTER > K the last block skips its empty row tiles in passes 0 and 2 (run 129: K = 30
    /// -3.3%, 25 -2%).
    /// Elsewhere: run fused-pipe (K <= 24).
    level fused_cluster "fused-cluster" {
        threads(tune([128, 256, 512], default = if K <= 24 { 256 } else if K == 26 { 512 } else if K == 27 { 128 } else if K == 28 { 128 } else if K == 29 { 128 } else if K % 2 == 1 { 512 } else { 256 }));
        bind(warps, tiles);
        tensorize(mma);
        // The row pad makes the stride of passes 1 and 2, S = K·CL + pad (CL rounded up to even), 4
        // mod 8 doubles at each K's default layout: a half-warp's 8-byte A-fragment loads read rows
        // k .. k + 3 at 4 consecutive columns, one wavefront only when the rows start 4 double-banks
        // apart (S ≡ 0 mod 8 puts rows k and k + 2 on the same banks). 4 where K·CL ≡ 0 mod 8 (K = 23,
        // 28, 30-32); K = 25 (CL 14) 6, K = 27 and 29 (CL 4) 0: an H100 measured -4.0%, -4.6% and
        // -0.6% against pad 4 (NOTES.md run 127); K = 26 (CL 14) 0, with pair_rows(1) (run 114:
        // -11.7%). Odd pads only at odd K (at even K they would cost the bulk copies); 25-36% slower
        // there, as they cost pass 0's 16-byte pair stores. Pass 0's slice at odd K has the odd
        // stride S + 1 (the shifted bulk copies), which no pad makes conflict-free.
        cache_read(A, shared, pad = tune([0, 1, 2, 3, 4, 5, 6, 7, 8], default = if K == 25 { 6 } else if K == 26 { 0 } else if K == 27 { 0 } else if K == 29 { 0 } else { 4 }));
        constraint(pad_a % 2 <= K % 2);
        cache_read(B, registers);
        workspace(shared);
        buffers(tune([3, 4], default = if K == 28 { 4 } else if K == 29 { 4 } else { 3 }));
        pipeline(2);
        unroll(rows, by = tune([1, 2], default = 1));
        split_cols(tune([1, 2, 4], default = if K == 27 { 1 } else if K == 28 { 1 } else if K == 29 { 1 } else if K >= 25 { 2 } else { 1 }));
        cluster(tune([2, 3, 4, 5, 6, 7, 8], default = if K == 23 { 3 } else if K <= 24 { 4 } else if K == 25 { 2 } else if K == 26 { 2 } else if K == 27 { 7 } else if K == 28 { 7 } else if K == 31 { 4 } else { 8 }));
        async_exchange(tune([0, 1], default = if bytes != 8 { 0 } else if K % 2 == 1 { 0 } else if K >= 28 { 1 } else { 0 }));
        launch_bounds(min_blocks = tune([1, 2], default = 1));
        // late_wait(1): pass 0's cluster wait after each wave's first tile, not before pass 0;
        // by default where an H200 measured it faster (NOTES.md runs 43, 52: K = 20, 26, 32),
        // before pass 0 at K = 16, 24 (18%, 42% faster so). K = 25 was 3% faster before pass 0 at
        // cluster(7); at its new layout (cluster 2, 512 threads) an H100 measured late -4.3% (run
        // 117). K = 27 late as well, at its pad 0 (run 130: -2.1%, -2.4% with fuse_k 2). Without effect
        // where pass 0 does not wait (four buffers with plain stores).
        late_wait(tune([0, 1], default = if K == 20 { 1 } else if K == 25 { 1 } else if K <= 24 { 0 } else { 1 }));
        // pair_rows(1): one 16-byte shared load per lane and k-step for the A fragment (run 49); on
        // at K = 26 (run 114), 5-8% slower at K = 25, 27, 29, 31.
        pair_rows(tune([0, 1], default = if K == 26 { 1 } else { 0 }));
        // fuse_k(N): as fused-pipe's; with unroll(rows), per jammed tile. Two by default
        // where an H200 measured it faster (NOTES.md run 60: K = 30, 31 -2.5%, 32 -1.7%; run 91:
        // K = 28 at cluster(7), 128 threads 288 against 297 µs); one elsewhere: K = 25 +1.5%,
        // 26, 29 within 0.6% (and K = 29 with pair_rows(1) spills), K <= 24 not measured. K = 27 two at
        // its H100 layout (run 130, with late_wait(1): -2.4%).
        fuse_k(tune([1, 2, 4], default = if fuse_k_max == 1 { 1 } else if K >= 30 { 2 } else if K == 28 { 2 } else if K == 27 { 2 } else { 1 }));
        constraint(fuse_k <= fuse_k_max);
        // bulk_copy(1): each row of a slice by one bulk copy (TMA) and the block's rows of C by one
        // bulk store; at odd K (a row off the 16-byte grid where n + a + b0 is odd) pass 0's buffer
        // holds the slice shifted by one element at an odd row stride, and a row's values off the
        // grid go by 8-byte cp.async. bulk_copy(0): cp.async by every thread. On by default at even K
        // (as it always was) and at odd K from 25, where an H100 measured it faster (NOTES.md
        // run 115: K = 25 -13%, 27 -12%, 29 -17%, 31 -12%) and at K = 23 (run 118: 213.9 µs against 393 at
        // cluster(4), 256 threads; fused-cluster is then K = 23's fastest level); K = 21 and below not measured.
        bulk_copy(tune([0, 1], default = if bulk_copies == 0 { 0 } else if K % 2 == 0 { 1 } else if K >= 23 { 1 } else { 0 }));
        constraint(bulk_copy <= bulk_copies);
        constraint(bulk_copy * (pad_a % 2) == 0);
    }
}
